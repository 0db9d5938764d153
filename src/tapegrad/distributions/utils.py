"""Helpers the distributions share (torch.distributions.utils): broadcasting parameters, probabilities <-> logits,
lazily computed properties, triangular-matrix packing, and standard normal draws from tapegrad's generator."""

from __future__ import annotations

import math
from functools import update_wrapper
from numbers import Number

import numpy as np

import tapegrad
from tapegrad import _random
from tapegrad.tensor import Tensor

__all__ = ["broadcast_all", "logits_to_probs", "clamp_probs", "probs_to_logits", "lazy_property",
           "tril_matrix_to_vec", "vec_to_tril_matrix", "euler_constant"]

euler_constant = 0.57721566490153286060


def broadcast_all(*values):
    """Numbers become tensors (of the first tensor's dtype, else the default dtype); then all are broadcast."""
    if not all(isinstance(v, (Tensor, Number)) for v in values):
        raise ValueError("Input arguments must all be instances of numbers.Number, torch.Tensor or objects "
                         "implementing __torch_function__.")
    if not all(isinstance(v, Tensor) for v in values):
        dtype = next((v.dtype for v in values if isinstance(v, Tensor)), tapegrad.get_default_dtype())
        values = [v if isinstance(v, Tensor) else tapegrad.tensor(v, dtype=dtype) for v in values]
    return tapegrad.broadcast_tensors(*values)


def _standard_normal(shape, dtype, generator=None):
    shape = tuple(shape)
    vals = _random.normal(_random._gen(generator), math.prod(shape), 0.0, 1.0, _random.kind(dtype))
    return Tensor._make(vals.astype(dtype.np, copy=False).reshape(shape))


def _uniform(shape, dtype, low=0.0, high=1.0, generator=None):
    """Uniform draws in [low, high) (the dtype's rounding can give ``high`` in float32: callers clamp)."""
    shape = tuple(shape)
    vals = _random.uniform(_random._gen(generator), math.prod(shape), low, high, _random.kind(dtype))
    return Tensor._make(vals.astype(dtype.np, copy=False).reshape(shape))


def _sum_rightmost(value, dim):
    """Sum out the ``dim`` rightmost dims."""
    if dim == 0:
        return value
    return value.reshape(value.shape[:value.dim() - dim] + (-1,)).sum(-1)


def logits_to_probs(logits, is_binary=False):
    """sigmoid(logits) (binary) or softmax over the last dim."""
    if is_binary:
        return tapegrad.sigmoid(logits)
    return tapegrad.nn.functional.softmax(logits, dim=-1)


def clamp_probs(probs):
    """Probabilities clamped to [eps, 1 - eps] (their dtype's eps)."""
    eps = tapegrad.finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs, is_binary=False):
    """log(p) - log1p(-p) (binary) or log(p), from clamped probabilities."""
    ps_clamped = clamp_probs(probs)
    if is_binary:
        return tapegrad.log(ps_clamped) - tapegrad.log1p(-ps_clamped)
    return tapegrad.log(ps_clamped)


class lazy_property:
    """A property computed once (with grad mode on) and then stored on the instance."""

    def __init__(self, wrapped):
        self.wrapped = wrapped
        update_wrapper(self, wrapped)

    def __get__(self, instance, obj_type=None):
        if instance is None:
            return _lazy_property_and_property(self.wrapped)
        with tapegrad.enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


class _lazy_property_and_property(lazy_property, property):
    """What ``cls.<lazy_property>`` gives: usable where a property is expected (e.g. by Sphinx)."""

    def __init__(self, wrapped):
        property.__init__(self, wrapped)
        lazy_property.__init__(self, wrapped)


def tril_matrix_to_vec(mat, diag=0):
    """The lower triangle (from diagonal ``diag``) of the last two dims, row by row, as a vector."""
    n = mat.shape[-1]
    if not -n <= diag < n:
        raise ValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    rows, cols = np.tril_indices(n, diag)
    return mat[..., tapegrad.tensor(rows), tapegrad.tensor(cols)]


def vec_to_tril_matrix(vec, diag=0):
    """The inverse of ``tril_matrix_to_vec``: a vector of the lower triangle's entries back into a square matrix."""
    size = vec.shape[-1]
    n = round((-(1 + 2 * diag) + math.sqrt((1 + 2 * diag) ** 2 + 8 * size + 4 * abs(diag) * (diag + 1))) / 2)
    rows, cols = np.tril_indices(n, diag)
    if rows.size != size:
        raise ValueError(f"The size of last dimension is {size} which cannot be expressed as the lower triangular "
                         "part of a square D x D matrix.")
    mat = tapegrad.zeros(vec.shape[:-1] + (n, n), dtype=vec.dtype)
    mat[..., tapegrad.tensor(rows), tapegrad.tensor(cols)] = vec
    return mat
