# ruff: noqa: A001, A002 - torch's names (sorted) and argument name (input)
"""gather and scatter (scatter_add, scatter_reduce), and the index_* ops (index_select, index_add,
index_copy, index_fill, index_put), take, put, take_along_dim: gather's backward is a scatter_add, whose
backward is a gather, and so on.
"""

from __future__ import annotations

import warnings

import numpy as np

from ... import _dtype, _meta
from .._util import (Primitive, Tensor, apply_inplace, bind, broadcast_or_error, capturing, linear_jvp, normalize_dim,
                     shape_str, writes_out, vmap_per_sample)
from ...autograd.function import _active
from ._common import (_check_gather, _dim_key, _gather_np, _inplace, _scatter_counts,
                      _scatter_np, _tensor, _zeros)
from .subscript import IndexPut, IndexPutArgs, _index_array, _index_put_values, _np_key
from .masked import _where, masked_fill


# ============================================================================================================
# gather / scatter
# ============================================================================================================
class Gather(Primitive):
    """``out[i][j] = x[i][index[i][j]]`` (dim=1), positions read along ``dim``."""

    jvp = staticmethod(linear_jvp)   # linear: the op itself applied to the tangents

    @staticmethod
    def forward(ctx, x, dim, index):
        ctx.shape, ctx.dim, ctx.index = x.shape, dim, index
        return _gather_np(x, dim, index)

    @staticmethod
    def backward(ctx, grad):
        return ScatterAdd.apply(_zeros(ctx.shape, grad._array.dtype), ctx.dim, ctx.index, grad), None, None


class ScatterAdd(Primitive):
    """``x`` with ``src`` added at ``index`` along ``dim`` (repeated positions add up)."""

    jvp = staticmethod(linear_jvp)   # linear: the op itself applied to the tangents

    @staticmethod
    def forward(ctx, x, dim, index, src):
        ctx.dim, ctx.index = dim, index
        return _scatter_np(x, dim, index, src, "sum")

    @staticmethod
    def backward(ctx, grad):
        need = ctx.needs_input_grad
        gsrc = Gather.apply(grad, ctx.dim, ctx.index) if need[3] else None
        return (grad if need[0] else None), None, None, gsrc


class Scatter(Primitive):
    """``x`` with ``src`` written at ``index`` along ``dim``."""

    jvp = staticmethod(linear_jvp)   # linear: the op itself applied to the tangents

    @staticmethod
    def forward(ctx, x, dim, index, src):
        ctx.dim, ctx.index = dim, index
        return _scatter_np(x, dim, index, src)

    @staticmethod
    def backward(ctx, grad):
        need = ctx.needs_input_grad
        gx = ScatterValue.apply(grad, ctx.dim, ctx.index, 0.0) if need[0] else None
        gsrc = Gather.apply(grad, ctx.dim, ctx.index) if need[3] else None
        return gx, None, None, gsrc


class ScatterValue(Primitive):
    """``x`` with the number ``value`` written at ``index`` along ``dim``."""

    node_name = "ScatterBackward1"

    @staticmethod
    def forward(ctx, x, dim, index, value):
        ctx.dim, ctx.index = dim, index
        return _scatter_np(x, dim, index, value)

    @staticmethod
    def backward(ctx, grad):
        return ScatterValue.apply(grad, ctx.dim, ctx.index, 0.0), None, None, None


class ScatterLegacyReduce(Primitive):
    """``scatter(..., reduce="add"|"multiply")``: torch defines no derivative for it."""

    node_name = "NotImplemented"

    @staticmethod
    def forward(ctx, x, dim, index, src, reduce):
        return _scatter_np(x, dim, index, src, reduce)

    @staticmethod
    def backward(ctx, grad):
        raise RuntimeError("derivative for aten::scatter is not implemented")


class ScatterReduce(Primitive):
    """``scatter_reduce``: sum, prod, mean, amax or amin of ``src`` (and ``x`` with include_self) per position."""

    @staticmethod
    def forward(ctx, x, dim, index, src, reduce, include_self):
        ctx.dim, ctx.index, ctx.reduce, ctx.include_self = dim, index, reduce, include_self
        ctx.save_result(0, 3)
        return _scatter_np(x, dim, index, src, reduce, include_self)

    @staticmethod
    def backward(ctx, grad):
        result, x, src = ctx.saved_tensors
        dim, index, reduce, incl = ctx.dim, ctx.index, ctx.reduce, ctx.include_self
        need = ctx.needs_input_grad
        gx = gs = None
        if reduce == "sum":
            gx, gs = grad, Gather.apply(grad, dim, index)
        elif reduce == "mean":
            n = _tensor(_scatter_counts(grad._array.shape, dim, index, incl).clip(1).astype(grad._array.dtype))
            gx = grad / n
            gs = Gather.apply(grad, dim, index) / Gather.apply(n, dim, index)
        elif reduce == "prod":
            xa, sa = x._array, src._array
            masked_x = masked_fill(x, _tensor(xa == 0), 1)
            gx = grad * scatter_reduce(masked_x, dim, _tensor(index), src, "prod", include_self=incl) / masked_x
            src_zero = sa == 0
            nz = _scatter_np(np.zeros(xa.shape), dim, index, src_zero.astype(np.float64), "sum")
            single = src_zero & (_gather_np(nz, dim, index) == 1)
            masked_src = masked_fill(src, _tensor(single), 1)
            masked_src_result = scatter_reduce(x, dim, _tensor(index), masked_src, "prod", include_self=incl)
            gs = _where(single, Gather.apply(grad * masked_src_result, dim, index),
                        Gather.apply(grad * result, dim, index) / masked_fill(src, _tensor(src_zero), 1))
        else:  # amax / amin
            value = Gather.apply(result, dim, index)
            x_is = (x == result).to(grad.dtype)
            src_is = (src == value).to(grad.dtype)
            n = ScatterAdd.apply(x_is, dim, index, src_is)
            dist = grad / n
            gx = x_is * dist
            gs = src_is * Gather.apply(dist, dim, index)
        if not incl and gx is not None:
            gx = ScatterValue.apply(gx, dim, index, 0.0)
        return (gx if need[0] else None), None, None, (gs if need[3] else None), None, None


@writes_out(no_overlap=True)
def gather(input, dim, index, *, sparse_grad=False, out=None):
    """Values of ``input`` read along ``dim`` at ``index`` (same number of dims as input).

    >>> tapegrad.tensor([[1, 2], [3, 4]]).gather(1, tapegrad.tensor([[0, 0], [1, 0]]))
    tensor([[1, 1],
            [4, 3]])
    """
    if _active[0]:       # (vmap with a batched index: once per sample)
        r = vmap_per_sample(gather, (input, dim, index), {"sparse_grad": sparse_grad, "out": out}, (index,))
        if r is not NotImplemented:
            return r
    if _empty_index(index):         # torch checks nothing of an empty index (its dtype, its rank)
        return Gather.apply(input, normalize_dim(dim, input._array.ndim), _idx_array(index))
    d, idx = _gather_index("gather", input, dim, index)
    _check_gather("gather", input._array.shape, d, idx)
    return Gather.apply(input, d, idx)


def _idx_array(index):
    if isinstance(index, Tensor):
        return index._array
    if not isinstance(index, np.ndarray):
        # a list or a number from the user: torch's parser refuses it ("argument 'index' (position 2) must be
        # Tensor, not list"), which the public function's wrapper words from this failure (_argtypes)
        from ... import _argtypes
        err = _argtypes.from_stack()
        raise err if err is not None else TypeError(f"argument 'index' must be Tensor, not {type(index).__name__}")
    return index


def _empty_index(index):
    return _idx_array(index).size == 0


def _gather_index(op, input, dim, index):
    """gather's and scatter's index: int64 or int32 (torch's RuntimeError otherwise; NumPy indexes with either, so
    the array goes to the op as it is: compile's capture sees the index tensor's own array), and the dim."""
    a = _idx_array(index)
    if a.dtype not in (np.int64, np.int32):
        raise RuntimeError(f"{op}(): Expected dtype int32/int64 for index")
    return normalize_dim(dim, input._array.ndim), a


def _scatter_args(op, input, dim, index, src):
    d, idx = _gather_index("scatter", input, dim, index)
    if isinstance(src, Tensor):
        if src.dtype is not input.dtype:
            raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
        _check_gather(op, input._array.shape, d, idx, src._array.shape)
    else:
        _check_gather(op, input._array.shape, d, idx)
    return d, idx


def scatter(input, dim, index, src=None, value=None, *, reduce=None):
    """``input`` with ``src`` (a tensor or a number) written at ``index`` along ``dim``.

    >>> tapegrad.zeros(2, 3).scatter(1, tapegrad.tensor([[2], [0]]), 1.0)
    tensor([[0., 0., 1.],
            [1., 0., 0.]])
    """
    if _active[0]:       # (vmap with a batched index: once per sample)
        r = vmap_per_sample(scatter, (input, dim, index, src, value), {"reduce": reduce}, (index,))
        if r is not NotImplemented:
            return r
    if src is None:
        src = value
    if src is None:
        raise TypeError("scatter() missing 1 required positional argument: 'src' (or 'value')")
    if _empty_index(index):         # (nothing is written, nothing is checked: torch's result is input's copy)
        d, idx = normalize_dim(dim, input._array.ndim), _idx_array(index)
    else:
        d, idx = _scatter_args("scatter", input, dim, index, src)
    if reduce is not None:
        if reduce not in ("add", "multiply"):
            raise RuntimeError("reduce argument must be either add or multiply.")
        if isinstance(src, Tensor):
            warnings.warn("The reduce argument of tapegrad.scatter with Tensor src is deprecated and will be removed "
                          "in a future PyTorch release. Use tapegrad.scatter_reduce instead for more reduction "
                          "options.",
                          UserWarning, stacklevel=2)
        return ScatterLegacyReduce.apply(input, d, idx, src, reduce)
    if isinstance(src, Tensor):
        return Scatter.apply(input, d, idx, src)
    return ScatterValue.apply(input, d, idx, src)


def scatter_add(input, dim, index, src):
    """``input`` with ``src`` added at ``index`` along ``dim`` (repeated indices accumulate).

    >>> tapegrad.zeros(3).scatter_add(0, tapegrad.tensor([0, 0, 2]), tapegrad.ones(3))
    tensor([2., 0., 1.])
    """
    if _active[0]:       # (vmap with a batched index: once per sample)
        r = vmap_per_sample(scatter_add, (input, dim, index, src), None, (index,))
        if r is not NotImplemented:
            return r
    if _empty_index(index):
        return ScatterAdd.apply(input, normalize_dim(dim, input._array.ndim), _idx_array(index), src)
    d, idx = _scatter_args("scatter_add", input, dim, index, src)
    return ScatterAdd.apply(input, d, idx, src)


def scatter_reduce(input, dim, index, src, reduce, *, include_self=True):
    """Reduce ``src`` into ``input`` at ``index`` along ``dim`` with "sum", "prod", "mean", "amax" or "amin".

    >>> tapegrad.tensor([1., 2.]).scatter_reduce(0, tapegrad.tensor([0, 0, 1]), tapegrad.tensor([5., 3., 1.]), "amax")
    tensor([5., 2.])
    """
    if _active[0]:       # (vmap with a batched index: once per sample)
        r = vmap_per_sample(scatter_reduce, (input, dim, index, src, reduce), {"include_self": include_self}, (index,))
        if r is not NotImplemented:
            return r
    reduce = {"max": "amax", "min": "amin"}.get(reduce, reduce)   # torch accepts both spellings
    if reduce not in ("sum", "prod", "mean", "amax", "amin"):
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    d, idx = _scatter_args("scatter_reduce", input, dim, index, src)
    return ScatterReduce.apply(input, d, idx, src, reduce, bool(include_self))


# ============================================================================================================
# index_select / index_add / index_copy / index_fill / index_put
# ============================================================================================================
def _vector_index(op, index, size, dim, select_msg=False):
    """The 1-d index of index_select / index_add_ / index_copy_ / index_fill_, checked as each of them does (the
    rank first or the dtype first, IndexError or RuntimeError: torch's own order and classes)."""
    a = _idx_array(index)
    legacy = _dtype.from_numpy_dtype(a.dtype)._legacy
    int32_ok = op in ("index_select", "index_add_")
    dtype_ok = a.dtype == np.int64 or (int32_ok and a.dtype == np.int32)
    if op == "index_fill_":
        if not dtype_ok:
            raise IndexError("index_fill_(): Expected dtype int64 for index.")
        if a.ndim > 1:
            raise RuntimeError("Index has to be a vector/scalar")
    else:
        if a.ndim > 1:
            if op == "index_add_":
                raise IndexError(f"index_add_(): Index is supposed to be a vector, but got dim: {a.ndim} with type: "
                                 f"{legacy} and size: {shape_str(a.shape)}")
            if op == "index_copy_":
                raise IndexError(f"index_copy_(): Index should have dimension 1 or 0 (got {a.ndim})")
            raise IndexError(f"{op}(): Index is supposed to be a vector")
        if not dtype_ok:
            raise RuntimeError({
                "index_select": "index_select(): Expected dtype int32 or int64 for index",
                "index_add_": f"index_add_(): Expected dtype int32/int64 for index but got: {legacy}",
                "index_copy_": f"index_copy_(): Expected a long tensor for index, but got {legacy}"}[op])
    return a.astype(np.int64, copy=False).reshape(-1)


def _first_bad(a, lo, hi):
    """The first index (in order) outside [lo, hi), as torch reports it; None when all are in range (always for a
    meta index: a meta kernel checks no values)."""
    if a.__class__ is _meta.MetaArray:
        return None
    bad = (a < lo) | (a >= hi)
    return int(a.reshape(-1)[np.argmax(bad.reshape(-1))]) if bad.any() else None


def _check_bounds(op, a, size, dim):
    """Each op's own bounds rule and wording (only index_fill accepts negative indices)."""
    if not a.size:
        return a
    neg_ok = op == "index_fill_"
    bad = _first_bad(a, -size if neg_ok else 0, size)
    if bad is not None:
        if op == "index_select":       # (torch's kernels word it two ways: dim 1 has its own)
            if dim != 1:
                raise IndexError("index out of range in self")
            raise RuntimeError(f"INDICES element is out of DATA bounds, id={bad} axis_dim={size}")
        msg = f"index {bad} is out of bounds for dimension {dim} with size {size}"
        if op == "index_add_":
            raise RuntimeError(msg)
        raise IndexError(f"index_copy_(): {msg}" if op == "index_copy_" else msg)
    return a % size if neg_ok and size else a


def _dim_index(op, input, dim, index, select_msg=False, source=None):
    """The dim and the checked index of index_select / index_add_ / index_copy_ / index_fill_. Under compile's
    capture (``deferred``) the index tensor itself, with the op's name as its ``check``: the conversion and the
    bounds check (data) are the forward's, so that every replay makes them on its own index."""
    n = input._array.ndim
    d = normalize_dim(dim, n)
    size = input._array.shape[d] if n else 1
    a = _vector_index(op, index, size, d, select_msg)
    if source is not None:
        _check_source(op, input, d, a, source)
    if _active[0] and isinstance(index, Tensor) and capturing():
        _check_bounds(op, a, size, d)        # (the eager error at the capture itself)
        return d, index
    return d, _check_bounds(op, a, size, d)


def _deferred(index, check, x, dim):
    """In a forward handed the index tensor (``check``: the op's name for its bounds rule): the index as
    ``_dim_index`` makes it."""
    return _check_bounds(check, index.astype(np.int64, copy=False).reshape(-1), x.shape[dim] if x.ndim else 1, dim)


def _check_kw(op, index):
    """The ``check`` keyword of an op given ``_dim_index``'s index: its name when that is the tensor."""
    return {"check": op} if isinstance(index, Tensor) else {}


def _as1d(a):
    return a.reshape(1) if a.ndim == 0 else a


class IndexSelect(Primitive):
    """The slices of ``x`` at ``index`` along ``dim``."""

    jvp = staticmethod(linear_jvp)   # linear: the op itself applied to the tangents

    @staticmethod
    def forward(ctx, x, dim, index, check=None):
        if check is not None:
            index = _deferred(index, check, x, dim)
        ctx.shape, ctx.dim, ctx.index = x.shape, dim, index
        out = np.take(_as1d(x), index, axis=dim)
        return out.reshape(()) if x.ndim == 0 else out

    @staticmethod
    def backward(ctx, grad):
        return IndexAdd.apply(_zeros(ctx.shape, grad._array.dtype), ctx.dim, ctx.index, grad, 1), None, None


class IndexAdd(Primitive):
    """``x`` with ``alpha * source`` added at ``index`` along ``dim``."""

    jvp = staticmethod(linear_jvp)   # linear: the op itself applied to the tangents

    @staticmethod
    def forward(ctx, x, dim, index, source, alpha, check=None):
        if check is not None:
            index = _deferred(index, check, x, dim)
        ctx.dim, ctx.index, ctx.alpha = dim, index, alpha
        out = _as1d(x).copy()
        src = _as1d(source)
        if alpha != 1 and out.dtype.kind in "iu" and isinstance(alpha, int):    # (checked, and -1 into uint8 is
            alpha = _dtype.fill_scalar(alpha, _dtype.from_numpy_dtype(out.dtype))   # 255, as torch converts it)
        np.add.at(out, _dim_key(dim, index), (src if alpha == 1 else src * alpha).astype(out.dtype, copy=False))
        return out.reshape(x.shape)

    @staticmethod
    def backward(ctx, grad):
        need = ctx.needs_input_grad
        gs = None
        if need[3]:
            gs = IndexSelect.apply(grad, ctx.dim, ctx.index)
            if ctx.alpha != 1:
                gs = gs * ctx.alpha
        return (grad if need[0] else None), None, None, gs, None


class IndexCopy(Primitive):
    """``x`` with the slices at ``index`` along ``dim`` replaced by ``source``."""

    jvp = staticmethod(linear_jvp)   # linear: the op itself applied to the tangents

    @staticmethod
    def forward(ctx, x, dim, index, source, check=None):
        if check is not None:
            index = _deferred(index, check, x, dim)
        ctx.dim, ctx.index = dim, index
        out = _as1d(x).copy()
        out[_dim_key(dim, index)] = _as1d(source)
        return out.reshape(x.shape)

    @staticmethod
    def backward(ctx, grad):
        need = ctx.needs_input_grad
        gx = IndexFill.apply(grad, ctx.dim, ctx.index, 0.0) if need[0] else None
        gs = IndexSelect.apply(grad, ctx.dim, ctx.index) if need[3] else None
        return gx, None, None, gs


class IndexFill(Primitive):
    """``x`` with the slices at ``index`` along ``dim`` set to the number ``value``."""

    @staticmethod
    def forward(ctx, x, dim, index, value, check=None):
        if check is not None:
            index = _deferred(index, check, x, dim)
        ctx.dim, ctx.index = dim, index
        out = _as1d(x).copy()
        out[_dim_key(dim, index)] = value
        return out.reshape(x.shape)

    @staticmethod
    def backward(ctx, grad):
        return IndexFill.apply(grad, ctx.dim, ctx.index, 0.0), None, None, None


class IndexFillTensor(Primitive):
    """``index_fill`` with a 0-d tensor value (differentiable in the value too)."""

    node_name = "IndexFillBackward1"

    @staticmethod
    def forward(ctx, x, dim, index, value, raw=None, check=None):
        if check is not None:      # (the index tensor itself: raw is the index as given, kept if it has a negative)
            raw = index.reshape(-1)
            raw = raw if (raw < 0).any() else None
            index = _deferred(index, check, x, dim)
        ctx.dim, ctx.index, ctx.raw = dim, index, raw
        out = _as1d(x).copy()
        out[_dim_key(dim, index)] = value
        return out.reshape(x.shape)

    @staticmethod
    def backward(ctx, grad):
        need = ctx.needs_input_grad
        gx = IndexFill.apply(grad, ctx.dim, ctx.index, 0.0) if need[0] else None
        gv = None
        if need[3]:           # the sum over the filled slots, each once however often the index repeats it
            if ctx.raw is not None:     # (torch selects with the index as given: a negative one is its error)
                _check_bounds("index_select", ctx.raw, grad._array.shape[ctx.dim] if grad._array.ndim else 1,
                              ctx.dim)
            gv = IndexSelect.apply(grad, ctx.dim, np.unique(ctx.index)).sum()
        return gx, None, None, gv, None


@writes_out(error="index_select(): self and result must have the same scalar type", no_overlap=True)
def index_select(input, dim, index, *, out=None):
    """The slices of ``input`` along ``dim`` at the positions in the 1-d ``index``.

    >>> tapegrad.tensor([[1, 2], [3, 4]]).index_select(0, tapegrad.tensor([1, 1]))
    tensor([[3, 4],
            [3, 4]])
    """
    if _active[0]:       # (vmap with a batched index: once per sample)
        r = vmap_per_sample(index_select, (input, dim, index), {"out": out}, (index,))
        if r is not NotImplemented:
            return r
    d, idx = _dim_index("index_select", input, dim, index, select_msg=True)
    if input._array.ndim == 0:
        n = (idx._array if isinstance(idx, Tensor) else idx).size
        if n != 1:
            raise RuntimeError(f"index_select(): Index to scalar can have only 1 value, got {n} value(s)")
    return IndexSelect.apply(input, d, idx, **_check_kw("index_select", idx))


def _check_source_dtype(op, input, source):
    if source.dtype is not input.dtype:
        a, b = input.dtype._legacy, source.dtype._legacy
        if op == "index_copy_":
            raise RuntimeError(f"index_copy_(): self and source expected to have the same dtype, but got (self) {a} "
                               f"and (source) {b}")
        raise RuntimeError(f"{op}(): self ({a}) and source ({b}) must have the same scalar type")


def _check_source(op, input, d, idx, source):
    ss = source._array.shape
    n_src = ss[d] if ss else 1
    if n_src != idx.size:
        raise RuntimeError(f"{op}(): Number of indices ({idx.size}) should be equal to source.size(dim): ({n_src}), "
                           f"for dim: {d}")
    expect = list(input._array.shape if input._array.ndim else (1,))
    expect[d] = idx.size
    if tuple(_as1d(source._array).shape) != tuple(expect) and not (source._array.ndim == 0 and idx.size == 1):
        xs = input._array.shape
        if op == "index_add_":
            raise RuntimeError(f"source tensor shape must match self tensor shape, excluding the specified "
                               f"dimension. Got self.shape = {shape_str(xs)} source.shape = {shape_str(ss)}")
        dst = " ".join(map(str, xs[:d] + xs[d + 1:]))
        src = " ".join(map(str, ss[:d] + ss[d + 1:]))
        raise RuntimeError(f"{op}(): Source/destination tensor must have same slice shapes. Destination slice shape: "
                           f"{dst} at dimension {d} and source slice shape: {src} at dimension 0.")


def index_add(input, dim, index, source, *, alpha=1):
    """``input`` with ``alpha * source`` added at ``index`` along ``dim`` (repeated indices accumulate).

    >>> tapegrad.zeros(3).index_add(0, tapegrad.tensor([0, 0]), tapegrad.tensor([1., 2.]))
    tensor([3., 0., 0.])
    """
    if _active[0]:       # (vmap with a batched index: once per sample)
        r = vmap_per_sample(index_add, (input, dim, index, source), {"alpha": alpha}, (index,))
        if r is not NotImplemented:
            return r
    _check_source_dtype("index_add_", input, source)
    d, idx = _dim_index("index_add_", input, dim, index, source=source)
    return IndexAdd.apply(input, d, idx, source, alpha, **_check_kw("index_add_", idx))


def index_copy(input, dim, index, source):
    """``input`` with the slices at ``index`` along ``dim`` replaced by those of ``source``.

    >>> tapegrad.zeros(3).index_copy(0, tapegrad.tensor([2]), tapegrad.tensor([5.]))
    tensor([0., 0., 5.])
    """
    if _active[0]:       # (vmap with a batched index: once per sample)
        r = vmap_per_sample(index_copy, (input, dim, index, source), None, (index,))
        if r is not NotImplemented:
            return r
    _check_source_dtype("index_copy_", input, source)
    d, idx = _dim_index("index_copy_", input, dim, index, source=source)
    return IndexCopy.apply(input, d, idx, source, **_check_kw("index_copy_", idx))


def index_fill(input, dim, index, value):
    """``input`` with the slices at ``index`` along ``dim`` set to ``value`` (a number or a 0-d tensor).

    >>> tapegrad.zeros(2, 2).index_fill(1, tapegrad.tensor([0]), 7.)
    tensor([[7., 0.],
            [7., 0.]])
    """
    if _active[0]:       # (vmap with a batched index: once per sample)
        r = vmap_per_sample(index_fill, (input, dim, index, value), None, (index,))
        if r is not NotImplemented:
            return r
    d, idx = _dim_index("index_fill_", input, dim, index)
    if isinstance(value, Tensor):
        if value._array.ndim:
            raise RuntimeError(f"index_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                               f"{value._array.ndim} dimension(s).")
        if isinstance(idx, Tensor):
            return IndexFillTensor.apply(input, d, idx, value, check="index_fill_")
        raw = _idx_array(index).reshape(-1)
        neg = raw.__class__ is not _meta.MetaArray and (raw < 0).any()      # (a meta index: no values)
        return IndexFillTensor.apply(input, d, idx, value, raw if neg else None)
    fill = _dtype.fill_scalar(value, input.dtype)
    if isinstance(idx, Tensor):     # (compile's capture: the number as a NumPy scalar, a constant of the program)
        return IndexFill.apply(input, d, idx, np.asarray(fill)[()], check="index_fill_")
    return IndexFill.apply(input, d, idx, fill)


def _put_key(op, input, indices):
    if not isinstance(indices, (tuple, list)):
        raise TypeError(f"{op}(): argument 'indices' must be tuple of Tensors")
    tensors, d = {}, 0
    for i, k in enumerate(indices):
        if k is None:
            d += 1
            continue
        if not isinstance(k, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument {1 if op.endswith('_') else 0}, but got "
                            f"{type(k).__name__}")
        a = _index_array(k)
        if a.ndim == 0:
            a = a.reshape(1)
        tensors[d] = a
        d += a.ndim if a.dtype == np.bool_ else 1
    if d > input._array.ndim:
        raise IndexError(f"too many indices for tensor of dimension {input._array.ndim} (got {d})")
    if not tensors:
        raise RuntimeError(f"{op}(): expected at least one index tensor")
    return _np_key(input._array.shape, tensors)


def index_put(input, indices, values, accumulate=False):
    """``input`` with ``input[indices]`` replaced by (or, with ``accumulate``, increased by) ``values``.

    >>> tapegrad.zeros(3).index_put((tapegrad.tensor([0, 0]),), tapegrad.tensor(1.), accumulate=True)
    tensor([2., 0., 0.])
    """
    if _active[0]:       # (vmap with a batched tuple(indices: once per sample)
        r = vmap_per_sample(index_put, (input, indices, values, accumulate), None, tuple(indices))
        if r is not NotImplemented:
            return r
    if values.dtype is not input.dtype:
        raise RuntimeError(f"Index put requires the source and destination dtypes match, got "
                           f"{input.dtype._legacy} for the destination and {values.dtype._legacy} for the source.")
    key = _put_key("index_put", input, indices)
    v = _index_put_values(input, values, key)
    if _active[0] and capturing():       # (compile's capture: the index tensors are the op's, see IndexPutArgs)
        spec, tensors, d = [], [], 0
        for k in indices:
            if k is None:
                d += 1
                continue
            spec.append((d, "t", len(tensors)))
            tensors.append(k)
            d += k._array.ndim if k._array.dtype in (np.bool_, np.uint8) else 1
        return IndexPutArgs.apply(input, v, tuple(spec), bool(accumulate), values._array.shape, *tensors)
    return IndexPut.apply(input, v, key, bool(accumulate))


def index_put_(input, indices, values, accumulate=False):
    """In-place ``index_put``."""
    return apply_inplace(input, index_put, indices, values, accumulate)


# ============================================================================================================
# take / put / take_along_dim
# ============================================================================================================
def _flat_index(op, index, n):
    """take's and put's index, checked (under compile's capture, the tensor itself: ``Take`` checks its bounds)."""
    a = _idx_array(index)
    if a.dtype != np.int64:
        raise RuntimeError(f"{op}(): Expected a long tensor for index, but got "
                           f"{_dtype.from_numpy_dtype(a.dtype)._legacy}")
    _flat_bounds(a, n)
    return index if _active[0] and isinstance(index, Tensor) and capturing() else a


def _flat_bounds(a, n):
    if a.size and a.__class__ is not _meta.MetaArray:      # (a meta index: no values to check, as torch's kernel)
        lo, hi = int(a.min()), int(a.max())
        if hi >= n or lo < -n:
            raise IndexError(f"out of range: tried to access index {hi if hi >= n else lo} on a tensor of {n} "
                             "elements.")


class Take(Primitive):
    """``x.flatten()[index]`` (in index's shape)."""

    jvp = staticmethod(linear_jvp)   # linear: the op itself applied to the tangents

    @staticmethod
    def forward(ctx, x, index, check=False):
        if check:                  # (given the index tensor: its bounds, on each replay's values)
            _flat_bounds(index, x.size)
        ctx.shape, ctx.index = x.shape, index
        return x.reshape(-1)[index]

    @staticmethod
    def backward(ctx, grad):
        return Put.apply(_zeros(ctx.shape, grad._array.dtype), ctx.index, grad, True), None


class Put(Primitive):
    """``x`` with ``x.flatten()[index] = source`` (or ``+=`` with accumulate)."""

    jvp = staticmethod(linear_jvp)   # linear: the op itself applied to the tangents

    @staticmethod
    def forward(ctx, x, index, source, accumulate, check=False):
        if check:                  # (given the index tensor: its bounds, on each replay's values)
            _flat_bounds(index, x.size)
        ctx.index, ctx.accumulate, ctx.src_shape = index, accumulate, source.shape
        out = x.copy()
        flat = out.reshape(-1)
        if accumulate:
            np.add.at(flat, index.reshape(-1), source.reshape(-1))
        else:
            flat[index.reshape(-1)] = source.reshape(-1)
        return flat.reshape(x.shape)

    @staticmethod
    def backward(ctx, grad):
        need = ctx.needs_input_grad
        gx = gs = None
        if need[0]:
            gx = grad if ctx.accumulate else Put.apply(grad, ctx.index, _zeros(ctx.src_shape, grad._array.dtype),
                                                       False)
        if need[2]:
            gs = Take.apply(grad, ctx.index).reshape(ctx.src_shape)
        return gx, None, gs, None


def take(input, index):
    """The elements of the flattened ``input`` at ``index`` (result has index's shape).

    >>> tapegrad.tensor([[1, 2], [3, 4]]).take(tapegrad.tensor([0, 3]))
    tensor([1, 4])
    """
    if _active[0]:       # (vmap with a batched index: once per sample)
        r = vmap_per_sample(take, (input, index), None, (index,))
        if r is not NotImplemented:
            return r
    idx = _flat_index("take", index, input._array.size)
    return Take.apply(input, idx, check=True) if isinstance(idx, Tensor) else Take.apply(input, idx)


def put(input, index, source, accumulate=False):
    """``input`` with the flattened positions ``index`` set to (or increased by) ``source``.

    >>> tapegrad.zeros(2, 2).put(tapegrad.tensor([3]), tapegrad.tensor([9.]))
    tensor([[0., 0.],
            [0., 9.]])
    """
    if _active[0]:       # (vmap with a batched index: once per sample)
        r = vmap_per_sample(put, (input, index, source, accumulate), None, (index,))
        if r is not NotImplemented:
            return r
    if source.dtype is not input.dtype:
        raise RuntimeError(f"put_(): self and source expected to have the same dtype, but got self.dtype = "
                           f"{input.dtype._legacy} and source.dtype = {source.dtype._legacy}")
    idx = _flat_index("put_", index, input._array.size)
    n = (idx._array if isinstance(idx, Tensor) else idx).size
    if n != source._array.size:
        raise IndexError(f"put_(): Expected source and index to have the same number of elements, but got "
                           f"source.numel() = {source._array.size}, index.numel() = {n}")
    if isinstance(idx, Tensor):
        return Put.apply(input, idx, source, bool(accumulate), check=True)
    return Put.apply(input, idx, source, bool(accumulate))


@writes_out
def take_along_dim(input, indices, dim=None, *, out=None):
    """Values of ``input`` at ``indices`` along ``dim`` (broadcasting the other dims); flattened when dim is None.

    >>> tapegrad.tensor([[10, 30, 20]]).take_along_dim(tapegrad.tensor([[1, 2, 0]]), 1)
    tensor([[30, 20, 10]])
    """
    if _active[0]:       # (vmap with a batched indices: once per sample)
        r = vmap_per_sample(take_along_dim, (input, indices, dim), {"out": out}, (indices,))
        if r is not NotImplemented:
            return r
    if dim is None:                 # the flattened input: gather's rules (int32 too, no negative index)
        return gather(input.reshape(-1), 0, indices.reshape(-1) if isinstance(indices, Tensor) else
                      Tensor._make(np.asarray(indices).reshape(-1)))
    idx = _idx_array(indices)
    n = input._array.ndim
    if idx.ndim != n:
        raise RuntimeError(f"tapegrad.take_along_dim(): input and indices should have the same number of dimensions, "
                           f"but got {n} dimensions for input, and {idx.ndim} dimensions for indices")
    if idx.dtype != np.int64:
        raise RuntimeError(f"tapegrad.take_along_dim(): dtype of indices should be Long but got "
                           f"{_dtype.from_numpy_dtype(idx.dtype)._legacy}")
    d = normalize_dim(dim, n)
    xs, js = list(input._array.shape), list(idx.shape)
    xs_d, js_d = list(xs), list(js)
    xs_d[d] = js[d]
    ishape = broadcast_or_error(tuple(xs_d), tuple(js))
    js_d[d] = xs[d]
    xshape = broadcast_or_error(tuple(js_d), tuple(xs))
    if _active[0] and isinstance(indices, Tensor) and capturing():   # (compile's capture: the wrap as an op)
        return gather(input.expand(xshape), d, (indices % xs[d] if xs[d] else indices).expand(ishape))
    if xs[d]:
        idx = idx % xs[d]          # torch wraps every index into range along dim (-1 is the last, 3 of 3 is 0)
    return gather(input.expand(xshape), d, Tensor._make(np.broadcast_to(idx, ishape)))


bind(index_select=index_select, gather=gather, scatter=scatter, scatter_add=scatter_add,
     scatter_reduce=scatter_reduce, index_add=index_add, index_copy=index_copy, index_fill=index_fill,
     index_put=index_put, take=take, take_along_dim=take_along_dim, put=put,
     scatter_=_inplace(scatter), scatter_add_=_inplace(scatter_add), scatter_reduce_=_inplace(scatter_reduce),
     index_add_=_inplace(index_add), index_copy_=_inplace(index_copy), index_fill_=_inplace(index_fill),
     index_put_=index_put_, put_=_inplace(put))
