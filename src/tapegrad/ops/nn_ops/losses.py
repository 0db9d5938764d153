# ruff: noqa: A001, A002 - torch's argument name is `input`
"""Classification losses (nll_loss, cross_entropy, linear_cross_entropy), regression / probabilistic
losses (mse, l1, smooth_l1, huber, binary cross entropy, kl_div, poisson and gaussian nll) and the sequence loss
ctc_loss.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from ... import _dtype
from ...autograd.function import _active, once_differentiable
from .._util import Primitive, Tensor, broadcast_or_error, sample_data, shape_str, vmap_per_sample
from ..elementwise._common import _w
from ._common import (_ClampMin, _DivScalar, _LogSigmoid, _MaskedFill, _Where, _Xlogy, _arr, _c, _check_no_grad_arg,
                      _clamp_min_keep_grad, _float_only, _legacy_name, _red_back, _red_np, _reduce, _reduction,
                      _size_warn)
from .linear import LogSoftmax, _View, linear
from .._util import autocast_listed


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
            if some_ignored:
                out = np.where(ignored, np.zeros((), x.dtype), out)
        else:            # (the sum of -loss negated: the same number, one array pass less without weights)
            # 0 - sum: an empty or all-ignored batch sums to +0 (a NumPy scalar of x's dtype)
            s = x.dtype.type(0) - np.add.reduce(picked if w is None else picked * w, axis=None)
            if reduction == "sum":
                out = s
            else:
                total = x.dtype.type(tt.size) if w is None else np.add.reduce(w, axis=None)
                out = s / total
                coef = coef / total      # (0 / 0 is NaN: torch's gradient at a zero-weight target, all weights 0)
        if some_ignored:                 # an ignored target gets a gradient of exactly +0, as torch's
            coef = np.where(ignored, np.zeros((), x.dtype), coef)
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
    if isinstance(target, Tensor):     # (under a transform the target stays a Tensor: vmap may batch it)
        target = target if _active[0] else target._array
    return _nll(input, target if isinstance(target, Tensor) else np.asarray(target), weight, reduction,
                ignore_index)


def _nll(input, t, weight, reduction, ignore_index):
    """nll_loss on the target's array ``t`` and a checked ``reduction`` (cross_entropy comes here directly)."""
    if weight is not None:
        _check_no_grad_arg("nll_loss_forward", "weight", weight)
        if not isinstance(weight, Tensor):     # (a tensor goes to the op as one: a compiled region traces it)
            weight = _arr(weight)
    x = input._array
    nd = x.ndim
    if nd < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {nd})")
    if nd != 1 and (t.ndim == 0 or x.shape[0] != t.shape[0]):
        raise ValueError(f"Expected input batch_size ({x.shape[0]}) to match target batch_size "
                         f"({t.shape[0] if t.ndim else 1}).")
    if weight is not None:
        wd = weight._array.dtype if isinstance(weight, Tensor) else weight.dtype
        if wd != x.dtype and x.dtype.kind in "fc":
            raise RuntimeError(f"expected scalar type {_dtype.from_numpy_dtype(x.dtype)._legacy} but found "
                               f"{_dtype.from_numpy_dtype(wd)._legacy}")
    if nd <= 2:
        if t.ndim > 1 or (nd == 1 and int(np.prod(t.shape)) != 1):
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


@autocast_listed("fp32")
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
    batched = _active[0] and isinstance(target, Tensor) and label_smoothing <= 0   # (vmap may batch the target)
    nll = _nll(ls, target if batched else t, weight, reduction, ignore_index)
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
    if out_features and nd == 1:
        raise RuntimeError(f"K-dimensional loss defined by linear_weight shape {ws} requires batched input, "
                           f"(N, {in_features}), got unbatched input with shape {tuple(input.shape)}")
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


# --- regression losses ---------------------------------------------------------------------------------------
def _bcast(a, b):
    if a.shape != b.shape:
        shape = broadcast_or_error(a.shape, b.shape)
        a, b = np.broadcast_to(a, shape), np.broadcast_to(b, shape)
    d = np.result_type(a, b)
    return a.astype(d, copy=False), b.astype(d, copy=False)


class _PairLoss(Primitive):
    """Shared forward of the elementwise (input, target) losses; subclasses give ``loss`` and ``dloss``."""

    kernel = ""
    half_in_float = False     # whether torch computes a Half loss in float32 (rounding once) or in Half's steps

    @classmethod
    def forward(cls, ctx, x, y, reduction, param):
        x, y = _bcast(x, y)
        _float_only(cls.__name__, cls.kernel, x)
        ctx.save_inputs(0, 1)
        ctx.reduction, ctx.param, ctx.shape = reduction, param, x.shape
        if cls.half_in_float and x.dtype == np.float16:    # (torch computes each Half loss in float32, rounds once)
            return _red_np(cls.loss(x.astype(np.float32) - y.astype(np.float32), param).astype(np.float16),
                           reduction)
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
    def dloss(g, d, beta):        # torch's: -1 below -beta, 1 above beta, d / beta between (and at NaN)
        da = d._array
        return g * _w(da > beta, 1.0, _w(da < -beta, -1.0, d / beta))


class HuberLoss(_PairLoss):
    kernel = "huber_cpu"
    half_in_float = True

    @staticmethod
    def loss(d, delta):
        a = np.abs(d)
        return np.where(a < delta, 0.5 * d * d, delta * (a - 0.5 * delta))

    @staticmethod
    def dloss(g, d, delta):       # torch's: -delta below -delta, delta above, d between (and at NaN)
        da = d._array
        return g * _w(da > delta, float(delta), _w(da < -delta, -float(delta), d))


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


@autocast_listed("fp32")
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
        if t.dtype != x.dtype:      # (torch's kernel takes input and target of one dtype; weight may differ)
            raise RuntimeError(f"Found dtype {_legacy_name(t)} but expected {_legacy_name(x)}")
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
        td = t.dtype
        x, t = _bcast(x, t)
        _float_only("binary_cross_entropy_with_logits", "binary_cross_entropy_with_logits", x)
        sp = np.log1p(np.exp(-np.abs(x))) + np.maximum(-x, 0)         # softplus(-x) = -log sigmoid(x)
        if pos_weight is not None:
            loss = (1 - t) * x + (1 + (pos_weight - 1) * t) * sp
        else:
            loss = (1 - t) * x + sp
        if weight is not None:
            loss = loss * weight
        loss = np.asarray(loss, td if td.kind == "f" else x.dtype)   # (torch: (1 - target).mul_(input))
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
    td = target._array.dtype
    if td == np.bool_:      # (torch computes 1 - target first)
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or "
                           "`logical_xor()` operator instead.")
    if td.kind in "iu" and d.kind in "fc":
        raise RuntimeError(f"result type {_legacy_name(input._array)} can't be cast to the desired output type "
                           f"{_legacy_name(target._array)}")
    return BinaryCrossEntropyWithLogits.apply(input, target, _arr(weight, d), _arr(pos_weight, d), reduction)


def _int_reduction(reduction):
    if isinstance(reduction, int) and not isinstance(reduction, bool):
        return ("none", "mean", "sum")[reduction]
    return reduction


@autocast_listed("fp32")
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


@autocast_listed("fp32")
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
        from ... import creation        # (a factory: a compiled region's constant)
        var = creation.full(tuple(input.shape), float(var), dtype=input.dtype)
    elif (sample_data(var) < 0).any():
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
    var = _clamp_min_keep_grad(var, eps)      # clamp(min=eps) that lets the gradient through
    d = input - target
    loss = 0.5 * (var.log() + d * d / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


# --- connectionist temporal classification ----------------------------------------------------------------------
def _logaddexp3(a, b, c):
    """log(e^a + e^b + e^c) elementwise, -inf where all three are -inf."""
    m = np.maximum(np.maximum(a, b), c)
    safe = np.where(np.isneginf(m), 0, m)
    return np.where(np.isneginf(m), -np.inf, safe + np.log(np.exp(a - safe) + np.exp(b - safe) + np.exp(c - safe)))


class CtcLoss(Primitive):
    """The negative log-likelihood of each target under CTC, by the forward (alpha) recursion over the target with
    blanks interleaved (``l' = blank, l1, blank, l2, ..., blank``); the backward runs the beta recursion. Inputs:
    log_probs ``(T, N, C)``, targets padded to ``(N, S)``, lengths as int arrays."""

    @staticmethod
    def forward(ctx, lp, targets, in_len, tgt_len, blank, zero_infinity):
        T, N, C = lp.shape
        S = int(tgt_len.max()) if N else 0
        L = 2 * S + 1
        ext = np.full((N, L), blank, np.int64)               # l' per sample (blank past its end)
        ext[:, 1::2] = targets[:, :S]
        s_idx = np.arange(L)
        valid = s_idx[None, :] < (2 * tgt_len[:, None] + 1)
        # s may also come from s - 2 when l'_s is a label that differs from l'_{s-2}
        skip = np.zeros((N, L), bool)
        skip[:, 2:] = (ext[:, 2:] != blank) & (ext[:, 2:] != ext[:, :-2])
        rows = np.arange(N)[:, None]
        neg = np.asarray(-np.inf, lp.dtype)
        emit = lp[:, rows, ext]                               # (T, N, L): log y_t(l'_s)
        alpha = np.full((T, N, L), -np.inf, lp.dtype)
        if T:
            alpha[0, :, :2] = emit[0, :, :2]
            alpha[0] = np.where(valid, alpha[0], neg)
        for t in range(1, T):
            prev = alpha[t - 1]
            a1 = np.concatenate([np.full((N, 1), neg), prev[:, :-1]], 1)
            a2 = np.where(skip, np.concatenate([np.full((N, 2), neg), prev[:, :-2]], 1), neg)
            alpha[t] = np.where(valid, emit[t] + _logaddexp3(prev, a1, a2), neg)
        last = np.maximum(in_len - 1, 0)
        end = alpha[last, np.arange(N)]                       # (N, L) at each sample's last frame
        e1 = end[np.arange(N), 2 * tgt_len]
        e2 = np.where(tgt_len > 0, end[np.arange(N), np.maximum(2 * tgt_len - 1, 0)], neg)
        nll = -np.logaddexp(e1, e2)
        nll = np.where(in_len > 0, nll, np.where(tgt_len == 0, 0.0, np.inf)).astype(lp.dtype)
        ctx.lp, ctx.alpha, ctx.nll, ctx.emit = lp, alpha, nll, emit
        ctx.ext, ctx.valid, ctx.skip, ctx.in_len, ctx.tgt_len = ext, valid, skip, in_len, tgt_len
        ctx.zero_infinity = zero_infinity
        return nll

    @staticmethod
    @once_differentiable
    def backward(ctx, grad):
        lp, alpha, nll, emit = ctx.lp, ctx.alpha, ctx.nll, ctx.emit
        ext, valid, skip, in_len, tgt_len = ctx.ext, ctx.valid, ctx.skip, ctx.in_len, ctx.tgt_len
        T, N, C = lp.shape
        L = ext.shape[1]
        neg = np.asarray(-np.inf, lp.dtype)
        n_idx = np.arange(N)
        beta = np.full((T, N, L), -np.inf, lp.dtype)
        # s + 2 feeds s when l'_{s+2} may skip to it
        skip_from = np.zeros((N, L), bool)
        skip_from[:, :-2] = skip[:, 2:]
        for t in range(T - 1, -1, -1):
            start = in_len - 1 == t
            init = np.full((N, L), neg)
            init[n_idx, 2 * tgt_len] = emit[t, n_idx, 2 * tgt_len]
            two = np.maximum(2 * tgt_len - 1, 0)
            init[n_idx, two] = np.where(tgt_len > 0, emit[t, n_idx, two], init[n_idx, two])
            if t < T - 1:
                nxt = beta[t + 1]
                b1 = np.concatenate([nxt[:, 1:], np.full((N, 1), neg)], 1)
                b2 = np.where(skip_from, np.concatenate([nxt[:, 2:], np.full((N, 2), neg)], 1), neg)
                rec = emit[t] + _logaddexp3(nxt, b1, b2)
            else:
                rec = np.full((N, L), neg)
            beta[t] = np.where(valid, np.where(start[:, None], init, np.where((t < in_len - 1)[:, None], rec, neg)),
                               neg)
        # log of sum over s with l'_s = c of alpha * beta, per (t, n, c)
        ab = alpha + beta
        lcab = np.full((T, N, C), -np.inf, lp.dtype)
        for s in range(L):
            c = ext[:, s]
            cur = lcab[:, n_idx, c]
            lcab[:, n_idx, c] = np.logaddexp(cur, np.where(valid[:, s], ab[:, :, s], neg))
        g = np.asarray(grad._array if isinstance(grad, Tensor) else grad, lp.dtype)
        res = (np.exp(lp) - np.exp(lcab + nll[None, :, None] - lp)) * g[None, :, None]
        active = np.arange(T)[:, None] < in_len[None, :]
        res = np.where(active[:, :, None], res, 0)
        if ctx.zero_infinity:
            res = np.where(np.isinf(nll)[None, :, None], 0, res)
        return Tensor._make(res.astype(lp.dtype, copy=False)), None, None, None, None, None


def _lengths(name, v, N):
    arr = np.asarray(v._array if isinstance(v, Tensor) else v)
    if arr.dtype.kind not in "iu":
        arr = arr.astype(np.int64)
    arr = arr.astype(np.int64).reshape(-1)
    if arr.shape[0] != N:
        raise RuntimeError(f"{name} must be of size batch_size")
    return arr


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean", zero_infinity=False):
    """The connectionist temporal classification loss: ``-log`` of the total probability of every alignment of
    each target to its input frames (blanks and repeats collapsed).

    ``log_probs`` ``(T, N, C)`` (or ``(T, C)``), normally ``log_softmax`` outputs; ``targets`` ``(N, S)`` padded or
    1-D concatenated; ``input_lengths`` and ``target_lengths`` per sample (tensors or sequences). ``"mean"`` divides
    each loss by its target length, then averages; ``zero_infinity`` turns impossible alignments' infinite losses
    (and their gradients) into zeros. The gradient is torch's (``exp(log_probs) - posterior``: the gradient through a
    ``log_softmax`` is then exact).

    >>> lp = tapegrad.zeros(3, 1, 2).log_softmax(2)
    >>> F.ctc_loss(lp, tapegrad.tensor([[1]]), [3], [1], reduction="sum")
    tensor(0.2877)
    """
    if _active[0]:       # (vmap with a batched targets: once per sample)
        r = vmap_per_sample(ctc_loss,
                            (log_probs, targets, input_lengths, target_lengths, blank, reduction, zero_infinity), None,
                            (targets, input_lengths, target_lengths))
        if r is not NotImplemented:
            return r
    reduction = _reduction(_int_reduction(reduction))
    batched = log_probs.ndim == 3
    if not batched:
        if log_probs.ndim != 2:
            raise RuntimeError(f"ctc_loss: expected log_probs to be 2-D (T, C) or 3-D (T, N, C), got "
                               f"{shape_str(log_probs.shape)}")
        log_probs = log_probs.unsqueeze(1)
        targets = targets.unsqueeze(0) if isinstance(targets, Tensor) else targets
        input_lengths = [int(np.asarray(getattr(input_lengths, "_array", input_lengths)))]
        target_lengths = [int(np.asarray(getattr(target_lengths, "_array", target_lengths)))]
    lp = log_probs._array
    if lp.dtype.kind != "f":
        raise RuntimeError(f"ctc_loss: expected log_probs to be a floating point tensor, got {_legacy_name(lp)}")
    T, N, C = lp.shape
    if not 0 <= blank < C:
        raise RuntimeError("blank must be in label range")
    il = _lengths("input_lengths", input_lengths, N)
    tl = _lengths("target_lengths", target_lengths, N)
    tg = np.asarray(targets._array if isinstance(targets, Tensor) else targets)
    if tg.dtype.kind == "f":
        tg = tg.astype(np.int64)
    where = "(while checking arguments for ctc_loss_allocate_outputs)"
    if tg.ndim == 1:
        if tg.shape[0] < tl.sum():
            raise RuntimeError(f"Expected tensor to have size at least {int(tl.sum())} at dimension 0, but got size "
                               f"{tg.shape[0]} for argument #2 'targets' {where}")
        padded = np.zeros((N, int(tl.max()) if N else 0), np.int64)
        offsets = np.concatenate([[0], np.cumsum(tl)[:-1]]).astype(np.int64)
        for n in range(N):
            padded[n, :tl[n]] = tg[offsets[n]:offsets[n] + tl[n]]
        tg = padded
    else:
        if N and tg.shape[1] < tl.max():
            raise RuntimeError(f"Expected tensor to have size at least {int(tl.max())} at dimension 1, but got size "
                               f"{tg.shape[1]} for argument #2 'targets' {where}")
    for name, arr, hi in (("input_lengths", il, T), ("target_lengths", tl, None)):
        if arr.size and arr.min() < 0:
            raise RuntimeError(f"Expected {name} to have value at least 0, but got value {int(arr.min())} {where}")
        if hi is not None and arr.size and arr.max() > hi:
            raise RuntimeError(f"Expected {name} to have value at most {hi}, but got value {int(arr.max())} {where}")
    used = tg[np.arange(tg.shape[1])[None, :] < tl[:, None]] if tg.size else tg.reshape(-1)
    if used.size and (used.min() < 0 or used.max() >= C):
        bad = int(used.max() if used.max() >= C else used.min())
        raise RuntimeError(f"ctc_loss: target index {bad} is out of bounds for {C} classes")
    nll = CtcLoss.apply(log_probs, tg.astype(np.int64), il, tl, int(blank), bool(zero_infinity))
    if zero_infinity:
        inf = np.isinf(nll._array)
        nll = _Where.apply(inf, Tensor._make(np.zeros((), nll._array.dtype)), nll)
    if reduction == "mean":
        out = (nll / Tensor._make(np.maximum(tl, 1).astype(lp.dtype))).mean()
    elif reduction == "sum":
        out = nll.sum()
    else:
        out = nll
    return out if batched or reduction != "none" else out.squeeze(0)
