# ruff: noqa: A001, A002 - torch's argument name (input)
"""Lazy modules: ``nn.LazyLinear(out_features)`` and friends learn their input size from the first batch.

Until then their weights are ``UninitializedParameter``s (no shape). The first forward calls
``initialize_parameters(input)``: it materializes each placeholder with the inferred shape, runs the usual
``reset_parameters`` and turns the module into its eager class (``LazyLinear`` becomes ``Linear``), as torch's
``LazyModuleMixin`` does. Loading a state_dict into a lazy module materializes the placeholders with the saved
shapes. The placeholders keep their identity, so an optimizer may be built before the first forward.

>>> net = tapegrad.nn.Sequential(tapegrad.nn.LazyLinear(8), tapegrad.nn.ReLU(), tapegrad.nn.LazyLinear(2))
>>> net(tapegrad.randn(5, 3)).shape
tapegrad.Size([5, 2])
>>> net[0]
Linear(in_features=3, out_features=8, bias=True)
"""

from __future__ import annotations

import itertools

from ... import no_grad
from ..parameter import UninitializedParameter, is_lazy

__all__ = ["LazyModuleMixin"]


class LazyModuleMixin:
    """Put before a module class: parameters are inferred from the first input. A subclass sets
    ``cls_to_become`` and defines ``initialize_parameters(*args, **kwargs)``, which materializes every
    uninitialized parameter and buffer."""

    cls_to_become = None

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._load_hook = self.register_load_state_dict_pre_hook(_lazy_load_hook)
        self._initialize_hook = self.register_forward_pre_hook(_infer_parameters, with_kwargs=True)

    def has_uninitialized_params(self):
        """Whether any parameter or buffer is still a placeholder."""
        return any(is_lazy(t) for t in itertools.chain(self._parameters.values(), self._buffers.values()))

    def initialize_parameters(self, *args, **kwargs):
        raise NotImplementedError(f"initialize_parameters is not implemented for {self.__class__.__name__}")

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        # (a placeholder is saved as itself, not detached: it has no data to detach)
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if is_lazy(param) or keep_vars else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if is_lazy(buf) or keep_vars else buf.detach()


def _lazy_load_hook(module, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs):
    """Materialize each placeholder that the state_dict has a real tensor for, with that tensor's shape."""
    for name, t in itertools.chain(module._parameters.items(), module._buffers.items()):
        key = prefix + name
        if t is not None and key in state_dict and is_lazy(t) and not is_lazy(state_dict[key]):
            with no_grad():
                t.materialize(state_dict[key].shape)


def _infer_parameters(module, args, kwargs=None):
    """The forward pre-hook of a lazy module: initialize from this input, then become the eager class."""
    module.initialize_parameters(*args, **(kwargs or {}))
    if module.has_uninitialized_params():
        raise RuntimeError(f"module {module._get_name()} has not been fully initialized")
    module._initialize_hook.remove()
    module._load_hook.remove()
    del module._initialize_hook, module._load_hook
    if module.cls_to_become is not None:
        module.__class__ = module.cls_to_become


class _LazySized(LazyModuleMixin):
    """The built-in lazy layers: a weight and an optional bias start as placeholders, and the size attribute named
    by ``_size`` (0 until the first input) says whether ``reset_parameters`` has anything to fill."""

    _size = ""

    def _placeholders(self, bias, dtype):
        self.weight = UninitializedParameter(dtype=dtype)
        if bias:
            self.bias = UninitializedParameter(dtype=dtype)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and getattr(self, self._size) != 0:
            super().reset_parameters()
