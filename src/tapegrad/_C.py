"""``torch._C``: the names of torch's C extension that Python programs reach for directly, each the tapegrad
object it stands for in torch (``torch._C._LinAlgError is torch.linalg.LinAlgError``). torchdiffeq's implicit
solvers catch ``torch._C._LinAlgError``; older code asks ``torch._C._get_tracing_state()`` whether a trace is
running (tapegrad's ``jit.trace`` runs the function eagerly: never); torcheval's metrics and many libraries call
``torch._C._log_api_usage_once(name)`` as they are built. ``Value`` and ``Node``, the classes of a TorchScript
graph's values and nodes, are imported by libraries for type hints (snntorch's losses): tapegrad records no
TorchScript graphs, so they exist as in torch, cannot be constructed, and nothing is an instance of them."""

from ._random import Generator
from .ops.linalg import LinAlgError as _LinAlgError

__all__ = ["Generator", "Node", "Value", "_LinAlgError", "_get_tracing_state", "_log_api_usage_once"]


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


def _log_api_usage_once(event):
    """torch's hook for usage logging: nothing is logged (as in torch without a logging handler installed)."""
    if not isinstance(event, str):
        raise TypeError("bad argument type for built-in operation")
