# ruff: noqa: A001, A002 - torch's argument name (input)
"""Pooling modules, 1-D to 3-D: max and average pooling, max unpooling, fractional max pooling, power-average
(LP) pooling and the adaptive pools (``F``'s functions with torch's arguments and reprs)."""

from __future__ import annotations

from .. import functional as F
from ..module import Module
from .utils import _pair, _single, _triple

__all__ = ["MaxPool1d", "MaxPool2d", "MaxPool3d", "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d", "AvgPool1d",
           "AvgPool2d", "AvgPool3d", "FractionalMaxPool2d", "FractionalMaxPool3d", "LPPool1d", "LPPool2d", "LPPool3d",
           "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "AdaptiveMaxPool3d", "AdaptiveAvgPool1d", "AdaptiveAvgPool2d",
           "AdaptiveAvgPool3d"]


class _MaxPoolNd(Module):
    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False, ceil_mode=False):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if (stride is not None) else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def extra_repr(self):
        return "kernel_size={kernel_size}, stride={stride}, padding={padding}, dilation={dilation}, " \
               "ceil_mode={ceil_mode}".format(**self.__dict__)


class MaxPool1d(_MaxPoolNd):
    """Max over sliding windows of ``(N, C, L)``."""

    def forward(self, input):
        return F.max_pool1d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)


class MaxPool2d(_MaxPoolNd):
    """Max over sliding windows of ``(N, C, H, W)``.

    >>> tapegrad.nn.MaxPool2d(2)(tapegrad.zeros(1, 1, 4, 4)).shape
    tapegrad.Size([1, 1, 2, 2])
    """

    def forward(self, input):
        return F.max_pool2d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)


class MaxPool3d(_MaxPoolNd):
    """Max over sliding windows of ``(N, C, D, H, W)``."""

    def forward(self, input):
        return F.max_pool3d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)


class _AvgPoolNd(Module):
    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool1d(_AvgPoolNd):
    """Mean over sliding windows of ``(N, C, L)``."""

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
        super().__init__()
        self.kernel_size = _single(kernel_size)
        self.stride = _single(stride if stride is not None else kernel_size)
        self.padding = _single(padding)
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad

    def forward(self, input):
        return F.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad)


class AvgPool2d(_AvgPoolNd):
    """Mean over sliding windows of ``(N, C, H, W)``."""

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
                 divisor_override=None):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if (stride is not None) else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def forward(self, input):
        return F.avg_pool2d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)


class AvgPool3d(_AvgPoolNd):
    """Mean over sliding windows of ``(N, C, D, H, W)``."""

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
                 divisor_override=None):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if (stride is not None) else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def forward(self, input):
        return F.avg_pool3d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)


class _MaxUnpoolNd(Module):
    """The partial inverse of max pooling: each value goes back to the position its index names, zeros elsewhere."""

    _tuple = staticmethod(_single)
    _fn = ""

    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__()
        self.kernel_size = self._tuple(kernel_size)
        self.stride = self._tuple(stride if (stride is not None) else kernel_size)
        self.padding = self._tuple(padding)

    def forward(self, input, indices, output_size=None):
        return getattr(F, self._fn)(input, indices, self.kernel_size, self.stride, self.padding, output_size)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpoolNd):
    """Undo ``MaxPool1d(return_indices=True)`` on ``(N, C, L)``."""

    _fn = "max_unpool1d"


class MaxUnpool2d(_MaxUnpoolNd):
    """Undo ``MaxPool2d(return_indices=True)`` on ``(N, C, H, W)``.

    >>> pool, unpool = tapegrad.nn.MaxPool2d(2, return_indices=True), tapegrad.nn.MaxUnpool2d(2)
    >>> out, idx = pool(tapegrad.arange(16.).reshape(1, 1, 4, 4))
    >>> unpool(out, idx)[0, 0]
    tensor([[ 0.,  0.,  0.,  0.],
            [ 0.,  5.,  0.,  7.],
            [ 0.,  0.,  0.,  0.],
            [ 0., 13.,  0., 15.]])
    """

    _tuple = staticmethod(_pair)
    _fn = "max_unpool2d"


class MaxUnpool3d(_MaxUnpoolNd):
    """Undo ``MaxPool3d(return_indices=True)`` on ``(N, C, D, H, W)``."""

    _tuple = staticmethod(_triple)
    _fn = "max_unpool3d"


class _FractionalMaxPoolNd(Module):
    _d = 2
    _tuple = staticmethod(_pair)

    def __init__(self, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                 _random_samples=None):
        super().__init__()
        name = f"FractionalMaxPool{self._d}d"
        if self._d == 3 and ((isinstance(kernel_size, int) and kernel_size <= 0) or (
                isinstance(kernel_size, (tuple, list)) and not all(k > 0 for k in kernel_size))):
            raise ValueError(f"kernel_size must be greater than 0, but got {kernel_size}")
        self.kernel_size = self._tuple(kernel_size)
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = self._tuple(output_size) if output_size is not None else None
        self.output_ratio = self._tuple(output_ratio) if output_ratio is not None else None
        if output_size is None and output_ratio is None:
            raise ValueError(f"{name} requires specifying either an output size, or a pooling ratio")
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        if self.output_ratio is not None and not all(0 < r < 1 for r in self.output_ratio):
            raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")

    def forward(self, input):
        fn = F.fractional_max_pool2d if self._d == 2 else F.fractional_max_pool3d
        return fn(input, self.kernel_size, self.output_size, self.output_ratio, self.return_indices,
                  _random_samples=self._random_samples)


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    """Max over pseudo-random, overlapping windows of ``(N, C, H, W)`` that shrink it to ``output_size`` (or by
    ``output_ratio``): Graham's fractional max pooling. ``_random_samples`` (``(N, C, 2)`` in [0, 1)) fixes the
    windows; otherwise they are drawn from the global generator at each call."""


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    """Fractional max pooling of ``(N, C, D, H, W)`` (``_random_samples`` of shape ``(N, C, 3)``)."""

    _d = 3
    _tuple = staticmethod(_triple)


class _LPPoolNd(Module):
    _fn = ""

    def __init__(self, norm_type, kernel_size, stride=None, ceil_mode=False):
        super().__init__()
        self.norm_type = norm_type
        self.kernel_size = kernel_size
        self.stride = stride
        self.ceil_mode = ceil_mode

    def forward(self, input):
        return getattr(F, self._fn)(input, float(self.norm_type), self.kernel_size, self.stride, self.ceil_mode)

    def extra_repr(self):
        return "norm_type={norm_type}, kernel_size={kernel_size}, stride={stride}, ceil_mode={ceil_mode}".format(
            **self.__dict__)


class LPPool1d(_LPPoolNd):
    """Power-average pooling of ``(N, C, L)``: ``(sum over the window of x ** p) ** (1 / p)``."""

    _fn = "lp_pool1d"


class LPPool2d(_LPPoolNd):
    """Power-average pooling of ``(N, C, H, W)``; ``norm_type=1`` is sum pooling, large p nears max pooling."""

    _fn = "lp_pool2d"


class LPPool3d(_LPPoolNd):
    """Power-average pooling of ``(N, C, D, H, W)``."""

    _fn = "lp_pool3d"


class _AdaptiveMaxPoolNd(Module):
    _fn = ""

    def __init__(self, output_size, return_indices=False):
        super().__init__()
        self.output_size = output_size
        self.return_indices = return_indices

    def forward(self, input):
        return getattr(F, self._fn)(input, self.output_size, self.return_indices)

    def extra_repr(self):
        return f"output_size={self.output_size}"


class AdaptiveMaxPool1d(_AdaptiveMaxPoolNd):
    """Max-pool ``(N, C, L)`` to ``output_size``."""

    _fn = "adaptive_max_pool1d"


class AdaptiveMaxPool2d(_AdaptiveMaxPoolNd):
    """Max-pool ``(N, C, H, W)`` to ``output_size`` (``None`` keeps a size)."""

    _fn = "adaptive_max_pool2d"


class AdaptiveMaxPool3d(_AdaptiveMaxPoolNd):
    """Max-pool ``(N, C, D, H, W)`` to ``output_size``."""

    _fn = "adaptive_max_pool3d"


class _AdaptiveAvgPoolNd(Module):
    _fn = ""

    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def forward(self, input):
        return getattr(F, self._fn)(input, self.output_size)

    def extra_repr(self):
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(_AdaptiveAvgPoolNd):
    """Average-pool ``(N, C, L)`` to ``output_size``."""

    _fn = "adaptive_avg_pool1d"


class AdaptiveAvgPool2d(_AdaptiveAvgPoolNd):
    """Average-pool ``(N, C, H, W)`` to ``output_size`` (``None`` keeps a size).

    >>> tapegrad.nn.AdaptiveAvgPool2d(1)(tapegrad.ones(1, 2, 5, 5)).shape
    tapegrad.Size([1, 2, 1, 1])
    """

    _fn = "adaptive_avg_pool2d"


class AdaptiveAvgPool3d(_AdaptiveAvgPoolNd):
    """Average-pool ``(N, C, D, H, W)`` to ``output_size``."""

    _fn = "adaptive_avg_pool3d"
