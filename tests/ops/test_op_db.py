"""Every op in the table: values, dtypes, grad_fn names, gradients and second derivatives against torch,
gradcheck and gradgradcheck in float64, float32 values, and in-place variants with their version bump."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import tapegrad
from ops.op_db import OPS
from ops.oracle import as_np, dtype_name, leaves, outputs, to_tg, to_torch

CASES = []
for spec in OPS:
    for k, sample in enumerate(spec.samples(np.random.default_rng(0))):
        CASES.append(pytest.param(spec, sample, id=f"{spec.name}-{sample.name or k}"))


def _call(spec, fn, *args, torch_side=False, **kwargs):
    """``fn(*args, **kwargs)`` with the op's expected warnings kept out of the test's output (``spec.warns``, and
    ``spec.torch_warns`` on torch's side); any other warning passes on. Returns (result, expected ones seen)."""
    expected = [p for p in (spec.warns, spec.torch_warns if torch_side else "") if p]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = fn(*args, **kwargs)
    seen = []
    for w in caught:
        if any(re.search(p, str(w.message)) for p in expected):
            seen.append(str(w.message))
        else:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno, source=w.source)
    return out, seen


def _run_both(torch, spec, sample, dtype, grad=True):
    tg_args = [to_tg(a, dtype, grad) for a in sample.args]
    th_args = [to_torch(torch, a, dtype, grad) for a in sample.args]
    tg_out, tg_seen = _call(spec, spec.fn, tapegrad, *tg_args, **sample.kwargs)
    th_out, th_seen = _call(spec, spec.fn, torch, *th_args, torch_side=True, **sample.kwargs)
    if spec.warns and any(re.search(spec.warns, m) for m in th_seen):
        # torch gives some warnings once per process only: where it gave this one, tapegrad must have too
        assert any(re.search(spec.warns, m) for m in tg_seen), f"{spec.name}: torch warns {th_seen}, tapegrad not"
    return tg_args, th_args, outputs(spec, tg_out), outputs(spec, th_out)


def _close(a, b, spec, what):
    a, b = as_np(a), as_np(b)
    assert a.shape == b.shape, f"{what}: shape {a.shape} != torch {b.shape}"
    if a.dtype.kind in "fc":
        np.testing.assert_allclose(a, b, rtol=spec.rtol, atol=spec.atol, equal_nan=True, err_msg=what)
    else:
        np.testing.assert_array_equal(a, b, err_msg=what)


def _cotangent(rng, b):
    """A random cotangent for torch output ``b``: complex for a complex output."""
    c = rng.standard_normal(tuple(b.shape))
    return c + 1j * rng.standard_normal(tuple(b.shape)) if b.is_complex() else c


def _real_sum(m, t):
    """A real scalar from a weighted sum: its real part when complex."""
    return m.real(t) if t.is_complex() else t


@pytest.mark.parametrize("spec,sample", CASES)
def test_values_and_grads_vs_torch(torch, spec, sample):
    check_vs_torch(torch, spec, sample)


def check_vs_torch(torch, spec, sample):
    """Values, dtypes, grad_fn names, gradients and second derivatives of one sample against torch's (float64, or
    complex128 for complex samples)."""
    torch.set_default_dtype(torch.float32)
    tg_args, th_args, tg_out, th_out = _run_both(torch, spec, sample, np.float64)
    assert len(tg_out) == len(th_out)
    for a, b in zip(tg_out, th_out):
        _close(a, b, spec, f"{spec.name} value")
        assert dtype_name(a) == dtype_name(b), f"{spec.name}: dtype {a.dtype} != torch {b.dtype}"
    if not spec.grad:
        return
    tg_leaves, th_leaves = leaves(tg_args), leaves(th_args)
    diff = [(a, b) for a, b in zip(tg_out, th_out) if b.requires_grad]
    if not tg_leaves or not diff:
        return
    if spec.check_grad_fn:
        for a, b in diff:
            assert a.grad_fn is not None, f"{spec.name}: no grad_fn"
            assert a.grad_fn.name() == type(b.grad_fn).__name__, \
                f"{spec.name}: grad_fn {a.grad_fn.name()} != torch {type(b.grad_fn).__name__}"
    rng = np.random.default_rng(1)
    cots = [_cotangent(rng, b) for _, b in diff]
    tg_g = tapegrad.autograd.grad([a for a, _ in diff], tg_leaves, [tapegrad.tensor(c) for c in cots],
                                  create_graph=spec.gradgrad, allow_unused=True)
    th_g = torch.autograd.grad([b for _, b in diff], th_leaves, [torch.tensor(c) for c in cots],
                               create_graph=spec.gradgrad, allow_unused=True)
    for i, (a, b) in enumerate(zip(tg_g, th_g)):
        if b is None:
            assert a is None or np.all(as_np(a) == 0), f"{spec.name}: grad {i} should be None"
            continue
        assert a is not None, f"{spec.name}: grad {i} is None, torch's is not"
        _close(a, b, spec, f"{spec.name} grad {i}")
    if not spec.gradgrad:
        return
    pairs = [(a, b) for a, b in zip(tg_g, th_g) if a is not None and b is not None and b.requires_grad]
    if not pairs:
        return
    w = [_cotangent(rng, b) for _, b in pairs]
    tg_s = sum((_real_sum(tapegrad, (a * tapegrad.tensor(x)).sum()) for (a, _), x in zip(pairs, w)),
               tapegrad.tensor(0.0, dtype=tapegrad.float64))
    th_s = sum((_real_sum(torch, (b * torch.tensor(x)).sum()) for (_, b), x in zip(pairs, w)),
               torch.tensor(0.0, dtype=torch.float64))
    if not th_s.requires_grad:
        return
    tg_gg = tapegrad.autograd.grad(tg_s, tg_leaves, allow_unused=True) if tg_s.requires_grad else \
        [None] * len(tg_leaves)
    th_gg = torch.autograd.grad(th_s, th_leaves, allow_unused=True)
    for i, (a, b) in enumerate(zip(tg_gg, th_gg)):
        if b is None:
            assert a is None or np.allclose(as_np(a), 0), f"{spec.name}: second grad {i} should be None/zero"
            continue
        if a is None:
            assert np.allclose(as_np(b), 0), f"{spec.name}: second grad {i} is None, torch's is not zero"
            continue
        _close(a, b, spec, f"{spec.name} second grad {i}")


@pytest.mark.parametrize("spec,sample", CASES)
def test_float32_values_vs_torch(torch, spec, sample):
    if not spec.float32:
        pytest.skip("float32 comparison disabled for this op")
    _, _, tg_out, th_out = _run_both(torch, spec, sample, np.float32, grad=False)
    assert len(tg_out) == len(th_out)
    for a, b in zip(tg_out, th_out):
        assert dtype_name(a) == dtype_name(b), f"{spec.name}: float32 dtype {a.dtype} != torch {b.dtype}"
        a, b = as_np(a), as_np(b)
        if a.dtype.kind in "fc":
            np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5, equal_nan=True)
        else:
            np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("spec,sample", CASES)
def test_gradcheck(spec, sample):
    check_gradcheck(spec, sample)


def check_gradcheck(spec, sample):
    """gradcheck and (for smooth samples) gradgradcheck of one sample in float64 (complex128)."""
    if not spec.grad:
        pytest.skip("not differentiable")
    args = [to_tg(a, np.float64) for a in sample.args]
    if not leaves(args):
        pytest.skip("no differentiable input")
    fn = lambda *xs: _call(spec, spec.fn, tapegrad, *_rebuild(args, xs), **sample.kwargs)[0]
    flat = leaves(args)
    wrapped = lambda *xs: _first_outputs(spec, fn(*xs))
    # (gradcheck, as torch's, passes a function without floating outputs: nothing would be compared)
    assert wrapped(*flat), f"{spec.name}: no floating output to check"
    assert tapegrad.autograd.gradcheck(wrapped, tuple(flat), atol=spec.gc_atol, rtol=spec.gc_rtol)
    if spec.gradgrad and sample.smooth:
        assert tapegrad.autograd.gradgradcheck(wrapped, tuple(flat), atol=spec.gc_atol, rtol=spec.gc_rtol)


def _first_outputs(spec, res):
    outs = outputs(spec, res)
    return tuple(o for o in outs if o.dtype.is_floating_point or o.dtype.is_complex)


def _rebuild(args, flat):
    it = iter(flat)

    def rb(a):
        if isinstance(a, (list, tuple)):
            return type(a)(rb(e) for e in a)
        if hasattr(a, "requires_grad") and a.requires_grad:
            return next(it)
        return a
    return [rb(a) for a in args]


@pytest.mark.parametrize("spec", [s for s in OPS if s.inplace is not None], ids=lambda s: s.name)
def test_inplace_variant(spec):
    sample = spec.samples(np.random.default_rng(0))[0]
    args = [to_tg(a, np.float64, False) for a in sample.args]
    expected, _ = _call(spec, spec.fn, tapegrad, *args, **sample.kwargs)
    x = args[0].clone()
    v0 = x._version
    out, _ = _call(spec, spec.inplace, x, *args[1:], **sample.kwargs)
    assert out is x
    assert x._version > v0
    np.testing.assert_allclose(as_np(x), as_np(outputs(spec, expected)[0]), rtol=1e-12, atol=1e-12)
