"""torch's symbolic-number names (``torch.SymInt``, ``torch.sym_int``, ...) as they behave outside tracing.

tapegrad has no symbolic shapes: its compiler learns dynamic sizes from captures (``compiler/dynamic.py``), so
sizes are always plain ints. ``SymInt``/``SymFloat``/``SymBool`` exist for ``isinstance`` checks and annotations
(a plain number is not an instance, as in torch); the ``sym_*`` functions take plain Python (or NumPy) numbers and
give what torch's give for them."""

from __future__ import annotations

import builtins
import math

import numpy as np

__all__ = ["SymInt", "SymFloat", "SymBool", "sym_int", "sym_float", "sym_max", "sym_min", "sym_not", "sym_sqrt",
           "sym_ite", "sym_sum", "sym_constrain_range", "sym_constrain_range_for_size", "sym_fresh_size"]


class _SymBase:
    """A symbolic number: a node of a shape expression. tapegrad never makes one (sizes are concrete)."""

    def __init__(self, node):
        self.node = node

    def __repr__(self):
        return f"{type(self).__name__}({self.node!r})"


class SymInt(_SymBase):
    """A symbolic int (torch.SymInt)."""


class SymFloat(_SymBase):
    """A symbolic float (torch.SymFloat)."""


class SymBool(_SymBase):
    """A symbolic bool (torch.SymBool)."""


def sym_int(a):
    """``int(a)`` (toward zero)."""
    return a if isinstance(a, SymInt) else builtins.int(a)


def sym_float(a):
    """``float(a)``."""
    return a if isinstance(a, SymFloat) else builtins.float(a)


_NUMBER_TYPES = (np.integer, np.floating, builtins.int, builtins.float)


def _check_numbers(a, b):
    for v in (a, b):
        if not isinstance(v, _NUMBER_TYPES):
            raise AssertionError(f"expected {_NUMBER_TYPES}, got {type(v)}")


def sym_max(a, b):
    """``max(a, b)`` of two numbers."""
    _check_numbers(a, b)
    return builtins.max(a, b)


def sym_min(a, b):
    """``min(a, b)`` of two numbers."""
    _check_numbers(a, b)
    return builtins.min(a, b)


def sym_not(a):
    """``not a``."""
    return not a


def sym_sqrt(a):
    """``math.sqrt(a)``."""
    return math.sqrt(a)


def sym_ite(b, t, f):
    """``t if b else f``; ``b`` a bool and ``t``, ``f`` of one type."""
    if not isinstance(b, (SymBool, builtins.bool)):
        raise AssertionError(f"expected SymBool or bool, got {type(b)}")
    if type(t) is not type(f):
        raise AssertionError(f"type mismatch: {type(t)} vs {type(f)}")
    return t if b else f


def sym_sum(args):
    """``sum(args)``."""
    return builtins.sum(args)


_INT64_MIN, _INT64_MAX = -(2 ** 63), 2 ** 63 - 1


def sym_constrain_range(size, *, min=None, max=None):  # noqa: A002 - torch's names
    """Check that the int ``size`` lies in ``[min, max]`` (a compiler hint on a symbolic size in torch)."""
    lo = _INT64_MIN if min is None else min
    hi = _INT64_MAX if max is None else max
    value = builtins.int(size)
    if not lo <= value <= hi:
        raise RuntimeError(f"Invalid value range for {value} between [{lo}, {hi}].")


def sym_constrain_range_for_size(size, *, min=None, max=None):  # noqa: A002 - torch's names
    """``sym_constrain_range`` for a size: ``min`` defaults to 0."""
    sym_constrain_range(size, min=0 if min is None else min, max=max)


def sym_fresh_size(expr):
    """``expr``'s value as a fresh size (a Python number here)."""
    from .creation import tensor
    return tensor(expr).item()
