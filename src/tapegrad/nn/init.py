"""``tapegrad.nn.init``: fill tensors in place with torch's initialisation schemes (torch's numbers for the same seed).

Every function writes into ``tensor`` without recording a graph (as under ``no_grad``), bumps its version and
returns it.

>>> w = tapegrad.empty(3, 5)
>>> tapegrad.nn.init.xavier_uniform_(w).shape
tapegrad.Size([3, 5])
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from .. import _random as R
from .._random import _gen
from .._meta import skips_meta as _skips_meta

__all__ = ["calculate_gain", "uniform_", "normal_", "trunc_normal_", "constant_", "ones_", "zeros_", "eye_",
           "dirac_", "xavier_uniform_", "xavier_normal_", "kaiming_uniform_", "kaiming_normal_", "orthogonal_",
           "sparse_", "uniform", "normal", "constant", "xavier_uniform", "xavier_normal", "kaiming_uniform",
           "kaiming_normal", "orthogonal", "sparse"]


def _write(tensor, values):
    """Store ``values`` into ``tensor``'s memory (cast to its dtype) and bump its version counter."""
    np.copyto(tensor._array, values, casting="unsafe")
    tensor._vc[0] += 1
    return tensor


def calculate_gain(nonlinearity, param=None):
    """The recommended gain for a nonlinearity (``calculate_gain("relu") == sqrt(2)``)."""
    linear_fns = ["linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
                  "conv_transpose3d"]
    if nonlinearity in linear_fns or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            negative_slope = 0.01
        elif not isinstance(param, bool) and isinstance(param, int) or isinstance(param, float):
            negative_slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + negative_slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


@_skips_meta
def uniform_(tensor, a=0.0, b=1.0, generator=None):
    """Fill with samples of U(a, b).

    >>> tapegrad.nn.init.uniform_(tapegrad.empty(2), -1, 1)
    """
    arr = tensor._array
    return _write(tensor, R.in_memory_order(arr, R.uniform(_gen(generator), arr.size, a, b, R.kind(tensor.dtype))))


@_skips_meta
def normal_(tensor, mean=0.0, std=1.0, generator=None):
    """Fill with samples of N(mean, std**2)."""
    arr = tensor._array
    vals = R.normal(_gen(generator), arr.size, float(mean), float(std), R.kind(tensor.dtype), arr.flags.c_contiguous)
    return _write(tensor, R.in_memory_order(arr, vals))


@_skips_meta
def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None):
    """Fill with N(mean, std**2) samples truncated to [a, b], by torch's two rejection samplers (torch's numbers):
    where [a, b] holds more than 30% of the mass, normal draws of the whole tensor, each keeping the values still
    outside; otherwise uniform candidates on [a, b], accepted when log(u) <= the log density ratio to the mode."""
    if (mean < a - 2 * std) or (mean > b + 2 * std):
        warnings.warn("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. The distribution of values may "
                      "be incorrect.", stacklevel=2)
    arr, g, k = tensor._array, _gen(generator), R.kind(tensor.dtype)
    if arr.size == 0:
        return tensor
    t = arr.dtype.type

    def cdf(x):
        return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0

    def draw(f, *args):
        return R.in_memory_order(arr, f(g, arr.size, *args, k)).astype(arr.dtype, copy=False)

    if cdf((b - mean) / std) - cdf((a - mean) / std) > 0.3:
        lo, hi = t(a), t(b)
        out = draw(R.normal, float(mean), float(std))
        while True:
            outside = (out < lo) | (out > hi)
            if not outside.any():
                break
            out = np.where(outside, draw(R.normal, float(mean), float(std)), out)
        return _write(tensor, out)
    mode = max(a, min(mean, b))
    log_peak = t(-0.5 * ((mode - mean) / std) ** 2)

    def log_ratio(c):
        return ((c - t(mean)) / t(std)) ** 2 * t(-0.5) - log_peak

    with np.errstate(divide="ignore"):
        out = draw(R.uniform, a, b)
        pending = np.log(draw(R.uniform, 0.0, 1.0)) > log_ratio(out)
        while pending.any():
            cand = draw(R.uniform, a, b)
            out = np.where(pending, cand, out)
            pending = np.where(pending, np.log(draw(R.uniform, 0.0, 1.0)) > log_ratio(cand), pending)
    return _write(tensor, out)


def constant_(tensor, val):
    """Fill with ``val``."""
    return _write(tensor, val)


def ones_(tensor):
    """Fill with ones."""
    return _write(tensor, 1)


def zeros_(tensor):
    """Fill with zeros."""
    return _write(tensor, 0)


def eye_(tensor):
    """Fill a 2-D tensor with the identity matrix."""
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    return _write(tensor, np.eye(*tensor._array.shape))


def dirac_(tensor, groups=1):
    """Fill a 3/4/5-D conv weight with the Dirac delta (the convolution keeps its input's channels)."""
    dimensions = tensor.ndim
    if dimensions not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    sizes = tensor._array.shape
    if sizes[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    out_per = sizes[0] // groups
    min_dim = min(out_per, sizes[1])
    arr = np.zeros(sizes)
    centre = tuple(s // 2 for s in sizes[2:])
    g, d = np.meshgrid(np.arange(groups), np.arange(min_dim), indexing="ij")
    arr[((g * out_per + d).ravel(), d.ravel()) + centre] = 1
    return _write(tensor, arr)


def _calculate_fan_in_and_fan_out(tensor):
    dimensions = tensor.dim()
    if dimensions < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 dimensions")
    num_input_fmaps = tensor.size(1)
    num_output_fmaps = tensor.size(0)
    receptive_field_size = 1
    if tensor.dim() > 2:
        for s in tensor.shape[2:]:
            receptive_field_size *= s
    return num_input_fmaps * receptive_field_size, num_output_fmaps * receptive_field_size


def _calculate_correct_fan(tensor, mode):
    mode = mode.lower()
    valid_modes = ["fan_in", "fan_out"]
    if mode not in valid_modes:
        raise ValueError(f"Mode {mode} not supported, please use one of {valid_modes}")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def xavier_uniform_(tensor, gain=1.0, generator=None):
    """U(-a, a) with ``a = gain * sqrt(6 / (fan_in + fan_out))`` (Glorot)."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    a = math.sqrt(3.0) * std
    return uniform_(tensor, -a, a, generator)


def xavier_normal_(tensor, gain=1.0, generator=None):
    """N(0, std**2) with ``std = gain * sqrt(2 / (fan_in + fan_out))`` (Glorot)."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return normal_(tensor, 0.0, std, generator)


def _kaiming_std(tensor, a, mode, nonlinearity):
    """He's ``gain / sqrt(fan)``, or None (with torch's warning) for a zero-element tensor."""
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=3)
        return None
    return calculate_gain(nonlinearity, a) / math.sqrt(_calculate_correct_fan(tensor, mode))


def kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """U(-bound, bound) with ``bound = gain * sqrt(3 / fan)`` (He); Linear uses ``a=sqrt(5)``."""
    std = _kaiming_std(tensor, a, mode, nonlinearity)
    if std is None:
        return tensor
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """N(0, std**2) with ``std = gain / sqrt(fan)`` (He)."""
    std = _kaiming_std(tensor, a, mode, nonlinearity)
    return tensor if std is None else normal_(tensor, 0, std, generator)


@_skips_meta
def orthogonal_(tensor, gain=1, generator=None):
    """Fill with a (semi-)orthogonal matrix (QR of a Gaussian matrix, signs fixed), times ``gain``."""
    if tensor.ndim < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    rows = tensor._array.shape[0]
    cols = tensor.numel() // rows
    flat = R.normal(_gen(generator), rows * cols, 0.0, 1.0, R.kind(tensor.dtype)).reshape(rows, cols)
    flat = flat.astype(tensor._array.dtype)
    if rows < cols:
        flat = flat.T
    q, r = np.linalg.qr(flat)
    q = q * np.sign(np.diag(r))
    if rows < cols:
        q = q.T
    return _write(tensor, (q * gain).reshape(tensor._array.shape))


@_skips_meta
def sparse_(tensor, sparsity, std=0.01, generator=None):
    """A 2-D normal(0, std) matrix with a fraction ``sparsity`` of each column set to zero."""
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rows, cols = tensor._array.shape
    num_zeros = math.ceil(sparsity * rows)
    g = _gen(generator)
    out = R.normal(g, rows * cols, 0.0, float(std), R.kind(tensor.dtype)).reshape(rows, cols)
    for col in range(cols):          # torch: a fresh randperm of the rows for each column
        out[R.randperm(g, rows)[:num_zeros], col] = 0
    return _write(tensor, out)


def _deprecated(new):
    def old(*args, **kwargs):
        warnings.warn(f"`nn.init.{new.__name__[:-1]}` is now deprecated in favor of `nn.init.{new.__name__}`.",
                      FutureWarning, stacklevel=2)
        return new(*args, **kwargs)
    old.__name__ = new.__name__[:-1]
    old.__doc__ = new.__doc__
    return old


uniform = _deprecated(uniform_)
normal = _deprecated(normal_)
constant = _deprecated(constant_)
xavier_uniform = _deprecated(xavier_uniform_)
xavier_normal = _deprecated(xavier_normal_)
kaiming_uniform = _deprecated(kaiming_uniform_)
kaiming_normal = _deprecated(kaiming_normal_)
orthogonal = _deprecated(orthogonal_)
sparse = _deprecated(sparse_)
eye = _deprecated(eye_)
dirac = _deprecated(dirac_)
