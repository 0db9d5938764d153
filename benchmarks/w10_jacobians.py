"""W10 Jacobians and Hessians (issue 16): forward mode and reverse mode against torch.func, 1 thread.

- the Jacobian of a 100 -> 100 tanh MLP (``x -> W2 tanh(W1 x + b1) + b2``, hidden 100, float64) with
  ``func.jacfwd`` (100 jvps: one per input) and by reverse mode (100 vjps, one per output:
  ``autograd.functional.jacobian``; torch: ``torch.func.jacrev``);
- the Hessian of a 50-parameter function (the loss of a small tanh MLP as a function of its flat parameter
  vector, on a fixed batch) with ``func.hessian`` (forward-over-reverse: ``jacfwd(jacrev)``) and with
  ``autograd.functional.hessian`` (reverse-over-reverse), against ``torch.func.hessian``.

torch.func batches the basis vectors with ``vmap`` (one vectorized pass), and so does tapegrad's ``jacfwd`` (and
so its ``hessian``); ``autograd.functional``'s reverse-mode rows loop, as torch's do by default. Before timing,
every engine's Jacobian and Hessian are checked equal.

    python benchmarks/w10_jacobians.py [--quick] [--json]
"""

from __future__ import annotations

import _common as C
import numpy as np

N_IN = N_OUT = HIDDEN = 100
N_PARAMS = 50          # the Hessian's function: 4 inputs -> 8 hidden (tanh) -> 1, on 16 samples: 4*8+8+8+2 = 50
_IN, _H = 4, 8


def mlp_data(n, seed=0):
    rng = np.random.default_rng(seed)
    return {"x": rng.standard_normal(n), "w1": rng.standard_normal((n, n)) / np.sqrt(n), "b1": rng.standard_normal(n),
            "w2": rng.standard_normal((n, n)) / np.sqrt(n), "b2": rng.standard_normal(n)}


def mlp(T, d):
    w1, b1, w2, b2 = (T.from_numpy(d[k]) for k in ("w1", "b1", "w2", "b2"))
    return lambda x: w2 @ (w1 @ x + b1).tanh() + b2


def loss_data(seed=1):
    rng = np.random.default_rng(seed)
    return {"theta": rng.standard_normal(N_PARAMS) * 0.5, "X": rng.standard_normal((16, _IN)),
            "y": rng.standard_normal(16)}


def loss_fn(T, d):
    X, y = T.from_numpy(d["X"]), T.from_numpy(d["y"])

    def f(theta):
        w1 = theta[:_IN * _H].reshape(_IN, _H)
        b1 = theta[_IN * _H:_IN * _H + _H]
        w2 = theta[_IN * _H + _H:_IN * _H + 2 * _H]
        b2 = theta[_IN * _H + 2 * _H]
        out = (X @ w1 + b1).tanh() @ w2 + b2
        return ((out - y) ** 2).mean() + 1e-3 * (theta ** 2).sum()
    return f


def engines(n):
    import tapegrad
    import tapegrad.autograd.functional as TF
    import tapegrad.func as tf
    torch = C.import_torch()
    md, ld = mlp_data(n), loss_data()
    fns = {}
    f, x = mlp(tapegrad, md), tapegrad.from_numpy(md["x"])
    g, th = loss_fn(tapegrad, ld), tapegrad.from_numpy(ld["theta"])
    fns["tapegrad"] = lambda: tf.jacfwd(f)(x)          # the headline pair: jacfwd vs torch.func.jacfwd
    fns["tapegrad jacobian (reverse)"] = lambda: TF.jacobian(f, x)
    fns["tapegrad hessian (fwd-over-rev)"] = lambda: tf.hessian(g)(th)
    fns["tapegrad hessian (rev-over-rev)"] = lambda: TF.hessian(g, th)
    if torch is not None:
        ft, xt = mlp(torch, md), torch.from_numpy(md["x"])
        gt, tht = loss_fn(torch, ld), torch.from_numpy(ld["theta"])
        fns["torch"] = lambda: torch.func.jacfwd(ft)(xt)
        fns["torch jacrev"] = lambda: torch.func.jacrev(ft)(xt)
        fns["torch hessian"] = lambda: torch.func.hessian(gt)(tht)
    return fns


def run(quick=False, threads=1):
    n = 20 if quick else N_IN
    repeats = 2 if quick else 7
    fns = engines(n)
    with C.pinned_threads(threads):
        outs = {name: C.to_numpy(fn()) for name, fn in fns.items()}
        checks = []
        jac_names = [k for k in outs if "hess" not in k]
        for kind, names in (("jacobian", jac_names), ("hessian", [k for k in outs if "hess" in k])):
            ref = names[0]
            for other in names[1:]:
                C.assert_close(f"W10 {kind}: {ref} vs {other}", outs[ref], outs[other], rtol=1e-9)
            checks.append(f"{kind}: " + " == ".join(names) + " (rtol 1e-9)")
        times = C.interleaved(fns, repeats, warmup=1)
    engine_stats = {name: C.stats(ts, 1e3) for name, ts in times.items()}
    pairs = [("tapegrad", "torch"), ("tapegrad jacobian (reverse)", "torch jacrev"),
             ("tapegrad hessian (fwd-over-rev)", "torch hessian"), ("tapegrad hessian (rev-over-rev)", "torch hessian")]
    pairs = [(a, b) for a, b in pairs if a in times and b in times]
    ratios = C.ratios(times, pairs, threads)
    notes = [f"tapegrad / torch: func.jacfwd vs torch.func.jacfwd. Jacobian: {n} -> {n} tanh MLP (hidden {n}), "
             f"float64; Hessian: a {N_PARAMS}-parameter MLP loss (16 samples), float64. torch.func vectorizes "
             "the basis with vmap, and so does tapegrad's jacfwd."]
    return C.result("W10", f"Jacobian of a {n}->{n} tanh MLP, Hessian of a {N_PARAMS}-parameter loss", "ms/call",
                    threads, engine_stats, ratios, checks, notes=notes)


def main(argv=None):
    return C.script_main(run, __doc__, argv)


if __name__ == "__main__":
    main()
