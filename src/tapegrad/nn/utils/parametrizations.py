"""Ready-made parametrizations (``nn.utils.parametrizations``): ``orthogonal``, ``weight_norm`` and
``spectral_norm``, each registered with ``nn.utils.parametrize`` (so the state_dict keys are torch's:
``parametrizations.weight.original``, ``...original0`` / ``original1`` for weight norm's g and v,
``parametrizations.weight.0._u`` / ``_v`` for spectral norm's power-iteration vectors).

>>> lin = orthogonal(tapegrad.nn.Linear(3, 3))
>>> bool((lin.weight @ lin.weight.T).allclose(tapegrad.eye(3), atol=1e-5))
True
>>> list(weight_norm(tapegrad.nn.Linear(2, 2)).state_dict())
['bias', 'parametrizations.weight.original0', 'parametrizations.weight.original1']
"""

from __future__ import annotations

from enum import Enum, auto

import numpy as np

from ...autograd.grad_mode import no_grad
from ...tensor import Tensor
from .. import functional as F
from ..module import Module
from . import parametrize

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]


# --- orthogonal ------------------------------------------------------------------------------------------------
def _eye(n, like):
    return Tensor._make(np.eye(n, dtype=like._array.dtype))


def _is_orthogonal(Q):
    n, k = Q.size(-2), Q.size(-1)
    eps = 10.0 * n * np.finfo(Q._array.dtype).eps
    return bool(np.allclose(np.swapaxes(Q._array, -1, -2).conj() @ Q._array, np.eye(k), rtol=1e-5, atol=eps))


def _geqrf(A):
    """LAPACK's QR in Householder form of a (batch of) matrices: (R above the diagonal and the reflectors below,
    tau), as ``torch.geqrf``."""
    h, tau = np.linalg.qr(A, mode="raw")
    return np.swapaxes(h, -1, -2).copy(), tau


def _make_orthogonal(A):
    """The Q of A's QR decomposition, its columns' signs set so that R's diagonal is positive."""
    X, _ = _geqrf(A._array)
    Q = np.linalg.qr(A._array)[0]
    Q = Q * np.sign(np.diagonal(X, axis1=-2, axis2=-1))[..., None, :]
    return Tensor._make(Q.astype(A._array.dtype, copy=False))


def _householder_product(A, tau):
    """The first k columns of ``H_1 ... H_k``, ``H_i = I - tau_i v_i v_i^T``, ``v_i = e_i + A[:, i]`` (A strictly
    lower triangular, ``(..., n, k)``): ``torch.linalg.householder_product``, written in tapegrad ops so that it is
    differentiable in ``A`` and ``tau``."""
    n, k = A.shape[-2], A.shape[-1]
    eye = _eye(n, A)
    Q = eye[:, :k].expand(*A.shape[:-2], n, k) if A.dim() > 2 else eye[:, :k]
    for i in reversed(range(k)):
        v = A[..., :, i] + eye[:, i]
        Q = Q - (tau[..., i, None, None] * v[..., :, None]) @ (v[..., None, :] @ Q)
    return Q


class _OrthMaps(Enum):
    matrix_exp = auto()
    cayley = auto()
    householder = auto()


class _Orthogonal(Module):
    """Maps any matrix to an orthogonal one (the exponential or Cayley map of its skew-symmetric part, or a
    product of Householder reflections), times ``base`` when ``use_trivialization``."""

    def __init__(self, weight, orthogonal_map, *, use_trivialization=True):
        super().__init__()
        if weight.is_complex() and orthogonal_map == _OrthMaps.householder:
            raise ValueError("The householder parametrization does not support complex tensors.")
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X):
        n, k = X.size(-2), X.size(-1)
        transposed = n < k
        if transposed:
            X = X.mT
            n, k = k, n
        if self.orthogonal_map in (_OrthMaps.matrix_exp, _OrthMaps.cayley):
            X = X.tril()
            if n != k:
                from ... import cat
                X = cat([X, X.new_zeros(n, n - k).expand(*X.shape[:-2], -1, -1)], dim=-1)
            A = X - X.mH
            if self.orthogonal_map == _OrthMaps.matrix_exp:
                from ... import matrix_exp
                Q = matrix_exp(A)
            else:
                from ...ops.linalg import solve
                Id = _eye(n, A)
                Q = solve(Id - 0.5 * A, Id + 0.5 * A)
            if n != k:
                Q = Q[..., :k]
        else:
            A = X.tril(diagonal=-1)
            tau = 2.0 / (1.0 + (A * A).sum(dim=-2))
            Q = _householder_product(A, tau)
            Q = Q * X.diagonal(dim1=-2, dim2=-1).int().unsqueeze(-2)
        if hasattr(self, "base"):
            Q = self.base @ Q
        if transposed:
            Q = Q.mT
        return Q

    def right_inverse(self, Q):
        with no_grad():
            if Q.shape != self.shape:
                raise ValueError(f"Expected a matrix or batch of matrices of shape {self.shape}. Got a tensor of shape "
                                 f"{Q.shape}.")
            Q_init = Q
            n, k = Q.size(-2), Q.size(-1)
            transpose = n < k
            if transpose:
                Q = Q.mT
                n, k = k, n
            if not hasattr(self, "base"):
                if self.orthogonal_map in (_OrthMaps.cayley, _OrthMaps.matrix_exp):
                    raise NotImplementedError("It is not possible to assign to the matrix exponential or the Cayley "
                                              "parametrizations when use_trivialization=False.")
                A, tau = _geqrf(Q._array)
                d = np.sign(np.diagonal(A, axis1=-2, axis2=-1))
                d = np.where(tau == 0.0, -d, d)
                idx = np.arange(min(A.shape[-2:]))
                A[..., idx, idx] = d
                A = Tensor._make(A)
                return A.mT if transpose else A
            if n == k:
                Q = _make_orthogonal(Q) if not _is_orthogonal(Q) else Q.clone()
            else:
                from ... import cat, randn
                N = randn(*(tuple(Q.shape[:-2]) + (n, n - k)), dtype=Q.dtype)
                Q = _make_orthogonal(cat([Q, N], dim=-1))
            self.base = Q
            neg_id = np.zeros(tuple(Q_init.shape), Q_init._array.dtype)
            idx = np.arange(min(neg_id.shape[-2:]))
            neg_id[..., idx, idx] = -1.0
            return Tensor._make(neg_id)


def orthogonal(module, name="weight", orthogonal_map=None, *, use_trivialization=True):
    """Keep ``module.<name>`` (a matrix, or a batch) orthogonal (or with orthonormal rows or columns, when not
    square). ``orthogonal_map``: "matrix_exp" (the default for square matrices), "cayley" or "householder" (the
    default otherwise). With ``use_trivialization`` (default) the map is applied around a base point kept as a
    buffer, so the weight starts as the module's own (orthogonalised) weight. Returns ``module``.

    >>> w = orthogonal(tapegrad.nn.Linear(4, 2), orthogonal_map="householder").weight
    >>> bool((w @ w.T).allclose(tapegrad.eye(2), atol=1e-5))
    True
    """
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError(f"Expected a matrix or batch of matrices. Got a tensor of {weight.ndim} dimensions.")
    if orthogonal_map is None:
        orthogonal_map = "matrix_exp" if weight.size(-2) == weight.size(-1) or weight.is_complex() else "householder"
    orth_enum = getattr(_OrthMaps, orthogonal_map, None)
    if orth_enum is None:
        raise ValueError(f'orthogonal_map has to be one of "matrix_exp", "cayley", "householder". Got: '
                         f"{orthogonal_map}")
    orth = _Orthogonal(weight, orth_enum, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module


# --- weight norm -----------------------------------------------------------------------------------------------
class _WeightNorm(Module):
    """``weight = g * v / ||v||`` (the norm over every dim but ``dim``; ``dim=None``: the whole tensor)."""

    def __init__(self, dim=0):
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g, weight_v):
        from ... import _weight_norm
        return _weight_norm(weight_v, weight_g, self.dim)

    def right_inverse(self, weight):
        from ... import norm_except_dim
        return norm_except_dim(weight, 2, self.dim), weight


def weight_norm(module, name="weight", dim=0):
    """Reparametrize ``module.<name>`` by a magnitude ``g`` (``original0``) and a direction ``v``
    (``original1``). State dicts saved with the old ``nn.utils.weight_norm`` (``weight_g``, ``weight_v``) still
    load. Returns ``module``."""
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)

    def _weight_norm_compat_hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                 error_msgs):
        g_key, v_key = f"{prefix}{name}_g", f"{prefix}{name}_v"
        if g_key in state_dict and v_key in state_dict:
            state_dict[f"{prefix}parametrizations.{name}.original0"] = state_dict.pop(g_key)
            state_dict[f"{prefix}parametrizations.{name}.original1"] = state_dict.pop(v_key)

    module._register_load_state_dict_pre_hook(_weight_norm_compat_hook)
    return module


# --- spectral norm ---------------------------------------------------------------------------------------------
class _SpectralNorm(Module):
    """``weight / sigma``, sigma the largest singular value of the weight (as a matrix over ``dim`` and the rest),
    estimated by power iteration: ``n_power_iterations`` steps per forward in training mode, the vectors kept in
    the buffers ``_u`` and ``_v``."""

    def __init__(self, weight, n_power_iterations=1, dim=0, eps=1e-12):
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of [-{ndim}, {ndim - 1}] but got "
                             f"{dim})")
        if n_power_iterations <= 0:
            raise ValueError(f"Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            weight_mat = self._reshape_weight_to_matrix(weight)
            h, w = weight_mat.size()
            from ... import randn
            u = randn(h, dtype=weight_mat.dtype)          # (torch draws normal_(0, 1) into new tensors)
            v = randn(w, dtype=weight_mat.dtype)
            self.register_buffer("_u", F.normalize(u, dim=0, eps=self.eps))
            self.register_buffer("_v", F.normalize(v, dim=0, eps=self.eps))
            self._power_method(weight_mat, 15)

    def _reshape_weight_to_matrix(self, weight):
        if weight.ndim <= 1:
            raise AssertionError(f"Expected weight to have more than 1 dimension, got {weight.ndim}")
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.dim()) if d != self.dim))
        return weight.flatten(1)

    def _power_method(self, weight_mat, n_power_iterations):
        with no_grad():
            for _ in range(n_power_iterations):
                self._u = F.normalize(weight_mat.mv(self._v), dim=0, eps=self.eps, out=self._u)
                self._v = F.normalize(weight_mat.H.mv(self._u), dim=0, eps=self.eps, out=self._v)

    def forward(self, weight):
        if weight.ndim == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        weight_mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(weight_mat, self.n_power_iterations)
        u = self._u.clone()
        v = self._v.clone()
        sigma = u.vdot(weight_mat.mv(v))
        return weight / sigma

    def right_inverse(self, value):
        return value


def _transposed_conv_dim(module):
    from ..modules.conv import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
    return 1 if isinstance(module, (ConvTranspose1d, ConvTranspose2d, ConvTranspose3d)) else 0


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """Divide ``module.<name>`` by its spectral norm (its largest singular value), for Lipschitz-constrained
    layers (GAN discriminators). ``dim`` defaults to 1 for transposed convolutions (their output channels), else
    0. Returns ``module``."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        dim = _transposed_conv_dim(module)
    parametrize.register_parametrization(module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module

