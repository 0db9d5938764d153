# ruff: noqa: A001, A002 - torch's argument name (input)
"""``PairwiseDistance`` and ``CosineSimilarity`` between two batches of vectors."""

from __future__ import annotations

from .. import functional as F
from ..module import Module

__all__ = ["PairwiseDistance", "CosineSimilarity"]


class PairwiseDistance(Module):
    """``||x1 - x2 + eps||_p`` along the last dim.

    >>> tapegrad.nn.PairwiseDistance()(tapegrad.tensor([[3., 0.]]), tapegrad.tensor([[0., 4.]]))
    tensor([5.])
    """

    def __init__(self, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False):
        super().__init__()
        self.norm = p
        self.eps = eps
        self.keepdim = keepdim

    def forward(self, x1, x2):
        return F.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)


class CosineSimilarity(Module):
    """The cosine of the angle between ``x1`` and ``x2`` along ``dim``."""

    def __init__(self, dim: int = 1, eps: float = 1e-8):
        super().__init__()
        self.dim = dim
        self.eps = eps

    def forward(self, x1, x2):
        return F.cosine_similarity(x1, x2, self.dim, self.eps)
