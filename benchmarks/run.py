"""The benchmark suite of issue 6 (what ``make bench`` runs): every workload W1-W11 and CK (checkpointing's memory),
tapegrad vs torch vs NumPy.

Each workload is its own script (benchmarks/w*_*.py, runnable alone); this runs them, checks that the engines
agree (a workload whose engines disagree is reported as FAILED and makes the exit status non-zero), and writes
``benchmarks/RESULTS.md`` (plus the raw numbers in ``benchmarks/results.json``) with the machine, the library
versions, NumPy's BLAS, the load average, the date and the git commit.

    python benchmarks/run.py                     # everything; W3/W4/W5/W9 at 1 and 2 threads; writes RESULTS.md
    python benchmarks/run.py --quick             # smoke mode: tiny sizes, 1-2 repeats, seconds; writes nothing
    python benchmarks/run.py --only W3,W4 --threads 1
    python benchmarks/run.py --no-w9             # skip the long one (one epoch of 60,000 images)
    python benchmarks/run.py --only W3 --merge   # rerun W3, keep the other rows of results.json, rewrite RESULTS.md

Measure on a quiet machine: the load average is recorded in RESULTS.md, and a warning is printed when it is high.
"""

from __future__ import annotations

import argparse
import datetime
import importlib
import json
import os
import platform
import subprocess
import sys
import time
import traceback

import _common as C

# workload -> (module, whether BLAS threads matter: then it runs at 1 and 2 threads by default)
WORKLOADS = {
    "W1": ("w1_scalar", False),
    "W2": ("w2_small_ops", False),
    "W3": ("w3_mlp", True),
    "W4": ("w4_cnn", True),
    "W5": ("w5_matmul", True),
    "W6": ("w6_deep_chain", False),
    "W7": ("w7_memory", False),
    "W8": ("w8_import", False),
    "W9": ("w9_training", True),
    "W10": ("w10_jacobians", False),
    "W11": ("w11_per_sample_grads", False),
    "CK": ("ck_checkpoint", False),
}


def _ratio(label):
    return lambda r: r["ratios"].get(label)


def _extra(label):
    return lambda r: r["extra"].get(label)


def _growth(r):
    st = r["engines"].get("tapegrad")
    return st["median"] if st else None


# the table (tapegrad's targets at 1 thread): workload -> (target text, [(score label, getter, test,
# floor)]). ``floor``: the label of the ratio a measured floor scores on the same comparison (W2/W6: the semantic
# floor, the least an engine with torch's semantics pays; W3's torch half: hand NumPy, "the floor a NumPy engine
# can reach" in the issue's words) or None. Where the floor misses the target too, the summary says so.
TARGETS = {
    "W1": ("<= 0.33x micrograd's time",
           [("tapegrad/micrograd", _ratio("tapegrad/micrograd"), lambda v: v <= 0.33, None)]),
    "W2": ("<= 0.45x torch", [("tapegrad/torch", _ratio("tapegrad/torch"), lambda v: v <= 0.45,
                               "semantic floor/torch")]),
    "W3": ("<= 0.70x torch and <= 1.10x hand NumPy",
           [("tapegrad/torch", _ratio("tapegrad/torch"), lambda v: v <= 0.70, "numpy/torch"),
            ("tapegrad/numpy", _ratio("tapegrad/numpy"), lambda v: v <= 1.10, None)]),
    "W4": ("<= 1.5x torch and <= 1.0x hand NumPy",
           [("tapegrad/torch", _ratio("tapegrad/torch"), lambda v: v <= 1.5, None),
            ("tapegrad/numpy", _ratio("tapegrad/numpy"), lambda v: v <= 1.0, None)]),
    "W5": (">= 95% of NumPy matmul GFLOP/s",
           [("share of NumPy matmul", _extra("tapegrad share of numpy matmul"), lambda v: v >= 0.95, None)]),
    "W6": ("<= 1.0x torch", [("tapegrad/torch", _ratio("tapegrad/torch"), lambda v: v <= 1.0,
                              "semantic floor/torch")]),
    "W7": ("<= +1 MiB from step 10 to 300", [("growth MiB", _growth, lambda v: v <= 1.0, None)]),
    "W8": ("<= 0.15x torch", [("tapegrad/torch", _ratio("tapegrad/torch"), lambda v: v <= 0.15, None)]),
    "W9": ("— (reported: time and final loss)", [("tapegrad/torch", _ratio("tapegrad/torch"), None, None)]),
    "W10": ("— (reported: jacfwd and Hessian vs torch.func)",
            [("jacfwd tapegrad/torch", _ratio("tapegrad/torch"), None, None),
             ("hessian tapegrad/torch", _ratio("tapegrad hessian (fwd-over-rev)/torch hessian"), None, None)]),
    "W11": ("vmap(grad) per-sample gradients <= 3x one batched backward",
            [("vmap(grad)/batched backward", _ratio("tapegrad/tapegrad batched backward"), lambda v: v <= 3.0,
              "torch/torch batched backward"),
             ("tapegrad/torch", _ratio("tapegrad/torch"), None, None)]),
    "CK": ("— (reported: peak memory with and without checkpointing, same gradients)",
           [("checkpoint/plain memory", _ratio("tapegrad checkpoint/plain memory"), None, None),
            ("time", _ratio("tapegrad checkpoint/plain time"), None, None)]),
}


# tapegrad.compile's targets (issue 18): compiled tapegrad time / torch eager time, at 1 thread
COMPILED_TARGETS = {"W2": 0.45, "W3": 0.80, "W6": 1.0, "W4": None, "W9": None}


def compiled_rows(results):
    """The summary table of the compiled engines: one row per workload result that timed one."""
    rows = []
    for r in results:
        if not r["checks_passed"] or not r["engines"].get(C.COMPILED):
            continue
        med = {k: (C.fmt(v["median"]) if v else "—") for k, v in r["engines"].items()}
        score = r["ratios"].get(f"{C.COMPILED}/torch")
        target = COMPILED_TARGETS.get(r["workload"])
        if r["threads"] != 1:
            t_s, met_s = "(target is at 1 thread)", "(info)"
        elif target is None:
            t_s, met_s = "— (reported)", "—"
        else:
            t_s, met_s = f"<= {target}x torch", "—" if score is None else ("**yes**" if score <= target else "no")
        first = r["extra"].get(f"{C.COMPILED} first call (capture + eager run), s")
        repay = [f"{C.fmt(v)} vs {k.rsplit(' vs ', 1)[1]}" for k, v in r["extra"].items()
                 if k.startswith("steps to repay")]
        tc = r["ratios"].get(f"{C.TORCH_COMPILE}/torch")
        rows.append(f"| {r['workload']} | {r['threads']} | {r['unit']} | {med.get(C.COMPILED, '—')} | "
                    f"{med.get('tapegrad', '—')} | {med.get('torch', '—')} | {med.get(C.TORCH_COMPILE, '—')} | "
                    f"{C.fmt(score)} | {C.fmt(tc) if tc is not None else '—'} | {t_s} | {met_s} | "
                    f"{C.fmt(first) if first is not None else '—'} | {', '.join(repay) or '—'} |")
    if not rows:
        return []
    return ["", "### tapegrad.compile (issue 18)", "",
            "The same workloads with the step's forward (W3, W4, W9: model and cross-entropy; W2, W6: the chain) "
            "compiled by `tapegrad.compile` (and by `torch.compile` with inductor where it was timed); optimizers "
            "stay eager. The first call captures (it runs eagerly while recording); its time is reported apart, "
            "with the steps that repay it: (first call - an eager step) / (an eager step - a compiled step). "
            "torch.compile's first call (in each workload's details) uses inductor's on-disk cache, warm when an "
            "earlier run compiled the same graph (cold, W2's chain took ~9 s and W4's LeNet ~60 s).", "",
            "| workload | threads | unit | tapegrad compiled | tapegrad eager | torch | torch.compile | "
            "compiled/torch | torch.compile/torch | target | met | first call (s) | steps to repay |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|", *rows]


def evaluate(res):
    """(score text, met: True/False/None, floors) of one result against the issue's target; ``floors`` lists
    "label value" for each missed score whose measured floor misses the target too (no engine can meet it)."""
    _, scores = TARGETS[res["workload"]]
    parts, met, floors = [], None, []
    for label, get, test, floor in scores:
        v = get(res)
        parts.append(f"{label} {C.fmt(v)}")
        if test is not None and v is not None:
            met = test(v) if met is None else (met and test(v))
            fv = res["ratios"].get(floor) if floor and not test(v) else None
            if fv is not None and not test(fv):
                floors.append(f"{floor} {C.fmt(fv)}")
    return "; ".join(parts), met, floors


# --- the machine ---------------------------------------------------------------------------------------------
def machine_info():
    import numpy as np
    info = {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")}
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    info["cpu"] = cpu
    info["cores"] = os.cpu_count()
    if hasattr(os, "sched_getaffinity"):
        info["cores usable"] = len(os.sched_getaffinity(0))
    info["python"] = platform.python_version()
    info["numpy"] = np.__version__
    torch = C.import_torch()
    info["torch"] = torch.__version__ if torch is not None else "not installed"
    if torch is not None:
        info["torch default threads"] = torch.get_num_threads()
    try:
        import micrograd  # noqa: F401
        info["micrograd"] = "installed"
    except ImportError:
        info["micrograd"] = "not installed"
    try:
        from threadpoolctl import threadpool_info
        blas = [f"{d.get('internal_api')} {d.get('version')} ({d.get('architecture')}, {d.get('threading_layer')}, "
                f"{d.get('num_threads')} threads by default, "
                f"{os.path.basename(os.path.dirname(d.get('filepath', '')))}/{os.path.basename(d.get('filepath', ''))})"
                for d in threadpool_info() if d.get("user_api") == "blas"]
        info["numpy BLAS (threadpoolctl)"] = "; ".join(blas) or "none found"
    except ImportError:
        info["numpy BLAS (threadpoolctl)"] = "threadpoolctl not installed: NumPy's threads were NOT pinned"
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=C.ROOT, capture_output=True, text=True,
                                timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "src"], cwd=C.ROOT, capture_output=True,
                               text=True, timeout=10).stdout.strip()
        info["tapegrad commit"] = (commit or "unknown") + (" (src/ has uncommitted changes)" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        info["tapegrad commit"] = "unknown"
    return info


def load_text():
    try:
        return " / ".join(f"{v:.2f}" for v in os.getloadavg())
    except OSError:
        return "unknown"


# --- running -------------------------------------------------------------------------------------------------
def run_one(wid, threads, quick, args):
    mod = importlib.import_module(WORKLOADS[wid][0])
    kwargs = {"quick": quick}
    if wid in ("W3", "W4", "W5", "W9", "W2", "W6"):
        kwargs["threads"] = threads
    if wid == "W9":
        kwargs["data"] = args.data
        kwargs["limit"] = args.w9_limit
    load = _loads(load_text())
    t0 = time.perf_counter()
    try:
        res = mod.run(**kwargs)
    except C.CheckFailed as e:
        res = C.result(wid, "FAILED: the engines disagree", "", threads, {}, checks=[])
        res["checks_passed"], res["error"] = False, str(e)
    except Exception as e:  # a crash is reported, the other workloads still run
        res = C.result(wid, "ERROR: the workload crashed", "", threads, {}, checks=[])
        res["checks_passed"], res["error"] = False, f"{type(e).__name__}: {e}\n{traceback.format_exc()[-2000:]}"
    res["seconds"] = time.perf_counter() - t0
    res["threads"] = threads
    res["load_1min_at_start"] = load[0] if load else None
    res["date"] = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return res


def plan(args):
    ids = [w.strip().upper() for w in args.only.split(",")] if args.only else list(WORKLOADS)
    unknown = [w for w in ids if w not in WORKLOADS]
    if unknown:
        raise SystemExit(f"--only: unknown workload(s) {unknown}; choose from {', '.join(WORKLOADS)}")
    if args.no_w9 and "W9" in ids:
        ids.remove("W9")
    out = []
    for wid in ids:
        if args.threads:
            counts = [int(t) for t in args.threads.split(",")]
        else:
            counts = [1, 2] if WORKLOADS[wid][1] and not args.quick else [1]
        if wid in ("W1", "W7", "W8", "CK"):   # no BLAS work (W1) or own child processes pinned to 1 (W7/W8/CK)
            counts = counts[:1]
        out += [(wid, n) for n in counts]
    return out


# --- RESULTS.md ----------------------------------------------------------------------------------------------
def render(results, info, args, load_start, load_end):
    lines = ["# tapegrad benchmark results (issue 6)", ""]
    lines.append(f"Written by `python benchmarks/run.py{' ' + ' '.join(args.argv) if args.argv else ''}` "
                 f"on {info['date']}. Rerun: `make bench` (all) or `python benchmarks/run.py --only W3 --merge` "
                 f"(one workload, keeping the other rows).")
    lines.append("")
    if args.quick:
        lines += ["> **Quick smoke mode** (`--quick`): tiny sizes and 1-2 repeats, only to show the scripts run and "
                  "the engines agree. These numbers say nothing about speed.", ""]
    # busy: the 1-minute load average at some workload's start, less about 1 for this run's own process (its
    # previous workload is still in the average), exceeded half the cores
    loads_1min = [r.get("load_1min_at_start") for r in results]
    busy = max([v for v in loads_1min if v is not None] or [0]) - 1 > 0.5 * (info.get("cores usable") or 1)
    if busy:
        lines += ["> **Measured on a loaded machine** (see each workload's load average below; it includes about 1 "
                  "for this run's own process): other processes shared the CPUs, so absolute times are inflated "
                  "and noisy. The paired ratios (engines interleaved round "
                  "by round) are more robust than the absolute times, but still rerun on a quiet machine before "
                  "trusting a close call.", ""]
    lines += ["## Machine", "", "| | |", "|---|---|"]
    for k, v in info.items():
        lines.append(f"| {k} | {v} |")
    lines.append(f"| load average (1/5/15 min) at start of this invocation | {load_start} |")
    lines.append(f"| load average (1/5/15 min) at end of this invocation | {load_end} |")
    lines.append("")
    lines += ["## Summary", "",
              "Ratios are tapegrad time / other engine's time: the median over rounds of the per-round ratio "
              "(engines interleaved round by round, same seeded data and initial weights, losses/gradients "
              "checked equal before timing; on W3, W4 and W9 a round runs each engine's run of the workload's "
              "steps back to back, as a user's loop does). Below 1 means tapegrad is faster. Targets are the "
              "issue's, at 1 thread; 2-thread rows are reported for information (on a 2-core machine they also "
              "compete with anything else running: indicative only). \"The floor misses it too\": a floor "
              "measured in the same run (W2/W6: the semantic floor, the least an engine with torch's semantics "
              "pays; W3: hand NumPy, the issue's floor for a NumPy engine; W3 also times the step's matrix "
              "products alone) misses the target, so no engine of its kind can meet it. Each row's date and "
              "load average are in its details.", "",
              "| workload | threads | unit | tapegrad | torch | hand NumPy | score | target | met |",
              "|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        if not r["checks_passed"]:
            lines.append(f"| {r['workload']} | {r['threads']} | | | | | **{r['title']}** | "
                         f"{TARGETS[r['workload']][0]} | no |")
            continue
        med = {k: (C.fmt(v["median"]) if v else "—") for k, v in r["engines"].items()}
        torch_col = med.get("torch", "—")
        if r["workload"] == "W1":
            torch_col = f"{torch_col} (micrograd {med.get('micrograd', '—')})"
        score, met, floors = evaluate(r)
        target = TARGETS[r["workload"]][0]
        if r["threads"] != 1:
            met_s, target = "(info)", "(target is at 1 thread)"
        else:
            met_s = "—" if met is None else ("**yes**" if met else "no")
            if floors:
                met_s += f" — the floor misses it too ({', '.join(floors)})"
        lines.append(f"| {r['workload']} | {r['threads']} | {r['unit']} | {med.get('tapegrad', '—')} | {torch_col} | "
                     f"{med.get('numpy', '—')} | {score} | {target} | {met_s} |")
    lines += compiled_rows(results)
    lines += ["", "## Details", ""]
    for r in results:
        lines.append(f"### {r['workload']} ({r['threads']} thread{'s' if r['threads'] != 1 else ''}): {r['title']}")
        lines.append("")
        if not r["checks_passed"]:
            lines += ["```", r.get("error", "").strip(), "```", ""]
            continue
        lines += [f"| engine | median ({r['unit']}) | min | max | n |", "|---|---|---|---|---|"]
        for name, st in r["engines"].items():
            if st is None:
                lines.append(f"| {name} | not available | | | |")
            else:
                lines.append(f"| {name} | {C.fmt(st['median'])} | {C.fmt(st['min'])} | {C.fmt(st['max'])} | "
                             f"{st['n']} |")
        lines.append("")
        for label, v in list(r["ratios"].items()) + list(r["extra"].items()):
            lines.append(f"- {label}: {C.fmt(v)}")
        for c in r["checks"]:
            lines.append(f"- check passed: {c}")
        for n in r["notes"]:
            lines.append(f"- note: {n}")
        lines.append(f"- run {r.get('date', '')}, wall time {r['seconds']:.1f} s; 1-minute load average at its "
                     f"start: {C.fmt(r.get('load_1min_at_start'))}")
        lines.append("")
    return "\n".join(lines) + "\n"


def _loads(text):
    try:
        return [float(x) for x in text.split(" / ")]
    except ValueError:
        return []


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="smoke mode: tiny sizes, 1-2 repeats; writes nothing "
                    "unless --write")
    ap.add_argument("--write", action="store_true", help="write RESULTS.md even in --quick mode")
    ap.add_argument("--only", default=None, help="comma-separated workloads, e.g. W3,W4")
    ap.add_argument("--threads", default=None, help="BLAS threads for NumPy and torch, e.g. 1 or 1,2 (default: 1 "
                    "and 2 for W3/W4/W5/W9, 1 for the rest; 1 for all with --quick)")
    ap.add_argument("--no-w9", action="store_true", help="skip W9 (one epoch of 60,000 images: minutes)")
    ap.add_argument("--data", default=None, help="W9: a folder of MNIST-format IDX files (default: synthetic, or "
                    "$TAPEGRAD_BENCH_DATA)")
    ap.add_argument("--w9-limit", type=int, default=None, help="W9: use only this many images")
    ap.add_argument("--out", default=os.path.join(C.HERE, "RESULTS.md"), help="where RESULTS.md goes")
    ap.add_argument("--rerender", action="store_true", help="rewrite RESULTS.md from results.json, running nothing")
    ap.add_argument("--merge", action="store_true", help="keep the other workloads' rows of the existing "
                    "results.json (each row keeps its own date and load) and replace only those rerun")
    args = ap.parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)
    if args.rerender:
        with open(os.path.join(os.path.dirname(args.out), "results.json")) as f:
            saved = json.load(f)
        args.argv = saved.get("argv", [])
        with open(args.out, "w") as f:
            f.write(render(saved["results"], saved["machine"], args, saved["load_start"], saved["load_end"]))
        print(f"wrote {args.out}")
        return 0
    todo = plan(args)
    load_start = load_text()
    loads = _loads(load_start)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    if not args.quick and loads and loads[0] > 0.75 * cores:
        print(f"warning: load average {load_start} on {cores} cores: timings will be inflated and noisy",
              file=sys.stderr)
    results = []
    for wid, threads in todo:
        print(f"--- {wid} ({threads} thread{'s' if threads != 1 else ''}) ---", flush=True)
        res = run_one(wid, threads, args.quick, args)
        if res["checks_passed"]:
            C.print_result(res)
        else:
            print(f"{wid}: {res['title']}\n{res['error']}")
        print(f"  ({res['seconds']:.1f} s)", flush=True)
        results.append(res)
    load_end = load_text()
    if not args.quick or args.write:
        info = machine_info()
        json_path = os.path.join(os.path.dirname(args.out), "results.json")
        written = results
        if args.merge and os.path.exists(json_path):
            with open(json_path) as f:
                saved = json.load(f)
            old = saved["results"]
            new_keys = {(r["workload"], r["threads"]) for r in results}
            written = [r for r in old if (r["workload"], r["threads"]) not in new_keys] + results
            written.sort(key=lambda r: (list(WORKLOADS).index(r["workload"]), r["threads"]))
            rows = ", ".join(f"{w}@{t}" for w, t in sorted(new_keys))
            now = f"rows {rows} rerun on {info['date']}"
            info["merged"] = "; ".join(filter(None, [saved["machine"].get("merged"), now]))
        with open(args.out, "w") as f:
            f.write(render(written, info, args, load_start, load_end))
        with open(json_path, "w") as f:
            json.dump({"argv": args.argv, "machine": info, "load_start": load_start, "load_end": load_end,
                       "results": written}, f, indent=1, default=str)
        print(f"wrote {args.out} and {json_path}")
    failed = [f"{r['workload']}@{r['threads']}" for r in results if not r["checks_passed"]]
    if failed:
        print(f"FAILED: {', '.join(failed)}", file=sys.stderr)
        return 1
    print(f"all {len(results)} runs passed their correctness checks")
    return 0


if __name__ == "__main__":
    sys.exit(main())
