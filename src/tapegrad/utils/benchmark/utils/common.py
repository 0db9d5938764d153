"""What a measurement is: ``TaskSpec`` (the statement and its labels) and ``Measurement`` (its times and their
statistics), printed as torch.utils.benchmark prints them.

The statistics torch computes on float32 tensors (units, significant figures, trimming) are computed here on
float32 NumPy scalars, so that the printed digits agree with torch's; quantiles and the mean are float64 as there.
"""

from __future__ import annotations

import collections
import dataclasses
import math
import textwrap
from typing import Any

import numpy as np

__all__ = ["TaskSpec", "Measurement", "select_unit", "unit_to_english", "trim_sigfig", "ordered_unique",
           "set_torch_threads"]

_MAX_SIGNIFICANT_FIGURES = 4
_MIN_CONFIDENCE_INTERVAL = 25e-9          # no estimate is trusted below 25 ns
_IQR_WARN_THRESHOLD = 0.1                 # IQR / median above this: "system fluctuation"
_IQR_GROSS_WARN_THRESHOLD = 0.25          # above this: "significant environmental influence"


def _log10_f32(x):
    """log10 of ``x`` as float32, correctly rounded (torch's float32 log10 is; NumPy's can be 1 ulp off, which
    moves 1e-6 s from "us" to "ns")."""
    x = float(np.float32(x))
    return float(np.float32(math.log10(x))) if x > 0 else float("nan")


@dataclasses.dataclass(frozen=True)
class TaskSpec:
    """The statement a ``Timer`` measures and the labels that name it (everything but its globals)."""
    stmt: str
    setup: str
    global_setup: str = ""
    label: str | None = None
    sub_label: str | None = None
    description: str | None = None
    env: str | None = None
    num_threads: int = 1

    @property
    def title(self) -> str:
        """``label`` (or the one-line ``stmt``), with ``: sub_label``; a multi-line stmt is shown indented."""
        suffix = f": {self.sub_label}" if self.sub_label else ""
        if self.label is not None:
            return self.label + suffix
        if "\n" not in self.stmt:
            return self.stmt + suffix
        sub = f" ({self.sub_label})" if self.sub_label else ""
        return f"stmt:{sub}\n{textwrap.indent(self.stmt, '  ')}"

    def setup_str(self) -> str:
        if not self.setup or self.setup == "pass":
            return ""
        if "\n" in self.setup:
            return f"setup:\n{textwrap.indent(self.setup, '  ')}"
        return f"setup: {self.setup}"

    def summarize(self) -> str:
        """The title, description and setup, one per line (a multi-line one followed by a blank line)."""
        sections = [s for s in (self.title, self.description or "", self.setup_str()) if s]
        return "\n".join(s + "\n" if "\n" in s else s for s in sections)


_TASKSPEC_FIELDS = tuple(f.name for f in dataclasses.fields(TaskSpec))


@dataclasses.dataclass(repr=False)
class Measurement:
    """The times of ``number_per_run`` runs of a statement, measured ``len(raw_times)`` times.

    ``times`` are per run (``raw_times / number_per_run``); ``median``, ``mean``, ``iqr`` summarize them;
    ``significant_figures`` estimates how many digits of the median the spread supports; ``has_warnings`` says
    whether the IQR is over 10% of the median. The ``TaskSpec``'s fields read through (``m.label``, ``m.stmt``).
    """
    number_per_run: int
    raw_times: list[float]
    task_spec: TaskSpec
    metadata: dict[Any, Any] | None = None

    def __post_init__(self) -> None:
        self._sorted_times: tuple[float, ...] = ()
        self._warnings: tuple[str, ...] = ()
        self._median = self._mean = self._p25 = self._p75 = -1.0

    def __getattr__(self, name):
        if name in _TASKSPEC_FIELDS:
            return getattr(self.task_spec, name)
        raise AttributeError(f"'Measurement' object has no attribute {name!r}")

    @property
    def times(self) -> list[float]:
        return [t / self.number_per_run for t in self.raw_times]

    @property
    def median(self) -> float:
        self._lazy_init()
        return self._median

    @property
    def mean(self) -> float:
        self._lazy_init()
        return self._mean

    @property
    def iqr(self) -> float:
        self._lazy_init()
        return self._p75 - self._p25

    @property
    def significant_figures(self) -> int:
        """Digits of the median that the interquartile points support: a 90% confidence interval of the median
        from their spread (z = 1.645), ``floor(log10(median / interval))``, clamped to 1..4."""
        self._lazy_init()
        n = len(self._sorted_times)
        middle = np.asarray(self._sorted_times[n // 4:math.ceil(3 * n / 4)], dtype=np.float32)
        std = float(middle.std())
        interval = max(1.645 * std / float(np.sqrt(np.float32(len(middle)))), _MIN_CONFIDENCE_INTERVAL)
        digits = int(math.floor(_log10_f32(self._median / interval)))
        return min(max(digits, 1), _MAX_SIGNIFICANT_FIGURES)

    @property
    def has_warnings(self) -> bool:
        self._lazy_init()
        return bool(self._warnings)

    def _lazy_init(self) -> None:
        if not self.raw_times or self._sorted_times:
            return
        self._sorted_times = tuple(sorted(self.times))
        t = np.asarray(self._sorted_times, dtype=np.float64)
        self._median, self._p25, self._p75 = (float(q) for q in np.quantile(t, [0.5, 0.25, 0.75]))
        self._mean = float(t.mean())
        for threshold, why in ((_IQR_GROSS_WARN_THRESHOLD, "This suggests significant environmental influence."),
                               (_IQR_WARN_THRESHOLD, "This could indicate system fluctuation.")):
            if not self.meets_confidence(threshold):
                self._warnings += (f"  WARNING: Interquartile range is {self.iqr / self.median * 100:.1f}% of the "
                                   f"median measurement.\n           {why}",)
                break

    def meets_confidence(self, threshold: float = _IQR_WARN_THRESHOLD) -> bool:
        return self.iqr / self.median < threshold

    @property
    def title(self) -> str:
        return self.task_spec.title

    @property
    def env(self):
        return self.task_spec.env

    @property
    def as_row_name(self) -> str:
        return self.sub_label or self.stmt or "[Unknown]"

    def __repr__(self) -> str:
        self._lazy_init()
        n = len(self._sorted_times)
        unit, scale = select_unit(self._median)
        lines = [f"<torch.utils.benchmark.utils.common.Measurement object at {hex(id(self))}>",
                 self.task_spec.summarize(),
                 f"  {'Median: ' if n > 1 else ''}{self._median / scale:.2f} {unit}"]
        if n >= 4:
            lines.append(f"  IQR:    {self.iqr / scale:.2f} {unit} "
                         f"({self._p25 / scale:.2f} to {self._p75 / scale:.2f})")
        threads = self.num_threads
        lines.append(f"  {n} measurement{'s' if n > 1 else ''}, {self.number_per_run} runs "
                     f"{'per measurement,' if n > 1 else ','} {threads} thread{'s' if threads > 1 else ''}")
        lines.append("\n".join(self._warnings))
        return "\n".join(lines).strip()

    @staticmethod
    def merge(measurements) -> list[Measurement]:
        """Pool replicates of the same ``TaskSpec`` into one ``Measurement`` each (per-run times, so
        ``number_per_run=1``; metadata dropped)."""
        pooled: dict[TaskSpec, list[float]] = collections.defaultdict(list)
        for m in measurements:
            pooled[m.task_spec].extend(m.times)
        return [Measurement(number_per_run=1, raw_times=times, task_spec=spec) for spec, times in pooled.items()]


def select_unit(t: float) -> tuple[str, float]:
    """The unit that prints ``t`` seconds with 1 to 3 leading digits: ``("us", 1e-6)`` for 5e-5."""
    unit = {-3: "ns", -2: "us", -1: "ms"}.get(int(_log10_f32(t) // 3), "s")
    return unit, {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1}[unit]


def unit_to_english(u: str) -> str:
    return {"ns": "nanosecond", "us": "microsecond", "ms": "millisecond", "s": "second"}[u]


def trim_sigfig(x: float, n: int) -> float:
    """``x`` rounded to ``n`` significant figures (3.14159, 2 -> 3.1), in float32 as torch rounds it."""
    if n != int(n):
        raise AssertionError("Number of significant figures must be an integer")
    magnitude = int(math.ceil(_log10_f32(abs(x))))
    scale = 10 ** (magnitude - n)
    return float(np.float32(np.round(np.float32(x / scale)) * scale))


def ordered_unique(elements) -> list:
    return list(dict.fromkeys(elements))


class set_torch_threads:
    """A context that runs its block with ``n`` BLAS threads (``tapegrad.set_num_threads``, which needs
    threadpoolctl), restoring the prior count after. Without threadpoolctl it warns once that it cannot."""

    _warned = False

    def __init__(self, n: int):
        self.n = n
        self._limits = None

    def __enter__(self):
        try:
            from threadpoolctl import threadpool_limits
        except ImportError:
            if not set_torch_threads._warned:
                set_torch_threads._warned = True
                import warnings
                warnings.warn(f"tapegrad.utils.benchmark cannot set the number of threads to {self.n}: that needs "
                              "threadpoolctl (pip install threadpoolctl); measuring with NumPy's BLAS threads as "
                              "they are", RuntimeWarning, stacklevel=3)
            return self
        self._limits = threadpool_limits(limits=int(self.n), user_api="blas")
        return self

    def __exit__(self, *exc):
        if self._limits is not None:
            self._limits.restore_original_limits()
            self._limits = None
        return False
