"""Reductions: sum, mean (and, from the op library, the rest), over all dims or ``dim`` with ``keepdim``."""

from __future__ import annotations

import numpy as np

from .. import _dtype
from ._util import Primitive, Tensor, bind, normalize_dims

__all__ = ["sum", "mean"]


def _kept_shape(shape, dims):
    """The shape with each reduced dim kept as 1 (to broadcast a gradient back)."""
    return tuple(1 if i in dims else s for i, s in enumerate(shape))


def _expand_back(grad, shape, dims, keepdim):
    """Broadcast the gradient of a reduction back over the reduced dims (differentiable)."""
    if not keepdim and dims:
        grad = grad.reshape(_kept_shape(shape, dims))
    return grad.expand(shape)


class Sum(Primitive):
    """Sum over ``dims`` (all when None); integer and bool inputs sum to int64, as in torch."""

    @staticmethod
    def forward(ctx, x, dims=None, keepdim=False, dtype=None):
        ctx.shape, ctx.dims, ctx.keepdim = x.shape, normalize_dims(dims, x.ndim), keepdim
        if dtype is not None:
            x = x.astype(dtype.np)
        elif x.dtype.kind in "biu":
            x = x.astype(np.int64)
        axis = ctx.dims if dims is not None else None
        return np.sum(x, axis=axis, keepdims=keepdim)

    @staticmethod
    def backward(ctx, grad):
        return _expand_back(grad, ctx.shape, ctx.dims, ctx.keepdim), None, None, None


class Mean(Primitive):
    """Mean over ``dims`` (all when None); floating inputs only, as in torch."""

    @staticmethod
    def forward(ctx, x, dims=None, keepdim=False, dtype=None):
        if dtype is not None:
            x = x.astype(dtype.np)
        elif x.dtype.kind not in "fc":
            raise RuntimeError("mean(): could not infer output dtype. Input dtype must be either a floating "
                               f"point or complex dtype. Got: {_dtype.from_numpy_dtype(x.dtype)._legacy}")
        ctx.shape, ctx.dims, ctx.keepdim = x.shape, normalize_dims(dims, x.ndim), keepdim
        ctx.count = int(np.prod([x.shape[d] for d in ctx.dims])) if x.ndim else 1
        with np.errstate(invalid="ignore", divide="ignore"):
            out = np.mean(x, axis=ctx.dims if dims is not None else None, keepdims=keepdim)
        return np.asarray(out, x.dtype)

    @staticmethod
    def backward(ctx, grad):
        return _expand_back(grad, ctx.shape, ctx.dims, ctx.keepdim) / ctx.count, None, None, None


def _dim_args(dim, keepdim, extra):
    """Accept ``sum(x, 0)``, ``sum(x, 0, True)``, ``sum(x, (0, 1))`` and ``sum(x, 0, 1)``-free torch forms."""
    if isinstance(dim, list):
        dim = tuple(dim)
    if isinstance(dim, tuple) and len(dim) == 0:
        dim = None
    return dim, keepdim


def sum(input, dim=None, keepdim=False, *, dtype=None):  # noqa: A001 - torch's name
    """Sum of elements, over all dims or ``dim`` (int or tuple), keeping reduced dims if ``keepdim``.

    >>> tapegrad.tensor([[1., 2.], [3., 4.]]).sum(0)
    tensor([4., 6.])
    """
    dim, keepdim = _dim_args(dim, keepdim, None)
    if dtype is not None:
        dtype = _dtype.to_dtype(dtype)
    return (Sum if dim is None else SumDim).apply(input, dim, keepdim, dtype)


def mean(input, dim=None, keepdim=False, *, dtype=None):
    """Mean of elements, over all dims or ``dim`` (int or tuple).

    >>> tapegrad.tensor([1., 2., 3.]).mean()
    tensor(2.)
    """
    dim, keepdim = _dim_args(dim, keepdim, None)
    if dtype is not None:
        dtype = _dtype.to_dtype(dtype)
    return (Mean if dim is None else MeanDim).apply(input, dim, keepdim, dtype)


class SumDim(Sum):
    node_name = "SumBackward1"


class MeanDim(Mean):
    node_name = "MeanBackward1"


bind(sum=sum, mean=mean)
