# ruff: noqa: A002 - torch's argument names (input, A)
"""The general (non-symmetric) eigendecomposition (loaded on first use): ``linalg.eig`` and ``linalg.eigvals``.

The forward is NumPy's LAPACK geev (the routine torch calls): eigenvalues and unit-norm eigenvectors, complex
for every input (complex64 for float32, complex128 for float64). The gradient is torch's
(``linalg_eig_backward``), in tapegrad ops, so that it can be differentiated again. With A = V diag(L) V^-1,

    gA = V^-H (diag(gL) + (V^H gV - V^H V diag(Re(diag(V^H gV)))) / E) V^H,   E_ij = conj(L_j) - conj(L_i)

(off the diagonal; the second term undoes the normalisation of the columns of V). Eigenvectors are defined up to
a phase each: a loss that depends on the phases gives a non-real diagonal of V^H gV, which torch refuses with
the error reproduced here. A real input gets the real part of gA (the engine's cast, as torch's).
"""

from __future__ import annotations

import numpy as np

from .._util import castable, Primitive, Tensor, writes_out
from ._common import _check_square, _const, _eye_like, _mH, _rt
from .products import matmul
from .solvers import solve
from .._util import autocast_listed

__all__ = ["eig", "eigvals"]

linalg_eig_rt = _rt("linalg_eig", ["eigenvalues", "eigenvectors"])

_COMPLEX = {np.dtype(np.float32): np.complex64, np.dtype(np.float64): np.complex128,
            np.dtype(np.complex64): np.complex64, np.dtype(np.complex128): np.complex128}


class LinalgEig(Primitive):
    """Eigenvalues and unit-norm eigenvectors of a square matrix (complex outputs)."""

    @staticmethod
    def forward(ctx, a):
        ctx.set_materialize_grads(False)
        cd = _COMPLEX[a.dtype]
        if a.size:
            w, v = np.linalg.eig(a)
        else:
            w, v = np.zeros(a.shape[:-1], cd), np.zeros(a.shape, cd)
        L, V = Tensor._make(np.asarray(w, cd)), Tensor._make(np.asarray(v, cd))
        ctx.save_for_backward(L, V)
        return L, V

    @staticmethod
    def backward(ctx, gL, gV):
        L, V = ctx.saved_tensors
        if gL is None and gV is None:
            return None
        n = L._array.shape[-1]
        dt = V._array.dtype
        eye = _eye_like(n, dt)
        Vh = _mH(V)
        if gV is not None:
            VhgV = matmul(Vh, gV)
            d = VhgV.diagonal(0, -2, -1)
            if not np.allclose(d._array.imag, 0, rtol=1e-2, atol=1e-2):
                raise RuntimeError("linalg_eig_backward: The eigenvectors in the complex case are specified up to "
                                   "multiplication by e^{i phi}. The specified loss function depends on this "
                                   "quantity, so it is ill-defined.")
            inner = VhgV - matmul(Vh, V * d.real.unsqueeze(-2))
            Lc = L.conj()
            E = Lc.unsqueeze(-2) - Lc.unsqueeze(-1) + eye          # (1 on the diagonal: masked below)
            inner = inner / E * _const(1 - np.eye(n, dtype=dt))
            if gL is not None:
                inner = inner + gL.unsqueeze(-1) * eye
        else:
            inner = gL.unsqueeze(-1) * eye
        return solve(Vh, matmul(inner, Vh))


@writes_out(dtype="cast", error=castable("torch.linalg.eig", "eigenvalues", "eigenvectors"))
@autocast_listed("fp32")
def eig(A, *, out=None):
    """Eigenvalues and eigenvectors of a square matrix (complex, eigenvectors of unit norm), as a named tuple.

    >>> tapegrad.linalg.eig(tapegrad.tensor([[2., 0.], [0., 3.]])).eigenvalues
    tensor([2.+0.j, 3.+0.j])
    """
    _check_square("linalg.eig", A._array)
    return linalg_eig_rt(*LinalgEig.apply(A))


@writes_out(dtype="cast", error=castable("torch.linalg.eigvals", "eigenvalues")[0])
@autocast_listed("fp32")
def eigvals(A, *, out=None):
    """The eigenvalues of a square matrix (complex).

    >>> tapegrad.linalg.eigvals(tapegrad.tensor([[0., -1.], [1., 0.]]))
    tensor([0.+1.j, 0.-1.j])
    """
    _check_square("linalg.eigvals", A._array)
    return LinalgEig.apply(A)[0]
