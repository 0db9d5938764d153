# ruff: noqa: A001, A002 - torch's names (sorted) and argument name (input)
"""masked_fill, masked_scatter, masked_select (and ``_where``, the masking helper of the backwards);
nonzero, argwhere; one_hot, tril_indices, triu_indices.
"""

from __future__ import annotations

import numpy as np

from ... import _dtype
from ...autograd.function import _active
from .._util import Primitive, Tensor, bind, broadcast_or_error, writes_out, _inside, array_op, transform_visible
from ._common import _arr, _inplace, _tensor, _zeros


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


def _row_major(a):
    return a if a.flags.c_contiguous else np.ascontiguousarray(a)     # (keeps a 0-d array 0-d)


class MaskedFill(Primitive):
    """``x`` (broadcast with ``mask``) with the masked positions set to the number ``value``."""

    @staticmethod
    def forward(ctx, x, mask, value):
        ctx.mask = mask
        return _row_major(np.where(mask, np.asarray(value).astype(x.dtype), x))   # (torch's: row-major)

    @staticmethod
    def backward(ctx, grad):
        return MaskedFill.apply(grad, ctx.mask, 0), None, None


class MaskedFillTensor(Primitive):
    """``masked_fill`` with a 0-d tensor value (differentiable in the value too)."""

    node_name = "MaskedFillBackward1"

    @staticmethod
    def forward(ctx, x, mask, value):
        ctx.mask = mask
        if value.dtype.kind == "c" and x.dtype.kind != "c":    # (checked: its imaginary part is 0)
            value = value.real
        return _row_major(np.where(mask, value.astype(x.dtype), x))

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
    if _active[0] and isinstance(mask, Tensor):            # (a transform sees the mask: vmap may batch it)
        m = mask
    if isinstance(value, Tensor):
        if value._array.ndim:
            raise RuntimeError(f"masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                               f"{value._array.ndim} dimension(s).")
        if not _active[0]:          # torch checks the value as a number (300 into int8: overflow, not a wrap)
            _dtype.check_scalar(value._array.item(), input.dtype)
        return MaskedFillTensor.apply(input, m, value)
    _dtype.check_scalar(value, input.dtype)          # (300 into int8: torch's overflow error, not a wrap-around)
    return MaskedFill.apply(input, m, value)


def _where(cond, a, b):
    """``cond ? a : b`` for a constant bool array ``cond`` (differentiable in a and b)."""
    c = _tensor(cond)
    return masked_fill(a, ~c, 0) + masked_fill(b, c, 0)


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
    if _active[0] and isinstance(mask, Tensor):            # (a transform sees the mask: vmap may batch it)
        m = mask
    if source.dtype is not input.dtype:
        raise RuntimeError(f"masked_scatter: expected self and source to have same dtypes but got"
                           f"{input.dtype._legacy} and {source.dtype._legacy}")
    return MaskedScatter.apply(input, m, source)


class MaskedSelect(Primitive):
    """The elements of ``x`` (broadcast with ``mask``) where ``mask`` is True, as a 1-d tensor."""

    data_shaped = True     # (the output's length is the mask's count: compile's replay checks it)

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


@writes_out(error="masked_select(): self and result must have the same scalar type", no_overlap=True)
def masked_select(input, mask, *, out=None):
    """The elements of ``input`` where ``mask`` is True (broadcast together), as a 1-d tensor.

    >>> tapegrad.tensor([1., 2., 3.]).masked_select(tapegrad.tensor([True, False, True]))
    tensor([1., 3.])
    """
    if _arr(mask).dtype != np.bool_:
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    m = _arr(mask)
    broadcast_or_error(m.shape, input._array.shape)      # (torch names the mask "tensor a")
    if _active[0] and isinstance(mask, Tensor):            # (a transform sees the mask: vmap may batch it)
        m = mask
    return MaskedSelect.apply(input, m)


# ============================================================================================================
# nonzero / argwhere
# ============================================================================================================
@writes_out(error="nonzero: Expected out tensor to have scalar type {r} but got scalar type{o}")
def nonzero(input, *, out=None, as_tuple=False):
    """Indices of the non-zero elements: an ``(n, ndim)`` int64 tensor, or one 1-d tensor per dim (as_tuple).

    >>> tapegrad.tensor([0, 3, 0, 4]).nonzero()
    tensor([[1],
            [3]])
    """
    if _active[0] and not _inside[0] and out is None:      # (a transform sees it as an op)
        return array_op(nonzero, False, (input,), {"as_tuple": as_tuple})
    a = input._array
    if as_tuple:
        return tuple(Tensor._make(i.astype(np.int64)) for i in np.nonzero(a.reshape(1) if a.ndim == 0 else a))
    return Tensor._make(np.argwhere(a).astype(np.int64))


@transform_visible()
def argwhere(input):
    """The same as ``nonzero(input)``: an ``(n, ndim)`` tensor of the indices of non-zero elements.

    >>> tapegrad.argwhere(tapegrad.tensor([[0, 1], [1, 0]]))
    tensor([[0, 1],
            [1, 0]])
    """
    return nonzero(input)


# ============================================================================================================
# one_hot, tril_indices, triu_indices
# ============================================================================================================
@transform_visible()
def one_hot(input, num_classes=-1):  # noqa: A002 - torch's parameter name (`F.one_hot(input=labels, ...)`)
    """``input`` (int64 class indices) as one-hot rows: a new last dim of size ``num_classes``.

    >>> one_hot(tapegrad.tensor([0, 2]), 3)
    tensor([[1, 0, 0],
            [0, 0, 1]])
    """
    a = input._array
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


bind(masked_fill=masked_fill, masked_scatter=masked_scatter, masked_select=masked_select, nonzero=nonzero,
     argwhere=argwhere, masked_fill_=_inplace(masked_fill), masked_scatter_=_inplace(masked_scatter))
