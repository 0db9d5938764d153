"""Batching rules of the matrix products: every product becomes one ``matmul`` of the physical arrays, whose
leading dims are batch dims (a vector operand becomes a matrix and its dim is squeezed out afterwards)."""

from __future__ import annotations

import importlib

from ...ops.elementwise import arith as _ar
from ...ops.linalg import products as _p
import numpy as np

from ...autograd.function import Primitive
from ...tensor import Tensor
from . import ldim, materialize, pad_to, phys_dim, register, register_names

_lin = importlib.import_module("tapegrad.ops.nn_ops.linear")   # (the package's name `linear` is the function)


def matmul(a, pa, b, pb):
    """The physical ``a @ b`` (a logical product of the logical ``a``, ``b``; ``pa``/``pb`` their physical tensors
    or None)."""
    na, nb = ldim(a), ldim(b)
    A = pa if pa is not None else a
    B = pb if pb is not None else b
    if na == 1:
        A = A.unsqueeze(-2)
    if nb == 1:
        B = B.unsqueeze(-1)
    ra, rb = max(na, 2), max(nb, 2)
    r = max(ra, rb)
    if pa is not None:
        A = pad_to(A, ra, r)
    if pb is not None:
        B = pad_to(B, rb, r)
    out = _p.Matmul.apply(A, B)
    if nb == 1:
        out = out.squeeze(-1)
    if na == 1:
        out = out.squeeze(-1 if nb == 1 else -2)
    return out


@register(_p.Matmul, _p.Mm, _p.Bmm, _p.Mv, _p.Dot, _p.VecMat, _p.Vdot)
def _products(level, cls, args, kwargs, phys):
    a, b = args[0], args[1]
    if ldim(a) == 0 or ldim(b) == 0:
        return NotImplemented
    pa, pb = phys[0], phys[1]
    if cls is _p.Vdot:
        if pa is not None:
            pa = pa.conj()
        else:
            a = a.conj()
    return matmul(a, pa, b, pb)


class BatchedLinear(Primitive):
    """Per-sample ``linear``: ``x`` (B, N, in), ``w`` (B, out, in), ``b`` (B, out) or None -> (B, N, out). A weight
    that is one weight expanded along the batch (stride 0: the common case, a parameter differentiated per sample)
    takes one matrix product for the whole batch; the per-sample weight gradient of a single row (N = 1) is an
    outer product per sample (einsum: faster than broadcasting, and than B products with an inner size of 1)."""

    node_name = "BatchedLinearBackward0"
    array_backward = True

    @staticmethod
    def forward(ctx, x, w, b):
        ctx.save_inputs(0, 1)
        ctx.has_bias = b is not None
        B, N, k = x.shape
        if w.strides[0] == 0:
            y = (x.reshape(B * N, k) @ w[0].T).reshape(B, N, w.shape[1])
        else:
            y = np.matmul(x, w.swapaxes(-1, -2))
        if b is not None:
            if b.dtype == y.dtype:
                y += b[:, None, :]      # (y is the product's new array)
            else:
                y = y + b[:, None, :]
        return y

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        need = ctx.needs_input_grad
        gx = gw = gb = None
        if g.__class__ is Tensor:           # (recorded: ordinary ops, differentiable again)
            if need[0]:
                gx = g @ w
            if need[1]:
                gw = g.transpose(-1, -2) @ x
            if need[2]:
                gb = g.sum(1)
            return gx, gw, gb
        B, N, o = g.shape
        if need[0]:
            gx = (g.reshape(B * N, o) @ w[0]).reshape(B, N, w.shape[2]) if w.strides[0] == 0 else np.matmul(g, w)
        if need[1]:
            gw = np.einsum("bo,bi->boi", g[:, 0], x[:, 0]) if N == 1 else np.matmul(g.swapaxes(-1, -2), x)
        if need[2]:
            gb = g.sum(1)
        return gx, gw, gb


def _linear(level, x, px, w, pw, b, pb):
    """The physical ``linear(x, w, b)`` of a batched call."""
    n = ldim(x)
    if pw is None and pb is None:            # only the input batched: one product for the whole batch
        X2 = px.reshape((-1, px.shape[-1]))
        y = _lin._Addmm.apply(b, X2, w) if b is not None else _lin._MmT.apply(X2, w)
        return y.reshape(tuple(px.shape[:-1]) + (w.shape[0],))
    if ldim(w) != 2 or n not in (1, 2) or (b is not None and ldim(b) != 1):
        y = matmul(x, px, w.transpose(-1, -2), pw.transpose(-1, -2) if pw is not None else None)
        return y if b is None else _ar.Add.apply(pad_to(pb, 1, 2) if pb is not None and n == 2 else
                                                 (pb if pb is not None else b), y)
    X = materialize(level, x, px)
    if n == 1:
        X = X.unsqueeze(1)
    W = materialize(level, w, pw)
    Bb = materialize(level, b, pb) if b is not None else None
    y = BatchedLinear.apply(X, W, Bb)
    return y.squeeze(1) if n == 1 else y


@register(_lin._MmT)
def _mmt(level, cls, args, kwargs, phys):
    x, w = args
    return _linear(level, x, phys[0], w, phys[1], None, None)


@register(_lin._Addmm)
def _addmm_linear(level, cls, args, kwargs, phys):
    bias, x, w = args
    return _linear(level, x, phys[1], w, phys[2], bias, phys[0])


@register(_p.Addmm, _p.Addmv, _p.Baddbmm)
def _addmm(level, cls, args, kwargs, phys):
    inp, a, b, beta, alpha = args
    if ldim(a) == 0 or ldim(b) == 0:
        return NotImplemented
    out = matmul(a, phys[1], b, phys[2])
    if alpha != 1:
        out = out * alpha
    rank = {_p.Addmm: 2, _p.Addmv: 1, _p.Baddbmm: 3}[cls]
    pin = phys[0]
    if beta == 0:
        return out
    c = pad_to(pin, ldim(inp), rank) if pin is not None else inp
    if beta != 1:
        c = c * beta
    return _ar.Add.apply(c, out)


def _trailing(min_rank):
    """Ops on the trailing dims whose leading dims are batch dims already (the decompositions on the last two dims,
    padding, pixel shuffle): the physical input as it is, when only the input is batched."""
    def rule(level, cls, args, kwargs, phys):
        if phys[0] is None or any(p is not None for p in phys[1:]) or ldim(args[0]) < min_rank:
            return NotImplemented
        if cls.__name__ == "LinalgQr" and args[1] == "r":      # (its Q is an empty placeholder, not batched)
            return NotImplemented
        return cls.apply(phys[0], *args[1:], **kwargs)
    return rule


register_names({"tapegrad.ops.linalg.decompositions": "LinalgCholeskyEx LinalgEigh LinalgPinv LinalgQr LinalgSvd",
                "tapegrad.ops.linalg.solvers": "LinalgDet LinalgInvEx LinalgMatrixExp LinalgSlogdet"}, _trailing(2))
register_names({"tapegrad.ops.conv.resampling": "PixelShuffle"}, _trailing(3))


def _pad(level, cls, args, kwargs, phys):
    x, widths = args[0], args[1]
    if phys[0] is None or len(widths) // 2 > ldim(x):
        return NotImplemented
    return cls.apply(phys[0], *args[1:], **kwargs)


register_names({"tapegrad.ops.conv.resampling": "ConstantPadNd"}, _pad)


def _cross(level, cls, args, kwargs, phys):
    from .elementwise import broadcast_args
    a, b, dim = args
    n = max(ldim(a), ldim(b))
    d = phys_dim(dim, n)
    if d is None:
        return NotImplemented
    pa, pb = broadcast_args((a, b), phys[:2])
    return cls.apply(pa, pb, d, **kwargs)


register_names({"tapegrad.ops.linalg.contractions": "LinalgCross"}, _cross)
