"""Adamax: Adam with the infinity norm — torch's single-tensor update rule."""

from __future__ import annotations

import numpy as np

from ._helpers import functional_steps, lerp_, number, stepped, touched, weight_decay
from .adam import _check_adam
from .optimizer import Optimizer

__all__ = ["Adamax", "adamax"]


class Adamax(Optimizer):
    """Adam with the infinity norm: ``u = max(beta2 * u, |g| + eps)``."""

    _sparse_refusal = "Adamax does not support sparse gradients"

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, foreach=None, *,
                 maximize=False, differentiable=False, capturable=False):
        _check_adam(lr, eps, betas, weight_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, foreach=foreach, maximize=maximize,
                        differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def step(self, closure=None):
        loss = self._closure_loss(closure)
        self._begin_step()
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            lr, eps, wd = group["lr"], group["eps"], group["weight_decay"]
            for p, g, state, step in stepped(self, group, "exp_avg", "exp_inf"):
                _update(p, g, state["exp_avg"]._array, state["exp_inf"]._array, step, beta1, beta2, lr, eps, wd)
        return loss


def _update(p, g, m, u, step, beta1, beta2, lr, eps, wd):
    """One parameter's Adamax step on its arrays (``m``: first moment, ``u``: the decayed infinity norm)."""
    g = weight_decay(p, g, lr, wd)
    lerp_(m, g, 1 - beta1)
    u *= beta2
    np.maximum(u, np.abs(g) + eps, out=u)
    clr = lr / (1 - beta1 ** step)
    p._array += -clr * (m / u)
    touched(p)


def adamax(params, grads, exp_avgs, exp_infs, state_steps, foreach=None, maximize=False, differentiable=False,
           capturable=False, has_complex=False, *, eps, beta1, beta2, lr, weight_decay):
    """The functional form (``torch.optim.adamax.adamax``): ``Adamax.step``'s update of each parameter from the
    lists of its gradient, moments and step tensor, which is counted up by one."""
    steps = functional_steps(state_steps)
    for p, g, m, u, step in zip(params, grads, exp_avgs, exp_infs, steps):
        g = g._array
        _update(p, -g if maximize else g, m._array, u._array, step, number(beta1), number(beta2), number(lr), eps,
                weight_decay)
