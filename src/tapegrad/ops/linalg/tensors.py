# ruff: noqa: A002 - torch's argument names (input, A, B)
"""Linear algebra built from other ops (loaded on first use): ``linalg.vander``, ``linalg.tensorinv``,
``linalg.tensorsolve``, torch's older ``nuclear_norm`` / ``frobenius_norm``, and the randomized
``svd_lowrank`` / ``pca_lowrank`` (Halko, Martinsson and Tropp's range finder with power iterations, then an SVD
of the small projected matrix), and ``lobpcg``'s eigenpairs (by a dense eigendecomposition). Each is a
composition of differentiable ops, so their gradients are the ops'.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from .._util import castable, Tensor, writes_out
from ._common import _mH
from .norms import matrix_norm, vector_norm
from .products import matmul
from .solvers import inv, solve
from .._util import autocast_listed

__all__ = ["vander", "tensorinv", "tensorsolve", "nuclear_norm", "frobenius_norm", "svd_lowrank", "pca_lowrank",
           "lobpcg"]


def vander(x, *, N=None):
    """The Vandermonde matrix of ``x`` with increasing powers: ``[1, x, x^2, ..., x^(N-1)]`` along a new last dim.

    >>> tapegrad.linalg.vander(tapegrad.tensor([1, 2, 3]))
    tensor([[1, 1, 1],
            [1, 2, 4],
            [1, 3, 9]])
    """
    from ..shape.split_join import cat
    if x.ndim == 0:          # (torch: a 0-d x is one point, a (1, N) result)
        x = x.reshape(1)
    n = x.shape[-1] if N is None else int(N)
    if n <= 1:
        raise RuntimeError("N must be greater than 1.")
    col = x.unsqueeze(-1)
    powers = col.expand(tuple(x.shape) + (n - 1,)).cumprod(-1)
    ones = Tensor._make(np.ones(tuple(x.shape) + (1,), powers._array.dtype))
    return cat([ones, powers], -1)


@writes_out(dtype="cast", error=castable("tensorinv"))
@autocast_listed("fp32")
def tensorinv(A, ind=2, *, out=None):
    """The inverse of ``A`` seen as a linear map from its dims ``ind:`` to its dims ``:ind``: the result has shape
    ``A.shape[ind:] + A.shape[:ind]`` and ``tensordot(result, A, ind)`` is the identity.

    >>> tapegrad.linalg.tensorinv(2 * tapegrad.eye(4).reshape(4, 2, 2), ind=1).shape
    tapegrad.Size([2, 2, 4])
    """
    ind = int(ind)
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    shape = tuple(A.shape)
    rows, cols = math.prod(shape[:ind]), math.prod(shape[ind:])
    if rows != cols:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                           f"prod(self.shape[:ind]), but got {cols} != {rows}")
    return inv(A.reshape(rows, cols)).reshape(shape[ind:] + shape[:ind])


@writes_out(dtype="cast", error=castable("tensorsolve"))
@autocast_listed("fp32")
def tensorsolve(A, B, dims=None, *, out=None):
    """X with ``tensordot(A, X, X.ndim) == B``; ``dims`` of A are moved to the end first.

    >>> tapegrad.linalg.tensorsolve(tapegrad.eye(6).reshape(2, 3, 6), tapegrad.ones(2, 3)).shape
    tapegrad.Size([6])
    """
    if dims is not None:
        nd = A.ndim
        dims = [d % nd for d in ((dims,) if isinstance(dims, int) else dims)]
        A = A.permute(*[d for d in range(nd) if d not in dims], *dims)
    shape = tuple(A.shape)
    k = B.ndim
    rows, cols = math.prod(shape[:k]), math.prod(shape[k:])
    if rows != cols:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[other.ndim:]) == "
                           f"prod(self.shape[:other.ndim]), but got {cols} != {rows}")
    return solve(A.reshape(rows, cols), B.reshape(rows)).reshape(shape[k:])


@writes_out(error="linalg.matrix_norm expected out tensor dtype {r} but got: {o}")
def nuclear_norm(input, dim=None, keepdim=False, *, out=None):
    """torch.nuclear_norm (deprecated in torch): ``linalg.matrix_norm(input, 'nuc', dim, keepdim)``."""
    warnings.warn("at::nuclear_norm is deprecated and it is just left for JIT compatibility. It will be removed in a "
                  "future PyTorch release. Please use `linalg.matrix_norm(A, 'nuc', dim, keepdim)` instead",
                  UserWarning, stacklevel=2)
    if isinstance(dim, bool):            # nuclear_norm(x, keepdim)
        dim, keepdim = None, dim
    return matrix_norm(input, "nuc", (-2, -1) if dim is None else tuple(dim), keepdim)


@writes_out
def frobenius_norm(input, dim, keepdim=False, *, out=None):
    """torch.frobenius_norm (deprecated in torch): ``linalg.vector_norm(input, 2, dim, keepdim)``."""
    warnings.warn("at::frobenius_norm is deprecated and it is just left for JIT compatibility. It will be removed "
                  "in a future PyTorch release. Please use `linalg.vector_norm(A, 2., dim, keepdim)` instead",
                  UserWarning, stacklevel=2)
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    if len(dims) > 2:
        raise RuntimeError(f"Expected at most 2 dimensions, but got {len(dims)} dimensions instead.")
    return vector_norm(input, 2, dims, keepdim)


# --- randomized low-rank SVD ----------------------------------------------------------------------------------
def _range_basis(A, q, niter, M=None):
    """An orthonormal (..., m, q) basis that approximately spans A's range (randomized, ``niter`` power steps)."""
    from ...creation import randn
    from .decompositions import linalg_qr
    n = A.shape[-1]
    R = randn(n, q, dtype=A.dtype)
    X = matmul(A, R) if M is None else matmul(A, R) - matmul(M, R)
    Q = linalg_qr(X).Q
    for _ in range(niter):
        X = matmul(_mH(A), Q) if M is None else matmul(_mH(A), Q) - matmul(_mH(M), Q)
        Q = linalg_qr(X).Q
        X = matmul(A, Q) if M is None else matmul(A, Q) - matmul(M, Q)
        Q = linalg_qr(X).Q
    return Q


def svd_lowrank(A, q=6, niter=2, M=None):
    """(U, S, V) of a rank-``q`` approximation of A (or of A - M), randomized: exact when A's rank is at most q.

    >>> U, S, V = tapegrad.svd_lowrank(tapegrad.ones(4, 3), q=2)
    >>> S.round()
    tensor([3., 0.])
    """
    from .decompositions import linalg_svd
    q = 6 if q is None else int(q)
    m, n = A.shape[-2:]
    if M is not None:
        M = M.broadcast_to(A.shape)
    if m < n:                # work with A^H (as torch: so the random matrix is torch's, n x q for the wide side)
        Q = _range_basis(_mH(A), q, niter, None if M is None else _mH(M))
        Bt = matmul(A, Q) if M is None else matmul(A, Q) - matmul(M, Q)       # (..., m, q) = (Q^H A^H)^H
        U, S, Vh = linalg_svd(Bt, full_matrices=False)
        return U, S, matmul(Q, _mH(Vh))
    Q = _range_basis(A, q, niter, M)
    B = matmul(_mH(Q), A) if M is None else matmul(_mH(Q), A) - matmul(_mH(Q), M)
    U, S, Vh = linalg_svd(B, full_matrices=False)
    return matmul(Q, U), S, _mH(Vh)


def pca_lowrank(A, q=None, center=True, niter=2):
    """(U, S, V) of a randomized SVD of A with its columns centred (``center``): principal components in V.

    >>> U, S, V = tapegrad.pca_lowrank(tapegrad.tensor([[1., 0.], [3., 0.]]), q=1)
    >>> S
    tensor([1.4142])
    """
    m, n = A.shape[-2:]
    q = min(6, m, n) if q is None else int(q)
    if not 0 <= q <= min(m, n):
        raise ValueError(f"q(={q}) must be non-negative integer and not greater than min(m, n)={min(m, n)}")
    if niter < 0:
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    if not center:
        return svd_lowrank(A, q, niter)
    return svd_lowrank(A - A.mean(-2, keepdim=True), q, niter)




def lobpcg(A, k=None, B=None, X=None, n=None, iK=None, niter=None, tol=None, largest=None, method=None, tracker=None,
           ortho_iparams=None, ortho_fparams=None, ortho_bparams=None):
    """The ``k`` largest (``largest=False``: smallest) eigenpairs of the symmetric generalized problem
    A x = lambda B x (B = I by default), eigenvectors B-orthonormal: what torch's LOBPCG iteration converges to,
    computed here by a dense eigendecomposition (of L^-1 A L^-T with B = L L^T), differentiable with respect to A
    and B. The iteration's own arguments (``X``'s values, ``iK``, ``niter``, ``tol``, ``method``, ``tracker``,
    the ortho parameters) are accepted and have no effect; without ``X`` it draws torch's random start
    (``randn((m, n))`` per matrix), so the random stream after it is torch's.

    >>> E, V = tapegrad.lobpcg(tapegrad.diag(tapegrad.arange(1., 10.)), k=2)
    >>> E
    tensor([9., 8.])
    """
    from .decompositions import eigh, linalg_cholesky
    from .solvers import solve_triangular
    shape = tuple(A.shape)
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise AssertionError(f"A must be square, got shape {A.shape!r}".replace("tapegrad.", "torch."))
    if B is not None and tuple(B.shape) != shape:
        raise AssertionError(f"A and B must have the same shapes, got {A.shape!r} and {B.shape!r}")
    m = shape[-1]
    k = (1 if X is None else X.shape[-1]) if k is None else int(k)
    n = (k if n is None else int(n)) if X is None else X.shape[-1]
    if m < 3 * n:
        raise ValueError(f"LOBPCG algorithm is not applicable when the number of A rows (={m}) is smaller than 3 x "
                         f"the number of requested eigenpairs (={n})")
    if X is None:       # (torch starts its iteration from randn((m, n)) per matrix: the same draws from the stream)
        from ...creation import randn
        for _ in range(math.prod(shape[:-2])):
            randn(m, n, dtype=A.dtype)
    largest = True if largest is None else bool(largest)
    S = (A + A.mT) * 0.5
    if B is None:
        w, V = eigh(S)
    else:
        L = linalg_cholesky((B + B.mT) * 0.5)
        C = solve_triangular(L, solve_triangular(L, S, upper=False).mT, upper=False)
        w, V = eigh((C + C.mT) * 0.5)
        V = solve_triangular(L.mT, V, upper=True)
    count = min(k, n)
    if largest:
        return w[..., m - count:].flip(-1), V[..., :, m - count:].flip(-1)
    return w[..., :count], V[..., :, :count]
