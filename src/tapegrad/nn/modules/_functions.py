"""Autograd Functions behind a few legacy layers (torch keeps them in ``nn.modules._functions``):
``CrossMapLRN2d``, the cross-channel local response normalisation of Lua Torch.

>>> out = CrossMapLRN2d.apply(tapegrad.ones(1, 3, 1, 1, requires_grad=True), 3, 1.0, 1.0, 1.0)
>>> out.detach().flatten(), out.grad_fn.name()
(tensor([0.6000, 0.5000, 0.5000]), 'CrossMapLRN2dBackward')
"""

from __future__ import annotations

import numpy as np

from ...autograd.function import Function, once_differentiable
from ...tensor import Tensor

__all__: list = []


def _band(C, lo, hi, extra_first=False):
    """A (C, C) 0/1 matrix whose row c selects channels ``lo(c)..hi(c)`` (clipped), plus channel 0 if asked."""
    c = np.arange(C)[:, None]
    j = np.arange(C)[None, :]
    m = (j >= lo(c)) & (j <= hi(c))
    if extra_first:
        m[:, 0] = True
    return m


class CrossMapLRN2d(Function):
    """``out = x * (k + alpha / size * sum of x**2 over nearby channels) ** -beta`` on ``(N, C, H, W)``.

    The arithmetic is Lua Torch's, as PyTorch keeps it: the running window sum never drops channel 0 (so every
    channel's sum includes it), and the backward is that code's own formula (a window shifted against the
    forward's). Both are reproduced so that values and gradients agree with torch's layer."""

    _vmap_per_sample = True     # (tapegrad's own: once per sample under vmap, func/_vmap_function.py)

    @staticmethod
    def forward(ctx, input, size, alpha=1e-4, beta=0.75, k=1):
        if input.dim() != 4:
            raise ValueError(f"CrossMapLRN2d: Expected input to be 4D, got {input.dim()}D instead.")
        x = input._array
        C = x.shape[1]
        pre = int((size - 1) / 2 + 1)
        window = _band(C, lambda c: c - pre + 1, lambda c: c + pre - 1, extra_first=True)
        scale = np.einsum("cj,njhw->nchw", window.astype(x.dtype), x * x)
        scale = scale * (alpha / size) + k
        out = np.power(scale, -beta) * x
        ctx.size, ctx.alpha, ctx.beta = size, alpha, beta
        ctx.scale = scale
        ctx.save_for_backward(input)
        ctx.out = out
        return Tensor._make(out.astype(x.dtype, copy=False))

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_output):
        (input,) = ctx.saved_tensors
        x, g = input._array, np.asarray(grad_output._array)
        size, alpha, beta, scale = ctx.size, ctx.alpha, ctx.beta, ctx.scale
        C = x.shape[1]
        inv = int(size - (size - 1) / 2)
        window = _band(C, lambda c: c - inv, lambda c: c + size - 1 - inv)
        ratio = g * ctx.out / scale
        acc = np.einsum("cj,njhw->nchw", window.astype(x.dtype), ratio)
        grad = np.power(scale, -beta) * g - (2 * alpha * beta / size) * x * acc
        return Tensor._make(grad.astype(x.dtype, copy=False)), None, None, None, None
