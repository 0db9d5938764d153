"""torch's op database through ``tapegrad.compile``: for every op tapegrad has (non-random), the first float64
samples are run eagerly and compiled (the capturing call and a replay), and the values and the gradients (one
cotangent per differentiable output) must be equal bit for bit. A sample whose capture breaks the graph runs
eagerly and agrees trivially; the test counts such samples only to keep the comparison honest (most must be
replayed). Eager tapegrad is compared with torch on the same samples in tests/ops/test_torch_op_db.py."""

from __future__ import annotations

import types
import warnings

import numpy as np
import pytest

import tapegrad
from ops import torch_op_db as R

SAMPLES = 2


def _tensors(obj):
    return [t for t in R.flatten(obj) if isinstance(t, tapegrad.Tensor)]


def _run(op, tg_fn, sample, compiled):
    """[values..., gradients...] per call: one eager call, or the capture and a replay."""
    wrapper = R._tg_version(op.gradcheck_wrapper)

    def f(inp, args, kwargs):
        return R._call(tg_fn, types.SimpleNamespace(input=inp, args=args, kwargs=kwargs), wrapper)
    fn = tapegrad.compile(f) if compiled else f
    calls = []
    for _ in range(2 if compiled else 1):
        s = R.tg_sample(sample)
        out = fn(s.input, s.args, s.kwargs)
        got = [t.detach().numpy().copy() for t in _tensors(out)]
        diff = [t for t in _tensors(s.process(out)) if t.requires_grad and (t.is_floating_point() or t.is_complex())]
        ins = R._grad_leaves([s.input, s.args, s.kwargs])
        if diff and ins:
            g = np.random.default_rng(2)
            cots = [tapegrad.tensor(g.standard_normal(tuple(t.shape))).to(t.dtype) for t in diff]
            got += [None if a is None else a.numpy().copy()
                    for a in tapegrad.autograd.grad(diff, ins, cots, allow_unused=True)]
        calls.append(got)
    return calls, fn


def _differs(a, b):
    if len(a) != len(b):
        return f"{len(a)} results, eager {len(b)}"
    for k, (x, y) in enumerate(zip(a, b)):
        if (x is None) != (y is None):
            return f"result {k}: {'None' if x is None else 'a tensor'}, eager {'None' if y is None else 'a tensor'}"
        if x is not None and (x.shape != y.shape or x.dtype != y.dtype):
            return f"result {k}: {x.dtype}{list(x.shape)}, eager {y.dtype}{list(y.shape)}"
        if x is not None and not np.array_equal(x, y, equal_nan=True):
            return f"result {k}: values differ"
    return None


def _present():
    try:
        import expecttest  # noqa: F401  (torch's op_db imports it)
        import torch
    except ImportError:
        return []
    return [op for op in R.load_op_db() if not (R.exclusion(op) or R.is_random(op) or R.uninitialized(op))
            and torch.float64 in op.supported_dtypes("cpu") and R.resolve(op) is not None]


PRESENT = _present()
_COUNTS = {}          # op id -> (samples compared, samples replayed)


@pytest.mark.parametrize("op", PRESENT, ids=[R.op_id(op) for op in PRESENT])
def test_compiled_op_equals_eager(torch, op):
    tg_fn = R.resolve(op)
    failures, compared, replayed = [], 0, 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            samples = R._samples(op, torch.float64, SAMPLES)
        except Exception:  # noqa: BLE001 - torch's sample generator refuses: nothing to run
            samples = []
        for k, sample in enumerate(samples):
            try:
                eager, _ = _run(op, tg_fn, sample, False)
            except Exception:  # noqa: BLE001 - eager refuses the sample (checked against torch elsewhere)
                continue
            compared += 1
            try:
                comp, fn = _run(op, tg_fn, sample, True)
            except Exception as e:  # noqa: BLE001 - reported
                failures.append(f"#{k}: raised {type(e).__name__}: {e}")
                continue
            replayed += not fn.entries[0].eager
            for call, got in enumerate(comp):
                bad = _differs(got, eager[0])
                if bad:
                    failures.append(f"#{k} call {call}: {bad}")
    _COUNTS[R.op_id(op)] = (compared, replayed)
    assert not failures, "\n".join(failures)


def test_most_samples_are_replayed():
    """Most samples must be replayed, not run eagerly after a graph break (else the comparison is empty). Counted
    over the ops this worker ran (all of them in one process)."""
    if len(_COUNTS) < 50:
        pytest.skip("too few ops ran in this process to count")
    compared = sum(c for c, _ in _COUNTS.values())
    replayed = sum(r for _, r in _COUNTS.values())
    assert replayed > 0.75 * compared, (compared, replayed)
