"""Forward-mode AD for every op of the op table: for every differentiable spec and every sample, the tangents
under ``autograd.forward_ad`` (float64, random input tangents) against torch's forward AD on the same inputs
(where torch has it: otherwise the finite differences alone decide, and the spec says so) and against central
finite differences of tapegrad's own op; the primal values equal the eager ones. Which rule each op uses
(natural or derived from its backward) is in docs/ops.md."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import tapegrad
import tapegrad.autograd.forward_ad  # noqa: F401 - makes m.autograd.forward_ad resolvable
from ops.op_db import OPS
from ops.oracle import as_np, outputs

CASES = [pytest.param(spec, sample, id=f"{spec.name}-{sample.name or k}")
         for spec in OPS if spec.grad
         for k, sample in enumerate(spec.samples(np.random.default_rng(0)))]

# torch 2.13 has no forward-AD formula for these (its error says "not implemented" / "forward AD"): only the
# finite differences check them
_TORCH_LACKS = re.compile(r"not implemented|forward AD|forward-mode|jvp", re.I)


def _tangents(args, rng):
    """A float64 tangent for each floating array among the sample's arguments (lists of arrays too)."""
    def one(a):
        if isinstance(a, np.ndarray) and a.dtype.kind == "f":
            return rng.standard_normal(a.shape)
        if isinstance(a, (list, tuple)) and a and all(isinstance(e, np.ndarray) for e in a):
            return type(a)(one(e) for e in a)
        return None
    return [one(a) for a in args]


def _build(m, a, t, dual, scale=0.0):
    """The argument for module ``m``: a tensor of ``a + scale * t`` (a dual one with tangent ``t`` when
    ``dual``), lists elementwise, anything else as is."""
    if isinstance(a, (list, tuple)) and a and all(isinstance(e, np.ndarray) for e in a):
        return type(a)(_build(m, e, te, dual, scale) for e, te in zip(a, t if t is not None else [None] * len(a)))
    if not isinstance(a, np.ndarray):
        return a
    if t is None:
        return m.tensor(a)
    x = m.tensor(a.astype(np.float64) + scale * t)
    if dual:
        fw = m.autograd.forward_ad
        return fw.make_dual(x, m.tensor(t))
    return x


def _quiet(spec, fn, *args, **kwargs):
    pats = [p for p in (spec.warns, spec.torch_warns) if p]
    with warnings.catch_warnings():
        for p in pats:
            warnings.filterwarnings("ignore", message=p)
        return fn(*args, **kwargs)


def _float_outputs(spec, res):
    return [o for o in outputs(spec, res) if o.dtype.is_floating_point or o.dtype.is_complex]


def _run_dual(m, spec, sample, tans):
    fw = m.autograd.forward_ad
    with fw.dual_level():
        args = [_build(m, a, t, True) for a, t in zip(sample.args, tans)]
        m.manual_seed(0)
        res = _quiet(spec, spec.fn, m, *args, **sample.kwargs)
        outs = _float_outputs(spec, res)
        pairs = [fw.unpack_dual(o) for o in outs]
        return [(as_np(p.primal).copy(), None if p.tangent is None else as_np(p.tangent).copy()) for p in pairs]


def _run_plain(spec, sample, tans, scale):
    args = [_build(tapegrad, a, t, False, scale) for a, t in zip(sample.args, tans)]
    tapegrad.manual_seed(0)
    return [as_np(o) for o in _float_outputs(spec, _quiet(spec, spec.fn, tapegrad, *args, **sample.kwargs))]


@pytest.mark.parametrize("spec,sample", CASES)
def test_forward_ad_vs_torch_and_finite_differences(torch, spec, sample):
    torch.set_default_dtype(torch.float32)
    tans = _tangents(sample.args, np.random.default_rng(2))
    for i in spec.extra.get("fwd_constant", ()):
        tans[i] = None
    if all(t is None for t in tans):
        pytest.skip("no floating input")
    tg = _run_dual(tapegrad, spec, sample, tans)
    eager = _run_plain(spec, sample, tans, 0.0)
    assert len(tg) == len(eager)
    for (p, _), e in zip(tg, eager):
        np.testing.assert_allclose(p, e, rtol=1e-12, atol=1e-12, equal_nan=True, err_msg=f"{spec.name} primal")
    tg_t = [np.zeros_like(p) if t is None else t for p, t in tg]
    for (p, _), t in zip(tg, tg_t):
        assert t.shape == p.shape, f"{spec.name}: tangent shape {t.shape} != primal {p.shape}"
    th = None
    if not spec.extra.get("fwd_torch"):      # (the spec says why torch's forward AD is not the reference)
        try:
            th = _run_dual(torch, spec, sample, tans)
        except (RuntimeError, NotImplementedError) as e:
            if not _TORCH_LACKS.search(str(e)):
                raise
    if th is not None:
        assert len(th) == len(tg)
        for k, (a, (_, b)) in enumerate(zip(tg_t, th)):
            b = np.zeros_like(a) if b is None else b
            np.testing.assert_allclose(a, b, rtol=max(spec.rtol, 1e-6), atol=max(spec.atol, 1e-7), equal_nan=True,
                                       err_msg=f"{spec.name}: tangent {k} vs torch's forward AD")
    if not sample.smooth:
        return
    h = 1e-6
    plus, minus = _run_plain(spec, sample, tans, h), _run_plain(spec, sample, tans, -h)
    for k, (a, fp, fm) in enumerate(zip(tg_t, plus, minus)):
        fd = (fp - fm) / (2 * h)
        ok = np.isfinite(fd) & np.isfinite(a)
        np.testing.assert_allclose(a[ok], fd[ok], rtol=1e-4, atol=1e-5 * max(1.0, float(np.abs(fd[ok]).max(initial=0))),
                                   err_msg=f"{spec.name}: tangent {k} vs central finite differences")


def _float_positions(args):
    return [i for i, a in enumerate(args) if (isinstance(a, np.ndarray) and a.dtype.kind == "f") or
            (isinstance(a, (list, tuple)) and a and all(isinstance(e, np.ndarray) and e.dtype.kind == "f" for e in a))]


PARTIAL = [pytest.param(spec, sample, id=f"{spec.name}-{sample.name or k}")
           for spec in OPS if spec.grad and not spec.extra.get("fwd_torch")
           for k, sample in enumerate(spec.samples(np.random.default_rng(0)))
           if len(_float_positions(sample.args)) >= 2]


@pytest.mark.parametrize("spec,sample", PARTIAL)
def test_forward_ad_with_one_dual_input_vs_torch(torch, spec, sample):
    """Only the first floating input is dual (the others are plain tensors): the tangent as torch's."""
    torch.set_default_dtype(torch.float32)
    tans = _tangents(sample.args, np.random.default_rng(3))
    first = _float_positions(sample.args)[0]
    tans = [t if i == first else None for i, t in enumerate(tans)]
    tg = _run_dual(tapegrad, spec, sample, tans)
    try:
        th = _run_dual(torch, spec, sample, tans)
    except (RuntimeError, NotImplementedError) as e:
        if not _TORCH_LACKS.search(str(e)):
            raise
        pytest.skip("torch has no forward AD for this op")
    for k, ((p, a), (_, b)) in enumerate(zip(tg, th)):
        a = np.zeros_like(p) if a is None else a
        b = np.zeros_like(p) if b is None else b
        np.testing.assert_allclose(a, b, rtol=max(spec.rtol, 1e-6), atol=max(spec.atol, 1e-7), equal_nan=True,
                                   err_msg=f"{spec.name}: tangent {k} (input {first} dual) vs torch's forward AD")
