# ruff: noqa: A001, A002 - torch's argument name (input)
"""``Unfold`` (sliding blocks to columns, im2col) and ``Fold`` (columns summed back into an image, col2im)."""

from __future__ import annotations

from .. import functional as F
from ..module import Module

__all__ = ["Fold", "Unfold"]


class Fold(Module):
    """``(N, C * prod(kernel_size), L) -> (N, C, *output_size)``: each column added back at its block.

    >>> tapegrad.nn.Fold((3, 3), 2)(tapegrad.ones(1, 4, 4))[0, 0]
    tensor([[1., 2., 1.],
            [2., 4., 2.],
            [1., 2., 1.]])
    """

    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.output_size = output_size
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input):
        return F.fold(input, self.output_size, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self):
        return ("output_size={output_size}, kernel_size={kernel_size}, dilation={dilation}, padding={padding}, "
                "stride={stride}".format(**self.__dict__))


class Unfold(Module):
    """``(N, C, *spatial) -> (N, C * prod(kernel_size), L)``: every sliding block as a column."""

    def __init__(self, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input):
        return F.unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self):
        return "kernel_size={kernel_size}, dilation={dilation}, padding={padding}, stride={stride}".format(
            **self.__dict__)
