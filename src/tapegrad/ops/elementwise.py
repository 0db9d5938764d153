"""Elementwise ops: arithmetic, math functions, activations, comparisons.

Each op is declared once: its Primitive (forward on arrays, backward in tapegrad ops, so double backward works),
its public function, its Tensor method and operator, and its in-place variant.
"""

from __future__ import annotations

import numpy as np

from .. import _dtype
from ._util import Primitive, Tensor, apply_inplace, as_float, bind, promote, unary

__all__ = [
    "add", "sub", "subtract", "mul", "multiply", "div", "divide", "true_divide", "neg", "negative", "pow",
    "exp", "log", "sqrt", "tanh", "sigmoid", "relu", "abs", "absolute",
    "eq", "ne", "lt", "le", "gt", "ge", "greater", "greater_equal", "less", "less_equal", "not_equal",
    "clone", "to",
]


def _t(x):
    """A Python number as a 0-d tensor for the rare op that needs one."""
    return x if isinstance(x, Tensor) else Tensor._make(np.asarray(x))


# --- arithmetic ---------------------------------------------------------------------------------------------
class Add(Primitive):
    """a + alpha * b, broadcasting."""

    _scalar_edges = True

    @staticmethod
    def forward(ctx, a, b, alpha=1):
        a, b, _ = promote(a, b)
        ctx.alpha = alpha
        return a + b if alpha == 1 else a + alpha * b

    @staticmethod
    def backward(ctx, grad):
        return grad, (grad if ctx.alpha == 1 else grad * ctx.alpha), None


class Sub(Primitive):
    """a - alpha * b, broadcasting."""

    _scalar_edges = True

    @staticmethod
    def forward(ctx, a, b, alpha=1):
        a, b, d = promote(a, b)
        if d == np.bool_:
            raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not supported. "
                               "Use the `^` or `logical_xor()` operator instead.")
        ctx.alpha = alpha
        return a - b if alpha == 1 else a - alpha * b

    @staticmethod
    def backward(ctx, grad):
        return grad, (-grad if ctx.alpha == 1 else grad * -ctx.alpha), None


class Rsub(Primitive):
    """number - a (Python's ``2 - x``)."""

    node_name = "RsubBackward1"

    @staticmethod
    def forward(ctx, a, b):
        a, b, _ = promote(a, b)
        return b - a

    @staticmethod
    def backward(ctx, grad):
        return -grad, None


class Mul(Primitive):
    """a * b, broadcasting."""

    _scalar_edges = True

    @staticmethod
    def forward(ctx, a, b):
        a, b, _ = promote(a, b)
        ctx.save_inputs(0, 1)
        return a * b

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        need = ctx.needs_input_grad
        return (grad * b if need[0] else None), (grad * a if need[1] else None)


class Div(Primitive):
    """a / b (true division: integers give the default float dtype)."""

    _scalar_edges = True

    @staticmethod
    def forward(ctx, a, b):
        a, b, d = promote(a, b)
        if d.kind not in "fc":
            f = _dtype.get_default_dtype().np
            a, b = np.asarray(a, f), np.asarray(b, f)
        ctx.save_inputs(0, 1)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.true_divide(a, b)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        need = ctx.needs_input_grad
        ga = grad / b if need[0] else None
        gb = -grad * a / (b * b) if need[1] else None
        return ga, gb


class Neg(Primitive):
    """-a."""

    @staticmethod
    def forward(ctx, a):
        if a.dtype == np.bool_:
            raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If you are trying "
                               "to invert a mask, use the `~` or `logical_not()` operator instead.")
        return np.negative(a)

    @staticmethod
    def backward(ctx, grad):
        return -grad


class Pow(Primitive):
    """tensor ** number."""

    @staticmethod
    def forward(ctx, a, exponent):
        a, e, _ = promote(a, exponent)
        if a.dtype.kind in "iu" and isinstance(exponent, int) and exponent < 0:
            raise RuntimeError("Integers to negative integer powers are not allowed.")
        ctx.save_inputs(0)
        ctx.exponent = exponent
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.power(a, e)

    @staticmethod
    def backward(ctx, grad):
        a, = ctx.saved_tensors
        e = ctx.exponent
        if e == 0:
            return grad * 0.0, None
        return grad * e * a ** (e - 1), None


class PowTensor(Primitive):
    """tensor ** tensor."""

    node_name = "PowBackward1"

    @staticmethod
    def forward(ctx, a, b):
        a, b, _ = promote(a, b)
        ctx.save_result(0, 1)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.power(a, b)

    @staticmethod
    def backward(ctx, grad):
        result, a, b = ctx.saved_tensors
        need = ctx.needs_input_grad
        ga = grad * b * a ** (b - 1) if need[0] else None
        if need[1]:
            # d(a^b)/db = a^b log a, taken as 0 where a == 0 and b >= 0 (torch's convention)
            gb = grad * result * (a + (a._array == 0)).log()
        else:
            gb = None
        return ga, gb


class RPow(Primitive):
    """number ** tensor."""

    node_name = "PowBackward2"

    @staticmethod
    def forward(ctx, b, base):
        b, base_, _ = promote(b, base)
        ctx.save_result()
        ctx.log_base = float(np.log(base)) if base > 0 else float("nan") if base < 0 else float("-inf")
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            return np.power(base_, b)

    @staticmethod
    def backward(ctx, grad):
        result, = ctx.saved_tensors
        return grad * result * ctx.log_base, None


def add(input, other, *, alpha=1, out=None):
    """``input + alpha * other``, broadcasting. ``tapegrad.add(x, 2)``."""
    return Add.apply(input, other, alpha) if alpha != 1 else Add.apply(input, other)


def sub(input, other, *, alpha=1, out=None):
    """``input - alpha * other``, broadcasting."""
    return Sub.apply(input, other, alpha) if alpha != 1 else Sub.apply(input, other)


def mul(input, other, *, out=None):
    """``input * other``, broadcasting."""
    return Mul.apply(input, other)


def div(input, other, *, rounding_mode=None, out=None):
    """``input / other``; ``rounding_mode`` "trunc" or "floor" gives integer-valued results."""
    if rounding_mode is None:
        return Div.apply(input, other)
    return _rounded_div(input, other, rounding_mode)


class DivRounded(Primitive):
    """``div`` with ``rounding_mode`` "trunc" or "floor": piecewise constant, so its gradient is zero."""

    node_name = "DivBackward1"
    _scalar_edges = True

    @staticmethod
    def forward(ctx, a, b, rounding_mode):
        a, b, d = promote(a, b)
        with np.errstate(divide="ignore", invalid="ignore"):
            if rounding_mode == "trunc":
                r = np.trunc(np.true_divide(a, b)) if d.kind in "fc" else np.fix(np.true_divide(a, b))
            elif rounding_mode == "floor":
                r = np.floor_divide(a, b)
            else:
                raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
                                   f"'{rounding_mode}'")
        return np.asarray(r).astype(d, copy=False)

    @staticmethod
    def backward(ctx, grad):
        need = ctx.needs_input_grad
        return (grad * 0 if need[0] else None), (grad * 0 if need[1] else None), None


def _rounded_div(input, other, rounding_mode):
    return DivRounded.apply(input, other, rounding_mode)


def neg(input, *, out=None):
    """``-input``."""
    return Neg.apply(input)


def pow(input, exponent, *, out=None):  # noqa: A001 - torch's name
    """``input ** exponent``; either may be a Python number."""
    if isinstance(exponent, Tensor):
        if isinstance(input, Tensor):
            return PowTensor.apply(input, exponent)
        return RPow.apply(exponent, input)
    return Pow.apply(input, exponent)


subtract, multiply, divide, true_divide, negative = sub, mul, div, div, neg


def _rtruediv(self, other):
    return Mul.apply(Reciprocal.apply(self), other)


def _rpow(self, other):
    return RPow.apply(self, other)


# --- one-input math -----------------------------------------------------------------------------------------
def _sigmoid_np(x):
    with np.errstate(over="ignore"):
        out = np.empty_like(x)
        pos = x >= 0
        out[pos] = 1.0 / (1.0 + np.exp(-x[pos]))
        ex = np.exp(x[~pos])
        out[~pos] = ex / (1.0 + ex)
    return out


Exp = unary("Exp", np.exp, lambda grad, x, result: grad * result, save="result")
Log = unary("Log", lambda x: _errstate(np.log, x), lambda grad, x, result: grad / x)
Sqrt = unary("Sqrt", lambda x: _errstate(np.sqrt, x), lambda grad, x, result: grad / (2 * result), save="result")
Tanh = unary("Tanh", np.tanh, lambda grad, x, result: grad * (1 - result * result), save="result")
Sigmoid = unary("Sigmoid", _sigmoid_np, lambda grad, x, result: grad * result * (1 - result), save="result")
Reciprocal = unary("Reciprocal", lambda x: _errstate(np.reciprocal, x),
                   lambda grad, x, result: -grad * result * result, save="result")


def _errstate(f, x):
    with np.errstate(divide="ignore", invalid="ignore"):
        return f(x)


class Relu(Primitive):
    """max(x, 0); the gradient at 0 is 0, as torch's."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_result()
        return np.maximum(x, 0) if x.dtype.kind != "b" else x

    @staticmethod
    def backward(ctx, grad):
        result, = ctx.saved_tensors
        return grad * (result._array > 0)


class Abs(Primitive):
    """|x|; gradient sign(x) (0 at 0)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_inputs(0)
        return np.abs(x)

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        return grad * np.sign(x._array)


def exp(input, *, out=None):
    """e ** input, elementwise."""
    return Exp.apply(input)


def log(input, *, out=None):
    """Natural logarithm, elementwise."""
    return Log.apply(input)


def sqrt(input, *, out=None):
    """Square root, elementwise."""
    return Sqrt.apply(input)


def tanh(input, *, out=None):
    """Hyperbolic tangent, elementwise."""
    return Tanh.apply(input)


def sigmoid(input, *, out=None):
    """1 / (1 + e ** -input), computed stably."""
    return Sigmoid.apply(input)


def relu(input, inplace=False):
    """max(input, 0)."""
    return Relu.apply(input) if not inplace else apply_inplace(input, Relu.apply)


def abs(input, *, out=None):  # noqa: A001
    """|input|."""
    return Abs.apply(input)


absolute = abs


# --- comparisons (no gradient) ------------------------------------------------------------------------------
def _compare(np_fn):
    def cmp(input, other, *, out=None):
        a = input._array if isinstance(input, Tensor) else input
        b = other._array if isinstance(other, Tensor) else other
        if isinstance(other, (list, tuple)):
            b = np.asarray(b)
        a, b, _ = promote(a, b)
        return Tensor._make(np.asarray(np_fn(a, b)))
    cmp.__name__ = np_fn.__name__
    cmp.__doc__ = f"Elementwise ``{np_fn.__name__}`` as a bool tensor (no gradient)."
    return cmp


eq, ne, lt, le, gt, ge = (_compare(f) for f in (np.equal, np.not_equal, np.less, np.less_equal, np.greater,
                                                 np.greater_equal))
greater, greater_equal, less, less_equal, not_equal = gt, ge, lt, le, ne


# --- copies and casts ---------------------------------------------------------------------------------------
class Clone(Primitive):
    """A copy with its own memory; the gradient passes through."""

    @staticmethod
    def forward(ctx, x, memory_format=None):
        return x.copy()

    @staticmethod
    def backward(ctx, grad):
        return grad, None


class ToCopy(Primitive):
    """A cast to another dtype; the gradient is cast back."""

    @staticmethod
    def forward(ctx, x, dtype):
        return x.astype(dtype.np)

    @staticmethod
    def backward(ctx, grad):
        return grad, None   # the engine casts a gradient to its input's dtype


def clone(input, *, memory_format=None):
    """A copy of ``input`` that stays in the graph (gradient flows back to ``input``)."""
    return Clone.apply(input)


def to(input, *args, dtype=None, device=None, non_blocking=False, copy=False, memory_format=None):
    """``x.to(tapegrad.float64)``, ``x.to("cpu")``, ``x.to(other)``: a cast (only the CPU exists)."""
    from ..tensor import _check_device
    for a in args:
        if isinstance(a, Tensor):
            dtype = a.dtype
        elif isinstance(a, _dtype.dtype) or (not isinstance(a, str) and hasattr(a, "is_floating_point")):
            dtype = a
        elif isinstance(a, (str,)) or a.__class__.__name__ == "device":
            _check_device(a)
    if dtype is not None:
        _check_device(device)
        d = _dtype.to_dtype(dtype)
        if d is not input.dtype:
            if input._rg and not d.is_floating_point and not d.is_complex:
                return Tensor._make(input._array.astype(d.np))
            return ToCopy.apply(input, d)
    else:
        _check_device(device)
    return clone(input) if copy else input


def _cast(dt):
    def cast(self, memory_format=None):
        return to(self, dt)
    return cast


def _type(self, dtype=None, non_blocking=False):
    if dtype is None:
        return f"tapegrad.{self.dtype._legacy}Tensor"
    if isinstance(dtype, str) and dtype.endswith("Tensor"):
        legacy = dtype.rsplit(".", 1)[-1][:-len("Tensor")]
        dtype = next(d for d in _dtype._ALL if d._legacy == legacy)
    return to(self, dtype)


# --- in-place arithmetic -------------------------------------------------------------------------------------
def add_(self, other, *, alpha=1):
    return apply_inplace(self, add, other, alpha=alpha)


def sub_(self, other, *, alpha=1):
    return apply_inplace(self, sub, other, alpha=alpha)


def mul_(self, other):
    return apply_inplace(self, mul, other)


def div_(self, other, *, rounding_mode=None):
    return apply_inplace(self, div, other, rounding_mode=rounding_mode)


def pow_(self, exponent):
    return apply_inplace(self, pow, exponent)


def neg_(self):
    return apply_inplace(self, neg)


def _fill(x, value):
    v = value._array if isinstance(value, Tensor) else value
    out = Tensor._make(np.broadcast_to(np.asarray(v, x._array.dtype), x._array.shape))
    if isinstance(value, Tensor) and value._rg:
        return out + (value - value.detach()) if value._array.ndim == 0 else out
    return out


def zero_(self):
    """Fill with zeros in place (``x.grad.zero_()``)."""
    return apply_inplace(self, lambda x: Tensor._make(np.zeros(x._array.shape, x._array.dtype)))


def fill_(self, value):
    """Fill with ``value`` in place."""
    return apply_inplace(self, _fill, value)


def copy_(self, src, non_blocking=False):
    """Copy ``src`` (broadcast, cast) into this tensor in place; differentiable with respect to ``src``."""
    def _copy(x, s):
        if not isinstance(s, Tensor):
            s = Tensor._make(np.asarray(s))
        if s._array.shape != x._array.shape:
            s = s.expand(x._array.shape)
        return to(s, x.dtype) if s.dtype is not x.dtype else Clone.apply(s)
    return apply_inplace(self, _copy, src)


def _iop(fn):
    def iop(self, other):
        return apply_inplace(self, fn, other)
    return iop


bind(
    __add__=add, __radd__=lambda self, other: Add.apply(other, self) if isinstance(other, Tensor) else
    Add.apply(self, other),
    __sub__=sub, __rsub__=lambda self, other: Rsub.apply(self, other),
    __mul__=mul, __rmul__=lambda self, other: Mul.apply(self, other),
    __truediv__=div, __rtruediv__=_rtruediv, __div__=div,
    __pow__=pow, __rpow__=_rpow, __neg__=neg, __pos__=lambda self: self, __abs__=abs,
    __iadd__=_iop(add), __isub__=_iop(sub), __imul__=_iop(mul), __itruediv__=_iop(div), __ipow__=_iop(pow),
    __eq__=eq, __ne__=ne, __lt__=lt, __le__=le, __gt__=gt, __ge__=ge,
    add=add, sub=sub, subtract=sub, mul=mul, multiply=mul, div=div, divide=div, true_divide=div, neg=neg,
    negative=neg, pow=pow, exp=exp, log=log, sqrt=sqrt, tanh=tanh, sigmoid=sigmoid, relu=relu, abs=abs,
    absolute=abs, reciprocal=lambda self: Reciprocal.apply(self),
    eq=eq, ne=ne, lt=lt, le=le, gt=gt, ge=ge, greater=gt, greater_equal=ge, less=lt, less_equal=le, not_equal=ne,
    add_=add_, sub_=sub_, subtract_=sub_, mul_=mul_, multiply_=mul_, div_=div_, divide_=div_, pow_=pow_,
    neg_=neg_, negative_=neg_, zero_=zero_, fill_=fill_, copy_=copy_,
    exp_=lambda self: apply_inplace(self, exp), log_=lambda self: apply_inplace(self, log),
    sqrt_=lambda self: apply_inplace(self, sqrt), tanh_=lambda self: apply_inplace(self, tanh),
    sigmoid_=lambda self: apply_inplace(self, sigmoid), relu_=lambda self: apply_inplace(self, relu),
    abs_=lambda self: apply_inplace(self, abs),
    clone=clone, to=to, float=_cast(_dtype.float32), double=_cast(_dtype.float64), half=_cast(_dtype.float16),
    bfloat16=_cast(_dtype.bfloat16), long=_cast(_dtype.int64), int=_cast(_dtype.int32), short=_cast(_dtype.int16),
    char=_cast(_dtype.int8), byte=_cast(_dtype.uint8), bool=_cast(_dtype.bool), type=_type,
    type_as=lambda self, other: to(self, other.dtype),
)
_ = as_float  # re-exported helper used by sibling modules
