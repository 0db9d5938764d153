"""``torch._C``: the names of torch's C extension that Python programs reach for directly, each the tapegrad
object it stands for in torch (``torch._C._LinAlgError is torch.linalg.LinAlgError``). torchdiffeq's implicit
solvers catch ``torch._C._LinAlgError``; older code asks ``torch._C._get_tracing_state()`` whether a trace is
running (tapegrad's ``jit.trace`` runs the function eagerly: never); torcheval's metrics and many libraries call
``torch._C._log_api_usage_once(name)`` as they are built."""

from ._random import Generator
from .ops.linalg import LinAlgError as _LinAlgError

__all__ = ["Generator", "_LinAlgError", "_get_tracing_state", "_log_api_usage_once"]


def _get_tracing_state():
    """None: no ``torch.jit`` trace is being recorded (as torch outside a trace)."""
    return None


def _log_api_usage_once(event):
    """torch's hook for usage logging: nothing is logged (as in torch without a logging handler installed)."""
    if not isinstance(event, str):
        raise TypeError("bad argument type for built-in operation")
