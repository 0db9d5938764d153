"""Elementwise ops: arithmetic, math functions, activations, comparisons, logic.

Each op is declared once: its Primitive (forward on arrays, backward in tapegrad ops, so double backward works),
its public function, its Tensor method and operator, and its in-place variant. dtypes follow torch's promotion
(``promote`` / ``_dtype.result_type``): integer inputs of float ops give the default float dtype, Python numbers
are weak, 0-d tensors only win with a higher category.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from .. import _dtype
from ..autograd.grad_mode import _state
from ..autograd.function import OWN_GRAD
from ._util import (Primitive, Tensor, apply_inplace, as_float, bind, broadcast_or_error, kernel, promote, shape_str,
                    unary)

__all__ = [
    # arithmetic
    "add", "sub", "subtract", "mul", "multiply", "div", "divide", "true_divide", "floor_divide", "neg", "negative",
    "pow", "float_power", "atan2", "arctan2", "hypot", "maximum", "minimum", "fmax", "fmin", "fmod", "remainder",
    "lerp", "where", "addcmul", "addcdiv", "copysign", "xlogy", "xlogy_",
    # one input
    "abs", "absolute", "sign", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "square",
    "reciprocal", "sin", "cos", "tan", "asin", "acos", "atan", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh",
    "asinh", "acosh", "atanh", "arcsinh", "arccosh", "arctanh", "sigmoid", "logit", "erf", "erfc", "erfinv", "floor",
    "ceil", "round", "trunc", "fix", "frac", "clamp", "clip", "clamp_min", "clamp_max", "nan_to_num",
    # top-level in-place variants (torch.exp_ ...)
    "neg_", "negative_", "abs_", "exp_", "exp2_", "expm1_", "log_", "log2_", "log10_", "log1p_", "sqrt_", "rsqrt_",
    "square_", "reciprocal_", "sin_", "cos_", "tan_", "asin_", "acos_", "atan_", "arcsin_", "arccos_", "arctan_",
    "sinh_", "cosh_", "tanh_", "asinh_", "acosh_", "atanh_", "arcsinh_", "arccosh_", "arctanh_", "sigmoid_",
    "logit_", "erf_", "erfc_", "floor_", "ceil_", "round_", "trunc_", "fix_", "frac_", "clamp_", "clip_",
    "clamp_min_", "clamp_max_", "nan_to_num_",
    # activations that torch also has at top level
    "relu", "relu_", "selu", "selu_", "celu", "celu_", "threshold", "threshold_", "hardshrink", "prelu", "rrelu",
    "rrelu_",
    # comparisons and logic (no gradient)
    "eq", "ne", "lt", "le", "gt", "ge", "greater", "greater_equal", "less", "less_equal", "not_equal",
    "logical_and", "logical_or", "logical_not", "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor",
    "bitwise_not", "isnan", "isinf", "isposinf", "isneginf", "isfinite", "isreal", "allclose", "isclose", "equal",
    "signbit",
    "clone", "to",
]

# Names torch.nn.functional has (tapegrad/nn/functional.py re-exports them): the activations that live only in
# torch.nn.functional, plus those that torch has both at top level and in torch.nn.functional.
FUNCTIONAL = [
    "relu6", "leaky_relu", "leaky_relu_", "elu", "elu_", "gelu", "silu", "mish", "softplus", "softsign", "hardtanh",
    "hardtanh_", "hardsigmoid", "hardswish", "logsigmoid", "softshrink", "tanhshrink",
    "relu", "relu_", "selu", "selu_", "celu", "celu_", "threshold", "threshold_", "hardshrink", "prelu", "rrelu",
    "rrelu_", "sigmoid", "tanh",
]

_LN2, _LN10 = math.log(2.0), math.log(10.0)
_2_SQRTPI = 2.0 / math.sqrt(math.pi)


# --- helpers ------------------------------------------------------------------------------------------------
def _arr(x):
    return x._array if isinstance(x, Tensor) else x


def _np_dtype(x):
    return x.dtype if isinstance(x, (np.ndarray, np.generic)) else None


def _cast_all(ops, d):
    """Cast array operands to NumPy dtype ``d``; Python numbers become ``d`` scalars."""
    out = []
    for o in ops:
        if isinstance(o, np.ndarray):
            out.append(o if o.dtype == d else o.astype(d))
        elif o is None:
            out.append(None)
        else:
            out.append(np.asarray(o, d)[()])
    return out


def _result(*ops, floating=False):
    """torch's result dtype of array/number operands (``floating``: integers give the default float dtype)."""
    d = _dtype.result_type(*[o for o in ops if o is not None]).np
    if floating and d.kind not in "fc":
        d = _dtype.get_default_dtype().np
    return d


def _legacy(d) -> str:
    return _dtype.from_numpy_dtype(np.dtype(d))._legacy


def _not_implemented(kernel, d):
    return NotImplementedError(f'"{kernel}" not implemented for \'{_legacy(d)}\'')


def _no_bool(kernel, d):
    """torch has no bool kernel for many integer ops: the same NotImplementedError."""
    if d == np.bool_:
        raise _not_implemented(kernel, d)


def _float_only(kernel, x):
    """Activations and a few math ops have no integer kernel in torch: the same NotImplementedError."""
    if x.dtype.kind not in "fc":
        raise _not_implemented(kernel, x.dtype)
    return x


def _w(mask, a, b):
    """``where(mask, a, b)`` with a constant mask (ndarray), differentiable in a and b."""
    return Where.apply(mask, a, b)


def _zeros_like(g):
    return Tensor._make(np.zeros_like(g._array))


def _need_tensor(op, name, pos, v):
    if not isinstance(v, Tensor):
        raise TypeError(f"{op}(): argument '{name}' (position {pos}) must be Tensor, not {type(v).__name__}")


def _int_zero_check(b, d):
    if d.kind in "iub" and np.any(np.asarray(b) == 0):
        raise RuntimeError("ZeroDivisionError")


def _with_out(fn):
    """Add torch's ``out=`` keyword: the result is written into ``out`` (resized if its shape differs)."""

    @functools.wraps(fn)
    def wrapper(*args, out=None, **kwargs):
        res = fn(*args, **kwargs)
        if out is None:
            return res
        return _copy_out(fn.__name__, res, out)
    return wrapper


def _copy_out(op, res, out):
    if _state.enabled and (res._rg or out._rg):
        raise RuntimeError(f"{op}(): functions with out=... arguments don't support automatic differentiation, "
                           "but one of the arguments requires grad.")
    if not _dtype.can_cast(res.dtype, out.dtype):
        raise RuntimeError(f"result type {res.dtype._legacy} can't be cast to the desired output type "
                           f"{out.dtype._legacy}")
    if out._array.shape != res._array.shape:
        out._array = res._array.astype(out._array.dtype)
    else:
        np.copyto(out._array, res._array, casting="unsafe")
    out._vc[0] += 1
    return out


def _inplace(fn):
    """The in-place variant ``x.op_(...)`` of a public function ``op(x, ...)``."""

    def op_(self, *args, **kwargs):
        return apply_inplace(self, fn, *args, **kwargs)
    op_.__name__ = fn.__name__ + "_"
    op_.__doc__ = f"In-place version of :func:`{fn.__name__}`."
    return op_


def _quiet(forward):
    """(Kept for readability at the declaration site: every Primitive's forward already runs with NumPy's
    floating-point warnings off — see ``Function.apply``.)"""
    return forward


def _t(x):
    """A Python number as a 0-d tensor for the rare op that needs one."""
    return x if isinstance(x, Tensor) else Tensor._make(np.asarray(x))


# --- where (also the masking helper of many backwards) -----------------------------------------------------
class Where(Primitive):
    """``where(cond, a, b)``; ``cond`` is a constant bool array, a and b tensors or numbers (promoted)."""

    @staticmethod
    def forward(ctx, cond, a, b):
        d = _result(a, b)
        a, b = _cast_all((a, b), d)
        ctx.cond = cond
        return np.asarray(np.where(cond, a, b))

    @staticmethod
    def backward(ctx, grad):
        need = ctx.needs_input_grad
        c = ctx.cond
        return (None, _w(c, grad, 0.0) if need[1] else None, _w(c, 0.0, grad) if need[2] else None)


@_with_out
def where(condition, input=None, other=None):  # noqa: A002 - torch's name
    """``input`` where ``condition`` else ``other`` (broadcast; either may be a number).

    ``where(condition)`` alone is ``nonzero(condition, as_tuple=True)``.

    >>> tapegrad.where(tapegrad.tensor([True, False]), 1.0, 0.0)
    tensor([1., 0.])
    """
    if input is None and other is None:
        from .index import nonzero
        return nonzero(condition, as_tuple=True)
    c = _arr(condition)
    if not isinstance(c, np.ndarray) or c.dtype != np.bool_:
        got = _legacy(c.dtype) if isinstance(c, np.ndarray) else type(c).__name__
        raise RuntimeError(f"where expected condition to be a boolean tensor, but got a tensor with dtype {got}")
    return Where.apply(c, input, other)


# --- arithmetic ---------------------------------------------------------------------------------------------
class Add(Primitive):
    """a + b, broadcasting."""

    _scalar_edges = True
    array_backward = True

    @staticmethod
    def forward(ctx, a, b):
        a, b, _ = promote(a, b)
        return a + b

    @staticmethod
    def backward(ctx, grad):
        return grad, grad


class AddAlpha(Primitive):
    """a + alpha * b (``add(a, b, alpha=...)``; the same node as ``a + b`` in torch; alpha is a keyword, so that
    next_functions lists the two operands only, as torch's)."""

    node_name = "AddBackward0"
    _scalar_edges = True
    array_backward = True

    @staticmethod
    def forward(ctx, a, b, alpha):
        a, b, _ = promote(a, b)
        ctx.alpha = alpha
        return a + alpha * b

    @staticmethod
    def backward(ctx, grad):
        return grad, grad * ctx.alpha


class Sub(Primitive):
    """a - b, broadcasting."""

    _scalar_edges = True
    array_backward = True

    @staticmethod
    def forward(ctx, a, b):
        _sub_check(a, b)
        a, b, _ = promote(a, b)
        return a - b

    @staticmethod
    def backward(ctx, grad):
        return grad, -grad


class SubAlpha(Primitive):
    """a - alpha * b (``sub(a, b, alpha=...)``)."""

    node_name = "SubBackward0"
    _scalar_edges = True
    array_backward = True

    @staticmethod
    def forward(ctx, a, b, alpha):
        _sub_check(a, b)
        a, b, _ = promote(a, b)
        ctx.alpha = alpha
        return a - alpha * b

    @staticmethod
    def backward(ctx, grad):
        return grad, grad * -ctx.alpha


def _is_bool(v):
    return isinstance(v, (bool, np.bool_)) or (isinstance(v, np.ndarray) and v.dtype == np.bool_)


def _sub_check(a, b):
    if _is_bool(a) and _is_bool(b):
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not supported. "
                           "Use the `^` or `logical_xor()` operator instead.")
    if _is_bool(a) or _is_bool(b):
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported. If you are "
                           "trying to invert a mask, use the `~` or `logical_not()` operator instead.")


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


class Mul(Primitive):
    """a * b, broadcasting."""

    _scalar_edges = True
    array_backward = True

    @staticmethod
    @_quiet
    def forward(ctx, a, b):
        a, b, _ = promote(a, b)
        ctx.save_crossed(0, 1)       # each operand only for the other's gradient
        return np.asarray(a * b)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        need = ctx.needs_input_grad
        return (grad * b if need[0] else None), (grad * a if need[1] else None)


class Div(Primitive):
    """a / b (true division: integers give the default float dtype)."""

    _scalar_edges = True
    array_backward = True

    @staticmethod
    def forward(ctx, a, b):
        a, b, d = promote(a, b)
        if d.kind not in "fc":
            f = _dtype.get_default_dtype().np
            a, b = np.asarray(a, f), np.asarray(b, f)
        ctx.save_inputs(0 if ctx.needs_input_grad[1] else None, 1)   # (a only for b's gradient, as torch's)
        return np.asarray(np.true_divide(a, b))   # (forwards run with NumPy's warnings off: Function.apply)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        need = ctx.needs_input_grad
        ga = grad / b if need[0] else None
        gb = -grad * ((a / b) / b) if need[1] else None   # torch's order of operations (same rounding)
        return ga, gb


def _floor_div_np(a, b, d):
    _no_bool("div_floor_cpu", d)
    _int_zero_check(b, d)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return np.asarray(np.floor_divide(a, b))


def _trunc_div_np(a, b, d):
    _no_bool("div_trunc_cpu", d)
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
        return np.asarray(np.power(a, e))


class Pow(Primitive):
    """tensor ** number."""

    array_backward = True

    @staticmethod
    def forward(ctx, a, exponent):
        a, e, d = promote(a, exponent)
        if d.kind in "iu" and isinstance(exponent, int) and exponent < 0:
            raise RuntimeError("Integers to negative integer powers are not allowed.")
        ctx.save_inputs(0)
        ctx.exponent = exponent
        if d == np.bool_ and exponent in (0, 1):   # torch's shortcuts for x ** 0 and x ** 1 need no kernel
            return np.ones_like(a) if exponent == 0 else a.copy()
        return _pow_np(a, e, d)

    @staticmethod
    def backward(ctx, grad):
        a, = ctx.saved_tensors
        e = ctx.exponent
        if e == 0:
            return (_zeros_like(grad) if grad.__class__ is Tensor else np.zeros_like(grad)), None
        return grad * (e * a ** (e - 1)), None


class PowTensor(Primitive):
    """tensor ** tensor."""

    node_name = "PowBackward1"

    @staticmethod
    def forward(ctx, a, b):
        a, b, d = promote(a, b)
        ctx.save_result(0, 1)
        return _pow_np(a, b, d)

    @staticmethod
    def backward(ctx, grad):
        result, a, b = ctx.saved_tensors
        need = ctx.needs_input_grad
        ga = gb = None
        if need[0]:
            ga = _w(b._array == 0, 0.0, grad * (b * a ** (b - 1)))
        if need[1]:
            # d(a^b)/db = a^b log a, taken as 0 where a == 0 and b >= 0 (torch's convention)
            ga_mask = (a._array == 0) & (b._array >= 0)
            gb = grad * _w(ga_mask, 0.0, result * log(a))
        return ga, gb


class RPow(Primitive):
    """number ** tensor."""

    node_name = "PowBackward2"

    @staticmethod
    def forward(ctx, b, base):
        b, base_, d = promote(b, base)
        ctx.save_result(0)
        ctx.base = base
        return _pow_np(base_, b, d)

    @staticmethod
    def backward(ctx, grad):
        result, b = ctx.saved_tensors
        base = ctx.base
        with np.errstate(divide="ignore", invalid="ignore"):
            log_base = float(np.log(float(base))) if base > 0 else float("nan") if base < 0 else float("-inf")
        if base == 0:
            return grad * _w(b._array >= 0, 0.0, result * log_base), None
        return grad * (result * log_base), None


@_with_out
def add(input, other, *, alpha=1):  # noqa: A002
    """``input + alpha * other``, broadcasting.

    >>> tapegrad.add(tapegrad.tensor([1., 2.]), 2)
    tensor([3., 4.])
    """
    return AddAlpha.apply(input, other, alpha=alpha) if alpha != 1 else Add.apply(input, other)


@_with_out
def sub(input, other, *, alpha=1):  # noqa: A002
    """``input - alpha * other``, broadcasting.

    >>> tapegrad.sub(tapegrad.tensor([1., 2.]), 1)
    tensor([0., 1.])
    """
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


@_with_out
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
    return Pow.apply(input, exponent)


@_with_out
def float_power(input, exponent):  # noqa: A002
    """``input ** exponent`` computed in double precision (float64, or complex128 for complex operands).

    >>> tapegrad.float_power(tapegrad.tensor([2, 3]), 2)
    tensor([4., 9.], dtype=tapegrad.float64)
    """
    cplx = any((isinstance(v, Tensor) and v.is_complex()) or isinstance(v, complex) for v in (input, exponent))
    d = _dtype.complex128 if cplx else _dtype.float64

    def up(v):
        if isinstance(v, Tensor):
            return to(v, d)
        return complex(v) if cplx else float(v)
    return pow(up(input), up(exponent))


subtract, multiply, divide, true_divide, negative = sub, mul, div, div, neg


def _rtruediv(self, other):
    return Mul.apply(Reciprocal.apply(self), other)


def _rpow(self, other):
    return RPow.apply(self, other)


def _float_power_(self, exponent):
    if self.dtype is not _dtype.float64 and self.dtype is not _dtype.complex128:
        raise RuntimeError(f"the base given to float_power_ has dtype {self.dtype._legacy} but the operation's "
                           "result requires dtype Double")
    return apply_inplace(self, float_power, exponent)


# --- two-input math -----------------------------------------------------------------------------------------
class Atan2(Primitive):
    """atan2(a, b): the angle of the point (b, a)."""

    @staticmethod
    @_quiet
    def forward(ctx, a, b):
        a, b = _cast_all((a, b), _result(a, b, floating=True))
        ctx.save_inputs(0, 1)
        return np.asarray(np.arctan2(a, b))

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        need = ctx.needs_input_grad
        r = a * a + b * b
        return (grad * b / r if need[0] else None), (grad * -a / r if need[1] else None)


class Hypot(Primitive):
    """sqrt(a**2 + b**2) without overflow."""

    @staticmethod
    @_quiet
    def forward(ctx, a, b):
        d = _result(a, b)
        if d.kind not in "fc":
            raise _not_implemented("hypot_cpu", d)
        a, b = _cast_all((a, b), d)
        ctx.save_result(0, 1)
        return np.asarray(np.hypot(a, b))

    @staticmethod
    def backward(ctx, grad):
        r, a, b = ctx.saved_tensors
        need = ctx.needs_input_grad
        return (grad * a / r if need[0] else None), (grad * b / r if need[1] else None)


def _extremum(name, np_fn, greater, nan_ignoring):
    """maximum/minimum (NaN propagates, ties split the gradient) and fmax/fmin (NaN ignored, ties to input)."""

    def forward(ctx, a, b):
        d = _result(a, b)
        a, b = _cast_all((a, b), d)
        ctx.a, ctx.b = a, b
        return np.asarray(np_fn(a, b))

    def backward(ctx, grad):
        a, b = ctx.a, ctx.b
        need = ctx.needs_input_grad
        wins = (a > b) if greater else (a < b)
        loses = (a < b) if greater else (a > b)
        if nan_ignoring:
            keep_a = wins | (a == b) | np.isnan(b)
            return (_w(keep_a, grad, 0.0) if need[0] else None), (_w(keep_a, 0.0, grad) if need[1] else None)
        tie = a == b
        ga = _w(tie, grad / 2, _w(loses, 0.0, grad)) if need[0] else None
        gb = _w(tie, grad / 2, _w(wins, 0.0, grad)) if need[1] else None
        return ga, gb

    return type(name, (Primitive,), {"forward": staticmethod(forward), "backward": staticmethod(backward),
                                     "__doc__": f"{name} op"})


Maximum = _extremum("Maximum", np.maximum, True, False)
Minimum = _extremum("Minimum", np.minimum, False, False)
Fmax = _extremum("Fmax", np.fmax, True, True)
Fmin = _extremum("Fmin", np.fmin, False, True)


def _fmod_np(a, b, d):
    _no_bool("fmod_cpu", d)
    _int_zero_check(b, d)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.asarray(np.fmod(a, b))


def _remainder_np(a, b, d):
    _no_bool("remainder_cpu", d)
    _int_zero_check(b, d)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.asarray(np.remainder(a, b))


def _mod_ops(name, mod_np, rounding, doc):
    """fmod / remainder: ``Name`` (tensor, tensor; d/db = -div(a, b, rounding_mode)) and ``NameScalar``
    (tensor, number). The two differ only in the kernel and the rounding of the quotient."""

    class Mod(Primitive):
        node_name = f"{name}Backward1"
        _scalar_edges = True

        @staticmethod
        def forward(ctx, a, b):
            a, b, d = promote(a, b)
            if ctx.needs_input_grad[1]:    # (only the divisor's gradient needs the operands, as torch keeps them)
                ctx.save_inputs(0, 1)
            return mod_np(a, b, d)

        @staticmethod
        def backward(ctx, grad):
            gb = None
            if ctx.needs_input_grad[1]:
                a, b = ctx.saved_tensors
                gb = -grad * div(a, b, rounding_mode=rounding)
            return (grad if ctx.needs_input_grad[0] else None), gb

    class ModScalar(Primitive):
        node_name = f"{name}Backward0"

        @staticmethod
        def forward(ctx, a, b):
            a, b, d = promote(a, b)
            return mod_np(a, b, d)

        @staticmethod
        def backward(ctx, grad):
            return grad, None

    Mod.__name__ = Mod.__qualname__ = name
    ModScalar.__name__ = ModScalar.__qualname__ = name + "Scalar"
    Mod.__doc__ = doc
    ModScalar.__doc__ = f"{name.lower()}(tensor, number)."
    return Mod, ModScalar


Fmod, FmodScalar = _mod_ops("Fmod", _fmod_np, "trunc", "C's fmod: the remainder has the sign of the dividend.")
Remainder, RemainderScalar = _mod_ops("Remainder", _remainder_np, "floor",
                                      "Python's ``%``: the remainder has the sign of the divisor.")


class RRemainder(Primitive):
    """remainder(number, tensor): torch defines no derivative (grad_fn ``NotImplemented``)."""

    node_name = "NotImplemented"

    @staticmethod
    def forward(ctx, b, a):
        a, b, d = promote(a, b)
        return _remainder_np(a, b, d)

    backward = staticmethod(_no_derivative("RRemainder", "remainder"))


@_with_out
def atan2(input, other):  # noqa: A002
    """The angle of the point (other, input), in (-pi, pi].

    >>> tapegrad.atan2(tapegrad.tensor([1.]), tapegrad.tensor([1.]))
    tensor([0.7854])
    """
    _need_tensor("atan2", "input", 1, input)
    _need_tensor("atan2", "other", 2, other)
    return Atan2.apply(input, other)


arctan2 = atan2


@_with_out
def hypot(input, other):  # noqa: A002
    """``sqrt(input**2 + other**2)``, elementwise.

    >>> tapegrad.hypot(tapegrad.tensor([3.]), tapegrad.tensor([4.]))
    tensor([5.])
    """
    _need_tensor("hypot", "input", 1, input)
    _need_tensor("hypot", "other", 2, other)
    return Hypot.apply(input, other)


def _tensor_binary(name, cls, doc):
    def fn(input, other):  # noqa: A002
        _need_tensor(name, "input", 1, input)
        _need_tensor(name, "other", 2, other)
        return cls.apply(input, other)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return _with_out(fn)


maximum = _tensor_binary("maximum", Maximum, """Elementwise maximum (NaN propagates; ties share the gradient).

    >>> tapegrad.maximum(tapegrad.tensor([1., 4.]), tapegrad.tensor([3., 2.]))
    tensor([3., 4.])
    """)
minimum = _tensor_binary("minimum", Minimum, """Elementwise minimum (NaN propagates; ties share the gradient).

    >>> tapegrad.minimum(tapegrad.tensor([1., 4.]), tapegrad.tensor([3., 2.]))
    tensor([1., 2.])
    """)
fmax = _tensor_binary("fmax", Fmax, """Elementwise maximum that ignores NaN (NaN only where both are NaN).

    >>> tapegrad.fmax(tapegrad.tensor([1., float("nan")]), tapegrad.tensor([3., 2.]))
    tensor([3., 2.])
    """)
fmin = _tensor_binary("fmin", Fmin, """Elementwise minimum that ignores NaN (NaN only where both are NaN).

    >>> tapegrad.fmin(tapegrad.tensor([1., float("nan")]), tapegrad.tensor([3., 2.]))
    tensor([1., 2.])
    """)


@_with_out
def fmod(input, other):  # noqa: A002
    """C-style remainder (sign of ``input``).

    >>> tapegrad.fmod(tapegrad.tensor([-3., 3.]), 2)
    tensor([-1.,  1.])
    """
    if not isinstance(input, Tensor):
        raise TypeError(f"fmod(): argument 'input' must be a Tensor, got {type(input).__name__} (use "
                        "tapegrad.fmod(tapegrad.tensor(input), other))")
    if isinstance(other, Tensor):
        return Fmod.apply(input, other)
    return FmodScalar.apply(input, other)


@_with_out
def remainder(input, other):  # noqa: A002
    """Python-style remainder ``input % other`` (sign of ``other``).

    >>> tapegrad.remainder(tapegrad.tensor([-3., 3.]), 2)
    tensor([1., 1.])
    """
    if not isinstance(input, Tensor):
        return RRemainder.apply(other, input)
    if isinstance(other, Tensor):
        return Remainder.apply(input, other)
    return RemainderScalar.apply(input, other)


class Lerp(Primitive):
    """``start + weight * (end - start)`` with a number weight."""

    node_name = "LerpBackward0"

    @staticmethod
    @_quiet
    def forward(ctx, a, b, w):
        ctx.w = w
        return _lerp_np(a, b, w)

    @staticmethod
    def backward(ctx, grad):
        w = ctx.w
        need = ctx.needs_input_grad
        return (grad * (1 - w) if need[0] else None), (grad * w if need[1] else None), None


class LerpTensor(Primitive):
    """``start + weight * (end - start)`` with a tensor weight."""

    node_name = "LerpBackward1"

    @staticmethod
    @_quiet
    def forward(ctx, a, b, w):
        ctx.save_inputs(0, 1, 2)
        return _lerp_np(a, b, w)

    @staticmethod
    def backward(ctx, grad):
        a, b, w = ctx.saved_tensors
        need = ctx.needs_input_grad
        return (grad * (1 - w) if need[0] else None), (grad * w if need[1] else None), \
            (grad * (b - a) if need[2] else None)


_TYPEMETA = {"float32": "float", "float64": "double", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
             "int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char", "uint8": "unsigned char",
             "bool": "bool", "complex64": "c10::complex<float>", "complex128": "c10::complex<double>"}


def _meta(t):
    """A dtype as torch's TypeMeta prints it (``float``, ``double``, ``long int``) in some messages."""
    return _TYPEMETA[t.dtype.name]


def _lerp_np(a, b, w):
    d = a.dtype
    if d.kind not in "fc":
        raise _not_implemented("lerp_kernel_scalar" if not isinstance(w, np.ndarray) else "lerp_kernel_tensor", d)
    w = w if isinstance(w, np.ndarray) else d.type(w)
    diff = b - a
    # torch's formula: exact at both ends
    return np.asarray(np.where(np.abs(w) < 0.5, a + w * diff, b - diff * (1 - w))).astype(d, copy=False)


@_with_out
def lerp(input, end, weight):  # noqa: A002
    """Linear interpolation ``input + weight * (end - input)``; ``weight`` a number or a tensor.

    >>> tapegrad.lerp(tapegrad.tensor([0.]), tapegrad.tensor([10.]), 0.25)
    tensor([2.5000])
    """
    _need_tensor("lerp", "input", 1, input)
    _need_tensor("lerp", "end", 2, end)
    if end.dtype is not input.dtype:
        raise RuntimeError(f"expected dtype {_meta(input)} for `end` but got dtype {_meta(end)}")
    if isinstance(weight, Tensor):
        if weight.dtype is not input.dtype:
            raise RuntimeError(f"expected dtype {_meta(input)} for `weight` but got dtype {_meta(weight)}")
        return LerpTensor.apply(input, end, weight)
    return Lerp.apply(input, end, weight)


class Addcmul(Primitive):
    """``input + value * tensor1 * tensor2``."""

    @staticmethod
    @_quiet
    def forward(ctx, x, t1, t2, value):
        d = _result(x, t1, t2)
        x, t1, t2 = _cast_all((x, t1, t2), d)
        _no_bool("addcmul_cpu_out", d)
        if d.kind in "iub" and not isinstance(value, (bool, int, np.integer)):
            raise RuntimeError("For integral input tensors, argument value must not be a floating point number.")
        ctx.save_crossed(1, 2)
        ctx.value = value
        return np.asarray(x + d.type(value) * t1 * t2) if value != 1 else np.asarray(x + t1 * t2)

    @staticmethod
    def backward(ctx, grad):
        t1, t2 = ctx.saved_tensors
        v = ctx.value
        need = ctx.needs_input_grad
        g = grad * v if v != 1 else grad
        return (grad if need[0] else None), (g * t2 if need[1] else None), (g * t1 if need[2] else None), None


class Addcdiv(Primitive):
    """``input + value * tensor1 / tensor2``."""

    @staticmethod
    def forward(ctx, x, t1, t2, value):
        d = _result(x, t1, t2)
        if _result(t1, t2).kind in "iub":
            raise RuntimeError(
                "Integer division with addcdiv is no longer supported, and in a future  release addcdiv will "
                "perform a true division of tensor1 and tensor2. The historic addcdiv behavior can be implemented "
                "as (input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer inputs and as "
                "(input + value * tensor1 / tensor2) for float inputs. The future addcdiv behavior can be "
                "implemented with true_divide: (input + value * torch.true_divide(tensor1, tensor2)).")
        x, t1, t2 = _cast_all((x, t1, t2), d)
        need = ctx.needs_input_grad          # (what torch keeps: t1 for t2's gradient, t2 for either's)
        ctx.save_inputs(1 if need[2] else None, 2 if need[1] or need[2] else None)
        ctx.value = value
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.asarray(x + d.type(value) * (t1 / t2))

    @staticmethod
    def backward(ctx, grad):
        t1, t2 = ctx.saved_tensors
        v = ctx.value
        need = ctx.needs_input_grad
        g = grad * v if v != 1 else grad
        return (grad if need[0] else None), (g / t2 if need[1] else None), \
            (-g * t1 / (t2 * t2) if need[2] else None), None


@_with_out
def addcmul(input, tensor1, tensor2, *, value=1):  # noqa: A002
    """``input + value * tensor1 * tensor2`` (broadcasting).

    >>> tapegrad.addcmul(tapegrad.tensor([1.]), tapegrad.tensor([2.]), tapegrad.tensor([3.]), value=0.5)
    tensor([4.])
    """
    for i, (n, v) in enumerate((("input", input), ("tensor1", tensor1), ("tensor2", tensor2))):
        _need_tensor("addcmul", n, i + 1, v)
    return Addcmul.apply(input, tensor1, tensor2, value)


@_with_out
def addcdiv(input, tensor1, tensor2, *, value=1):  # noqa: A002
    """``input + value * tensor1 / tensor2`` (broadcasting; float tensors only).

    >>> tapegrad.addcdiv(tapegrad.tensor([1.]), tapegrad.tensor([3.]), tapegrad.tensor([2.]), value=2)
    tensor([4.])
    """
    for i, (n, v) in enumerate((("input", input), ("tensor1", tensor1), ("tensor2", tensor2))):
        _need_tensor("addcdiv", n, i + 1, v)
    return Addcdiv.apply(input, tensor1, tensor2, value)


class Copysign(Primitive):
    """|a| with the sign of b (tensor b)."""

    @staticmethod
    @_quiet
    def forward(ctx, a, b):
        a, b = _cast_all((a, b), _result(a, b, floating=True))
        r = np.asarray(np.copysign(a, b))
        ctx.ratio = np.where(a == 0, 0.0, np.copysign(1.0, a) * np.copysign(1.0, b)).astype(r.dtype)
        return r

    @staticmethod
    def backward(ctx, grad):
        need = ctx.needs_input_grad
        return (grad * ctx.ratio if need[0] else None), (_zeros_like(grad) if need[1] else None)


class CopysignScalar(Copysign):
    """|a| with the sign of the number b."""

    node_name = "CopysignBackward1"


@_with_out
def copysign(input, other):  # noqa: A002
    """The magnitude of ``input`` with the sign of ``other`` (float result).

    >>> tapegrad.copysign(tapegrad.tensor([1., -2.]), -1)
    tensor([-1., -2.])
    """
    _need_tensor("copysign", "input", 1, input)
    if isinstance(other, Tensor):
        return Copysign.apply(input, other)
    return CopysignScalar.apply(input, other)


def _xlogy_np(x, y):
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.asarray(x * np.log(y))
    return np.where((x == 0) & ~np.isnan(y), np.zeros((), r.dtype), r).astype(r.dtype, copy=False)


class Xlogy(Primitive):
    """``x * log(y)``, 0 where x == 0 (unless y is NaN)."""

    @staticmethod
    def forward(ctx, x, y):
        x, y = _cast_all((x, y), _result(x, y, floating=True))
        ctx.save_inputs(0, 1)
        return _xlogy_np(x, y)

    @staticmethod
    def backward(ctx, grad):
        need = ctx.needs_input_grad
        x, y = ctx.saved_tensors
        xa = x._array if isinstance(x, Tensor) else np.asarray(x)
        gx = grad * Xlogy.apply((xa != 0).astype(grad._array.dtype), y) if need[0] else None
        gy = grad * x / y if need[1] else None
        return gx, gy


class XlogyScalarY(Xlogy):
    node_name = "XlogyBackward2"


class XlogyScalarX(Xlogy):
    node_name = "XlogyBackward1"


@_with_out
def xlogy(input, other):  # noqa: A002
    """``input * log(other)``, with 0 where ``input`` is 0 (either may be a number).

    >>> tapegrad.xlogy(tapegrad.tensor([0., 2.]), tapegrad.tensor([0., 1.]))
    tensor([0., 0.])
    """
    if not isinstance(input, Tensor):
        return XlogyScalarX.apply(input, other)
    if not isinstance(other, Tensor):
        return XlogyScalarY.apply(input, other)
    return Xlogy.apply(input, other)


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
        return _TanhGrad.compute(grad, result)

    @staticmethod
    def backward(ctx, gg):
        grad, result = ctx.saved_tensors
        need = ctx.needs_input_grad
        return (_TanhGrad.apply(gg, result) if need[0] else None,
                gg * grad * (-2 * result) if need[1] else None)


class _SigmoidGrad(Primitive):
    """``grad * result * (1 - result)`` in one NumPy pass (SigmoidBackward's formula as one op)."""

    node_name = "SigmoidBackwardBackward0"

    @staticmethod
    def compute(grad, result):
        return grad * (result * (_one(result.dtype) - result))

    @staticmethod
    def forward(ctx, grad, result):
        ctx.save_inputs(0, 1)
        return _SigmoidGrad.compute(grad, result)

    @staticmethod
    def backward(ctx, gg):
        grad, result = ctx.saved_tensors
        need = ctx.needs_input_grad
        return (_SigmoidGrad.apply(gg, result) if need[0] else None,
                gg * grad * (1 - 2 * result) if need[1] else None)


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
Frac = unary("Frac", lambda x: np.asarray(x - np.trunc(x)), lambda grad, x, r: grad, save="none", floating=False)


def _rounding(name, np_fn):
    """floor/ceil/trunc/round: integer tensors pass through unchanged; the gradient is zero."""
    def fwd(x):
        _no_bool(f"{name.lower()}_vml_cpu", x.dtype)
        return x.copy() if x.dtype.kind in "iu" else np.asarray(np_fn(x))
    return unary(name, fwd, lambda grad, x, r: _zeros_like(grad), save="none", floating=False)


Floor = _rounding("Floor", np.floor)
Ceil = _rounding("Ceil", np.ceil)
Trunc = _rounding("Trunc", np.trunc)
Round = _rounding("Round", np.rint)


class RoundDecimals(Primitive):
    """round(x, decimals): half to even at the given decimal place."""

    node_name = "RoundBackward1"

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


class Sign(Primitive):
    """sign(x): -1, 0 or 1 (bool stays bool); zero gradient."""

    @staticmethod
    def forward(ctx, x):
        return x.copy() if x.dtype == np.bool_ else np.sign(x)

    @staticmethod
    def backward(ctx, grad):
        return _zeros_like(grad)


class Abs(Primitive):
    """|x|; gradient sign(x) (0 at 0)."""

    @staticmethod
    def forward(ctx, x):
        if x.dtype == np.bool_:
            raise _not_implemented("abs_cpu", x.dtype)
        ctx.save_inputs(0)
        return np.abs(x)

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        return grad * np.sign(x._array)


class Logit(Primitive):
    """log(x / (1 - x)), with x first clamped to [eps, 1 - eps] when eps is given."""

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


def _unary_fn(name, cls, doc, example):
    def fn(input, *, out=None):  # noqa: A002
        res = cls.apply(input)   # (looked up per call: a transform may replace Function.apply, see Interpreter)
        return res if out is None else _copy_out(name, res, out)
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
                  "tapegrad.floor(tapegrad.tensor([1.5]))\n    tensor([1.])")
ceil = _unary_fn("ceil", Ceil, "Round up (zero gradient).", "tapegrad.ceil(tapegrad.tensor([1.5]))\n    tensor([2.])")
trunc = _unary_fn("trunc", Trunc, "Round towards zero (zero gradient).",
                  "tapegrad.trunc(tapegrad.tensor([-1.5]))\n    tensor([-1.])")
sign = _unary_fn("sign", Sign, "-1, 0 or 1 by the sign of input (zero gradient).",
                 "tapegrad.sign(tapegrad.tensor([-2., 0.]))\n    tensor([-1.,  0.])")
abs = _unary_fn("abs", Abs, "|input|.", "tapegrad.abs(tapegrad.tensor([-2.]))\n    tensor([2.])")  # noqa: A001
arcsin, arccos, arctan, arcsinh, arccosh, arctanh, fix, absolute = asin, acos, atan, asinh, acosh, atanh, trunc, abs


@_with_out
def frac(input):  # noqa: A002
    """The fractional part ``input - trunc(input)`` (gradient passes through).

    >>> tapegrad.frac(tapegrad.tensor([1.25, -1.5]))
    tensor([ 0.2500, -0.5000])
    """
    if input.dtype.is_floating_point is False and not input.dtype.is_complex:
        raise _not_implemented("frac_cpu", input.dtype.np)
    return Frac.apply(input)


@_with_out
def square(input):  # noqa: A002
    """``input ** 2`` (integers stay integers).

    >>> tapegrad.square(tapegrad.tensor([3.]))
    tensor([9.])
    """
    if input.dtype is _dtype.bool:
        return Pow.apply(to(input, _dtype.int64), 2)
    return Pow.apply(input, 2)


@_with_out
def round(input, *, decimals=0):  # noqa: A001,A002
    """Round half to even, at ``decimals`` decimal places (zero gradient).

    >>> tapegrad.round(tapegrad.tensor([2.5, 0.125]), decimals=2)
    tensor([2.5000, 0.1200])
    """
    if decimals == 0:
        return Round.apply(input)
    return RoundDecimals.apply(input, int(decimals))


@_with_out
def logit(input, eps=None):  # noqa: A002
    """``log(p / (1 - p))``; with ``eps``, p is first clamped to [eps, 1 - eps].

    >>> tapegrad.logit(tapegrad.tensor([0.5]))
    tensor([0.])
    """
    return Logit.apply(input, eps)


@_with_out
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
    if min is None and max is None:
        raise RuntimeError("clamp: At least one of 'min' or 'max' must not be None")
    tmin, tmax = isinstance(min, Tensor), isinstance(max, Tensor)
    if (tmin or tmax) and not ((tmin or min is None) and (tmax or max is None)):
        raise TypeError("clamp(): expected min and max to be both Tensors or both numbers (got "
                        f"{type(min).__name__} and {type(max).__name__}); wrap the number in tapegrad.tensor(...)")
    if tmin or tmax:
        return tensor_cls.apply(input, min, max)
    return scalar_cls.apply(input, min, max)


@_with_out
def clamp(input, min=None, max=None):  # noqa: A001,A002
    """Limit ``input`` to [min, max]; bounds are numbers or tensors, either may be None.

    >>> tapegrad.clamp(tapegrad.tensor([-2., 0.5, 2.]), -1, 1)
    tensor([-1.0000,  0.5000,  1.0000])
    """
    return _clamp(input, min, max, Clamp, ClampTensor)


clip = clamp


@_with_out
def clamp_min(input, min):  # noqa: A001,A002
    """``clamp(input, min=min)``.

    >>> tapegrad.clamp_min(tapegrad.tensor([-2., 2.]), 0)
    tensor([0., 2.])
    """
    return _clamp(input, min, None, ClampMin, ClampMinTensor)


@_with_out
def clamp_max(input, max):  # noqa: A001,A002
    """``clamp(input, max=max)``.

    >>> tapegrad.clamp_max(tapegrad.tensor([-2., 2.]), 0)
    tensor([-2.,  0.])
    """
    return _clamp(input, None, max, ClampMax, ClampMaxTensor)


# --- activations --------------------------------------------------------------------------------------------
_ZERO_BLOCK = 1 << 14
_ZEROS = {}


def _max0(x):
    """max(x, 0), with 0 as an array. NumPy's ``maximum`` runs a scalar loop when an operand is broadcast (a
    scalar, stride 0) but SIMD when both are arrays: measured with NumPy 2.4, float32 (64, 16, 28, 28) 243 -> 80
    µs, (128, 256) 10 -> 2 µs. So 0 comes from a block of zeros: whole for a small ``x``, row by row over a large
    C-contiguous one (any other layout keeps the scalar)."""
    z = _ZEROS.get(x.dtype)
    if z is None:
        z = _ZEROS[x.dtype] = np.zeros(_ZERO_BLOCK, x.dtype)
        z.flags.writeable = False
    n = x.size
    if n <= _ZERO_BLOCK:
        return np.maximum(x, z[:n].reshape(x.shape))
    if not x.flags.c_contiguous:
        return np.maximum(x, z[0])
    out = np.empty_like(x)
    q = n - n % _ZERO_BLOCK
    xf, of = x.reshape(-1), out.reshape(-1)
    np.maximum(xf[:q].reshape(-1, _ZERO_BLOCK), z, out=of[:q].reshape(-1, _ZERO_BLOCK))
    np.maximum(xf[q:], z[:n - q], out=of[q:])
    return out


class Relu(Primitive):
    """max(x, 0); the gradient at 0 is 0, as torch's."""

    array_backward = True

    @staticmethod
    def forward(ctx, x):
        if x.dtype.kind == "b":
            raise RuntimeError("Boolean inputs not supported for relu")
        ctx.save_result()
        return _max0(x)

    @staticmethod
    def backward(ctx, grad):
        result, = ctx.saved_tensors
        if ctx._arrays is OWN_GRAD:     # (the walk's own gradient array, held by nobody else: masked in place)
            grad *= result > 0
            return grad
        return kernel(_ReluGrad, grad, result)


class _ReluGrad(Primitive):
    """``grad`` where ``result > 0``, else 0: ReluBackward's formula as one NumPy pass (torch's
    threshold_backward); differentiable in ``grad`` for double backward, constant in ``result``."""

    node_name = "ThresholdBackwardBackward0"

    @staticmethod
    def compute(grad, result):
        return grad * (result > 0)

    @staticmethod
    def forward(ctx, grad, result):
        mask = result > 0
        ctx.mask = mask
        return grad * mask

    @staticmethod
    def backward(ctx, gg):
        return _ReluGrad.apply(gg, Tensor._make(ctx.mask)), None


class Hardtanh(Primitive):
    """clip(x, min_val, max_val); gradient 1 strictly inside."""

    @staticmethod
    def forward(ctx, x, lo, hi):
        if x.dtype == np.bool_:
            raise RuntimeError("Bool inputs not supported for hardtanh")
        if x.dtype == np.uint8 and (lo < 0 or hi < 0):
            raise RuntimeError("cannot do hardtanh on an unsigned type with negative limits")
        ctx.mask = (x > lo) & (x < hi)
        t = x.dtype.type
        return np.asarray(np.minimum(np.maximum(x, t(lo)), t(hi)))

    @staticmethod
    def backward(ctx, grad):
        return _w(ctx.mask, grad, 0.0), None, None


class LeakyRelu(Primitive):
    """x if x > 0 else slope * x."""

    @staticmethod
    @_quiet
    def forward(ctx, x, slope):
        _float_only("leaky_relu_cpu", x)
        ctx.mask, ctx.slope = x > 0, slope
        return np.asarray(np.where(ctx.mask, x, x * x.dtype.type(slope)))

    @staticmethod
    def backward(ctx, grad):
        return _w(ctx.mask, grad, grad * ctx.slope), None


class LeakyReluInplace(LeakyRelu):
    node_name = "LeakyReluBackward1"


class Elu(Primitive):
    """scale * (x if x > 0 else alpha * (exp(x * input_scale) - 1)): elu, selu (and celu, with its own name)."""

    @staticmethod
    @_quiet
    def forward(ctx, x, alpha, scale, input_scale):
        _float_only("elu_cpu", x)
        ctx.save_inputs(0)
        ctx.p = (alpha, scale, input_scale)
        t = x.dtype.type
        with np.errstate(over="ignore"):
            neg = np.expm1(x * t(input_scale)) * t(alpha * scale)
        return np.asarray(np.where(x > 0, x * t(scale), neg))

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        alpha, scale, iscale = ctx.p
        neg = grad * (iscale * alpha * scale) * exp(x * iscale)
        return _w(x._array <= 0, neg, grad * scale), None, None, None


class EluInplace(Primitive):
    """The in-place elu/selu/celu: backward from the result, as torch's ``EluBackward1``."""

    node_name = "EluBackward1"

    @staticmethod
    def forward(ctx, x, alpha, scale, input_scale):
        out = Elu.forward(ctx, x, alpha, scale, input_scale)
        ctx.save_result()
        return out

    @staticmethod
    def backward(ctx, grad):
        r, = ctx.saved_tensors
        alpha, scale, iscale = ctx.p
        return _w(r._array <= 0, grad * iscale * (r + alpha * scale), grad * scale), None, None, None


def _celu_backward_scale(ctx):
    # torch's derivative of celu uses input_scale = 1.0 / alpha.toFloat(): alpha rounded to float32 (even for
    # float64 tensors), while its forward uses 1 / alpha exactly
    alpha, scale, _ = ctx.p
    ctx.p = (alpha, scale, 1.0 / float(np.float32(alpha)))


class Celu(Elu):
    node_name = "CeluBackward0"

    @staticmethod
    def forward(ctx, x, alpha, scale, input_scale):
        out = Elu.forward(ctx, x, alpha, scale, input_scale)
        _celu_backward_scale(ctx)
        return out


class CeluInplace(EluInplace):
    node_name = "CeluBackward1"

    @staticmethod
    def forward(ctx, x, alpha, scale, input_scale):
        out = EluInplace.forward(ctx, x, alpha, scale, input_scale)
        _celu_backward_scale(ctx)
        return out


class Threshold(Primitive):
    """x if x > threshold else value."""

    @staticmethod
    def forward(ctx, x, th, value):
        _no_bool("threshold_cpu", x.dtype)
        ctx.mask = x > th
        return np.asarray(np.where(ctx.mask, x, np.asarray(value).astype(x.dtype)))

    @staticmethod
    def backward(ctx, grad):
        return _w(ctx.mask, grad, 0.0), None, None


class ThresholdInplace(Threshold):
    node_name = "ThresholdBackward1"


_ONE_SIXTH_F = float(np.float32(1.0) / np.float32(6.0))   # torch's backward uses the float literal 1.0f / 6


class Hardsigmoid(Primitive):
    """relu6(x + 3) / 6."""

    @staticmethod
    def forward(ctx, x):
        _float_only("hardsigmoid_cpu", x)
        ctx.mask = (x > -3) & (x < 3)
        t = x.dtype.type
        return np.asarray(np.minimum(np.maximum(x + t(3), t(0)), t(6)) / t(6))

    @staticmethod
    def backward(ctx, grad):
        return _w(ctx.mask, grad * _ONE_SIXTH_F, 0.0)


class Hardswish(Primitive):
    """x * relu6(x + 3) / 6."""

    @staticmethod
    def forward(ctx, x):
        _float_only("hardswish_cpu", x)
        ctx.save_inputs(0)
        t = x.dtype.type
        return np.asarray(x * np.minimum(np.maximum(x + t(3), t(0)), t(6)) / t(6))

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        xa = x._array
        return _w(xa <= -3, 0.0, _w(xa < 3, grad * (x / 3 + 0.5), grad))


class Softplus(Primitive):
    """log(1 + exp(beta * x)) / beta, linear above ``threshold`` (stable for any x)."""

    @staticmethod
    @_quiet
    def forward(ctx, x, beta, threshold):
        _float_only("softplus_cpu", x)
        ctx.save_inputs(0)
        ctx.beta, ctx.threshold = beta, threshold
        t = x.dtype.type
        bx = x * t(beta)
        with np.errstate(over="ignore"):
            soft = (np.maximum(bx, 0) + np.log1p(np.exp(-np.abs(bx)))) / t(beta)
        return np.asarray(np.where(bx > threshold, x, soft))

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        beta = ctx.beta
        return _w(x._array * beta > ctx.threshold, grad, grad * sigmoid(x * beta)), None, None


class LogSigmoid(Primitive):
    """log(sigmoid(x)) = min(x, 0) - log1p(exp(-|x|)), stable for any x."""

    node_name = "LogSigmoidBackward0"

    @staticmethod
    @_quiet
    def forward(ctx, x):
        _float_only("log_sigmoid_forward_cpu", x)
        ctx.save_inputs(0)
        return np.asarray(np.minimum(x, 0) - np.log1p(np.exp(-np.abs(x))))

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        return grad * sigmoid(-x)


class Silu(Primitive):
    """x * sigmoid(x)."""

    @staticmethod
    @_quiet
    def forward(ctx, x):
        _float_only("silu_cpu", x)
        ctx.save_inputs(0)
        return np.asarray(x * _sigmoid_np(x))

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        s = sigmoid(x)
        return grad * (s * (1 + x * (1 - s)))


class Mish(Primitive):
    """x * tanh(softplus(x))."""

    @staticmethod
    @_quiet
    def forward(ctx, x):
        _float_only("mish_cpu", x)
        ctx.save_inputs(0)
        sp = np.maximum(x, 0) + np.log1p(np.exp(-np.abs(x)))
        return np.asarray(x * np.tanh(sp))

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        t = tanh(Softplus.apply(x, 1.0, 20.0))
        return grad * (t + x * sigmoid(x) * (1 - t * t))


_SQRT1_2 = 1 / math.sqrt(2.0)
_INV_SQRT_2PI = 1 / math.sqrt(2 * math.pi)
_GELU_K = math.sqrt(2 / math.pi)


class Gelu(Primitive):
    """x * Phi(x) (``approximate="none"``) or its tanh approximation (``approximate="tanh"``)."""

    @staticmethod
    @_quiet
    def forward(ctx, x, approximate):
        if approximate not in ("none", "tanh"):
            raise RuntimeError(f"approximate argument must be either none or tanh. (got {approximate!r})")
        _float_only("GeluKernelImpl", x)
        ctx.save_inputs(0)
        ctx.approximate = approximate
        t = x.dtype.type
        if approximate == "tanh":
            inner = t(_GELU_K) * (x + t(0.044715) * x * x * x)
            return np.asarray(t(0.5) * x * (t(1) + np.tanh(inner)))
        return np.asarray(x * t(0.5) * (t(1) + _erf_np(x * t(_SQRT1_2))))

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        if ctx.approximate == "tanh":
            x2 = x * x
            th = tanh((x + 0.044715 * x2 * x) * _GELU_K)
            left = 0.5 * (1 + th)
            right = 0.5 * x * (1 - th * th) * (_GELU_K * (1 + 3 * 0.044715 * x2))
            return grad * (left + right), None
        cdf = 0.5 * (1 + erf(x * _SQRT1_2))
        pdf = exp(-0.5 * x * x) * _INV_SQRT_2PI
        return grad * (cdf + x * pdf), None


class Hardshrink(Primitive):
    """x where |x| > lambd, else 0."""

    @staticmethod
    def forward(ctx, x, lambd):
        _float_only("hardshrink_cpu", x)
        ctx.mask = (x < -lambd) | (x > lambd)
        return np.asarray(np.where(ctx.mask, x, np.zeros((), x.dtype)))

    @staticmethod
    def backward(ctx, grad):
        return _w(ctx.mask, grad, 0.0), None


class Softshrink(Primitive):
    """x - lambd above lambd, x + lambd below -lambd, else 0."""

    @staticmethod
    def forward(ctx, x, lambd):
        _float_only("softshrink_cpu", x)
        if lambd < 0:
            raise RuntimeError(f"lambda must be greater or equal to 0, but found to be {lambd}.")
        t = x.dtype.type
        ctx.mask = (x < -lambd) | (x > lambd)
        return np.asarray(np.where(x > lambd, x - t(lambd), np.where(x < -lambd, x + t(lambd), t(0))))

    @staticmethod
    def backward(ctx, grad):
        return _w(ctx.mask, grad, 0.0), None


class Prelu(Primitive):
    """x if x > 0 else weight * x, one weight per channel (dim 1) or a single shared weight."""

    node_name = "PreluKernelBackward0"

    @staticmethod
    def forward(ctx, x, w):
        n = w.size
        if n != 1:
            c = x.shape[1] if x.ndim >= 2 else 1
            if n != c:
                raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found parameter numbers "
                                   f"= {n} and channel size = {c}.")
            view = (1, n) + (1,) * (x.ndim - 2)
        else:
            view = (1,) * x.ndim
        if w.ndim > 1 and n != 1:
            raise RuntimeError(f"prelu: weight must be 0-d or 1-d, got shape {shape_str(w.shape)}")
        ctx.view, ctx.wshape = view, w.shape
        ctx.save_inputs(0, 1)
        d = _result(x, w)
        x, w = _cast_all((x, w), d)
        return np.asarray(np.where(x > 0, x, x * w.reshape(view)))

    @staticmethod
    def backward(ctx, grad):
        x, w = ctx.saved_tensors
        need = ctx.needs_input_grad
        pos = x._array > 0
        gx = _w(pos, grad, grad * w.reshape(ctx.view)) if need[0] else None
        gw = None
        if need[1]:
            gw = _w(pos, 0.0, x * grad)
            dims = tuple(i for i, s in enumerate(ctx.view) if s == 1)
            if dims:
                gw = gw.sum(dims)
            gw = gw.reshape(ctx.wshape)
        return gx, gw


class Rrelu(Primitive):
    """Randomized leaky relu: negative inputs scaled by U(lower, upper) noise (training) or its mean (eval)."""

    node_name = "RreluWithNoiseBackward0"

    @staticmethod
    def forward(ctx, x, lower, upper, training):
        _float_only("rrelu_with_noise_cpu", x)
        if training:
            from .._random import _gen
            noise = _gen(None).uniform(lower, upper, size=x.shape).astype(x.dtype)
        else:
            noise = np.asarray((lower + upper) / 2, x.dtype)
        ctx.factor = np.where(x > 0, np.ones((), x.dtype), noise)
        return np.asarray(x * ctx.factor)

    @staticmethod
    def backward(ctx, grad):
        return grad * ctx.factor, None, None, None


class RreluInplace(Rrelu):
    node_name = "RreluWithNoiseBackward1"


def _act(x, inplace, cls, inplace_cls, *args):
    if inplace:
        return apply_inplace(x, lambda t: inplace_cls.apply(t, *args))
    return cls.apply(x, *args)


def relu(input, inplace=False):  # noqa: A002
    """max(input, 0).

    >>> tapegrad.relu(tapegrad.tensor([-1., 2.]))
    tensor([0., 2.])
    """
    return _act(input, inplace, Relu, Relu)


def relu_(input):  # noqa: A002
    """In-place relu."""
    return relu(input, inplace=True)


def relu6(input, inplace=False):  # noqa: A002
    """min(max(input, 0), 6).

    >>> F.relu6(tapegrad.tensor([-1., 7.]))
    tensor([0., 6.])
    """
    return hardtanh(input, 0.0, 6.0, inplace)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):  # noqa: A002
    """Clip to [min_val, max_val].

    >>> F.hardtanh(tapegrad.tensor([-2., 0.5]))
    tensor([-1.0000,  0.5000])
    """
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return _act(input, inplace, Hardtanh, Hardtanh, min_val, max_val)


def hardtanh_(input, min_val=-1.0, max_val=1.0):  # noqa: A002
    """In-place hardtanh."""
    return hardtanh(input, min_val, max_val, inplace=True)


def leaky_relu(input, negative_slope=0.01, inplace=False):  # noqa: A002
    """input if input > 0 else negative_slope * input.

    >>> F.leaky_relu(tapegrad.tensor([-1., 2.]), 0.1)
    tensor([-0.1000,  2.0000])
    """
    return _act(input, inplace, LeakyRelu, LeakyReluInplace, negative_slope)


def leaky_relu_(input, negative_slope=0.01):  # noqa: A002
    """In-place leaky_relu."""
    return leaky_relu(input, negative_slope, inplace=True)


def elu(input, alpha=1.0, inplace=False):  # noqa: A002
    """input if input > 0 else alpha * (exp(input) - 1).

    >>> F.elu(tapegrad.tensor([0., 1.]))
    tensor([0., 1.])
    """
    return _act(input, inplace, Elu, EluInplace, alpha, 1.0, 1.0)


def elu_(input, alpha=1.0):  # noqa: A002
    """In-place elu."""
    return elu(input, alpha, inplace=True)


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def selu(input, inplace=False):  # noqa: A002
    """scale * elu(input, alpha) with the self-normalising constants.

    >>> tapegrad.selu(tapegrad.tensor([0.]))
    tensor([0.])
    """
    return _act(input, inplace, Elu, EluInplace, _SELU_ALPHA, _SELU_SCALE, 1.0)


def selu_(input):  # noqa: A002
    """In-place selu."""
    return selu(input, inplace=True)


def celu(input, alpha=1.0, inplace=False):  # noqa: A002
    """max(0, input) + min(0, alpha * (exp(input / alpha) - 1)).

    >>> tapegrad.celu(tapegrad.tensor([0.]))
    tensor([0.])
    """
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError")
    return _act(input, inplace, Celu, CeluInplace, alpha, 1.0, 1.0 / alpha)


def celu_(input, alpha=1.0):  # noqa: A002
    """In-place celu."""
    return celu(input, alpha, inplace=True)


def threshold(input, threshold, value, inplace=False):  # noqa: A002
    """input where input > threshold, else value.

    >>> tapegrad.threshold(tapegrad.tensor([0.5, 2.]), 1.0, 0.0)
    tensor([0., 2.])
    """
    return _act(input, inplace, Threshold, ThresholdInplace, threshold, value)


def threshold_(input, threshold, value):  # noqa: A002
    """In-place threshold."""
    return _act(input, True, Threshold, ThresholdInplace, threshold, value)


def hardsigmoid(input, inplace=False):  # noqa: A002
    """relu6(input + 3) / 6.

    >>> F.hardsigmoid(tapegrad.tensor([0.]))
    tensor([0.5000])
    """
    return _act(input, inplace, Hardsigmoid, Hardsigmoid)


def hardswish(input, inplace=False):  # noqa: A002
    """input * relu6(input + 3) / 6.

    >>> F.hardswish(tapegrad.tensor([3.]))
    tensor([3.])
    """
    return _act(input, inplace, Hardswish, Hardswish)


def silu(input, inplace=False):  # noqa: A002
    """input * sigmoid(input).

    >>> F.silu(tapegrad.tensor([0.]))
    tensor([0.])
    """
    return _act(input, inplace, Silu, Silu)


def mish(input, inplace=False):  # noqa: A002
    """input * tanh(softplus(input)).

    >>> F.mish(tapegrad.tensor([0.]))
    tensor([0.])
    """
    return _act(input, inplace, Mish, Mish)


def gelu(input, approximate="none"):  # noqa: A002
    """input * Phi(input) (the Gaussian CDF), or its tanh approximation with ``approximate="tanh"``.

    >>> F.gelu(tapegrad.tensor([0.]))
    tensor([0.])
    """
    return Gelu.apply(input, approximate)


def softplus(input, beta=1.0, threshold=20.0):  # noqa: A002
    """log(1 + exp(beta * input)) / beta, linear where beta * input > threshold.

    >>> F.softplus(tapegrad.tensor([0.]))
    tensor([0.6931])
    """
    return Softplus.apply(input, beta, threshold)


def logsigmoid(input):  # noqa: A002
    """log(sigmoid(input)), stable for large |input|.

    >>> F.logsigmoid(tapegrad.tensor([0.]))
    tensor([-0.6931])
    """
    return LogSigmoid.apply(input)


def softsign(input):  # noqa: A002
    """input / (1 + |input|).

    >>> F.softsign(tapegrad.tensor([1.]))
    tensor([0.5000])
    """
    return input / (abs(input) + 1)


def tanhshrink(input):  # noqa: A002
    """input - tanh(input).

    >>> F.tanhshrink(tapegrad.tensor([0.]))
    tensor([0.])
    """
    return input - tanh(input)


def hardshrink(input, lambd=0.5):  # noqa: A002
    """input where |input| > lambd, else 0.

    >>> tapegrad.hardshrink(tapegrad.tensor([0.2, 1.]))
    tensor([0., 1.])
    """
    return Hardshrink.apply(input, lambd)


def softshrink(input, lambd=0.5):  # noqa: A002
    """Shrink towards 0 by lambd (0 inside [-lambd, lambd]).

    >>> F.softshrink(tapegrad.tensor([0.2, 1.]))
    tensor([0.0000, 0.5000])
    """
    return Softshrink.apply(input, lambd)


def prelu(input, weight):  # noqa: A002
    """input if input > 0 else weight * input; ``weight`` has 1 element or one per channel (dim 1).

    >>> tapegrad.prelu(tapegrad.tensor([-2., 1.]), tapegrad.tensor([0.25]))
    tensor([-0.5000,  1.0000])
    """
    return Prelu.apply(input, weight)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):  # noqa: A002
    """Leaky relu with slope U(lower, upper) per element in training, (lower + upper) / 2 in eval.

    >>> tapegrad.rrelu(tapegrad.tensor([-3., 1.]), 0.25, 0.75)
    tensor([-1.5000,  1.0000])
    """
    return _act(input, inplace, Rrelu, RreluInplace, lower, upper, training)


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False):  # noqa: A002
    """In-place rrelu."""
    return rrelu(input, lower, upper, training, inplace=True)


# --- comparisons and logic (no gradient) --------------------------------------------------------------------
def _operand(x):
    if isinstance(x, Tensor):
        return x._array
    if isinstance(x, (list, tuple)):
        return np.asarray(x)
    return x


def _compare(np_fn, name):
    def cmp(input, other):  # noqa: A002
        _need_tensor(name, "input", 1, input)
        a, b, _ = promote(_operand(input), _operand(other))
        return Tensor._make(np.asarray(np_fn(a, b)))
    cmp.__name__ = cmp.__qualname__ = name
    cmp.__doc__ = (f"Elementwise ``{np_fn.__name__}`` as a bool tensor (no gradient).\n\n"
                   f"    >>> tapegrad.{name}(tapegrad.tensor([1, 2]), 2)\n"
                   f"    {Tensor._make(np.asarray(np_fn(np.array([1, 2]), 2)))!r}\n    ")
    return _with_out(cmp)


eq, ne, lt, le, gt, ge = (_compare(f, n) for f, n in (
    (np.equal, "eq"), (np.not_equal, "ne"), (np.less, "lt"), (np.less_equal, "le"), (np.greater, "gt"),
    (np.greater_equal, "ge")))
greater, greater_equal, less, less_equal, not_equal = gt, ge, lt, le, ne


def _logical(np_fn, name):
    def fn(input, other):  # noqa: A002
        _need_tensor(name, "input", 1, input)
        _need_tensor(name, "other", 2, other)
        return Tensor._make(np.asarray(np_fn(input._array, other._array)))
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"Elementwise logical {name[8:]} of the truth values (bool result).\n\n"
                  f"    >>> tapegrad.{name}(tapegrad.tensor([True, False]), tapegrad.tensor([True, True]))\n"
                  f"    {Tensor._make(np.asarray(np_fn(np.array([True, False]), True)))!r}\n    ")
    return _with_out(fn)


logical_and = _logical(np.logical_and, "logical_and")
logical_or = _logical(np.logical_or, "logical_or")
logical_xor = _logical(np.logical_xor, "logical_xor")


@_with_out
def logical_not(input):  # noqa: A002
    """Elementwise logical not (bool result).

    >>> tapegrad.logical_not(tapegrad.tensor([0, 1]))
    tensor([ True, False])
    """
    return Tensor._make(np.logical_not(input._array))


def _bitwise(np_fn, name):
    def fn(input, other):  # noqa: A002
        a, b, d = promote(_operand(input), _operand(other))
        if d.kind not in "iub":
            raise _not_implemented(f"{name}_cpu", d)
        return Tensor._make(np.asarray(np_fn(a, b)))
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"Elementwise {name[8:]} of the bits of integer or bool tensors.\n\n"
                  f"    >>> tapegrad.{name}(tapegrad.tensor([12]), 10)\n"
                  f"    {Tensor._make(np.asarray(np_fn(np.array([12]), 10)))!r}\n    ")
    return _with_out(fn)


bitwise_and = _bitwise(np.bitwise_and, "bitwise_and")
bitwise_or = _bitwise(np.bitwise_or, "bitwise_or")
bitwise_xor = _bitwise(np.bitwise_xor, "bitwise_xor")


@_with_out
def bitwise_not(input):  # noqa: A002
    """Bitwise not of an integer tensor (logical not of a bool tensor).

    >>> tapegrad.bitwise_not(tapegrad.tensor([0, 5]))
    tensor([-1, -6])
    """
    if input.dtype.np.kind not in "iub":
        raise _not_implemented("bitwise_not_cpu", input.dtype.np)
    return Tensor._make(np.invert(input._array))


def _invert(self):
    if self.dtype.np.kind not in "iub":
        raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type tensors")
    return Tensor._make(np.invert(self._array))


def _test(name, np_fn, doc, example):
    def fn(input):  # noqa: A002
        a = input._array
        return Tensor._make(np.asarray(np_fn(a)))
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"{doc}\n\n    >>> tapegrad.{name}(tapegrad.tensor([1., float('inf'), float('nan')]))\n    {example}\n"
    return fn


def _for_float(f, default):
    return lambda a: f(a) if a.dtype.kind in "fc" else np.full(a.shape, default)


isnan = _test("isnan", _for_float(np.isnan, False), "True where input is NaN.", "tensor([False, False,  True])")
isinf = _test("isinf", _for_float(np.isinf, False), "True where input is +-inf.", "tensor([False,  True, False])")
isposinf = _test("isposinf", _for_float(np.isposinf, False), "True where input is +inf.",
                 "tensor([False,  True, False])")
isneginf = _test("isneginf", _for_float(np.isneginf, False), "True where input is -inf.",
                 "tensor([False, False, False])")
isfinite = _test("isfinite", _for_float(np.isfinite, True), "True where input is finite.",
                 "tensor([ True, False, False])")
isreal = _test("isreal", lambda a: np.imag(a) == 0 if a.dtype.kind == "c" else np.full(a.shape, True),
               "True where input has no imaginary part (everywhere for real dtypes).", "tensor([True, True, True])")
signbit = _test("signbit", lambda a: np.signbit(a) if a.dtype != np.bool_ else np.zeros(a.shape, bool),
                "True where the sign bit is set (also for -0.0).", "tensor([False, False, False])")


def _same_dtype(a, b):
    if a.dtype is not b.dtype:
        raise RuntimeError(f"{a.dtype._legacy} did not match {b.dtype._legacy}")


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):  # noqa: A002
    """``|input - other| <= atol + rtol * |other|`` elementwise (bool tensor).

    >>> tapegrad.isclose(tapegrad.tensor([1., 2.]), tapegrad.tensor([1., 2.1]))
    tensor([ True, False])
    """
    _same_dtype(input, other)
    a, b = input._array, other._array
    if a.dtype.kind in "fc":
        return Tensor._make(np.asarray(np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)))
    diff = np.abs(a.astype(np.float64) - b.astype(np.float64))
    return Tensor._make(np.asarray((a == b) | (diff <= atol + rtol * np.abs(b.astype(np.float64)))))


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):  # noqa: A002
    """True if ``isclose`` holds everywhere.

    >>> tapegrad.allclose(tapegrad.tensor([1., 2.]), tapegrad.tensor([1., 2.]))
    True
    """
    return bool(isclose(input, other, rtol, atol, equal_nan)._array.all())


def equal(input, other):  # noqa: A002
    """True if both tensors have the same shape and elements.

    >>> tapegrad.equal(tapegrad.tensor([1, 2]), tapegrad.tensor([1, 2]))
    True
    """
    a, b = input._array, other._array
    return a.shape == b.shape and bool(np.all(a == b))


# --- copies and casts ---------------------------------------------------------------------------------------
class Clone(Primitive):
    """A copy with its own memory; the gradient passes through."""

    array_backward = True

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


def clone(input, *, memory_format=None):  # noqa: A002
    """A copy of ``input`` that stays in the graph (gradient flows back to ``input``)."""
    return Clone.apply(input)


def to(input, *args, dtype=None, device=None, non_blocking=False, copy=False, memory_format=None):  # noqa: A002
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


class _CopyFrom(Primitive):
    """``x.copy_(src)``'s op: ``src`` broadcast to x's shape and cast to its dtype (torch's CopyBackwards). x's old
    values get a zero gradient; ``src`` gets the gradient, summed over the broadcast and cast back (the engine
    does both from src's recorded shape and dtype)."""

    node_name = "CopyBackwards"
    array_backward = True

    @staticmethod
    def forward(ctx, x, src):
        # (a src that broadcasts beyond x's shape gives a larger result: apply_inplace's write refuses it, as torch)
        shape = x.shape if src.shape == x.shape else broadcast_or_error(x.shape, src.shape)
        return np.broadcast_to(src, shape).astype(x.dtype)

    @staticmethod
    def backward(ctx, grad):
        gx = None
        if ctx.needs_input_grad[0]:
            gx = np.zeros_like(grad) if grad.__class__ is np.ndarray else Tensor._make(np.zeros_like(grad._array))
        return gx, grad


def copy_(self, src, non_blocking=False):
    """Copy ``src`` (broadcast, cast) into this tensor in place; differentiable with respect to ``src``."""
    if not isinstance(src, Tensor):
        src = Tensor._make(np.asarray(src))
    return apply_inplace(self, _CopyFrom.apply, src)



def _iop(fn):
    def iop(self, other):
        return apply_inplace(self, fn, other)
    return iop


def _rfloordiv(self, other):
    return FloorDivide.apply(other, self)


def _rmod(self, other):
    return RRemainder.apply(self, other)


def _dunder_cmp(fn):
    """``x == other``: anything that is not a tensor or a number (``None``, a string) compares by identity."""
    def cmp(self, other):
        if not isinstance(other, (Tensor, bool, int, float, complex, list, tuple, np.ndarray, np.generic)):
            return NotImplemented
        return fn(self, other)
    cmp.__name__ = fn.__name__
    return cmp


def _pos(self):
    if self.dtype is _dtype.bool:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return self


def _tensor_where(self, condition, y):
    return where(condition, self, y)


# top-level and method in-place variants (``tapegrad.exp_(x)``, ``x.exp_()``)
negative_ = neg_
abs_, exp_, exp2_, expm1_, log_, log2_, log10_, log1p_ = (_inplace(f) for f in (
    abs, exp, exp2, expm1, log, log2, log10, log1p))
sqrt_, rsqrt_, square_, reciprocal_, sin_, cos_, tan_ = (_inplace(f) for f in (
    sqrt, rsqrt, square, reciprocal, sin, cos, tan))
asin_, acos_, atan_, sinh_, cosh_, tanh_, asinh_, acosh_, atanh_ = (_inplace(f) for f in (
    asin, acos, atan, sinh, cosh, tanh, asinh, acosh, atanh))
arcsin_, arccos_, arctan_, arcsinh_, arccosh_, arctanh_ = asin_, acos_, atan_, asinh_, acosh_, atanh_
sigmoid_, logit_, erf_, erfc_, erfinv_, floor_, ceil_, round_, trunc_, frac_ = (_inplace(f) for f in (
    sigmoid, logit, erf, erfc, erfinv, floor, ceil, round, trunc, frac))
fix_ = trunc_
sign_, clamp_, clamp_min_, clamp_max_, nan_to_num_ = (_inplace(f) for f in (
    sign, clamp, clamp_min, clamp_max, nan_to_num))
clip_ = clamp_
xlogy_, floor_divide_, fmod_, remainder_, atan2_, hypot_, lerp_, addcmul_, addcdiv_, copysign_ = (
    _inplace(f) for f in (xlogy, floor_divide, fmod, remainder, atan2, hypot, lerp, addcmul, addcdiv, copysign))
eq_, ne_, lt_, le_, gt_, ge_ = (_inplace(f) for f in (eq, ne, lt, le, gt, ge))
logical_and_, logical_or_, logical_xor_, logical_not_ = (_inplace(f) for f in (
    logical_and, logical_or, logical_xor, logical_not))
bitwise_and_, bitwise_or_, bitwise_xor_, bitwise_not_ = (_inplace(f) for f in (
    bitwise_and, bitwise_or, bitwise_xor, bitwise_not))

bind(
    # operators go straight to the op's apply (no out= / alpha parsing on the hottest path)
    __add__=lambda self, other: Add.apply(self, other),
    __radd__=lambda self, other: Add.apply(other, self) if isinstance(other, Tensor) else
    Add.apply(self, other),
    __sub__=lambda self, other: Sub.apply(self, other), __rsub__=lambda self, other: Rsub.apply(self, other),
    __mul__=lambda self, other: Mul.apply(self, other), __rmul__=lambda self, other: Mul.apply(self, other),
    __truediv__=lambda self, other: Div.apply(self, other), __rtruediv__=_rtruediv, __div__=div,
    __floordiv__=floor_divide, __rfloordiv__=_rfloordiv, __mod__=remainder, __rmod__=_rmod,
    __pow__=pow, __rpow__=_rpow, __neg__=neg, __pos__=_pos, __abs__=abs,
    __iadd__=_iop(add), __isub__=_iop(sub), __imul__=_iop(mul), __itruediv__=_iop(div), __ipow__=_iop(pow),
    __ifloordiv__=_iop(floor_divide), __imod__=_iop(remainder),
    __eq__=_dunder_cmp(eq), __ne__=_dunder_cmp(ne), __lt__=lt, __le__=le, __gt__=gt, __ge__=ge,
    __and__=bitwise_and, __or__=bitwise_or, __xor__=bitwise_xor, __invert__=_invert,
    __rand__=lambda self, other: bitwise_and(other, self), __ror__=lambda self, other: bitwise_or(other, self),
    __rxor__=lambda self, other: bitwise_xor(other, self),
    __iand__=_iop(bitwise_and), __ior__=_iop(bitwise_or), __ixor__=_iop(bitwise_xor),
    add=add, sub=sub, subtract=sub, mul=mul, multiply=mul, div=div, divide=div, true_divide=div, neg=neg,
    negative=neg, pow=pow, float_power=float_power, floor_divide=floor_divide, fmod=fmod, remainder=remainder,
    atan2=atan2, arctan2=atan2, hypot=hypot, maximum=maximum, minimum=minimum, fmax=fmax, fmin=fmin, lerp=lerp,
    where=_tensor_where, addcmul=addcmul, addcdiv=addcdiv, copysign=copysign, xlogy=xlogy,
    abs=abs, absolute=abs, sign=sign, exp=exp, exp2=exp2, expm1=expm1, log=log, log2=log2, log10=log10,
    log1p=log1p, sqrt=sqrt, rsqrt=rsqrt, square=square, reciprocal=reciprocal, sin=sin, cos=cos, tan=tan,
    asin=asin, acos=acos, atan=atan, arcsin=asin, arccos=acos, arctan=atan, sinh=sinh, cosh=cosh, tanh=tanh,
    asinh=asinh, acosh=acosh, atanh=atanh, arcsinh=asinh, arccosh=acosh, arctanh=atanh, sigmoid=sigmoid,
    logit=logit, erf=erf, erfc=erfc, erfinv=erfinv, floor=floor, ceil=ceil, round=round, trunc=trunc, fix=trunc,
    frac=frac, clamp=clamp, clip=clamp, clamp_min=clamp_min, clamp_max=clamp_max, nan_to_num=nan_to_num,
    relu=relu, hardshrink=hardshrink, prelu=prelu,
    eq=eq, ne=ne, lt=lt, le=le, gt=gt, ge=ge, greater=gt, greater_equal=ge, less=lt, less_equal=le, not_equal=ne,
    logical_and=logical_and, logical_or=logical_or, logical_xor=logical_xor, logical_not=logical_not,
    bitwise_and=bitwise_and, bitwise_or=bitwise_or, bitwise_xor=bitwise_xor, bitwise_not=bitwise_not,
    isnan=isnan, isinf=isinf, isposinf=isposinf, isneginf=isneginf, isfinite=isfinite, isreal=isreal,
    allclose=allclose, isclose=isclose, equal=equal, signbit=signbit,
    add_=add_, sub_=sub_, subtract_=sub_, mul_=mul_, multiply_=mul_, div_=div_, divide_=div_, true_divide_=div_,
    pow_=pow_, float_power_=_float_power_, neg_=neg_, negative_=neg_, zero_=zero_, fill_=fill_, copy_=copy_,
    floor_divide_=floor_divide_, fmod_=fmod_, remainder_=remainder_, atan2_=atan2_, arctan2_=atan2_,
    hypot_=hypot_, lerp_=lerp_, addcmul_=addcmul_, addcdiv_=addcdiv_, copysign_=copysign_, xlogy_=xlogy_,
    abs_=abs_, absolute_=abs_, sign_=sign_, exp_=exp_, exp2_=exp2_, expm1_=expm1_, log_=log_, log2_=log2_,
    log10_=log10_, log1p_=log1p_, sqrt_=sqrt_, rsqrt_=rsqrt_, square_=square_, reciprocal_=reciprocal_,
    sin_=sin_, cos_=cos_, tan_=tan_, asin_=asin_, acos_=acos_, atan_=atan_, arcsin_=asin_, arccos_=acos_,
    arctan_=atan_, sinh_=sinh_, cosh_=cosh_, tanh_=tanh_, asinh_=asinh_, acosh_=acosh_, atanh_=atanh_,
    arcsinh_=asinh_, arccosh_=acosh_, arctanh_=atanh_, sigmoid_=sigmoid_, logit_=logit_, erf_=erf_, erfc_=erfc_,
    erfinv_=erfinv_, floor_=floor_, ceil_=ceil_, round_=round_, trunc_=trunc_, fix_=trunc_, frac_=frac_,
    clamp_=clamp_, clip_=clamp_, clamp_min_=clamp_min_, clamp_max_=clamp_max_, nan_to_num_=nan_to_num_,
    relu_=relu_, eq_=eq_, ne_=ne_, lt_=lt_, le_=le_, gt_=gt_, ge_=ge_, greater_=gt_, greater_equal_=ge_,
    less_=lt_, less_equal_=le_, not_equal_=ne_, logical_and_=logical_and_,
    logical_or_=logical_or_, logical_xor_=logical_xor_, logical_not_=logical_not_, bitwise_and_=bitwise_and_,
    bitwise_or_=bitwise_or_, bitwise_xor_=bitwise_xor_, bitwise_not_=bitwise_not_,
    clone=clone, to=to, float=_cast(_dtype.float32), double=_cast(_dtype.float64), half=_cast(_dtype.float16),
    bfloat16=_cast(_dtype.bfloat16), long=_cast(_dtype.int64), int=_cast(_dtype.int32), short=_cast(_dtype.int16),
    char=_cast(_dtype.int8), byte=_cast(_dtype.uint8), bool=_cast(_dtype.bool), type=_type,
    type_as=lambda self, other: to(self, other.dtype),
)
