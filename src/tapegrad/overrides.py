"""``torch.overrides``: the ``__torch_function__`` protocol's helpers that library code calls.

Functional code copied from torch (modern Hopfield layers' ``hopfield_core_forward``, attention copies, older
nn.functional forks) starts with ``if has_torch_function(tens_ops): return handle_torch_function(...)``: for
tensors, Parameters, None and numbers the check is False and the function runs on. An argument whose type
defines ``__torch_function__`` (a duck-typed array, a wrapper) is handed the call, as torch does: each such type
in turn (subclasses before their bases, else left to right) gets ``__torch_function__(func, types, args,
kwargs)`` until one returns something other than ``NotImplemented``.

tapegrad's own ops do not consult ``__torch_function__`` (a Tensor subclass's override is not called by
``torch.add``); tapegrad's Tensor has no default ``__torch_function__``, so it is listed in ``types`` but
never called.
"""

from __future__ import annotations

import functools

from . import _aliases

__all__ = ["has_torch_function", "has_torch_function_unary", "has_torch_function_variadic",
           "handle_torch_function", "is_tensor_like", "wrap_torch_function", "get_overridable_functions",
           "resolve_name", "is_tensor_method_or_property"]


def _disabled_torch_function_impl(func, types, args=(), kwargs=None):
    """The ``__torch_function__`` that means "none" (torch's Parameter carries it)."""
    return func(*args, **(kwargs or {}))


def _tensor_type():
    from .tensor import Tensor
    return Tensor


def _overrides(obj):
    """Whether ``obj``'s type brings its own ``__torch_function__``."""
    impl = getattr(type(obj), "__torch_function__", None)
    return impl is not None and getattr(impl, "__func__", impl) is not _disabled_torch_function_impl


def has_torch_function(relevant_args):
    """True when an element of ``relevant_args`` (any iterable) has a type with its own ``__torch_function__``."""
    try:
        relevant_args = list(relevant_args)
    except TypeError:
        raise TypeError("expected a sequence") from None
    return any(_overrides(a) for a in relevant_args)


def has_torch_function_unary(obj):
    """``has_torch_function((obj,))``."""
    return _overrides(obj)


def has_torch_function_variadic(*args):
    """``has_torch_function(args)``."""
    return any(_overrides(a) for a in args)


# (torch's are C built-ins, so a class attribute holding one does not bind it: _aliases.builtin)
has_torch_function, has_torch_function_unary, has_torch_function_variadic = (
    _aliases.builtin(f, f.__name__, __name__) for f in (has_torch_function, has_torch_function_unary,
                                                        has_torch_function_variadic))


def _overloaded_args(relevant_args):
    """The arguments ``__torch_function__`` dispatch visits (tensors too, as torch lists them in ``types``): one per
    type, a subclass before the first of its bases already listed, else in order."""
    tensor = _tensor_type()
    listed = []
    for a in relevant_args:
        t = type(a)
        if any(type(b) is t for b in listed) or not (_overrides(a) or isinstance(a, tensor)):
            continue
        at = next((i for i, b in enumerate(listed) if issubclass(t, type(b))), len(listed))
        listed.insert(at, a)
    return listed


def handle_torch_function(public_api, relevant_args, *args, **kwargs):
    """Hand the call ``public_api(*args, **kwargs)`` to the ``__torch_function__`` of ``relevant_args``."""
    listed = _overloaded_args(relevant_args)
    types = tuple(type(a) for a in listed)
    chosen = [a for a in listed if _overrides(a)]
    for a in chosen:
        result = a.__torch_function__(public_api, types, args, kwargs)
        if result is not NotImplemented:
            return result
    name = f"{public_api.__module__}.{public_api.__name__}"
    raise TypeError(f"no implementation found for '{name}' on types that implement __torch_function__: "
                    f"{[type(a) for a in chosen]}")


def is_tensor_like(inp):
    """True for a tensor, or an object whose type defines ``__torch_function__``."""
    return isinstance(inp, _tensor_type()) or hasattr(inp, "__torch_function__")


def wrap_torch_function(dispatcher):
    """Decorator: the function hands its call to ``__torch_function__`` of the tensor-likes ``dispatcher`` (same
    signature) returns, as torch's built-in functions would.

    >>> @wrap_torch_function(lambda a: (a,))
    ... def twice(a):
    ...     return a + a
    """
    def inner(func):
        @functools.wraps(func)
        def wrapped(*args, **kwargs):
            relevant = dispatcher(*args, **kwargs)
            if has_torch_function(relevant):
                return handle_torch_function(wrapped, relevant, *args, **kwargs)
            return func(*args, **kwargs)
        return wrapped
    return inner


@functools.cache
def _overridable():
    """torch's walk over its public namespaces, over tapegrad's: the functions (and Tensor properties' getters)
    a ``__torch_function__`` override would be handed, by namespace, and a name for each (``torch.add``,
    ``torch.Tensor.shape.__get__``: torch's names, as tapegrad answers for torch)."""
    import types
    import tapegrad
    from tapegrad import fft, functional, linalg, special
    from tapegrad.nn import functional as nn_functional, init
    tensor = _tensor_type()
    spaces = [("torch", tapegrad, dir(tapegrad)), ("torch.functional", functional, dir(functional)),
              ("torch.nn.functional", nn_functional, dir(nn_functional)), ("torch.nn.init", init, dir(init)),
              ("torch.Tensor", tensor, dir(tensor)), ("torch.linalg", linalg, dir(linalg)),
              ("torch.fft", fft, dir(fft)), ("torch.special", special, dir(special))]
    funcs, index = {}, {}
    for label, space, names in spaces:
        for name in names:
            ignore = False
            if space is not tensor:
                if name.startswith("__"):
                    continue
                ignore = name.startswith("_") or name.endswith("_") or not name[0].islower()
            try:
                func = getattr(space, name)
            except AttributeError:
                continue
            if space is tensor and getattr(object, name, None) == func or isinstance(func, types.ModuleType):
                continue
            if not callable(func) and hasattr(func, "__get__"):      # a Tensor property
                index[func.__get__] = f"{label}.{name}.__get__"
                if hasattr(func, "__set__"):
                    index[func.__set__] = f"{label}.{name}.__set__"
                if not ignore:
                    funcs.setdefault(func, []).append(func.__get__)
                continue
            if not callable(func):
                continue
            index[func] = f"{label}.{name}"      # (a later namespace names a shared function, as torch)
            if not ignore:
                funcs.setdefault(space, []).append(func)
    return funcs, index


def get_overridable_functions():
    """The functions ``__torch_function__`` overrides, by namespace (module, ``Tensor``, or a property)."""
    return _overridable()[0]


def resolve_name(f):
    """A readable name of a function handed to ``__torch_function__`` (``"torch.add"``), or None."""
    from .library import OpOverload, OpOverloadPacket
    if isinstance(f, (OpOverload, OpOverloadPacket)):
        return str(f)
    return _overridable()[1].get(f)


def is_tensor_method_or_property(func):
    """True for a Tensor method, or a Tensor property's ``__get__``, as ``__torch_function__`` receives them."""
    return func in _tensor_methods() or func.__name__ == "__get__"


@functools.cache
def _tensor_methods():
    return set(_overridable()[0].get(_tensor_type(), ()))
