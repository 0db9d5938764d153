# ruff: noqa: A001, A002 - torch's argument name is `input`
"""Shared helpers of the nn ops: reductions of losses, argument checks, and small private Primitives (clamp,
masked fill, where, log-sigmoid, xlogy, norms, cat, row gather/scatter) their backwards are written with.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from ... import _dtype
from ...autograd.grad_mode import _state
from .._util import Primitive, Tensor, kernel


# --- small helpers ------------------------------------------------------------------------------------------
def _c(arr) -> Tensor:
    """A constant (no-grad) tensor over an array."""
    return Tensor._make(np.asarray(arr))


def _legacy_name(a: np.ndarray) -> str:
    return _dtype.from_numpy_dtype(a.dtype)._legacy


def _recording() -> bool:
    return _state.enabled


def _check_no_grad_arg(fn: str, arg: str, t):
    """torch refuses a ``requires_grad`` argument it has no derivative for, already in forward."""
    if isinstance(t, Tensor) and t._rg and _state.enabled:
        raise RuntimeError(f"The function '{fn}' is not differentiable with respect to argument '{arg}'. "
                           "This input cannot have requires_grad True.")


def _arr(t, dtype=None):
    if t is None:
        return None
    a = t._array if isinstance(t, Tensor) else np.asarray(t)
    return a.astype(dtype, copy=False) if dtype is not None else a


def _reduction(reduction, size_average=None, reduce=None) -> str:
    """The reduction string, from ``reduction`` or the legacy ``size_average``/``reduce`` pair (as torch)."""
    if size_average is not None or reduce is not None:
        warnings.warn("size_average and reduce args will be deprecated, please use reduction='{}' instead.".format(
            "none" if reduce is False else ("mean" if size_average in (None, True) else "sum")), stacklevel=3)
        size_average = True if size_average is None else size_average
        reduce = True if reduce is None else reduce
        return "none" if not reduce else ("mean" if size_average else "sum")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


def _reduce(t: Tensor, reduction: str) -> Tensor:
    """The reduction of a composite loss with tapegrad ops (MeanBackward0 / SumBackward0, as torch)."""
    if reduction == "mean":
        return t.mean()
    if reduction == "sum":
        return t.sum()
    return t


def _red_np(loss: np.ndarray, reduction: str) -> np.ndarray:
    if reduction == "none":
        return loss
    with np.errstate(invalid="ignore", divide="ignore"):
        r = loss.sum() if reduction == "sum" else loss.mean() if loss.size else np.nan
    return np.asarray(r, loss.dtype)


def _red_back(grad: Tensor, shape, reduction: str) -> Tensor:
    """The gradient of a fused loss's reduction, spread back over the elementwise losses."""
    if reduction == "none":
        return grad
    n = math.prod(shape)
    g = grad.expand(tuple(shape)) if tuple(shape) != tuple(grad.shape) else grad
    return g / n if reduction == "mean" and n else g


def _size_warn(input, target, stacklevel=3):
    if tuple(target.shape) != tuple(input.shape):
        warnings.warn(f"Using a target size ({target.shape!r}) that is different to the input size "
                      f"({input.shape!r}). This will likely lead to incorrect results due to broadcasting. Please "
                      "ensure they have the same size.", stacklevel=stacklevel)


def _float_only(op: str, kernel: str, *arrays):
    for a in arrays:
        if a is not None and a.dtype.kind not in "fc":
            raise NotImplementedError(f'"{kernel}" not implemented for \'{_legacy_name(a)}\'')


def _T(x):
    """A NumPy-style swap of the last two dims of a tapegrad tensor."""
    return x.transpose(-2, -1)


# --- private building blocks (each its own Primitive, differentiable) ----------------------------------------
class _ClampMin(Primitive):
    """max(x, min) for a Python number ``min``; torch's ``clamp_min`` (gradient passes where x >= min)."""

    node_name = "ClampMinBackward0"

    @staticmethod
    def forward(ctx, x, lo):
        ctx.mask = x >= lo
        return np.maximum(x, np.asarray(lo, x.dtype))

    @staticmethod
    def backward(ctx, grad):
        return grad * ctx.mask, None


def _clamp_min_keep_grad(n, eps):
    """``n`` clamped below at ``eps`` with ``n``'s gradient everywhere: ``n + (max(n, eps) - n)``, the bracket
    computed without recording (torch's ``clamp_min_`` under no_grad). Recorded ops throughout, so that a compiled
    replay recomputes the bracket."""
    prev = _state.enabled
    _state.enabled = False
    try:
        with np.errstate(invalid="ignore"):        # (an inf norm: NaN, silently, as torch's)
            c = _ClampMin.apply(n, eps) - n
    finally:
        _state.enabled = prev
    return n + c


class _MaskedFill(Primitive):
    """``x.masked_fill(mask, value)`` for a constant bool mask."""

    node_name = "MaskedFillBackward0"

    @staticmethod
    def forward(ctx, x, mask, value, unless=None):
        if unless is not None:     # (given a target tensor: the mask is ``target != unless``, made per replay)
            mask = np.broadcast_to(mask != unless, x.shape)
        ctx.mask = mask
        return np.where(mask, np.asarray(value, x.dtype), x)

    @staticmethod
    def backward(ctx, grad):        # exact zeros where filled (an inf or NaN gradient there stays out)
        return _MaskedFill.apply(grad, ctx.mask, 0.0), None, None


class _Where(Primitive):
    """``where(mask, a, b)`` for a constant bool mask and two tensors."""

    node_name = "WhereBackward0"

    @staticmethod
    def forward(ctx, mask, a, b):
        a2, b2 = (np.asarray(v) for v in (a, b))
        d = np.result_type(a2, b2)
        ctx.mask = mask
        return np.where(mask, a2.astype(d, copy=False), b2.astype(d, copy=False))

    @staticmethod
    def backward(ctx, grad):
        need = ctx.needs_input_grad
        return (None, grad * ctx.mask if need[1] else None, grad * ~ctx.mask if need[2] else None)


class _LogSigmoid(Primitive):
    """log(sigmoid(x)) = min(x, 0) - log1p(exp(-|x|)), finite for any x."""

    node_name = "LogSigmoidBackward0"

    @staticmethod
    def forward(ctx, x):
        ctx.save_inputs(0)
        return np.minimum(x, 0) - np.log1p(np.exp(-np.abs(x)))

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        return grad * (-x).sigmoid()


class _Xlogy(Primitive):
    """x * log(y), 0 where x == 0 (torch's ``xlogy``)."""

    node_name = "XlogyBackward0"

    @staticmethod
    def forward(ctx, x, y):
        ctx.save_inputs(0, 1)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(x == 0, np.zeros((), np.result_type(x, y)), x * np.log(y))

    @staticmethod
    def backward(ctx, grad):
        x, y = ctx.saved_tensors
        need = ctx.needs_input_grad
        gx = _Xlogy.apply(_c((x._array != 0).astype(x._array.dtype)), y) * grad if need[0] else None
        gy = grad * x / y if need[1] else None
        return gx, gy


class _DivScalar(Primitive):
    """tensor / Python number (torch's ``div.Scalar``: DivBackward1)."""

    node_name = "DivBackward1"

    @staticmethod
    def forward(ctx, x, s):
        ctx.s = s
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.asarray(x / np.asarray(s, x.dtype), x.dtype)

    @staticmethod
    def backward(ctx, grad):
        return _DivScalar.apply(grad, ctx.s), None


class _Norm(Primitive):
    """The p-norm over ``dims`` (``torch.norm(x, p, dim, keepdim)``: NormBackward1)."""

    node_name = "NormBackward1"

    @staticmethod
    def forward(ctx, x, p, dims, keepdim):
        ctx.p, ctx.dims, ctx.keepdim = p, dims, keepdim
        ctx.save_result(0)
        from ..reduce.stats import _vector_norm_np      # (linalg.vector_norm's kernel: Half in float32, -inf a min)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            r = _vector_norm_np(x, p, dims, keepdim)
        return np.asarray(r, x.real.dtype)         # (real for complex x)

    @staticmethod
    def backward(ctx, grad):
        result, x = ctx.saved_tensors
        p, dims = ctx.p, ctx.dims
        if not ctx.keepdim:
            shape = tuple(1 if i in dims else s for i, s in enumerate(x.shape))
            grad, result = grad.reshape(shape), result.reshape(shape)
        from ..reduce.stats import _norm_grad      # (linalg.vector_norm's formula: one for every norm)
        return _norm_grad(x, result, grad, p, dims), None, None, None


def _norm(x, p, dims, keepdim):
    return _Norm.apply(x, p, tuple(dims), keepdim)


class _Cat(Primitive):
    """Concatenate along ``dim`` (torch's ``cat``)."""

    node_name = "CatBackward0"

    @staticmethod
    def forward(ctx, dim, *xs):
        ctx.dim, ctx.sizes = dim, [x.shape[dim] for x in xs]
        d = np.result_type(*xs)
        return np.concatenate([x.astype(d, copy=False) for x in xs], axis=dim)

    @staticmethod
    def backward(ctx, grad):
        out, start = [None], 0
        for s in ctx.sizes:
            idx = (slice(None),) * ctx.dim + (slice(start, start + s),)
            out.append(grad[idx])
            start += s
        return tuple(out)


class _RowScatter(Primitive):
    """Rows of ``src`` (shape (*idx.shape, D)) times ``scale`` added into a zero (n, D) matrix at ``idx``.

    The gradient of a row gather (embedding); its own gradient is the gather again.
    """

    node_name = "EmbeddingBackwardBackward0"

    @staticmethod
    def forward(ctx, src, idx, n, scale):
        ctx.idx, ctx.scale = idx, scale
        d = src.shape[-1]
        out = np.zeros((n, d), src.dtype)
        rows = src.reshape(-1, d)
        if scale is not None:
            rows = rows * scale.reshape(-1, 1)
        np.add.at(out, idx.reshape(-1), rows)
        return out

    @staticmethod
    def backward(ctx, gg):
        g = _RowGather.apply(gg, ctx.idx)
        if ctx.scale is not None:
            g = g * ctx.scale[..., None]
        return g, None, None, None


class _RowGather(Primitive):
    """``w[idx]`` for an integer array ``idx`` (the gather of embedding, without its checks)."""

    node_name = "EmbeddingBackward0"
    array_backward = True

    @staticmethod
    def forward(ctx, w, idx):
        ctx.idx, ctx.n = idx, w.shape[0]
        return w[idx]

    @staticmethod
    def backward(ctx, grad):
        return kernel(_RowScatter, grad, ctx.idx, ctx.n, None), None
