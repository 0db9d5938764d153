# ruff: noqa: A002 - torch's argument name (input)
"""Splits and joins, each the other's backward: the slicing views (narrow, select, split / chunk /
tensor_split / unbind / hsplit..., narrow_copy, ``Tensor.unfold``, adjoint ``.mH`` / ``.H``) and cat, stack and
their kin (hstack, vstack, dstack, column_stack, atleast_nd).
"""

from __future__ import annotations

import numpy as np

from ... import _dtype
from ...tensor import invalid_arguments
from .._util import (Primitive, Tensor, assert_no_overlap, bind, kernel, linear_jvp, mark_view, normalize_dim,
                     op_error, shape_str)
from ..reduce._common import _write_out
from .views import _nd, reshape, transpose, unsqueeze

# tapegrad.sparse sets this to its SparseTensor class when it loads: cat/stack of COO tensors stay COO tensors
SPARSE_JOIN = [None, None]     # (SparseTensor, its join function)


# --- slicing views: narrow, select, split, unbind ----------------------------------------------------------------
class _Basic(Primitive):
    """``x[key]`` for a basic (view-making) key; backward places the gradient back into zeros."""

    array_backward = True

    jvp = staticmethod(linear_jvp)   # linear: the op itself applied to the tangents

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

    jvp = staticmethod(linear_jvp)   # linear: the op itself applied to the tangents

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
    if isinstance(start, Tensor) and (start.ndim or start.dtype.is_floating_point or start.dtype.is_complex
                                      or start.dtype is _dtype.bool):
        raise RuntimeError("start must be an 0-dim integral Tensor.")
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
                                     "jvp": staticmethod(linear_jvp), "node_name": node_name,
                                     "__doc__": f"{name}: several views in one node"})


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
        raise RuntimeError(f"torch.{op} requires a tensor with at least {min_dim} dimension, but got a tensor with "
                           f"{n} dimensions!")
    if not isinstance(ios, (int, list, tuple)) or isinstance(ios, bool):
        raise invalid_arguments(op, (input, ios), [("Tensor input, int sections", True),
                                                   ("Tensor input, tuple of ints indices", True)])
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
    if 0 < _nd(input) <= dim:
        raise RuntimeError("Expected dim < static_cast<int64_t>(self_sizes.size()) to be true, but got false.  (Could "
                           "this error message be improved?  If so, please report an enhancement request to PyTorch.)")
    if length < 0:
        size = input.shape[normalize_dim(dim, _nd(input))]
        raise RuntimeError(f"start ({start + size if start < 0 else start}) + length ({length}) exceeds dimension "
                           f"size ({size}).")
    v = narrow(input.detach(), dim, start, length)     # validates the arguments as narrow does
    d = normalize_dim(dim, _nd(input))
    start = int(start) % input._array.shape[d] if int(start) < 0 else int(start)
    return NarrowCopy.apply(input, _slice_key(d, start, start + v._array.shape[d]))


class Unfold(Primitive):
    """All windows of ``size`` elements, ``step`` apart, along ``dim``; the window is a new last dim (a view)."""

    jvp = staticmethod(linear_jvp)   # linear: the op itself applied to the tangents

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

    jvp = staticmethod(linear_jvp)   # linear: the op itself applied to the tangents

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


def _join_jvp(ctx, tangents):
    """cat's and stack's tangent: the tangents joined, zeros for an input without one (of any dtype: an integer
    input is data here, not an index)."""
    ts = [t if t is not None else Tensor._make(np.zeros(a._array.shape, a._array.dtype))
          for a, t in zip(ctx.inputs[1:], tangents)]
    return ctx.op.apply(ctx.inputs[0], *ts)


def _order(a):
    """The dims of ``a`` outermost first (by decreasing stride), after a new dim 0."""
    return [0] + [1 + i for i in sorted(range(a.ndim), key=lambda i: -abs(a.strides[i]) if a.shape[i] > 1 else 0)]


def _joined_layout(out, parts):
    """torch's layout for cat/stack: channels-last where every input (for stack: every input with the new dim) is
    laid out so (``suggest_memory_format``), else row-major, whatever layouts the inputs have."""
    if out.ndim < 2:                 # (1-d: one layout)
        return out
    if out.ndim in (4, 5):
        from ..conv.convolution import _channels_last_layout
        if all(_channels_last_layout(p) for p in parts):
            perm = (0,) + tuple(range(2, out.ndim)) + (1,)
            return np.ascontiguousarray(out.transpose(perm)).transpose(np.argsort(perm))
    return out if out.flags.c_contiguous else np.ascontiguousarray(out)


class Cat(Primitive):
    """Join tensors along an existing dim (torch's type promotion; 1-d empty tensors are skipped)."""

    jvp = staticmethod(lambda ctx, _, *ts: _join_jvp(ctx, ts))   # linear: the tangents joined

    @staticmethod
    def forward(ctx, dim, *xs):
        ctx.dim = dim
        ctx.shapes = [x.shape for x in xs]
        d = _dtype.result_type(*xs).np if len(xs) > 1 else xs[0].dtype
        keep = [x.astype(d, copy=False) for x in xs if not _legacy_empty(x)]
        if not keep:
            return np.zeros((0,), d)
        return _joined_layout(np.concatenate(keep, axis=dim), keep)

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

# torch's words (a TypeError) for an out of cat/stack that the inputs' type can't be cast to
_CAT_OUT_ERROR = (TypeError, "torch.cat(): input types can't be cast to the desired output type {o}")



def _tensor_list(op, tensors, non_empty=False):
    """The tensors of a join as a list: torch refuses a single Tensor (it would iterate its rows) and, for the
    stacking helpers, an empty list."""
    if isinstance(tensors, Tensor):
        raise TypeError(f"{op}(): argument 'tensors' (position 1) must be tuple of Tensors, not Tensor")
    tensors = list(tensors)
    for t in tensors:          # (the class test first: this runs on every cat/stack)
        if t.__class__ is not Tensor and not isinstance(t, Tensor):
            i = next(i for i, u in enumerate(tensors) if not isinstance(u, Tensor))
            bad = tensors[i]
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got {type(bad).__name__}")
    if non_empty and not tensors:
        raise RuntimeError(f"{op} expects a non-empty TensorList")
    return tensors


def cat(tensors, dim=0, *, out=None):
    """Join tensors along dim ``dim``; all must have the same shape except in that dim.

    >>> tapegrad.cat([tapegrad.zeros(1, 2), tapegrad.ones(2, 2)]).shape
    tapegrad.Size([3, 2])
    """
    tensors = _tensor_list("cat", tensors)
    if not tensors:
        raise ValueError("tapegrad.cat(): expected a non-empty list of Tensors")
    if isinstance(out, Tensor):
        assert_no_overlap(out, tensors)
    for i, t in enumerate(tensors):
        if t._array.ndim == 0:
            raise RuntimeError(op_error("cat", f"zero-dimensional tensor (at position {i}) cannot be concatenated"))
    real = [(i, t._array.shape) for i, t in enumerate(tensors) if not _legacy_empty(t._array)]
    if not real:
        return _write_out("cat", Cat.apply(0, *tensors), out, error=_CAT_OUT_ERROR)
    ref_i, ref = real[0]
    d = normalize_dim(dim, len(ref))
    for i, shp in real[1:]:
        if len(shp) != len(ref):
            raise op_error("cat", f"Tensors must have same number of dimensions: got {len(ref)} and {len(shp)}")
        for k in range(len(ref)):
            if k != d and shp[k] != ref[k]:
                raise op_error("cat", f"Sizes of tensors must match except in dimension {d}. Expected size {ref[k]} "
                               f"but got size {shp[k]} for tensor number {i} in the list.")
    if tensors[0].__class__ is SPARSE_JOIN[0] and out is None:
        return SPARSE_JOIN[1]("cat", tensors, d, Cat.apply(d, *tensors))
    return _write_out("cat", Cat.apply(d, *tensors), out, error=_CAT_OUT_ERROR)


concat = concatenate = cat


class Stack(Primitive):
    """Join same-shape tensors along a new dim."""

    array_backward = True

    jvp = staticmethod(lambda ctx, _, *ts: _join_jvp(ctx, ts))   # linear: the tangents joined

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
        out = np.stack([x.astype(d, copy=False) for x in xs], axis=dim)
        if dim == 0 and out.ndim > 2:       # (torch: the inputs' cat layout under the new outermost dim; 1-d inputs
            #  have one layout)
            first = out[0]
            inner = _joined_layout(first, xs)
            if inner is not first:
                out = np.ascontiguousarray(out.transpose(*_order(inner))).transpose(np.argsort(_order(inner)))
        elif dim and out.ndim > 1 and not out.flags.c_contiguous:     # (torch: cat of the inputs unsqueezed at dim)
            out = _joined_layout(out, [np.expand_dims(x, dim) for x in xs])
        return out

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
    tensors = _tensor_list("stack", tensors)
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    n = _nd(tensors[0]) + 1
    if tensors[0].__class__ is SPARSE_JOIN[0] and out is None:
        d = normalize_dim(dim, n)
        return SPARSE_JOIN[1]("stack", tensors, d, Stack.apply(d, *tensors))
    return _write_out("stack", Stack.apply(normalize_dim(dim, n), *tensors), out, error=_CAT_OUT_ERROR)


def _atleast(n, tensors):
    single = len(tensors) == 1 and isinstance(tensors[0], Tensor)
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    _tensor_list("atleast", tensors)     # (torch's TypeError for an element that is no Tensor)
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
    ts = atleast_1d(_tensor_list("hstack", tensors, True))
    return cat(ts, 0 if _nd(ts[0]) == 1 else 1, out=out)


def vstack(tensors, *, out=None):
    """Concatenate vertically (rows): 1-d tensors become rows.

    >>> tapegrad.vstack([tapegrad.zeros(2), tapegrad.ones(2)]).shape
    tapegrad.Size([2, 2])
    """
    return cat(atleast_2d(_tensor_list("vstack", tensors, True)), 0, out=out)


def dstack(tensors, *, out=None):
    """Concatenate depth-wise (dim 2), after ``atleast_3d``.

    >>> tapegrad.dstack([tapegrad.zeros(2), tapegrad.ones(2)]).shape
    tapegrad.Size([1, 2, 2])
    """
    return cat(atleast_3d(_tensor_list("dstack", tensors, True)), 2, out=out)


def column_stack(tensors, *, out=None):
    """Concatenate as columns: 0-d and 1-d tensors become columns [n, 1], then join along dim 1.

    >>> tapegrad.column_stack([tapegrad.zeros(2), tapegrad.ones(2)]).shape
    tapegrad.Size([2, 2])
    """
    ts = [reshape(t, (t._array.size, 1)) if _nd(t) <= 1 else t
          for t in _tensor_list("column_stack", tensors, True)]
    return cat(ts, 1, out=out)


def _split_method(self, split_size, dim=0):
    """``Tensor.split``: torch names its size parameter ``split_size`` (``torch.split``'s is
    ``split_size_or_sections``), and programs pass it by keyword: ``x.split(split_size=[2, 3], dim=-1)``."""
    return split(self, split_size, dim)


bind(split=_split_method, chunk=chunk, tensor_split=tensor_split, unbind=unbind, narrow=narrow, select=select,
     split_with_sizes=split_with_sizes, hsplit=hsplit, vsplit=vsplit, dsplit=dsplit, narrow_copy=narrow_copy,
     unfold=unfold, adjoint=adjoint, mH=property(_mH), H=property(_H))
