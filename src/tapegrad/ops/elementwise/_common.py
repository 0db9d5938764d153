"""Shared helpers of the elementwise ops (operand dtypes, ``out=``, in-place variants, torch's errors) and
``where``, which is also the masking helper of many backwards.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from ... import _argtypes, _dtype
from ..._npcompat import broadcast_error
from ...autograd.function import _active
from ...tensor import invalid_arguments
from .._util import Primitive, Tensor, _scalar_as, apply_inplace, bind, check_overlap, write_out


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
            out.append(_scalar_as(o, np.dtype(d)))     # (an int beyond the dtype wraps around, as torch's)
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


def _real_only(kernel, d):
    """torch's NotImplementedError of a kernel without bool or complex variants (remainder, fmod, floor division)."""
    if d == np.bool_ or d.kind == "c":
        raise _not_implemented(kernel, d)


def _float_only(kernel, x):
    """Activations and a few math ops have no integer kernel in torch: the same NotImplementedError."""
    if x.dtype.kind not in "fc":
        raise _not_implemented(kernel, x.dtype)
    return x


def _w(mask, a, b):
    """``where(mask, a, b)`` with a constant mask (ndarray), differentiable in a and b."""
    return Where.apply(mask, a, b)


def fma32(x, y, z):
    """``x * y + z`` on float32 values rounded once, as torch's vectorised CPU kernels fuse it (lerp): the
    product of two float32 numbers is exact in float64, and the float64 sum rounded to
    float32 is the fused result except at double-rounding ties (about one element in 2**29)."""
    p = np.multiply(x, y, dtype=np.float64)      # (cast on the fly: no float64 copies of the operands)
    if isinstance(p, np.ndarray) and p.shape == np.broadcast_shapes(p.shape, np.shape(z)):
        p = np.add(p, z, out=p)
    else:
        p = np.add(p, z, dtype=np.float64)
    return np.asarray(p).astype(np.float32)


def number_arg(op, name, v):
    """A Scalar argument of torch's (``alpha``, ``value``): a 0-d tensor that needs no gradient stands for the
    number it holds (LAMB's ``p.add_(step, alpha=-lr * trust_ratio)``), any other tensor is torch's TypeError."""
    if isinstance(v, Tensor):
        if v._array.ndim != 0 or v.requires_grad:
            raise TypeError(f"{op}(): argument '{name}' must be Number, not Tensor")
        return v.item()
    return v


def _zeros_like(g):
    return Tensor._make(np.zeros_like(g._array))


def _need_tensor(op, name, pos, v):
    if not isinstance(v, Tensor):
        raise TypeError(f"{op}(): argument '{name}' (position {pos}) must be Tensor, not {type(v).__name__}")


_SCALAR_FIRST_WARNED = []


def scalar_first(name, scalar, rest, kw, tensors):
    """torch's deprecated overloads that put the scalar first — ``add(x, 2, y)`` is ``add(x, y, alpha=2)``,
    ``addcmul(x, 2, a, b)`` is ``addcmul(x, a, b, value=2)`` (and the methods, in place too): ``rest`` holds the
    ``tensors`` operands after the scalar. Warned once a process, in torch's words, as torch does."""
    import numbers
    import warnings
    if len(rest) != len(tensors) or isinstance(scalar, Tensor) or not isinstance(scalar, numbers.Number):
        raise TypeError(f"{name}() received an invalid combination of arguments: {2 + len(rest)} positional "
                        f"arguments, but only {name}(Tensor input, Number {kw}, "
                        f"{', '.join('Tensor ' + t for t in tensors)}) takes a scalar in second place")
    if not _SCALAR_FIRST_WARNED:
        _SCALAR_FIRST_WARNED.append(name)
        ts = ", ".join("Tensor " + t for t in tensors)
        warnings.warn(f"This overload of {name} is deprecated:\n\t{name}(Tensor input, Number {kw}, {ts}, *, Tensor "
                      f"out = None)\nConsider using one of the following signatures instead:\n\t{name}(Tensor "
                      f"input, {ts}, *, Number {kw} = 1, Tensor out = None)", UserWarning, stacklevel=3)
    return rest


def _two_numbers(op, a, b, second="other", self_out=False):
    """torch's TypeError for a binary op given two Python numbers (no Tensor): it has no number-number overload."""
    out = ", *, Tensor out = None"
    return invalid_arguments(op, (a, b), [f"Tensor input, Tensor {second}{out}",
                                          f"Number self, Tensor {second}{out}" if self_out
                                          else (f"Number self, Tensor {second}", True),
                                          f"Tensor input, Number {second}{out}"])


def _int_zero_check(b, d):
    if d.kind in "iub" and np.any(np.asarray(b) == 0):
        raise RuntimeError("ZeroDivisionError")


def _with_out(fn=None, *, dtype="cast", error=None):
    """Add torch's ``out=`` keyword to an elementwise op: ``ops._util.write_out`` (the one ``out=`` mechanism)
    under the rule ``dtype`` — "cast" (TensorIterator's ``can_cast``) unless said — with ``error`` as torch
    words it. Used bare (``@_with_out``) or with arguments (``@_with_out(dtype="same", error="...")``)."""
    if fn is None:
        return functools.partial(_with_out, dtype=dtype, error=error)
    name = fn.__name__

    @functools.wraps(fn)
    def wrapper(*args, out=None, **kwargs):
        if out is not None and isinstance(out, Tensor) and not _active[0]:
            check_overlap(out._array, args, kwargs)       # (torch's TensorIterator checks, as for x.op_(...))
        try:
            res = fn(*args, **kwargs)
        except Exception as e:    # a wrong-typed argument is torch's TypeError; NumPy's broadcasting error (the
            err = _argtypes.from_stack(e)   # ops computed outside a Function) torch's RuntimeError
            if err is None and isinstance(e, ValueError):
                err = broadcast_error(e)
            if err is None:
                raise
            raise err from None
        if out is None:
            return res
        return write_out(name, res, out, dtype, error)
    _argtypes.WRAPPER_CODES.add(wrapper.__code__)
    return wrapper


# torch's words for the elementwise ops whose out must have the input's dtype (abs, floor, clamp, neg...)
SAME_AS_INPUT = {"dtype": "same", "error": "Found dtype {o} but expected {r}"}


def _copy_out(op, res, out, dtype="cast", error=None):
    """``out=`` for an elementwise op that handles the keyword itself (``write_out`` with the "cast" rule)."""
    return write_out(op, res, out, dtype, error)


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


def _iop(fn):
    def iop(self, other):
        return apply_inplace(self, fn, other)
    return iop


# --- where (also the masking helper of many backwards) -----------------------------------------------------
class Where(Primitive):
    """``where(cond, a, b)``; ``cond`` is a constant bool array, a and b tensors or numbers (promoted)."""

    @staticmethod
    def jvp(ctx, _, ta, tb):         # where(cond, ta, tb), 0 for an operand without a tangent
        return Where.apply(ctx.inputs[0], 0.0 if ta is None else ta, 0.0 if tb is None else tb)

    @staticmethod
    def forward(ctx, cond, a, b):
        d = _result(a, b)
        a, b = _cast_all((a, b), d)
        ctx.cond = cond
        r = np.asarray(np.where(cond, a, b))
        return r if r.ndim < 3 else laid_out_as_torch(r, cond, a, b)

    @staticmethod
    def backward(ctx, grad):
        need = ctx.needs_input_grad
        c = ctx.cond
        return (None, _w(c, grad, 0.0) if need[1] else None, _w(c, 0.0, grad) if need[2] else None)


_UINT8_WHERE_WARNED = []


def _warn_uint8_where():
    """torch warns once a process that a uint8 condition is deprecated (and then reads it as ``!= 0``)."""
    import os
    import sys
    import warnings
    if not _UINT8_WHERE_WARNED:
        _UINT8_WHERE_WARNED.append(True)
        package = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        frame, level = sys._getframe(0), 1          # point at the first caller outside tapegrad (function or method)
        while frame.f_back is not None and frame.f_code.co_filename.startswith(package):
            frame, level = frame.f_back, level + 1
        warnings.warn("where received a uint8 condition tensor. This behavior is deprecated and will be removed in a "
                      "future version of PyTorch. Use a boolean condition instead.", UserWarning, stacklevel=level)


@_with_out(dtype="same", error="Expected out type to be {r} but got {o}")
def where(condition, input=None, other=None):  # noqa: A002 - torch's name
    """``input`` where ``condition`` else ``other`` (broadcast; either may be a number).

    ``where(condition)`` alone is ``nonzero(condition, as_tuple=True)``.

    >>> tapegrad.where(tapegrad.tensor([True, False]), 1.0, 0.0)
    tensor([1., 0.])
    """
    if input is None and other is None:
        from ..index import nonzero
        return nonzero(condition, as_tuple=True)
    c = _arr(condition)
    if isinstance(c, np.ndarray) and c.dtype == np.uint8:      # deprecated in torch, still taken: nonzero is true
        _warn_uint8_where()
        c = c.astype(np.bool_)
        if isinstance(condition, Tensor):
            condition = condition.to(bool)
    if not isinstance(c, np.ndarray) or c.dtype != np.bool_:
        got = _legacy(c.dtype) if isinstance(c, np.ndarray) else type(c).__name__
        raise RuntimeError(f"where expected condition to be a boolean tensor, but got a tensor with dtype {got}")
    for t, v in ((input, other), (other, input)):      # a number beside a tensor is written in its dtype
        if isinstance(t, Tensor) and not isinstance(v, Tensor) and v is not None:
            _dtype.check_scalar_operand(t.dtype, v, halves=False)
    if _active[0] and isinstance(condition, Tensor):      # (a transform sees the condition: vmap may batch it)
        c = condition
    return Where.apply(c, input, other)


def _tensor_where(self, condition, y):
    return where(condition, self, y)


bind(where=_tensor_where)


# --- the result's layout when the operands' layouts differ ----------------------------------------------------
def _iterator_order(shape, arrays):
    """The dims of ``shape`` from the densest out, as torch's TensorIterator orders them for an elementwise
    result: by the operands' strides, the first operand deciding first (a broadcast dim, stride 0, leaves the
    decision to the next operand; equal strides put the smaller dim inside)."""
    nd = len(shape)
    strides = []
    for x in arrays:
        off = nd - x.ndim
        strides.append([0] * off + [0 if x.shape[i] == 1 and shape[off + i] != 1 else x.strides[i]
                                    for i in range(x.ndim)])

    def swap(d0, d1):
        for st in strides:
            s0, s1 = st[d0], st[d1]
            if s0 == 0 or s1 == 0:
                continue
            if s0 != s1:
                return 1 if s0 > s1 else -1
            if shape[d0] > shape[d1]:
                return 1
        return 0

    perm = list(range(nd - 1, -1, -1))
    for i in range(1, nd):              # torch's insertion sort, which stops at the first "keep"
        d1 = i
        for d0 in range(i - 1, -1, -1):
            c = swap(perm[d0], perm[d1])
            if c > 0:
                perm[d0], perm[d1] = perm[d1], perm[d0]
                d1 = d0
            elif c < 0:
                break
    return perm


def laid_out_as_torch(out, a, b, c=None):
    """``out`` (an elementwise result of ``a``, ``b`` and ``c`` that NumPy computed) in the memory layout torch's
    TensorIterator gives it: NumPy's own whenever every operand is C-contiguous (or a number; torch's is then
    row-major too), else the order ``_iterator_order`` finds (a copy only where NumPy laid it out otherwise). The ops
    call it for results of 3 or more dims only (``r if r.ndim < 3 else ...``: the check would cost every small op)."""
    if (a.__class__ is not np.ndarray or a.flags.c_contiguous) and \
            (b.__class__ is not np.ndarray or b.flags.c_contiguous) and \
            (c.__class__ is not np.ndarray or c.flags.c_contiguous):
        return out
    arrays = [x for x in (a, b, c) if x.__class__ is np.ndarray and x.ndim > 0]
    order = _iterator_order(out.shape, arrays)[::-1]             # outermost first
    st, n = {}, out.itemsize
    for d in reversed(order):
        st[d] = n
        n *= out.shape[d]
    if all(out.strides[d] == st[d] for d in range(out.ndim) if out.shape[d] > 1):
        return out
    return np.ascontiguousarray(out.transpose(order)).transpose(np.argsort(order))
