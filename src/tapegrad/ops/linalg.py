# ruff: noqa: A002 - torch's argument names (input, ord)
"""Linear algebra: the matmul family, einsum/tensordot, norms, and the decompositions behind ``tapegrad.linalg``.

Forwards run NumPy's LAPACK routines; every backward is written in tapegrad ops (mostly ``matmul``, ``einsum``,
``linalg.inv`` and ``linalg.solve``, which are themselves Primitives here), so second derivatives work.
Gradients follow PyTorch's formulas (``FunctionsManual.cpp``) and, like them, assume well-conditioned inputs
(distinct eigen/singular values for ``eigh``/``svd``; invertible matrices for ``det``).
"""

from __future__ import annotations

import math
import string
from collections import namedtuple

import numpy as np

from .. import _dtype
from ._util import Primitive, Tensor, bind, input_shape, mT, op_error, promote, sum_to_shape

__all__ = ["matmul", "mm", "bmm", "mv", "dot", "vdot", "inner", "outer", "ger", "addmm", "addmv", "addr", "baddbmm",
           "addbmm", "einsum", "tensordot", "kron", "cross", "trace", "chain_matmul", "cdist", "norm", "det",
           "inverse", "logdet", "slogdet", "cholesky", "qr", "svd", "pinverse", "matrix_power", "cholesky_solve",
           "cholesky_inverse", "matrix_exp"]


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


def _diagonal(x: Tensor) -> Tensor:
    return einsum("...ii->...i", x)


def _dtname(a) -> str:
    return _dtype.from_numpy_dtype(a.dtype)._legacy


def _check_float(op, a):
    if a.dtype.kind not in "fc":
        raise RuntimeError(f"{op}: Expected a floating point or complex tensor as input. Got {_dtname(a)}")
    if a.dtype.kind == "c":
        raise NotImplementedError(f"{op}: complex inputs are not supported by tapegrad's linear algebra (its "
                                  "gradients are written for real matrices); use a real floating dtype")


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


def _first_bad(info: np.ndarray):
    """(flat batch index, info value) of the first failed matrix, or None."""
    flat = info.reshape(-1)
    bad = np.flatnonzero(flat)
    return None if bad.size == 0 else (int(bad[0]), int(flat[bad[0]]))


# --------------------------------------------------------------------------------------------------------------
# matmul and friends

_CNAME = {"float32": "float", "float64": "double", "int64": "long", "int32": "int", "int16": "short", "int8": "char",
          "uint8": "unsigned char", "bool": "bool", "float16": "c10::Half", "complex64": "c10::complex<float>",
          "complex128": "c10::complex<double>"}


def _same_dtype(a, b):
    if a.dtype != b.dtype:
        na, nb = _CNAME.get(a.dtype.name, a.dtype.name), _CNAME.get(b.dtype.name, b.dtype.name)
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {na} != {nb}")


class Matmul(Primitive):
    """``a @ b`` with NumPy's (and torch's) rules for 1-d operands and broadcast batch dims."""

    node_name = "UnsafeViewBackward0"
    array_backward = True

    @staticmethod
    def forward(ctx, a, b):
        if a.ndim == 0 or b.ndim == 0:
            raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {a.ndim}D and "
                               f"{b.ndim}D")
        ka = a.shape[-1]
        kb = b.shape[-2] if b.ndim > 1 else b.shape[0]
        if ka != kb:
            if a.ndim == 1 and b.ndim == 1:
                raise RuntimeError(f"inconsistent tensor size, expected tensor [{a.shape[0]}] and src "
                                   f"[{b.shape[0]}] to have the same number of elements, but got {a.shape[0]} and "
                                   f"{b.shape[0]} elements respectively")
            rows = math.prod(a.shape[:-1]) if b.ndim <= 2 else (a.shape[-2] if a.ndim > 1 else 1)
            sa = f"{rows}x{ka}"
            sb = f"{kb}x{b.shape[-1] if b.ndim > 1 else 1}"
            raise op_error("matmul", f"shapes ({', '.join(map(str, a.shape))}) and ({', '.join(map(str, b.shape))})"
                           f" cannot be multiplied ({ka} != {kb}) [mat1 and mat2 shapes cannot be multiplied "
                           f"({sa} and {sb})]")
        _same_dtype(a, b)
        ctx.save_crossed(0, 1)       # each operand only for the other's gradient
        return np.matmul(a, b)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors     # (a is None when b needs no gradient, and the other way round)
        need = ctx.needs_input_grad
        sa = input_shape(ctx, 0) if need[0] else tuple(a.shape)
        sb = input_shape(ctx, 1) if need[1] else tuple(b.shape)
        if len(sa) == 1 and len(sb) == 1:
            return (grad * b if need[0] else None), (grad * a if need[1] else None)
        # (reshape, not unsqueeze, and @: the same formula runs on Tensors and on arrays)
        g2 = grad
        if len(sa) == 1:
            g2 = g2.reshape(tuple(g2.shape[:-1]) + (1,) + tuple(g2.shape[-1:]))
        if len(sb) == 1:
            g2 = g2.reshape(tuple(g2.shape) + (1,))
        ga = gb = None
        if need[0]:
            b2 = b.reshape(sb + (1,)) if len(sb) == 1 else b
            ga = sum_to_shape(g2 @ mT(b2), (1,) + sa if len(sa) == 1 else sa)
            if len(sa) == 1:
                ga = ga.reshape(sa)
        if need[1]:
            a2 = a.reshape((1,) + sa) if len(sa) == 1 else a
            gb = sum_to_shape(mT(a2) @ g2, sb + (1,) if len(sb) == 1 else sb)
            if len(sb) == 1:
                gb = gb.reshape(sb)
        return ga, gb


class Dot(Matmul):
    node_name = "DotBackward0"
    array_backward = True


class Vdot(Matmul):
    node_name = "VdotBackward0"
    array_backward = True


class Mv(Matmul):
    node_name = "MvBackward0"
    array_backward = True


class Mm(Matmul):
    node_name = "MmBackward0"
    array_backward = True


class Bmm(Matmul):
    node_name = "BmmBackward0"
    array_backward = True


class VecMat(Matmul):
    node_name = "SqueezeBackward4"
    array_backward = True


_BY_NDIM = {(1, 1): Dot, (2, 1): Mv, (2, 2): Mm, (1, 2): VecMat}


def _tensor_arg(x, fn, name):
    if not isinstance(x, Tensor):
        raise TypeError(f"{fn}(): argument '{name}' (position {1 if name in ('input', 'self') else 2}) must be "
                        f"Tensor, not {type(x).__name__}")


def matmul(input, other, *, out=None):
    """Matrix product with broadcasting (``a @ b``): dot, matrix-vector, matrix-matrix or batched.

    >>> tapegrad.ones(2, 3) @ tapegrad.ones(3)
    tensor([3., 3.])
    """
    _tensor_arg(input, "matmul", "input")
    _tensor_arg(other, "matmul", "other")
    cls = _BY_NDIM.get((input._array.ndim, other._array.ndim), Matmul)
    return cls.apply(input, other)


def mm(input, mat2, *, out=None):
    """Product of two matrices (2-d only, no broadcasting).

    >>> tapegrad.mm(tapegrad.ones(2, 3), tapegrad.ones(3, 4)).shape
    tapegrad.Size([2, 4])
    """
    a, b = input._array, mat2._array
    if a.ndim != 2:
        raise RuntimeError("self must be a matrix")
    if b.ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    if a.shape[1] != b.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({a.shape[0]}x{a.shape[1]} and "
                           f"{b.shape[0]}x{b.shape[1]})")
    return Mm.apply(input, mat2)


def bmm(input, mat2, *, out=None):
    """Batched product of (b, n, m) and (b, m, p) tensors (no broadcasting).

    >>> tapegrad.bmm(tapegrad.ones(5, 2, 3), tapegrad.ones(5, 3, 4)).shape
    tapegrad.Size([5, 2, 4])
    """
    a, b = input._array, mat2._array
    if a.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if b.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    if b.shape[:2] != (a.shape[0], a.shape[2]):
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{a.shape[0]}, "
                           f"{a.shape[2]}] but got: [{b.shape[0]}, {b.shape[1]}].")
    return Bmm.apply(input, mat2)


def mv(input, vec, *, out=None):
    """Matrix-vector product.

    >>> tapegrad.mv(tapegrad.ones(2, 3), tapegrad.ones(3))
    tensor([3., 3.])
    """
    a, b = input._array, vec._array
    if a.ndim != 2 or b.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {a.ndim}, {b.ndim}")
    if a.shape[1] != b.shape[0]:
        raise RuntimeError(f"size mismatch, got input ({a.shape[0]}), mat ({a.shape[0]}x{a.shape[1]}), vec "
                           f"({b.shape[0]})")
    return Mv.apply(input, vec)


def _dot_check(fn, a, b):
    if a.ndim != 1 or b.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {a.ndim}D and {b.ndim}D tensors")
    if a.dtype != b.dtype:
        raise RuntimeError(f"{fn} : expected both vectors to have same dtype, but found {_dtname(a)} and "
                           f"{_dtname(b)}")
    if a.shape[0] != b.shape[0]:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{a.shape[0]}] and src [{b.shape[0]}] to "
                           f"have the same number of elements, but got {a.shape[0]} and {b.shape[0]} elements "
                           "respectively")


def dot(input, tensor, *, out=None):
    """Inner product of two 1-d tensors.

    >>> tapegrad.dot(tapegrad.tensor([1., 2.]), tapegrad.tensor([3., 4.]))
    tensor(11.)
    """
    _dot_check("dot", input._array, tensor._array)
    return Dot.apply(input, tensor)


def vdot(input, other, *, out=None):
    """Inner product of two 1-d tensors, conjugating the first (real tensors: same as ``dot``).

    >>> tapegrad.vdot(tapegrad.tensor([1., 2.]), tapegrad.tensor([3., 4.]))
    tensor(11.)
    """
    _dot_check("vdot", input._array, other._array)
    if input._array.dtype.kind == "c":
        raise NotImplementedError("vdot: complex tensors are not supported by tapegrad")
    return Vdot.apply(input, other)


def outer(input, vec2, *, out=None):
    """Outer product of two 1-d tensors: ``out[i, j] = input[i] * vec2[j]``.

    >>> tapegrad.outer(tapegrad.tensor([1., 2.]), tapegrad.tensor([1., 10.]))
    tensor([[ 1., 10.],
            [ 2., 20.]])
    """
    if input._array.ndim != 1:
        raise RuntimeError(f"outer: Expected 1-D argument self, but got {input._array.ndim}-D")
    if vec2._array.ndim != 1:
        raise RuntimeError(f"outer: Expected 1-D argument vec2, but got {vec2._array.ndim}-D")
    return input.reshape(input._array.shape[0], 1) * vec2


def ger(input, vec2, *, out=None):
    """Alias of ``outer``."""
    return outer(input, vec2)


class Addmm(Primitive):
    """``beta * input + alpha * (mat1 @ mat2)``; subclasses change the product (mv, outer, bmm, sum of bmm)."""

    @staticmethod
    def product(a, b):
        return np.matmul(a, b)

    @staticmethod
    def grad_mat1(g, b):
        return matmul(g, _mT(b))

    @staticmethod
    def grad_mat2(g, a):
        return matmul(_mT(a), g)

    @staticmethod
    def check_dtypes(inp, a, b):
        if inp.dtype != b.dtype:
            raise RuntimeError(f"self and mat2 must have the same dtype, but got {_dtname(inp)} and {_dtname(b)}")
        if a.dtype != b.dtype:
            raise RuntimeError(f"mat1 and mat2 must have the same dtype, but got {_dtname(a)} and {_dtname(b)}")
        return inp, a, b

    @classmethod
    def forward(cls, ctx, inp, a, b, beta, alpha):
        inp, a, b = cls.check_dtypes(inp, a, b)
        ctx.beta, ctx.alpha = beta, alpha
        ctx.save_crossed(1, 2)       # each factor only for the other's gradient
        p = cls.product(a, b)
        if alpha != 1:
            p = p * np.asarray(alpha, p.dtype)
        if beta == 0:
            return np.broadcast_to(p, np.broadcast_shapes(p.shape, inp.shape)).copy()
        return (inp * np.asarray(beta, p.dtype) if beta != 1 else inp) + p

    @classmethod
    def backward(cls, ctx, grad):
        a, b = ctx.saved_tensors
        need = ctx.needs_input_grad
        gi = ga = gb = None
        if need[0]:
            gi = grad * ctx.beta if ctx.beta != 1 else grad
        if need[1]:
            ga = cls.grad_mat1(grad, b)
            if ctx.alpha != 1:
                ga = ga * ctx.alpha
        if need[2]:
            gb = cls.grad_mat2(grad, a)
            if ctx.alpha != 1:
                gb = gb * ctx.alpha
        return gi, ga, gb, None, None


class Addmv(Addmm):
    @staticmethod
    def check_dtypes(inp, a, b):
        if not inp.dtype == a.dtype == b.dtype:
            raise RuntimeError(f"addmv input tensors must have the same dtype, but got {_dtname(inp)}, {_dtname(a)}, "
                               f"and {_dtname(b)}")
        return inp, a, b

    @staticmethod
    def grad_mat1(g, b):
        return g.unsqueeze(-1) * b

    @staticmethod
    def grad_mat2(g, a):
        return mv(_mT(a), g)


class Addr(Addmm):
    @staticmethod
    def check_dtypes(inp, a, b):
        inp, a, _ = promote(inp, a)      # addr promotes, as torch's
        a, b, d = promote(a, b)
        return inp.astype(d, copy=False), a, b

    @staticmethod
    def product(a, b):
        return np.multiply.outer(a, b)

    @staticmethod
    def grad_mat1(g, b):
        return mv(g, b)

    @staticmethod
    def grad_mat2(g, a):
        return mv(_mT(g), a)


class Baddbmm(Addmm):
    @staticmethod
    def check_dtypes(inp, a, b):
        if a.dtype == inp.dtype and b.dtype != inp.dtype:
            raise RuntimeError(f"expected scalar type {_dtname(inp)} but found {_dtname(b)}")
        if not inp.dtype == a.dtype == b.dtype:
            raise RuntimeError(f"Input dtypes must be the same, got: input {_CNAME.get(inp.dtype.name)}, batch1: "
                               f"{_CNAME.get(a.dtype.name)}, batch2: {_CNAME.get(b.dtype.name)}")
        return inp, a, b


class Addbmm(Addmm):
    @staticmethod
    def product(a, b):
        return np.matmul(a, b).sum(0)

    @staticmethod
    def grad_mat1(g, b):
        return matmul(g.unsqueeze(0), _mT(b))

    @staticmethod
    def grad_mat2(g, a):
        return matmul(_mT(a), g.unsqueeze(0))


def _check_add_shape(fn, inp, shape):
    try:
        ok = np.broadcast_shapes(inp._array.shape, shape) == tuple(shape)
    except ValueError:
        ok = False
    if not ok:
        raise RuntimeError(f"The expanded size of the tensor ({shape[-1] if shape else 0}) must match the existing "
                           f"size ({inp._array.shape[-1] if inp._array.ndim else 0}) at non-singleton dimension "
                           f"{len(shape) - 1}.  Target sizes: [{', '.join(map(str, shape))}].  Tensor sizes: "
                           f"[{', '.join(map(str, inp._array.shape))}]")


def addmm(input, mat1, mat2, *, beta=1, alpha=1, out=None):
    """``beta * input + alpha * (mat1 @ mat2)`` (input broadcasts to the product's shape).

    >>> tapegrad.addmm(tapegrad.zeros(2), tapegrad.ones(2, 3), tapegrad.ones(3, 2), alpha=2)
    tensor([[6., 6.],
            [6., 6.]])
    """
    a, b = mat1._array, mat2._array
    if a.ndim != 2:
        raise RuntimeError(f"mat1 must be a matrix, got {a.ndim}-D tensor")
    if b.ndim != 2:
        raise RuntimeError(f"mat2 must be a matrix, got {b.ndim}-D tensor")
    if a.shape[1] != b.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({a.shape[0]}x{a.shape[1]} and "
                           f"{b.shape[0]}x{b.shape[1]})")
    _check_add_shape("addmm", input, (a.shape[0], b.shape[1]))
    return Addmm.apply(input, mat1, mat2, beta, alpha)


def addmv(input, mat, vec, *, beta=1, alpha=1, out=None):
    """``beta * input + alpha * (mat @ vec)``.

    >>> tapegrad.addmv(tapegrad.ones(2), tapegrad.ones(2, 3), tapegrad.ones(3))
    tensor([4., 4.])
    """
    a, b = mat._array, vec._array
    if a.ndim != 2 or b.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {input._array.ndim}, {a.ndim}, {b.ndim}")
    if a.shape[1] != b.shape[0]:
        raise RuntimeError(f"size mismatch, got input ({input._array.shape[0] if input._array.ndim else 1}), mat "
                           f"({a.shape[0]}x{a.shape[1]}), vec ({b.shape[0]})")
    _check_add_shape("addmv", input, (a.shape[0],))
    return Addmv.apply(input, mat, vec, beta, alpha)


def addr(input, vec1, vec2, *, beta=1, alpha=1, out=None):
    """``beta * input + alpha * outer(vec1, vec2)``.

    >>> tapegrad.addr(tapegrad.zeros(2, 2), tapegrad.ones(2), tapegrad.ones(2))
    tensor([[1., 1.],
            [1., 1.]])
    """
    a, b = vec1._array, vec2._array
    if a.ndim != 1 or b.ndim != 1:
        raise RuntimeError(f"addr: Expected 1-D argument vec1, but got {a.ndim}-D" if a.ndim != 1 else
                           f"addr: Expected 1-D argument vec2, but got {b.ndim}-D")
    _check_add_shape("addr", input, (a.shape[0], b.shape[0]))
    return Addr.apply(input, vec1, vec2, beta, alpha)


def _bmm_check(a, b):
    if a.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if b.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    if a.shape[0] != b.shape[0] or a.shape[2] != b.shape[1]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{a.shape[0]}, "
                           f"{a.shape[2]}] but got: [{b.shape[0]}, {b.shape[1]}].")


def baddbmm(input, batch1, batch2, *, beta=1, alpha=1, out=None):
    """``beta * input + alpha * bmm(batch1, batch2)``.

    >>> tapegrad.baddbmm(tapegrad.zeros(1, 2, 2), tapegrad.ones(3, 2, 4), tapegrad.ones(3, 4, 2)).shape
    tapegrad.Size([3, 2, 2])
    """
    a, b = batch1._array, batch2._array
    _bmm_check(a, b)
    _check_add_shape("baddbmm", input, (a.shape[0], a.shape[1], b.shape[2]))
    return Baddbmm.apply(input, batch1, batch2, beta, alpha)


def addbmm(input, batch1, batch2, *, beta=1, alpha=1, out=None):
    """``beta * input + alpha * sum_i(batch1[i] @ batch2[i])``.

    >>> tapegrad.addbmm(tapegrad.zeros(2, 2), tapegrad.ones(3, 2, 4), tapegrad.ones(3, 4, 2))
    tensor([[12., 12.],
            [12., 12.]])
    """
    a, b = batch1._array, batch2._array
    _bmm_check(a, b)
    _check_add_shape("addbmm", input, (a.shape[1], b.shape[2]))
    return Addbmm.apply(input, batch1, batch2, beta, alpha)


def _inplace(fn):
    def method(self, *args, **kwargs):
        from ._util import apply_inplace
        return apply_inplace(self, fn, *args, **kwargs)
    method.__name__ = fn.__name__ + "_"
    return method


# --------------------------------------------------------------------------------------------------------------
# einsum (NumPy's einsum forward; each operand's gradient is again an einsum, so any order of derivative works)

class Einsum(Primitive):
    """``np.einsum`` on an explicit equation (no ellipsis, every output letter named)."""

    node_name = "ViewBackward0"

    @staticmethod
    def forward(ctx, eq, *ops):
        ctx.eq = eq
        ctx.shapes = [o.shape for o in ops]
        need = ctx.needs_input_grad      # an operand is kept only for the other operands' gradients (as torch)
        pos = range(1, len(ops) + 1)
        ctx.save_inputs(*[i if any(need[k] for k in pos if k != i) else None for i in pos])
        dt = ops[0].dtype
        for o in ops[1:]:
            if o.dtype != dt:
                raise RuntimeError(f"expected scalar type {_dtname(ops[0])} but found {_dtname(o)}")
        out = np.einsum(eq, *ops, optimize=len(ops) > 2)
        return np.asarray(out, dt)

    @staticmethod
    def backward(ctx, grad):
        ops = ctx.saved_tensors
        ins, out = ctx.eq.split("->")
        subs = ins.split(",")
        sizes = {}
        for s, shp in zip(subs, ctx.shapes):
            for ch, n in zip(s, shp):
                sizes[ch] = max(sizes.get(ch, 1), n)
        free = iter(c for c in string.ascii_letters if c not in sizes)
        res = [None]
        for k, sk in enumerate(subs):
            if not ctx.needs_input_grad[k + 1]:
                res.append(None)
                continue
            terms, operands = [out], [grad]
            for j, sj in enumerate(subs):
                if j != k:
                    terms.append(sj)
                    operands.append(ops[j])
            have = set("".join(terms))
            dt = grad._array.dtype
            target, seen = [], set()
            for ch in sk:
                if ch not in have and ch not in seen:
                    terms.append(ch)        # summed only over this operand: its gradient is constant along ch
                    operands.append(_const(np.ones(ctx.shapes[k][sk.index(ch)], dt)))
                if ch in seen:              # repeated letter (a diagonal): place the gradient on it
                    f = next(free)
                    terms.append(ch + f)
                    operands.append(_eye_like(sizes[ch], dt))
                    target.append(f)
                else:
                    target.append(ch)
                    seen.add(ch)
            eq = ",".join(terms) + "->" + "".join(target)
            res.append(_einsum_apply(eq, operands))
        return tuple(res)


class EinsumMul(Einsum):
    node_name = "MulBackward0"


class EinsumSum(Einsum):
    node_name = "SumBackward1"


class EinsumPermute(Einsum):
    node_name = "PermuteBackward0"


def _einsum_apply(eq, operands, cls=None):
    """Pick the node class torch's einsum ends with (its last internal op) and apply."""
    if cls is None:
        ins, out = eq.split("->")
        letters = set(ins.replace(",", ""))
        contracted = bool(letters - set(out))
        if "," in ins:
            cls = Einsum if contracted else EinsumMul
        else:
            cls = EinsumSum if contracted else EinsumPermute
    return cls.apply(eq, *operands)


def _parse_einsum(equation, shapes):
    """Turn a torch einsum equation into an explicit one: ellipses expanded to letters, implicit output spelled."""
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) < len(shapes):
        raise RuntimeError("einsum(): more operands were provided than specified in the equation")
    if len(terms) > len(shapes):
        raise RuntimeError("einsum(): fewer operands were provided than specified in the equation")
    for t in terms + [rhs]:
        bad = [c for c in t.replace("...", "") if c not in string.ascii_letters]
        if bad or t.replace("...", "").count(".") or t.count("...") > 1:
            raise RuntimeError(f"einsum(): invalid subscript given at index {eq.index(bad[0]) if bad else 0} in "
                               f"the equation string, subscripts must be in [a-zA-Z]")
    used = set(eq) & set(string.ascii_letters)
    pool = [c for c in string.ascii_letters if c not in used]
    ell = 0
    for k, (t, shp) in enumerate(zip(terms, shapes)):
        n = len(t.replace("...", ""))
        if "..." in t:
            if n > len(shp):
                raise RuntimeError(f"einsum(): the number of subscripts in the equation ({n}) is more than the "
                                   f"number of dimensions ({len(shp)}) for operand {k}")
            ell = max(ell, len(shp) - n)
        elif n != len(shp):
            raise RuntimeError(f"einsum(): the number of subscripts in the equation ({n}) does not match the number "
                               f"of dimensions ({len(shp)}) for operand {k} and no ellipsis was given")
    if ell > len(pool):
        raise RuntimeError("einsum(): too many dimensions")
    ell_letters = "".join(pool[:ell])
    new_terms = []
    for t, shp in zip(terms, shapes):
        if "..." in t:
            e = len(shp) - len(t.replace("...", ""))
            t = t.replace("...", ell_letters[ell - e:] if e else "")
        new_terms.append(t)
    if arrow:
        if "..." in rhs:
            rhs = rhs.replace("...", ell_letters)
        for c in rhs:
            if rhs.count(c) > 1:
                raise RuntimeError(f"einsum(): output subscript {c} appears more than once in the output")
            if not any(c in t for t in new_terms):
                raise RuntimeError(f"einsum(): output subscript {c} does not appear in the equation for any input "
                                   "operand")
    else:
        joined = "".join(t for t in terms)
        once = sorted(c for c in set(joined) if c in string.ascii_letters and joined.count(c) == 1)
        rhs = ell_letters + "".join(once)
    sizes = {}
    for k, (t, shp) in enumerate(zip(new_terms, shapes)):
        for c, n in zip(t, shp):
            if c in sizes and n != sizes[c] and n != 1 and sizes[c] != 1:
                raise RuntimeError(f"einsum(): subscript {c} has size {n} for operand {k} which does not broadcast "
                                   f"with previously seen size {sizes[c]}")
            sizes[c] = n if c not in sizes or sizes[c] == 1 else sizes[c]
    return ",".join(new_terms) + "->" + rhs


def _sublist_equation(args):
    """torch.einsum(op1, [0, 1], op2, [1, 2], [0, 2]) -> ('ab,bc->ac', [op1, op2])."""
    def lab(sub):
        return "".join("..." if s is Ellipsis else string.ascii_letters[s] for s in sub)
    ops, terms = list(args[0::2]), [lab(s) for s in args[1::2]]
    if len(args) % 2 == 1:
        ops = ops[:-1] if not isinstance(args[-1], Tensor) else ops
        return ",".join(terms[:len(ops)]) + "->" + lab(args[-1]), ops
    return ",".join(terms), ops


def einsum(equation, *operands):
    """Sum of products over the indices named by ``equation`` (NumPy/torch Einstein notation, with ``...``).

    >>> a = tapegrad.ones(2, 3); b = tapegrad.ones(3, 4)
    >>> tapegrad.einsum("ij,jk->ik", a, b).shape
    tapegrad.Size([2, 4])
    """
    if isinstance(equation, Tensor):
        equation, operands = _sublist_equation((equation,) + operands)
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    for o in operands:
        if not isinstance(o, Tensor):
            raise TypeError(f"einsum(): operands must be Tensors, not {type(o).__name__}")
    if not operands:
        raise RuntimeError("einsum(): must provide at least one operand")
    eq = _parse_einsum(equation, [o._array.shape for o in operands])
    return _einsum_apply(eq, operands)


def tensordot(a, b, dims=2, out=None):
    """Contract ``dims`` dims of ``a`` with ``b``: an int (last dims of a with first of b) or a pair of lists.

    >>> tapegrad.tensordot(tapegrad.ones(2, 3, 4), tapegrad.ones(3, 4, 5), dims=2).shape
    tapegrad.Size([2, 5])
    """
    na, nb = a._array.ndim, b._array.ndim
    if isinstance(dims, Tensor):
        dims = dims.tolist()
    if isinstance(dims, (int, np.integer)):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > min(na, nb):
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        da, db = list(range(na - dims, na)), list(range(dims))
    else:
        da, db = dims
        da = [da] if isinstance(da, int) else list(da)
        db = [db] if isinstance(db, int) else list(db)
        if len(da) != len(db):
            raise RuntimeError(f"both dimension lists should have same length, but got {len(da)} and {len(db)}")
        da = [d % na for d in da]
        db = [d % nb for d in db]
    if a._array.dtype != b._array.dtype:
        raise RuntimeError("both inputs should have same dtype")
    letters = iter(string.ascii_letters)
    sa = [next(letters) for _ in range(na)]
    sb = [next(letters) for _ in range(nb)]
    for i, j in zip(da, db):
        if a._array.shape[i] != b._array.shape[j]:
            raise RuntimeError(f"contracted dimensions need to match, but first has size {a._array.shape[i]} in dim "
                               f"{i} and second has size {b._array.shape[j]} in dim {j}")
        sb[j] = sa[i]
    out_s = [c for i, c in enumerate(sa) if i not in da] + [c for j, c in enumerate(sb) if j not in db]
    return _einsum_apply("".join(sa) + "," + "".join(sb) + "->" + "".join(out_s), (a, b), Einsum)


def inner(input, other, *, out=None):
    """Inner product over the last dim (a 0-d operand multiplies).

    >>> tapegrad.inner(tapegrad.ones(2, 3), tapegrad.ones(4, 3)).shape
    tapegrad.Size([2, 4])
    """
    if input._array.ndim == 0 or other._array.ndim == 0:
        return input * other
    if input._array.shape[-1] != other._array.shape[-1]:
        raise RuntimeError(f"inner() the last dimension must match on both input tensors but got shapes "
                           f"[{', '.join(map(str, input._array.shape))}] and "
                           f"[{', '.join(map(str, other._array.shape))}]")
    return tensordot(input, other, ([-1], [-1]))


class Kron(Primitive):
    """Kronecker product (the lower-dimensional operand gets leading 1s)."""

    node_name = "UnsafeViewBackward0"

    @staticmethod
    def forward(ctx, a, b):
        a, b, _ = promote(a, b)
        n = max(a.ndim, b.ndim)
        a2 = a.reshape((1,) * (n - a.ndim) + a.shape)
        b2 = b.reshape((1,) * (n - b.ndim) + b.shape)
        ctx.shapes = (a2.shape, b2.shape)
        ctx.save_crossed(0, 1)
        out = np.multiply.outer(a2, b2)     # (a0..an, b0..bn) -> interleave
        perm = [i for k in range(n) for i in (k, n + k)]
        return out.transpose(perm).reshape(tuple(x * y for x, y in zip(a2.shape, b2.shape)))

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        sa, sb = ctx.shapes
        n = len(sa)
        g = grad.reshape(tuple(d for pair in zip(sa, sb) for d in pair))
        la, lb = string.ascii_lowercase[:n], string.ascii_uppercase[:n]
        gs = "".join(x + y for x, y in zip(la, lb))
        need = ctx.needs_input_grad
        ga = einsum(f"{gs},{lb}->{la}", g, b.reshape(sb)).reshape(input_shape(ctx, 0)) if need[0] else None
        gb = einsum(f"{gs},{la}->{lb}", g, a.reshape(sa)).reshape(input_shape(ctx, 1)) if need[1] else None
        return ga, gb


def kron(input, other, *, out=None):
    """Kronecker product.

    >>> tapegrad.kron(tapegrad.eye(2), tapegrad.ones(2, 2)).shape
    tapegrad.Size([4, 4])
    """
    return Kron.apply(input, other)


class LinalgCross(Primitive):
    """3-vector cross product along ``dim`` (inputs broadcast)."""

    @staticmethod
    def forward(ctx, a, b, dim):
        if a.dtype != b.dtype:
            raise RuntimeError(f"expected scalar type {_dtname(a)} but found {_dtname(b)}")
        ctx.dim = dim
        ctx.save_crossed(0, 1)
        shape = np.broadcast_shapes(a.shape, b.shape)
        return np.cross(np.broadcast_to(a, shape), np.broadcast_to(b, shape), axis=dim)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        need = ctx.needs_input_grad
        return (LinalgCross.apply(b, grad, ctx.dim) if need[0] else None,
                LinalgCross.apply(grad, a, ctx.dim) if need[1] else None, None)


def _cross(input, other, dim, op):
    a, b = input._array, other._array
    if a.ndim != b.ndim:
        raise RuntimeError(f"{op}: inputs must have the same number of dimensions.")
    try:
        shape = np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        raise RuntimeError(f"{op}: shapes {tuple(a.shape)} and {tuple(b.shape)} do not broadcast") from None
    d = dim % len(shape) if -len(shape) <= dim < len(shape) else None
    if d is None:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-len(shape)}, {len(shape) - 1}], but "
                         f"got {dim})")
    if a.shape[d] != 3 or b.shape[d] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got {a.shape[d]} and "
                           f"{b.shape[d]}")
    return LinalgCross.apply(input, other, d)


def cross(input, other, dim=None, *, out=None):
    """Cross product of 3-vectors along ``dim`` (default: the first dim of size 3, as torch.cross).

    >>> tapegrad.cross(tapegrad.tensor([1., 0., 0.]), tapegrad.tensor([0., 1., 0.]), dim=0)
    tensor([0., 0., 1.])
    """
    if dim is None:
        import warnings
        warnings.warn("Using torch.cross without specifying the dim arg is deprecated.\nPlease either pass the dim "
                      "explicitly or simply use torch.linalg.cross.\nThe default value of dim will change to agree "
                      "with that of linalg.cross in a future release.", UserWarning, stacklevel=2)
        shape = np.broadcast_shapes(input._array.shape, other._array.shape)
        dims = [i for i, s in enumerate(shape) if s == 3]
        if not dims:
            raise RuntimeError("no dimension of size 3 in input")
        dim = dims[0]
    return _cross(input, other, dim, "linalg.cross")


def linalg_cross(input, other, *, dim=-1, out=None):
    """Cross product of 3-vectors along ``dim`` (default -1), broadcasting.

    >>> tapegrad.linalg.cross(tapegrad.tensor([1., 0., 0.]), tapegrad.tensor([0., 1., 0.]))
    tensor([0., 0., 1.])
    """
    return _cross(input, other, dim, "linalg.cross")


class Trace(Primitive):
    """Sum of the main diagonal of a matrix."""

    @staticmethod
    def forward(ctx, x):
        if x.ndim != 2:
            raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {x.ndim}")
        ctx.shape = x.shape
        out = np.trace(x)
        return np.asarray(out, np.int64 if x.dtype.kind in "biu" else x.dtype)

    @staticmethod
    def backward(ctx, grad):
        return grad * _const(np.eye(*ctx.shape, dtype=grad._array.dtype))


def trace(input):
    """Sum of the diagonal of a 2-d tensor.

    >>> tapegrad.trace(tapegrad.eye(3))
    tensor(3.)
    """
    return Trace.apply(input)


def multi_dot(tensors, *, out=None):
    """Product of a chain of matrices (the first may be a row vector, the last a column vector).

    >>> tapegrad.linalg.multi_dot([tapegrad.ones(2, 3), tapegrad.ones(3, 4), tapegrad.ones(4)]).shape
    tapegrad.Size([2])
    """
    tensors = list(tensors)
    if len(tensors) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(tensors)}")
    first, last = tensors[0], tensors[-1]
    out_shape = ()
    if first._array.ndim == 1:
        first = first.unsqueeze(0)
    elif first._array.ndim == 2:
        out_shape += (first._array.shape[0],)
    else:
        raise RuntimeError(f"multi_dot(): the first tensor must be 1D or 2D but got {first._array.ndim}D")
    if last._array.ndim == 1:
        last = last.unsqueeze(-1)
    elif last._array.ndim == 2:
        out_shape += (last._array.shape[1],)
    else:
        raise RuntimeError(f"multi_dot(): the last tensor must be 1D or 2D but got {last._array.ndim}D")
    mats = [first] + tensors[1:-1] + [last]
    for i, m in enumerate(mats[1:-1], 1):
        if m._array.ndim != 2:
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {m._array.ndim}D")
    for i in range(len(mats) - 1):
        if mats[i]._array.shape[1] != mats[i + 1]._array.shape[0]:
            a, b = mats[i]._array.shape, mats[i + 1]._array.shape
            raise RuntimeError(f"multi_dot(): tensors {i} and {i + 1} with shapes [{a[0]}, {a[1]}] and [{b[0]}, "
                               f"{b[1]}] cannot be multiplied")
    res = mats[0]
    for m in mats[1:]:
        res = mm(res, m)
    return res.view(out_shape)


def chain_matmul(*matrices, out=None):
    """Product of 2-d matrices (deprecated in torch: use ``linalg.multi_dot``).

    >>> tapegrad.chain_matmul(tapegrad.ones(2, 3), tapegrad.ones(3, 4)).shape
    tapegrad.Size([2, 4])
    """
    if len(matrices) == 1 and isinstance(matrices[0], (list, tuple)):
        matrices = tuple(matrices[0])
    if len(matrices) == 1:
        return matrices[0].clone()
    for m in matrices:
        if m._array.ndim != 2:
            raise RuntimeError(f"Tensor dimension is {m._array.ndim}, expected 2 instead.")
    return multi_dot(list(matrices))


# --------------------------------------------------------------------------------------------------------------
# cdist

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
        sign = _const(np.sign(darr))
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
        if ord == 2:
            out = np.sqrt(np.sum(a * a, axis=axis, keepdims=keepdim))
        elif ord == 1:
            out = np.sum(a, axis=axis, keepdims=keepdim)
        elif ord == 0:
            out = np.sum(a != 0, axis=axis, keepdims=keepdim)
        elif math.isinf(ord):
            if a.size == 0 or any(x.shape[d] == 0 for d in dims):
                raise RuntimeError(f"linalg.vector_norm cannot compute the {ord} norm on an empty tensor because "
                                   "the operation does not have an identity")
            out = (np.max if ord > 0 else np.min)(a, axis=axis, keepdims=keepdim)
        else:
            with np.errstate(divide="ignore"):
                out = np.power(np.sum(np.power(a, ord), axis=axis, keepdims=keepdim), 1.0 / ord)
        return np.asarray(out, a.dtype)

    @staticmethod
    def backward(ctx, grad):
        norm, x = ctx.saved_tensors
        p, dims, shape = ctx.ord, ctx.dims, ctx.shape
        if p == 0:
            return x * 0, None, None, None
        g = _kept(grad, shape, dims, ctx.keepdim)
        n = _kept(norm, shape, dims, ctx.keepdim)
        xa = x._array
        sign = _const(np.sign(xa))
        if p == 1:
            return g * sign, None, None, None
        if math.isinf(p):
            mask = (np.abs(xa) == n._array).astype(xa.dtype)
            count = mask.sum(axis=dims, keepdims=True)
            return g * sign * _const(mask / count), None, None, None
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
    from ._util import normalize_dim
    dims = tuple(normalize_dim(int(d), ndim) for d in dim)
    if len(set(dims)) != len(dims):
        raise RuntimeError(f"dim {dims[0]} appears multiple times in the list of dims")
    return dims


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None, out=None):
    """Vector norm of ``x`` over ``dim`` (all elements when None): ord = 2, 1, inf, -inf, 0 or any float.

    >>> tapegrad.linalg.vector_norm(tapegrad.tensor([3., 4.]))
    tensor(5.)
    """
    if isinstance(ord, str):
        raise RuntimeError(f"linalg.vector_norm: Expected a number for ord, but got {ord!r}")
    a = x._array
    if dtype is not None:
        x = x.to(_dtype.to_dtype(dtype))
        a = x._array
    _check_float("linalg.vector_norm", a)
    ndim = a.ndim
    dims = _norm_dims(dim, ndim) if ndim else ()
    if ndim and dim is not None and not isinstance(dim, (int, np.integer)) and len(dim) == 0:
        dims = tuple(range(ndim))
    return LinalgVectorNorm.apply(x, float(ord), dims, bool(keepdim))


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


# --------------------------------------------------------------------------------------------------------------
# inverse, determinants, solve

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
        ih = _mT(inv)
        return -matmul(ih, matmul(grad, ih))


def inv_ex(A, *, check_errors=False, out=None):
    """Inverse plus an ``info`` tensor (int32, 0 where the matrix was invertible) instead of an error.

    >>> tapegrad.linalg.inv_ex(tapegrad.eye(2)).info
    tensor(0, dtype=tapegrad.int32)
    """
    _check_square("linalg.inv_ex", A._array)
    inv, info = LinalgInvEx.apply(A)
    if check_errors:
        _raise_inv(info._array, A._array.ndim > 2, "linalg.inv_ex")
    return linalg_inv_ex_rt(inv, info)


def _raise_inv(info, batched, op="linalg.inv"):
    bad = _first_bad(info)
    if bad is not None:
        raise LinAlgError(f"{op}: {_batch_prefix(bad[0], batched)}The diagonal element {bad[1]} is zero, the "
                          "inversion could not be completed because the input matrix is singular.")


def inv(A, *, out=None):
    """Inverse of a square matrix (or a batch of them); singular input raises ``LinAlgError``.

    >>> tapegrad.linalg.inv(2 * tapegrad.eye(2))
    tensor([[0.5000, 0.0000],
            [0.0000, 0.5000]])
    """
    _check_square("linalg.inv", A._array)
    res, info = LinalgInvEx.apply(A)
    _raise_inv(info._array, A._array.ndim > 2)
    return res


def inverse(input, *, out=None):
    """Alias of ``linalg.inv``."""
    return inv(input)


class LinalgDet(Primitive):
    """Determinant; the gradient ``det * inv(A)^T`` assumes an invertible matrix."""

    @staticmethod
    def forward(ctx, a):
        ctx.save_result(0)
        return np.asarray(np.linalg.det(a), a.dtype)

    @staticmethod
    def backward(ctx, grad):
        d, a = ctx.saved_tensors
        return (grad * d).unsqueeze(-1).unsqueeze(-1) * _mT(inv(a))


def det(A, *, out=None):
    """Determinant of a square matrix (or batch).

    >>> tapegrad.linalg.det(2 * tapegrad.eye(2))
    tensor(4.)
    """
    _check_square("linalg.det", A._array)
    return LinalgDet.apply(A)


class LinalgSlogdet(Primitive):
    """(sign, log|det|); only log|det| carries a gradient: ``g * inv(A)^T``."""

    @staticmethod
    def forward(ctx, a):
        ctx.set_materialize_grads(False)
        ctx.save_inputs(0)
        s, l = np.linalg.slogdet(a)
        return np.asarray(s, a.dtype), np.asarray(l, a.dtype)

    @staticmethod
    def backward(ctx, _gsign, glog):
        a, = ctx.saved_tensors
        if glog is None:
            return (None,)
        return glog.unsqueeze(-1).unsqueeze(-1) * _mT(inv(a))


def _slogdet(A, op, rt):
    _check_square(op, A._array)
    return rt(*LinalgSlogdet.apply(A))


def linalg_slogdet(A, *, out=None):
    """(sign, logabsdet) of the determinant, as a named tuple.

    >>> tapegrad.linalg.slogdet(2 * tapegrad.eye(2)).logabsdet
    tensor(1.3863)
    """
    return _slogdet(A, "linalg.slogdet", linalg_slogdet_rt)


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
        gb = LinalgSolveEx.apply(_mT(a), grad, ctx.left, ctx.vector)
        ga = None
        if need[0]:
            if ctx.vector:
                ga = -(gb.unsqueeze(-1) * x.unsqueeze(-2) if ctx.left else x.unsqueeze(-1) * gb.unsqueeze(-2))
            else:
                ga = -(matmul(gb, _mT(x)) if ctx.left else matmul(_mT(x), gb))
        return ga, (gb if need[1] else None), None, None


def solve(A, B, *, left=True, out=None):
    """Solve ``A X = B`` (or ``X A = B`` with ``left=False``); batch dims broadcast; B may be a vector.

    >>> tapegrad.linalg.solve(2 * tapegrad.eye(2), tapegrad.ones(2))
    tensor([0.5000, 0.5000])
    """
    vector = _solve_shapes(A, B, left)
    return LinalgSolveEx.apply(A, B, bool(left), vector)


def solve_ex(A, B, *, left=True, check_errors=False, out=None):
    """``solve`` that returns (result, info); a singular matrix still raises here (info is always 0)."""
    x = solve(A, B, left=left)
    return linalg_solve_ex_rt(x, Tensor._make(np.zeros(A._array.shape[:-2], np.int32)))


# --------------------------------------------------------------------------------------------------------------
# factorisations

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
        res = np.ascontiguousarray(np.swapaxes(low, -1, -2)) if upper else low
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
    if upper:
        L, gL = _mT(L), _mT(gL)
    n = L._array.shape[-1]
    dt = L._array.dtype
    P = matmul(_mT(L), gL) * _tril_mask(n, 0, dt)
    P = (P + _mT(P * _tril_mask(n, -1, dt))) * 0.5
    Linv = inv(L)
    return matmul(_mT(Linv), matmul(P, Linv))


def _raise_cholesky(info, batched):
    bad = _first_bad(info)
    if bad is not None:
        raise LinAlgError(f"linalg.cholesky: {_batch_prefix(bad[0], batched)}The factorization could not be "
                          "completed because the input is not positive-definite (the leading minor of order "
                          f"{bad[1]} is not positive-definite).")


def linalg_cholesky(A, *, upper=False, out=None):
    """Cholesky factor L of a symmetric positive-definite A (A = L L^T); U = L^T with ``upper=True``.

    >>> tapegrad.linalg.cholesky(4 * tapegrad.eye(2))
    tensor([[2., 0.],
            [0., 2.]])
    """
    _check_square("linalg.cholesky", A._array)
    L, info = LinalgCholeskyEx.apply(A, bool(upper))
    _raise_cholesky(info._array, A._array.ndim > 2)
    return L


def cholesky_ex(A, *, upper=False, check_errors=False, out=None):
    """(L, info): info > 0 is the order of the leading minor that is not positive-definite."""
    _check_square("linalg.cholesky_ex", A._array)
    L, info = LinalgCholeskyEx.apply(A, bool(upper))
    if check_errors:
        _raise_cholesky(info._array, A._array.ndim > 2)
    return linalg_cholesky_ex_rt(L, info)


def cholesky(input, upper=False, *, out=None):
    """torch.cholesky (deprecated in torch): lower factor, or upper with ``upper=True``.

    >>> tapegrad.cholesky(4 * tapegrad.eye(2))
    tensor([[2., 0.],
            [0., 2.]])
    """
    _check_square("linalg.cholesky", input._array)
    L, info = Cholesky.apply(input, bool(upper))
    _raise_cholesky(info._array, input._array.ndim > 2)
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
        gQ2 = gQ + matmul(Y, _mT(gV))
        gX = _qr_backward_tall(gQ2, gU, Q, U)
        gY = matmul(Q, gV)
        return _cat_last(gX, gY), None


def _cat_last(a: Tensor, b: Tensor) -> Tensor:
    """Concatenate along the last dim with einsum-free ops: pad each with zeros via matmul by selectors."""
    na, nb = a._array.shape[-1], b._array.shape[-1]
    dt = a._array.dtype
    ea = np.eye(na, na + nb, dtype=dt)
    eb = np.eye(nb, na + nb, k=na, dtype=dt)
    return matmul(a, _const(ea)) + matmul(b, _const(eb))


def _qr_backward_tall(gQ, gR, Q, R):
    """gA = [gQ + Q copyltu(M)] R^{-H}, M = R gR^H - gQ^H Q (m >= n)."""
    n = R._array.shape[-1]
    dt = R._array.dtype
    M = matmul(R, _mT(gR)) - matmul(_mT(gQ), Q)
    low = M * _tril_mask(n, -1, dt)
    sym = low + _mT(low) + M * _eye_like(n, dt)
    b = gQ + matmul(Q, sym)
    return _mT(LinalgSolveEx.apply(R, _mT(b), True, False))


def linalg_qr(A, mode="reduced", *, out=None):
    """QR decomposition A = Q R (named tuple Q, R); ``mode`` is 'reduced', 'complete' or 'r'.

    >>> Q, R = tapegrad.linalg.qr(tapegrad.eye(2))
    """
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), 'r', or "
                           "'complete'")
    _check_matrix("linalg.qr", A._array)
    return linalg_qr_rt(*LinalgQr.apply(A, mode))


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
        w, v = Tensor._make(np.asarray(w, a.dtype)), Tensor._make(np.asarray(v, a.dtype))
        ctx.save_for_backward(w, v)
        return w, v

    @staticmethod
    def backward(ctx, gL, gV):
        L, V = ctx.saved_tensors
        n = L._array.shape[-1]
        dt = L._array.dtype
        eye = _eye_like(n, dt)
        if gV is not None:
            VhgV = matmul(_mT(V), gV)
            E = L.unsqueeze(-2) - L.unsqueeze(-1) + eye
            inner_ = (VhgV - _mT(VhgV)) * 0.5 / E
            if gL is not None:
                inner_ = inner_ + _diag_embed(gL)
        else:
            inner_ = _diag_embed(gL)
        return matmul(V, matmul(inner_, _mT(V))), None


def _check_uplo(uplo):
    if uplo not in ("L", "U", "l", "u"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {uplo}")
    return uplo.upper()


def eigh(A, UPLO="L", *, out=None):
    """Eigenvalues (ascending) and eigenvectors of a symmetric matrix, as (eigenvalues, eigenvectors).

    >>> tapegrad.linalg.eigh(tapegrad.eye(2)).eigenvalues
    tensor([1., 1.])
    """
    _check_square("linalg.eigh", A._array)
    return linalg_eigh_rt(*LinalgEigh.apply(A, _check_uplo(UPLO)))


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
        u, s, vh = (Tensor._make(np.asarray(x, a.dtype)) for x in (u, s, vh))
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
        UhgU = matmul(_mT(U), gU)
        gA = (UhgU - _mT(UhgU)) * S.unsqueeze(-2) / E
    if gVh is not None:
        VhgV = matmul(Vh, _mT(gVh))
        t = S.unsqueeze(-1) * (VhgV - _mT(VhgV)) / E
        gA = t if gA is None else gA + t
    if gS is not None:
        gA = gA + _diag_embed(gS)
    if m > n and gU is not None:
        gA = matmul(U, gA)
        gUSinv = gU / S.unsqueeze(-2)
        gA = gA + gUSinv - matmul(U, matmul(_mT(U), gUSinv))
        return matmul(gA, Vh)
    if m < n and gVh is not None:
        gA = matmul(gA, Vh)
        SinvgVh = gVh / S.unsqueeze(-1)
        gA = gA + SinvgVh - matmul(matmul(SinvgVh, _mT(Vh)), Vh)
        return matmul(U, gA)
    return matmul(U, matmul(gA, Vh)) if m >= n else matmul(matmul(U, gA), Vh)


def linalg_svd(A, full_matrices=True, *, driver=None, out=None):
    """Singular value decomposition A = U diag(S) Vh (named tuple U, S, Vh; S descending).

    >>> tapegrad.linalg.svd(tapegrad.eye(2)).S
    tensor([1., 1.])
    """
    _check_matrix("linalg.svd", A._array)
    return linalg_svd_rt(*LinalgSvd.apply(A, bool(full_matrices), True))


def svdvals(A, *, driver=None, out=None):
    """Singular values (descending).

    >>> tapegrad.linalg.svdvals(2 * tapegrad.eye(2))
    tensor([2., 2.])
    """
    _check_matrix("linalg.svdvals", A._array)
    return LinalgSvd.apply(A, False, True)[1]


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
    return svd_rt(U, S, _mT(Vh))


def _pinv_backward(g, P, A):
    """torch's pinv_backward: gradient of A -> pinv(A) = P (written in tapegrad ops)."""
    m, n = A._array.shape[-2:]
    Ph, gh = _mT(P), _mT(g)
    if m <= n:
        K = matmul(gh, P)
        KPh = matmul(K, Ph)
        return -_mT(matmul(P, K)) + KPh - matmul(matmul(A, P), KPh) + matmul(matmul(Ph, P), gh - matmul(K, A))
    K = matmul(P, gh)
    PhK = matmul(Ph, K)
    return -_mT(matmul(K, P)) + matmul(matmul(gh - matmul(A, K), P), Ph) + PhK - matmul(matmul(PhK, P), A)


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
        return np.matmul(v * sinv[..., None, :], np.swapaxes(v, -1, -2))
    return np.matmul(np.swapaxes(vh, -1, -2) * sinv[..., None, :], np.swapaxes(u, -1, -2))


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


def pinv(A, *, atol=None, rtol=None, hermitian=False, out=None):
    """Pseudo-inverse (via SVD, or eigh with ``hermitian=True``).

    >>> tapegrad.linalg.pinv(tapegrad.ones(2, 1))
    tensor([[0.5000, 0.5000]])
    """
    _check_matrix("linalg.pinv", A._array)
    atol, rtol = _tols(A._array, atol, rtol)
    return LinalgPinv.apply(A, atol, rtol, bool(hermitian))


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
        s = np.linalg.svd(a, compute_uv=False) if a.size else np.zeros(a.shape[:-2] + (0,), a.dtype)
        rank = (s > rtol * s.max(-1, keepdims=True)).sum(-1) if s.size else np.zeros(a.shape[:-2], np.int64)
        if m > n and driver != "gelsy" and bool(np.all(rank == n)):
            resid = ((np.matmul(a, x) - bb) ** 2).sum(-2)
            if vector:
                resid = resid[..., 0]
        else:
            resid = np.zeros((0,), a.dtype)
        if vector:
            x = x[..., 0]
        sv = s if driver in ("gelsd", "gelss") else np.zeros((0,), a.dtype)
        rank = np.asarray(rank, np.int64) if driver != "gels" else np.zeros((0,), np.int64)
        ctx.mark_non_differentiable(sv)
        return np.asarray(x, a.dtype), np.asarray(resid, a.dtype), rank, np.asarray(sv, a.dtype)

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
            ga = _pinv_backward(matmul(gX, _mT(B)), P, A) if need[0] else None
            gb = matmul(_mT(P), gX) if need[1] else None
        if gres is not None:
            # residuals = sum((A X - B)^2) at the minimiser X: d/dX vanishes, so only the explicit A, B terms remain
            X = matmul(P, B)
            R2 = (matmul(A, X) - B) * gres.unsqueeze(-2) * 2
            if need[0]:
                t = matmul(R2, _mT(X))
                ga = t if ga is None else ga + t
            if need[1]:
                gb = -R2 if gb is None else gb - R2
        if ctx.vector and gb is not None:
            gb = gb.squeeze(-1)
        return ga, gb, None, None, None


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


def matrix_rank(A, *, atol=None, rtol=None, hermitian=False, tol=None, out=None):
    """Number of singular values above max(atol, rtol * s_max) (int64).

    >>> tapegrad.linalg.matrix_rank(tapegrad.eye(3))
    tensor(3)
    """
    a = A._array
    _check_matrix("linalg.matrix_rank", a)
    if tol is not None:
        atol, rtol = tol, 0.0
    atol, rtol = _tols(a, atol, rtol)
    if a.size == 0:
        return Tensor._make(np.zeros(a.shape[:-2], np.int64))
    s = np.abs(np.linalg.eigvalsh(a)) if hermitian else np.linalg.svd(a, compute_uv=False)
    cut = np.maximum(atol, rtol * s.max(-1, keepdims=True))
    return Tensor._make(np.asarray((s > cut).sum(-1), np.int64))


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


def vecdot(x, y, *, dim=-1, out=None):
    """Dot product of vectors along ``dim`` (batch dims broadcast).

    >>> tapegrad.linalg.vecdot(tapegrad.ones(2, 3), tapegrad.ones(3))
    tensor([3., 3.])
    """
    return (x * y).sum(dim)


def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    """Diagonal of the matrices in A (``torch.diagonal`` with matrix defaults).

    >>> tapegrad.linalg.diagonal(tapegrad.eye(2))
    tensor([1., 1.])
    """
    return A.diagonal(offset=offset, dim1=dim1, dim2=dim2)


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
        gb = LinalgSolveTriangular.apply(_mT(a), grad, not up, left, unit)
        ga = None
        if need[0]:
            ga = -(matmul(gb, _mT(x)) if left else matmul(_mT(x), gb))
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


def solve_triangular(A, B, *, upper, left=True, unitriangular=False, out=None):
    """Solve a triangular system ``A X = B`` (``left=False``: ``X A = B``), reading one triangle of A.

    >>> tapegrad.linalg.solve_triangular(2 * tapegrad.eye(2), tapegrad.ones(2, 1), upper=True)
    tensor([[0.5000],
            [0.5000]])
    """
    a, b = A._array, B._array
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
    return LinalgSolveTriangular.apply(A, B, bool(upper), bool(left), bool(unitriangular))


class CholeskySolve(Primitive):
    """X = (L L^H)^{-1} B (``upper``: (U^H U)^{-1} B)."""

    @staticmethod
    def forward(ctx, b, l, upper):
        _same_dtype(b, l)
        ctx.upper = upper
        ctx.save_result(1)
        a = np.matmul(np.swapaxes(l, -1, -2), l) if upper else np.matmul(l, np.swapaxes(l, -1, -2))
        return np.asarray(np.linalg.solve(a, b), b.dtype)

    @staticmethod
    def backward(ctx, grad):
        x, l = ctx.saved_tensors
        need = ctx.needs_input_grad
        gb = CholeskySolve.apply(grad, l, ctx.upper)
        gl = None
        if need[1]:
            common = matmul(gb, _mT(x))
            common = common + _mT(common)
            gl = -(matmul(l, common) if ctx.upper else matmul(common, l))
        return (gb if need[0] else None), gl, None


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
    return CholeskySolve.apply(input, input2, bool(upper))


class CholeskyInverse(Primitive):
    """(L L^H)^{-1} from the Cholesky factor L (or U with ``upper``)."""

    @staticmethod
    def forward(ctx, l, upper):
        ctx.upper = upper
        ctx.save_result(0)
        a = np.matmul(np.swapaxes(l, -1, -2), l) if upper else np.matmul(l, np.swapaxes(l, -1, -2))
        return np.asarray(np.linalg.inv(a), l.dtype)

    @staticmethod
    def backward(ctx, grad):
        inv_, l = ctx.saved_tensors
        common = matmul(inv_, matmul(grad + _mT(grad), inv_))
        return -(matmul(l, common) if ctx.upper else matmul(common, l)), None


def cholesky_inverse(input, upper=False, *, out=None):
    """Inverse of A = L L^T from its Cholesky factor L (U with ``upper=True``).

    >>> tapegrad.cholesky_inverse(2 * tapegrad.eye(2))
    tensor([[0.2500, 0.0000],
            [0.0000, 0.2500]])
    """
    _check_square("cholesky_inverse", input._array, "input")
    return CholeskyInverse.apply(input, bool(upper))


def _expm_np(a: np.ndarray) -> np.ndarray:
    """exp(A) by scaling and squaring with a degree-18 Taylor series (batched)."""
    if a.size == 0:
        return a.copy()
    norm = np.abs(a).sum(-2).max() if a.ndim else 0.0
    s = max(0, int(math.ceil(math.log2(norm / 0.5))) if norm > 0.5 else 0)
    x = a / (2.0 ** s)
    eye = np.broadcast_to(np.eye(a.shape[-1], dtype=a.dtype), a.shape)
    res, term = eye.copy(), eye.copy()
    for k in range(1, 19):
        term = np.matmul(term, x) / k
        res = res + term
    for _ in range(s):
        res = np.matmul(res, res)
    return res


class LinalgMatrixExp(Primitive):
    """Matrix exponential; its gradient is a block of exp([[A^T, G], [0, A^T]]) (so it is differentiable again)."""

    @staticmethod
    def forward(ctx, a):
        ctx.save_inputs(0)
        return np.asarray(_expm_np(a), a.dtype)

    @staticmethod
    def backward(ctx, grad):
        a, = ctx.saved_tensors
        n = a._array.shape[-1]
        at = _mT(a)
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


bind(mm=mm, bmm=bmm, mv=mv, dot=dot, vdot=vdot, inner=inner, outer=outer, ger=ger, addmm=addmm, addmv=addmv,
     addr=addr, baddbmm=baddbmm, addbmm=addbmm, addmm_=_inplace(addmm), addmv_=_inplace(addmv),
     addr_=_inplace(addr), baddbmm_=_inplace(baddbmm), addbmm_=_inplace(addbmm), kron=kron, cross=cross,
     trace=trace, norm=norm, det=det, inverse=inverse, logdet=logdet, slogdet=slogdet, cholesky=cholesky, qr=qr,
     svd=svd, pinverse=pinverse, matrix_power=matrix_power, matmul=matmul, __matmul__=matmul,
     cholesky_solve=cholesky_solve, cholesky_inverse=cholesky_inverse, matrix_exp=matrix_exp,
     __rmatmul__=lambda self, other: matmul(other if isinstance(other, Tensor) else Tensor._make(np.asarray(other)),
                                            self))
