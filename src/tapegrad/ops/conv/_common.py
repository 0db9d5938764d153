# ruff: noqa: A001, A002 - torch's argument name (input)
"""Shared machinery of convolution, pooling and resampling: argument helpers (``_ntuple``, padding,
strided windows), the gather / scatter over flattened planes (max pooling's backward, max_unpool), and the
separable per-axis taps (``_Taps``: average and adaptive average pooling, interpolation, reflect / replicate /
circular padding; its backward applies the transposed taps, whose backward is the original).
"""

from __future__ import annotations

import math

import numpy as np
from numpy.lib.stride_tricks import as_strided

from .._util import Primitive, op_error


# --- small helpers ------------------------------------------------------------------------------------------------
# torch's positions of the int-list arguments of the pooling ops (input is 1); im2col/col2im pass theirs
_POSITIONS = {"kernel_size": 2, "output_size": 2, "stride": 3, "padding": 4, "dilation": 5}


def _is_int(v):
    """An int as torch's int-list parser takes it: a Python/NumPy int (not a bool) or a 0-d integer tensor."""
    if isinstance(v, (bool, np.bool_)):
        return False
    if isinstance(v, (int, np.integer)):
        return True
    from ...tensor import Tensor
    return isinstance(v, Tensor) and v.ndim == 0 and v._array.dtype.kind in "iu"


def _int_list(value, name, op, pos=None, allow_none=False):
    """``value`` as torch parses an int-list argument: ``(ints, single)`` where ``single`` says one int was given
    (an int or a 0-d integer tensor, which the caller repeats); a float, a bool or a float tensor is torch's
    TypeError, as is a sequence with such an element (``allow_none``: None elements stay, as adaptive pools'
    ``output_size`` takes them)."""
    if type(value) is int:                                    # (the usual forms first: this runs per call)
        return (value,), True
    if type(value) in (tuple, list) and all(type(v) is int for v in value):
        return tuple(value), False
    where = f" (position {pos or _POSITIONS.get(name)})" if pos or name in _POSITIONS else ""
    if _is_int(value):
        return (int(value),), True
    from ...tensor import Tensor
    if isinstance(value, Tensor) and value.ndim == 0 or not hasattr(value, "__iter__") or isinstance(value, str):
        raise TypeError(f"{op}(): argument '{name}'{where} must be tuple of ints, not {type(value).__name__}")
    vals = list(value)
    for i, v in enumerate(vals):
        if not _is_int(v) and not (allow_none and v is None):
            raise TypeError(f"{op}(): argument '{name}'{where} must be tuple of ints, but found element of type "
                            f"{type(v).__name__} at pos {i}")
    return tuple(v if v is None else int(v) for v in vals), False


def _ntuple(value, n, name, op, conv=False, pos=None):
    """An int or a sequence as an n-tuple of ints, with torch's error for a wrong length (``_int_list`` parses)."""
    vals, single = _int_list(value, name, op, pos)
    if single or len(vals) == 1 and n > 1:
        return vals * n
    if len(vals) != n:
        if conv:
            raise op_error(op, f"expected {name} to be a single integer value or a list of {n} values to match the "
                               f"convolution dimensions, but got {name}={list(vals)}")
        raise op_error(op, f"{name} must be either a single int, or a tuple of {n} ints, got {list(vals)}")
    return vals


def _size_str(sizes, sep=" x "):
    return "(" + sep.join(str(s) for s in sizes) + ")"


def _pad_array(x, before, after, value=0.0):
    """Pad the last len(before) dims of x with ``value`` (a copy only when some width is non-zero)."""
    if not any(before) and not any(after):
        return x
    d = len(before)
    lead = x.shape[:x.ndim - d]
    shape = lead + tuple(s + b + a for s, b, a in zip(x.shape[x.ndim - d:], before, after))
    out = np.full(shape, value, dtype=x.dtype)
    out[(Ellipsis,) + tuple(slice(b, b + s) for b, s in zip(before, x.shape[x.ndim - d:]))] = x
    return out


def _windows(xp, out_sizes, kernel, stride, dilation):
    """Read-only view ``(*lead, *out_sizes, *kernel)`` of the sliding windows over the last d dims of ``xp``."""
    d = len(kernel)
    nl = xp.ndim - d
    st = xp.strides
    shape = xp.shape[:nl] + tuple(out_sizes) + tuple(kernel)
    strides = st[:nl] + tuple(st[nl + i] * stride[i] for i in range(d)) + \
        tuple(st[nl + i] * dilation[i] for i in range(d))
    return as_strided(xp, shape, strides, writeable=False)


def _conv_out_size(size, k, s, p, d):
    return (size + 2 * p - d * (k - 1) - 1) // s + 1


def _offsets(kernel):
    return np.ndindex(*kernel)


def _strided_slices(k, dilation, stride, count):
    """The slices of a padded buffer that kernel offset k touches for ``count`` output positions per dim."""
    return tuple(slice(ki * di, ki * di + (c - 1) * si + 1, si) if c > 0 else slice(0, 0)
                 for ki, di, si, c in zip(k, dilation, stride, count))


def _scalar(t):
    """torch's ScalarType name of a tensor's dtype (or of a dtype): Float, Long..."""
    return {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16", "int64": "Long",
            "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool",
            "complex64": "ComplexFloat", "complex128": "ComplexDouble"}.get(str(getattr(t, "dtype", t)).split(".")[-1],
                                                                          str(getattr(t, "dtype", t)))


# --- gather / scatter over flattened planes (max pooling's backward, max_unpool) -----------------------------------
def _plane_flat(idx, plane):
    """Global flat positions of per-plane indices ``idx`` (shape ``(*lead, *O)``; ``plane`` elements per plane)."""
    P = idx.shape[0]
    idx2 = idx.reshape(P, math.prod(idx.shape[1:]))
    return (idx2 + (np.arange(P, dtype=np.int64) * plane)[:, None]).ravel()


class _GatherPlanes(Primitive):
    """``out[..., o] = x.flatten(spatial)[..., idx[..., o]]``: x ``(*lead, *S)``, idx ``(*lead, *O)``."""

    node_name = "GatherBackward0"

    @staticmethod
    def forward(ctx, x, idx, d):
        ctx.idx, ctx.in_shape, ctx.d = idx, x.shape, d
        lead = idx.shape[:idx.ndim - d]
        P = math.prod(lead)
        out = np.take_along_axis(x.reshape(P, math.prod(x.shape[x.ndim - d:])),
                                 idx.reshape(P, math.prod(idx.shape[idx.ndim - d:])), axis=1)
        return out.reshape(idx.shape)

    @staticmethod
    def backward(ctx, g):
        return _ScatterPlanes.apply(g, ctx.idx, ctx.in_shape, False, ctx.d), None, None


class _ScatterPlanes(Primitive):
    """The adjoint of ``_GatherPlanes``: zeros of ``shape`` with g added (or assigned) at the per-plane indices."""

    node_name = "ScatterAddBackward0"

    @staticmethod
    def forward(ctx, g, idx, shape, unique, d):
        ctx.idx, ctx.d = idx, d
        lead = idx.shape[:idx.ndim - d]
        P = math.prod(lead)
        plane = math.prod(shape[len(shape) - d:])
        flat = _plane_flat(idx.reshape((P,) + idx.shape[idx.ndim - d:]), plane)
        if unique:
            out = np.zeros(P * plane, dtype=g.dtype)
            out[flat] = g.ravel()
        else:
            out = np.bincount(flat, weights=g.ravel(), minlength=P * plane).astype(g.dtype, copy=False)
        return out.reshape(shape)

    @staticmethod
    def backward(ctx, gg):
        return _GatherPlanes.apply(gg, ctx.idx, ctx.d), None, None, None, None


# --- separable per-axis taps (avg pooling, adaptive avg pooling, interpolation, reflect/replicate/circular pad) ----
class _AxisTaps:
    """Along one axis: ``out[o] = sum_t w[o, t] * in[idx[o, t]]`` (``idx == size`` reads an implicit zero)."""

    __slots__ = ("idx", "w", "size")

    def __init__(self, idx, w, size):
        self.idx = np.asarray(idx, dtype=np.int64).reshape(len(idx), -1) if len(idx) else \
            np.zeros((0, 1), np.int64)
        self.w = None if w is None else np.asarray(w, dtype=np.float64).reshape(self.idx.shape)
        self.size = size

    def transpose(self):
        """The adjoint taps: ``in_grad[i] = sum over (o, t) with idx[o, t] == i of w[o, t] * g[o]``."""
        O, T = self.idx.shape
        o = np.repeat(np.arange(O, dtype=np.int64), T)
        i = self.idx.ravel()
        w = np.ones(i.shape) if self.w is None else self.w.ravel()
        keep = i < self.size
        o, i, w = o[keep], i[keep], w[keep]
        order = np.argsort(i, kind="stable")
        o, i, w = o[order], i[order], w[order]
        counts = np.bincount(i, minlength=self.size)
        T2 = max(int(counts.max()) if counts.size else 0, 1)
        starts = np.cumsum(counts) - counts
        rank = np.arange(i.size) - starts[i]
        idx2 = np.full((self.size, T2), O, dtype=np.int64)
        w2 = np.zeros((self.size, T2))
        idx2[i, rank] = o
        w2[i, rank] = w
        return _AxisTaps(idx2, None if self.w is None else w2, O)

    def apply(self, x, axis):
        O, T = self.idx.shape
        if (self.idx >= self.size).any():
            zshape = list(x.shape)
            zshape[axis] = 1
            x = np.concatenate([x, np.zeros(zshape, x.dtype)], axis=axis)
        if T == 0 or O == 0:
            shape = list(x.shape)
            shape[axis] = O
            return np.zeros(shape, x.dtype)
        bshape = [1] * x.ndim
        bshape[axis] = O
        w = None if self.w is None else self.w.astype(x.dtype if x.dtype.kind == "f" else np.float64, copy=False)
        out = None
        for t in range(T):
            v = np.take(x, self.idx[:, t], axis=axis)
            if w is not None:
                v = v * w[:, t].reshape(bshape)
            out = v if out is None else out + v
        return out


def _apply_taps(x, taps):
    if x.dtype == np.float16:       # torch sums Half in float32 and rounds once
        return _apply_taps(x.astype(np.float32), taps).astype(np.float16)
    d = len(taps)
    for i in reversed(range(d)):   # last axis first: torch's (bilinear) summation order
        t = taps[i]
        if t is not None:
            x = t.apply(x, x.ndim - d + i)
    return np.ascontiguousarray(x)


def _taps_pair(name):
    """A Primitive applying per-axis taps, named ``name``; its backward applies the transposed taps."""

    class Taps(Primitive):
        node_name = name

        @staticmethod
        def forward(ctx, x, taps):
            ctx.taps = taps
            return _apply_taps(x, taps)

        @staticmethod
        def backward(ctx, g):
            return _TapsAdj.apply(g, [None if t is None else t.transpose() for t in ctx.taps]), None

    Taps.__name__ = Taps.__qualname__ = name[:-len("Backward0")]
    return Taps


class _TapsAdj(Primitive):
    """The transpose of a taps op (its backward is again a taps op)."""

    node_name = "UpsampleBackwardBackward0"

    @staticmethod
    def forward(ctx, x, taps):
        ctx.taps = taps
        return _apply_taps(x, taps)

    @staticmethod
    def backward(ctx, g):
        return _TapsAdj.apply(g, [None if t is None else t.transpose() for t in ctx.taps]), None


_taps_classes = {}


def _taps(name, x, taps):
    cls = _taps_classes.get(name)
    if cls is None:
        cls = _taps_classes[name] = _taps_pair(name)
    return cls.apply(x, taps)
