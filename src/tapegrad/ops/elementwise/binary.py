"""Two- and three-input math: atan2, hypot, maximum/minimum/fmax/fmin, fmod/remainder, lerp, addcmul,
addcdiv, copysign, xlogy.
"""

from __future__ import annotations

import numpy as np

from .._util import Primitive, Tensor, bind, broadcast_or_error, cj, promote
from ._common import (_cast_all, _inplace, _int_zero_check, _iop, _need_tensor, _no_bool, _not_implemented, _quiet,
                      _real_only, _result, _two_numbers, _w, _with_out, _zeros_like, fma32, laid_out_as_torch,
                      number_arg, scalar_first)
from .arith import _no_derivative, div


# --- two-input math -----------------------------------------------------------------------------------------
class Atan2(Primitive):
    """atan2(a, b): the angle of the point (b, a)."""

    _pack_order = (1, 0)      # (saved-tensor hooks see the second operand first, as torch's)

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
        # 1 / (a^2 + b^2), and 0 at the origin (torch's gradient there is a signed zero, not NaN)
        recip = _w(r._array == 0, 0.0, 1.0 / r)
        return (grad * b * recip if need[0] else None), (grad * -a * recip if need[1] else None)


class Hypot(Primitive):
    """sqrt(a**2 + b**2) without overflow."""

    _pack_order = (2, 1, 0)      # (saved-tensor hooks see the second operand first, then the first, as torch's)

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
        if d.kind == "c":
            raise RuntimeError(f"{name.lower()} not implemented for complex tensors.")
        a, b = _cast_all((a, b), d)
        ctx.a, ctx.b = a, b
        r = np.asarray(np_fn(a, b))
        return r if r.ndim < 3 else laid_out_as_torch(r, a, b)

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
    _real_only("fmod_cpu", d)
    _int_zero_check(b, d)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.asarray(np.fmod(a, b))


def _remainder_np(a, b, d):
    _real_only("remainder_cpu", d)
    _int_zero_check(b, d)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.asarray(np.remainder(a, b))
    if d.kind == "f":    # a zero remainder takes the dividend's sign (torch's fmod-then-adjust); NumPy's the divisor's
        r = np.where(r == 0, np.copysign(r, a), r)
    return r


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
        if not isinstance(other, Tensor):
            raise _two_numbers("remainder", input, other)
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
        r = _lerp_np(a, b, w)
        return r if r.ndim < 3 else laid_out_as_torch(r, a, b)

    @staticmethod
    def backward(ctx, grad):
        w = cj(ctx.w)            # (a complex weight: its conjugate, torch's convention)
        need = ctx.needs_input_grad
        return (grad * (1 - w) if need[0] else None), (grad * w if need[1] else None), None


class LerpTensor(Primitive):
    """``start + weight * (end - start)`` with a tensor weight."""

    node_name = "LerpBackward1"

    @staticmethod
    @_quiet
    def forward(ctx, a, b, w):
        ctx.save_inputs(0, 1, 2)
        out = _lerp_np(a, b, w)
        if out.ndim > 2:
            out = laid_out_as_torch(out, a, b, w)
        if out.dtype.kind == "c":
            ctx._cplx = True
        return out

    @staticmethod
    def backward(ctx, grad):
        a, b, w = ctx.saved_tensors
        if ctx._cplx:
            a, b, w = cj(a), cj(b), cj(w)
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
    if d == np.float16:         # torch computes Half in float32 and rounds once
        a, b = a.astype(np.float32), b.astype(np.float32)
        w = w.astype(np.float32) if isinstance(w, np.ndarray) else w
    w = w if isinstance(w, np.ndarray) else a.dtype.type(w)
    diff = b - a
    if d == np.float32:         # torch: fma(w or w - 1, end - start, start or end), w small below 0.5
        if not isinstance(w, np.ndarray):
            return fma32(w, diff, a) if abs(w) < 0.5 else fma32(w - np.float32(1), diff, b)
        small = np.abs(w) < 0.5
        return fma32(np.where(small, w, w - np.float32(1)), diff, np.where(small, a, b))
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
        broadcast_or_error(input.shape, end.shape, weight.shape)     # (torch's operand order in the error)
        return LerpTensor.apply(input, end, weight)
    broadcast_or_error(input.shape, end.shape)
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
        if d.kind == "c":
            ctx._cplx = True
        if d == np.float16:     # torch computes Half in float32 and rounds once
            x, t1, t2 = (a.astype(np.float32) for a in (x, t1, t2))
            return np.asarray(x + np.float32(value) * t1 * t2).astype(d)
        out = np.asarray(x + d.type(value) * t1 * t2) if value != 1 else np.asarray(x + t1 * t2)
        return out if out.ndim < 3 else laid_out_as_torch(out, x, t1, t2)

    @staticmethod
    def backward(ctx, grad):
        t1, t2 = ctx.saved_tensors
        v = ctx.value
        if ctx._cplx:
            t1, t2, v = (None if t1 is None else cj(t1)), (None if t2 is None else cj(t2)), cj(v)
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
        if d.kind == "c":
            ctx._cplx = True
        with np.errstate(divide="ignore", invalid="ignore"):
            if d == np.float16:     # torch computes Half in float32 and rounds once
                x, t1, t2 = (a.astype(np.float32) for a in (x, t1, t2))
                return np.asarray(x + np.float32(value) * (t1 / t2)).astype(d)
            if d == np.float32:     # torch: x + (value * t1) / t2
                return np.asarray(x + (np.float32(value) * t1) / t2)
            return np.asarray(x + d.type(value) * (t1 / t2))

    @staticmethod
    def backward(ctx, grad):
        t1, t2 = ctx.saved_tensors
        v = ctx.value
        if ctx._cplx:
            t1, t2, v = (None if t1 is None else cj(t1)), (None if t2 is None else cj(t2)), cj(v)
        need = ctx.needs_input_grad
        g = grad * v if v != 1 else grad
        return (grad if need[0] else None), (g / t2 if need[1] else None), \
            (-g * t1 / (t2 * t2) if need[2] else None), None


@_with_out
def addcmul(input, tensor1, tensor2, *deprecated, value=1):  # noqa: A002
    """``input + value * tensor1 * tensor2`` (broadcasting).

    >>> tapegrad.addcmul(tapegrad.tensor([1.]), tapegrad.tensor([2.]), tapegrad.tensor([3.]), value=0.5)
    tensor([4.])
    """
    if deprecated:      # (addcmul(input, value, tensor1, tensor2): torch's deprecated order)
        value, (tensor1, tensor2) = tensor1, scalar_first("addcmul", tensor1, (tensor2,) + deprecated, "value",
                                                          ("tensor1", "tensor2"))
    for i, (n, v) in enumerate((("input", input), ("tensor1", tensor1), ("tensor2", tensor2))):
        _need_tensor("addcmul", n, i + 1, v)
    broadcast_or_error(input.shape, tensor1.shape, tensor2.shape)
    return Addcmul.apply(input, tensor1, tensor2, number_arg("addcmul", "value", value))


@_with_out
def addcdiv(input, tensor1, tensor2, *deprecated, value=1):  # noqa: A002
    """``input + value * tensor1 / tensor2`` (broadcasting; float tensors only).

    >>> tapegrad.addcdiv(tapegrad.tensor([1.]), tapegrad.tensor([3.]), tapegrad.tensor([2.]), value=2)
    tensor([4.])
    """
    if deprecated:      # (addcdiv(input, value, tensor1, tensor2): torch's deprecated order)
        value, (tensor1, tensor2) = tensor1, scalar_first("addcdiv", tensor1, (tensor2,) + deprecated, "value",
                                                          ("tensor1", "tensor2"))
    for i, (n, v) in enumerate((("input", input), ("tensor1", tensor1), ("tensor2", tensor2))):
        _need_tensor("addcdiv", n, i + 1, v)
    broadcast_or_error(input.shape, tensor1.shape, tensor2.shape)
    return Addcdiv.apply(input, tensor1, tensor2, number_arg("addcdiv", "value", value))


class Copysign(Primitive):
    """|a| with the sign of b (tensor b)."""

    @staticmethod
    @_quiet
    def forward(ctx, a, b):
        a, b = _cast_all((a, b), _result(a, b, floating=True))
        r = np.asarray(np.copysign(a, b))
        with np.errstate(invalid="ignore", divide="ignore"):      # torch's result / a, 0 where a == 0 (NaN at NaN)
            ctx.ratio = np.where(a == 0, 0.0, r / a).astype(r.dtype)
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

    _pack_order = (1, 0)      # (saved-tensor hooks see the second operand first, as torch's)

    @staticmethod
    def forward(ctx, x, y):
        x, y = _cast_all((x, y), _result(x, y, floating=True))
        ctx.save_inputs(0, 1)
        return _xlogy_np(x, y)

    @staticmethod
    def backward(ctx, grad):
        need = ctx.needs_input_grad
        x, y = ctx.saved_tensors
        gx = None
        if need[0]:          # torch's xlogy(grad, y), 0 where x == 0 and y <= 0: log(y) even at x == 0
            xa = x._array if isinstance(x, Tensor) else np.asarray(x)
            ya = y._array if isinstance(y, Tensor) else np.asarray(y)
            gx = _w((xa == 0) & (ya <= 0), 0.0, Xlogy.apply(grad, y))
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
        if not isinstance(other, Tensor):
            raise _two_numbers("xlogy", input, other, self_out=True)
        return XlogyScalarX.apply(input, other)
    if not isinstance(other, Tensor):
        return XlogyScalarY.apply(input, other)
    return Xlogy.apply(input, other)


def _rmod(self, other):
    # a Tensor reaches here only through an explicit x.__rmod__(t) (torch: remainder(t, x))
    return remainder(other, self) if isinstance(other, Tensor) else RRemainder.apply(self, other)


xlogy_, fmod_, remainder_, atan2_, hypot_, lerp_, addcmul_, addcdiv_, copysign_ = (
    _inplace(f) for f in (xlogy, fmod, remainder, atan2, hypot, lerp, addcmul, addcdiv, copysign))

bind(
    __mod__=remainder, __rmod__=_rmod, __imod__=_iop(remainder),
    fmod=fmod, remainder=remainder, atan2=atan2, arctan2=atan2, hypot=hypot, maximum=maximum, minimum=minimum,
    fmax=fmax, fmin=fmin, lerp=lerp, addcmul=addcmul, addcdiv=addcdiv, copysign=copysign, xlogy=xlogy,
    fmod_=fmod_, remainder_=remainder_, atan2_=atan2_, arctan2_=atan2_, hypot_=hypot_, lerp_=lerp_,
    addcmul_=addcmul_, addcdiv_=addcdiv_, copysign_=copysign_, xlogy_=xlogy_,
)
