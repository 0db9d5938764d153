"""``torch._C``: the names of torch's C extension that Python programs reach for directly, each the tapegrad object it
stands for in torch (``torch._C._LinAlgError is torch.linalg.LinAlgError``). torchdiffeq's implicit solvers catch
``torch._C._LinAlgError``; older code asks ``torch._C._get_tracing_state()`` whether a trace is running (tapegrad's
``jit.trace`` runs the function eagerly: never), and libraries with a custom autograd Function ask
``_are_functorch_transforms_active()`` whether a torch.func transform is running it; torcheval's metrics and many
libraries call ``torch._C._log_api_usage_once(name)`` as they are built. ``Value`` and ``Node``, the classes of a
TorchScript graph's values and nodes, are imported by libraries for type hints (snntorch's losses): tapegrad records
no TorchScript graphs, so they exist as in torch, cannot be constructed, and nothing is an instance of them."""

from ._random import Generator
from .ops.linalg import LinAlgError as _LinAlgError

__all__ = ["Generator", "Node", "Value", "_LinAlgError", "_are_functorch_transforms_active", "_get_tracing_state",
           "_log_api_usage_once"]


class _GraphPart:
    """A part of a TorchScript graph; torch makes them only while scripting or tracing (never, in tapegrad)."""

    def __init__(self, *args, **kwargs):
        raise TypeError(f"torch._C.{type(self).__name__}: No constructor defined!")


class Value(_GraphPart):
    """``torch.Value``: a value of a TorchScript graph."""


class Node(_GraphPart):
    """``torch.Node``: a node of a TorchScript graph."""


def _get_tracing_state():
    """None: no ``torch.jit`` trace is being recorded (as torch outside a trace)."""
    return None


def _are_functorch_transforms_active(*args, **kwargs):
    """Whether this thread runs a function under a torch.func transform (vmap, grad, vjp, jacrev, jvp, jacfwd,
    hessian, functionalize); False in forward AD's ``dual_level`` and in ``linearize``, as in torch."""
    if args or kwargs:
        parts = [", ".join(repr(a) for a in args)] if args else []
        if kwargs:
            parts.append("kwargs: " + ", ".join(f"{k}={v!r}" for k, v in kwargs.items()))
        got = "; ".join(parts)
        raise TypeError("_are_functorch_transforms_active(): incompatible function arguments. The following "
                        f"argument types are supported:\n    1. () -> bool\n\nInvoked with: {got}")
    from .autograd.grad_mode import _state
    return _state.func_layers > 0


def _log_api_usage_once(event):
    """torch's hook for usage logging: nothing is logged (as in torch without a logging handler installed)."""
    if not isinstance(event, str):
        raise TypeError("bad argument type for built-in operation")
