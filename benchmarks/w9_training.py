"""W9 real training: one epoch of the demo's CNN on MNIST-sized data (60,000 28x28 images), tapegrad vs torch.

The model is ``tapegrad.demo.make_model("cnn", 28)`` (conv3x3x16, pool, conv3x3x32, pool, fc 128-10) and its torch
twin; Adam (lr 1e-3), batch 64, cross-entropy, the same seeded initial weights and the same shuffled batches for
both engines, in interleaved runs of up to 50 steps (each engine's steps back to back, as in a user's loop, the
engines alternating run by run until the epoch is done). Data: MNIST-format IDX files (``--data PATH``,
$TAPEGRAD_BENCH_DATA, or the first of ``IDX_DIRS`` that exists; read with the demo's loader), else 60,000 synthetic
images (ten noisy class templates, so the loss falls as with real digits). Reports the epoch's time (sum of step
times), ms/step and the final loss (mean of the last 50 steps). The check: the losses of the first steps agree,
every loss is finite, and the final losses agree to a few percent.

    python benchmarks/w9_training.py [--quick] [--threads N] [--json] [--data PATH] [--limit N]
"""

from __future__ import annotations

import os
import sys
import time

import _common as C
import numpy as np

LR = 1e-3
BATCH = 64
N_IMAGES = 60_000
RUN = 50                # steps per run


def torch_twin(T, side=28):
    flat = 32 * (side // 4) * (side // 4)
    return T.nn.Sequential(
        T.nn.Conv2d(1, 16, 3, padding=1), T.nn.ReLU(), T.nn.MaxPool2d(2),
        T.nn.Conv2d(16, 32, 3, padding=1), T.nn.ReLU(), T.nn.MaxPool2d(2),
        T.nn.Flatten(), T.nn.Linear(flat, 128), T.nn.ReLU(), T.nn.Linear(128, 10))


def init_state(model, seed=0):
    """torch's default bounds (uniform +-1/sqrt(fan_in) for weights and biases), seeded, from the model's shapes."""
    rng = np.random.default_rng(seed)
    state, fan_in = {}, 1
    for k, v in model.state_dict().items():
        shape = tuple(v.shape)
        if k.endswith("weight"):
            fan_in = int(np.prod(shape[1:]))
        state[k] = rng.uniform(-1, 1, shape).astype(np.float32) / np.float32(np.sqrt(fan_in))
    return state


def synthetic(n, side=28, seed=0):
    rng = np.random.default_rng(seed)
    templates = rng.standard_normal((10, side, side)).astype(np.float32)
    y = rng.integers(0, 10, n).astype(np.int64)
    x = templates[y] * np.float32(0.5) + rng.standard_normal((n, side, side), dtype=np.float32)
    return x[:, None], y, f"{n:,} synthetic {side}x{side} images (10 noisy class templates)"


# where an installed MNIST-format data set is looked for when neither --data nor $TAPEGRAD_BENCH_DATA is given
IDX_DIRS = ["/usr/share/datasets/mnist", "/usr/share/datasets/fashion-mnist", "~/.cache/tapegrad/mnist",
            "~/data/MNIST/raw", os.path.join(C.ROOT, "data", "MNIST", "raw")]


def load(data, limit, quick=False):
    from tapegrad import demo
    folders = [data or os.environ.get("TAPEGRAD_BENCH_DATA")]
    if not folders[0] and not quick:
        folders = [os.path.expanduser(d) for d in IDX_DIRS if os.path.isdir(os.path.expanduser(d))]
    for folder in filter(None, folders):
        try:
            xtr, ytr, _, _, desc = demo.load_data(folder)
        except demo.DataError as e:
            if folder == data:
                raise SystemExit(f"W9: {e}") from None
            print(f"W9: skipping {folder}: {e}", file=sys.stderr)
            continue
        if limit:
            xtr, ytr = xtr[:limit], ytr[:limit]
        return xtr, ytr, f"{len(ytr):,} images from {desc}"
    return synthetic(limit or N_IMAGES)


def adam(T, params):
    return T.optim.Adam(params, lr=LR)


def trainers(x, y, seed=0, quick=False):
    import tapegrad
    from tapegrad import demo
    torch = C.import_torch()
    side = x.shape[-1]
    tg_model = demo.make_model("cnn", side)
    state = init_state(tg_model)
    perm = np.random.default_rng(seed).permutation(len(y))
    xs, ys = np.ascontiguousarray(x[perm]), y[perm]
    batches = [(xs[i:i + BATCH], ys[i:i + BATCH]) for i in range(0, len(ys), BATCH)]
    out = {"tapegrad": C.Trainer(tapegrad, tg_model, state, batches, adam),
           C.COMPILED: C.CompiledTrainer(tapegrad, demo.make_model("cnn", side), state, batches, adam)}
    if torch is not None:
        out["torch"] = C.Trainer(torch, torch_twin(torch, side), state, batches, adam)
        if C.torch_compile_enabled(quick):
            out[C.TORCH_COMPILE] = C.CompiledTrainer(torch, torch_twin(torch, side), state, batches, adam)
    return out, len(batches)


def run(quick=False, threads=1, data=None, limit=None):
    x, y, desc = load(data, 256 if quick else limit, quick)
    x = (x - x.mean()) / x.std()
    with C.pinned_threads(threads):
        first, n_steps = trainers(x, y, quick=quick)      # (their first calls capture / compile)
        checks, _ = C.check_training("W9", first, 2, rtol=2e-4, weight_atol=0.1 * LR)
        tr, n_steps = trainers(x, y, quick=quick)
        losses = {name: [] for name in tr}
        epoch = dict.fromkeys(tr, 0.0)

        def run_of(name):
            def run():      # the next (up to) RUN steps of the epoch; reports their mean time per step
                t0 = time.perf_counter()
                k = min(RUN, n_steps - len(losses[name]))
                for _ in range(k):
                    losses[name].append(tr[name].step())
                dt = time.perf_counter() - t0
                epoch[name] += dt
                return C.Elapsed(dt / k)
            return run

        times = C.interleaved({name: run_of(name) for name in tr}, -(-n_steps // RUN), warmup=0)
    losses = {name: np.array([float(C.to_numpy(v)) for v in ls]) for name, ls in losses.items()}
    for name, ls in losses.items():
        if not np.all(np.isfinite(ls)):
            raise C.CheckFailed(f"W9: {name} produced a non-finite loss")
    tail = min(50, n_steps)
    final = {name: float(ls[-tail:].mean()) for name, ls in losses.items()}
    if "torch" in final:
        # float32 trajectories drift apart over an epoch: the final losses agree statistically, not to the digit
        C.assert_close("W9 final loss tapegrad vs torch", final["tapegrad"], final["torch"], rtol=0.05, atol=0.02)
        checks.append(f"final loss (mean of last {tail} steps): tapegrad == torch within 5% + 0.02 "
                      f"({final['tapegrad']:.4f} vs {final['torch']:.4f})")
    engines = {name: C.stats(times.get(name), 1e3) for name in ("tapegrad", "torch", C.COMPILED, C.TORCH_COMPILE)}
    ratios = C.ratios(times, [("tapegrad", "torch"), (C.COMPILED, "torch"), (C.COMPILED, "tapegrad"),
                              (C.TORCH_COMPILE, "torch")], threads)
    extra = {f"{name} epoch (s)": t for name, t in epoch.items()}
    if "torch" in epoch:
        extra["epoch tapegrad/torch"] = epoch["tapegrad"] / epoch["torch"]
        extra[f"epoch {C.COMPILED}/torch"] = epoch[C.COMPILED] / epoch["torch"]
    extra[f"{C.COMPILED} first call (capture + eager run), s"] = first[C.COMPILED].loss.first_s
    if C.TORCH_COMPILE in first:
        extra[f"{C.TORCH_COMPILE} first call (inductor), s"] = first[C.TORCH_COMPILE].loss.first_s
    extra.update({f"{name} final loss": v for name, v in final.items()})
    extra["first loss"] = float(losses["tapegrad"][0])
    return C.result("W9", f"one epoch of demo CNN, Adam lr {LR:g}, batch {BATCH}, on {desc}", "ms/step", threads,
                    engines, ratios, checks, extra=extra,
                    notes=[f"{n_steps} steps, in interleaved runs of up to {RUN} steps",
                           f"'{C.COMPILED}': the step's forward and cross-entropy as one tapegrad.compile'd function "
                           "(Adam eager; the first call captures, within the epoch's time; a smaller last batch is "
                           f"a second capture); '{C.TORCH_COMPILE}': the same with torch.compile (inductor)"])


def main(argv=None):
    import argparse
    import json
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="256 images (a smoke test)")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--data", default=None, help="a folder of MNIST-format IDX files (default: synthetic)")
    ap.add_argument("--limit", type=int, default=None, help="use only this many training images")
    args = ap.parse_args(argv)
    res = run(args.quick, args.threads, args.data, args.limit)
    print(json.dumps(res, indent=1) if args.json else "", end="")
    if not args.json:
        C.print_result(res)
    return res


if __name__ == "__main__":
    sys.exit(0 if main() else 1)
