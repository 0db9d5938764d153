"""RAdam: rectified Adam — torch's single-tensor update rule."""

from __future__ import annotations

import numpy as np

from ._helpers import moments_, stepped, touched, weight_decay
from .adam import _check_adam
from .optimizer import Optimizer

__all__ = ["RAdam"]


class RAdam(Optimizer):
    """Rectified Adam: the adaptive step only once the variance estimate is trustworthy (rho_t > 5)."""

    _sparse_refusal = "RAdam does not support sparse gradients"

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, decoupled_weight_decay=False,
                 *, foreach=None, maximize=False, capturable=False, differentiable=False):
        _check_adam(lr, eps, betas, weight_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, maximize=maximize, foreach=foreach,
                        capturable=capturable, decoupled_weight_decay=decoupled_weight_decay,
                        differentiable=differentiable)
        super().__init__(params, defaults)

    def step(self, closure=None):
        loss = self._closure_loss(closure)
        self._begin_step()
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            lr, eps, wd = group["lr"], group["eps"], group["weight_decay"]
            for p, g, state, step in stepped(self, group, "exp_avg", "exp_avg_sq"):
                g = weight_decay(p, g, lr, wd, group["decoupled_weight_decay"])
                m, v = state["exp_avg"]._array, state["exp_avg_sq"]._array
                moments_(m, v, g, beta1, beta2)
                bias_correction1 = 1 - beta1 ** step
                bias_correction2 = 1 - beta2 ** step
                corrected = m / bias_correction1
                rho_inf = 2 / (1 - beta2) - 1
                rho_t = rho_inf - 2 * step * (beta2 ** step) / bias_correction2
                if rho_t > 5.0:
                    rect = ((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
                    adaptive = (bias_correction2 ** 0.5) / (np.sqrt(v) + eps)
                    p._array -= corrected * lr * adaptive * rect
                else:
                    p._array -= corrected * lr
                touched(p)
        return loss
