"""``Timer``: ``timeit.Timer`` with torch.utils.benchmark's measuring strategies (warm-up, a block size that
hides the timer's own cost, replicates until enough time or confidence) and its ``Measurement`` results."""

from __future__ import annotations

import enum
import textwrap
import timeit as _timeit

import numpy as np

from . import common

__all__ = ["Timer", "timer", "Language"]


def timer() -> float:
    """The clock ``Timer`` reads by default: ``timeit.default_timer`` (tapegrad runs on the CPU only, so there
    is no device to synchronize first)."""
    return _timeit.default_timer()


class Language(enum.Enum):
    PYTHON = 0
    CPP = 1


def _clean(code):
    code = textwrap.dedent(code)
    return (code[1:] if code.startswith("\n") else code).rstrip()


class Timer:
    """Measure how long a statement takes, as ``torch.utils.benchmark.Timer``.

    ``stmt`` runs in a namespace holding ``globals`` (and ``torch``, bound to tapegrad, so that PyTorch's
    statements run as written) after ``setup`` ran once. ``label``, ``sub_label``, ``description`` and ``env``
    name the result for printing and for ``Compare`` (rows are sub-labels, columns descriptions).
    ``num_threads`` is the number of BLAS threads NumPy uses while measuring (default 1, as torch; set through
    threadpoolctl, which is optional: without it a warning says the thread count is left as it is).

    ``timeit(number)`` runs ``stmt`` ``number`` times once; ``blocked_autorange`` measures blocks of runs until
    ``min_run_time`` seconds have passed; ``adaptive_autorange`` goes on until the spread of the blocks is under
    ``threshold`` of their median (or ``max_run_time``). Each returns a ``Measurement``.
    """

    _timer_cls = _timeit.Timer

    def __init__(self, stmt="pass", setup="pass", global_setup="", timer=timer, globals=None,  # noqa: A002
                 label=None, sub_label=None, description=None, env=None, num_threads=1,
                 language=Language.PYTHON):
        if not isinstance(stmt, str):
            raise ValueError("Currently only a `str` stmt is supported.")
        if language in (Language.CPP, "cpp", "c++"):
            raise NotImplementedError("tapegrad has no C++ frontend: Timer(language='cpp') cannot compile and time "
                                      "C++ statements; time the Python statement instead")
        if language not in (Language.PYTHON, "py", "python"):
            raise ValueError(f"Invalid language `{language}`.")
        if global_setup:
            raise ValueError(f"global_setup is C++ only, got `{global_setup}`. Most likely this code can simply be "
                             "moved to `setup`.")
        import tapegrad
        self._globals = dict(globals or {})
        self._globals.setdefault("torch", tapegrad)
        self._language = Language.PYTHON
        stmt, setup = _clean(stmt), _clean(setup)
        self._timer = self._timer_cls(stmt=stmt, setup=setup, timer=timer, globals=self._globals)
        self._task_spec = common.TaskSpec(stmt=stmt, setup=setup, global_setup=global_setup, label=label,
                                          sub_label=sub_label, description=description, env=env,
                                          num_threads=num_threads)

    def _timeit(self, number):
        return max(self._timer.timeit(number), 1e-9)    # a zero would break the ratios below

    def _measurement(self, number, times):
        return common.Measurement(number_per_run=number, raw_times=times, task_spec=self._task_spec)

    def timeit(self, number: int = 1000000) -> common.Measurement:
        """Run ``stmt`` ``number`` times (after a warm-up of ``number // 100`` runs, at least 2): one
        replicate, as ``timeit.Timer.timeit``."""
        with common.set_torch_threads(self._task_spec.num_threads):
            self._timeit(max(int(number // 100), 2))
            return self._measurement(number, [self._timeit(number)])

    def repeat(self, repeat: int = -1, number: int = -1):
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def autorange(self, callback=None):
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def collect_callgrind(self, number=100, *, repeats=None, collect_baseline=True, retain_out_file=False):
        raise NotImplementedError("tapegrad.utils.benchmark measures wall time only: instruction counts under "
                                  "Callgrind (Timer.collect_callgrind) are not available")

    def _estimate_block_size(self, min_run_time):
        """The smallest power of ten of runs whose time dwarfs the timer's own (overhead <= 0.01% and at least
        ``min_run_time / 1000``), or exceeds ``min_run_time``."""
        with common.set_torch_threads(self._task_spec.num_threads):
            overhead = float(np.median([self._timeit(0) for _ in range(5)]))
            number = 1
            while True:
                took = self._timeit(number)
                if (overhead / took <= 1e-4 and took >= min_run_time / 1000) or took > min_run_time:
                    return number
                if number * 10 > 2147483647:
                    return number
                number *= 10

    def _measure_blocks(self, number, stop, min_run_time, max_run_time=None, callback=None):
        times, total, can_stop = [], 0.0, False
        with common.set_torch_threads(self._task_spec.num_threads):
            while total < min_run_time or not can_stop:
                took = self._timeit(number)
                times.append(took)
                total += took
                if callback:
                    callback(number, took)
                can_stop = stop(times)
                if max_run_time and total > max_run_time:
                    break
        return times

    def blocked_autorange(self, callback=None, min_run_time: float = 0.2) -> common.Measurement:
        """Pick a block size (``_estimate_block_size``), then time blocks until ``min_run_time`` seconds have
        been spent in them; ``callback(number, seconds)`` is told of each block."""
        number = self._estimate_block_size(min_run_time)
        times = self._measure_blocks(number, lambda times: True, min_run_time, callback=callback)
        return self._measurement(number, times)

    def adaptive_autorange(self, threshold: float = 0.1, *, min_run_time: float = 0.01, max_run_time: float = 10.0,
                           callback=None) -> common.Measurement:
        """As ``blocked_autorange``, but go on until there are more than 3 blocks whose IQR is under
        ``threshold`` of their median (after ``min_run_time`` seconds), or ``max_run_time`` seconds in all."""
        number = self._estimate_block_size(min_run_time=0.05)

        def confident(times):
            return len(times) > 3 and self._measurement(number, times).meets_confidence(threshold=threshold)
        times = self._measure_blocks(number, confident, min_run_time, max_run_time, callback=callback)
        return self._measurement(number, times)
