"""``vmap`` of every op of the op table: the first sample of each spec, its floating arrays perturbed into a batch
of 3 (sample 0 is the original), mapped with ``vmap`` against a per-sample loop of the same op (values, dtypes and
shapes) and against ``torch.func.vmap`` where torch batches the op. Ops with no batching rule run by the per-sample
fallback (with its warning): the values must agree either way. docs/ops.md says which ops have a rule."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tapegrad
import tapegrad.func  # noqa: F401
from ops.op_db import OPS
from tapegrad import _random

B = 3
# Ops that refuse vmap, as torch's do (they return a Python bool): checked in test_vmap.py's errors
_KNOWN = {"allclose", "equal"}
CASES = [pytest.param(spec, id=spec.name) for spec in OPS if spec.name not in _KNOWN]


def _batch(a, rng, scale):
    """A batch of B arrays around a float sample array (None for any other argument)."""
    if isinstance(a, np.ndarray) and a.dtype.kind in "fc":
        noise = rng.standard_normal(a.shape) * scale
        return np.stack([a + b * noise for b in range(B)])
    return None


def _tensor(m, a):
    return m.tensor(a) if isinstance(a, np.ndarray) else a


def _args(m, sample_args, batches, b):
    """The arguments of sample ``b`` (``b=None``: the batched arguments as whole batches)."""
    out = []
    for a, bt in zip(sample_args, batches):
        if isinstance(bt, list):
            out.append(type(a)(_tensor(m, e if bb is None else (bb if b is None else bb[b])) for e, bb in zip(a, bt)))
        else:
            out.append(_tensor(m, a if bt is None else (bt if b is None else bt[b])))
    return out


def _flat(res):
    if isinstance(res, (list, tuple)):
        out = []
        for r in res:
            out.extend(_flat(r))
        return out
    return [res]


def _np(t):
    t = t.detach() if hasattr(t, "detach") else t
    return np.asarray(t.numpy() if hasattr(t, "numpy") else t)


def _close(a, b, spec):
    assert a.shape == b.shape, (a.shape, b.shape)
    assert a.dtype == b.dtype, (a.dtype, b.dtype)
    if a.dtype.kind in "fc":
        np.testing.assert_allclose(a, b, rtol=max(spec.rtol, 1e-6) * 10, atol=max(spec.atol, 1e-7) * 10,
                                   equal_nan=True)
    else:
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("spec", CASES)
def test_vmap_op(spec):
    _vmap_op(spec, 1e-3 if spec.grad else 0.7)


@pytest.mark.parametrize("spec", [pytest.param(s, id=s.name) for s in OPS if s.grad and s.name not in _KNOWN])
def test_vmap_op_far_samples(spec):
    """Differentiable ops with samples far apart, so that what they compute from the data besides the values
    (pivots, orders, arg-maxima, masks) differs between the samples: each sample's must be used."""
    _vmap_op(spec, 0.7, against_torch=False)


def _vmap_op(spec, scale, against_torch=True):
    rng = np.random.default_rng(12345)        # (not the samples' seed: the noise must not be the sample itself)
    sample = spec.samples(np.random.default_rng(0))[0]
    # the samples of a batch differ: a little for differentiable ops (inside their domain), a lot for the others
    # (comparisons, arg-reductions: a small change would not change their results, hiding a wrong batching)
    batches = []
    for a in sample.args:
        if isinstance(a, (list, tuple)) and a and all(isinstance(e, np.ndarray) for e in a):
            batches.append([_batch(e, rng, scale) for e in a])
        else:
            batches.append(_batch(a, rng, scale))
    if not any(b is not None and (not isinstance(b, list) or any(e is not None for e in b)) for b in batches):
        pytest.skip("no floating input to map over")
    in_dims = tuple([0 if e is not None else None for e in b] if isinstance(b, list) else
                    (0 if b is not None else None) for b in batches)
    in_dims = tuple(type(a)(d) if isinstance(d, list) else d for a, d in zip(sample.args, in_dims))

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        state = _random.get_rng_state()
        try:
            loop = [spec.fn(tapegrad, *_args(tapegrad, sample.args, batches, b), **sample.kwargs) for b in range(B)]
        except Exception as e:  # noqa: BLE001 - a sample that only fails perturbed is not vmap's concern
            pytest.skip(f"the perturbed samples fail eagerly: {e}")
        random_op = not np.array_equal(_np(state), _np(_random.get_rng_state()))
        flat_loop = [_flat(r) for r in loop]
        if not all(isinstance(o, tapegrad.Tensor) for o in flat_loop[0]):
            pytest.skip("the op returns non-tensors")
        if any(tuple(o.shape) != tuple(r.shape) for lp in flat_loop[1:] for o, r in zip(lp, flat_loop[0])):
            pytest.skip("the samples' shapes differ (a data-dependent shape: vmap cannot stack them)")
        fn = lambda *a: spec.fn(tapegrad, *a, **sample.kwargs)  # noqa: E731
        got = tapegrad.func.vmap(fn, in_dims=in_dims, randomness="different")(
            *_args(tapegrad, sample.args, batches, None))
    flat_got = _flat(got)
    assert len(flat_got) == len(flat_loop[0])
    if random_op:
        for g, o in zip(flat_got, flat_loop[0]):
            assert tuple(g.shape) == (B,) + tuple(o.shape)
        return
    for i, g in enumerate(flat_got):
        _close(_np(g), np.stack([_np(r[i]) for r in flat_loop]), spec)
    if not against_torch:
        return

    torch = pytest.importorskip("torch", reason="torch.vmap is the second oracle here")
    try:      # (torch's own loop first: on inputs where torch's op and tapegrad's disagree, e.g. an SVD's signs or a
        #        matrix the perturbation made singular, torch.vmap is no reference)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tloop = [_flat(spec.fn(torch, *_args(torch, sample.args, batches, b), **sample.kwargs)) for b in range(B)]
        for i, g in enumerate(flat_got):
            np.testing.assert_allclose(_np(g).astype(np.complex128),
                                       np.stack([_np(r[i]) for r in tloop]).astype(np.complex128),
                                       rtol=1e-5, atol=1e-6, equal_nan=True)
    except Exception:  # noqa: BLE001
        return
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = torch.func.vmap(lambda *a: spec.fn(torch, *a, **sample.kwargs), in_dims=in_dims)(
                *_args(torch, sample.args, batches, None))
    except Exception:  # noqa: BLE001 - torch does not batch every op: the loop above is the reference then
        return
    flat_want = _flat(want)
    if len(flat_want) != len(flat_got):
        return
    for g, w in zip(flat_got, flat_want):
        if hasattr(w, "shape") and tuple(w.shape) == tuple(g.shape):
            np.testing.assert_allclose(_np(g).astype(np.complex128), _np(w).astype(np.complex128),
                                       rtol=1e-5, atol=1e-6, equal_nan=True)


def _scalar(m, res):
    """A scalar of an op's output(s): the sum of every floating output (weighted, so that each element counts)."""
    total = None
    for o in _flat(res):
        if isinstance(o, (tapegrad.Tensor,)) and o.dtype.is_floating_point:
            w = m.arange(o.numel(), dtype=o.dtype).reshape(o.shape).cos() if o.dim() else 1.0
            s = (o * w).sum()
            total = s if total is None else total + s
    return total


GRAD_CASES = [pytest.param(spec, id=spec.name) for spec in OPS if spec.grad]


@pytest.mark.parametrize("spec", GRAD_CASES)
def test_vmap_grad_op(spec):
    """Per-sample gradients through each op: ``vmap(grad(f))`` (f: the op, summed with weights) against a loop of
    ``grad(f)`` over the samples — the physical graph of the batched op gives every sample its own gradient."""
    rng = np.random.default_rng(12345)
    sample = spec.samples(np.random.default_rng(0))[0]
    pos = [i for i, a in enumerate(sample.args) if isinstance(a, np.ndarray) and a.dtype.kind == "f"]
    if not pos or spec.name in _KNOWN:
        pytest.skip("no floating tensor argument")
    i0 = pos[0]
    batch = _batch(sample.args[i0], rng, 1e-3)

    def f(x, *rest):
        args = list(rest)
        args.insert(i0, x)
        return _scalar(tapegrad, spec.fn(tapegrad, *args, **sample.kwargs))
    rest = [_tensor(tapegrad, a) for i, a in enumerate(sample.args) if i != i0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tapegrad.manual_seed(0)
        try:
            loop = [tapegrad.func.grad(f)(tapegrad.tensor(batch[b]), *rest) for b in range(B)]
        except Exception as e:  # noqa: BLE001 - an op whose output is not floating, or fails perturbed
            pytest.skip(f"no per-sample gradient eagerly: {type(e).__name__}")
        if _scalar(tapegrad, spec.fn(tapegrad, *[_tensor(tapegrad, a) for a in sample.args],
                                     **sample.kwargs)) is None:
            pytest.skip("no floating output")
        tapegrad.manual_seed(0)
        got = tapegrad.func.vmap(tapegrad.func.grad(f), in_dims=(0,) + (None,) * len(rest),
                                 randomness="same")(tapegrad.tensor(batch), *rest)
    _close(_np(got), np.stack([_np(g) for g in loop]), spec)


@pytest.mark.parametrize("spec", GRAD_CASES)
def test_vmap_jvp_op(spec):
    """Batched tangents through each op: ``vmap(jvp(op))`` against a loop of ``jvp(op)`` over the samples (the
    rules derived from an op's backward run on the batched arrays under vmap)."""
    rng = np.random.default_rng(12345)
    sample = spec.samples(np.random.default_rng(0))[0]
    pos = [i for i, a in enumerate(sample.args) if isinstance(a, np.ndarray) and a.dtype.kind == "f"]
    if not pos or spec.name in _KNOWN:
        pytest.skip("no floating tensor argument")
    i0 = pos[0]
    batch = _batch(sample.args[i0], rng, 1e-3)
    tans = rng.standard_normal(batch.shape)

    def f(x, t, *rest):
        def g(v):
            args = list(rest)
            args.insert(i0, v)
            out = [o for o in _flat(spec.fn(tapegrad, *args, **sample.kwargs))
                   if isinstance(o, tapegrad.Tensor) and o.dtype.is_floating_point]
            return tuple(out)
        return tapegrad.func.jvp(g, (x,), (t,))[1]
    rest = [_tensor(tapegrad, a) for i, a in enumerate(sample.args) if i != i0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tapegrad.manual_seed(0)
        try:
            loop = [f(tapegrad.tensor(batch[b]), tapegrad.tensor(tans[b]), *rest) for b in range(B)]
        except Exception as e:  # noqa: BLE001 - no floating output, or fails perturbed
            pytest.skip(f"no per-sample tangent eagerly: {type(e).__name__}")
        tapegrad.manual_seed(0)
        got = tapegrad.func.vmap(f, in_dims=(0, 0) + (None,) * len(rest), randomness="same")(
            tapegrad.tensor(batch), tapegrad.tensor(tans), *rest)
    for i, g in enumerate(got):
        _close(_np(g), np.stack([_np(r[i]) for r in loop]), spec)


def _discrete(a):
    return isinstance(a, np.ndarray) and a.dtype.kind in "biu" and a.size > 1


def _shuffle(a, rng):
    """A batch of B arrays of ``a``'s values in other orders (sample 0 is the original): indices stay in range,
    masks keep their count, and a function that reads sample 0's data gives itself away."""
    return np.stack([a] + [rng.permutation(a.reshape(-1)).reshape(a.shape) for _ in range(B - 1)])


DISCRETE_CASES = [pytest.param(spec, id=spec.name) for spec in OPS if spec.name not in _KNOWN]


@pytest.mark.parametrize("spec", DISCRETE_CASES)
def test_vmap_op_discrete_inputs(spec):
    """The integer and bool arguments batched (indices, masks, lengths, pivots: the sweep above batches only
    floating ones), each sample a shuffle of the original values, against a per-sample loop: a function that
    computes on a batched argument's array outside the op mechanism sees sample 0 only and fails this."""
    rng = np.random.default_rng(54321)
    sample = spec.samples(np.random.default_rng(0))[0]
    batches = []
    for a in sample.args:
        if isinstance(a, (list, tuple)) and a and all(isinstance(e, np.ndarray) for e in a):
            batches.append([_shuffle(e, rng) if _discrete(e) else None for e in a])
        else:
            batches.append(_shuffle(a, rng) if _discrete(a) else None)
    if not any(b is not None and (not isinstance(b, list) or any(e is not None for e in b)) for b in batches):
        pytest.skip("no integer or bool input to map over")
    in_dims = tuple(type(a)([0 if e is not None else None for e in b]) if isinstance(b, list) else
                    (0 if b is not None else None) for a, b in zip(sample.args, batches))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        state = _random.get_rng_state()
        try:
            loop = [_flat(spec.fn(tapegrad, *_args(tapegrad, sample.args, batches, b), **sample.kwargs))
                    for b in range(B)]
        except Exception as e:  # noqa: BLE001 - a shuffle that is no valid input (pivots, sorted offsets)
            pytest.skip(f"the shuffled samples fail eagerly: {type(e).__name__}")
        if not np.array_equal(_np(state), _np(_random.get_rng_state())):
            pytest.skip("a random op")
        if not all(isinstance(o, tapegrad.Tensor) for o in loop[0]):
            pytest.skip("the op returns non-tensors")
        if any(tuple(o.shape) != tuple(r.shape) for lp in loop[1:] for o, r in zip(lp, loop[0])):
            pytest.skip("the samples' shapes differ (a data-dependent shape: vmap cannot stack them)")
        fn = lambda *a: spec.fn(tapegrad, *a, **sample.kwargs)  # noqa: E731
        got = _flat(tapegrad.func.vmap(fn, in_dims=in_dims)(*_args(tapegrad, sample.args, batches, None)))
    assert len(got) == len(loop[0])
    for i, g in enumerate(got):
        _close(_np(g), np.stack([_np(r[i]) for r in loop]), spec)
