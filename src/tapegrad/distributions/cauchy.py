"""The Cauchy (Lorentz) distribution."""

from __future__ import annotations

import math
from numbers import Number

import numpy as np

import tapegrad
from tapegrad import _random
from tapegrad.tensor import Size, Tensor

from . import constraints
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["Cauchy"]


class Cauchy(Distribution):
    """Cauchy(loc, scale): density 1 / (pi scale (1 + ((x - loc) / scale)^2)); mean and variance undefined.

    >>> Cauchy(tapegrad.tensor([0.0]), tapegrad.tensor([1.0])).log_prob(tapegrad.tensor([1.0]))
    tensor([-1.8379])
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        batch_shape = Size() if isinstance(loc, Number) and isinstance(scale, Number) else self.loc.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Cauchy, _instance)
        batch_shape = Size(batch_shape)
        new.loc = self.loc.expand(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        super(Cauchy, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return tapegrad.full(self._extended_shape(), float("nan"), dtype=self.loc.dtype)

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return tapegrad.full(self._extended_shape(), float("inf"), dtype=self.loc.dtype)

    def rsample(self, sample_shape=Size()):
        shape = tuple(self._extended_shape(sample_shape))
        n = int(np.prod(shape))
        eps = _random.cauchy(_random.default_generator, n, 0.0, 1.0).astype(self.loc.dtype.np)
        eps = Tensor._make(eps.reshape(shape))
        return self.loc + eps * self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -math.log(math.pi) - self.scale.log() - (((value - self.loc) / self.scale) ** 2).log1p()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return tapegrad.atan((value - self.loc) / self.scale) / math.pi + 0.5

    def icdf(self, value):
        return tapegrad.tan(math.pi * (value - 0.5)) * self.scale + self.loc

    def entropy(self):
        return math.log(4 * math.pi) + self.scale.log()
