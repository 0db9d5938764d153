"""Batching rules of the ``nn.functional`` ops: convolution, pooling and group norm fold the batch dim into their
own batch dim N (or use it as N for unbatched input); layer norm and embedding run on the physical arrays as they
are; the losses run with ``reduction="none"`` and reduce each sample afterwards."""

from __future__ import annotations

import numpy as np

from ...ops.conv import convolution as _cv
from ...ops.conv import pooling as _pl
from ...ops.nn_ops import embeddings as _em
from ...ops.nn_ops import losses as _lo
from ...ops.nn_ops import normalization as _nm
from ...tensor import Tensor
from . import ldim, materialize, only_first_batched, pad_to, register, reshaped
from .elementwise import broadcast_args


def _fold(cls, p, n, spatial, rest, kwargs):
    """Run ``cls`` with the batch dim folded into N (logical input with N) or used as N (logical input without)."""
    if n == spatial + 1:
        return cls.apply(p, *rest, **kwargs)
    if n != spatial + 2:
        return NotImplemented
    B, N = p.shape[0], p.shape[1]
    out = cls.apply(p.reshape((B * N,) + tuple(p.shape[2:])), *rest, **kwargs)

    def unfold(o):
        return o.reshape((B, N) + tuple(o.shape[1:])) if isinstance(o, Tensor) else o
    return tuple(unfold(o) for o in out) if isinstance(out, tuple) else unfold(out)


@register(_cv.Convolution)
def _conv(level, cls, args, kwargs, phys):
    if only_first_batched(phys):
        return _fold(cls, phys[0], ldim(args[0]), ldim(args[1]) - 2, args[1:], kwargs)
    x, w, b, stride, padding, dilation, transposed, output_padding, groups = args[:9]
    if phys[1] is None or transposed or len(args) > 9 and args[9] is not None or kwargs:
        return NotImplemented
    # a weight per sample (an ensemble): one grouped convolution, the batch folded into the channels
    s, n = ldim(w) - 2, ldim(x)
    if n not in (s + 1, s + 2):
        return NotImplemented
    X = materialize(level, x, phys[0])
    if n == s + 1:
        X = X.unsqueeze(1)
    B, N = X.shape[0], X.shape[1]
    W = phys[1]
    X2 = X.movedim(0, 1).reshape((N, B * X.shape[2]) + tuple(X.shape[3:]))
    W2 = W.reshape((B * W.shape[1],) + tuple(W.shape[2:]))
    b2 = None if b is None else materialize(level, b, phys[2]).reshape((B * W.shape[1],))
    out = cls.apply(X2, W2, b2, stride, padding, dilation, False, output_padding, groups * B)
    out = out.reshape((N, B, W.shape[1]) + tuple(out.shape[2:])).movedim(1, 0)
    return out.squeeze(1) if n == s + 1 else out


_POOL = {**{c: d for d, c in _pl._MaxPool.items()}, **{c: d for d, c in _pl._AdaptiveMax.items()}}


@register(*_POOL)
def _pool(level, cls, args, kwargs, phys):
    if not only_first_batched(phys):
        return NotImplemented
    return _fold(cls, phys[0], ldim(args[0]), _POOL[cls], args[1:], kwargs)


@register(_nm.NativeGroupNorm)
def _group_norm(level, cls, args, kwargs, phys):
    if not only_first_batched(phys):
        return NotImplemented
    n = ldim(args[0])
    return _fold(cls, phys[0], n, n - 2, args[1:], kwargs) if n >= 2 else NotImplemented


@register(_nm.NativeLayerNorm)
def _layer_norm(level, cls, args, kwargs, phys):
    if only_first_batched(phys):
        return cls.apply(phys[0], *args[1:], **kwargs)
    x, w, b, k, eps = args
    n = ldim(x)
    out = cls.apply(materialize(level, x, phys[0]), None, None, k, eps)    # (a weight per sample: applied after)
    if w is not None:
        out = out * (pad_to(phys[1], k, n) if phys[1] is not None else w)
    if b is not None:
        out = out + (pad_to(phys[2], k, n) if phys[2] is not None else b)
    return out


@register(_em.Embedding)
def _embedding(level, cls, args, kwargs, phys):
    if phys[0] is not None or any(p is not None for p in phys[2:]):
        return NotImplemented
    return cls.apply(args[0], phys[1], *args[2:], **kwargs)


# --- losses --------------------------------------------------------------------------------------------------------
def _reduce(out, n, reduction):
    if reduction == "none" or n == 0:
        return out
    dims = tuple(range(1, n + 1))
    return out.sum(dims) if reduction == "sum" else out.mean(dims)


def _pair_loss(pos):
    def rule(level, cls, args, kwargs, phys):
        args = list(args)
        reduction = args[pos]
        n = max(ldim(a) for a in args[:2] if isinstance(a, Tensor))
        phys = list(phys)
        if ldim(args[0]) == ldim(args[1]):           # (input and target batched alike: some losses want equal shapes)
            for i in (0, 1):
                if phys[i] is None:
                    phys[i] = level.broadcast(args[i])
        b = list(broadcast_args(args, phys))
        b[pos] = "none"
        return _reduce(cls.apply(*b, **kwargs), n, reduction)
    return rule


register(_lo.MseLoss, _lo.HuberLoss, _lo.SmoothL1Loss, _lo._PairLoss)(_pair_loss(2))
register(_lo.BinaryCrossEntropy)(_pair_loss(3))
register(_lo.BinaryCrossEntropyWithLogits)(_pair_loss(4))


@register(_lo.NllLoss)
def _nll(level, cls, args, kwargs, phys):
    x, t, weight, reduction, ignore_index = args
    if len(phys) > 2 and phys[2] is not None:
        return NotImplemented
    n = ldim(x)
    if n not in (1, 2):
        return NotImplemented
    X = materialize(level, x, phys[0])
    B = X._array.shape[0]
    if isinstance(t, Tensor):
        T = materialize(level, t, phys[1])
    else:
        T = Tensor._make(np.broadcast_to(np.asarray(t), (B,) + np.shape(t)))
    if n == 2:
        N = X._array.shape[1]
        if level.level == 0 and not T.requires_grad:    # (nothing below this vmap: the class indices' array itself)
            flat_t = Tensor._make(T._array.reshape(B * N))
        else:
            flat_t = T.reshape((B * N,))
        loss = cls.apply(reshaped(X, (B * N, X._array.shape[2])), flat_t, weight, "none", ignore_index)
        if N != 1 or reduction == "none":
            loss = reshaped(loss, (B, N))
        elif reduction == "sum":
            return loss
    else:
        loss = cls.apply(X, T, weight, "none", ignore_index)
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum(1) if loss.dim() == 2 else loss
    ta = np.asarray(T._array)
    keep = ta != ignore_index
    if weight is None and keep.all():            # (the common case: the mean over each sample's rows)
        shape = loss._array.shape
        return loss.mean(1) if len(shape) == 2 else loss if shape == (B,) else loss.reshape((B,))
    if weight is not None:
        w = np.asarray(getattr(weight, "_array", weight))[np.where(keep, ta, 0)]
    else:
        w = np.ones(ta.shape, X._array.dtype)
    w = np.where(keep, w, 0).astype(X._array.dtype)
    den = Tensor._make(w.sum(1) if n == 2 else w)
    return (loss.sum(1) if loss.dim() == 2 else loss) / den
