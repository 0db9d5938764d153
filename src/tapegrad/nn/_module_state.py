"""Module's state dict: ``state_dict``, ``load_state_dict``, extra state and the state-dict hooks, as torch's.

These functions are ``Module``'s methods (its class body imports them from here).
"""

from __future__ import annotations

import functools
import itertools
import warnings
from collections import OrderedDict, namedtuple

from ..autograd.grad_mode import no_grad
from ..tensor import Tensor
from ._module_hooks import RemovableHandle, module_method
from .parameter import Parameter


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    __slots__ = ()

    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


_IncompatibleKeys.__module__ = "tapegrad.nn.module"   # (defined there before this file was split off)


@module_method
def get_extra_state(self):
    """Override (with ``set_extra_state``) to save non-tensor state: it goes in the state dict as
    ``<prefix>_extra_state``."""
    raise RuntimeError("Reached a code path in Module.get_extra_state() that should never be called. Please file "
                       "an issue at https://github.com/pytorch/pytorch/issues/new?template=bug-report.yml to "
                       "report this bug.")

@module_method
def set_extra_state(self, state):
    """Restore what ``get_extra_state`` returned (called by ``load_state_dict``)."""
    raise RuntimeError("Reached a code path in Module.set_extra_state() that should never be called. Please file "
                       "an issue at https://github.com/pytorch/pytorch/issues/new?template=bug-report.yml to "
                       "report this bug.")

@module_method
def _save_to_state_dict(self, destination, prefix, keep_vars):
    for name, param in self._parameters.items():
        if param is not None:
            destination[prefix + name] = param if keep_vars else param.detach()
    for name, buf in self._buffers.items():
        if buf is not None and name not in self._non_persistent_buffers_set:
            destination[prefix + name] = buf if keep_vars else buf.detach()
    if type(self).get_extra_state is not get_extra_state:
        destination[prefix + "_extra_state"] = self.get_extra_state()

@module_method
def state_dict(self, *args, destination=None, prefix="", keep_vars=False):
    """An ``OrderedDict`` of parameters and persistent buffers by dotted name (detached unless keep_vars)."""
    if args:
        destination = args[0] if len(args) > 0 else destination
        prefix = args[1] if len(args) > 1 else prefix
        keep_vars = args[2] if len(args) > 2 else keep_vars
    if destination is None:
        destination = OrderedDict()
        destination._metadata = OrderedDict()
    local_metadata = {"version": self._version}     # (the dict hooks see is the one saved, as torch's)
    if hasattr(destination, "_metadata"):
        destination._metadata[prefix[:-1]] = local_metadata
    for hook in self._state_dict_pre_hooks.values():
        hook(self, prefix, keep_vars)
    self._save_to_state_dict(destination, prefix, keep_vars)
    for name, module in self._modules.items():
        if module is not None:
            module.state_dict(destination=destination, prefix=prefix + name + ".", keep_vars=keep_vars)
    for hook in self._state_dict_hooks.values():
        r = hook(self, destination, prefix, local_metadata)
        if r is not None:
            destination = r
    return destination

@module_method
def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                          error_msgs):
    for hook in self._load_state_dict_pre_hooks.values():
        hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs)
    persistent = {k: v for k, v in self._buffers.items() if k not in self._non_persistent_buffers_set}
    local_state = {k: v for k, v in itertools.chain(self._parameters.items(), persistent.items())
                   if v is not None}
    assign = local_metadata.get("assign_to_params_buffers", False)
    for name, param in local_state.items():
        key = prefix + name
        if key not in state_dict:
            if strict:
                missing_keys.append(key)
            continue
        input_param = state_dict[key]
        if not isinstance(input_param, Tensor):
            if hasattr(input_param, "__array__") and not isinstance(input_param, (str, bytes)):
                import numpy as np
                input_param = Tensor._make(np.asarray(input_param))
            else:
                error_msgs.append(f'While copying the parameter named "{key}", expected tapegrad.Tensor or '
                                  f"Tensor-like object from checkpoint but received {type(input_param)}")
                continue
        if param.ndim == 0 and input_param.ndim == 1 and input_param.shape[0] == 1:
            input_param = input_param[0]
        if input_param.shape != param.shape:
            error_msgs.append(f"size mismatch for {key}: copying a param with shape {input_param.shape} from "
                              f"checkpoint, the shape in current model is {param.shape}.")
            continue
        if param.is_meta and not input_param.is_meta and not assign:
            warnings.warn(f"for {key}: copying from a non-meta parameter in the checkpoint to a meta parameter in "
                          "the current model, which is a no-op. (Did you mean to pass `assign=True` to assign "
                          "items in the state dictionary to their corresponding key in the module instead of "
                          "copying them in place?)", stacklevel=2)
        try:
            with no_grad():
                if assign:
                    if isinstance(param, Parameter):
                        new = Parameter(input_param.detach(), requires_grad=param.requires_grad)
                        self._parameters[name] = new
                    else:
                        self._buffers[name] = input_param.detach()
                else:
                    param.copy_(input_param)
        except Exception as ex:
            error_msgs.append(f'While copying the parameter named "{key}", whose dimensions in the model are '
                              f"{param.shape} and whose dimensions in the checkpoint are {input_param.shape}, "
                              f"an exception occurred : {ex.args}.")
    extra_key = prefix + "_extra_state"
    if type(self).set_extra_state is not set_extra_state:
        if extra_key in state_dict:
            self.set_extra_state(state_dict[extra_key])
        elif strict:
            missing_keys.append(extra_key)
    elif strict and extra_key in state_dict:
        unexpected_keys.append(extra_key)
    if strict:
        for key in state_dict.keys():
            if key.startswith(prefix) and key != extra_key:
                input_name = key[len(prefix):].split(".", 1)
                if len(input_name) > 1:
                    if input_name[0] not in self._modules:
                        unexpected_keys.append(key)
                elif input_name[0] not in local_state:
                    unexpected_keys.append(key)

@module_method
def load_state_dict(self, state_dict, strict: bool = True, assign: bool = False):
    """Copy parameters and buffers from ``state_dict`` (tensors or arrays) into this module and its children.

    Returns ``_IncompatibleKeys(missing_keys, unexpected_keys)``; with ``strict`` a mismatch raises.
    """
    from collections.abc import Mapping
    if not isinstance(state_dict, Mapping):
        raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
    missing_keys, unexpected_keys, error_msgs = [], [], []
    metadata = getattr(state_dict, "_metadata", None)
    state_dict = OrderedDict(state_dict)

    def load(module, local_state_dict, prefix=""):
        local_metadata = {} if metadata is None else dict(metadata.get(prefix[:-1], {}))
        if assign:
            local_metadata["assign_to_params_buffers"] = assign
        module._load_from_state_dict(local_state_dict, prefix, local_metadata, True, missing_keys,
                                     unexpected_keys, error_msgs)
        for name, child in module._modules.items():
            if child is not None:
                child_prefix = prefix + name + "."
                child_sd = {k: v for k, v in local_state_dict.items() if k.startswith(child_prefix)}
                load(child, child_sd, child_prefix)
        incompatible = _IncompatibleKeys(missing_keys, unexpected_keys)
        for hook in module._load_state_dict_post_hooks.values():
            if hook(module, incompatible) is not None:
                raise AssertionError("Hooks registered with ``register_load_state_dict_post_hook`` are not "
                                     "expected to return new values, if incompatible_keys need to be "
                                     "modified, it should be done inplace.")

    load(self, state_dict)
    if strict:
        if unexpected_keys:
            error_msgs.insert(0, "Unexpected key(s) in state_dict: {}. ".format(
                ", ".join(f'"{k}"' for k in unexpected_keys)))
        if missing_keys:
            error_msgs.insert(0, "Missing key(s) in state_dict: {}. ".format(
                ", ".join(f'"{k}"' for k in missing_keys)))
    if error_msgs:
        raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(
            self.__class__.__name__, "\n\t".join(error_msgs)))
    return _IncompatibleKeys(missing_keys, unexpected_keys)

@module_method
def register_state_dict_pre_hook(self, hook):
    h = RemovableHandle(self._state_dict_pre_hooks)
    self._state_dict_pre_hooks[h.id] = hook
    return h

@module_method
def register_state_dict_post_hook(self, hook):
    h = RemovableHandle(self._state_dict_hooks)
    self._state_dict_hooks[h.id] = hook
    return h

_register_state_dict_hook = register_state_dict_post_hook

@module_method
def register_load_state_dict_pre_hook(self, hook):
    h = RemovableHandle(self._load_state_dict_pre_hooks)
    self._load_state_dict_pre_hooks[h.id] = functools.partial(hook, self)
    return h

@module_method
def _register_load_state_dict_pre_hook(self, hook, with_module=False):
    """torch's private form: ``hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
    error_msgs)``, the module passed first only ``with_module``."""
    h = RemovableHandle(self._load_state_dict_pre_hooks)
    self._load_state_dict_pre_hooks[h.id] = functools.partial(hook, self) if with_module else hook
    return h

@module_method
def register_load_state_dict_post_hook(self, hook):
    h = RemovableHandle(self._load_state_dict_post_hooks)
    self._load_state_dict_post_hooks[h.id] = hook
    return h
