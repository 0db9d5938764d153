# ruff: noqa: A002 - torch's argument names (input, A, B)
"""The LU family (loaded on first use): ``linalg.lu_factor(_ex)``, ``linalg.lu``, ``linalg.lu_solve``, torch's
older ``lu`` / ``lu_unpack`` / ``lu_solve``, and ``triangular_solve``.

NumPy has no LU, so ``_getrf`` is LAPACK's getrf written out: Gaussian elimination with partial pivoting (the
pivot is the first entry of largest |re| + |im| in its column, as LAPACK's i?amax), vectorised over the batch,
one column at a time; pivots are LAPACK's (1-based row swaps, int32), ``info`` the 1-based index of the first
zero pivot. Rectangular matrices factor as torch's do (L m x k, U k x n, k = min(m, n)).

Gradients are torch's (FunctionsManual's ``linalg_lu_backward``), written in tapegrad ops (triangular solves,
``tril`` / ``triu``, matmul), so that second derivatives work. With A = P L U square,
gA = P L^-H (tril(L^H gL, -1) + triu(gU U^H)) U^-H; the wide and tall cases add the blocks of U (resp. L) that
lie beyond the square part. ``lu_factor``'s gradient is the same with gL, gU the strict lower and the upper
triangle of the packed gradient. ``lu_solve`` and ``lu_unpack`` are compositions (unpack, permute, two
triangular solves), differentiable with respect to the factors and to B.
"""

from __future__ import annotations

import warnings

import numpy as np

from .. import _util
from .._util import Primitive, Tensor, bind, writes_out
from ._common import _batch_prefix, _const, _dtname, _first_bad, _mH, _rt, _info
from .products import matmul
from .solvers import _b_and_a_same_dtype, solve_triangular
from .._util import autocast_listed

__all__ = ["lu_factor", "lu_factor_ex", "linalg_lu", "lu_solve", "lu", "lu_unpack", "torch_lu_solve",
           "triangular_solve"]

linalg_lu_factor_rt = _rt("linalg_lu_factor", ["LU", "pivots"])
linalg_lu_factor_ex_rt = _rt("linalg_lu_factor_ex", ["LU", "pivots", "info"])
linalg_lu_rt = _rt("linalg_lu", ["P", "L", "U"])
lu_unpack_rt = _rt("lu_unpack", ["P", "L", "U"])
lu_with_info_rt = _rt("_lu_with_info", ["LU", "pivots", "info"])
triangular_solve_rt = _rt("triangular_solve", ["solution", "cloned_coefficient"])

_KIND = {"float16": "Half", "int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
         "bool": "Bool"}


# --- the factorisation on arrays -------------------------------------------------------------------------------
def _getrf(a: np.ndarray):
    """(LU packed, pivots int32 1-based, info int32) of LU with partial pivoting, over the batch."""
    m, n = a.shape[-2:]
    k = min(m, n)
    batch = a.shape[:-2]
    u = np.array(a, copy=True).reshape((int(np.prod(batch)), m, n))
    nb = u.shape[0]
    piv = np.zeros((nb, k), np.int32)
    info = np.zeros(nb, np.int32)
    rows = np.arange(nb)
    for j in range(k):
        col = u[:, j:, j]
        size = np.abs(col.real) + np.abs(col.imag) if col.dtype.kind == "c" else np.abs(col)
        p = j + np.argmax(size, axis=1)
        piv[:, j] = p + 1
        swap = p != j
        if swap.any():
            r = rows[swap]
            top, other = u[r, j].copy(), u[r, p[swap]].copy()
            u[r, j], u[r, p[swap]] = other, top
        pivot = u[:, j, j]
        zero = pivot == 0
        info[(info == 0) & zero] = j + 1
        if j + 1 < m:
            f = u[:, j + 1:, j] / np.where(zero, 1, pivot)[:, None]
            u[:, j + 1:, j] = f
            if j + 1 < n:
                u[:, j + 1:, j + 1:] -= f[:, :, None] * u[:, j, None, j + 1:]
    return u.reshape(a.shape), piv.reshape(batch + (k,)), info.reshape(batch)


def _perm_of(piv: np.ndarray, m: int) -> np.ndarray:
    """The row order ``perm`` with A[perm] = L U (the pivots' swaps applied to 0..m-1), over the batch."""
    k = piv.shape[-1]
    flat = piv.reshape((int(np.prod(piv.shape[:-1])), k)).astype(np.int64) - 1
    perm = np.broadcast_to(np.arange(m), (flat.shape[0], m)).copy()
    rows = np.arange(flat.shape[0])
    for j in range(k):
        p = flat[:, j]
        a, b = perm[rows, j].copy(), perm[rows, p].copy()
        perm[rows, j], perm[rows, p] = b, a
    return perm.reshape(piv.shape[:-1] + (m,))


def _p_matrix(piv: np.ndarray, m: int, dtype) -> np.ndarray:
    """P with A = P L U: P[perm[i], i] = 1."""
    perm = _perm_of(piv, m)
    P = np.zeros(perm.shape + (m,), dtype)
    np.put_along_axis(P, perm[..., :, None], 1, axis=-1)       # row i of P^T has its one at perm[i]
    return np.swapaxes(P, -1, -2)


def _check_lu_input(op, a, pivot):
    if a.ndim < 2:
        where = "linalg.lu" if op == "linalg.lu" else "torch.lu_factor"
        raise RuntimeError(f"{where}: Expected tensor with 2 or more dimensions. Got size: "
                           f"{_util.shape_str(a.shape)} instead")
    if a.dtype.kind not in "fc" or a.dtype == np.float16:
        raise NotImplementedError(f"\"lu_cpu\" not implemented for '{_KIND.get(str(a.dtype), str(a.dtype))}'")
    if not pivot:
        raise RuntimeError(f"{op}: LU without pivoting is not implemented on the CPU")


# --- gradients ------------------------------------------------------------------------------------------------
def _unit_lower_unpack(LU: Tensor, m, n):
    k = min(m, n)
    eye = _const(np.eye(m, k, dtype=LU._array.dtype))
    return LU[..., :, :k].tril(-1) + eye, LU[..., :k, :].triu()


def _lu_backward(gL, gU, P, L, U):
    """gA of A = P L U from the gradients of L (m x k) and U (k x n); either may be None."""
    m, k = L.shape[-2:]
    n = U.shape[-1]
    if m == n:
        phi = None
        if gL is not None:
            phi = matmul(_mH(L), gL).tril(-1)
        if gU is not None:
            t = matmul(gU, _mH(U)).triu()
            phi = t if phi is None else phi + t
        x = solve_triangular(_mH(U), phi, upper=False, left=False)
        x = solve_triangular(_mH(L), x, upper=True, unitriangular=True)
        return matmul(P, x)
    if m < n:       # wide: U = [U1 U2], U1 k x k
        U1 = U[..., :, :k]
        phi = None
        if gL is not None:
            phi = matmul(_mH(L), gL)
        if gU is not None:
            t = matmul(gU.triu(), _mH(U))
            phi = -t if phi is None else phi - t
        x = solve_triangular(_mH(U1), phi.tril(-1), upper=False, left=False)
        if gU is not None:
            x = _cat((x + gU[..., :, :k].triu(), gU[..., :, k:]), -1)
        x = solve_triangular(_mH(L), x, upper=True, unitriangular=True)
        if gU is None:
            x = _cat((x, _const(np.zeros(x.shape[:-1] + (n - k,), x._array.dtype))), -1)
        return matmul(P, x)
    # tall: L = [L1; L2], L1 k x k
    L1 = L[..., :k, :]
    phi = None
    if gU is not None:
        phi = matmul(gU, _mH(U))
    if gL is not None:
        t = matmul(_mH(L), gL.tril(-1))
        phi = -t if phi is None else phi - t
    x = solve_triangular(_mH(L1), phi.triu(), upper=True, unitriangular=True)
    if gL is not None:
        x = _cat((x + gL[..., :k, :].tril(-1), gL[..., k:, :]), -2)
    x = solve_triangular(_mH(U), x, upper=False, left=False)
    if gL is None:
        x = _cat((x, _const(np.zeros(x.shape[:-2] + (m - k,) + x.shape[-1:], x._array.dtype))), -2)
    return matmul(P, x)


def _cat(ts, dim):
    from ..shape.split_join import cat
    return cat(list(ts), dim)


class LinalgLuFactorEx(Primitive):
    """LU with partial pivoting, packed (L's strict lower part and U), with LAPACK's pivots and info."""

    @staticmethod
    def forward(ctx, a, pivot):
        ctx.set_materialize_grads(False)
        lu_, piv, info = _getrf(a)
        out = Tensor._make(lu_)
        ctx.save_for_backward(out)
        ctx.P = _p_matrix(piv, a.shape[-2], a.dtype)
        ctx.mark_non_differentiable(piv, info)
        return out, piv, info

    @staticmethod
    def backward(ctx, g, _gpiv, _ginfo):
        LU, = ctx.saved_tensors
        if g is None:
            return None, None
        m, n = LU.shape[-2:]
        k = min(m, n)
        L, U = _unit_lower_unpack(LU, m, n)
        gL, gU = g[..., :, :k].tril(-1), g[..., :k, :].triu()
        return _lu_backward(gL, gU, _const(ctx.P), L, U), None


class LinalgLu(Primitive):
    """A = P L U: the permutation matrix, unit lower L (m x k), upper U (k x n)."""

    @staticmethod
    def forward(ctx, a, pivot):
        ctx.set_materialize_grads(False)
        m, n = a.shape[-2:]
        k = min(m, n)
        lu_, piv, _ = _getrf(a)
        P = _p_matrix(piv, m, a.dtype)
        L = np.tril(lu_[..., :, :k], -1) + np.eye(m, k, dtype=a.dtype)
        U = np.triu(lu_[..., :k, :])
        Lt, Ut = Tensor._make(L), Tensor._make(U)
        ctx.save_for_backward(Lt, Ut)
        ctx.P = P
        ctx.mark_non_differentiable(P)
        return P, Lt, Ut

    @staticmethod
    def backward(ctx, _gP, gL, gU):
        L, U = ctx.saved_tensors
        if gL is None and gU is None:
            return None, None
        return _lu_backward(gL, gU, _const(ctx.P), L, U), None


def _raise_singular(op, info, batched):
    bad = _first_bad(info)
    if bad is not None:
        raise RuntimeError(f"{op}: {_batch_prefix(bad[0], batched)}U[{bad[1]},{bad[1]}] is zero and using it on "
                           "lu_solve would result in a division by zero. If you still want to perform the "
                           "factorization, consider calling linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)")


@writes_out
def lu_factor_ex(A, *, pivot=True, check_errors=False, out=None):
    """(LU, pivots, info): LU with partial pivoting packed in one matrix, LAPACK's pivots (1-based row swaps)
    and info (> 0: the first zero pivot).

    >>> tapegrad.linalg.lu_factor_ex(tapegrad.tensor([[0., 1.], [2., 3.]])).pivots
    tensor([2, 2], dtype=tapegrad.int32)
    """
    _check_lu_input("linalg.lu_factor_ex", A._array, pivot)
    LU, piv, info = LinalgLuFactorEx.apply(A, bool(pivot))
    if check_errors:
        _raise_singular("torch.linalg.lu_factor_ex", *_info(info))
    return linalg_lu_factor_ex_rt(LU, piv, info)


@writes_out
def lu_factor(A, *, pivot=True, out=None):
    """(LU, pivots) of A = P L U; a singular matrix (a zero pivot) is an error, as in torch.

    >>> LU, pivots = tapegrad.linalg.lu_factor(tapegrad.tensor([[0., 1.], [2., 3.]]))
    >>> LU
    tensor([[2., 3.],
            [0., 1.]])
    """
    _check_lu_input("linalg.lu_factor", A._array, pivot)
    LU, piv, info = LinalgLuFactorEx.apply(A, bool(pivot))
    _raise_singular("torch.linalg.lu_factor", *_info(info))
    return linalg_lu_factor_rt(LU, piv)


@writes_out
def linalg_lu(A, *, pivot=True, out=None):
    """(P, L, U) with A = P L U: P a permutation, L unit lower triangular, U upper triangular.

    >>> P, L, U = tapegrad.linalg.lu(tapegrad.tensor([[0., 1.], [2., 3.]]))
    >>> P
    tensor([[0., 1.],
            [1., 0.]])
    """
    _check_lu_input("linalg.lu", A._array, pivot)
    return linalg_lu_rt(*LinalgLu.apply(A, bool(pivot)))


@writes_out
def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True, *, out=None):
    """(P, L, U) from ``lu_factor``'s packed LU and pivots (empty tensors for the parts not asked for).

    >>> P, L, U = tapegrad.lu_unpack(*tapegrad.linalg.lu_factor(tapegrad.tensor([[0., 1.], [2., 3.]])))
    >>> L
    tensor([[1., 0.],
            [0., 1.]])
    """
    a = LU_data._array
    if a.ndim < 2:
        raise RuntimeError(f"torch.lu_unpack: Expected tensor with 2 or more dimensions. Got size: "
                           f"{_util.shape_str(a.shape)} instead")
    m, n = a.shape[-2:]
    piv = LU_pivots._array
    if piv.dtype != np.int32:
        raise RuntimeError("lu_unpack: LU_pivots is expected to be a contiguous tensor of torch.int32 dtype.\n"
                           "Note: this function is intended to be used with the output produced by "
                           "torch.linalg.lu_factor")
    empty = Tensor._make(np.zeros((0,), a.dtype))
    if unpack_data:
        L, U = _unit_lower_unpack(LU_data, m, n)
    else:
        L = U = empty
    P = _pivots_matrix(LU_pivots, m, a.dtype) if unpack_pivots else empty
    return lu_unpack_rt(P, L, U)


@_util.transform_visible()
def _pivots_matrix(pivots, m, dtype):
    """The permutation matrix of LAPACK pivots (computed on the array: visible to vmap, once per sample)."""
    return Tensor._make(_p_matrix(pivots._array, m, dtype))


@writes_out
@autocast_listed("fp32")
def lu_solve(LU, pivots, B, *, left=True, adjoint=False, out=None):
    """Solve A X = B (``left=False``: X A = B; ``adjoint``: with A^H) from ``lu_factor``'s output.

    >>> A = tapegrad.tensor([[0., 1.], [2., 3.]])
    >>> tapegrad.linalg.lu_solve(*tapegrad.linalg.lu_factor(A), tapegrad.tensor([[1.], [5.]]))
    tensor([[1.],
            [1.]])
    """
    a, b = LU._array, B._array
    if a.ndim < 2 or b.ndim < 2:
        which = "LU" if a.ndim < 2 else "B"
        raise RuntimeError(f"linalg.lu_solve: The input tensor {which} must have at least 2 dimensions.")
    n = a.shape[-1]
    if a.shape[-2] != n:
        raise RuntimeError(f"linalg.lu_solve: LU must be batches of square matrices, but they are {a.shape[-2]} "
                           f"by {n} matrices")
    if (b.shape[-2] if left else b.shape[-1]) != n:
        eq = "AX = B" if left else "XA = B"
        raise RuntimeError(f"linalg.lu_solve: Incompatible shapes of A and B for the equation {eq} ({n}x{n} and "
                           f"{b.shape[-2]}x{b.shape[-1]})")
    if a.dtype != b.dtype:
        raise RuntimeError(f"linalg.lu_solve: Expected LU and B to have the same dtype, but found LU of type "
                           f"{_dtname(a)} and B of type {_dtname(b)} instead")
    P, L, U = lu_unpack(LU, pivots)
    Pt = _mH(P)
    if left and not adjoint:          # X = U^-1 L^-1 P^T B
        x = solve_triangular(L, matmul(Pt, B), upper=False, unitriangular=True)
        return solve_triangular(U, x, upper=True)
    if left:                          # A^H X = B: X = P L^-H U^-H B
        x = solve_triangular(_mH(U), B, upper=False)
        return matmul(P, solve_triangular(_mH(L), x, upper=True, unitriangular=True))
    if not adjoint:                   # X A = B: X = B U^-1 L^-1 P^T
        x = solve_triangular(U, B, upper=True, left=False)
        return matmul(solve_triangular(L, x, upper=False, left=False, unitriangular=True), Pt)
    # X A^H = B: X = B P L^-H U^-H
    x = solve_triangular(_mH(L), matmul(B, P), upper=True, left=False, unitriangular=True)
    return solve_triangular(_mH(U), x, upper=False, left=False)


@writes_out
def torch_lu_solve(b, LU_data, LU_pivots, *, out=None):
    """torch.lu_solve (deprecated in torch): ``linalg.lu_solve(LU_data, LU_pivots, b)``."""
    warnings.warn("torch.lu_solve is deprecated in favor of torch.linalg.lu_solveand will be removed in a future "
                  "PyTorch release.\nNote that torch.linalg.lu_solve has its arguments reversed.\nX = "
                  "torch.lu_solve(B, LU, pivots)\nshould be replaced with\nX = torch.linalg.lu_solve(LU, pivots, B)",
                  UserWarning, stacklevel=2)
    return lu_solve(LU_data, LU_pivots, b)


@writes_out(dtype="any")
def lu(A, pivot=True, get_infos=False, out=None):
    """torch.lu (deprecated in torch): (LU, pivots), with ``get_infos`` also info; without it a singular matrix is
    an error."""
    warnings.warn("torch.lu is deprecated in favor of torch.linalg.lu_factor / torch.linalg.lu_factor_ex and will "
                  "be removed in a future PyTorch release.\nLU, pivots = torch.lu(A, compute_pivots)\nshould be "
                  "replaced with\nLU, pivots = torch.linalg.lu_factor(A, compute_pivots)\nand\nLU, pivots, info = "
                  "torch.lu(A, compute_pivots, get_infos=True)\nshould be replaced with\nLU, pivots, info = "
                  "torch.linalg.lu_factor_ex(A, compute_pivots)", UserWarning, stacklevel=2)
    _check_lu_input("lu", A._array, pivot)
    LU, piv, info = LinalgLuFactorEx.apply(A, bool(pivot))
    if not get_infos:
        _raise_singular("torch.linalg.lu_factor_ex", *_info(info))
        return LU, piv
    return lu_with_info_rt(LU, piv, info)


@writes_out
@autocast_listed("fp32")
def triangular_solve(b, A, upper=True, transpose=False, unitriangular=False, *, out=None):
    """torch.triangular_solve (deprecated in torch): (solution of A X = b, a copy of A); ``transpose``: A^T X = b.

    >>> tapegrad.triangular_solve(tapegrad.ones(2, 1), 2 * tapegrad.eye(2)).solution
    tensor([[0.5000],
            [0.5000]])
    """
    warnings.warn("torch.triangular_solve is deprecated in favor of torch.linalg.solve_triangularand will be "
                  "removed in a future PyTorch release.\ntorch.linalg.solve_triangular has its arguments reversed "
                  "and does not return a copy of one of the inputs.\nX = torch.triangular_solve(B, A).solution\n"
                  "should be replaced with\nX = torch.linalg.solve_triangular(A, B).", UserWarning, stacklevel=2)
    if A._array.ndim < 2 or b._array.ndim < 2:
        which = "A" if A._array.ndim < 2 else "b"
        raise RuntimeError(f"torch.triangular_solve: Expected {which} to have at least 2 dimensions, but it has "
                           f"{(A if which == 'A' else b)._array.ndim} dimensions instead")
    _b_and_a_same_dtype(b._array, A._array)
    M = A.mT if transpose else A
    x = solve_triangular(M, b, upper=bool(upper) != bool(transpose), unitriangular=unitriangular)
    from ..elementwise import clone
    batch = np.broadcast_shapes(A.shape[:-2], b.shape[:-2])
    return triangular_solve_rt(x, clone(A.expand(batch + tuple(A.shape[-2:]))))


def _method_lu(self, pivot=True, get_infos=False):
    return lu(self, pivot, get_infos)


bind(lu=_method_lu, lu_solve=lambda self, LU_data, LU_pivots: torch_lu_solve(self, LU_data, LU_pivots),
     triangular_solve=triangular_solve)
