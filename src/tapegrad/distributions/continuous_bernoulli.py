"""The continuous Bernoulli distribution (Loaiza-Ganem & Cunningham, 2019): density C(p) p^x (1 - p)^(1 - x) on
[0, 1], with the normalizer C(p) = 2 artanh(1 - 2p) / (1 - 2p).

Near p = 1/2 the closed forms of log C, the mean, the variance and the cdf/icdf are 0/0: inside ``lims``
(default (0.499, 0.501)) each uses its Taylor expansion about p = 1/2 instead, as torch's does, with the
closed form evaluated at the edge ``lims[0]`` so that its gradient stays finite.
"""

from __future__ import annotations

import math
from numbers import Number

import tapegrad
from tapegrad.tensor import Size

from . import constraints
from .exp_family import ExponentialFamily
from .utils import _uniform, broadcast_all, clamp_probs, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["ContinuousBernoulli"]


def _bce_logits(logits, target):
    return tapegrad.nn.functional.binary_cross_entropy_with_logits(logits, target, reduction="none")


class ContinuousBernoulli(ExponentialFamily):
    """ContinuousBernoulli(probs= | logits=, lims=(0.499, 0.501)): exactly one of ``probs`` (in (0, 1)) and
    ``logits``; neither is a probability or log-odds here, the names follow the Bernoulli's.

    >>> ContinuousBernoulli(tapegrad.tensor([0.5])).log_prob(tapegrad.tensor([0.3]))
    tensor([0.])
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    _mean_carrier_measure = 0
    has_rsample = True

    def __init__(self, probs=None, logits=None, lims=(0.499, 0.501), validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            is_scalar = isinstance(probs, Number)
            (self.probs,) = broadcast_all(probs)
            # (checked before the clamp below, which would make every value pass; as torch's, only when
            # validate_args is given explicitly)
            if validate_args is not None and not bool(self.arg_constraints["probs"].check(self.probs).all()):
                raise ValueError("The parameter probs has invalid values")
            self.probs = clamp_probs(self.probs)
        else:
            is_scalar = isinstance(logits, Number)
            (self.logits,) = broadcast_all(logits)
        self._param = self.probs if probs is not None else self.logits
        batch_shape = Size() if is_scalar else self._param.size()
        self._lims = lims
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(ContinuousBernoulli, _instance)
        new._lims = self._lims
        batch_shape = Size(batch_shape)
        if "probs" in self.__dict__:
            new.probs = self.probs.expand(batch_shape)
            new._param = new.probs
        if "logits" in self.__dict__:
            new.logits = self.logits.expand(batch_shape)
            new._param = new.logits
        super(ContinuousBernoulli, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _new(self, *args, **kwargs):
        return self._param.new(*args, **kwargs)

    def _outside_unstable_region(self):
        return (self.probs <= self._lims[0]) | (self.probs > self._lims[1])

    def _cut_probs(self):
        """probs outside the Taylor region, lims[0] inside it (where the closed forms' values are unused)."""
        return tapegrad.where(self._outside_unstable_region(), self.probs,
                              self._lims[0] * tapegrad.ones_like(self.probs))

    def _cont_bern_log_norm(self):
        """log C(probs)."""
        cut = self._cut_probs()
        below = tapegrad.where(cut <= 0.5, cut, tapegrad.zeros_like(cut))
        above = tapegrad.where(cut >= 0.5, cut, tapegrad.ones_like(cut))
        log_norm = (tapegrad.log(tapegrad.abs(tapegrad.log1p(-cut) - tapegrad.log(cut)))
                    - tapegrad.where(cut <= 0.5, tapegrad.log1p(-2.0 * below), tapegrad.log(2.0 * above - 1.0)))
        x = tapegrad.pow(self.probs - 0.5, 2)
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return tapegrad.where(self._outside_unstable_region(), log_norm, taylor)

    @property
    def mean(self):
        cut = self._cut_probs()
        mus = cut / (2.0 * cut - 1.0) + 1.0 / (tapegrad.log1p(-cut) - tapegrad.log(cut))
        x = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * tapegrad.pow(x, 2)) * x
        return tapegrad.where(self._outside_unstable_region(), mus, taylor)

    @property
    def stddev(self):
        return tapegrad.sqrt(self.variance)

    @property
    def variance(self):
        cut = self._cut_probs()
        variances = (cut * (cut - 1.0) / tapegrad.pow(1.0 - 2.0 * cut, 2)
                     + 1.0 / tapegrad.pow(tapegrad.log1p(-cut) - tapegrad.log(cut), 2))
        x = tapegrad.pow(self.probs - 0.5, 2)
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x
        return tapegrad.where(self._outside_unstable_region(), variances, taylor)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return clamp_probs(logits_to_probs(self.logits, is_binary=True))

    @property
    def param_shape(self):
        return self._param.size()

    def sample(self, sample_shape=Size()):
        with tapegrad.no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=Size()):
        """The inverse cdf at uniform draws: differentiable in the parameters."""
        dtype = self.probs.dtype
        u = _uniform(self._extended_shape(sample_shape), dtype)
        u = u.clamp(max=1 - tapegrad.finfo(dtype).eps / 2)     # ([0, 1) as torch.rand: no 1 from rounding)
        return self.icdf(u)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -_bce_logits(logits, value) + self._cont_bern_log_norm()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        cut = self._cut_probs()
        cdfs = (tapegrad.pow(cut, value) * tapegrad.pow(1.0 - cut, 1.0 - value) + cut - 1.0) / (2.0 * cut - 1.0)
        unbounded = tapegrad.where(self._outside_unstable_region(), cdfs, value)
        return tapegrad.where(value <= 0.0, tapegrad.zeros_like(value),
                              tapegrad.where(value >= 1.0, tapegrad.ones_like(value), unbounded))

    def icdf(self, value):
        cut = self._cut_probs()
        closed = ((tapegrad.log1p(-cut + value * (2.0 * cut - 1.0)) - tapegrad.log1p(-cut))
                  / (tapegrad.log(cut) - tapegrad.log1p(-cut)))
        return tapegrad.where(self._outside_unstable_region(), closed, value)

    def entropy(self):
        log_probs0 = tapegrad.log1p(-self.probs)
        log_probs1 = tapegrad.log(self.probs)
        return self.mean * (log_probs0 - log_probs1) - self._cont_bern_log_norm() - log_probs0

    @property
    def _natural_params(self):
        return (self.logits,)

    def _log_normalizer(self, x):
        """log C as a function of the natural parameter x = logit(probs) (its Taylor series near x = 0)."""
        outside = (x <= self._lims[0] - 0.5) | (x > self._lims[1] - 0.5)
        cut = tapegrad.where(outside, x, (self._lims[0] - 0.5) * tapegrad.ones_like(x))
        log_norm = tapegrad.log(tapegrad.abs(tapegrad.special.expm1(cut))) - tapegrad.log(tapegrad.abs(cut))
        taylor = 0.5 * x + tapegrad.pow(x, 2) / 24.0 - tapegrad.pow(x, 4) / 2880.0
        return tapegrad.where(outside, log_norm, taylor)
