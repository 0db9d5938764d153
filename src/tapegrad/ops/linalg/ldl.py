# ruff: noqa: A002 - torch's argument names (A, B, LD)
"""The LDL factorisation of symmetric (or Hermitian) matrices (loaded on first use): ``linalg.ldl_factor``,
``ldl_factor_ex`` and ``ldl_solve``.

NumPy has no LDL, so this is LAPACK's ``sytf2`` / ``hetf2`` with the lower triangle (what torch calls) written
out: Bunch-Kaufman diagonal pivoting, 1 x 1 and 2 x 2 blocks of D, the pivots in LAPACK's convention (k + 1 for
a 1 x 1 block that swapped rows k and ipiv - 1; the same negative number twice for a 2 x 2 block), and ``sytrs``
for the solve. One matrix at a time (the pivoting decisions are per matrix). torch gives these functions no
derivative, and neither does tapegrad (torch's error, from a node named ``NotImplemented``).
"""

from __future__ import annotations

import numpy as np

from .._util import Primitive, shape_str, writes_out
from ._common import _batch_prefix, _check_float, _first_bad, _rt, _info

__all__ = ["ldl_factor", "ldl_factor_ex", "ldl_solve"]

linalg_ldl_factor_rt = _rt("linalg_ldl_factor", ["LD", "pivots"])
linalg_ldl_factor_ex_rt = _rt("linalg_ldl_factor_ex", ["LD", "pivots", "info"])
_ALPHA = (1 + 17 ** 0.5) / 8


def _cabs1(x):
    """LAPACK's i?amax measure: |re| + |im| for complex numbers."""
    return np.abs(x.real) + np.abs(x.imag) if np.iscomplexobj(x) else np.abs(x)


def _sytf2(a: np.ndarray, herm: bool):
    """One matrix: (LD with the upper triangle zeroed, pivots int32, info) of Bunch-Kaufman on the lower triangle."""
    A = np.tril(a).astype(a.dtype, copy=True)
    n = A.shape[0]
    cj = np.conjugate if herm and np.iscomplexobj(A) else (lambda v: v)
    if herm and np.iscomplexobj(A):
        A[np.diag_indices(n)] = A.diagonal().real
    piv = np.zeros(n, np.int32)
    info = 0
    k = 0
    while k < n:
        kstep = 1
        absakk = abs(A[k, k].real) if herm else _cabs1(A[k, k])
        if k < n - 1:
            imax = k + 1 + int(np.argmax(_cabs1(A[k + 1:, k])))
            colmax = _cabs1(A[imax, k])
        else:
            imax, colmax = k, 0.0
        if max(absakk, colmax) == 0 or np.isnan(absakk):
            if info == 0:
                info = k + 1
            kp = k
            if herm:
                A[k, k] = A[k, k].real
        else:
            if absakk >= _ALPHA * colmax:
                kp = k
            else:
                row = _cabs1(A[imax, k:imax])
                rowmax = row.max()
                if imax < n - 1:
                    rowmax = max(rowmax, _cabs1(A[imax + 1:, imax]).max())
                diag = abs(A[imax, imax].real) if herm else _cabs1(A[imax, imax])
                if absakk >= _ALPHA * colmax * (colmax / rowmax):
                    kp = k
                elif diag >= _ALPHA * rowmax:
                    kp = imax
                else:
                    kp, kstep = imax, 2
            kk = k + kstep - 1
            if kp != kk:                 # swap rows and columns kk and kp of the trailing lower triangle
                if kp < n - 1:
                    A[kp + 1:, [kk, kp]] = A[kp + 1:, [kp, kk]]
                mid = np.arange(kk + 1, kp)
                t = A[mid, kk].copy()
                A[mid, kk] = cj(A[kp, mid])
                A[kp, mid] = cj(t)
                if herm:
                    A[kp, kk] = np.conjugate(A[kp, kk])
                A[kk, kk], A[kp, kp] = A[kp, kp], A[kk, kk]
                if kstep == 2:
                    A[k + 1, k], A[kp, k] = A[kp, k], A[k + 1, k]
            if kstep == 1:
                if herm:
                    A[k, k] = A[k, k].real
                if k < n - 1:
                    d11 = 1 / (A[k, k].real if herm else A[k, k])
                    col = A[k + 1:, k].copy()
                    A[k + 1:, k + 1:] -= np.tril(d11 * np.outer(col, cj(col)))
                    A[k + 1:, k] = col * d11
            else:
                if herm:
                    A[k, k], A[k + 1, k + 1] = A[k, k].real, A[k + 1, k + 1].real
                if k < n - 2:
                    d21 = A[k + 1, k]
                    if herm:
                        d = abs(d21)
                        d11 = A[k + 1, k + 1].real / d
                        d22 = A[k, k].real / d
                        tt = 1 / (d11 * d22 - 1)
                        d21 = d21 / d
                        c1, c2 = A[k + 2:, k].copy(), A[k + 2:, k + 1].copy()
                        wk = tt / d * (d11 * c1 - d21 * c2)
                        wkp1 = tt / d * (d22 * c2 - np.conjugate(d21) * c1)
                    else:
                        d11 = A[k + 1, k + 1] / d21
                        d22 = A[k, k] / d21
                        tt = 1 / (d11 * d22 - 1)
                        d21 = tt / d21
                        c1, c2 = A[k + 2:, k].copy(), A[k + 2:, k + 1].copy()
                        wk = d21 * (d11 * c1 - c2)
                        wkp1 = d21 * (d22 * c2 - c1)
                    A[k + 2:, k + 2:] -= np.tril(np.outer(c1, cj(wk)) + np.outer(c2, cj(wkp1)))
                    A[k + 2:, k], A[k + 2:, k + 1] = wk, wkp1
                    if herm:
                        A[np.arange(k + 2, n), np.arange(k + 2, n)] = A.diagonal()[k + 2:].real
        if kstep == 1:
            piv[k] = kp + 1
        else:
            piv[k] = piv[k + 1] = -(kp + 1)
        k += kstep
    return A, piv, info


def _sytrs(A: np.ndarray, piv: np.ndarray, B: np.ndarray, herm: bool) -> np.ndarray:
    """Solve with one factorisation (``A``: LD, lower) for the columns of B."""
    n = A.shape[0]
    X = B.astype(np.result_type(A, B), copy=True)
    cj = np.conjugate if herm and np.iscomplexobj(A) else (lambda v: v)
    k = 0
    while k < n:                         # L D Y = B
        if piv[k] > 0:
            kp = piv[k] - 1
            X[[k, kp]] = X[[kp, k]]
            X[k + 1:] -= np.outer(A[k + 1:, k], X[k])
            X[k] /= A[k, k].real if herm else A[k, k]
            k += 1
        else:
            kp = -piv[k] - 1
            X[[k + 1, kp]] = X[[kp, k + 1]]
            X[k + 2:] -= np.outer(A[k + 2:, k], X[k]) + np.outer(A[k + 2:, k + 1], X[k + 1])
            akm1k = A[k + 1, k]
            akm1 = A[k, k] / cj(akm1k)
            ak = A[k + 1, k + 1] / akm1k
            denom = akm1 * ak - 1
            bkm1, bk = X[k] / cj(akm1k), X[k + 1] / akm1k
            X[k], X[k + 1] = (ak * bkm1 - bk) / denom, (akm1 * bk - bkm1) / denom
            k += 2
    k = n - 1
    while k >= 0:                        # L^T X = Y (L^H for Hermitian)
        if piv[k] > 0:
            if k < n - 1:
                X[k] -= cj(A[k + 1:, k]) @ X[k + 1:]
            kp = piv[k] - 1
            X[[k, kp]] = X[[kp, k]]
            k -= 1
        else:
            if k < n - 1:
                X[k] -= cj(A[k + 1:, k]) @ X[k + 1:]
                X[k - 1] -= cj(A[k + 1:, k - 1]) @ X[k + 1:]
            kp = -piv[k] - 1
            X[[k, kp]] = X[[kp, k]]
            k -= 2
    return X


class LinalgLdlFactorEx(Primitive):
    """LD, pivots, info of each matrix (torch gives it no derivative)."""

    node_name = "NotImplemented"

    @staticmethod
    def forward(ctx, a, herm):
        n = a.shape[-1]
        flat = a.reshape((int(np.prod(a.shape[:-2])), n, n))
        LD, piv, info = np.zeros_like(flat), np.zeros(flat.shape[:2], np.int32), np.zeros(flat.shape[0], np.int32)
        for i, m in enumerate(flat):
            LD[i], piv[i], info[i] = _sytf2(m, herm)
        return LD.reshape(a.shape), piv.reshape(a.shape[:-1]), info.reshape(a.shape[:-2])

    @staticmethod
    def backward(ctx, *grads):
        raise RuntimeError("derivative for aten::linalg_ldl_factor_ex is not implemented")


class LinalgLdlSolve(Primitive):
    """X with A X = B from A's LDL factorisation (torch gives it no derivative)."""

    node_name = "NotImplemented"

    @staticmethod
    def forward(ctx, ld, piv, b, herm):
        n = ld.shape[-1]
        batch = np.broadcast_shapes(ld.shape[:-2], b.shape[:-2])
        lds = np.broadcast_to(ld, batch + (n, n)).reshape((-1, n, n)) if batch else ld[None]
        ps = np.broadcast_to(piv, batch + (n,)).reshape((-1, n)) if batch else piv[None]
        bs = np.broadcast_to(b, batch + b.shape[-2:]).reshape((-1,) + b.shape[-2:]) if batch else b[None]
        out = np.stack([_sytrs(lds[i], ps[i], bs[i], herm) for i in range(lds.shape[0])]) if lds.shape[0] else \
            np.zeros((0,) + b.shape[-2:], np.result_type(ld, b))
        return out.reshape(batch + b.shape[-2:])

    @staticmethod
    def backward(ctx, *grads):
        raise RuntimeError("derivative for aten::linalg_ldl_solve is not implemented")


def _check(op, a):
    _check_float(op, a)
    if a.ndim < 2:
        raise RuntimeError(f"{op}: The input tensor A must have at least 2 dimensions.")
    if a.shape[-1] != a.shape[-2]:
        raise RuntimeError(f"{op}: A must be batches of square matrices, but they are {a.shape[-2]} by "
                           f"{a.shape[-1]} matrices")


@writes_out
def ldl_factor_ex(A, *, hermitian=False, check_errors=False, out=None):
    """(LD, pivots, info) of the LDL^T (``hermitian``: LDL^H) factorisation with Bunch-Kaufman pivoting; LD holds
    L's strict lower triangle and the 1 x 1 / 2 x 2 blocks of D, its upper triangle is zero.

    >>> tapegrad.linalg.ldl_factor_ex(tapegrad.tensor([[4., 2.], [2., 3.]])).LD
    tensor([[4.0000, 0.0000],
            [0.5000, 2.0000]])
    """
    _check("torch.linalg.ldl_factor_ex", A._array)
    LD, piv, info = LinalgLdlFactorEx.apply(A, bool(hermitian))
    if check_errors:
        _raise(*_info(info))
    return linalg_ldl_factor_ex_rt(LD, piv, info)


def _raise(info, batched):
    bad = _first_bad(info)
    if bad is not None:
        raise RuntimeError(f"torch.linalg.ldl_factor: {_batch_prefix(bad[0], batched)}The factorization could not "
                           f"be completed because the input is singular: D[{bad[1]},{bad[1]}] is zero.")


@writes_out
def ldl_factor(A, *, hermitian=False, out=None):
    """(LD, pivots) of ``ldl_factor_ex``; a zero block of D is an error.

    >>> LD, pivots = tapegrad.linalg.ldl_factor(tapegrad.tensor([[4., 2.], [2., 3.]]))
    >>> pivots
    tensor([1, 2], dtype=tapegrad.int32)
    """
    _check("torch.linalg.ldl_factor_ex", A._array)
    LD, piv, info = LinalgLdlFactorEx.apply(A, bool(hermitian))
    _raise(*_info(info))
    return linalg_ldl_factor_rt(LD, piv)


@writes_out
def ldl_solve(LD, pivots, B, *, hermitian=False, out=None):
    """Solve A X = B from ``ldl_factor``'s LD and pivots.

    >>> LD, pivots = tapegrad.linalg.ldl_factor(tapegrad.tensor([[4., 2.], [2., 3.]]))
    >>> tapegrad.linalg.ldl_solve(LD, pivots, tapegrad.tensor([[6.], [5.]]))
    tensor([[1.],
            [1.]])
    """
    a, b = LD._array, B._array
    _check("torch.linalg.ldl_solve", a)
    if b.ndim < 2:
        raise RuntimeError("torch.linalg.ldl_solve: The input tensor B must have at least 2 dimensions.")
    if b.shape[-2] != a.shape[-1]:
        raise RuntimeError(f"Incompatible matrix sizes for torch.linalg.ldl_solve: each A matrix is {a.shape[-2]} by "
                           f"{a.shape[-1]} but each b matrix is {b.shape[-2]} by {b.shape[-1]}")
    if pivots._array.shape != a.shape[:-1]:
        raise RuntimeError(f"torch.linalg.ldl_solve: Expected LD.shape[:-1] and pivots.shape to be the same, but got "
                           f"pivots with shape {shape_str(pivots._array.shape)} instead")
    if hermitian and a.dtype.kind != "c":
        hermitian = False     # (real: symmetric and Hermitian are the same)
    return LinalgLdlSolve.apply(LD, pivots, B, bool(hermitian))   # (pivots a tensor: transforms see it)
