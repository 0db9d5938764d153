"""Adafactor — torch's single-tensor update rule: second moments kept factored (one row and one column vector per
matrix, so memory is O(n + m) rather than O(n m)), a relative step size, and update clipping."""

from __future__ import annotations

import numpy as np

from ..tensor import Tensor
from ._helpers import check, lerp_, one_element_lr, params_with_grad, step_state, touched
from .optimizer import Optimizer

__all__ = ["Adafactor"]


def _norm(a, axis=None, keepdims=False):
    return np.sqrt(np.sum(a * a, axis=axis, keepdims=keepdims))


class Adafactor(Optimizer):
    """``p -= max(eps2, rms(p)) * min(lr, 1 / sqrt(t)) * clip(g / sqrt(v_hat))``, with ``v_hat`` the outer
    product of running row and column means of ``g**2`` over the last two dims (a running mean for vectors).

    >>> opt = tapegrad.optim.Adafactor(model.parameters())
    """

    _sparse_refusal = "Adafactor does not support sparse gradients"

    def __init__(self, params, lr=1e-2, beta2_decay=-0.8, eps=(None, 1e-3), d=1.0, weight_decay=0.0, *,
                 foreach=None, maximize=False):
        one_element_lr(lr)
        check(0.0 <= lr, f"Learning rate should be >= 0 but is: {lr}")
        check(0.0 >= beta2_decay, f"beta2_decay should be <= 0 but is: {beta2_decay}")
        check(eps[0] is None or 0.0 <= eps[0], f"epsilon1 should be >= 0 but is: {eps[0]}")
        check(0.0 <= eps[1], f"epsilon2 should be >= 0 but is: {eps[1]}")
        check(1.0 <= d, f"Clipping threshold d should be >= 1 but is: {d}")
        check(0.0 <= weight_decay, f"weight_decay should be >= 0 but is: {weight_decay}")
        defaults = dict(lr=lr, beta2_decay=beta2_decay, eps=eps, d=d, weight_decay=weight_decay, foreach=foreach,
                        maximize=maximize)
        super().__init__(params, defaults)

    def step(self, closure=None):
        loss = self._closure_loss(closure)
        self._begin_step()
        for group in self.param_groups:
            lr, decay, d, wd = group["lr"], group["beta2_decay"], group["d"], group["weight_decay"]
            eps1, eps2 = group["eps"]
            for p, g in params_with_grad(group):
                if p.is_complex():
                    raise RuntimeError("Adafactor does not support complex parameters")
                state = self.state[p]
                if not state:
                    state["step"] = step_state()
                    if g.ndim > 1:
                        state["row_var"] = Tensor._make(np.zeros(g.shape[:-1] + (1,), g.dtype))
                        state["col_var"] = Tensor._make(np.zeros(g.shape[:-2] + (1,) + g.shape[-1:], g.dtype))
                    else:
                        state["variance"] = Tensor._make(np.zeros_like(g))
                e1 = np.finfo(p._array.dtype).eps if eps1 is None else eps1
                state["step"]._array += np.float32(1)
                t = float(state["step"]._array)
                w = t ** decay
                rho = min(lr, 1 / (t ** 0.5))
                param = p._array
                alpha = max(eps2, float(_norm(param)) / (param.size ** 0.5)) * rho
                if wd != 0:
                    param *= 1 - lr * wd
                if g.ndim > 1:
                    row, col = state["row_var"]._array, state["col_var"]._array
                    lerp_(row, _norm(g, -1, True) ** 2 / g.shape[-1], w)
                    lerp_(col, _norm(g, -2, True) ** 2 / g.shape[-2], w)
                    var = np.matmul(row, col)
                    var /= np.maximum(row.mean(axis=-2, keepdims=True), e1)
                else:
                    v = state["variance"]._array
                    lerp_(v, g * g, w)
                    var = v.copy()
                update = 1 / np.sqrt(np.maximum(var, e1 * e1)) * g
                denom = max(1.0, float(_norm(update)) / ((update.size ** 0.5) * d))
                param += (-alpha / denom) * update
                touched(p)
        return loss

