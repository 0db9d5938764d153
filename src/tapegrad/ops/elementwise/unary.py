"""One-input math: exp, log, trig and hyperbolic functions, sigmoid, erf/erfc/erfinv, rounding, sign, abs,
logit, nan_to_num, and clamp; their in-place variants. NumPy has no erf: W. J. Cody's rational
approximations are here.
"""

from __future__ import annotations

import math

import numpy as np

from .._util import (ELEMENTWISE, Primitive, Tensor, add_tangents, as_float, bind, cj, kernel, refuse_complex, unary,
                     zero_link)
from ... import _dtype
from ._common import (SAME_AS_INPUT, _2_SQRTPI, _LN10, _LN2, _cast_all, _copy_out, _inplace, _need_tensor, _no_bool,
                      _not_implemented,
                      _result, _w, _with_out, _zeros_like)


# --- erf, erfc, erfinv (NumPy has none: W. J. Cody's rational approximations, double precision) -------------
_ERF_A = (3.16112374387056560e00, 1.13864154151050156e02, 3.77485237685302021e02, 3.20937758913846947e03,
          1.85777706184603153e-1)
_ERF_B = (2.36012909523441209e01, 2.44024637934444173e02, 1.28261652607737228e03, 2.84423683343917062e03)
_ERF_C = (5.64188496988670089e-1, 8.88314979438837594e00, 6.61191906371416295e01, 2.98635138197400131e02,
          8.81952221241769090e02, 1.71204761263407058e03, 2.05107837782607147e03, 1.23033935479799725e03,
          2.15311535474403846e-8)
_ERF_D = (1.57449261107098347e01, 1.17693950891312499e02, 5.37181101862009858e02, 1.62138957456669019e03,
          3.29079923573345963e03, 4.36261909014324716e03, 3.43936767414372164e03, 1.23033935480374942e03)
_ERF_P = (3.05326634961232344e-1, 3.60344899949804439e-1, 1.25781726111229246e-1, 1.60837851487422766e-2,
          6.58749161529837803e-4, 1.63153871373020978e-2)
_ERF_Q = (2.56852019228982242e00, 1.87295284992346725e00, 5.27905102951428412e-1, 6.05183413124413191e-2,
          2.33520497626869185e-3)
_SQRPI = 5.6418958354775628695e-1   # 1 / sqrt(pi)


def _erf_parts(x):
    """(erf(x) for |x| <= 0.46875, erfc(|x|) elsewhere, small-mask), computed in float64."""
    with np.errstate(all="ignore"):
        return _erf_parts_raw(x)


def _erf_parts_raw(x):
    x = np.asarray(x, np.float64)
    y = np.abs(x)
    small = y <= 0.46875
    x = np.where(np.isinf(x), np.copysign(30.0, x), x)   # erf(+-30) is +-1 exactly, erfc(30) is 0
    y = np.abs(x)
    # |x| <= 0.46875: erf = x * R(x^2)
    ysq = x * x
    num, den = _ERF_A[4] * ysq, ysq
    for i in range(3):
        num, den = (num + _ERF_A[i]) * ysq, (den + _ERF_B[i]) * ysq
    erf_small = x * (num + _ERF_A[3]) / (den + _ERF_B[3])
    # 0.46875 < |x| <= 4: erfc = exp(-y^2) R(y)
    num, den = _ERF_C[8] * y, y
    for i in range(7):
        num, den = (num + _ERF_C[i]) * y, (den + _ERF_D[i]) * y
    mid = (num + _ERF_C[7]) / (den + _ERF_D[7])
    # |x| > 4: erfc = exp(-y^2)/y (1/sqrt(pi) - R(1/y^2)/y^2)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        z = 1.0 / (y * y)
        num, den = _ERF_P[5] * z, z
        for i in range(4):
            num, den = (num + _ERF_P[i]) * z, (den + _ERF_Q[i]) * z
        big = (_SQRPI - z * (num + _ERF_P[4]) / (den + _ERF_Q[4])) / y
        r = np.where(y <= 4.0, mid, big)
        # exp(-y^2) split as exp(-ysq^2) exp(-del) to keep the last bits (Cody's trick)
        yr = np.trunc(y * 16.0) / 16.0
        dl = (y - yr) * (y + yr)
        erfc_abs = np.exp(-yr * yr) * np.exp(-dl) * r
    erfc_abs = np.where(np.isnan(y), np.nan, erfc_abs)
    return erf_small, erfc_abs, small


def _erf_np(x):
    d = x.dtype
    erf_small, erfc_abs, small = _erf_parts(x)
    big = (0.5 - erfc_abs) + 0.5
    big = np.where(np.asarray(x) < 0, -big, big)
    return np.asarray(np.where(small, erf_small, big)).astype(d, copy=False)


def _erfc_np(x):
    d = x.dtype
    erf_small, erfc_abs, small = _erf_parts(x)
    big = np.where(np.asarray(x) < 0, 2.0 - erfc_abs, erfc_abs)
    return np.asarray(np.where(small, (0.5 - erf_small) + 0.5, big)).astype(d, copy=False)


def _erfinv_np(y):
    """Inverse error function: a rational first guess (as torch's) refined by two Newton steps."""
    d = y.dtype
    y = np.asarray(y, np.float64)
    a = (0.886226899, -1.645349621, 0.914624893, -0.140543331)
    b = (-2.118377725, 1.442710462, -0.329097515, 0.012229801)
    c = (-1.970840454, -1.624906493, 3.429567803, 1.641345311)
    dd = (3.543889200, 1.637067800)
    ay = np.abs(y)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        z = y * y
        num = ((a[3] * z + a[2]) * z + a[1]) * z + a[0]
        den = (((b[3] * z + b[2]) * z + b[1]) * z + b[0]) * z + 1.0
        central = y * num / den
        z2 = np.sqrt(-np.log((1.0 - ay) / 2.0))
        num = ((c[3] * z2 + c[2]) * z2 + c[1]) * z2 + c[0]
        den = (dd[1] * z2 + dd[0]) * z2 + 1.0
        tail = np.copysign(num / den, y)
        x = np.where(ay <= 0.7, central, tail)
        for _ in range(2):
            x = x - (_erf_np(x) - y) / (_2_SQRTPI * np.exp(-x * x))
    x = np.where(ay > 1, np.nan, x)
    x = np.where(ay == 1, np.copysign(np.inf, y), x)
    return np.asarray(x).astype(d, copy=False)


# --- one-input math -----------------------------------------------------------------------------------------
def _constant(value):
    """A function ``dtype -> value`` as a cached read-only 0-d array of that dtype. (NumPy 2 takes ~0.3 µs longer
    for an operation with a Python number than with an array of the same dtype: a sizeable share of a kernel on
    small tensors.)"""
    cache = {}

    def of(dtype):
        c = cache.get(dtype)
        if c is None:
            c = cache[dtype] = np.full((), value, dtype)
            c.flags.writeable = False
        return c
    return of


_one, _zero = _constant(1), _constant(0)


def _sigmoid_np(x):
    # 1 / (1 + e^-x): exp overflows to inf for x < -88 (float32) and the quotient is then exactly 0, as torch's
    # (forwards run with NumPy's warnings off: Function.apply)
    t = np.asarray(np.exp(np.negative(x)))
    t += _one(t.dtype)
    return np.reciprocal(t, out=t)


Exp = unary("Exp", np.exp, lambda grad, x, r: grad * r, save="result", array_backward=True)
Exp2 = unary("Exp2", np.exp2, lambda grad, x, r: grad * (r * _LN2), save="result", array_backward=True)
Expm1 = unary("Expm1", np.expm1, lambda grad, x, r: grad * (r + 1), save="result", array_backward=True)
Log = unary("Log", np.log, lambda grad, x, r: grad / x, array_backward=True)
Log2 = unary("Log2", np.log2, lambda grad, x, r: grad / (x * _LN2), array_backward=True)
Log10 = unary("Log10", np.log10, lambda grad, x, r: grad / (x * _LN10), array_backward=True)
Log1P = unary("Log1P", np.log1p, lambda grad, x, r: grad / (x + 1), array_backward=True)
Sqrt = unary("Sqrt", np.sqrt, lambda grad, x, r: grad / (2 * r), save="result", array_backward=True)
Rsqrt = unary("Rsqrt", lambda x: 1 / np.sqrt(x), lambda grad, x, r: -0.5 * grad * r ** 3, save="result",
              array_backward=True)
Reciprocal = unary("Reciprocal", np.reciprocal, lambda grad, x, r: -grad * (r * r), save="result",
                   array_backward=True)
Sin = unary("Sin", np.sin, lambda grad, x, r: grad * cos(x))
Cos = unary("Cos", np.cos, lambda grad, x, r: grad * -sin(x))
Tan = unary("Tan", np.tan, lambda grad, x, r: grad * (1 + r * r), save="result", array_backward=True)
Asin = unary("Asin", np.arcsin, lambda grad, x, r: grad * rsqrt(-x * x + 1))
Acos = unary("Acos", np.arccos, lambda grad, x, r: grad * -rsqrt(-x * x + 1))
Atan = unary("Atan", np.arctan, lambda grad, x, r: grad / (x * x + 1), array_backward=True)
Sinh = unary("Sinh", np.sinh, lambda grad, x, r: grad * cosh(x))
Cosh = unary("Cosh", np.cosh, lambda grad, x, r: grad * sinh(x))
class _TanhGrad(Primitive):
    """``grad * (1 - result²)`` in one NumPy pass (TanhBackward's formula as one op: fast first backward,
    and itself differentiable for double backward)."""

    node_name = "TanhBackwardBackward0"

    @staticmethod
    def compute(grad, result):
        return grad * (_one(result.dtype) - result * result)

    @staticmethod
    def forward(ctx, grad, result):
        ctx.save_inputs(0, 1)
        if result.dtype.kind == "c":
            ctx._cplx = True
        return _TanhGrad.compute(grad, result)

    @staticmethod
    def backward(ctx, gg):
        grad, result = ctx.saved_tensors
        if ctx._cplx:          # (complex: the conjugate derivatives, as for any holomorphic product)
            grad, result = cj(grad), cj(result)
        need = ctx.needs_input_grad
        return (_TanhGrad.apply(gg, result) if need[0] else None,
                gg * grad * (-2 * result) if need[1] else None)

    @staticmethod
    def jvp(ctx, tg, tr):           # the product rule (forward-over-reverse through tanh)
        grad, result = ctx.inputs
        return add_tangents(None if tg is None else _TanhGrad.apply(tg, result),
                            None if tr is None else grad * (-2 * result) * tr)


class _SigmoidGrad(Primitive):
    """``grad * result * (1 - result)`` in one NumPy pass (SigmoidBackward's formula as one op)."""

    node_name = "SigmoidBackwardBackward0"

    @staticmethod
    def compute(grad, result):
        return grad * (result * (_one(result.dtype) - result))

    @staticmethod
    def forward(ctx, grad, result):
        ctx.save_inputs(0, 1)
        if result.dtype.kind == "c":
            ctx._cplx = True
        return _SigmoidGrad.compute(grad, result)

    @staticmethod
    def backward(ctx, gg):
        grad, result = ctx.saved_tensors
        if ctx._cplx:
            grad, result = cj(grad), cj(result)
        need = ctx.needs_input_grad
        return (_SigmoidGrad.apply(gg, result) if need[0] else None,
                gg * grad * (1 - 2 * result) if need[1] else None)

    @staticmethod
    def jvp(ctx, tg, tr):
        grad, result = ctx.inputs
        return add_tangents(None if tg is None else _SigmoidGrad.apply(tg, result),
                            None if tr is None else grad * (1 - 2 * result) * tr)


Tanh = unary("Tanh", np.tanh, lambda grad, x, r: kernel(_TanhGrad, grad, r), save="result", array_backward=True)
Asinh = unary("Asinh", np.arcsinh, lambda grad, x, r: grad * rsqrt(x * x + 1))
Acosh = unary("Acosh", np.arccosh, lambda grad, x, r: grad * rsqrt(x * x - 1))
Atanh = unary("Atanh", np.arctanh, lambda grad, x, r: grad / (1 - x * x), array_backward=True)
Sigmoid = unary("Sigmoid", _sigmoid_np, lambda grad, x, r: kernel(_SigmoidGrad, grad, r), save="result",
                array_backward=True)
Erf = unary("Erf", _erf_np, lambda grad, x, r: grad * (_2_SQRTPI * exp(-x * x)))
Erfc = unary("Erfc", _erfc_np, lambda grad, x, r: grad * (-_2_SQRTPI * exp(-x * x)))
Erfinv = unary("Erfinv", _erfinv_np, lambda grad, x, r: grad * ((math.sqrt(math.pi) / 2) * exp(r * r)),
               save="result")
def _frac_np(x):
    refuse_complex(x, "frac_cpu")
    return np.asarray(x - np.trunc(x))


Frac = unary("Frac", _frac_np, lambda grad, x, r: grad, save="none", floating=False)


def _rounding(name, np_fn):
    """floor/ceil/trunc/round: integer tensors pass through unchanged; the gradient is zero."""
    def fwd(x):
        _no_bool(f"{name.lower()}_vml_cpu", x.dtype)
        if name == "Round":
            refuse_complex(x, "round_vml_cpu")
        refuse_complex(x, message=f"{name.lower()} is not supported for complex inputs")
        return x.copy() if x.dtype.kind in "iu" else np.asarray(np_fn(x))
    return unary(name, fwd, lambda grad, x, r: _zeros_like(grad), save="none", floating=False)


Floor = _rounding("Floor", np.floor)
Ceil = _rounding("Ceil", np.ceil)
Trunc = _rounding("Trunc", np.trunc)
Round = _rounding("Round", np.rint)


class RoundDecimals(Primitive):
    """round(x, decimals): half to even at the given decimal place."""

    node_name = "RoundBackward1"

    jvp = ELEMENTWISE      # a diagonal Jacobian: the tangent through the backward formula

    @staticmethod
    def forward(ctx, x, decimals):
        if x.dtype.kind not in "fc":
            raise _not_implemented("round_cpu", x.dtype)
        t = x.dtype.type
        with np.errstate(over="ignore", invalid="ignore"):
            if decimals > 0:
                p = t(10.0 ** decimals)
                return np.asarray(np.rint(x * p) / p)
            p = t(10.0 ** -decimals)
            return np.asarray(np.rint(x / p) * p)

    @staticmethod
    def backward(ctx, grad):
        return _zeros_like(grad), None


def _sign(a):
    """torch's sign: -1, 0 or 1, and 0 at NaN (NumPy's sign gives NaN there)."""
    s = np.asarray(np.sign(a))
    if s.dtype.kind == "f" and s.ndim:
        np.copyto(s, 0, where=s != s)
    elif s.dtype.kind == "f" and s != s:
        s = np.zeros((), s.dtype)
    return s


class Sign(Primitive):
    """sign(x): -1, 0 or 1 (0 at NaN, as torch; bool stays bool); zero gradient."""

    jvp = ELEMENTWISE      # a diagonal Jacobian: the tangent through the backward formula

    @staticmethod
    def forward(ctx, x):
        refuse_complex(x, message="Unlike NumPy, torch.sign is not intended to support complex numbers. Please use "
                                  "torch.sgn instead.")
        return x.copy() if x.dtype == np.bool_ else _sign(x)

    @staticmethod
    def backward(ctx, grad):
        return _zeros_like(grad)


class Abs(Primitive):
    """|x|; gradient sign(x) (0 at 0 and at NaN, as torch)."""

    jvp = ELEMENTWISE      # a diagonal Jacobian: the tangent through the backward formula

    @staticmethod
    def forward(ctx, x):
        if x.dtype == np.bool_:
            raise _not_implemented("abs_cpu", x.dtype)
        ctx.save_inputs(0)
        return np.abs(x)

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        if x._array.dtype.kind == "c":      # d|z| = Re(conj(sgn z) dz): the gradient is grad * sgn(z)
            return grad * x.sgn()
        return zero_link(ctx, grad * _sign(x._array))     # (connected, as torch's grad * sgn(x))


class Logit(Primitive):
    """log(x / (1 - x)), with x first clamped to [eps, 1 - eps] when eps is given."""

    jvp = ELEMENTWISE      # a diagonal Jacobian: the tangent through the backward formula

    @staticmethod
    def forward(ctx, x, eps):
        x = as_float(x)
        ctx.save_inputs(0)
        ctx.eps = eps
        if eps is not None:
            x = np.clip(x, x.dtype.type(eps), x.dtype.type(1 - eps))
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.asarray(np.log(x / (1 - x)))

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        xa, eps = x._array, ctx.eps
        g = grad / (x * (1 - x))
        if eps is None:
            return _w((xa < 0) | (xa > 1), float("nan"), g), None
        return _w((xa < eps) | (xa > 1 - eps), 0.0, g), None


class NanToNum(Primitive):
    """NaN, +inf and -inf replaced by finite numbers; the gradient is zero where the input was not finite."""

    jvp = ELEMENTWISE      # a diagonal Jacobian: the tangent through the backward formula

    @staticmethod
    def forward(ctx, x, nan, posinf, neginf):
        if x.dtype.kind not in "fc":
            return x.copy()
        fi = np.finfo(x.dtype)
        ctx.finite = np.isfinite(x)
        return np.nan_to_num(x, nan=nan, posinf=fi.max if posinf is None else posinf,
                             neginf=fi.min if neginf is None else neginf)

    @staticmethod
    def backward(ctx, grad):
        return _w(ctx.finite, grad, 0.0), None, None, None


def _unary_fn(name, cls, doc, example, out_rule=None):
    rule = out_rule or {}

    def fn(input, *, out=None):  # noqa: A002
        res = cls.apply(input)   # (looked up per call: a transform may replace Function.apply, see Interpreter)
        return res if out is None else _copy_out(name, res, out, **rule)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"{doc}\n\n    >>> {example}\n    "
    return fn


exp = _unary_fn("exp", Exp, "e ** input, elementwise.", "tapegrad.exp(tapegrad.tensor([0.]))\n    tensor([1.])")
exp2 = _unary_fn("exp2", Exp2, "2 ** input, elementwise.", "tapegrad.exp2(tapegrad.tensor([3.]))\n    tensor([8.])")
expm1 = _unary_fn("expm1", Expm1, "exp(input) - 1, accurate near 0.",
                  "tapegrad.expm1(tapegrad.tensor([0.]))\n    tensor([0.])")
log = _unary_fn("log", Log, "Natural logarithm, elementwise.",
                "tapegrad.log(tapegrad.tensor([1.]))\n    tensor([0.])")
log2 = _unary_fn("log2", Log2, "Base-2 logarithm.", "tapegrad.log2(tapegrad.tensor([8.]))\n    tensor([3.])")
log10 = _unary_fn("log10", Log10, "Base-10 logarithm.",
                  "tapegrad.log10(tapegrad.tensor([100.]))\n    tensor([2.])")
log1p = _unary_fn("log1p", Log1P, "log(1 + input), accurate near 0.",
                  "tapegrad.log1p(tapegrad.tensor([0.]))\n    tensor([0.])")
sqrt = _unary_fn("sqrt", Sqrt, "Square root, elementwise.", "tapegrad.sqrt(tapegrad.tensor([4.]))\n    tensor([2.])")
rsqrt = _unary_fn("rsqrt", Rsqrt, "1 / sqrt(input).", "tapegrad.rsqrt(tapegrad.tensor([4.]))\n    tensor([0.5000])")
reciprocal = _unary_fn("reciprocal", Reciprocal, "1 / input (integers give floats).",
                       "tapegrad.reciprocal(tapegrad.tensor([4.]))\n    tensor([0.2500])")
sin = _unary_fn("sin", Sin, "Sine.", "tapegrad.sin(tapegrad.tensor([0.]))\n    tensor([0.])")
cos = _unary_fn("cos", Cos, "Cosine.", "tapegrad.cos(tapegrad.tensor([0.]))\n    tensor([1.])")
tan = _unary_fn("tan", Tan, "Tangent.", "tapegrad.tan(tapegrad.tensor([0.]))\n    tensor([0.])")
asin = _unary_fn("asin", Asin, "Inverse sine.", "tapegrad.asin(tapegrad.tensor([0.]))\n    tensor([0.])")
acos = _unary_fn("acos", Acos, "Inverse cosine.", "tapegrad.acos(tapegrad.tensor([1.]))\n    tensor([0.])")
atan = _unary_fn("atan", Atan, "Inverse tangent.", "tapegrad.atan(tapegrad.tensor([0.]))\n    tensor([0.])")
sinh = _unary_fn("sinh", Sinh, "Hyperbolic sine.", "tapegrad.sinh(tapegrad.tensor([0.]))\n    tensor([0.])")
cosh = _unary_fn("cosh", Cosh, "Hyperbolic cosine.", "tapegrad.cosh(tapegrad.tensor([0.]))\n    tensor([1.])")
tanh = _unary_fn("tanh", Tanh, "Hyperbolic tangent.", "tapegrad.tanh(tapegrad.tensor([0.]))\n    tensor([0.])")
asinh = _unary_fn("asinh", Asinh, "Inverse hyperbolic sine.",
                  "tapegrad.asinh(tapegrad.tensor([0.]))\n    tensor([0.])")
acosh = _unary_fn("acosh", Acosh, "Inverse hyperbolic cosine.",
                  "tapegrad.acosh(tapegrad.tensor([1.]))\n    tensor([0.])")
atanh = _unary_fn("atanh", Atanh, "Inverse hyperbolic tangent.",
                  "tapegrad.atanh(tapegrad.tensor([0.]))\n    tensor([0.])")
sigmoid = _unary_fn("sigmoid", Sigmoid, "1 / (1 + exp(-input)), computed stably.",
                    "tapegrad.sigmoid(tapegrad.tensor([0.]))\n    tensor([0.5000])")
erf = _unary_fn("erf", Erf, "The error function.", "tapegrad.erf(tapegrad.tensor([0.]))\n    tensor([0.])")
erfc = _unary_fn("erfc", Erfc, "1 - erf(input), accurate for large inputs.",
                 "tapegrad.erfc(tapegrad.tensor([0.]))\n    tensor([1.])")
erfinv = _unary_fn("erfinv", Erfinv, "The inverse error function on (-1, 1).",
                   "tapegrad.erfinv(tapegrad.tensor([0.]))\n    tensor([0.])")
floor = _unary_fn("floor", Floor, "Round down (zero gradient).",
                  "tapegrad.floor(tapegrad.tensor([1.5]))\n    tensor([1.])", SAME_AS_INPUT)
ceil = _unary_fn("ceil", Ceil, "Round up (zero gradient).", "tapegrad.ceil(tapegrad.tensor([1.5]))\n    tensor([2.])",
                  SAME_AS_INPUT)
trunc = _unary_fn("trunc", Trunc, "Round towards zero (zero gradient).",
                  "tapegrad.trunc(tapegrad.tensor([-1.5]))\n    tensor([-1.])", SAME_AS_INPUT)
sign = _unary_fn("sign", Sign, "-1, 0 or 1 by the sign of input (zero gradient).",
                 "tapegrad.sign(tapegrad.tensor([-2., 0.]))\n    tensor([-1.,  0.])", SAME_AS_INPUT)
abs = _unary_fn("abs", Abs, "|input|.", "tapegrad.abs(tapegrad.tensor([-2.]))\n    tensor([2.])",  # noqa: A001
                SAME_AS_INPUT)
arcsin, arccos, arctan, arcsinh, arccosh, arctanh, fix, absolute = asin, acos, atan, asinh, acosh, atanh, trunc, abs


@_with_out(**SAME_AS_INPUT)
def frac(input):  # noqa: A002
    """The fractional part ``input - trunc(input)`` (gradient passes through).

    >>> tapegrad.frac(tapegrad.tensor([1.25, -1.5]))
    tensor([ 0.2500, -0.5000])
    """
    if input.dtype.is_floating_point is False and not input.dtype.is_complex:
        raise _not_implemented("frac_cpu", input.dtype.np)
    return Frac.apply(input)


@_with_out(**SAME_AS_INPUT)
def round(input, *, decimals=0):  # noqa: A001,A002
    """Round half to even, at ``decimals`` decimal places (zero gradient).

    >>> tapegrad.round(tapegrad.tensor([2.5, 0.125]), decimals=2)
    tensor([2.5000, 0.1200])
    """
    if decimals == 0:
        return Round.apply(input)
    refuse_complex(input, "round_cpu")
    return RoundDecimals.apply(input, int(decimals))


@_with_out
def logit(input, eps=None):  # noqa: A002
    """``log(p / (1 - p))``; with ``eps``, p is first clamped to [eps, 1 - eps].

    >>> tapegrad.logit(tapegrad.tensor([0.5]))
    tensor([0.])
    """
    return Logit.apply(input, eps)


@_with_out(dtype="same", error="nan_to_num: dtype of out: {o} should be same as input: {r}")
def nan_to_num(input, nan=0.0, posinf=None, neginf=None):  # noqa: A002
    """Replace NaN by ``nan`` and infinities by ``posinf``/``neginf`` (default: the dtype's extremes).

    >>> tapegrad.nan_to_num(tapegrad.tensor([float("nan"), 1.]))
    tensor([0., 1.])
    """
    return NanToNum.apply(input, nan, posinf, neginf)


# --- clamp --------------------------------------------------------------------------------------------------
class Clamp(Primitive):
    """clamp(x, min, max) with number bounds (either may be None)."""

    node_name = "ClampBackward1"

    jvp = ELEMENTWISE      # a diagonal Jacobian: the tangent through the backward formula

    @staticmethod
    def forward(ctx, x, lo, hi):
        d = _result(x, lo, hi)
        _no_bool("clamp_scalar_cpu" if lo is not None and hi is not None else
                 "clamp_min_scalar_cpu" if lo is not None else "clamp_max_scalar_cpu", d)
        x, lo_, hi_ = _cast_all((x, lo, hi), d)
        ctx.mask = np.ones(x.shape, bool)
        r = x
        if lo_ is not None:
            ctx.mask &= x >= lo_
            r = np.maximum(r, lo_)
        if hi_ is not None:
            ctx.mask &= x <= hi_
            r = np.minimum(r, hi_)
        return np.array(r, copy=True) if r is x else np.asarray(r)

    @staticmethod
    def backward(ctx, grad):
        return _w(ctx.mask, grad, 0.0), None, None


class ClampMin(Clamp):
    node_name = "ClampMinBackward0"


class ClampMax(Clamp):
    node_name = "ClampMaxBackward0"


class ClampTensor(Primitive):
    """clamp(x, min, max) with tensor bounds (either may be None): bounds get the gradient where they win."""

    node_name = "ClampBackward0"

    @staticmethod
    def forward(ctx, x, lo, hi):
        d = _result(x, lo, hi)
        if lo is not None and hi is not None:
            _no_bool("clamp_cpu", d)
        x, lo, hi = _cast_all((x, lo, hi), d)
        r = x
        if lo is not None and hi is not None:
            ctx.gx = (x >= lo) & (x <= hi)
            ctx.glo = (x < lo) & (lo < hi)
            ctx.ghi = (x > hi) | (hi < lo)
        elif lo is not None:
            ctx.gx, ctx.glo, ctx.ghi = x >= lo, x < lo, None
        else:
            ctx.gx, ctx.glo, ctx.ghi = x <= hi, None, x > hi
        if lo is not None:
            r = np.maximum(r, lo)
        if hi is not None:
            r = np.minimum(r, hi)
        return np.asarray(r)

    @staticmethod
    def backward(ctx, grad):
        need = ctx.needs_input_grad
        return (_w(ctx.gx, grad, 0.0) if need[0] else None), (_w(ctx.glo, grad, 0.0) if need[1] else None), \
            (_w(ctx.ghi, grad, 0.0) if need[2] else None)


class ClampMinTensor(ClampTensor):
    node_name = "ClampMinBackward1"


class ClampMaxTensor(ClampTensor):
    node_name = "ClampMaxBackward1"


def _clamp(input, min, max, scalar_cls, tensor_cls):  # noqa: A002
    _need_tensor("clamp", "input", 1, input)
    refuse_complex(input, message="clamp is not supported for complex types")
    if min is None and max is None:
        raise RuntimeError("clamp: At least one of 'min' or 'max' must not be None")
    tmin, tmax = isinstance(min, Tensor), isinstance(max, Tensor)
    if (tmin or tmax) and not ((tmin or min is None) and (tmax or max is None)):
        # A number with a tensor picks torch's Number overload, which takes a 0-d tensor without grad as a number
        # (`gj.clamp_(0, gain[3] - 1)`); any other tensor there matches neither overload.
        t = min if tmin else max
        if t.ndim != 0 or t.requires_grad:
            raise TypeError("clamp() received an invalid combination of arguments - got (Tensor, "
                            f"{type(min).__name__}, {type(max).__name__}), but expected one of:\n"
                            " * (Tensor input, Tensor min = None, Tensor max = None, *, Tensor out = None)\n"
                            " * (Tensor input, Number min = None, Number max = None, *, Tensor out = None)\n")
        min, max = (min.item() if tmin else min), (max.item() if tmax else max)
        tmin = tmax = False
    if tmin or tmax:
        return tensor_cls.apply(input, min, max)
    for bound in (min, max):
        if bound is not None:
            _dtype.check_scalar_operand(input.dtype, bound)
    return scalar_cls.apply(input, min, max)


@_with_out(**SAME_AS_INPUT)
def clamp(input, min=None, max=None):  # noqa: A001,A002
    """Limit ``input`` to [min, max]; bounds are numbers or tensors, either may be None.

    >>> tapegrad.clamp(tapegrad.tensor([-2., 0.5, 2.]), -1, 1)
    tensor([-1.0000,  0.5000,  1.0000])
    """
    return _clamp(input, min, max, Clamp, ClampTensor)


clip = clamp


@_with_out(**SAME_AS_INPUT)
def clamp_min(input, min):  # noqa: A001,A002
    """``clamp(input, min=min)``.

    >>> tapegrad.clamp_min(tapegrad.tensor([-2., 2.]), 0)
    tensor([0., 2.])
    """
    return _clamp(input, min, None, ClampMin, ClampMinTensor)


@_with_out(**SAME_AS_INPUT)
def clamp_max(input, max):  # noqa: A001,A002
    """``clamp(input, max=max)``.

    >>> tapegrad.clamp_max(tapegrad.tensor([-2., 2.]), 0)
    tensor([-2.,  0.])
    """
    return _clamp(input, None, max, ClampMax, ClampMaxTensor)


abs_, exp_, exp2_, expm1_, log_, log2_, log10_, log1p_ = (_inplace(f) for f in (
    abs, exp, exp2, expm1, log, log2, log10, log1p))
sqrt_, rsqrt_, reciprocal_, sin_, cos_, tan_ = (_inplace(f) for f in (sqrt, rsqrt, reciprocal, sin, cos, tan))
asin_, acos_, atan_, sinh_, cosh_, tanh_, asinh_, acosh_, atanh_ = (_inplace(f) for f in (
    asin, acos, atan, sinh, cosh, tanh, asinh, acosh, atanh))
arcsin_, arccos_, arctan_, arcsinh_, arccosh_, arctanh_ = asin_, acos_, atan_, asinh_, acosh_, atanh_
sigmoid_, logit_, erf_, erfc_, erfinv_, floor_, ceil_, round_, trunc_, frac_ = (_inplace(f) for f in (
    sigmoid, logit, erf, erfc, erfinv, floor, ceil, round, trunc, frac))
fix_ = trunc_
sign_, nan_to_num_ = _inplace(sign), _inplace(nan_to_num)
_CPP_NAMES = {"Long": "long int", "Int": "int", "Short": "short int", "Char": "signed char", "Byte": "unsigned char",
              "Bool": "bool"}


def _clamp_inplace(f):
    """clamp_ with number bounds: torch's Number-overload kernel names the output type as C++ does ('long int')."""
    op_ = _inplace(f)

    def clamp_op_(self, *args, **kwargs):
        try:
            return op_(self, *args, **kwargs)
        except RuntimeError as e:
            bounds = (*args, *kwargs.values())
            msg = str(e)
            if "can't be cast to the desired output type" not in msg or \
                    not any(b is not None and not isinstance(b, Tensor) for b in bounds):
                raise
            head, name = msg.rsplit(" ", 1)
            raise RuntimeError(f"{head} {_CPP_NAMES.get(name, name)}") from None
    clamp_op_.__name__ = clamp_op_.__qualname__ = op_.__name__
    clamp_op_.__doc__ = op_.__doc__
    return clamp_op_


clamp_, clamp_min_, clamp_max_ = (_clamp_inplace(f) for f in (clamp, clamp_min, clamp_max))
clip_ = clamp_

bind(
    __abs__=abs,
    abs=abs, absolute=abs, sign=sign, exp=exp, exp2=exp2, expm1=expm1, log=log, log2=log2, log10=log10,
    log1p=log1p, sqrt=sqrt, rsqrt=rsqrt, reciprocal=reciprocal, sin=sin, cos=cos, tan=tan,
    asin=asin, acos=acos, atan=atan, arcsin=asin, arccos=acos, arctan=atan, sinh=sinh, cosh=cosh, tanh=tanh,
    asinh=asinh, acosh=acosh, atanh=atanh, arcsinh=asinh, arccosh=acosh, arctanh=atanh, sigmoid=sigmoid,
    logit=logit, erf=erf, erfc=erfc, erfinv=erfinv, floor=floor, ceil=ceil, round=round, trunc=trunc, fix=trunc,
    frac=frac, clamp=clamp, clip=clamp, clamp_min=clamp_min, clamp_max=clamp_max, nan_to_num=nan_to_num,
    abs_=abs_, absolute_=abs_, sign_=sign_, exp_=exp_, exp2_=exp2_, expm1_=expm1_, log_=log_, log2_=log2_,
    log10_=log10_, log1p_=log1p_, sqrt_=sqrt_, rsqrt_=rsqrt_, reciprocal_=reciprocal_,
    sin_=sin_, cos_=cos_, tan_=tan_, asin_=asin_, acos_=acos_, atan_=atan_, arcsin_=asin_, arccos_=acos_,
    arctan_=atan_, sinh_=sinh_, cosh_=cosh_, tanh_=tanh_, asinh_=asinh_, acosh_=acosh_, atanh_=atanh_,
    arcsinh_=asinh_, arccosh_=acosh_, arctanh_=atanh_, sigmoid_=sigmoid_, logit_=logit_, erf_=erf_, erfc_=erfc_,
    erfinv_=erfinv_, floor_=floor_, ceil_=ceil_, round_=round_, trunc_=trunc_, fix_=trunc_, frac_=frac_,
    clamp_=clamp_, clip_=clamp_, clamp_min_=clamp_min_, clamp_max_=clamp_max_, nan_to_num_=nan_to_num_,
)
