# ruff: noqa: A002 - torch's argument name (input)
"""Combining tensors: meshgrid, block_diag, cartesian_prod, combinations, vander, row_stack, unravel_index.

They are built from the shape ops before them (expand, stack, cat, cumprod, flip), so their gradients and
grad_fn names are those of torch's own compositions; ``block_diag`` has its own node (BlockDiagBackward0).
"""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np

from ... import _dtype
from ...tensor import _varargs_keyword
from .._util import Primitive, Tensor, bind, transform_visible
from .split_join import cat, stack, vstack


def _tensor_list(args, op):
    """``f(a, b)`` or ``f([a, b])``: the tensors as a list."""
    if len(args) == 1 and isinstance(args[0], (list, tuple)):
        args = tuple(args[0])
    for i, t in enumerate(args):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got {type(t).__name__}")
    return list(args)


# --- meshgrid -------------------------------------------------------------------------------------------------
def meshgrid(*tensors, indexing=None):
    """Coordinate grids from 1-d (or 0-d) tensors: ``indexing="ij"`` (matrix order) or ``"xy"`` (the first two
    dims swapped, as NumPy's default). Without ``indexing`` it is "ij" with torch's warning. Each output is an
    expanded view of its input.

    >>> xs, ys = tapegrad.meshgrid(tapegrad.tensor([1, 2, 3]), tapegrad.tensor([4, 5]), indexing="ij")
    >>> xs.shape
    tapegrad.Size([3, 2])
    """
    tensors = _tensor_list(tensors, "meshgrid")
    if indexing is None:
        warnings.warn("torch.meshgrid: in an upcoming release, it will be required to pass the indexing argument.",
                      UserWarning, stacklevel=2)
        indexing = "ij"
    if not tensors:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    for t in tensors[1:]:
        if t.dtype is not tensors[0].dtype:
            raise RuntimeError("meshgrid expects all tensors to have the same dtype")
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f'torch.meshgrid: indexing must be one of "xy" or "ij", but received: {indexing}')
    for t in tensors:
        if t._array.ndim > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: "
                               f"tensor of shape {list(t.shape)}")
    swap = indexing == "xy" and len(tensors) >= 2
    order = list(range(len(tensors)))
    if swap:                                    # "xy": the grid of (y, x, ...) with the first two swapped
        order[0], order[1] = 1, 0
    sizes = [tensors[i].numel() for i in order]
    out = []
    for k, i in enumerate(order):
        shape = [1] * len(tensors)
        shape[k] = -1
        out.append((i, tensors[i].reshape(shape).expand(sizes)))
    out.sort(key=lambda p: p[0])
    return tuple(g for _, g in out)


# --- block_diag -----------------------------------------------------------------------------------------------
class BlockDiag(Primitive):
    """The matrices (2-d views of the inputs) along the diagonal of one zero matrix."""

    @staticmethod
    def jvp(ctx, *tangents):      # linear: the tangents' block matrix (zero blocks for inputs without one)
        return BlockDiag.apply(*(Tensor._make(np.zeros(x._array.shape, ctx.result._array.dtype)) if t is None else t
                                 for x, t in zip(ctx.inputs, tangents)))

    @staticmethod
    def forward(ctx, *xs):
        d = _dtype.result_type(*xs).np if xs else _dtype.get_default_dtype().np
        mats = [x.reshape(1, -1) if x.ndim < 2 else x for x in xs]
        rows, cols = sum(m.shape[0] for m in mats), sum(m.shape[1] for m in mats)
        out = np.zeros((rows if xs else 1, cols), d)
        r = c = 0
        ctx.spans = []
        for x, m in zip(xs, mats):
            out[r:r + m.shape[0], c:c + m.shape[1]] = m
            ctx.spans.append((r, m.shape[0], c, m.shape[1], x.shape))
            r, c = r + m.shape[0], c + m.shape[1]
        return out

    @staticmethod
    def backward(ctx, grad):
        need = ctx.needs_input_grad
        return tuple(grad.narrow(0, r, h).narrow(1, c, w).reshape(shape) if need[i] else None
                     for i, (r, h, c, w, shape) in enumerate(ctx.spans))


def block_diag(*tensors):
    """A block-diagonal matrix of the inputs (0-d: 1x1, 1-d: a row, 2-d as they are), in their promoted dtype.

    >>> tapegrad.block_diag(tapegrad.ones(1, 1), tapegrad.tensor([2., 3.]))
    tensor([[1., 0., 0.],
            [0., 2., 3.]])
    """
    tensors = list(tensors)
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got {type(t).__name__}")
        if t._array.ndim > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer dimensions. Input {i} has "
                               f"{t._array.ndim} dimensions")
    return BlockDiag.apply(*tensors)


# --- cartesian_prod, combinations ------------------------------------------------------------------------------
def _need_1d(t):
    if t._array.ndim != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(t.shape)}")


def cartesian_prod(*tensors):
    """The Cartesian product of 1-d tensors, one row per combination (itertools.product's order); one tensor is
    returned as it is.

    >>> tapegrad.cartesian_prod(tapegrad.tensor([1, 2]), tapegrad.tensor([3, 4]))
    tensor([[1, 3],
            [1, 4],
            [2, 3],
            [2, 4]])
    """
    tensors = _tensor_list(tensors, "cartesian_prod")
    for t in tensors:
        _need_1d(t)
    if len(tensors) == 1:
        return tensors[0]
    grids = meshgrid(*tensors, indexing="ij")
    return stack([g.flatten() for g in grids], 1)


def combinations(input, r=2, with_replacement=False):
    """The length-``r`` combinations of a 1-d tensor's elements, one per row (itertools' order).

    >>> tapegrad.combinations(tapegrad.tensor([1, 2, 3]))
    tensor([[1, 2],
            [1, 3],
            [2, 3]])
    """
    if not isinstance(input, Tensor):
        raise TypeError(f"combinations(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    _need_1d(input)
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return Tensor._make(np.zeros((0,), input._array.dtype))
    make = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    idx = np.array(list(make(range(input._array.shape[0]), r)), np.int64).reshape(-1, r)
    return stack([input[Tensor._make(np.ascontiguousarray(idx[:, k]))] for k in range(r)], 1)


# --- vander -----------------------------------------------------------------------------------------------------
def vander(x, N=None, increasing=False):  # noqa: N803 - torch's name
    """The Vandermonde matrix: columns ``x**(N-1), ..., x, 1`` (``increasing``: the other way round); integer
    inputs give int64.

    >>> tapegrad.vander(tapegrad.tensor([1, 2, 3]))
    tensor([[1, 1, 1],
            [4, 2, 1],
            [9, 3, 1]])
    """
    if not isinstance(x, Tensor):
        raise TypeError(f"vander(): argument 'x' (position 1) must be Tensor, not {type(x).__name__}")
    if x._array.ndim != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x._array.shape[0] if N is None else N
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    if x.dtype.is_floating_point or x.dtype.is_complex:
        d = x.dtype
    else:
        d = _dtype.promote_types(x.dtype, _dtype.int64)
        x = x.to(d)
    m = x._array.shape[0]
    if n == 0:
        result = Tensor._make(np.zeros((m, 0), d.np))
    else:
        ones = Tensor._make(np.ones((m, 1), d.np))
        result = ones if n == 1 else cat([ones, x.unsqueeze(1).expand(m, n - 1)], 1).cumprod(1)
    return result if increasing else result.flip(1)


# --- row_stack, unravel_index ---------------------------------------------------------------------------------
def row_stack(tensors, *, out=None):
    """``vstack`` (torch's alias).

    >>> tapegrad.row_stack([tapegrad.zeros(2), tapegrad.ones(2)]).shape
    tapegrad.Size([2, 2])
    """
    return vstack(tensors, out=out)


@transform_visible()
def unravel_index(indices, shape):
    """The coordinates of flat ``indices`` in a tensor of ``shape``: a tuple of int64 tensors, one per dim
    (indices out of range wrap around, as torch's).

    >>> tapegrad.unravel_index(tapegrad.tensor(4), (3, 2))
    (tensor(2), tensor(0))
    """
    if not isinstance(indices, Tensor):
        raise AttributeError(f"'{type(indices).__name__}' object has no attribute 'is_complex'")
    if indices.dtype.is_floating_point or indices.dtype.is_complex or indices.dtype is _dtype.bool:
        raise TypeError(f"expected 'indices' to be integer dtype, but got {indices.dtype}")
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, bool):
        shape = (int(shape),)
    elif not isinstance(shape, (list, tuple)):
        raise TypeError(f"expected 'shape' to be int or sequence of ints, but got {type(shape)}")
    for s in shape:
        if not isinstance(s, (int, np.integer)):
            raise TypeError(f"expected 'shape' sequence to only contain ints, but got {type(s)}")
    shape = tuple(int(s) for s in shape)
    if any(s < 0 for s in shape):
        raise ValueError(f"'shape' cannot have negative values, but got {shape}")
    if 0 in shape:                     # (torch divides or takes a remainder by each size)
        raise RuntimeError("ZeroDivisionError")
    strides = [math.prod(shape[k + 1:]) for k in range(len(shape))]
    flat = indices._array.astype(np.int64)
    return tuple(Tensor._make(np.asarray(np.mod(np.floor_divide(flat, st), s)))
                 for st, s in zip(strides, shape))


# --- sum_to_size --------------------------------------------------------------------------------------------------
def _sum_to_size(self, *size, **kw):
    """The sum of this tensor down to ``size`` (which must expand to its shape): ``expand``'s adjoint.

    >>> tapegrad.ones(2, 3).sum_to_size(1, 3)
    tensor([[2., 2., 2.]])
    """
    if kw:
        size = _varargs_keyword(size, kw, "sum_to_size", "size")
    if not size:
        raise TypeError('sum_to_size() missing 1 required positional arguments: "size"')
    if len(size) == 1 and isinstance(size[0], (list, tuple)):
        size = tuple(size[0])
    size = tuple(int(s) for s in size)
    shape = self._array.shape
    lead = len(shape) - len(size)
    if lead < 0 or any(s != 1 and s != shape[lead + k] for k, s in enumerate(size)):
        raise RuntimeError(f"size {{{list(size)}}} is not expandable to size {{{list(shape)}}}.")
    dims = tuple(range(lead)) + tuple(lead + k for k, s in enumerate(size) if s == 1 and shape[lead + k] != 1)
    if not dims:
        return self
    out = self.sum(dims, keepdim=True)
    return out.view(size) if lead else out


bind(sum_to_size=_sum_to_size)
