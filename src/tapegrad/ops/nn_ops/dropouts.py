# ruff: noqa: A001, A002 - torch's argument name is `input`
"""Dropout and its variants: alpha, feature and channel (1d/2d/3d) dropout.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from ... import _random
from ..._meta import MetaArray as _MetaArray
from ..._meta import meta_array as _meta_array
from ...tensor import Tensor
from ...autograd.function import Primitive
from ._common import _c


# --- dropout ----------------------------------------------------------------------------------------------------
_ALPHA = 1.7580993408473766


def _check_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


class _Noise(Primitive):
    """Dropout's noise: Bernoulli(1 - p) from the global generator (torch's numbers), one value per element or per
    (N, C) feature map, scaled by 1 / (1 - p), or for alpha dropout the pair (scale, shift). An op of its own (no
    tensor inputs, so never recorded) so that ``tapegrad.compile``'s replay draws it anew on every call."""

    @staticmethod
    def forward(ctx, shape, p, dtype, alpha, like=None):
        n = math.prod(shape)          # torch's bernoulli_(1 - p): a float64 uniform per element below 1 - p
        u = _random.uniform01(_random.default_generator, n)     # in the memory order of ``like`` (the input,
        u = u.reshape(shape) if like is None else _random.in_memory_order(like, u)   # as torch's empty_like)
        noise = (u < (1 - p)).astype(dtype)
        if alpha:
            a = 1.0 / math.sqrt((_ALPHA * _ALPHA * p + 1) * (1 - p))
            b = (noise - 1) * (_ALPHA * a) + _ALPHA * a * p
            return noise * a, b
        noise /= (1 - p)
        return noise


def _dropout_impl(input, p, train, inplace, alpha, feature):
    _check_p(p)
    if p == 0 or not train or input._array.size == 0:
        return input
    if p == 1:
        zero = _c(np.zeros((), input._array.dtype))
        return input.mul_(zero) if inplace else input * zero
    a = input._array
    shape = a.shape[:2] + (1,) * (a.ndim - 2) if feature else a.shape
    shape, wrap = _random.draw_shape(shape)       # (vmap with randomness="different": one mask per sample)
    like = None if feature or wrap is not None or a.flags.c_contiguous else a
    if a.__class__ is _MetaArray:                  # (a meta input: a meta mask, nothing drawn)
        noise = Tensor._make(_meta_array(shape, a.dtype))
        noise = (noise, noise) if alpha else noise
    else:
        noise = _Noise.apply(shape, p, a.dtype, alpha, like)
    if wrap is not None:                          # a batched mask (vmap): ordinary ops on it
        out = input * wrap(noise[0]) + wrap(noise[1]) if alpha else input * wrap(noise)
        return input.copy_(out) if inplace else out
    if alpha:
        noise, b = noise
        return input.mul_(noise).add_(b) if inplace else input * noise + b
    return input.mul_(noise) if inplace else input * noise


def dropout(input, p=0.5, training=True, inplace=False):
    """Zero each element with probability ``p`` (scaling the rest by 1/(1-p)) when ``training``.

    >>> F.dropout(tapegrad.ones(3), p=0.5, training=False)
    tensor([1., 1., 1.])
    """
    return _dropout_impl(input, p, training, inplace, False, False)


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Dropout that keeps the self-normalising mean and variance of SELU activations.

    >>> F.alpha_dropout(tapegrad.ones(2), 0.5, training=False)
    tensor([1., 1.])
    """
    return _dropout_impl(input, p, training, inplace, True, False)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Alpha dropout of whole channels (dim 1) of an (N, C, *) input.

    >>> F.feature_alpha_dropout(tapegrad.ones(1, 2, 2), 0.5, training=False).shape
    tapegrad.Size([1, 2, 2])
    """
    return _dropout_impl(input, p, training, inplace, True, True)


def _channel_dropout(input, p, training, inplace, batched):
    """Feature dropout; an unbatched input gets a batch dim for the noise and loses it after (as torch)."""
    if batched:
        return _dropout_impl(input, p, training, inplace, False, True)
    out = _dropout_impl(input.unsqueeze(0), p, training, False, False, True).squeeze(0)
    if inplace:
        from ..elementwise import copy_
        return copy_(input, out)
    return out


def dropout1d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels of an (N, C, L) or (C, L) input with probability ``p``.

    >>> F.dropout1d(tapegrad.ones(2, 3), training=False).shape
    tapegrad.Size([2, 3])
    """
    _check_p(p)
    nd = input._array.ndim
    if nd not in (2, 3):
        raise RuntimeError(f"dropout1d: Expected 2D or 3D input, but received a {nd}D input. Note that dropout1d "
                           "exists to provide channel-wise dropout on inputs with 1 spatial dimension, a channel "
                           "dimension, and an optional batch dimension (i.e. 2D or 3D inputs).")
    return _channel_dropout(input, p, training, inplace, nd == 3)


def dropout2d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels of an (N, C, H, W) or (C, H, W) input with probability ``p``.

    >>> F.dropout2d(tapegrad.ones(1, 2, 3, 3), training=False).shape
    tapegrad.Size([1, 2, 3, 3])
    """
    _check_p(p)
    nd = input._array.ndim
    if nd not in (3, 4):
        warnings.warn(f"dropout2d: Received a {nd}-D input to dropout2d, which is deprecated and will result in an "
                      "error in a future release. To retain the behavior and silence this warning, please use "
                      "dropout instead. Note that dropout2d exists to provide channel-wise dropout on inputs with 2 "
                      "spatial dimensions, a channel dimension, and an optional batch dimension (i.e. 3D or 4D "
                      "inputs).", stacklevel=2)
    if nd == 3:
        warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D dropout "
                      "behavior is desired - input is interpreted as shape (N, C, L), where C is the channel dim. "
                      "This behavior will change in a future release to interpret the input as one without a batch "
                      "dimension, i.e. shape (C, H, W). To maintain the 1D channel-wise dropout behavior, please "
                      "switch to using dropout1d instead.", stacklevel=2)
    return _dropout_impl(input, p, training, inplace, False, True)


def dropout3d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels of an (N, C, D, H, W) or (C, D, H, W) input with probability ``p``.

    >>> F.dropout3d(tapegrad.ones(1, 2, 2, 2, 2), training=False).shape
    tapegrad.Size([1, 2, 2, 2, 2])
    """
    _check_p(p)
    nd = input._array.ndim
    if nd not in (4, 5):
        warnings.warn(f"dropout3d: Received a {nd}-D input to dropout3d, which is deprecated and will result in an "
                      "error in a future release. To retain the behavior and silence this warning, please use "
                      "dropout instead. Note that dropout3d exists to provide channel-wise dropout on inputs with 3 "
                      "spatial dimensions, a channel dimension, and an optional batch dimension (i.e. 4D or 5D "
                      "inputs).", stacklevel=2)
    return _channel_dropout(input, p, training, inplace, nd == 5)
