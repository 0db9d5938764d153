# ruff: noqa: A001, A002 - torch's argument name is `input`
"""Distances and similarity (normalize, cosine_similarity, pdist) and
scaled_dot_product_attention.
"""

from __future__ import annotations

import math

import numpy as np

from ...autograd.grad_mode import _state
from .._util import Primitive, Tensor, broadcast_or_error, normalize_dim, shape_str
from ..elementwise.unary import _sign
from ._common import _ClampMin, _MaskedFill, _RowGather, _RowScatter, _T, _arr, _c, _norm
from .linear import Softmax
from .dropouts import dropout


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
    shape = broadcast_or_error(tuple(x1.shape), tuple(x2.shape))
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
        return grad * _sign(x._array)
    safe = result + (result._array == 0)
    if p == 2:
        return grad * x / safe
    if p == math.inf:
        amax = (np.abs(x._array) == result._array) & (result._array != 0)
        return grad * (_sign(x._array) * amax / np.maximum(amax.sum(-1, keepdims=True), 1))
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
