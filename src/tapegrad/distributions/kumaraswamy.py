"""The Kumaraswamy distribution on (0, 1): (1 - (1 - U)^(1/b))^(1/a), U uniform."""

from __future__ import annotations

import tapegrad
from tapegrad.tensor import Size

from . import constraints
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, PowerTransform
from .uniform import Uniform
from .utils import broadcast_all, euler_constant

__all__ = ["Kumaraswamy"]


def _moments(a, b, n):
    """E[X^n] = b B(1 + n/a, b)."""
    arg1 = 1 + n / a
    log_value = tapegrad.lgamma(arg1) + tapegrad.lgamma(b) - tapegrad.lgamma(arg1 + b)
    return b * tapegrad.exp(log_value)


class Kumaraswamy(TransformedDistribution):
    """Kumaraswamy(concentration1 = a, concentration0 = b): density a b x^(a-1) (1 - x^a)^(b-1)."""

    arg_constraints = {"concentration1": constraints.positive, "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None):
        self.concentration1, self.concentration0 = broadcast_all(concentration1, concentration0)
        base_dist = Uniform(tapegrad.full_like(self.concentration0, 0), tapegrad.full_like(self.concentration0, 1),
                            validate_args=validate_args)
        transforms = [PowerTransform(exponent=self.concentration0.reciprocal()), AffineTransform(loc=1.0, scale=-1.0),
                      PowerTransform(exponent=self.concentration1.reciprocal())]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Kumaraswamy, _instance)
        new.concentration1 = self.concentration1.expand(batch_shape)
        new.concentration0 = self.concentration0.expand(batch_shape)
        return super().expand(Size(batch_shape), _instance=new)

    @property
    def mean(self):
        return _moments(self.concentration1, self.concentration0, 1)

    @property
    def mode(self):
        # ((a - 1) / (a b - 1))^(1/a), defined for a, b >= 1
        a, b = self.concentration1, self.concentration0
        log_mode = a.reciprocal() * ((a - 1).log() - (a * b - 1).log())
        log_mode[(a < 1) | (b < 1)] = float("nan")
        return log_mode.exp()

    @property
    def variance(self):
        return _moments(self.concentration1, self.concentration0, 2) - self.mean.pow(2)

    def entropy(self):
        t1 = 1 - self.concentration1.reciprocal()
        t0 = 1 - self.concentration0.reciprocal()
        h0 = tapegrad.digamma(self.concentration0 + 1) + euler_constant
        return t0 + t1 * h0 - tapegrad.log(self.concentration1) - tapegrad.log(self.concentration0)
