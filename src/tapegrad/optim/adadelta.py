"""Adadelta — torch's single-tensor update rule."""

from __future__ import annotations

import numpy as np

from ._helpers import check, functional_steps, number, one_element_lr, stepped, touched, weight_decay
from .optimizer import Optimizer

__all__ = ["Adadelta", "adadelta"]


class Adadelta(Optimizer):
    """Step sizes from running averages of squared gradients and squared updates."""

    _sparse_refusal = "Adadelta does not support sparse gradients"

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *, capturable=False,
                 maximize=False, differentiable=False):
        one_element_lr(lr)
        check(lr >= 0.0, f"Invalid learning rate: {lr}")
        check(0.0 <= rho <= 1.0, f"Invalid rho value: {rho}")
        check(eps >= 0.0, f"Invalid epsilon value: {eps}")
        check(weight_decay >= 0.0, f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize, capturable=capturable,
                        foreach=foreach, differentiable=differentiable)
        super().__init__(params, defaults)

    def step(self, closure=None):
        loss = self._closure_loss(closure)
        self._begin_step()
        for group in self.param_groups:
            lr, rho, eps, wd = group["lr"], group["rho"], group["eps"], group["weight_decay"]
            for p, g, state, _ in stepped(self, group, "square_avg", "acc_delta"):
                _update(p, g, state["square_avg"]._array, state["acc_delta"]._array, lr, rho, eps, wd)
        return loss


def _update(p, g, sq, acc, lr, rho, eps, wd):
    """One parameter's Adadelta step on its arrays (``sq``, ``acc``: running squared gradients and updates)."""
    g = weight_decay(p, g, lr, wd)
    sq *= rho
    sq += (1 - rho) * (g * g)
    std = np.sqrt(sq + eps)
    delta = np.sqrt(acc + eps)
    delta /= std
    delta *= g
    acc *= rho
    acc += (1 - rho) * (delta * delta)
    p._array -= lr * delta
    touched(p)


def adadelta(params, grads, square_avgs, acc_deltas, state_steps, capturable=False, foreach=None,
             differentiable=False, has_complex=False, *, lr, rho, eps, weight_decay, maximize):
    """The functional form (``torch.optim.adadelta.adadelta``): ``Adadelta.step``'s update of each parameter from
    the lists of its gradient, running averages and step tensor, which is counted up by one."""
    functional_steps(state_steps)
    for p, g, sq, acc in zip(params, grads, square_avgs, acc_deltas):
        g = g._array
        _update(p, -g if maximize else g, sq._array, acc._array, number(lr), rho, eps, weight_decay)
