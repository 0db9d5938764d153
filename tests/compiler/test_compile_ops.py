"""tapegrad.compile on every op of the table (the first sample of each spec): the compiled replay's values and
gradients equal eager's bitwise (the same NumPy kernels run in the same order), in float64 and float32.

Each case calls the compiled function three times: the first call captures (it runs eagerly), the second
replays on the same inputs, the third on other data of the same shapes (floats scaled, integers rolled), against
eager on that data: a value baked into the program as a constant would show there. Random ops are compared with
the generator seeded the same before each call."""

from __future__ import annotations

import numpy as np
import pytest

import tapegrad
from ops.op_db import OPS
from ops.oracle import outputs, to_tg

CASES = [pytest.param(spec, spec.samples(np.random.default_rng(0))[0], id=spec.name) for spec in OPS
         if spec.samples(np.random.default_rng(0))]


def _leaves(args):
    out = []
    for a in args:
        if isinstance(a, (list, tuple)):
            out.extend(_leaves(a))
        elif isinstance(a, tapegrad.Tensor) and a.requires_grad:
            out.append(a)
    return out


def _run(fn, spec, args, kwargs, weights):
    tapegrad.manual_seed(0)
    res = outputs(spec, fn(*args, **kwargs))
    vals = [r.detach().numpy().copy() if isinstance(r, tapegrad.Tensor) else r for r in res]
    diff = [r for r in res if isinstance(r, tapegrad.Tensor) and r.requires_grad]
    grads = None
    leaves = _leaves(args)
    if diff and leaves:
        loss = sum(((r * w).sum() if not r.is_complex() else (r * w).sum().real) for r, w in zip(diff, weights))
        grads = tapegrad.autograd.grad(loss, leaves, allow_unused=True)
        grads = [None if g is None else g.numpy().copy() for g in grads]
    return vals, grads


def _other(a):
    """Other data of the same shape and dtype: floats scaled by 1.03, integers rolled by one place."""
    if isinstance(a, np.ndarray):
        if a.dtype.kind in "fc":
            return a * 1.03
        if a.ndim and a.size > 1:
            return np.roll(a, 1)
        return a
    if isinstance(a, (list, tuple)):
        return type(a)(_other(e) for e in a)
    return a


def _same(a, b, what):
    if isinstance(a, np.ndarray):
        assert isinstance(b, np.ndarray) and a.dtype == b.dtype and a.shape == b.shape, what
        np.testing.assert_array_equal(a, b, err_msg=what)        # bitwise (NaN == NaN)
    else:
        assert a == b or (a != a and b != b), what


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("spec,sample", CASES)
def test_compiled_equals_eager(spec, sample, dtype):
    args = [to_tg(a, dtype, spec.grad) for a in sample.args]
    kwargs = sample.kwargs

    def f(*a, **k):
        return spec.fn(tapegrad, *a, **k)

    try:
        eager_vals, eager_grads = None, None
        rng = np.random.default_rng(1)
        probe = outputs(spec, f(*args, **kwargs))
        weights = [tapegrad.tensor(rng.standard_normal(tuple(r.shape)).astype(
            r.detach().numpy().dtype if r.dtype.is_floating_point else np.float64))
            for r in probe if isinstance(r, tapegrad.Tensor) and r.requires_grad]
        eager_vals, eager_grads = _run(f, spec, args, kwargs, weights)
    except Exception as e:       # an op that refuses this dtype eagerly: nothing to compare
        pytest.skip(f"eager raises: {type(e).__name__}")
    other = [to_tg(_other(a), dtype, spec.grad) for a in sample.args]
    try:
        other_vals, other_grads = _run(f, spec, other, kwargs, weights)
    except Exception:
        other = None
    cf = tapegrad.compile(f)
    for call in range(3):
        if call == 2:
            if other is None:
                break
            args, eager_vals, eager_grads = other, other_vals, other_grads
        vals, grads = _run(cf, spec, args, kwargs, weights)
        assert len(vals) == len(eager_vals)
        for k, (a, b) in enumerate(zip(vals, eager_vals)):
            _same(a, b, f"{spec.name}: output {k}, call {call}")
        if eager_grads is not None:
            for k, (a, b) in enumerate(zip(grads, eager_grads)):
                assert (a is None) == (b is None), f"{spec.name}: gradient {k} presence, call {call}"
                if a is not None:
                    _same(a, b, f"{spec.name}: gradient {k}, call {call}")
