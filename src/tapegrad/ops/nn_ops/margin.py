# ruff: noqa: A001, A002 - torch's argument name is `input`
"""Margin and embedding losses: margin ranking, hinge embedding, soft margin, multilabel soft margin,
triplet (and with a distance function), cosine embedding, multi margin, multilabel margin; pairwise_distance.
"""

from __future__ import annotations

import numpy as np

from ... import _dtype
from ...autograd.function import _active

from .._util import Primitive, Tensor, broadcast_or_error, capturing, shape_str, vmap_per_sample
from ._common import (_ClampMin, _LogSigmoid, _MaskedFill, _Norm, _Where, _arr, _check_no_grad_arg, _red_back, _red_np,
                      _reduce, _reduction)
from .losses import _int_reduction, _size_repr
from .._util import autocast_listed


# --- margin losses --------------------------------------------------------------------------------------------
@autocast_listed("fp32")
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


@autocast_listed("fp32")
def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None, reduction="mean"):
    """input where target == 1, max(0, margin - input) where target == -1, reduced.

    >>> F.hinge_embedding_loss(tapegrad.tensor([0.3, 2.]), tapegrad.tensor([-1., 1.]))
    tensor(1.3500)
    """
    reduction = _reduction(_int_reduction(reduction), size_average, reduce)
    t = _arr(target)
    broadcast_or_error(t.shape, tuple(input.shape))     # (torch names the target "tensor a")
    margin_clamp = _ClampMin.apply(margin - input, 0)
    if _active[0] and isinstance(target, Tensor):      # (a transform sees the masks: vmap may batch the target)
        is_pos, is_neg = target == 1, target == -1
    else:
        is_pos, is_neg = np.broadcast_to(t == 1, margin_clamp.shape), np.broadcast_to(t == -1, input.shape)
    out_margin = _MaskedFill.apply(margin_clamp, is_pos, 0.0)
    out_self = _MaskedFill.apply(input, is_neg, 0.0)
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
    t = _arr(target, input._array.dtype)
    broadcast_or_error(tuple(input.shape), t.shape)     # (torch names the input "tensor a")
    return SoftMarginLoss.apply(input, t, reduction)


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


@autocast_listed("fp32")
def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False, size_average=None,
                        reduce=None, reduction="mean"):
    """max(0, margin + d(anchor, positive) - d(anchor, negative)) with pairwise distances, reduced.

    >>> a = tapegrad.tensor([[0., 0.]])
    >>> F.triplet_margin_loss(a, a, a + 3)
    tensor(0.)
    """
    reduction = _reduction(_int_reduction(reduction), size_average, reduce)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    dims = {anchor._array.ndim, positive._array.ndim, negative._array.ndim}
    if len(dims) != 1:
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the same number of "
                           f"dimensions, but got: anchor {anchor._array.ndim}D, positive {positive._array.ndim}D, "
                           f"and negative {negative._array.ndim}D inputs")
    d_pos = _pairwise_distance(anchor, positive, p, eps, False)
    d_neg = _pairwise_distance(anchor, negative, p, eps, False)
    if swap:
        d_swap = _pairwise_distance(positive, negative, p, eps, False)
        d_neg = _Where.apply(d_neg <= d_swap, d_neg, d_swap)   # (a comparison op: transforms see it)
    return _reduce(_ClampMin.apply(margin + d_pos - d_neg, 0), reduction)


@autocast_listed("fp32")
def cosine_embedding_loss(input1, input2, target, margin=0, size_average=None, reduce=None, reduction="mean"):
    """1 - cos(x1, x2) where target == 1, max(0, cos(x1, x2) - margin) where target == -1, reduced.

    >>> F.cosine_embedding_loss(tapegrad.tensor([[1., 0.]]), tapegrad.tensor([[0., 1.]]), tapegrad.tensor([1]))
    tensor(1.)
    """
    if _active[0]:       # (vmap with a batched target: once per sample)
        r = vmap_per_sample(cosine_embedding_loss, (input1, input2, target, margin, size_average, reduce, reduction),
                            None, (target,))
        if r is not NotImplemented:
            return r
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
    if _active[0] and isinstance(target, Tensor) and capturing():   # (compile's capture: masks made per replay)
        out = _MaskedFill.apply(pos, target, 0.0, unless=1) + _MaskedFill.apply(neg, target, 0.0, unless=-1)
    else:
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


def _check_margin_input(x):
    """torch's shape check of the multi-class margin losses' input."""
    if not (x.ndim == 0 or (x.ndim == 1 and x.shape[0]) or (x.ndim == 2 and x.shape[1])):
        raise RuntimeError(f"Expected non-empty vector or matrix with optional 0-dim batch size, but got: "
                           f"{shape_str(x.shape)}")


def _check_long(target):
    if isinstance(target, Tensor) and target.dtype is not _dtype.int64:
        raise RuntimeError(f"expected scalar type Long but found {target.dtype._legacy}")


def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None, reduce=None,
                      reduction="mean"):
    """Multi-class hinge loss: mean over classes i != y of max(0, margin - x[y] + x[i]) ** p, reduced.

    >>> F.multi_margin_loss(tapegrad.tensor([[0., 0.]]), tapegrad.tensor([0]))
    tensor(0.5000)
    """
    if _active[0]:       # (vmap with a batched target: once per sample)
        r = vmap_per_sample(multi_margin_loss, (input, target, p, margin, weight, size_average, reduce, reduction),
                            None, (target,))
        if r is not NotImplemented:
            return r
    reduction = _reduction(reduction, size_average, reduce)
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.ndim != 1:
        raise ValueError("weight must be one-dimensional")
    _check_no_grad_arg("multi_margin_loss", "weight", weight)
    x = input._array
    _check_margin_input(x)
    nframe, dim = (1, x.size) if x.ndim <= 1 else x.shape
    t = _arr(target)
    if t.ndim > 1 or t.size != nframe:
        raise RuntimeError("multi_margin_loss: target tensor should be 1-D with size equal to the number of input "
                           f"samples (batch size). Expected target size [{nframe}], but got "
                           f"{shape_str(t.shape)}. Input has shape {shape_str(x.shape)}.")
    if weight is not None and weight.numel() != dim:
        raise RuntimeError(f"inconsistent weight size, expected {dim} but got {shape_str(weight.shape)}")
    _check_long(target)
    return MultiMarginLoss.apply(input, t, p, float(margin), _arr(weight, x.dtype), reduction)


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
        d_neg = _Where.apply(d_neg <= d_swap, d_neg, d_swap)   # (a comparison op: transforms see it)
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
    if _active[0]:       # (vmap with a batched target: once per sample)
        r = vmap_per_sample(multilabel_margin_loss, (input, target, size_average, reduce, reduction), None, (target,))
        if r is not NotImplemented:
            return r
    reduction = _reduction(reduction, size_average, reduce)
    _check_margin_input(input._array)
    t = _arr(target)
    if t.shape != tuple(input.shape):
        raise RuntimeError(f"inconsistent target size: {shape_str(t.shape)} for input of size: "
                           f"{shape_str(input.shape)}")
    _check_long(target)
    return MultilabelMarginLoss.apply(input, t.astype(np.intp), reduction)
