# ruff: noqa: A001, A002 - torch's argument name (input)
"""``PixelShuffle`` and ``PixelUnshuffle``: channels to space and back."""

from __future__ import annotations

from .. import functional as F
from ..module import Module

__all__ = ["PixelShuffle", "PixelUnshuffle"]


class PixelShuffle(Module):
    """``(N, C*r*r, H, W) -> (N, C, H*r, W*r)``.

    >>> tapegrad.nn.PixelShuffle(2)(tapegrad.arange(4.).reshape(1, 4, 1, 1))
    tensor([[[[0., 1.],
              [2., 3.]]]])
    """

    def __init__(self, upscale_factor: int):
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input):
        return F.pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self):
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    """``(N, C, H*r, W*r) -> (N, C*r*r, H, W)``."""

    def __init__(self, downscale_factor: int):
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input):
        return F.pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self):
        return f"downscale_factor={self.downscale_factor}"
