# ruff: noqa: A002 - torch's argument name (input)
"""Copying rearrangements: repeat, tile, repeat_interleave; flip, fliplr, flipud, roll, rot90; tril,
triu, diagonal, diag_embed, diag, diagflat.
"""

from __future__ import annotations

import numpy as np

from ... import _meta
from ...autograd.function import _active
from ...tensor import _varargs_keyword, int_arg
from .._util import (Primitive, Tensor, apply_inplace, bind, capturing, linear_jvp, mark_view, normalize_dim,
                     shape_str, vmap_per_sample)
from ..reduce._common import _write_out
from .views import _contiguous, _nd, _size_arg, expand, flatten, reshape, unsqueeze, view


# --- repeats -----------------------------------------------------------------------------------------------------
class Repeat(Primitive):
    """Tile the tensor ``repeats`` times along each dim (a copy)."""

    jvp = staticmethod(linear_jvp)   # linear: the op itself applied to the tangents

    @staticmethod
    def forward(ctx, x, reps):
        if len(reps) < x.ndim:
            raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number of dimensions "
                               "of tensor")
        if any(r < 0 for r in reps):
            raise RuntimeError(f"Trying to create tensor with negative dimension {min(reps)}: "
                               f"{shape_str([s * r for s, r in zip((1,) * (len(reps) - x.ndim) + x.shape, reps)])}")
        ctx.in_shape, ctx.reps = x.shape, reps
        return np.tile(x, reps)

    @staticmethod
    def backward(ctx, grad):
        reps = ctx.reps
        shp = (1,) * (len(reps) - len(ctx.in_shape)) + tuple(ctx.in_shape)
        split = []
        for r, s in zip(reps, shp):
            split += [r, s]
        g = grad.reshape(tuple(split)).sum(tuple(range(0, 2 * len(reps), 2)))
        return g.reshape(ctx.in_shape), None


def _repeat(self, *sizes, **kw):
    """``x.repeat(2, 1)``: tile along each dim (a copy; ``sizes`` may add leading dims)."""
    if kw:
        sizes = _varargs_keyword(sizes, kw, "repeat", "repeats")
    return Repeat.apply(self, _size_arg(sizes))


def tile(input, dims):
    """Like ``repeat``, but ``dims`` shorter than the tensor's ndim is padded with ones in front.

    >>> tapegrad.tile(tapegrad.tensor([1, 2]), (2,))
    tensor([1, 2, 1, 2])
    """
    if not isinstance(dims, (tuple, list)):
        raise TypeError(f"tile(): argument 'dims' (position 2) must be tuple of ints, not {type(dims).__name__}")
    dims = tuple(int(d) for d in dims)
    dims = (1,) * (_nd(input) - len(dims)) + dims
    return Repeat.apply(input, dims)


def _tile(self, *dims, **kw):
    """``x.tile(2, 3)``: the method also takes its dims as separate ints (``x.tile(2)``), as ``repeat`` does."""
    if kw:
        dims = _varargs_keyword(dims, kw, "tile", "dims")
    if not dims:
        raise TypeError('tile() missing 1 required positional arguments: "dims"')
    return tile(self, _size_arg(dims))


class _IndexSelect(Primitive):
    """``x`` indexed along ``dim`` by an integer array (``index_select``)."""

    node_name = "IndexSelectBackward0"

    jvp = staticmethod(linear_jvp)   # linear: the op itself applied to the tangents

    @staticmethod
    def forward(ctx, x, dim, index):
        ctx.dim, ctx.index, ctx.size = dim, index, x.shape[dim]
        return np.take(x, index, axis=dim)

    @staticmethod
    def backward(ctx, grad):
        return _IndexAdd.apply(grad, ctx.dim, ctx.index, ctx.size), None, None


class _IndexAdd(Primitive):
    """Zeros with ``size`` along ``dim`` and ``g``'s slices added at ``index`` (the backward of index_select)."""

    jvp = staticmethod(linear_jvp)   # linear: the op itself applied to the tangents

    @staticmethod
    def forward(ctx, g, dim, index, size):
        ctx.dim, ctx.index = dim, index
        shape = list(g.shape)
        shape[dim] = size
        out = np.zeros(shape, g.dtype)
        np.add.at(out, (slice(None),) * dim + (index,), g)
        return out

    @staticmethod
    def backward(ctx, gg):
        return _IndexSelect.apply(gg, ctx.dim, ctx.index), None, None, None


class RepeatIndex(Primitive):
    """The positions ``repeat_interleave`` reads with a tensor (or list) of counts, as compile's capture records
    them: the counts are the op's argument, checked here, so that a replay repeats with each call's counts (the
    output's length is their sum: a data-dependent shape, which the replay checks). ``n``: the size along the
    dim (None: ``repeat_interleave(counts)`` alone)."""

    data_shaped = True

    @staticmethod
    def forward(ctx, r, n, d):
        r = np.asarray(r)
        if r.ndim > 1:
            raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
        if n is None:
            return np.repeat(np.arange(r.size, dtype=np.int64), r)
        if (r < 0).any():
            raise RuntimeError("repeats can not be negative")
        r = np.broadcast_to(r.reshape(-1), (n,)) if r.size == 1 else r.reshape(-1)
        if r.size != n:
            raise RuntimeError(f"repeats must have the same size as input along dim, but got repeats.size(0) = "
                               f"{r.size} and input.size({d}) = {n}")
        return np.repeat(np.arange(n), r)

    @staticmethod
    def backward(ctx, grad):
        return None, None, None


def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    """Repeat each element ``repeats`` times (an int, or a tensor of counts) along ``dim`` (flattened if None).

    ``repeat_interleave(counts)`` alone gives ``[0]*counts[0] + [1]*counts[1] + ...``.

    >>> tapegrad.tensor([1, 2]).repeat_interleave(2)
    tensor([1, 1, 2, 2])
    """
    if _active[0]:       # (vmap with a batched input: once per sample)
        r = vmap_per_sample(repeat_interleave, (input, repeats, dim), {"output_size": output_size},
                            (input,) if repeats is None else (repeats,))
        if r is not NotImplemented:
            return r
    if _active[0] and capturing():       # (compile's capture: the counts are an op's argument)
        if repeats is None:
            return RepeatIndex.apply(input, None, 0)
        if isinstance(repeats, (Tensor, list, tuple)):
            x = flatten(input) if dim is None else (reshape(input, (1,)) if _nd(input) == 0 else input)
            d = 0 if dim is None else normalize_dim(dim, _nd(input))
            return _IndexSelect.apply(x, d, RepeatIndex.apply(repeats, x._array.shape[d], d)._array)
    if repeats is None:       # torch.repeat_interleave(repeats): indices repeated by the counts
        counts = input._array
        if counts.ndim > 1:
            raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
        return Tensor._make(np.repeat(np.arange(counts.size, dtype=np.int64), counts))
    x = input if dim is None else input
    if dim is None:
        x = flatten(input)
        d = 0
    else:
        d = normalize_dim(dim, _nd(input))
        if _nd(input) == 0:
            x = reshape(input, (1,))
    if isinstance(repeats, Tensor) or isinstance(repeats, (list, tuple)):
        r = repeats._array if isinstance(repeats, Tensor) else np.asarray(repeats)
        if r.ndim > 1:
            raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
        if (r < 0).any():
            raise RuntimeError("repeats can not be negative")
        n = x._array.shape[d]
        r = np.broadcast_to(r.reshape(-1), (n,)) if r.size == 1 else r.reshape(-1)
        if r.size != n:
            raise RuntimeError(f"repeats must have the same size as input along dim, but got repeats.size(0) = "
                               f"{r.size} and input.size({d}) = {n}")
        return _IndexSelect.apply(x, d, np.repeat(np.arange(n), r))
    r = int(repeats)
    if r < 0:
        raise RuntimeError("repeats can not be negative")
    shp = x._array.shape
    e = unsqueeze(x, d + 1)
    e = expand(e, shp[:d + 1] + (r,) + shp[d + 1:])
    return view(_contiguous(e), shp[:d] + (shp[d] * r,) + shp[d + 1:])


# --- flips and rotations -----------------------------------------------------------------------------------------
def _dims_unique(dims, n):
    out = tuple(normalize_dim(d, n) for d in dims)
    for d in out:
        if out.count(d) > 1:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
    return out


class Flip(Primitive):
    """Reverse the order of elements along ``dims`` (a copy)."""

    jvp = staticmethod(linear_jvp)   # linear: the op itself applied to the tangents

    @staticmethod
    def forward(ctx, x, dims):
        ctx.dims = dims
        return np.flip(x, dims).copy(order="K") if dims and x.ndim else x.copy(order="K")   # (x's layout, as torch)

    @staticmethod
    def backward(ctx, grad):
        return Flip.apply(grad, ctx.dims), None


def flip(input, dims):
    """Reverse the order along ``dims`` (an int or a tuple).

    >>> tapegrad.tensor([1, 2, 3]).flip(0)
    tensor([3, 2, 1])
    """
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    return Flip.apply(input, _dims_unique(dims, _nd(input)) if _nd(input) else ())


def fliplr(input):
    """Flip along dim 1 (left/right); needs at least 2 dims.

    >>> tapegrad.tensor([[1, 2]]).fliplr()
    tensor([[2, 1]])
    """
    if _nd(input) < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return flip(input, (1,))


def flipud(input):
    """Flip along dim 0 (up/down); needs at least 1 dim.

    >>> tapegrad.tensor([1, 2]).flipud()
    tensor([2, 1])
    """
    if _nd(input) < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return flip(input, (0,))


class Roll(Primitive):
    """Shift elements cyclically along dims (all flattened when no dims)."""

    jvp = staticmethod(linear_jvp)   # linear: the op itself applied to the tangents

    @staticmethod
    def forward(ctx, x, shifts, dims):
        ctx.shifts, ctx.dims = shifts, dims
        if dims is None:
            return np.roll(x.reshape(-1), shifts[0]).reshape(x.shape)
        from ..conv.convolution import _channels_last_layout
        out = np.roll(x, shifts, dims)      # (torch's: channels-last stays so, any other layout row-major)
        return out if out.flags.c_contiguous or _channels_last_layout(x) else np.ascontiguousarray(out)

    @staticmethod
    def backward(ctx, grad):
        return Roll.apply(grad, tuple(-s for s in ctx.shifts), ctx.dims), None, None


def roll(input, shifts, dims=None):
    """Shift cyclically by ``shifts`` along ``dims`` (or over the flattened tensor).

    >>> tapegrad.tensor([1, 2, 3]).roll(1)
    tensor([3, 1, 2])
    """
    shifts = int_arg(shifts)
    shifts = (shifts,) if isinstance(shifts, int) else tuple(int(s) for s in shifts)
    if not shifts:
        raise RuntimeError("`shifts` required")
    if dims is None:
        if len(shifts) != 1:
            raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:0")
        return Roll.apply(input, shifts, None)
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    if len(shifts) != len(dims):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(dims)}")
    n = _nd(input)
    if n == 0:
        raise IndexError(f"Dimension specified as {dims[0]} but tensor has no dimensions")
    return Roll.apply(input, shifts, tuple(normalize_dim(d, n) for d in dims))


class Rot90(Primitive):
    """Rotate by 90 degrees ``k`` times in the plane of ``dims`` (a copy)."""

    jvp = staticmethod(linear_jvp)   # linear: the op itself applied to the tangents

    @staticmethod
    def forward(ctx, x, k, dims):
        ctx.k, ctx.dims = k, dims
        return np.rot90(x, k, dims).copy()

    @staticmethod
    def backward(ctx, grad):
        return Rot90.apply(grad, -ctx.k, ctx.dims), None, None


def rot90(input, k=1, dims=(0, 1)):
    """Rotate by 90 degrees ``k`` times from the first towards the second of ``dims``.

    >>> tapegrad.tensor([[1, 2], [3, 4]]).rot90()
    tensor([[2, 4],
            [1, 3]])
    """
    dims = tuple(dims)
    n = _nd(input)
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if n < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {n}")
    d0, d1 = normalize_dim(dims[0], n), normalize_dim(dims[1], n)
    if d0 == d1:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {d0} and dim1 = {d1}")
    return Rot90.apply(input, int(k) % 4, (d0, d1))


# --- triangles and diagonals ---------------------------------------------------------------------------------------
def _tri_cls(name, np_fn):
    def forward(ctx, x, k):
        if x.ndim < 2:
            raise RuntimeError(f"{name.lower()}: input tensor must have at least 2 dimensions")
        ctx.k = k
        return np_fn(x, k)

    def backward(ctx, grad):
        return cls.apply(grad, ctx.k), None

    cls = type(name, (Primitive,), {"forward": staticmethod(forward), "backward": staticmethod(backward),
                                    "jvp": staticmethod(linear_jvp),
                                    "__doc__": f"{name.lower()}: keep one triangle, zero the rest"})
    return cls


Tril = _tri_cls("Tril", np.tril)
Triu = _tri_cls("Triu", np.triu)


def tril(input, diagonal=0, *, out=None):
    """The lower triangle (on and below ``diagonal``) of the last two dims; the rest zeroed.

    >>> tapegrad.ones(2, 2).tril()
    tensor([[1., 0.],
            [1., 1.]])
    """
    return _write_out("tril", Tril.apply(input, int(diagonal)), out, dtype="same")


def triu(input, diagonal=0, *, out=None):
    """The upper triangle (on and above ``diagonal``) of the last two dims; the rest zeroed.

    >>> tapegrad.ones(2, 2).triu()
    tensor([[1., 1.],
            [0., 1.]])
    """
    return _write_out("triu", Triu.apply(input, int(diagonal)), out, dtype="same")


def _diag_view(a, offset, d1, d2):
    """A strided view of the diagonal ``offset`` of dims ``d1``, ``d2`` (moved to the end), as torch's."""
    n1, n2 = a.shape[d1], a.shape[d2]
    if offset >= 0:
        length, i1, i2 = max(min(n1, n2 - offset), 0), 0, offset
    else:
        length, i1, i2 = max(min(n1 + offset, n2), 0), -offset, 0
    rest = [d for d in range(a.ndim) if d not in (d1, d2)]
    shape = tuple(a.shape[d] for d in rest) + (length,)
    if length == 0 or a.size == 0:
        return np.zeros(shape, a.dtype)
    key = [slice(None)] * a.ndim
    key[d1], key[d2] = slice(i1, None), slice(i2, None)
    b = a[tuple(key)]
    if b.__class__ is _meta.MetaArray:       # (the strides it reports, in elements: no memory to stride over)
        st = _meta.strides_of(b)
        return _meta.meta_array(shape, a.dtype, tuple(st[d] for d in rest) + (st[d1] + st[d2],))
    strides = tuple(b.strides[d] for d in rest) + (b.strides[d1] + b.strides[d2],)
    return np.lib.stride_tricks.as_strided(b, shape, strides, writeable=a.flags.writeable)


class Diagonal(Primitive):
    """The diagonal ``offset`` of dims ``dim1``, ``dim2`` as the last dim (a view)."""

    jvp = staticmethod(linear_jvp)   # linear: the op itself applied to the tangents

    @staticmethod
    def forward(ctx, x, offset, d1, d2):
        ctx.args, ctx.shape = (offset, d1, d2), x.shape
        return _diag_view(x, offset, d1, d2)

    @staticmethod
    def backward(ctx, grad):
        return _DiagScatter.apply(grad, *ctx.args, ctx.shape), None, None, None


class _DiagScatter(Primitive):
    """Zeros of ``shape`` with ``g`` written on a diagonal (the backward of ``diagonal``)."""

    node_name = "DiagonalScatterBackward0"

    jvp = staticmethod(linear_jvp)   # linear: the op itself applied to the tangents

    @staticmethod
    def forward(ctx, g, offset, d1, d2, shape):
        ctx.args = (offset, d1, d2)
        out = np.zeros(shape, g.dtype)
        _diag_view(out, offset, d1, d2)[...] = g
        return out

    @staticmethod
    def backward(ctx, gg):
        return Diagonal.apply(gg, *ctx.args), None, None, None, None


class DiagEmbed(Primitive):
    """A tensor whose diagonal ``offset`` of dims ``dim1``, ``dim2`` holds the last dim of ``x`` (zeros elsewhere)."""

    jvp = staticmethod(linear_jvp)   # linear: the op itself applied to the tangents

    @staticmethod
    def forward(ctx, x, offset, d1, d2):
        ctx.args = (offset, d1, d2)
        n = x.shape[-1] + abs(offset) if x.ndim else 1 + abs(offset)
        rest = list(x.shape[:-1])
        shape = []
        it = iter(rest)
        for i in range(len(rest) + 2):
            shape.append(n if i in (d1, d2) else next(it))
        out = np.zeros(shape, x.dtype)
        _diag_view(out, offset, d1, d2)[...] = x
        return out

    @staticmethod
    def backward(ctx, grad):
        return Diagonal.apply(grad, *ctx.args), None, None, None


class DiagonalCopy(Diagonal):
    """``diag`` of a matrix: a copy of its diagonal."""

    node_name = "DiagonalBackward0_copy"

    @staticmethod
    def forward(ctx, x, offset, d1, d2):
        return Diagonal.forward(ctx, x, offset, d1, d2).copy()


def _diag_dims(n, offset, dim1, dim2):
    d1, d2 = normalize_dim(dim1, n), normalize_dim(dim2, n)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return int(offset), d1, d2


def diagonal(input, offset=0, dim1=0, dim2=1):
    """The diagonal ``offset`` of dims ``dim1``, ``dim2``, appended as the last dim (a view).

    >>> tapegrad.tensor([[1, 2], [3, 4]]).diagonal()
    tensor([1, 4])
    """
    args = _diag_dims(_nd(input), offset, dim1, dim2)
    return mark_view(Diagonal.apply(input, *args), input, lambda x: x.diagonal(*args))


def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    """Put the last dim of ``input`` on a diagonal of a new pair of dims (zeros elsewhere).

    >>> tapegrad.diag_embed(tapegrad.tensor([1, 2]))
    tensor([[1, 0],
            [0, 2]])
    """
    return DiagEmbed.apply(input, *_diag_dims(_nd(input) + 1, offset, dim1, dim2))


def diag(input, diagonal=0, *, out=None):
    """1-d input: a matrix with it on diagonal ``diagonal``; 2-d input: that diagonal (a copy).

    >>> tapegrad.diag(tapegrad.tensor([1, 2]))
    tensor([[1, 0],
            [0, 2]])
    """
    n = _nd(input)
    if n == 1:
        return _write_out("diag", DiagEmbed.apply(input, int(diagonal), 0, 1), out)
    if n == 2:
        return _write_out("diag", DiagonalCopy.apply(input, int(diagonal), 0, 1), out)
    raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {n}D")


def diagflat(input, offset=0):
    """The flattened input on diagonal ``offset`` of a square matrix.

    >>> tapegrad.diagflat(tapegrad.tensor([[1, 2]]))
    tensor([[1, 0],
            [0, 2]])
    """
    flat = input if _nd(input) == 1 else reshape(input, (-1,))
    return DiagEmbed.apply(flat, int(offset), 0, 1)


bind(repeat=_repeat, tile=_tile, repeat_interleave=repeat_interleave, flip=flip, fliplr=fliplr, flipud=flipud,
     roll=roll, rot90=rot90, tril=tril, triu=triu, diag=diag, diagonal=diagonal, diag_embed=diag_embed,
     diagflat=diagflat,
     tril_=lambda self, diagonal=0: apply_inplace(self, tril, diagonal),
     triu_=lambda self, diagonal=0: apply_inplace(self, triu, diagonal))
