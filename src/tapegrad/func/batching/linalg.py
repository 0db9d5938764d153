"""Batching rules of the matrix products: every product becomes one ``matmul`` of the physical arrays, whose
leading dims are batch dims (a vector operand becomes a matrix and its dim is squeezed out afterwards)."""

from __future__ import annotations

import importlib

from ...ops.elementwise import arith as _ar
from ...ops.linalg import products as _p
from . import ldim, pad_to, register

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


@register(_lin._MmT)
def _mmt(level, cls, args, kwargs, phys):
    x, w = args
    pw = phys[1]
    return matmul(x, phys[0], w.transpose(-1, -2), pw.transpose(-1, -2) if pw is not None else None)


@register(_lin._Addmm)
def _addmm_linear(level, cls, args, kwargs, phys):
    bias, x, w = args
    pw = phys[2]
    out = matmul(x, phys[1], w.transpose(-1, -2), pw.transpose(-1, -2) if pw is not None else None)
    pb = phys[0]
    return _ar.Add.apply(pad_to(pb, ldim(bias), 2) if pb is not None else bias, out)


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
