"""The exponential distribution with ``rate``."""

from __future__ import annotations

from numbers import Number

import numpy as np

import tapegrad
from tapegrad import _random
from tapegrad.tensor import Size, Tensor

from . import constraints
from .exp_family import ExponentialFamily
from .utils import broadcast_all

__all__ = ["Exponential"]


class Exponential(ExponentialFamily):
    """Exponential(rate): density rate * exp(-rate * x) on [0, inf).

    >>> Exponential(tapegrad.tensor([2.0])).log_prob(tapegrad.tensor([1.0]))
    tensor([-1.3069])
    """

    arg_constraints = {"rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def mean(self):
        return self.rate.reciprocal()

    @property
    def mode(self):
        return tapegrad.zeros_like(self.rate)

    @property
    def stddev(self):
        return self.rate.reciprocal()

    @property
    def variance(self):
        return self.rate.pow(-2)

    def __init__(self, rate, validate_args=None):
        (self.rate,) = broadcast_all(rate)
        batch_shape = Size() if isinstance(rate, Number) else self.rate.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Exponential, _instance)
        batch_shape = Size(batch_shape)
        new.rate = self.rate.expand(batch_shape)
        super(Exponential, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def rsample(self, sample_shape=Size()):
        shape = tuple(self._extended_shape(sample_shape))
        n = int(np.prod(shape))
        e = _random.exponential(_random.default_generator, n, 1.0).astype(self.rate.dtype.np)
        e = Tensor._make(e.reshape(shape))
        return e / self.rate

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self.rate.log() - self.rate * value

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 1 - tapegrad.exp(-self.rate * value)

    def icdf(self, value):
        return -tapegrad.log1p(-value) / self.rate

    def entropy(self):
        return 1.0 - tapegrad.log(self.rate)

    @property
    def _natural_params(self):
        return (-self.rate,)

    def _log_normalizer(self, x):
        return -tapegrad.log(-x)
