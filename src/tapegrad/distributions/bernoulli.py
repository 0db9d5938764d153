"""The Bernoulli distribution: 1 with probability ``probs`` (or sigmoid(``logits``)), else 0."""

from __future__ import annotations

from numbers import Number

import numpy as np

import tapegrad
from tapegrad import _random
from tapegrad.tensor import Size, Tensor

from . import constraints
from .exp_family import ExponentialFamily
from .utils import broadcast_all, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["Bernoulli"]


def _bce_logits(logits, target):
    return tapegrad.nn.functional.binary_cross_entropy_with_logits(logits, target, reduction="none")


class Bernoulli(ExponentialFamily):
    """Bernoulli distribution given ``probs`` or ``logits`` (exactly one).

    >>> Bernoulli(tapegrad.tensor([0.25])).log_prob(tapegrad.tensor([1.0]))
    tensor([-1.3863])
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True
    _mean_carrier_measure = 0

    def __init__(self, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            is_scalar = isinstance(probs, Number)
            (self.probs,) = broadcast_all(probs)
        else:
            is_scalar = isinstance(logits, Number)
            (self.logits,) = broadcast_all(logits)
        self._param = self.probs if probs is not None else self.logits
        batch_shape = Size() if is_scalar else self._param.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Bernoulli, _instance)
        batch_shape = Size(batch_shape)
        if "probs" in self.__dict__:
            new.probs = self.probs.expand(batch_shape)
            new._param = new.probs
        if "logits" in self.__dict__:
            new.logits = self.logits.expand(batch_shape)
            new._param = new.logits
        super(Bernoulli, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.probs

    @property
    def mode(self):
        mode = (self.probs >= 0.5).to(self.probs.dtype)
        mode[self.probs == 0.5] = float("nan")
        return mode

    @property
    def variance(self):
        return self.probs * (1 - self.probs)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self):
        return self._param.size()

    def sample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        with tapegrad.no_grad():
            p = np.broadcast_to(self.probs.detach()._array, tuple(shape))
            g = _random.default_generator      # torch.bernoulli's uniforms: 53-bit for float64 probs, else 24
            u = _random.uniform01(g, p.size, np.float64 if p.dtype == np.float64 else np.float32).reshape(p.shape)
            return Tensor._make(np.asarray(u < p, p.dtype))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -_bce_logits(logits, value)

    def entropy(self):
        return _bce_logits(self.logits, self.probs)

    def enumerate_support(self, expand=True):
        values = tapegrad.arange(2, dtype=self._param.dtype)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + tuple(self._batch_shape))
        return values

    @property
    def _natural_params(self):
        return (tapegrad.logit(self.probs),)

    def _log_normalizer(self, x):
        return tapegrad.log1p(tapegrad.exp(x))
