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
