# ruff: noqa: A002 - torch's argument names (input, size, stride)
"""Strided views over a tensor's storage, the ``*_scatter`` ops, the ``*_copy`` variants of the views and the
``unsafe_*`` splits (loaded on first use).

A tensor's storage is the NumPy array at the end of its ``.base`` chain (the memory it views); its
``storage_offset()`` is where its first element lies in that array. ``as_strided`` reads that memory with the
sizes, strides and offset given, as torch does, and is a view (``mark_view``). Its gradient is torch's: the
incoming gradient summed into a zero storage at the positions the view reads, then read back at the positions of
the input's own elements (divided by how many input elements share a position, for an input that overlaps
itself) — the ``_StorageMap`` Primitive, whose adjoint is itself with the two position lists exchanged.

``diagonal_scatter``, ``select_scatter``, ``slice_scatter`` and ``as_strided_scatter`` write ``src`` into a copy
of ``input`` where the view reads: the gradient of ``input`` is the incoming one with that region zeroed (the op
itself with a zero ``src``), the gradient of ``src`` is the view of it. The ``*_copy`` ops are a view's values in
new memory (``_ViewCopy``: node ``<View>Backward0_copy``, backward the view's adjoint, ``AsStridedScatter``).
"""

from __future__ import annotations

import numpy as np

from ... import _dtype, _meta
from .._util import (AsStridedScatter, Primitive, Tensor, _no_grad_call, bind, linear_jvp, mark_view, normalize_dim,
                     shape_str, transform_visible)

__all__ = ["as_strided", "as_strided_", "as_strided_copy", "as_strided_scatter", "empty_strided", "empty_permuted",
           "slice_inverse",
           "diagonal_scatter", "select_scatter", "slice_scatter", "unsafe_chunk", "unsafe_split",
           "unsafe_split_with_sizes", "alias_copy", "detach_copy", "diagonal_copy", "expand_copy", "permute_copy",
           "select_copy", "slice_copy", "split_copy", "split_with_sizes_copy", "squeeze_copy", "t_copy",
           "transpose_copy", "unbind_copy", "unfold_copy", "unsqueeze_copy", "view_copy", "view_as_real_copy",
           "view_as_complex_copy"]


# --- storage geometry ------------------------------------------------------------------------------------------
def _storage(a: np.ndarray) -> np.ndarray:
    """The array that owns ``a``'s memory (the end of its ``.base`` chain among ndarrays, through the holder
    NumPy's ``as_strided`` puts in between)."""
    while True:
        b = a.base
        if not isinstance(b, np.ndarray):
            b = getattr(b, "base", None)
            if not isinstance(b, np.ndarray):
                return a
        a = b


def _offset_bytes(a: np.ndarray, root: np.ndarray) -> int:
    return a.__array_interface__["data"][0] - root.__array_interface__["data"][0]


def storage_offset(self) -> int:
    """Where the tensor's first element lies in its storage, in elements (torch's ``storage_offset()``).

    >>> tapegrad.arange(6.)[2:].storage_offset()
    2
    """
    a = self._array
    return _offset_bytes(a, _storage(a)) // a.itemsize


def _positions(a: np.ndarray, root: np.ndarray) -> np.ndarray:
    """The storage position (in elements of ``a``'s dtype) of each element of ``a``."""
    it = a.itemsize
    pos = np.full(a.shape, _offset_bytes(a, root) // it, np.int64)
    for d, (n, st) in enumerate(zip(a.shape, a.strides)):
        shape = [1] * a.ndim
        shape[d] = n
        pos = pos + (np.arange(n, dtype=np.int64) * (st // it)).reshape(shape)
    return pos


def _check_geometry(x: np.ndarray, size, stride, offset):
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    if any(s < 0 for s in stride):
        raise RuntimeError(f"as_strided: Negative strides are not supported at the moment, got strides: "
                           f"{shape_str(stride)}")
    if any(s < 0 for s in size):
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(size)}: {shape_str(size)}")
    if offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {offset}")
    root = _storage(x)
    it = x.itemsize
    need = 0 if 0 in size else (offset + sum((n - 1) * s for n, s in zip(size, stride)) + 1) * it
    have = root.nbytes if x.__class__ is np.ndarray else _meta.storage_extent(x) * it   # (a meta tensor's: its reach)
    if need > have:
        raise RuntimeError(f"setStorage: sizes {shape_str(size)}, strides {shape_str(stride)}, storage offset "
                           f"{offset}, and itemsize {it} requiring a storage size of {need} are out of bounds for "
                           f"storage of size {have}")
    return root


def _strided_array(x: np.ndarray, size, stride, offset) -> np.ndarray:
    """``x``'s storage read with ``size``/``stride``/``offset`` (in elements of ``x``'s dtype)."""
    root = _check_geometry(x, size, stride, offset)
    if x.__class__ is _meta.MetaArray:
        return _meta.meta_array(size, x.dtype, stride)
    it = x.itemsize
    flat = np.ndarray((root.nbytes // it,), dtype=x.dtype, buffer=_buffer_of(root))
    return np.lib.stride_tricks.as_strided(flat[offset:], shape=tuple(size), strides=tuple(s * it for s in stride),
                                           writeable=x.flags.writeable)


def _buffer_of(root: np.ndarray):
    """The storage array as a 1-d byte buffer (it owns its memory: C- or Fortran-ordered)."""
    if root.flags.c_contiguous:
        return root.reshape(-1).view(np.uint8) if root.size else np.zeros(0, np.uint8)
    if root.flags.f_contiguous:
        return root.T.reshape(-1).view(np.uint8)
    return np.ascontiguousarray(root).reshape(-1).view(np.uint8)   # (not reached: owners are contiguous)


class _StorageMap(Primitive):
    """``out = S[dst] * dst_w`` where ``S`` is a zero storage with ``g * src_w`` summed in at ``src``: the adjoint
    of one strided read as seen from another (and, with the lists exchanged, its own adjoint)."""

    node_name = "AsStridedBackwardBackward0"

    @staticmethod
    def forward(ctx, g, src, dst, size, src_w, dst_w):
        ctx.args = src, dst, size, src_w, dst_w
        v = g if src_w is None else g * src_w
        if g.dtype.kind == "c":
            s = np.zeros(size, g.dtype)
            np.add.at(s, src.ravel(), v.ravel())
        else:            # (bincount: one pass in C, far faster than add.at)
            s = np.bincount(src.ravel(), weights=v.ravel(), minlength=size).astype(g.dtype, copy=False)
        out = s[dst]
        return out if dst_w is None else out * dst_w

    @staticmethod
    def backward(ctx, gg):
        src, dst, size, src_w, dst_w = ctx.args
        return _StorageMap.apply(gg, dst, src, size, dst_w, src_w), None, None, None, None, None


class AsStrided(Primitive):
    """``as_strided``: the input's storage read with other sizes, strides and offset (a view).

    ``batch`` (vmap's rule passes it; 0 otherwise) is how many leading dims of the input and of the geometry are
    vmap's batch dims: each sample reads the storage as if its block began where sample 0's does, and its
    gradient goes to its own elements only (a sample whose reach covers its neighbours' memory reads their values
    but does not differentiate them, as torch's vmap)."""

    node_name = "AsStridedBackward0"   # (forward AD: the derived rule; the tangent's storage is not the primal's)

    @staticmethod
    def forward(ctx, x, size, stride, offset, batch=0):
        out = _strided_array(x, size, stride, offset)
        if ctx.needs_input_grad[0]:
            root = _storage(x)
            in_pos = _positions(x, root)
            out_pos = np.asarray(offset + sum(np.arange(n).reshape([-1 if i == d else 1 for i in range(len(size))])
                                              * st for d, (n, st) in enumerate(zip(size, stride))), np.int64)
            out_pos = np.broadcast_to(out_pos, tuple(size))
            if batch:
                in_pos, out_pos = _per_sample(in_pos, out_pos, x, stride, batch)
            n = int(max(in_pos.max(initial=-1), out_pos.max(initial=-1))) + 1
            counts = np.bincount(in_pos.ravel(), minlength=n)[in_pos]
            ctx.geom = out_pos, in_pos, n, None if (counts == 1).all() else 1.0 / counts
        return out

    @staticmethod
    def backward(ctx, grad):
        out_pos, in_pos, n, w = ctx.geom
        return _StorageMap.apply(grad, out_pos, in_pos, n, None, w), None, None, None, None

    @staticmethod
    def jvp(ctx, tx, *_):
        """torch's rule: the tangent laid out in memory as the input is, read with the same geometry (so that a
        sample of an interleaved batch reads its neighbours' tangents where it reads their values)."""
        if tx is None:
            return None
        x = ctx.inputs[0]
        return ctx.op.apply(_LaidOut.apply(tx, x), *ctx.inputs[1:], **ctx.kwargs)


class _LaidOut(Primitive):
    """``t``'s values in new memory laid out as ``x`` is in its storage (same strides and offset in a zero storage
    of the same size; where ``x`` overlaps itself, the mean of ``t``'s values there): what ``as_strided``'s
    tangent is read from. Over ``batch`` leading vmap dims in which ``x`` does not move (stride 0: a sample
    broadcast), each sample gets a block of its own."""

    @staticmethod
    def forward(ctx, t, x, batch=0):
        root = _storage(x)
        it = x.itemsize
        pos = _positions(x, root)
        strides = [s // it for s in x.strides]
        size = root.nbytes // it
        for d in range(batch):
            if strides[d] == 0 and x.shape[d] > 1:
                strides[d] = size
                pos = pos + np.arange(x.shape[d], dtype=np.int64).reshape(
                    [-1 if i == d else 1 for i in range(x.ndim)]) * size
                size *= x.shape[d]
        counts = np.bincount(pos.ravel(), minlength=size)
        w = counts[pos]
        w = None if (w == 1).all() else 1.0 / w
        ctx.geom = pos, size, w
        v = t if w is None else t * w
        if t.dtype.kind == "c":
            store = np.zeros(size, t.dtype)
            np.add.at(store, pos.ravel(), v.ravel())
        else:
            store = np.bincount(pos.ravel(), weights=v.ravel(), minlength=size).astype(t.dtype, copy=False)
        off = _offset_bytes(x, root) // it
        return np.lib.stride_tricks.as_strided(store[off:], x.shape, tuple(s * store.itemsize for s in strides))

    @staticmethod
    def backward(ctx, grad):
        pos, size, w = ctx.geom
        if w is None:
            return grad, None, None
        return _StorageMap.apply(grad, pos, pos, size, None, w), None, None

    @staticmethod
    def jvp(ctx, tt, *_):
        return None if tt is None else _LaidOut.apply(tt, *ctx.inputs[1:])


def _per_sample(in_pos, out_pos, x, stride, batch):
    """The storage positions of an ``as_strided`` over ``batch`` leading batch dims made separate per sample:
    each sample's positions taken relative to its own block's start (its batch offsets removed), then moved
    to a range of its own (``sample * extent``), so that the gradient's scatter and gather never mix samples."""
    it = x.itemsize
    bshape = x.shape[:batch]
    in_base = out_base = np.zeros(bshape, np.int64)
    for d in range(batch):
        ix = np.arange(bshape[d], dtype=np.int64).reshape([-1 if i == d else 1 for i in range(batch)])
        in_base = in_base + ix * (x.strides[d] // it)
        out_base = out_base + ix * stride[d]
    rel_in = in_pos - in_base.reshape(bshape + (1,) * (in_pos.ndim - batch))
    rel_out = out_pos - out_base.reshape(bshape + (1,) * (out_pos.ndim - batch))
    extent = int(max(rel_in.max(initial=-1), rel_out.max(initial=-1))) + 1
    sample = np.arange(int(np.prod(bshape)), dtype=np.int64).reshape(bshape) * extent
    return (rel_in + sample.reshape(bshape + (1,) * (in_pos.ndim - batch)),
            rel_out + sample.reshape(bshape + (1,) * (out_pos.ndim - batch)))


class AsStridedCopy(AsStrided):
    """``as_strided_copy``: ``as_strided`` in new memory (the same geometry for the gradient)."""

    node_name = "AsStridedBackward0_copy"

    @staticmethod
    def forward(ctx, x, size, stride, offset, batch=0):
        return np.array(AsStrided.forward(ctx, x, size, stride, offset, batch), order="C", copy=True)


def _geometry_args(input, size, stride, storage_offset):
    size = tuple(int(s) for s in size)
    stride = tuple(int(s) for s in stride)
    off = _storage_offset_of(input) if storage_offset is None else int(storage_offset)
    return size, stride, off


def _storage_offset_of(t):
    a = t._array
    return _offset_bytes(a, _storage(a)) // a.itemsize


def as_strided(input, size, stride, storage_offset=None):
    """A view of ``input``'s storage with the given sizes, strides (in elements) and storage offset (default:
    ``input``'s own). Overlapping views are allowed; writing through them is undefined, as in torch.

    >>> tapegrad.arange(6.).as_strided((2, 2), (1, 2))
    tensor([[0., 2.],
            [1., 3.]])
    """
    size, stride, off = _geometry_args(input, size, stride, storage_offset)
    out = AsStrided.apply(input, size, stride, off)
    return mark_view(out, input, lambda t: as_strided(t, size, stride, off))


def as_strided_(input, size, stride, storage_offset=None):
    """In-place ``as_strided``: ``input`` itself takes the new sizes, strides and offset."""
    from .views import _inplace_view
    size, stride, off = _geometry_args(input, size, stride, storage_offset)
    return _inplace_view(input, AsStrided, (size, stride, off), lambda t: as_strided(t, size, stride, off))


# --- the views' copies -----------------------------------------------------------------------------------------
class _ViewCopy(Primitive):
    """A view's values in new (contiguous) memory; backward: the view's adjoint."""

    jvp = staticmethod(linear_jvp)

    @staticmethod
    def forward(ctx, x, view_fn):
        ctx.view_fn, ctx.shape, ctx.dtype = view_fn, x.shape, x.dtype
        return np.array(_no_grad_call(view_fn, Tensor._make(x))._array, order="C", copy=True)

    @staticmethod
    def backward(ctx, grad):
        return AsStridedScatter.apply(grad, ctx.view_fn, ctx.shape, ctx.dtype), None


_COPIES = {}


def _copy(node, x, view_fn):
    """``view_fn(x)`` copied, recorded as torch's ``<node>_copy`` (``node``: the view's node, "TBackward0")."""
    cls = _COPIES.get(node)
    if cls is None:
        cls = _COPIES[node] = type(node.replace("Backward", "Copy"), (_ViewCopy,),
                                   {"node_name": f"{node}_copy", "__doc__": f"A copy of the {node} view."})
    _no_grad_call(view_fn, x)     # (the view's own argument checks and errors, before anything is recorded)
    return cls.apply(x, view_fn)


def as_strided_copy(input, size, stride, storage_offset=None):
    """``as_strided`` copied into new memory."""
    size, stride, off = _geometry_args(input, size, stride, storage_offset)
    return AsStridedCopy.apply(input, size, stride, off)


def alias_copy(input):
    """A copy of ``input`` (torch's copy of its ``alias`` view)."""
    return _copy("AliasBackward0", input, lambda t: t.view(t.shape))


@transform_visible(elementwise=True)
def detach_copy(input):
    """A detached copy of ``input`` (no gradient flows through it)."""
    return Tensor._make(input._array.copy())


def diagonal_copy(input, offset=0, dim1=0, dim2=1):
    return _copy("DiagonalBackward0", input, lambda t: t.diagonal(offset, dim1, dim2))


def expand_copy(input, size, *, implicit=False):
    return _copy("ExpandBackward0", input, lambda t: t.expand(*size) if not isinstance(size, int) else t.expand(size))


def permute_copy(input, dims):
    return _copy("PermuteBackward0", input, lambda t: t.permute(*dims))


def select_copy(input, dim, index):
    return _copy("SelectBackward0", input, lambda t: t.select(dim, index))


def slice_copy(input, dim=0, start=None, end=None, step=1):
    n = input.ndim
    key = (slice(None),) * normalize_dim(dim, n) + (slice(start, end, step),)
    return _copy("SliceBackward0", input, lambda t: t[key])


def split_copy(input, split_size, dim=0):
    pieces = len(input.split(split_size, dim))
    return tuple(_copy("SplitBackward0", input, lambda t, i=i: t.split(split_size, dim)[i]) for i in range(pieces))


def split_with_sizes_copy(input, split_sizes, dim=0):
    sizes = list(split_sizes)
    return tuple(_copy("SplitWithSizesBackward0", input, lambda t, i=i: t.split_with_sizes(sizes, dim)[i])
                 for i in range(len(input.split_with_sizes(sizes, dim))))


def squeeze_copy(input, dim=None):
    node = "SqueezeBackward0" if dim is None else "SqueezeBackward2" if isinstance(dim, (tuple, list)) else \
        "SqueezeBackward1"
    return _copy(node, input, lambda t: t.squeeze() if dim is None else t.squeeze(dim))


def t_copy(input):
    return _copy("TBackward0", input, lambda t: t.t())


def transpose_copy(input, dim0, dim1):
    return _copy("TransposeBackward0", input, lambda t: t.transpose(dim0, dim1))


def unbind_copy(input, dim=0):
    if input.ndim == 0:
        raise IndexError(f"Dimension specified as {normalize_dim(dim, 0)} but tensor has no dimensions")
    return tuple(_copy("UnbindBackward0", input, lambda t, i=i: t.select(dim, i))
                 for i in range(input.shape[normalize_dim(dim, input.ndim)]))


def unfold_copy(input, dimension, size, step):
    return _copy("UnfoldBackward0", input, lambda t: t.unfold(dimension, size, step))


def unsqueeze_copy(input, dim):
    return _copy("UnsqueezeBackward0", input, lambda t: t.unsqueeze(dim))


def view_copy(input, size, *, dtype=None):
    """A copy of ``input.view(size)`` (or of ``input.view(dtype)``: no gradient, as in torch)."""
    if isinstance(size, _dtype.dtype):
        return _view_copy_dtype(input, size)
    return _copy("ViewBackward0", input, lambda t: t.view(size))


@transform_visible()
def _view_copy_dtype(input, dtype):
    """``view_copy(input, dtype)``: the bits reinterpreted, in new memory (no gradient)."""
    return Tensor._make(np.ascontiguousarray(input.view(dtype)._array).copy())


def view_as_real_copy(input):
    from ..elementwise.complex import view_as_real
    return _copy("ViewAsRealBackward0", input, view_as_real)


@transform_visible()
def view_as_complex_copy(input):
    from ..elementwise.complex import view_as_complex
    if input._rg:
        raise RuntimeError("view_as_complex_copy does not support automatic differentiation for outputs with complex "
                           "dtype.")
    return Tensor._make(np.ascontiguousarray(view_as_complex(input.detach())._array).copy())


# --- scatters: src written where a view reads ------------------------------------------------------------------
class _ScatterInto(Primitive):
    """A copy of ``input`` with ``view_fn``'s region replaced by ``src``."""

    jvp = staticmethod(linear_jvp)

    @staticmethod
    def forward(ctx, x, src, view_fn, op):
        ctx.view_fn, ctx.op_cls = view_fn, op
        out = x.copy()
        _no_grad_call(view_fn, Tensor._make(out))._array[...] = src
        return out

    @staticmethod
    def backward(ctx, grad):
        need = ctx.needs_input_grad
        view = ctx.view_fn(grad) if need[1] else None
        gin = None
        if need[0]:
            zero = Tensor._make(np.zeros(ctx.view_fn(Tensor._make(grad._array)).shape, grad._array.dtype))
            gin = ctx.op_cls.apply(grad, zero, ctx.view_fn, ctx.op_cls)
        return gin, view, None, None


def _scatter_op(node):
    return type(node, (_ScatterInto,), {"node_name": f"{node}Backward0", "__doc__": f"torch's {node}."})


DiagonalScatter = _scatter_op("DiagonalScatter")
SelectScatter = _scatter_op("SelectScatter")
SliceScatter = _scatter_op("SliceScatter")
AsStridedScatterOp = _scatter_op("AsStridedScatter")


def _scatter(cls, input, src, view_fn):
    region = _no_grad_call(view_fn, input)
    if tuple(src.shape) != tuple(region.shape):
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = "
                           f"{shape_str(src.shape)}, slice size = {shape_str(region.shape)}")
    if src.dtype is not input.dtype:
        src = src.to(input.dtype)
    return cls.apply(input, src, view_fn, cls)


def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):
    """``input`` with its diagonal (``offset``, ``dim1``, ``dim2``) replaced by ``src`` (a copy).

    >>> tapegrad.diagonal_scatter(tapegrad.zeros(2, 2), tapegrad.ones(2))
    tensor([[1., 0.],
            [0., 1.]])
    """
    return _scatter(DiagonalScatter, input, src, lambda t: t.diagonal(offset, dim1, dim2))


def select_scatter(input, src, dim, index):
    """``input`` with ``input.select(dim, index)`` replaced by ``src`` (a copy).

    >>> tapegrad.select_scatter(tapegrad.zeros(2, 2), tapegrad.ones(2), 0, 0)
    tensor([[1., 1.],
            [0., 0.]])
    """
    return _scatter(SelectScatter, input, src, lambda t: t.select(dim, index))


def slice_scatter(input, src, dim=0, start=None, end=None, step=1):
    """``input`` with the slice ``start:end:step`` of dim ``dim`` replaced by ``src`` (a copy).

    >>> tapegrad.slice_scatter(tapegrad.zeros(3), tapegrad.ones(2), start=1)
    tensor([0., 1., 1.])
    """
    d = normalize_dim(dim, input.ndim)
    if step is not None and step <= 0:
        raise RuntimeError("slice step must be positive")
    key = (slice(None),) * d + (slice(start, end, step),)
    return _scatter(SliceScatter, input, src, lambda t: t[key])


def as_strided_scatter(input, src, size, stride, storage_offset=None):
    """A contiguous copy of ``input`` with ``as_strided(size, stride, storage_offset)`` of it replaced by ``src``.

    >>> tapegrad.as_strided_scatter(tapegrad.zeros(4), tapegrad.ones(2), (2,), (2,))
    tensor([1., 0., 1., 0.])
    """
    size, stride, off = tuple(int(s) for s in size), tuple(int(s) for s in stride), \
        (0 if storage_offset is None else int(storage_offset))
    if not input._array.flags.c_contiguous:
        input = input.contiguous()
    return _scatter(AsStridedScatterOp, input, src, lambda t: as_strided(t.contiguous(), size, stride, off))


class SliceInverse(Primitive):
    """``slice_inverse``: the storage of ``input`` (a slice of some base) read with the geometry of ``src`` (a
    tensor shaped as that base): a view of ``input``'s base."""

    @staticmethod
    def forward(ctx, x, src, key, geometry):
        ctx.key = key
        return _strided_array(x, *geometry)

    @staticmethod
    def backward(ctx, grad):
        key = ctx.key
        need = ctx.needs_input_grad
        gx = grad[key] if need[0] else None
        gs = None
        if need[1]:
            zero = Tensor._make(np.zeros(grad[key].shape, grad._array.dtype))
            gs = SliceScatter.apply(grad, zero, lambda t: t[key], SliceScatter)
        return gx, gs, None, None


def slice_inverse(input, src, dim=0, start=None, end=None, step=1):
    """The inverse of slicing: given ``input = base[..., start:end:step, ...]`` (along ``dim``) and ``src`` shaped
    as ``base``, a view of ``input``'s storage with ``src``'s sizes, strides and offset (``base`` itself, as a
    view). The gradient of ``input`` is the slice of the incoming one, ``src``'s the rest of it."""
    key = (slice(None),) * normalize_dim(dim, src.ndim) + (slice(start, end, step),)
    geometry = (tuple(src.shape), src.stride(), _storage_offset_of(src))
    out = SliceInverse.apply(input, src, key, geometry)
    return mark_view(out, input, lambda t: as_strided(t, *geometry))


# --- unsafe splits: pieces that are not tracked as views -------------------------------------------------------
class UnsafeSplit(Primitive):
    """``unsafe_split``: the pieces of ``split``, not marked as views (no checks on changing them in place)."""

    jvp = staticmethod(linear_jvp)

    @staticmethod
    def forward(ctx, x, sizes, dim):
        ctx.dim, ctx.shape = dim, x.shape
        bounds = np.cumsum(sizes)[:-1]
        return tuple(np.split(x, bounds, axis=dim))

    @staticmethod
    def backward(ctx, *grads):
        from .split_join import cat
        return cat(list(grads), ctx.dim), None, None


class UnsafeSplitWithSizes(UnsafeSplit):
    pass


def _split_sizes(input, split_size, dim):
    return [p.shape[dim] for p in input.split(split_size, dim)]


def unsafe_split(input, split_size, dim=0):
    """``split`` whose pieces are not tracked as views of ``input`` (torch's ``unsafe_split``)."""
    d = normalize_dim(dim, input.ndim)
    return UnsafeSplit.apply(input, _split_sizes(input, split_size, d), d)


def unsafe_split_with_sizes(input, split_sizes, dim=0):
    """``split_with_sizes`` whose pieces are not tracked as views of ``input``."""
    d = normalize_dim(dim, input.ndim)
    sizes = [p.shape[d] for p in input.split_with_sizes(list(split_sizes), d)]
    return UnsafeSplitWithSizes.apply(input, sizes, d)


def unsafe_chunk(input, chunks, dim=0):
    """``chunk`` whose pieces are not tracked as views of ``input``."""
    d = normalize_dim(dim, input.ndim)
    return UnsafeSplit.apply(input, [p.shape[d] for p in input.chunk(chunks, d)], d)


# --- empty tensors with given strides --------------------------------------------------------------------------
def _empty_with(size, stride, d, requires_grad, meta=False):
    size, stride = tuple(int(s) for s in size), tuple(int(s) for s in stride)
    if len(size) != len(stride):
        raise RuntimeError(f"dimensionality of sizes ({len(size)}) must match dimensionality of strides "
                           f"({len(stride)})")
    if meta:         # (a meta tensor with those strides, no memory)
        out = Tensor._make(_meta.meta_array(size, d.np, stride))
    else:
        n = 0 if 0 in size else 1 + sum((s - 1) * st for s, st in zip(size, stride))
        flat = np.zeros(n, d.np)
        out = Tensor._make(np.lib.stride_tricks.as_strided(flat, size, tuple(st * flat.itemsize for st in stride)))
    if requires_grad:
        out.requires_grad = True
    return out


def empty_strided(size, stride, *, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    """An uninitialised (here: zero) tensor with the given sizes and strides.

    >>> tapegrad.empty_strided((2, 3), (1, 2)).stride()
    (1, 2)
    """
    from ...tensor import _check_device
    meta = _check_device(device)
    d = _dtype.get_default_dtype() if dtype is None else _dtype.to_dtype(dtype)
    return _empty_with(size, stride, d, requires_grad, meta)


def new_empty_strided(self, size, stride, *, dtype=None, layout=None, device=None, requires_grad=False,
                      pin_memory=False):
    """``empty_strided`` with ``self``'s dtype and device unless given."""
    if device is None and self.is_meta:
        device = "meta"
    return empty_strided(size, stride, dtype=self.dtype if dtype is None else dtype, device=device,
                         requires_grad=requires_grad)


def empty_permuted(size, physical_layout, *, dtype=None, layout=None, device=None, requires_grad=False,
                   pin_memory=False):
    """An empty tensor of ``size`` whose dims lie in memory in the order ``physical_layout`` (outermost first).

    >>> tapegrad.empty_permuted((2, 3, 4), (0, 2, 1)).stride()
    (12, 1, 3)
    """
    size, perm = tuple(int(s) for s in size), tuple(int(p) for p in physical_layout)
    if len(size) != len(perm):
        raise RuntimeError(f"Number of dimensions in size does not match the length of the physical_layout; i.e. "
                           f"len(size) = {len(size)} is not equal to len(physical_layout) = {len(perm)}")
    seen = set()
    for i, p in enumerate(perm):
        if not 0 <= p < len(perm):
            raise RuntimeError(f"Dimension out of range (expected to be between 0 and {len(perm) - 1}, but got {p} at "
                               f"index {i}).  NB: negative dims not currently supported; file an issue if you want it.")
        if p in seen:
            raise RuntimeError("Duplicate dim not allowed")
        seen.add(p)
    stride = [0] * len(size)
    acc = 1
    for p in reversed(perm):
        stride[p] = acc
        acc *= max(size[p], 1)
    d = _dtype.get_default_dtype() if dtype is None else _dtype.to_dtype(dtype)
    return _empty_with(size, stride, d, requires_grad)


bind(as_strided=as_strided, as_strided_=as_strided_, as_strided_scatter=as_strided_scatter,
     diagonal_scatter=diagonal_scatter, select_scatter=select_scatter, slice_scatter=slice_scatter,
     unsafe_chunk=unsafe_chunk, unsafe_split=unsafe_split, unsafe_split_with_sizes=unsafe_split_with_sizes,
     new_empty_strided=new_empty_strided, storage_offset=storage_offset, slice_inverse=slice_inverse)
