"""Argument helpers of the layers (torch's ``nn.modules.utils``): ``_single``, ``_pair``, ``_triple``,
``_quadruple`` spread an int over n dimensions; a tuple or list passes through as a tuple.

>>> _pair(3), _triple((1, 2, 3)), _reverse_repeat_tuple((1, 2), 2)
((3, 3), (1, 2, 3), (2, 2, 1, 1))
"""

from __future__ import annotations

__all__: list = []


def _ntuple(n, name="parse"):
    def parse(x):
        if isinstance(x, (tuple, list)):
            return tuple(x)
        return (x,) * n
    parse.__name__ = name
    return parse


_single = _ntuple(1, "_single")
_pair = _ntuple(2, "_pair")
_triple = _ntuple(3, "_triple")
_quadruple = _ntuple(4, "_quadruple")


def _reverse_repeat_tuple(t, n):
    """``(a, b)`` repeated ``n`` times each, in reverse order: ``(b, b, a, a)`` for n=2 (F.pad's order)."""
    return tuple(x for x in reversed(t) for _ in range(n))
