# ruff: noqa: A002 - torch's argument names (input, ord)
"""Inverses, determinants and solves: inv (inv_ex), det, slogdet, logdet, solve (solve_ex),
solve_triangular, cholesky_solve, cholesky_inverse; and matrix_exp.
"""

from __future__ import annotations

import math

import numpy as np

from ... import _dtype
from .._util import castable, Primitive, Tensor, bind, writes_out
from ._common import (LinAlgError, _batch_prefix, _check_matrix, _check_square, _const, _dtname, _first_bad, _lu_info,
                      _mH, _no_half, _npH, linalg_inv_ex_rt, linalg_slogdet_rt, linalg_solve_ex_rt, slogdet_rt, _info)
from .products import _cat_last, _same_dtype, matmul
from .._util import autocast_listed


class LinalgInvEx(Primitive):
    """(inverse, info): info > 0 marks a singular matrix (the 1-based index of the zero pivot)."""

    @staticmethod
    def forward(ctx, a):
        ctx.set_materialize_grads(False)
        try:
            inv = np.linalg.inv(a)
            info = np.zeros(a.shape[:-2], np.int32)
        except np.linalg.LinAlgError:
            n = a.shape[-1]
            info = _lu_info(a).astype(np.int32).reshape(-1)
            inv = np.full(a.shape, np.nan, a.dtype).reshape(-1, n, n)
            flat = a.reshape(-1, n, n)
            for i in np.flatnonzero(info == 0):
                try:
                    inv[i] = np.linalg.inv(flat[i])
                except np.linalg.LinAlgError:   # LAPACK met an exact zero pivot our LU rounding avoided
                    info[i] = n
            info, inv = info.reshape(a.shape[:-2]), inv.reshape(a.shape)
        out = Tensor._make(np.asarray(inv, a.dtype))
        ctx.save_for_backward(out)
        return out, info

    @staticmethod
    def backward(ctx, grad, _ginfo):
        inv, = ctx.saved_tensors
        if grad is None:
            return (None,)
        ih = _mH(inv)
        return -matmul(ih, matmul(grad, ih))


@writes_out
@autocast_listed("fp32")
def inv_ex(A, *, check_errors=False, out=None):
    """Inverse plus an ``info`` tensor (int32, 0 where the matrix was invertible) instead of an error.

    >>> tapegrad.linalg.inv_ex(tapegrad.eye(2)).info
    tensor(0, dtype=tapegrad.int32)
    """
    _check_square("linalg.inv_ex", A._array)
    inv, info = LinalgInvEx.apply(A)
    if check_errors:
        _raise_inv(*_info(info), "linalg.inv_ex")
    return linalg_inv_ex_rt(inv, info)


def _raise_inv(info, batched, op="linalg.inv"):
    bad = _first_bad(info)
    if bad is not None:
        raise LinAlgError(f"{op}: {_batch_prefix(bad[0], batched)}The diagonal element {bad[1]} is zero, the "
                          "inversion could not be completed because the input matrix is singular.")


@writes_out
@autocast_listed("fp32")
def inv(A, *, out=None):
    """Inverse of a square matrix (or a batch of them); singular input raises ``LinAlgError``.

    >>> tapegrad.linalg.inv(2 * tapegrad.eye(2))
    tensor([[0.5000, 0.0000],
            [0.0000, 0.5000]])
    """
    _check_square("linalg.inv", A._array)
    res, info = LinalgInvEx.apply(A)
    _raise_inv(*_info(info))
    return res


@writes_out
@autocast_listed("fp32")
def inverse(input, *, out=None):
    """Alias of ``linalg.inv``."""
    return inv(input)


class LinalgDet(Primitive):
    """Determinant; the gradient ``conj(det) * inv(A)^H`` assumes an invertible matrix."""

    @staticmethod
    def forward(ctx, a):
        ctx.save_result(0)
        return np.asarray(np.linalg.det(a), a.dtype)

    @staticmethod
    def backward(ctx, grad):
        d, a = ctx.saved_tensors
        return (grad * d.conj()).unsqueeze(-1).unsqueeze(-1) * _mH(inv(a))


@writes_out
def det(A, *, out=None):
    """Determinant of a square matrix (or batch).

    >>> tapegrad.linalg.det(2 * tapegrad.eye(2))
    tensor(4.)
    """
    _check_square("linalg.det", A._array)
    return LinalgDet.apply(A)


class LinalgSlogdet(Primitive):
    """(sign, log|det|). For real matrices only log|det| carries a gradient, ``g * inv(A)^T``; for complex ones
    the sign (a unit complex number) does too: ``(g_log - i Im(conj(g_sign) sign)) * inv(A)^H``."""

    @staticmethod
    def forward(ctx, a):
        ctx.set_materialize_grads(False)
        s, l = np.linalg.slogdet(a)
        if a.dtype.kind == "c":
            ctx.save_result(0)
            return np.asarray(s, a.dtype), np.asarray(l, a.real.dtype)
        ctx.save_inputs(0)
        return np.asarray(s, a.dtype), np.asarray(l, a.dtype)

    @staticmethod
    def backward(ctx, gsign, glog):
        saved = ctx.saved_tensors
        a = saved[-1]
        if a._array.dtype.kind == "c":
            sign = saved[0]
            g = None if glog is None else glog + 0j
            if gsign is not None:
                gs = (gsign.conj() * sign).imag * -1j
                g = gs if g is None else g + gs
            if g is None:
                return (None,)
            return g.unsqueeze(-1).unsqueeze(-1) * _mH(inv(a))
        if glog is None:
            return (None,)
        return glog.unsqueeze(-1).unsqueeze(-1) * _mH(inv(a))


def _slogdet(A, op, rt):
    _check_square(op, A._array)
    return rt(*LinalgSlogdet.apply(A))


@writes_out
def linalg_slogdet(A, *, out=None):
    """(sign, logabsdet) of the determinant, as a named tuple.

    >>> tapegrad.linalg.slogdet(2 * tapegrad.eye(2)).logabsdet
    tensor(1.3863)
    """
    return _slogdet(A, "linalg.slogdet", linalg_slogdet_rt)


@writes_out
def slogdet(input, *, out=None):
    """(sign, logabsdet) of the determinant (``torch.slogdet``).

    >>> tapegrad.slogdet(2 * tapegrad.eye(2)).sign
    tensor(1.)
    """
    return _slogdet(input, "linalg.slogdet", slogdet_rt)


class _NanWhere(Primitive):
    """``where(sign < 0, nan, x)``: the last step of logdet."""

    node_name = "WhereBackward0"

    @staticmethod
    def forward(ctx, x, neg):
        ctx.keep = (~neg).astype(x.dtype)
        return np.where(neg, np.asarray(np.nan, x.dtype), x)

    @staticmethod
    def backward(ctx, grad):
        return grad * _const(ctx.keep), None


def logdet(input):
    """log(det(A)); nan for a negative determinant, -inf for a zero one.

    >>> tapegrad.logdet(2 * tapegrad.eye(2))
    tensor(1.3863)
    """
    _check_square("linalg.slogdet", input._array)
    s, l = LinalgSlogdet.apply(input)
    if input._array.dtype.kind == "c":        # log det = log|det| + i angle(det)
        return l + s.log()
    return _NanWhere.apply(l, s._array < 0)


def _solve_shapes(A, B, left, op="linalg.solve"):
    a, b = A._array, B._array
    _check_square(op, a)
    if a.dtype != b.dtype:
        raise RuntimeError(f"{op}: Expected A and B to have the same dtype, but found A of type {_dtname(a)} and B "
                           f"of type {_dtname(b)} instead")
    vector = b.ndim == 1 or (b.ndim == a.ndim - 1 and b.shape == a.shape[:-1])
    n = a.shape[-1]
    if vector and not left:
        raise RuntimeError(f"{op}: Incompatible shapes of A and B for the equation XA = B ({n}x{n} and "
                           f"{b.shape[-1]}x1)")
    rows = b.shape[-1] if vector else (b.shape[-2] if left else b.shape[-1])
    if rows != n:
        other = 1 if vector else (b.shape[-1] if left else b.shape[-2])
        eq = "AX = B" if left else "XA = B"
        sb = f"{rows}x{other}" if left else f"{other}x{rows}"
        raise RuntimeError(f"{op}: Incompatible shapes of A and B for the equation {eq} ({n}x{n} and {sb})")
    return vector


class LinalgSolveEx(Primitive):
    """X with A X = B (``left``) or X A = B; B may be a (batch of) vector(s)."""

    @staticmethod
    def forward(ctx, a, b, left, vector):
        ctx.left, ctx.vector = left, vector
        ctx.save_result(0)
        bb = b[..., None] if vector else b
        am = a if left else np.swapaxes(a, -1, -2)
        bm = bb if left or vector else np.swapaxes(bb, -1, -2)
        try:
            x = np.linalg.solve(am, bm)
        except np.linalg.LinAlgError:
            raise LinAlgError("torch.linalg.solve: The solver failed because the input matrix is singular.") from None
        if vector:
            x = x[..., 0]
        elif not left:
            x = np.swapaxes(x, -1, -2)
        return np.ascontiguousarray(x)

    @staticmethod
    def backward(ctx, grad):
        x, a = ctx.saved_tensors
        need = ctx.needs_input_grad
        gb = LinalgSolveEx.apply(_mH(a), grad, ctx.left, ctx.vector)
        ga = None
        if need[0]:
            xc = x.conj() if x._array.dtype.kind == "c" else x
            if ctx.vector:
                ga = -(gb.unsqueeze(-1) * xc.unsqueeze(-2) if ctx.left else xc.unsqueeze(-1) * gb.unsqueeze(-2))
            else:
                ga = -(matmul(gb, _mH(x)) if ctx.left else matmul(_mH(x), gb))
        return ga, (gb if need[1] else None), None, None


@writes_out
@autocast_listed("fp32")
def solve(A, B, *, left=True, out=None):
    """Solve ``A X = B`` (or ``X A = B`` with ``left=False``); batch dims broadcast; B may be a vector.

    >>> tapegrad.linalg.solve(2 * tapegrad.eye(2), tapegrad.ones(2))
    tensor([0.5000, 0.5000])
    """
    vector = _solve_shapes(A, B, left)
    return LinalgSolveEx.apply(A, B, bool(left), vector)


@writes_out
def solve_ex(A, B, *, left=True, check_errors=False, out=None):
    """``solve`` that returns (result, info); a singular matrix still raises here (info is always 0)."""
    x = solve(A, B, left=left)
    return linalg_solve_ex_rt(x, Tensor._make(np.zeros(A._array.shape[:-2], np.int32)))


# --------------------------------------------------------------------------------------------------------------
# triangular / Cholesky solves, matrix exponential

def _tri(a: np.ndarray, upper, unit):
    t = np.triu(a) if upper else np.tril(a)
    if unit:
        n = a.shape[-1]
        t = t * (1 - np.eye(n, dtype=a.dtype)) + np.eye(n, dtype=a.dtype)
    return t


class LinalgSolveTriangular(Primitive):
    """X with A X = B (``left``) or X A = B, reading only the ``upper``/lower triangle of A."""

    @staticmethod
    def forward(ctx, a, b, upper, left, unit):
        _same_dtype(a, b)
        ctx.upper, ctx.left, ctx.unit = upper, left, unit
        ctx.save_result(0)
        t = _tri(a, upper, unit)
        with np.errstate(divide="ignore", invalid="ignore"):
            if left:
                x = np.linalg.solve(t, b) if _nonsingular(t) else _tri_subst(t, b, upper)
            else:
                tt = np.swapaxes(t, -1, -2)
                bt = np.swapaxes(b, -1, -2)
                x = np.swapaxes(np.linalg.solve(tt, bt) if _nonsingular(t) else _tri_subst(tt, bt, not upper), -1, -2)
        return np.ascontiguousarray(np.asarray(x, a.dtype))

    @staticmethod
    def backward(ctx, grad):
        x, a = ctx.saved_tensors
        need = ctx.needs_input_grad
        up, left, unit = ctx.upper, ctx.left, ctx.unit
        gb = LinalgSolveTriangular.apply(_mH(a), grad, not up, left, unit)
        ga = None
        if need[0]:
            ga = -(matmul(gb, _mH(x)) if left else matmul(_mH(x), gb))
            n = a._array.shape[-1]
            k = (1 if up else -1) if unit else 0
            mask = np.triu(np.ones((n, n), ga._array.dtype), k) if up else np.tril(np.ones((n, n), ga._array.dtype), k)
            ga = ga * _const(mask)
        return ga, (gb if need[1] else None), None, None, None


def _nonsingular(t):
    d = np.diagonal(t, axis1=-2, axis2=-1)
    return bool(np.all(d != 0))


def _tri_subst(t, b, upper):
    """Back/forward substitution (used only for singular triangles, to give LAPACK's inf/nan results)."""
    n = t.shape[-1]
    shape = np.broadcast_shapes(t.shape[:-2], b.shape[:-2])
    t = np.broadcast_to(t, shape + t.shape[-2:])
    x = np.array(np.broadcast_to(b, shape + b.shape[-2:]), dtype=np.result_type(t, b))
    order = range(n - 1, -1, -1) if upper else range(n)
    done = []
    for i in order:
        acc = x[..., i, :]
        for j in done:
            acc = acc - t[..., i, j, None] * x[..., j, :]
        x[..., i, :] = acc / t[..., i, i, None]
        done.append(i)
    return x


@writes_out(error="expected scalar type {r} but found {o}")
def solve_triangular(A, B, *, upper, left=True, unitriangular=False, out=None):
    """Solve a triangular system ``A X = B`` (``left=False``: ``X A = B``), reading one triangle of A.

    >>> tapegrad.linalg.solve_triangular(2 * tapegrad.eye(2), tapegrad.ones(2, 1), upper=True)
    tensor([[0.5000],
            [0.5000]])
    """
    a, b = A._array, B._array
    if a.dtype.kind in "iub":          # (torch takes B in A's dtype, then has no integer kernel)
        raise NotImplementedError(f"\"triangular_solve_cpu\" not implemented for "
                                  f"'{_dtype.from_numpy_dtype(a.dtype)._legacy}'")
    _check_matrix("linalg.solve_triangular", a)
    if b.ndim < 2:
        raise RuntimeError("linalg.solve_triangular: The input tensor B must have at least 2 dimensions.")
    if a.shape[-1] != a.shape[-2]:
        raise RuntimeError(f"linalg.solve_triangular: A must be batches of square matrices, but they are "
                           f"{a.shape[-2]} by {a.shape[-1]} matrices")
    n = a.shape[-1]
    if (b.shape[-2] if left else b.shape[-1]) != n:
        eq, sb = ("AX = B", f"{b.shape[-2]}x{b.shape[-1]}") if left else ("XA = B", f"{b.shape[-2]}x{b.shape[-1]}")
        raise RuntimeError(f"linalg.solve_triangular: Incompatible shapes of A and B for the equation {eq} "
                           f"({n}x{n} and {sb})")
    if b.dtype != a.dtype:     # torch solves in A's dtype: B is converted (its gradient comes back in its own)
        B = B.to(A.dtype)
    return LinalgSolveTriangular.apply(A, B, bool(upper), bool(left), bool(unitriangular))


class CholeskySolve(Primitive):
    """X = (L L^H)^{-1} B (``upper``: (U^H U)^{-1} B)."""

    @staticmethod
    def forward(ctx, b, l, upper):
        _same_dtype(b, l)
        ctx.upper = upper
        ctx.save_result(1)
        a = np.matmul(_npH(l), l) if upper else np.matmul(l, _npH(l))
        return np.asarray(np.linalg.solve(a, b), b.dtype)

    @staticmethod
    def backward(ctx, grad):
        x, l = ctx.saved_tensors
        need = ctx.needs_input_grad
        gb = CholeskySolve.apply(grad, l, ctx.upper)
        gl = None
        if need[1]:
            common = matmul(gb, _mH(x))
            common = common + _mH(common)
            gl = -(matmul(l, common) if ctx.upper else matmul(common, l))
        return (gb if need[0] else None), gl, None


@writes_out(dtype="cast", error=castable("cholesky_solve"))
@autocast_listed("fp32")
def cholesky_solve(input, input2, upper=False, *, out=None):
    """Solve A X = B given A's Cholesky factor (``input`` is B, ``input2`` is L, or U with ``upper=True``).

    >>> tapegrad.cholesky_solve(tapegrad.ones(2, 1), 2 * tapegrad.eye(2))
    tensor([[0.2500],
            [0.2500]])
    """
    b, l = input._array, input2._array
    if b.ndim < 2 or l.ndim < 2:
        raise RuntimeError(f"b should have at least 2 dimensions, but has {b.ndim} dimensions instead" if b.ndim < 2
                           else f"u should have at least 2 dimensions, but has {l.ndim} dimensions instead")
    _no_half(b if b.dtype == np.float16 else l, "cholesky_solve_cpu")
    _b_and_a_same_dtype(b, l)
    return CholeskySolve.apply(input, input2, bool(upper))


def _b_and_a_same_dtype(b, a):
    """cholesky_solve's / triangular_solve's dtype check, in torch's words."""
    if b.dtype != a.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type "
                           f"{_dtype.from_numpy_dtype(b.dtype)._legacy} and A of type "
                           f"{_dtype.from_numpy_dtype(a.dtype)._legacy} instead.")


class CholeskyInverse(Primitive):
    """(L L^H)^{-1} from the Cholesky factor L (or U with ``upper``)."""

    @staticmethod
    def forward(ctx, l, upper):
        ctx.upper = upper
        ctx.save_result(0)
        a = np.matmul(_npH(l), l) if upper else np.matmul(l, _npH(l))
        return np.asarray(np.linalg.inv(a), l.dtype)

    @staticmethod
    def backward(ctx, grad):
        inv_, l = ctx.saved_tensors
        common = matmul(inv_, matmul(grad + _mH(grad), inv_))
        return -(matmul(l, common) if ctx.upper else matmul(common, l)), None


@writes_out(dtype="cast", error=castable("cholesky_inverse"))
@autocast_listed("fp32")
def cholesky_inverse(input, upper=False, *, out=None):
    """Inverse of A = L L^T from its Cholesky factor L (U with ``upper=True``).

    >>> tapegrad.cholesky_inverse(2 * tapegrad.eye(2))
    tensor([[0.2500, 0.0000],
            [0.0000, 0.2500]])
    """
    _check_square("cholesky_inverse", input._array, "input")
    return CholeskyInverse.apply(input, bool(upper))


# Higham's degree-13 Padé approximant of exp (scaling and squaring): its coefficients, and the 1-norm up to which
# it is accurate to double precision without scaling
_PADE13 = (64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0, 129060195264000.0,
           10559470521600.0, 670442572800.0, 33522128640.0, 1323241920.0, 40840800.0, 960960.0, 16380.0, 182.0, 1.0)
_THETA13 = 5.371920351148152


def _expm_np(a: np.ndarray) -> np.ndarray:
    """exp(A) (batched): scaling and squaring with the degree-13 Padé approximant, computed in float64 (complex128)
    whatever A's dtype and cast back, so float32 results are as accurate as float32 can hold."""
    if a.size == 0:
        return a.copy()
    work = np.complex128 if a.dtype.kind == "c" else np.float64
    x = a.astype(work)
    norm = float(np.abs(x).sum(-2).max())
    s = max(0, int(math.ceil(math.log2(norm / _THETA13)))) if norm > _THETA13 else 0
    if s:
        x = x / (2.0 ** s)
    b = _PADE13
    eye = np.broadcast_to(np.eye(a.shape[-1], dtype=work), x.shape)
    x2 = x @ x
    x4 = x2 @ x2
    x6 = x4 @ x2
    u = x @ (x6 @ (b[13] * x6 + b[11] * x4 + b[9] * x2) + b[7] * x6 + b[5] * x4 + b[3] * x2 + b[1] * eye)
    v = x6 @ (b[12] * x6 + b[10] * x4 + b[8] * x2) + b[6] * x6 + b[4] * x4 + b[2] * x2 + b[0] * eye
    res = np.linalg.solve(v - u, v + u)
    for _ in range(s):
        res = res @ res
    return res.astype(a.dtype)


class LinalgMatrixExp(Primitive):
    """Matrix exponential; its gradient is a block of exp([[A^H, G], [0, A^H]]) (so it is differentiable again)."""

    @staticmethod
    def forward(ctx, a):
        ctx.save_inputs(0)
        return np.asarray(_expm_np(a), a.dtype)

    @staticmethod
    def backward(ctx, grad):
        a, = ctx.saved_tensors
        n = a._array.shape[-1]
        at = _mH(a)
        zero = _const(np.zeros(a._array.shape, a._array.dtype))
        top = _cat_last(at, grad)
        bottom = _cat_last(zero, at)
        dt = a._array.dtype
        meta = matmul(_const(np.eye(2 * n, n, dtype=dt)), top) + matmul(_const(np.eye(2 * n, n, k=-n, dtype=dt)),
                                                                           bottom)
        big = LinalgMatrixExp.apply(meta)
        return big[..., :n, n:]


def matrix_exp(A):
    """Matrix exponential exp(A) = sum A^k / k! (batched).

    >>> tapegrad.linalg.matrix_exp(tapegrad.zeros(2, 2))
    tensor([[1., 0.],
            [0., 1.]])
    """
    _check_square("linalg.matrix_exp", A._array)
    return LinalgMatrixExp.apply(A)


bind(det=det, inverse=inverse, logdet=logdet, slogdet=slogdet, cholesky_solve=cholesky_solve,
     cholesky_inverse=cholesky_inverse, matrix_exp=matrix_exp)
