"""W7 memory: resident memory at step 10 and step 300 of W3's training (784-256-128-10 MLP, batch 128, SGD momentum).

Each engine trains in a fresh child process (so one engine's memory never counts for another) and reports its
resident set size (psutil when installed, else /proc/self/statm) after step 10 and after step 300, read as the
user's loop would see it (no forced garbage collection). The score is the growth between the two: a leak (graphs
kept alive, caches that grow) shows up here. The children also run W3's loss check on their first steps against
the hand-written NumPy loop.

    python benchmarks/w7_memory.py [--quick] [--json]
    python benchmarks/w7_memory.py --worker tapegrad|torch|numpy [--quick]   (one engine, JSON)
"""

from __future__ import annotations

import json
import subprocess
import sys

import _common as C
import w3_mlp

MiB = 2 ** 20


def worker(engine, quick):
    sizes = (784, 32, 16, 10) if quick else w3_mlp.SIZES
    batch = 16 if quick else 128
    first, last = (2, 6) if quick else (10, 300)
    state = w3_mlp.init_state(sizes)
    batches = w3_mlp.make_batches(10, batch, sizes[0])
    with C.pinned_threads(1, with_torch=engine == "torch"):
        trainer = w3_mlp.trainers(state, batches, (engine,), sizes)[engine]
        ref = w3_mlp.NumpyMLP(state, batches)
        rss, losses, ref_losses = {}, [], []
        for step in range(1, last + 1):
            loss = trainer.step()
            if step <= 3:
                losses.append(float(C.to_numpy(loss)))
                ref_losses.append(float(ref.step()))
            if step in (first, last):
                rss[step] = C.rss_bytes()
    C.assert_close(f"W7 {engine} losses vs hand NumPy", losses, ref_losses, rtol=1e-4)
    print(json.dumps({"engine": engine, "first": first, "last": last, "rss_first": rss[first],
                      "rss_last": rss[last], "final_loss": float(C.to_numpy(loss))}))


def run(quick=False, threads=1):
    engines = ("tapegrad",) if quick else ("tapegrad", "torch", "numpy")
    if not quick and C.import_torch() is None:
        engines = ("tapegrad", "numpy")
    out = {}
    for name in engines:
        cmd = [sys.executable, __file__, "--worker", name] + (["--quick"] if quick else [])
        proc = subprocess.run(cmd, env=C.sub_env(), capture_output=True, text=True, timeout=1800)
        if proc.returncode != 0:
            if "CheckFailed" in proc.stderr:
                raise C.CheckFailed(f"W7 worker {name}: {proc.stderr.strip().splitlines()[-1]}")
            raise RuntimeError(f"W7 worker {name} failed:\n{proc.stderr[-3000:]}")
        out[name] = json.loads(proc.stdout.strip().splitlines()[-1])
    first, last = out["tapegrad"]["first"], out["tapegrad"]["last"]
    engines_stats, extra = {}, {}
    for name in ("tapegrad", "torch", "numpy"):
        m = out.get(name)
        if m is None:
            engines_stats[name] = None
            continue
        growth = (m["rss_last"] - m["rss_first"]) / MiB
        engines_stats[name] = {"median": growth, "min": growth, "max": growth, "n": 1}
        extra[f"{name} RSS at step {first} (MiB)"] = m["rss_first"] / MiB
        extra[f"{name} RSS at step {last} (MiB)"] = m["rss_last"] / MiB
    checks = [f"{name}: losses of the first 3 steps == hand NumPy (rtol 1e-4)" for name in out]
    return C.result("W7", f"resident memory growth from step {first} to step {last} of W3 training",
                    "MiB", 1, engines_stats, {}, checks, extra=extra,
                    notes=["one fresh process per engine; RSS via " + ("psutil" if _has_psutil() else
                                                                        "/proc/self/statm")])


def _has_psutil():
    try:
        import psutil  # noqa: F401
        return True
    except ImportError:
        return False


def main(argv=None):
    if argv is None:
        argv = sys.argv[1:]
    if argv and argv[0] == "--worker":
        worker(argv[1], "--quick" in argv)
        return None
    return C.script_main(run, __doc__, argv, has_threads=False)


if __name__ == "__main__":
    main()
