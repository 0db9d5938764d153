"""The generalized Pareto distribution GPD(loc, scale, concentration): survival function
(1 + c z)^(-1/c) for z = (x - loc) / scale >= 0 (and z <= -1/c when c < 0), exp(-z) at c = 0.

c = 0 is the exponential distribution shifted by loc, c = -1 the uniform one on [loc, loc + scale], c > 0 a
Pareto. Where c is close to 0 (``isclose``) the c = 0 formulas are used, with c replaced by 1 in the unused
branch so that neither branch's value nor gradient is NaN.
"""

from __future__ import annotations

import math
from numbers import Number

import tapegrad
from tapegrad.tensor import Size

from . import constraints
from .distribution import Distribution
from .utils import _uniform, broadcast_all

__all__ = ["GeneralizedPareto"]


class GeneralizedPareto(Distribution):
    """GeneralizedPareto(loc, scale, concentration).

    >>> GeneralizedPareto(0.0, 1.0, 0.0).log_prob(tapegrad.tensor(1.0))
    tensor(-1.)
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive, "concentration": constraints.real}
    has_rsample = True

    def __init__(self, loc, scale, concentration, validate_args=None):
        self.loc, self.scale, self.concentration = broadcast_all(loc, scale, concentration)
        if isinstance(loc, Number) and isinstance(scale, Number) and isinstance(concentration, Number):
            batch_shape = Size()
        else:
            batch_shape = self.loc.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(GeneralizedPareto, _instance)
        batch_shape = Size(batch_shape)
        new.loc = self.loc.expand(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        new.concentration = self.concentration.expand(batch_shape)
        super(GeneralizedPareto, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _safe_concentration(self):
        """(where c is ~0, c with those entries replaced by 1)."""
        c = self.concentration
        eq_zero = tapegrad.isclose(c, tapegrad.zeros_like(c))
        return eq_zero, tapegrad.where(eq_zero, tapegrad.ones_like(c), c)

    def rsample(self, sample_shape=Size()):
        """The inverse cdf at uniform draws: differentiable in the parameters."""
        dtype = self.loc.dtype
        u = _uniform(self._extended_shape(sample_shape), dtype)
        u = u.clamp(max=1 - tapegrad.finfo(dtype).eps / 2)     # ([0, 1) as torch.rand: no 1 from rounding)
        return self.icdf(u)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        eq_zero, c = self._safe_concentration()
        y = 1 / c + tapegrad.ones_like(z)
        where_nonzero = tapegrad.where(y == 0, y, y * tapegrad.log1p(c * z))
        return -self.scale.log() - tapegrad.where(eq_zero, z, where_nonzero)

    def log_survival_function(self, value):
        """log P(X > value)."""
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        eq_zero, c = self._safe_concentration()
        return tapegrad.where(eq_zero, -z, -tapegrad.log1p(c * z) / c)

    def log_cdf(self, value):
        return tapegrad.log1p(-tapegrad.exp(self.log_survival_function(value)))

    def cdf(self, value):
        return tapegrad.exp(self.log_cdf(value))

    def icdf(self, value):
        eq_zero, c = self._safe_concentration()
        logu = tapegrad.log1p(-value)
        where_nonzero = self.loc + self.scale / c * tapegrad.expm1(-c * logu)
        where_zero = self.loc - self.scale * logu
        return tapegrad.where(eq_zero, where_zero, where_nonzero)

    def _z(self, x):
        return (x - self.loc) / self.scale

    @property
    def mean(self):
        valid = self.concentration < 1
        c = tapegrad.where(valid, self.concentration, 0.5)
        return tapegrad.where(valid, self.loc + self.scale / (1 - c), math.nan)

    @property
    def variance(self):
        valid = self.concentration < 0.5
        c = tapegrad.where(valid, self.concentration, 0.25)
        return tapegrad.where(valid, self.scale ** 2 / ((1 - c) ** 2 * (1 - 2 * c)), math.nan)

    def entropy(self):
        return tapegrad.broadcast_to(tapegrad.log(self.scale) + self.concentration + 1, self._batch_shape)

    @property
    def mode(self):
        return self.loc

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        lower = self.loc
        upper = tapegrad.where(self.concentration < 0, lower - self.scale / self.concentration, math.inf)
        return constraints.interval(lower, upper)
