# ruff: noqa: A002 - torch's argument names (input, ord)
"""cdist and the norms: vector_norm, matrix_norm, linalg.norm, torch.norm; cond.
"""

from __future__ import annotations

import math

import numpy as np

from ... import _dtype
from .._util import castable, Primitive, Tensor, bind, writes_out, zero_link
from ._common import _check_float, _check_matrix, _check_square, _const, _dtname
from .products import _same_dtype
from .solvers import inv
from .decompositions import svdvals
from ..elementwise.unary import _sign
from .._util import autocast_listed


class Cdist(Primitive):
    """p-norm distance between each row of x1 (..., P, M) and each row of x2 (..., R, M)."""

    @staticmethod
    def forward(ctx, x1, x2, p):
        _same_dtype(x1, x2)
        ctx.p = p
        ctx.save_result(0, 1)
        diff = np.abs(x1[..., :, None, :] - x2[..., None, :, :])
        if p == 0:
            return np.asarray((diff != 0).sum(-1), x1.dtype)
        if p == 1:
            return diff.sum(-1)
        if p == 2:
            return np.sqrt((diff * diff).sum(-1))
        if math.isinf(p):
            return diff.max(-1) if diff.shape[-1] else np.zeros(diff.shape[:-1], x1.dtype)
        return np.asarray(np.power(np.power(diff, p).sum(-1), 1.0 / p), x1.dtype)

    @staticmethod
    def backward(ctx, grad):
        d, x1, x2 = ctx.saved_tensors
        p = ctx.p
        need = ctx.needs_input_grad
        if p == 0:
            return (x1 * 0 if need[0] else None), (x2 * 0 if need[1] else None), None
        diff = x1.unsqueeze(-2) - x2.unsqueeze(-3)           # (..., P, R, M)
        darr = diff._array
        sign = _const(_sign(darr))
        g = grad.unsqueeze(-1)
        if p == 1:
            w = g * sign
        else:
            zero = d._array == 0
            dk = (d + _const(zero.astype(darr.dtype))).unsqueeze(-1)      # avoid 0/0: torch gives 0 there
            keep = _const((~zero)[..., None].astype(darr.dtype))
            if p == 2:
                w = g * diff / dk * keep
            elif math.isinf(p):
                w = g * sign * _const((np.abs(darr) == d._array[..., None]).astype(darr.dtype))
            else:
                w = g * sign * diff.abs() ** (p - 1) / dk ** (p - 1) * keep
        return (w.sum(-2) if need[0] else None), (-w.sum(-3) if need[1] else None), None


def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """Pairwise p-norm distances between the rows of x1 (..., P, M) and x2 (..., R, M) -> (..., P, R).

    >>> tapegrad.cdist(tapegrad.zeros(2, 3), tapegrad.ones(4, 3)).shape
    tapegrad.Size([2, 4])
    """
    a, b = x1._array, x2._array
    if a.ndim < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X1 got: {a.ndim}D")
    if b.ndim < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X2 got: {b.ndim}D")
    if a.shape[-1] != b.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: {a.shape[-1]} X2: {b.shape[-1]}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    if a.dtype.kind not in "f":
        raise RuntimeError(f"cdist only supports floating-point dtypes, X1 got: {_dtname(a)}")
    if a.dtype == np.float16:
        raise NotImplementedError("\"cdist\" not implemented for 'Half'")
    return Cdist.apply(x1, x2, float(p))


# --------------------------------------------------------------------------------------------------------------
# norms

def _kept(x: Tensor, shape, dims, keepdim):
    """Reshape a reduced tensor so it broadcasts against the input again."""
    if keepdim or not dims:
        return x
    return x.reshape(tuple(1 if i in dims else s for i, s in enumerate(shape)))


class LinalgVectorNorm(Primitive):
    """``sum(|x|^ord) ^ (1/ord)`` over ``dims`` (inf/-inf: max/min of |x|; 0: count of non-zeros)."""

    @staticmethod
    def forward(ctx, x, ord, dims, keepdim):
        ctx.ord, ctx.dims, ctx.keepdim, ctx.shape = ord, dims, keepdim, x.shape
        ctx.save_result(0)
        a = np.abs(x)
        axis = dims
        if a.dtype == np.float16:       # torch accumulates Half in float32 and rounds the result once
            return LinalgVectorNorm.forward(ctx, a.astype(np.float32), ord, dims, keepdim).astype(np.float16)
        if ord == 2:
            out = np.sqrt(np.sum(a * a, axis=axis, keepdims=keepdim))
        elif ord == 1:
            out = np.sum(a, axis=axis, keepdims=keepdim)
        elif ord == 0:
            out = np.sum(a != 0, axis=axis, keepdims=keepdim)
        elif math.isinf(ord):
            out = (np.max if ord > 0 else np.min)(a, axis=axis, keepdims=keepdim)
        else:
            with np.errstate(divide="ignore"):
                out = np.power(np.sum(np.power(a, ord), axis=axis, keepdims=keepdim), 1.0 / ord)
        return np.asarray(out, a.dtype, order="C")

    @staticmethod
    def backward(ctx, grad):
        norm, x = ctx.saved_tensors
        p, dims, shape = ctx.ord, ctx.dims, ctx.shape
        if p == 0:
            return x * 0, None, None, None
        g = _kept(grad, shape, dims, ctx.keepdim)
        n = _kept(norm, shape, dims, ctx.keepdim)
        xa = x._array
        sign = x.sgn() if xa.dtype.kind == "c" else _const(_sign(xa))   # (z / |z|: not constant for complex)
        if p == 1:      # (linked to x, as torch's grad * sgn(x): create_graph's gradient stays connected)
            return zero_link(ctx, g * sign, 1), None, None, None
        if p < 1 and not math.isinf(p):
            # torch's form for p < 1 (negative p included): |x|^(p-1) is 0 where x is, and n^(1-p) is 0 at a zero
            # norm, so zeros get the zero subgradient instead of 0 * inf
            nonzero = _const((xa != 0).astype(xa.dtype))
            with np.errstate(divide="ignore", invalid="ignore"):
                scaled = sign * (x.abs() + _const((xa == 0).astype(xa.dtype))) ** (p - 1) * nonzero
            return scaled * g * n ** (1 - p), None, None, None
        if math.isinf(p):
            mask = (np.abs(xa) == n._array).astype(xa.dtype)
            count = np.maximum(mask.sum(axis=dims, keepdims=True), 1)     # (a NaN norm matches nothing: 0)
            return zero_link(ctx, g * sign * _const(mask / count), 1), None, None, None
        zero = n._array == 0
        n_safe = n + _const(zero.astype(xa.dtype))
        keep = _const((~zero).astype(xa.dtype))
        if p == 2:
            return g * x / n_safe * keep, None, None, None
        return g * sign * x.abs() ** (p - 1) / n_safe ** (p - 1) * keep, None, None, None


def _norm_dims(dim, ndim):
    if dim is None:
        return tuple(range(ndim))
    if isinstance(dim, (int, np.integer)):
        dim = (int(dim),)
    from .._util import normalize_dim
    dims = tuple(normalize_dim(int(d), ndim) for d in dim)
    if len(set(dims)) != len(dims):
        raise RuntimeError(f"dim {dims[0]} appears multiple times in the list of dims")
    return dims


def _vector_norm_dtype_check(x, dtype):
    """torch's checks of ``dtype=``, in its order: the input itself floating (an integer input is refused even
    with a floating ``dtype``), complex matching complex, and a cast that does not narrow."""
    _check_float("linalg.vector_norm", x._array)
    src, kind = x.dtype, "complex" if x.dtype.is_complex else "real"
    if src.is_complex != dtype.is_complex:
        raise RuntimeError(f"linalg.vector_norm: dtype should be {kind} for {kind} inputs, but got {dtype._legacy}")
    if _dtype.promote_types(src, dtype) is not dtype:
        raise RuntimeError(f"linalg.vector_norm: the dtype of the input ({src._legacy}) should be convertible "
                           f"without narrowing to the specified dtype ({dtype._legacy})")


@writes_out
def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None, out=None):
    """Vector norm of ``x`` over ``dim`` (all elements when None): ord = 2, 1, inf, -inf, 0 or any float.

    >>> tapegrad.linalg.vector_norm(tapegrad.tensor([3., 4.]))
    tensor(5.)
    """
    if isinstance(ord, str):
        raise RuntimeError(f"linalg.vector_norm: Expected a number for ord, but got {ord!r}")
    a = x._array
    if dtype is not None:
        dtype = _dtype.to_dtype(dtype)
        _vector_norm_dtype_check(x, dtype)
        x = x.to(dtype)
        a = x._array
    _check_float("linalg.vector_norm", a)
    ndim = a.ndim
    dims = _norm_dims(dim, ndim) if ndim else ()
    if ndim and dim is not None and not isinstance(dim, (int, np.integer)) and len(dim) == 0:
        dims = tuple(range(ndim))
    ord = float(ord)
    if (math.isinf(ord) or ord < 0) and any(a.shape[d] == 0 for d in dims):     # no identity: torch's error
        where = "on an empty tensor because" if dim is None else \
            f"on the dimension {next(d for d in dims if a.shape[d] == 0)}because this dimension is empty and"
        raise RuntimeError(f"linalg.vector_norm cannot compute the {ord:g} norm {where} the operation does not "
                           "have an identity")
    return LinalgVectorNorm.apply(x, ord, dims, bool(keepdim))


class Amax(Primitive):
    """max over dims (gradient split evenly between ties); ``Amin`` is the min."""

    node_name = "AmaxBackward0"
    reducer = staticmethod(np.max)

    @classmethod
    def forward(cls, ctx, x, dims, keepdim):
        out = cls.reducer(x, axis=dims, keepdims=True)
        mask = (x == out).astype(x.dtype)
        ctx.weight = mask / mask.sum(axis=dims, keepdims=True)
        ctx.dims, ctx.keepdim, ctx.shape = dims, keepdim, x.shape
        return out if keepdim else np.squeeze(out, dims)

    @staticmethod
    def backward(ctx, grad):
        return _kept(grad, ctx.shape, ctx.dims, ctx.keepdim) * _const(ctx.weight), None, None


class Amin(Amax):
    node_name = "AminBackward0"
    reducer = staticmethod(np.min)


@writes_out(error="linalg.matrix_norm expected out tensor dtype {r} but got: {o}")
def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None, out=None):
    """Matrix norm over the two dims ``dim``: 'fro', 'nuc', 2, -2, 1, -1, inf, -inf.

    >>> tapegrad.linalg.matrix_norm(tapegrad.eye(3))
    tensor(1.7321)
    """
    if dtype is not None:
        A = A.to(_dtype.to_dtype(dtype))
    a = A._array
    _check_matrix("linalg.matrix_norm", a)
    dims = _norm_dims(dim, a.ndim)
    if len(dims) != 2:
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {' '.join(map(str, dim))}")
    if dims[0] == dims[1]:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got ({dims[0]}, {dims[1]})")
    if ord == "fro":
        return vector_norm(A, 2, dims, keepdim)
    if ord in ("nuc", 2, -2):
        if a.dtype == np.float16:
            raise RuntimeError("linalg.matrix_norm: Low precision dtypes not supported. Got Half")
        perm = [i for i in range(a.ndim) if i not in dims] + list(dims)
        s = svdvals(A.permute(perm) if perm != list(range(a.ndim)) else A)
        if ord == "nuc":
            res = s.sum(-1)
        else:
            res = (Amax if ord == 2 else Amin).apply(s, (s._array.ndim - 1,), False)
        if keepdim:
            for d in sorted(dims):
                res = res.unsqueeze(d)
        return res
    if ord in (1, -1, math.inf, -math.inf):
        d0, d1 = (dims[0], dims[1]) if ord in (1, -1) else (dims[1], dims[0])
        s = A.abs().sum(d0, keepdim=True)
        return (Amax if ord > 0 else Amin).apply(s, tuple(sorted((d0, d1))), bool(keepdim))
    raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")


@writes_out(error="linalg.norm expected out tensor dtype {r} but got: {o}")
def linalg_norm(A, ord=None, dim=None, keepdim=False, *, dtype=None, out=None):
    """Vector or matrix norm: a matrix norm when ``dim`` is a 2-tuple (or ``ord`` is given for a 2-d input).

    >>> tapegrad.linalg.norm(tapegrad.tensor([3., 4.]))
    tensor(5.)
    """
    a = A._array
    if dim is not None:
        if isinstance(dim, (int, np.integer)):
            dim = (int(dim),)
        dim = tuple(dim)
        if len(dim) == 1:
            if isinstance(ord, str):
                raise RuntimeError(f"linalg.vector_norm: Expected a number for ord, but got {ord!r}")
            return vector_norm(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype)
        if len(dim) == 2:
            return matrix_norm(A, "fro" if ord is None else ord, dim, keepdim, dtype=dtype)
        raise RuntimeError("linalg.norm: If dim is specified, it must be of length 1 or 2. Got "
                           f"[{', '.join(map(str, dim))}]")
    if ord is None:
        return vector_norm(A, 2, None, keepdim, dtype=dtype)
    if a.ndim == 2 or isinstance(ord, str):
        if a.ndim not in (1, 2) and not isinstance(ord, str):
            raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. "
                               f"Got {a.ndim}D.")
        return matrix_norm(A, ord, (-2, -1), keepdim, dtype=dtype)
    if a.ndim != 1:
        raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. "
                           f"Got {a.ndim}D.")
    return vector_norm(A, ord, None, keepdim, dtype=dtype)


@writes_out
def norm(input, p="fro", dim=None, keepdim=False, out=None, dtype=None):
    """torch.norm: a vector norm over ``dim`` (``p`` a number or 'fro'), or the nuclear norm (``p='nuc'``).

    >>> tapegrad.norm(tapegrad.tensor([[3., 4.]]))
    tensor(5.)
    """
    if isinstance(dim, (int, np.integer)):
        dim = (int(dim),)
    if isinstance(p, str):
        if p == "fro" and (dim is None or len(dim) <= 2):
            return vector_norm(input, 2, dim, keepdim, dtype=dtype)
        return matrix_norm(input, p, tuple(range(input._array.ndim)) if dim is None else dim, keepdim, dtype=dtype)
    return vector_norm(input, 2.0 if p is None else p, dim, keepdim, dtype=dtype)


@writes_out(dtype="cast", error=castable("linalg.cond"))
@autocast_listed("fp32")
def cond(A, p=None, *, out=None):
    """Condition number: s_max / s_min for p None/2 (-2: the reverse); else norm(A, p) * norm(inv(A), p).

    >>> tapegrad.linalg.cond(tapegrad.eye(2))
    tensor(1.)
    """
    _check_matrix("linalg.cond", A._array)
    if p in (None, 2, -2):
        s = svdvals(A)
        hi, lo = s[..., :1], s[..., -1:]
        return (hi / lo if p != -2 else lo / hi).squeeze(-1)
    _check_square("linalg.cond", A._array)
    return matrix_norm(A, p) * matrix_norm(inv(A), p)


bind(norm=norm)
