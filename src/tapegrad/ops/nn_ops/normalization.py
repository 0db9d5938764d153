# ruff: noqa: A001, A002 - torch's argument name is `input`
"""Normalisation: layer_norm, batch_norm, group_norm, instance_norm, rms_norm,
local_response_norm (the fused ones with torch's node names and a NumPy fast path of their backward).
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from ... import _dtype
from .._util import Primitive, Tensor, shape_str
from ._common import _c, _float_only
from .linear import _View
from .losses import _size_repr


# --- normalisation --------------------------------------------------------------------------------------------
def _xhat_grad_np(xhat, gxhat, rstd, dims):
    return rstd * (gxhat - gxhat.mean(dims, keepdims=True) - xhat * (gxhat * xhat).mean(dims, keepdims=True))


def _xhat_grad_tg(x, gxhat, dims, eps):
    """d(loss)/dx for xhat = (x - mean) / sqrt(var + eps) over ``dims``, in tapegrad ops; also returns xhat."""
    mu = x.mean(dims, keepdim=True)
    xc = x - mu
    rstd = ((xc * xc).mean(dims, keepdim=True) + eps) ** -0.5
    xhat = xc * rstd
    return rstd * (gxhat - gxhat.mean(dims, keepdim=True) - xhat * (gxhat * xhat).mean(dims, keepdim=True)), xhat


def _stats(x, dims, eps):
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = x.mean(dims, keepdims=True)
        xc = x - mean
        var = (xc * xc).mean(dims, keepdims=True)
        rstd = 1.0 / np.sqrt(var + eps)
    return mean, var, rstd, xc * rstd


def _opmath(grad, w):
    """A Half backward of the normalisations runs in float32 (torch's CPU kernels: opmath) and rounds each gradient
    once: (grad, weight) in float32, and the dtypes to round back to (None: nothing to do)."""
    if grad.dtype != np.float16:
        return grad, w, None
    return grad.astype(np.float32), (None if w is None else w.astype(np.float32)), \
        (grad.dtype, grad.dtype if w is None else w.dtype)


def _rounded(dts, gx, gw, gb):
    if dts is None:
        return gx, gw, gb
    return tuple(None if g is None else np.asarray(g, d) for g, d in ((gx, dts[0]), (gw, dts[1]), (gb, dts[1])))


class NativeLayerNorm(Primitive):
    """(x - mean) / sqrt(var + eps) * weight + bias over the last ``k`` dims."""

    array_backward = True

    @staticmethod
    def forward(ctx, x, w, b, k, eps):
        _float_only("layer_norm", "LayerNormKernelImpl", x)
        dims = tuple(range(x.ndim - k, x.ndim))
        dtype = x.dtype
        if dtype == np.float16:     # torch computes Half in float32 and rounds the output once
            x, w, b = (None if a is None else a.astype(np.float32) for a in (x, w, b))
        _, _, rstd, xhat = _stats(x, dims, eps)
        out = xhat * w if w is not None else xhat.copy()
        if b is not None:
            out += b
        ctx.save_inputs(0, 1)
        ctx.dims, ctx.eps, ctx.rstd, ctx.xhat = dims, eps, rstd, xhat
        return np.asarray(out, dtype)

    @staticmethod
    def backward(ctx, grad):
        x, w = ctx.saved_tensors
        need = ctx.needs_input_grad
        dims = ctx.dims
        lead = tuple(range(x.ndim - len(dims)))
        if x.__class__ is not Tensor:          # arrays (no graph of the backward is recorded)
            grad, w, dts = _opmath(grad, w)
            xhat = ctx.xhat
            gxhat = grad * w if w is not None else grad
            gx = _xhat_grad_np(xhat, gxhat, ctx.rstd, dims) if need[0] else None
            gw = np.add.reduce(grad * xhat, axis=lead) if need[1] else None
            gb = np.add.reduce(grad, axis=lead) if need[2] else None
            return _rounded(dts, gx, gw, gb) + (None, None)
        gxhat = grad * w if w is not None else grad
        gx, xhat = _xhat_grad_tg(x, gxhat, dims, ctx.eps)
        gw = (grad * xhat).sum(lead) if need[1] and lead else (grad * xhat if need[1] else None)
        gb = (grad.sum(lead) if lead else grad) if need[2] else None
        return (gx if need[0] else None), gw, gb, None, None


def _check_normalized_shape(input, normalized_shape, weight, bias=None, rms=False):
    """torch's checks of layer_norm / rms_norm, in its order: a non-empty normalized_shape, the weight's and bias's
    shapes, then the input's trailing dims (rms_norm words the last its own way)."""
    ns = tuple(int(s) for s in normalized_shape)
    if rms and len(ns) > input.ndim:
        raise ValueError(f"Input tensor must have at least {len(ns)} dimensions, but got {input.ndim}")
    if not ns:
        raise RuntimeError("Expected normalized_shape to be at least 1-dimensional, i.e., containing at least one "
                           "element, but got normalized_shape = []")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and tuple(t.shape) != ns:
            raise RuntimeError(f"Expected {name} to be of same shape as normalized_shape, but got {name} of shape "
                               f"{shape_str(t.shape)} and normalized_shape = {shape_str(ns)}")
    shape = tuple(input.shape)
    if len(ns) > len(shape) or shape[len(shape) - len(ns):] != ns:
        star = "*" if rms else "*, "         # (rms_norm's message lacks the comma)
        raise RuntimeError(f"Given normalized_shape={shape_str(ns)}, expected input with shape "
                           f"[{star}{', '.join(map(str, ns))}], but got input of size{shape_str(shape)}")
    return ns


def _check_mixed_dtype(input, *params):
    """torch's CPU rule for normalisation parameters (weight, bias, running statistics) of another dtype than the
    input: allowed only as float32 parameters of a float16/bfloat16 input; anything else is refused, not
    promoted."""
    ps = [p for p in params if p is not None]
    if all(p.dtype == input.dtype for p in ps):
        return
    if any(p.dtype is not _dtype.float32 for p in ps):
        raise RuntimeError("mixed dtype (CPU): expect parameter to have scalar type of Float")
    if input.dtype not in (_dtype.float16, _dtype.bfloat16):
        raise RuntimeError("mixed dtype (CPU): all inputs must share same datatype.")


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """Normalise over the trailing ``normalized_shape`` dims, then scale by ``weight`` and shift by ``bias``.

    >>> F.layer_norm(tapegrad.tensor([[1., 3.]]), (2,))
    tensor([[-1.0000,  1.0000]])
    """
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    ns = _check_normalized_shape(input, normalized_shape, weight, bias)
    if weight is not None and bias is not None and weight.dtype == input.dtype != bias.dtype:
        raise RuntimeError(f"expected scalar type {input.dtype._legacy} but found {bias.dtype._legacy}")
    _check_mixed_dtype(input, weight, bias)
    return NativeLayerNorm.apply(input, weight, bias, len(ns), eps)


def native_layer_norm(input, normalized_shape, weight, bias, eps):
    """``torch.native_layer_norm``: (output, mean, rstd)."""
    out = layer_norm(input, normalized_shape, weight, bias, eps)
    dims = tuple(range(input._array.ndim - len(normalized_shape), input._array.ndim))
    mean, _, rstd, _ = _stats(input._array, dims, eps)
    return out, _c(mean), _c(rstd)


def _bn_f32_stats(x, C):
    """Batch statistics of a float32 batch as torch's CPU kernel computes them: (mean, var_sum) per channel.

    An (N, C, *) batch with more than one value per channel and sample: mean = the float64 sum / N, rounded to
    float32; var_sum = the float64 sum of the float32 squares (x - mean)**2. An (N, C) batch (torch's channels-
    last kernel): mean = the float32 sum row after row (NumPy's reduction over the outer axis) / N; var_sum = the
    float32 sum of the squares, row after row (torch fuses each step into one multiply-add: this differs from
    it in the last bit now and then)."""
    N = x.size // max(C, 1)
    if x.ndim <= 2 or x.size == x.shape[0] * C:
        x2 = x.reshape(x.shape[0], C)
        mean = (np.add.reduce(x2, axis=0).astype(np.float64) / N).astype(np.float32)
        d = x2 - mean
        return mean, np.add.reduce(d * d, axis=0)
    dims = (0,) + tuple(range(2, x.ndim))
    mean = (np.add.reduce(x, axis=dims, dtype=np.float64) / N).astype(np.float32)
    d = x - mean.reshape((1, C) + (1,) * (x.ndim - 2))
    return mean, np.add.reduce(d * d, axis=dims, dtype=np.float64).astype(np.float32)


def _bn_f32_forward(x, w, b, running, training, momentum, eps):
    """torch's float32 CPU batch norm, bit for bit: out = x * alpha + beta with alpha = invstd * weight and
    beta = bias - mean * alpha, each fused as one multiply-add (emulated in float64: the products of two floats
    are exact there); the running statistics updated as torch's kernel does (the mean's update in float32, the
    variance's with the new term fused). Returns (out, mean, invstd) (per channel)."""
    C = x.shape[1] if x.ndim > 1 else 1
    bshape = tuple(C if d == 1 else 1 for d in range(x.ndim))
    rm, rv = running
    if training:
        n = x.size // max(C, 1)
        mean, var_sum = _bn_f32_stats(x, C)
        with np.errstate(invalid="ignore", divide="ignore"):
            var = var_sum / np.float32(n)
            invstd = (1.0 / np.sqrt(var.astype(np.float64) + eps)).astype(np.float32)
            if rm is not None:
                rm._array[...] = np.float32(momentum) * mean + np.float32(1 - momentum) * rm._array
                rm._vc[0] += 1
            if rv is not None:
                unbiased = (var_sum / np.float32(n - 1)).astype(np.float32) if n > 1 else var
                rv._array[...] = (np.float32(momentum) * unbiased.astype(np.float64)
                                  + np.float32(1 - momentum) * rv._array).astype(np.float32)
                rv._vc[0] += 1
    else:
        mean = rm._array.astype(np.float32, copy=False)
        with np.errstate(invalid="ignore", divide="ignore"):
            invstd = np.float32(1) / np.sqrt(rv._array.astype(np.float32) + np.float32(eps))
    alpha = invstd * w if w is not None else invstd
    beta = (-(mean.astype(np.float64) * alpha) + (b if b is not None else 0.0)).astype(np.float32)
    out = np.empty(x.shape, np.float32)
    # (x * alpha exact in float64, plus beta, rounded once into the float32 output)
    np.add(np.multiply(x, alpha.astype(np.float64).reshape(bshape)), beta.astype(np.float64).reshape(bshape),
           out=out, casting="same_kind")
    return out, mean.reshape(bshape), invstd.reshape(bshape)


class NativeBatchNorm(Primitive):
    """Batch normalisation over all dims but 1 (batch statistics when training, running ones otherwise)."""

    array_backward = True

    @staticmethod
    def forward(ctx, x, w, b, running, training, momentum, eps):
        _float_only("batch_norm", "batch_norm", x)
        dtype = x.dtype
        if dtype == np.float32 and x.size and (w is None or w.dtype == np.float32) \
                and (b is None or b.dtype == np.float32):
            out, mean, rstd = _bn_f32_forward(x, w, b, running, training, momentum, eps)
            C = x.shape[1] if x.ndim > 1 else 1
            ctx.save_inputs(0, 1)
            ctx.dims = tuple(d for d in range(x.ndim) if d != 1)
            ctx.bshape, ctx.eps, ctx.training = tuple(C if d == 1 else 1 for d in range(x.ndim)), eps, training
            ctx.mean, ctx.rstd, ctx.xhat = mean, rstd, None     # (xhat: made by the backward when it runs)
            return out
        # torch computes Half in float32 and rounds the output once; with Half parameters (not float32 ones) it
        # rounds the batch statistics to Half first
        half_stats = dtype == np.float16 and (w is None or w.dtype == np.float16)
        if dtype == np.float16:
            x, w, b = (None if a is None else a.astype(np.float32) for a in (x, w, b))
        C = x.shape[1] if x.ndim > 1 else 1
        dims = tuple(d for d in range(x.ndim) if d != 1)
        bshape = tuple(C if d == 1 else 1 for d in range(x.ndim))
        rm, rv = running
        if training:
            m, var, rstd, xhat = _stats(x, dims, eps)
            if half_stats:
                m, rstd = (a.astype(np.float16).astype(np.float32) for a in (m, rstd))
                xhat = (x - m) * rstd
            if (rm is not None or rv is not None) and x.size:      # (an empty batch leaves them as they are)
                n = x.size // max(C, 1)
                mean = x.mean(dims)
                with np.errstate(invalid="ignore", divide="ignore"):
                    unbiased = var.reshape(C) * (n / (n - 1)) if n > 1 else var.reshape(C)
                for r, new in ((rm, mean), (rv, unbiased)):
                    if r is not None:      # (Half running statistics: updated in float32, rounded once, as torch)
                        old = r._array.astype(np.float32) if r._array.dtype == np.float16 else r._array
                        r._array[...] = (1 - momentum) * old + momentum * new
                        r._vc[0] += 1
        else:
            mean = rm._array.reshape(bshape).astype(x.dtype, copy=False)
            var = rv._array.reshape(bshape)
            var = var.astype(np.float32) if var.dtype == np.float16 else var
            rstd = (1.0 / np.sqrt(var + eps)).astype(x.dtype, copy=False)
            xhat = (x - mean) * rstd
        out = xhat * w.reshape(bshape) if w is not None else xhat.copy()
        if b is not None:
            out += b.reshape(bshape)
        ctx.save_inputs(0, 1)
        ctx.dims, ctx.bshape, ctx.eps, ctx.training = dims, bshape, eps, training
        ctx.mean = None if training else mean
        # (for Half the statistics stay float32: the backward works in float32 as torch's CPU kernel does)
        ctx.rstd, ctx.xhat = rstd, xhat
        return np.asarray(out, dtype)

    @staticmethod
    def backward(ctx, grad):
        x, w = ctx.saved_tensors
        need = ctx.needs_input_grad
        dims, bshape, C = ctx.dims, ctx.bshape, ctx.bshape[1] if len(ctx.bshape) > 1 else 1
        if x.__class__ is not Tensor:          # arrays: the first-order formula over the saved statistics
            gdt = grad.dtype
            grad, w, dts = _opmath(grad, w)
            xhat = ctx.xhat if ctx.xhat is not None else (x - ctx.mean) * ctx.rstd
            gxhat = grad * w.reshape(bshape) if w is not None else grad
            if need[0]:
                gx = _xhat_grad_np(xhat, gxhat, ctx.rstd, dims) if ctx.training else gxhat * ctx.rstd
                gx = np.asarray(gx, gdt)
            else:
                gx = None
            gw = (grad * xhat).sum(dims).reshape(C) if need[1] else None
            gb = grad.sum(dims).reshape(C) if need[2] else None
            return _rounded(dts, gx, gw, gb) + (None, None, None, None)
        gxhat = grad * w.reshape(bshape) if w is not None else grad
        if ctx.training:
            gx, xhat = _xhat_grad_tg(x, gxhat, dims, ctx.eps)
        else:
            rstd, mean = (a.astype(x._array.dtype, copy=False) for a in (ctx.rstd, ctx.mean))
            gx = gxhat * rstd
            xhat = (x - mean) * rstd
        gw = (grad * xhat).sum(dims).reshape(C) if need[1] else None
        gb = grad.sum(dims).reshape(C) if need[2] else None
        return (gx if need[0] else None), gw, gb, None, None, None, None


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-5):
    """Batch normalisation over dim 1; when ``training`` the running statistics are updated in place.

    >>> F.batch_norm(tapegrad.tensor([[1.], [3.]]), None, None, training=True)
    tensor([[-1.0000],
            [ 1.0000]])
    """
    shape = tuple(input.shape)
    if training:
        n = shape[0] * math.prod(shape[2:]) if shape else 1
        if n == 1:
            raise ValueError(f"Expected more than 1 value per channel when training, got input size "
                             f"{_size_repr(shape)}")
    elif running_mean is None or running_var is None:
        raise RuntimeError(f"running_{'mean' if running_mean is None else 'var'} must be defined in evaluation mode")
    if training and eps <= 0.0:
        raise ValueError(f"batch_norm eps must be positive during training, but got {eps}")
    if eps < 0.0:
        raise ValueError(f"batch_norm eps must be non-negative, but got {eps}")
    if input._array.size == 0:
        # torch: an empty input skips the checks; a clone (so the graph is kept) times weight[0] plus bias[0]
        out = input.clone()
        if weight is not None:
            out = out * weight[0]
        return out if bias is None else out + bias[0]
    C = shape[1] if len(shape) > 1 else 1
    for name, t in (("running_mean", running_mean), ("running_var", running_var), ("weight", weight),
                    ("bias", bias)):
        if t is not None and t._array.size != C:
            raise RuntimeError(f"{name} should contain {C} elements not {t._array.size}")
    _check_mixed_dtype(input, weight, bias, running_mean, running_var)
    return NativeBatchNorm.apply(input, weight, bias, (running_mean, running_var), bool(training),
                                 0.1 if momentum is None else momentum, eps)


def native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps):
    """``torch.native_batch_norm``: (output, save_mean, save_invstd)."""
    x = input._array
    dims = tuple(d for d in range(x.ndim) if d != 1)
    out = batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)
    if training:
        mean, _, rstd, _ = _stats(x, dims, eps)
        return out, _c(mean.reshape(-1)), _c(rstd.reshape(-1))
    return out, _c(np.zeros(0, x.dtype)), _c(np.zeros(0, x.dtype))


def _per_group(shape, G):
    """The elements of one group of one sample (explicit, so that an empty batch reshapes too)."""
    return math.prod(shape[1:]) // G


class NativeGroupNorm(Primitive):
    """Normalise each of ``G`` channel groups of every sample, then a per-channel affine map."""

    array_backward = True

    @staticmethod
    def forward(ctx, x, w, b, G, eps):
        _float_only("group_norm", "GroupNormKernelImpl", x)
        dtype = x.dtype
        if dtype == np.float16:     # torch computes Half in float32 and rounds the output once
            x, w, b = (None if a is None else a.astype(np.float32) for a in (x, w, b))
        N, C = x.shape[:2]
        bshape = (1, C) + (1,) * (x.ndim - 2)
        xg = x.reshape(N, G, _per_group(x.shape, G))
        _, _, rstd, xhat = _stats(xg, (2,), eps)
        xhat_full = xhat.reshape(x.shape)
        out = xhat_full * w.reshape(bshape) if w is not None else xhat_full.copy()
        if b is not None:
            out += b.reshape(bshape)
        ctx.save_inputs(0, 1)
        ctx.G, ctx.eps, ctx.bshape, ctx.rstd, ctx.xhat = G, eps, bshape, rstd, xhat
        return np.asarray(out, dtype)

    @staticmethod
    def backward(ctx, grad):
        x, w = ctx.saved_tensors
        need = ctx.needs_input_grad
        shape = x.shape
        N, C = shape[:2]
        G, bshape = ctx.G, ctx.bshape
        red = tuple(d for d in range(len(shape)) if d != 1)
        if x.__class__ is not Tensor:          # arrays: the first-order formula over the saved statistics
            grad, w, dts = _opmath(grad, w)
            gxhat = (grad * w.reshape(bshape) if w is not None else grad).reshape(N, G, _per_group(shape, G))
            xhat = ctx.xhat
            gx = _xhat_grad_np(xhat, gxhat, ctx.rstd, (2,)).reshape(shape) if need[0] else None
            gw = (grad * xhat.reshape(shape)).sum(red) if need[1] else None
            gb = grad.sum(red) if need[2] else None
            return _rounded(dts, gx, gw, gb) + (None, None)
        gxhat = (grad * w.reshape(bshape) if w is not None else grad).reshape(N, G, _per_group(shape, G))
        gx, xhat = _xhat_grad_tg(x.reshape(N, G, _per_group(shape, G)), gxhat, (2,), ctx.eps)
        xhat = xhat.reshape(shape)
        gw = (grad * xhat).sum(red) if need[1] else None
        gb = grad.sum(red) if need[2] else None
        return (gx.reshape(shape) if need[0] else None), gw, gb, None, None


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    """Normalise groups of channels of an (N, C, *) input, then scale and shift per channel.

    >>> F.group_norm(tapegrad.tensor([[[1.], [3.]]]), 1).flatten()
    tensor([-1.0000,  1.0000])
    """
    shape = tuple(input.shape)
    if len(shape) < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received {len(shape)}")
    if shape[1] % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by num_groups, but got input of "
                           f"shape {shape_str(shape)} and num_groups={num_groups}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and t._array.size != shape[1]:
            raise RuntimeError(f"Expected {name} tensor to have {shape[1]} elements, but got {name} of shape "
                               f"{shape_str(t.shape)}")
    _check_mixed_dtype(input, weight, bias)
    return NativeGroupNorm.apply(input, weight, bias, int(num_groups), eps)


class _Tiled:
    """A running statistic repeated once per sample (what batch norm over the (1, N*C, *) input updates)."""

    __slots__ = ("_array", "_vc")

    def __init__(self, t, n):
        self._array, self._vc = np.tile(t._array, n), [0]


class _NativeInstanceNorm(NativeBatchNorm):
    """Instance norm as torch computes it: batch norm over the input seen as (1, N*C, *), with the running
    statistics repeated per sample, updated there and averaged back over the samples. The update happens in the
    forward (as batch norm's does), so a compiled replay repeats it."""

    node_name = "NativeBatchNormBackward0"

    @staticmethod
    def forward(ctx, x, w, b, running, training, momentum, eps):
        given = [t for t in running if t is not None]
        if not given:
            return NativeBatchNorm.forward(ctx, x, w, b, running, training, momentum, eps)
        n = x.shape[1] // max(given[0]._array.size, 1)
        tiled = tuple(None if t is None else _Tiled(t, n) for t in running)
        out = NativeBatchNorm.forward(ctx, x, w, b, tiled, training, momentum, eps)
        for t, r in zip(running, tiled):
            if t is not None:
                t._array[...] = r._array.reshape(n, -1).mean(0)
                t._vc[0] += 1
        return out


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None, use_input_stats=True,
                  momentum=0.1, eps=1e-5):
    """Normalise every channel of every sample of an (N, C, *) input separately.

    >>> F.instance_norm(tapegrad.tensor([[[1., 3.]]])).flatten()
    tensor([-1.0000,  1.0000])
    """
    shape = tuple(input.shape)
    if use_input_stats and math.prod(shape[2:]) == 1:
        raise ValueError(f"Expected more than 1 spatial element when training, got input size {_size_repr(shape)}")
    if not use_input_stats and (running_mean is None or running_var is None):
        raise RuntimeError("Expected running_mean and running_var to be defined when use_input_stats is false")
    b, c = shape[:2]

    def rep(t):            # (torch repeats them over the batch; batch_norm's size check then words the counts)
        return None if t is None else t.repeat(b)

    for name, t in (("running_mean", running_mean), ("running_var", running_var), ("weight", weight), ("bias", bias)):
        if t is not None and t.dim() <= 1 and t._array.size * b != b * c:
            raise RuntimeError(f"{name} should contain {b * c} elements not {t._array.size * b}")
    _check_mixed_dtype(input, weight, bias)   # (running statistics of another dtype are accepted, as in torch)
    x = input.reshape((1, b * c) + shape[2:])
    out = _NativeInstanceNorm.apply(x, rep(weight), rep(bias), (running_mean, running_var), bool(use_input_stats),
                                    0.1 if momentum is None else momentum, eps)
    return _View.apply(out, shape)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """x / sqrt(mean(x²) + eps) over the trailing ``normalized_shape`` dims, times ``weight``.

    >>> F.rms_norm(tapegrad.tensor([[3., 4.]]), (2,), eps=0.).shape
    tapegrad.Size([1, 2])
    """
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    ns = _check_normalized_shape(input, normalized_shape, weight, rms=True)
    shape = tuple(input.shape)
    half = input._array.dtype == np.float16        # torch computes Half in float32 and rounds the output once
    if eps is None:                                 # the eps of the computation dtype (float32 for Half)
        eps = 2.220446049250313e-16 if input._array.dtype in (np.float64, np.complex128) else 1.1920928955078125e-07
    if weight is not None and weight.dtype is not input.dtype:
        _warn_rms_mismatch(input.dtype, weight.dtype)
    dims = tuple(range(len(shape) - len(ns), len(shape)))
    x = input.float() if half else input
    r = ((x * x).mean(dims, keepdim=True) + eps) ** -0.5
    out = x * r
    if weight is not None:
        out = out * (weight.float() if half and weight._array.dtype == np.float16 else weight)
    return out if out.dtype is input.dtype else out.to(input.dtype)    # (the input's dtype, whatever the weight's)


_RMS_WARNED = [False]
_CPP_NAMES = {"float16": "c10::Half", "bfloat16": "c10::BFloat16", "float32": "float", "float64": "double"}


def _warn_rms_mismatch(x_dtype, w_dtype):
    """torch warns once per process (TORCH_WARN_ONCE) when the weight's dtype differs from the input's."""
    if not _RMS_WARNED[0]:
        _RMS_WARNED[0] = True
        name = lambda d: _CPP_NAMES.get(str(d).split(".")[-1], str(d).split(".")[-1])  # noqa: E731
        warnings.warn(f"Mismatch dtype between input and weight: input dtype = {name(x_dtype)}, weight dtype = "
                      f"{name(w_dtype)}, Cannot dispatch to fused implementation.", UserWarning, stacklevel=3)


class _ChannelWindowMean(Primitive):
    """Mean over a window of ``size`` channels (dim 1) centred as torch's local_response_norm pads it."""

    node_name = "AvgPool2DBackward0"

    @staticmethod
    def forward(ctx, x, size, before, after):
        ctx.args = (size, before, after)
        pad = [(0, 0)] * x.ndim
        pad[1] = (before, after)
        xp = np.pad(x, pad)
        cs = np.cumsum(xp, axis=1)
        cs = np.concatenate([np.zeros_like(cs[:, :1]), cs], axis=1)
        C = x.shape[1]
        return (cs[:, size:size + C] - cs[:, :C]) / size

    @staticmethod
    def backward(ctx, grad):
        size, before, after = ctx.args
        return _ChannelWindowMean.apply(grad, size, after, before), None, None, None


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """input / (k + alpha * mean of input² over ``size`` neighbouring channels) ** beta.

    >>> F.local_response_norm(tapegrad.ones(1, 3, 2), 2).shape
    tapegrad.Size([1, 3, 2])
    """
    dim = input._array.ndim
    if dim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality                          input (got {dim} "
                         "dimensions)")
    if input._array.size == 0:
        return input
    div = _ChannelWindowMean.apply(input * input, int(size), size // 2, (size - 1) // 2)
    return input / (div * alpha + k) ** beta


# --- weight normalisation ---------------------------------------------------------------------------------------
def norm_except_dim(v, pow=2, dim=0):
    """The ``pow``-norm of ``v`` over every dim but ``dim``, shaped to broadcast against ``v`` (``dim=-1``: the
    norm of the whole tensor, a 0-d tensor — weight normalisation's convention, not the last dim).

    >>> tapegrad.norm_except_dim(tapegrad.tensor([[3., 4.], [0., 1.]]))
    tensor([[5.],
            [1.]])
    """
    nd = v._array.ndim
    if dim == -1:
        return v.norm(pow)
    if dim == 0:
        shape = (v.shape[0],) + (1,) * (nd - 1)
        return v.contiguous().view(v.shape[0], -1).norm(pow, 1).view(shape)
    if dim == nd - 1:
        shape = (1,) * (nd - 1) + (v.shape[-1],)
        return v.contiguous().view(-1, v.shape[-1]).norm(pow, 0).view(shape)
    return norm_except_dim(v.transpose(0, dim), pow, 0).transpose(0, dim)


def _weight_norm(v, g, dim=0):
    """``v * (g / ||v||)``, the norm over every dim but ``dim`` (``-1``: the whole tensor): weight normalisation.

    >>> tapegrad._weight_norm(tapegrad.tensor([[3., 4.]]), tapegrad.tensor([[10.]]))
    tensor([[6., 8.]])
    """
    return v * (g / norm_except_dim(v, 2, dim))
