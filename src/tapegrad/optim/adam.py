"""Adam (with amsgrad and decoupled weight decay) — torch's single-tensor update rule; ``_check_adam`` validates the
Adam family's arguments."""

from __future__ import annotations

import math

import numpy as np

from ._helpers import check, functional_steps, moments_, number, one_element_lr, stepped, touched, weight_decay
from .optimizer import Optimizer
from ..tensor import Tensor

__all__ = ["Adam", "adam"]


def _check_adam(lr, eps, betas, weight_decay):
    one_element_lr(lr)
    check(lr >= 0.0, f"Invalid learning rate: {lr}")
    check(eps >= 0.0, f"Invalid epsilon value: {eps}")
    check(0.0 <= betas[0] < 1.0, f"Invalid beta parameter at index 0: {betas[0]}")
    check(0.0 <= betas[1] < 1.0, f"Invalid beta parameter at index 1: {betas[1]}")
    check(weight_decay >= 0.0, f"Invalid weight_decay value: {weight_decay}")


class Adam(Optimizer):
    """Adaptive moments: ``p -= lr * m_hat / (sqrt(v_hat) + eps)``; ``amsgrad`` keeps the max of v.

    >>> opt = tapegrad.optim.Adam(model.parameters(), lr=1e-3)
    """

    _sparse_refusal = "Adam does not support sparse gradients, please consider SparseAdam instead"

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False, *,
                 foreach=None, maximize=False, capturable=False, differentiable=False, fused=None,
                 decoupled_weight_decay=False):
        if isinstance(lr, Tensor) and foreach and not capturable:
            raise ValueError("lr as a Tensor is not supported for capturable=False and foreach=True")
        _check_adam(lr, eps, betas, weight_decay)
        if not (all(isinstance(b, float) for b in betas) or all(isinstance(b, Tensor) for b in betas)):
            raise ValueError("betas must be either both floats or both Tensors")    # (torch: an int beta too)
        for k, b in enumerate(betas):
            if isinstance(b, Tensor):
                if foreach and not capturable:
                    raise ValueError(f"betas[{k}] as a Tensor is not supported for capturable=False and foreach=True")
                if b.numel() != 1:
                    raise ValueError(f"Tensor betas[{k}] must be 1-element")
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad, maximize=maximize,
                        foreach=foreach, capturable=capturable, differentiable=differentiable, fused=fused,
                        decoupled_weight_decay=decoupled_weight_decay)
        super().__init__(params, defaults)

    def step(self, closure=None):
        loss = self._closure_loss(closure)
        self._begin_step()
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            lr, eps, wd, amsgrad = group["lr"], group["eps"], group["weight_decay"], group["amsgrad"]
            extra = ("max_exp_avg_sq",) if amsgrad else ()
            for p, g, state, step in stepped(self, group, "exp_avg", "exp_avg_sq", *extra):
                vmax = state["max_exp_avg_sq"]._array if amsgrad else None
                _update(p, g, state["exp_avg"]._array, state["exp_avg_sq"]._array, vmax, step, beta1, beta2, lr, eps,
                        wd, group["decoupled_weight_decay"])
        return loss


def _update(p, g, m, v, vmax, step, beta1, beta2, lr, eps, wd, decoupled):
    """One parameter's Adam step on its arrays (``vmax``: AMSGrad's running maximum, or None)."""
    param = p._array
    g = weight_decay(p, g, lr, wd, decoupled)
    moments_(m, v, g, beta1, beta2)
    bias_correction1 = 1 - beta1 ** step
    bias_correction2 = 1 - beta2 ** step
    step_size = lr / bias_correction1
    bias_correction2_sqrt = math.sqrt(bias_correction2)
    if vmax is not None:
        np.maximum(vmax, v, out=vmax)
        denom = np.sqrt(vmax) / bias_correction2_sqrt + eps
    else:
        denom = np.sqrt(v) / bias_correction2_sqrt + eps
    param += -step_size * (m / denom)
    touched(p)


def adam(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, foreach=None, capturable=False,
         differentiable=False, fused=None, grad_scale=None, found_inf=None, has_complex=False,
         decoupled_weight_decay=False, *, amsgrad, beta1, beta2, lr, weight_decay, eps, maximize):
    """The functional form (``torch.optim.adam.adam``): ``Adam.step``'s update of each parameter from the lists of
    its gradient, moments and step tensor, which is counted up by one."""
    beta1, beta2 = number(beta1), number(beta2)
    steps = functional_steps(state_steps)
    for i, p in enumerate(params):
        g = grads[i]._array
        vmax = max_exp_avg_sqs[i]._array if amsgrad else None
        _update(p, -g if maximize else g, exp_avgs[i]._array, exp_avg_sqs[i]._array, vmax, steps[i], beta1, beta2,
                lr, eps, weight_decay, decoupled_weight_decay)
