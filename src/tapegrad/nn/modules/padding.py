# ruff: noqa: A001, A002 - torch's argument name (input)
"""Padding modules, 1-D to 3-D: constant (and zero), reflection, replication and circular (``F.pad``).

``padding`` is an int (every side) or a tuple ``(left, right[, top, bottom[, front, back]])`` — the last dim's
pair first, as ``F.pad`` takes it.

>>> tapegrad.nn.ReflectionPad3d(1)(tapegrad.zeros(1, 1, 2, 2, 2)).shape
tapegrad.Size([1, 1, 4, 4, 4])
"""

from __future__ import annotations

from .. import functional as F
from ..module import Module
from .utils import _ntuple, _pair, _quadruple

__all__ = ["CircularPad1d", "CircularPad2d", "CircularPad3d", "ConstantPad1d", "ConstantPad2d", "ConstantPad3d",
           "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d",
           "ReplicationPad3d", "ZeroPad1d", "ZeroPad2d", "ZeroPad3d"]

_sextuple = _ntuple(6, "_sextuple")


class _ModePadNd(Module):
    """Padding by a mode of ``F.pad`` (``_mode``); ``_tuple`` spreads an int over every side."""

    _mode = "reflect"
    _tuple = staticmethod(_quadruple)

    def __init__(self, padding):
        super().__init__()
        self.padding = self._tuple(padding)

    def forward(self, input):
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self):
        return f"{self.padding}"


class _CircularPadNd(_ModePadNd):
    _mode = "circular"
    _dims = 2

    def _check_input_dim(self, input):
        n = self._dims
        if input.dim() not in (n + 1, n + 2):
            raise ValueError(f"expected {n + 1}D or {n + 2}D input (got {input.dim()}D input)")

    def forward(self, input):
        self._check_input_dim(input)
        return F.pad(input, self.padding, "circular")


class CircularPad1d(_CircularPadNd):
    """Pad the last dim circularly (the far end wraps round)."""

    _tuple = staticmethod(_pair)
    _dims = 1


class CircularPad2d(_CircularPadNd):
    """Pad the last two dims circularly."""


class CircularPad3d(_CircularPadNd):
    """Pad the last three dims circularly."""

    _tuple = staticmethod(_sextuple)
    _dims = 3


class _ConstantPadNd(Module):
    _tuple = staticmethod(_quadruple)

    def __init__(self, padding, value: float):
        super().__init__()
        self.padding = self._tuple(padding)
        self.value = value

    def forward(self, input):
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self):
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    """Pad the last dim with ``value``: ``padding`` = ``(left, right)`` or an int."""

    _tuple = staticmethod(_pair)


class ConstantPad2d(_ConstantPadNd):
    """Pad the last two dims with ``value``: ``(left, right, top, bottom)`` or an int."""


class ConstantPad3d(_ConstantPadNd):
    """Pad the last three dims with ``value``: ``(left, right, top, bottom, front, back)`` or an int."""

    _tuple = staticmethod(_sextuple)


class _ReflectionPadNd(_ModePadNd):
    _mode = "reflect"


class ReflectionPad1d(_ReflectionPadNd):
    """Pad the last dim by reflection."""

    _tuple = staticmethod(_pair)


class ReflectionPad2d(_ReflectionPadNd):
    """Pad the last two dims by reflection (without repeating the edge)."""


class ReflectionPad3d(_ReflectionPadNd):
    """Pad the last three dims by reflection."""

    _tuple = staticmethod(_sextuple)


class _ReplicationPadNd(_ModePadNd):
    _mode = "replicate"


class ReplicationPad1d(_ReplicationPadNd):
    """Pad the last dim by repeating the edge."""

    _tuple = staticmethod(_pair)


class ReplicationPad2d(_ReplicationPadNd):
    """Pad the last two dims by repeating the edges."""


class ReplicationPad3d(_ReplicationPadNd):
    """Pad the last three dims by repeating the edges."""

    _tuple = staticmethod(_sextuple)


class ZeroPad1d(ConstantPad1d):
    """Pad the last dim with zeros."""

    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


class ZeroPad2d(ConstantPad2d):
    """Pad the last two dims with zeros: ``(left, right, top, bottom)`` or an int.

    >>> tapegrad.nn.ZeroPad2d(1)
    ZeroPad2d((1, 1, 1, 1))
    """

    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


class ZeroPad3d(ConstantPad3d):
    """Pad the last three dims with zeros."""

    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"
