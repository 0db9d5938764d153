# ruff: noqa: A001, A002 - torch's argument name is `input`
"""Neural-network ops (everything in ``torch.nn.functional`` except convolution/pooling, which live in ``conv``).

Each fused op that torch fuses (log_softmax, nll_loss, mse_loss, layer_norm, batch_norm, embedding, ...) is one
``Primitive`` whose node has torch's name (``NllLossBackward0``, ``NativeLayerNormBackward0``); its backward is
written in tapegrad ops, so double backward works. Ops that torch writes as a composition (l1_loss, kl_div,
cosine_similarity, ...) are the same composition here, so their ``grad_fn`` is torch's too.

Where a backward is on the hot path of a training step (linear, cross_entropy, layer_norm, batch_norm) it has a
NumPy fast path that runs only when no graph is recorded for the gradient (``create_graph=False``).
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from .. import _dtype
from ..autograd.grad_mode import _state, no_grad
from ._util import (Primitive, Tensor, bind, input_shape, kernel, mT, normalize_dim, op_error, shape_str, sum_keepdim,
                    sum_to_shape)

__all__ = ["softmax", "log_softmax", "dropout", "dropout_", "alpha_dropout", "alpha_dropout_", "feature_dropout",
           "feature_dropout_", "feature_alpha_dropout", "feature_alpha_dropout_", "layer_norm", "batch_norm",
           "group_norm", "instance_norm", "rms_norm", "embedding", "bilinear", "cosine_similarity",
           "pairwise_distance", "pdist", "native_layer_norm", "native_batch_norm", "kl_div",
           "binary_cross_entropy_with_logits", "poisson_nll_loss", "margin_ranking_loss", "hinge_embedding_loss",
           "triplet_margin_loss", "cosine_embedding_loss", "channel_shuffle"]

# the names of torch.nn.functional implemented here (nn/functional.py re-exports them)
FUNCTIONAL = [
    "linear", "bilinear", "softmax", "log_softmax", "softmin", "glu", "cross_entropy", "nll_loss", "mse_loss",
    "l1_loss", "smooth_l1_loss", "huber_loss", "binary_cross_entropy", "binary_cross_entropy_with_logits",
    "kl_div", "poisson_nll_loss", "gaussian_nll_loss", "margin_ranking_loss", "hinge_embedding_loss",
    "soft_margin_loss", "multilabel_soft_margin_loss", "triplet_margin_loss", "cosine_embedding_loss",
    "multi_margin_loss", "dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout",
    "feature_alpha_dropout", "layer_norm", "batch_norm", "group_norm", "instance_norm", "rms_norm",
    "local_response_norm", "embedding", "embedding_bag", "normalize", "cosine_similarity", "pairwise_distance",
    "pdist", "scaled_dot_product_attention", "gumbel_softmax", "linear_cross_entropy",
    "triplet_margin_with_distance_loss", "multilabel_margin_loss", "channel_shuffle",
]


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


class _MaskedFill(Primitive):
    """``x.masked_fill(mask, value)`` for a constant bool mask."""

    node_name = "MaskedFillBackward0"

    @staticmethod
    def forward(ctx, x, mask, value):
        ctx.keep = ~mask
        return np.where(mask, np.asarray(value, x.dtype), x)

    @staticmethod
    def backward(ctx, grad):
        return grad * ctx.keep, None, None


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
        a = np.abs(x)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            if p == 2:
                r = np.sqrt(np.sum(a * a, axis=dims, keepdims=keepdim))
            elif p == 1:
                r = np.sum(a, axis=dims, keepdims=keepdim)
            elif p == math.inf:
                r = np.max(a, axis=dims, keepdims=keepdim, initial=0)
            elif p == 0:
                r = np.sum(a != 0, axis=dims, keepdims=keepdim).astype(x.dtype)
            else:
                r = np.sum(a ** p, axis=dims, keepdims=keepdim) ** (1.0 / p)
        return np.asarray(r, x.dtype)

    @staticmethod
    def backward(ctx, grad):
        result, x = ctx.saved_tensors
        p, dims = ctx.p, ctx.dims
        if not ctx.keepdim:
            shape = tuple(1 if i in dims else s for i, s in enumerate(x.shape))
            grad, result = grad.reshape(shape), result.reshape(shape)
        if p == 0:
            return grad * 0.0 * x, None, None, None
        if p == 1:
            return grad * np.sign(x._array), None, None, None
        zero = result._array == 0
        safe = result + zero                                      # 1 where the norm is 0 (x is 0 there too)
        if p == 2:
            return grad * x / safe, None, None, None
        if p == math.inf:
            amax = (np.abs(x._array) == result._array) & ~zero
            cnt = np.maximum(amax.sum(axis=dims, keepdims=True), 1)
            return grad * (np.sign(x._array) * amax / cnt), None, None, None
        ax = x.abs()
        return grad * x * ax ** (p - 2) / safe ** (p - 1), None, None, None


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


# --- linear ---------------------------------------------------------------------------------------------------
def _mm_error(a_shape, b_shape):
    return RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({a_shape[0]}x{a_shape[1]} and "
                        f"{b_shape[0]}x{b_shape[1]})")


class _Addmm(Primitive):
    """``bias + x @ weight.T`` for a 2-d ``x`` (torch's addmm path of linear): AddmmBackward0."""

    node_name = "AddmmBackward0"
    array_backward = True

    @staticmethod
    def forward(ctx, bias, x, w):
        if x.shape[1] != w.shape[1]:
            raise _mm_error(x.shape, w.shape[::-1])
        if not x.dtype == w.dtype == bias.dtype:
            d = np.result_type(x, w, bias)
            x, w = x.astype(d, copy=False), w.astype(d, copy=False)
        ctx.save_crossed(1, 2)
        out = x @ w.T
        try:
            out += bias
        except ValueError:
            raise RuntimeError(f"The expanded size of the tensor ({out.shape[1]}) must match the existing size "
                               f"({bias.shape[-1]}) at non-singleton dimension 1.  Target sizes: "
                               f"{shape_str(out.shape)}.  Tensor sizes: {shape_str(bias.shape)}") from None
        return out

    @staticmethod
    def backward(ctx, grad):
        x, w = ctx.saved_tensors
        need = ctx.needs_input_grad
        return (sum_to_shape(grad, input_shape(ctx, 0)) if need[0] else None, grad @ w if need[1] else None,
                mT(grad) @ x if need[2] else None)


class _MmT(Primitive):
    """``x @ weight.T`` for a 2-d ``x`` (linear without bias): MmBackward0."""

    node_name = "MmBackward0"
    array_backward = True

    @staticmethod
    def forward(ctx, x, w):
        if x.shape[1] != w.shape[1]:
            raise _mm_error(x.shape, w.shape[::-1])
        d = np.result_type(x, w)
        ctx.save_crossed(0, 1)
        return x.astype(d, copy=False) @ w.astype(d, copy=False).T

    @staticmethod
    def backward(ctx, grad):
        x, w = ctx.saved_tensors
        need = ctx.needs_input_grad
        return grad @ w if need[0] else None, mT(grad) @ x if need[1] else None


class _View(Primitive):
    """A reshape with a fixed node name (ViewBackward0 / UnsafeViewBackward0 / SqueezeBackward4)."""

    node_name = "ViewBackward0"
    array_backward = True

    @staticmethod
    def forward(ctx, x, shape):
        ctx.in_shape = x.shape
        return x.reshape(shape)

    @staticmethod
    def backward(ctx, grad):
        return grad.reshape(ctx.in_shape), None


class _UnsafeView(_View):
    node_name = "UnsafeViewBackward0"
    array_backward = True


class _Squeeze4(_View):
    node_name = "SqueezeBackward4"
    array_backward = True


def linear(input, weight, bias=None):
    """``input @ weight.T + bias`` over the last dim of ``input``.

    >>> F.linear(tapegrad.ones(2, 3), tapegrad.ones(4, 3), tapegrad.zeros(4)).shape
    tapegrad.Size([2, 4])
    """
    nd = input._array.ndim
    if weight._array.ndim != 2:
        if weight._array.ndim == 1 and nd >= 1:   # torch allows a 1-d weight: a dot product over the last dim
            out = input.matmul(weight)
            return out + bias if bias is not None else out
        raise RuntimeError(f"linear(): weight must be 1-D or 2-D, got {weight._array.ndim}-D")
    if nd == 0:
        raise RuntimeError("both arguments to linear need to be at least 1D, but they are 0D and 2D")
    if nd == 2:
        return _Addmm.apply(bias, input, weight) if bias is not None else _MmT.apply(input, weight)
    shape = input._array.shape
    out_shape = shape[:-1] + (weight._array.shape[0],)
    if shape[-1] != weight._array.shape[1]:
        raise _mm_error((math.prod(shape[:-1]), shape[-1]), weight._array.shape[::-1])
    x2 = _View.apply(input, (-1, shape[-1])) if nd > 1 else _View.apply(input, (1, shape[-1]))
    x2._vc = input._vc    # (a view: a change of input in place before backward is seen where x2 is saved)
    if bias is not None:
        return _View.apply(_Addmm.apply(bias, x2, weight), out_shape)
    out = _MmT.apply(x2, weight)
    return (_Squeeze4 if nd == 1 else _UnsafeView).apply(out, out_shape)


def bilinear(input1, input2, weight, bias=None):
    """``y[..., o] = x1[..., i] W[o, i, j] x2[..., j] + b[o]``.

    >>> F.bilinear(tapegrad.ones(2, 3), tapegrad.ones(2, 4), tapegrad.ones(5, 3, 4)).shape
    tapegrad.Size([2, 5])
    """
    s1, s2, sw = input1._array.shape, input2._array.shape, weight._array.shape
    if len(sw) != 3 or s1[:-1] != s2[:-1] or s1[-1] != sw[1] or s2[-1] != sw[2]:
        raise op_error("bilinear", f"input1 {shape_str(s1)}, input2 {shape_str(s2)} and weight {shape_str(sw)} "
                       "do not fit: expected input1 [*, in1], input2 [*, in2] and weight [out, in1, in2]")
    n = math.prod(s1[:-1])
    x1 = input1.reshape(n, 1, 1, s1[-1])
    x2 = input2.reshape(n, 1, s2[-1], 1)
    y = x1.matmul(weight.unsqueeze(0)).matmul(x2)                # (n, out, 1, 1)
    y = _View.apply(y, s1[:-1] + (sw[0],))
    return y + bias if bias is not None else y


# --- softmax family -----------------------------------------------------------------------------------------
def _softmax_dim(name, ndim, stacklevel=3):
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call to include dim=X "
                  "as an argument.", stacklevel=stacklevel)
    return 0 if ndim in (0, 1, 3) else 1


# (ufunc.reduce rather than np.max / np.sum: the same kernels without NumPy's Python-level wrapper, ~2 µs each)
def _shifted(x, dim):
    """x minus its max along ``dim``: exp() of it cannot overflow. (A row whose max is not finite gives nan, as
    torch's kernel: its ``x - max`` holds inf - inf or nan.)"""
    return x - np.maximum.reduce(x, axis=dim, keepdims=True)


def _softmax_np(x, dim):
    e = np.exp(_shifted(x, dim))
    e /= np.add.reduce(e, axis=dim, keepdims=True)
    return e


def _softmax_forward(ctx, x, dim, op, compute, at_0d):
    """The forward both softmax and log_softmax share: checks, the saved result, the empty and 0-d cases."""
    _float_only(op, f"{op}_lastdim_kernel_impl", x)
    ctx.dim = dim
    ctx.save_result()
    if x.size == 0:
        return x.copy()
    if x.ndim == 0:
        return at_0d(x)
    return compute(x, dim)


def _log_softmax_np(x, dim):
    # (called inside a forward: NumPy's warnings are already off, see Function.apply)
    s = _shifted(x, dim)
    s -= np.log(np.add.reduce(np.exp(s), axis=dim, keepdims=True))     # (s is new: changed in place)
    return s


class Softmax(Primitive):
    """exp(x) / sum(exp(x)) along ``dim``, shifted by the max (stable); backward y * (g - sum(g * y))."""

    array_backward = True

    @staticmethod
    def forward(ctx, x, dim):
        return _softmax_forward(ctx, x, dim, "softmax", _softmax_np, np.ones_like)

    @staticmethod
    def backward(ctx, grad):
        y, = ctx.saved_tensors
        gy = grad * y
        return gy - y * sum_keepdim(gy, ctx.dim), None


class LogSoftmax(Primitive):
    """x - logsumexp(x) along ``dim`` (stable); backward g - exp(y) * sum(g)."""

    array_backward = True

    @staticmethod
    def forward(ctx, x, dim):
        return _softmax_forward(ctx, x, dim, "log_softmax", _log_softmax_np, np.zeros_like)

    @staticmethod
    def backward(ctx, grad):
        y, = ctx.saved_tensors
        p = y.exp() if y.__class__ is Tensor else np.exp(y)     # softmax, from the saved log-softmax
        return grad - p * sum_keepdim(grad, ctx.dim), None


def _softmax_call(cls, name, input, dim, dtype, stacklevel=4):
    if dim is None:
        dim = _softmax_dim(name, input._array.ndim, stacklevel)
    if dtype is not None:
        input = input.to(dtype)
    return cls.apply(input, normalize_dim(dim, input._array.ndim))


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    """Softmax along ``dim`` (``dtype`` casts the input first).

    >>> F.softmax(tapegrad.tensor([0., 0.]), dim=0)
    tensor([0.5000, 0.5000])
    """
    if dtype is None and not isinstance(_stacklevel, int):      # torch.softmax(x, dim, dtype) positionally
        dtype = _stacklevel
    return _softmax_call(Softmax, "softmax", input, dim, dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    """log(softmax(input)) along ``dim``, computed stably (finite for logits of any size).

    >>> F.log_softmax(tapegrad.tensor([1e4, 0.]), dim=0)
    tensor([     0., -10000.])
    """
    if dtype is None and not isinstance(_stacklevel, int):      # torch.log_softmax(x, dim, dtype) positionally
        dtype = _stacklevel
    return _softmax_call(LogSoftmax, "log_softmax", input, dim, dtype)


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    """softmax(-input) along ``dim``.

    >>> F.softmin(tapegrad.tensor([0., 0.]), dim=0)
    tensor([0.5000, 0.5000])
    """
    if dim is None:
        dim = _softmax_dim("softmin", input._array.ndim)
    if dtype is not None:
        return Softmax.apply(-input.to(dtype), normalize_dim(dim, input._array.ndim))
    return Softmax.apply(-input, normalize_dim(dim, input._array.ndim))


class Glu(Primitive):
    """a * sigmoid(b) for the two halves a, b of ``dim``."""

    @staticmethod
    def forward(ctx, x, dim):
        if x.ndim == 0:
            raise RuntimeError("glu does not support scalars because halving size must be even")
        dim = normalize_dim(dim, x.ndim)
        if x.shape[dim] % 2:
            raise RuntimeError(f"Halving dimension must be even, but dimension {dim} is size {x.shape[dim]}")
        _float_only("glu", "glu_cpu", x)
        h = x.shape[dim] // 2
        a, b = np.split(x, [h], axis=dim)
        ctx.dim, ctx.h = dim, h
        ctx.save_inputs(0)
        with np.errstate(over="ignore"):
            return a / (1 + np.exp(-b))

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        dim, h = ctx.dim, ctx.h
        lead = (slice(None),) * dim
        a, b = x[lead + (slice(0, h),)], x[lead + (slice(h, None),)]
        sb = b.sigmoid()
        ga = grad * sb
        return _Cat.apply(dim, ga, ga * a * (1 - sb)), None


def glu(input, dim=-1):
    """Gated linear unit: first half of ``dim`` times the sigmoid of the second half.

    >>> F.glu(tapegrad.tensor([2., 0.]))
    tensor([1.])
    """
    return Glu.apply(input, dim)


# --- classification losses ---------------------------------------------------------------------------------
class NllLoss(Primitive):
    """-input[n, target[n]] * weight[target[n]] (ignore_index skipped), reduced; input (C,) or (N, C, *)."""

    array_backward = True

    @staticmethod
    def forward(ctx, x, t, weight, reduction, ignore_index):
        C = x.shape[0] if x.ndim == 1 else x.shape[1]
        if t.dtype.kind not in "iub":
            raise RuntimeError(f"expected target dtype to be Long or Byte, but got {_legacy_name(t)}")
        tt = t.astype(np.intp, copy=False)
        # 0 <= every target < C, in one reduction: seen as unsigned, a negative target is larger than any class
        in_range = not tt.size or np.maximum.reduce(tt.view(np.uintp), axis=None) < C
        some_ignored = False
        if not (in_range and not 0 <= ignore_index < C):   # (else no target can equal ignore_index: no mask)
            ignored = t == ignore_index
            some_ignored = bool(np.logical_or.reduce(ignored, axis=None))
            if some_ignored:
                tt = np.where(ignored, 0, tt)
            if not in_range:
                bad = ((tt < 0) | (tt >= C)) & ~ignored
                if bad.any():
                    raise IndexError(f"Target {int(t[bad].flat[0])} is out of bounds.")
        if weight is not None:
            if weight.shape != (C,):
                raise RuntimeError(f"weight tensor should be defined either for all {C} classes or no classes but "
                                   f"got weight tensor of shape: {shape_str(weight.shape)}")
            w = weight.astype(x.dtype, copy=False)[tt]
        elif some_ignored:
            w = np.ones(tt.shape, x.dtype)
        else:
            w = None            # every weight is 1 (the common case: no array of ones)
        if w is not None and some_ignored:
            w = np.where(ignored, np.zeros((), x.dtype), w)
        if x.ndim == 1:
            picked = x[tt]
        elif x.ndim == 2:
            rows = np.arange(tt.shape[0])
            picked = x[rows, tt]
        else:
            picked = np.take_along_axis(x, tt[:, None], axis=1)[:, 0]
        coef = -1 if w is None else -w
        if reduction == "none":
            out = -picked if w is None else -picked * w
        else:            # (the sum of -loss negated: the same number, one array pass less without weights)
            s = -np.add.reduce(picked if w is None else picked * w, axis=None)   # (a NumPy scalar of x's dtype)
            if reduction == "sum":
                out = s
            else:
                total = x.dtype.type(tt.size) if w is None else np.add.reduce(w, axis=None)
                out = s / total
                coef = coef / total
        if ctx.needs_input_grad[0]:              # the gradient's coefficients: -w (/ total) at each target
            m = np.zeros(x.shape, x.dtype)
            if x.ndim == 1:
                m[tt] = coef
            elif x.ndim == 2:
                m[rows, tt] = coef
            else:
                np.put_along_axis(m, tt[:, None], np.broadcast_to(np.asarray(coef, x.dtype), tt.shape)[:, None],
                                  axis=1)
            ctx.m, ctx.unsq = m, reduction == "none" and x.ndim > 1
        return out

    @staticmethod
    def backward(ctx, grad):
        if ctx.unsq:
            grad = grad.reshape(grad.shape[:1] + (1,) + grad.shape[1:])
        return grad * ctx.m, None, None, None, None


class NllLoss2d(NllLoss):
    node_name = "NllLoss2DBackward0"
    array_backward = True


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
    """The negative log likelihood loss for log-probabilities ``input`` (N, C, *) and class indices ``target``.

    >>> F.nll_loss(tapegrad.tensor([[-1., -2.]]), tapegrad.tensor([1]))
    tensor(2.)
    """
    reduction = _reduction(reduction, size_average, reduce)
    return _nll(input, target._array if isinstance(target, Tensor) else np.asarray(target), weight, reduction,
                ignore_index)


def _nll(input, t, weight, reduction, ignore_index):
    """nll_loss on the target's array ``t`` and a checked ``reduction`` (cross_entropy comes here directly)."""
    if weight is not None:
        _check_no_grad_arg("nll_loss_forward", "weight", weight)
        weight = _arr(weight)
    x = input._array
    nd = x.ndim
    if nd < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {nd})")
    if nd != 1 and (t.ndim == 0 or x.shape[0] != t.shape[0]):
        raise ValueError(f"Expected input batch_size ({x.shape[0]}) to match target batch_size "
                         f"({t.shape[0] if t.ndim else 1}).")
    if nd <= 2:
        if t.ndim > 1 or (nd == 1 and t.size != 1):
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        if nd == 1:
            t = t.reshape(())
        return NllLoss.apply(input, t, weight, reduction, ignore_index)
    if nd == 4:
        if t.ndim != 3:
            raise RuntimeError(f"only batches of spatial targets supported (3D tensors) but got targets of "
                               f"dimension: {t.ndim}")
        if t.shape != x.shape[:1] + x.shape[2:]:
            raise RuntimeError(f"size mismatch (got input: {shape_str(x.shape)} , target: {shape_str(t.shape)}")
        return NllLoss2d.apply(input, t, weight, reduction, ignore_index)
    n, c = x.shape[:2]
    if t.shape[1:] != x.shape[2:]:
        raise RuntimeError(f"Expected target size {shape_str((n,) + x.shape[2:])}, got {shape_str(t.shape)}")
    x4 = _View.apply(input, (n, c, 1, -1) if x.size else (n, c, 0, 0))
    out = NllLoss2d.apply(x4, t.reshape(n, 1, -1) if x.size else t.reshape(n, 0, 0), weight, reduction,
                          ignore_index)
    return _View.apply(out, (n,) + x.shape[2:]) if reduction == "none" else out


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean",
                  label_smoothing=0.0):
    """Cross entropy of logits ``input`` (N, C, *) against class indices or class probabilities ``target``.

    It is ``nll_loss(log_softmax(input, 1), target)``, stable for logits of any size.

    >>> F.cross_entropy(tapegrad.tensor([[0., 0.]]), tapegrad.tensor([1]))
    tensor(0.6931)
    """
    reduction = _reduction(reduction, size_average, reduce)
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    x = input._array
    t = target._array if isinstance(target, Tensor) else np.asarray(target)
    class_dim = 0 if x.ndim == 1 else 1
    n_classes = x.shape[class_dim] if x.ndim else 1
    if x.shape == t.shape:                      # class probabilities
        if t.dtype.kind not in "fc":
            raise RuntimeError(f"Expected floating point type for target with class probabilities, got "
                               f"{_legacy_name(t)}")
        if ignore_index >= 0:
            raise RuntimeError("ignore_index is not supported for floating point target")
        ls = LogSoftmax.apply(input, class_dim)
        if label_smoothing > 0:
            target = target * (1 - label_smoothing) + label_smoothing / n_classes
        prod = ls * target
        if weight is not None:
            shape = [1] * x.ndim
            shape[class_dim] = weight.shape[0]
            prod = prod * weight.reshape(tuple(shape))
        if reduction == "none":
            return -prod.sum(class_dim)
        if reduction == "sum":
            return -prod.sum()
        if x.size == 0:
            return -prod.sum() * float("nan")
        return _DivScalar.apply(-prod.sum(), x.size // n_classes)
    ls = LogSoftmax.apply(input, class_dim)
    nll = _nll(ls, t, weight, reduction, ignore_index)
    if label_smoothing <= 0:
        return nll
    ignore = t == ignore_index
    if weight is not None:
        shape = [1] * x.ndim
        shape[class_dim] = weight.shape[0]
        smooth = -(ls * weight.reshape(tuple(shape))).sum(class_dim)
    else:
        smooth = -ls.sum(class_dim)
    smooth = _MaskedFill.apply(smooth, ignore, 0.0)
    if reduction == "mean":
        if weight is not None:
            den = float(_arr(weight)[t[~ignore]].sum())
        else:
            den = int((~ignore).sum())
        ret = smooth.sum() / den
    elif reduction == "sum":
        ret = smooth.sum()
    else:
        ret = smooth
    return nll * (1 - label_smoothing) + ret * (label_smoothing / n_classes)


# --- regression losses ---------------------------------------------------------------------------------------
def _bcast(a, b):
    if a.shape != b.shape:
        try:
            shape = np.broadcast_shapes(a.shape, b.shape)
        except ValueError:
            raise RuntimeError(f"The size of tensor a ({a.shape[-1]}) must match the size of tensor b "
                               f"({b.shape[-1]}) at non-singleton dimension {max(a.ndim, b.ndim) - 1}") from None
        a, b = np.broadcast_to(a, shape), np.broadcast_to(b, shape)
    d = np.result_type(a, b)
    return a.astype(d, copy=False), b.astype(d, copy=False)


class _PairLoss(Primitive):
    """Shared forward of the elementwise (input, target) losses; subclasses give ``loss`` and ``dloss``."""

    kernel = ""

    @classmethod
    def forward(cls, ctx, x, y, reduction, param):
        x, y = _bcast(x, y)
        _float_only(cls.__name__, cls.kernel, x)
        ctx.save_inputs(0, 1)
        ctx.reduction, ctx.param, ctx.shape = reduction, param, x.shape
        return _red_np(cls.loss(x - y, param), reduction)

    @classmethod
    def backward(cls, ctx, grad):
        x, y = ctx.saved_tensors
        g = _red_back(grad, ctx.shape, ctx.reduction)
        gx = cls.dloss(g, x - y, ctx.param)
        need = ctx.needs_input_grad
        return (gx if need[0] else None), (-gx if need[1] else None), None, None


class MseLoss(_PairLoss):
    kernel = "mse_cpu"

    @staticmethod
    def loss(d, param):
        return d * d

    @staticmethod
    def dloss(g, d, param):
        return g * 2.0 * d


class SmoothL1Loss(_PairLoss):
    kernel = "smooth_l1_cpu"

    @staticmethod
    def loss(d, beta):
        a = np.abs(d)
        return np.where(a < beta, 0.5 * d * d / beta, a - 0.5 * beta)

    @staticmethod
    def dloss(g, d, beta):
        inner = np.abs(d._array) <= beta
        return g * (d * (inner / beta) + np.sign(d._array) * ~inner)


class HuberLoss(_PairLoss):
    kernel = "huber_cpu"

    @staticmethod
    def loss(d, delta):
        a = np.abs(d)
        return np.where(a < delta, 0.5 * d * d, delta * (a - 0.5 * delta))

    @staticmethod
    def dloss(g, d, delta):
        inner = np.abs(d._array) <= delta
        return g * (d * inner + (delta * np.sign(d._array)) * ~inner)


def _weighted(loss, weight, input, reduction, mean_by_weight=True):
    if tuple(weight.shape) != tuple(input.shape):
        raise ValueError("Weights and input must have the same size.")
    loss = loss * weight
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    return loss.sum() / weight.sum() if mean_by_weight else loss.mean()


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """Mean squared error ``(input - target) ** 2``, reduced.

    >>> F.mse_loss(tapegrad.tensor([1., 3.]), tapegrad.tensor([0., 0.]))
    tensor(5.)
    """
    _size_warn(input, target)
    reduction = _reduction(reduction, size_average, reduce)
    if weight is not None:
        d = input - target
        return _weighted(d * d, weight, input, reduction)
    return MseLoss.apply(input, target, reduction, None)


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """Mean absolute error ``|input - target|``, reduced.

    >>> F.l1_loss(tapegrad.tensor([1., -3.]), tapegrad.tensor([0., 0.]))
    tensor(2.)
    """
    _size_warn(input, target)
    reduction = _reduction(reduction, size_average, reduce)
    loss = (input - target).abs()
    if weight is not None:
        return _weighted(loss, weight, input, reduction)
    return _reduce(loss, reduction)


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    """0.5 d²/beta where |d| < beta, else |d| - 0.5 beta (d = input - target), reduced.

    >>> F.smooth_l1_loss(tapegrad.tensor([0.5, 3.]), tapegrad.tensor([0., 0.]))
    tensor(1.3125)
    """
    _size_warn(input, target)
    reduction = _reduction(reduction, size_average, reduce)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    if beta == 0.0:
        return l1_loss(input, target, reduction=reduction)
    return SmoothL1Loss.apply(input, target, reduction, float(beta))


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    """0.5 d² where |d| < delta, else delta (|d| - 0.5 delta) (d = input - target), reduced.

    >>> F.huber_loss(tapegrad.tensor([0.5, 3.]), tapegrad.tensor([0., 0.]))
    tensor(1.3125)
    """
    _size_warn(input, target)
    reduction = _reduction(reduction)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    if weight is not None:
        return _weighted(HuberLoss.apply(input, target, "none", float(delta)), weight, input, reduction, False)
    return HuberLoss.apply(input, target, reduction, float(delta))


class BinaryCrossEntropy(Primitive):
    """-(t log x + (1 - t) log(1 - x)) * w with the logs clamped at -100, as torch."""

    @staticmethod
    def forward(ctx, x, t, weight, reduction):
        if x.shape != t.shape:
            raise ValueError(f"Using a target size ({_size_repr(t.shape)}) that is different to the input size "
                             f"({_size_repr(x.shape)}) is deprecated. Please ensure they have the same size.")
        _float_only("binary_cross_entropy", "binary_cross_entropy", x)
        if ((x < 0) | (x > 1)).any() or np.isnan(x).any():
            raise RuntimeError("all elements of input should be between 0 and 1")
        t = t.astype(x.dtype, copy=False)
        with np.errstate(divide="ignore"):
            lx, l1x = np.maximum(np.log(x), -100), np.maximum(np.log1p(-x), -100)
        loss = -(t * lx + (1 - t) * l1x)
        if weight is not None:
            loss = loss * weight
        ctx.save_inputs(0, 1)
        ctx.w, ctx.reduction, ctx.shape = weight, reduction, x.shape
        return _red_np(np.asarray(loss, x.dtype), reduction)

    @staticmethod
    def backward(ctx, grad):
        x, t = ctx.saved_tensors
        g = _red_back(grad, ctx.shape, ctx.reduction)
        if ctx.w is not None:
            g = g * ctx.w
        need = ctx.needs_input_grad
        gx = g * (x - t) / _ClampMin.apply((1 - x) * x, 1e-12) if need[0] else None
        gt = g * (_ClampMin.apply((1 - x).log(), -100) - _ClampMin.apply(x.log(), -100)) if need[1] else None
        return gx, gt, None, None


def _size_repr(shape):
    return f"tapegrad.Size([{', '.join(map(str, shape))}])"


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    """Binary cross entropy of probabilities ``input`` against ``target`` (logs clamped at -100, as torch).

    >>> F.binary_cross_entropy(tapegrad.tensor([0.5]), tapegrad.tensor([1.]))
    tensor(0.6931)
    """
    reduction = _reduction(reduction, size_average, reduce)
    _check_no_grad_arg("binary_cross_entropy", "weight", weight)
    w = None
    if weight is not None:
        w = np.broadcast_to(_arr(weight), np.broadcast_shapes(weight.shape, input.shape))
        w = w.astype(input._array.dtype, copy=False)
    return BinaryCrossEntropy.apply(input, target, w, reduction)


class BinaryCrossEntropyWithLogits(Primitive):
    """(1 - t) x + (1 + (pw - 1) t) softplus(-x), times ``weight``: stable for any logit."""

    @staticmethod
    def forward(ctx, x, t, weight, pos_weight, reduction):
        x, t = _bcast(x, t)
        _float_only("binary_cross_entropy_with_logits", "binary_cross_entropy_with_logits", x)
        sp = np.log1p(np.exp(-np.abs(x))) + np.maximum(-x, 0)         # softplus(-x) = -log sigmoid(x)
        if pos_weight is not None:
            loss = (1 - t) * x + (1 + (pos_weight - 1) * t) * sp
        else:
            loss = (1 - t) * x + sp
        if weight is not None:
            loss = loss * weight
        loss = np.asarray(loss, x.dtype)
        ctx.save_inputs(0, 1)
        ctx.w, ctx.pw, ctx.reduction = weight, pos_weight, reduction
        ctx.shape = loss.shape
        return _red_np(loss, reduction)

    @staticmethod
    def backward(ctx, grad):
        x, t = ctx.saved_tensors
        g = _red_back(grad, ctx.shape, ctx.reduction)
        if ctx.w is not None:
            g = g * ctx.w
        need = ctx.needs_input_grad
        pw = ctx.pw
        gx = gt = None
        if need[0]:
            if pw is not None:
                pt = t * pw
                gx = g * ((pt + 1 - t) * x.sigmoid() - pt)
            else:
                gx = g * (x.sigmoid() - t)
        if need[1]:
            gt = g * (-x) if pw is None else g * (-x - _LogSigmoid.apply(x) * (pw - 1))
        return gx, gt, None, None, None


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None, reduction="mean",
                                     pos_weight=None):
    """Binary cross entropy on logits (sigmoid folded in): finite values and gradients for any logit.

    >>> F.binary_cross_entropy_with_logits(tapegrad.tensor([0.]), tapegrad.tensor([1.]))
    tensor(0.6931)
    """
    if isinstance(reduction, int) and not isinstance(reduction, bool):   # torch.binary_cross_entropy_with_logits
        reduction = ("none", "mean", "sum")[reduction]
    reduction = _reduction(reduction, size_average, reduce)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Target size ({_size_repr(target.shape)}) must be the same as input size "
                         f"({_size_repr(input.shape)})")
    _check_no_grad_arg("binary_cross_entropy_with_logits", "weight", weight)
    _check_no_grad_arg("binary_cross_entropy_with_logits", "pos_weight", pos_weight)
    d = input._array.dtype
    return BinaryCrossEntropyWithLogits.apply(input, target, _arr(weight, d), _arr(pos_weight, d), reduction)


def _int_reduction(reduction):
    if isinstance(reduction, int) and not isinstance(reduction, bool):
        return ("none", "mean", "sum")[reduction]
    return reduction


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    """KL divergence of log-probabilities ``input`` from ``target`` (probabilities, or log ones).

    ``reduction="batchmean"`` divides the sum by the batch size (the mathematical definition).

    >>> F.kl_div(tapegrad.tensor([-1.]), tapegrad.tensor([1.]), reduction="sum")
    tensor(1.)
    """
    reduction = _int_reduction(reduction)
    if size_average is not None or reduce is not None:
        red = _reduction(None, size_average, reduce)
    else:
        if reduction == "mean":
            warnings.warn("reduction: 'mean' divides the total loss by both the batch size and the support size."
                          "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
                          "'mean' will be changed to behave the same as 'batchmean' in the next major release.",
                          stacklevel=2)
        red = "sum" if reduction == "batchmean" else _reduction(reduction)
    out = _reduce(_kl_terms(input, target, log_target), red)
    if reduction == "batchmean" and input._array.ndim != 0:
        out = out / input._array.shape[0]
    return out


def _kl_terms(input, target, log_target):
    if log_target:
        return target.exp() * (target - input)
    return _Xlogy.apply(target, target) - target * input


def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None,
                     reduction="mean"):
    """Poisson negative log likelihood: exp(input) - target * input (``log_input``), reduced.

    >>> F.poisson_nll_loss(tapegrad.tensor([0.]), tapegrad.tensor([1.]))
    tensor(1.)
    """
    reduction = _int_reduction(reduction)
    reduction = _reduction(reduction, size_average, reduce)
    if log_input:
        loss = input.exp() - target * input
    else:
        loss = input - target * (input + eps).log()
    if full:
        t = target if isinstance(target, Tensor) else _c(target)
        small = t._array <= 1
        safe = _MaskedFill.apply(t, small, 2.0)            # keeps log() finite where the term is dropped anyway
        stirling = safe * safe.log() - safe + 0.5 * (safe * (2 * math.pi)).log()
        loss = loss + _MaskedFill.apply(stirling, small, 0.0)
    return _reduce(loss, reduction)


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    """Gaussian negative log likelihood 0.5 (log var + (input - target)² / var), reduced.

    >>> F.gaussian_nll_loss(tapegrad.tensor([1.]), tapegrad.tensor([1.]), tapegrad.tensor([1.]))
    tensor(0.)
    """
    if isinstance(var, (int, float)):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = _c(np.full(input.shape, float(var), input._array.dtype))
    elif (var._array < 0).any():
        raise ValueError("var has negative entry/entries")
    vs, xs = tuple(var.shape), tuple(input.shape)
    if vs != xs:
        if xs[:-1] == vs:
            var = var.unsqueeze(-1)
        elif len(xs) == len(vs) and sum(y for x, y in zip(xs, vs) if x != y) == 1:
            pass
        else:
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    v = var._array
    var = var + _c((np.maximum(v, eps) - v).astype(v.dtype))      # clamp(min=eps) that lets the gradient through
    d = input - target
    loss = 0.5 * (var.log() + d * d / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


# --- margin losses --------------------------------------------------------------------------------------------
def margin_ranking_loss(input1, input2, target, margin=0, size_average=None, reduce=None, reduction="mean"):
    """max(0, -target * (input1 - input2) + margin), reduced.

    >>> F.margin_ranking_loss(tapegrad.tensor([1.]), tapegrad.tensor([2.]), tapegrad.tensor([1.]))
    tensor(1.)
    """
    reduction = _reduction(_int_reduction(reduction), size_average, reduce)
    if not (input1._array.ndim == input2._array.ndim == target._array.ndim):
        raise RuntimeError(f"margin_ranking_loss : All input tensors should have same dimension but got sizes: "
                           f"input1: {_size_repr(input1.shape)}, input2: {_size_repr(input2.shape)}, target: "
                           f"{_size_repr(target.shape)} ")
    return _reduce(_ClampMin.apply(-target * (input1 - input2) + margin, 0), reduction)


def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None, reduction="mean"):
    """input where target == 1, max(0, margin - input) where target == -1, reduced.

    >>> F.hinge_embedding_loss(tapegrad.tensor([0.3, 2.]), tapegrad.tensor([-1., 1.]))
    tensor(1.3500)
    """
    reduction = _reduction(_int_reduction(reduction), size_average, reduce)
    t = _arr(target)
    margin_clamp = _ClampMin.apply(margin - input, 0)
    out_margin = _MaskedFill.apply(margin_clamp, np.broadcast_to(t == 1, margin_clamp.shape), 0.0)
    out_self = _MaskedFill.apply(input, np.broadcast_to(t == -1, input.shape), 0.0)
    return _reduce(out_margin + out_self, reduction)


class SoftMarginLoss(Primitive):
    """log(1 + exp(-target * input)), reduced."""

    @staticmethod
    def forward(ctx, x, t, reduction):
        with np.errstate(over="ignore"):
            loss = np.asarray(np.log1p(np.exp(-t * x)), x.dtype)     # torch's formula (it overflows as torch)
        ctx.save_inputs(0)
        ctx.t, ctx.reduction, ctx.shape = t, reduction, loss.shape
        return _red_np(loss, reduction)

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        g = _red_back(grad, ctx.shape, ctx.reduction)
        return g * -ctx.t * (x * -ctx.t).sigmoid(), None, None


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """log(1 + exp(-target * input)), reduced.

    >>> F.soft_margin_loss(tapegrad.tensor([0.]), tapegrad.tensor([1.]))
    tensor(0.6931)
    """
    reduction = _reduction(reduction, size_average, reduce)
    _check_no_grad_arg("soft_margin_loss", "target", target)
    return SoftMarginLoss.apply(input, _arr(target, input._array.dtype), reduction)


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    """Mean over classes of the binary logistic loss of each (input, target) pair, reduced over the batch.

    >>> F.multilabel_soft_margin_loss(tapegrad.tensor([[0., 0.]]), tapegrad.tensor([[1., 0.]]))
    tensor(0.6931)
    """
    if size_average is not None or reduce is not None:
        reduction = _reduction(None, size_average, reduce)
    loss = -(target * _LogSigmoid.apply(input) + (1 - target) * _LogSigmoid.apply(-input))
    if weight is not None:
        loss = loss * weight
    class_dim = input._array.ndim - 1
    loss = loss.sum(class_dim) / input._array.shape[class_dim]
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    return _reduce(loss, reduction)


def _pairwise_distance(x1, x2, p, eps, keepdim):
    dim = max(x1._array.ndim, x2._array.ndim) - 1
    d = x1 - x2 + eps
    if dim < 0:
        return _Norm.apply(d, p, (), keepdim)
    return _Norm.apply(d, p, (dim,), keepdim)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """The p-norm of ``x1 - x2 + eps`` over the last dim.

    >>> F.pairwise_distance(tapegrad.tensor([[3., 4.]]), tapegrad.tensor([[0., 0.]]), eps=0.)
    tensor([5.])
    """
    return _pairwise_distance(x1, x2, p, eps, keepdim)


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False, size_average=None,
                        reduce=None, reduction="mean"):
    """max(0, margin + d(anchor, positive) - d(anchor, negative)) with pairwise distances, reduced.

    >>> a = tapegrad.tensor([[0., 0.]])
    >>> F.triplet_margin_loss(a, a, a + 3)
    tensor(0.)
    """
    reduction = _reduction(_int_reduction(reduction), size_average, reduce)
    dims = {anchor._array.ndim, positive._array.ndim, negative._array.ndim}
    if len(dims) != 1:
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the same number of "
                           f"dimensions, but got: anchor {anchor._array.ndim}D, positive {positive._array.ndim}D, "
                           f"and negative {negative._array.ndim}D inputs")
    d_pos = _pairwise_distance(anchor, positive, p, eps, False)
    d_neg = _pairwise_distance(anchor, negative, p, eps, False)
    if swap:
        d_swap = _pairwise_distance(positive, negative, p, eps, False)
        d_neg = _Where.apply(d_neg._array <= d_swap._array, d_neg, d_swap)
    return _reduce(_ClampMin.apply(margin + d_pos - d_neg, 0), reduction)


def cosine_embedding_loss(input1, input2, target, margin=0, size_average=None, reduce=None, reduction="mean"):
    """1 - cos(x1, x2) where target == 1, max(0, cos(x1, x2) - margin) where target == -1, reduced.

    >>> F.cosine_embedding_loss(tapegrad.tensor([[1., 0.]]), tapegrad.tensor([[0., 1.]]), tapegrad.tensor([1]))
    tensor(1.)
    """
    reduction = _reduction(_int_reduction(reduction), size_average, reduce)
    t = _arr(target)
    if t.ndim not in (0, 1):
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    want = 2 if t.ndim == 1 else 1
    if input1._array.ndim != want or input2._array.ndim != want:
        raise RuntimeError(f"{t.ndim}D target tensor expects {want}D input tensors, but found inputs with sizes "
                           f"{shape_str(input1.shape)} and {shape_str(input2.shape)}.")
    d = t.ndim
    prod = (input1 * input2).sum(d)
    m1 = (input1 * input1).sum(d) + 1e-12
    m2 = (input2 * input2).sum(d) + 1e-12
    cos = prod / (m1 * m2).sqrt()
    pos = 1 - cos
    neg = _ClampMin.apply(cos - margin, 0)
    out = _MaskedFill.apply(pos, np.broadcast_to(t != 1, pos.shape), 0.0) + \
        _MaskedFill.apply(neg, np.broadcast_to(t != -1, neg.shape), 0.0)
    return _reduce(out, reduction)


class MultiMarginLoss(Primitive):
    """sum over i != y of max(0, margin - x[y] + x[i]) ** p * w[y] / C, per sample, reduced."""

    @staticmethod
    def forward(ctx, x, t, p, margin, weight, reduction):
        x2 = x.reshape(1, -1) if x.ndim <= 1 else x
        C = x2.shape[1]
        tt = t.reshape(-1).astype(np.intp)
        if ((tt < 0) | (tt >= C)).any():
            raise RuntimeError("target out of range")
        xy = np.take_along_axis(x2, tt[:, None], axis=1)
        z = margin - xy + x2
        active = z > 0
        active[np.arange(len(tt)), tt] = False
        w = weight[tt][:, None] if weight is not None else np.ones((len(tt), 1), x.dtype)
        loss = np.where(active, (z if p == 1 else z * z) * w, 0).sum(1) / C
        ctx.save_inputs(0)
        ctx.tt, ctx.p, ctx.margin, ctx.w, ctx.active, ctx.C = tt, p, margin, w, active, C
        ctx.reduction, ctx.in_shape = reduction, x.shape
        loss = np.asarray(loss, x.dtype)
        if x.ndim <= 1:
            loss = loss.reshape(())
        return _red_np(loss, reduction)

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        x2 = x.reshape(1, -1) if x._array.ndim <= 1 else x
        n = len(ctx.tt)
        g = _red_back(grad, (n,) if x._array.ndim > 1 else (), ctx.reduction).reshape(n, 1)
        coef = ctx.active * ctx.w / ctx.C
        if ctx.p == 1:
            gi = g * coef                                    # d/dx[i] for i != y
        else:
            xy = _RowPick.apply(x2, ctx.tt)
            gi = g * (ctx.margin - xy + x2) * (2 * coef)
        onehot = np.zeros(x2.shape, bool)
        onehot[np.arange(n), ctx.tt] = True
        gy = -gi.sum(1, keepdim=True) * onehot
        return (gi + gy).reshape(ctx.in_shape), None, None, None, None, None


class _RowPick(Primitive):
    """x[n, idx[n]] kept as a column (n, 1)."""

    node_name = "GatherBackward0"

    @staticmethod
    def forward(ctx, x, idx):
        ctx.idx, ctx.shape = idx, x.shape
        return np.take_along_axis(x, idx[:, None], axis=1)

    @staticmethod
    def backward(ctx, grad):
        m = np.zeros(ctx.shape, bool)
        m[np.arange(len(ctx.idx)), ctx.idx] = True
        return grad * m, None


def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None, reduce=None,
                      reduction="mean"):
    """Multi-class hinge loss: mean over classes i != y of max(0, margin - x[y] + x[i]) ** p, reduced.

    >>> F.multi_margin_loss(tapegrad.tensor([[0., 0.]]), tapegrad.tensor([0]))
    tensor(0.5000)
    """
    reduction = _reduction(reduction, size_average, reduce)
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    _check_no_grad_arg("multi_margin_loss", "weight", weight)
    x = input._array
    if x.ndim > 2:
        raise RuntimeError(f"Expected non-empty vector or matrix with optional 0-dim batch size, but got: "
                           f"{shape_str(x.shape)}")
    t = _arr(target)
    return MultiMarginLoss.apply(input, t, p, float(margin), _arr(weight, x.dtype), reduction)


# --- dropout ----------------------------------------------------------------------------------------------------
_ALPHA = 1.7580993408473766


def _check_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _noise(x, p, feature):
    """Bernoulli(1 - p) noise from tapegrad's generator: one value per element, or per (N, C) feature map."""
    from .. import _random
    a = x._array
    shape = a.shape[:2] + (1,) * (a.ndim - 2) if feature else a.shape
    return (_random._gen(None).random(shape) < (1 - p)).astype(a.dtype)


def _dropout_impl(input, p, train, inplace, alpha, feature):
    _check_p(p)
    if p == 0 or not train or input._array.size == 0:
        return input
    if p == 1:
        zero = _c(np.zeros((), input._array.dtype))
        return input.mul_(zero) if inplace else input * zero
    noise = _noise(input, p, feature)
    if alpha:
        a = 1.0 / math.sqrt((_ALPHA * _ALPHA * p + 1) * (1 - p))
        b = (noise - 1) * (_ALPHA * a) + _ALPHA * a * p
        noise = noise * a
        if inplace:
            return input.mul_(_c(noise)).add_(_c(b))
        return input * noise + b
    noise /= (1 - p)
    return input.mul_(_c(noise)) if inplace else input * noise


def dropout(input, p=0.5, training=True, inplace=False):
    """Zero each element with probability ``p`` (scaling the rest by 1/(1-p)) when ``training``.

    >>> F.dropout(tapegrad.ones(3), p=0.5, training=False)
    tensor([1., 1., 1.])
    """
    return _dropout_impl(input, p, training, inplace, False, False)


def dropout_(input, p=0.5, train=True):
    """In-place ``dropout`` (``torch.dropout_``)."""
    return _dropout_impl(input, p, train, True, False, False)


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Dropout that keeps the self-normalising mean and variance of SELU activations.

    >>> F.alpha_dropout(tapegrad.ones(2), 0.5, training=False)
    tensor([1., 1.])
    """
    return _dropout_impl(input, p, training, inplace, True, False)


def alpha_dropout_(input, p=0.5, train=False):
    return _dropout_impl(input, p, train, True, True, False)


def feature_dropout(input, p=0.5, train=True):
    """``torch.feature_dropout``: zero whole channels (dim 1) of an (N, C, *) input."""
    return _dropout_impl(input, p, train, False, False, True)


def feature_dropout_(input, p=0.5, train=True):
    return _dropout_impl(input, p, train, True, False, True)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Alpha dropout of whole channels (dim 1) of an (N, C, *) input.

    >>> F.feature_alpha_dropout(tapegrad.ones(1, 2, 2), 0.5, training=False).shape
    tapegrad.Size([1, 2, 2])
    """
    return _dropout_impl(input, p, training, inplace, True, True)


def feature_alpha_dropout_(input, p=0.5, train=False):
    return _dropout_impl(input, p, train, True, True, True)


def _channel_dropout(input, p, training, inplace, batched):
    """Feature dropout; an unbatched input gets a batch dim for the noise and loses it after (as torch)."""
    if batched:
        return _dropout_impl(input, p, training, inplace, False, True)
    out = _dropout_impl(input.unsqueeze(0), p, training, False, False, True).squeeze(0)
    if inplace:
        from .elementwise import copy_
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


class NativeLayerNorm(Primitive):
    """(x - mean) / sqrt(var + eps) * weight + bias over the last ``k`` dims."""

    array_backward = True

    @staticmethod
    def forward(ctx, x, w, b, k, eps):
        _float_only("layer_norm", "LayerNormKernelImpl", x)
        dims = tuple(range(x.ndim - k, x.ndim))
        _, _, rstd, xhat = _stats(x, dims, eps)
        out = xhat * w if w is not None else xhat.copy()
        if b is not None:
            out += b
        ctx.save_inputs(0, 1)
        ctx.dims, ctx.eps, ctx.rstd, ctx.xhat = dims, eps, rstd, xhat
        return np.asarray(out, x.dtype)

    @staticmethod
    def backward(ctx, grad):
        x, w = ctx.saved_tensors
        need = ctx.needs_input_grad
        dims = ctx.dims
        lead = tuple(range(x.ndim - len(dims)))
        if x.__class__ is not Tensor:          # arrays (no graph of the backward is recorded)
            xhat = ctx.xhat
            gxhat = grad * w if w is not None else grad
            gx = _xhat_grad_np(xhat, gxhat, ctx.rstd, dims) if need[0] else None
            gw = np.add.reduce(grad * xhat, axis=lead) if need[1] else None
            gb = np.add.reduce(grad, axis=lead) if need[2] else None
            return gx, gw, gb, None, None
        gxhat = grad * w if w is not None else grad
        gx, xhat = _xhat_grad_tg(x, gxhat, dims, ctx.eps)
        gw = (grad * xhat).sum(lead) if need[1] and lead else (grad * xhat if need[1] else None)
        gb = (grad.sum(lead) if lead else grad) if need[2] else None
        return (gx if need[0] else None), gw, gb, None, None


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """Normalise over the trailing ``normalized_shape`` dims, then scale by ``weight`` and shift by ``bias``.

    >>> F.layer_norm(tapegrad.tensor([[1., 3.]]), (2,))
    tensor([[-1.0000,  1.0000]])
    """
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    ns = tuple(int(s) for s in normalized_shape)
    shape = tuple(input.shape)
    if len(ns) == 0 or shape[len(shape) - len(ns):] != ns or len(ns) > len(shape):
        raise RuntimeError(f"Given normalized_shape={shape_str(ns)}, expected input with shape "
                           f"[*, {', '.join(map(str, ns))}], but got input of size{shape_str(shape)}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and tuple(t.shape) != ns:
            raise RuntimeError(f"Expected {name} to be of same shape as normalized_shape, but got {name} of shape "
                               f"{shape_str(t.shape)} and normalized_shape = {shape_str(ns)}")
    return NativeLayerNorm.apply(input, weight, bias, len(ns), eps)


def native_layer_norm(input, normalized_shape, weight, bias, eps):
    """``torch.native_layer_norm``: (output, mean, rstd)."""
    out = layer_norm(input, normalized_shape, weight, bias, eps)
    dims = tuple(range(input._array.ndim - len(normalized_shape), input._array.ndim))
    mean, _, rstd, _ = _stats(input._array, dims, eps)
    return out, _c(mean), _c(rstd)


class NativeBatchNorm(Primitive):
    """Batch normalisation over all dims but 1 (batch statistics when training, running ones otherwise)."""

    array_backward = True

    @staticmethod
    def forward(ctx, x, w, b, running, training, momentum, eps):
        _float_only("batch_norm", "batch_norm", x)
        C = x.shape[1] if x.ndim > 1 else 1
        dims = tuple(d for d in range(x.ndim) if d != 1)
        bshape = tuple(C if d == 1 else 1 for d in range(x.ndim))
        rm, rv = running
        if training:
            _, var, rstd, xhat = _stats(x, dims, eps)
            if rm is not None or rv is not None:
                n = x.size // max(C, 1)
                mean = x.mean(dims)
                with np.errstate(invalid="ignore", divide="ignore"):
                    unbiased = var.reshape(C) * (n / (n - 1)) if n > 1 else var.reshape(C)
                if rm is not None:
                    rm._array[...] = (1 - momentum) * rm._array + momentum * mean
                    rm._vc[0] += 1
                if rv is not None:
                    rv._array[...] = (1 - momentum) * rv._array + momentum * unbiased
                    rv._vc[0] += 1
        else:
            mean = rm._array.reshape(bshape).astype(x.dtype, copy=False)
            rstd = (1.0 / np.sqrt(rv._array.reshape(bshape) + eps)).astype(x.dtype, copy=False)
            xhat = (x - mean) * rstd
        out = xhat * w.reshape(bshape) if w is not None else xhat.copy()
        if b is not None:
            out += b.reshape(bshape)
        ctx.save_inputs(0, 1)
        ctx.dims, ctx.bshape, ctx.eps, ctx.training = dims, bshape, eps, training
        ctx.rstd, ctx.xhat = rstd, xhat
        ctx.mean = None if training else mean
        return np.asarray(out, x.dtype)

    @staticmethod
    def backward(ctx, grad):
        x, w = ctx.saved_tensors
        need = ctx.needs_input_grad
        dims, bshape, C = ctx.dims, ctx.bshape, ctx.bshape[1] if len(ctx.bshape) > 1 else 1
        if x.__class__ is not Tensor:          # arrays: the first-order formula over the saved statistics
            xhat = ctx.xhat
            gxhat = grad * w.reshape(bshape) if w is not None else grad
            if need[0]:
                gx = _xhat_grad_np(xhat, gxhat, ctx.rstd, dims) if ctx.training else gxhat * ctx.rstd
                gx = np.asarray(gx, grad.dtype)
            else:
                gx = None
            gw = (grad * xhat).sum(dims).reshape(C) if need[1] else None
            gb = grad.sum(dims).reshape(C) if need[2] else None
            return gx, gw, gb, None, None, None, None
        gxhat = grad * w.reshape(bshape) if w is not None else grad
        if ctx.training:
            gx, xhat = _xhat_grad_tg(x, gxhat, dims, ctx.eps)
        else:
            gx = gxhat * ctx.rstd
            xhat = (x - ctx.mean) * ctx.rstd
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
    C = shape[1] if len(shape) > 1 else 1
    for name, t in (("running_mean", running_mean), ("running_var", running_var), ("weight", weight),
                    ("bias", bias)):
        if t is not None and t._array.size != C:
            raise RuntimeError(f"{name} should contain {C} elements not {t._array.size}")
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


class NativeGroupNorm(Primitive):
    """Normalise each of ``G`` channel groups of every sample, then a per-channel affine map."""

    array_backward = True

    @staticmethod
    def forward(ctx, x, w, b, G, eps):
        _float_only("group_norm", "GroupNormKernelImpl", x)
        N, C = x.shape[:2]
        bshape = (1, C) + (1,) * (x.ndim - 2)
        xg = x.reshape(N, G, -1)
        _, _, rstd, xhat = _stats(xg, (2,), eps)
        xhat_full = xhat.reshape(x.shape)
        out = xhat_full * w.reshape(bshape) if w is not None else xhat_full.copy()
        if b is not None:
            out += b.reshape(bshape)
        ctx.save_inputs(0, 1)
        ctx.G, ctx.eps, ctx.bshape, ctx.rstd, ctx.xhat = G, eps, bshape, rstd, xhat
        return np.asarray(out, x.dtype)

    @staticmethod
    def backward(ctx, grad):
        x, w = ctx.saved_tensors
        need = ctx.needs_input_grad
        shape = x.shape
        N, C = shape[:2]
        G, bshape = ctx.G, ctx.bshape
        red = tuple(d for d in range(len(shape)) if d != 1)
        if x.__class__ is not Tensor:          # arrays: the first-order formula over the saved statistics
            gxhat = (grad * w.reshape(bshape) if w is not None else grad).reshape(N, G, -1)
            xhat = ctx.xhat
            gx = _xhat_grad_np(xhat, gxhat, ctx.rstd, (2,)).reshape(shape) if need[0] else None
            gw = (grad * xhat.reshape(shape)).sum(red) if need[1] else None
            gb = grad.sum(red) if need[2] else None
            return gx, gw, gb, None, None
        gxhat = (grad * w.reshape(bshape) if w is not None else grad).reshape(N, G, -1)
        gx, xhat = _xhat_grad_tg(x.reshape(N, G, -1), gxhat, (2,), ctx.eps)
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
    return NativeGroupNorm.apply(input, weight, bias, int(num_groups), eps)


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

    def rep(t):
        if t is None:
            return None
        return t.unsqueeze(0).expand(b, c).reshape(b * c)

    rm = _c(np.tile(running_mean._array, b)) if running_mean is not None else None
    rv = _c(np.tile(running_var._array, b)) if running_var is not None else None
    x = input.reshape((1, b * c) + shape[2:])
    out = NativeBatchNorm.apply(x, rep(weight), rep(bias), (rm, rv), bool(use_input_stats),
                                0.1 if momentum is None else momentum, eps)
    for t, r in ((running_mean, rm), (running_var, rv)):
        if t is not None:
            t._array[...] = r._array.reshape(b, c).mean(0)
            t._vc[0] += 1
    return _View.apply(out, shape)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """x / sqrt(mean(x²) + eps) over the trailing ``normalized_shape`` dims, times ``weight``.

    >>> F.rms_norm(tapegrad.tensor([[3., 4.]]), (2,), eps=0.).shape
    tapegrad.Size([1, 2])
    """
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    ns = tuple(int(s) for s in normalized_shape)
    shape = tuple(input.shape)
    if len(ns) > len(shape) or shape[len(shape) - len(ns):] != ns:
        raise RuntimeError(f"Given normalized_shape={shape_str(ns)}, expected input with shape "
                           f"[*, {', '.join(map(str, ns))}], but got input of size{shape_str(shape)}")
    if eps is None:
        eps = float(np.finfo(input._array.dtype).eps) if input._array.dtype.kind == "f" else 1.1920928955078125e-07
    dims = tuple(range(len(shape) - len(ns), len(shape)))
    r = ((input * input).mean(dims, keepdim=True) + eps) ** -0.5
    out = input * r
    return out * weight if weight is not None else out


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


# --- embeddings -----------------------------------------------------------------------------------------------
def _check_indices(idx, op):
    if idx.dtype.kind not in "iu":
        raise RuntimeError(f"Expected tensor for argument #1 'indices' to have one of the following scalar types: "
                           f"Long, Int; but got tapegrad.{_legacy_name(idx)}Tensor instead (while checking arguments "
                           f"for {op})")


class Embedding(Primitive):
    """``weight[indices]``; the gradient is scattered back into the rows (never into ``padding_idx``)."""

    array_backward = True

    @staticmethod
    def forward(ctx, w, idx, padding_idx, scale_grad_by_freq):
        n = w.shape[0]
        if idx.size and (idx.min() < -n or idx.max() >= n or idx.min() < 0):
            raise IndexError("index out of range in self")
        scale = None
        if padding_idx is not None or scale_grad_by_freq:
            scale = np.ones(idx.shape, w.dtype)
            if scale_grad_by_freq:
                counts = np.bincount(idx.reshape(-1), minlength=n)
                scale = scale / counts[idx]
            if padding_idx is not None:
                scale[idx == padding_idx] = 0
        ctx.idx, ctx.n, ctx.scale = idx, n, scale
        return w[idx]

    @staticmethod
    def backward(ctx, grad):
        return kernel(_RowScatter, grad, ctx.idx, ctx.n, ctx.scale), None, None, None


def _renorm_(weight, idx, max_norm, norm_type):
    """Rescale (in place, untracked) the rows of ``weight`` used by ``idx`` whose norm exceeds ``max_norm``."""
    rows = np.unique(idx)
    w = weight._array
    norms = np.linalg.norm(w[rows], ord=norm_type, axis=1) if norm_type != 2 else \
        np.sqrt((w[rows] * w[rows]).sum(1))
    big = norms > max_norm
    if big.any():
        w[rows[big]] *= (max_norm / (norms[big] + 1e-7))[:, None].astype(w.dtype)
    weight._vc[0] += 1


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
              sparse=False):
    """Rows of ``weight`` picked by the integer ``input``; ``padding_idx``'s row gets no gradient.

    >>> F.embedding(tapegrad.tensor([1]), tapegrad.tensor([[0., 0.], [1., 2.]]))
    tensor([[1., 2.]])
    """
    idx = input._array if isinstance(input, Tensor) else np.asarray(input)
    _check_indices(idx, "embedding")
    n = weight._array.shape[0]
    if padding_idx is not None:
        if padding_idx > 0:
            if padding_idx >= n:
                raise AssertionError("Padding_idx must be within num_embeddings")
        elif padding_idx < 0:
            if padding_idx < -n:
                raise AssertionError("Padding_idx must be within num_embeddings")
            padding_idx = n + padding_idx
    if max_norm is not None:
        if idx.size and (idx.min() < 0 or idx.max() >= n):
            raise IndexError("index out of range in self")
        with no_grad():
            _renorm_(weight, idx, max_norm, norm_type)
    return Embedding.apply(weight, idx, padding_idx, bool(scale_grad_by_freq))


class EmbeddingBag(Primitive):
    """Sum, mean or max of the embedding rows of each bag."""

    @staticmethod
    def forward(ctx, w, psw, idx, bag, nbags, mode, padding_idx):
        n, D = w.shape
        if idx.size and (idx.min() < 0 or idx.max() >= n):
            raise IndexError("index out of range in self")
        keep = idx != padding_idx if padding_idx is not None else np.ones(idx.shape, bool)
        rows = w[idx]
        if psw is not None:
            rows = rows * psw[:, None]
        counts = np.bincount(bag[keep], minlength=nbags).astype(w.dtype)
        ctx.idx, ctx.bag, ctx.n, ctx.mode, ctx.keep = idx, bag, n, mode, keep
        ctx.save_inputs(0, 1)
        if mode == "max":
            out = np.full((nbags, D), -np.inf, w.dtype)
            np.maximum.at(out, bag[keep], rows[keep])
            out[counts == 0] = 0
            # the row index that gives each (bag, column) maximum (the first one, as torch)
            match = (rows == out[bag]) & keep[:, None]
            arg = np.full((nbags, D), -1)
            for_pos = np.where(match)
            order = np.argsort(for_pos[0], kind="stable")[::-1]
            arg[bag[for_pos[0][order]], for_pos[1][order]] = for_pos[0][order]
            ctx.arg = arg
            return out
        out = np.zeros((nbags, D), w.dtype)
        np.add.at(out, bag[keep], rows[keep])
        scale = keep.astype(w.dtype)
        if mode == "mean":
            with np.errstate(invalid="ignore", divide="ignore"):
                out = out / np.maximum(counts, 1)[:, None]
            scale = scale / np.maximum(counts, 1)[bag]
        ctx.scale = scale
        return out

    @staticmethod
    def backward(ctx, grad):
        w, psw = ctx.saved_tensors
        need = ctx.needs_input_grad
        if ctx.mode == "max":
            arg = ctx.arg
            valid = arg >= 0
            B, D = arg.shape
            flat = np.where(valid, ctx.idx[np.maximum(arg, 0)] * D + np.arange(D), 0).reshape(-1)
            gw = _RowScatter.apply(grad.reshape(-1, 1), flat, ctx.n * D, valid.reshape(-1).astype(grad._array.dtype))
            gw = gw.reshape(ctx.n, D)
            return gw, None, None, None, None, None, None
        g_rows = _RowGather.apply(grad, ctx.bag)                 # (len(idx), D)
        gw = gpsw = None
        if need[0]:
            rows = g_rows * ctx.scale[:, None]
            if psw is not None:
                rows = rows * psw.unsqueeze(1)
            gw = _RowScatter.apply(rows, ctx.idx, ctx.n, None)
        if need[1]:
            gpsw = (g_rows * _RowGather.apply(w, ctx.idx)).sum(1) * ctx.scale
        return gw, gpsw, None, None, None, None, None


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False, mode="mean",
                  sparse=False, per_sample_weights=None, include_last_offset=False, padding_idx=None):
    """Sum/mean/max of the embeddings of each bag: rows of a 2-d ``input``, or 1-d ``input`` cut at ``offsets``.

    >>> F.embedding_bag(tapegrad.tensor([[0, 1]]), tapegrad.tensor([[1., 1.], [3., 3.]]))
    tensor([[2., 2.]])
    """
    idx = input._array
    _check_indices(idx, "embedding_bag")
    if mode not in ("sum", "mean", "max"):
        raise ValueError(f"mode has to be one of sum, mean or max, but got {mode}")
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(f"embedding_bag: per_sample_weights was not None. per_sample_weights is only "
                                  f"supported for mode='sum' (got mode='{mode}'). Please open a feature request on "
                                  "the Pytorch GitHub.")
    if idx.ndim == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated is a mini-batch of "
                             "fixed length sequences. However, found offsets of type Tensor")
        nbags, L = idx.shape
        bag = np.repeat(np.arange(nbags), L)
        idx = idx.reshape(-1)
        psw = per_sample_weights.reshape(-1) if per_sample_weights is not None else None
    elif idx.ndim == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        off = _arr(offsets).astype(np.intp)
        if include_last_offset:
            off = off[:-1]
        nbags = len(off)
        bag = np.zeros(idx.shape, np.intp)
        if len(idx):
            starts = off[(off > 0) & (off < len(idx))]
            np.add.at(bag, starts, 1)
            bag = np.cumsum(bag)
        psw = per_sample_weights
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {idx.ndim}")
    n = weight._array.shape[0]
    if padding_idx is not None and padding_idx < 0:
        padding_idx += n
    if max_norm is not None:
        with no_grad():
            _renorm_(weight, idx, max_norm, norm_type)
    return EmbeddingBag.apply(weight, psw, idx, bag, nbags, mode, padding_idx)


# --- distances and similarity ---------------------------------------------------------------------------------
def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """``input / max(||input||_p, eps)`` along ``dim``.

    >>> F.normalize(tapegrad.tensor([[3., 4.]]))
    tensor([[0.6000, 0.8000]])
    """
    d = normalize_dim(dim, input._array.ndim)
    denom = _ClampMin.apply(_norm(input, p, (d,) if input._array.ndim else (), True), eps).expand(input.shape)
    return input / denom


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """Cosine of the angle between ``x1`` and ``x2`` along ``dim`` (norms clamped at ``eps``).

    >>> F.cosine_similarity(tapegrad.tensor([[1., 0.]]), tapegrad.tensor([[1., 1.]]))
    tensor([0.7071])
    """
    shape = tuple(np.broadcast_shapes(tuple(x1.shape), tuple(x2.shape)))
    if tuple(x1.shape) != shape:
        x1 = x1.expand(shape)
    if tuple(x2.shape) != shape:
        x2 = x2.expand(shape)
    d = normalize_dim(dim, len(shape))
    dims = (d,) if shape else ()
    n1, n2 = _norm(x1, 2, dims, True), _norm(x2, 2, dims, True)
    n1 = n1 + _c(np.maximum(n1._array, eps) - n1._array)       # clamp_min_ under no_grad: gradient unchanged
    n2 = n2 + _c(np.maximum(n2._array, eps) - n2._array)
    return ((x1 / n1) * (x2 / n2)).sum(d)


def _norm_backward(grad, x, result, p):
    """Gradient of the p-norm over the last dim (result kept as a column), in tapegrad ops."""
    if p == 1:
        return grad * np.sign(x._array)
    safe = result + (result._array == 0)
    if p == 2:
        return grad * x / safe
    if p == math.inf:
        amax = (np.abs(x._array) == result._array) & (result._array != 0)
        return grad * (np.sign(x._array) * amax / np.maximum(amax.sum(-1, keepdims=True), 1))
    if p == 0:
        return grad * 0.0 * x
    return grad * x * x.abs() ** (p - 2) / safe ** (p - 1)


class Pdist(Primitive):
    """Distances between all pairs i < j of rows of a 2-d input."""

    @staticmethod
    def forward(ctx, x, p):
        if x.ndim != 2:
            raise RuntimeError(f"pdist only supports 2D tensors, got: {x.ndim}D")
        if p < 0:
            raise RuntimeError("pdist only supports non-negative p values")
        i, j = np.triu_indices(x.shape[0], 1)
        ctx.i, ctx.j, ctx.p, ctx.n = i, j, p, x.shape[0]
        ctx.save_result(0)
        return np.asarray(_pnorm_np(x[i] - x[j], p), x.dtype)

    @staticmethod
    def backward(ctx, grad):
        result, x = ctx.saved_tensors
        diff = _RowGather.apply(x, ctx.i) - _RowGather.apply(x, ctx.j)
        gd = _norm_backward(grad.unsqueeze(1), diff, result.unsqueeze(1), ctx.p)
        return _RowScatter.apply(gd, ctx.i, ctx.n, None) - _RowScatter.apply(gd, ctx.j, ctx.n, None), None


def _pnorm_np(d, p):
    a = np.abs(d)
    if p == 2:
        return np.sqrt((a * a).sum(1))
    if p == 1:
        return a.sum(1)
    if p == math.inf:
        return a.max(1, initial=0)
    if p == 0:
        return (a != 0).sum(1).astype(d.dtype)
    return (a ** p).sum(1) ** (1.0 / p)


def pdist(input, p=2):
    """Distances between every pair of rows of ``input`` (the upper triangle, row by row).

    >>> F.pdist(tapegrad.tensor([[0., 0.], [3., 4.]]))
    tensor([5.])
    """
    return Pdist.apply(input, float(p))


# --- attention ------------------------------------------------------------------------------------------------
def _attn_bias(mask, L, S, is_causal, dtype):
    """The additive bias of the attention scores: -inf where a bool mask is False, a float mask as is."""
    bias = None
    if is_causal:
        bias = np.where(np.tril(np.ones((L, S), bool)), 0.0, -np.inf).astype(dtype)
    if mask is not None:
        m = _arr(mask)
        m = np.where(m, 0.0, -np.inf).astype(dtype) if m.dtype == np.bool_ else m.astype(dtype, copy=False)
        bias = m if bias is None else bias + m
    return bias


def _safe_softmax_np(s):
    m = s.max(-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)
    e = np.exp(s - m)
    tot = e.sum(-1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(tot > 0, e / np.where(tot > 0, tot, 1), 0)


class ScaledDotProductFlashAttentionForCpu(Primitive):
    """softmax(q kᵀ * scale + bias) v; backward in tapegrad ops from q, k, v (so it is twice differentiable)."""

    @staticmethod
    def forward(ctx, q, k, v, bias, scale):
        d = np.result_type(q, k, v)
        q, k, v = q.astype(d, copy=False), k.astype(d, copy=False), v.astype(d, copy=False)
        s = (q @ np.swapaxes(k, -1, -2)) * scale
        if bias is not None:
            s = s + bias
        p = _safe_softmax_np(s)
        ctx.save_inputs(0, 1, 2)
        ctx.bias, ctx.scale = bias, scale
        return p @ v

    @staticmethod
    def backward(ctx, grad):
        q, k, v = ctx.saved_tensors
        need = ctx.needs_input_grad
        s = q.matmul(_T(k)) * ctx.scale
        if ctx.bias is not None:
            s = s + ctx.bias
        p = Softmax.apply(s, s.ndim - 1)
        if ctx.bias is not None:
            dead = ~np.isfinite(ctx.bias).any(-1, keepdims=True)
            if dead.any():                                           # fully masked rows are 0, not nan
                p = _MaskedFill.apply(p, np.broadcast_to(dead, p.shape), 0.0)
        gv = _T(p).matmul(grad) if need[2] else None
        gq = gk = None
        if need[0] or need[1]:
            dp = grad.matmul(_T(v))
            ds = p * (dp - (dp * p).sum(-1, keepdim=True))
            gq = ds.matmul(k) * ctx.scale if need[0] else None
            gk = _T(ds).matmul(q) * ctx.scale if need[1] else None
        return gq, gk, gv, None, None


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
                                 enable_gqa=False):
    """softmax(query keyᵀ / sqrt(E) + mask) value, with optional causal mask, dropout and grouped-query heads.

    >>> q = tapegrad.ones(1, 2, 3)
    >>> F.scaled_dot_product_attention(q, q, q).shape
    tapegrad.Size([1, 2, 3])
    """
    qs, ks, vs = tuple(query.shape), tuple(key.shape), tuple(value.shape)
    if len(qs) < 2 or qs[-1] != ks[-1] or ks[-2] != vs[-2]:
        raise RuntimeError(f"scaled_dot_product_attention: query {shape_str(qs)}, key {shape_str(ks)} and value "
                           f"{shape_str(vs)} do not fit: expected (..., L, E), (..., S, E) and (..., S, Ev)")
    L, S, E = qs[-2], ks[-2], qs[-1]
    if enable_gqa and len(qs) >= 3 and qs[-3] != ks[-3]:
        rep = qs[-3] // ks[-3]

        def expand_heads(t):
            sh = tuple(t.shape)
            return t.unsqueeze(-3).expand(sh[:-2] + (rep,) + sh[-2:]).reshape(sh[:-3] + (sh[-3] * rep,) + sh[-2:])
        key, value = expand_heads(key), expand_heads(value)
    sc = 1.0 / math.sqrt(E) if scale is None else scale
    dtype = np.result_type(query._array, key._array, value._array)
    float_mask = attn_mask is not None and isinstance(attn_mask, Tensor) and attn_mask._array.dtype != np.bool_
    grad_mask = float_mask and attn_mask._rg and _state.enabled
    if len(qs) == 4 and dropout_p == 0.0 and vs[-1] == E and not grad_mask:
        # torch's fused CPU kernel (its conditions: 4-d, no dropout, equal head dims, constant mask)
        bias = _attn_bias(attn_mask, L, S, is_causal, dtype)
        return ScaledDotProductFlashAttentionForCpu.apply(query, key, value, bias, sc)
    # torch's math path: explicit ops (a float mask stays differentiable), dropout on the attention weights
    bias = _attn_bias(None if float_mask else attn_mask, L, S, is_causal, dtype)
    half = math.sqrt(sc)
    attn = (query * half).matmul(_T(key * half))
    if float_mask:
        attn = attn + attn_mask
    if bias is not None:
        attn = attn + bias
    attn = Softmax.apply(attn, attn.ndim - 1)
    finite = np.isfinite(attn._array).all(-1, keepdims=True)
    if not finite.all():
        attn = _MaskedFill.apply(attn, np.broadcast_to(~finite, attn.shape), 0.0)    # _safe_softmax
    if dropout_p > 0.0:
        attn = dropout(attn, dropout_p, True)
    return attn.matmul(value)


# --- more of nn.functional: gumbel softmax, linear + cross entropy, more margin losses, channel shuffle --------
def gumbel_softmax(logits, tau=1, hard=False, eps=1e-10, dim=-1):
    """Softmax of ``(logits + Gumbel noise) / tau``; ``hard`` returns one-hot values with the soft gradient.

    >>> F.gumbel_softmax(tapegrad.zeros(2, 3), hard=True).sum(1)
    tensor([1., 1.])
    """
    from .. import _random
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=2)
    a = logits._array
    gumbels = -np.log(_random._gen(None).exponential(size=a.shape)).astype(a.dtype)
    d = normalize_dim(dim, a.ndim)
    y_soft = Softmax.apply((logits + gumbels) / tau, d)
    if not hard:
        return y_soft
    ys = y_soft._array
    y_hard = np.zeros_like(ys)
    np.put_along_axis(y_hard, np.argmax(ys, axis=d)[(slice(None),) * d + (None,)] if a.ndim else
                      np.zeros((), np.intp), 1.0, axis=d)
    return _c(y_hard - ys) + y_soft


def linear_cross_entropy(input, linear_weight, target, *, linear_bias=None, weight=None, reduction="mean",
                         ignore_index=None, label_smoothing=0.0, options=None):
    """``cross_entropy(linear(input, linear_weight, linear_bias), target)`` (the unchunked path of torch's).

    >>> F.linear_cross_entropy(tapegrad.zeros(1, 3), tapegrad.zeros(2, 3), tapegrad.tensor([1]))
    tensor(0.6931)
    """
    nd, wd = input._array.ndim, linear_weight._array.ndim
    if nd < 1 or nd > 2:
        raise RuntimeError(f"expected input with dimensionality 1 or 2, got {nd}")
    if wd < 2:
        raise RuntimeError(f"expected linear_weight with dimensionality at least 2, got {wd}")
    ws = tuple(linear_weight.shape)
    num_batches, in_features = tuple(input.shape[:-1]), input.shape[-1]
    if in_features != ws[-1]:
        raise RuntimeError(f"expected equal input and linear_weight last dimensions (in_features), got "
                           f"{in_features} and {ws[-1]}, respectively")
    num_classes, out_features = ws[0], ws[1:-1]
    if linear_bias is not None and tuple(linear_bias.shape) != (num_classes, *out_features):
        raise RuntimeError(f"expected linear_bias shape {(num_classes, *out_features)}, got "
                           f"{tuple(linear_bias.shape)}")
    logits_shape = (*num_batches, num_classes, *out_features)
    if tuple(target.shape) == logits_shape and ignore_index is not None:
        raise RuntimeError("ignore_index cannot be specified when target contains probabilities")
    if out_features:
        n = math.prod(out_features) * num_classes
        linear_weight = linear_weight.reshape(n, in_features)
        if linear_bias is not None:
            linear_bias = linear_bias.reshape(n)
    logits = linear(input, linear_weight, linear_bias).reshape(logits_shape)
    return cross_entropy(logits, target, weight=weight, reduction=reduction,
                         ignore_index=-100 if ignore_index is None else ignore_index, label_smoothing=label_smoothing)


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None, margin=1.0, swap=False,
                                      reduction="mean"):
    """``triplet_margin_loss`` with any ``distance_function`` (default: pairwise distance).

    >>> a = tapegrad.tensor([[0., 0.]])
    >>> F.triplet_margin_with_distance_loss(a, a, a + 3)
    tensor(0.)
    """
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    dims = (anchor._array.ndim, positive._array.ndim, negative._array.ndim)
    if len(set(dims)) != 1:
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the same number of "
                           f"dimensions, but got: anchor {dims[0]}D, positive {dims[1]}D, and negative {dims[2]}D "
                           "inputs")
    dist = distance_function or (lambda a, b: _pairwise_distance(a, b, 2.0, 1e-6, False))
    d_pos, d_neg = dist(anchor, positive), dist(anchor, negative)
    if swap:
        d_swap = dist(positive, negative)
        d_neg = _Where.apply(d_neg._array <= d_swap._array, d_neg, d_swap)
    return _reduce(_ClampMin.apply(margin + d_pos - d_neg, 0), reduction)


class MultilabelMarginLoss(Primitive):
    """sum over target classes j and other classes i of max(0, 1 - (x[j] - x[i])) / C, per sample."""

    @staticmethod
    def forward(ctx, x, t, reduction):
        x2 = x.reshape(1, -1) if x.ndim <= 1 else x
        t2 = t.reshape(x2.shape)
        N, C = x2.shape
        if ((t2 < -1) | (t2 >= C)).any():
            raise RuntimeError("multilabel_margin_loss: target values must be in [-1, C)")
        # the targets of each row run up to the first -1
        valid = np.cumprod(t2 != -1, axis=1).astype(bool)
        is_target = np.zeros((N, C), bool)
        rows = np.nonzero(valid)
        is_target[rows[0], t2[valid]] = True
        tgt = np.zeros((N, C), x2.dtype)                 # how many times class j is listed as a target
        np.add.at(tgt, (rows[0], t2[valid]), 1)
        z = 1 - (x2[:, :, None] - x2[:, None, :])        # z[n, j, i] = 1 - (x[j] - x[i])
        active = (z > 0) & (tgt[:, :, None] > 0) & ~is_target[:, None, :]
        loss = (np.where(active, z, 0) * tgt[:, :, None]).sum((1, 2)) / C
        ctx.coef = (active * tgt[:, :, None]).astype(x2.dtype) / C      # d loss / d z
        ctx.reduction, ctx.shape, ctx.unbatched = reduction, (N,), x.ndim <= 1
        ctx.in_shape = x.shape
        loss = np.asarray(loss, x.dtype)
        if x.ndim <= 1:
            loss = loss.reshape(())
        return _red_np(loss, reduction)

    @staticmethod
    def backward(ctx, grad):
        g = _red_back(grad, () if ctx.unbatched else ctx.shape, ctx.reduction).reshape(-1, 1)
        c = ctx.coef
        gx = g * (c.sum(1) - c.sum(2))                   # +coef for i (the others), -coef for j (the targets)
        return gx.reshape(ctx.in_shape), None, None


def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """Multi-label hinge loss; ``target`` lists each sample's classes, ended by -1.

    >>> F.multilabel_margin_loss(tapegrad.tensor([[0.1, 0.2, 0.4, 0.8]]), tapegrad.tensor([[3, 0, -1, 1]]))
    tensor(0.8500)
    """
    reduction = _reduction(reduction, size_average, reduce)
    t = _arr(target)
    if t.shape != tuple(input.shape):
        raise RuntimeError(f"inconsistent target size: {shape_str(t.shape)} for input of size: "
                           f"{shape_str(input.shape)}")
    return MultilabelMarginLoss.apply(input, t.astype(np.intp), reduction)


class ChannelShuffle(Primitive):
    """Channels (dim 1) regrouped from (g, C/g) to (C/g, g) order."""

    @staticmethod
    def forward(ctx, x, groups):
        n, c = x.shape[:2]
        ctx.groups, ctx.c = groups, c
        return np.ascontiguousarray(
            x.reshape((n, groups, c // groups) + x.shape[2:]).swapaxes(1, 2)).reshape(x.shape)

    @staticmethod
    def backward(ctx, grad):
        return ChannelShuffle.apply(grad, ctx.c // ctx.groups), None


def channel_shuffle(input, groups):
    """Split the C channels into ``groups`` groups and interleave them.

    >>> F.channel_shuffle(tapegrad.arange(4.).reshape(1, 4, 1), 2).flatten()
    tensor([0., 2., 1., 3.])
    """
    s = tuple(input.shape)
    if len(s) < 3:
        raise RuntimeError(f"channel_shuffle expects input to have at least 3 dimensions, but got input with sizes "
                           f"{shape_str(s)}")
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of groups:{groups}")
    if s[1] % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {s[1]} channels and {groups} "
                           "groups.")
    return ChannelShuffle.apply(input, int(groups))


# --- torch.xxx names whose signature differs from nn.functional's (ATen's order, integer reductions) -------------
FUNCTIONAL_OVERRIDES = {
    "batch_norm": batch_norm, "instance_norm": instance_norm, "embedding": embedding, "kl_div": kl_div,
    "binary_cross_entropy_with_logits": binary_cross_entropy_with_logits, "poisson_nll_loss": poisson_nll_loss,
    "margin_ranking_loss": margin_ranking_loss, "hinge_embedding_loss": hinge_embedding_loss,
    "triplet_margin_loss": triplet_margin_loss, "cosine_embedding_loss": cosine_embedding_loss,
}
_FO = FUNCTIONAL_OVERRIDES
__test__ = {f"nn.functional.{k}": v for k, v in FUNCTIONAL_OVERRIDES.items()}   # their docstring examples


def _torch_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps, cudnn_enabled):
    """``torch.batch_norm`` (ATen's argument order; ``nn.functional.batch_norm`` takes the running stats first)."""
    return _FO["batch_norm"](input, running_mean, running_var, weight, bias, training, momentum, eps)


def _torch_instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps,
                         cudnn_enabled):
    """``torch.instance_norm`` (ATen's argument order)."""
    return _FO["instance_norm"](input, running_mean, running_var, weight, bias, use_input_stats, momentum, eps)


def _torch_embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    """``torch.embedding(weight, indices)`` (padding_idx -1 means none, as in ATen)."""
    return _FO["embedding"](indices, weight, None if padding_idx == -1 else padding_idx,
                            scale_grad_by_freq=scale_grad_by_freq)


def _torch_kl_div(input, target, reduction=1, log_target=False):
    """``torch.kl_div``: integer reduction (0 none, 1 mean, 2 sum), no warning."""
    return _reduce(_kl_terms(input, target, log_target), _int_reduction(reduction))


def _torch_bce_with_logits(input, target, weight=None, pos_weight=None, reduction=1):
    """``torch.binary_cross_entropy_with_logits`` (ATen's order: pos_weight before the integer reduction)."""
    return _FO["binary_cross_entropy_with_logits"](input, target, weight, reduction=_int_reduction(reduction),
                                                   pos_weight=pos_weight)


def _torch_poisson_nll_loss(input, target, log_input, full, eps, reduction):
    """``torch.poisson_nll_loss`` (all six arguments, integer reduction)."""
    return _FO["poisson_nll_loss"](input, target, log_input, full, eps=eps, reduction=_int_reduction(reduction))


def _torch_margin_ranking_loss(input1, input2, target, margin=0.0, reduction=1):
    return _FO["margin_ranking_loss"](input1, input2, target, margin, reduction=_int_reduction(reduction))


def _torch_hinge_embedding_loss(input, target, margin=1.0, reduction=1):
    return _FO["hinge_embedding_loss"](input, target, margin, reduction=_int_reduction(reduction))


def _torch_triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False, reduction=1):
    return _FO["triplet_margin_loss"](anchor, positive, negative, margin, p, eps, swap,
                                      reduction=_int_reduction(reduction))


def _torch_cosine_embedding_loss(input1, input2, target, margin=0.0, reduction=1):
    return _FO["cosine_embedding_loss"](input1, input2, target, margin, reduction=_int_reduction(reduction))


for _n in list(FUNCTIONAL_OVERRIDES):
    _f = globals()["_torch_" + {"binary_cross_entropy_with_logits": "bce_with_logits"}.get(_n, _n)]
    _f.__name__ = _n
    globals()[_n] = _f
del _n, _f


def _softmax_method(self, dim, dtype=None):
    return softmax(self, dim, dtype=dtype)


def _log_softmax_method(self, dim, dtype=None):
    return log_softmax(self, dim, dtype=dtype)


bind(softmax=_softmax_method, log_softmax=_log_softmax_method)
