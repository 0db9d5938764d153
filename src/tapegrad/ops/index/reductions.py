# ruff: noqa: A002 - torch's argument name (input)
"""Index reductions and membership: index_reduce(_) (prod, mean, amax, amin into the slots of ``index``),
isin, and the in-place fill_diagonal_.

index_reduce has its own node (IndexReduceBackward0) whose backward is torch's formula in tapegrad ops
(index_select, index_add, where, and index_reduce itself for a product with zeros), so double backward works.
"""

from __future__ import annotations

import warnings

import numpy as np

from ... import _dtype
from ...autograd.function import _active
from .._util import Primitive, Tensor, apply_inplace, bind, normalize_dim, transform_visible, vmap_per_sample

_REDUCES = ("prod", "mean", "amax", "amin")


# --- index_reduce ---------------------------------------------------------------------------------------------
def _identity(reduce, d):
    if reduce == "prod":
        return d.type(1)
    if reduce == "mean":
        return d.type(0)
    if d.kind == "f":
        return d.type(-np.inf if reduce == "amax" else np.inf)
    info = np.iinfo(d) if d.kind in "iu" else None
    if info is None:           # bool
        return d.type(reduce == "amin")
    return d.type(info.min if reduce == "amax" else info.max)


def _index_reduce_np(x, d, idx, src, reduce, include_self):
    out = np.moveaxis(x.copy(), d, 0)
    s = np.moveaxis(src, d, 0)
    hit = np.zeros(out.shape[0], bool)
    hit[idx] = True
    if not include_self:
        out[hit] = _identity(reduce, x.dtype)
    if reduce == "prod":
        np.multiply.at(out, idx, s)
    elif reduce == "amax":
        np.maximum.at(out, idx, s)
    elif reduce == "amin":
        np.minimum.at(out, idx, s)
    else:
        count = np.zeros(out.shape[0], np.int64)
        np.add.at(count, idx, 1)
        if include_self:
            count += 1
        np.add.at(out, idx, s)
        count = np.maximum(count, 1).reshape((-1,) + (1,) * (out.ndim - 1))
        out = out // count.astype(out.dtype) if x.dtype.kind in "iub" else out / count.astype(out.dtype)
    return np.moveaxis(np.asarray(out, x.dtype), 0, d)


class IndexReduce(Primitive):
    """``self`` with the slices of ``source`` reduced into the slots ``index`` along ``dim``."""

    @staticmethod
    def forward(ctx, x, d, idx, src, reduce, include_self):
        # (the index tensor's own array, int32 or int64 of any shape, checked here: a compiled replay checks
        #  each call's index too)
        idx = idx.reshape(-1)
        if idx.size and (idx.min() < 0 or idx.max() >= (x.shape[d] if x.ndim else 1)):
            raise IndexError("index out of range in self")
        ctx.d, ctx.idx, ctx.reduce, ctx.include_self = d, idx, reduce, include_self
        ctx.save_result(0, 3)
        if x.ndim == 0:                # (a 0-d self and source: one slot)
            return _index_reduce_np(x.reshape(1), 0, idx, src.reshape(1), reduce, include_self).reshape(())
        return _index_reduce_np(x, d, idx, src, reduce, include_self)

    @staticmethod
    def backward(ctx, grad):
        result, x, src = ctx.saved_tensors
        if x._array.ndim == 0:
            gx, _, _, gs, _, _ = _index_reduce_backward(ctx, grad.reshape(1), result.reshape(1), x.reshape(1),
                                                        src.reshape(1))
            return (None if gx is None else gx.reshape(())), None, None, (None if gs is None else gs.reshape(())), \
                None, None
        return _index_reduce_backward(ctx, grad, result, x, src)


def _index_reduce_backward(ctx, grad, result, x, src):
    """The gradients of self and source (torch's formulas), for a self of one dim or more."""
    d, reduce, include_self = ctx.d, ctx.reduce, ctx.include_self
    index = Tensor._make(ctx.idx)
    if reduce == "prod":
        gx, gs = _prod_grads(grad, result, x, src, d, index, include_self)
    elif reduce == "mean":
        n = np.zeros(x._array.shape[d], grad._array.dtype)
        np.add.at(n, ctx.idx, 1)
        n = np.maximum(n + (1 if include_self else 0), 1)
        n = Tensor._make(n.reshape([-1 if k == d else 1 for k in range(x._array.ndim)]))
        gx = grad / n
        gs = grad.index_select(d, index) / n.index_select(d, index)
    else:         # amax / amin: the gradient split evenly between the entries equal to the result
        value = result.index_select(d, index)
        x_is = Tensor._make((x._array == result._array).astype(grad._array.dtype))
        s_is = Tensor._make((src._array == value._array).astype(grad._array.dtype))
        share = grad / x_is.index_add(d, index, s_is)
        gx = x_is * share
        gs = s_is * share.index_select(d, index)
    if not include_self:       # the indexed slots of self were overwritten
        hit = np.zeros(x._array.shape[d], bool)
        hit[ctx.idx] = True
        gx = gx.where(Tensor._make(~hit.reshape([-1 if k == d else 1 for k in range(x._array.ndim)])), 0.0)
    need = ctx.needs_input_grad
    return (gx if need[0] else None), None, None, (gs if need[3] else None), None, None


def _prod_grads(grad, result, x, src, d, index, include_self):
    """torch's product gradients: for self, grad * (the product with self's zeros as ones) / (self with its zeros as
    ones); for source, grad * result / source, except that a lone zero of a slot gets the product of the others
    (and with two zeros or more, every source entry of the slot gets 0)."""
    xa, sa = x._array, src._array
    x_zero = Tensor._make(xa == 0)
    x_ones = x.masked_fill(x_zero, 1)
    gx = grad * IndexReduce.apply(x_ones, d, index._array, src, "prod", include_self) / x_ones
    s_zero = sa == 0
    counts = np.zeros(np.moveaxis(xa, d, 0).shape, np.int64)        # source zeros per slot (and position)
    np.add.at(counts, index._array, np.moveaxis(s_zero, d, 0).astype(np.int64))
    lone = s_zero & (np.moveaxis(counts[index._array], 0, d) == 1)
    lone_t = Tensor._make(lone)
    others = IndexReduce.apply(x, d, index._array, src.masked_fill(lone_t, 1), "prod", include_self)
    gs = (grad * others).index_select(d, index).where(
        lone_t, (grad * result).index_select(d, index) / src.masked_fill(Tensor._make(s_zero), 1))
    return gx, gs


def index_reduce(input, dim, index, source, reduce, *, include_self=True, out=None):
    """``input`` with the slices of ``source`` along ``dim`` reduced into the slots ``index`` names (``reduce``:
    "prod", "mean", "amax" or "amin"; ``include_self=False`` leaves input's own values of those slots out).

    >>> x = tapegrad.ones(3)
    >>> x.index_reduce(0, tapegrad.tensor([0, 0, 2]), tapegrad.tensor([2., 3., 4.]), "prod")
    tensor([6., 1., 4.])
    """
    if _active[0]:       # (vmap with a batched index: once per sample)
        r = vmap_per_sample(index_reduce, (input, dim, index, source, reduce),
                            {"include_self": include_self, "out": out}, (index,))
        if r is not NotImplemented:
            return r
    warnings.warn("index_reduce() is in beta and the API may change at any time.", UserWarning, stacklevel=2)
    if reduce not in _REDUCES:
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got "
                           f"{reduce}.")
    a, s, ia = input._array, source._array, index._array
    if ia.dtype not in (np.int32, np.int64):
        raise RuntimeError(f"index_reduce_(): Expected dtype int32/int64 for index but got: "
                           f"{index.dtype._legacy}")
    if ia.ndim > 1:
        raise IndexError(f"index_reduce_(): Index is supposed to be a vector, but got dim: {ia.ndim} with type: "
                         f"{index.dtype._legacy} and size: {list(ia.shape)}")
    d = normalize_dim(dim, a.ndim)
    if a.dtype != s.dtype:
        raise RuntimeError(f"index_reduce_(): self ({input.dtype._legacy}) and source ({source.dtype._legacy}) must "
                           "have the same scalar type")
    if a.ndim != s.ndim or any(a.shape[k] != s.shape[k] for k in range(a.ndim) if k != d):
        raise RuntimeError(f"source tensor shape must match self tensor shape, excluding the specified dimension. "
                           f"Got self.shape = {list(a.shape)} source.shape = {list(s.shape)}")
    if ia.size != (s.shape[d] if s.ndim else 1):
        raise RuntimeError(f"index_reduce_(): Number of indices ({ia.size}) should be equal to source.size(dim): "
                           f"({s.shape[d] if s.ndim else 1}), for dim: {dim}")
    if a.dtype.kind == "c":         # (torch has no complex kernel)
        if input.requires_grad or source.requires_grad:
            raise RuntimeError("index_reduce does not support automatic differentiation for outputs with complex "
                               "dtype.")
        kernel = "index_func_" if include_self else "index_reduce_func_exclude_input_init"
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{input.dtype._legacy}'")
    res = IndexReduce.apply(input, d, ia, source, reduce, bool(include_self))
    if out is not None:
        from ..reduce._common import _write_out
        return _write_out("index_reduce", res, out)
    return res


def _index_reduce_(self, dim, index, source, reduce, *, include_self=True):
    return apply_inplace(self, index_reduce, dim, index, source, reduce, include_self=include_self)


# --- isin ---------------------------------------------------------------------------------------------------------
@transform_visible()
def isin(elements, test_elements, *, assume_unique=False, invert=False, out=None):
    """Whether each element of ``elements`` is in ``test_elements`` (either may be a number; NaN is in nothing):
    a bool tensor of ``elements``' shape (``invert``: the opposite).

    >>> tapegrad.isin(tapegrad.tensor([1, 2, 3]), tapegrad.tensor([2, 4]))
    tensor([False,  True, False])
    """
    if not isinstance(elements, Tensor) and not isinstance(test_elements, Tensor):
        raise TypeError(f"isin() received an invalid combination of arguments - got "
                        f"({type(elements).__name__}, {type(test_elements).__name__}), but expected one of:\n"
                        " * (Tensor elements, Tensor test_elements, *, bool assume_unique = False, bool invert = "
                        "False, Tensor out = None)\n"
                        " * (Number element, Tensor test_elements, *, bool assume_unique = False, bool invert = "
                        "False, Tensor out = None)\n"
                        " * (Tensor elements, Number test_element, *, bool assume_unique = False, bool invert = "
                        "False, Tensor out = None)\n")
    ea = elements._array if isinstance(elements, Tensor) else elements
    ta = test_elements._array if isinstance(test_elements, Tensor) else test_elements
    d = _dtype.result_type(ea, ta)
    if d is _dtype.bool or d.is_complex:
        raise RuntimeError(f"Unsupported input type encountered for isin(): {d._legacy}")
    e = np.asarray(ea).astype(d.np)
    t = np.asarray(ta).astype(d.np).reshape(-1)
    res = Tensor._make(np.asarray(np.isin(e, t, assume_unique=bool(assume_unique), invert=bool(invert))))
    if out is not None:
        from ..reduce._common import _write_out
        return _write_out("isin", res, out, dtype="same")
    return res


# --- fill_diagonal_ -------------------------------------------------------------------------------------------------
class FillDiagonal(Primitive):
    """``x`` with its main diagonal set to a number (the filled places get a zero gradient)."""

    @staticmethod
    def forward(ctx, x, value, wrap):
        out = x.copy()
        flat = out.reshape(-1)
        if x.ndim == 2:
            rows, cols = x.shape
            end = flat.size if wrap else min(rows, cols) * cols
            positions = np.arange(0, end, cols + 1)
        else:
            positions = np.ravel_multi_index((np.arange(x.shape[0]),) * x.ndim, x.shape)
        flat[positions] = value
        ctx.positions = positions
        return flat.reshape(x.shape)

    @staticmethod
    def backward(ctx, grad):
        keep = np.ones(grad._array.size, bool)
        keep[ctx.positions] = False
        return grad.where(Tensor._make(keep.reshape(grad._array.shape)), 0.0), None, None


def _fill_diagonal_(self, fill_value, wrap=False):
    """Fill the main diagonal with ``fill_value`` in place (all dims of equal length beyond 2-d; a tall matrix
    with ``wrap=True`` starts again after each block of ``ncols + 1`` rows, as NumPy's).

    >>> tapegrad.zeros(2, 2).fill_diagonal_(1.)
    tensor([[1., 0.],
            [0., 1.]])
    """
    a = self._array
    if a.ndim < 2:
        raise RuntimeError("dimensions must larger than 1")
    if a.ndim > 2 and any(s != a.shape[0] for s in a.shape):
        raise RuntimeError("all dimensions of input must be of equal length")
    value = fill_value.item() if isinstance(fill_value, Tensor) else fill_value
    value = _dtype.fill_scalar(value, self.dtype, halves=False)
    return apply_inplace(self, FillDiagonal.apply, value, bool(wrap))


bind(index_reduce=index_reduce, index_reduce_=_index_reduce_, fill_diagonal_=_fill_diagonal_)
