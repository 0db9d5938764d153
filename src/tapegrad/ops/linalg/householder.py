# ruff: noqa: A002 - torch's argument names (input, A, tau)
"""Householder reflectors (loaded on first use): ``geqrf`` (LAPACK's packed QR), ``linalg.householder_product``
/ ``orgqr`` (Q from the reflectors) and ``ormqr`` (Q, or Q^H, times a matrix).

``geqrf`` is NumPy's ``qr(mode="raw")`` (LAPACK geqrf; NumPy returns the packed matrix transposed); torch gives
it no derivative, and neither does tapegrad (the error is torch's). The products are compositions: Q = H_1 H_2
... H_k with H_i = I - tau_i v_i v_i^H, v_i = (0, ..., 0, 1, A[i+1:, i]), applied one reflector at a time as
Q - tau_i (Q v_i) v_i^H, so their gradients (of every order, with respect to the reflectors and to tau) are the
ops'.
"""

from __future__ import annotations

import numpy as np

from .._util import castable, Primitive, bind, shape_str, writes_out
from ._common import _const, _dtname, _no_half, _rt
from ..shape.split_join import cat
from .products import matmul
from .._util import autocast_listed

__all__ = ["householder_product", "orgqr", "ormqr", "geqrf"]

geqrf_rt = _rt("geqrf", ["a", "tau"])


class Geqrf(Primitive):
    """LAPACK's geqrf: R in the upper triangle, the reflectors below it, and their scales tau."""

    @staticmethod
    def forward(ctx, a):
        m, n = a.shape[-2:]
        k = min(m, n)
        if a.size == 0:
            return a.copy(), np.zeros(a.shape[:-2] + (k,), a.dtype)
        h, tau = np.linalg.qr(a, mode="raw")
        return np.ascontiguousarray(np.swapaxes(h, -1, -2)).astype(a.dtype), np.asarray(tau, a.dtype)

    @staticmethod
    def backward(ctx, ga, gtau):
        raise NotImplementedError("the derivative for 'geqrf' is not implemented.")


@writes_out(dtype="cast", error=castable("torch.geqrf", "a", "tau"))
@autocast_listed("fp32")
def geqrf(input, *, out=None):
    """(a, tau): QR as LAPACK's geqrf packs it (R on and above the diagonal, the Householder vectors below).

    >>> a, tau = tapegrad.geqrf(tapegrad.tensor([[3., 1.], [4., 2.]]))
    >>> a[0, 0]
    tensor(-5.)
    """
    a = input._array
    if a.ndim < 2:
        raise RuntimeError("torch.geqrf: input must have at least 2 dimensions.")
    if a.dtype.kind not in "fc":
        raise RuntimeError(f"torch.geqrf: Expected a floating point or complex tensor as input. Got {_dtname(a)}")
    _no_half(a, "geqrf_cpu")
    return geqrf_rt(*Geqrf.apply(input))


def _reflector(A, i):
    """v_i = (0, ..., 0, 1, A[i+1:, i]) over the batch, (..., m)."""
    m = A.shape[-2]
    dt = A._array.dtype
    head = _const(np.concatenate([np.zeros(i, dt), np.ones(1, dt)]))
    if A.ndim > 2:
        head = head.expand(A.shape[:-2] + (i + 1,))
    return cat([head, A[..., i + 1:, i]], -1) if i + 1 < m else head


def _reflect_all(A, tau, X, left=True, adjoint=False):
    """Q X (``left``) or X Q, Q = H_1 ... H_k from the reflectors in A's columns (``adjoint``: Q^H), one
    reflector at a time: H_i X = X - tau_i v_i (v_i^H X), X H_i = X - tau_i (X v_i) v_i^H."""
    k = tau.shape[-1]
    cplx = A._array.dtype.kind == "c"
    order = range(k - 1, -1, -1) if left != adjoint else range(k)
    for i in order:
        v = _reflector(A, i)
        vh = v.conj() if cplx else v
        t = tau[..., i]
        if adjoint and cplx:
            t = t.conj()
        t = t.unsqueeze(-1).unsqueeze(-1)
        if left:
            X = X - t * v.unsqueeze(-1) * matmul(vh.unsqueeze(-2), X)
        else:
            X = X - t * matmul(X, v.unsqueeze(-1)) * vh.unsqueeze(-2)
    return X


def _check_reflectors(op, A, tau):
    a, t = A._array, tau._array
    _no_half(a, "orgqr_cpu")
    if a.ndim < 2:
        raise RuntimeError(f"torch.{op}: input must have at least 2 dimensions.")
    if a.shape[-2] < a.shape[-1]:
        raise RuntimeError(f"torch.{op}: input.shape[-2] must be greater than or equal to input.shape[-1]")
    if a.shape[-1] < t.shape[-1]:
        raise RuntimeError(f"torch.{op}: input.shape[-1] must be greater than or equal to tau.shape[-1]")
    if t.ndim != a.ndim - 1:
        raise RuntimeError(f"torch.{op}: Expected tau to have one dimension less than input, but got "
                           f"tau.ndim equal to {t.ndim} and input.ndim is equal to {a.ndim}")
    if a.shape[:-2] != t.shape[:-1]:
        raise RuntimeError(f"torch.{op}: Expected batch dimensions of tau to be equal to input.shape[:-2], but got "
                           f"{shape_str(t.shape[:-1])}")
    if a.dtype != t.dtype:
        raise RuntimeError(f"torch.{op}: tau dtype {_dtname(t)} does not match input dtype {_dtname(a)}")


@writes_out(dtype="cast", error=castable("torch.linalg.householder_product"))
@autocast_listed("fp32")
def householder_product(A, tau, *, out=None):
    """The first n columns of H_1 ... H_k, H_i = I - tau_i v_i v_i^H (v_i: 1 at i, A's column i below it).

    >>> a, tau = tapegrad.geqrf(tapegrad.tensor([[3., 1.], [4., 2.]]))
    >>> tapegrad.linalg.householder_product(a, tau)
    tensor([[-0.6000, -0.8000],
            [-0.8000,  0.6000]])
    """
    _check_reflectors("linalg.householder_product", A, tau)
    m, n = A.shape[-2:]
    eye = _const(np.eye(m, n, dtype=A._array.dtype))
    if tau.shape[-1] == 0:
        return _NoReflector.apply(A, tau)
    return _reflect_all(A, tau, eye.expand(A.shape[:-2] + (m, n)) if A.ndim > 2 else eye)


class _NoReflector(Primitive):
    """``householder_product`` of no reflector: the identity's first n columns, a node of the graph (as torch's
    result is) through which no gradient flows."""

    node_name = "LinalgHouseholderProductBackward0"

    @staticmethod
    def forward(ctx, a, tau):
        m, n = a.shape[-2:]
        return np.ascontiguousarray(np.broadcast_to(np.eye(m, n, dtype=a.dtype), a.shape))

    @staticmethod
    def backward(ctx, grad):
        return None, None


@autocast_listed("fp32")
def orgqr(input, tau):
    """torch.orgqr: ``linalg.householder_product``."""
    _check_reflectors("orgqr", input, tau)
    return householder_product(input, tau)


@writes_out(error="torch.ormqr: Expected input and result to have the same dtype, but input has dtype{r} and result "
                  "has dtype {o}")
@autocast_listed("fp32")
def ormqr(input, tau, other, left=True, transpose=False, *, out=None):
    """Q @ other (``left=False``: other @ Q; ``transpose``: Q^H), Q = H_1 ... H_k from ``geqrf``'s output.

    >>> a, tau = tapegrad.geqrf(tapegrad.tensor([[3., 1.], [4., 2.]]))
    >>> tapegrad.ormqr(a, tau, tapegrad.eye(2))
    tensor([[-0.6000, -0.8000],
            [-0.8000,  0.6000]])
    """
    a, c, t = input._array, other._array, tau._array      # torch's checks, in its order and words
    for name, arr in (("input", a), ("other", c)):
        if arr.ndim < 2:
            raise RuntimeError(f"torch.ormqr: {name} must have at least 2 dimensions.")
    side = "other.shape[-2]" if left else "other.shape[-1]"
    if (c.shape[-2] if left else c.shape[-1]) != a.shape[-2]:
        raise RuntimeError(f"torch.ormqr: {side} must be equal to input.shape[-2]")
    if t.ndim == 0 or t.shape[-1] != min(c.shape[-2] if left else c.shape[-1], a.shape[-1]):
        raise RuntimeError(f"torch.ormqr: tau.shape[-1] must be equal to min({side}, input.shape[-1])")
    if t.ndim != a.ndim - 1:
        raise RuntimeError(f"torch.ormqr: Expected tau to have one dimension less than input, but got tau.ndim "
                           f"equal to {t.ndim} and input.ndim is equal to {a.ndim}")
    if c.ndim != a.ndim:
        raise RuntimeError(f"torch.ormqr: Expected other to have the same number of dimensions as input, but got "
                           f"other.ndim equal to {c.ndim} and input.ndim is equal to {a.ndim}")
    for name, arr in (("tau", t), ("other", c)):
        if arr.shape[:a.ndim - 2] != a.shape[:-2]:
            raise RuntimeError(f"torch.ormqr: Expected batch dimensions of {name} to be equal to input.shape[:-2], "
                               f"but got {shape_str(arr.shape[:a.ndim - 2])}")
    for name, x in (("tau", tau), ("other", other)):
        if x.dtype is not input.dtype:
            raise RuntimeError(f"torch.ormqr: Expected input and {name} to have the same dtype, but input has dtype"
                               f"{input.dtype._legacy} and {name} has dtype {x.dtype._legacy}")
    return _reflect_all(input, tau, other, bool(left), bool(transpose))


bind(geqrf=geqrf, orgqr=orgqr, ormqr=ormqr)
