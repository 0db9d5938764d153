"""Gradient clipping: ``clip_grad_norm_`` (scale all gradients so their joint norm is at most ``max_norm``) and
``clip_grad_value_`` (clamp each element), in place, as torch does.

>>> tapegrad.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)   # returns the norm before clipping
"""

from __future__ import annotations

import warnings

import numpy as np

from ...tensor import Tensor

__all__ = ["clip_grad_norm_", "clip_grad_norm", "clip_grad_value_", "get_total_norm", "clip_grads_with_norm_"]


def _as_list(tensors):
    if isinstance(tensors, Tensor):
        return [tensors]
    return list(tensors)


def _vector_norm(a, p):
    """torch.linalg.vector_norm of an ndarray, in its dtype."""
    a = np.abs(a.ravel())
    if p == float("inf"):
        return a.max() if a.size else a.dtype.type(0)
    if p == float("-inf"):
        return a.min() if a.size else a.dtype.type(np.inf)
    if p == 0:
        return a.dtype.type(np.count_nonzero(a))
    if p == 1:
        return a.sum(dtype=a.dtype)
    if p == 2:
        return np.sqrt(np.dot(a, a)) if a.size else a.dtype.type(0)
    return (a ** p).sum(dtype=a.dtype) ** (1.0 / p)


def get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """The ``norm_type``-norm of the norms of ``tensors`` (as if they were concatenated into one vector)."""
    tensors = [t for t in _as_list(tensors) if t is not None]
    norm_type = float(norm_type)
    if not tensors:
        return Tensor._make(np.array(0.0, np.float32))
    if any(t.is_sparse for t in tensors):      # (an Embedding(sparse=True) gradient: torch has no sparse norm)
        raise NotImplementedError("Could not run 'aten::linalg_vector_norm' with arguments from the 'SparseCPU' "
                                  "backend.")
    dtype = np.result_type(*[t._array.dtype for t in tensors])
    norms = np.array([_vector_norm(t._array, norm_type) for t in tensors], dtype=dtype)
    total = np.asarray(_vector_norm(norms, norm_type), dtype=dtype)
    if error_if_nonfinite and not np.isfinite(total):
        raise RuntimeError(f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, so "
                           "it cannot be clipped. To disable this error and scale the gradients by the non-finite "
                           "norm anyway, set `error_if_nonfinite=False`")
    return Tensor._make(total)


def clip_grads_with_norm_(parameters, max_norm, total_norm, foreach=None):
    """Scale the gradients by ``min(1, max_norm / (total_norm + 1e-6))`` in place."""
    grads = [p.grad for p in _as_list(parameters) if p.grad is not None]
    if not grads:
        return
    tn = total_norm._array if isinstance(total_norm, Tensor) else np.asarray(total_norm)
    coef = np.asarray(float(max_norm), tn.dtype) / (tn + np.asarray(1e-6, tn.dtype))
    coef = np.minimum(coef, np.asarray(1.0, tn.dtype))
    for g in grads:
        np.multiply(g._array, coef.astype(g._array.dtype), out=g._array, casting="unsafe")
        g._vc[0] += 1


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Clip the joint gradient norm of ``parameters`` to ``max_norm`` in place; returns the total norm (a tensor)
    before clipping. ``norm_type`` may be ``inf``.

    >>> total = tapegrad.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    """
    parameters = _as_list(parameters)
    grads = [p.grad for p in parameters if p.grad is not None]
    max_norm = float(max_norm)
    if not grads:
        return Tensor._make(np.array(0.0, np.float32))
    total_norm = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(parameters, max_norm, total_norm, foreach)
    return total_norm


def clip_grad_norm(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Deprecated alias of ``clip_grad_norm_``."""
    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of `torch.nn.utils.clip_grad_norm_`.",
                  FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


def clip_grad_value_(parameters, clip_value, foreach=None):
    """Clamp every gradient element to ``[-clip_value, clip_value]`` in place.

    >>> tapegrad.nn.utils.clip_grad_value_(model.parameters(), 0.5)
    """
    clip_value = float(clip_value)
    for p in _as_list(parameters):
        g = p.grad
        if g is None:
            continue
        np.clip(g._array, -clip_value, clip_value, out=g._array, casting="unsafe")
        g._vc[0] += 1
