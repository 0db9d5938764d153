# ruff: noqa: A002 - torch's argument names (input, ord)
"""Factorisations and what is built on them: cholesky, qr, eigh/eigvalsh, svd/svdvals, pinv,
matrix_power, lstsq, matrix_rank; vecdot and linalg.diagonal.
"""

from __future__ import annotations

import numpy as np

from .._util import castable, Primitive, Tensor, bind, broadcast_or_error, writes_out, transform_visible
from ._common import (LinAlgError, _batch_prefix, _check_matrix, _check_square, _cholesky_info, _const, _diag_embed,
                      _eye_like, _info, _first_bad, _mH, _npH, _tril_mask, linalg_cholesky_ex_rt, linalg_eigh_rt,
                      linalg_lstsq_rt, linalg_qr_rt, linalg_svd_rt, qr_rt, svd_rt)
from .products import _cat_last, matmul
from .solvers import LinalgSolveEx, inv
from .._util import autocast_listed


class LinalgCholeskyEx(Primitive):
    """Cholesky factor L (A = L L^H) or U = L^H, plus info (order of the first non-positive-definite minor)."""

    @staticmethod
    def forward(ctx, a, upper):
        ctx.set_materialize_grads(False)
        ctx.upper = upper
        try:
            low = np.linalg.cholesky(a)
            info = np.zeros(a.shape[:-2], np.int32)
        except np.linalg.LinAlgError:
            info = _cholesky_info(a)
            low = np.full(a.shape, np.nan, a.dtype)
            ok = info == 0
            if ok.any():
                low[ok] = np.linalg.cholesky(a[ok])
        res = np.ascontiguousarray(_npH(low)) if upper else low
        out = Tensor._make(np.asarray(res, a.dtype))
        ctx.save_for_backward(out)
        return out, info

    @staticmethod
    def backward(ctx, gl, _ginfo):
        L, = ctx.saved_tensors
        if gl is None:
            return None, None
        return _cholesky_backward(gl, L, ctx.upper), None


class Cholesky(LinalgCholeskyEx):
    pass


def _cholesky_backward(gL, L, upper):
    """gA = L^-H Phi(L^H gL) L^-1, Phi: the lower triangle made Hermitian, half on the diagonal (conjugate
    transposes: the same formula for real and complex matrices)."""
    if upper:
        L, gL = _mH(L), _mH(gL)
    n = L._array.shape[-1]
    dt = L._array.dtype
    P = matmul(_mH(L), gL) * _tril_mask(n, 0, dt)
    P = (P + _mH(P * _tril_mask(n, -1, dt))) * 0.5
    Linv = inv(L)
    return matmul(_mH(Linv), matmul(P, Linv))


def _raise_cholesky(info, batched, op="linalg.cholesky"):
    bad = _first_bad(info)
    if bad is not None:
        raise LinAlgError(f"{op}: {_batch_prefix(bad[0], batched)}The factorization could not be "
                          "completed because the input is not positive-definite (the leading minor of order "
                          f"{bad[1]} is not positive-definite).")


@writes_out
@autocast_listed("fp32")
def linalg_cholesky(A, *, upper=False, out=None):
    """Cholesky factor L of a symmetric positive-definite A (A = L L^T); U = L^T with ``upper=True``.

    >>> tapegrad.linalg.cholesky(4 * tapegrad.eye(2))
    tensor([[2., 0.],
            [0., 2.]])
    """
    _check_square("linalg.cholesky", A._array)
    L, info = LinalgCholeskyEx.apply(A, bool(upper))
    _raise_cholesky(*_info(info))
    return L


@writes_out
@autocast_listed("fp32")
def cholesky_ex(A, *, upper=False, check_errors=False, out=None):
    """(L, info): info > 0 is the order of the leading minor that is not positive-definite."""
    _check_square("linalg.cholesky_ex", A._array)
    L, info = LinalgCholeskyEx.apply(A, bool(upper))
    if check_errors:
        _raise_cholesky(*_info(info), "linalg.cholesky_ex")
    return linalg_cholesky_ex_rt(L, info)


@writes_out(dtype="cast", error=castable("cholesky"))
@autocast_listed("fp32")
def cholesky(input, upper=False, *, out=None):
    """torch.cholesky (deprecated in torch): lower factor, or upper with ``upper=True``.

    >>> tapegrad.cholesky(4 * tapegrad.eye(2))
    tensor([[2., 0.],
            [0., 2.]])
    """
    _check_square("linalg.cholesky", input._array)
    L, info = Cholesky.apply(input, bool(upper))
    _raise_cholesky(*_info(info))
    return L


class LinalgQr(Primitive):
    """Householder QR: mode 'reduced' (Q m x k), 'complete' (Q m x m) or 'r' (Q empty)."""

    @staticmethod
    def forward(ctx, a, mode):
        ctx.set_materialize_grads(False)
        ctx.mode = mode
        if mode == "r":
            r = np.linalg.qr(a, mode="r")
            q = np.zeros((0,), a.dtype)
        else:
            q, r = np.linalg.qr(a, mode=mode)
        q, r = Tensor._make(np.asarray(q, a.dtype)), Tensor._make(np.asarray(r, a.dtype))
        ctx.shape = a.shape
        ctx.save_for_backward(q, r)
        return q, r

    @staticmethod
    def backward(ctx, gQ, gR):
        Q, R = ctx.saved_tensors
        m, n = ctx.shape[-2:]
        if ctx.mode == "r":
            raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed when mode='r'. Please "
                               "use linalg.qr(A, mode='reduced') if you are going to differentiate through linalg.qr.")
        if ctx.mode == "complete" and m > n:
            raise RuntimeError("The QR decomposition is not differentiable when mode='complete' and nrows > ncols.")
        if gQ is None:
            gQ = _const(np.zeros(Q._array.shape, Q._array.dtype))
        if gR is None:
            gR = _const(np.zeros(R._array.shape, R._array.dtype))
        if m >= n:
            return _qr_backward_tall(gQ, gR, Q, R), None
        # wide: A = Q [U V]; X = A[..., :m] = Q U, Y = A[..., m:]
        U, gU, gV = R[..., :m], gR[..., :m], gR[..., m:]
        Y = matmul(Q, R[..., m:])      # = A[..., m:], through the outputs (keeps double backward exact)
        gQ2 = gQ + matmul(Y, _mH(gV))
        gX = _qr_backward_tall(gQ2, gU, Q, U)
        gY = matmul(Q, gV)
        return _cat_last(gX, gY), None


def _qr_backward_tall(gQ, gR, Q, R):
    """gA = [gQ + Q copyltu(M)] R^{-H}, M = R gR^H - gQ^H Q (m >= n); copyltu(M) = the strict lower triangle made
    Hermitian, plus the real part of the diagonal (R's diagonal is real: its imaginary part is no freedom)."""
    n = R._array.shape[-1]
    dt = R._array.dtype
    M = matmul(R, _mH(gR)) - matmul(_mH(gQ), Q)
    low = M * _tril_mask(n, -1, dt)
    sym = low + _mH(low) + (M.real if dt.kind == "c" else M) * _eye_like(n, dt)
    b = gQ + matmul(Q, sym)
    return _mH(LinalgSolveEx.apply(R, _mH(b), True, False))


@writes_out
@autocast_listed("fp32")
def linalg_qr(A, mode="reduced", *, out=None):
    """QR decomposition A = Q R (named tuple Q, R); ``mode`` is 'reduced', 'complete' or 'r'.

    >>> Q, R = tapegrad.linalg.qr(tapegrad.eye(2))
    """
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), 'r', or "
                           "'complete'")
    _check_matrix("linalg.qr", A._array)
    return linalg_qr_rt(*LinalgQr.apply(A, mode))


@writes_out
@autocast_listed("fp32")
def qr(input, some=True, *, out=None):
    """torch.qr (deprecated in torch): reduced (``some=True``) or complete QR.

    >>> Q, R = tapegrad.qr(tapegrad.eye(2))
    """
    _check_matrix("linalg.qr", input._array)
    return qr_rt(*LinalgQr.apply(input, "reduced" if some else "complete"))


class LinalgEigh(Primitive):
    """Eigen-decomposition of a symmetric matrix (ascending eigenvalues), reading the ``UPLO`` triangle."""

    @staticmethod
    def forward(ctx, a, uplo):
        ctx.set_materialize_grads(False)
        w, v = np.linalg.eigh(a, UPLO=uplo)
        w, v = Tensor._make(np.asarray(w, a.real.dtype)), Tensor._make(np.asarray(v, a.dtype))   # (real eigenvalues)
        ctx.save_for_backward(w, v)
        return w, v

    @staticmethod
    def backward(ctx, gL, gV):
        L, V = ctx.saved_tensors
        n = L._array.shape[-1]
        dt = L._array.dtype
        eye = _eye_like(n, dt)
        if gV is not None:
            VhgV = matmul(_mH(V), gV)
            E = L.unsqueeze(-2) - L.unsqueeze(-1) + eye
            inner_ = (VhgV - _mH(VhgV)) * 0.5 / E
            if gL is not None:
                inner_ = inner_ + _diag_embed(gL)
        else:
            inner_ = _diag_embed(gL)
        if inner_._array.dtype != V._array.dtype:        # (real eigenvalues' gradient, complex eigenvectors)
            inner_ = inner_.to(V.dtype)
        return matmul(V, matmul(inner_, _mH(V))), None


def _check_uplo(uplo):
    if uplo not in ("L", "U", "l", "u"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {uplo}")
    return uplo.upper()


@writes_out
@autocast_listed("fp32")
def eigh(A, UPLO="L", *, out=None):
    """Eigenvalues (ascending) and eigenvectors of a symmetric matrix, as (eigenvalues, eigenvectors).

    >>> tapegrad.linalg.eigh(tapegrad.eye(2)).eigenvalues
    tensor([1., 1.])
    """
    _check_square("linalg.eigh", A._array)
    return linalg_eigh_rt(*LinalgEigh.apply(A, _check_uplo(UPLO)))


@writes_out
@autocast_listed("fp32")
def eigvalsh(A, UPLO="L", *, out=None):
    """Eigenvalues (ascending) of a symmetric matrix.

    >>> tapegrad.linalg.eigvalsh(2 * tapegrad.eye(2))
    tensor([2., 2.])
    """
    _check_square("linalg.eigvalsh", A._array)
    return LinalgEigh.apply(A, _check_uplo(UPLO))[0]


class LinalgSvd(Primitive):
    """A = U diag(S) Vh; the gradient follows torch's svd_backward (distinct singular values)."""

    @staticmethod
    def forward(ctx, a, full_matrices, compute_uv):
        ctx.set_materialize_grads(False)
        ctx.full = full_matrices
        if compute_uv:
            u, s, vh = np.linalg.svd(a, full_matrices=full_matrices)
        else:
            s = np.linalg.svd(a, compute_uv=False)
            u, vh = np.linalg.svd(a, full_matrices=False)[0::2]
        u, s, vh = (Tensor._make(np.asarray(x, d)) for x, d in ((u, a.dtype), (s, a.real.dtype), (vh, a.dtype)))
        ctx.save_for_backward(u, s, vh)
        return (u, s, vh) if compute_uv else s

    @staticmethod
    def backward(ctx, *grads):
        U, S, Vh = ctx.saved_tensors
        if len(grads) == 1:
            gU, gS, gVh = None, grads[0], None
        else:
            gU, gS, gVh = grads
        k = S._array.shape[-1]
        if ctx.full:
            U, Vh = U[..., :k], Vh[..., :k, :]
            gU = gU[..., :k] if gU is not None else None
            gVh = gVh[..., :k, :] if gVh is not None else None
        return _svd_backward(gU, gS, gVh, U, S, Vh), None, None


def _svd_backward(gU, gS, gVh, U, S, Vh):
    m, n = U._array.shape[-2], Vh._array.shape[-1]
    if gU is None and gVh is None:
        if gS is None:
            return None
        return matmul(U, gS.unsqueeze(-1) * Vh) if m >= n else matmul(U * gS.unsqueeze(-2), Vh)
    k = S._array.shape[-1]
    dt = S._array.dtype
    S2 = S * S
    E = S2.unsqueeze(-2) - S2.unsqueeze(-1) + _eye_like(k, dt)
    gA = None
    if gU is not None:
        UhgU = matmul(_mH(U), gU)
        gA = (UhgU - _mH(UhgU)) * S.unsqueeze(-2) / E
    if gVh is not None:
        VhgV = matmul(Vh, _mH(gVh))
        t = S.unsqueeze(-1) * (VhgV - _mH(VhgV)) / E
        gA = t if gA is None else gA + t
    if U._array.dtype.kind == "c":
        # complex: the skew parts' diagonals above are imaginary and are no gradient (zero them); the diagonal is
        # gS + i Im(diag(U^H gU)) / S (the phase gauge: U -> U D with V -> V D moves nothing)
        gA = gA * _const(1 - np.eye(k, dtype=dt))
        diag = gS + 0j if gS is not None else None
        if gU is not None:
            t = UhgU.diagonal(0, -2, -1).imag / S * 1j
            diag = t if diag is None else diag + t
        if diag is not None:
            gA = gA + _diag_embed(diag)
    elif gS is not None:
        gA = gA + _diag_embed(gS)
    if m > n and gU is not None:
        gA = matmul(U, gA)
        gUSinv = gU / S.unsqueeze(-2)
        gA = gA + gUSinv - matmul(U, matmul(_mH(U), gUSinv))
        return matmul(gA, Vh)
    if m < n and gVh is not None:
        gA = matmul(gA, Vh)
        SinvgVh = gVh / S.unsqueeze(-1)
        gA = gA + SinvgVh - matmul(matmul(SinvgVh, _mH(Vh)), Vh)
        return matmul(U, gA)
    return matmul(U, matmul(gA, Vh)) if m >= n else matmul(matmul(U, gA), Vh)


@writes_out
@autocast_listed("fp32")
def linalg_svd(A, full_matrices=True, *, driver=None, out=None):
    """Singular value decomposition A = U diag(S) Vh (named tuple U, S, Vh; S descending).

    >>> tapegrad.linalg.svd(tapegrad.eye(2)).S
    tensor([1., 1.])
    """
    _check_matrix("linalg.svd", A._array)
    return linalg_svd_rt(*LinalgSvd.apply(A, bool(full_matrices), True))


@writes_out
@autocast_listed("fp32")
def svdvals(A, *, driver=None, out=None):
    """Singular values (descending).

    >>> tapegrad.linalg.svdvals(2 * tapegrad.eye(2))
    tensor([2., 2.])
    """
    _check_matrix("linalg.svdvals", A._array)
    return LinalgSvd.apply(A, False, True)[1]


@writes_out
@autocast_listed("fp32")
def svd(input, some=True, compute_uv=True, *, out=None):
    """torch.svd: (U, S, V) with V (not Vh); reduced unless ``some=False``.

    >>> tapegrad.svd(tapegrad.eye(2)).V.shape
    tapegrad.Size([2, 2])
    """
    _check_matrix("linalg.svd", input._array)
    if not compute_uv:
        a = input._array
        m, n = a.shape[-2:]
        s = svdvals(input)
        return svd_rt(Tensor._make(np.zeros(a.shape[:-2] + (m, m), a.dtype)), s,
                      Tensor._make(np.zeros(a.shape[:-2] + (n, n), a.dtype)))
    U, S, Vh = LinalgSvd.apply(input, not some, True)
    return svd_rt(U, S, _mH(Vh))


def _pinv_backward(g, P, A):
    """torch's pinv_backward: gradient of A -> pinv(A) = P (written in tapegrad ops)."""
    m, n = A._array.shape[-2:]
    Ph, gh = _mH(P), _mH(g)
    if m <= n:
        K = matmul(gh, P)
        KPh = matmul(K, Ph)
        return -_mH(matmul(P, K)) + KPh - matmul(matmul(A, P), KPh) + matmul(matmul(Ph, P), gh - matmul(K, A))
    K = matmul(P, gh)
    PhK = matmul(Ph, K)
    return -_mH(matmul(K, P)) + matmul(matmul(gh - matmul(A, K), P), Ph) + PhK - matmul(matmul(PhK, P), A)


def _pinv_np(a, atol, rtol, hermitian):
    if a.size == 0:
        return np.zeros(a.shape[:-2] + (a.shape[-1], a.shape[-2]), a.dtype)
    if hermitian:
        w, v = np.linalg.eigh(a)
        s = np.abs(w)
    else:
        u, s, vh = np.linalg.svd(a, full_matrices=False)
    smax = s.max(-1, keepdims=True)
    cut = np.maximum(atol, rtol * smax)
    with np.errstate(divide="ignore"):
        sinv = np.where(s > cut, 1.0 / np.where(s > cut, (w if hermitian else s), 1), 0).astype(a.dtype)
    if hermitian:
        return np.matmul(v * sinv[..., None, :], _npH(v))
    return np.matmul(_npH(vh) * sinv[..., None, :], _npH(u))


def _tols(a, atol, rtol):
    atol = 0.0 if atol is None else float(atol.item() if isinstance(atol, Tensor) else atol)
    if rtol is None:
        rtol = np.finfo(a.dtype).eps * max(a.shape[-2:]) if atol == 0 else 0.0
    return atol, float(rtol.item() if isinstance(rtol, Tensor) else rtol)


class LinalgPinv(Primitive):
    """Moore-Penrose pseudo-inverse (singular values below max(atol, rtol * s_max) dropped)."""

    @staticmethod
    def forward(ctx, a, atol, rtol, hermitian):
        ctx.save_result(0)
        return np.asarray(_pinv_np(a, atol, rtol, hermitian), a.dtype)

    @staticmethod
    def backward(ctx, grad):
        P, A = ctx.saved_tensors
        return _pinv_backward(grad, P, A), None, None, None


@writes_out(dtype="cast", error=castable("linalg.pinv"))
def pinv(A, *, atol=None, rtol=None, hermitian=False, out=None):
    """Pseudo-inverse (via SVD, or eigh with ``hermitian=True``).

    >>> tapegrad.linalg.pinv(tapegrad.ones(2, 1))
    tensor([[0.5000, 0.5000]])
    """
    _check_matrix("linalg.pinv", A._array)
    atol, rtol = _tols(A._array, atol, rtol)
    return LinalgPinv.apply(A, atol, rtol, bool(hermitian))


@autocast_listed("fp32")
def pinverse(input, rcond=1e-15):
    """torch.pinverse: pseudo-inverse with relative cutoff ``rcond``."""
    _check_matrix("linalg.pinv", input._array)
    return LinalgPinv.apply(input, 0.0, float(rcond), False)


class _EyeCopy(Primitive):
    """matrix_power(A, 0): the identity, broadcast over A's batch (gradient zero)."""

    node_name = "CopyBackwards"

    @staticmethod
    def forward(ctx, a):
        return np.broadcast_to(np.eye(a.shape[-1], dtype=a.dtype), a.shape).copy()

    @staticmethod
    def backward(ctx, grad):
        return grad * 0


@writes_out(dtype="cast", error=castable("matrix_power"))
def matrix_power(A, n, *, out=None):
    """A^n for an integer n (negative n: powers of the inverse), batched.

    >>> tapegrad.linalg.matrix_power(2 * tapegrad.eye(2), 3)
    tensor([[8., 0.],
            [0., 8.]])
    """
    a = A._array
    if a.ndim < 2:
        raise RuntimeError("linalg.matrix_power: The input tensor A must have at least 2 dimensions.")
    if a.shape[-1] != a.shape[-2]:
        raise RuntimeError(f"linalg.matrix_power: A must be batches of square matrices, but they are {a.shape[-2]} by "
                           f"{a.shape[-1]} matrices")
    n = int(n)
    if n == 0:
        return _EyeCopy.apply(A)
    if n < 0:
        A = inv(A)
        if n == -1:
            return A
        n = -n
    if n == 1:
        return A.clone()
    if n == 2:
        return matmul(A, A)
    if n == 3:
        return matmul(matmul(A, A), A)
    z = res = None
    while n > 0:
        bit, n = n % 2, n // 2
        z = A if z is None else matmul(z, z)
        if bit:
            res = z if res is None else matmul(res, z)
    return res


class LinalgLstsq(Primitive):
    """Least-squares solution of A X = B (via the pseudo-inverse); gradient through ``solution`` only."""

    @staticmethod
    def forward(ctx, a, b, rcond, driver, vector):
        ctx.set_materialize_grads(False)
        ctx.vector = vector
        ctx.save_inputs(0, 1)
        m, n = a.shape[-2:]
        rtol = rcond if rcond is not None else np.finfo(a.dtype).eps * max(m, n)
        bb = b[..., None] if vector else b
        P = _pinv_np(a, 0.0, rtol, False)
        x = np.matmul(P, bb)
        s = np.linalg.svd(a, compute_uv=False) if a.size else np.zeros(a.shape[:-2] + (0,), a.real.dtype)
        rank = (s > rtol * s.max(-1, keepdims=True)).sum(-1) if s.size else np.zeros(a.shape[:-2], np.int64)
        if m > n and driver != "gelsy" and bool(np.all(rank == n)):
            resid = (np.abs(np.matmul(a, x) - bb) ** 2).sum(-2)
            if vector:
                resid = resid[..., 0]
        else:
            resid = np.zeros((0,), a.real.dtype)
        if vector:
            x = x[..., 0]
        sv = s if driver in ("gelsd", "gelss") else np.zeros((0,), a.real.dtype)
        rank = np.asarray(rank, np.int64) if driver != "gels" else np.zeros((0,), np.int64)
        ctx.mark_non_differentiable(sv)
        return np.asarray(x, a.dtype), np.asarray(resid, a.real.dtype), rank, np.asarray(sv, a.real.dtype)

    @staticmethod
    def backward(ctx, gX, gres, _grank, _gsv):
        A, B = ctx.saved_tensors
        if gres is not None and gres._array.size == 0:
            gres = None
        if gX is None and gres is None:
            return None, None, None, None, None
        need = ctx.needs_input_grad
        P = pinv(A)
        if ctx.vector:
            B = B.unsqueeze(-1)
            gX = gX.unsqueeze(-1) if gX is not None else None
            gres = gres.unsqueeze(-1) if gres is not None else None
        ga = gb = None
        if gX is not None:
            ga = _pinv_backward(matmul(gX, _mH(B)), P, A) if need[0] else None
            gb = matmul(_mH(P), gX) if need[1] else None
        if gres is not None:
            # residuals = sum((A X - B)^2) at the minimiser X: d/dX vanishes, so only the explicit A, B terms remain
            X = matmul(P, B)
            R2 = (matmul(A, X) - B) * gres.unsqueeze(-2) * 2
            if need[0]:
                t = matmul(R2, _mH(X))
                ga = t if ga is None else ga + t
            if need[1]:
                gb = -R2 if gb is None else gb - R2
        if ctx.vector and gb is not None:
            gb = gb.squeeze(-1)
        return ga, gb, None, None, None


@autocast_listed("fp32")
def lstsq(A, B, rcond=None, *, driver=None):
    """Least-squares solution of A X = B: named tuple (solution, residuals, rank, singular_values).

    >>> tapegrad.linalg.lstsq(tapegrad.eye(2), tapegrad.ones(2, 1)).solution
    tensor([[1.],
            [1.]])
    """
    a, b = A._array, B._array
    _check_matrix("linalg.lstsq", a)
    if driver is None:
        driver = "gelsy"
    if driver not in ("gels", "gelsy", "gelsd", "gelss"):
        raise RuntimeError("torch.linalg.lstsq: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)")
    if not (a.ndim >= b.ndim and a.ndim - b.ndim <= 1):
        raise RuntimeError("torch.linalg.lstsq: input.dim() must be greater or equal to other.dim() and "
                           "(input.dim() - other.dim()) <= 1")
    vector = b.ndim == a.ndim - 1
    if (b.shape[-1] if vector else b.shape[-2]) != a.shape[-2]:
        raise RuntimeError(f"torch.linalg.lstsq: input.size(-2) should match other.size(-{1 if vector else 2})")
    return linalg_lstsq_rt(*LinalgLstsq.apply(A, B, rcond, driver, vector))


@writes_out(dtype="cast", error=castable("torch.linalg.matrix_rank"))
@transform_visible()
@autocast_listed("fp32")
def matrix_rank(A, *, atol=None, rtol=None, hermitian=False, tol=None, out=None):
    """Number of singular values above max(atol, rtol * s_max) (int64).

    >>> tapegrad.linalg.matrix_rank(tapegrad.eye(3))
    tensor(3)
    """
    a = A._array
    _check_matrix("linalg.matrix_rank", a)
    if a.size == 0:           # (before the tolerances: torch's op_db passes empty tolerance tensors here)
        return Tensor._make(np.zeros(a.shape[:-2], np.int64))
    if tol is not None:
        atol, rtol = tol, 0.0
    # tolerances may be tensors over the batch (torch's rule: no rtol and a positive atol means rtol = 0)
    at = np.asarray(0.0 if atol is None else (atol._array if isinstance(atol, Tensor) else atol), np.float64)
    if rtol is None:
        rt = np.where(at > 0, 0.0, np.finfo(a.dtype).eps * max(a.shape[-2:])) if atol is not None else \
            np.asarray(np.finfo(a.dtype).eps * max(a.shape[-2:]))
    else:
        rt = np.asarray(rtol._array if isinstance(rtol, Tensor) else rtol, np.float64)
    broadcast_or_error(a.shape[:-2], at.shape, rt.shape)      # (torch's RuntimeError)
    s = np.abs(np.linalg.eigvalsh(a)) if hermitian else np.linalg.svd(a, compute_uv=False)
    cut = np.maximum(at[..., None], rt[..., None] * s.max(-1, keepdims=True))
    return Tensor._make(np.asarray((s > cut).sum(-1), np.int64))


@writes_out(error="linalg.vecdot: Expected out of dtype{r} but found {o}")
def vecdot(x, y, *, dim=-1, out=None):
    """Dot product of vectors along ``dim``, the first conjugated (batch dims broadcast).

    >>> tapegrad.linalg.vecdot(tapegrad.ones(2, 3), tapegrad.ones(3))
    tensor([3., 3.])
    """
    return (x.conj() * y).sum(dim)      # (complex: x conjugated, as torch's)


def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    """Diagonal of the matrices in A (``torch.diagonal`` with matrix defaults).

    >>> tapegrad.linalg.diagonal(tapegrad.eye(2))
    tensor([1., 1.])
    """
    return A.diagonal(offset=offset, dim1=dim1, dim2=dim2)


bind(cholesky=cholesky, qr=qr, svd=svd, pinverse=pinverse, matrix_power=matrix_power)
