"""Rprop (resilient backpropagation) — torch's single-tensor update rule: each coordinate keeps its own step size,
grown by ``etaplus`` while the gradient keeps its sign and shrunk by ``etaminus`` when it flips; only the sign of the
gradient is used."""

from __future__ import annotations

import numpy as np

from ..tensor import Tensor
from ._helpers import check, functional_steps, one_element_lr, params_with_grad, step_state, touched
from .optimizer import Optimizer

__all__ = ["Rprop", "rprop"]


class Rprop(Optimizer):
    """``step_size *= etaplus`` (same sign as last time) or ``etaminus`` (sign flipped: that step is skipped),
    clamped to ``step_sizes``; ``p -= sign(g) * step_size``.

    >>> opt = tapegrad.optim.Rprop(model.parameters(), lr=0.01)
    """

    _sparse_refusal = "Rprop does not support sparse gradients"

    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *, capturable=False, foreach=None,
                 maximize=False, differentiable=False):
        one_element_lr(lr)
        check(0.0 <= lr, f"Invalid learning rate: {lr}")
        check(0.0 < etas[0] < 1.0 < etas[1], f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = dict(lr=lr, etas=etas, step_sizes=step_sizes, foreach=foreach, maximize=maximize,
                        differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def step(self, closure=None):
        loss = self._closure_loss(closure)
        self._begin_step()
        for group in self.param_groups:
            etaminus, etaplus = group["etas"]
            smin, smax = group["step_sizes"]
            for p, g in params_with_grad(group):
                state = self.state[p]
                if not state:
                    state["step"] = step_state()
                    state["prev"] = Tensor._make(np.zeros_like(p._array))
                    state["step_size"] = Tensor._make(np.full_like(g, group["lr"]))
                state["step"]._array += np.float32(1)
                _update(p, g, state["prev"]._array, state["step_size"]._array, etaminus, etaplus, smin, smax)
        return loss


def _update(p, g, prev, size, etaminus, etaplus, smin, smax):
    """One parameter's Rprop step on its arrays (``prev``: the last gradient used, ``size``: the step sizes)."""
    sign = np.sign(g * prev)
    factor = np.where(sign > 0, etaplus, np.where(sign < 0, etaminus, 1)).astype(g.dtype)
    size *= factor
    np.clip(size, smin, smax, out=size)
    g = np.where(factor == etaminus, 0, g).astype(g.dtype)
    p._array += -(np.sign(g) * size)
    prev[...] = g
    touched(p)


def rprop(params, grads, prevs, step_sizes, state_steps, foreach=None, capturable=False, maximize=False,
          differentiable=False, has_complex=False, *, step_size_min, step_size_max, etaminus, etaplus):
    """The functional form (``torch.optim.rprop.rprop``): ``Rprop.step``'s update of each parameter from the lists
    of its gradient, previous gradient, step sizes and step tensor, which is counted up by one."""
    functional_steps(state_steps)
    for p, g, prev, size in zip(params, grads, prevs, step_sizes):
        g = g._array
        _update(p, -g if maximize else g, prev._array, size._array, etaminus, etaplus, step_size_min, step_size_max)
