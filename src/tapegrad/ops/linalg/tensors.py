"""``linalg.tensorinv`` and ``linalg.tensorsolve``: the matrix inverse and solve of a tensor seen as a matrix
(its leading dims as rows, the rest as columns), built from ``inv`` / ``solve`` and reshapes, so their gradients
are theirs."""

from __future__ import annotations

import math


def tensorinv(A, ind=2, *, out=None):
    """The tensor ``X`` with ``tensordot(A, X, ind) == I``: ``A`` of shape ``S1 + S2`` (``len(S1) == ind``) seen as
    a ``prod(S1) x prod(S2)`` matrix, inverted, and shaped ``S2 + S1``."""
    from . import inv
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    rows, cols = tuple(A.shape[:ind]), tuple(A.shape[ind:])
    if math.prod(rows) != math.prod(cols):
        raise RuntimeError("Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                           f"prod(self.shape[:ind]), but got {math.prod(cols)} != {math.prod(rows)}")
    r = inv(A.reshape(math.prod(rows), math.prod(cols))).reshape(cols + rows)
    if out is not None:
        out.copy_(r)
        return out
    return r


def tensorsolve(A, B, dims=None, *, out=None):
    """The ``X`` with ``tensordot(A, X, X.ndim) == B`` (``dims``: the dims of ``A`` moved to its end first)."""
    from . import solve
    if dims is not None:
        nd = A.dim()
        dims = [d % nd for d in dims]
        keep = [d for d in range(nd) if d not in dims]
        A = A.permute(*(keep + dims))
    lead, rest = tuple(A.shape[:B.dim()]), tuple(A.shape[B.dim():])
    if math.prod(lead) != math.prod(rest):
        raise RuntimeError("Expected self to satisfy the requirement prod(self.shape[other.ndim:]) == "
                           f"prod(self.shape[:other.ndim]), but got {math.prod(rest)} != {math.prod(lead)}")
    r = solve(A.reshape(math.prod(lead), math.prod(rest)), B.reshape(math.prod(lead))).reshape(rest)
    if out is not None:
        out.copy_(r)
        return out
    return r
