"""``tapegrad.jit``: TorchScript's entry points, so scripts that use them run.

There is no TorchScript compiler in tapegrad: ``script`` and ``trace`` give back the function or module they
were given (it runs as eager Python: the same results), the decorators (``ignore``, ``unused``, ``export``,
``interface``) leave their function as it is, and ``is_scripting()``/``is_tracing()`` are False. To make a step
faster, ``tapegrad.compile`` is the tool (see the README). ``save``/``load`` of a TorchScript archive are not
possible (there is no TorchScript program to write): they raise, naming ``torch.save`` of a ``state_dict``.
"""

from __future__ import annotations

import functools
import inspect
import types
import typing
from typing import Final  # noqa: F401   (torch.jit.Final, as annotations use it)

from .futures import _Future

__all__ = ["script", "trace", "trace_module", "ignore", "unused", "export", "interface", "is_scripting",
           "is_tracing", "annotate", "freeze", "optimize_for_inference", "fork", "wait", "save", "load",
           "script_if_tracing", "ScriptModule", "ScriptFunction", "Final", "Error", "enable_onednn_fusion",
           "onednn_fusion_enabled", "set_fusion_strategy", "strict_fusion", "Future"]


class ScriptModule:
    """Stands for torch.jit.ScriptModule in ``isinstance`` checks: tapegrad's ``script``/``trace`` return the
    module itself, so no object is one."""

    def __init_subclass__(cls, **kwargs):
        raise TypeError("tapegrad has no TorchScript: subclass nn.Module instead of torch.jit.ScriptModule")


class ScriptFunction:
    """(As ``ScriptModule``: no object is one.)"""


class Error(RuntimeError):
    """torch.jit.Error."""


def script(obj, optimize=None, _frames_up=0, _rcb=None, example_inputs=None):
    """Gives back ``obj`` (a function, module or class): it runs as eager Python. A function with ``float``
    parameters (``p: float``, ``Optional[float]``, ``List[float]``, ``Tuple[float, ...]``) gets them as TorchScript
    passes them, as floats: ``f(x, 1)`` of an int tensor ``x`` computes ``x * 1.0`` (a float tensor) as torch's
    scripted ``f`` does, where plain Python would keep integers."""
    if not isinstance(obj, types.FunctionType):
        return obj
    casts = _float_casts(obj)
    if not casts:
        return obj
    sig = inspect.signature(obj)

    @functools.wraps(obj)
    def scripted(*args, **kwargs):
        bound = sig.bind(*args, **kwargs)
        for name, cast in casts.items():
            if name in bound.arguments:
                bound.arguments[name] = cast(obj.__name__, name, bound.arguments[name])
        return obj(*bound.args, **bound.kwargs)

    return scripted


def _as_float(v):
    from .tensor import Tensor
    if isinstance(v, (bool, int)) or (isinstance(v, Tensor) and v.dim() == 0):
        return float(v)
    return v


def _checked(kind):
    """A parameter annotated ``int`` or ``Tensor``: TorchScript refuses a float / a non-tensor there."""
    def check(fn_name, name, v):
        from .tensor import Tensor
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
    from .tensor import Tensor
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
    """Gives back ``func`` unchanged (it runs as eager Python, taking every branch a trace would have frozen)."""
    return func


def trace_module(mod, inputs, **kwargs):
    return mod


def script_if_tracing(fn):
    return fn


def _identity_decorator(fn=None, **kwargs):
    if fn is None:
        return lambda f: f
    return fn


ignore = unused = export = interface = _identity_decorator


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
    from .futures import _finished
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
