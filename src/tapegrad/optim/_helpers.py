"""Small helpers shared by the update rules (state tensors, validation)."""

from __future__ import annotations

import numpy as np

from ..tensor import Tensor


def zeros_state(p):
    return Tensor._make(np.zeros_like(p._array))


def step_state():
    """torch keeps ``step`` as a float32 0-d tensor."""
    return Tensor._make(np.zeros((), np.float32))


def incr_step(state):
    s = state["step"]
    s._array += np.float32(1)
    return float(s._array)


def check(cond, message):
    if not cond:
        raise ValueError(message)


def grad_of(p, maximize):
    g = p._grad._array
    return -g if maximize else g


def touched(p):
    p._vc[0] += 1
