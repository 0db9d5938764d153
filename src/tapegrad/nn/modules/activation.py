# ruff: noqa: A001, A002 - torch's argument name (input)
"""Activation modules: thin wrappers over ``tapegrad.nn.functional`` with torch's arguments and reprs; and
``MultiheadAttention`` (torch keeps it here too)."""

from __future__ import annotations

from ... import creation
from .. import functional as F
from ..module import Module
from ..parameter import Parameter
from .linear import NonDynamicallyQuantizableLinear

__all__ = ["ReLU", "ReLU6", "LeakyReLU", "PReLU", "ELU", "SELU", "CELU", "GELU", "SiLU", "Mish", "Tanh", "Sigmoid",
           "Softplus", "Softsign", "Hardtanh", "Hardsigmoid", "Hardswish", "LogSigmoid", "Softmax", "Softmin",
           "LogSoftmax", "Softmax2d", "GLU", "Threshold", "Hardshrink", "Softshrink", "Tanhshrink", "RReLU",
           "MultiheadAttention"]


class _Inplace(Module):
    """An activation whose only option is ``inplace``."""

    def __init__(self, inplace: bool = False):
        super().__init__()
        self.inplace = inplace

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""


class ReLU(_Inplace):
    """``max(0, x)``.

    >>> tapegrad.nn.ReLU()(tapegrad.tensor([-1., 2.]))
    tensor([0., 2.])
    """

    def forward(self, input):
        return F.relu(input, inplace=self.inplace)


class SELU(_Inplace):
    """Scaled ELU."""

    def forward(self, input):
        return F.selu(input, self.inplace)


class SiLU(_Inplace):
    """``x * sigmoid(x)``."""

    def forward(self, input):
        return F.silu(input, inplace=self.inplace)


class Mish(_Inplace):
    """``x * tanh(softplus(x))``."""

    def forward(self, input):
        return F.mish(input, inplace=self.inplace)


class Hardsigmoid(Module):
    """``relu6(x + 3) / 6``."""

    def __init__(self, inplace: bool = False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.hardsigmoid(input, self.inplace)


class Hardswish(Module):
    """``x * relu6(x + 3) / 6``."""

    def __init__(self, inplace: bool = False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.hardswish(input, self.inplace)


class LeakyReLU(Module):
    """``x`` if positive else ``negative_slope * x``."""

    def __init__(self, negative_slope: float = 1e-2, inplace: bool = False):
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, input):
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self):
        return f"negative_slope={self.negative_slope}{', inplace=True' if self.inplace else ''}"


class PReLU(Module):
    """LeakyReLU with a learnt slope (one, or one per channel), initialised to ``init``."""

    def __init__(self, num_parameters: int = 1, init: float = 0.25, device=None, dtype=None):
        self.num_parameters = num_parameters
        super().__init__()
        self.init = init
        self.weight = Parameter(creation.empty(num_parameters, dtype=dtype))
        self.reset_parameters()

    def reset_parameters(self):
        from .. import init
        init.constant_(self.weight, self.init)

    def forward(self, input):
        return F.prelu(input, self.weight)

    def extra_repr(self):
        return f"num_parameters={self.num_parameters}"


class ELU(Module):
    """``x`` if positive else ``alpha * (exp(x) - 1)``."""

    def __init__(self, alpha: float = 1.0, inplace: bool = False):
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input):
        return F.elu(input, self.alpha, self.inplace)

    def extra_repr(self):
        return f"alpha={self.alpha}{', inplace=True' if self.inplace else ''}"


class CELU(Module):
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))`` (not an ``ELU`` subclass, as in torch)."""

    def __init__(self, alpha: float = 1.0, inplace: bool = False):
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input):
        return F.celu(input, self.alpha, self.inplace)

    def extra_repr(self):
        return f"alpha={self.alpha}{', inplace=True' if self.inplace else ''}"


class GELU(Module):
    """Gaussian error linear unit (``approximate="tanh"`` for the tanh form)."""

    def __init__(self, approximate: str = "none"):
        super().__init__()
        self.approximate = approximate

    def forward(self, input):
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self):
        return f"approximate={self.approximate!r}"


class _NoArg(Module):
    def __init__(self, *args, **kwargs):
        super().__init__()


class Tanh(_NoArg):
    """Hyperbolic tangent."""

    def forward(self, input):
        from ...ops.elementwise import tanh
        return tanh(input)


class Sigmoid(_NoArg):
    """``1 / (1 + exp(-x))``."""

    def forward(self, input):
        from ...ops.elementwise import sigmoid
        return sigmoid(input)


class Softsign(_NoArg):
    """``x / (1 + |x|)``."""

    def forward(self, input):
        return F.softsign(input)


class LogSigmoid(_NoArg):
    """``log(sigmoid(x))``, computed stably."""

    def forward(self, input):
        return F.logsigmoid(input)


class Tanhshrink(_NoArg):
    """``x - tanh(x)``."""

    def forward(self, input):
        return F.tanhshrink(input)


class Softplus(Module):
    """``log(1 + exp(beta * x)) / beta`` (linear above ``threshold``)."""

    def __init__(self, beta: float = 1.0, threshold: float = 20.0):
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, input):
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self):
        return f"beta={self.beta}, threshold={self.threshold}"


class Hardtanh(Module):
    """Clamp to ``[min_val, max_val]``."""

    def __init__(self, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False, min_value=None,
                 max_value=None):
        super().__init__()
        if min_value is not None:
            min_val = min_value
        if max_value is not None:
            max_val = max_value
        self.min_val = min_val
        self.max_val = max_val
        self.inplace = inplace
        if self.max_val <= self.min_val:
            raise AssertionError(f"max_val ({self.max_val}) must be greater than min_val ({self.min_val})")

    def forward(self, input):
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self):
        return f"min_val={self.min_val}, max_val={self.max_val}{', inplace=True' if self.inplace else ''}"


class ReLU6(Hardtanh):
    """``min(max(0, x), 6)``: a ``Hardtanh`` on ``[0, 6]``, as torch's is (``isinstance(m, nn.Hardtanh)``,
    ``min_val``/``max_val``, and ``F.hardtanh`` is what it calls)."""

    def __init__(self, inplace: bool = False):
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""


class _DimModule(Module):
    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def __setstate__(self, state):
        super().__setstate__(state)
        if not hasattr(self, "dim"):
            self.dim = None

    def extra_repr(self):
        return f"dim={self.dim}"


class Softmax(_DimModule):
    """``exp(x) / sum(exp(x))`` along ``dim``.

    >>> tapegrad.nn.Softmax(dim=-1)(tapegrad.zeros(2))
    tensor([0.5000, 0.5000])
    """

    def forward(self, input):
        return F.softmax(input, self.dim, _stacklevel=5)


class Softmin(_DimModule):
    """``softmax(-x)`` along ``dim``."""

    def forward(self, input):
        return F.softmin(input, self.dim, _stacklevel=5)


class LogSoftmax(_DimModule):
    """``log(softmax(x))`` along ``dim``, computed stably."""

    def forward(self, input):
        return F.log_softmax(input, self.dim, _stacklevel=5)


class Softmax2d(Module):
    """Softmax over the channel dimension of a ``(N, C, H, W)`` or ``(C, H, W)`` input."""

    def forward(self, input):
        if input.dim() not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.dim()}D instead")
        return F.softmax(input, -3, _stacklevel=5)


class GLU(Module):
    """Gated linear unit: ``a * sigmoid(b)`` for the two halves of ``dim``."""

    def __init__(self, dim: int = -1):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.glu(input, self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"


class Threshold(Module):
    """``x`` if ``x > threshold`` else ``value``."""

    def __init__(self, threshold: float, value: float, inplace: bool = False):
        super().__init__()
        self.threshold = threshold
        self.value = value
        self.inplace = inplace

    def forward(self, input):
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self):
        return f"threshold={self.threshold}, value={self.value}{', inplace=True' if self.inplace else ''}"


class Hardshrink(Module):
    """``x`` where ``|x| > lambd``, else 0."""

    def __init__(self, lambd: float = 0.5):
        super().__init__()
        self.lambd = lambd

    def forward(self, input):
        return F.hardshrink(input, self.lambd)

    def extra_repr(self):
        return f"{self.lambd}"


class Softshrink(Module):
    """``x - lambd`` / ``x + lambd`` outside ``[-lambd, lambd]``, else 0."""

    def __init__(self, lambd: float = 0.5):
        super().__init__()
        self.lambd = lambd

    def forward(self, input):
        return F.softshrink(input, self.lambd)

    def extra_repr(self):
        return str(self.lambd)


class RReLU(Module):
    """Randomised leaky ReLU (slope drawn from U(lower, upper) in training, their mean in eval)."""

    def __init__(self, lower: float = 1.0 / 8, upper: float = 1.0 / 3, inplace: bool = False):
        super().__init__()
        self.lower = lower
        self.upper = upper
        self.inplace = inplace

    def forward(self, input):
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self):
        return f"lower={self.lower}, upper={self.upper}{', inplace=True' if self.inplace else ''}"


class MultiheadAttention(Module):
    """Multi-head attention: ``softmax(Q K^T / sqrt(d) + mask) V`` per head, then an output projection.

    ``in_proj_weight`` stacks the query, key and value projections (``(3 * embed_dim, embed_dim)``), as torch's.

    >>> mha = tapegrad.nn.MultiheadAttention(4, 2, batch_first=True)
    >>> x = tapegrad.randn(1, 3, 4)
    >>> out, w = mha(x, x, x)
    >>> out.shape, w.shape
    (tapegrad.Size([1, 3, 4]), tapegrad.Size([1, 3, 3]))
    """

    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False, add_zero_attn=False,
                 kdim=None, vdim=None, batch_first=False, device=None, dtype=None):
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"embed_dim and num_heads must be greater than 0, got embed_dim={embed_dim} and "
                             f"num_heads={num_heads} instead")
        super().__init__()
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != self.embed_dim:
            raise AssertionError("embed_dim must be divisible by num_heads")
        if not self._qkv_same_embed_dim:
            self.q_proj_weight = Parameter(creation.empty((embed_dim, embed_dim), dtype=dtype))
            self.k_proj_weight = Parameter(creation.empty((embed_dim, self.kdim), dtype=dtype))
            self.v_proj_weight = Parameter(creation.empty((embed_dim, self.vdim), dtype=dtype))
            self.register_parameter("in_proj_weight", None)
        else:
            self.in_proj_weight = Parameter(creation.empty((3 * embed_dim, embed_dim), dtype=dtype))
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(creation.empty(3 * embed_dim, dtype=dtype))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias, dtype=dtype)
        if add_bias_kv:
            self.bias_k = Parameter(creation.empty((1, 1, embed_dim), dtype=dtype))
            self.bias_v = Parameter(creation.empty((1, 1, embed_dim), dtype=dtype))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self):
        from .. import init
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            init.xavier_uniform_(self.q_proj_weight)
            init.xavier_uniform_(self.k_proj_weight)
            init.xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
        if self.bias_v is not None:
            init.xavier_normal_(self.bias_v)

    def forward(self, query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
                average_attn_weights=True, is_causal=False):
        is_batched = query.dim() == 3
        if self.batch_first and is_batched:
            query, key, value = query.transpose(1, 0), key.transpose(1, 0), value.transpose(1, 0)
        kwargs = dict(training=self.training, key_padding_mask=key_padding_mask, need_weights=need_weights,
                      attn_mask=attn_mask, average_attn_weights=average_attn_weights, is_causal=is_causal)
        if not self._qkv_same_embed_dim:
            kwargs.update(use_separate_proj_weight=True, q_proj_weight=self.q_proj_weight,
                          k_proj_weight=self.k_proj_weight, v_proj_weight=self.v_proj_weight)
        out, weights = F.multi_head_attention_forward(
            query, key, value, self.embed_dim, self.num_heads, self.in_proj_weight, self.in_proj_bias, self.bias_k,
            self.bias_v, self.add_zero_attn, self.dropout, self.out_proj.weight, self.out_proj.bias, **kwargs)
        if self.batch_first and is_batched:
            out = out.transpose(1, 0)
        return out, weights

    def merge_masks(self, attn_mask, key_padding_mask, query):
        """One mask and its type from the two (0 attention, 1 key padding, 2 both: expanded to
        ``(batch, heads, seq, seq)`` and added), as torch's fast path merges them."""
        mask_type = merged = None
        if key_padding_mask is not None:
            mask_type, merged = 1, key_padding_mask
        if attn_mask is not None:
            batch_size, seq_len, _ = query.shape
            mask_type = 2
            if attn_mask.dim() == 3:
                expanded = attn_mask.view(batch_size, -1, seq_len, seq_len)
            else:
                expanded = attn_mask.view(1, 1, seq_len, seq_len).expand(batch_size, self.num_heads, -1, -1)
            merged = expanded
            if key_padding_mask is not None:
                merged = expanded + key_padding_mask.view(batch_size, 1, 1, seq_len).expand(-1, self.num_heads, -1, -1)
        return merged, mask_type
