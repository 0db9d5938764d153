"""ASGD (averaged stochastic gradient descent) — torch's single-tensor update rule: SGD with a decaying step size
``eta`` and a running average ``ax`` of the iterates (started after ``t0`` steps)."""

from __future__ import annotations

import numpy as np

from ..tensor import Tensor
from ._helpers import check, one_element_lr, params_with_grad, step_state, touched
from .optimizer import Optimizer

__all__ = ["ASGD"]


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
                step = float(state["step"]._array)
                if wd != 0:
                    g = g + wd * p._array
                eta = float(state["eta"]._array)
                param = p._array
                param *= 1 - lambd * eta
                param += -eta * g
                mu = state["mu"]._array
                ax = state["ax"]._array
                if float(mu) != 1:
                    ax += (param - ax) * mu.astype(param.dtype)
                else:
                    ax[...] = param
                state["eta"]._array[...] = np.float32(lr / ((1 + lambd * lr * step) ** alpha))
                mu[...] = np.float32(1 / max(1, step - t0))
                touched(p)
        return loss
