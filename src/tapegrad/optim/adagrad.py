"""Adagrad — torch's single-tensor update rule."""

from __future__ import annotations

import numpy as np

from ..tensor import Tensor
from ._helpers import (check, functional_steps, incr_step, number, one_element_lr, params_with_grad, step_state,
                       touched, weight_decay)
from .optimizer import Optimizer

__all__ = ["Adagrad", "adagrad"]


class Adagrad(Optimizer):
    """Divide by the root of the sum of all past squared gradients."""

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0, eps=1e-10,
                 foreach=None, *, maximize=False, differentiable=False, fused=None):
        one_element_lr(lr)
        check(lr >= 0.0, f"Invalid learning rate: {lr}")
        check(lr_decay >= 0.0, f"Invalid lr_decay value: {lr_decay}")
        check(weight_decay >= 0.0, f"Invalid weight_decay value: {weight_decay}")
        check(initial_accumulator_value >= 0.0, f"Invalid initial_accumulator_value value: "
                                                f"{initial_accumulator_value}")
        check(eps >= 0.0, f"Invalid epsilon value: {eps}")
        defaults = dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                        initial_accumulator_value=initial_accumulator_value, foreach=foreach, maximize=maximize,
                        differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                state = self.state[p]
                state["step"] = step_state()
                state["sum"] = Tensor._make(np.full_like(p._array, group["initial_accumulator_value"]))

    def step(self, closure=None):
        loss = self._closure_loss(closure)
        self._begin_step()
        for group in self.param_groups:
            lr, lr_decay, eps, wd = number(group["lr"]), group["lr_decay"], group["eps"], group["weight_decay"]
            for p, g in params_with_grad(group):
                state = self.state[p]
                step = incr_step(state)
                if wd != 0 and p._grad.is_sparse:
                    raise RuntimeError("weight_decay option is not compatible with sparse gradients")
                _update(p, g, state["sum"]._array, step, lr, lr_decay, eps, wd)
        return loss


def _update(p, g, s, step, lr, lr_decay, eps, wd):
    """One parameter's Adagrad step on its arrays (``s``: the running sum of squared gradients)."""
    g = weight_decay(p, g, lr, wd)
    clr = lr / (1 + (step - 1) * lr_decay)
    s += g * g
    std = np.sqrt(s) + eps
    p._array += -clr * (g / std)
    touched(p)


def adagrad(params, grads, state_sums, state_steps, fused=None, grad_scale=None, found_inf=None,
            has_sparse_grad=False, foreach=None, differentiable=False, has_complex=False, *, lr, weight_decay,
            lr_decay, eps, maximize):
    """The functional form (``torch.optim.adagrad.adagrad``): ``Adagrad.step``'s update of each parameter from the
    lists of its gradient, squared-gradient sum and step tensor, which is counted up by one."""
    steps = functional_steps(state_steps)
    for p, g, s, step in zip(params, grads, state_sums, steps):
        g = g._array
        _update(p, -g if maximize else g, s._array, step, number(lr), lr_decay, eps, weight_decay)
