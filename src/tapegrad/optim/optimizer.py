"""The Optimizer base: parameter groups, per-parameter state, zero_grad, step, state dicts (as torch.optim).

The update rules in the subclasses are PyTorch's single-tensor algorithms, operation for operation, on the
parameters' NumPy arrays (in place, under no_grad), so that the same data and initial parameters give the same
numbers as torch.
"""

from __future__ import annotations

import copy
import functools
from collections import OrderedDict, defaultdict
from collections.abc import Callable, Iterable
from itertools import chain
from typing import Any

import numpy as np

from .. import debug as _debug
from ..tensor import Tensor

__all__ = ["Optimizer", "register_optimizer_step_post_hook", "register_optimizer_step_pre_hook", "required"]

_global_optimizer_pre_hooks: OrderedDict = OrderedDict()
_global_optimizer_post_hooks: OrderedDict = OrderedDict()
_HOOK_DICTS = ("_optimizer_step_pre_hooks", "_optimizer_step_post_hooks", "_optimizer_state_dict_pre_hooks",
               "_optimizer_state_dict_post_hooks", "_optimizer_load_state_dict_pre_hooks",
               "_optimizer_load_state_dict_post_hooks")


def _handle(hooks):
    from ..utils.hooks import RemovableHandle      # (loads nn: on first use, as optim does not need it otherwise)
    return RemovableHandle(hooks)


def register_optimizer_step_pre_hook(hook):
    """A hook run before every optimizer's ``step`` (``hook(optimizer, args, kwargs)``, may return new ``(args,
    kwargs)``)."""
    handle = _handle(_global_optimizer_pre_hooks)
    _global_optimizer_pre_hooks[handle.id] = hook
    return handle


def register_optimizer_step_post_hook(hook):
    """A hook run after every optimizer's ``step`` (``hook(optimizer, args, kwargs)``)."""
    handle = _handle(_global_optimizer_post_hooks)
    _global_optimizer_post_hooks[handle.id] = hook
    return handle


# The aliases optimizers written for torch annotate with (``from torch.optim.optimizer import ParamsT``).
Args = tuple[Any, ...]
Kwargs = dict[str, Any]
StateDict = dict[str, Any]
ParamsT = Iterable[Tensor] | Iterable[dict] | Iterable[tuple]
GlobalOptimizerPreHook = Callable[..., Any]
GlobalOptimizerPostHook = Callable[..., None]

_FUSED_DEVICES = ["mps", "cuda", "xpu", "hpu", "cpu", "mtia", "privateuseone"]    # (torch's lists, for its words)
_FOREACH_DEVICES = ["cuda", "xpu", "mtia", "privateuseone"]


# --- the private helpers torch's own optimizer files use, which copies of them import ----------------------------
def _use_grad_for_differentiable(func):
    """Run ``step`` with gradients on only when the optimizer was made with ``differentiable=True``."""
    @functools.wraps(func)
    def _use_grad(*args, **kwargs):
        from ..autograd.grad_mode import is_grad_enabled, set_grad_enabled
        self = args[0]
        prev = is_grad_enabled()
        try:
            set_grad_enabled(self.defaults["differentiable"])
            return func(*args, **kwargs)
        finally:
            set_grad_enabled(prev)
    return _use_grad


def _get_value(x):
    """A hyper-parameter or ``step`` held in a tensor as its Python number (as it is, while compiling)."""
    from .. import compiler
    if compiler.is_compiling():
        return x
    return x.item() if isinstance(x, Tensor) else x


def _stack_if_compiling(x):
    from .. import compiler
    if compiler.is_compiling():
        from .. import stack
        return stack(x)
    return x


def _disable_dynamo_if_unsupported(single_tensor_fn=None):
    """(torch keeps some multi-tensor updates out of its compiler; tapegrad's compiler takes an optimizer's step
    as it is, so the decorator returns the function unchanged.)"""
    if single_tensor_fn:
        globals()[single_tensor_fn.__name__] = single_tensor_fn
    return lambda func: func


def _default_to_fused_or_foreach(params, differentiable, use_fused=False):
    """``(fused, foreach)`` as torch picks them for these parameters: on the CPU, fused when asked for and every
    parameter is floating, foreach never (its kernels are for accelerators)."""
    if differentiable:
        return False, False
    fused = use_fused and all(p is None or (isinstance(p, Tensor) and p.is_floating_point()) for p in params)
    foreach = not fused and all(p is None for p in params)
    return fused, foreach


def _device_dtype_check_for_fused(p, cuda_unsupported=False):
    devices = [d for d in _FUSED_DEVICES if not (cuda_unsupported and d == "cuda")]
    if not p.is_floating_point():
        raise RuntimeError("`fused=True` requires all the params to be floating point Tensors of supported devices: "
                           f"{devices} but {p.dtype} and {p.device.type}")


def _view_as_real(params, *state_and_grads):
    from .. import view_as_real
    for i, p in enumerate(params):
        if p.is_complex():
            params[i] = view_as_real(params[i])
            for s in state_and_grads:
                s[i] = view_as_real(s[i])


def _get_scalar_dtype(is_fused=None):
    from .. import float32, float64, get_default_dtype
    if is_fused:
        return float32
    return float64 if get_default_dtype() == float64 else float32


def _to_scalar(x):
    """A 1-element hyper-parameter tensor of one or more dimensions as a 0-d tensor; anything else unchanged."""
    if isinstance(x, Tensor) and x.dim() != 0:
        return x.squeeze()
    return x


class _Required:
    def __repr__(self):
        return "<required parameter>"


required = _Required()


class Optimizer:
    """Base class of all optimizers.

    ``params``: an iterable of tensors, of ``(name, tensor)`` pairs, or of dicts (parameter groups with their
    own options). ``defaults``: the options every group gets unless it sets its own.
    """

    def __init__(self, params, defaults):
        self.defaults = defaults
        for name in _HOOK_DICTS:
            setattr(self, name, OrderedDict())
        self._patch_step_function()
        self.state = defaultdict(dict)
        self.param_groups = []
        self._step_count = 0
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of Tensors or dicts, "
                            f"but got {type(params).__name__}")
        groups = list(params)
        if len(groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for g in groups:
            self.add_param_group(g)

    def __getstate__(self):
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __setstate__(self, state):
        """(Unpickling, copy.deepcopy; the ``__setstate__`` that optimizers written for torch call through
        ``super()`` before setting their own group defaults.)"""
        self.__dict__.update(state)
        for name in _HOOK_DICTS:
            if name not in self.__dict__:
                setattr(self, name, OrderedDict())
        self._patch_step_function()
        self.defaults.setdefault("differentiable", False)

    # --- hooks ---------------------------------------------------------------------------------------------
    @staticmethod
    def profile_hook_step(func):
        """``func`` (a class's ``step``) wrapped to run the global and the optimizer's step pre- and post-hooks."""
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            self = args[0]
            if _global_optimizer_pre_hooks or self._optimizer_step_pre_hooks:     # (none: one test, no loop)
                for pre_hook in chain(_global_optimizer_pre_hooks.values(), self._optimizer_step_pre_hooks.values()):
                    result = pre_hook(self, args, kwargs)
                    if result is not None:
                        if isinstance(result, tuple) and len(result) == 2:
                            args, kwargs = result
                        else:
                            raise RuntimeError(f"{func} must return None or a tuple of (new_args, new_kwargs), but "
                                               f"got {result}.")
            out = func(*args, **kwargs)
            if self._optimizer_step_post_hooks or _global_optimizer_post_hooks:
                for post_hook in chain(self._optimizer_step_post_hooks.values(),
                                       _global_optimizer_post_hooks.values()):
                    post_hook(self, args, kwargs)
            return out
        return wrapper

    def _optimizer_step_code(self):
        """(torch calls this empty marker after each step for its profiler; tapegrad's needs none, so the step
        wrapper skips it.)"""

    def _patch_step_function(self):
        """Wrap this class's ``step`` once (as torch does on the first instance of each class)."""
        self._zero_grad_profile_name = f"Optimizer.zero_grad#{self.__class__.__name__}.zero_grad"
        if not getattr(self.__class__.step, "hooked", None):
            self.__class__.step = self.profile_hook_step(self.__class__.step)
            self.__class__.step.hooked = True

    def _register(self, attr, hook, prepend=False):
        hooks = getattr(self, attr)
        handle = _handle(hooks)
        hooks[handle.id] = hook
        if prepend:
            hooks.move_to_end(handle.id, last=False)
        return handle

    def register_step_pre_hook(self, hook):
        """``hook(optimizer, args, kwargs)`` before each ``step``; may return new ``(args, kwargs)``."""
        return self._register("_optimizer_step_pre_hooks", hook)

    def register_step_post_hook(self, hook):
        """``hook(optimizer, args, kwargs)`` after each ``step``."""
        return self._register("_optimizer_step_post_hooks", hook)

    def register_state_dict_pre_hook(self, hook, prepend=False):
        """``hook(optimizer)`` before ``state_dict()`` packs the state."""
        return self._register("_optimizer_state_dict_pre_hooks", hook, prepend)

    def register_state_dict_post_hook(self, hook, prepend=False):
        """``hook(optimizer, state_dict)`` after ``state_dict()``; a returned dict replaces it."""
        return self._register("_optimizer_state_dict_post_hooks", hook, prepend)

    def register_load_state_dict_pre_hook(self, hook, prepend=False):
        """``hook(optimizer, state_dict)`` before ``load_state_dict``; a returned dict is loaded instead."""
        return self._register("_optimizer_load_state_dict_pre_hooks", hook, prepend)

    def register_load_state_dict_post_hook(self, hook, prepend=False):
        """``hook(optimizer)`` after ``load_state_dict``."""
        return self._register("_optimizer_load_state_dict_post_hooks", hook, prepend)

    def __repr__(self):
        """torch's layout: each group opens with a newline, so groups after the first follow an empty line;
        ``param_names`` is listed like any option."""
        text = self.__class__.__name__ + " ("
        for i, group in enumerate(self.param_groups):
            text += f"\nParameter Group {i}\n"
            for key in sorted(group):
                if key != "params":
                    text += f"    {key}: {group[key]}\n"
        return text + ")"

    def add_param_group(self, param_group: dict):
        """Add a group of parameters (with its own options) to optimise."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group).__name__}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, but the ordering of "
                            "tensors in sets will change between runs. Please use a list instead.")
        params = list(params)
        names = [x[0] for x in params if isinstance(x, tuple)]      # (named parameters: (name, tensor) pairs)
        if names:
            if len(names) != len(params):
                raise ValueError("all optimizer params should be with/without names. Some param names are missing")
            params = [x[1] for x in params]
        for g in self.param_groups:
            if ("param_names" in g) != bool(names):
                raise ValueError("all optimizer param groups should be with/without names. cannot add param group "
                                 f"{'with' if names else 'without'} names to the optimizer")
        if len({id(p) for p in params}) != len(params):
            import warnings
            warnings.warn("optimizer contains a parameter group with duplicate parameters; in future, this will "
                          "cause an error; see github.com/pytorch/pytorch/issues/40967 for more information",
                          UserWarning, stacklevel=3)
        for p in params:
            if not isinstance(p, Tensor):
                raise TypeError(f"optimizer can only optimize Tensors, but one of the params is "
                                f"{type(p).__name__}")
            if not p.is_leaf:
                raise ValueError("can't optimize a non-leaf Tensor")
        group = dict(param_group)
        group["params"] = params
        if names:
            group["param_names"] = names
        for name, default in self.defaults.items():
            if default is required and name not in group:
                raise ValueError(f"parameter group didn't specify a value of required optimization parameter "
                                 f"{name}")
            group.setdefault(name, default)
        seen = set()
        for g in self.param_groups:
            seen.update(id(p) for p in g["params"])
        if any(id(p) in seen for p in params):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(group)

    def zero_grad(self, set_to_none: bool = True):
        """Reset the gradients of all parameters: to None (default) or to zeros."""
        if _debug.enabled:
            _debug.on_zero_grad(self)
        for group in self.param_groups:
            for p in group["params"]:
                if p._grad is not None:
                    if set_to_none:
                        p._grad = None
                    else:
                        p._grad._array[...] = 0
                        p._grad._vc[0] += 1

    _sparse_refusal = None      # torch's error for a sparse gradient (None: this optimizer takes them)

    def _begin_step(self):
        if self._sparse_refusal is not None:
            for group in self.param_groups:
                for p in group["params"]:
                    if p._grad is not None and p._grad.is_sparse:
                        raise RuntimeError(self._sparse_refusal)
        if _debug.enabled:
            _debug.on_optimizer_step(self)
        self._step_count += 1

    def step(self, closure=None):
        raise NotImplementedError

    def _closure_loss(self, closure):
        if closure is None:
            return None
        from ..autograd.grad_mode import enable_grad
        with enable_grad():
            return closure()

    # --- state dicts -------------------------------------------------------------------------------------
    def state_dict(self):
        """``{"state": {index: {...}}, "param_groups": [{..., "params": [indices]}]}``, as torch's."""
        for pre_hook in self._optimizer_state_dict_pre_hooks.values():
            pre_hook(self)
        index = {}
        start = 0
        groups = []
        for g in self.param_groups:
            ids = {id(p): start + i for i, p in enumerate(g["params"]) if id(p) not in index}
            index.update(ids)
            packed = {k: v for k, v in g.items() if k != "params"}
            packed["params"] = [index[id(p)] for p in g["params"]]
            start += len(ids)
            groups.append(packed)
        state = {index[id(p)]: v for p, v in self.state.items() if id(p) in index}
        state_dict = {"state": state, "param_groups": groups}
        for post_hook in self._optimizer_state_dict_post_hooks.values():
            result = post_hook(self, state_dict)
            if result is not None:
                state_dict = result
        return state_dict

    def load_state_dict(self, state_dict):
        """Restore what ``state_dict`` returned, as torch does: the groups' options deep-copied, the state's tensors
        taken as they are — the same tensor objects where the dtype already matches, so that later steps update
        the loaded dict's tensors in place too — floating ones cast to a floating parameter's dtype, ``step`` as
        saved; state for indices that name no parameter kept under its key."""
        state_dict = state_dict.copy()
        for pre_hook in self._optimizer_load_state_dict_pre_hooks.values():
            result = pre_hook(self, state_dict)
            if result is not None:
                state_dict = result
        groups, saved_groups = self.param_groups, copy.deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match the size of "
                             "optimizer's group")
        id_map = dict(zip(chain.from_iterable(g["params"] for g in saved_groups),
                          chain.from_iterable(g["params"] for g in groups)))
        state = defaultdict(dict)
        for k, v in state_dict["state"].items():
            k = int(k) if isinstance(k, str) and k.isdigit() else k
            if k in id_map:
                p = id_map[k]
                state[p] = _cast_state(p, None, v)
            else:
                state[k] = v
        new_groups = []
        for g, s in zip(groups, saved_groups):
            s["params"] = g["params"]
            if "param_names" in g and "param_names" not in s:
                s["param_names"] = g["param_names"]
            new_groups.append(s)
        self.__setstate__({"state": state, "param_groups": new_groups})
        for post_hook in self._optimizer_load_state_dict_post_hooks.values():
            post_hook(self)


def _cast_state(p, key, value):
    """One saved state value for parameter ``p`` (torch's ``_cast``): a tensor is kept, or cast to a floating
    ``p``'s dtype (``step`` never), dicts and lists are rebuilt around their values."""
    if isinstance(value, np.ndarray):
        value = Tensor._make(value)
    if isinstance(value, Tensor):
        if key != "step" and p.is_floating_point() and value.dtype is not p.dtype:
            return value.to(dtype=p.dtype)
        return value
    if isinstance(value, dict):
        return {k: _cast_state(p, k, v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_cast_state(p, None, v) for v in value)
    return value
