# ruff: noqa: A001, A002 - torch's names (sorted) and argument name (input)
"""sort, argsort, msort, topk, kthvalue (values carry the gradient, indices are int64; the named
``return_types``); unique, unique_consecutive; searchsorted, bucketize.
"""

from __future__ import annotations

import math

import numpy as np

from ...autograd.function import _active
from .._util import (Primitive, Tensor, _inside, array_op, bind, normalize_dim, refuse_complex, shape_str, writes_out,
                     transform_visible)
from ._common import _arr, _zeros
from .gathers import Scatter


# ============================================================================================================
# sort / argsort / msort / topk / kthvalue (values carry the gradient, indices are int64)
# ============================================================================================================
class _ReturnType(tuple):
    """A named pair like torch.return_types.sort: unpacks as a tuple, prints as torch's structseq."""

    __slots__ = ()
    _fields = ("values", "indices")

    def __new__(cls, values, indices):
        return tuple.__new__(cls, (values, indices))

    values = property(lambda self: self[0])
    indices = property(lambda self: self[1])

    def __repr__(self):
        body = ",\n".join(f"{f}={v!r}" for f, v in zip(self._fields, self))
        return f"tapegrad.return_types.{type(self).__name__}(\n{body})"

    def __reduce__(self):
        return (type(self), tuple(self))


def _return_type(name):
    return type(name, (_ReturnType,), {"__slots__": (), "__module__": "tapegrad.return_types", "__qualname__": name})


return_types = type("return_types", (), {n: _return_type(n) for n in ("sort", "topk", "kthvalue")})
try:  # one tapegrad.return_types namespace, shared with the reductions (max, min, ...)
    from ..reduce import return_types as _shared_types
except ImportError:  # pragma: no cover
    _shared_types = None
for _n in ("sort", "topk", "kthvalue"):
    if isinstance(_shared_types, dict):
        setattr(return_types, _n, _shared_types.setdefault(_n, getattr(return_types, _n)))
    elif _shared_types is not None:
        if not hasattr(_shared_types, _n):
            setattr(_shared_types, _n, getattr(return_types, _n))
        setattr(return_types, _n, getattr(_shared_types, _n))


def _sort_idx(a, dim, descending):
    """Stable sort indices along ``dim`` (NaN is the largest value, as in torch)."""
    if not descending:
        return np.argsort(a, axis=dim, kind="stable")
    flipped = np.flip(a, dim)
    idx = np.flip(np.argsort(flipped, axis=dim, kind="stable"), dim)
    return a.shape[dim] - 1 - idx


class _Selecting(Primitive):
    """Shared backward of sort/topk/kthvalue: the gradient of the values goes back to where they were read."""

    @staticmethod
    def backward(ctx, grad, _gi=None):
        g, idx = grad, ctx.idx
        if not ctx.keepdim:
            g = g.unsqueeze(ctx.dim) if ctx.ndim else g
            idx = np.expand_dims(idx, ctx.dim) if ctx.ndim else idx
        if ctx.ndim == 0:
            return g.reshape(()), *(None,) * ctx.n_args
        out = Scatter.apply(_zeros(ctx.shape, grad._array.dtype), ctx.dim, idx, g)
        return (out,) + (None,) * ctx.n_args


def _selecting_forward(ctx, x, dim, idx, values, keepdim, n_args):
    ctx.shape, ctx.dim, ctx.idx, ctx.keepdim, ctx.ndim, ctx.n_args = x.shape, dim, idx, keepdim, x.ndim, n_args
    ctx.mark_non_differentiable(idx)
    return values, idx


class Sort(_Selecting):
    """Sorted values along ``dim`` and where they came from."""

    @staticmethod
    def forward(ctx, x, dim, descending):
        if x.ndim == 0:
            idx = np.zeros((), np.int64)
            return _selecting_forward(ctx, x, 0, idx, x.copy(), True, 2)
        idx = _sort_idx(x, dim, descending).astype(np.int64)
        if not x.flags.c_contiguous:        # (torch's sort writes values and indices in x's layout)
            perm = sorted(range(x.ndim), key=lambda i: -abs(x.strides[i]) if x.shape[i] > 1 else 0)
            idx = np.ascontiguousarray(idx.transpose(perm)).transpose(np.argsort(perm))
        values = np.take_along_axis(x, idx, dim)
        return _selecting_forward(ctx, x, dim, idx, values, True, 2)


class SortStable(Sort):
    node_name = "SortBackward1"


@writes_out
def sort(input, dim=-1, descending=False, stable=None, *, out=None):
    """Values sorted along ``dim`` (stable: equal values keep their order) and their original indices.

    >>> tapegrad.sort(tapegrad.tensor([3., 1., 2.]))
    tapegrad.return_types.sort(
    values=tensor([1., 2., 3.]),
    indices=tensor([1, 2, 0]))
    """
    refuse_complex(input, message=" Sort does not support complex dtypes on CPU", error=RuntimeError)
    d = normalize_dim(dim, input._array.ndim)
    cls = Sort if stable is None else SortStable
    v, i = cls.apply(input, d, bool(descending))
    return return_types.sort(v, i)


def argsort(input, dim=-1, descending=False, stable=False):
    """The indices that sort ``input`` along ``dim``.

    >>> tapegrad.argsort(tapegrad.tensor([3., 1., 2.]))
    tensor([1, 2, 0])
    """
    if _active[0] and not _inside[0]:      # (a transform sees it as an op)
        return array_op(argsort, False, (input, dim, descending, stable))
    a = input._array
    refuse_complex(a, message=" Sort does not support complex dtypes on CPU", error=RuntimeError)
    if a.ndim == 0:
        return Tensor._make(np.zeros((), np.int64))
    return Tensor._make(_sort_idx(a, normalize_dim(dim, a.ndim), descending).astype(np.int64))


@writes_out
def msort(input, *, out=None):
    """``input`` sorted along its first dim (``sort(input, dim=0).values``).

    >>> tapegrad.msort(tapegrad.tensor([[2., 1.], [1., 3.]]))
    tensor([[1., 1.],
            [2., 3.]])
    """
    return sort(input, 0)[0]


class Topk(_Selecting):
    """The ``k`` largest (or smallest) values along ``dim`` and their indices."""

    @staticmethod
    def forward(ctx, x, k, dim, largest, sorted_):
        size = x.shape[dim] if x.ndim else 1
        if not 0 <= k <= size:
            raise RuntimeError("selected index k out of range")
        if x.ndim == 0:
            idx = np.zeros((), np.int64)
            return _selecting_forward(ctx, x, 0, idx, x.copy(), True, 4)
        idx = np.take(_sort_idx(x, dim, largest), np.arange(k), axis=dim).astype(np.int64)
        return _selecting_forward(ctx, x, dim, idx, np.take_along_axis(x, idx, dim), True, 4)


@writes_out
def topk(input, k, dim=-1, largest=True, sorted=True, *, out=None):  # noqa: A002 - torch's name
    """The ``k`` largest (``largest=False``: smallest) values along ``dim``, in sorted order, and their indices.

    >>> tapegrad.topk(tapegrad.tensor([1., 3., 2.]), 2)
    tapegrad.return_types.topk(
    values=tensor([3., 2.]),
    indices=tensor([1, 2]))
    """
    refuse_complex(input, message=" topk does not support complex dtypes on CPU", error=RuntimeError)
    d = normalize_dim(dim, input._array.ndim)
    v, i = Topk.apply(input, int(k), d, bool(largest), bool(sorted))
    return return_types.topk(v, i)


class Kthvalue(_Selecting):
    """The ``k``-th smallest value along ``dim`` and its index."""

    @staticmethod
    def forward(ctx, x, k, dim, keepdim):
        size = x.shape[dim] if x.ndim else 1
        if size == 0:
            raise IndexError(f"kthvalue(): Expected reduction dim {dim} to have non-zero size.")
        if not 1 <= k <= size:
            raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {dim}")
        if x.ndim == 0:
            return _selecting_forward(ctx, x, 0, np.zeros((), np.int64), x.copy(), True, 3)
        idx = np.take(_sort_idx(x, dim, False), [k - 1], axis=dim).astype(np.int64)
        vals = np.take_along_axis(x, idx, dim)
        if not keepdim:
            idx, vals = np.squeeze(idx, dim), np.squeeze(vals, dim)
        return _selecting_forward(ctx, x, dim, idx, vals, keepdim, 3)


@writes_out(error=["output values must be of same type as input",
                          "output indices must be of scalar type {r}"])
def kthvalue(input, k, dim=-1, keepdim=False, *, out=None):
    """The ``k``-th smallest value (1-based) along ``dim`` and its index.

    >>> tapegrad.kthvalue(tapegrad.tensor([3., 1., 2.]), 2)
    tapegrad.return_types.kthvalue(
    values=tensor(2.),
    indices=tensor(2))
    """
    refuse_complex(input, "kthvalue_cpu")
    d = normalize_dim(dim, input._array.ndim)
    v, i = Kthvalue.apply(input, int(k), d, bool(keepdim))
    return return_types.kthvalue(v, i)


# ============================================================================================================
# unique / unique_consecutive (not differentiable, as in torch)
# ============================================================================================================
def _not_differentiable(name, fn_name):
    def forward(ctx, x, *args):
        return _UNIQUE_IMPL[fn_name](ctx, x, *args)

    def backward(ctx, *grads):
        raise RuntimeError(f"the derivative for '{fn_name}' is not implemented.")

    return type(name, (Primitive,), {"forward": staticmethod(forward), "backward": staticmethod(backward),
                                     "node_name": name + "Backward0", "__doc__": f"{fn_name} (no derivative)",
                                     "data_shaped": True})      # (how many values: compile's replay checks it)


def _unique_flat(ctx, x, return_inverse, return_counts):
    # every NaN is its own value in torch
    vals, inv, counts = np.unique(x.reshape(-1), return_inverse=True, return_counts=True, equal_nan=False)
    return vals, inv.reshape(x.shape).astype(np.int64), counts.astype(np.int64)


def _unique_dim(ctx, x, dim, return_inverse, return_counts):
    if x.shape[dim] == 0:
        return x.copy(), np.zeros(0, np.int64), np.zeros(0, np.int64)
    vals, inv, counts = np.unique(x, return_inverse=True, return_counts=True, axis=dim)
    return vals, inv.reshape(-1).astype(np.int64), counts.astype(np.int64)


def _unique_consecutive(ctx, x, dim, return_inverse, return_counts):
    if dim is None:
        flat = x.reshape(-1)
        start = np.ones(flat.size, np.bool_)
        start[1:] = flat[1:] != flat[:-1]
        vals = flat[start]
        inv_shape = x.shape
    else:
        moved = np.moveaxis(x, dim, 0)
        n = moved.shape[0]
        rows = moved.reshape(n, math.prod(moved.shape[1:]))     # (no -1: n may be 0)
        start = np.ones(n, np.bool_)
        start[1:] = np.any(rows[1:] != rows[:-1], axis=1) if rows.shape[1] else False
        vals = np.moveaxis(moved[start], 0, dim)
        inv_shape = (n,)
    inv = (np.cumsum(start) - 1).reshape(inv_shape).astype(np.int64)
    pos = np.flatnonzero(start)
    counts = np.diff(np.append(pos, start.size)).astype(np.int64)
    return vals, inv, counts


_UNIQUE_IMPL = {"_unique2": _unique_flat, "unique_dim": _unique_dim, "unique_consecutive": _unique_consecutive}
Unique2 = _not_differentiable("Unique2", "_unique2")
UniqueDim = _not_differentiable("UniqueDim", "unique_dim")
UniqueConsecutive = _not_differentiable("UniqueConsecutive", "unique_consecutive")


def _unique_out(res, return_inverse, return_counts):
    vals, inv, counts = res
    out = (vals,) + ((inv,) if return_inverse else ()) + ((counts,) if return_counts else ())
    return out[0] if len(out) == 1 else out


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):  # noqa: A002
    """The distinct values of ``input`` (sorted), optionally with the inverse indices and the counts.

    >>> tapegrad.unique(tapegrad.tensor([3, 1, 3, 2]), return_counts=True)
    (tensor([1, 2, 3]), tensor([1, 1, 2]))
    """
    refuse_complex(input, "unique")
    if dim is None:
        res = Unique2.apply(input, return_inverse, return_counts)
    else:
        res = UniqueDim.apply(input, normalize_dim(dim, input._array.ndim), return_inverse, return_counts)
    return _unique_out(res, return_inverse, return_counts)


def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """The values of ``input`` with runs of equal consecutive elements (or slices along ``dim``) collapsed.

    >>> tapegrad.unique_consecutive(tapegrad.tensor([1, 1, 2, 1]))
    tensor([1, 2, 1])
    """
    refuse_complex(input, "unique")
    d = None if dim is None else normalize_dim(dim, input._array.ndim)
    res = UniqueConsecutive.apply(input, d, return_inverse, return_counts)
    return _unique_out(res, return_inverse, return_counts)


# ============================================================================================================
# searchsorted / bucketize
# ============================================================================================================
def _search(seq, values, right):
    """Insertion points of ``values`` into the rows of the sorted ``seq`` (1-d, or leading dims matching)."""
    side = "right" if right else "left"
    if seq.ndim <= 1:
        return np.searchsorted(seq.reshape(-1), values, side=side)
    cmp = np.less_equal if right else np.less
    return cmp(seq[..., None, :], values[..., :, None]).sum(-1)


def _searchsorted_out_error(result_dtype, out_dtype):
    """torch's words for an ``out`` of searchsorted/bucketize whose dtype is not the result's."""
    return RuntimeError("torch.searchsorted(): output tensor's dtype is wrong, it can only be Int(int32) or "
                        "Long(int64) depending on whether out_int32 flag is True, but we got output tensor's dtype "
                        f"{out_dtype._legacy} and out_int32 flag is {result_dtype.name == 'int32'}")


@writes_out(error=_searchsorted_out_error)
@transform_visible()
def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None, sorter=None, out=None):
    """Where each value of ``input`` would be inserted into ``sorted_sequence`` (its last dim) to keep it sorted.

    >>> tapegrad.searchsorted(tapegrad.tensor([1, 3, 5]), tapegrad.tensor([3, 6]))
    tensor([1, 3])
    """
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"tapegrad.searchsorted(): side can only be 'left' or 'right' but got {side}")
        if right and side == "left":
            raise RuntimeError("tapegrad.searchsorted(): side and right can't be set to opposites, got side of left "
                               "while right was True")
        right = side == "right"
    seq = sorted_sequence._array
    scalar = not isinstance(input, Tensor)
    vals = np.asarray(input) if scalar else input._array
    if scalar and seq.ndim > 1:
        raise RuntimeError("tapegrad.searchsorted(): input value can be a scalar only when boundaries tensor dimension "
                           f"is 1, but we got boundaries tensor dim({seq.ndim}) and input value's dim(0) numel(1)")
    if seq.ndim > 1 and (vals.ndim != seq.ndim or vals.shape[:-1] != seq.shape[:-1]):
        raise RuntimeError("tapegrad.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 "
                           "dimensions of boundaries tensor and input value tensor must match, but we got boundaries "
                           f"tensor {shape_str(seq.shape)} and input value tensor {shape_str(vals.shape)}")
    if sorter is not None:
        srt = _arr(sorter)
        if srt.shape != seq.shape:
            raise RuntimeError(f"tapegrad.searchsorted(): boundary and sorter must have the same size, but got "
                               f"boundary tensor {shape_str(seq.shape)}and got sorter tensor {shape_str(srt.shape)}")
        seq = np.take_along_axis(seq, srt.astype(np.int64), -1)
    refuse_complex(np.result_type(seq, vals), "searchsorted_out_cpu")
    res = _search(seq, vals, right)
    return Tensor._make(np.asarray(res, np.int32 if out_int32 else np.int64))


@writes_out(error=_searchsorted_out_error)
@transform_visible()
def bucketize(input, boundaries, *, out_int32=False, right=False, out=None):
    """The index of the bucket of each value of ``input``, given the sorted 1-d ``boundaries``.

    >>> tapegrad.bucketize(tapegrad.tensor([1, 4, 9]), tapegrad.tensor([2, 4, 8]))
    tensor([0, 1, 3])
    """
    b = boundaries._array
    if b.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({b.ndim})")
    vals = input._array if isinstance(input, Tensor) else np.asarray(input)
    refuse_complex(np.result_type(b, vals), "searchsorted_out_cpu")
    res = np.searchsorted(b, vals, side="right" if right else "left")
    return Tensor._make(np.asarray(res, np.int32 if out_int32 else np.int64))


bind(sort=sort, argsort=argsort, topk=topk, kthvalue=kthvalue, msort=msort, unique=unique,
     unique_consecutive=unique_consecutive)
