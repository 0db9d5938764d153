"""W11 per-sample gradients (issue 16): ``vmap(grad(loss))`` of an MLP over a batch of 64, against torch.func.

The model is ``Linear(32, 128) -> ReLU -> Linear(128, 10)`` with the cross-entropy loss, float64, called through
``func.functional_call`` with its parameters as the differentiated argument. Engines: tapegrad's
``vmap(grad(...))`` and torch's ``torch.func.vmap(torch.func.grad(...))`` (the headline pair), tapegrad's
per-sample loop (64 backward passes of one sample each) and one ordinary batched backward of the mean loss
(tapegrad and torch) — the issue's target: per-sample gradients through vmap take at most 3x one batched
backward — and tapegrad's physical ops: what vmap(grad) computes, called directly without any transform (the
floor of the design). Before timing, every engine's per-sample gradients are checked equal.

    python benchmarks/w11_per_sample_grads.py [--quick] [--json]
"""

from __future__ import annotations

import _common as C
import numpy as np

BATCH, N_IN, HIDDEN, N_OUT = 64, 32, 128, 10


def data(batch, seed=0):
    rng = np.random.default_rng(seed)
    return {"x": rng.standard_normal((batch, N_IN)), "y": rng.integers(0, N_OUT, batch)}


def model(T, seed=0):
    T.manual_seed(seed)
    m = T.nn.Sequential(T.nn.Linear(N_IN, HIDDEN), T.nn.ReLU(), T.nn.Linear(HIDDEN, N_OUT)).double()
    return m


def _same_params(tm, pm):
    """Copy the tapegrad model's parameters into the torch one (same initial values)."""
    import torch
    with torch.no_grad():
        for (_, a), (_, b) in zip(tm.named_parameters(), pm.named_parameters()):
            b.copy_(torch.from_numpy(a.detach().numpy().copy()))


def engines(batch):
    import tapegrad
    import tapegrad.func as tf
    import tapegrad.nn.functional as F
    torch = C.import_torch()
    d = data(batch)
    m = model(tapegrad)
    params = {k: v.detach() for k, v in m.named_parameters()}
    x, y = tapegrad.from_numpy(d["x"]), tapegrad.from_numpy(d["y"])

    def loss(p, xi, yi):
        out = tf.functional_call(m, p, (xi.unsqueeze(0),))
        return F.cross_entropy(out, yi.unsqueeze(0))

    per_sample = tf.vmap(tf.grad(loss), in_dims=(None, 0, 0))

    def loop():
        res = {k: [] for k in params}
        for i in range(batch):
            g = tf.grad(loss)(params, x[i], y[i])
            for k in res:
                res[k].append(g[k])
        return {k: tapegrad.stack(v) for k, v in res.items()}

    def batched():
        m.zero_grad()
        F.cross_entropy(m(x), y).backward()
        return {k: v.grad for k, v in m.named_parameters()}

    def physical():       # what vmap(grad) computes, written directly: no vmap, no grad transform (its floor)
        from tapegrad.func.batching.linalg import BatchedLinear
        leaves = {k: tapegrad.Tensor._make(np.broadcast_to(v.numpy(), (batch,) + tuple(v.shape)), True)
                  for k, v in params.items()}
        h = BatchedLinear.apply(x.unsqueeze(1), leaves["0.weight"], leaves["0.bias"]).relu()
        out = BatchedLinear.apply(h, leaves["2.weight"], leaves["2.bias"]).reshape(batch, N_OUT)
        F.nll_loss(F.log_softmax(out, 1), y, reduction="none").backward(tapegrad.ones(batch, dtype=tapegrad.float64))
        return {k: v.grad for k, v in leaves.items()}

    fns = {"tapegrad": lambda: per_sample(params, x, y), "tapegrad loop": loop,
           "tapegrad batched backward": batched, "tapegrad physical ops": physical}
    if torch is not None:
        tm = torch.nn.Sequential(torch.nn.Linear(N_IN, HIDDEN), torch.nn.ReLU(),
                                 torch.nn.Linear(HIDDEN, N_OUT)).double()
        _same_params(m, tm)
        tparams = {k: v.detach() for k, v in tm.named_parameters()}
        xt, yt = torch.from_numpy(d["x"]), torch.from_numpy(d["y"])

        def tloss(p, xi, yi):
            out = torch.func.functional_call(tm, p, (xi.unsqueeze(0),))
            return torch.nn.functional.cross_entropy(out, yi.unsqueeze(0))

        tps = torch.func.vmap(torch.func.grad(tloss), in_dims=(None, 0, 0))

        def tbatched():
            tm.zero_grad()
            torch.nn.functional.cross_entropy(tm(xt), yt).backward()
            return {k: v.grad for k, v in tm.named_parameters()}
        fns["torch"] = lambda: tps(tparams, xt, yt)
        fns["torch batched backward"] = tbatched
    return fns


def _flat(out):
    return np.concatenate([C.to_numpy(out[k]).reshape(-1) for k in sorted(out)])


def run(quick=False, threads=1):
    batch = 8 if quick else BATCH
    repeats = 2 if quick else 25     # (a paired median over 25 rounds: this workload is short, the machine shared)
    fns = engines(batch)
    with C.pinned_threads(threads):
        outs = {name: fn() for name, fn in fns.items()}
        per = [k for k in outs if "batched" not in k]
        for other in per[1:]:
            C.assert_close(f"W11 per-sample grads: tapegrad vs {other}", _flat(outs["tapegrad"]), _flat(outs[other]),
                           rtol=1e-9, atol=1e-12)
        mean = {k: v.mean(0) if hasattr(v, "mean") else v for k, v in outs["tapegrad"].items()}
        C.assert_close("W11 mean of per-sample grads vs batched backward", _flat(mean),
                       _flat(outs["tapegrad batched backward"]), rtol=1e-9, atol=1e-12)
        checks = ["per-sample grads: " + " == ".join(per) + " (rtol 1e-9)",
                  "their mean == the batched backward's gradient"]
        times = C.interleaved(fns, repeats, warmup=1)
    stats = {name: C.stats(ts, 1e3) for name, ts in times.items()}
    pairs = [("tapegrad", "torch"), ("tapegrad", "tapegrad batched backward"),
             ("tapegrad loop", "tapegrad batched backward"), ("torch", "torch batched backward"),
             ("tapegrad physical ops", "tapegrad batched backward")]
    pairs = [(a, b) for a, b in pairs if a in times and b in times]
    ratios = C.ratios(times, pairs, threads)
    notes = [f"MLP {N_IN}-{HIDDEN}-{N_OUT} (ReLU), cross-entropy, float64, batch {batch}; per-sample gradients of "
             "every parameter with vmap(grad) through functional_call. Target: tapegrad vmap(grad) <= 3x one "
             "ordinary batched backward (forward + backward of the mean loss). 'tapegrad physical ops': the batched "
             "ops vmap(grad) runs (BatchedLinear with stride-0 weights, relu, log_softmax, nll, one backward), "
             "called directly: the floor of this design, most of it the per-sample weight gradients' outer "
             "products (2.7 MB written per call)."]
    return C.result("W11", f"per-sample gradients of an MLP, batch {batch} (vmap(grad))", "ms/call", threads,
                    stats, ratios, checks, notes=notes)


def main(argv=None):
    return C.script_main(run, __doc__, argv)


if __name__ == "__main__":
    main()
