"""More elementwise math: logaddexp / logaddexp2, deg2rad / rad2deg, gcd / lcm, heaviside, frexp / ldexp,
nextafter, the bit shifts (``<<`` / ``>>``), positive, rsub, and torch's top-level fill / fill_ / zero_.
"""

from __future__ import annotations

import math

import numpy as np

from ... import _dtype
from ...autograd.function import _active
from .._util import Primitive, Tensor, _inside, array_op, bind, cj, promote, unary
from ._common import (_LN2, _cast_all, _inplace, _iop, _need_tensor, _not_implemented, _result, _two_numbers, _w,
                      _with_out,
                      _zeros_like)
from .arith import _no_derivative, _sub_check
from .copies import FillScalar, FillTensor, fill_ as _fill_method, zero_ as _zero_method


# --- logaddexp, logaddexp2 ------------------------------------------------------------------------------------
def _logaddexp_np(a, b, base2):
    if a.dtype.kind == "c":        # complex (logaddexp only): the larger real part factored out
        big = np.where(a.real >= b.real, a, b)
        small = np.where(a.real >= b.real, b, a)
        return np.asarray(big + np.log1p(np.exp(small - big)))
    return np.asarray(np.logaddexp2(a, b) if base2 else np.logaddexp(a, b))


def _logaddexp_cls(name, base2):
    kernel = f"{name.lower()}_cpu"

    class LogAddExp(Primitive):
        @staticmethod
        def forward(ctx, a, b):
            d = _result(a, b)
            if d.kind in "iub" or (base2 and d.kind == "c"):
                raise _not_implemented(kernel, d)
            a, b = _cast_all((a, b), d)
            ctx.save_inputs(0, 1)
            if d.kind == "c":
                ctx._cplx = True
            return _logaddexp_np(a, b, base2)

        @staticmethod
        def backward(ctx, grad):
            # d/da log(e^a + e^b) = 1 / (1 + e^(b - a)); base 2: 1 / (1 + 2^(b - a)) (torch's formula, so the
            # second derivative is NaN where torch's is, e^(b - a) overflowing)
            a, b = ctx.saved_tensors
            if ctx._cplx:
                a, b = cj(a), cj(b)
            need = ctx.needs_input_grad
            p = (lambda t: t.exp2()) if base2 else (lambda t: t.exp())
            return (grad / (1 + p(b - a)) if need[0] else None), (grad / (1 + p(a - b)) if need[1] else None)

    LogAddExp.__name__ = LogAddExp.__qualname__ = name
    LogAddExp.__doc__ = f"``log{'2' if base2 else ''}({'2**a + 2**b' if base2 else 'exp(a) + exp(b)'})`` without " \
                        "overflow."
    return LogAddExp


Logaddexp = _logaddexp_cls("Logaddexp", False)
Logaddexp2 = _logaddexp_cls("Logaddexp2", True)


@_with_out
def logaddexp(input, other):  # noqa: A002
    """``log(exp(input) + exp(other))`` without overflow (float and complex tensors).

    >>> tapegrad.logaddexp(tapegrad.tensor([0.]), tapegrad.tensor([0.]))
    tensor([0.6931])
    """
    _need_tensor("logaddexp", "input", 1, input)
    _need_tensor("logaddexp", "other", 2, other)
    return Logaddexp.apply(input, other)


@_with_out
def logaddexp2(input, other):  # noqa: A002
    """``log2(2**input + 2**other)`` without overflow (float tensors).

    >>> tapegrad.logaddexp2(tapegrad.tensor([1.]), tapegrad.tensor([1.]))
    tensor([2.])
    """
    _need_tensor("logaddexp2", "input", 1, input)
    _need_tensor("logaddexp2", "other", 2, other)
    return Logaddexp2.apply(input, other)


# --- deg2rad, rad2deg -------------------------------------------------------------------------------------------
def _angle_cls(name, factor):
    def fwd(x):
        if x.dtype.kind == "c":
            raise RuntimeError(f"{name.lower()} is not supported for complex tensors.")
        return np.asarray(x * x.dtype.type(factor))
    return unary(name, fwd, lambda grad, x, r: grad * factor, save="none", array_backward=True)


Deg2Rad = _angle_cls("Deg2Rad", math.pi / 180)
Rad2Deg = _angle_cls("Rad2Deg", 180 / math.pi)


@_with_out
def deg2rad(input):  # noqa: A002
    """Degrees to radians (integer input gives the default float dtype).

    >>> tapegrad.deg2rad(tapegrad.tensor([180.]))
    tensor([3.1416])
    """
    _need_tensor("deg2rad", "input", 1, input)
    return Deg2Rad.apply(input)


@_with_out
def rad2deg(input):  # noqa: A002
    """Radians to degrees (integer input gives the default float dtype).

    >>> tapegrad.rad2deg(tapegrad.tensor([3.141592653589793]))
    tensor([180.])
    """
    _need_tensor("rad2deg", "input", 1, input)
    return Rad2Deg.apply(input)


# --- gcd, lcm, heaviside (no gradient) -------------------------------------------------------------------------
def _integer_op(name, np_fn, input, other):  # noqa: A002
    _need_tensor(name, "input", 1, input)
    _need_tensor(name, "other", 2, other)
    a, b, d = promote(input._array, other._array)
    if d.kind not in "iu":
        raise _not_implemented(f"{name}_cpu", d)
    return Tensor._make(np.asarray(np_fn(a, b)).astype(d, copy=False))


@_with_out
def gcd(input, other):  # noqa: A002
    """The greatest common divisor, elementwise (integer tensors; ``gcd(0, 0) == 0``).

    >>> tapegrad.gcd(tapegrad.tensor([12, 18]), tapegrad.tensor([8, 12]))
    tensor([4, 6])
    """
    if _active[0] and not _inside[0]:      # (a transform sees it as an op)
        return array_op(gcd, True, (input, other))
    return _integer_op("gcd", np.gcd, input, other)


@_with_out
def lcm(input, other):  # noqa: A002
    """The least common multiple, elementwise (integer tensors; non-negative, as torch's).

    >>> tapegrad.lcm(tapegrad.tensor([4, 6]), tapegrad.tensor([6, 4]))
    tensor([12, 12])
    """
    if _active[0] and not _inside[0]:      # (a transform sees it as an op)
        return array_op(lcm, True, (input, other))
    return _integer_op("lcm", np.lcm, input, other)


class Heaviside(Primitive):
    """The step function; torch defines no derivative (grad_fn ``NotImplemented``)."""

    node_name = "NotImplemented"

    @staticmethod
    def forward(ctx, x, values):
        zero = np.zeros((), x.dtype)
        return np.asarray(np.where(x == zero, values, (x > zero).astype(x.dtype)), x.dtype)

    backward = staticmethod(_no_derivative("Heaviside", "heaviside"))


@_with_out(dtype="same", error=lambda r, o: RuntimeError(
    f"heaviside is not yet implemented for {'complex tensors' if o.is_complex else 'tensors with different dtypes'}."))
def heaviside(input, values):  # noqa: A002
    """0 where ``input < 0``, ``values`` where ``input == 0``, 1 where ``input > 0`` (same dtypes; no gradient).

    >>> tapegrad.heaviside(tapegrad.tensor([-1., 0., 2.]), tapegrad.tensor([0.5]))
    tensor([0.0000, 0.5000, 1.0000])
    """
    _need_tensor("heaviside", "input", 1, input)
    _need_tensor("heaviside", "values", 2, values)
    if input.is_complex() or values.is_complex():
        raise RuntimeError("heaviside is not yet implemented for complex tensors.")
    if input.dtype is not values.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")
    return Heaviside.apply(input, values)


# --- frexp, ldexp, nextafter ----------------------------------------------------------------------------------
class Frexp(Primitive):
    """(mantissa, exponent) with ``input == mantissa * 2**exponent``, ``|mantissa|`` in [0.5, 1)."""

    @staticmethod
    def forward(ctx, x):
        m, e = np.frexp(x)
        e = e.astype(np.int32)
        ctx.exponent = e
        ctx.mark_non_differentiable(e)
        return np.asarray(m, x.dtype), e

    @staticmethod
    def backward(ctx, grad, _ge):
        # torch's grad / exp2(exponent), the int32 exponent's exp2 in the default float dtype (it overflows there
        # for float64 inputs beyond float32's range, as torch's)
        scale = np.exp2(ctx.exponent.astype(_dtype.get_default_dtype().np))
        return grad / Tensor._make(scale)


def frexp(input, *, out=None):  # noqa: A002
    """Split floats into mantissa and int32 exponent: ``torch.return_types.frexp(mantissa, exponent)``.

    >>> tapegrad.frexp(tapegrad.tensor([8.])).exponent
    tensor([4], dtype=tapegrad.int32)
    """
    from ..reduce._common import _write_out, return_types
    _need_tensor("frexp", "input", 1, input)
    if not input.is_floating_point():
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    return _write_out("frexp", return_types.frexp(*Frexp.apply(input)), out, dtype="same",
                      error=["torch.frexp() expects mantissa to have dtype {rc} but got {oc}",
                             "torch.frexp() expects exponent to have int dtype but got {oc}"])


class Ldexp(Primitive):
    """``input * 2**other``."""

    @staticmethod
    def forward(ctx, x, e):
        d = _result(x, e, floating=True)
        x, e = _cast_all((x, e), d)
        ctx.save_inputs(0, 1)
        return np.asarray(x * np.exp2(e))

    @staticmethod
    def backward(ctx, grad):
        x, e = ctx.saved_tensors
        need = ctx.needs_input_grad
        if e.is_floating_point():
            scale = e.exp2()
        else:   # torch's formula takes 2**other in the exponent's integer dtype: 0 for a negative exponent
            ea = e._array
            scale = Tensor._make(np.where(ea >= 0, np.exp2(ea.astype(grad._array.dtype)), 0).astype(grad._array.dtype))
        return (grad * scale if need[0] else None), (grad * x * scale * _LN2 if need[1] else None)


@_with_out
def ldexp(input, other):  # noqa: A002
    """``input * 2**other`` (a float result).

    >>> tapegrad.ldexp(tapegrad.tensor([1.]), tapegrad.tensor([3]))
    tensor([8.])
    """
    _need_tensor("ldexp", "input", 1, input)
    _need_tensor("ldexp", "other", 2, other)
    return Ldexp.apply(input, other)


class Nextafter(Primitive):
    """The next float after ``input`` towards ``other`` (torch's gradient: 1 for input where it differs from
    ``other``, else 0; 0 for ``other``)."""

    @staticmethod
    def forward(ctx, a, b):
        a, b, d = promote(a, b)
        if d.kind != "f":
            raise _not_implemented("nextafter_cpu", d)
        ctx.differs = np.asarray(a != b)
        return np.asarray(np.nextafter(a, b))

    @staticmethod
    def backward(ctx, grad):
        need = ctx.needs_input_grad
        return (_w(ctx.differs, grad, 0.0) if need[0] else None), (_zeros_like(grad) if need[1] else None)


@_with_out
def nextafter(input, other):  # noqa: A002
    """The next representable float after ``input`` in the direction of ``other``.

    >>> tapegrad.nextafter(tapegrad.tensor([1.], dtype=tapegrad.float64), tapegrad.tensor([2.])) > 1
    tensor([True])
    """
    _need_tensor("nextafter", "input", 1, input)
    _need_tensor("nextafter", "other", 2, other)
    return Nextafter.apply(input, other)


# --- bit shifts -------------------------------------------------------------------------------------------------
def _shift(a, b, left):
    """torch's shifts: a shift by a negative amount or by the width or more gives 0 (left) or the sign (right)."""
    a, b, d = promote(a, b)
    if d.kind not in "iu":
        raise _not_implemented("lshift_cpu" if left else "rshift_cpu", d)
    a, b = np.asarray(a), np.asarray(b)
    bits = d.itemsize * 8
    out_of_range = (b < 0) | (b >= bits)
    s = np.where(out_of_range, 0, b).astype(d)
    if left:
        r = np.where(out_of_range, np.zeros((), d), np.left_shift(a, s))
    else:
        r = np.where(out_of_range, np.where(a < 0, d.type(-1) if d.kind == "i" else 0, 0).astype(d),
                     np.right_shift(a, s))
    return Tensor._make(np.asarray(r, d))


def _operand(x):
    return x._array if isinstance(x, Tensor) else x


@_with_out
def bitwise_left_shift(input, other):  # noqa: A002
    """``input << other`` for integer tensors (either may be a number).

    >>> tapegrad.bitwise_left_shift(tapegrad.tensor([1, 2]), 2)
    tensor([4, 8])
    """
    if _active[0] and not _inside[0]:      # (a transform sees it as an op)
        return array_op(bitwise_left_shift, True, (input, other))
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        raise _two_numbers("bitwise_left_shift", input, other)
    return _shift(_operand(input), _operand(other), True)


@_with_out
def bitwise_right_shift(input, other):  # noqa: A002
    """``input >> other`` for integer tensors (arithmetic: the sign is kept).

    >>> tapegrad.bitwise_right_shift(tapegrad.tensor([-8, 8]), 2)
    tensor([-2,  2])
    """
    if _active[0] and not _inside[0]:      # (a transform sees it as an op)
        return array_op(bitwise_right_shift, True, (input, other))
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        raise _two_numbers("bitwise_right_shift", input, other)
    return _shift(_operand(input), _operand(other), False)


# --- positive, rsub -----------------------------------------------------------------------------------------
def positive(input):  # noqa: A002
    """``+input``: the tensor itself (an error for bool).

    >>> tapegrad.positive(tapegrad.tensor([-1.]))
    tensor([-1.])
    """
    _need_tensor("positive", "input", 1, input)
    if input.dtype is _dtype.bool:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


class Rsub(Primitive):
    """``other - alpha * input`` (``rsub(input, other)``; ``other`` a tensor)."""

    node_name = "RsubBackward0"

    @staticmethod
    def forward(ctx, a, b, alpha):
        _sub_check(b, a)
        a, b, _ = promote(a, b)
        ctx.alpha = alpha
        return np.asarray(b - alpha * a) if alpha != 1 else np.asarray(b - a)

    @staticmethod
    def backward(ctx, grad):
        need = ctx.needs_input_grad
        alpha = ctx.alpha.conjugate() if isinstance(ctx.alpha, complex) else ctx.alpha
        return (-grad * alpha if need[0] else None), (grad if need[1] else None), None



class RsubScalar(Rsub):
    """``number - alpha * input``."""

    node_name = "RsubBackward1"



@_with_out
def rsub(input, other, *, alpha=1):  # noqa: A002
    """``other - alpha * input`` (``other`` a tensor or a number).

    >>> tapegrad.rsub(tapegrad.tensor([1., 2.]), 5)
    tensor([4., 3.])
    """
    _need_tensor("rsub", "input", 1, input)
    if isinstance(alpha, float) and _result(input._array, _operand(other)).kind in "iub":
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating point number.")
    if isinstance(other, Tensor):
        return Rsub.apply(input, other, alpha)
    return RsubScalar.apply(input, other, alpha)


# --- top-level fill / fill_ / zero_ ---------------------------------------------------------------------------
class Fill(FillScalar):
    """``torch.fill(input, number)``: a new tensor (FillBackward0)."""

    node_name = "FillBackward0"


class FillValue(FillTensor):
    """``torch.fill(input, value_tensor)``: a new tensor (FillBackward1); the 0-d value gets the summed gradient."""

    node_name = "FillBackward1"


def fill(input, value):  # noqa: A002
    """A new tensor of ``input``'s shape and dtype filled with ``value`` (a number or a 0-d tensor).

    >>> tapegrad.fill(tapegrad.zeros(2), 3.)
    tensor([3., 3.])
    """
    _need_tensor("fill", "input", 1, input)
    if isinstance(value, Tensor):
        if value._array.ndim:
            raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with "
                               f"{value._array.ndim} dimensions.")
        return FillValue.apply(input, value)
    return Fill.apply(input, _dtype.fill_scalar(value, input.dtype, halves=False))


def fill_(input, value):  # noqa: A002
    """``input.fill_(value)`` (torch.fill_).

    >>> tapegrad.fill_(tapegrad.zeros(2), 1.)
    tensor([1., 1.])
    """
    return _fill_method(input, value)


def zero_(input):  # noqa: A002
    """``input.zero_()`` (torch.zero_).

    >>> tapegrad.zero_(tapegrad.ones(2))
    tensor([0., 0.])
    """
    return _zero_method(input)


deg2rad_, rad2deg_, gcd_, lcm_, heaviside_, ldexp_, nextafter_ = (_inplace(f) for f in (
    deg2rad, rad2deg, gcd, lcm, heaviside, ldexp, nextafter))
bitwise_left_shift_, bitwise_right_shift_ = _inplace(bitwise_left_shift), _inplace(bitwise_right_shift)


def _rshift_op(fn):
    def op(self, other):
        return fn(other, self)
    return op


bind(
    logaddexp=logaddexp, logaddexp2=logaddexp2, deg2rad=deg2rad, rad2deg=rad2deg, gcd=gcd, lcm=lcm,
    heaviside=heaviside, frexp=frexp, ldexp=ldexp, nextafter=nextafter, bitwise_left_shift=bitwise_left_shift,
    bitwise_right_shift=bitwise_right_shift, positive=positive,
    deg2rad_=deg2rad_, rad2deg_=rad2deg_, gcd_=gcd_, lcm_=lcm_, heaviside_=heaviside_, ldexp_=ldexp_,
    nextafter_=nextafter_, bitwise_left_shift_=bitwise_left_shift_, bitwise_right_shift_=bitwise_right_shift_,
    __lshift__=bitwise_left_shift, __rshift__=bitwise_right_shift,
    __rlshift__=_rshift_op(bitwise_left_shift), __rrshift__=_rshift_op(bitwise_right_shift),
    __ilshift__=_iop(bitwise_left_shift), __irshift__=_iop(bitwise_right_shift),
)
