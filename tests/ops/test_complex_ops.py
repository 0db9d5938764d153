"""The op table on complex inputs (the ops of ``complex_ops.COMPLEX``): values, dtypes, grad_fn names, gradients
and second derivatives against torch (complex128, complex cotangents), complex64 values, and gradcheck /
gradgradcheck the way torch checks complex functions (real and imaginary parts of each output; for a complex
input, d/dx + i d/dy). A sample torch itself refuses for complex input is skipped, naming torch's error."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from ops.complex_ops import complex_samples
from ops.op_db import OPS
from ops.oracle import to_torch
from ops.test_op_db import _run_both, as_np, check_gradcheck, check_vs_torch, dtype_name

CASES = []
for spec in OPS:
    if spec.complex:
        for k, sample in enumerate(complex_samples(spec, np.random.default_rng(3))):
            CASES.append(pytest.param(spec, sample, id=f"{spec.name}-{sample.name or k}-complex"))


def _torch_accepts(torch, spec, sample):
    """Skip the sample when torch itself raises on it (torch's op has no complex kernel for this case)."""
    args = [to_torch(torch, a, np.float64) for a in sample.args]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")     # (a probe: the checks below see the warnings)
            spec.fn(torch, *args, **sample.kwargs)
    except (RuntimeError, TypeError, NotImplementedError, ValueError) as e:
        pytest.skip(f"torch refuses this complex sample: {type(e).__name__}: {str(e).splitlines()[0][:120]}")


@pytest.mark.parametrize("spec,sample", CASES)
def test_complex_values_and_grads_vs_torch(torch, spec, sample):
    _torch_accepts(torch, spec, sample)
    check_vs_torch(torch, spec, sample)


@pytest.mark.parametrize("spec,sample", CASES)
def test_complex64_values_vs_torch(torch, spec, sample):
    _torch_accepts(torch, spec, sample)
    _, _, tg_out, th_out = _run_both(torch, spec, sample, np.float32, grad=False)
    assert len(tg_out) == len(th_out)
    for a, b in zip(tg_out, th_out):
        assert dtype_name(a) == dtype_name(b), f"{spec.name}: complex64 dtype {a.dtype} != torch {b.dtype}"
        a, b = as_np(a), as_np(b)
        if a.dtype.kind in "fc":
            np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5, equal_nan=True)
        else:
            np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("spec,sample", CASES)
def test_complex_gradcheck(torch, spec, sample):
    _torch_accepts(torch, spec, sample)
    check_gradcheck(spec, sample)
