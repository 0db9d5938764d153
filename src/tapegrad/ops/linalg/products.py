# ruff: noqa: A002 - torch's argument names (input, ord)
"""The matmul family: matmul, mm, bmm, mv, dot, vdot, outer/ger, and addmm, addmv, addr, baddbmm, addbmm
(with their in-place variants); ``@`` on tensors.
"""

from __future__ import annotations

import math

import numpy as np

from .._util import writes_out
from .._util import (Primitive, Tensor, add_tangents, bind, cj, input_shape, mT, multilinear_jvp, op_error, promote,
                     sum_to_shape)
from ._common import _const, _dtname, _mT


_CNAME = {"float32": "float", "float64": "double", "int64": "long", "int32": "int", "int16": "short", "int8": "char",
          "uint8": "unsigned char", "bool": "bool", "float16": "c10::Half", "complex64": "c10::complex<float>",
          "complex128": "c10::complex<double>"}


def _same_dtype(a, b):
    if a.dtype != b.dtype:
        na, nb = _CNAME.get(a.dtype.name, a.dtype.name), _CNAME.get(b.dtype.name, b.dtype.name)
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {na} != {nb}")


def _matmul_dtypes(a, b):
    """Operands of two dtypes: the error of the kernel torch's matmul reaches for these ranks (dot, addmv for a
    vector on the right, mm for a matrix, bmm for a batch on the right)."""
    if a.dtype == b.dtype:
        return
    if b.ndim == 1:
        if a.ndim == 1:
            raise RuntimeError(f"dot : expected both vectors to have same dtype, but found {_dtname(a)} and "
                               f"{_dtname(b)}")
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got {_dtname(b)}, {_dtname(a)}, "
                           f"and {_dtname(b)}")
    if b.ndim == 2:
        _same_dtype(a, b)
    raise RuntimeError(f"expected scalar type {_dtname(a)} but found {_dtname(b)}")


class Matmul(Primitive):
    """``a @ b`` with NumPy's (and torch's) rules for 1-d operands and broadcast batch dims."""

    node_name = "UnsafeViewBackward0"
    array_backward = True

    jvp = staticmethod(multilinear_jvp)     # the product rule

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
        _matmul_dtypes(a, b)
        if a.dtype.kind == "c":
            ctx._cplx = True         # the gradients take the conjugate transposes (torch's convention)
        ctx.save_crossed(0, 1)       # each operand only for the other's gradient
        return np.matmul(a, b)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors     # (a is None when b needs no gradient, and the other way round)
        need = ctx.needs_input_grad
        if ctx._cplx:
            a, b = (cj(a) if need[1] else None), (cj(b) if need[0] else None)
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


class Vdot(Primitive):
    """``vdot(a, b)``: sum(conj(a) * b) (for real tensors the same as ``dot``)."""

    node_name = "VdotBackward0"
    array_backward = True

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_crossed(0, 1)
        return np.asarray(np.vdot(a, b))

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        need = ctx.needs_input_grad
        # vdot is antilinear in a: its gradient is conj(grad) * b; linear in b: grad * a (not conjugated)
        return (cj(grad) * b if need[0] else None), (grad * a if need[1] else None)


class Mv(Matmul):
    node_name = "MvBackward0"
    array_backward = True


class Mm(Matmul):
    node_name = "MmBackward0"
    array_backward = True
    _pack_order = (1, 0)      # (saved-tensor hooks see mat2 first, as torch's)


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


@writes_out
def matmul(input, other, *, out=None):
    """Matrix product with broadcasting (``a @ b``): dot, matrix-vector, matrix-matrix or batched.

    >>> tapegrad.ones(2, 3) @ tapegrad.ones(3)
    tensor([3., 3.])
    """
    _tensor_arg(input, "matmul", "input")
    _tensor_arg(other, "matmul", "other")
    cls = _BY_NDIM.get((input._array.ndim, other._array.ndim), Matmul)
    return cls.apply(input, other)


@writes_out
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


@writes_out
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


@writes_out(error="addmv input tensors must have the same dtype, but got {o}, {r}, and {r}")
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


@writes_out(error="result dtype {o} does not match input dtype {r}")
def dot(input, tensor, *, out=None):
    """Inner product of two 1-d tensors.

    >>> tapegrad.dot(tapegrad.tensor([1., 2.]), tapegrad.tensor([3., 4.]))
    tensor(11.)
    """
    _dot_check("dot", input._array, tensor._array)
    return Dot.apply(input, tensor)


@writes_out(error="result dtype {o} does not match input dtype {r}")
def vdot(input, other, *, out=None):
    """Inner product of two 1-d tensors, conjugating the first (real tensors: same as ``dot``).

    >>> tapegrad.vdot(tapegrad.tensor([1., 2.]), tapegrad.tensor([3., 4.]))
    tensor(11.)
    """
    _dot_check("vdot", input._array, other._array)
    return Vdot.apply(input, other)


@writes_out(dtype="cast")
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


@writes_out(dtype="cast")
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

    @staticmethod
    def jvp(ctx, ti, ta, tb, *_):   # beta ti + alpha (P(ta, b) + P(a, tb))
        inp, a, b, beta, alpha = ctx.inputs
        op = ctx.op
        return add_tangents(add_tangents(None if ti is None else ti * beta,
                                         None if ta is None else op.apply(inp, ta, b, 0, alpha)),
                            None if tb is None else op.apply(inp, a, tb, 0, alpha))

    @classmethod
    def forward(cls, ctx, inp, a, b, beta, alpha):
        inp, a, b = cls.check_dtypes(inp, a, b)
        ctx.beta, ctx.alpha = beta, alpha
        if a.dtype.kind == "c":
            ctx._cplx = True
        ctx.save_crossed(1, 2)       # each factor only for the other's gradient
        if a.dtype == np.float16:      # torch computes Half in float32 and rounds the result once
            return cls.forward(ctx, inp.astype(np.float32), a.astype(np.float32), b.astype(np.float32), beta,
                               alpha).astype(np.float16)
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
        alpha, beta = ctx.alpha, ctx.beta
        if ctx._cplx:          # the conjugate factors (and scalars): torch's convention
            a, b = (cj(a) if need[2] else None), (cj(b) if need[1] else None)
            alpha, beta = np.conj(alpha).item(), np.conj(beta).item()
        gi = ga = gb = None
        if need[0]:
            gi = grad * beta if beta != 1 else grad
        if need[1]:
            ga = cls.grad_mat1(grad, b)
            if alpha != 1:
                ga = ga * alpha
        if need[2]:
            gb = cls.grad_mat2(grad, a)
            if alpha != 1:
                gb = gb * alpha
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
        return np.matmul(a, b).sum(0, dtype=np.result_type(a, b))     # (NumPy would sum int32 into int64)

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


@writes_out
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


@writes_out
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


@writes_out(dtype="cast")
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


@writes_out
def baddbmm(input, batch1, batch2, *, beta=1, alpha=1, out=None):
    """``beta * input + alpha * bmm(batch1, batch2)``.

    >>> tapegrad.baddbmm(tapegrad.zeros(1, 2, 2), tapegrad.ones(3, 2, 4), tapegrad.ones(3, 4, 2)).shape
    tapegrad.Size([3, 2, 2])
    """
    a, b = batch1._array, batch2._array
    _bmm_check(a, b)
    _check_add_shape("baddbmm", input, (a.shape[0], a.shape[1], b.shape[2]))
    return Baddbmm.apply(input, batch1, batch2, beta, alpha)


@writes_out(error="self and mat2 must have the same dtype, but got {o} and {r}")
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
        from .._util import apply_inplace
        return apply_inplace(self, fn, *args, **kwargs)
    method.__name__ = fn.__name__ + "_"
    return method


def _cat_last(a: Tensor, b: Tensor) -> Tensor:
    """Concatenate along the last dim with einsum-free ops: pad each with zeros via matmul by selectors."""
    na, nb = a._array.shape[-1], b._array.shape[-1]
    dt = a._array.dtype
    ea = np.eye(na, na + nb, dtype=dt)
    eb = np.eye(nb, na + nb, k=na, dtype=dt)
    return matmul(a, _const(ea)) + matmul(b, _const(eb))


bind(matmul=matmul, __matmul__=matmul,
     __rmatmul__=lambda self, other: matmul(other if isinstance(other, Tensor) else Tensor._make(np.asarray(other)),
                                            self),
     mm=mm, bmm=bmm, mv=mv, dot=dot, vdot=vdot, outer=outer, ger=ger, addmm=addmm, addmv=addmv,
     addr=addr, baddbmm=baddbmm, addbmm=addbmm, addmm_=_inplace(addmm), addmv_=_inplace(addmv),
     addr_=_inplace(addr), baddbmm_=_inplace(baddbmm), addbmm_=_inplace(addbmm))
