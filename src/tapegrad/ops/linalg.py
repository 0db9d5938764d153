"""Linear algebra: matmul and its family (the op library adds the rest and ``tapegrad.linalg``)."""

from __future__ import annotations

import numpy as np

from ._util import Primitive, Tensor, bind, op_error, promote, sum_to_shape

__all__ = ["matmul", "mm"]


class Matmul(Primitive):
    """``a @ b`` with NumPy's (and torch's) rules for 1-d operands and broadcast batch dims."""

    node_name = "UnsafeViewBackward0"

    @staticmethod
    def forward(ctx, a, b):
        if a.ndim == 0 or b.ndim == 0:
            raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {a.ndim}D and "
                               f"{b.ndim}D")
        ka = a.shape[-1]
        kb = b.shape[-2] if b.ndim > 1 else b.shape[0]
        if ka != kb:
            sa = "x".join(map(str, a.shape if a.ndim > 1 else (1,) + a.shape))
            sb = "x".join(map(str, b.shape if b.ndim > 1 else b.shape + (1,)))
            if a.ndim == 1 and b.ndim == 1:
                raise RuntimeError(f"inconsistent tensor size, expected tensor [{a.shape[0]}] and src "
                                   f"[{b.shape[0]}] to have the same number of elements, but got {a.shape[0]} and "
                                   f"{b.shape[0]} elements respectively")
            raise op_error("matmul", f"shapes ({', '.join(map(str, a.shape))}) and ({', '.join(map(str, b.shape))})"
                           f" cannot be multiplied ({ka} != {kb}) [mat1 and mat2 shapes cannot be multiplied "
                           f"({sa} and {sb})]")
        a, b, _ = promote(a, b)
        ctx.save_inputs(0, 1)
        return np.matmul(a, b)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        need = ctx.needs_input_grad
        if a.ndim == 1 and b.ndim == 1:
            return (grad * b if need[0] else None), (grad * a if need[1] else None)
        a2 = a.unsqueeze(0) if a.ndim == 1 else a
        b2 = b.unsqueeze(-1) if b.ndim == 1 else b
        g2 = grad
        if a.ndim == 1:
            g2 = g2.unsqueeze(-2)
        if b.ndim == 1:
            g2 = g2.unsqueeze(-1)
        ga = gb = None
        if need[0]:
            ga = sum_to_shape(matmul(g2, b2.transpose(-1, -2)), a2.shape)
            if a.ndim == 1:
                ga = ga.reshape(a.shape)
        if need[1]:
            gb = sum_to_shape(matmul(a2.transpose(-1, -2), g2), b2.shape)
            if b.ndim == 1:
                gb = gb.reshape(b.shape)
        return ga, gb


class Dot(Matmul):
    node_name = "DotBackward0"


class Mv(Matmul):
    node_name = "MvBackward0"


class Mm(Matmul):
    node_name = "MmBackward0"


class Bmm(Matmul):
    node_name = "BmmBackward0"


class VecMat(Matmul):
    node_name = "SqueezeBackward4"


_BY_NDIM = {(1, 1): Dot, (2, 1): Mv, (2, 2): Mm, (1, 2): VecMat}


def matmul(input, other, *, out=None):
    """Matrix product with broadcasting (``a @ b``): dot, matrix-vector, matrix-matrix or batched.

    >>> tapegrad.ones(2, 3) @ tapegrad.ones(3)
    tensor([3., 3.])
    """
    if not isinstance(input, Tensor) or not isinstance(other, Tensor):
        raise TypeError("matmul(): argument 'input' and 'other' must be Tensors")
    cls = _BY_NDIM.get((input._array.ndim, other._array.ndim), Matmul)
    return cls.apply(input, other)


def mm(input, mat2, *, out=None):
    """Product of two matrices (2-d only)."""
    if input._array.ndim != 2 or mat2._array.ndim != 2:
        raise RuntimeError(f"self must be a matrix" if input._array.ndim != 2 else "mat2 must be a matrix")
    return Mm.apply(input, mat2)


bind(matmul=matmul, mm=mm, __matmul__=matmul,
     __rmatmul__=lambda self, other: matmul(other if isinstance(other, Tensor) else Tensor._make(np.asarray(other)),
                                            self))
