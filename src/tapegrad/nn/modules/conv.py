# ruff: noqa: A001, A002 - torch's argument name (input)
"""Convolutions: ``Conv1d Conv2d Conv3d ConvTranspose1d ConvTranspose2d ConvTranspose3d`` (torch's init, reprs)."""

from __future__ import annotations

import math

from ... import creation, no_grad
from .. import functional as F
from .. import init
from ..module import Module
from ..parameter import Parameter
from .lazy import LazyModuleMixin, _LazySized
from .utils import _pair, _reverse_repeat_tuple, _single, _triple

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d", "LazyConv1d",
           "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d", "LazyConvTranspose2d", "LazyConvTranspose3d"]


class _ConvNd(Module):
    _n = 0
    _tuple = staticmethod(_single)

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation, transposed, output_padding,
                 groups, bias, padding_mode, device=None, dtype=None):
        super().__init__()
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        valid_padding_strings = {"same", "valid"}
        if isinstance(padding, str):
            if padding not in valid_padding_strings:
                raise ValueError(f"Invalid padding string {padding!r}, should be one of {valid_padding_strings}")
            if padding == "same" and any(s != 1 for s in stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
        valid_padding_modes = {"zeros", "reflect", "replicate", "circular"}
        if padding_mode not in valid_padding_modes:
            raise ValueError(f"padding_mode must be one of {valid_padding_modes}, but got padding_mode='"
                             f"{padding_mode}'")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding
        self.dilation = dilation
        self.transposed = transposed
        self.output_padding = output_padding
        self.groups = groups
        self.padding_mode = padding_mode
        if isinstance(self.padding, str):
            self._reversed_padding_repeated_twice = [0, 0] * len(kernel_size)
            if padding == "same":
                for d, k, i in zip(dilation, kernel_size, range(len(kernel_size) - 1, -1, -1)):
                    total_padding = d * (k - 1)
                    left_pad = total_padding // 2
                    self._reversed_padding_repeated_twice[2 * i] = left_pad
                    self._reversed_padding_repeated_twice[2 * i + 1] = total_padding - left_pad
        else:
            self._reversed_padding_repeated_twice = _reverse_repeat_tuple(self.padding, 2)
        if transposed:
            shape = (in_channels, out_channels // groups, *kernel_size)
        else:
            shape = (out_channels, in_channels // groups, *kernel_size)
        self.weight = Parameter(creation.empty(shape, dtype=dtype, device=device))
        if bias:
            self.bias = Parameter(creation.empty(out_channels, dtype=dtype, device=device))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def extra_repr(self):
        s = "{in_channels}, {out_channels}, kernel_size={kernel_size}, stride={stride}"
        if self.padding != (0,) * len(self.padding):
            s += ", padding={padding}"
        if self.dilation != (1,) * len(self.dilation):
            s += ", dilation={dilation}"
        if self.output_padding != (0,) * len(self.output_padding):
            s += ", output_padding={output_padding}"
        if self.groups != 1:
            s += ", groups={groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += ", padding_mode={padding_mode}"
        return s.format(**self.__dict__)

    def __setstate__(self, state):
        super().__setstate__(state)
        if not hasattr(self, "padding_mode"):
            self.padding_mode = "zeros"


class _Conv(_ConvNd):
    """Shared constructor and forward of Conv1d/2d/3d."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=True, padding_mode="zeros", device=None, dtype=None):
        t = self._tuple
        padding_ = padding if isinstance(padding, str) else t(padding)
        super().__init__(in_channels, out_channels, t(kernel_size), t(stride), padding_, t(dilation), False,
                         t(0), groups, bias, padding_mode, device, dtype)

    def _conv_forward(self, input, weight, bias):
        fn = (F.conv1d, F.conv2d, F.conv3d)[self._n - 1]
        if self.padding_mode != "zeros":
            return fn(F.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode), weight, bias,
                      self.stride, self._tuple(0), self.dilation, self.groups)
        return fn(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)

    def forward(self, input):
        return self._conv_forward(input, self.weight, self.bias)


class Conv1d(_Conv):
    """1-D convolution over ``(N, C_in, L)``; weight ``(C_out, C_in / groups, k)``.

    >>> tapegrad.nn.Conv1d(2, 4, 3)
    Conv1d(2, 4, kernel_size=(3,), stride=(1,))
    """

    _n = 1
    _tuple = staticmethod(_single)


class Conv2d(_Conv):
    """2-D convolution over ``(N, C_in, H, W)``; weight ``(C_out, C_in / groups, kH, kW)``.

    >>> tapegrad.nn.Conv2d(1, 8, 3, padding=1)
    Conv2d(1, 8, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1))
    """

    _n = 2
    _tuple = staticmethod(_pair)


class Conv3d(_Conv):
    """3-D convolution over ``(N, C_in, D, H, W)``."""

    _n = 3
    _tuple = staticmethod(_triple)


class _ConvTransposeNd(_ConvNd):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1,
                 bias=True, dilation=1, padding_mode="zeros", device=None, dtype=None):
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {self.__class__.__name__}')
        t = self._tuple
        super().__init__(in_channels, out_channels, t(kernel_size), t(stride), t(padding), t(dilation), True,
                         t(output_padding), groups, bias, padding_mode, device, dtype)

    def _output_padding(self, input, output_size, stride, padding, kernel_size, num_spatial_dims, dilation=None):
        if output_size is None:
            return _single(self.output_padding)
        has_batch_dim = input.dim() == num_spatial_dims + 2
        num_non_spatial_dims = 2 if has_batch_dim else 1
        if len(output_size) == num_non_spatial_dims + num_spatial_dims:
            output_size = output_size[num_non_spatial_dims:]
        if len(output_size) != num_spatial_dims:
            raise ValueError(f"ConvTranspose{num_spatial_dims}D: for {input.dim()}D input, output_size must have "
                             f"{num_spatial_dims} or {num_non_spatial_dims + num_spatial_dims} elements (got "
                             f"{len(output_size)})")
        min_sizes, max_sizes = [], []
        for d in range(num_spatial_dims):
            dim_size = ((input.size(d + num_non_spatial_dims) - 1) * stride[d] - 2 * padding[d] +
                        (dilation[d] if dilation is not None else 1) * (kernel_size[d] - 1) + 1)
            min_sizes.append(dim_size)
            max_sizes.append(min_sizes[d] + stride[d] - 1)
        for i in range(len(output_size)):
            size, min_size, max_size = output_size[i], min_sizes[i], max_sizes[i]
            if size < min_size or size > max_size:
                raise ValueError(f"requested an output size of {output_size}, but valid sizes range from "
                                 f"{min_sizes} to {max_sizes} (for an input of {input.size()[2:]})")
        return tuple(output_size[d] - min_sizes[d] for d in range(num_spatial_dims))

    def forward(self, input, output_size=None):
        fn = (F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d)[self._n - 1]
        output_padding = self._output_padding(input, output_size, self.stride, self.padding, self.kernel_size,
                                              self._n, self.dilation)
        return fn(input, self.weight, self.bias, self.stride, self.padding, output_padding, self.groups,
                  self.dilation)


class ConvTranspose1d(_ConvTransposeNd):
    """Transposed 1-D convolution; weight ``(C_in, C_out / groups, k)``."""

    _n = 1
    _tuple = staticmethod(_single)


class ConvTranspose2d(_ConvTransposeNd):
    """Transposed 2-D convolution ("deconvolution"); weight ``(C_in, C_out / groups, kH, kW)``.

    >>> tapegrad.nn.ConvTranspose2d(4, 2, 2, stride=2)
    ConvTranspose2d(4, 2, kernel_size=(2, 2), stride=(2, 2))
    """

    _n = 2
    _tuple = staticmethod(_pair)


class ConvTranspose3d(_ConvTransposeNd):
    """Transposed 3-D convolution."""

    _n = 3
    _tuple = staticmethod(_triple)


class _LazyConvXdMixin(_LazySized):
    """Conv and transposed conv: ``in_channels`` from the first input's channel dimension. A subclass names its
    eager class as its last base; it becomes that class, and takes its arguments less ``in_channels``."""

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        eager = cls.__bases__[-1]
        if not issubclass(eager, LazyModuleMixin):      # (a subclass of a lazy conv keeps what it inherits)
            cls.cls_to_become = eager
            cls.__init__ = _lazy_conv_init(issubclass(eager, _ConvTransposeNd))

    _size = "in_channels"

    def initialize_parameters(self, input, *args, **kwargs):
        if self.has_uninitialized_params():
            self.in_channels = self._get_in_channels(input)
            if self.in_channels % self.groups != 0:
                raise ValueError("in_channels must be divisible by groups")
            with no_grad():
                if self.transposed:
                    self.weight.materialize((self.in_channels, self.out_channels // self.groups, *self.kernel_size))
                else:
                    self.weight.materialize((self.out_channels, self.in_channels // self.groups, *self.kernel_size))
                if self.bias is not None:
                    self.bias.materialize((self.out_channels,))
                self.reset_parameters()

    def _get_in_channels(self, input):
        batched = self._n + 2
        if input.dim() not in (batched - 1, batched):
            raise RuntimeError(f"Expected {batched - 1}D (unbatched) or {batched}D (batched) input to "
                               f"{self.__class__.__name__}, but got input of size: {input.shape}")
        return input.shape[1] if input.dim() == batched else input.shape[0]


def _lazy_conv_init(transposed):
    """The constructor of a lazy conv class: the eager class's arguments, less ``in_channels``."""
    if transposed:
        def __init__(self, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1, bias=True,
                     dilation=1, padding_mode="zeros", device=None, dtype=None):
            LazyModuleMixin.__init__(self, 0, 0, kernel_size, stride, padding, output_padding, groups, False,
                                     dilation, padding_mode, dtype=dtype)
            self.out_channels = out_channels
            self._placeholders(bias, dtype)
    else:
        def __init__(self, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                     padding_mode="zeros", device=None, dtype=None):
            LazyModuleMixin.__init__(self, 0, 0, kernel_size, stride, padding, dilation, groups, False, padding_mode,
                                     dtype=dtype)
            self.out_channels = out_channels
            self._placeholders(bias, dtype)
    return __init__


class LazyConv1d(_LazyConvXdMixin, Conv1d):
    """A ``Conv1d`` whose ``in_channels`` comes from its first input."""


class LazyConv2d(_LazyConvXdMixin, Conv2d):
    """A ``Conv2d`` whose ``in_channels`` comes from its first input.

    >>> conv = tapegrad.nn.LazyConv2d(4, 3)
    >>> conv(tapegrad.randn(1, 2, 5, 5)).shape, conv.weight.shape
    (tapegrad.Size([1, 4, 3, 3]), tapegrad.Size([4, 2, 3, 3]))
    """


class LazyConv3d(_LazyConvXdMixin, Conv3d):
    """A ``Conv3d`` whose ``in_channels`` comes from its first input."""


class LazyConvTranspose1d(_LazyConvXdMixin, ConvTranspose1d):
    """A ``ConvTranspose1d`` whose ``in_channels`` comes from its first input."""


class LazyConvTranspose2d(_LazyConvXdMixin, ConvTranspose2d):
    """A ``ConvTranspose2d`` whose ``in_channels`` comes from its first input."""


class LazyConvTranspose3d(_LazyConvXdMixin, ConvTranspose3d):
    """A ``ConvTranspose3d`` whose ``in_channels`` comes from its first input."""
