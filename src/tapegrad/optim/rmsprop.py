"""RMSprop (centered, momentum) — torch's single-tensor update rule."""

from __future__ import annotations

import numpy as np

from ._helpers import check, one_element_lr, stepped, touched, weight_decay
from .optimizer import Optimizer

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    """Divide the gradient by a running RMS of recent gradients (``centered``, ``momentum`` as torch)."""

    _sparse_refusal = "RMSprop does not support sparse gradients"

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        one_element_lr(lr)
        check(lr >= 0.0, f"Invalid learning rate: {lr}")
        check(eps >= 0.0, f"Invalid epsilon value: {eps}")
        check(momentum >= 0.0, f"Invalid momentum value: {momentum}")
        check(weight_decay >= 0.0, f"Invalid weight_decay value: {weight_decay}")
        check(alpha >= 0.0, f"Invalid alpha value: {alpha}")
        defaults = dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered, weight_decay=weight_decay,
                        capturable=capturable, foreach=foreach, maximize=maximize, differentiable=differentiable)
        super().__init__(params, defaults)

    def step(self, closure=None):
        loss = self._closure_loss(closure)
        self._begin_step()
        for group in self.param_groups:
            lr, alpha, eps, wd = group["lr"], group["alpha"], group["eps"], group["weight_decay"]
            momentum, centered = group["momentum"], group["centered"]
            extra = ("momentum_buffer",) * (momentum > 0) + ("grad_avg",) * bool(centered)
            for p, g, state, _ in stepped(self, group, "square_avg", *extra):
                g = weight_decay(p, g, lr, wd)
                sq = state["square_avg"]._array
                sq *= alpha
                sq += (1 - alpha) * (g * g)
                if centered:
                    ga = state["grad_avg"]._array
                    ga += (1 - alpha) * (g - ga)
                    avg = np.sqrt(sq - ga * ga)
                else:
                    avg = np.sqrt(sq)
                avg += eps
                if momentum > 0:
                    buf = state["momentum_buffer"]._array
                    buf *= momentum
                    buf += g / avg
                    p._array -= lr * buf
                else:
                    p._array += -lr * (g / avg)
                touched(p)
        return loss
