"""``tapegrad.utils.benchmark``: torch.utils.benchmark's ``Timer``, ``Measurement`` and ``Compare``.

``Timer(stmt, setup, globals=..., label=..., sub_label=..., description=...)`` measures a Python statement
(``timeit``, ``blocked_autorange``, ``adaptive_autorange``) and returns a ``Measurement``, printed as torch prints
it; ``Compare(measurements).print()`` lays many out as torch's tables. Wall time only: no C++ statements, no
Callgrind, no fuzzers.
"""

from .utils.common import Measurement, TaskSpec, ordered_unique, select_unit, set_torch_threads, trim_sigfig
from .utils.common import unit_to_english
from .utils.compare import Colorize, Compare
from .utils.timer import Language, Timer, timer

__all__ = ["Timer", "timer", "Language", "Measurement", "TaskSpec", "Compare", "Colorize", "select_unit",
           "unit_to_english", "trim_sigfig", "ordered_unique", "set_torch_threads"]
