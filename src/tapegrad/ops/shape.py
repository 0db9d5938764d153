# ruff: noqa: A002 - torch's argument name (input)
"""Shape ops: views and rearrangements, joins and splits, triangles and diagonals.

Every op that is a view in torch (view, reshape when possible, transpose, permute, squeeze, unsqueeze, expand,
narrow, select, unbind, split, chunk, diagonal, movedim, unflatten, flatten when possible) returns a NumPy view
of its input and is marked with ``mark_view``: it shares the input's version counter, and an in-place change of
the view rebases the base's history (``CopySlices``). The other ops (flip, roll, cat, repeat, tril, ...) copy.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from .. import _dtype
from ..autograd.grad_mode import _state
from ..tensor import Size
from ._util import (Primitive, Tensor, apply_inplace, bind, check_view_inplace, kernel, mark_view, normalize_dim,
                    op_error, shape_str)
from .reduce import _write_out

__all__ = ["reshape", "transpose", "swapaxes", "swapdims", "permute", "movedim", "moveaxis", "t", "unsqueeze",
           "squeeze", "flatten", "unflatten", "ravel", "broadcast_to", "broadcast_tensors", "broadcast_shapes",
           "repeat_interleave", "tile", "flip", "fliplr", "flipud", "roll", "rot90", "cat", "concat", "concatenate",
           "stack", "hstack", "vstack", "dstack", "column_stack", "split", "chunk", "tensor_split", "unbind", "narrow",
           "select", "split_with_sizes", "hsplit", "vsplit", "dsplit", "narrow_copy", "adjoint", "tril", "triu",
           "diag", "diagonal", "diag_embed", "diagflat", "atleast_1d", "atleast_2d", "atleast_3d"]


def _nd(x):
    return x._array.ndim


def _size_arg(shape):
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    return tuple(int(s) for s in shape)


def _infer_shape(shape, numel):
    shape = list(shape)
    if shape.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    if any(s < -1 for s in shape):
        raise RuntimeError(f"invalid shape dimension {next(s for s in shape if s < -1)}")
    if -1 in shape:
        known = math.prod(s for s in shape if s != -1)
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{shape_str(shape)}' is invalid for input of size {numel}")
        shape[shape.index(-1)] = numel // known
    if math.prod(shape) != numel:
        raise RuntimeError(f"shape '{shape_str(shape)}' is invalid for input of size {numel}")
    return tuple(shape)


def _try_view(a, shape):
    out = a.view()
    try:
        out.shape = shape
    except AttributeError:
        return None
    return out


# --- reshape / view ------------------------------------------------------------------------------------------
class View(Primitive):
    """The same data seen with another shape (``view`` requires it to be possible without a copy)."""

    array_backward = True

    @staticmethod
    def forward(ctx, x, shape, must_view=False):
        shape = _infer_shape(shape, x.size)
        ctx.in_shape = x.shape
        out = _try_view(x, shape)
        if out is None:
            if must_view:
                raise RuntimeError("view size is not compatible with input tensor's size and stride (at least one "
                                   "dimension spans across two contiguous subspaces). Use .reshape(...) instead.")
            out = x.reshape(shape)
        return out

    @staticmethod
    def backward(ctx, grad):
        return grad.reshape(ctx.in_shape), None, None


class UnsafeView(View):
    """``reshape`` that has to copy (torch's ``_unsafe_view`` of a contiguous copy)."""

    array_backward = True


def reshape(input, *shape):
    """The same elements in a new shape (a view when possible); one dim may be -1.

    >>> tapegrad.arange(6).reshape(2, 3)
    tensor([[0, 1, 2],
            [3, 4, 5]])
    """
    shape = _size_arg(shape)
    a = input._array
    cls = View if _try_view(a, _infer_shape(shape, a.size)) is not None else UnsafeView
    return mark_view(cls.apply(input, shape), input, lambda t, s=shape: t.reshape(s))


def view(input, *shape):
    """Like ``reshape`` but never copies (an error says when ``reshape`` is needed); ``view(dtype)`` reinterprets.

    >>> tapegrad.zeros(2, 3).view(6).shape
    tapegrad.Size([6])
    """
    if len(shape) == 1 and not isinstance(shape[0], (int, tuple, list, np.integer)):
        d = _dtype.to_dtype(shape[0])
        out = Tensor._make(input._array.view(d.np))
        out._vc = input._vc      # the same memory: in-place changes of either are seen by both
        return out
    shape = _size_arg(shape)
    out = View.apply(input, shape, True)
    return mark_view(out, input, lambda t, s=shape: t.view(s))


def flatten(input, start_dim=0, end_dim=-1):
    """Merge dims ``start_dim..end_dim`` into one (a view when possible).

    >>> tapegrad.zeros(2, 3, 4).flatten(1).shape
    tapegrad.Size([2, 12])
    """
    n = _nd(input)
    if n == 0:
        return reshape(input, (1,))
    s, e = normalize_dim(start_dim, n), normalize_dim(end_dim, n)
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if s == e:
        return input
    shp = input._array.shape
    return reshape(input, shp[:s] + (math.prod(shp[s:e + 1]),) + shp[e + 1:])


def unflatten(input, dim, sizes):
    """Split dim ``dim`` into ``sizes`` (one may be -1); a view.

    >>> tapegrad.zeros(2, 6).unflatten(1, (2, 3)).shape
    tapegrad.Size([2, 2, 3])
    """
    shp = input._array.shape
    d = normalize_dim(dim, len(shp))
    sizes = tuple(int(s) for s in sizes)
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    size = shp[d] if shp else 1
    if -1 in sizes:
        known = math.prod(s for s in sizes if s != -1)
        ok = sizes.count(-1) == 1 and known and size % known == 0
        if ok:
            sizes = tuple(size // known if s == -1 else s for s in sizes)
    if math.prod(sizes) != size or -1 in sizes:
        raise RuntimeError(f"unflatten: Provided sizes {shape_str(sizes)} don't multiply up to the size of dim {dim} "
                           f"({size}) in the input tensor")
    return reshape(input, shp[:d] + sizes + shp[d + 1:])


def ravel(input):
    """The elements as a 1-D tensor (a view when the input is contiguous).

    >>> tapegrad.zeros(2, 3).ravel().shape
    tapegrad.Size([6])
    """
    return view(_contiguous(input), (-1,))


# --- dim permutations ----------------------------------------------------------------------------------------
class Transpose(Primitive):
    """Swap two dims."""

    @staticmethod
    def forward(ctx, x, dim0, dim1):
        ctx.dims = (dim0, dim1)
        return np.swapaxes(x, dim0, dim1) if x.ndim else x.view()

    array_backward = True

    @staticmethod
    def backward(ctx, grad):
        return (grad.swapaxes(*ctx.dims) if grad.ndim else grad), None, None


class Permute(Primitive):
    """Reorder dims."""

    @staticmethod
    def forward(ctx, x, dims):
        ctx.dims = dims
        return np.transpose(x, dims)

    array_backward = True

    @staticmethod
    def backward(ctx, grad):
        inverse = tuple(np.argsort(ctx.dims).tolist())
        return (grad.permute(inverse) if grad.__class__ is Tensor else grad.transpose(inverse)), None


class T(Primitive):
    """``x.t()``: transpose of a matrix (a 0-d or 1-d tensor is returned as is)."""

    @staticmethod
    def forward(ctx, x):
        if x.ndim > 2:
            raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {x.ndim}D")
        return x.T

    array_backward = True

    @staticmethod
    def backward(ctx, grad):
        return grad.t() if grad.__class__ is Tensor else grad.T


def transpose(input, dim0, dim1):
    """Swap dims ``dim0`` and ``dim1`` (a view).

    >>> tapegrad.zeros(2, 3).transpose(0, 1).shape
    tapegrad.Size([3, 2])
    """
    n = _nd(input)
    d0, d1 = normalize_dim(dim0, n), normalize_dim(dim1, n)
    return mark_view(Transpose.apply(input, d0, d1), input, lambda x: x.transpose(d0, d1))


swapaxes = swapdims = transpose


def permute(input, *dims):
    """Reorder the dims (a view): ``x.permute(2, 0, 1)``.

    >>> tapegrad.zeros(2, 3, 4).permute(2, 0, 1).shape
    tapegrad.Size([4, 2, 3])
    """
    dims = _size_arg(dims)
    n = _nd(input)
    if len(dims) != n:
        raise RuntimeError(f"permute(sparse_coo): number of dimensions in the tensor input does not match the "
                           f"length of the desired ordering of dimensions i.e. input.dim() = {n} is not equal to "
                           f"len(dims) = {len(dims)}")
    dims = tuple(normalize_dim(d, n) for d in dims)
    if len(set(dims)) != n:
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return mark_view(Permute.apply(input, dims), input, lambda x: x.permute(dims))


def movedim(input, source, destination):
    """Move dims ``source`` to positions ``destination`` (ints or tuples), keeping the others in order; a view.

    >>> tapegrad.zeros(2, 3, 4).movedim(0, -1).shape
    tapegrad.Size([3, 4, 2])
    """
    n = _nd(input)
    src = (source,) if isinstance(source, int) else tuple(source)
    dst = (destination,) if isinstance(destination, int) else tuple(destination)
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({list(src)} dims) should contain "
                           f"the same number of dims as destination ({list(dst)} dims)")
    src_n = tuple(normalize_dim(d, n) for d in src)
    dst_n = tuple(normalize_dim(d, n) for d in dst)
    if len(set(src_n)) != len(src_n):
        raise RuntimeError(f"movedim: repeated dim in `source` ({list(src)})")
    if len(set(dst_n)) != len(dst_n):
        raise RuntimeError(f"movedim: repeated dim in `destination` ({list(dst)})")
    if n == 0:
        return input
    order = [d for d in range(n) if d not in src_n]
    perm = [None] * n
    for s, d in zip(src_n, dst_n):
        perm[d] = s
    it = iter(order)
    perm = tuple(p if p is not None else next(it) for p in perm)
    return permute(input, perm)


moveaxis = movedim


def t(input):
    """Transpose a matrix (``x.t()``); 0-d and 1-d tensors come back as they are.

    >>> tapegrad.zeros(2, 3).t().shape
    tapegrad.Size([3, 2])
    """
    return mark_view(T.apply(input), input, lambda x: x.t())


def _T(self):
    n = _nd(self)
    if n == 0:
        warnings.warn("Tensor.T is deprecated on 0-D tensors. This function is the identity in these cases.",
                      UserWarning, stacklevel=2)
    elif n != 2:
        warnings.warn("The use of `x.T` on tensors of dimension other than 2 to reverse their shape is deprecated "
                      "and it will throw an error in a future release. Consider `x.mT` to transpose batches of "
                      "matrices or `x.permute(*torch.arange(x.ndim - 1, -1, -1))` to reverse the dimensions of a "
                      "tensor.", UserWarning, stacklevel=2)
    return permute(self, tuple(range(n - 1, -1, -1)))


def _mT(self):
    if _nd(self) < 2:
        raise RuntimeError("tensor.mT is only supported on matrices or batches of matrices. Got "
                           f"{_nd(self)}-D tensor.")
    return transpose(self, -2, -1)


# --- squeeze / unsqueeze / expand ------------------------------------------------------------------------------
class Unsqueeze(Primitive):
    """Insert a dim of size 1."""

    array_backward = True

    @staticmethod
    def forward(ctx, x, dim):
        ctx.in_shape = x.shape
        return np.expand_dims(x, dim)

    @staticmethod
    def backward(ctx, grad):
        return grad.reshape(ctx.in_shape), None


def _squeeze_node(name):
    class Squeeze(Primitive):
        """Remove dims of size 1."""

        node_name = name
        array_backward = True

        @staticmethod
        def forward(ctx, x, dims):
            ctx.in_shape = x.shape
            dims = tuple(d for d in dims if x.shape[d] == 1)
            return np.squeeze(x, dims) if dims else x.view()

        @staticmethod
        def backward(ctx, grad):
            return grad.reshape(ctx.in_shape), None
    return Squeeze


Squeeze0, Squeeze1, Squeeze2 = (_squeeze_node(f"SqueezeBackward{i}") for i in range(3))


def unsqueeze(input, dim):
    """Insert a dim of size 1 at ``dim`` (a view).

    >>> tapegrad.zeros(3).unsqueeze(0).shape
    tapegrad.Size([1, 3])
    """
    d = normalize_dim(dim, _nd(input) + 1)
    return mark_view(Unsqueeze.apply(input, d), input, lambda x: x.unsqueeze(d))


def squeeze(input, dim=None):
    """Remove dims of size 1 (all, or those in ``dim``: an int or a tuple); a view.

    >>> tapegrad.zeros(2, 1, 3).squeeze().shape
    tapegrad.Size([2, 3])
    """
    n = _nd(input)
    if dim is None:
        dims, cls = tuple(range(n)), Squeeze0
    elif isinstance(dim, (tuple, list)):
        dims, cls = tuple(normalize_dim(d, n) for d in dim) if n else (), Squeeze2
    else:
        dims, cls = (normalize_dim(dim, n),) if n else (), Squeeze1
    return mark_view(cls.apply(input, dims), input, lambda x: x.squeeze(dim))


class Expand(Primitive):
    """Broadcast to a larger shape without copying (-1 keeps a dim)."""

    array_backward = True

    @staticmethod
    def forward(ctx, x, shape):
        ctx.in_shape = x.shape
        return np.broadcast_to(x, _expand_shape(x, shape))

    @staticmethod
    def backward(ctx, grad):
        from ._util import sum_to_shape
        return sum_to_shape(grad, ctx.in_shape), None


def _expand_shape(x, shape):
    lead = len(shape) - x.ndim
    if lead < 0:
        legacy = _dtype.from_numpy_dtype(x.dtype)._legacy
        raise RuntimeError(f"expand(tapegrad.{legacy}Tensor{{{shape_str(x.shape)}}}, size={shape_str(shape)}): the "
                           f"number of sizes provided ({len(shape)}) must be greater or equal to the number of "
                           f"dimensions in the tensor ({x.ndim})")
    target = []
    for i, s in enumerate(shape):
        cur = x.shape[i - lead] if i >= lead else None
        if s == -1:
            if cur is None:
                raise RuntimeError(f"The expanded size of the tensor (-1) isn't allowed in a leading, "
                                   f"non-existing dimension {i}")
            s = cur
        elif cur is not None and cur != 1 and cur != s:
            raise RuntimeError(f"The expanded size of the tensor ({s}) must match the existing size ({cur}) at "
                               f"non-singleton dimension {i}.  Target sizes: {shape_str(shape)}.  Tensor "
                               f"sizes: {shape_str(x.shape)}")
        target.append(s)
    return tuple(target)


def expand(input, *sizes):
    """Broadcast to ``sizes`` without copying; -1 keeps a dim (``x.expand(3, -1)``).

    >>> tapegrad.zeros(3, 1).expand(3, 4).shape
    tapegrad.Size([3, 4])
    """
    shape = _size_arg(sizes)
    return mark_view(Expand.apply(input, shape), input, lambda x: x.expand(shape))


def broadcast_to(input, size):
    """``input.expand(size)`` (a view).

    >>> tapegrad.broadcast_to(tapegrad.zeros(3), (2, 3)).shape
    tapegrad.Size([2, 3])
    """
    return expand(input, tuple(size))


def broadcast_shapes(*shapes):
    """The shape the given shapes broadcast to (torch's error when they don't).

    >>> tapegrad.broadcast_shapes((1, 3), (2, 1))
    tapegrad.Size([2, 3])
    """
    shapes = [(s,) if isinstance(s, int) else tuple(s) for s in shapes]
    out = []
    for i, s in enumerate(shapes):
        n = max(len(out), len(s))
        a = [1] * (n - len(out)) + out
        b = [1] * (n - len(s)) + list(s)
        for j in range(n):
            if a[j] != b[j] and a[j] != 1 and b[j] != 1:
                raise RuntimeError(f"Attempting to broadcast a dimension of length {b[j]} at {j - n}! Mismatching "
                                   f"argument at index {i} had {tuple(s)}; but expected shape should be broadcastable "
                                   f"to {shape_str(a)}")
            a[j] = a[j] if b[j] == 1 else b[j]
        out = a
    return Size(out)


def broadcast_tensors(*tensors):
    """The tensors expanded to their common shape (views; one that already has it is returned as is).

    >>> [t.shape for t in tapegrad.broadcast_tensors(tapegrad.zeros(2, 1), tapegrad.zeros(3))]
    [tapegrad.Size([2, 3]), tapegrad.Size([2, 3])]
    """
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    shape = tuple(broadcast_shapes(*(t._array.shape for t in tensors)))
    return tuple(t if t._array.shape == shape else expand(t, shape) for t in tensors)


# --- repeats -----------------------------------------------------------------------------------------------------
class Repeat(Primitive):
    """Tile the tensor ``repeats`` times along each dim (a copy)."""

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


def _repeat(self, *sizes):
    """``x.repeat(2, 1)``: tile along each dim (a copy; ``sizes`` may add leading dims)."""
    return Repeat.apply(self, _size_arg(sizes))


def tile(input, dims):
    """Like ``repeat``, but ``dims`` shorter than the tensor's ndim is padded with ones in front.

    >>> tapegrad.tile(tapegrad.tensor([1, 2]), (2,))
    tensor([1, 2, 1, 2])
    """
    dims = tuple(int(d) for d in dims)
    dims = (1,) * (_nd(input) - len(dims)) + dims
    return Repeat.apply(input, dims)


class _IndexSelect(Primitive):
    """``x`` indexed along ``dim`` by an integer array (``index_select``)."""

    node_name = "IndexSelectBackward0"

    @staticmethod
    def forward(ctx, x, dim, index):
        ctx.dim, ctx.index, ctx.size = dim, index, x.shape[dim]
        return np.take(x, index, axis=dim)

    @staticmethod
    def backward(ctx, grad):
        return _IndexAdd.apply(grad, ctx.dim, ctx.index, ctx.size), None, None


class _IndexAdd(Primitive):
    """Zeros with ``size`` along ``dim`` and ``g``'s slices added at ``index`` (the backward of index_select)."""

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


def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    """Repeat each element ``repeats`` times (an int, or a tensor of counts) along ``dim`` (flattened if None).

    ``repeat_interleave(counts)`` alone gives ``[0]*counts[0] + [1]*counts[1] + ...``.

    >>> tapegrad.tensor([1, 2]).repeat_interleave(2)
    tensor([1, 1, 2, 2])
    """
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

    @staticmethod
    def forward(ctx, x, dims):
        ctx.dims = dims
        return np.flip(x, dims).copy() if dims and x.ndim else x.copy()

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

    @staticmethod
    def forward(ctx, x, shifts, dims):
        ctx.shifts, ctx.dims = shifts, dims
        if dims is None:
            return np.roll(x.reshape(-1), shifts[0]).reshape(x.shape)
        return np.roll(x, shifts, dims)

    @staticmethod
    def backward(ctx, grad):
        return Roll.apply(grad, tuple(-s for s in ctx.shifts), ctx.dims), None, None


def roll(input, shifts, dims=None):
    """Shift cyclically by ``shifts`` along ``dims`` (or over the flattened tensor).

    >>> tapegrad.tensor([1, 2, 3]).roll(1)
    tensor([3, 1, 2])
    """
    shifts = (shifts,) if isinstance(shifts, int) else tuple(int(s) for s in shifts)
    if dims is None:
        if len(shifts) != 1:
            raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:0")
        return Roll.apply(input, shifts, None)
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    if len(shifts) != len(dims):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(dims)}")
    n = _nd(input)
    return Roll.apply(input, shifts, tuple(normalize_dim(d, n) for d in dims))


class Rot90(Primitive):
    """Rotate by 90 degrees ``k`` times in the plane of ``dims`` (a copy)."""

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


# --- slicing views: narrow, select, split, unbind ----------------------------------------------------------------
class _Basic(Primitive):
    """``x[key]`` for a basic (view-making) key; backward places the gradient back into zeros."""

    array_backward = True

    @staticmethod
    def forward(ctx, x, key):
        ctx.key, ctx.shape = key, x.shape
        return x[key]

    @staticmethod
    def backward(ctx, grad):
        return kernel(_BasicScatter, grad, ctx.key, ctx.shape), None


class _BasicScatter(Primitive):
    """Zeros of ``shape`` with ``g`` written at ``key`` (the backward of slicing; its own backward slices)."""

    node_name = "SliceScatterBackward0"

    @staticmethod
    def forward(ctx, g, key, shape):
        ctx.key = key
        out = np.zeros(shape, g.dtype)
        out[key] = g
        return out

    @staticmethod
    def backward(ctx, gg):
        return _Basic.apply(gg, ctx.key), None, None


class Slice(_Basic):
    """A contiguous range along one dim (``narrow``, ``tensor_split``)."""

    array_backward = True


class Select(_Basic):
    """One index along one dim (``select``); the dim is removed."""

    array_backward = True


def _slice_key(d, start, stop):
    return (slice(None),) * d + (slice(start, stop), Ellipsis)


def narrow(input, dim, start, length):
    """``length`` elements of dim ``dim`` from ``start`` (a view).

    >>> tapegrad.arange(5).narrow(0, 1, 3)
    tensor([1, 2, 3])
    """
    n = _nd(input)
    if n == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    d = normalize_dim(dim, n)
    size = input._array.shape[d]
    start, length = int(start), int(length)
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    if not -size <= start <= size:
        raise IndexError(f"start out of range (expected to be in range of [{-size}, {size}], but got {start})")
    if start < 0:
        start += size
    if start + length > size:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({size}).")
    key = _slice_key(d, start, start + length)
    return mark_view(Slice.apply(input, key), input, lambda x: x.narrow(d, start, length))


def select(input, dim, index):
    """The slice at ``index`` of dim ``dim``, with that dim removed (a view).

    >>> tapegrad.tensor([[1, 2], [3, 4]]).select(1, 0)
    tensor([1, 3])
    """
    n = _nd(input)
    if n == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = normalize_dim(dim, n)
    size = input._array.shape[d]
    index = int(index)
    if not -size <= index < size:
        raise IndexError(f"select(): index {index} out of range for tensor of size {shape_str(input._array.shape)} "
                         f"at dimension {dim}")
    index %= size
    key = (slice(None),) * d + (index, Ellipsis)
    return mark_view(Select.apply(input, key), input, lambda x: x.select(d, index))


def _multi_view_cls(name, node_name):
    """One node with several view outputs (``split``, ``unbind``): backward joins the gradients."""

    def forward(ctx, x, keys, d, stack_back):
        ctx.keys, ctx.d, ctx.stack, ctx.shape = keys, d, stack_back, x.shape
        return tuple(x[k] for k in keys)

    def backward(ctx, *grads):
        if ctx.stack:
            return stack(list(grads), ctx.d), None, None, None
        if not grads:
            return None, None, None, None
        return cat(list(grads), ctx.d), None, None, None

    return type(name, (Primitive,), {"forward": staticmethod(forward), "backward": staticmethod(backward),
                                     "node_name": node_name, "__doc__": f"{name}: several views in one node"})


SplitViews = _multi_view_cls("Split", "SplitBackward0")
SplitWithSizesViews = _multi_view_cls("SplitWithSizes", "SplitWithSizesBackward0")
UnbindViews = _multi_view_cls("Unbind", "UnbindBackward0")


def _split_sizes(input, d, sizes, cls):
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(int).tolist() if sizes else []
    keys = tuple(_slice_key(d, s, s + n) for s, n in zip(starts, sizes))
    if not keys:
        return ()
    outs = cls.apply(input, keys, d, False)
    for o, s, n in zip(outs, starts, sizes):
        mark_view(o, input, lambda x, s=s, n=n: x.narrow(d, s, n), multi=True)
    return outs


def split(tensor, split_size_or_sections, dim=0):
    """Split into pieces of ``split_size`` (the last may be smaller) or of the listed sizes; views.

    >>> [t.tolist() for t in tapegrad.arange(5).split(2)]
    [[0, 1], [2, 3], [4]]
    """
    n = _nd(tensor)
    if n == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    d = normalize_dim(dim, n)
    size = tensor._array.shape[d]
    if isinstance(split_size_or_sections, (list, tuple)):
        sizes = [int(s) for s in split_size_or_sections]
        if any(s < 0 for s in sizes):
            raise RuntimeError(f"split_with_sizes expects split_sizes have only non-negative entries, but got "
                               f"split_sizes={sizes}")
        if sum(sizes) != size:
            raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {size} (input tensor's size "
                               f"at dimension {d}), but got split_sizes={sizes}")
        return _split_sizes(tensor, d, sizes, SplitWithSizesViews)
    s = int(split_size_or_sections)
    if s < 0:
        raise RuntimeError(f"split expects split_size be non-negative, but got split_size={s}")
    if s == 0:
        if size != 0:
            raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension size of {size}")
        sizes = [0]
    else:
        sizes = [s] * (size // s) + ([size % s] if size % s else [])
        if not sizes:
            sizes = [0]
    return _split_sizes(tensor, d, sizes, SplitViews)


def chunk(input, chunks, dim=0):
    """Split into ``chunks`` pieces of equal size (the last may be smaller, and there may be fewer); views.

    >>> [t.tolist() for t in tapegrad.arange(5).chunk(2)]
    [[0, 1, 2], [3, 4]]
    """
    chunks = int(chunks)
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    n = _nd(input)
    if n == 0:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    d = normalize_dim(dim, n)
    size = input._array.shape[d]
    if size == 0:
        return _split_sizes(input, d, [0] * chunks, SplitWithSizesViews)
    return split(input, -(-size // chunks), d)


def tensor_split(input, indices_or_sections, dim=0):
    """Split into ``sections`` nearly equal pieces, or at the listed ``indices``; each piece is a view.

    >>> [t.tolist() for t in tapegrad.arange(5).tensor_split(2)]
    [[0, 1, 2], [3, 4]]
    """
    n = _nd(input)
    if n == 0:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims")
    d = normalize_dim(dim, n)
    size = input._array.shape[d]
    ios = indices_or_sections
    if isinstance(ios, Tensor):
        if ios._array.dtype.kind not in "iu":
            raise RuntimeError(f"tensor_split expected tensor_indices_or_sections to have integer dtype, but got "
                               f"{ios.dtype}")
        if ios._array.ndim > 1:
            raise RuntimeError("tensor_split expected tensor_indices_or_sections to be a zero-dimensional or "
                               f"one-dimensional tensor, but got a tensor with {ios._array.ndim} dims")
        ios = int(ios._array) if ios._array.ndim == 0 else ios._array.tolist()
    if isinstance(ios, (list, tuple)):
        bounds = [0] + [int(i) for i in ios] + [size]
        pieces = []
        for a, b in zip(bounds[:-1], bounds[1:]):
            a2 = min(max(a if a >= 0 else a + size, 0), size)
            b2 = min(max(b if b >= 0 else b + size, 0), size)
            pieces.append((a2, max(b2 - a2, 0)))
    else:
        s = int(ios)
        if s <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {s}")
        q, r = divmod(size, s)
        lens = [q + 1] * r + [q] * (s - r)
        starts = np.concatenate([[0], np.cumsum(lens)[:-1]]).astype(int).tolist()
        pieces = list(zip(starts, lens))
    return tuple(narrow(input, d, a, m) for a, m in pieces)


def unbind(input, dim=0):
    """All slices along ``dim``, that dim removed (views from one node).

    >>> tapegrad.tensor([[1, 2], [3, 4]]).unbind(1)
    (tensor([1, 3]), tensor([2, 4]))
    """
    n = _nd(input)
    if n == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    d = normalize_dim(dim, n)
    size = input._array.shape[d]
    keys = tuple((slice(None),) * d + (i, Ellipsis) for i in range(size))
    if not keys:
        return ()
    outs = UnbindViews.apply(input, keys, d, True)
    for i, o in enumerate(outs):
        mark_view(o, input, lambda x, i=i: x.select(d, i), multi=True)
    return outs


def split_with_sizes(input, split_sizes, dim=0):
    """``split`` with a list of sizes (views).

    >>> [t.tolist() for t in tapegrad.arange(3).split_with_sizes([1, 2])]
    [[0], [1, 2]]
    """
    return split(input, list(split_sizes), dim)


def _hvd_split(op, input, ios, min_dim, dim):
    n = _nd(input)
    if n < min_dim:
        raise RuntimeError(f"torch.{op} requires a tensor with at least {min_dim} dimension"
                           f"{'s' if min_dim > 1 else ''}, but got a tensor with {n} dimensions!")
    if isinstance(ios, int) and not isinstance(ios, bool):
        size = input._array.shape[dim]
        if ios == 0 or size % ios:
            raise RuntimeError(f"torch.{op} attempted to split along dimension {dim}, but the size of the dimension "
                               f"{size} is not divisible by the split_size {ios}!")
    return tensor_split(input, ios, dim)


def hsplit(input, indices_or_sections):
    """Split along dim 1 (dim 0 for 1-d input) into equal sections or at indices (views).

    >>> [t.shape for t in tapegrad.zeros(2, 4).hsplit(2)]
    [tapegrad.Size([2, 2]), tapegrad.Size([2, 2])]
    """
    return _hvd_split("hsplit", input, indices_or_sections, 1, 0 if _nd(input) == 1 else 1)


def vsplit(input, indices_or_sections):
    """Split along dim 0 into equal sections or at indices (views); needs at least 2 dims.

    >>> [t.shape for t in tapegrad.zeros(4, 2).vsplit(2)]
    [tapegrad.Size([2, 2]), tapegrad.Size([2, 2])]
    """
    return _hvd_split("vsplit", input, indices_or_sections, 2, 0)


def dsplit(input, indices_or_sections):
    """Split along dim 2 into equal sections or at indices (views); needs at least 3 dims.

    >>> [t.shape for t in tapegrad.zeros(1, 2, 4).dsplit(2)]
    [tapegrad.Size([1, 2, 2]), tapegrad.Size([1, 2, 2])]
    """
    return _hvd_split("dsplit", input, indices_or_sections, 3, 2)


class NarrowCopy(_Basic):
    """``narrow`` as a copy."""

    @staticmethod
    def forward(ctx, x, key):
        return _Basic.forward(ctx, x, key).copy()


def narrow_copy(input, dim, start, length):
    """Like ``narrow`` but a copy (not a view).

    >>> tapegrad.arange(5).narrow_copy(0, 1, 2)
    tensor([1, 2])
    """
    v = narrow(input.detach(), dim, start, length)     # validates the arguments as narrow does
    d = normalize_dim(dim, _nd(input))
    start = int(start) % input._array.shape[d] if int(start) < 0 else int(start)
    return NarrowCopy.apply(input, _slice_key(d, start, start + v._array.shape[d]))


class Unfold(Primitive):
    """All windows of ``size`` elements, ``step`` apart, along ``dim``; the window is a new last dim (a view)."""

    @staticmethod
    def forward(ctx, x, dim, size, step):
        ctx.args, ctx.shape = (dim, size, step), x.shape
        if x.ndim == 0:
            return x.reshape(1)
        n = x.shape[dim]
        shape = x.shape[:dim] + ((n - size) // step + 1,) + x.shape[dim + 1:] + (size,)
        strides = x.strides[:dim] + (x.strides[dim] * step,) + x.strides[dim + 1:] + (x.strides[dim],)
        return np.lib.stride_tricks.as_strided(x, shape, strides, writeable=x.flags.writeable)

    @staticmethod
    def backward(ctx, grad):
        return _UnfoldSum.apply(grad, *ctx.args, ctx.shape), None, None, None


class _UnfoldSum(Primitive):
    """The backward of ``unfold``: every window's gradient added back where it came from (overlaps add up)."""

    node_name = "UnfoldBackwardBackward0"

    @staticmethod
    def forward(ctx, g, dim, size, step, shape):
        ctx.args = (dim, size, step)
        if len(shape) == 0:
            return g.reshape(())
        nw = g.shape[dim]
        idx = (np.arange(nw)[:, None] * step + np.arange(size)[None, :])
        gm = np.moveaxis(g, dim, -2)
        out = np.zeros(gm.shape[:-2] + (shape[dim],), g.dtype)
        np.add.at(out, (Ellipsis, idx), gm)
        return np.moveaxis(out, -1, dim)

    @staticmethod
    def backward(ctx, gg):
        return Unfold.apply(gg, *ctx.args), None, None, None, None


def unfold(self, dimension, size, step):
    """``x.unfold(dim, size, step)``: sliding windows along ``dim`` as a new last dim (a view).

    >>> tapegrad.arange(5).unfold(0, 2, 2)
    tensor([[0, 1],
            [2, 3]])
    """
    n = _nd(self)
    d = normalize_dim(dimension, n)
    length = self._array.shape[d] if n else 1
    size, step = int(size), int(step)
    if size > length:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {length} but size is {size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    return mark_view(Unfold.apply(self, d, size, step), self, lambda x: unfold(x, d, size, step))


def _conj_if_complex(x):
    return x.conj() if x._array.dtype.kind == "c" and hasattr(x, "conj") else x


def adjoint(input):
    """The conjugate transpose of the last two dims (a view for real tensors).

    >>> tapegrad.zeros(2, 3).adjoint().shape
    tapegrad.Size([3, 2])
    """
    return _conj_if_complex(transpose(input, -2, -1))


def _mH(self):
    if _nd(self) < 2:
        raise RuntimeError(f"tensor.mH is only supported on matrices or batches of matrices. Got {_nd(self)}-D "
                           "tensor.")
    return adjoint(self)


def _H(self):
    n = _nd(self)
    if n == 0:
        return self
    if n != 2:
        raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got {n}-D tensor.")
    return _conj_if_complex(transpose(self, 0, 1))


# --- joins -------------------------------------------------------------------------------------------------------
def _legacy_empty(a):
    return a.ndim == 1 and a.shape[0] == 0


class Cat(Primitive):
    """Join tensors along an existing dim (torch's type promotion; 1-d empty tensors are skipped)."""

    @staticmethod
    def forward(ctx, dim, *xs):
        ctx.dim = dim
        ctx.shapes = [x.shape for x in xs]
        d = _dtype.result_type(*xs).np if len(xs) > 1 else xs[0].dtype
        keep = [x.astype(d, copy=False) for x in xs if not _legacy_empty(x)]
        if not keep:
            return np.zeros((0,), d)
        return np.concatenate(keep, axis=dim)

    @staticmethod
    def backward(ctx, grad):
        out, start = [None], 0
        for shp in ctx.shapes:
            if len(shp) == 1 and shp[0] == 0:
                out.append(Tensor._make(np.zeros((0,), grad._array.dtype)))
                continue
            n = shp[ctx.dim]
            out.append(Slice.apply(grad, _slice_key(ctx.dim, start, start + n)))
            start += n
        return tuple(out)


def cat(tensors, dim=0, *, out=None):
    """Join tensors along dim ``dim``; all must have the same shape except in that dim.

    >>> tapegrad.cat([tapegrad.zeros(1, 2), tapegrad.ones(2, 2)]).shape
    tapegrad.Size([3, 2])
    """
    tensors = list(tensors)
    if not tensors:
        raise ValueError("tapegrad.cat(): expected a non-empty list of Tensors")
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got {type(t).__name__}")
        if t._array.ndim == 0:
            raise RuntimeError(op_error("cat", f"zero-dimensional tensor (at position {i}) cannot be concatenated"))
    real = [(i, t._array.shape) for i, t in enumerate(tensors) if not _legacy_empty(t._array)]
    if not real:
        return _write_out("cat", Cat.apply(0, *tensors), out)
    ref_i, ref = real[0]
    d = normalize_dim(dim, len(ref))
    for i, shp in real[1:]:
        if len(shp) != len(ref):
            raise op_error("cat", f"Tensors must have same number of dimensions: got {len(ref)} and {len(shp)}")
        for k in range(len(ref)):
            if k != d and shp[k] != ref[k]:
                raise op_error("cat", f"Sizes of tensors must match except in dimension {d}. Expected size {ref[k]} "
                               f"but got size {shp[k]} for tensor number {i} in the list.")
    return _write_out("cat", Cat.apply(d, *tensors), out)


concat = concatenate = cat


class Stack(Primitive):
    """Join same-shape tensors along a new dim."""

    array_backward = True

    @staticmethod
    def forward(ctx, dim, *xs):
        ctx.dim = dim
        if not xs:
            raise RuntimeError("stack expects a non-empty TensorList")
        if any(x.shape != xs[0].shape for x in xs):
            bad = next(i for i, x in enumerate(xs) if x.shape != xs[0].shape)
            raise op_error("stack", f"stack expects each tensor to be equal size, but got {shape_str(xs[0].shape)} "
                           f"at entry 0 and {shape_str(xs[bad].shape)} at entry {bad}")
        d = _dtype.result_type(*xs).np if len(xs) > 1 else xs[0].dtype
        return np.stack([x.astype(d, copy=False) for x in xs], axis=dim)

    @staticmethod
    def backward(ctx, grad):
        d = ctx.dim
        if grad.__class__ is not Tensor:      # arrays: plain views
            return (None,) + tuple(grad[(slice(None),) * d + (i, Ellipsis)] for i in range(grad.shape[d]))
        return (None,) + tuple(Select.apply(grad, (slice(None),) * d + (i, Ellipsis))
                               for i in range(grad._array.shape[d]))


def stack(tensors, dim=0, *, out=None):
    """Join same-shape tensors along a new dim ``dim``.

    >>> tapegrad.stack([tapegrad.zeros(2), tapegrad.ones(2)]).shape
    tapegrad.Size([2, 2])
    """
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    n = _nd(tensors[0]) + 1
    return _write_out("stack", Stack.apply(normalize_dim(dim, n), *tensors), out)


def _atleast(n, tensors):
    single = len(tensors) == 1 and isinstance(tensors[0], Tensor)
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    out = []
    for t in tensors:
        k = _nd(t)
        if k >= n:
            out.append(t)
        elif k == 0:
            out.append(reshape(t, (1,) * n))
        elif n == 2 or (n == 3 and k == 1):
            u = unsqueeze(t, 0)
            out.append(unsqueeze(u, -1) if n == 3 else u)
        else:
            out.append(unsqueeze(t, -1))
    return out[0] if single else tuple(out)


def atleast_1d(*tensors):
    """Each tensor with at least 1 dim (0-d becomes shape [1]); one tensor in, one out.

    >>> tapegrad.atleast_1d(tapegrad.tensor(1.)).shape
    tapegrad.Size([1])
    """
    return _atleast(1, tensors)


def atleast_2d(*tensors):
    """Each tensor with at least 2 dims (1-d [n] becomes [1, n]).

    >>> tapegrad.atleast_2d(tapegrad.zeros(3)).shape
    tapegrad.Size([1, 3])
    """
    return _atleast(2, tensors)


def atleast_3d(*tensors):
    """Each tensor with at least 3 dims ([n] becomes [1, n, 1]; [m, n] becomes [m, n, 1]).

    >>> tapegrad.atleast_3d(tapegrad.zeros(3)).shape
    tapegrad.Size([1, 3, 1])
    """
    return _atleast(3, tensors)


def hstack(tensors, *, out=None):
    """Concatenate horizontally: along dim 0 for 1-d tensors, else dim 1.

    >>> tapegrad.hstack([tapegrad.zeros(2), tapegrad.ones(3)]).shape
    tapegrad.Size([5])
    """
    ts = atleast_1d(list(tensors))
    return cat(ts, 0 if _nd(ts[0]) == 1 else 1, out=out)


def vstack(tensors, *, out=None):
    """Concatenate vertically (rows): 1-d tensors become rows.

    >>> tapegrad.vstack([tapegrad.zeros(2), tapegrad.ones(2)]).shape
    tapegrad.Size([2, 2])
    """
    return cat(atleast_2d(list(tensors)), 0, out=out)


def dstack(tensors, *, out=None):
    """Concatenate depth-wise (dim 2), after ``atleast_3d``.

    >>> tapegrad.dstack([tapegrad.zeros(2), tapegrad.ones(2)]).shape
    tapegrad.Size([1, 2, 2])
    """
    return cat(atleast_3d(list(tensors)), 2, out=out)


def column_stack(tensors, *, out=None):
    """Concatenate as columns: 0-d and 1-d tensors become columns [n, 1], then join along dim 1.

    >>> tapegrad.column_stack([tapegrad.zeros(2), tapegrad.ones(2)]).shape
    tapegrad.Size([2, 2])
    """
    ts = [reshape(t, (t._array.size, 1)) if _nd(t) <= 1 else t for t in tensors]
    return cat(ts, 1, out=out)


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
    return _write_out("tril", Tril.apply(input, int(diagonal)), out)


def triu(input, diagonal=0, *, out=None):
    """The upper triangle (on and above ``diagonal``) of the last two dims; the rest zeroed.

    >>> tapegrad.ones(2, 2).triu()
    tensor([[1., 1.],
            [0., 1.]])
    """
    return _write_out("triu", Triu.apply(input, int(diagonal)), out)


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
    strides = tuple(b.strides[d] for d in rest) + (b.strides[d1] + b.strides[d2],)
    return np.lib.stride_tricks.as_strided(b, shape, strides, writeable=a.flags.writeable)


class Diagonal(Primitive):
    """The diagonal ``offset`` of dims ``dim1``, ``dim2`` as the last dim (a view)."""

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


# --- in-place view ops: the tensor itself takes the new shape -----------------------------------------------------
class TInplace(T):
    node_name = "TBackward1"
    array_backward = True


class TransposeInplace(Transpose):
    node_name = "TransposeBackward1"
    array_backward = True


class UnsqueezeInplace(Unsqueeze):
    node_name = "UnsqueezeBackward1"
    array_backward = True


Squeeze3, Squeeze4, Squeeze5 = (_squeeze_node(f"SqueezeBackward{i}") for i in (3, 4, 5))


def _inplace_view(self, cls, args, redo):
    """``x.t_()`` and friends: ``x`` becomes the view (same memory), its version is bumped, its history rebased."""
    if _state.enabled and self._rg:
        check_view_inplace(self, True)     # (the view's rules first, then the leaf's, as torch checks)
        if self.grad_fn is None:
            raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
    out = cls.apply(self, *args)
    self._array = out._array
    if out.grad_fn is not None:
        self.grad_fn, self._output_nr = out.grad_fn, 0
    if self._base is not None:
        root, f, how = self._base
        self._base = (root, lambda t, f=f: redo(f(t)), how)
    self._vc[0] += 1
    return self


def t_(self):
    """In-place ``t()``."""
    return _inplace_view(self, TInplace, (), lambda x: x.t())


def transpose_(self, dim0, dim1):
    """In-place ``transpose(dim0, dim1)``."""
    n = _nd(self)
    d0, d1 = normalize_dim(dim0, n), normalize_dim(dim1, n)
    return _inplace_view(self, TransposeInplace, (d0, d1), lambda x: x.transpose(d0, d1))


def unsqueeze_(self, dim):
    """In-place ``unsqueeze(dim)``."""
    d = normalize_dim(dim, _nd(self) + 1)
    return _inplace_view(self, UnsqueezeInplace, (d,), lambda x: x.unsqueeze(d))


def squeeze_(self, dim=None):
    """In-place ``squeeze(dim)``."""
    n = _nd(self)
    if dim is None:
        dims, cls = tuple(range(n)), Squeeze3
    elif isinstance(dim, (tuple, list)):
        dims, cls = tuple(normalize_dim(d, n) for d in dim) if n else (), Squeeze5
    else:
        dims, cls = (normalize_dim(dim, n),) if n else (), Squeeze4
    return _inplace_view(self, cls, (dims,), lambda x: x.squeeze(dim))


# --- contiguous ----------------------------------------------------------------------------------------------------
def _contiguous(self, memory_format=None):
    """``self`` if C-contiguous, else a contiguous copy (CloneBackward0)."""
    if self._array.flags.c_contiguous:
        return self
    from .elementwise import clone
    out = clone(self)
    out._array = np.ascontiguousarray(out._array)
    return out


bind(reshape=reshape, view=view, transpose=transpose, swapaxes=transpose, swapdims=transpose, permute=permute,
     movedim=movedim, moveaxis=movedim, t=t, unsqueeze=unsqueeze, squeeze=squeeze, expand=expand, T=property(_T),
     mT=property(_mT),
     view_as=lambda self, other: view(self, other._array.shape),
     reshape_as=lambda self, other: reshape(self, other._array.shape),
     expand_as=lambda self, other: expand(self, other._array.shape), broadcast_to=broadcast_to,
     flatten=flatten, unflatten=unflatten, ravel=ravel, contiguous=_contiguous, repeat=_repeat, tile=tile,
     repeat_interleave=repeat_interleave, flip=flip, fliplr=fliplr, flipud=flipud, roll=roll, rot90=rot90,
     split=split, chunk=chunk, tensor_split=tensor_split, unbind=unbind, narrow=narrow, select=select,
     tril=tril, triu=triu, diag=diag, diagonal=diagonal, diag_embed=diag_embed, diagflat=diagflat,
     split_with_sizes=split_with_sizes, hsplit=hsplit, vsplit=vsplit, dsplit=dsplit, narrow_copy=narrow_copy,
     unfold=unfold, adjoint=adjoint, mH=property(_mH), H=property(_H),
     t_=t_, transpose_=transpose_, swapaxes_=transpose_, swapdims_=transpose_, unsqueeze_=unsqueeze_,
     squeeze_=squeeze_, tril_=lambda self, diagonal=0: apply_inplace(self, tril, diagonal),
     triu_=lambda self, diagonal=0: apply_inplace(self, triu, diagonal))
