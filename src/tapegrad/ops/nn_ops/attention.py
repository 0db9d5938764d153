# ruff: noqa: A001, A002 - torch's argument name is `input`
"""Distances and similarity (normalize, cosine_similarity, pdist), scaled_dot_product_attention and
multi_head_attention_forward.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from ... import _dtype
from ...autograd.function import _active
from ...autograd.grad_mode import _state
from .._util import Primitive, Tensor, broadcast_or_error, normalize_dim, shape_str
from ..reduce.stats import _norm_grad, _vector_norm_np
from ._common import _ClampMin, _clamp_min_keep_grad, _MaskedFill, _RowGather, _RowScatter, _T, _arr, _norm
from .linear import Softmax, linear, softmax
from .dropouts import dropout

_sdpa_limits = None     # tapegrad.nn.attention, once imported: sdpa_kernel's allowed kernels (it hooks in here)


# --- distances and similarity ---------------------------------------------------------------------------------
def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """``input / max(||input||_p, eps)`` along ``dim``.

    >>> F.normalize(tapegrad.tensor([[3., 4.]]))
    tensor([[0.6000, 0.8000]])
    """
    d = normalize_dim(dim, input._array.ndim)
    denom = _ClampMin.apply(_norm(input, p, (d,) if input._array.ndim else (), True), eps).expand(input.shape)
    if out is not None:                     # (torch.div(input, denom, out=out): written into out)
        from ..reduce._common import _write_out
        return _write_out("div", input / denom, out)
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
    n1 = _clamp_min_keep_grad(_norm(x1, 2, dims, True), eps)
    n2 = _clamp_min_keep_grad(_norm(x2, 2, dims, True), eps)
    return ((x1 / n1) * (x2 / n2)).sum(d)


class Pdist(Primitive):
    """Distances between all pairs i < j of rows of a 2-d input."""

    @staticmethod
    def forward(ctx, x, p):
        if x.ndim != 2:
            raise RuntimeError(f"pdist only supports 2D tensors, got: {x.ndim}D")
        if p < 0:
            raise RuntimeError("pdist only supports non-negative p values")
        if x.dtype == np.float16:
            raise NotImplementedError("\"pdist\" not implemented for 'Half'")
        i, j = np.triu_indices(x.shape[0], 1)
        ctx.i, ctx.j, ctx.p, ctx.n = i, j, p, x.shape[0]
        ctx.save_result(0)
        return np.asarray(_vector_norm_np(x[i] - x[j], p, 1, False), x.dtype)

    @staticmethod
    def backward(ctx, grad):
        result, x = ctx.saved_tensors
        diff = _RowGather.apply(x, ctx.i) - _RowGather.apply(x, ctx.j)
        gd = _norm_grad(diff, result.unsqueeze(1), grad.unsqueeze(1), ctx.p, (1,))
        return _RowScatter.apply(gd, ctx.i, ctx.n, None) - _RowScatter.apply(gd, ctx.j, ctx.n, None), None


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


def _flash_half(q, k, v, bias, scale):
    """torch's fused CPU kernel on Half: scores and their exponentials in float32, the unnormalised weights
    rounded to Half for the product with v (accumulated in float32), divided by the float32 sum, rounded once.
    Bit for bit torch's below 16 keys; from 16 keys on, its vectorised exp and sums round differently, a unit in
    the last place for a fraction of the outputs (and beyond 512 keys it rescales block by block)."""
    f = np.float32
    s = (q.astype(f) @ np.swapaxes(k.astype(f), -1, -2)) * f(scale)
    if bias is not None:
        s = s + bias.astype(f)
    m = s.max(-1, keepdims=True)
    m = np.where(np.isfinite(m), m, f(0))
    e = np.exp(s - m)
    tot = e.sum(-1, keepdims=True)
    out = e.astype(np.float16).astype(f) @ v.astype(f)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(tot > 0, out / np.where(tot > 0, tot, 1), 0).astype(np.float16)


def _laid_out_like(out, q):
    """``out`` in memory in the order of ``q``'s dims (torch's fused CPU kernel allocates its output like the
    query: heads split from a ``(B, L, H*E)`` projection give an output whose ``transpose(1, 2)`` is contiguous, so
    ``.view(B, L, H*E)`` works on it)."""
    order = sorted(range(q.ndim), key=lambda i: -q.strides[i])       # (stable: equal strides keep their order)
    if order == list(range(q.ndim)) or 0 in q.strides:
        return out
    return np.ascontiguousarray(out.transpose(order)).transpose(np.argsort(order))


class ScaledDotProductFlashAttentionForCpu(Primitive):
    """softmax(q kᵀ * scale + bias) v; backward in tapegrad ops from q, k, v (so it is twice differentiable)."""

    @staticmethod
    def forward(ctx, q, k, v, bias, scale):
        d = np.result_type(q, k, v)
        ctx.save_inputs(0, 1, 2)
        ctx.bias, ctx.scale = bias, scale
        if d == np.float16:
            return _laid_out_like(_flash_half(q, k, v, bias, scale), q)
        q_in = q
        q, k, v = q.astype(d, copy=False), k.astype(d, copy=False), v.astype(d, copy=False)
        s = (q @ np.swapaxes(k, -1, -2)) * scale
        if bias is not None:
            s = s + bias
        p = _safe_softmax_np(s)
        return _laid_out_like(p @ v, q_in)

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
    if _sdpa_limits is not None and not _sdpa_limits.math_allowed():
        raise RuntimeError(_sdpa_limits.NO_KERNEL)
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
    # (a float mask is a constant of the fused kernel: it takes the math path when it needs a gradient, or a
    #  function transform is active, which may give it a tangent or a batch dim)
    grad_mask = float_mask and ((attn_mask._rg and _state.enabled) or _active[0])
    if len(qs) == 4 and dropout_p == 0.0 and vs[-1] == E and not grad_mask and \
            (_sdpa_limits is None or _sdpa_limits.flash_allowed()):
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


# --- multi-head attention (nn.MultiheadAttention's computation) ----------------------------------------------
def _canonical_mask(mask, mask_name, other_type, other_name, target_type, check_other=True):
    """A bool mask becomes a float mask (``-inf`` where True); a float mask is kept."""
    if mask is None:
        return None
    is_float = mask.is_floating_point()
    if mask.dtype is not _dtype.bool and not is_float:
        raise AssertionError(f"only bool and floating types of {mask_name} are supported")
    if check_other and other_type is not None and mask.dtype is not other_type:
        warnings.warn(f"Support for mismatched {mask_name} and {other_name} is deprecated. Use same type for both "
                      "instead.", stacklevel=3)
    if not is_float:
        arr = np.where(mask._array, -np.inf, 0.0).astype(target_type.np)
        return Tensor._make(arr)
    return mask


def _none_or_dtype(x):
    return None if x is None else x.dtype


def _generate_square_subsequent_mask(sz, device=None, dtype=None):
    """A float ``(sz, sz)`` mask with ``-inf`` above the diagonal."""
    d = (_dtype.to_dtype(dtype) if dtype is not None else _dtype.get_default_dtype()).np
    return Tensor._make(np.triu(np.full((sz, sz), -np.inf, d), 1))


def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads, in_proj_weight, in_proj_bias,
                                 bias_k, bias_v, add_zero_attn, dropout_p, out_proj_weight, out_proj_bias,
                                 training=True, key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None, k_proj_weight=None,
                                 v_proj_weight=None, static_k=None, static_v=None, average_attn_weights=True,
                                 is_causal=False):
    """torch's ``F.multi_head_attention_forward`` (sequence-first layout ``(L, N, E)`` or unbatched ``(L, E)``):
    what ``nn.MultiheadAttention`` computes, written with tapegrad ops (differentiable to any order)."""
    from ...creation import zeros
    from ..conv import pad
    from ..shape import cat
    is_batched = query.dim() == 3
    if not is_batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    src_len = key.shape[0]
    key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask", _none_or_dtype(attn_mask), "attn_mask",
                                       query.dtype)
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the Transformer module "
                           "method `generate_square_subsequent_mask` to create this mask.")
    if is_causal and key_padding_mask is None and not need_weights:
        attn_mask = _generate_square_subsequent_mask(tgt_len, dtype=query.dtype)
    else:
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype, check_other=False)
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    E = embed_dim
    if not use_separate_proj_weight:
        w_q, w_k, w_v = in_proj_weight[0:E], in_proj_weight[E:2 * E], in_proj_weight[2 * E:]
    else:
        w_q, w_k, w_v = q_proj_weight, k_proj_weight, v_proj_weight
    if in_proj_bias is not None:
        b_q, b_k, b_v = in_proj_bias[0:E], in_proj_bias[E:2 * E], in_proj_bias[2 * E:]
    else:
        b_q = b_k = b_v = None
    q = linear(query, w_q, b_q)
    k = linear(key, w_k, b_k)
    v = linear(value, w_v, b_v)
    if attn_mask is not None:
        if attn_mask.dim() == 2:
            if tuple(attn_mask.shape) != (tgt_len, src_len):
                raise RuntimeError(f"The shape of the 2D attn_mask is {attn_mask.shape}, but should be "
                                   f"{(tgt_len, src_len)}.")
            attn_mask = attn_mask.unsqueeze(0)
        elif attn_mask.dim() == 3:
            if tuple(attn_mask.shape) != (bsz * num_heads, tgt_len, src_len):
                raise RuntimeError(f"The shape of the 3D attn_mask is {attn_mask.shape}, but should be "
                                   f"{(bsz * num_heads, tgt_len, src_len)}.")
        else:
            raise RuntimeError(f"attn_mask's dimension {attn_mask.dim()} is not supported")
    if bias_k is not None and bias_v is not None:
        k = cat([k, bias_k.expand(1, bsz, E)], 0)
        v = cat([v, bias_v.expand(1, bsz, E)], 0)
        if attn_mask is not None:
            attn_mask = pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = pad(key_padding_mask, (0, 1))
    q = q.reshape(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    k = k.reshape(k.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
    v = v.reshape(v.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
    if add_zero_attn:
        zeros = zeros((bsz * num_heads, 1, head_dim), dtype=k.dtype)
        k = cat([k, zeros], 1)
        v = cat([v, zeros], 1)
        if attn_mask is not None:
            attn_mask = pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = pad(key_padding_mask, (0, 1))
    src_len = k.shape[1]
    if key_padding_mask is not None:
        if tuple(key_padding_mask.shape) != (bsz, src_len):
            raise AssertionError(f"expecting key_padding_mask shape of {(bsz, src_len)}, but got "
                                 f"{key_padding_mask.shape}")
        kpm = key_padding_mask.reshape(bsz, 1, 1, src_len).expand(bsz, num_heads, 1, src_len)
        kpm = kpm.reshape(bsz * num_heads, 1, src_len)
        attn_mask = kpm if attn_mask is None else attn_mask + kpm
    if not training:
        dropout_p = 0.0
    if not need_weights and q.dtype is _dtype.float16:
        # torch's path without weights: the fused attention on (bsz, heads, L, E) views, which accumulates Half in
        # float32 (other dtypes keep the explicit ops below: equal values, and tapegrad.compile's kernels for them)
        if attn_mask is not None:
            attn_mask = attn_mask.unsqueeze(0) if attn_mask.shape[0] == 1 and attn_mask.dim() == 3 else \
                attn_mask.reshape(bsz, num_heads, -1, src_len)
        out = scaled_dot_product_attention(q.reshape(bsz, num_heads, tgt_len, head_dim),
                                           k.reshape(bsz, num_heads, src_len, head_dim),
                                           v.reshape(bsz, num_heads, src_len, head_dim), attn_mask, dropout_p)
        out = out.permute(2, 0, 1, 3).reshape(bsz * tgt_len, embed_dim)
        out = linear(out, out_proj_weight, out_proj_bias)
        out = out.reshape(tgt_len, bsz, out.shape[-1])
        return (out.squeeze(1) if not is_batched else out), None
    scores = (q * math.sqrt(1.0 / float(head_dim))).matmul(k.transpose(-2, -1))
    if attn_mask is not None:
        scores = scores + attn_mask
    weights = softmax(scores, dim=-1)
    if dropout_p > 0.0:
        weights = dropout(weights, p=dropout_p)
    out = weights.matmul(v)
    out = out.transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
    out = linear(out, out_proj_weight, out_proj_bias)
    out = out.reshape(tgt_len, bsz, out.shape[-1])      # out_proj may change the width (CLIP's AttentionPool2d)
    if not is_batched:
        out = out.squeeze(1)
    if not need_weights:
        return out, None
    weights = weights.reshape(bsz, num_heads, tgt_len, src_len)
    if average_attn_weights:
        weights = weights.mean(dim=1)
    if not is_batched:
        weights = weights.squeeze(0)
    return out, weights
