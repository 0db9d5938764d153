"""``torch._jit_internal``: the TorchScript helpers that module code copied from older torch releases reaches for.

nn.MultiheadAttention's copies (modern Hopfield layers, many attention variants) annotate their class with
``torch._jit_internal.Optional[torch.Tensor]``; older functional copies import ``List``/``Tuple``/``Optional``
and ``BroadcastingList2`` from here, decorate with ``_overload``/``_overload_method`` and build a function that
switches on a flag with ``boolean_dispatch`` (``return_indices`` of a max pool). Without a TorchScript compiler
these are what they are in torch's eager mode: the typing names, annotations that mean nothing at run time,
decorators that give their function back, and a dispatch on the flag's value.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, Final, List, Optional, Tuple, Union  # noqa: F401  (as torch re-exports)

from .jit import export, ignore, is_scripting, unused  # noqa: F401

__all__ = ["Any", "Callable", "Dict", "Final", "List", "Optional", "Tuple", "Union", "export", "ignore",
           "is_scripting", "unused", "boolean_dispatch", "BroadcastingList1", "BroadcastingList2",
           "BroadcastingList3", "BroadcastingList4", "BroadcastingList5", "BroadcastingList6", "BroadcastingListCls"]


class BroadcastingListCls:
    """``BroadcastingList2[int]``: TorchScript reads an int or a list of 2 ints; in Python the subscript is None."""

    def __getitem__(self, types):
        return None


BroadcastingList1 = BroadcastingList2 = BroadcastingList3 = BroadcastingListCls()
BroadcastingList4 = BroadcastingList5 = BroadcastingList6 = BroadcastingList1


def _overload(func):
    """Declares one typed signature of a function TorchScript overloads; eager Python keeps the last definition."""
    return func


def _overload_method(func):
    """``_overload`` for a method."""
    return func


def boolean_dispatch(arg_name, arg_index, default, if_true, if_false, module_name, func_name):
    """A function that calls ``if_true`` or ``if_false`` by the flag ``arg_name`` (given by name, at position
    ``arg_index``, else ``default``), as torch builds ``max_pool2d``'s two forms from ``return_indices``."""

    def fn(*args, **kwargs):
        flag = kwargs[arg_name] if arg_name in kwargs else args[arg_index] if arg_index < len(args) else default
        return if_true(*args, **kwargs) if flag else if_false(*args, **kwargs)

    docs = [f.__doc__ for f in (if_true, if_false) if f.__doc__ is not None]
    if len(docs) == 2:
        raise RuntimeError("only one function can have a docstring")
    fn.__doc__ = if_true.__doc__ = if_false.__doc__ = docs[0] if docs else None
    if module_name is not None:
        fn.__module__ = module_name
    if func_name is not None:
        fn.__name__ = func_name
    return fn
