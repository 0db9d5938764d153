"""Shared helpers of the benchmark scripts: paths, thread pinning, interleaved timing, summaries, checks.

Every workload script exposes ``run(quick=False, threads=1) -> dict`` (the dict described by ``result()``) and a
``main()`` that prints it; ``benchmarks/run.py`` collects them into ``benchmarks/RESULTS.md``.
"""

from __future__ import annotations

import contextlib
import gc
import os
import random
import statistics
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SRC = os.path.join(ROOT, "src")
if SRC not in sys.path:
    sys.path.insert(0, SRC)
if HERE not in sys.path:
    sys.path.insert(0, HERE)


class CheckFailed(AssertionError):
    """Raised when two engines disagree: a fast wrong result must never be reported as a benchmark."""


def import_torch():
    """The real PyTorch, or None (then torch's columns stay empty)."""
    try:
        import torch
    except ImportError:
        return None
    return torch


@contextlib.contextmanager
def pinned_threads(n, with_torch=True):
    """Pin BLAS threads of NumPy (threadpoolctl) and torch's intra-op threads to ``n``; None leaves them alone.
    ``with_torch=False`` leaves torch unimported (a child process measuring tapegrad's memory alone)."""
    if n is None:
        yield
        return
    torch = import_torch() if with_torch else None
    old_torch = torch.get_num_threads() if torch is not None else None
    limiter = contextlib.nullcontext()
    try:
        from threadpoolctl import threadpool_limits
        limiter = threadpool_limits(limits=n)
    except ImportError:  # no threadpoolctl: NumPy's BLAS keeps its default (RESULTS.md says so)
        pass
    with limiter:
        if torch is not None:
            torch.set_num_threads(n)
        try:
            yield
        finally:
            if torch is not None:
                torch.set_num_threads(old_torch)


def cycle(y, n_ops, steps):
    """Apply the callables ``steps`` (each ``y -> y``) in turn, ``n_ops`` times in all: the op chains of W2 and W6,
    written once for every engine (each passes its own five steps)."""
    for i in range(n_ops):
        y = steps[i % len(steps)](y)
    return y


def runs(steps, n):
    """name -> one *run* of that engine: ``n`` calls of its ``step`` back to back, as a user's training loop makes
    them. ``interleaved`` over runs times each run whole (the time per step is a run's time / ``n``).

    The step workloads (W3: 50 steps, W4: 20; W9 in its own runs of up to 50) are scored this way, the issue's
    "interleaved runs": every step of a run but its first finds its own code and data in the caches, as in a user's
    loop, while the rounds still pair the engines against drift. Interleaving single steps instead leaves *every*
    step to start with the others' code and data in the caches, a state no user's loop is in, and its ratios then
    depend on which other engines are in the rotation: on W3, tapegrad/torch measured 0.68x with seven engines and
    0.78x with the issue's three (tapegrad, torch, hand NumPy), because more engines between two torch steps evict
    more of torch's code. Runs measured the same ratios with three engines and with seven."""
    def run_of(step):
        def run():
            for _ in range(n):
                step()
        return run
    return {name: run_of(step) for name, step in steps.items()}


_ZEROS = {}


def relu(x):
    """max(x, 0) for the hand-written NumPy engines and the floors, with the kernel tapegrad's relu uses: NumPy's
    ``maximum`` against a broadcast scalar 0 runs a scalar loop, against an array of zeros SIMD (3-5x faster,
    NumPy 2.4). The zeros are made once per shape, as a hand-written training loop would."""
    z = _ZEROS.get((x.shape, x.dtype))
    if z is None:
        z = _ZEROS[(x.shape, x.dtype)] = np.zeros(x.shape, x.dtype)
    return np.maximum(x, z)


class Elapsed(float):
    """Seconds measured by the callable itself (returned to ``interleaved`` instead of its wall time)."""


def interleaved(fns, repeats, warmup=1, collect=True):
    """Time each callable of ``fns`` (name -> zero-argument callable) ``repeats`` times, interleaved.

    Round ``i`` runs every engine once, which makes the per-round ratios *paired*: both sides saw the same
    machine state. The order within a round is drawn at random (seeded: the same orders on every run): which
    engine ran just before moves a step's time by several percent (its data and code push the next engine's out
    of the caches; measured: a torch step just before makes a hand-NumPy MLP step ~10% slower), so a fixed or
    rotating order would give every engine the same predecessor and bias the ratios. (Measured on W3: with fixed
    orders tapegrad/numpy ranged from 1.14x to 1.25x and the semantic floor's from 1.04x to 1.12x.)

    Garbage: everything alive before the rounds (torch's ~170k objects, the models, the data) is moved out of the
    collector's sight (``gc.freeze``), as if each engine ran alone in its own process; and with ``collect`` each
    timed call ends with a ``gc.collect()`` inside its timing, so an engine pays for collecting the cyclic
    garbage it made (an engine whose graphs are freed by reference counting pays ~nothing), never another's.
    Process CPU time is recorded too (``.cpu`` of the result), for ``ratios``.
    A callable may return an ``Elapsed``: then that is the measured time (for callables that time only part of
    their work), else the wall time of the whole call is taken. Returns name -> list of seconds.
    """
    names = list(fns)
    for _ in range(warmup):
        for name in names:
            fns[name]()
    times = Times({name: [] for name in names})
    times.cpu = {name: [] for name in names}
    gc.collect()
    gc.freeze()             # what exists now (torch, models, data) leaves the collector: gc.collect() stays cheap
    try:
        _rounds(fns, names, repeats, collect, times)
    finally:
        gc.unfreeze()
    return times


def _rounds(fns, names, repeats, collect, times):
    rng = random.Random(0)
    for _ in range(repeats):
        order = names[:]
        rng.shuffle(order)
        for name in order:
            c0 = time.process_time()
            t0 = time.perf_counter()
            out = fns[name]()
            if collect:
                gc.collect()
            dt = time.perf_counter() - t0
            cpu = time.process_time() - c0
            if isinstance(out, Elapsed):
                times[name].append(float(out))
                times.cpu[name] = None                 # the callable timed part of itself: no CPU-time twin
            else:
                times[name].append(dt)
                if times.cpu[name] is not None:
                    times.cpu[name].append(cpu)


class Times(dict):
    """name -> wall seconds per round; ``.cpu``: name -> this process's CPU seconds per round (or None)."""

    cpu: dict


def ratios(times, pairs, threads):
    """Paired ratios "a/b" of wall times for each (a, b) in ``pairs``; at 1 thread also "a/b (CPU time)", the same
    ratio of process CPU time, which time spent waiting for the CPU while other processes run does not inflate
    (the robust number on a shared machine; at 2 threads CPU time adds both threads', so it is left out)."""
    out = {}
    for a, b in pairs:
        out[f"{a}/{b}"] = paired_ratio(times.get(a), times.get(b))
    cpu = getattr(times, "cpu", None)
    if threads == 1 and cpu:
        for a, b in pairs:
            if cpu.get(a) and cpu.get(b):
                out[f"{a}/{b} (CPU time)"] = paired_ratio(cpu[a], cpu[b])
    return out


class Trainer:
    """One engine's training loop, written once for tapegrad and torch (``import tapegrad as torch`` runs it).

    ``model`` gets the NumPy ``state`` (a state_dict of arrays) so every engine starts from the same weights;
    ``batches`` is a list of (x, y) NumPy pairs, converted to the engine's tensors up front and cycled.
    ``step()`` runs zero_grad, forward, cross-entropy, backward and the optimizer step, and returns the loss.
    """

    def __init__(self, T, model, state, batches, make_opt):
        self.T, self.model = T, model
        missing = set(model.state_dict()) ^ set(state)
        if missing:
            raise CheckFailed(f"state_dict keys differ between the engines' models: {sorted(missing)}")
        model.load_state_dict({k: T.from_numpy(v.copy()) for k, v in state.items()})
        self.opt = make_opt(T, model.parameters())
        self.batches = [(T.from_numpy(x), T.from_numpy(y)) for x, y in batches]
        self.i = 0

    def step(self):
        xb, yb = self.batches[self.i % len(self.batches)]
        self.i += 1
        self.opt.zero_grad()
        loss = self.T.nn.functional.cross_entropy(self.model(xb), yb)
        loss.backward()
        self.opt.step()
        return loss

    def state(self):
        return {k: to_numpy(v) for k, v in self.model.state_dict().items()}


COMPILED = "tapegrad compiled"
TORCH_COMPILE = "torch.compile"


def torch_compile_enabled(quick):
    """Whether to time torch.compile (inductor: it compiles C++ with the system's compiler, ~30-60 s per workload
    on this machine): not in --quick runs, nor with BENCH_TORCH_COMPILE=0."""
    return not quick and os.environ.get("BENCH_TORCH_COMPILE", "1") != "0"


class FirstCall:
    """Wrap a compiled callable: remembers how long its first call took (the capture, for tapegrad.compile; the
    trace and code generation, for torch.compile)."""

    def __init__(self, fn):
        self.fn, self.first_s = fn, None

    def __call__(self, *args):
        if self.first_s is None:
            t0 = time.perf_counter()
            out = self.fn(*args)
            self.first_s = time.perf_counter() - t0
            return out
        return self.fn(*args)


class CompiledTrainer(Trainer):
    """``Trainer`` whose step computes the loss with the model's forward and the cross-entropy compiled together
    (``T.compile(lambda x, y: F.cross_entropy(model(x), y))``: tapegrad.compile, or torch.compile for torch); the
    optimizer step stays eager. ``loss.first_s``: the first call's time (the capture)."""

    def __init__(self, T, model, state, batches, make_opt):
        super().__init__(T, model, state, batches, make_opt)
        m, F = self.model, T.nn.functional
        self.loss = FirstCall(T.compile(lambda x, y: F.cross_entropy(m(x), y)))

    def step(self):
        xb, yb = self.batches[self.i % len(self.batches)]
        self.i += 1
        self.opt.zero_grad()
        loss = self.loss(xb, yb)
        loss.backward()
        self.opt.step()
        return loss


def capture_extra(first_s, times, n, extra):
    """Report a compiled engine's first call and how many steps repay it: (first call - an eager step) / (an eager
    step - a compiled step), against tapegrad eager and against torch eager (medians of ``times``, seconds per
    timed call of ``n`` steps)."""
    if first_s is None:
        return
    extra[f"{COMPILED} first call (capture + eager run), s"] = first_s
    comp = statistics.median(times[COMPILED]) / n if times.get(COMPILED) else None
    for base in ("tapegrad", "torch"):
        if comp is None or not times.get(base):
            continue
        b = statistics.median(times[base]) / n
        if b > comp:
            extra[f"steps to repay the capture vs {base} eager"] = max(0.0, (first_s - b) / (b - comp))


def check_training(label, trainers, steps, rtol, weight_atol=None):
    """Run ``steps`` steps of every trainer (name -> object with step()/state()) on the same batches and assert
    that the losses of each step and the final weights agree with tapegrad's. Returns readable check lines.

    ``weight_atol``: for Adam, whose step is about lr * sign(g) wherever |g| is below eps, so rounding-level
    differences of a near-zero gradient move a weight by up to lr: give a fraction of lr here."""
    losses = {name: [float(to_numpy(t.step())) for _ in range(steps)] for name, t in trainers.items()}
    states = {name: t.state() for name, t in trainers.items()}
    lines = []
    for name in trainers:
        if name == "tapegrad":
            continue
        assert_close(f"{label} losses tapegrad vs {name}", losses["tapegrad"], losses[name], rtol)
        for k in states[name]:
            assert_close(f"{label} weight {k} after {steps} steps, tapegrad vs {name}", states["tapegrad"][k],
                         states[name][k], rtol, weight_atol)
        tol = f"rtol {rtol:g}" + (f", weights atol {weight_atol:g}" if weight_atol is not None else "")
        lines.append(f"losses of {steps} steps and final weights: tapegrad == {name} ({tol})")
    return lines, losses


def stats(samples, scale=1.0):
    """median / min / max / n of a list of samples, multiplied by ``scale`` (e.g. 1e3 for ms)."""
    if not samples:
        return None
    return {"median": statistics.median(samples) * scale, "min": min(samples) * scale,
            "max": max(samples) * scale, "n": len(samples)}


def paired_ratio(a, b):
    """Median over rounds of a[i] / b[i] (the paired ratio), or None if a side is missing."""
    if not a or not b:
        return None
    return statistics.median(x / y for x, y in zip(a, b))


def assert_close(name, got, want, rtol, atol=None):
    """Raise CheckFailed unless ``got`` and ``want`` (arrays or numbers) agree; returns the max abs error.

    ``atol`` defaults to ``rtol`` times the largest magnitude of ``want``: tiny elements are compared relative
    to the array's scale (a vanishing gradient of 1e-30 is still checked, not waved through by a fixed atol).
    """
    got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    if got.shape != want.shape:
        raise CheckFailed(f"{name}: shapes differ, {got.shape} vs {want.shape}")
    if not np.all(np.isfinite(got)) or not np.all(np.isfinite(want)):
        raise CheckFailed(f"{name}: non-finite values")
    if atol is None:
        atol = rtol * float(np.max(np.abs(want))) if want.size else 0.0
    if not np.allclose(got, want, rtol=rtol, atol=atol):
        err = float(np.max(np.abs(got - want))) if got.size else 0.0
        raise CheckFailed(f"{name}: engines disagree (max abs error {err:.3g}, rtol={rtol}, atol={atol})")
    return float(np.max(np.abs(got - want))) if got.size else 0.0


def to_numpy(t):
    """A tapegrad or torch tensor (or array) as a NumPy array (detached)."""
    import numpy as np
    if hasattr(t, "detach"):
        t = t.detach()
    if hasattr(t, "numpy"):
        return np.array(t.numpy())
    return np.asarray(t)


def result(workload, title, unit, threads, engines, ratios=None, checks=None, extra=None, notes=None):
    """The result dict every workload returns.

    engines: name -> stats() dict (in ``unit``) or None when the engine is unavailable.
    ratios : label -> value, e.g. {"tapegrad/torch": 0.8}; checks: list of human-readable passed checks.
    """
    return {"workload": workload, "title": title, "unit": unit, "threads": threads, "engines": engines,
            "ratios": ratios or {}, "checks": checks or [], "checks_passed": True, "extra": extra or {},
            "notes": notes or []}


def rss_bytes():
    """Resident set size of this process: psutil when installed, else /proc/self/statm."""
    try:
        import psutil
        return psutil.Process().memory_info().rss
    except ImportError:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def reset_peak_rss():
    """Reset the kernel's peak-RSS mark (Linux >= 4.0: write 5 to /proc/self/clear_refs); False if impossible,
    then ``peak_rss_bytes`` is the peak since the process started (imports included)."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def peak_rss_bytes():
    """Peak resident set size of this process (VmHWM, since the last reset_peak_rss), else getrusage's peak."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def sub_env():
    """Environment for child processes: tapegrad importable from src/ without installing it."""
    env = dict(os.environ)
    env["PYTHONPATH"] = SRC + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def fmt(v, digits=3):
    if v is None:
        return "—"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        if v != 0 and (abs(v) >= 1e5 or abs(v) < 1e-3):
            return f"{v:.3g}"
        return f"{v:.{digits}g}" if abs(v) < 10 ** digits else f"{v:.0f}"
    return str(v)


def print_result(res):
    """A plain-text rendering of one result dict (for running a script alone)."""
    print(f"{res['workload']}: {res['title']}  [{res['unit']}, {res['threads']} thread(s)]")
    for name, st in res["engines"].items():
        if st is None:
            print(f"  {name:<18} not available")
        else:
            print(f"  {name:<18} median {fmt(st['median']):>9}  min {fmt(st['min']):>9}  max {fmt(st['max']):>9}"
                  f"  (n={st['n']})")
    for label, v in res["ratios"].items():
        print(f"  {label:<26} {fmt(v)}")
    for k, v in res["extra"].items():
        print(f"  {k:<26} {fmt(v)}")
    for c in res["checks"]:
        print(f"  check: {c}")
    for n in res["notes"]:
        print(f"  note: {n}")


def script_main(run, doc, argv=None, has_threads=True):
    """The command line shared by the workload scripts: --quick, --threads N, --json."""
    import argparse
    import json
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="tiny sizes, 1-2 repeats (a smoke test, seconds)")
    if has_threads:
        ap.add_argument("--threads", type=int, default=1, help="BLAS threads for NumPy and torch (default 1)")
    ap.add_argument("--json", action="store_true", help="print the result dict as JSON")
    args = ap.parse_args(argv)
    kwargs = {"quick": args.quick}
    if has_threads:
        kwargs["threads"] = args.threads
    res = run(**kwargs)
    if args.json:
        print(json.dumps(res, indent=1))
    else:
        print_result(res)
    return res
