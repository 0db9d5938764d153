"""SparseAdam: Adam whose moments and parameters change only where the gradient has entries — torch's rule.

The gradient of an ``Embedding(sparse=True)`` weight is a COO tensor: SparseAdam updates the rows its entries name
(the rows looked up; the ``padding_idx`` row never). A dense gradient (which torch refuses) is read as one whose
entries are its rows that are not all zero. Every other row keeps its moments and its value, as in torch.
"""

from __future__ import annotations

import math

import numpy as np

from ..tensor import Tensor
from ._helpers import check, one_element_lr, params_with_grad, touched
from .optimizer import Optimizer

__all__ = ["SparseAdam"]


class SparseAdam(Optimizer):
    """Lazy Adam for embedding tables: only the rows a batch touched are updated.

    >>> opt = tapegrad.optim.SparseAdam(embedding.parameters(), lr=1e-3)
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, maximize=False):
        one_element_lr(lr)
        check(0.0 < lr, f"Invalid learning rate: {lr}")
        check(0.0 < eps, f"Invalid epsilon value: {eps}")
        check(0.0 <= betas[0] < 1.0, f"Invalid beta parameter at index 0: {betas[0]}")
        check(0.0 <= betas[1] < 1.0, f"Invalid beta parameter at index 1: {betas[1]}")
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, maximize=maximize))
        sparse_params = [[i, j] for i, g in enumerate(self.param_groups) for j, p in enumerate(g["params"])
                         if p.is_sparse]
        if sparse_params:
            raise ValueError(f"Sparse params at indices {sparse_params}: SparseAdam requires dense parameter tensors")
        complex_params = [[i, j] for i, g in enumerate(self.param_groups) for j, p in enumerate(g["params"])
                          if p.is_complex()]
        if complex_params:
            raise ValueError(f"Complex params at indices {complex_params}: SparseAdam does not support complex "
                             "parameters")

    def step(self, closure=None):
        loss = self._closure_loss(closure)
        self._begin_step()
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            lr, eps = group["lr"], group["eps"]
            for p, g in params_with_grad(group):
                state = self.state[p]
                if not state:
                    state["step"] = 0
                    state["exp_avg"] = Tensor._make(np.zeros_like(p._array))
                    state["exp_avg_sq"] = Tensor._make(np.zeros_like(p._array))
                state["step"] += 1
                step = state["step"]
                if p._grad.is_sparse:      # the rows its entries name (an embedding's lookups)
                    rows = np.zeros(g.shape[0], bool)
                    rows[p._grad._indices()._array[0]] = True
                else:
                    rows = (g != 0).reshape(g.shape[0], -1).any(1) if g.ndim else np.asarray(g != 0)
                if not rows.any():
                    continue
                gv = g[rows]
                m, v = state["exp_avg"]._array, state["exp_avg_sq"]._array
                old_m, old_v = m[rows], v[rows]
                m_upd = (gv - old_m) * (1 - beta1)
                v_upd = (gv ** 2 - old_v) * (1 - beta2)
                m[rows] = old_m + m_upd
                v[rows] = old_v + v_upd
                numer = m_upd + old_m
                denom = np.sqrt(v_upd + old_v) + eps
                step_size = lr * math.sqrt(1 - beta2 ** step) / (1 - beta1 ** step)
                p._array[rows] += -step_size * (numer / denom)
                touched(p)
        return loss
