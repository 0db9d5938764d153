# ruff: noqa: A001, A002 - torch's argument name (input)
"""Instance normalisation: ``InstanceNorm1d/2d/3d`` and their lazy forms."""

from __future__ import annotations

import warnings

from .. import functional as F
from .batchnorm import _LazyNormBase, _NormBase

__all__ = ["InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "LazyInstanceNorm1d", "LazyInstanceNorm2d",
           "LazyInstanceNorm3d"]


class _InstanceNorm(_NormBase):
    _ndim = 2

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=False, track_running_stats=False, device=None,
                 dtype=None, *, bias=True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias)

    def _get_no_batch_dim(self):
        return self._ndim + 1

    def _check_input_dim(self, input):
        if input.dim() not in (self._ndim + 1, self._ndim + 2):
            raise ValueError(f"expected {self._ndim + 1}D or {self._ndim + 2}D input (got {input.dim()}D input)")

    def _apply_instance_norm(self, input):
        return F.instance_norm(input, self.running_mean, self.running_var, self.weight, self.bias,
                               self.training or not self.track_running_stats,
                               self.momentum if self.momentum is not None else 0.0, self.eps)

    def forward(self, input):
        self._check_input_dim(input)
        feature_dim = input.dim() - self._get_no_batch_dim()
        if input.size(feature_dim) != self.num_features:
            if self.affine:
                raise ValueError(f"expected input's size at dim={feature_dim} to match num_features "
                                 f"({self.num_features}), but got: {input.size(feature_dim)}.")
            warnings.warn(f"input's size at dim={feature_dim} does not match num_features. You can silence this "
                          "warning by not passing in num_features, which is not used because affine=False",
                          stacklevel=2)
        if input.dim() == self._get_no_batch_dim():
            return self._apply_instance_norm(input.unsqueeze(0)).squeeze(0)
        return self._apply_instance_norm(input)


class InstanceNorm1d(_InstanceNorm):
    """Instance normalisation over ``(N, C, L)``."""

    _ndim = 1


class InstanceNorm2d(_InstanceNorm):
    """Instance normalisation over ``(N, C, H, W)`` (each sample and channel normalised on its own).

    >>> tapegrad.nn.InstanceNorm2d(3)
    InstanceNorm2d(3, eps=1e-05, momentum=0.1, affine=False, bias=False, track_running_stats=False)
    """

    _ndim = 2


class InstanceNorm3d(_InstanceNorm):
    """Instance normalisation over ``(N, C, D, H, W)``."""

    _ndim = 3


class LazyInstanceNorm1d(_LazyNormBase, _InstanceNorm, eager=InstanceNorm1d):
    """An ``InstanceNorm1d`` whose ``num_features`` comes from its first input."""


class LazyInstanceNorm2d(_LazyNormBase, _InstanceNorm, eager=InstanceNorm2d):
    """An ``InstanceNorm2d`` whose ``num_features`` comes from its first input."""


class LazyInstanceNorm3d(_LazyNormBase, _InstanceNorm, eager=InstanceNorm3d):
    """An ``InstanceNorm3d`` whose ``num_features`` comes from its first input."""
