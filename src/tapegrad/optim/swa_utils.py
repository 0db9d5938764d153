"""Weight averaging (``torch.optim.swa_utils``): ``AveragedModel`` keeps a running average of a model's weights —
the equal average of stochastic weight averaging (SWA) or an exponential moving average (EMA) — ``SWALR`` anneals
the learning rate to a constant for the averaging phase, and ``update_bn`` recomputes BatchNorm statistics for the
averaged weights.

>>> model = tapegrad.nn.Linear(2, 1)
>>> ema = tapegrad.optim.swa_utils.AveragedModel(model, multi_avg_fn=get_ema_multi_avg_fn(0.9))
>>> ema.update_parameters(model); int(ema.n_averaged)
1
"""

from __future__ import annotations

import itertools
import math
import warnings
from copy import deepcopy

import numpy as np

from .. import _dtype
from ..autograd.grad_mode import no_grad
from ..nn.module import Module
from ..tensor import Tensor
from .lr_scheduler import LRScheduler, _per_group

__all__ = ["AveragedModel", "update_bn", "SWALR", "get_ema_multi_avg_fn", "get_swa_multi_avg_fn", "get_ema_avg_fn",
           "get_swa_avg_fn"]


def _lerp_(a, b, w):
    """torch's lerp in place on tensors' arrays (its two formulas, for accuracy at both ends)."""
    x, y = a._array, b._array
    if w < 0.5:
        x += w * (y - x)
    else:
        x[...] = y - (y - x) * (1 - w)
    a._vc[0] += 1


def _weight_of(num_averaged):
    """``1 / (num_averaged + 1)``: from an integer tensor, a float32 value (torch's true division's dtype)."""
    if isinstance(num_averaged, Tensor):
        return float(np.float32(1) / np.float32(int(num_averaged) + 1))
    return 1 / (num_averaged + 1)


def get_ema_multi_avg_fn(decay=0.999):
    """An in-place EMA update of lists of tensors: ``ema = decay * ema + (1 - decay) * current``."""
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in [0,1] range.")

    def ema_update(ema_param_list, current_param_list, _):
        with no_grad():
            if ema_param_list[0].is_floating_point() or ema_param_list[0].is_complex():
                for e, c in zip(ema_param_list, current_param_list):
                    _lerp_(e, c, 1 - decay)
            else:
                for e, c in zip(ema_param_list, current_param_list):
                    e.copy_(e * decay + c * (1 - decay))
    return ema_update


def get_swa_multi_avg_fn():
    """An in-place equal-average update of lists of tensors: ``avg += (current - avg) / (n + 1)``."""

    def swa_update(averaged_param_list, current_param_list, num_averaged):
        with no_grad():
            if averaged_param_list[0].is_floating_point() or averaged_param_list[0].is_complex():
                w = _weight_of(num_averaged)
                for a, c in zip(averaged_param_list, current_param_list):
                    _lerp_(a, c, w)
            elif isinstance(num_averaged, Tensor):
                raise RuntimeError("Integer division with addcdiv is no longer supported, and in a future release "
                                   "addcdiv will perform a true division of tensor1 and tensor2. The historic "
                                   "addcdiv behavior can be implemented as (input + value * torch.trunc(tensor1 / "
                                   "tensor2)).to(input.dtype) using the torch.trunc function.")
            else:
                for a, c in zip(averaged_param_list, current_param_list):
                    a.add_(c - a, alpha=1.0 / (num_averaged + 1))
    return swa_update


def get_ema_avg_fn(decay=0.999):
    """An EMA of one tensor: returns ``decay * ema + (1 - decay) * current``."""
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in [0,1] range.")

    def ema_update(ema_param, current_param, num_averaged):
        with no_grad():
            return decay * ema_param + (1 - decay) * current_param
    return ema_update


def get_swa_avg_fn():
    """An equal average of one tensor: returns ``avg + (current - avg) / (n + 1)``."""

    def swa_update(averaged_param, current_param, num_averaged):
        with no_grad():
            return averaged_param + (current_param - averaged_param) / (num_averaged + 1)
    return swa_update


class AveragedModel(Module):
    """A copy of ``model`` whose parameters (and buffers, with ``use_buffers``) are a running average of
    ``model``'s, updated by ``update_parameters(model)``; ``n_averaged`` (a buffer) counts the models averaged.
    ``avg_fn(avg, current, n)`` returns one averaged tensor; ``multi_avg_fn(avgs, currents, n)`` updates lists in
    place; with neither, an equal average (SWA)."""

    def __init__(self, model, device=None, avg_fn=None, multi_avg_fn=None, use_buffers=False):
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        from ..creation import tensor
        self.register_buffer("n_averaged", tensor(0, dtype=_dtype.long))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    def update_parameters(self, model):
        """Fold ``model``'s current weights into the average (the first call copies them)."""
        if self.use_buffers:
            mine = itertools.chain(self.module.parameters(), self.module.buffers())
            theirs = itertools.chain(model.parameters(), model.buffers())
        else:
            mine, theirs = self.parameters(), model.parameters()
        pairs = [(a.detach(), b.detach()) for a, b in zip(mine, theirs)]
        first = int(self.n_averaged) == 0
        with no_grad():
            if first:
                for a, b in pairs:
                    a.copy_(b)
            else:
                n = self.n_averaged
                if self.multi_avg_fn is not None or self.avg_fn is None:
                    groups = {}
                    for a, b in pairs:                          # one call per dtype, as torch groups them
                        groups.setdefault(a.dtype, []).append((a, b))
                    for group in groups.values():
                        avgs, curs = [a for a, _ in group], [b for _, b in group]
                        if self.multi_avg_fn is not None:
                            self.multi_avg_fn(avgs, curs, n)
                        else:
                            fn = get_swa_avg_fn()
                            for a, b in group:
                                a.copy_(fn(a, b, n))
                else:
                    for a, b in pairs:
                        a.copy_(self.avg_fn(a, b, n))
            if not self.use_buffers:
                for mine_b, theirs_b in zip(self.module.buffers(), model.buffers()):
                    mine_b.detach().copy_(theirs_b.detach())
            self.n_averaged += 1


def update_bn(loader, model, device=None):
    """Recompute every BatchNorm layer's running statistics of ``model`` with one pass over ``loader`` (batches,
    or tuples whose first element is the batch): the statistics of averaged weights are not the average of the
    statistics."""
    from ..nn.modules.batchnorm import _BatchNorm
    momenta = {}
    for module in model.modules():
        if isinstance(module, _BatchNorm):
            module.reset_running_stats()
            momenta[module] = module.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None
    with no_grad():
        for input in loader:
            if isinstance(input, (list, tuple)):
                input = input[0]
            if device is not None:
                input = input.to(device)
            model(input)
    for module, momentum in momenta.items():
        module.momentum = momentum
    model.train(was_training)


class SWALR(LRScheduler):
    """Anneal each group's lr to ``swa_lr`` over ``anneal_epochs`` epochs ("cos" or "linear"), then keep it."""

    def __init__(self, optimizer, swa_lr, anneal_epochs=10, anneal_strategy="cos", last_epoch=-1):
        for lr, group in zip(_per_group("swa_lr", optimizer, swa_lr), optimizer.param_groups):
            group["swa_lr"] = lr
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}")
        self._set_anneal_func(anneal_strategy)
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t):
        return t

    @staticmethod
    def _cosine_anneal(t):
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr, swa_lr, alpha):
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self):
        if not self._get_lr_called_within_step:
            warnings.warn("To get the last learning rate computed by the scheduler, please use `get_last_lr()`.",
                          UserWarning, stacklevel=2)
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        prev_alpha = self.anneal_func(max(0, min(1, (step - 1) / max(1, self.anneal_epochs))))
        prev_lrs = [self._get_initial_lr(g["lr"], g["swa_lr"], prev_alpha) for g in self.optimizer.param_groups]
        alpha = self.anneal_func(max(0, min(1, step / max(1, self.anneal_epochs))))
        return [g["swa_lr"] * alpha + lr * (1 - alpha) for g, lr in zip(self.optimizer.param_groups, prev_lrs)]

    def _set_anneal_func(self, anneal_strategy):
        self._anneal_strategy = anneal_strategy
        self.anneal_func = self._cosine_anneal if anneal_strategy == "cos" else self._linear_anneal

    def state_dict(self):
        return {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "anneal_func")}

    def load_state_dict(self, state_dict):
        self.__dict__.update(state_dict)
        self._set_anneal_func(self._anneal_strategy)
