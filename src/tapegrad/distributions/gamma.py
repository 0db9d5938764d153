"""The gamma distribution, and the reparameterized standard-gamma draw the gamma family's ``rsample`` uses.

``_StandardGamma`` draws Gamma(alpha, 1) (NumPy's generator) and differentiates the draw implicitly: the
draw x solves P(alpha, x) = u for a fixed uniform u, so dx/dalpha = -(dP/dalpha) / (dP/dx) (Figurnov et al.,
"Implicit Reparameterization Gradients", 2018). dP/dx = x^(alpha-1) e^-x / Gamma(alpha); dP/dalpha is the series
sum_n e^-x x^(alpha+n) / Gamma(alpha+n+1) (log x - digamma(alpha+n+1)), the derivative of P's power series term
by term (all of P's terms are positive, so it converges for every x). Beyond alpha = 1e4 the Wilson-Hilferty
normal approximation (x/alpha)^(1/3) ~ N(1 - 1/(9 alpha), 1/(9 alpha)) held at fixed z is differentiated instead.
"""

from __future__ import annotations

from numbers import Number

import numpy as np

import tapegrad
from tapegrad import _random
from tapegrad.autograd.function import Primitive, once_differentiable
from tapegrad.tensor import Size, Tensor

from . import constraints
from .exp_family import ExponentialFamily
from .utils import broadcast_all

__all__ = ["Gamma"]


def _standard_gamma_grad(alpha, x):
    """d x / d alpha of a standard gamma draw x at concentration alpha (float64 arrays, broadcast)."""
    from tapegrad.ops.special.gamma import _digamma_np, _lgamma_np
    alpha, x = np.broadcast_arrays(np.asarray(alpha, np.float64), np.asarray(x, np.float64))
    shape = alpha.shape
    a, xs = alpha.ravel(), x.ravel()
    out = np.zeros(a.shape)
    ok = (xs > 0) & (a > 0)
    big = ok & (a > 1e4)
    if big.any():
        ab, xb = a[big], xs[big]
        c = (xb / ab) ** (1 / 3)
        z = (c - 1 + 1 / (9 * ab)) * 3 * np.sqrt(ab)
        m = 1 - 1 / (9 * ab) + z / (3 * np.sqrt(ab))
        dm = 1 / (9 * ab * ab) - z / (6 * ab ** 1.5)
        out[big] = m ** 3 + 3 * ab * m * m * dm
    small = ok & ~big
    if small.any():
        aa, xx = a[small], xs[small]
        log_x = np.log(xx)
        term = np.exp(aa * log_x - xx - _lgamma_np(aa + 1))
        psi = _digamma_np(aa + 1)
        total = term * (log_x - psi)
        act = np.arange(aa.size)
        n = 0
        limit = int(np.max(xx)) * 2 + 200
        while act.size and n < limit:
            n += 1
            term[act] *= xx[act] / (aa[act] + n)
            psi[act] += 1 / (aa[act] + n)
            piece = term[act] * (log_x[act] - psi[act])
            total[act] += piece
            act = act[(np.abs(piece) > 1e-17 * np.abs(total[act])) | (n < xx[act] + 1)]
        dp_dx = np.exp((aa - 1) * log_x - xx - _lgamma_np(aa))
        out[small] = -total / dp_dx
    return out.reshape(shape)


class _StandardGamma(Primitive):
    """A Gamma(alpha, 1) draw; its gradient in alpha is the implicit reparameterization gradient."""

    node_name = "StandardGammaBackward0"

    @staticmethod
    def forward(ctx, alpha, double=False, generator=None):
        """torch's draws: alpha's float32 arithmetic for float32 (``double``: in float64, as torch's Dirichlet
        draws its gammas), at least the dtype's smallest normal number."""
        single = alpha.dtype == np.float32 and not double
        x = _random.gamma(_random._gen(generator), alpha, single).reshape(alpha.shape)
        d = np.float64 if double else alpha.dtype
        x = np.maximum(x.astype(d), np.finfo(d).tiny).astype(alpha.dtype)
        ctx.alpha, ctx.x = alpha, x
        return x

    @staticmethod
    @once_differentiable
    def backward(ctx, grad):
        d = _standard_gamma_grad(ctx.alpha, ctx.x).astype(ctx.alpha.dtype)
        return grad * Tensor._make(d), None, None


def _standard_gamma(alpha, double=False, generator=None):
    return _StandardGamma.apply(alpha, double, generator)


def standard_gamma(input, *, generator=None):  # noqa: A002 - torch's name
    """``torch._standard_gamma``: Gamma(input, 1) draws, reparameterized (StandardGammaBackward0)."""
    return _StandardGamma.apply(input, False, generator)


class Gamma(ExponentialFamily):
    """Gamma(concentration, rate): density rate^c x^(c-1) e^(-rate x) / Gamma(c).

    >>> Gamma(tapegrad.tensor([2.0]), tapegrad.tensor([1.0])).log_prob(tapegrad.tensor([1.0]))
    tensor([-1.])
    """

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def mean(self):
        return self.concentration / self.rate

    @property
    def mode(self):
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self):
        return self.concentration / self.rate.pow(2)

    def __init__(self, concentration, rate, validate_args=None):
        self.concentration, self.rate = broadcast_all(concentration, rate)
        batch_shape = Size() if isinstance(concentration, Number) and isinstance(rate, Number) else \
            self.concentration.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Gamma, _instance)
        batch_shape = Size(batch_shape)
        new.concentration = self.concentration.expand(batch_shape)
        new.rate = self.rate.expand(batch_shape)
        super(Gamma, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        value = _standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape)
        tiny = tapegrad.finfo(value.dtype).tiny
        np.maximum(value._array, tiny, out=value._array)     # (not recorded: as torch's clamp of the detached draw)
        return value

    def log_prob(self, value):
        value = tapegrad.as_tensor(value, dtype=self.rate.dtype)
        if self._validate_args:
            self._validate_sample(value)
        return (tapegrad.xlogy(self.concentration, self.rate) + tapegrad.xlogy(self.concentration - 1, value)
                - self.rate * value - tapegrad.lgamma(self.concentration))

    def entropy(self):
        return (self.concentration - tapegrad.log(self.rate) + tapegrad.lgamma(self.concentration)
                + (1.0 - self.concentration) * tapegrad.digamma(self.concentration))

    @property
    def _natural_params(self):
        return (self.concentration - 1, -self.rate)

    def _log_normalizer(self, x, y):
        return tapegrad.lgamma(x + 1) + (x + 1) * tapegrad.log(-y.reciprocal())

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return tapegrad.special.gammainc(self.concentration, self.rate * value)
