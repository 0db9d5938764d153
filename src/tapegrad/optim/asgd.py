"""ASGD (averaged stochastic gradient descent) — torch's single-tensor update rule: SGD with a decaying step size
``eta`` and a running average ``ax`` of the iterates (started after ``t0`` steps)."""

from __future__ import annotations

import numpy as np

from ..tensor import Tensor
from ._helpers import check, functional_steps, number, one_element_lr, params_with_grad, step_state, touched
from .optimizer import Optimizer

__all__ = ["ASGD", "asgd"]


class ASGD(Optimizer):
    """``p *= 1 - lambd * eta; p -= eta * g``; ``eta = lr / (1 + lambd * lr * t) ** alpha``; ``ax`` averages the
    iterates from step ``t0`` on (``state["ax"]``). ``eta`` and ``mu`` are float32, as torch keeps them.

    >>> opt = tapegrad.optim.ASGD(model.parameters(), lr=0.01)
    """

    _sparse_refusal = "ASGD does not support sparse gradients"

    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0, foreach=None,
                 maximize=False, differentiable=False, capturable=False):
        one_element_lr(lr)
        check(0.0 <= lr, f"Invalid learning rate: {lr}")
        check(0.0 <= weight_decay, f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def step(self, closure=None):
        loss = self._closure_loss(closure)
        self._begin_step()
        for group in self.param_groups:
            lr, lambd, alpha, t0, wd = group["lr"], group["lambd"], group["alpha"], group["t0"], \
                group["weight_decay"]
            for p, g in params_with_grad(group):
                state = self.state[p]
                if not state:
                    state["step"] = step_state()
                    state["eta"] = Tensor._make(np.asarray(lr, np.float32))
                    state["mu"] = Tensor._make(np.ones((), np.float32))
                    state["ax"] = Tensor._make(np.zeros_like(p._array))
                state["step"]._array += np.float32(1)
                _update(p, g, state["ax"]._array, state["mu"]._array, state["eta"]._array,
                        float(state["step"]._array), lr, lambd, alpha, t0, wd)
        return loss


def _update(p, g, ax, mu, eta, step, lr, lambd, alpha, t0, wd):
    """One parameter's ASGD step on its arrays (``ax``: the average; ``mu``, ``eta``: 0-d, set for the next step
    to float32 values, as torch makes them, whatever their dtype)."""
    if wd != 0:
        g = g + wd * p._array
    eta_value = float(eta)
    param = p._array
    param *= 1 - lambd * eta_value
    param += -eta_value * g
    if float(mu) != 1:
        ax += (param - ax) * mu.astype(param.dtype)
    else:
        ax[...] = param
    eta[...] = np.float32(lr / ((1 + lambd * lr * step) ** alpha))    # torch.as_tensor of a number: float32
    mu[...] = np.float32(1 / max(1, step - t0))
    touched(p)


def asgd(params, grads, axs, mus, etas, state_steps, foreach=None, maximize=False, differentiable=False,
         capturable=False, has_complex=False, *, lambd, lr, t0, alpha, weight_decay):
    """The functional form (``torch.optim.asgd.asgd``): ``ASGD.step``'s update of each parameter from the lists of
    its gradient, average, ``mu``, ``eta`` and step tensor, which is counted up by one."""
    steps = functional_steps(state_steps)
    for p, g, ax, mu, eta, step in zip(params, grads, axs, mus, etas, steps):
        g = g._array
        _update(p, -g if maximize else g, ax._array, mu._array, eta._array, step, number(lr), lambd, alpha, t0,
                weight_decay)
