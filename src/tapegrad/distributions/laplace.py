"""The Laplace (double exponential) distribution."""

from __future__ import annotations

from numbers import Number

import numpy as np

import tapegrad
from tapegrad.tensor import Size

from . import constraints
from .distribution import Distribution
from .utils import _uniform, broadcast_all

__all__ = ["Laplace"]


class Laplace(Distribution):
    """Laplace(loc, scale): density exp(-|x - loc| / scale) / (2 scale).

    >>> Laplace(tapegrad.tensor([0.0]), tapegrad.tensor([1.0])).log_prob(tapegrad.tensor([1.0]))
    tensor([-1.6931])
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return 2 * self.scale.pow(2)

    @property
    def stddev(self):
        return (2 ** 0.5) * self.scale

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        batch_shape = Size() if isinstance(loc, Number) and isinstance(scale, Number) else self.loc.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Laplace, _instance)
        batch_shape = Size(batch_shape)
        new.loc = self.loc.expand(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        super(Laplace, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        eps = float(np.finfo(self.loc.dtype.np).eps)
        u = _uniform(shape, self.loc.dtype, eps - 1, 1)
        return self.loc - self.scale * u.sign() * tapegrad.log1p(-u.abs())

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -tapegrad.log(2 * self.scale) - tapegrad.abs(value - self.loc) / self.scale

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 - 0.5 * (value - self.loc).sign() * tapegrad.expm1(-(value - self.loc).abs() / self.scale)

    def icdf(self, value):
        term = value - 0.5
        return self.loc - self.scale * (term).sign() * tapegrad.log1p(-2 * term.abs())

    def entropy(self):
        return 1 + tapegrad.log(2 * self.scale)
