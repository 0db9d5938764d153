"""RAdam: rectified Adam — torch's single-tensor update rule."""

from __future__ import annotations

import numpy as np

from ._helpers import functional_steps, moments_, number, stepped, touched, weight_decay
from .adam import _check_adam
from .optimizer import Optimizer

__all__ = ["RAdam", "radam"]


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
                _update(p, g, state["exp_avg"]._array, state["exp_avg_sq"]._array, step, beta1, beta2, lr, eps, wd,
                        group["decoupled_weight_decay"])
        return loss


def _update(p, g, m, v, step, beta1, beta2, lr, eps, wd, decoupled):
    """One parameter's RAdam step on its arrays (the moments ``m``, ``v``)."""
    g = weight_decay(p, g, lr, wd, decoupled)
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


def radam(params, grads, exp_avgs, exp_avg_sqs, state_steps, decoupled_weight_decay=False, foreach=None,
          differentiable=False, capturable=False, has_complex=False, maximize=False, *, beta1, beta2, lr,
          weight_decay, eps):
    """The functional form (``torch.optim.radam.radam``): ``RAdam.step``'s update of each parameter from the lists
    of its gradient, moments and step tensor, which is counted up by one."""
    steps = functional_steps(state_steps)
    for p, g, m, v, step in zip(params, grads, exp_avgs, exp_avg_sqs, steps):
        g = g._array
        _update(p, -g if maximize else g, m._array, v._array, step, number(beta1), number(beta2), number(lr), eps,
                weight_decay, decoupled_weight_decay)
