# ruff: noqa: A001, A002 - torch's names (sorted) and argument name (input)
"""Indexing: ``x[key]``, ``x[key] = value`` and the index ops (gather, scatter, index_*, masked_*, sort, topk, ...).

``x[key]`` follows torch's decomposition exactly: ints, slices, ``None`` and ``...`` become a chain of view ops
(``SelectBackward0``, ``SliceBackward0``, ``UnsqueezeBackward0``, ``AliasBackward0``), applied left to right; the
tensor indices left over (int arrays, bool masks) are then applied at once (``IndexBackward0``), with NumPy's
advanced-indexing rules on the sliced tensor (which are torch's). ``x[key] = v`` slices the same way, then
copies into the view (the base gets a ``CopySlices`` node) or runs ``index_put_``.

Every backward is written with the ops of this module, so that double backward works: gather's backward is a
scatter_add, whose backward is a gather, and so on.
"""

from __future__ import annotations

import warnings

import numpy as np

from .. import _dtype
from ..autograd.grad_mode import _state
from ._util import (Primitive, Tensor, apply_inplace, bind, broadcast_or_error, check_view_inplace, kernel, mark_view,
                    normalize_dim, shape_str)

__all__ = [
    "index_select", "gather", "scatter", "scatter_add", "scatter_reduce", "index_add", "index_copy", "index_fill",
    "index_put", "index_put_", "masked_fill", "masked_scatter", "masked_select", "take", "take_along_dim",
    "nonzero", "argwhere", "sort", "argsort", "topk", "kthvalue", "msort", "unique", "unique_consecutive",
    "searchsorted", "bucketize", "tril_indices", "triu_indices", "put",
]

_INT_INDEX = (np.int64, np.int32, np.int16, np.int8, np.uint8)


def _arr(x):
    return x._array if isinstance(x, Tensor) else x


def _no_grad(fn, *args, **kwargs):
    prev = _state.enabled
    _state.enabled = False
    try:
        return fn(*args, **kwargs)
    finally:
        _state.enabled = prev


# ============================================================================================================
# x[key]: parsing
# ============================================================================================================
_SEQ_WARNING = ("Using a non-tuple sequence for multidimensional indexing is deprecated and will be changed in "
                "pytorch 2.9; use x[tuple(seq)] instead of x[seq]. In pytorch 2.9 this will be interpreted as tensor "
                "index, x[tapegrad.tensor(seq)], which will result either in an error or a different result")


def _as_tuple(key):
    """torch's ``treatSequenceAsTuple``: a short list holding a slice, None, ... or a sequence is a tuple."""
    if isinstance(key, tuple):
        return key, True
    if isinstance(key, list) and len(key) < 32:
        for k in key:
            if k is None or k is Ellipsis or isinstance(k, (slice, list, tuple, Tensor, np.ndarray)):
                warnings.warn(_SEQ_WARNING, UserWarning, stacklevel=3)
                return tuple(key), True
    return (key,), False


def _index_array(k):
    """A list/ndarray/Tensor index as an ndarray (int64 or bool), with torch's error for other dtypes."""
    if isinstance(k, Tensor):
        a = k._array
    elif isinstance(k, np.ndarray):
        a = k
    else:
        a = np.asarray([_arr(e) for e in k] if isinstance(k, (list, tuple)) else k)
        if a.dtype.kind == "f":   # torch makes a long tensor of a Python list (x[[1.7]] is x[[1]])
            a = a.astype(np.int64)
    if a.dtype == np.bool_:
        return a
    if a.dtype == np.uint8:
        warnings.warn("indexing with dtype tapegrad.uint8 is now deprecated, please use a dtype tapegrad.bool instead.",
                      UserWarning, stacklevel=4)
        return a.astype(np.bool_)
    if a.dtype not in (np.int64, np.int32):
        raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
    return a


def _parse(key):
    """Normalise a key into a list of items: ("int", i), ("slice", s), ("none",), ("ellipsis",),
    ("bool", b) (a Python/0-d bool: unsqueeze + index) and ("tensor", array)."""
    items, _ = _as_tuple(key)
    out = []
    for k in items:
        if k is None:
            out.append(("none",))
        elif k is Ellipsis:
            out.append(("ellipsis",))
        elif isinstance(k, slice):
            out.append(("slice", k))
        elif isinstance(k, (bool, np.bool_)):
            out.append(("bool", bool(k)))
        elif isinstance(k, (int, np.integer)):
            out.append(("int", int(k)))
        elif isinstance(k, (Tensor, np.ndarray, list, tuple)):
            a = _index_array(k)
            if a.ndim == 0:
                out.append(("bool", bool(a)) if a.dtype == np.bool_ else ("int", int(a)))
            else:
                out.append(("tensor", a))
        elif isinstance(k, float):
            raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are "
                             "valid indices (got float)")
        else:
            raise IndexError(f"only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are "
                             f"valid indices (got {type(k).__name__})")
    return out


def _specified_dims(items):
    n = 0
    for it in items:
        if it[0] in ("int", "slice"):
            n += 1
        elif it[0] == "tensor":
            n += it[1].ndim if it[1].dtype == np.bool_ else 1
    return n


# ============================================================================================================
# the view steps
# ============================================================================================================
class Select(Primitive):
    """``x.select(dim, index)``: a view without dimension ``dim``."""

    array_backward = True

    @staticmethod
    def forward(ctx, x, dim, index):
        ctx.shape, ctx.dim, ctx.index = x.shape, dim, index
        return x[(slice(None),) * dim + (index, Ellipsis)]

    @staticmethod
    def backward(ctx, grad):
        return kernel(SelectBackwardOp, grad, ctx.shape, ctx.dim, ctx.index), None, None


class SelectBackwardOp(Primitive):
    """The gradient of select: ``grad`` placed in a zero tensor of the input's shape."""

    node_name = "SelectBackwardBackward0"

    @staticmethod
    def forward(ctx, grad, shape, dim, index):
        ctx.dim, ctx.index = dim, index
        out = np.zeros(shape, grad.dtype)
        out[(slice(None),) * dim + (index,)] = grad
        return out

    @staticmethod
    def backward(ctx, gg):
        return _select(gg, ctx.dim, ctx.index), None, None, None


class Slice(Primitive):
    """``x[..., start:stop:step]`` along ``dim`` (a view)."""

    array_backward = True

    @staticmethod
    def forward(ctx, x, dim, start, stop, step):
        ctx.shape, ctx.key = x.shape, (slice(None),) * dim + (slice(start, stop, step),)
        ctx.args = (dim, start, stop, step)
        return x[ctx.key]

    @staticmethod
    def backward(ctx, grad):
        return kernel(SliceBackwardOp, grad, ctx.shape, ctx.args), None, None, None, None


class SliceBackwardOp(Primitive):
    """The gradient of a slice: ``grad`` placed in a zero tensor of the input's shape."""

    node_name = "SliceBackwardBackward0"

    @staticmethod
    def forward(ctx, grad, shape, args):
        ctx.args = args
        dim, start, stop, step = args
        out = np.zeros(shape, grad.dtype)
        out[(slice(None),) * dim + (slice(start, stop, step),)] = grad
        return out

    @staticmethod
    def backward(ctx, gg):
        return _slice(gg, *ctx.args), None, None


class Alias(Primitive):
    """``x[...]``: a new tensor over the same data."""

    @staticmethod
    def forward(ctx, x):
        return x.view()

    @staticmethod
    def backward(ctx, grad):
        return grad


def _select(x, dim, index):
    """``x.select(dim, index)`` as indexing records it (dim and index already checked and non-negative)."""
    return mark_view(Select.apply(x, dim, index), x, lambda t, d=dim, i=index: _select(t, d, i))


def _slice(x, dim, start, stop, step):
    return mark_view(Slice.apply(x, dim, start, stop, step), x,
                     lambda t, a=(dim, start, stop, step): _slice(t, *a))


def _alias(x):
    return mark_view(Alias.apply(x), x, _alias)


def _unsqueeze(x, dim):
    from .shape import unsqueeze
    return unsqueeze(x, dim)


def _apply_slicing(self, items, single):
    """Apply the basic items of a parsed key (torch's ``applySlicing``); return the view and the tensor indices
    as ``{dim: array}`` on that view."""
    ndim = self._array.ndim
    spec = _specified_dims(items)
    if spec > ndim:
        raise IndexError(f"too many indices for tensor of dimension {ndim}")
    result, dim, tensors = self, 0, {}
    for pos, it in enumerate(items):
        kind = it[0]
        if kind == "int":
            rs = result._array.shape
            size = rs[dim] if dim < len(rs) else 0   # (only reachable with two ellipses, as in torch)
            i = it[1]
            if not -size <= i < size:   # torch names the position in the key as the dimension
                raise IndexError(f"index {i} is out of bounds for dimension {pos} with size {size}")
            result = _select(result, dim, i % size)
        elif kind == "slice":
            s = it[1]
            if s.step is not None and int(s.step) <= 0:
                if int(s.step) == 0:
                    raise ValueError("slice step cannot be zero")
                raise ValueError("step must be greater than zero")
            rs = result._array.shape
            if dim >= len(rs):   # (only reachable with two ellipses, as in torch)
                raise IndexError(f"Dimension out of range (expected to be in range of [{-len(rs)}, {len(rs) - 1}], "
                                 f"but got {dim})")
            size = rs[dim]
            start, stop, step = s.indices(size)
            stop = max(stop, start)
            # torch skips a slice whose raw start is 0 and raw stop reaches the end (x[:, :4] on size 4, not
            # x[:, -4:]), except for a lone slice (x[:] records SliceBackward0)
            full = (s.start is None or int(s.start) == 0) and (s.stop is None or int(s.stop) >= size) and step == 1
            if single or not full:
                result = _slice(result, dim, start, stop, step)
            dim += 1
        elif kind == "none":
            result = _unsqueeze(result, dim)
            dim += 1
        elif kind == "ellipsis":
            dim += ndim - spec
        elif kind == "bool":
            result = _unsqueeze(result, dim)
            tensors[dim] = np.zeros(1 if it[1] else 0, np.int64)
            dim += 1
        else:
            a = it[1]
            tensors[dim] = a
            dim += a.ndim if a.dtype == np.bool_ else 1
    return result, tensors


def _np_key(shape, tensors):
    """The NumPy key of the advanced part: full slices and int arrays (bool masks become their nonzero()),
    with torch's bounds, mask-shape and broadcast checks."""
    key, d, last, checks = [], 0, max(tensors), []
    while d <= last:
        a = tensors.get(d)
        if a is None:
            key.append(slice(None))
            d += 1
        elif a.dtype == np.bool_:
            for j in range(a.ndim):
                if d + j >= len(shape) or a.shape[j] != shape[d + j]:
                    raise IndexError(f"The shape of the mask {shape_str(a.shape)} at index {j} does not match the "
                                     f"shape of the indexed tensor {shape_str(shape)} at index {d + j}")
            key.extend(np.nonzero(a))
            d += a.ndim
        else:
            checks.append((a, shape[d], sum(1 for e in key if isinstance(e, np.ndarray))))
            key.append(a.astype(np.int64, copy=False))
            d += 1
    arrays = [k for k in key if isinstance(k, np.ndarray)]
    try:
        np.broadcast_shapes(*[k.shape for k in arrays])
    except ValueError:
        shapes = ", ".join(shape_str(k.shape) for k in arrays)
        raise IndexError(f"shape mismatch: indexing tensors could not be broadcast together with shapes "
                         f"{shapes}") from None
    if 0 in shape:   # nothing is read: torch checks no bounds (the values are irrelevant, keep NumPy happy)
        return tuple(np.clip(k, 0, max(shape[i] - 1, 0)) if isinstance(k, np.ndarray) and i < len(shape) else k
                     for i, k in enumerate(key))
    if checks:
        # torch reports the first element (in broadcast order) that reads out of bounds, and for it the first
        # index tensor at fault; the dimension it names is that tensor's rank among the index tensors
        bshape = np.broadcast_shapes(*[k.shape for k in arrays])
        oob = [np.broadcast_to((a >= size) | (a < -size), bshape) for a, size, _ in checks]
        anywhere = np.logical_or.reduce(oob) if len(oob) > 1 else oob[0]
        if anywhere.any():
            pos = int(np.argmax(anywhere.reshape(-1)))
            for (a, size, k), o in zip(checks, oob):
                if o.reshape(-1)[pos]:
                    bad = int(np.broadcast_to(a, bshape).reshape(-1)[pos])
                    raise IndexError(f"index {bad} is out of bounds for dimension {k} with size {size}")
    return tuple(key)


class Index(Primitive):
    """``x[key]`` with int arrays in the key (advanced indexing): a copy."""

    @staticmethod
    def forward(ctx, x, key):
        ctx.shape, ctx.key = x.shape, key
        return x[key]

    @staticmethod
    def backward(ctx, grad):
        return IndexPutAccumulate.apply(grad, ctx.key, ctx.shape), None


class IndexPutAccumulate(Primitive):
    """The gradient of advanced indexing: ``grad`` summed into zeros at ``key`` (repeated indices add up)."""

    node_name = "IndexPutBackward0"

    @staticmethod
    def forward(ctx, grad, key, shape):
        ctx.key = key
        out = np.zeros(shape, grad.dtype)
        np.add.at(out, key, grad)
        return out

    @staticmethod
    def backward(ctx, gg):
        return Index.apply(gg, ctx.key), None, None


_BASIC = (int, slice, type(None), type(Ellipsis))


def _basic_key(shape, key):
    """The NumPy key of a key made only of ints, slices, None and one ``...`` (None for anything else), with
    torch's checks; NumPy's basic indexing then agrees with torch's chain of views."""
    items = key if key.__class__ is tuple else (key,)
    spec, n_ell = 0, 0
    for k in items:
        if k.__class__ not in _BASIC:
            return None
        if k.__class__ is int or k.__class__ is slice:
            spec += 1
        elif k is Ellipsis:
            n_ell += 1
    if n_ell > 1:
        return None
    ndim = len(shape)
    if spec > ndim:
        raise IndexError(f"too many indices for tensor of dimension {ndim}")
    dim = 0
    for pos, k in enumerate(items):
        if k.__class__ is int:
            size = shape[dim]
            if not -size <= k < size:
                raise IndexError(f"index {k} is out of bounds for dimension {pos} with size {size}")
            dim += 1
        elif k.__class__ is slice:
            if k.step is not None and k.step <= 0:
                raise ValueError("step must be greater than zero" if k.step else "slice step cannot be zero")
            dim += 1
        elif k is Ellipsis:
            dim += ndim - spec
    return items if n_ell else items + (Ellipsis,)


def getitem(self, key):
    """``x[key]`` with torch's semantics (ints, slices with positive steps, None, ..., bool masks, int tensors)."""
    if not (self._rg and _state.enabled):    # no graph to record: one NumPy view, one mark_view
        k = _basic_key(self._array.shape, key)
        if k is not None:
            return mark_view(Tensor._make(self._array[k]), self, lambda t, key=key: getitem(t, key))
    items = _parse(key)
    single = len(items) == 1 and not isinstance(key, tuple)
    if single and items[0][0] == "ellipsis":
        return _alias(self)
    single = single and items[0][0] == "slice"    # a lone slice always makes a SliceBackward0 node
    result, tensors = _apply_slicing(self, items, single)
    if not tensors:
        return _alias(result) if result is self else result
    return Index.apply(result, _np_key(result._array.shape, tensors))


# ============================================================================================================
# x[key] = value
# ============================================================================================================
def _check_value(value, dtype):
    """torch assigns only tensors and numbers: anything else is its TypeError."""
    if not isinstance(value, (Tensor, int, float, complex, np.number, np.bool_)):
        t = type(value)
        name = t.__name__ if t.__module__ == "builtins" else f"{t.__module__.split('.')[0]}.{t.__name__}"
        raise TypeError(f"can't assign a {name} to a tapegrad.{dtype._legacy}Tensor")


def _value_tensor(value, dtype):
    if isinstance(value, Tensor):
        return value
    _check_value(value, dtype)
    return Tensor._make(np.asarray(value, dtype.np))


def _strip_leading_ones(v):
    shp = v._array.shape
    k = 0
    while k < len(shp) and shp[k] == 1:
        k += 1
    return v.reshape(shp[k:]) if k else v


class Copy(Primitive):
    """``dst.copy_(src)`` as setitem records it: the result is ``src`` (broadcast, cast); dst gets a zero gradient."""

    node_name = "CopyBackwards"

    @staticmethod
    def forward(ctx, dst, src):
        return np.array(np.broadcast_to(src, dst.shape), dtype=dst.dtype)

    @staticmethod
    def backward(ctx, grad):
        need = ctx.needs_input_grad
        return (_zeros(grad._array.shape, grad._array.dtype) if need[0] else None), (grad if need[1] else None)


def _copy_to(dst, value):
    """torch's ``copy_to``: ``dst.copy_(value)`` with value's leading 1s dropped and broadcast to dst."""
    v = value
    if v._array.shape != dst._array.shape:
        v = _strip_leading_ones(v)
        v = v.expand(dst._array.shape)
    apply_inplace(dst, Copy.apply, v)


class IndexPut(Primitive):
    """``x`` with ``x[key]`` replaced by (or, with ``accumulate``, increased by) ``values``."""

    @staticmethod
    def forward(ctx, x, values, key, accumulate=False):
        ctx.key, ctx.accumulate = key, accumulate
        out = x.copy()
        values = np.asarray(values)
        if values.dtype != out.dtype:
            values = values.astype(out.dtype)
        if accumulate:
            np.add.at(out, key, values)
        else:
            out[key] = values
        return out

    @staticmethod
    def backward(ctx, grad):
        need = ctx.needs_input_grad
        gx = gv = None
        if need[0]:
            gx = grad if ctx.accumulate else IndexPut.apply(grad, 0.0, ctx.key, False)
        if need[1]:
            gv = Index.apply(grad, ctx.key)
        return gx, gv, None, None


def _index_result_shape(shape, key):
    return np.broadcast_to(np.empty((), np.bool_), shape)[key].shape


def _index_put_values(x, values, key):
    """Check that values broadcast to ``x[key]`` (torch's message); drop their leading 1s."""
    res = _index_result_shape(x._array.shape, key)
    v = _strip_leading_ones(values) if values._array.ndim > len(res) else values
    try:
        if np.broadcast_shapes(v._array.shape, res) != res:
            raise ValueError
    except ValueError:
        raise RuntimeError(f"shape mismatch: value tensor of shape {shape_str(values._array.shape)} cannot be "
                           f"broadcast to indexing result of shape {shape_str(res)}") from None
    return v


def _put_fn(x, values, key, accumulate):
    if values.dtype is not x.dtype:
        values = values.to(x.dtype)
    return IndexPut.apply(x, values, key, accumulate)


def setitem(self, key, value):
    """``x[key] = value`` (in place: bumps the version, differentiable with respect to x and value)."""
    if not (_state.enabled and (self._rg or (value.__class__ is Tensor and value._rg))):
        if self._base is not None and _state.enabled:
            check_view_inplace(self, False)     # (a view made under no_grad whose base requires grad)
        _check_value(value, self.dtype)
        k = _basic_key(self._array.shape, key)
        if k is not None:
            dst = self._array[k]
            v = np.asarray(value._array if value.__class__ is Tensor else value)
            while v.ndim > dst.ndim and v.shape[0] == 1:
                v = v[0]
            try:
                np.copyto(dst, np.broadcast_to(v, dst.shape), casting="unsafe")
            except ValueError:
                pass    # the general path below raises torch's error
            else:
                self._vc[0] += 1
                return
    items = _parse(key)
    value = _value_tensor(value, self.dtype)
    if value._array.dtype != self._array.dtype:
        value = value.to(self.dtype) if value._rg else Tensor._make(value._array.astype(self._array.dtype))
    if len(items) == 1 and not isinstance(key, tuple):
        kind = items[0][0]
        if kind == "bool" and not items[0][1]:
            return
        if kind == "ellipsis":
            return _copy_to(self, value)
    sliced, tensors = _apply_slicing(self, items, False)
    if not tensors:
        return _copy_to(sliced, value)
    k = _np_key(sliced._array.shape, tensors)
    v = _index_put_values(sliced, value, k)
    apply_inplace(sliced, _put_fn, v, k, False)



# ============================================================================================================
# shared helpers of the index ops
# ============================================================================================================
def _tensor(a, dtype=None):
    """A constant tensor (no history) over an array or number."""
    a = np.asarray(a) if dtype is None else np.asarray(a, dtype)
    return Tensor._make(a)


def _zeros(shape, dtype):
    return Tensor._make(np.zeros(shape, dtype))


def _where(cond, a, b):
    """``cond ? a : b`` for a constant bool array ``cond`` (differentiable in a and b)."""
    c = _tensor(cond)
    return masked_fill(a, ~c, 0) + masked_fill(b, c, 0)


def _int_index(op, index, msg=None):
    a = index._array if isinstance(index, Tensor) else np.asarray(index)
    if a.dtype.kind not in "iu" or a.dtype == np.uint8:
        raise RuntimeError(msg or f"{op}(): Expected dtype int64 for index")
    return a.astype(np.int64, copy=False)


def _dim_key(dim, idx):
    return (slice(None),) * dim + (idx,)


def _grid(index, dim):
    """The NumPy key that reads ``x[i][index[i][j][k]][k]``-style positions (gather/scatter along ``dim``)."""
    n = index.ndim
    return tuple(index if j == dim else np.arange(s).reshape([s if k == j else 1 for k in range(n)])
                 for j, s in enumerate(index.shape))


def _check_gather(op, shape, dim, index, src_shape=None):
    n = max(len(shape), 1)
    if max(index.ndim, 1) != n:
        what = "input" if op == "gather" else "self"
        raise RuntimeError(f"Index tensor must have the same number of dimensions as {what} tensor")
    ishape = index.shape if index.ndim else (1,)
    xshape = shape if shape else (1,)
    sshape = None if src_shape is None else (src_shape if src_shape else (1,))
    for d in range(n):
        self_bad = d != dim and ishape[d] > xshape[d]
        if op == "gather" and self_bad:
            raise RuntimeError(f"Size does not match at dimension {d} expected index {shape_str(ishape)} to be no "
                               f"larger than self {shape_str(xshape)} apart from dimension {dim}")
        if self_bad or (sshape is not None and ishape[d] > sshape[d]):
            src = "" if sshape is None else f" and to be no larger size than src {shape_str(sshape)}"
            raise RuntimeError(f"Expected index {shape_str(ishape)} to be no larger than self {shape_str(xshape)} "
                               f"apart from dimension {dim}{src}")
    if index.size:
        lo, hi = int(index.min()), int(index.max())
        if lo < 0 or hi >= xshape[dim]:
            raise RuntimeError(f"index {lo if lo < 0 else hi} is out of bounds for dimension {dim} with size "
                               f"{xshape[dim]}")


def _gather_np(x, dim, index):
    x1 = x.reshape(1) if x.ndim == 0 else x
    i1 = index.reshape(1) if index.ndim == 0 else index
    return x1[_grid(i1, dim)].reshape(index.shape)


_IDENTITY = {"sum": 0, "mean": 0, "prod": 1}


def _scatter_np(x, dim, index, src, mode="set", include_self=True):
    """``x`` (copied) with ``src`` (array or number) scattered at ``index`` along ``dim``."""
    out = np.array(x, copy=True).reshape(x.shape if x.ndim else (1,))
    i1 = index.reshape(1) if index.ndim == 0 else index
    key = _grid(i1, dim)
    if isinstance(src, np.ndarray) and src.ndim:
        s = src[tuple(slice(0, k) for k in i1.shape)]
    else:
        s = np.asarray(src).reshape(()) if isinstance(src, np.ndarray) else src
    if isinstance(s, np.ndarray) and s.dtype != out.dtype:
        s = s.astype(out.dtype)
    if mode == "set":
        out[key] = s
    else:
        if not include_self and index.size:
            kind, amax = out.dtype.kind, mode == "amax"
            if mode in _IDENTITY:
                ident = _IDENTITY[mode]
            elif kind == "f":
                ident = -np.inf if amax else np.inf
            elif kind in "iu":
                ident = np.iinfo(out.dtype).min if amax else np.iinfo(out.dtype).max
            else:
                ident = not amax
            out[key] = ident
        ufunc = {"sum": np.add, "add": np.add, "mean": np.add, "prod": np.multiply, "multiply": np.multiply,
                 "amax": np.maximum, "amin": np.minimum}[mode]
        ufunc.at(out, key, np.broadcast_to(s, i1.shape))
        if mode == "mean":
            count = np.ones(out.shape, np.int64) if include_self else np.zeros(out.shape, np.int64)
            np.add.at(count, key, 1)
            count[count == 0] = 1
            out = out // count.astype(out.dtype) if out.dtype.kind in "iu" else (out / count).astype(out.dtype)
    return out.reshape(x.shape)


def _scatter_counts(shape, dim, index, include_self):
    """How many values land at each position (the self value counting as one with include_self)."""
    count = np.ones(shape, np.float64) if include_self else np.zeros(shape, np.float64)
    i1 = index.reshape(1) if index.ndim == 0 else index
    c1 = count.reshape(shape if shape else (1,))
    np.add.at(c1, _grid(i1, dim), 1)
    return c1.reshape(shape)


def _dim_and_index(op, input, dim, index, msg=None):
    n = input._array.ndim
    d = normalize_dim(dim, n)
    return d, _int_index(op, index, msg)


# ============================================================================================================
# gather / scatter
# ============================================================================================================
class Gather(Primitive):
    """``out[i][j] = x[i][index[i][j]]`` (dim=1), positions read along ``dim``."""

    @staticmethod
    def forward(ctx, x, dim, index):
        ctx.shape, ctx.dim, ctx.index = x.shape, dim, index
        return _gather_np(x, dim, index)

    @staticmethod
    def backward(ctx, grad):
        return ScatterAdd.apply(_zeros(ctx.shape, grad._array.dtype), ctx.dim, ctx.index, grad), None, None


class ScatterAdd(Primitive):
    """``x`` with ``src`` added at ``index`` along ``dim`` (repeated positions add up)."""

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


def gather(input, dim, index, *, sparse_grad=False, out=None):
    """Values of ``input`` read along ``dim`` at ``index`` (same number of dims as input).

    >>> tapegrad.tensor([[1, 2], [3, 4]]).gather(1, tapegrad.tensor([[0, 0], [1, 0]]))
    tensor([[1, 1],
            [4, 3]])
    """
    d, idx = _dim_and_index("gather", input, dim, index, "gather(): Expected dtype int32/int64 for index")
    _check_gather("gather", input._array.shape, d, idx)
    return Gather.apply(input, d, idx)


def _scatter_args(op, input, dim, index, src):
    d, idx = _dim_and_index(op, input, dim, index, "scatter(): Expected dtype int32/int64 for index")
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
    if src is None:
        src = value
    if src is None:
        raise TypeError("scatter() missing 1 required positional argument: 'src' (or 'value')")
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
    d, idx = _scatter_args("scatter_add", input, dim, index, src)
    return ScatterAdd.apply(input, d, idx, src)


def scatter_reduce(input, dim, index, src, reduce, *, include_self=True):
    """Reduce ``src`` into ``input`` at ``index`` along ``dim`` with "sum", "prod", "mean", "amax" or "amin".

    >>> tapegrad.tensor([1., 2.]).scatter_reduce(0, tapegrad.tensor([0, 0, 1]), tapegrad.tensor([5., 3., 1.]), "amax")
    tensor([5., 2.])
    """
    reduce = {"max": "amax", "min": "amin"}.get(reduce, reduce)   # torch accepts both spellings
    if reduce not in ("sum", "prod", "mean", "amax", "amin"):
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    d, idx = _scatter_args("scatter_reduce", input, dim, index, src)
    return ScatterReduce.apply(input, d, idx, src, reduce, bool(include_self))


# ============================================================================================================
# index_select / index_add / index_copy / index_fill / index_put
# ============================================================================================================
_INDEX_DTYPE_MSG = {"index_select": "index_select(): Expected dtype int32 or int64 for index",
                    "index_add_": "index_add_(): Expected dtype int32/int64 for index but got: {}",
                    "index_copy_": "index_copy_(): Expected a long tensor for index, but got {}",
                    "index_fill_": "index_fill_(): Expected dtype int64 for index."}


def _vector_index(op, index, size, dim, select_msg=False):
    got = getattr(index, "dtype", None)
    a = _int_index(op, index, _INDEX_DTYPE_MSG[op].format(got._legacy if got is not None else got))
    if a.ndim > 1:
        if op == "index_fill_":
            raise RuntimeError("Index has to be a vector/scalar")
        raise IndexError(f"{op}(): Index is supposed to be a vector")
    return a.reshape(-1)


def _check_bounds(op, a, size, dim):
    """Each op's own bounds rule and wording (only index_fill accepts negative indices)."""
    if not a.size:
        return a
    lo, hi = int(a.min()), int(a.max())
    neg_ok = op == "index_fill_"
    if hi >= size or lo < (-size if neg_ok else 0):
        if op == "index_select":
            raise IndexError("index out of range in self")
        bad = lo if lo < (-size if neg_ok else 0) else hi
        msg = f"index {bad} is out of bounds for dimension {dim} with size {size}"
        if op == "index_add_":
            raise RuntimeError(msg)
        raise IndexError(f"index_copy_(): {msg}" if op == "index_copy_" else msg)
    return a % size if neg_ok and size else a


def _dim_index(op, input, dim, index, select_msg=False, source=None):
    n = input._array.ndim
    d = normalize_dim(dim, n)
    size = input._array.shape[d] if n else 1
    a = _vector_index(op, index, size, d, select_msg)
    if source is not None:
        _check_source(op, input, d, a, source)
    return d, _check_bounds(op, a, size, d)


def _as1d(a):
    return a.reshape(1) if a.ndim == 0 else a


class IndexSelect(Primitive):
    """The slices of ``x`` at ``index`` along ``dim``."""

    @staticmethod
    def forward(ctx, x, dim, index):
        ctx.shape, ctx.dim, ctx.index = x.shape, dim, index
        out = np.take(_as1d(x), index, axis=dim)
        return out.reshape(()) if x.ndim == 0 else out

    @staticmethod
    def backward(ctx, grad):
        return IndexAdd.apply(_zeros(ctx.shape, grad._array.dtype), ctx.dim, ctx.index, grad, 1), None, None


class IndexAdd(Primitive):
    """``x`` with ``alpha * source`` added at ``index`` along ``dim``."""

    @staticmethod
    def forward(ctx, x, dim, index, source, alpha):
        ctx.dim, ctx.index, ctx.alpha = dim, index, alpha
        out = _as1d(x).copy()
        src = _as1d(source)
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

    @staticmethod
    def forward(ctx, x, dim, index, source):
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
    def forward(ctx, x, dim, index, value):
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
    def forward(ctx, x, dim, index, value):
        ctx.dim, ctx.index = dim, index
        out = _as1d(x).copy()
        out[_dim_key(dim, index)] = value
        return out.reshape(x.shape)

    @staticmethod
    def backward(ctx, grad):
        need = ctx.needs_input_grad
        gx = IndexFill.apply(grad, ctx.dim, ctx.index, 0.0) if need[0] else None
        gv = IndexSelect.apply(grad, ctx.dim, ctx.index).sum() if need[3] else None
        return gx, None, None, gv


def index_select(input, dim, index, *, out=None):
    """The slices of ``input`` along ``dim`` at the positions in the 1-d ``index``.

    >>> tapegrad.tensor([[1, 2], [3, 4]]).index_select(0, tapegrad.tensor([1, 1]))
    tensor([[3, 4],
            [3, 4]])
    """
    d, idx = _dim_index("index_select", input, dim, index, select_msg=True)
    if input._array.ndim == 0 and idx.size != 1:
        raise RuntimeError(f"index_select(): Index to scalar can have only 1 value, got {idx.size} value(s)")
    return IndexSelect.apply(input, d, idx)


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
    _check_source_dtype("index_add_", input, source)
    d, idx = _dim_index("index_add_", input, dim, index, source=source)
    return IndexAdd.apply(input, d, idx, source, alpha)


def index_copy(input, dim, index, source):
    """``input`` with the slices at ``index`` along ``dim`` replaced by those of ``source``.

    >>> tapegrad.zeros(3).index_copy(0, tapegrad.tensor([2]), tapegrad.tensor([5.]))
    tensor([0., 0., 5.])
    """
    _check_source_dtype("index_copy_", input, source)
    d, idx = _dim_index("index_copy_", input, dim, index, source=source)
    return IndexCopy.apply(input, d, idx, source)


def index_fill(input, dim, index, value):
    """``input`` with the slices at ``index`` along ``dim`` set to ``value`` (a number or a 0-d tensor).

    >>> tapegrad.zeros(2, 2).index_fill(1, tapegrad.tensor([0]), 7.)
    tensor([[7., 0.],
            [7., 0.]])
    """
    d, idx = _dim_index("index_fill_", input, dim, index)
    if isinstance(value, Tensor):
        if value._array.ndim:
            raise RuntimeError(f"index_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                               f"{value._array.ndim} dimension(s).")
        return IndexFillTensor.apply(input, d, idx, value)
    return IndexFill.apply(input, d, idx, value)


def _put_key(op, input, indices):
    if not isinstance(indices, (tuple, list)):
        raise TypeError(f"{op}(): argument 'indices' must be tuple of Tensors")
    tensors, d = {}, 0
    for k in indices:
        if k is None:
            d += 1
            continue
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
    if values.dtype is not input.dtype:
        raise RuntimeError(f"Index put requires the source and destination dtypes match, got "
                           f"{input.dtype._legacy} for the destination and {values.dtype._legacy} for the source.")
    key = _put_key("index_put", input, indices)
    v = _index_put_values(input, values, key)
    return IndexPut.apply(input, v, key, bool(accumulate))


def index_put_(input, indices, values, accumulate=False):
    """In-place ``index_put``."""
    return apply_inplace(input, index_put, indices, values, accumulate)


# ============================================================================================================
# masked ops
# ============================================================================================================
_CTYPE = {"int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char", "uint8": "unsigned char",
          "float32": "float", "float64": "double", "float16": "c10::Half"}


def _mask(op, mask):
    m = mask._array if isinstance(mask, Tensor) else np.asarray(mask)
    if m.dtype != np.bool_:
        name = _CTYPE.get(m.dtype.name, m.dtype.name) if op == "masked_fill_" else \
            _dtype.from_numpy_dtype(m.dtype)._legacy
        raise RuntimeError(f"{op} only supports boolean masks, but got mask with dtype {name}")
    return m


class MaskedFill(Primitive):
    """``x`` (broadcast with ``mask``) with the masked positions set to the number ``value``."""

    @staticmethod
    def forward(ctx, x, mask, value):
        ctx.mask = mask
        return np.where(mask, np.asarray(value).astype(x.dtype), x)

    @staticmethod
    def backward(ctx, grad):
        return MaskedFill.apply(grad, ctx.mask, 0), None, None


class MaskedFillTensor(Primitive):
    """``masked_fill`` with a 0-d tensor value (differentiable in the value too)."""

    node_name = "MaskedFillBackward1"

    @staticmethod
    def forward(ctx, x, mask, value):
        ctx.mask = mask
        return np.where(mask, value.astype(x.dtype), x)

    @staticmethod
    def backward(ctx, grad):
        need = ctx.needs_input_grad
        gx = MaskedFill.apply(grad, ctx.mask, 0) if need[0] else None
        gv = MaskedFill.apply(grad, ~ctx.mask, 0).sum() if need[2] else None
        return gx, None, gv


def masked_fill(input, mask, value):
    """``input`` with the positions where ``mask`` is True set to ``value`` (a number or a 0-d tensor).

    >>> tapegrad.tensor([1., 2., 3.]).masked_fill(tapegrad.tensor([True, False, True]), 0.)
    tensor([0., 2., 0.])
    """
    m = _mask("masked_fill_", mask)
    broadcast_or_error(m.shape, input._array.shape)      # (torch names the mask "tensor a")
    if isinstance(value, Tensor):
        if value._array.ndim:
            raise RuntimeError(f"masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                               f"{value._array.ndim} dimension(s).")
        return MaskedFillTensor.apply(input, m, value)
    return MaskedFill.apply(input, m, value)


class MaskedScatter(Primitive):
    """``x`` (broadcast with ``mask``) with the masked positions filled, in order, from ``source``."""

    @staticmethod
    def forward(ctx, x, mask, source):
        shape = np.broadcast_shapes(x.shape, mask.shape)
        m = np.broadcast_to(mask, shape)
        ctx.mask, ctx.src_shape = m, source.shape
        n = int(m.sum())
        if source.size < n:
            raise RuntimeError("Number of elements of source < number of ones in mask")
        out = np.array(np.broadcast_to(x, shape))
        out[m] = source.reshape(-1)[:n]
        return out

    @staticmethod
    def backward(ctx, grad):
        need = ctx.needs_input_grad
        gx = MaskedFill.apply(grad, ctx.mask, 0) if need[0] else None
        gs = MaskedScatterSourceGrad.apply(grad, ctx.mask, ctx.src_shape) if need[2] else None
        return gx, None, gs


class MaskedScatterSourceGrad(Primitive):
    """The gradient of masked_scatter's source: the masked values of ``grad``, zero-padded to source's shape."""

    node_name = "MaskedScatterBackwardBackward0"

    @staticmethod
    def forward(ctx, grad, mask, src_shape):
        ctx.mask, ctx.shape = mask, grad.shape
        vals = grad[mask]
        out = np.zeros(int(np.prod(src_shape)), grad.dtype)
        out[:vals.size] = vals
        return out.reshape(src_shape)

    @staticmethod
    def backward(ctx, gg):
        return MaskedScatter.apply(_zeros(ctx.shape, gg._array.dtype), ctx.mask, gg), None, None


def masked_scatter(input, mask, source):
    """``input`` with the positions where ``mask`` is True filled, in order, with the elements of ``source``.

    >>> tapegrad.zeros(3).masked_scatter(tapegrad.tensor([True, False, True]), tapegrad.tensor([1., 2.]))
    tensor([1., 0., 2.])
    """
    m = _mask("masked_scatter_", mask)
    broadcast_or_error(m.shape, input._array.shape)      # (torch names the mask "tensor a")
    if source.dtype is not input.dtype:
        raise RuntimeError(f"masked_scatter: expected self and source to have same dtypes but got"
                           f"{input.dtype._legacy} and {source.dtype._legacy}")
    return MaskedScatter.apply(input, m, source)


class MaskedSelect(Primitive):
    """The elements of ``x`` (broadcast with ``mask``) where ``mask`` is True, as a 1-d tensor."""

    @staticmethod
    def forward(ctx, x, mask):
        shape = np.broadcast_shapes(x.shape, mask.shape)
        m = np.broadcast_to(mask, shape)
        ctx.mask = m
        return np.broadcast_to(x, shape)[m]

    @staticmethod
    def backward(ctx, grad):
        m = ctx.mask
        return MaskedScatter.apply(_zeros(m.shape, grad._array.dtype), m, grad), None


def masked_select(input, mask, *, out=None):
    """The elements of ``input`` where ``mask`` is True (broadcast together), as a 1-d tensor.

    >>> tapegrad.tensor([1., 2., 3.]).masked_select(tapegrad.tensor([True, False, True]))
    tensor([1., 3.])
    """
    if _arr(mask).dtype != np.bool_:
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    m = _arr(mask)
    broadcast_or_error(m.shape, input._array.shape)      # (torch names the mask "tensor a")
    return MaskedSelect.apply(input, m)


# ============================================================================================================
# take / put / take_along_dim
# ============================================================================================================
def _flat_index(op, index, n):
    got = getattr(index, "dtype", None)
    a = _int_index(op, index, f"{op}(): Expected a long tensor for index, but got {getattr(got, '_legacy', got)}")
    if a.size:
        lo, hi = int(a.min()), int(a.max())
        if hi >= n or lo < -n:
            raise IndexError(f"out of range: tried to access index {hi if hi >= n else lo} on a tensor of {n} "
                             "elements.")
    return a


class Take(Primitive):
    """``x.flatten()[index]`` (in index's shape)."""

    @staticmethod
    def forward(ctx, x, index):
        ctx.shape, ctx.index = x.shape, index
        return x.reshape(-1)[index]

    @staticmethod
    def backward(ctx, grad):
        return Put.apply(_zeros(ctx.shape, grad._array.dtype), ctx.index, grad, True), None


class Put(Primitive):
    """``x`` with ``x.flatten()[index] = source`` (or ``+=`` with accumulate)."""

    @staticmethod
    def forward(ctx, x, index, source, accumulate):
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
    idx = _flat_index("take", index, input._array.size)
    return Take.apply(input, idx)


def put(input, index, source, accumulate=False):
    """``input`` with the flattened positions ``index`` set to (or increased by) ``source``.

    >>> tapegrad.zeros(2, 2).put(tapegrad.tensor([3]), tapegrad.tensor([9.]))
    tensor([[0., 0.],
            [0., 9.]])
    """
    if source.dtype is not input.dtype:
        raise RuntimeError(f"put_(): self and source expected to have the same dtype, but got self.dtype = "
                           f"{input.dtype._legacy} and source.dtype = {source.dtype._legacy}")
    idx = _flat_index("put", index, input._array.size)
    if idx.size != source._array.size:
        raise IndexError(f"put_(): Expected source and index to have the same number of elements, but got "
                           f"source.numel() = {source._array.size}, index.numel() = {idx.size}")
    return Put.apply(input, idx, source, bool(accumulate))


def take_along_dim(input, indices, dim=None, *, out=None):
    """Values of ``input`` at ``indices`` along ``dim`` (broadcasting the other dims); flattened when dim is None.

    >>> tapegrad.tensor([[10, 30, 20]]).take_along_dim(tapegrad.tensor([[1, 2, 0]]), 1)
    tensor([[30, 20, 10]])
    """
    got = getattr(indices, "dtype", None)
    idx = _int_index("take_along_dim", indices, "tapegrad.take_along_dim(): dtype of indices should be Long but got "
                     f"{getattr(got, '_legacy', got)}")
    if dim is None:
        return gather(input.reshape(-1), 0, Tensor._make(idx.reshape(-1)))
    n = input._array.ndim
    if idx.ndim != n:
        raise RuntimeError(f"tapegrad.take_along_dim(): input and indices should have the same number of dimensions, "
                           f"but got {n} dimensions for input, and {idx.ndim} dimensions for indices")
    d = normalize_dim(dim, n)
    xs, js = list(input._array.shape), list(idx.shape)
    xs_d, js_d = list(xs), list(js)
    xs_d[d] = js[d]
    ishape = np.broadcast_shapes(tuple(xs_d), tuple(js))
    js_d[d] = xs[d]
    xshape = np.broadcast_shapes(tuple(js_d), tuple(xs))
    return gather(input.expand(xshape), d, Tensor._make(np.broadcast_to(idx, ishape)))


# ============================================================================================================
# nonzero / argwhere
# ============================================================================================================
def nonzero(input, *, out=None, as_tuple=False):
    """Indices of the non-zero elements: an ``(n, ndim)`` int64 tensor, or one 1-d tensor per dim (as_tuple).

    >>> tapegrad.tensor([0, 3, 0, 4]).nonzero()
    tensor([[1],
            [3]])
    """
    a = input._array
    if as_tuple:
        return tuple(Tensor._make(i.astype(np.int64)) for i in np.nonzero(a.reshape(1) if a.ndim == 0 else a))
    return Tensor._make(np.argwhere(a).astype(np.int64))


def argwhere(input):
    """The same as ``nonzero(input)``: an ``(n, ndim)`` tensor of the indices of non-zero elements.

    >>> tapegrad.argwhere(tapegrad.tensor([[0, 1], [1, 0]]))
    tensor([[0, 1],
            [1, 0]])
    """
    return nonzero(input)


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
    from .reduce import return_types as _shared_types
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
        return _selecting_forward(ctx, x, dim, idx, np.take_along_axis(x, idx, dim), True, 2)


class SortStable(Sort):
    node_name = "SortBackward1"


def sort(input, dim=-1, descending=False, stable=None, *, out=None):
    """Values sorted along ``dim`` (stable: equal values keep their order) and their original indices.

    >>> tapegrad.sort(tapegrad.tensor([3., 1., 2.]))
    tapegrad.return_types.sort(
    values=tensor([1., 2., 3.]),
    indices=tensor([1, 2, 0]))
    """
    d = normalize_dim(dim, input._array.ndim)
    cls = Sort if stable is None else SortStable
    v, i = cls.apply(input, d, bool(descending))
    return return_types.sort(v, i)


def argsort(input, dim=-1, descending=False, stable=False):
    """The indices that sort ``input`` along ``dim``.

    >>> tapegrad.argsort(tapegrad.tensor([3., 1., 2.]))
    tensor([1, 2, 0])
    """
    a = input._array
    if a.ndim == 0:
        return Tensor._make(np.zeros((), np.int64))
    return Tensor._make(_sort_idx(a, normalize_dim(dim, a.ndim), descending).astype(np.int64))


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


def topk(input, k, dim=-1, largest=True, sorted=True, *, out=None):  # noqa: A002 - torch's name
    """The ``k`` largest (``largest=False``: smallest) values along ``dim``, in sorted order, and their indices.

    >>> tapegrad.topk(tapegrad.tensor([1., 3., 2.]), 2)
    tapegrad.return_types.topk(
    values=tensor([3., 2.]),
    indices=tensor([1, 2]))
    """
    d = normalize_dim(dim, input._array.ndim)
    v, i = Topk.apply(input, int(k), d, bool(largest), bool(sorted))
    return return_types.topk(v, i)


class Kthvalue(_Selecting):
    """The ``k``-th smallest value along ``dim`` and its index."""

    @staticmethod
    def forward(ctx, x, k, dim, keepdim):
        size = x.shape[dim] if x.ndim else 1
        if not 1 <= k <= size:
            raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {dim}")
        if x.ndim == 0:
            return _selecting_forward(ctx, x, 0, np.zeros((), np.int64), x.copy(), True, 3)
        idx = np.take(_sort_idx(x, dim, False), [k - 1], axis=dim).astype(np.int64)
        vals = np.take_along_axis(x, idx, dim)
        if not keepdim:
            idx, vals = np.squeeze(idx, dim), np.squeeze(vals, dim)
        return _selecting_forward(ctx, x, dim, idx, vals, keepdim, 3)


def kthvalue(input, k, dim=-1, keepdim=False, *, out=None):
    """The ``k``-th smallest value (1-based) along ``dim`` and its index.

    >>> tapegrad.kthvalue(tapegrad.tensor([3., 1., 2.]), 2)
    tapegrad.return_types.kthvalue(
    values=tensor(2.),
    indices=tensor(2))
    """
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
                                     "node_name": name + "Backward0", "__doc__": f"{fn_name} (no derivative)"})


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
        rows = moved.reshape(n, -1)
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
    res = _search(seq, vals, right)
    return Tensor._make(np.asarray(res, np.int32 if out_int32 else np.int64))


def bucketize(input, boundaries, *, out_int32=False, right=False, out=None):
    """The index of the bucket of each value of ``input``, given the sorted 1-d ``boundaries``.

    >>> tapegrad.bucketize(tapegrad.tensor([1, 4, 9]), tapegrad.tensor([2, 4, 8]))
    tensor([0, 1, 3])
    """
    b = boundaries._array
    if b.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({b.ndim})")
    vals = input._array if isinstance(input, Tensor) else np.asarray(input)
    res = np.searchsorted(b, vals, side="right" if right else "left")
    return Tensor._make(np.asarray(res, np.int32 if out_int32 else np.int64))


# ============================================================================================================
# one_hot, tril_indices, triu_indices
# ============================================================================================================
def one_hot(tensor, num_classes=-1):
    """``tensor`` (int64 class indices) as one-hot rows: a new last dim of size ``num_classes``.

    >>> one_hot(tapegrad.tensor([0, 2]), 3)
    tensor([[1, 0, 0],
            [0, 0, 1]])
    """
    a = tensor._array
    if a.dtype != np.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if num_classes == -1:
        if a.size == 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = int(a.max()) + 1
    if a.size:
        if int(a.min()) < 0:
            raise RuntimeError("Class values must be non-negative.")
        if int(a.max()) >= num_classes:
            raise RuntimeError("Class values must be smaller than num_classes.")
    return Tensor._make((a[..., None] == np.arange(num_classes)).astype(np.int64))


def _tri_indices(fn, row, col, offset, dtype):
    d = _dtype.to_dtype(dtype) if dtype is not None else _dtype.int64
    if row < 0 or col < 0:
        raise RuntimeError(f"row must be non-negative, got{row}" if row < 0 else f"col must be non-negative, got{col}")
    r, c = fn(row, offset, col)
    return Tensor._make(np.stack([r, c]).astype(d.np).reshape(2, -1))


def tril_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    """The (row, col) coordinates of the lower triangle of a ``row x col`` matrix, as a ``2 x N`` tensor.

    >>> tapegrad.tril_indices(2, 2)
    tensor([[0, 1, 1],
            [0, 0, 1]])
    """
    return _tri_indices(np.tril_indices, row, col, offset, dtype)


def triu_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    """The (row, col) coordinates of the upper triangle of a ``row x col`` matrix, as a ``2 x N`` tensor.

    >>> tapegrad.triu_indices(2, 2)
    tensor([[0, 0, 1],
            [0, 1, 1]])
    """
    return _tri_indices(np.triu_indices, row, col, offset, dtype)


# ============================================================================================================
# in-place variants and Tensor methods
# ============================================================================================================
def _inplace(fn):
    def op_(self, *args, **kwargs):
        return apply_inplace(self, fn, *args, **kwargs)
    op_.__name__ = fn.__name__ + "_"
    op_.__doc__ = f"In-place ``{fn.__name__}`` (bumps the version; differentiable)."
    return op_


bind(__getitem__=getitem, __setitem__=setitem, index_select=index_select, gather=gather,
     scatter=scatter, scatter_add=scatter_add, scatter_reduce=scatter_reduce, index_add=index_add,
     index_copy=index_copy, index_fill=index_fill, index_put=index_put, masked_fill=masked_fill,
     masked_scatter=masked_scatter, masked_select=masked_select, take=take, take_along_dim=take_along_dim,
     put=put, nonzero=nonzero, argwhere=argwhere, sort=sort, argsort=argsort, topk=topk, kthvalue=kthvalue,
     msort=msort, unique=unique, unique_consecutive=unique_consecutive,
     scatter_=_inplace(scatter), scatter_add_=_inplace(scatter_add), scatter_reduce_=_inplace(scatter_reduce),
     index_add_=_inplace(index_add), index_copy_=_inplace(index_copy), index_fill_=_inplace(index_fill),
     index_put_=index_put_, masked_fill_=_inplace(masked_fill), masked_scatter_=_inplace(masked_scatter),
     put_=_inplace(put))
