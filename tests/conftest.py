"""Shared fixtures: the torch oracle (skipped with a printed reason where torch can't be installed)."""

import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))
sys.path.insert(0, os.path.dirname(__file__))

try:
    import torch as _torch
    _torch.set_num_threads(1)
    TORCH_MISSING = None
except Exception as e:  # pragma: no cover - only where torch can't be installed
    _torch = None
    TORCH_MISSING = f"torch is not installed ({e}); oracle tests skipped"


@pytest.fixture
def torch():
    if _torch is None:
        pytest.skip(TORCH_MISSING)
    return _torch


@pytest.fixture(autouse=True)
def _seed():
    import tapegrad
    tapegrad.manual_seed(0)
    np.random.seed(0)
    yield
    tapegrad.set_default_dtype(tapegrad.float32)
    import sys
    for name in ("tapegrad.distributions", "torch.distributions"):     # (a compile turns validation off: as torch)
        mod = sys.modules.get(name)
        if mod is not None:
            mod.Distribution.set_default_validate_args(True)


@pytest.fixture(autouse=True)
def _expected_op_warnings(request):
    """A test parametrized by an op-table spec keeps the op's declared warnings (``OpSpec.warns`` and
    ``torch_warns``) out of the suite's output: tests/ops/test_op_db.py checks that they come where torch gives
    them; the other sweeps (forward AD, vmap, compile...) only compare values."""
    callspec = getattr(request.node, "callspec", None)
    spec = callspec.params.get("spec") if callspec is not None else None
    patterns = [p for p in (getattr(spec, "warns", ""), getattr(spec, "torch_warns", "")) if p]
    if not patterns:
        yield
        return
    import warnings
    with warnings.catch_warnings():
        for p in patterns:
            warnings.filterwarnings("ignore", message=f".*(?:{p})")
        yield
