"""Shape ops: views and rearrangements. Every view shares memory (and the version counter) with its input."""

from __future__ import annotations

import math

import numpy as np

from ._util import Primitive, Tensor, bind, mark_view, normalize_dim, op_error, shape_str

__all__ = ["reshape", "transpose", "permute", "unsqueeze", "squeeze", "stack", "t"]


def _infer_shape(shape, numel):
    shape = list(shape)
    if shape.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    if -1 in shape:
        known = math.prod(s for s in shape if s != -1)
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{shape_str(shape)}' is invalid for input of size {numel}")
        shape[shape.index(-1)] = numel // known
    if math.prod(shape) != numel:
        raise RuntimeError(f"shape '{shape_str(shape)}' is invalid for input of size {numel}")
    return tuple(shape)


class View(Primitive):
    """The same data seen with another shape (``view`` requires it to be possible without a copy)."""

    @staticmethod
    def forward(ctx, x, shape, must_view=False):
        shape = _infer_shape(shape, x.size)
        ctx.in_shape = x.shape
        if must_view:
            out = x.view()
            try:
                out.shape = shape
            except AttributeError:
                raise RuntimeError("view size is not compatible with input tensor's size and stride (at least one "
                                   "dimension spans across two contiguous subspaces). Use .reshape(...) instead."
                                   ) from None
            return out
        return x.reshape(shape)

    @staticmethod
    def backward(ctx, grad):
        return grad.reshape(ctx.in_shape), None, None


def reshape(input, *shape):
    """The same elements in a new shape (a view when possible); one dim may be -1.

    >>> tapegrad.arange(6).reshape(2, 3)
    tensor([[0, 1, 2],
            [3, 4, 5]])
    """
    shape = _size_arg(shape)
    return mark_view(View.apply(input, shape), input, lambda t, s=shape: t.reshape(s))


def view(input, *shape):
    """Like ``reshape`` but never copies (an error says when ``reshape`` is needed); ``view(dtype)`` reinterprets."""
    if len(shape) == 1 and not isinstance(shape[0], (int, tuple, list, np.integer)):
        from .. import _dtype
        d = _dtype.to_dtype(shape[0])
        return Tensor._make(input._array.view(d.np))
    shape = _size_arg(shape)
    out = View.apply(input, shape, True)
    return mark_view(out, input, lambda t, s=shape: t.view(s))


def _size_arg(shape):
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    return tuple(int(s) for s in shape)


class Transpose(Primitive):
    """Swap two dims."""

    @staticmethod
    def forward(ctx, x, dim0, dim1):
        ctx.dims = (dim0, dim1)
        return np.swapaxes(x, dim0, dim1) if x.ndim else x.view()

    @staticmethod
    def backward(ctx, grad):
        return grad.transpose(*ctx.dims), None, None


class Permute(Primitive):
    """Reorder dims."""

    @staticmethod
    def forward(ctx, x, dims):
        ctx.dims = dims
        return np.transpose(x, dims)

    @staticmethod
    def backward(ctx, grad):
        return grad.permute(tuple(np.argsort(ctx.dims).tolist())), None


class T(Primitive):
    """``x.t()``: transpose of a matrix (a 0-d or 1-d tensor is returned as is)."""

    @staticmethod
    def forward(ctx, x):
        if x.ndim > 2:
            raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {x.ndim}D")
        return x.T

    @staticmethod
    def backward(ctx, grad):
        return grad.t()


class Unsqueeze(Primitive):
    """Insert a dim of size 1."""

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


class Expand(Primitive):
    """Broadcast to a larger shape without copying (-1 keeps a dim)."""

    @staticmethod
    def forward(ctx, x, shape):
        ctx.in_shape = x.shape
        lead = len(shape) - x.ndim
        if lead < 0:
            raise RuntimeError(f"expand(torch.FloatTensor{{{shape_str(x.shape)}}}, size={shape_str(shape)}): the "
                               "number of sizes provided "
                               f"({len(shape)}) must be greater or equal to the number of dimensions in the tensor "
                               f"({x.ndim})")
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
        return np.broadcast_to(x, tuple(target))

    @staticmethod
    def backward(ctx, grad):
        from ._util import sum_to_shape
        return sum_to_shape(grad, ctx.in_shape), None


def transpose(input, dim0, dim1):
    """Swap dims ``dim0`` and ``dim1`` (a view)."""
    n = input._array.ndim
    d0, d1 = normalize_dim(dim0, n), normalize_dim(dim1, n)
    return mark_view(Transpose.apply(input, d0, d1), input, lambda x: x.transpose(d0, d1))


def permute(input, *dims):
    """Reorder the dims (a view): ``x.permute(2, 0, 1)``."""
    dims = _size_arg(dims)
    n = input._array.ndim
    if len(dims) != n:
        raise RuntimeError(f"permute(sparse_coo): number of dimensions in the tensor input does not match the "
                           f"length of the desired ordering of dimensions i.e. input.dim() = {n} is not equal to "
                           f"len(dims) = {len(dims)}")
    dims = tuple(normalize_dim(d, n) for d in dims)
    if len(set(dims)) != n:
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return mark_view(Permute.apply(input, dims), input, lambda x: x.permute(dims))


def t(input):
    """Transpose a matrix (``x.t()``)."""
    return mark_view(T.apply(input), input, lambda x: x.t())


def unsqueeze(input, dim):
    """Insert a dim of size 1 at ``dim`` (a view)."""
    d = normalize_dim(dim, input._array.ndim + 1)
    return mark_view(Unsqueeze.apply(input, d), input, lambda x: x.unsqueeze(d))


def squeeze(input, dim=None):
    """Remove dims of size 1 (all, or those in ``dim``)."""
    n = input._array.ndim
    if dim is None:
        dims, cls = tuple(range(n)), Squeeze0
    elif isinstance(dim, (tuple, list)):
        dims, cls = tuple(normalize_dim(d, n) for d in dim), Squeeze2
    else:
        dims, cls = (normalize_dim(dim, n),) if n else (), Squeeze1
    return mark_view(cls.apply(input, dims), input, lambda x: x.squeeze(dim))


def expand(input, *sizes):
    """Broadcast to ``sizes`` without copying; -1 keeps a dim (``x.expand(3, -1)``)."""
    shape = _size_arg(sizes)
    return mark_view(Expand.apply(input, shape), input, lambda x: x.expand(shape))


def _T(self):
    n = self._array.ndim
    return permute(self, tuple(range(n - 1, -1, -1)))


def _mT(self):
    if self._array.ndim < 2:
        raise RuntimeError("tensor.mT is only supported on matrices or batches of matrices. Got 1-D tensor.")
    return transpose(self, -2, -1)


class Stack(Primitive):
    """Join tensors along a new dim."""

    @staticmethod
    def forward(ctx, dim, *xs):
        ctx.dim = dim
        if not xs:
            raise RuntimeError("stack expects a non-empty TensorList")
        if any(x.shape != xs[0].shape for x in xs):
            bad = next(i for i, x in enumerate(xs) if x.shape != xs[0].shape)
            raise op_error("stack", f"stack expects each tensor to be equal size, but got {shape_str(xs[0].shape)} "
                           f"at entry 0 and {shape_str(xs[bad].shape)} at entry {bad}")
        from .. import _dtype
        d = _dtype.result_type(*xs).np
        return np.stack([x.astype(d, copy=False) for x in xs], axis=dim)

    @staticmethod
    def backward(ctx, grad):
        idx = (slice(None),) * ctx.dim
        return (None,) + tuple(grad[idx + (i,)] for i in range(grad._array.shape[ctx.dim]))


def stack(tensors, dim=0, *, out=None):
    """Join same-shape tensors along a new dim ``dim``."""
    tensors = list(tensors)
    n = tensors[0]._array.ndim + 1 if tensors else 1
    return Stack.apply(normalize_dim(dim, n), *tensors)


def _flatten(self, start_dim=0, end_dim=-1):
    n = self._array.ndim
    if n == 0:
        return reshape(self, (1,))
    s, e = normalize_dim(start_dim, n), normalize_dim(end_dim, n)
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    shp = self._array.shape
    return reshape(self, shp[:s] + (math.prod(shp[s:e + 1]),) + shp[e + 1:])


bind(reshape=reshape, view=view, transpose=transpose, swapaxes=transpose, swapdims=transpose, permute=permute,
     t=t, unsqueeze=unsqueeze, squeeze=squeeze, expand=expand, T=property(_T), mT=property(_mT),
     view_as=lambda self, other: view(self, other._array.shape),
     reshape_as=lambda self, other: reshape(self, other._array.shape),
     expand_as=lambda self, other: expand(self, other._array.shape), flatten=_flatten,
     contiguous=lambda self, memory_format=None: self if self._array.flags.c_contiguous else
     _contig(self))


def _contig(self):
    from .elementwise import clone
    out = clone(self)
    out._array = np.ascontiguousarray(out._array)
    return out

