# ruff: noqa: A001, A002 - torch's argument name is `input`
"""channel_shuffle, and the ``torch.xxx`` versions of nn.functional ops whose signature differs (ATen's
argument order, integer reductions): ``tapegrad.batch_norm``, ``tapegrad.embedding``, ``tapegrad.kl_div``...
"""

from __future__ import annotations

import numpy as np

from .._util import Primitive, linear_jvp, shape_str
from ._common import _reduce
from .losses import _int_reduction, _kl_terms, binary_cross_entropy_with_logits, kl_div, poisson_nll_loss
from .margin import cosine_embedding_loss, hinge_embedding_loss, margin_ranking_loss, triplet_margin_loss
from .normalization import batch_norm, group_norm, instance_norm, layer_norm
from .dropouts import _dropout_impl, alpha_dropout, dropout, feature_alpha_dropout
from .embeddings import embedding


# --- channel shuffle -------------------------------------------------------------------------------------------
class ChannelShuffle(Primitive):
    """Channels (dim 1) regrouped from (g, C/g) to (C/g, g) order."""

    jvp = staticmethod(linear_jvp)   # linear: the op itself applied to the tangents

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
    "dropout": dropout, "alpha_dropout": alpha_dropout, "feature_alpha_dropout": feature_alpha_dropout,
    "layer_norm": layer_norm, "group_norm": group_norm,
}
_FO = FUNCTIONAL_OVERRIDES


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


def _torch_layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5, cudnn_enable=True):
    """``torch.layer_norm`` (ATen's ``cudnn_enable`` flag, which changes nothing on the CPU)."""
    return _FO["layer_norm"](input, normalized_shape, weight, bias, eps)


def _torch_group_norm(input, num_groups, weight=None, bias=None, eps=1e-5, cudnn_enabled=True):
    """``torch.group_norm`` (ATen's ``cudnn_enabled`` flag, which changes nothing on the CPU)."""
    return _FO["group_norm"](input, num_groups, weight, bias, eps)


# ATen's dropouts (``torch.dropout(input, p, train)``: ``train``, no defaults, a RuntimeError for a bad ``p``,
# where ``nn.functional.dropout`` says ``training`` and raises a ValueError)
def _aten_p(p):
    if not 0 <= p <= 1:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {p:g}")
    return p


def _aten_dropout(name, inplace, alpha, feature):
    """One of ATen's eight dropouts: ``(input, p, train)``, a function (and code object, which Python's and
    ``_argtypes``' TypeErrors name) of its own."""
    def fn(input, p, train):
        return _dropout_impl(input, _aten_p(p), train, inplace, alpha, feature)
    fn.__code__ = fn.__code__.replace(co_name=name, co_qualname=name)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"``torch.{name}``: {'in-place ' if inplace else ''}{'alpha ' if alpha else ''}dropout"
                  f"{' of whole channels (dim 1)' if feature else ''}, ATen's form.")
    return fn


# name: (inplace, alpha, feature); the three nn.functional also has (its own signature) are ``_torch_``-prefixed
# here and renamed by the loop below
for _n, _flags in {"dropout": (False, False, False), "dropout_": (True, False, False),
                   "alpha_dropout": (False, True, False), "alpha_dropout_": (True, True, False),
                   "feature_dropout": (False, False, True), "feature_dropout_": (True, False, True),
                   "feature_alpha_dropout": (False, True, True), "feature_alpha_dropout_": (True, True, True)}.items():
    globals()[("_torch_" if _n in FUNCTIONAL_OVERRIDES else "") + _n] = _aten_dropout(_n, *_flags)
del _flags


for _n in list(FUNCTIONAL_OVERRIDES):
    _f = globals()["_torch_" + {"binary_cross_entropy_with_logits": "bce_with_logits"}.get(_n, _n)]
    _f.__name__ = _n
    _f.__code__ = _f.__code__.replace(co_name=_n, co_qualname=_n)     # (Python's TypeErrors name it so)
    globals()[_n] = _f
del _n, _f


native_channel_shuffle = channel_shuffle     # (torch's name for the same op, without the autograd-friendly path)
