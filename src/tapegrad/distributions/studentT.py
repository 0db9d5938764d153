"""Student's t distribution with ``df`` degrees of freedom, location and scale."""

from __future__ import annotations

import math

import tapegrad
from tapegrad.tensor import Size

from . import constraints
from .chi2 import Chi2
from .distribution import Distribution
from .utils import _standard_normal, broadcast_all

__all__ = ["StudentT"]


class StudentT(Distribution):
    """StudentT(df, loc=0, scale=1); ``rsample`` is loc + scale X / sqrt(Z / df), X normal, Z ~ Chi2(df).

    >>> StudentT(tapegrad.tensor([3.0])).log_prob(tapegrad.tensor([0.0]))
    tensor([-1.0007])
    """

    arg_constraints = {"df": constraints.positive, "loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    @property
    def mean(self):
        m = self.loc.clone()
        m[self.df <= 1] = float("nan")
        return m

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        df = self.df
        big = df > 2
        v = tapegrad.where(big, self.scale.pow(2) * df / tapegrad.where(big, df - 2, tapegrad.ones_like(df)),
                           tapegrad.full_like(df, float("inf")))
        return tapegrad.where(df <= 1, tapegrad.full_like(df, float("nan")), v)

    def __init__(self, df, loc=0.0, scale=1.0, validate_args=None):
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        self._chi2 = Chi2(self.df)
        batch_shape = self.df.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(StudentT, _instance)
        batch_shape = Size(batch_shape)
        new.df = self.df.expand(batch_shape)
        new.loc = self.loc.expand(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        new._chi2 = self._chi2.expand(batch_shape)
        super(StudentT, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        x = _standard_normal(shape, self.df.dtype)
        z = self._chi2.rsample(sample_shape)
        return self.loc + self.scale * x * tapegrad.rsqrt(z / self.df)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        y = (value - self.loc) / self.scale
        log_norm = (self.scale.log() + 0.5 * self.df.log() + 0.5 * math.log(math.pi)
                    + tapegrad.lgamma(0.5 * self.df) - tapegrad.lgamma(0.5 * (self.df + 1.0)))
        return -0.5 * (self.df + 1.0) * tapegrad.log1p(y ** 2.0 / self.df) - log_norm

    def entropy(self):
        half = 0.5 * self.df
        log_beta = tapegrad.lgamma(half) + math.lgamma(0.5) - tapegrad.lgamma(half + 0.5)
        return (self.scale.log() + (half + 0.5) * (tapegrad.digamma(half + 0.5) - tapegrad.digamma(half))
                + 0.5 * self.df.log() + log_beta)
