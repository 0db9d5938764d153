# ruff: noqa: A001, A002 - torch's argument name is `input`
"""Classification losses (nll_loss, cross_entropy, linear_cross_entropy) and regression / probabilistic
losses (mse, l1, smooth_l1, huber, binary cross entropy, kl_div, poisson and gaussian nll).
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from .._util import Primitive, Tensor, broadcast_or_error, shape_str
from ..elementwise._common import _w
from ._common import (_ClampMin, _DivScalar, _LogSigmoid, _MaskedFill, _Xlogy, _arr, _c, _check_no_grad_arg,
                      _float_only, _legacy_name, _red_back, _red_np, _reduce, _reduction, _size_warn)
from .linear import LogSoftmax, _View, linear


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
    def dloss(g, d, beta):        # torch's: -1 below -beta, 1 above beta, d / beta between (and at NaN)
        da = d._array
        return g * _w(da > beta, 1.0, _w(da < -beta, -1.0, d / beta))


class HuberLoss(_PairLoss):
    kernel = "huber_cpu"

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
