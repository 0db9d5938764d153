"""Stochastic gradient descent (momentum, dampening, Nesterov, weight decay), as torch.optim.SGD."""

from __future__ import annotations

from ..tensor import Tensor
from ._helpers import check, number, one_element_lr, params_with_grad, touched, weight_decay
from .optimizer import Optimizer

__all__ = ["SGD"]


class SGD(Optimizer):
    """``p -= lr * g`` (with momentum: ``buf = momentum * buf + (1 - dampening) * g``).

    >>> opt = tapegrad.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    """

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False, *,
                 maximize=False, foreach=None, differentiable=False, fused=None):
        one_element_lr(lr)
        check(lr >= 0.0, f"Invalid learning rate: {lr}")
        check(momentum >= 0.0, f"Invalid momentum value: {momentum}")
        check(weight_decay >= 0.0, f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay, nesterov=nesterov,
                        maximize=maximize, foreach=foreach, differentiable=differentiable, fused=fused)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)

    def step(self, closure=None):
        """One update of every parameter that has a gradient; returns the closure's loss if given."""
        loss = self._closure_loss(closure)
        self._begin_step()
        for group in self.param_groups:
            lr, momentum, dampening = number(group["lr"]), group["momentum"], group["dampening"]
            wd, nesterov = group["weight_decay"], group["nesterov"]
            for p, g in params_with_grad(group):
                if wd != 0 and p._grad.is_sparse:      # (torch adds the dense parameter to the sparse gradient)
                    raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) instead.")
                g = weight_decay(p, g, lr, wd)
                if momentum != 0:
                    state = self.state[p]
                    buf = state.get("momentum_buffer")
                    if buf is None:
                        buf = state["momentum_buffer"] = Tensor._make(g.copy())
                    else:
                        b = buf._array
                        b *= momentum
                        b += g if dampening == 0 else (1 - dampening) * g
                    g = g + momentum * buf._array if nesterov else buf._array
                p._array -= lr * g
                touched(p)
        return loss
