"""W1: micrograd's moons MLP — tapegrad.scalar vs micrograd (when installed), the same model, data and steps.

MLP(2, [16, 16, 1]) on 100 points of make_moons, max-margin loss + 1e-4 L2, SGD with micrograd's learning-rate
schedule. Reports the median seconds per training step (forward + backward + update) of each engine, and the
ratio (of wall time, and of CPU time, which a loaded machine disturbs less). ``--quick`` runs one step of each
(a couple of seconds in all). ``run(quick)`` returns the numbers as a dict (for benchmarks/run.py).

    python benchmarks/bench_scalar.py [--quick] [--steps N] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src"))


def moons(n=100, noise=0.1, seed=1):
    """make_moons without scikit-learn: two interleaved half circles, labels -1 / +1."""
    rng = random.Random(seed)
    import math
    X, y = [], []
    for i in range(n):
        first = i < n // 2
        k = i if first else i - n // 2
        m = n // 2 if first else n - n // 2
        t = math.pi * k / max(m - 1, 1)
        if first:
            px, py = math.cos(t), math.sin(t)
        else:
            px, py = 1 - math.cos(t), 1 - math.sin(t) - 0.5
        X.append([px + rng.gauss(0, noise), py + rng.gauss(0, noise)])
        y.append(-1 if first else 1)
    return X, y


def make_data(n=100):
    try:
        from sklearn.datasets import make_moons
        X, y = make_moons(n_samples=n, noise=0.1, random_state=1)
        return X.tolist(), [int(v) * 2 - 1 for v in y]
    except ImportError:
        return moons(n)


def train_steps(nn_mod, X, y, steps, seed=1337):
    """micrograd's demo loop; returns (wall seconds per step, CPU seconds per step, final loss, final accuracy)."""
    random.seed(seed)
    model = nn_mod.MLP(2, [16, 16, 1])
    times, cpu, loss_v, acc = [], [], None, None
    for k in range(steps):
        t0, c0 = time.perf_counter(), time.process_time()
        scores = list(map(model, X))
        losses = [(1 + -yi * si).relu() for yi, si in zip(y, scores)]
        data_loss = sum(losses) * (1.0 / len(losses))
        reg_loss = 1e-4 * sum(p * p for p in model.parameters())
        total = data_loss + reg_loss
        model.zero_grad()
        total.backward()
        lr = 1.0 - 0.9 * k / 100
        for p in model.parameters():
            p.data -= lr * p.grad
        times.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
        loss_v = total.data
        acc = sum((si.data > 0) == (yi > 0) for yi, si in zip(y, scores)) / len(y)
    return times, cpu, loss_v, acc


def run(quick=False, steps=None):
    import tapegrad.scalar.nn as tg_nn
    X, y = make_data(100)
    steps = steps or (1 if quick else 10)
    res = {"workload": "W1 micrograd MLP(2,[16,16,1]) moons n=100", "steps": steps}
    t_tg, c_tg, loss_tg, acc_tg = train_steps(tg_nn, X, y, steps)
    res["tapegrad_s_per_step"] = statistics.median(t_tg)
    res["tapegrad_cpu_s_per_step"] = statistics.median(c_tg)
    res["tapegrad_final_loss"] = loss_tg
    try:
        import micrograd.nn as mg_nn
    except ImportError:
        res["micrograd_s_per_step"] = None
        res["ratio"] = None
        return res
    t_mg, c_mg, loss_mg, acc_mg = train_steps(mg_nn, X, y, steps)
    res["micrograd_s_per_step"] = statistics.median(t_mg)
    res["micrograd_cpu_s_per_step"] = statistics.median(c_mg)
    res["micrograd_final_loss"] = loss_mg
    res["same_loss"] = abs(loss_mg - loss_tg) < 1e-9 * max(1.0, abs(loss_mg))
    res["ratio"] = res["micrograd_s_per_step"] / res["tapegrad_s_per_step"]
    res["ratio_cpu"] = res["micrograd_cpu_s_per_step"] / res["tapegrad_cpu_s_per_step"]
    return res


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="one step of each (a couple of seconds)")
    ap.add_argument("--steps", type=int, default=None)
    ap.add_argument("--json", action="store_true", help="print the result as JSON")
    args = ap.parse_args(argv)
    res = run(args.quick, args.steps)
    if args.json:
        print(json.dumps(res))
        return res
    print(f"{res['workload']}, {res['steps']} steps")
    print(f"  tapegrad.scalar : {res['tapegrad_s_per_step'] * 1e3:8.1f} ms/step (median)")
    if res["micrograd_s_per_step"] is None:
        print("  micrograd       : not installed (pip install micrograd to compare)")
    else:
        print(f"  micrograd       : {res['micrograd_s_per_step'] * 1e3:8.1f} ms/step (median)")
        print(f"  speed-up        : {res['ratio']:.2f}x wall, {res['ratio_cpu']:.2f}x CPU time   "
              f"(same loss: {res['same_loss']})")
    return res


if __name__ == "__main__":
    main()
