"""The profiler's recording (``profile``, ``record_function``) and its summary (``EventList.table``)."""

from __future__ import annotations

import enum
import functools
import json
import os
import re
import socket
import time
import warnings

from ..autograd import engine as _engine
from ..autograd import function as _f
from ..tensor import Tensor

__all__ = ["profile", "record_function", "ProfilerActivity", "ProfilerAction", "schedule",
           "tensorboard_trace_handler", "supported_activities", "EventList", "FunctionEvent"]


class ProfilerActivity(enum.Enum):
    CPU = 0
    XPU = 1
    MTIA = 2
    CUDA = 3
    HPU = 4
    PrivateUse1 = 5


def supported_activities():
    return {ProfilerActivity.CPU}


class ProfilerAction(enum.Enum):
    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


def schedule(*, wait, warmup, active, repeat=0, skip_first=0, skip_first_wait=0):
    """The action for each ``prof.step()`` number: ``skip_first`` steps, then cycles of ``wait`` idle, ``warmup``
    and ``active`` recorded steps (the last one saves: ``on_trace_ready``), ``repeat`` cycles (0: forever)."""
    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise AssertionError("Invalid profiler schedule arguments")
    if warmup == 0:
        warnings.warn("Profiler won't be using warmup, this can skew profiler results", stacklevel=2)

    def action(step):
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        cycle = wait + warmup + active
        if repeat > 0 and step // cycle >= repeat:
            return ProfilerAction.NONE
        mod = step % cycle
        if mod < wait:
            return ProfilerAction.NONE
        if mod < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if mod < cycle - 1 else ProfilerAction.RECORD_AND_SAVE
    return action


def _default_schedule(step):
    return ProfilerAction.RECORD


# --- events -------------------------------------------------------------------------------------------------
class FunctionEvent:
    """One timed call: ``name``, start and end (µs since the profile began), its ``cpu_children``."""

    __slots__ = ("name", "start_us", "end_us", "input_shapes", "cpu_children", "cpu_parent", "id")

    def __init__(self, name, start_us, input_shapes=None):
        self.name, self.start_us, self.end_us = name, start_us, start_us
        self.input_shapes = input_shapes
        self.cpu_children, self.cpu_parent = [], None

    @property
    def cpu_time_total(self):
        return self.end_us - self.start_us

    @property
    def self_cpu_time_total(self):
        return self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children)

    @property
    def key(self):
        return self.name

    @property
    def count(self):
        return 1

    def __repr__(self):
        return f"<FunctionEvent name={self.name} cpu_time={self.cpu_time_total:.3f}us>"


class FunctionEventAvg:
    """The events of one name (and input shapes, when grouped by them), added up."""

    def __init__(self, key, input_shapes=None):
        self.key, self.input_shapes = key, input_shapes
        self.count = 0
        self.cpu_time_total = self.self_cpu_time_total = 0.0

    def add(self, ev):
        self.count += 1
        self.cpu_time_total += ev.cpu_time_total
        self.self_cpu_time_total += ev.self_cpu_time_total
        return self

    @property
    def cpu_time(self):
        return self.cpu_time_total / self.count if self.count else 0.0

    def __repr__(self):
        return (f"<FunctionEventAvg key={self.key} self_cpu_time={_fmt(self.self_cpu_time_total)} "
                f"cpu_time={_fmt(self.cpu_time_total)} count={self.count}>")


_SORT_KEYS = {"cpu_time_total": "cpu_time_total", "self_cpu_time_total": "self_cpu_time_total",
              "cpu_time": "cpu_time", "count": "count"}


def _fmt(us):
    if us >= 1e6:
        return f"{us / 1e6:.3f}s"
    if us >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


class EventList(list):
    """A list of events (``FunctionEvent``, or ``FunctionEventAvg`` from ``key_averages``), with ``table``."""

    def __init__(self, events=(), top_level_total=None):
        super().__init__(events)
        self._total = top_level_total

    def key_averages(self, group_by_input_shapes=False):
        groups = {}
        for ev in self:
            shapes = str(ev.input_shapes) if group_by_input_shapes else None
            k = (ev.name, shapes)
            if k not in groups:
                groups[k] = FunctionEventAvg(ev.name, shapes)
            groups[k].add(ev)
        return EventList(groups.values(), self._total)

    @property
    def self_cpu_time_total(self):
        return sum(ev.self_cpu_time_total for ev in self)

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75, max_name_column_width=55,
              max_shapes_column_width=80, header=None, top_level_events_only=False, time_unit=None):
        """torch's summary table: name, self and total CPU time (and their share), average, calls.

        Laid out as torch's: the name column 4 wider than the longest name (at most ``max_name_column_width``,
        longer names cut with ``...``), the shapes column likewise, ``header`` under a rule of ``=``; ``row_limit``
        rows (a negative one: all), times in ``time_unit`` ("s", "ms", "us") when given."""
        rows = list(self) if isinstance(self[0] if self else None, FunctionEventAvg) else list(self.key_averages())
        if not rows:
            return ""
        if sort_by is not None:
            attr = _SORT_KEYS.get(sort_by)
            if attr is None:
                if sort_by.startswith(("cuda", "device", "self_cuda", "self_device", "xpu", "cpu_memory",
                                       "self_cpu_memory", "flops")):
                    attr = None          # (nothing of that is measured here: the order is kept)
                else:
                    raise AttributeError(f"'FunctionEventAvg' object has no attribute {sort_by!r}")
            if attr is not None:
                rows.sort(key=lambda r: getattr(r, attr), reverse=True)
        total = sum(r.self_cpu_time_total for r in rows)
        shapes = any(getattr(r, "input_shapes", None) for r in rows)
        width = max(len(r.key) for r in rows) + 4
        if max_name_column_width is not None:
            width = min(width, max_name_column_width)
        cols = [width] + [12] * 6
        heads = ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg", "# of Calls"]
        if shapes:
            sw = max(len(str(getattr(r, "input_shapes", None))) for r in rows) + 4
            cols.append(sw if max_shapes_column_width is None else min(sw, max_shapes_column_width))
            heads.append("Input Shapes")
        sep = "".join("-" * w + "  " for w in cols)
        line_length = sum(cols) + 2 * (len(cols) - 1)
        fmt = lambda cells: "".join(str(c).rjust(w) + "  " for c, w in zip(cells, cols))   # noqa: E731
        unit = {"s": lambda v: f"{v / 1e6:.3f}s", "ms": lambda v: f"{v / 1e3:.3f}ms",
                "us": lambda v: f"{v:.3f}us"}.get(time_unit, _fmt)
        pct = (lambda v: f"{100.0 * v / total:.2f}%") if total else (lambda v: "0.00%")
        out = []
        if header is not None:
            out += ["=" * line_length, header]
        if top_level_events_only:
            out += ["=" * line_length, "This report only display top-level ops statistics"]
        out += [sep, fmt(heads), sep]
        for k, r in enumerate(rows):
            if k == row_limit:
                break
            name = r.key
            if max_name_column_width is not None and len(name) >= max_name_column_width - 3:
                name = name[:max_name_column_width - 3] + "..."
            cells = [name, pct(r.self_cpu_time_total), unit(r.self_cpu_time_total), pct(r.cpu_time_total),
                     unit(r.cpu_time_total), unit(r.cpu_time), r.count]
            if shapes:
                cells.append(str(getattr(r, "input_shapes", None))[:cols[-1]])
            out.append(fmt(cells))
        out += [sep, f"Self CPU time total: {unit(total)}"]
        return "\n".join(out) + "\n"

    def total_average(self):
        avg = FunctionEventAvg("Total")
        for ev in self:
            avg.count += ev.count
            avg.cpu_time_total += ev.cpu_time_total
            avg.self_cpu_time_total += ev.self_cpu_time_total
        return avg

    def export_chrome_trace(self, path):
        _write_trace(path, self)


# --- recording ----------------------------------------------------------------------------------------------
def _snake(name):
    name = name.lstrip("_")
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).lower()


@functools.cache
def op_name(cls):
    """torch's event name for an op class: ``aten::`` and the snake-case of its node name without
    ``Backward<n>`` (``AddmmBackward0`` -> ``aten::addmm``)."""
    node = getattr(cls, "node_name", None) or cls.__name__
    return "aten::" + _snake(re.sub(r"Backward\d*$", "", node))


class _Recorder(_f.Interpreter):
    """Times each op call while a profile records (see the module's docstring)."""

    def __init__(self, prof):
        self.prof = prof

    def process(self, cls, args, kwargs):
        prof = self.prof
        shapes = [list(a.shape) if isinstance(a, Tensor) else [] for a in args] if prof.record_shapes else None
        ev = prof._open(op_name(cls), shapes)
        try:
            return self.call_next(cls, args, kwargs)
        finally:
            prof._close(ev)


class _NodeObserver:
    """The profile's engine observer: a walk's start, then each node as it finishes."""

    def __init__(self, prof):
        self.prof = prof

    def walk_start(self):
        self.prof._last = time.perf_counter_ns()

    def __call__(self, node, grads_out, grads_in):
        self.prof._on_node(node, grads_out, grads_in)


_current = []        # the profiles recording now (innermost last): record_function reports to them


class profile:
    """``with torch.profiler.profile(activities=None, schedule=None, on_trace_ready=None, record_shapes=False,
    ...) as prof:`` records every op call and backward node in the block (see the module's docstring);
    ``prof.step()`` advances ``schedule``; ``prof.key_averages().table(...)`` summarises;
    ``prof.export_chrome_trace(path)`` writes the events for chrome://tracing or Perfetto."""

    def __init__(self, *, activities=None, schedule=None, on_trace_ready=None, record_shapes=False,
                 profile_memory=False, with_stack=False, with_flops=False, with_modules=False,
                 experimental_config=None, execution_trace_observer=None, acc_events=False, use_cuda=None,
                 custom_trace_id_callback=None):
        self.activities = set(activities) if activities else supported_activities()
        self.schedule = schedule or _default_schedule
        self.on_trace_ready = on_trace_ready
        self.record_shapes, self.profile_memory, self.with_stack = record_shapes, profile_memory, with_stack
        self.with_flops, self.with_modules, self.acc_events = with_flops, with_modules, acc_events
        self.step_num = 0
        self._events, self._stack, self._recording = [], [], False
        self._interp, self._t0 = None, None
        self._action = ProfilerAction.NONE
        self._observer = _NodeObserver(self)
        self._profiler_events = EventList()

    # (the recording switches on and off with the schedule's actions)
    def _start_recording(self):
        if self._recording:
            return
        self._recording = True
        self._events, self._stack = [], []
        self._t0 = time.perf_counter_ns()
        self._last = self._t0
        self._interp = _Recorder(self).enter()
        _engine._observers.append(self._observer)
        _current.append(self)

    def _stop_recording(self):
        if not self._recording:
            return
        self._recording = False
        self._interp.exit()
        self._interp = None
        _engine._observers.remove(self._observer)
        _current.remove(self)
        self._profiler_events = EventList(self._events)

    def _now(self):
        return (time.perf_counter_ns() - self._t0) / 1e3

    def _open(self, name, shapes=None):
        ev = FunctionEvent(name, self._now(), shapes)
        if self._stack:
            ev.cpu_parent = self._stack[-1]
            self._stack[-1].cpu_children.append(ev)
        self._stack.append(ev)
        self._events.append(ev)
        return ev

    def _close(self, ev):
        ev.end_us = self._now()
        if self._stack and self._stack[-1] is ev:
            self._stack.pop()
        self._last = time.perf_counter_ns()

    def _on_node(self, node, grads_out, grads_in):
        """A backward node ran (the engine's observer): its time is the time since the last event ended."""
        now = time.perf_counter_ns()
        ev = FunctionEvent(f"autograd::engine::evaluate_function: {node.name()}", (self._last - self._t0) / 1e3)
        ev.end_us = (now - self._t0) / 1e3
        if self._stack:
            ev.cpu_parent = self._stack[-1]
            self._stack[-1].cpu_children.append(ev)
        self._events.append(ev)
        self._last = now

    def _act(self, action):
        if action in (ProfilerAction.WARMUP, ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE):
            self._start_recording()
        else:
            self._stop_recording()

    def start(self):
        self._action = self.schedule(self.step_num)
        if self._action is not ProfilerAction.NONE:
            self._start_recording()
        return self

    def stop(self):
        was = self._recording
        self._stop_recording()
        # a trace is ready only when the profiler stops while recording: not during a warm-up (as torch's)
        if was and self._action in (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE) \
                and self.on_trace_ready is not None:
            self.on_trace_ready(self)

    def step(self):
        """Advance the schedule by one step (call it once per training step)."""
        prev = self._action
        self.step_num += 1
        self._action = self.schedule(self.step_num)
        if prev is ProfilerAction.RECORD_AND_SAVE:
            self._stop_recording()
            if self.on_trace_ready is not None:
                self.on_trace_ready(self)
        elif prev is ProfilerAction.WARMUP and self._action in (ProfilerAction.RECORD,
                                                                 ProfilerAction.RECORD_AND_SAVE):
            self._stop_recording()       # (warm-up events are not kept)
        if self._action is not ProfilerAction.NONE:
            self._start_recording()
        else:
            self._stop_recording()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
        return False

    def events(self):
        return self._profiler_events

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0, group_by_overload_name=False):
        return self._profiler_events.key_averages(group_by_input_shape)

    def export_chrome_trace(self, path):
        _write_trace(path, self._profiler_events)

    def export_stacks(self, path, metric="self_cpu_time_total"):
        raise RuntimeError("export_stacks needs with_stack=True stacks, which tapegrad's profiler does not record")

    @property
    def profiler(self):       # (torch.profiler.profile.profiler.function_events, as some scripts read it)
        return self

    @property
    def function_events(self):
        return self._profiler_events


def _write_trace(path, events):
    trace = {"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": ev.name, "pid": os.getpid(), "tid": 0,
                              "ts": ev.start_us, "dur": ev.cpu_time_total,
                              **({"args": {"Input Dims": ev.input_shapes}} if ev.input_shapes else {})}
                             for ev in events],
             "displayTimeUnit": "ms"}
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w") as f:
        json.dump(trace, f)
    os.replace(tmp, path)


def tensorboard_trace_handler(dir_name, worker_name=None, use_gzip=False):
    """An ``on_trace_ready`` that writes each saved trace into ``dir_name`` as
    ``<worker>.<time>.pt.trace.json``."""
    def handler(prof):
        os.makedirs(dir_name, exist_ok=True)
        name = worker_name or f"{socket.gethostname()}_{os.getpid()}"
        path = os.path.join(dir_name, f"{name}.{time.time_ns() // 1_000_000}.pt.trace.json")
        prof.export_chrome_trace(path)
        if use_gzip:
            import gzip
            import shutil
            with open(path, "rb") as src, gzip.open(path + ".gz", "wb") as dst:
                shutil.copyfileobj(src, dst)
            os.remove(path)
    return handler


class record_function:
    """``with torch.profiler.record_function("name"):`` (or as a decorator): a named range in the profile; outside
    a profile it costs nothing."""

    def __init__(self, name, args=None):
        self.name, self.args = name, args
        self._evs = None

    def __enter__(self):
        self._evs = [(p, p._open(self.name, [] if p.record_shapes else None)) for p in _current if p._recording]
        return self

    def __exit__(self, *exc):
        for p, ev in self._evs or ():
            p._close(ev)
        self._evs = None
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapped(*args, **kwargs):
            with record_function(self.name, self.args):
                return fn(*args, **kwargs)
        return wrapped
