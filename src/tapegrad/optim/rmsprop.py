"""RMSprop (centered, momentum) — torch's single-tensor update rule."""

from __future__ import annotations

import numpy as np

from ._helpers import check, functional_steps, number, one_element_lr, stepped, touched, weight_decay
from .optimizer import Optimizer

__all__ = ["RMSprop", "rmsprop"]


class RMSprop(Optimizer):
    """Divide the gradient by a running RMS of recent gradients (``centered``, ``momentum`` as torch)."""

    _sparse_refusal = "RMSprop does not support sparse gradients"

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        one_element_lr(lr)
        check(lr >= 0.0, f"Invalid learning rate: {lr}")
        check(eps >= 0.0, f"Invalid epsilon value: {eps}")
        check(momentum >= 0.0, f"Invalid momentum value: {momentum}")
        check(weight_decay >= 0.0, f"Invalid weight_decay value: {weight_decay}")
        check(alpha >= 0.0, f"Invalid alpha value: {alpha}")
        defaults = dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered, weight_decay=weight_decay,
                        capturable=capturable, foreach=foreach, maximize=maximize, differentiable=differentiable)
        super().__init__(params, defaults)

    def step(self, closure=None):
        loss = self._closure_loss(closure)
        self._begin_step()
        for group in self.param_groups:
            lr, alpha, eps, wd = group["lr"], group["alpha"], group["eps"], group["weight_decay"]
            momentum, centered = group["momentum"], group["centered"]
            extra = ("momentum_buffer",) * (momentum > 0) + ("grad_avg",) * bool(centered)
            for p, g, state, _ in stepped(self, group, "square_avg", *extra):
                ga = state["grad_avg"]._array if centered else None
                buf = state["momentum_buffer"]._array if momentum > 0 else None
                _update(p, g, state["square_avg"]._array, ga, buf, lr, alpha, eps, wd, momentum)
        return loss


def _update(p, g, sq, ga, buf, lr, alpha, eps, wd, momentum):
    """One parameter's RMSprop step on its arrays (``ga``: the centered form's gradient average, ``buf``: the
    momentum buffer; None where unused)."""
    g = weight_decay(p, g, lr, wd)
    sq *= alpha
    sq += (1 - alpha) * (g * g)
    if ga is not None:
        ga += (1 - alpha) * (g - ga)
        avg = np.sqrt(sq - ga * ga)
    else:
        avg = np.sqrt(sq)
    avg += eps
    if momentum > 0:
        buf *= momentum
        buf += g / avg
        p._array -= lr * buf
    else:
        p._array += -lr * (g / avg)
    touched(p)


def rmsprop(params, grads, square_avgs, grad_avgs, momentum_buffer_list, state_steps, foreach=None, maximize=False,
            differentiable=False, capturable=False, has_complex=False, *, lr, alpha, eps, weight_decay, momentum,
            centered):
    """The functional form (``torch.optim.rmsprop.rmsprop``): ``RMSprop.step``'s update of each parameter from the
    lists of its gradient, running averages, momentum buffer and step tensor, which is counted up by one."""
    functional_steps(state_steps)
    for i, (p, g, sq) in enumerate(zip(params, grads, square_avgs)):
        g = g._array
        ga = grad_avgs[i]._array if centered else None
        buf = momentum_buffer_list[i]._array if momentum > 0 else None
        _update(p, -g if maximize else g, sq._array, ga, buf, number(lr), alpha, eps, weight_decay, momentum)
