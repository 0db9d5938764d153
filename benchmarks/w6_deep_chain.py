"""W6 deep graph: 100,000 chained ops on a 0-d float32 tensor, then backward. Time and peak memory.

The chain cycles add(a), mul(b), exp, log, mul(1/b) on 0-d tensors (each cycle is about ``y + a``, so the value
stays small and the gradient stays near 1 instead of vanishing: the check compares a meaningful gradient).
Time: forward + backward (+ freeing the graph), interleaved in this process. Memory: each engine runs once more
in a fresh child process, which reports its peak resident memory growth (the kernel's peak-RSS mark, reset right
before the chain, minus resident memory before it) and, for the NumPy engines, tracemalloc's peak (Python objects
+ NumPy buffers; torch's own allocations are invisible to tracemalloc).

    python benchmarks/w6_deep_chain.py [--quick] [--threads N] [--json]
    python benchmarks/w6_deep_chain.py --worker tapegrad|torch|numpy --ops N   (one memory measurement, JSON)
"""

from __future__ import annotations

import gc
import json
import subprocess
import sys
import time

import _common as C
import _floor
import numpy as np

N_OPS = 100_000


def data(seed=0):
    rng = np.random.default_rng(seed)
    x = np.array(rng.uniform(-1, 1), dtype=np.float32)
    a = np.array(rng.uniform(0.0002, 0.0004), dtype=np.float32)
    b = np.array(1.5, dtype=np.float32)
    return x, a, b, np.array(1 / b, dtype=np.float32)


def chain_engine(T, x0, a0, b0, binv0, n_ops, compiled=False):
    a, b, binv = T.from_numpy(a0), T.from_numpy(b0), T.from_numpy(binv0)

    steps = (lambda y: y + a, lambda y: y * b, T.exp, T.log, lambda y: y * binv)

    def chain(x):
        return C.cycle(x, n_ops, steps)

    fn = C.FirstCall(T.compile(chain)) if compiled else chain

    def step():
        x = T.from_numpy(x0.copy()).requires_grad_()
        y = fn(x)
        y.backward()
        return y.detach(), x.grad

    step.first = fn if compiled else None
    return step


def chain_numpy(x0, a, b, binv, n_ops):
    def step():
        y = x0
        saved = []
        for i in range(n_ops):
            k = i % 5
            if k == 0:
                y = y + a
                saved.append(None)
            elif k == 1:
                y = y * b
                saved.append(None)
            elif k == 2:
                y = np.exp(y)
                saved.append(y)
            elif k == 3:
                saved.append(y)
                y = np.log(y)
            else:
                y = y * binv
                saved.append(None)
        g = np.ones_like(y)
        for i in range(n_ops - 1, -1, -1):
            k = i % 5
            if k == 1:
                g = g * b
            elif k == 2:
                g = g * saved[i]
            elif k == 3:
                g = g / saved[i]
            elif k == 4:
                g = g * binv
        return y, g

    return step


PAUSED = "tapegrad, cyclic GC paused"
SEMANTIC = "semantic floor"


def gc_paused(step):
    """``step`` with CPython's cyclic garbage collector off (an informational engine: how much of tapegrad's time
    is the collector scanning the growing graph; tapegrad's graphs hold no reference cycles)."""
    def run():
        gc.disable()
        try:
            return step()
        finally:
            gc.enable()
    return run


def gc_profile(step):
    """One run of ``step`` with CPython's collections timed: (seconds in collections, number of full ones). As in
    the timed rounds, what lived before (torch's objects, the data) is frozen out of the collector's sight."""
    spent, full, start = [0.0], [0], [0.0]

    def on_gc(phase, info):
        if phase == "start":
            start[0] = time.perf_counter()
        else:
            spent[0] += time.perf_counter() - start[0]
            full[0] += info["generation"] == 2

    gc.collect()
    gc.freeze()
    gc.callbacks.append(on_gc)
    try:
        step()
    finally:
        gc.callbacks.remove(on_gc)
        gc.unfreeze()
    return spent[0], full[0]


def make_fns(n_ops, which=("tapegrad", "torch", "numpy")):
    x, a, b, binv = data()
    fns = {}
    for name in which:
        if name == "tapegrad":
            import tapegrad
            fns[name] = chain_engine(tapegrad, x, a, b, binv, n_ops)
        elif name == "torch":
            torch = C.import_torch()
            if torch is not None:
                fns[name] = chain_engine(torch, x, a, b, binv, n_ops)
        elif name == C.COMPILED:
            import tapegrad
            fns[name] = chain_engine(tapegrad, x, a, b, binv, n_ops, compiled=True)
        elif name == SEMANTIC:
            fns[name] = chain_engine(_floor, x, a, b, binv, n_ops)
        else:
            fns[name] = chain_numpy(x, a, b, binv, n_ops)
    return fns


def worker(engine, n_ops):
    """One run in this (fresh) process: seconds, peak RSS growth, tracemalloc peak (NumPy engines)."""
    import gc
    import tracemalloc
    if engine == "torch":
        C.import_torch().set_num_threads(1)
    step = make_fns(n_ops, (engine,))[engine]
    make_fns(50, (engine,))[engine]()                               # warm-up: lazy imports, caches
    gc.collect()
    before = C.rss_bytes()
    exact = C.reset_peak_rss()
    t0 = time.perf_counter()
    step()
    seconds = time.perf_counter() - t0
    out = {"engine": engine, "seconds": seconds, "peak_rss_growth": max(C.peak_rss_bytes() - before, 0),
           "peak_reset": exact}
    if engine != "torch":
        gc.collect()
        tracemalloc.start()
        step()
        out["tracemalloc_peak"] = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    print(json.dumps(out))


def memory_runs(n_ops, engines):
    out = {}
    for name in engines:
        proc = subprocess.run([sys.executable, __file__, "--worker", name, "--ops", str(n_ops)], env=C.sub_env(),
                              capture_output=True, text=True, timeout=900)
        if proc.returncode != 0:
            raise RuntimeError(f"W6 memory worker {name} failed:\n{proc.stderr[-3000:]}")
        out[name] = json.loads(proc.stdout.strip().splitlines()[-1])
    return out


def run(quick=False, threads=1):
    n_ops = 500 if quick else N_OPS
    repeats = 1 if quick else 3
    fns = make_fns(n_ops, ("tapegrad", "torch", "numpy", SEMANTIC, C.COMPILED))
    fns[PAUSED] = gc_paused(fns["tapegrad"])
    with C.pinned_threads(threads):
        outs = {name: [C.to_numpy(v) for v in f()] for name, f in fns.items()}
        checks = []
        for name, (y, g) in outs.items():
            if name == C.COMPILED:          # the same kernels in the same order: equal to the last bit
                np.testing.assert_array_equal(y, outs["tapegrad"][0])
                np.testing.assert_array_equal(g, outs["tapegrad"][1])
                checks.append(f"output and x.grad: tapegrad == {name} (bitwise)")
            if name.startswith("tapegrad"):
                continue
            # float32 rounding of exp/log accumulates over the chain: about sqrt(n) ulps
            C.assert_close(f"W6 output tapegrad vs {name}", outs["tapegrad"][0], y, rtol=1e-3)
            C.assert_close(f"W6 x.grad tapegrad vs {name}", outs["tapegrad"][1], g, rtol=1e-2)
            checks.append(f"output and x.grad (= {float(g):.4f}): tapegrad == {name} (rtol 1e-3 / 1e-2)")
        fns[C.COMPILED]()        # (a second call: the first captured; the timed calls replay)
        times = C.interleaved(fns, repeats, warmup=0)
        profiles = {name: gc_profile(fns[name]) for name in ("tapegrad", SEMANTIC, "torch") if name in fns}
    mem = memory_runs(n_ops, [n for n in fns if n not in (PAUSED, SEMANTIC, C.COMPILED)] if not quick
                      else ["tapegrad"])
    engines = {name: C.stats(times.get(name)) for name in ("tapegrad", "torch", "numpy", PAUSED, SEMANTIC,
                                                           C.COMPILED)}
    ratios = C.ratios(times, [("tapegrad", "torch"), ("tapegrad", "numpy"), (PAUSED, "torch"), (SEMANTIC, "torch"),
                              ("tapegrad", SEMANTIC), (C.COMPILED, "torch"), (C.COMPILED, "tapegrad"),
                              (C.COMPILED, "numpy")], threads)
    extra = {}
    C.capture_extra(fns[C.COMPILED].first.first_s, times, 1, extra)
    for name, (spent, full) in profiles.items():
        extra[f"{name}: seconds in CPython's cyclic collector during one run"] = spent
        extra[f"{name}: full (generation 2) collections during one run"] = full
    for name, m in mem.items():
        extra[f"{name} peak RSS growth (MiB)"] = m["peak_rss_growth"] / 2 ** 20
        if "tracemalloc_peak" in m:
            extra[f"{name} tracemalloc peak (MiB)"] = m["tracemalloc_peak"] / 2 ** 20
    return C.result("W6", f"{n_ops:,} chained ops (add/mul/exp/log/mul) on a 0-d float32 tensor, then backward",
                    "s", threads, engines, ratios, checks, extra=extra,
                    notes=["memory: one run per engine in a fresh process",
                           f"'{PAUSED}': the same tapegrad run with gc.disable() around it (information only: the "
                           "share of the time that is CPython's cyclic collector scanning the live graph)",
                           f"'{SEMANTIC}': benchmarks/_floor.py (see W2), the least an engine with torch's "
                           "semantics pays; its graph lives in Python's heap too, so it pays the collector",
                           f"'{C.COMPILED}': the chain as one tapegrad.compile'd function, replayed (its capture, the "
                           "first call, is reported separately); torch.compile is not timed here: Dynamo would "
                           "trace the 100,000 Python-level ops into one graph for inductor to compile, which was "
                           "not attempted (W2's 200-op chain took ~9 s to compile with a cold cache)"])


def main(argv=None):
    if argv is None:
        argv = sys.argv[1:]
    if argv and argv[0] == "--worker":
        worker(argv[1], int(argv[3]) if len(argv) > 3 else N_OPS)
        return None
    return C.script_main(run, __doc__, argv)


if __name__ == "__main__":
    main()
