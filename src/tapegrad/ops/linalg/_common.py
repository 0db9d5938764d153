# ruff: noqa: A002 - torch's argument names (input, ord)
"""Shared pieces of the linear-algebra ops: ``LinAlgError``, the ``torch.return_types`` named tuples, and
small helpers (constants, dtype and shape checks, LAPACK-style ``info`` codes).
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from ... import _dtype
from .._util import Tensor, sample_data


class LinAlgError(RuntimeError):
    """A numerical failure of a linear algebra routine (singular matrix, not positive-definite, ...)."""


LinAlgError.__module__ = "tapegrad.linalg"


def _rt(name, fields):
    """torch.return_types-style named tuple."""
    t = namedtuple(name, fields)
    t.__module__ = "tapegrad.return_types"

    def __repr__(self):
        body = ",\n".join(f"{f}={v!r}" for f, v in zip(self._fields, self))
        return f"tapegrad.return_types.{name}(\n{body})"
    t.__repr__ = __repr__
    return t


slogdet_rt = _rt("slogdet", ["sign", "logabsdet"])
linalg_slogdet_rt = _rt("linalg_slogdet", ["sign", "logabsdet"])
linalg_inv_ex_rt = _rt("linalg_inv_ex", ["inverse", "info"])
linalg_cholesky_ex_rt = _rt("linalg_cholesky_ex", ["L", "info"])
linalg_solve_ex_rt = _rt("linalg_solve_ex", ["result", "info"])
linalg_qr_rt = _rt("linalg_qr", ["Q", "R"])
qr_rt = _rt("qr", ["Q", "R"])
linalg_eigh_rt = _rt("linalg_eigh", ["eigenvalues", "eigenvectors"])
linalg_svd_rt = _rt("linalg_svd", ["U", "S", "Vh"])
svd_rt = _rt("svd", ["U", "S", "V"])
linalg_lstsq_rt = _rt("linalg_lstsq", ["solution", "residuals", "rank", "singular_values"])


# --------------------------------------------------------------------------------------------------------------
# small helpers (constants are plain arrays wrapped as tensors that do not require grad)

def _const(a) -> Tensor:
    return Tensor._make(np.asarray(a))


def _eye_like(n, dtype) -> Tensor:
    return _const(np.eye(n, dtype=dtype))


def _mT(x: Tensor) -> Tensor:
    return x.transpose(-1, -2)


def _tril_mask(n, k, dtype):
    return _const(np.tril(np.ones((n, n), dtype), k))


def _diag_embed(v: Tensor) -> Tensor:
    """(..., n) -> (..., n, n) with v on the diagonal (differentiable)."""
    n = v._array.shape[-1]
    return v.unsqueeze(-1) * _eye_like(n, v._array.dtype)


def _dtname(a) -> str:
    return _dtype.from_numpy_dtype(a.dtype)._legacy


def _check_float(op, a):
    if a.dtype.kind not in "fc":
        raise RuntimeError(f"{op}: Expected a floating point or complex tensor as input. Got {_dtname(a)}")
    if a.dtype == np.float16 and op not in _HALF_OK:     # (LAPACK has no half precision: torch refuses it too)
        kernel = _HALF_KERNEL.get(op)
        if kernel is not None:
            raise NotImplementedError(f"\"{kernel}\" not implemented for 'Half'")
        raise RuntimeError(f"{op}: Low precision dtypes not supported. Got Half")


def _no_half(a, kernel):
    """torch's error for a half-precision input of an op whose CPU kernel is ``kernel`` (a LAPACK routine)."""
    if a.dtype == np.float16:
        raise NotImplementedError(f"\"{kernel}\" not implemented for 'Half'")


# A half-precision input: the ops torch runs in half (no LAPACK behind them), and, for those it refuses with its
# CPU kernel's "not implemented" error, that kernel's name (the others say "Low precision dtypes not supported")
_HALF_OK = {"linalg.matrix_exp", "linalg.matrix_norm", "linalg.vector_norm"}
_HALF_KERNEL = {"linalg.det": "lu_cpu", "linalg.solve": "lu_cpu", "linalg.solve_ex": "lu_cpu",
                "linalg.cholesky": "cholesky_cpu", "linalg.cholesky_ex": "cholesky_cpu", "linalg.qr": "geqrf_cpu",
                "linalg.svd": "linalg_svd_cpu", "linalg.svdvals": "linalg_svd_cpu", "linalg.cond": "linalg_svd_cpu",
                "linalg.eig": "linalg_eig_out_cpu", "linalg.eigvals": "linalg_eig_out_cpu",
                "linalg.eigh": "linalg_eigh_cpu", "linalg.eigvalsh": "linalg_eigh_cpu",
                "linalg.solve_triangular": "triangular_solve_cpu", "torch.linalg.ldl_factor_ex":
                "ldl_factor_kernel_cpu", "cholesky_inverse": "cholesky_inverse_out_cpu"}


def _mH(x: Tensor) -> Tensor:
    """The conjugate transpose of the last two dims (the transpose for real x): what torch's linear-algebra
    gradients use, so that one formula serves real and complex matrices."""
    t = x.transpose(-1, -2)
    return t.conj() if x._array.dtype.kind == "c" else t


def _npH(a: np.ndarray) -> np.ndarray:
    """``_mH`` on an ndarray."""
    t = np.swapaxes(a, -1, -2)
    return np.conjugate(t) if a.dtype.kind == "c" else t


def _check_square(op, a, name="A"):
    _check_float(op, a)
    if a.ndim < 2:
        raise RuntimeError(f"{op}: The input tensor {name} must have at least 2 dimensions.")
    if a.shape[-1] != a.shape[-2]:
        raise RuntimeError(f"{op}: {name} must be batches of square matrices, but they are {a.shape[-2]} by "
                           f"{a.shape[-1]} matrices")


def _check_matrix(op, a, name="A"):
    _check_float(op, a)
    if a.ndim < 2:
        raise RuntimeError(f"{op}: The input tensor {name} must have at least 2 dimensions.")


def _batch_prefix(idx, batched):
    return f"(Batch element {idx}): " if batched else ""


def _lu_info(a: np.ndarray) -> np.ndarray:
    """LAPACK getrf's ``info`` per matrix: 1 + the index of the first exactly-zero pivot of LU with partial
    pivoting (0 when the factorisation succeeds). Vectorised over the batch; loops over the n columns."""
    n = a.shape[-1]
    u = np.array(a, dtype=a.dtype if a.dtype.kind in "fc" else np.float64).reshape(-1, n, n)
    info = np.zeros(u.shape[0], np.int32)
    rows = np.arange(u.shape[0])
    for k in range(n):
        p = k + np.argmax(np.abs(u[:, k:, k]), axis=1)
        u[rows, k], u[rows, p] = u[rows, p].copy(), u[rows, k].copy()
        piv = u[:, k, k]
        zero = piv == 0
        info[(info == 0) & zero] = k + 1
        safe = np.where(zero, 1, piv)
        f = u[:, k + 1:, k] / safe[:, None]
        f[zero] = 0
        u[:, k + 1:, k:] -= f[:, :, None] * u[:, k, None, k:]
    return info.reshape(a.shape[:-2])


def _cholesky_info(a: np.ndarray) -> np.ndarray:
    """LAPACK potrf's ``info`` per matrix: the order of the first leading minor that is not positive-definite."""
    n = a.shape[-1]
    flat = a.reshape(-1, n, n)
    info = np.zeros(flat.shape[0], np.int32)
    for k in range(1, n + 1):
        todo = info == 0
        for i in np.flatnonzero(todo):
            try:
                np.linalg.cholesky(flat[i, :k, :k])
            except np.linalg.LinAlgError:
                info[i] = k
    return info.reshape(a.shape[:-2])


def _info(info: Tensor):
    """(info array, batched?) for an error check: every sample's under vmap (so that a singular matrix in any
    sample raises, as in a per-sample loop and in torch), the batch counted in "(Batch element i)"."""
    a = sample_data(info)
    return a, a.ndim > 0


def _first_bad(info: np.ndarray):
    """(flat batch index, info value) of the first failed matrix, or None."""
    if info.__class__ is not np.ndarray:     # (a meta tensor's: no data, no failure to report)
        return None
    flat = info.reshape(-1)
    bad = np.flatnonzero(flat)
    return None if bad.size == 0 else (int(bad[0]), int(flat[bad[0]]))
