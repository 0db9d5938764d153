# ruff: noqa: A001, A002 - torch's argument name (input)
"""``ChannelShuffle``: ``(N, g * k, ...)`` -> channels interleaved across the ``g`` groups (ShuffleNet)."""

from __future__ import annotations

from .. import functional as F
from ..module import Module

__all__ = ["ChannelShuffle"]


class ChannelShuffle(Module):
    """Split the channels into ``groups`` and interleave them.

    >>> tapegrad.nn.ChannelShuffle(2)(tapegrad.arange(4.).reshape(1, 4, 1, 1)).flatten()
    tensor([0., 2., 1., 3.])
    """

    def __init__(self, groups: int):
        super().__init__()
        self.groups = groups

    def forward(self, input):
        return F.channel_shuffle(input, self.groups)

    def extra_repr(self):
        return f"groups={self.groups}"
