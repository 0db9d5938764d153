# ruff: noqa: A001, A002 - torch's names (sum, max, all, any) and argument name (input)
"""Scans: cumsum, cumprod, cummax, cummin (and cumsum_ / cumprod_).
"""

from __future__ import annotations

import numpy as np

from ... import _dtype
from ...autograd.grad_mode import _state
from .._util import Primitive, Tensor, apply_inplace, bind, cj, linear_jvp, normalize_dim, refuse_complex
from ._common import _PutAlong, _const, _dtype_arg, _int_to_long, _write_out, return_types


# --- scans ---------------------------------------------------------------------------------------------------------
def _scan_dim(x, dim):
    return normalize_dim(dim, x.ndim) if x.ndim else None


def _scan(np_fn, x, d, dtype):
    x = _int_to_long(x, dtype)
    if x.dtype == np.float16:       # torch accumulates Half in float32, each output rounded once
        return _scan(np_fn, x.astype(np.float32), d, None).astype(np.float16)
    if d is None:
        return np.asarray(np_fn(x.reshape(1), axis=0).reshape(()), x.dtype)
    out = np.asarray(np_fn(x, axis=d), x.dtype)
    return out if out.flags.c_contiguous else np.ascontiguousarray(out)   # (torch's scans write row-major)


def _rev_cumsum(g, d):
    if d is None:
        return g
    return g.flip(d).cumsum(d).flip(d)


class Cumsum(Primitive):
    """Running sum along ``dim``; integer and bool inputs give int64."""

    jvp = staticmethod(linear_jvp)   # linear: the op itself applied to the tangents

    @staticmethod
    def forward(ctx, x, d, dtype=None):
        ctx.d = d
        return _scan(np.cumsum, x, d, dtype)

    @staticmethod
    def backward(ctx, grad):
        return _rev_cumsum(grad, ctx.d), None, None


def _cumprod_grad_zeros(g, x, out, d):
    """First-order gradient of cumprod with zeros, O(n) per line (NumPy: no graph is being recorded).

    With ``z`` the first zero of a line: before it, ``revcumsum(grad * out) / x`` (the outputs from ``z`` on are 0);
    at it, ``prod(x[:z]) * sum_{k >= z} grad_k * prod(x[z+1:k+1])``; after it, 0.
    """
    g, x, out = (np.moveaxis(a, d, -1) for a in (g, x, out))
    n = x.shape[-1]
    ar = np.arange(n)
    zero = x == 0
    z = np.where(zero.any(-1), zero.argmax(-1), n)[..., None]
    before = ar < z
    with np.errstate(invalid="ignore", divide="ignore"):
        rev = np.flip(np.cumsum(np.flip(g * out, -1), -1), -1)
        res = np.where(before, rev / np.where(before, x, 1), 0)
    q = np.cumprod(np.where(ar <= z, 1, x), -1)
    at_zero = np.sum(np.where(ar >= z, g * q, 0), -1, keepdims=True) * np.prod(np.where(before, x, 1), -1,
                                                                                 keepdims=True)
    res = res + np.where(ar == z, at_zero, 0)
    return np.moveaxis(res.astype(x.dtype, copy=False), -1, d)


def _cumprod_backward(grad, x, result, d):
    if d is None or x._array.size == 0:
        return grad
    if not (x._array == 0).any():
        return _rev_cumsum(grad * result, d) / x
    if not _state.enabled:    # first order only: the O(n) formula
        return Tensor._make(_cumprod_grad_zeros(grad._array, x._array, result._array, d))
    # create_graph: sum_{k >= i} grad_k * prod_{j <= k, j != i} x_j, with an (n, n) table per line (exact to any
    # order, O(n^2) like torch's double-differentiable path)
    n = x._array.shape[d]
    xm = x.movedim(d, -1)
    eye = np.eye(n, dtype=x._array.dtype)
    rows = xm.unsqueeze(-2).expand(xm._array.shape[:-1] + (n, n)) * _const(1 - eye, x) + _const(eye, x)
    table = rows.cumprod(-1) * _const(np.triu(np.ones((n, n))), x)
    return (table * grad.movedim(d, -1).unsqueeze(-2)).sum(-1).movedim(-1, d)


class Cumprod(Primitive):
    """Running product along ``dim``; the gradient is exact with zeros."""

    @staticmethod
    def forward(ctx, x, d, dtype=None):
        ctx.d = d
        ctx.save_result(0)
        if x.dtype.kind == "c":
            ctx._cplx = True
        return _scan(np.cumprod, x, d, dtype)

    @staticmethod
    def backward(ctx, grad):
        result, x = ctx.saved_tensors
        if ctx._cplx:      # the conjugate derivative: the same products of the conjugates
            result, x = cj(result), cj(x)
        return _cumprod_backward(grad, x, result, ctx.d), None, None


def _cum_extreme_idx(x, d, largest):
    acc = np.maximum if largest else np.minimum
    vals = acc.accumulate(x, axis=d)
    hit = x == vals
    if x.dtype.kind == "f":
        hit |= np.isnan(x)
    ar = np.arange(x.shape[d]).reshape([-1 if i == d else 1 for i in range(x.ndim)])
    idx = np.maximum.accumulate(np.where(hit, ar, 0), axis=d)
    return vals, idx.astype(np.int64)


def _cum_select_cls(name, node_name, largest):
    def forward(ctx, x, d):
        ctx.d, ctx.shape = d, x.shape
        if d is None:
            return x.copy(), np.zeros((), np.int64)
        vals, idx = _cum_extreme_idx(x, d, largest)
        ctx.idx = idx
        return vals, idx

    def backward(ctx, grad, _gidx):
        if ctx.d is None:
            return grad, None
        return _PutAlong.apply(grad, ctx.idx, ctx.d, ctx.shape), None

    return type(name, (Primitive,), {"forward": staticmethod(forward), "backward": staticmethod(backward),
                                     "node_name": node_name, "__doc__": "running extreme (values, indices)"})


Cummax = _cum_select_cls("Cummax", "CummaxBackward0", True)
Cummin = _cum_select_cls("Cummin", "CumminBackward0", False)


def _scan_out_dtype(op, out):
    if out.dtype is _dtype.bool:
        raise NotImplementedError(f'"{op}_out_cpu" not implemented for \'Bool\'')
    return out.dtype


def cumsum(input, dim, *, dtype=None, out=None):
    """Running sum along ``dim``.

    >>> tapegrad.tensor([1., 2., 3.]).cumsum(0)
    tensor([1., 3., 6.])
    """
    if out is not None and dtype is None:   # torch scans in the out tensor's dtype (not in bool)
        dtype = _scan_out_dtype("cumsum", out)
    return _write_out("cumsum", Cumsum.apply(input, _scan_dim(input._array, dim), _dtype_arg(dtype)), out)


def cumprod(input, dim, *, dtype=None, out=None):
    """Running product along ``dim``.

    >>> tapegrad.tensor([1., 2., 3.]).cumprod(0)
    tensor([1., 2., 6.])
    """
    if out is not None and dtype is None:   # torch scans in the out tensor's dtype (not in bool)
        dtype = _scan_out_dtype("cumprod", out)
    return _write_out("cumprod", Cumprod.apply(input, _scan_dim(input._array, dim), _dtype_arg(dtype)), out)


def cummax(input, dim, *, out=None):
    """Running max along ``dim`` with the index where it was reached (ties: the latest).

    >>> tapegrad.tensor([1., 3., 2.]).cummax(0).values
    tensor([1., 3., 3.])
    """
    refuse_complex(input, "cummax_cpu")
    res = return_types.cummax(*Cummax.apply(input, _scan_dim(input._array, dim)))
    return _write_out("cummax", res, out, dtype="same", error="expected scalar_type {r} but found {o}")


def cummin(input, dim, *, out=None):
    """Running min along ``dim`` with the index where it was reached (ties: the latest).

    >>> tapegrad.tensor([3., 1., 2.]).cummin(0).values
    tensor([3., 1., 1.])
    """
    refuse_complex(input, "cummin_cpu")
    res = return_types.cummin(*Cummin.apply(input, _scan_dim(input._array, dim)))
    return _write_out("cummin", res, out, dtype="same", error="expected scalar_type {r} but found {o}")


bind(cumsum=cumsum, cumprod=cumprod, cummax=cummax, cummin=cummin,
     cumsum_=lambda self, dim, *, dtype=None: apply_inplace(self, cumsum, dim, dtype=dtype),
     cumprod_=lambda self, dim, *, dtype=None: apply_inplace(self, cumprod, dim, dtype=dtype))
