# ruff: noqa: A001, A002 - torch's names (sum, max, all, any) and argument name (input)
"""Shared pieces of the reductions: the named tuples (``tapegrad.return_types``), dim / dtype argument
helpers, ``out=`` handling, and the gather / scatter along a dim that index-selecting reductions use as their
backward pair.
"""

from __future__ import annotations

import builtins
import types

import numpy as np

from ... import _dtype
from .._util import Primitive, Tensor, expand_to, normalize_dims, write_out


_bmax = builtins.max


# --- named tuples (torch.return_types) ------------------------------------------------------------------------
def _return_type(name, fields):
    def __repr__(self):
        body = ",\n".join(f"{f}={v!r}" for f, v in zip(fields, self))
        return f"tapegrad.return_types.{name}(\n{body})"

    def __new__(cls, *values):
        return tuple.__new__(cls, values)

    attrs = {"__slots__": (), "__repr__": __repr__, "__str__": __repr__, "__new__": __new__, "_fields": fields,
             "__module__": "tapegrad.return_types", "__doc__": f"``({', '.join(fields)})`` of ``{name}``."}
    for i, f in enumerate(fields):
        attrs[f] = property(lambda self, i=i: tuple.__getitem__(self, i))
    return type(name, (tuple,), attrs)


return_types = types.ModuleType("tapegrad.return_types", "Named tuples returned by ops, as torch.return_types.")
for _n in ("max", "min", "median", "nanmedian", "mode", "cummax", "cummin"):
    setattr(return_types, _n, _return_type(_n, ("values", "indices")))
return_types.aminmax = _return_type("aminmax", ("min", "max"))
return_types.frexp = _return_type("frexp", ("mantissa", "exponent"))
return_types.histogram = _return_type("histogram", ("hist", "bin_edges"))
return_types.histogramdd = _return_type("histogramdd", ("hist", "bin_edges"))


# --- helpers -------------------------------------------------------------------------------------------------
def _kept_shape(shape, dims):
    """The shape with each reduced dim kept as 1 (to broadcast a gradient back)."""
    return tuple(1 if i in dims else s for i, s in enumerate(shape))


def _expand_back(grad, shape, dims, keepdim):
    """Broadcast the gradient of a reduction back over the reduced dims (differentiable)."""
    if not keepdim and dims:
        grad = grad.reshape(_kept_shape(shape, dims))
    return expand_to(grad, shape)


def _const(arr, like):
    """A constant (no-grad) tensor with ``like``'s dtype."""
    return Tensor._make(np.asarray(arr, like._array.dtype))


def _dim_args(dim):
    """``dim`` as None (all dims), an int or a tuple (a list is a tuple; an empty one means all dims)."""
    if isinstance(dim, Tensor):
        dim = dim.tolist()
    if isinstance(dim, list):
        dim = tuple(dim)
    if isinstance(dim, tuple) and len(dim) == 0:
        dim = None
    return dim


def _axis(dims, ndim):
    return None if dims is None else normalize_dims(dims, ndim)


def _dtype_arg(dtype):
    return None if dtype is None else _dtype.to_dtype(dtype)


def _int_to_long(x, dtype):
    """torch's rule for sum-like ops: an explicit dtype wins; integer and bool inputs accumulate in int64."""
    if dtype is not None:
        return x.astype(dtype.np)
    if x.dtype.kind in "biu":
        return x.astype(np.int64)
    return x


def _legacy(a):
    return _dtype.from_numpy_dtype(a.dtype)._legacy


def _nonempty_dim(op, x, d):
    if x.ndim and x.shape[d] == 0:
        raise IndexError(f"{op}(): Expected reduction dim {d} to have non-zero size.")


def _evenly(x, res_keep, axis, nan_match):
    """Weights that split a gradient evenly between the elements equal to the reduced value (ties).

    ``nan_match`` (torch's ``evenly_distribute_backward``: ``max()``, ``median()``): a NaN result shares the
    gradient between the NaNs. Otherwise (``amax``, ``aminmax``: ``grad / count * mask``) a line whose result is
    NaN matches nothing and its gradient is NaN, as in torch.
    """
    if x.dtype.kind not in "fc":
        return None
    mask = (x == res_keep)
    if nan_match:
        mask |= np.isnan(x) & np.isnan(res_keep)
    cnt = mask.sum(axis=axis, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (mask / cnt).astype(x.dtype)


_write_out = write_out     # (the one implementation: ops/_util.py)


# --- gather / scatter along a dim (the backward pair of index-selecting reductions) --------------------------
def _open_index(idx, dim):
    ix = list(np.indices(idx.shape, sparse=True))
    ix[dim] = idx
    return tuple(ix)


class _TakeAlong(Primitive):
    """``x`` gathered at ``idx`` along ``dim`` (``idx`` has x's ndim); backward scatters back."""

    node_name = "GatherBackward0"

    @staticmethod
    def forward(ctx, x, idx, dim):
        ctx.idx, ctx.dim, ctx.shape = idx, dim, x.shape
        return np.take_along_axis(x, idx, dim)

    @staticmethod
    def backward(ctx, grad):
        return _PutAlong.apply(grad, ctx.idx, ctx.dim, ctx.shape), None, None


class _PutAlong(Primitive):
    """Zeros of ``shape`` with ``g`` added at ``idx`` along ``dim`` (duplicates accumulate)."""

    node_name = "ScatterAddBackward0"

    @staticmethod
    def forward(ctx, g, idx, dim, shape):
        ctx.idx, ctx.dim = idx, dim
        out = np.zeros(shape, g.dtype)
        if idx.shape[dim] == 1:           # one index per line (max, median, mode): no duplicates to add up
            np.put_along_axis(out, idx, g, dim)
        elif idx.size:
            np.add.at(out, _open_index(idx, dim), g)
        return out

    @staticmethod
    def backward(ctx, gg):
        return _TakeAlong.apply(gg, ctx.idx, ctx.dim), None, None, None


def _select_backward(grad, idx_keep, dim, shape, keepdim, zero_d):
    """Gradient of a value-selecting reduction: ``grad`` placed at the selected indices, zero elsewhere."""
    if zero_d:
        return grad.reshape(shape)
    if not keepdim:
        grad = grad.unsqueeze(dim)
    return _PutAlong.apply(grad, idx_keep, dim, shape)
