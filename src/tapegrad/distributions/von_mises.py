"""The von Mises distribution: a circular normal on [-pi, pi)."""

from __future__ import annotations

import math

import numpy as np

import tapegrad
from tapegrad import _random
from tapegrad.tensor import Size, Tensor

from . import constraints
from .distribution import Distribution
from .utils import broadcast_all, lazy_property

__all__ = ["VonMises"]


def _log_i0(k):
    return tapegrad.special.i0e(k).log() + k


def _rejection_sample(loc, kappa, shape, gen):
    """Best & Fisher's (1979) rejection sampler in float64, as torch runs it (torch's draws): each round draws
    three float64 uniforms per element, and an element accepted again in a later round takes the later value."""
    kappa = np.broadcast_to(kappa, shape).astype(np.float64)
    loc = np.broadcast_to(loc, shape).astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        tau = 1 + np.sqrt(1 + 4 * kappa ** 2)
        rho = (tau - np.sqrt(2 * tau)) / (2 * kappa)
        r = np.where(kappa < 1e-5, 1 / kappa + kappa, (1 + rho ** 2) / (2 * rho))   # (small kappa: Taylor)
    n = math.prod(shape)
    x = np.zeros(shape)
    done = np.zeros(shape, bool)
    while not done.all():
        u1, u2, u3 = _random.uniform01(gen, 3 * n).reshape((3,) + tuple(shape))
        z = np.cos(math.pi * u1)
        f = (1 + r * z) / (r + z)
        c = kappa * (r - f)
        with np.errstate(divide="ignore", invalid="ignore"):
            accept = ((c * (2 - c) - u2) > 0) | (np.log(c / u2) + 1 - c >= 0)
            x = np.where(accept, np.sign(u3 - 0.5) * np.arccos(f), x)
        done |= accept
    return (x + math.pi + loc) % (2 * math.pi) - math.pi


class VonMises(Distribution):
    """VonMises(loc, concentration): density exp(k cos(x - loc)) / (2 pi I0(k)) (no rsample, as torch).

    >>> VonMises(tapegrad.tensor([0.0]), tapegrad.tensor([1.0])).log_prob(tapegrad.tensor([0.0]))
    tensor([-1.0737])
    """

    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False

    def __init__(self, loc, concentration, validate_args=None):
        self.loc, self.concentration = broadcast_all(loc, concentration)
        batch_shape = self.loc.shape
        super().__init__(batch_shape, Size(), validate_args)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_prob = self.concentration * tapegrad.cos(value - self.loc)
        return log_prob - math.log(2 * math.pi) - _log_i0(self.concentration)

    @lazy_property
    def _loc(self):
        return self.loc.to(tapegrad.double)

    @lazy_property
    def _concentration(self):
        return self.concentration.to(tapegrad.double)

    def sample(self, sample_shape=Size()):
        shape = tuple(self._extended_shape(sample_shape))
        with tapegrad.no_grad():
            x = _rejection_sample(self.loc.detach()._array, self.concentration.detach()._array, shape,
                                  _random.default_generator)
            return Tensor._make(np.asarray(x, self.loc.dtype.np))

    def expand(self, batch_shape, _instance=None):
        try:
            return super().expand(batch_shape)
        except NotImplementedError:
            validate_args = self.__dict__.get("_validate_args")
            loc = self.loc.expand(batch_shape)
            concentration = self.concentration.expand(batch_shape)
            return type(self)(loc, concentration, validate_args=validate_args)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @lazy_property
    def variance(self):
        k = self.concentration
        return 1 - (tapegrad.special.i1e(k) / tapegrad.special.i0e(k))
