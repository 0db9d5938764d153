"""CK checkpointing: peak memory of a deep MLP's training step with and without activation checkpointing.

A 48-layer 256-wide tanh MLP (then 256 -> 10, cross-entropy), batch 1024, float32: one forward + backward. The
plain step keeps every layer's input for backward (tanh's result is the next layer's input: ~1 MiB a layer); the
checkpointed step runs the body as ``utils.checkpoint.checkpoint_sequential(body, 7, x, use_reentrant=False)``:
only each segment's input is kept, and backward recomputes one segment at a time. Each (engine, mode) runs in a
fresh child process. The memory a step needs is measured twice: the kernel's peak resident set (VmHWM, reset before
the step) above the resident set before the process's first step (only a first step shows there: freed memory
stays with the allocator for reuse), and, for tapegrad, tracemalloc's peak of NumPy's allocations during the
second step above what was allocated before it (torch's allocator is not traced). The step time is the best of the
next three steps. Checks: the checkpointed gradients are the plain ones bit for bit (same engine, 1 thread), and
tapegrad's agree with torch's.

    python benchmarks/ck_checkpoint.py [--quick] [--json]
    python benchmarks/ck_checkpoint.py --worker tapegrad|torch plain|checkpoint OUT.npz [--quick]
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time

import _common as C
import numpy as np

MiB = 2 ** 20
FULL = {"layers": 48, "width": 256, "batch": 1024, "segments": 7}
QUICK = {"layers": 6, "width": 16, "batch": 8, "segments": 2}


def weights(cfg, seed=0):
    rng = np.random.default_rng(seed)
    w = cfg["width"]
    layers = [((rng.standard_normal((w, w)) / np.sqrt(w)).astype(np.float32),
               (rng.standard_normal(w) * 0.1).astype(np.float32)) for _ in range(cfg["layers"])]
    head = ((rng.standard_normal((10, w)) / np.sqrt(w)).astype(np.float32), np.zeros(10, np.float32))
    x = rng.standard_normal((cfg["batch"], w)).astype(np.float32)
    y = rng.integers(0, 10, cfg["batch"])
    return layers, head, x, y


def build(T, cfg):
    """The same model source for tapegrad and torch, loaded with the same NumPy weights."""
    layers, head, x, y = weights(cfg)
    mods = []
    for wt, b in layers:
        lin = T.nn.Linear(cfg["width"], cfg["width"])
        with T.no_grad():
            lin.weight.copy_(T.from_numpy(wt))
            lin.bias.copy_(T.from_numpy(b))
        mods += [lin, T.nn.Tanh()]
    body = T.nn.Sequential(*mods)
    out = T.nn.Linear(cfg["width"], 10)
    with T.no_grad():
        out.weight.copy_(T.from_numpy(head[0]))
        out.bias.copy_(T.from_numpy(head[1]))
    return body, out, T.from_numpy(x), T.from_numpy(y)


def worker(engine, mode, path, quick):
    cfg = QUICK if quick else FULL
    import tracemalloc
    with C.pinned_threads(1, with_torch=engine == "torch"):
        T = C.import_torch() if engine == "torch" else __import__("tapegrad")
        cp = __import__(f"{T.__name__}.utils.checkpoint", fromlist=["checkpoint_sequential"])
        body, head, x, y = build(T, cfg)
        params = list(body.parameters()) + list(head.parameters())

        def step():
            for p in params:
                p.grad = None
            h = cp.checkpoint_sequential(body, cfg["segments"], x, use_reentrant=False) if mode == "checkpoint" \
                else body(x)
            loss = T.nn.functional.cross_entropy(head(h), y)
            loss.backward()
            return loss

        # the first step, in a fresh process: its peak resident set above the one before it (freed memory is
        # kept by the allocator for reuse, so only a first step shows in the resident set)
        tiny = T.ones(2, 2, requires_grad=True)  # load checkpoint's code first (torch imports more on first use)
        cp.checkpoint_sequential([T.tanh, T.tanh], 2, tiny, use_reentrant=False).sum().backward()
        rss0 = C.rss_bytes()
        exact = C.reset_peak_rss()
        step()
        rss_peak = C.peak_rss_bytes() - rss0
        traced = None
        if engine == "tapegrad":                  # a later step: the peak of what NumPy allocates during it
            tracemalloc.start()
            base = tracemalloc.get_traced_memory()[0]
            step()
            traced = tracemalloc.get_traced_memory()[1] - base
            tracemalloc.stop()
        times = []
        for _ in range(3):
            t0 = time.perf_counter()
            loss = step()
            times.append(time.perf_counter() - t0)
        np.savez(path, *[C.to_numpy(p.grad) for p in params])
    print(json.dumps({"engine": engine, "mode": mode, "traced_peak": traced, "rss_peak": rss_peak,
                      "rss_exact": exact, "step_s": min(times), "loss": float(C.to_numpy(loss))}))


def _grads(path):
    with np.load(path) as f:
        return [f[k] for k in sorted(f.files, key=lambda k: int(k.split("_")[1]))]


def run(quick=False, threads=1):
    engines = ["tapegrad"] + (["torch"] if C.import_torch() is not None else [])
    out, grads = {}, {}
    with tempfile.TemporaryDirectory() as tmp:
        for engine in engines:
            for mode in ("plain", "checkpoint"):
                path = os.path.join(tmp, f"{engine}-{mode}.npz")
                cmd = [sys.executable, __file__, "--worker", engine, mode, path] + (["--quick"] if quick else [])
                proc = subprocess.run(cmd, env=C.sub_env(), capture_output=True, text=True, timeout=1800)
                if proc.returncode != 0:
                    raise RuntimeError(f"CK worker {engine} {mode} failed:\n{proc.stderr[-3000:]}")
                out[(engine, mode)] = json.loads(proc.stdout.strip().splitlines()[-1])
                grads[(engine, mode)] = _grads(path)
    checks = []
    for engine in engines:
        a, b = grads[(engine, "plain")], grads[(engine, "checkpoint")]
        if not all(np.array_equal(u, v) for u, v in zip(a, b)):
            raise C.CheckFailed(f"CK {engine}: checkpointed gradients differ from the plain step's")
        checks.append(f"{engine}: checkpointed gradients == plain gradients, bit for bit")
    if "torch" in engines:
        for mode in ("plain", "checkpoint"):
            for k, (u, v) in enumerate(zip(grads[("tapegrad", mode)], grads[("torch", mode)])):
                C.assert_close(f"CK {mode} grad {k} tapegrad vs torch", u, v, rtol=1e-3)
        checks.append("tapegrad gradients == torch's (rtol 1e-3), both modes")
    stats, extra = {}, {}
    for engine in ("tapegrad", "torch"):
        for mode in ("plain", "checkpoint"):
            m = out.get((engine, mode))
            name = f"{engine} {mode}"
            key = engine if mode == "checkpoint" else name      # (the summary's engine columns: checkpointed)
            if m is None:
                stats[key] = None
                continue
            mem = (m["traced_peak"] if m["traced_peak"] is not None else m["rss_peak"]) / MiB
            stats[key] = {"median": mem, "min": mem, "max": mem, "n": 1}
            if m["traced_peak"] is not None:
                extra[f"{name}: step's peak of NumPy allocations, tracemalloc (MiB)"] = m["traced_peak"] / MiB
            extra[f"{name}: step's peak resident set above the start (MiB)"] = m["rss_peak"] / MiB
            extra[f"{name}: step time (ms, best of 3)"] = m["step_s"] * 1e3
    ratios = {}
    for engine in engines:
        p, c = out[(engine, "plain")], out[(engine, "checkpoint")]
        key = "traced_peak" if engine == "tapegrad" else "rss_peak"
        ratios[f"{engine} checkpoint/plain memory"] = c[key] / p[key] if p[key] else None
        ratios[f"{engine} checkpoint/plain time"] = c["step_s"] / p["step_s"]
    cfg = QUICK if quick else FULL
    notes = [f"{cfg['layers']} x Linear({cfg['width']}, {cfg['width']}) + Tanh, then Linear({cfg['width']}, 10), "
             f"batch {cfg['batch']}, float32, checkpoint_sequential with {cfg['segments']} segments",
             "engine rows: MiB a step needs above what existed before it (tapegrad, torch: checkpointed; tapegrad: "
             "tracemalloc; torch: the first step's peak RSS, which includes its gradients' first allocation)",
             "one fresh process per engine and mode, 1 thread"]
    if not all(m["rss_exact"] for m in out.values()):
        notes.append("peak RSS could not be reset: the RSS figures include the process start")
    return C.result("CK", "peak memory of a deep MLP's training step, with and without checkpointing", "MiB", 1,
                    stats, ratios, checks, extra=extra, notes=notes)


def main(argv=None):
    if argv is None:
        argv = sys.argv[1:]
    if argv and argv[0] == "--worker":
        worker(argv[1], argv[2], argv[3], "--quick" in argv)
        return None
    return C.script_main(run, __doc__, argv, has_threads=False)


if __name__ == "__main__":
    main()
