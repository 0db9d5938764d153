"""Muon — torch's update rule: momentum, then the update's matrix orthogonalised by a quintic Newton-Schulz
iteration (run in bfloat16, as torch runs it), for 2-D parameters.

tapegrad stores bfloat16 as float32, so the iteration rounds each result to bfloat16's precision by hand (round to
nearest even on the top 16 bits) where torch's bfloat16 ops round: measured against torch 2.13 on the CPU, 100
steps agree to ~1e-16, or ~1e-8 where one rounding of a tie falls the other way.
"""

from __future__ import annotations

import math

import numpy as np

from ..tensor import Tensor
from ._helpers import check, lerp_, number, one_element_lr, params_with_grad, touched
from .optimizer import Optimizer

__all__ = ["Muon"]

EPS = 1e-7
DEFAULT_A, DEFAULT_B, DEFAULT_C = 3.4445, -4.7750, 2.0315
DEFAULT_NS_STEPS = 5


def _bf16(a):
    """float32 values rounded to bfloat16's 8 significant bits (round half to even), kept as float32."""
    bits = np.asarray(a, np.float32).view(np.uint32)
    rounded = (bits + np.uint32(0x7FFF) + ((bits >> np.uint32(16)) & np.uint32(1))) & np.uint32(0xFFFF0000)
    return rounded.view(np.float32)


def _zeropower_via_newtonschulz(grad, ns_coefficients, ns_steps, eps):
    """An approximately orthogonal matrix with ``grad``'s singular vectors (singular values near 1)."""
    if ns_steps >= 100:
        raise ValueError("Number of steps must be less than 100 for computational efficiency")
    if grad.ndim != 2:
        raise ValueError("Input tensor gradient must be a 2D matrix")
    if len(ns_coefficients) != 3:
        raise ValueError("Coefficients must be a tuple of exactly 3 values")
    a, b, c = ns_coefficients
    x = _bf16(grad)
    tall = grad.shape[0] > grad.shape[1]
    if tall:
        x = x.T
    x = _bf16(x / max(float(_bf16(np.sqrt(np.sum(x * x)))), eps))
    for _ in range(ns_steps):
        gram = _bf16(x @ x.T)
        update = _bf16(b * gram + c * (gram @ gram))
        x = _bf16(a * x + update @ x)
    return x.T if tall else x


def _adjust_lr(lr, adjust_lr_fn, shape):
    A, B = shape[:2]
    if adjust_lr_fn is None or adjust_lr_fn == "original":
        ratio = math.sqrt(max(1, A / B))
    elif adjust_lr_fn == "match_rms_adamw":
        ratio = 0.2 * math.sqrt(max(A, B))
    else:
        ratio = 1.0
    return lr * ratio


class Muon(Optimizer):
    """MomentUm Orthogonalized by Newton-Schulz, for 2-D weights (use another optimizer for biases and norms).

    >>> opt = tapegrad.optim.Muon([linear.weight], lr=0.02)
    """

    _sparse_refusal = "Muon does not support sparse gradients"

    def __init__(self, params, lr=1e-3, weight_decay=0.1, momentum=0.95, nesterov=True,
                 ns_coefficients=(DEFAULT_A, DEFAULT_B, DEFAULT_C), eps=EPS, ns_steps=DEFAULT_NS_STEPS,
                 adjust_lr_fn=None):
        one_element_lr(lr)
        check(0.0 <= lr, f"Learning rate should be >= 0 but is: {lr}")
        check(0.0 <= momentum, f"momentum should be >= 0 but is: {momentum}")
        check(0.0 <= weight_decay, f"weight decay should be >= 0 but is: {weight_decay}")
        check(adjust_lr_fn in (None, "original", "match_rms_adamw"),
              f"Adjust learning rate function {adjust_lr_fn} is not supported")
        defaults = dict(lr=lr, weight_decay=weight_decay, momentum=momentum, nesterov=nesterov,
                        ns_coefficients=ns_coefficients, eps=eps, ns_steps=ns_steps, adjust_lr_fn=adjust_lr_fn)
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                if p.ndim != 2:
                    raise ValueError(f"Muon only supports 2D parameters whereas we found a parameter with size: "
                                     f"{p.size()}")

    def step(self, closure=None):
        loss = self._closure_loss(closure)
        self._begin_step()
        for group in self.param_groups:
            lr, wd, momentum = number(group["lr"]), group["weight_decay"], group["momentum"]
            # (a tensor lr: torch's scalar arithmetic on it rounds to its dtype at each step)
            r = (lambda v, d=group["lr"]._array.dtype: float(np.asarray(v, d))) \
                if isinstance(group["lr"], Tensor) else (lambda v: v)
            for p, g in params_with_grad(group):
                if p.is_complex():
                    raise RuntimeError("Muon does not support complex parameters")
                state = self.state[p]
                if "momentum_buffer" not in state:
                    state["momentum_buffer"] = Tensor._make(np.zeros_like(g))
                buf = state["momentum_buffer"]._array
                lerp_(buf, g, 1 - momentum)
                if group["nesterov"]:
                    update = g.copy()
                    lerp_(update, buf, momentum)
                else:
                    update = buf
                ortho = _zeropower_via_newtonschulz(update, group["ns_coefficients"], group["ns_steps"],
                                                    group["eps"])
                adjusted = r(_adjust_lr(lr, group["adjust_lr_fn"], p.shape))
                p._array *= r(1 - r(lr * wd))
                p._array += -adjusted * ortho.astype(p._array.dtype)
                touched(p)
        return loss
