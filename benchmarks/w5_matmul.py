"""W5 large matmul: sum(tanh(X @ W1) @ W2), 1024x1024 float32, forward + backward (W1, W2 require grad).

That is 5 matrix products of n^3 multiply-adds each (2 forward; backward: dW2 = tanh(.)^T @ G, dH = G @ W2^T,
dW1 = X^T @ dZ), i.e. 10 n^3 flops. The score is the achieved GFLOP/s (matmul flops / time of forward+backward)
as a share of NumPy's own matmul GFLOP/s (one ``X @ W1``) measured interleaved in the same process: the machine's
limit for a NumPy engine. The check compares the loss and both gradients of every engine.

    python benchmarks/w5_matmul.py [--quick] [--threads N] [--json]
"""

from __future__ import annotations

import statistics

import _common as C
import numpy as np

N = 1024


def data(n, seed=0):
    rng = np.random.default_rng(seed)
    s = 1 / np.sqrt(n)
    return (rng.standard_normal((n, n)).astype(np.float32),
            (rng.standard_normal((n, n)) * s).astype(np.float32),
            (rng.standard_normal((n, n)) * s).astype(np.float32))


def engine_step(T, X0, W10, W20):
    X = T.from_numpy(X0)
    W1 = T.from_numpy(W10.copy()).requires_grad_()
    W2 = T.from_numpy(W20.copy()).requires_grad_()

    def step():
        W1.grad = None
        W2.grad = None
        loss = (T.tanh(X @ W1) @ W2).sum()
        loss.backward()
        return loss, W1.grad, W2.grad

    return step


def numpy_step(X, W1, W2):
    def step():
        h = np.tanh(X @ W1)
        out = h @ W2
        loss = out.sum()
        g = np.ones_like(out)
        gW2 = h.T @ g
        gh = g @ W2.T
        gh *= 1 - h * h
        gW1 = X.T @ gh
        return loss, gW1, gW2

    return step


def run(quick=False, threads=1):
    import tapegrad
    torch = C.import_torch()
    n = 128 if quick else N
    repeats = 2 if quick else 10
    X, W1, W2 = data(n)
    fns = {"tapegrad": engine_step(tapegrad, X, W1, W2)}
    if torch is not None:
        fns["torch"] = engine_step(torch, X, W1, W2)
    fns["numpy"] = numpy_step(X, W1, W2)
    with C.pinned_threads(threads):
        outs = {name: [C.to_numpy(v) for v in f()] for name, f in fns.items()}
        checks = []
        for name, vals in outs.items():
            if name == "tapegrad":
                continue
            # the loss is a float32 sum of n*n terms of either sign: its rounding error scales with n*n, not |loss|
            C.assert_close(f"W5 loss tapegrad vs {name}", outs["tapegrad"][0], vals[0], rtol=1e-3, atol=1e-5 * n * n)
            for label, a, b in zip(("W1.grad", "W2.grad"), outs["tapegrad"][1:], vals[1:]):
                C.assert_close(f"W5 {label} tapegrad vs {name}", a, b, rtol=1e-3)
            checks.append(f"loss, W1.grad, W2.grad: tapegrad == {name} (rtol 1e-3)")
        for name, vals in outs.items():
            if any(v.dtype != np.float32 for v in vals[1:]):
                raise C.CheckFailed(f"W5: {name} gradients are not float32")
        fns["numpy matmul"] = lambda: X @ W1
        times = C.interleaved(fns, repeats, warmup=1)

    flops_step, flops_mm = 10 * n ** 3, 2 * n ** 3
    gflops = {name: [flops_step / t / 1e9 for t in ts] for name, ts in times.items() if name != "numpy matmul"}
    mm = [flops_mm / t / 1e9 for t in times["numpy matmul"]]
    engines = {name: C.stats(times.get(name), 1e3) for name in ("tapegrad", "torch", "numpy", "numpy matmul")}
    share = {name: statistics.median(g / m for g, m in zip(gs, mm)) for name, gs in gflops.items()}
    ratios = C.ratios(times, [("tapegrad", "torch"), ("tapegrad", "numpy")], threads)
    extra = {"numpy matmul GFLOP/s": statistics.median(mm)}
    for name in gflops:
        extra[f"{name} GFLOP/s"] = statistics.median(gflops[name])
        extra[f"{name} share of numpy matmul"] = share[name]
    return C.result("W5", f"sum(tanh(X @ W1) @ W2), {n}x{n} float32, fwd+bwd", "ms/step", threads, engines,
                    ratios, checks, extra=extra)


def main(argv=None):
    return C.script_main(run, __doc__, argv)


if __name__ == "__main__":
    main()
