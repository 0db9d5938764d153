"""The normal distribution's functions and the small ones: erfcx, ndtr, ndtri, log_ndtr, entr, sinc, xlog1py.

- erfcx(x) = exp(x^2) erfc(x) from the rational parts of W. J. Cody's erfc (``elementwise/unary.py`` holds his
  coefficients): erfc = exp(-x^2) R(x) there, so erfcx is R itself, with no overflow; erfcx(-x) = 2 exp(x^2) -
  erfcx(x).
- ndtr(x) = (1 + erf(x / sqrt 2)) / 2, computed as torch computes it (so it prints torch's numbers, which are
  0 below about -8.3: use log_ndtr in the far left tail).
- log_ndtr: log(erfcx(-x / sqrt 2) / 2) - x^2 / 2 below -1, log1p(-erfc(x / sqrt 2) / 2) above.
- ndtri: sqrt(2) erfinv(2p - 1) for p in [1/4, 3/4] (2p - 1 is exact there); in the tails, Newton's method on
  log_ndtr(x) = log(q) (q = min(p, 1 - p), exact) from A&S 26.2.23's first guess: quadratic convergence, and
  log space keeps the relative accuracy down to the smallest doubles.
"""

from __future__ import annotations

import math

import numpy as np

from .._util import Primitive, Tensor, bind
from ..elementwise._common import _copy_out, _inplace, _w, _with_out
from ..elementwise.unary import _ERF_C, _ERF_D, _ERF_P, _ERF_Q, _SQRPI, _erf_np, _erfc_np, _erfinv_np, exp
from ._common import binary_inputs, piecewise, special_unary

__all__ = ["erfcx", "ndtr", "ndtri", "log_ndtr", "entr", "sinc", "sinc_", "xlog1py"]

_SQRT1_2 = 1 / math.sqrt(2)
_SQRT_2PI = math.sqrt(2 * math.pi)


# --- erfcx ---------------------------------------------------------------------------------------------------
def _erfcx_pos(y):
    """erfcx(y) for y > 0.46875 (Cody's R: erfc(y) = exp(-y^2) R(y))."""
    def mid(v):
        num, den = _ERF_C[8] * v, v
        for i in range(7):
            num, den = (num + _ERF_C[i]) * v, (den + _ERF_D[i]) * v
        return (num + _ERF_C[7]) / (den + _ERF_D[7])

    def far(v):
        z = 1.0 / (v * v)
        num, den = _ERF_P[5] * z, z
        for i in range(4):
            num, den = (num + _ERF_P[i]) * z, (den + _ERF_Q[i]) * z
        return (_SQRPI - z * (num + _ERF_P[4]) / (den + _ERF_Q[4])) / v
    return piecewise(y, (y <= 4, mid), (y > 4, far))


def _erfcx_np(x):
    y = np.abs(x)
    small = y <= 0.46875
    out = piecewise(x, (small, lambda v: np.exp(v * v) * _erfc_np(v)), (~small & (x > 0), _erfcx_pos),
                    (~small & (x < 0), lambda v: 2 * np.exp(v * v) - _erfcx_pos(-v)))
    out[x == np.inf] = 0.0
    out[x == -np.inf] = np.inf
    return out


# --- ndtr, log_ndtr, ndtri ---------------------------------------------------------------------------------
def _ndtr_np(x):
    return (1 + _erf_np(x * _SQRT1_2)) * 0.5


def _log_ndtr_np(x):
    def left(v):
        t = -v * _SQRT1_2
        return np.log(_erfcx_np(t) / 2) - t * t
    out = piecewise(x, (x >= -1, lambda v: np.log1p(-_erfc_np(v * _SQRT1_2) / 2)), (x < -1, left))
    out[x == -np.inf] = -np.inf
    return out


def _ndtri_lower(q):
    """ndtri(q) for 0 < q < 1/4: Newton's method on log(ndtr(x)) = log(q)."""
    t = np.sqrt(-2 * np.log(q))
    x = -(t - (2.515517 + 0.802853 * t + 0.010328 * t * t) / (1 + 1.432788 * t + 0.189269 * t * t
                                                                  + 0.001308 * t ** 3))
    log_q = np.log(q)
    for _ in range(4):
        mills = math.sqrt(math.pi / 2) * _erfcx_np(-x * _SQRT1_2)       # ndtr(x) / pdf(x)
        x = x - (_log_ndtr_np(x) - log_q) * mills
    return x


def _ndtri_np(p):
    central = (p >= 0.25) & (p <= 0.75)
    lower = (p > 0) & (p < 0.25)
    upper = (p > 0.75) & (p < 1)
    out = piecewise(p, (central, lambda v: math.sqrt(2) * _erfinv_np(2 * v - 1)), (lower, _ndtri_lower),
                    (upper, lambda v: -_ndtri_lower(1 - v)))
    out[p == 0] = -np.inf
    out[p == 1] = np.inf
    return out


# --- entr, sinc ------------------------------------------------------------------------------------------------
def _entr_np(x):
    out = piecewise(x, (x > 0, lambda v: -v * np.log(v)), default=-np.inf)
    out[x == 0] = 0.0
    out[np.isnan(x)] = np.nan
    return out


class Sinc(Primitive):
    """sin(pi x) / (pi x), 1 at 0 (computed as torch's: sinc(1) is 1e-17, not 0); real or complex."""

    @staticmethod
    def forward(ctx, x):
        if x.dtype.kind not in "fc":
            from ..._dtype import get_default_dtype
            x = x.astype(get_default_dtype().np)
        ctx.save_inputs(0)
        px = np.pi * x
        out = np.sin(px) / px
        return np.asarray(np.where(x == 0, np.ones((), x.dtype), out), x.dtype)

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        px = x * math.pi
        sq = x * x * math.pi
        if x.dtype.is_complex:            # torch's convention: the conjugate of the (holomorphic) derivative
            from ..fft import _Conj
            d = grad * _Conj.apply(px * px.cos() - px.sin()) / _Conj.apply(sq)
        else:
            d = grad * (px * px.cos() - px.sin()) / sq
        return _w(sq._array == 0, 0.0, d)

    @staticmethod
    def jvp(ctx, t):        # the tangent times the derivative, 0 at 0 as torch's (written with no 0/0 inside)
        x, = ctx.inputs
        px = x * math.pi
        den = x * x * math.pi + (x == 0).to(x.dtype)     # (a comparison as an op: a batched x's every sample)
        return t * (px * px.cos() - px.sin()) / den


# --- xlog1py -------------------------------------------------------------------------------------------------
def _xlog1py_np(x, y):
    r = np.asarray(x * np.log1p(y))
    return np.where((x == 0) & ~np.isnan(y), np.zeros((), r.dtype), r).astype(r.dtype, copy=False)


class Xlog1py(Primitive):
    """``x * log1p(y)``, 0 where x == 0 (unless y is NaN)."""

    node_name = "SpecialXlog1PyBackward0"

    @staticmethod
    def forward(ctx, x, y):
        x, y, _ = binary_inputs(x, y, "xlog1py_cpu")
        ctx.save_inputs(0, 1)
        return _xlog1py_np(x, y)

    @staticmethod
    def backward(ctx, grad):
        need = ctx.needs_input_grad
        x, y = ctx.saved_tensors
        gx = gy = None
        if need[0]:
            xa, ya = (v._array if isinstance(v, Tensor) else np.asarray(v) for v in (x, y))
            gx = _w((xa == 0) & (ya <= -1), 0.0, Xlog1py.apply(grad, y))
        if need[1]:
            gy = grad * x / (y + 1)
        return gx, gy


class Xlog1pyScalarX(Xlog1py):
    node_name = "SpecialXlog1PyBackward1"


class Xlog1pyScalarY(Xlog1py):
    node_name = "SpecialXlog1PyBackward2"


# --- the Primitives and functions --------------------------------------------------------------------------
Erfcx = special_unary("Erfcx", _erfcx_np, lambda grad, x, r: grad * (2 * x * r - 2 * _SQRPI),
                      node_name="SpecialErfcxBackward0", save="both", kernel="erfcx_cpu")
Ndtr = special_unary("Ndtr", _ndtr_np, lambda grad, x, r: grad * (exp(-0.5 * x * x) / _SQRT_2PI),
                     node_name="MulBackward1", kernel="ndtr_cpu")
LogNdtr = special_unary("LogNdtr", _log_ndtr_np,
                        lambda grad, x, r: grad / _SQRT_2PI * exp(-(r + x * x / 2)),
                        node_name="SpecialLogNdtrBackward0", save="both", kernel="log_ndtr_cpu")
Ndtri = special_unary("Ndtri", _ndtri_np, lambda grad, x, r: grad * _SQRT_2PI * exp(r * r / 2),
                      node_name="SpecialNdtriBackward0", save="result", kernel="ndtri_cpu")
Entr = special_unary("Entr", _entr_np, lambda grad, x, r: grad * -(1 + x.log()), node_name="SpecialEntrBackward0",
                     kernel="entr_cpu")


def _fn(name, cls, doc):
    def fn(input, *, out=None):  # noqa: A002
        res = cls.apply(input)
        return res if out is None else _copy_out(name, res, out)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


erfcx = _fn("erfcx", Erfcx, """exp(x^2) erfc(x), the scaled complementary error function (no overflow).

    >>> tapegrad.special.erfcx(tapegrad.tensor([0.0, 30.0]))
    tensor([1.0000, 0.0188])
    """)
ndtr = _fn("ndtr", Ndtr, """The standard normal distribution function, (1 + erf(x / sqrt 2)) / 2.

    >>> tapegrad.special.ndtr(tapegrad.tensor([0.0, 1.0]))
    tensor([0.5000, 0.8413])
    """)
log_ndtr = _fn("log_ndtr", LogNdtr, """log(ndtr(x)), accurate far into the left tail.

    >>> tapegrad.special.log_ndtr(tapegrad.tensor([-40.0]))
    tensor([-804.6085])
    """)
ndtri = _fn("ndtri", Ndtri, """The inverse of ndtr: the standard normal quantile of p.

    >>> tapegrad.special.ndtri(tapegrad.tensor([0.5, 0.975]))
    tensor([0.0000, 1.9600])
    """)
entr = _fn("entr", Entr, """-x log(x) (0 at 0, -inf below).

    >>> tapegrad.special.entr(tapegrad.tensor([0.0, 0.5]))
    tensor([0.0000, 0.3466])
    """)
sinc = _fn("sinc", Sinc, """sin(pi x) / (pi x), the normalised sinc function (1 at 0).

    >>> tapegrad.sinc(tapegrad.tensor([0.0, 0.5]))
    tensor([1.0000, 0.6366])
    """)


@_with_out
def xlog1py(input, other):  # noqa: A002
    """``input * log1p(other)``, 0 where ``input`` is 0 (either may be a number).

    >>> tapegrad.special.xlog1py(tapegrad.tensor([0.0, 2.0]), tapegrad.tensor([-1.0, 0.0]))
    tensor([0., 0.])
    """
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        raise TypeError("special_xlog1py(): expected at least one Tensor argument")
    if not isinstance(input, Tensor):
        return Xlog1pyScalarX.apply(input, other)
    if not isinstance(other, Tensor):
        return Xlog1pyScalarY.apply(input, other)
    return Xlog1py.apply(input, other)


sinc_ = _inplace(sinc)

bind(sinc=sinc, sinc_=sinc_)
