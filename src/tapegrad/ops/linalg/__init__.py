# ruff: noqa: A002 - torch's argument names (input, ord)
"""Linear algebra: the matmul family, einsum/tensordot, norms, and the decompositions behind ``tapegrad.linalg``.

Forwards run NumPy's LAPACK routines; every backward is written in tapegrad ops (mostly ``matmul``, ``einsum``,
``linalg.inv`` and ``linalg.solve``, which are themselves Primitives here), so second derivatives work.
Gradients follow PyTorch's formulas (``FunctionsManual.cpp``) and, like them, assume well-conditioned inputs
(distinct eigen/singular values for ``eigh``/``svd``; invertible matrices for ``det``).

The sub-family modules:

- ``_common``: LinAlgError, the return types, shared checks;
- ``products``: matmul, mm, bmm, mv, dot, outer, addmm and kin;
- ``contractions``: einsum, tensordot, inner, kron, cross, trace, multi_dot;
- ``solvers``: inv, det, slogdet, solve, triangular and Cholesky solves, matrix_exp;
- ``decompositions``: cholesky, qr, eigh, svd, pinv, matrix_power, lstsq, matrix_rank;
- ``norms``: cdist, vector / matrix norms, cond.

Loaded on first use (by ``tapegrad.linalg`` and by the top-level names ``tapegrad/__init__.py``'s ``_LAZY_OPS``
lists), not by this package: ``lu`` (the LU family, triangular_solve), ``ldl``, ``eig``, ``householder``
(geqrf, householder_product, orgqr, ormqr) and ``tensors`` (vander, tensorinv, tensorsolve, old norms, low-rank
SVD, lobpcg).
"""

from ._common import *  # noqa: F403
from .products import *  # noqa: F403
from .contractions import *  # noqa: F403
from .solvers import *  # noqa: F403
from .decompositions import *  # noqa: F403
from .norms import *  # noqa: F403

__all__ = ["matmul", "mm", "bmm", "mv", "dot", "vdot", "inner", "outer", "ger", "addmm", "addmv", "addr", "baddbmm",
           "addbmm", "einsum", "tensordot", "kron", "cross", "trace", "chain_matmul", "cdist", "norm", "det",
           "inverse", "logdet", "slogdet", "cholesky", "qr", "svd", "pinverse", "matrix_power", "cholesky_solve",
           "cholesky_inverse", "matrix_exp"]
