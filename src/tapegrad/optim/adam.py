"""The Adam family: Adam (amsgrad), AdamW, Adamax, NAdam, RAdam — torch's single-tensor update rules."""

from __future__ import annotations

import math

import numpy as np

from ..tensor import Tensor
from ._helpers import check, lerp_, moments_, stepped, touched, weight_decay
from .optimizer import Optimizer

__all__ = ["Adam", "AdamW", "Adamax", "NAdam", "RAdam"]


def _check_adam(lr, eps, betas, weight_decay):
    check(lr >= 0.0, f"Invalid learning rate: {lr}")
    check(eps >= 0.0, f"Invalid epsilon value: {eps}")
    check(0.0 <= betas[0] < 1.0, f"Invalid beta parameter at index 0: {betas[0]}")
    check(0.0 <= betas[1] < 1.0, f"Invalid beta parameter at index 1: {betas[1]}")
    check(weight_decay >= 0.0, f"Invalid weight_decay value: {weight_decay}")


def _one_f32():
    return Tensor._make(np.ones((), np.float32))   # NAdam's mu_product: float32, as torch keeps it


class Adam(Optimizer):
    """Adaptive moments: ``p -= lr * m_hat / (sqrt(v_hat) + eps)``; ``amsgrad`` keeps the max of v.

    >>> opt = tapegrad.optim.Adam(model.parameters(), lr=1e-3)
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False, *,
                 foreach=None, maximize=False, capturable=False, differentiable=False, fused=None,
                 decoupled_weight_decay=False):
        _check_adam(lr, eps, betas, weight_decay)
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
                param = p._array
                g = weight_decay(p, g, lr, wd, group["decoupled_weight_decay"])
                m, v = state["exp_avg"]._array, state["exp_avg_sq"]._array
                moments_(m, v, g, beta1, beta2)
                bias_correction1 = 1 - beta1 ** step
                bias_correction2 = 1 - beta2 ** step
                step_size = lr / bias_correction1
                bias_correction2_sqrt = math.sqrt(bias_correction2)
                if amsgrad:
                    vmax = state["max_exp_avg_sq"]._array
                    np.maximum(vmax, v, out=vmax)
                    denom = np.sqrt(vmax) / bias_correction2_sqrt + eps
                else:
                    denom = np.sqrt(v) / bias_correction2_sqrt + eps
                param += -step_size * (m / denom)
                touched(p)
        return loss


class AdamW(Adam):
    """Adam with decoupled weight decay (``p *= 1 - lr * weight_decay`` before the Adam step)."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False, *,
                 maximize=False, foreach=None, capturable=False, differentiable=False, fused=None):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach, maximize=maximize,
                         capturable=capturable, differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)


class Adamax(Optimizer):
    """Adam with the infinity norm: ``u = max(beta2 * u, |g| + eps)``."""

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
                g = weight_decay(p, g, lr, wd)
                m, u = state["exp_avg"]._array, state["exp_inf"]._array
                lerp_(m, g, 1 - beta1)
                u *= beta2
                np.maximum(u, np.abs(g) + eps, out=u)
                clr = lr / (1 - beta1 ** step)
                p._array += -clr * (m / u)
                touched(p)
        return loss


class NAdam(Optimizer):
    """Adam with Nesterov momentum (``momentum_decay`` schedule of torch)."""

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
                bias_correction2 = 1 - beta2 ** step
                g = weight_decay(p, g, lr, wd, group["decoupled_weight_decay"])
                mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * md)))
                mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * md)))
                mp = state["mu_product"]._array
                mp *= np.float32(mu)
                mu_product = float(mp)
                m, v = state["exp_avg"]._array, state["exp_avg_sq"]._array
                moments_(m, v, g, beta1, beta2)
                denom = np.sqrt(v / bias_correction2) + eps
                mu_product_next = mu_product * mu_next
                p._array += (-lr * (1.0 - mu) / (1.0 - mu_product)) * (g / denom)
                p._array += ((-lr * mu_next) / (1.0 - mu_product_next)) * (m / denom)
                touched(p)
        return loss


class RAdam(Optimizer):
    """Rectified Adam: the adaptive step only once the variance estimate is trustworthy (rho_t > 5)."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, decoupled_weight_decay=False,
                 *, foreach=None, maximize=False, capturable=False, differentiable=False):
        _check_adam(lr, eps, betas, weight_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, maximize=maximize, foreach=foreach,
                        capturable=capturable, decoupled_weight_decay=decoupled_weight_decay,
                        differentiable=differentiable)
        super().__init__(params, defaults)

    def step(self, closure=None):
        loss = self._closure_loss(closure)
        self._begin_step()
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            lr, eps, wd = group["lr"], group["eps"], group["weight_decay"]
            for p, g, state, step in stepped(self, group, "exp_avg", "exp_avg_sq"):
                g = weight_decay(p, g, lr, wd, group["decoupled_weight_decay"])
                m, v = state["exp_avg"]._array, state["exp_avg_sq"]._array
                moments_(m, v, g, beta1, beta2)
                bias_correction1 = 1 - beta1 ** step
                bias_correction2 = 1 - beta2 ** step
                corrected = m / bias_correction1
                rho_inf = 2 / (1 - beta2) - 1
                rho_t = rho_inf - 2 * step * (beta2 ** step) / bias_correction2
                if rho_t > 5.0:
                    rect = ((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
                    adaptive = (bias_correction2 ** 0.5) / (np.sqrt(v) + eps)
                    p._array -= corrected * lr * adaptive * rect
                else:
                    p._array -= corrected * lr
                touched(p)
        return loss
