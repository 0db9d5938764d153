"""``tapegrad.linalg``: torch.linalg's functions (loaded on first use of ``tapegrad.linalg``).

The ops themselves live in ``tapegrad.ops.linalg``; this module gives them torch.linalg's names.
"""

from .ops.linalg import LinAlgError, cholesky_ex, cond, det, diagonal, eigh, eigvalsh, inv, inv_ex, lstsq, matmul
from .ops.linalg import linalg_cholesky as cholesky
from .ops.linalg import linalg_cross as cross
from .ops.linalg import linalg_norm as norm
from .ops.linalg import linalg_qr as qr
from .ops.linalg import linalg_slogdet as slogdet
from .ops.linalg import linalg_svd as svd
from .ops.linalg import (matrix_exp, matrix_norm, matrix_power, matrix_rank, multi_dot, pinv, solve, solve_ex,
                         solve_triangular, svdvals, vecdot, vector_norm)

__all__ = ["LinAlgError", "cholesky", "cholesky_ex", "cond", "cross", "det", "diagonal", "eigh", "eigvalsh", "inv",
           "inv_ex", "lstsq", "matmul", "matrix_exp", "matrix_norm", "matrix_power", "matrix_rank", "multi_dot", "norm",
           "pinv", "qr", "slogdet", "solve", "solve_ex", "solve_triangular", "svd", "svdvals", "vecdot", "vector_norm"]
from .ops.linalg.tensors import tensorinv, tensorsolve  # noqa: E402
__all__ += ["tensorinv", "tensorsolve"]

from . import _aliases  # noqa: E402
_aliases.install(globals(), "linalg")   # torch.linalg.vector_norm(x, axis=0, keepdims=True): see _aliases.py
