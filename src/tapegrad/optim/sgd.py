"""Stochastic gradient descent (momentum, dampening, Nesterov, weight decay), as torch.optim.SGD."""

from __future__ import annotations

from ..tensor import Tensor
from ._helpers import check, number, one_element_lr, params_with_grad, touched, weight_decay
from .optimizer import Optimizer

__all__ = ["SGD", "sgd"]


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
            pairs = params_with_grad(group)
            bufs = [self.state[p].get("momentum_buffer") for p, _ in pairs] if momentum != 0 else None
            _sgd_arrays(pairs, bufs, lr, momentum, dampening, wd, nesterov)
            if bufs is not None:
                for (p, _), buf in zip(pairs, bufs):
                    self.state[p]["momentum_buffer"] = buf
        return loss


def _sgd_arrays(pairs, bufs, lr, momentum, dampening, wd, nesterov):
    """The update of each ``(parameter, gradient array)``; ``bufs`` (with momentum) holds each momentum buffer
    tensor or None, and gets the new ones."""
    for i, (p, g) in enumerate(pairs):
        if wd != 0 and p._grad is not None and p._grad.is_sparse:   # (torch adds the dense parameter to the sparse
            raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) instead.")   # gradient)
        g = weight_decay(p, g, lr, wd)
        if momentum != 0:
            buf = bufs[i]
            if buf is None:
                buf = bufs[i] = Tensor._make(g.copy())
            else:
                b = buf._array
                b *= momentum
                b += g if dampening == 0 else (1 - dampening) * g
            g = g + momentum * buf._array if nesterov else buf._array
        p._array -= lr * g
        touched(p)


def sgd(params, d_p_list, momentum_buffer_list, has_sparse_grad=False, foreach=None, fused=None, grad_scale=None,
        found_inf=None, *, weight_decay, momentum, lr, dampening, nesterov, maximize):
    """The functional form (``torch.optim.sgd.sgd``): ``SGD.step``'s update of each parameter from the list of its
    gradients; ``momentum_buffer_list`` gets a new buffer where it holds None."""
    pairs = [(p, -g._array if maximize else g._array) for p, g in zip(params, d_p_list)]
    _sgd_arrays(pairs, momentum_buffer_list if momentum != 0 else None, number(lr), momentum, dampening,
                weight_decay, nesterov)
