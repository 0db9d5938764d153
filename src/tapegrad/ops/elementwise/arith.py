"""Arithmetic: add, sub, mul, div (with rounding modes), floor_divide, neg, pow, float_power, square; the
Tensor operators and in-place variants of each. dtypes follow torch's promotion (``promote`` /
``_dtype.result_type``): Python numbers are weak, 0-d tensors only win with a higher category.
"""

from __future__ import annotations

import numpy as np

from ... import _dtype
from .._util import _F16, Primitive, Tensor, add_tangents, apply_inplace, bind, cj, linear_jvp, promote
from ._common import (SAME_AS_INPUT, _inplace, _int_zero_check, _iop, _no_bool, _quiet, _real_only, _two_numbers, _w,
                      _with_out, _zeros_like, laid_out_as_torch, number_arg, scalar_first)
from .copies import to
from .unary import Reciprocal, log


# --- arithmetic ---------------------------------------------------------------------------------------------
_F32 = np.float32


def _is_number(v):
    return v.__class__ in (float, int) or (v.__class__ is np.ndarray and v.ndim == 0 and v.dtype.kind == "f")


def _half_and_number(a, b):
    """torch multiplies and divides a Half tensor by a number (or a 0-d float tensor) in float32, the number
    unrounded, and rounds the result once; NumPy would round the number to float16 first (``x * 0.1`` differs in
    a third of the values). ``(a, b)`` as float32 for that case, else None."""
    if a.__class__ is np.ndarray and a.dtype is _F16 and _is_number(b):
        return a.astype(_F32), _F32(b)
    return None


def _half_alpha(a, b, alpha, sign):
    """``a + sign * alpha * b`` on Half arrays as torch computes it: alpha rounded to Half, the arithmetic in
    float32, one rounding at the end."""
    return (a.astype(_F32) + b.astype(_F32) * _F32(sign * np.float16(alpha))).astype(_F16)


class Add(Primitive):
    """a + b, broadcasting."""

    _scalar_edges = True
    array_backward = True

    @staticmethod
    def forward(ctx, a, b):
        a, b, _ = promote(a, b)
        r = a + b
        return r if r.ndim < 3 else laid_out_as_torch(r, a, b)

    @staticmethod
    def backward(ctx, grad):
        return grad, grad

    @staticmethod
    def jvp(ctx, ta, tb):
        return add_tangents(ta, tb)


class AddAlpha(Primitive):
    """a + alpha * b (``add(a, b, alpha=...)``; the same node as ``a + b`` in torch; alpha is a keyword, so that
    next_functions lists the two operands only, as torch's)."""

    node_name = "AddBackward0"
    _scalar_edges = True
    array_backward = True

    @staticmethod
    def forward(ctx, a, b, alpha):
        a, b, d = promote(a, b)
        ctx.alpha = alpha
        if d is _F16 and alpha.__class__ in (float, int):
            return _half_alpha(a, b, alpha, 1)
        if d.kind == "b":   # bool arithmetic: alpha is read as a bool, + is "or"
            return np.asarray(np.logical_or(a, np.logical_and(b, bool(alpha))))
        r = a + alpha * b
        return r if r.ndim < 3 else laid_out_as_torch(r, a, b)

    @staticmethod
    def backward(ctx, grad):
        return grad, grad * _conj_number(ctx.alpha)

    @staticmethod
    def jvp(ctx, ta, tb, _=None):
        return add_tangents(ta, None if tb is None else tb * _alpha(ctx))


class Sub(Primitive):
    """a - b, broadcasting."""

    _scalar_edges = True
    array_backward = True

    @staticmethod
    def forward(ctx, a, b):
        _sub_check(a, b)
        a, b, _ = promote(a, b)
        r = a - b
        return r if r.ndim < 3 else laid_out_as_torch(r, a, b)

    @staticmethod
    def backward(ctx, grad):
        return grad, -grad

    @staticmethod
    def jvp(ctx, ta, tb):
        return add_tangents(ta, None if tb is None else -tb)


class SubAlpha(Primitive):
    """a - alpha * b (``sub(a, b, alpha=...)``)."""

    node_name = "SubBackward0"
    _scalar_edges = True
    array_backward = True

    @staticmethod
    def forward(ctx, a, b, alpha):
        _sub_check(a, b)
        a, b, d = promote(a, b)
        ctx.alpha = alpha
        if d is _F16 and alpha.__class__ in (float, int):
            return _half_alpha(a, b, alpha, -1)
        r = a - alpha * b
        return r if r.ndim < 3 else laid_out_as_torch(r, a, b)

    @staticmethod
    def backward(ctx, grad):
        return grad, grad * -_conj_number(ctx.alpha)

    @staticmethod
    def jvp(ctx, ta, tb, _=None):
        return add_tangents(ta, None if tb is None else tb * -_alpha(ctx))


def _conj_number(v):
    """A Python number's conjugate (a complex alpha or exponent is conjugated in a backward)."""
    return v.conjugate() if isinstance(v, complex) else v


def _alpha(ctx):
    """The ``alpha`` of an add/sub call (a keyword, or the third argument)."""
    return ctx.kwargs["alpha"] if "alpha" in ctx.kwargs else ctx.inputs[2]


def _is_bool(v):
    return isinstance(v, bool) or (isinstance(v, np.ndarray) and v.dtype == np.bool_)


def _sub_check(a, b):
    if _is_bool(a) and _is_bool(b):
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not supported. "
                           "Use the `^` or `logical_xor()` operator instead.")
    if _is_bool(a) or _is_bool(b):
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported. If you are "
                           "trying to invert a mask, use the `~` or `logical_not()` operator instead.")


class RsubTensor(Primitive):
    """b - a for a Tensor b (``a.__rsub__(b)`` called explicitly: torch's RsubBackward0)."""

    node_name = "RsubBackward0"
    _scalar_edges = True
    array_backward = True

    @staticmethod
    def forward(ctx, a, b):
        _sub_check(b, a)
        a, b, _ = promote(a, b)
        return b - a

    @staticmethod
    def backward(ctx, grad):
        return -grad, grad

    @staticmethod
    def jvp(ctx, ta, tb):
        return add_tangents(None if ta is None else -ta, tb)


class Rsub(Primitive):
    """number - a (Python's ``2 - x``)."""

    node_name = "RsubBackward1"
    array_backward = True

    @staticmethod
    @_quiet
    def forward(ctx, a, b):
        _sub_check(b, a)
        a, b, _ = promote(a, b)
        return np.asarray(b - a)

    @staticmethod
    def backward(ctx, grad):
        return -grad, None

    @staticmethod
    def jvp(ctx, ta, _):
        return -ta


class Mul(Primitive):
    """a * b, broadcasting."""

    _pack_order = (1, 0)      # (saved-tensor hooks see the second operand first, as torch's)
    _scalar_edges = True
    array_backward = True

    @staticmethod
    @_quiet
    def forward(ctx, a, b):
        a0, b0 = a, b
        a, b, d = promote(a, b)
        if d.kind == "c":
            ctx._cplx = True         # backward multiplies by the conjugates (torch's convention)
        ctx.save_crossed(0, 1)       # each operand only for the other's gradient
        if d is _F16:
            half = _half_and_number(a0, b0) or (None if a0.__class__ is np.ndarray else _half_and_number(b0, a0))
            if half is not None:
                return np.asarray(half[0] * half[1]).astype(_F16)
        r = np.asarray(a * b)
        return r if r.ndim < 3 else laid_out_as_torch(r, a, b)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        need = ctx.needs_input_grad
        if ctx._cplx:
            a, b = (cj(a) if need[1] else None), (cj(b) if need[0] else None)
        return (grad * b if need[0] else None), (grad * a if need[1] else None)

    @staticmethod
    def jvp(ctx, ta, tb):                 # the product rule
        a, b = ctx.inputs
        return add_tangents(None if ta is None else ta * b, None if tb is None else a * tb)


class Div(Primitive):
    """a / b (true division: integers give the default float dtype)."""

    _pack_order = (1, 0)      # (saved-tensor hooks see the second operand first, as torch's)
    _scalar_edges = True
    array_backward = True

    @staticmethod
    def forward(ctx, a, b):
        a0, b0 = a, b
        a, b, d = promote(a, b)
        if d is _F16 and (half := _half_and_number(a0, b0)) is not None:
            ctx.save_inputs(0 if ctx.needs_input_grad[1] else None, 1)
            return np.asarray(half[0] / half[1]).astype(_F16)
        if d.kind != "f":
            if d.kind == "c":
                ctx._cplx = True
            else:
                f = _dtype.get_default_dtype().np
                a, b = np.asarray(a, f), np.asarray(b, f)
        ctx.save_inputs(0 if ctx.needs_input_grad[1] else None, 1)   # (a only for b's gradient, as torch's)
        r = np.asarray(np.true_divide(a, b))      # (NumPy's warnings are off: apply)
        return r if r.ndim < 3 else laid_out_as_torch(r, a, b)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        need = ctx.needs_input_grad
        if ctx._cplx:
            a, b = (cj(a) if need[1] else None), cj(b)
        ga = grad / b if need[0] else None
        gb = -grad * ((a / b) / b) if need[1] else None   # torch's order of operations (same rounding)
        return ga, gb

    @staticmethod
    def jvp(ctx, ta, tb):                 # (ta - (a / b) tb) / b
        b = ctx.inputs[1]
        return add_tangents(None if ta is None else ta / b, None if tb is None else -tb * (ctx.result / b))


def _floor_div_np(a, b, d):
    _real_only("div_floor_cpu", d)
    _int_zero_check(b, d)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return np.asarray(np.floor_divide(a, b))


def _trunc_div_np(a, b, d):
    _real_only("div_trunc_cpu", d)
    _int_zero_check(b, d)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if d.kind in "fc":
            return np.asarray(np.trunc(np.true_divide(a, b)))
        if d.kind == "b":
            return np.asarray(np.logical_and(a, b))
        q = np.floor_divide(a, b)
        fix = (np.remainder(a, b) != 0) & ((np.asarray(a) < 0) != (np.asarray(b) < 0))
        return np.asarray(q + fix.astype(q.dtype))


class DivRounded(Primitive):
    """``div`` with ``rounding_mode`` "trunc" or "floor": piecewise constant, so its gradient is ``grad * 0``."""

    node_name = "DivBackward2"
    _scalar_edges = True

    @staticmethod
    def forward(ctx, a, b, rounding_mode):
        a, b, d = promote(a, b)
        if rounding_mode == "trunc":
            return _trunc_div_np(a, b, d)
        if rounding_mode == "floor":
            return _floor_div_np(a, b, d)
        raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
                           f"'{rounding_mode}'")

    @staticmethod
    def backward(ctx, grad):
        need = ctx.needs_input_grad
        return (grad * 0 if need[0] else None), (grad * 0 if need[1] else None), None


def _no_derivative(name, aten):
    """A node for an op torch has no derivative for: its grad_fn is ``NotImplemented``; backward raises."""

    def backward(ctx, grad):
        raise RuntimeError(f"derivative for aten::{aten} is not implemented")
    return backward


class FloorDivide(Primitive):
    """``a // b`` (floor rounding); torch defines no derivative (grad_fn ``NotImplemented``)."""

    node_name = "NotImplemented"
    _scalar_edges = True

    @staticmethod
    def forward(ctx, a, b):
        a, b, d = promote(a, b)
        return _floor_div_np(a, b, d)

    backward = staticmethod(_no_derivative("FloorDivide", "floor_divide"))


class Neg(Primitive):
    """-a."""

    array_backward = True

    @staticmethod
    def forward(ctx, a):
        if a.dtype == np.bool_:
            raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If you are trying "
                               "to invert a mask, use the `~` or `logical_not()` operator instead.")
        return np.negative(a)

    @staticmethod
    def backward(ctx, grad):
        return -grad

    jvp = staticmethod(linear_jvp)


def _int_pow(a, e):
    """Integer power as torch computes it: negative exponents give 0 except for bases 1 and -1."""
    a, e = np.asarray(a), np.asarray(e)
    with np.errstate(over="ignore"):
        pos = np.power(a, np.maximum(e, 0).astype(np.result_type(a, e)))
    if not np.any(e < 0):
        return pos
    odd = (e % 2) != 0
    neg = np.where(a == 1, 1, np.where(a == -1, np.where(odd, -1, 1), 0)).astype(pos.dtype)
    return np.asarray(np.where(e < 0, neg, pos))


def _pow_np(a, e, d):
    if d.kind in "iu":
        return _int_pow(a, e)
    _no_bool("pow", d)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if d.kind == "f" and e.__class__ is not np.ndarray and e in (3, -2, -0.5):
            return np.asarray(_pow_special(a, e))
        return np.asarray(np.power(a, e))


def _pow_special(a, e):
    """torch's float kernel computes three exponents by formula, rounding each step (NumPy's power rounds once):
    ``x * x * x`` for 3 (Beale's ``y ** 3`` differs in the last bit for a third of the values), ``1 / (x * x)``
    for -2, ``1 / sqrt(x)`` for -0.5."""
    if e == 3:
        return a * a * a
    if e == -2:
        return 1 / (a * a)
    return 1 / np.sqrt(a)


def _pow_array(a, e):
    """``a ** e`` of a backward's array as torch's ``pow`` kernel computes it (``a`` may be a Tensor)."""
    if a.__class__ is np.ndarray and a.dtype.kind == "f" and e in (3, -2, -0.5):
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            return _pow_special(a, e)
    return a ** e


class Pow(Primitive):
    """tensor ** number."""

    array_backward = True

    @staticmethod
    def forward(ctx, a, exponent):
        a, e, d = promote(a, exponent)
        if d.kind in "iu" and isinstance(exponent, (int, np.integer)):
            if exponent < 0:
                raise RuntimeError("Integers to negative integer powers are not allowed.")
            _dtype.check_scalar(int(exponent), _dtype.from_numpy_dtype(d))   # (torch's overflow error)
        ctx.save_inputs(0)
        ctx.exponent = exponent
        if d.kind == "c":
            ctx._cplx = True
        if d == np.bool_ and exponent in (0, 1):   # torch's shortcuts for x ** 0 and x ** 1 need no kernel
            return np.ones_like(a) if exponent == 0 else a.copy()
        return _pow_np(a, e, d)

    @staticmethod
    def backward(ctx, grad):
        a, = ctx.saved_tensors
        e = ctx.exponent
        if e == 0:
            return (_zeros_like(grad) if grad.__class__ is Tensor else np.zeros_like(grad)), None
        if ctx._cplx:               # grad * conj(e a^(e-1))
            return grad * cj(e * a ** (e - 1)), None
        return grad * (e * _pow_array(a, e - 1)), None

    @staticmethod
    def jvp(ctx, ta, _):
        a, e = ctx.inputs
        return None if e == 0 else ta * (e * _pow_array(a, e - 1))


class PowTensor(Primitive):
    """tensor ** tensor."""

    _pack_order = (2, 1, 0)      # (saved-tensor hooks see the exponent first, then the base, as torch's)
    node_name = "PowBackward1"

    @staticmethod
    def forward(ctx, a, b):
        a, b, d = promote(a, b)
        if d.kind == "c":
            ctx._cplx = True
        ctx.save_result(0, 1)
        r = _pow_np(a, b, d)
        return r if r.ndim < 3 else laid_out_as_torch(r, a, b)

    @staticmethod
    def backward(ctx, grad):
        result, a, b = ctx.saved_tensors
        need = ctx.needs_input_grad
        c = cj if ctx._cplx else _same      # (complex: grad times the conjugate derivative)
        ga = gb = None
        if need[0]:
            ga = _w(b._array == 0, 0.0, grad * c(b * a ** (b - 1)))
        if need[1]:
            # d(a^b)/db = a^b log a, taken as 0 where a == 0 and b >= 0 (torch's convention; complex b: Re b >= 0)
            ga_mask = (a._array == 0) & (b._array.real >= 0)
            gb = grad * _w(ga_mask, 0.0, c(result * log(a)))
        return ga, gb


def _same(x):
    return x


class RPow(Primitive):
    """number ** tensor."""

    node_name = "PowBackward2"

    @staticmethod
    def forward(ctx, b, base):
        b, base_, d = promote(b, base)
        if d.kind == "c":
            ctx._cplx = True
        ctx.save_result(0)
        ctx.base = base
        return _pow_np(base_, b, d)

    @staticmethod
    def backward(ctx, grad):
        result, b = ctx.saved_tensors
        base = ctx.base
        if ctx._cplx:               # grad * conj(base^b log(base)), the principal logarithm
            log_base = complex(np.log(complex(base))) if base != 0 else float("-inf")
            if base == 0:
                return grad * _w(b._array.real >= 0, 0.0, cj(result * log_base)), None
            return grad * cj(result * log_base), None
        with np.errstate(divide="ignore", invalid="ignore"):
            log_base = float(np.log(float(base))) if base > 0 else float("nan") if base < 0 else float("-inf")
        if base == 0:
            return grad * _w(b._array >= 0, 0.0, result * log_base), None
        return grad * (result * log_base), None


def _checked_alpha(alpha, input, other):  # noqa: A002
    """A non-int ``alpha`` of add/sub as torch's alpha_check takes it: a NumPy scalar is a Python number (np.bool_
    a float, as torch reads it; its float64 must not promote the arrays); a bool alpha needs a bool result, a
    float one a floating result, a complex one a complex result."""
    if isinstance(alpha, np.generic):
        alpha = float(alpha) if isinstance(alpha, np.bool_) else alpha.item()
    kind = _dtype.result_type(input, other).np.kind
    if alpha.__class__ is bool and kind != "b":
        raise RuntimeError("Boolean alpha only supported for Boolean results.")
    if alpha.__class__ is float and kind in "iub":
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating point number.")
    if alpha.__class__ is complex and kind != "c":
        raise RuntimeError("For non-complex input tensors, argument alpha must not be a complex number.")
    return alpha


@_with_out
def add(input, other, *deprecated, alpha=1):  # noqa: A002
    """``input + alpha * other``, broadcasting (``add(input, alpha, other)``: torch's deprecated order).

    >>> tapegrad.add(tapegrad.tensor([1., 2.]), 2)
    tensor([3., 4.])
    """
    if deprecated:
        alpha, (other,) = other, scalar_first("add", other, deprecated, "alpha", ("other",))
    if alpha.__class__ is not int:
        alpha = _checked_alpha(number_arg("add", "alpha", alpha), input, other)
    return AddAlpha.apply(input, other, alpha=alpha) if alpha != 1 else Add.apply(input, other)


@_with_out
def sub(input, other, *deprecated, alpha=1):  # noqa: A002
    """``input - alpha * other``, broadcasting (``sub(input, alpha, other)``: torch's deprecated order).

    >>> tapegrad.sub(tapegrad.tensor([1., 2.]), 1)
    tensor([0., 1.])
    """
    if deprecated:
        alpha, (other,) = other, scalar_first("sub", other, deprecated, "alpha", ("other",))
    if alpha.__class__ is not int:
        alpha = _checked_alpha(number_arg("sub", "alpha", alpha), input, other)
    return SubAlpha.apply(input, other, alpha=alpha) if alpha != 1 else Sub.apply(input, other)


@_with_out
def mul(input, other):  # noqa: A002
    """``input * other``, broadcasting.

    >>> tapegrad.mul(tapegrad.tensor([1., 2.]), 3)
    tensor([3., 6.])
    """
    return Mul.apply(input, other)


@_with_out
def div(input, other, *, rounding_mode=None):  # noqa: A002
    """``input / other``; ``rounding_mode`` "trunc" or "floor" gives integer-valued results.

    >>> tapegrad.div(tapegrad.tensor([5., -5.]), 2, rounding_mode="floor")
    tensor([ 2., -3.])
    """
    if rounding_mode is None:
        return Div.apply(input, other)
    return DivRounded.apply(input, other, rounding_mode)


@_with_out
def floor_divide(input, other):  # noqa: A002
    """``input // other``: division rounded towards minus infinity (no derivative, as in torch).

    >>> tapegrad.floor_divide(tapegrad.tensor([5, -5]), 2)
    tensor([ 2, -3])
    """
    return FloorDivide.apply(input, other)


@_with_out(**SAME_AS_INPUT)
def neg(input):  # noqa: A002
    """``-input``.

    >>> tapegrad.neg(tapegrad.tensor([1., -2.]))
    tensor([-1.,  2.])
    """
    return Neg.apply(input)


@_with_out
def pow(input, exponent):  # noqa: A001,A002 - torch's name
    """``input ** exponent``; either may be a Python number.

    >>> tapegrad.pow(tapegrad.tensor([2., 3.]), 2)
    tensor([4., 9.])
    """
    if isinstance(exponent, Tensor):
        if isinstance(input, Tensor):
            return PowTensor.apply(input, exponent)
        return RPow.apply(exponent, input)
    if not isinstance(input, Tensor):
        raise _two_numbers("pow", input, exponent, "exponent", self_out=True)
    return Pow.apply(input, exponent)


@_with_out(dtype="same",
           error="the output given to float_power has dtype {o} but the operation's result requires dtype {r}")
def float_power(input, exponent):  # noqa: A002
    """``input ** exponent`` computed in double precision (float64, or complex128 for complex operands).

    >>> tapegrad.float_power(tapegrad.tensor([2, 3]), 2)
    tensor([4., 9.], dtype=tapegrad.float64)
    """
    if not isinstance(input, Tensor) and not isinstance(exponent, Tensor):
        raise _two_numbers("float_power", input, exponent, "exponent", self_out=True)
    cplx = any((isinstance(v, Tensor) and v.is_complex()) or isinstance(v, complex) for v in (input, exponent))
    d = _dtype.complex128 if cplx else _dtype.float64

    def up(v):
        if isinstance(v, Tensor):
            return to(v, d)
        return complex(v) if cplx else float(v)
    return pow(up(input), up(exponent))


@_with_out
def square(input):  # noqa: A002
    """``input ** 2`` (integers stay integers).

    >>> tapegrad.square(tapegrad.tensor([3.]))
    tensor([9.])
    """
    if input.dtype is _dtype.bool:
        return Pow.apply(to(input, _dtype.int64), 2)
    return Pow.apply(input, 2)


subtract, multiply, divide, true_divide, negative = sub, mul, div, div, neg


def _rtruediv(self, other):
    return Mul.apply(Reciprocal.apply(self), other)


def _rpow(self, other):
    # a Tensor reaches here only through an explicit x.__rpow__(t) (torch: pow(t, x))
    return pow(other, self) if isinstance(other, Tensor) else RPow.apply(self, other)


def _rsub(self, other):
    return RsubTensor.apply(self, other) if isinstance(other, Tensor) else Rsub.apply(self, other)


def _float_power_(self, exponent):
    if self.dtype is not _dtype.float64 and self.dtype is not _dtype.complex128:
        raise RuntimeError(f"the base given to float_power_ has dtype {self.dtype._legacy} but the operation's "
                           "result requires dtype Double")
    return apply_inplace(self, float_power, exponent)


def add_(self, other, *deprecated, alpha=1):
    if deprecated:
        alpha, (other,) = other, scalar_first("add_", other, deprecated, "alpha", ("other",))
    if alpha.__class__ is not int:
        alpha = number_arg("add_", "alpha", alpha)
    return apply_inplace(self, add, other, alpha=alpha)


def sub_(self, other, *deprecated, alpha=1):
    if deprecated:
        alpha, (other,) = other, scalar_first("sub_", other, deprecated, "alpha", ("other",))
    if alpha.__class__ is not int:
        alpha = number_arg("sub_", "alpha", alpha)
    return apply_inplace(self, sub, other, alpha=alpha)


def mul_(self, other):
    return apply_inplace(self, mul, other)


def div_(self, other, *, rounding_mode=None):
    return apply_inplace(self, div, other, rounding_mode=rounding_mode)


def pow_(self, exponent):
    return apply_inplace(self, pow, exponent)


def neg_(self):
    return apply_inplace(self, neg)


def _rfloordiv(self, other):
    return FloorDivide.apply(other, self)


def _pos(self):
    if self.dtype is _dtype.bool:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return self


negative_ = neg_
square_, floor_divide_ = _inplace(square), _inplace(floor_divide)

bind(
    # operators go straight to the op's apply (no out= / alpha parsing on the hottest path)
    __add__=lambda self, other: Add.apply(self, other),
    __radd__=lambda self, other: Add.apply(other, self) if isinstance(other, Tensor) else
    Add.apply(self, other),
    __sub__=lambda self, other: Sub.apply(self, other), __rsub__=_rsub,
    __mul__=lambda self, other: Mul.apply(self, other), __rmul__=lambda self, other: Mul.apply(self, other),
    __truediv__=lambda self, other: Div.apply(self, other), __rtruediv__=_rtruediv, __rdiv__=_rtruediv, __div__=div,
    __floordiv__=floor_divide, __rfloordiv__=_rfloordiv, __pow__=pow, __rpow__=_rpow, __neg__=neg, __pos__=_pos,
    __iadd__=_iop(add), __isub__=_iop(sub), __imul__=_iop(mul), __itruediv__=_iop(div), __ipow__=_iop(pow),
    __ifloordiv__=_iop(floor_divide),
    add=add, sub=sub, subtract=sub, mul=mul, multiply=mul, div=div, divide=div, true_divide=div, neg=neg,
    negative=neg, pow=pow, float_power=float_power, floor_divide=floor_divide, square=square,
    add_=add_, sub_=sub_, subtract_=sub_, mul_=mul_, multiply_=mul_, div_=div_, divide_=div_, true_divide_=div_,
    pow_=pow_, float_power_=_float_power_, neg_=neg_, negative_=neg_, floor_divide_=floor_divide_,
    square_=square_,
)
