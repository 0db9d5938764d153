"""``torch._C``: the names of torch's C extension that Python programs reach for directly, each the tapegrad
object it stands for in torch (``torch._C._LinAlgError is torch.linalg.LinAlgError``). torchdiffeq's implicit
solvers catch ``torch._C._LinAlgError``; older code asks ``torch._C._get_tracing_state()`` whether a trace is
running (tapegrad's ``jit.trace`` runs the function eagerly: never)."""

from ._random import Generator
from .ops.linalg import LinAlgError as _LinAlgError

__all__ = ["Generator", "_LinAlgError", "_get_tracing_state"]


def _get_tracing_state():
    """None: no ``torch.jit`` trace is being recorded (as torch outside a trace)."""
    return None
