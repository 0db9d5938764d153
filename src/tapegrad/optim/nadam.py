"""NAdam: Adam with Nesterov momentum — torch's single-tensor update rule."""

from __future__ import annotations

import numpy as np

from ..tensor import Tensor
from ._helpers import check, functional_steps, moments_, number, stepped, touched, weight_decay
from .adam import _check_adam
from .optimizer import Optimizer

__all__ = ["NAdam", "nadam"]


def _one_f32():
    return Tensor._make(np.ones((), np.float32))   # NAdam's mu_product: float32, as torch keeps it


class NAdam(Optimizer):
    """Adam with Nesterov momentum (``momentum_decay`` schedule of torch)."""

    _sparse_refusal = "NAdam does not support sparse gradients"

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, momentum_decay=4e-3,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False):
        _check_adam(lr, eps, betas, weight_decay)
        check(momentum_decay >= 0.0, f"Invalid momentum_decay value: {momentum_decay}")
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, momentum_decay=momentum_decay,
                        decoupled_weight_decay=decoupled_weight_decay, maximize=maximize, foreach=foreach,
                        capturable=capturable, differentiable=differentiable)
        super().__init__(params, defaults)

    def step(self, closure=None):
        loss = self._closure_loss(closure)
        self._begin_step()
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            lr, eps, wd, md = group["lr"], group["eps"], group["weight_decay"], group["momentum_decay"]
            for p, g, state, step in stepped(self, group, ("mu_product", _one_f32), "exp_avg", "exp_avg_sq"):
                _update(p, g, state["exp_avg"]._array, state["exp_avg_sq"]._array, state["mu_product"]._array, step,
                        beta1, beta2, lr, eps, wd, md, group["decoupled_weight_decay"])
        return loss


def _update(p, g, m, v, mp, step, beta1, beta2, lr, eps, wd, md, decoupled):
    """One parameter's NAdam step on its arrays (the moments ``m``, ``v``; ``mp``: the 0-d running product of the
    momentum schedule, kept in its own dtype)."""
    bias_correction2 = 1 - beta2 ** step
    g = weight_decay(p, g, lr, wd, decoupled)
    mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * md)))
    mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * md)))
    mp *= mp.dtype.type(mu)
    mu_product = float(mp)
    moments_(m, v, g, beta1, beta2)
    denom = np.sqrt(v / bias_correction2) + eps
    mu_product_next = mu_product * mu_next
    p._array += (-lr * (1.0 - mu) / (1.0 - mu_product)) * (g / denom)
    p._array += ((-lr * mu_next) / (1.0 - mu_product_next)) * (m / denom)
    touched(p)


def nadam(params, grads, exp_avgs, exp_avg_sqs, mu_products, state_steps, decoupled_weight_decay=False,
          foreach=None, capturable=False, differentiable=False, has_complex=False, maximize=False, *, beta1, beta2,
          lr, weight_decay, momentum_decay, eps):
    """The functional form (``torch.optim.nadam.nadam``): ``NAdam.step``'s update of each parameter from the lists
    of its gradient, moments, momentum product and step tensor, which is counted up by one."""
    if not all(isinstance(t, Tensor) for t in state_steps):
        raise RuntimeError("API has changed, `state_steps` argument must contain a list of singleton tensors")
    if not all(isinstance(t, Tensor) for t in mu_products):
        raise RuntimeError("API has changed, `mu_products` argument must contain a list of singleton tensors")
    steps = functional_steps(state_steps)
    for p, g, m, v, mp, step in zip(params, grads, exp_avgs, exp_avg_sqs, mu_products, steps):
        g = g._array
        _update(p, -g if maximize else g, m._array, v._array, mp._array, step, number(beta1), number(beta2),
                number(lr), eps, weight_decay, momentum_decay, decoupled_weight_decay)
