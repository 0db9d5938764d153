# ruff: noqa: A001, A002 - torch's argument name is `input`
"""linear and bilinear (with the NumPy fast path of linear's backward), the softmax family (softmax,
log_softmax, softmin, glu, gumbel_softmax) and the ``x.softmax`` / ``x.log_softmax`` methods.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from .._util import (Primitive, Tensor, add_tangents, bind, cj, input_shape, linear_jvp, mT, multilinear_jvp,
                     normalize_dim, op_error, shape_str, sum_keepdim, sum_to_shape)
from ..linalg.products import Addmm as _Addmm_
from ..linalg.products import _CNAME, _same_dtype
from ._common import _Cat, _c, _float_only


# --- linear ---------------------------------------------------------------------------------------------------
def _mm_error(a_shape, b_shape):
    return RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({a_shape[0]}x{a_shape[1]} and "
                        f"{b_shape[0]}x{b_shape[1]})")


class _Addmm(Primitive):
    """``bias + x @ weight.T`` for a 2-d ``x`` (torch's addmm path of linear): AddmmBackward0."""

    node_name = "AddmmBackward0"
    array_backward = True
    _saved_transposed = (1,)   # (torch's addmm keeps weight.t(): the version error names that view)

    @staticmethod
    def jvp(ctx, tbias, tx, tw):
        _, x, w = ctx.inputs
        return add_tangents(tbias, add_tangents(None if tx is None else _MmT.apply(tx, w),
                                                None if tw is None else _MmT.apply(x, tw)))

    @staticmethod
    def forward(ctx, bias, x, w):
        if x.shape[1] != w.shape[1]:
            raise _mm_error(x.shape, w.shape[::-1])
        if not x.dtype == w.dtype == bias.dtype:    # torch's addmm checks: self (bias), then mat1 (input)
            _Addmm_.check_dtypes(bias, x, w)
        ctx.save_crossed(1, 2)
        if x.dtype.kind == "c":
            ctx._cplx = True          # the gradients use the conjugate factors (torch's convention)
        half = x.dtype == np.float16   # (bias + x wᵀ in float32, rounded once: torch's CPU addmm for half)
        out = x.astype(np.float32) @ w.T.astype(np.float32) if half else x @ w.T
        try:
            out += bias
        except ValueError:
            raise RuntimeError(f"The expanded size of the tensor ({out.shape[1]}) must match the existing size "
                               f"({bias.shape[-1]}) at non-singleton dimension 1.  Target sizes: "
                               f"{shape_str(out.shape)}.  Tensor sizes: {shape_str(bias.shape)}") from None
        return out.astype(np.float16) if half else out

    @staticmethod
    def backward(ctx, grad):
        x, w = ctx.saved_tensors
        need = ctx.needs_input_grad
        if ctx._cplx:
            x, w = (cj(x) if need[2] else None), (cj(w) if need[1] else None)
        return (sum_to_shape(grad, input_shape(ctx, 0)) if need[0] else None, grad @ w if need[1] else None,
                mT(grad) @ x if need[2] else None)


class _MmT(Primitive):
    """``x @ weight.T`` for a 2-d ``x`` (linear without bias): MmBackward0."""

    _pack_order = (1, 0)      # (saved-tensor hooks see the weight first, as torch's)
    node_name = "MmBackward0"
    array_backward = True
    _saved_transposed = (1,)   # (the weight, kept as weight.t() by torch's mm)

    jvp = staticmethod(multilinear_jvp)     # the product rule

    @staticmethod
    def forward(ctx, x, w):
        if x.shape[1] != w.shape[1]:
            raise _mm_error(x.shape, w.shape[::-1])
        _same_dtype(x, w)           # (torch's mm refuses a weight of another dtype than the input)
        ctx.save_crossed(0, 1)
        if x.dtype.kind == "c":
            ctx._cplx = True
        return x @ w.T

    @staticmethod
    def backward(ctx, grad):
        x, w = ctx.saved_tensors
        need = ctx.needs_input_grad
        if ctx._cplx:
            x, w = (cj(x) if need[1] else None), (cj(w) if need[0] else None)
        return grad @ w if need[0] else None, mT(grad) @ x if need[1] else None


class _View(Primitive):
    """A reshape with a fixed node name (ViewBackward0 / UnsafeViewBackward0 / SqueezeBackward4)."""

    node_name = "ViewBackward0"
    array_backward = True

    jvp = staticmethod(linear_jvp)   # linear: the op itself applied to the tangents

    @staticmethod
    def forward(ctx, x, shape):
        ctx.in_shape = x.shape
        return x.reshape(shape)

    @staticmethod
    def backward(ctx, grad):
        return grad.reshape(ctx.in_shape), None


class _UnsafeView(_View):
    node_name = "UnsafeViewBackward0"
    array_backward = True


class _Squeeze4(_View):
    node_name = "SqueezeBackward4"
    array_backward = True


def linear(input, weight, bias=None):
    """``input @ weight.T + bias`` over the last dim of ``input``.

    >>> F.linear(tapegrad.ones(2, 3), tapegrad.ones(4, 3), tapegrad.zeros(4)).shape
    tapegrad.Size([2, 4])
    """
    nd = input._array.ndim
    if weight._array.ndim != 2:
        if weight._array.ndim == 1 and nd >= 1:   # torch allows a 1-d weight: a dot product over the last dim
            out = input.matmul(weight)
            return out + bias if bias is not None else out
        raise RuntimeError(f"linear(): weight must be 1-D or 2-D, got {weight._array.ndim}-D")
    if nd == 0:
        raise RuntimeError("both arguments to linear need to be at least 1D, but they are 0D and 2D")
    if nd == 2:
        return _Addmm.apply(bias, input, weight) if bias is not None else _MmT.apply(input, weight)
    shape = input._array.shape
    out_shape = shape[:-1] + (weight._array.shape[0],)
    if shape[-1] != weight._array.shape[1]:
        raise _mm_error((math.prod(shape[:-1]), shape[-1]), weight._array.shape[::-1])
    x2 = _View.apply(input, (-1, shape[-1])) if nd > 1 else _View.apply(input, (1, shape[-1]))
    if np.may_share_memory(x2._array, input._array):
        x2._vc = input._vc    # (a view: a change of input in place before backward is seen where x2 is saved)
    if bias is not None:
        return _View.apply(_Addmm.apply(bias, x2, weight), out_shape)
    out = _MmT.apply(x2, weight)
    return (_Squeeze4 if nd == 1 else _UnsafeView).apply(out, out_shape)


def bilinear(input1, input2, weight, bias=None):
    """``y[..., o] = x1[..., i] W[o, i, j] x2[..., j] + b[o]``.

    >>> F.bilinear(tapegrad.ones(2, 3), tapegrad.ones(2, 4), tapegrad.ones(5, 3, 4)).shape
    tapegrad.Size([2, 5])
    """
    ts = [("input1", input1), ("input2", input2), ("weight", weight)] + ([("bias", bias)] if bias is not None else [])
    if any(t.dtype != input1.dtype for _, t in ts):
        raise RuntimeError("All tensors must have the same dtype, got " + ", ".join(
            f"{n}: {_CNAME.get(t.dtype.name, t.dtype.name)}" for n, t in ts))
    s1, s2, sw = input1._array.shape, input2._array.shape, weight._array.shape
    if len(sw) != 3 or s1[:-1] != s2[:-1] or s1[-1] != sw[1] or s2[-1] != sw[2]:
        raise op_error("bilinear", f"input1 {shape_str(s1)}, input2 {shape_str(s2)} and weight {shape_str(sw)} "
                       "do not fit: expected input1 [*, in1], input2 [*, in2] and weight [out, in1, in2]")
    n = math.prod(s1[:-1])
    x1 = input1.reshape(n, 1, 1, s1[-1])
    x2 = input2.reshape(n, 1, s2[-1], 1)
    y = x1.matmul(weight.unsqueeze(0)).matmul(x2)                # (n, out, 1, 1)
    y = _View.apply(y, s1[:-1] + (sw[0],))
    return y + bias if bias is not None else y


# --- softmax family -----------------------------------------------------------------------------------------
def _softmax_dim(name, ndim, stacklevel=3):
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call to include dim=X "
                  "as an argument.", stacklevel=stacklevel)
    return 0 if ndim in (0, 1, 3) else 1


# (ufunc.reduce rather than np.max / np.sum: the same kernels without NumPy's Python-level wrapper, ~2 µs each)
def _shifted(x, dim):
    """x minus its max along ``dim``: exp() of it cannot overflow. (A row whose max is not finite gives nan, as
    torch's kernel: its ``x - max`` holds inf - inf or nan.)"""
    return x - np.maximum.reduce(x, axis=dim, keepdims=True)


def _softmax_np(x, dim):
    e = np.exp(_shifted(x, dim))
    e /= np.add.reduce(e, axis=dim, keepdims=True)
    return e


def _softmax_forward(ctx, x, dim, op, compute, at_0d):
    """The forward both softmax and log_softmax share: checks, the saved result, the empty and 0-d cases."""
    _float_only(op, f"{op}_lastdim_kernel_impl", x)
    ctx.dim = dim
    ctx.save_result()
    if x.size == 0:
        return x.copy()
    if x.ndim == 0:
        return at_0d(x)
    if x.dtype == np.float16:          # (in float32 and rounded once, as torch's CPU kernel accumulates)
        return compute(x.astype(np.float32), dim).astype(np.float16, order="C")
    return np.ascontiguousarray(compute(x, dim))    # (torch's kernels write a contiguous result, any input layout)


def _log_softmax_np(x, dim):
    # (called inside a forward: NumPy's warnings are already off, see Function.apply)
    s = _shifted(x, dim)
    s -= np.log(np.add.reduce(np.exp(s), axis=dim, keepdims=True))     # (s is new: changed in place)
    return s


class Softmax(Primitive):
    """exp(x) / sum(exp(x)) along ``dim``, shifted by the max (stable); backward y * (g - sum(g * y))."""

    array_backward = True

    @staticmethod
    def jvp(ctx, t, _):              # y * (t - sum(y * t))
        y, dim = ctx.result, ctx.inputs[1]
        return y * (t - (y * t).sum(dim, keepdim=True))

    @staticmethod
    def forward(ctx, x, dim):
        return _softmax_forward(ctx, x, dim, "softmax", _softmax_np, np.ones_like)

    @staticmethod
    def backward(ctx, grad):
        y, = ctx.saved_tensors
        gy = grad * y
        return gy - y * sum_keepdim(gy, ctx.dim), None


class LogSoftmax(Primitive):
    """x - logsumexp(x) along ``dim`` (stable); backward g - exp(y) * sum(g)."""

    array_backward = True

    @staticmethod
    def jvp(ctx, t, _):              # t - sum(softmax * t)
        return t - (ctx.result.exp() * t).sum(ctx.inputs[1], keepdim=True)

    @staticmethod
    def forward(ctx, x, dim):
        return _softmax_forward(ctx, x, dim, "log_softmax", _log_softmax_np, np.zeros_like)

    @staticmethod
    def backward(ctx, grad):
        y, = ctx.saved_tensors
        p = y.exp() if y.__class__ is Tensor else np.exp(y)     # softmax, from the saved log-softmax
        return grad - p * sum_keepdim(grad, ctx.dim), None


def _softmax_call(cls, name, input, dim, dtype, stacklevel=4):
    if dim is None:
        dim = _softmax_dim(name, input._array.ndim, stacklevel)
    if dtype is not None:
        input = input.to(dtype)
    return cls.apply(input, normalize_dim(dim, input._array.ndim))


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    """Softmax along ``dim`` (``dtype`` casts the input first).

    >>> F.softmax(tapegrad.tensor([0., 0.]), dim=0)
    tensor([0.5000, 0.5000])
    """
    if dtype is None and not isinstance(_stacklevel, int):      # torch.softmax(x, dim, dtype) positionally
        dtype = _stacklevel
    return _softmax_call(Softmax, "softmax", input, dim, dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    """log(softmax(input)) along ``dim``, computed stably (finite for logits of any size).

    >>> F.log_softmax(tapegrad.tensor([1e4, 0.]), dim=0)
    tensor([     0., -10000.])
    """
    if dtype is None and not isinstance(_stacklevel, int):      # torch.log_softmax(x, dim, dtype) positionally
        dtype = _stacklevel
    return _softmax_call(LogSoftmax, "log_softmax", input, dim, dtype)


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    """softmax(-input) along ``dim``.

    >>> F.softmin(tapegrad.tensor([0., 0.]), dim=0)
    tensor([0.5000, 0.5000])
    """
    if dim is None:
        dim = _softmax_dim("softmin", input._array.ndim)
    if dtype is not None:
        return Softmax.apply(-input.to(dtype), normalize_dim(dim, input._array.ndim))
    return Softmax.apply(-input, normalize_dim(dim, input._array.ndim))


class Glu(Primitive):
    """a * sigmoid(b) for the two halves a, b of ``dim``."""

    @staticmethod
    def forward(ctx, x, dim):
        if x.ndim == 0:
            raise RuntimeError("glu does not support scalars because halving size must be even")
        dim = normalize_dim(dim, x.ndim)
        if x.shape[dim] % 2:
            raise RuntimeError(f"Halving dimension must be even, but dimension {dim} is size {x.shape[dim]}")
        _float_only("glu", "glu_cpu", x)
        h = x.shape[dim] // 2
        a, b = np.split(x, [h], axis=dim)
        ctx.dim, ctx.h = dim, h
        ctx.save_inputs(0)
        with np.errstate(over="ignore"):
            return a / (1 + np.exp(-b))

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        dim, h = ctx.dim, ctx.h
        lead = (slice(None),) * dim
        a, b = x[lead + (slice(0, h),)], x[lead + (slice(h, None),)]
        sb = b.sigmoid()
        ga = grad * sb
        return _Cat.apply(dim, ga, ga * a * (1 - sb)), None


def glu(input, dim=-1):
    """Gated linear unit: first half of ``dim`` times the sigmoid of the second half.

    >>> F.glu(tapegrad.tensor([2., 0.]))
    tensor([1.])
    """
    return Glu.apply(input, dim)


def gumbel_softmax(logits, tau=1, hard=False, eps=1e-10, dim=-1):
    """Softmax of ``(logits + Gumbel noise) / tau``; ``hard`` returns one-hot values with the soft gradient.

    >>> F.gumbel_softmax(tapegrad.zeros(2, 3), hard=True).sum(1)
    tensor([1., 1.])
    """
    from ... import _random
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=2)
    a = logits._array
    gumbels = -np.log(_random.exponential(_random.default_generator, a.size, 1.0).astype(a.dtype)).reshape(a.shape)
    d = normalize_dim(dim, a.ndim)
    y_soft = Softmax.apply((logits + gumbels) / tau, d)
    if not hard:
        return y_soft
    ys = y_soft._array
    y_hard = np.zeros_like(ys)
    np.put_along_axis(y_hard, np.argmax(ys, axis=d)[(slice(None),) * d + (None,)] if a.ndim else
                      np.zeros((), np.intp), 1.0, axis=d)
    return _c(y_hard - ys) + y_soft


def _softmax_method(self, dim, dtype=None):
    return softmax(self, dim, dtype=dtype)


def _log_softmax_method(self, dim, dtype=None):
    return log_softmax(self, dim, dtype=dtype)


bind(softmax=_softmax_method, log_softmax=_log_softmax_method)
