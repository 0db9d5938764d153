"""The original weight normalisation (``nn.utils.weight_norm``, deprecated in torch for
``nn.utils.parametrizations.weight_norm``): ``weight`` is recomputed from the parameters ``weight_g`` (magnitude)
and ``weight_v`` (direction) by a forward pre-hook before every call.

>>> m = weight_norm(tapegrad.nn.Linear(3, 2))
>>> sorted(n for n, _ in m.named_parameters()), m.weight_g.shape
(['bias', 'weight_g', 'weight_v'], tapegrad.Size([2, 1]))
"""

from __future__ import annotations

import warnings

from ..parameter import Parameter, UninitializedParameter

__all__ = ["WeightNorm", "weight_norm", "remove_weight_norm"]


class WeightNorm:
    """The forward pre-hook: ``module.<name> = _weight_norm(<name>_v, <name>_g, dim)``."""

    def __init__(self, name, dim):
        self.name = name
        self.dim = -1 if dim is None else dim

    def compute_weight(self, module):
        from ... import _weight_norm
        return _weight_norm(getattr(module, self.name + "_v"), getattr(module, self.name + "_g"), self.dim)

    @staticmethod
    def apply(module, name, dim):
        warnings.warn("`tapegrad.nn.utils.weight_norm` is deprecated in favor of "
                      "`tapegrad.nn.utils.parametrizations.weight_norm`.", FutureWarning, stacklevel=3)
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, WeightNorm) and hook.name == name:
                raise RuntimeError(f"Cannot register two weight_norm hooks on the same parameter {name}")
        fn = WeightNorm(name, dim)
        weight = getattr(module, name)
        if isinstance(weight, UninitializedParameter):
            raise ValueError("The module passed to `WeightNorm` can't have uninitialized parameters. Make sure to run "
                             "the dummy forward before applying weight normalization")
        from ... import norm_except_dim
        del module._parameters[name]
        module.register_parameter(name + "_g", Parameter(norm_except_dim(weight, 2, fn.dim).data))
        module.register_parameter(name + "_v", Parameter(weight.data))
        setattr(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module):
        weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        setattr(module, self.name, Parameter(weight.data))

    def __call__(self, module, inputs):
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module, name="weight", dim=0):
    """Split ``module.<name>`` into ``<name>_g`` (its norm over every dim but ``dim``; ``None``: the whole tensor)
    and ``<name>_v``, recombined before each forward. Returns ``module``."""
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module, name="weight"):
    """Fold ``<name>_g`` and ``<name>_v`` back into one parameter ``<name>``. Returns ``module``."""
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, WeightNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise ValueError(f"weight_norm of '{name}' not found in {module}")
