"""``tapegrad.jit``: TorchScript's entry points, so scripts that use them run.

There is no TorchScript compiler in tapegrad: what ``script`` and ``trace`` return runs the code it was given as
eager Python (the same results), but it is of the classes torch's checks look for. A module becomes a
``RecursiveScriptModule`` (``trace``: a ``TopLevelTracedModule`` over ``TracedModule`` submodules): a new module
of a class made for it, ``(RecursiveScriptModule, its own class)``, that holds the same Parameter and buffer
tensors (as torch's scripted module shares them), its own ``training`` flag and hook tables, and its submodules
made the same way; so ``isinstance(m, torch.jit.ScriptModule)`` and ``isinstance(m, nn.Module)`` hold, and
``state_dict`` keys, ``parameters()``, ``train()/eval()`` and ``forward`` are the module's. A function becomes a
``ScriptFunction`` (a callable that calls it). The decorators (``ignore``, ``unused``, ``export``, ``interface``,
``script_method``) leave their function as it is, and ``is_scripting()``/``is_tracing()`` are False. To make a
step faster, ``tapegrad.compile`` is the tool (see the README). ``save``/``load`` of a TorchScript archive are
not possible (there is no TorchScript program to write): they raise, naming ``torch.save`` of a ``state_dict``;
so do ``.code`` and ``.graph``.
"""

from __future__ import annotations

import functools
import inspect
import types
import typing
from collections import OrderedDict
from typing import Final  # noqa: F401   (torch.jit.Final, as annotations use it)

from ..futures import _Future
from ..nn.module import Module

__all__ = ["script", "trace", "trace_module", "ignore", "unused", "export", "interface", "is_scripting",
           "is_tracing", "annotate", "freeze", "optimize_for_inference", "fork", "wait", "save", "load",
           "script_if_tracing", "ScriptModule", "ScriptFunction", "RecursiveScriptModule", "TracedModule",
           "TopLevelTracedModule", "script_method", "Final", "Error", "enable_onednn_fusion",
           "onednn_fusion_enabled", "set_fusion_strategy", "strict_fusion", "Future"]


class ScriptModule(Module):
    """torch.jit.ScriptModule: the base of what ``script``/``trace`` make of a module. A subclass (torch's older
    ``@torch.jit.script_method`` style) is an ordinary module running its ``forward`` as eager Python."""

    def __getattr__(self, name):
        try:
            return super().__getattr__(name)
        except AttributeError:
            if name in _TORCHSCRIPT_ONLY:
                raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}': tapegrad has no "
                                     "TorchScript (the module runs its forward as eager Python)") from None
            raise


_TORCHSCRIPT_ONLY = frozenset({"code", "code_with_constants", "graph", "inlined_graph", "_c"})


class RecursiveScriptModule(ScriptModule):
    """What ``script(module)`` returns (its class is made for the module's own class: see ``_as_script``)."""

    def extra_repr(self):
        return f"original_name={self.original_name}"


class TracedModule(ScriptModule):
    """What ``trace(module)`` makes of its submodules; torch prints them under their own class names."""

    def _get_name(self):
        return self.original_name

    def extra_repr(self):
        return f"original_name={self.original_name}"


class TopLevelTracedModule(TracedModule):
    """What ``trace(module)`` returns."""


_CLASSES = {}     # (kind, module class) -> the class made for them


def _script_class(kind, cls):
    """The class ``(kind, cls)``, named as ``kind`` (torch's type name); None where ``cls`` does not combine."""
    key = (kind, cls)
    made = _CLASSES.get(key)
    if made is None and key not in _CLASSES:
        try:
            made = type(kind.__name__, (kind, cls), {"__module__": __name__, "__qualname__": kind.__qualname__,
                                                     "__doc__": kind.__doc__})
        except TypeError:           # (a layout or metaclass conflict: the module stays as it is)
            made = None
        _CLASSES[key] = made
    return made


def _as_script(m, kind, sub_kind, memo):
    """A new module of class ``(kind, type(m))`` over ``m``'s state: the same Parameter and buffer tensors (as
    torch's scripted modules share them), its own ``training`` flag, containers and hook tables, and each
    submodule made the same way with ``sub_kind`` (shared submodules stay shared). A ScriptModule is itself."""
    if isinstance(m, ScriptModule):
        return m
    if id(m) in memo:
        return memo[id(m)]
    cls = _script_class(kind, type(m))
    if cls is None or type(m).__new__ is not object.__new__:
        memo[id(m)] = m
        return m
    new = memo[id(m)] = object.__new__(cls)
    d = new.__dict__
    for k, v in m.__dict__.items():
        d[k] = v.copy() if type(v) in (dict, OrderedDict, set) else v
    d["_modules"] = {k: None if v is None else _as_script(v, sub_kind, sub_kind, memo)
                     for k, v in m._modules.items()}
    d["original_name"] = type(m).__name__
    return new


class ScriptFunction(functools.partial):
    """What ``script``/``trace`` make of a function (torch.jit.ScriptFunction): it calls the function as eager
    Python. Like torch's, it does not bind as a method when a class holds it."""

    __slots__ = ()

    def __get__(self, obj, objtype=None):
        return self

    @property
    def name(self):
        return self.__wrapped__.__name__

    def __repr__(self):
        return f"<tapegrad.jit.ScriptFunction {self.name} at {id(self):#x}>"

    def __getattr__(self, name):
        if name in _TORCHSCRIPT_ONLY:
            raise AttributeError(f"'ScriptFunction' object has no attribute '{name}': tapegrad has no TorchScript "
                                 "(the function runs as eager Python)")
        raise AttributeError(f"'ScriptFunction' object has no attribute '{name}'")


def _script_function(fn, call=None):
    sf = ScriptFunction(fn if call is None else call)
    sf.__dict__.update(__name__=fn.__name__, __qualname__=fn.__qualname__, __module__=fn.__module__,
                       __doc__=fn.__doc__, __wrapped__=fn)
    return sf


class Error(RuntimeError):
    """torch.jit.Error."""


def script(obj, optimize=None, _frames_up=0, _rcb=None, example_inputs=None):
    """A module as a ``RecursiveScriptModule``, a function as a ``ScriptFunction``, a class as it is: each runs
    as eager Python. A function with ``float`` parameters (``p: float``, ``Optional[float]``, ``List[float]``,
    ``Tuple[float, ...]``) gets them as TorchScript passes them, as floats: ``f(x, 1)`` of an int tensor ``x``
    computes ``x * 1.0`` (a float tensor) as torch's scripted ``f`` does, where plain Python would keep
    integers."""
    if isinstance(obj, Module):
        return _as_script(obj, RecursiveScriptModule, RecursiveScriptModule, {})
    if not isinstance(obj, types.FunctionType):
        return obj
    casts = _float_casts(obj)
    if not casts:
        return _script_function(obj)
    sig = inspect.signature(obj)

    @functools.wraps(obj)
    def scripted(*args, **kwargs):
        bound = sig.bind(*args, **kwargs)
        for name, cast in casts.items():
            if name in bound.arguments:
                bound.arguments[name] = cast(obj.__name__, name, bound.arguments[name])
        return obj(*bound.args, **bound.kwargs)

    return _script_function(obj, scripted)


def _as_float(v):
    from ..tensor import Tensor
    if isinstance(v, (bool, int)) or (isinstance(v, Tensor) and v.dim() == 0):
        return float(v)
    return v


def _checked(kind):
    """A parameter annotated ``int`` or ``Tensor``: TorchScript refuses a float / a non-tensor there."""
    def check(fn_name, name, v):
        from ..tensor import Tensor
        if kind == "int" and isinstance(v, float) or kind == "Tensor" and not isinstance(v, Tensor):
            raise RuntimeError(f"{fn_name}() Expected a value of type '{kind}' for argument '{name}' but instead "
                               f"found type '{type(v).__name__}'.")
        return v
    return check


def _float_cast(ann):
    """How TorchScript converts a value for the annotation ``ann`` to floats (None: nothing to convert)."""
    origin, args = typing.get_origin(ann), typing.get_args(ann)
    if ann is float:
        return _as_float
    if origin is typing.Union and len(args) == 2 and type(None) in args:       # Optional[float]
        inner = _float_cast(args[0] if args[1] is type(None) else args[1])
        return None if inner is None else (lambda v: v if v is None else inner(v))
    if origin is list and len(args) == 1:
        inner = _float_cast(args[0])
        return None if inner is None else (lambda v: [inner(e) for e in v] if isinstance(v, list) else v)
    if origin is tuple and args and args[-1] is not Ellipsis:
        inner = [_float_cast(a) or (lambda v: v) for a in args]
        if all(_float_cast(a) is None for a in args):
            return None
        return lambda v: tuple(c(e) for c, e in zip(inner, v)) if isinstance(v, tuple) and len(v) == len(inner) \
            else v
    return None


def _float_casts(fn):
    """``{parameter: convert(fn_name, name, value)}`` for the parameters TorchScript would convert or refuse
    (empty when no parameter is a float one: the function is then given back as it is)."""
    from ..tensor import Tensor
    try:
        hints = typing.get_type_hints(fn)
    except Exception:           # (an annotation that does not resolve: no conversions)
        return {}
    hints.pop("return", None)
    casts = {n: c for n, c in ((n, _float_cast(a)) for n, a in hints.items()) if c is not None}
    if not casts:
        return {}
    out = {n: (lambda fn_name, name, v, c=c: c(v)) for n, c in casts.items()}
    for n, a in hints.items():
        if a is int or (isinstance(a, type) and issubclass(a, Tensor)):
            out[n] = _checked("int" if a is int else "Tensor")
    return out


def trace(func, example_inputs=None, optimize=None, check_trace=True, check_inputs=None, check_tolerance=1e-5,
          strict=True, _force_outplace=False, _module_class=None, _compilation_unit=None,
          example_kwarg_inputs=None, _store_inputs=True):
    """A module as a ``TopLevelTracedModule``, a function as a ``ScriptFunction``: each runs as eager Python,
    taking every branch a trace would have frozen (``example_inputs`` are not run)."""
    if isinstance(func, Module):
        return _as_script(func, TopLevelTracedModule, TracedModule, {})
    if isinstance(func, types.FunctionType):
        return _script_function(func)
    return func


def trace_module(mod, inputs, **kwargs):
    return trace(mod, inputs)


def script_if_tracing(fn):
    return fn


def _identity_decorator(fn=None, **kwargs):
    if fn is None:
        return lambda f: f
    return fn


ignore = unused = export = interface = script_method = _identity_decorator


def is_scripting() -> bool:
    return False


def is_tracing() -> bool:
    return False


def annotate(the_type, the_value):
    return the_value


def freeze(mod, preserved_attrs=None, optimize_numerics=True):
    return mod


def optimize_for_inference(mod, other_methods=None):
    return mod


class Future(_Future):
    """``torch.jit.Future``: the name annotations use; ``fork`` returns the base, ``torch.Future``, as torch's does."""


def fork(func, *args, **kwargs):
    """Runs ``func(*args, **kwargs)`` now; a ``Future`` already holding its value (``wait`` gives it)."""
    from ..futures import _finished
    return _finished(func(*args, **kwargs))


def wait(future):
    return future.wait()


def _no_torchscript(what):
    def call(*args, **kwargs):
        raise RuntimeError(f"torch.jit.{what}: tapegrad has no TorchScript, so there is no TorchScript archive to "
                           "write or read. Save the weights instead: torch.save(model.state_dict(), path), and "
                           "model.load_state_dict(torch.load(path)).")
    call.__name__ = what
    return call


save = _no_torchscript("save")
load = _no_torchscript("load")


def enable_onednn_fusion(enabled: bool) -> None:
    pass


def onednn_fusion_enabled() -> bool:
    return False


def set_fusion_strategy(strategy):
    return [("STATIC", 2), ("DYNAMIC", 10)]


class strict_fusion:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False
