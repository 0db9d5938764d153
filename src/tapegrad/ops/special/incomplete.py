"""The regularized incomplete gamma functions: gammainc P(a, x) (torch.igamma) and gammaincc Q(a, x) (igammac).

Which expansion computes what is chosen as torch's (SciPy's) igamma does, so that the smaller of P and Q is
always computed directly, never as 1 minus the other:
- the power series P = D sum_n x^n / (a (a+1) ... (a+n)), D = x^a e^-x / Gamma(a), where P is the smaller;
- Legendre's continued fraction for Q (modified Lentz's method) for x > 1.1 past a;
- for x <= 1.1 with Q the smaller, the series Q = -expm1(a log x - lgamma(1 + a)) - x^a/Gamma(a)
  sum_{n>=1} (-x)^n / (n! (a + n)).
D is computed as exp(a (log1p(t) - t) + log(a / 2 pi) / 2 - c(a)), t = (x - a) / a, c = Stirling's correction,
for a >= 10, so that it keeps its relative accuracy when a and x are large.
Both loops run until every element converged (at most ``_MAX_ITER``: about 10 sqrt(a) iterations are needed where
x is near a, so a up to ~10^6 is computed to full accuracy; beyond that the last iterate is returned).
"""

from __future__ import annotations

import numpy as np

from .._util import Primitive, Tensor, bind
from ..elementwise._common import _inplace, _with_out
from ._common import LOG_2PI_HALF, bernoulli, binary_inputs, not_implemented
from .gamma import _lgamma_about_2, _lgamma_np, _poly, lgamma

__all__ = ["igamma", "igammac", "gammainc", "gammaincc", "igamma_", "igammac_"]

_EPS = 1e-16
_MAX_ITER = 20000


def _log1pmx(t):
    """log(1 + t) - t, accurate for small t (its series below |t| = 0.3)."""
    out = np.log1p(t) - t
    small = np.abs(t) < 0.3
    if small.any():
        ts = t[small]
        s, p = np.zeros_like(ts), ts * ts
        for k in range(2, 44):
            s += p / k if k % 2 == 0 else -p / k
            p = p * ts
        out[small] = -s
    return out


def _stirling_correction(a):
    """lgamma(a) - ((a - 1/2) log a - a + log(2 pi) / 2), for a >= 10."""
    b = bernoulli(18)
    inv2 = 1.0 / (a * a)
    c = np.zeros_like(a)
    for k in range(9, 0, -1):
        c = c * inv2 + b[2 * k] / (2 * k * (2 * k - 1))
    return c / a


def _log_prefactor(a, x):
    """log(x^a e^-x / Gamma(a))."""
    out = a * np.log(x) - x - _lgamma_np(a)
    big = a >= 10
    if big.any():
        ab, xb = a[big], x[big]
        t = (xb - ab) / ab
        near = np.abs(t) < 0.5      # a (log(1 + t) - t), and log(1 + t) from t only while 1 + t keeps its digits
        main = np.where(near, ab * _log1pmx(np.where(near, t, 0.0)), ab * np.log(xb / ab) - (xb - ab))
        out[big] = main + 0.5 * np.log(ab) - LOG_2PI_HALF - _stirling_correction(ab)
    return out


def _lgamma1p(a):
    """lgamma(1 + a), accurate for small a (the series about 2, without forming 1 + a)."""
    out = _lgamma_np(1.0 + a)
    small = a < 0.5
    if small.any():
        out[small] = _poly(_lgamma_about_2(), a[small]) - np.log1p(a[small])
    return out


def _series_p(a, x):
    term = 1.0 / a
    total = term.copy()
    ap = a.copy()
    act = np.arange(a.size)
    for _ in range(_MAX_ITER):
        ap[act] += 1.0
        term[act] *= x[act] / ap[act]
        total[act] += term[act]
        act = act[np.abs(term[act]) > _EPS * np.abs(total[act])]
        if not act.size:
            break
    return np.exp(_log_prefactor(a, x)) * total


def _fraction_q(a, x):
    tiny = 1e-300
    b = x + 1.0 - a
    c = np.full(a.shape, 1.0 / tiny)
    d = 1.0 / np.where(np.abs(b) < tiny, tiny, b)
    h = d.copy()
    act = np.arange(a.size)
    for i in range(1, _MAX_ITER):
        an = -i * (i - a[act])
        b[act] += 2.0
        dd = an * d[act] + b[act]
        dd = np.where(np.abs(dd) < tiny, tiny, dd)
        cc = b[act] + an / c[act]
        cc = np.where(np.abs(cc) < tiny, tiny, cc)
        d[act] = 1.0 / dd
        c[act] = cc
        delta = d[act] * cc
        h[act] *= delta
        act = act[np.abs(delta - 1.0) > _EPS]
        if not act.size:
            break
    return np.exp(_log_prefactor(a, x)) * h


def _series_q(a, x):
    total = np.zeros_like(a)
    term = np.ones_like(a)
    act = np.arange(a.size)
    for n in range(1, _MAX_ITER):
        term[act] *= -x[act] / n
        piece = term[act] / (a[act] + n)
        total[act] += piece
        act = act[np.abs(piece) > _EPS * np.maximum(np.abs(total[act]), 1e-300)]
        if not act.size:
            break
    log_x = np.log(x)
    return -np.expm1(a * log_x - _lgamma1p(a)) - np.exp(a * log_x - _lgamma_np(a)) * total


def _igamma(a, x, upper):
    """P(a, x) (``upper`` False) or Q(a, x), with torch's values at the edges."""
    a, x = np.broadcast_arrays(np.asarray(a, np.float64), np.asarray(x, np.float64))
    shape = a.shape
    a, x = a.ravel().copy(), x.ravel().copy()
    out = np.full(a.shape, np.nan)
    fin = (a > 0) & (x > 0) & np.isfinite(a) & np.isfinite(x)
    lo, hi = (1.0, 0.0) if upper else (0.0, 1.0)
    out[(a > 0) & (x == 0)] = lo                       # P(a, 0) = 0
    out[(a == 0) & (x > 0)] = hi                       # P(0, x) = 1 (x > 0)
    out[(a > 0) & (x == np.inf) & np.isfinite(a)] = hi
    out[(a == np.inf) & np.isfinite(x) & (x >= 0)] = lo
    if fin.any():
        af, xf = a[fin], x[fin]
        res = np.empty_like(af)
        frac = (xf > 1.1) & (xf >= af)                          # Q by the continued fraction
        small_q = (xf <= 1.1) & np.where(xf <= 0.5, -0.4 / np.log(xf) >= af, 1.1 * xf >= af)   # Q by its series
        ser_p = ~frac & ~small_q                                 # P by its series
        for mask, fn, is_q in ((frac, _fraction_q, True), (small_q, _series_q, True), (ser_p, _series_p, False)):
            if mask.any():
                v = fn(af[mask], xf[mask])
                res[mask] = v if is_q == upper else 1.0 - v
        out[fin] = res
    return out.reshape(shape)


class Igamma(Primitive):
    """P(a, x); torch has its derivative in x only."""

    @staticmethod
    def forward(ctx, a, x):
        a, x, d = binary_inputs(a, x, "igamma_cpu")
        ctx.save_inputs(0, 1)
        return np.asarray(_igamma(a, x, False)).astype(d, copy=False)

    @staticmethod
    def backward(ctx, grad):
        if ctx.needs_input_grad[0]:
            raise not_implemented("igamma: input")
        a, x = ctx.saved_tensors
        return None, grad * ((a - 1) * x.log() - x - lgamma(a)).exp()


class Igammac(Primitive):
    """Q(a, x) = 1 - P(a, x); torch has its derivative in x only."""

    @staticmethod
    def forward(ctx, a, x):
        a, x, d = binary_inputs(a, x, "igammac_cpu")
        ctx.save_inputs(0, 1)
        return np.asarray(_igamma(a, x, True)).astype(d, copy=False)

    @staticmethod
    def backward(ctx, grad):
        if ctx.needs_input_grad[0]:
            raise not_implemented("igammac: input")
        a, x = ctx.saved_tensors
        return None, -grad * ((a - 1) * x.log() - x - lgamma(a)).exp()


def _need_tensors(name, a, x):
    for i, (arg, v) in enumerate((("input", a), ("other", x))):
        if not isinstance(v, Tensor):
            raise TypeError(f"{name}(): argument '{arg}' (position {i + 1}) must be Tensor, not {type(v).__name__}")


@_with_out
def igamma(input, other):  # noqa: A002
    """The regularized lower incomplete gamma function P(input, other) (``special.gammainc``).

    >>> tapegrad.igamma(tapegrad.tensor([1.0, 2.0]), tapegrad.tensor([1.0, 1.0]))
    tensor([0.6321, 0.2642])
    """
    _need_tensors("igamma", input, other)
    return Igamma.apply(input, other)


@_with_out
def igammac(input, other):  # noqa: A002
    """The regularized upper incomplete gamma function Q(input, other) = 1 - P (``special.gammaincc``).

    >>> tapegrad.igammac(tapegrad.tensor([1.0, 2.0]), tapegrad.tensor([1.0, 1.0]))
    tensor([0.3679, 0.7358])
    """
    _need_tensors("igammac", input, other)
    return Igammac.apply(input, other)


gammainc, gammaincc = igamma, igammac
igamma_, igammac_ = _inplace(igamma), _inplace(igammac)

bind(igamma=igamma, igammac=igammac, igamma_=igamma_, igammac_=igammac_)
