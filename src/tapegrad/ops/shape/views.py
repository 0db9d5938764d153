# ruff: noqa: A002 - torch's argument name (input)
"""The view ops that keep every element: reshape / view / flatten / unflatten, the dim permutations
(transpose, permute, movedim, t, ``.T`` / ``.mT``), squeeze / unsqueeze / expand and broadcasting, their in-place
forms (``t_``, ``transpose_``, ``squeeze_``, ``unsqueeze_``) and ``contiguous``; with the shape helpers.
"""

from __future__ import annotations

import math
import warnings
from operator import index as _index

import numpy as np

from ... import _argtypes, _dtype
from ...autograd.grad_mode import _state
from ...tensor import Size, _varargs_keyword, int_arg
from .. import _util
from .._util import (Primitive, Tensor, bind, broadcast_or_error, check_view_inplace, linear_jvp, mark_view,
                     normalize_dim, shape_str)


def _nd(x):
    return x._array.ndim


def _size_arg(shape):
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    try:
        return tuple(map(_index, shape))      # (ints only, as torch's parser: ``view(2.0, 3)`` is its TypeError)
    except TypeError:
        err = _argtypes.from_stack()
        if err is None:
            raise
        raise err from None


def _infer_shape(shape, numel):
    shape = list(shape)
    if shape.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    if any(s < -1 for s in shape):
        raise RuntimeError(f"invalid shape dimension {next(s for s in shape if s < -1)}")
    if -1 in shape:
        known = math.prod(s for s in shape if s != -1)
        if known == 0 and numel == 0:
            raise RuntimeError(f"cannot reshape tensor of 0 elements into shape {shape_str(shape)} because the "
                               "unspecified dimension size -1 can be any value and is ambiguous")
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
    def jvp(ctx, t, *_):           # linear (the tangent may be laid out otherwise: reshaped, copying if need be)
        return ctx.op.apply(t, ctx.inputs[1])

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


def reshape(input, *shape, **kw):
    """The same elements in a new shape (a view when possible); one dim may be -1.

    >>> tapegrad.arange(6).reshape(2, 3)
    tensor([[0, 1, 2],
            [3, 4, 5]])
    """
    if kw:
        shape = _varargs_keyword(shape, kw, "reshape", "shape")
    shape = _size_arg(shape)
    a = input._array
    cls = View if _try_view(a, _infer_shape(shape, a.size)) is not None else UnsafeView
    return mark_view(cls.apply(input, shape), input, lambda t, s=shape: t.reshape(s))


def view(input, *shape, **kw):
    """Like ``reshape`` but never copies (an error says when ``reshape`` is needed); ``view(dtype)`` reinterprets.

    >>> tapegrad.zeros(2, 3).view(6).shape
    tapegrad.Size([6])
    """
    if kw:
        shape = (kw.pop("dtype"),) if not shape and list(kw) == ["dtype"] else \
            _varargs_keyword(shape, kw, "view", "size")
    if len(shape) == 1 and isinstance(shape[0], Tensor):
        shape = (int_arg(shape[0]),)
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

    jvp = staticmethod(linear_jvp)   # linear: the op itself applied to the tangents

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

    jvp = staticmethod(linear_jvp)   # linear: the op itself applied to the tangents

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

    jvp = staticmethod(linear_jvp)   # linear: the op itself applied to the tangents

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


def permute(input, *dims, **kw):
    """Reorder the dims (a view): ``x.permute(2, 0, 1)``.

    >>> tapegrad.zeros(2, 3, 4).permute(2, 0, 1).shape
    tapegrad.Size([4, 2, 3])
    """
    if kw:
        dims = _varargs_keyword(dims, kw, "permute", "dims")
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

    jvp = staticmethod(linear_jvp)   # linear: the op itself applied to the tangents

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
        jvp = staticmethod(linear_jvp)

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

    jvp = staticmethod(linear_jvp)   # linear: the op itself applied to the tangents

    @staticmethod
    def forward(ctx, x, shape):
        ctx.in_shape = x.shape
        return np.broadcast_to(x, _expand_shape(x, shape))

    @staticmethod
    def backward(ctx, grad):
        from .._util import sum_to_shape
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


def expand(input, *sizes, implicit=False, **kw):
    """Broadcast to ``sizes`` without copying; -1 keeps a dim (``x.expand(3, -1)``).

    >>> tapegrad.zeros(3, 1).expand(3, 4).shape
    tapegrad.Size([3, 4])
    """
    if kw:
        sizes = _varargs_keyword(sizes, kw, "expand", "size")
    shape = _size_arg(sizes)
    return mark_view(Expand.apply(input, shape), input, lambda x: x.expand(shape))


def broadcast_to(input, size):
    """``input.expand(size)`` (a view).

    >>> tapegrad.broadcast_to(tapegrad.zeros(3), (2, 3)).shape
    tapegrad.Size([2, 3])
    """
    if not isinstance(size, (tuple, list)):     # (the function takes a sequence; the method takes ints too)
        raise TypeError(f"broadcast_to(): argument 'size' (position 2) must be tuple of ints, not "
                        f"{type(size).__name__}")
    return expand(input, tuple(size))


def _broadcast_to_method(self, *size, **kw):
    """``x.broadcast_to(2, 3)``, ``x.broadcast_to(3)`` and ``x.broadcast_to((2, 3))``: the sizes as ``expand`` takes
    them (kornia's masks call ``mask.broadcast_to(n)``)."""
    if kw:
        size = _varargs_keyword(size, kw, "broadcast_to", "size")
    return expand(self, *size)


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
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got {type(t).__name__}")
    shape = broadcast_or_error(*(t._array.shape for t in tensors)) if tensors else ()
    return tuple(t if t._array.shape == shape else expand(t, shape) for t in tensors)


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
    if self._view is not None:
        root, f, how = self._view
        self._view = (root, lambda t, f=f: redo(f(t)), how)
    self._vc[0] += 1
    hooks = _util._inplace_tangents
    if hooks is not None:         # (forward AD: the tangent takes the new shape; a capture: x is now out's value)
        hooks.reshaped(self, out)
    if _util._vmap_write is not None:      # (a vmap: x now stands for out's batched tensor)
        from ...func._vmap import rebind_view
        rebind_view(self, out)
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
    """``self`` if C-contiguous (or laid out as ``memory_format`` asks: ``tapegrad.channels_last``), else a copy
    laid out so (CloneBackward0)."""
    from ...tensor import _is_in_format, contiguous_format, preserve_format
    fmt = contiguous_format if memory_format is None else memory_format
    if fmt is contiguous_format and self._array.flags.c_contiguous or _is_in_format(self._array, fmt):
        return self
    if fmt is preserve_format:
        raise RuntimeError("preserve memory format is unsupported by the contiguous operator")
    from ..elementwise import clone
    return clone(self, memory_format=fmt)


bind(reshape=reshape, view=view, transpose=transpose, swapaxes=transpose, swapdims=transpose, permute=permute,
     movedim=movedim, moveaxis=movedim, t=t, unsqueeze=unsqueeze, squeeze=squeeze, expand=expand, T=property(_T),
     mT=property(_mT),
     view_as=lambda self, other: view(self, other._array.shape),
     reshape_as=lambda self, other: reshape(self, other._array.shape),
     expand_as=lambda self, other: expand(self, other._array.shape), broadcast_to=_broadcast_to_method,
     flatten=flatten, unflatten=unflatten, ravel=ravel, contiguous=_contiguous,
     t_=t_, transpose_=transpose_, swapaxes_=transpose_, swapdims_=transpose_, unsqueeze_=unsqueeze_,
     squeeze_=squeeze_)
