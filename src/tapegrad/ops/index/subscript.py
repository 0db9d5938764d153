# ruff: noqa: A001, A002 - torch's names (sorted) and argument name (input)
"""``x[key]`` and ``x[key] = value``, as torch decomposes them: ints, slices, ``None`` and ``...`` become
a chain of view ops (``SelectBackward0``, ``SliceBackward0``, ``UnsqueezeBackward0``, ``AliasBackward0``), applied
left to right; the tensor indices left over (int arrays, bool masks) are then applied at once
(``IndexBackward0``), with NumPy's advanced-indexing rules on the sliced tensor (which are torch's).
``x[key] = v`` slices the same way, then copies into the view (the base gets a ``CopySlices`` node) or runs
``index_put_``.
"""

from __future__ import annotations

import warnings

import numpy as np

from ... import _dtype, _meta
from ...autograd.grad_mode import _state
from .._util import (Primitive, Tensor, apply_inplace, before_write, bind, capturing, check_view_inplace, kernel,
                     linear_jvp, vmap_per_sample, mark_view, shape_str)
from ...autograd.function import _active
from ._common import _arr, _zeros


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
            if k is None or k is Ellipsis or isinstance(k, (slice, list, tuple, range, Tensor, np.ndarray)):
                warnings.warn(_SEQ_WARNING, UserWarning, stacklevel=3)
                return tuple(key), True
    return (key,), False


def _index_array(k):
    """A list/range/ndarray/Tensor index as an ndarray (int64 or bool), with torch's error for other dtypes.

    As torch converts them: Python lists and NumPy arrays of any integer or float dtype become long indices
    (``x[[1.7]]`` is ``x[[1]]``), bools a mask; a tensor must be long, int, byte (a mask, deprecated) or bool."""
    if isinstance(k, Tensor):
        a = k._array
        if a.dtype.kind not in "biu" or a.dtype in (np.int8, np.int16):
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
    elif isinstance(k, np.ndarray):
        a = k
    else:
        a = np.asarray([_arr(e) for e in k] if isinstance(k, (list, tuple)) else k)
    if a.dtype == np.bool_:
        return a
    if a.dtype == np.uint8:
        warnings.warn("indexing with dtype tapegrad.uint8 is now deprecated, please use a dtype tapegrad.bool instead.",
                      UserWarning, stacklevel=4)
        return a.astype(np.bool_)
    if a.dtype.kind in "fiu" and a.dtype not in (np.int64, np.int32):
        return a.astype(np.int64)     # (a Python list of floats, a NumPy array of another int dtype)
    if a.dtype.kind not in "iu":
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
            if isinstance(k, np.bool_):   # torch: a NumPy bool is not an index
                raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables "
                                 "are valid indices (got numpy.bool)")
            out.append(("bool", bool(k)))
        elif isinstance(k, (int, np.integer)):
            out.append(("int", int(k)))
        elif isinstance(k, Tensor) and k._array.ndim == 0 and k._array.dtype.kind in "iu":
            # a 0-d integer tensor of any dtype is an int (while compile's capture runs, the tensor itself: the
            # select reads its value in its op, SelectIndex, so that a replay selects with each call's value)
            out.append(("tint", k) if _active[0] and capturing() else ("int", int(k._array)))
        elif isinstance(k, (Tensor, np.ndarray, list, tuple, range)):
            a = _index_array(np.arange(k.start, k.stop, k.step) if isinstance(k, range) else k)
            if a.ndim == 0:
                if _active[0] and isinstance(k, Tensor) and capturing():   # (as above: a data read the capture sees)
                    out.append(("bool", bool(k)) if a.dtype == np.bool_ else ("int", int(k)))
                else:
                    out.append(("bool", bool(a)) if a.dtype == np.bool_ else ("int", int(a)))
            else:     # (a byte mask is remembered: x[byte_mask] = number is torch's masked_fill_ error)
                out.append(("tensor", a, isinstance(k, (Tensor, np.ndarray)) and k.dtype in (np.uint8, _dtype.uint8),
                            k))
        elif isinstance(k, str):
            raise TypeError(f"new(): invalid data type '{type(k).__name__}'")
        else:
            t = type(k)
            name = t.__name__ if t.__module__ == "builtins" else f"{t.__module__.split('.')[0]}.{t.__name__}"
            raise IndexError(f"only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are "
                             f"valid indices (got {name})")
    return out


def _specified_dims(items):
    n = 0
    for it in items:
        if it[0] in ("int", "slice", "tint"):
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

    jvp = staticmethod(linear_jvp)   # linear: the op itself applied to the tangents

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

    jvp = staticmethod(linear_jvp)   # linear: the op itself applied to the tangents

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

    jvp = staticmethod(linear_jvp)   # linear: the op itself applied to the tangents

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

    jvp = staticmethod(linear_jvp)   # linear: the op itself applied to the tangents

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

    jvp = staticmethod(linear_jvp)   # linear: the op itself applied to the tangents

    @staticmethod
    def forward(ctx, x):
        return x.view()

    @staticmethod
    def backward(ctx, grad):
        return grad


class SelectIndex(Primitive):
    """``x[t]`` with ``t`` a 0-d integer tensor, as compile's capture records it: a select at t's value, read and
    checked here (``pos``: the key position torch's message names), so that a replay selects with each call's
    ``t``. Eagerly such a key is an int (``Select``)."""

    node_name = "SelectBackward0"
    array_backward = True
    data_view = True       # (a view chosen by a tensor's value: the capture breaks at a write through it)

    @staticmethod
    def forward(ctx, x, dim, t, pos):
        size = x.shape[dim] if dim < x.ndim else 0
        i = int(t)
        if not -size <= i < size:
            raise IndexError(f"index {i} is out of bounds for dimension {pos} with size {size}")
        return Select.forward(ctx, x, dim, i % size)

    @staticmethod
    def backward(ctx, grad):
        return Select.backward(ctx, grad)[0], None, None, None


def _select(x, dim, index):
    """``x.select(dim, index)`` as indexing records it (dim and index already checked and non-negative)."""
    return mark_view(Select.apply(x, dim, index), x, lambda t, d=dim, i=index: _select(t, d, i))


def _slice(x, dim, start, stop, step):
    return mark_view(Slice.apply(x, dim, start, stop, step), x,
                     lambda t, a=(dim, start, stop, step): _slice(t, *a))


def _alias(x):
    return mark_view(Alias.apply(x), x, _alias)


def _unsqueeze(x, dim):
    from ..shape import unsqueeze
    return unsqueeze(x, dim)


def _apply_slicing(self, items, single, srcs=None):
    """Apply the basic items of a parsed key (torch's ``applySlicing``); return the view and the tensor indices
    as ``{dim: array}`` on that view (``srcs``, when given, gets ``{dim: what the key held}``)."""
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
        elif kind == "tint":
            i = int(it[1]._array)       # (the eager view's own function: the capture never replays it)
            result = mark_view(SelectIndex.apply(result, dim, it[1], pos), result,
                               lambda t, d=dim, i=i % max(result._array.shape[dim], 1): _select(t, d, i))
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
            if srcs is not None:
                srcs[dim] = 1 if it[1] else 0
            dim += 1
        else:
            a = it[1]
            tensors[dim] = a
            if srcs is not None:
                srcs[dim] = it[3]
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
    if len(arrays) == 1 and len(checks) == 1 and 0 not in shape:    # (the usual key: one index tensor)
        a, size, _ = checks[0]
        if a.size and a.__class__ is not _meta.MetaArray and (      # (a meta index: no values to check)
                np.maximum.reduce(a, axis=None) >= size or np.minimum.reduce(a, axis=None) < -size):
            bad = a.reshape(-1)[np.argmax(((a >= size) | (a < -size)).reshape(-1))]
            raise IndexError(f"index {bad} is out of bounds for dimension 0 with size {size}")
        return tuple(key)
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


def _row_major_result(x, out):
    """``x[key]``'s result laid out as torch's when ``x`` is in row-major order (contiguous, sliced from a contiguous
    tensor, or expanded from one): contiguous. NumPy lays out ``x[:, idx]`` with the indexed dim outermost, so a
    ``view`` that torch allows would fail. (Other layouts keep NumPy's.)"""
    if out.flags.c_contiguous or out.ndim < 2:
        return out
    if x.flags.c_contiguous:
        return np.ascontiguousarray(out)
    st = [s for s, n in zip(x.strides, x.shape) if n > 1 and s]    # (a broadcast dim's stride 0 says nothing)
    if all(a >= b for a, b in zip(st, st[1:])):
        return np.ascontiguousarray(out)
    return out


class Index(Primitive):
    """``x[key]`` with int arrays in the key (advanced indexing): a copy."""

    jvp = staticmethod(linear_jvp)   # linear: the op itself applied to the tangents

    @staticmethod
    def forward(ctx, x, key):
        ctx.shape, ctx.key = x.shape, key
        return _row_major_result(x, x[key])

    @staticmethod
    def backward(ctx, grad):
        return IndexPutAccumulate.apply(grad, ctx.key, ctx.shape), None


class IndexPutAccumulate(Primitive):
    """The gradient of advanced indexing: ``grad`` summed into zeros at ``key`` (repeated indices add up)."""

    node_name = "IndexPutBackward0"

    jvp = staticmethod(linear_jvp)   # linear: the op itself applied to the tangents

    @staticmethod
    def forward(ctx, grad, key, shape):
        ctx.key = key
        out = np.zeros(shape, grad.dtype)
        np.add.at(out, key, grad)
        return out

    @staticmethod
    def backward(ctx, gg):
        return Index.apply(gg, ctx.key), None, None


# --- the key as compile's capture sees it: index tensors as arguments, the key made and checked in the forward
def _key_spec(tensors, srcs):
    """The constant part of a key whose tensor indices an op gets as arguments: ``(spec, tensors, mask)``, spec
    one ``(dim, kind, what)`` per tensor index (kind "t": the op's argument ``what``; "c": a Python list or range
    of the key, a constant (as a list of ints or bools); "z": a Python bool's index, ``what`` 0 or 1 elements),
    mask: whether one is a mask.
    None when the key holds a NumPy array (it may be a tensor's data: the capture cannot replay it)."""
    spec, args, mask = [], [], False
    for dim, a in tensors.items():
        src = srcs[dim]
        mask = mask or a.dtype == np.bool_
        if isinstance(src, Tensor):
            spec.append((dim, "t", len(args)))
            args.append(src)
        elif isinstance(src, int):
            spec.append((dim, "z", src))
        elif isinstance(src, (list, tuple, range)):
            spec.append((dim, "c", a.tolist()))       # (converted: ints or bools, the program's own copy)
        else:
            return None
    return tuple(spec), args, mask


def _spec_key(shape, spec, arrays):
    """The NumPy key of a key spec on this call's index arrays, with torch's checks (``_np_key``)."""
    tensors = {}
    for dim, kind, what in spec:
        if kind == "t":
            a = arrays[what]
            a = a.astype(np.bool_) if a.dtype == np.uint8 else a
            tensors[dim] = a.reshape(1) if a.ndim == 0 else a      # (index_put's 0-d index tensors)
        elif kind == "z":
            tensors[dim] = np.zeros(what, np.int64)
        else:
            tensors[dim] = _index_array(what)
    return _np_key(shape, tensors)


class IndexArgs(Primitive):
    """``x[key]`` as compile's capture records it: the index tensors are arguments and the key is made (and its
    bounds checked) in the forward, so that a replay indexes with the call's own indices."""

    node_name = "IndexBackward0"

    @staticmethod
    def forward(ctx, x, spec, *arrays):
        key = _spec_key(x.shape, spec, arrays)
        ctx.shape, ctx.key, ctx.n = x.shape, key, len(arrays)
        return _row_major_result(x, x[key])

    @staticmethod
    def backward(ctx, grad):
        return (IndexPutAccumulate.apply(grad, ctx.key, ctx.shape), None) + (None,) * ctx.n


class IndexMaskArgs(IndexArgs):
    """``IndexArgs`` with a boolean mask in the key: the output's shape is the mask's count (``data_shaped``: a
    replay checks it against the capture's)."""

    node_name = "IndexBackward0"
    data_shaped = True


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


def _lone_key_on_0d(key):
    """torch's errors for a lone int or slice indexing a 0-d tensor (its select and slice paths, which come before
    the count of indices): ``loss.data[0]``, the pre-0.4 way of reading a loss, names ``item()``."""
    if key.__class__ is slice:
        if key.step is not None and key.step <= 0:
            raise ValueError("step must be greater than zero" if key.step else "slice step cannot be zero")
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    if isinstance(key, (int, np.integer)) and not isinstance(key, (bool, np.bool_)):
        if key == 0:
            raise IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
                             "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number")
        raise IndexError(f"index {int(key)} is out of bounds for dimension 0 with size 0")


def getitem(self, key):
    """``x[key]`` with torch's semantics (ints, slices with positive steps, None, ..., bool masks, int tensors)."""
    if not self._array.ndim:
        _lone_key_on_0d(key)
    if not (self._rg and _state.enabled) and not _active[0]:    # no graph to record and no transform active:
        #                                                             one NumPy view, one mark_view
        k = _basic_key(self._array.shape, key)
        if k is not None:
            return mark_view(Tensor._make(self._array[k]), self, lambda t, key=key: getitem(t, key))
    items = _parse(key)
    single = len(items) == 1 and not isinstance(key, tuple)
    if single and items[0][0] == "ellipsis":
        return _alias(self)
    single = single and items[0][0] == "slice"    # a lone slice always makes a SliceBackward0 node
    srcs = {} if _active[0] else None
    result, tensors = _apply_slicing(self, items, single, srcs)
    if not tensors:
        return _alias(result) if result is self else result
    if _active[0]:
        r = vmap_per_sample(getitem, (self, key), None, key if isinstance(key, (tuple, list)) else (key,))
        if r is not NotImplemented:      # (vmap with a batched index tensor: once per sample)
            return r
        got = _key_spec(tensors, srcs) if capturing() else None
        if got is not None:      # (compile's capture: the eager checks first, for the eager error)
            _np_key(result._array.shape, tensors)
            spec, args, mask = got
            return (IndexMaskArgs if mask else IndexArgs).apply(result, spec, *args)
    return Index.apply(result, _np_key(result._array.shape, tensors))


# ============================================================================================================
# x[key] = value
# ============================================================================================================
def _check_value(value, dtype):
    """torch assigns only tensors and numbers: anything else is its TypeError; a number that does not fit the
    dtype is its overflow error (``int8_tensor[0] = 300``)."""
    if not isinstance(value, (Tensor, int, float, complex, np.number, np.bool_)):
        t = type(value)
        name = t.__name__ if t.__module__ == "builtins" else f"{t.__module__.split('.')[0]}.{t.__name__}"
        raise TypeError(f"can't assign a {name} to a tapegrad.{dtype._legacy}Tensor")
    if value.__class__ is int and not -2 ** 63 <= value < 2 ** 63:
        raise ValueError("Overflow when unpacking long long")         # (torch's words for setitem)
    if value.__class__ in (int, float):
        _dtype.check_scalar(value, dtype, halves=False)


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

    jvp = staticmethod(lambda ctx, tx, tsrc: None if tsrc is None else ctx.op.apply(ctx.inputs[0], tsrc))

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
    def jvp(ctx, tx, tv, *_):        # linear in (x, values); a number as values is a constant (tangent 0)
        x, values, key, *acc = ctx.inputs
        if tx is None:
            tx = Tensor._make(np.zeros(x._array.shape, x._array.dtype))
        return IndexPut.apply(tx, 0.0 if tv is None else tv, key, *acc, **ctx.kwargs)

    @staticmethod
    def forward(ctx, x, values, key, accumulate=False):
        ctx.key, ctx.accumulate = key, accumulate
        out = x.copy()
        values = np.asarray(values)
        if values.dtype != out.dtype:
            values = _dtype.cast(values, out.dtype)
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
    if not self._array.ndim:
        _lone_key_on_0d(key)
    is_tensor = value.__class__ is Tensor or isinstance(value, Tensor)     # (a Parameter too)
    if not (_state.enabled and (self._rg or (is_tensor and value._rg))) and not _active[0]:
        # (no graph to record and no function transform active, which must see the ops)
        if self._view is not None and _state.enabled:
            check_view_inplace(self, False)     # (a view made under no_grad whose base requires grad)
        _check_value(value, self.dtype)
        k = _basic_key(self._array.shape, key)
        if k is not None:
            dst = self._array[k]
            v = np.asarray(value._array if is_tensor else value)
            v = _dtype.through_float(v, dst.dtype)
            while v.ndim > dst.ndim and v.shape[0] == 1:
                v = v[0]
            before_write(self)
            try:
                np.copyto(dst, np.broadcast_to(v, dst.shape), casting="unsafe")
            except ValueError:
                pass    # the general path below raises torch's error
            else:
                self._vc[0] += 1
                return
    items = _parse(key)
    if _active[0]:      # (x[t] = v, t a 0-d tensor, while capturing: index_put with t's value, read in the op)
        items = [("tensor", it[1]._array, False, it[1]) if it[0] == "tint" else it for it in items]
    src_dtype = value.dtype if isinstance(value, Tensor) else None
    value = _value_tensor(value, self.dtype)
    if value._array.dtype != self._array.dtype:
        value = value.to(self.dtype) if value._rg or _active[0] else \
            Tensor._make(_dtype.cast(value._array, self._array.dtype))
    if len(items) == 1 and not isinstance(key, tuple):
        kind = items[0][0]
        if kind == "bool" and not items[0][1]:
            if isinstance(key, Tensor):      # torch writes nothing, yet a tensor index bumps the version
                if src_dtype is not None and src_dtype is not self.dtype:
                    _put_dtype_error(self, src_dtype)
                self._vc[0] += 1
            return
        if kind == "ellipsis":
            return _copy_to(self, value)

    srcs = {} if _active[0] else None
    sliced, tensors = _apply_slicing(self, items, False, srcs)
    if not tensors:
        return _copy_to(sliced, value)
    if _active[0]:       # (vmap with a batched index tensor: each sample written with its own)
        keys = key if isinstance(key, (tuple, list)) else (key,)
        if vmap_per_sample(setitem, (self, key, value), None, keys, target=self) is not NotImplemented:
            return
    k = _np_key(sliced._array.shape, tensors)
    # torch writes a one-element value under a lone mask by masked_fill_ (bool masks only; any value dtype);
    # any other advanced-index write is index_put_, which takes a tensor value only in the destination's dtype
    adv = [it for it in items if it[0] in ("tensor", "bool")]
    fill = len(adv) == 1 and adv[0][0] == "tensor" and adv[0][1].dtype == np.bool_ and value._array.size == 1
    if fill and adv[0][2]:
        raise RuntimeError("masked_fill_ only supports boolean masks, but got mask with dtype unsigned char")
    v = _index_put_values(sliced, value, k)
    if src_dtype is not None and src_dtype is not self.dtype and not fill and not isinstance(key, bool):
        _put_dtype_error(self, src_dtype)
    got = _key_spec(tensors, srcs) if _active[0] and capturing() else None
    if got is not None:       # (compile's capture: the key made and checked in the op, on each replay's indices)
        spec, args, _ = got
        vals = v if src_dtype is not None else value._array[()]   # (a number: a constant of the program)
        apply_inplace(sliced, _put_args_fn, vals, spec, False, value._array.shape, *args)
        return
    apply_inplace(sliced, _put_fn, v, k, False)


class IndexPutArgs(Primitive):
    """``IndexPut`` as compile's capture records it: the index tensors are arguments (after ``vshape``, the shape
    the value had, for the error), the key is made and checked in the forward (``IndexArgs``)."""

    node_name = "IndexPutBackward0"

    @staticmethod
    def forward(ctx, x, values, spec, accumulate, vshape, *arrays):
        key = _spec_key(x.shape, spec, arrays)
        res = _index_result_shape(x.shape, key)
        try:
            ok = np.broadcast_shapes(np.shape(values), res) == res
        except ValueError:
            ok = False
        if not ok:
            raise RuntimeError(f"shape mismatch: value tensor of shape {shape_str(vshape)} cannot be broadcast to "
                               f"indexing result of shape {shape_str(res)}")
        ctx.n = len(arrays)
        return IndexPut.forward(ctx, x, values, key, accumulate)

    @staticmethod
    def backward(ctx, grad):
        gx, gv, _, _ = IndexPut.backward(ctx, grad)
        return (gx, gv, None, None, None) + (None,) * ctx.n


def _put_args_fn(x, values, spec, accumulate, vshape, *tensors):
    if isinstance(values, Tensor) and values.dtype is not x.dtype:
        values = values.to(x.dtype)
    return IndexPutArgs.apply(x, values, spec, accumulate, vshape, *tensors)


def _put_dtype_error(self, src_dtype):
    raise RuntimeError(f"Index put requires the source and destination dtypes match, got "
                       f"{self.dtype._legacy} for the destination and {src_dtype._legacy} for the source.")


bind(__getitem__=getitem, __setitem__=setitem)
