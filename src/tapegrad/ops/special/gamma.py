"""The gamma family: lgamma (gammaln), digamma (psi), polygamma, multigammaln (mvlgamma) and Hurwitz's zeta.

- lgamma: Stirling's series for x >= 10; below, a Taylor series of lgamma about 2 whose coefficients are
  (-1)^k (zeta(k) - 1) / k, reached by the recurrence lgamma(x + 1) = lgamma(x) + log(x) (so lgamma is accurate
  relative to itself at its zeros 1 and 2); reflection for negative x.
- digamma: the recurrence psi(x) = psi(x + 1) - 1/x up to x >= 10, then the asymptotic series in B_2k / (2k x^2k);
  reflection psi(1 - x) - pi cot(pi x) for negative x; near the positive root x0 = 1.4616..., the Taylor series
  psi(x0 + h) = sum_k (-1)^(k+1) zeta(k + 1, x0) h^k, so digamma is accurate relative to itself there too.
- polygamma(n, x) = (-1)^(n+1) n! zeta(n + 1, x) for n >= 1 (trigamma by reflection for negative x).
"""

from __future__ import annotations

import math
from functools import cache

import numpy as np

from .._util import Primitive, Tensor, bind
from ..elementwise._common import _copy_out, _inplace, _with_out
from ._common import (EULER, LOG_2PI_HALF, bernoulli, binary_inputs, float_input, hurwitz_zeta, in_float64,
                      not_implemented, piecewise, special_unary)

__all__ = ["lgamma", "digamma", "polygamma", "mvlgamma", "zeta", "gammaln", "psi", "multigammaln",
           "lgamma_", "digamma_", "polygamma_", "mvlgamma_"]


# --- lgamma ------------------------------------------------------------------------------------------------
@cache
def _lgamma_about_2(terms=40):
    """Coefficients of lgamma(2 + z) = (1 - gamma) z + sum_{k>=2} (-1)^k (zeta(k) - 1) / k z^k (|z| < 2)."""
    k = np.arange(2, terms + 2, dtype=np.float64)
    c = (-1.0) ** k * hurwitz_zeta(k, 2.0) / k
    return np.concatenate([[0.0, 1.0 - EULER], c])


def _poly(c, z):
    """sum_k c[k] z^k (Horner)."""
    r = np.zeros_like(z)
    for ck in c[::-1]:
        r = r * z + ck
    return r


def _stirling_lgamma(x):
    b = bernoulli(18)
    inv, inv2 = 1.0 / x, 1.0 / (x * x)
    corr = np.zeros_like(x)
    for k in range(9, 0, -1):
        corr = corr * inv2 + b[2 * k] / (2 * k * (2 * k - 1))
    return (x - 0.5) * np.log(x) - x + LOG_2PI_HALF + corr * inv


def _lgamma_small(x):
    """0 < x < 10: lgamma(2 + z) about 2, shifted there by lgamma(x + 1) = lgamma(x) + log(x)."""
    c = _lgamma_about_2()
    out = np.empty_like(x)
    lo = x < 1.5           # x in (0, 1.5): lgamma(x) = lgamma(x + 1) - log(x), twice below 0.5
    z = np.where(lo, np.where(x < 0.5, x, x - 1.0), 0.0)
    out[lo] = _poly(c, z[lo]) - np.log1p(z[lo])
    tiny = lo & (x < 0.5)
    out[tiny] -= np.log(x[tiny])
    hi = ~lo               # x in [1.5, 10): shift down to [1.5, 2.5), adding log((x - 1)(x - 2)...)
    y = x[hi].copy()
    acc = np.ones_like(y)
    for _ in range(8):
        m = y >= 2.5
        if not m.any():
            break
        y[m] -= 1.0
        acc[m] *= y[m]
    out[hi] = _poly(c, y - 2.0) + np.log(acc)
    return out


def _lgamma_pos(x):
    return piecewise(x, (x < 10, _lgamma_small), (x >= 10, _stirling_lgamma))


def _sinpi(x):
    """sin(pi x), exact at the integers (the argument reduced to [-1/2, 1/2] first)."""
    n = np.round(x)
    r = x - n
    s = np.sin(np.pi * r)
    return np.where(np.fmod(n, 2) == 0, s, -s)


def _lgamma_np(x):
    def neg(v):   # reflection: lgamma(x) = log(pi / |sin(pi x)|) - lgamma(1 - x)
        return np.log(np.pi / np.abs(_sinpi(v))) - _lgamma_pos(1.0 - v)
    out = piecewise(x, (x < 0, neg), (x > 0, _lgamma_pos), default=np.inf)
    out[np.isnan(x)] = np.nan
    out[(x <= 0) & (x == np.floor(x))] = np.inf
    out[np.isinf(x)] = np.inf
    return out


# --- digamma -----------------------------------------------------------------------------------------------
_ROOT_HI, _ROOT_LO = 1.4616321449683622, 9.549995429965697e-17   # the positive zero of digamma, as hi + lo


@cache
def _digamma_about_root(terms=26):
    k = np.arange(1, terms + 1, dtype=np.float64)
    return np.concatenate([[0.0], (-1.0) ** (k + 1) * hurwitz_zeta(k + 1, _ROOT_HI)])


def _digamma_asymptotic(x):
    b = bernoulli(16)
    inv2 = 1.0 / (x * x)
    s = np.zeros_like(x)
    for k in range(8, 0, -1):
        s = s * inv2 + b[2 * k] / (2 * k)
    return np.log(x) - 0.5 / x - s * inv2


def _digamma_pos(x):
    acc = np.zeros_like(x)
    y = x.copy()
    for _ in range(10):
        m = y < 10
        if not m.any():
            break
        acc[m] -= 1.0 / y[m]
        y[m] += 1.0
    out = acc + _digamma_asymptotic(y)
    near = np.abs(x - _ROOT_HI) < 0.25
    if near.any():
        h = (x[near] - _ROOT_HI) - _ROOT_LO
        out[near] = _poly(_digamma_about_root(), h)
    return out


def _digamma_np(x):
    def neg(v):   # reflection: psi(x) = psi(1 - x) - pi / tan(pi x)
        return _digamma_pos(1.0 - v) - np.pi / np.tan(np.pi * (v - np.round(v)))
    out = piecewise(x, (x < 0, neg), (x > 0, _digamma_pos))
    zero = x == 0
    out[zero] = np.copysign(np.inf, -x[zero])
    out[(x < 0) & (x == np.floor(x))] = np.nan
    out[x == np.inf] = np.inf
    return out


# --- polygamma and zeta ------------------------------------------------------------------------------------
def _trigamma_np(x):
    def neg(v):   # reflection: psi1(x) = pi^2 / sin^2(pi x) - psi1(1 - x)
        return (np.pi / _sinpi(v)) ** 2 - hurwitz_zeta(2.0, 1.0 - v)
    out = piecewise(x, (x < 0, neg), (x >= 0, lambda v: hurwitz_zeta(2.0, v)))
    out[(x <= 0) & (x == np.floor(x))] = np.inf
    out[x == np.inf] = 0.0
    out[x == -np.inf] = np.nan
    return out


def _polygamma_np(n, x):
    if n == 0:
        return _digamma_np(x)
    if n == 1:
        return _trigamma_np(x)
    factorial = math.gamma(n + 1) if n < 171 else math.inf
    return (1.0 if n % 2 else -1.0) * factorial * hurwitz_zeta(float(n + 1), x).reshape(x.shape)


Lgamma = special_unary("Lgamma", _lgamma_np, lambda grad, x, r: grad * digamma(x), kernel="lgamma_vml_cpu")
Digamma = special_unary("Digamma", _digamma_np, lambda grad, x, r: grad * polygamma(1, x), kernel="digamma")


class Polygamma(Primitive):
    """polygamma(n, x): the n-th derivative of digamma."""

    @staticmethod
    def forward(ctx, n, x):
        x = float_input(x, "polygamma")
        ctx.n = n
        ctx.save_inputs(1)
        return in_float64(lambda v: _polygamma_np(n, v), x)

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        return None, grad * polygamma(ctx.n + 1, x)


class Mvlgamma(Primitive):
    """The multivariate log-gamma function of dimension p."""

    @staticmethod
    def forward(ctx, x, p):
        x = float_input(x, "mvlgamma")
        ctx.p = p
        ctx.save_inputs(0)

        def f(v):
            r = np.full(v.shape, p * (p - 1) / 4 * math.log(math.pi))
            for j in range(p):
                r = r + _lgamma_np(v - j / 2)
            return r
        return in_float64(f, x)

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        s = digamma(x)
        for j in range(1, ctx.p):
            s = s + digamma(x - j / 2)
        return grad * s, None


class Zeta(Primitive):
    """Hurwitz's zeta(x, q); torch has no derivative in x (in q it is -x zeta(x + 1, q))."""

    node_name = "SpecialZetaBackward0"

    @staticmethod
    def forward(ctx, x, q):
        x, q, d = binary_inputs(x, q, "zeta_cpu")
        ctx.save_inputs(0, 1)
        out = hurwitz_zeta(x, q).reshape(np.broadcast_shapes(np.shape(x), np.shape(q)))
        return np.asarray(out, np.float64).astype(d, copy=False)

    @staticmethod
    def backward(ctx, grad):
        need = ctx.needs_input_grad
        if need[0]:
            raise not_implemented("zeta")
        x, q = ctx.saved_tensors
        return None, grad * -x * zeta(x + 1, q)


class ZetaScalarX(Zeta):
    node_name = "SpecialZetaBackward1"


class ZetaScalarQ(Zeta):
    node_name = "SpecialZetaBackward2"


# --- public functions --------------------------------------------------------------------------------------
def _unary_fn(name, cls, doc):
    def fn(input, *, out=None):  # noqa: A002
        res = cls.apply(input)
        return res if out is None else _copy_out(name, res, out)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


lgamma = _unary_fn("lgamma", Lgamma, """log|Gamma(input)|.

    >>> tapegrad.lgamma(tapegrad.tensor([0.5, 3.0]))
    tensor([0.5724, 0.6931])
    """)
digamma = _unary_fn("digamma", Digamma, """The logarithmic derivative of Gamma: psi(x) = Gamma'(x) / Gamma(x).

    >>> tapegrad.digamma(tapegrad.tensor([1.0, 0.5]))
    tensor([-0.5772, -1.9635])
    """)
gammaln, psi = lgamma, digamma


def _order(n):
    if isinstance(n, Tensor):
        n = n.item()
    if isinstance(n, bool) or not float(n).is_integer():
        raise TypeError(f"polygamma(): argument 'n' must be int, not {type(n).__name__}")
    n = int(n)
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    return n


@_with_out
def polygamma(n, input):  # noqa: A002
    """The n-th derivative of digamma (``polygamma(0, x)`` is ``digamma(x)``).

    >>> tapegrad.polygamma(1, tapegrad.tensor([1.0]))
    tensor([1.6449])
    """
    return Polygamma.apply(_order(n), input)


def _mvlgamma_check(input, p):
    # (torch 2.13 no longer refuses elements <= (p - 1) / 2: lgamma's values there, inf at its poles)
    p = int(p)
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    return p


@_with_out(error="mvlgamma: result type {r} can't be cast to the desired output type {r}")   # (sic: torch's words)
def mvlgamma(input, p):  # noqa: A002
    """The multivariate log-gamma of dimension ``p``: p(p-1)/4 log(pi) + sum_j lgamma(input - j/2).

    >>> tapegrad.mvlgamma(tapegrad.tensor([2.5]), 2)
    tensor([0.8570])
    """
    return Mvlgamma.apply(input, _mvlgamma_check(input, p))


def multigammaln(input, p, *, out=None):  # noqa: A002
    return mvlgamma(input, p, out=out)


multigammaln.__doc__ = mvlgamma.__doc__


@_with_out
def zeta(input, other):  # noqa: A002
    """Hurwitz's zeta function sum_k (other + k)^-input (``other=1``: Riemann's). Either may be a number.

    >>> tapegrad.special.zeta(tapegrad.tensor([2.0]), 1.0)
    tensor([1.6449])
    """
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        raise TypeError("special_zeta(): expected at least one Tensor argument")
    if not isinstance(input, Tensor):
        return ZetaScalarX.apply(input, other)
    if not isinstance(other, Tensor):
        return ZetaScalarQ.apply(input, other)
    return Zeta.apply(input, other)


def _polygamma_method(self, n):
    return polygamma(n, self)


def _polygamma_(self, n):
    from .._util import apply_inplace
    return apply_inplace(self, lambda x, k: polygamma(k, x), n)


def _mvlgamma_method(self, p):
    return mvlgamma(self, p)


lgamma_, digamma_ = _inplace(lgamma), _inplace(digamma)
mvlgamma_ = _inplace(mvlgamma)
polygamma_ = _polygamma_

bind(lgamma=lgamma, digamma=digamma, polygamma=_polygamma_method, mvlgamma=_mvlgamma_method, lgamma_=lgamma_,
     digamma_=digamma_, polygamma_=_polygamma_, mvlgamma_=mvlgamma_)
