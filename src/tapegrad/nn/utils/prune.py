"""``tapegrad.nn.utils.prune``: pruning a module's parameters with masks, as ``torch.nn.utils.prune``.

Pruning ``module.weight`` moves the parameter to ``module.weight_orig``, adds the buffer ``module.weight_mask`` (1
keep, 0 pruned) and a forward pre-hook that sets ``module.weight = weight_orig * weight_mask`` before each call, so
gradients reach ``weight_orig`` only where the mask is 1. Pruning the same parameter again prunes among the entries
still kept (the masks combine in a ``PruningContainer``); ``remove`` makes the pruning permanent (``weight`` a
parameter again, holding the pruned values).

Methods: ``identity``, ``random_unstructured``, ``l1_unstructured``, ``random_structured``, ``ln_structured``,
``global_unstructured``, ``custom_from_mask``; ``amount`` is a fraction in [0, 1] or a number of entries.
"""

from __future__ import annotations

import numbers
from abc import ABC, abstractmethod

import numpy as np

from ...autograd.grad_mode import no_grad
from ...tensor import Tensor

__all__ = ["BasePruningMethod", "PruningContainer", "Identity", "RandomUnstructured", "L1Unstructured",
           "RandomStructured", "LnStructured", "CustomFromMask", "identity", "random_unstructured",
           "l1_unstructured", "random_structured", "ln_structured", "global_unstructured", "custom_from_mask",
           "remove", "is_pruned"]


def _check_amount(amount):
    if not isinstance(amount, numbers.Real):
        raise TypeError(f"Invalid type for amount: {amount}. Must be int or float.")
    if (isinstance(amount, numbers.Integral) and amount < 0) or (
            not isinstance(amount, numbers.Integral) and (float(amount) > 1.0 or float(amount) < 0.0)):
        raise ValueError(f"amount={amount} should either be a float in the range [0, 1] or a non-negative integer")


def _check_amount_fits(amount, size):
    if isinstance(amount, numbers.Integral) and amount > size:
        raise ValueError(f"amount={amount} should be smaller than the number of parameters to prune={size}")


def _n_to_prune(amount, size):
    """How many of ``size`` entries ``amount`` prunes: itself if an int, else round(amount * size)."""
    if isinstance(amount, numbers.Integral):
        return int(amount)
    return round(float(amount) * size)


def _check_dim(t, dim):
    if dim >= t.dim():
        raise IndexError(f"Invalid index {dim} for tensor of size {t.shape}")


class BasePruningMethod(ABC):
    """A way to compute a mask; its instances are the forward pre-hooks that apply it."""

    _tensor_name: str
    PRUNING_TYPE = None

    def __call__(self, module, inputs):
        setattr(module, self._tensor_name, self.apply_mask(module))

    @abstractmethod
    def compute_mask(self, t, default_mask):
        """The mask for tensor ``t`` (importance scores), starting from ``default_mask``."""

    def apply_mask(self, module):
        if self._tensor_name is None:
            raise AssertionError(f"Module {module} has to be pruned")
        mask = getattr(module, self._tensor_name + "_mask")
        orig = getattr(module, self._tensor_name + "_orig")
        return orig * mask.to(dtype=orig.dtype)

    @classmethod
    def apply(cls, module, name, *args, importance_scores=None, **kwargs):
        """Prune ``module.<name>`` with this method (see the module's docstring)."""
        def existing_hook():
            found = None
            for k, hook in list(module._forward_pre_hooks.items()):
                if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
                    if found is not None:
                        raise AssertionError(f"Avoid adding multiple pruning hooks to the same tensor {name} of "
                                             f"module {module}. Use a PruningContainer.")
                    found = (k, hook)
            return found

        old = existing_hook()
        method = cls(*args, **kwargs)
        method._tensor_name = name
        if old is not None:
            k, old_method = old
            if isinstance(old_method, PruningContainer):
                old_method.add_pruning_method(method)
                method = old_method
            else:
                container = PruningContainer(old_method)
                container.add_pruning_method(method)
                method = container
            del module._forward_pre_hooks[k]
        orig = getattr(module, name)
        if importance_scores is not None and tuple(importance_scores.shape) != tuple(orig.shape):
            raise AssertionError(f"importance_scores should have the same shape as parameter {name} of {module}, "
                                 f"got {importance_scores.shape} vs {orig.shape}")
        if old is None:
            module.register_parameter(name + "_orig", orig)
            del module._parameters[name]
            default_mask = Tensor._make(np.ones(tuple(orig.shape), orig._array.dtype))
        else:
            default_mask = getattr(module, name + "_mask").detach().clone()
        # (scored by the tensor as it is now: pruning again scores the pruned tensor, as torch's)
        scores = importance_scores if importance_scores is not None else orig
        try:
            with no_grad():
                mask = method.compute_mask(scores.detach(), default_mask=default_mask)
            module.register_buffer(name + "_mask", mask)
            setattr(module, name, method.apply_mask(module))
            module.register_forward_pre_hook(method)
        except Exception:
            if old is None:
                orig = getattr(module, name + "_orig")
                module.register_parameter(name, orig)
                del module._parameters[name + "_orig"]
            raise
        return method

    def prune(self, t, default_mask=None, importance_scores=None):
        """``t`` times this method's mask (computed on ``importance_scores``, or ``t``)."""
        if importance_scores is not None and tuple(importance_scores.shape) != tuple(t.shape):
            raise AssertionError(f"importance_scores should have the same shape as tensor t, got "
                                 f"{importance_scores.shape} vs {t.shape}")
        scores = importance_scores if importance_scores is not None else t
        default_mask = default_mask if default_mask is not None else Tensor._make(np.ones(tuple(t.shape),
                                                                                          t._array.dtype))
        return t * self.compute_mask(scores, default_mask=default_mask)

    def remove(self, module):
        """Make the pruning permanent: ``<name>`` a parameter holding the pruned values; orig and mask go."""
        if self._tensor_name is None:
            raise AssertionError(f"Module {module} has to be pruned before pruning can be removed")
        weight = self.apply_mask(module)
        if hasattr(module, self._tensor_name):
            delattr(module, self._tensor_name)
        orig = module._parameters[self._tensor_name + "_orig"]
        orig.data = weight.data          # (the same Parameter object: an optimizer holding it keeps working)
        del module._parameters[self._tensor_name + "_orig"]
        del module._buffers[self._tensor_name + "_mask"]
        setattr(module, self._tensor_name, orig)


class PruningContainer(BasePruningMethod):
    """Several pruning methods of one parameter, in order: each prunes among the entries the others kept."""

    def __init__(self, *args):
        self._pruning_methods = ()
        if len(args) == 1 and not isinstance(args[0], BasePruningMethod):
            args = tuple(args[0])
        if len(args) == 1:
            self._tensor_name = args[0]._tensor_name
            self.add_pruning_method(args[0])
        else:
            self._tensor_name = None
            for m in args:
                self.add_pruning_method(m)

    def add_pruning_method(self, method):
        if not isinstance(method, BasePruningMethod) and method is not None:
            raise TypeError(f"{type(method)} is not a BasePruningMethod subclass")
        if method is not None and self._tensor_name != method._tensor_name:
            raise ValueError(f"Can only add pruning methods acting on the parameter named '{self._tensor_name}' to "
                             f"PruningContainer {self}. Found '{method._tensor_name}'")
        self._pruning_methods += (method,)

    def __len__(self):
        return len(self._pruning_methods)

    def __iter__(self):
        return iter(self._pruning_methods)

    def __getitem__(self, idx):
        return self._pruning_methods[idx]

    def compute_mask(self, t, default_mask):
        method = self._pruning_methods[-1]
        mask = default_mask.clone()
        kept = default_mask._array == 1
        kind = method.PRUNING_TYPE
        if kind == "unstructured":
            sub = Tensor._make(t._array[kept])
            partial = method.compute_mask(sub, default_mask=Tensor._make(np.ones(sub.shape, mask._array.dtype)))
            mask._array[kept] = partial._array.astype(mask._array.dtype)
        elif kind == "structured":
            if not hasattr(method, "dim"):
                raise AttributeError("Pruning methods of PRUNING_TYPE 'structured' need to have the attribute `dim` "
                                     "defined.")
            dim = method.dim if method.dim >= 0 else t.dim() + method.dim
            others = tuple(d for d in range(t.dim()) if d != dim)
            keep_ch = kept.sum(axis=others) != 0            # channels not entirely pruned yet
            sub = Tensor._make(np.take(t._array, np.flatnonzero(keep_ch), axis=dim))
            partial = method.compute_mask(sub, default_mask=Tensor._make(np.ones(sub.shape, mask._array.dtype)))
            idx = [slice(None)] * t.dim()
            idx[dim] = np.flatnonzero(keep_ch)
            m = mask._array
            m[tuple(idx)] = m[tuple(idx)] * partial._array.astype(m.dtype)
        elif kind == "global":
            new = method.compute_mask(t, default_mask=default_mask)
            mask._array[...] = mask._array * new._array.astype(mask._array.dtype)
        else:
            raise ValueError(f"Unrecognized PRUNING_TYPE {kind}")
        return mask


class Identity(BasePruningMethod):
    """Prunes nothing (a mask of ones)."""

    PRUNING_TYPE = "unstructured"

    def compute_mask(self, t, default_mask):
        return default_mask

    @classmethod
    def apply(cls, module, name):
        return super().apply(module, name)


class _Unstructured(BasePruningMethod):
    """Prunes ``amount`` single entries, in the order ``_order`` gives (the first ones go)."""

    PRUNING_TYPE = "unstructured"

    def __init__(self, amount):
        _check_amount(amount)
        self.amount = amount

    def compute_mask(self, t, default_mask):
        size = t.numel()
        _check_amount_fits(self.amount, size)
        k = _n_to_prune(self.amount, size)
        mask = default_mask.clone()
        if k:
            mask._array.reshape(-1)[self._order(t, size)[:k]] = 0
        return mask


class RandomUnstructured(_Unstructured):
    """Prunes ``amount`` entries chosen at random."""

    @staticmethod
    def _order(t, size):
        from ...creation import rand
        return np.argsort(-rand(size)._array, kind="stable")

    @classmethod
    def apply(cls, module, name, amount):
        return super().apply(module, name, amount=amount)


class L1Unstructured(_Unstructured):
    """Prunes the ``amount`` entries of smallest absolute value."""

    @staticmethod
    def _order(t, size):
        return np.argsort(np.abs(t._array).reshape(-1), kind="stable")

    @classmethod
    def apply(cls, module, name, amount, importance_scores=None):
        return super().apply(module, name, amount=amount, importance_scores=importance_scores)


class _Structured(BasePruningMethod):
    """Prunes ``amount`` whole channels along ``dim``: those ``_pruned`` picks."""

    PRUNING_TYPE = "structured"

    def compute_mask(self, t, default_mask):
        if t.dim() <= 1:
            raise ValueError(f"Structured pruning can only be applied to multidimensional tensors. Found tensor "
                             f"of shape {t.shape} with {t.dim()} dims")
        _check_dim(t, self.dim)
        nch = t.shape[self.dim]
        _check_amount_fits(self.amount, nch)
        k = _n_to_prune(self.amount, nch)
        mask = default_mask.clone()
        if k:
            dim = self.dim if self.dim >= 0 else t.dim() + self.dim
            idx = [slice(None)] * t.dim()
            idx[dim] = self._pruned(t, dim, nch, k)
            mask._array[tuple(idx)] = 0
        return mask


class RandomStructured(_Structured):
    """Prunes ``amount`` whole channels along ``dim``, chosen at random."""

    def __init__(self, amount, dim=-1):
        _check_amount(amount)
        self.amount, self.dim = amount, dim

    @staticmethod
    def _pruned(t, dim, nch, k):
        from ...creation import rand
        return np.argsort(rand(nch)._array, kind="stable")[:k]

    @classmethod
    def apply(cls, module, name, amount, dim=-1):
        return super().apply(module, name, amount=amount, dim=dim)


class LnStructured(_Structured):
    """Prunes the ``amount`` channels along ``dim`` of smallest L``n`` norm."""

    def __init__(self, amount, n, dim=-1):
        _check_amount(amount)
        self.amount, self.n, self.dim = amount, n, dim

    def _pruned(self, t, dim, nch, k):
        from ...ops.linalg import vector_norm
        norms = vector_norm(t, self.n, tuple(d for d in range(t.dim()) if d != dim))._array
        keep = np.argsort(-norms, kind="stable")[:nch - k]
        return np.setdiff1d(np.arange(nch), keep)

    @classmethod
    def apply(cls, module, name, amount, n, dim, importance_scores=None):
        return super().apply(module, name, amount=amount, n=n, dim=dim, importance_scores=importance_scores)


class CustomFromMask(BasePruningMethod):
    """Prunes where the given ``mask`` is 0."""

    PRUNING_TYPE = "global"

    def __init__(self, mask):
        self.mask = mask

    def compute_mask(self, t, default_mask):
        if tuple(default_mask.shape) != tuple(self.mask.shape):
            raise AssertionError(f"default_mask shape {default_mask.shape} must match self.mask shape "
                                 f"{self.mask.shape}")
        return default_mask * self.mask.to(dtype=default_mask.dtype)

    @classmethod
    def apply(cls, module, name, mask):
        return super().apply(module, name, mask=mask)


def identity(module, name):
    Identity.apply(module, name)
    return module


def random_unstructured(module, name, amount):
    RandomUnstructured.apply(module, name, amount)
    return module


def l1_unstructured(module, name, amount, importance_scores=None):
    L1Unstructured.apply(module, name, amount=amount, importance_scores=importance_scores)
    return module


def random_structured(module, name, amount, dim):
    RandomStructured.apply(module, name, amount, dim)
    return module


def ln_structured(module, name, amount, n, dim, importance_scores=None):
    LnStructured.apply(module, name, amount, n, dim, importance_scores=importance_scores)
    return module


def custom_from_mask(module, name, mask):
    CustomFromMask.apply(module, name, mask)
    return module


def global_unstructured(parameters, pruning_method, importance_scores=None, **kwargs):
    """Prune the (module, name) pairs of ``parameters`` together: ``pruning_method`` (unstructured) chooses among
    all their entries at once."""
    from collections.abc import Iterable
    if not isinstance(parameters, Iterable):
        raise TypeError("global_unstructured(): parameters is not an Iterable")
    parameters = list(parameters)
    importance_scores = importance_scores if importance_scores is not None else {}
    if not isinstance(importance_scores, dict):
        raise TypeError("global_unstructured(): importance_scores must be of type dict")
    scores = np.concatenate([importance_scores.get((m, n), getattr(m, n))._array.reshape(-1)
                             for m, n in parameters])
    masks = np.concatenate([getattr(m, n + "_mask")._array.reshape(-1) if hasattr(m, n + "_mask")
                            else np.ones(getattr(m, n).numel(), getattr(m, n)._array.dtype)
                            for m, n in parameters])
    method = pruning_method(**kwargs)
    if method.PRUNING_TYPE != "unstructured":
        raise TypeError(f'Only "unstructured" PRUNING_TYPE supported for the `pruning_method`. Found method '
                        f"{pruning_method} of type {method.PRUNING_TYPE}")
    method._tensor_name = "temp"
    container = PruningContainer(method)
    final = container.compute_mask(Tensor._make(scores), Tensor._make(masks))
    pointer = 0
    for m, n in parameters:
        p = getattr(m, n)
        k = p.numel()
        custom_from_mask(m, n, Tensor._make(final._array[pointer:pointer + k].reshape(tuple(p.shape))))
        pointer += k


def remove(module, name):
    """Make the pruning of ``module.<name>`` permanent (see ``BasePruningMethod.remove``)."""
    for k, hook in list(module._forward_pre_hooks.items()):
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise ValueError(f"Parameter '{name}' of module {module} has to be pruned before pruning can be removed")


def is_pruned(module):
    """Whether any submodule of ``module`` has a pruning hook."""
    for m in module.modules():
        for hook in m._forward_pre_hooks.values():
            if isinstance(hook, BasePruningMethod):
                return True
    return False

