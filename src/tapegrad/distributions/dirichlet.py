"""The Dirichlet distribution on the probability simplex."""

from __future__ import annotations

import numpy as np

import tapegrad
from tapegrad import _random
from tapegrad.autograd.function import Primitive
from tapegrad.tensor import Size

from . import constraints
from .exp_family import ExponentialFamily
from .gamma import _standard_gamma


class _SampleDirichlet(Primitive):
    """``torch._sample_dirichlet``: gamma draws in float64, normalised over the last dim in the concentration's
    dtype (the draws of Dirichlet.rsample); torch has no derivative for it (a ``NotImplemented`` node)."""

    node_name = "NotImplemented"

    @staticmethod
    def forward(ctx, alpha, generator=None):
        x = _random.gamma(_random._gen(generator), alpha, False).reshape(alpha.shape)
        x = np.maximum(x, np.finfo(np.float64).tiny).astype(alpha.dtype)
        x = x.clip(min=np.finfo(alpha.dtype).tiny)
        return x / x.sum(-1, keepdims=True)

    @staticmethod
    def backward(ctx, grad):
        raise RuntimeError("derivative for aten::_sample_dirichlet is not implemented")


def sample_dirichlet(input, *, generator=None):  # noqa: A002 - torch's name
    """``torch._sample_dirichlet``: one Dirichlet(input) draw per row of the last dim (no gradient)."""
    return _SampleDirichlet.apply(input, generator)

__all__ = ["Dirichlet"]


class Dirichlet(ExponentialFamily):
    """Dirichlet(concentration): vectors on the simplex, density prod x_i^(a_i - 1) / B(a).

    ``rsample`` normalises reparameterized gamma draws, so gradients reach ``concentration`` (the estimator
    differs from torch's, which differentiates the marginal CDF implicitly; both are unbiased).

    >>> Dirichlet(tapegrad.tensor([1.0, 1.0, 1.0])).log_prob(tapegrad.tensor([0.2, 0.3, 0.5]))
    tensor(0.6931)
    """

    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration, validate_args=None):
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        batch_shape, event_shape = concentration.shape[:-1], concentration.shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Dirichlet, _instance)
        batch_shape = Size(batch_shape)
        new.concentration = self.concentration.expand(tuple(batch_shape) + tuple(self.event_shape))
        super(Dirichlet, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        g = _standard_gamma(self.concentration.expand(shape), double=True)   # (torch draws them in float64)
        tiny = tapegrad.finfo(g.dtype).tiny
        g._array[...] = g._array.clip(min=tiny)
        return g / g.sum(-1, keepdim=True)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        a = self.concentration
        return tapegrad.xlogy(a - 1.0, value).sum(-1) + tapegrad.lgamma(a.sum(-1)) - tapegrad.lgamma(a).sum(-1)

    @property
    def mean(self):
        return self.concentration / self.concentration.sum(-1, keepdim=True)

    @property
    def mode(self):
        concentrationm1 = (self.concentration - 1).clamp(min=0.0)
        mode = concentrationm1 / concentrationm1.sum(-1, keepdim=True)
        mask = (self.concentration < 1).all(dim=-1)
        mode[mask] = tapegrad.nn.functional.one_hot(mode[mask].argmax(dim=-1),
                                                    concentrationm1.shape[-1]).to(mode.dtype)
        return mode

    @property
    def variance(self):
        con0 = self.concentration.sum(-1, keepdim=True)
        return self.concentration * (con0 - self.concentration) / (con0.pow(2) * (con0 + 1))

    def entropy(self):
        a = self.concentration
        k = a.size(-1)
        a0 = a.sum(-1)
        return (tapegrad.lgamma(a).sum(-1) - tapegrad.lgamma(a0) - (k - a0) * tapegrad.digamma(a0)
                - ((a - 1.0) * tapegrad.digamma(a)).sum(-1))

    @property
    def _natural_params(self):
        return (self.concentration,)

    def _log_normalizer(self, x):
        return x.lgamma().sum(-1) - tapegrad.lgamma(x.sum(-1))
