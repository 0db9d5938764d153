"""Per-coordinate adaptive methods: RMSprop, Adagrad, Adadelta — torch's single-tensor update rules."""

from __future__ import annotations

import numpy as np

from ..tensor import Tensor
from ._helpers import check, incr_step, params_with_grad, step_state, stepped, touched, weight_decay
from .optimizer import Optimizer

__all__ = ["RMSprop", "Adagrad", "Adadelta"]


class RMSprop(Optimizer):
    """Divide the gradient by a running RMS of recent gradients (``centered``, ``momentum`` as torch)."""

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
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
                g = weight_decay(p, g, lr, wd)
                sq = state["square_avg"]._array
                sq *= alpha
                sq += (1 - alpha) * (g * g)
                if centered:
                    ga = state["grad_avg"]._array
                    ga += (1 - alpha) * (g - ga)
                    avg = np.sqrt(sq - ga * ga)
                else:
                    avg = np.sqrt(sq)
                avg += eps
                if momentum > 0:
                    buf = state["momentum_buffer"]._array
                    buf *= momentum
                    buf += g / avg
                    p._array -= lr * buf
                else:
                    p._array += -lr * (g / avg)
                touched(p)
        return loss


class Adagrad(Optimizer):
    """Divide by the root of the sum of all past squared gradients."""

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0, eps=1e-10,
                 foreach=None, *, maximize=False, differentiable=False, fused=None):
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
            lr, lr_decay, eps, wd = group["lr"], group["lr_decay"], group["eps"], group["weight_decay"]
            for p, g in params_with_grad(group):
                state = self.state[p]
                step = incr_step(state)
                g = weight_decay(p, g, lr, wd)
                clr = lr / (1 + (step - 1) * lr_decay)
                s = state["sum"]._array
                s += g * g
                std = np.sqrt(s) + eps
                p._array += -clr * (g / std)
                touched(p)
        return loss


class Adadelta(Optimizer):
    """Step sizes from running averages of squared gradients and squared updates."""

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *, capturable=False,
                 maximize=False, differentiable=False):
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
                g = weight_decay(p, g, lr, wd)
                sq, acc = state["square_avg"]._array, state["acc_delta"]._array
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
        return loss
