"""``functorch``: the library torch.func grew out of, as programs written for it import it (``import functorch as
ft``; ``from functorch import make_functional_with_buffers, vmap``). Its transforms are ``tapegrad.func``'s, each
with functorch's FutureWarning pointing at the torch.func name; ``make_functional`` /
``make_functional_with_buffers`` / ``combine_state_for_ensemble`` turn a module into a function of its parameters
(and buffers) through ``func.functional_call`` on a copy of the module.

``tapegrad.parity`` makes ``import functorch`` load this module in the tapegrad run (real functorch imports real
torch's internals)."""

from __future__ import annotations

import copy
import warnings

from . import func as _func
from .nn.module import Module

__all__ = ["vmap", "grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian", "functionalize",
           "make_functional", "make_functional_with_buffers", "combine_state_for_ensemble", "FunctionalModule",
           "FunctionalModuleWithBuffers"]


def _warn(api, new_api=None):
    new_api = new_api or f"torch.func.{api}"
    warnings.warn(f"We've integrated functorch into PyTorch. As the final step of the integration, `functorch.{api}` "
                  f"is deprecated as of PyTorch 2.0 and will be deleted in a future version of PyTorch >= 2.3. "
                  f"Please use `{new_api}` instead; see the PyTorch 2.0 release notes and/or the `torch.func` "
                  f"migration guide for more details https://pytorch.org/docs/main/func.migrating.html",
                  FutureWarning, stacklevel=3)


def _deprecated(name, new_api=None):
    target = getattr(_func, name)

    def api(*args, **kwargs):
        _warn(name, new_api)
        return target(*args, **kwargs)
    api.__name__ = api.__qualname__ = name
    api.__doc__ = f"``functorch.{name}``: ``{new_api or 'torch.func.' + name}`` (deprecated name)."
    return api


vmap = _deprecated("vmap", "torch.vmap")
grad = _deprecated("grad")
grad_and_value = _deprecated("grad_and_value")
vjp = _deprecated("vjp")
jvp = _deprecated("jvp")
jacrev = _deprecated("jacrev")
jacfwd = _deprecated("jacfwd")
hessian = _deprecated("hessian")
functionalize = _deprecated("functionalize")


def _names(named):
    """Unique tensors (in order) and, for each, every name it has in the module (tied weights share one)."""
    order, names = [], {}
    for name, t in named:
        if id(t) not in names:
            order.append(t)
            names[id(t)] = []
        names[id(t)].append(name)
    return tuple(order), [names[id(t)] for t in order]


class FunctionalModule(Module):
    """What ``make_functional`` returns: ``func(params, *args)`` runs the module with ``params``."""

    def __init__(self, stateless_model, param_names):
        super().__init__()
        self.stateless_model = stateless_model
        self.param_names = tuple(n[0] for n in param_names)
        self._all_names = param_names

    def forward(self, params, *args, **kwargs):
        tensors = {n: p for names, p in zip(self._all_names, params) for n in names}
        return _func.functional_call(self.stateless_model, tensors, args, kwargs)


class FunctionalModuleWithBuffers(Module):
    """What ``make_functional_with_buffers`` returns: ``func(params, buffers, *args)``."""

    def __init__(self, stateless_model, param_names, buffer_names):
        super().__init__()
        self.stateless_model = stateless_model
        self.param_names = tuple(n[0] for n in param_names)
        self.buffer_names = tuple(n[0] for n in buffer_names)
        self._all_names = list(param_names) + list(buffer_names)

    def forward(self, params, buffers, *args, **kwargs):
        tensors = {n: t for names, t in zip(self._all_names, tuple(params) + tuple(buffers)) for n in names}
        return _func.functional_call(self.stateless_model, tensors, args, kwargs)


def _extract(model, disable_autograd_tracking):
    model_copy = copy.deepcopy(model)
    params, pnames = _names(model_copy.named_parameters(remove_duplicate=False))
    buffers, bnames = _names(model_copy.named_buffers(remove_duplicate=False))
    if disable_autograd_tracking:
        for p in params:
            p.requires_grad_(False)
    return model_copy, params, pnames, buffers, bnames


def make_functional(model, disable_autograd_tracking=False):
    """``(func, params)``: ``func(params, *args)`` is ``model(*args)`` with ``params`` (a copy of the model's)."""
    _warn("make_functional", "torch.func.functional_call")
    model_copy, params, pnames, _, _ = _extract(model, disable_autograd_tracking)
    return FunctionalModule(model_copy, pnames), params


def make_functional_with_buffers(model, disable_autograd_tracking=False):
    """``(func, params, buffers)``: ``func(params, buffers, *args)`` is ``model(*args)`` with that state."""
    _warn("make_functional_with_buffers", "torch.func.functional_call")
    model_copy, params, pnames, buffers, bnames = _extract(model, disable_autograd_tracking)
    return FunctionalModuleWithBuffers(model_copy, pnames, bnames), params, buffers


def combine_state_for_ensemble(models):
    """``(func, params, buffers)`` with every parameter and buffer stacked over ``models`` (for ``vmap``)."""
    _warn("combine_state_for_ensemble", "torch.func.stack_module_state")
    from .ops.shape import stack
    if len(models) == 0:
        raise RuntimeError("combine_state_for_ensemble: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or all(not m.training for m in models)):
        raise RuntimeError("combine_state_for_ensemble: Expected all models to have the same training/eval mode.")
    if not all(type(m) is type(models[0]) for m in models):
        raise RuntimeError("combine_state_for_ensemble: Expected all models to be of the same class.")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        funcs, params, buffers = zip(*[make_functional_with_buffers(m) for m in models])
    params = tuple(stack(list(shards)).detach() for shards in zip(*params))
    buffers = tuple(stack(list(shards)).detach() for shards in zip(*buffers))
    return funcs[0], params, buffers
