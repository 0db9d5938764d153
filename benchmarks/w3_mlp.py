"""W3 MLP: 784-256-128-10 ReLU MLP, cross-entropy, batch 128, SGD with momentum, 50 steps. ms/step.

tapegrad and torch run the same model code (``nn.Sequential`` of ``nn.Linear``/``nn.ReLU``, ``F.cross_entropy``,
``optim.SGD(momentum=0.9)``); the hand-written NumPy version does forward, backward and the momentum update by
hand (the floor a NumPy engine can reach). All start from the same seeded weights and see the same batches; the
check compares the losses of a few steps and the weights after them.

    python benchmarks/w3_mlp.py [--quick] [--threads N] [--json]
"""

from __future__ import annotations

import _common as C
import _floor
import _peers
import numpy as np

SIZES = (784, 256, 128, 10)
LR, MOMENTUM = 0.05, 0.9


def init_state(sizes=SIZES, seed=0):
    """torch's nn.Linear default init (uniform +-1/sqrt(fan_in)), seeded, as a state_dict of float32 arrays."""
    rng = np.random.default_rng(seed)
    state = {}
    for i, (fin, fout) in enumerate(zip(sizes[:-1], sizes[1:])):
        bound = 1 / np.sqrt(fin)
        state[f"{2 * i}.weight"] = rng.uniform(-bound, bound, (fout, fin)).astype(np.float32)
        state[f"{2 * i}.bias"] = rng.uniform(-bound, bound, fout).astype(np.float32)
    return state


def make_batches(n, batch, features, classes=10, seed=1):
    rng = np.random.default_rng(seed)
    return [(rng.standard_normal((batch, features)).astype(np.float32),
             rng.integers(0, classes, batch).astype(np.int64)) for _ in range(n)]


def build_model(T, sizes=SIZES):
    layers = []
    for i, (fin, fout) in enumerate(zip(sizes[:-1], sizes[1:])):
        layers.append(T.nn.Linear(fin, fout))
        if i < len(sizes) - 2:
            layers.append(T.nn.ReLU())
    return T.nn.Sequential(*layers)


def sgd(T, params):
    return T.optim.SGD(params, lr=LR, momentum=MOMENTUM)


class NumpyMLP:
    """Forward, backward and SGD-with-momentum by hand, with torch's update rule (buf = g at the first step,
    then buf = momentum * buf + g; p -= lr * buf)."""

    def __init__(self, state, batches):
        self.params = {k: v.copy() for k, v in state.items()}
        self.n_layers = len(state) // 2
        self.bufs = {}
        self.batches = batches
        self.i = 0

    def step(self):
        x, y = self.batches[self.i % len(self.batches)]
        self.i += 1
        p = self.params
        acts, a = [x], x
        for li in range(self.n_layers):
            z = a @ p[f"{2 * li}.weight"].T
            z += p[f"{2 * li}.bias"]
            a = np.maximum(z, 0) if li < self.n_layers - 1 else z
            acts.append(a)
        logits = acts[-1]
        shifted = logits - logits.max(axis=1, keepdims=True)
        e = np.exp(shifted)
        s = e.sum(axis=1, keepdims=True)
        n = len(y)
        rows = np.arange(n)
        loss = float(np.log(s[:, 0]).sum() - shifted[rows, y].sum()) / n
        g = e / s
        g[rows, y] -= 1
        g /= n
        grads = {}
        for li in range(self.n_layers - 1, -1, -1):
            a_in = acts[li]
            grads[f"{2 * li}.weight"] = g.T @ a_in
            grads[f"{2 * li}.bias"] = g.sum(axis=0)
            if li > 0:
                g = g @ p[f"{2 * li}.weight"]
                g *= a_in > 0
        for k, gk in grads.items():
            buf = self.bufs.get(k)
            if buf is None:
                self.bufs[k] = buf = gk.copy()
            else:
                buf *= MOMENTUM
                buf += gk
            p[k] -= LR * buf
        return np.float32(loss)

    def state(self):
        return self.params


SEMANTIC = "semantic floor"
MODEL_FLOOR = "model-code floor"
ENGINES = ("tapegrad", "torch", "numpy", SEMANTIC, MODEL_FLOOR, _peers.MYGRAD, _peers.AUTOGRAD)


def trainers(state, batches, which=ENGINES, sizes=SIZES):
    out = {}
    peers = _peers.available()
    for name in which:
        if name == "tapegrad":
            import tapegrad
            out[name] = C.Trainer(tapegrad, build_model(tapegrad, sizes), state, batches, sgd)
        elif name == "torch" and C.import_torch() is not None:
            torch = C.import_torch()
            out[name] = C.Trainer(torch, build_model(torch, sizes), state, batches, sgd)
        elif name == "numpy":
            out[name] = NumpyMLP(state, batches)
        elif name == SEMANTIC:
            out[name] = _floor.MLP(state, batches, LR, MOMENTUM)
        elif name == MODEL_FLOOR:
            out[name] = _floor.ModelMLP(state, batches, LR, MOMENTUM)
        elif name in peers:
            out[name] = _peers.PeerMLP(name, state, batches, LR, MOMENTUM)
    return out


def consecutive(trainers, steps):
    """name -> median ms/step of ``steps`` back-to-back steps of each trainer (after one untimed step)."""
    import gc
    import statistics
    import time
    out = {}
    for name, t in trainers.items():
        t.step()
        gc.collect()
        ts = []
        for _ in range(steps):
            t0 = time.perf_counter()
            t.step()
            ts.append(time.perf_counter() - t0)
        out[name] = statistics.median(ts) * 1e3
    return out


def run(quick=False, threads=1):
    sizes = (784, 32, 16, 10) if quick else SIZES
    batch = 16 if quick else 128
    steps = 2 if quick else 50
    state = init_state(sizes)
    batches = make_batches(4 if quick else 10, batch, sizes[0])
    with C.pinned_threads(threads):
        checks, _ = C.check_training("W3", trainers(state, batches, sizes=sizes), 3, rtol=1e-4)
        tr = trainers(state, batches, sizes=sizes)
        times = C.interleaved({name: t.step for name, t in tr.items()}, steps, warmup=1)
        alone = consecutive(tr, 2 if quick else 30)
    peers = [p for p in (_peers.MYGRAD, _peers.AUTOGRAD) if p in times]
    floors = (SEMANTIC, MODEL_FLOOR)
    engines = {name: C.stats(times.get(name), 1e3) for name in ("tapegrad", "torch", "numpy", *floors, *peers)}
    ratios = C.ratios(times, [("tapegrad", "torch"), ("tapegrad", "numpy"), ("numpy", "torch")]
                      + [(f, "numpy") for f in floors] + [(f, "torch") for f in floors]
                      + [("tapegrad", f) for f in floors]
                      + [("tapegrad", p) for p in peers] + [(p, "torch") for p in peers], threads)
    title = f"{'-'.join(map(str, sizes))} ReLU MLP, cross-entropy, batch {batch}, SGD momentum, {steps} steps"
    extra = {"steps": steps}
    for name, ms in alone.items():
        extra[f"{name} ms/step in a consecutive loop (median)"] = ms
    for name in ("torch", "numpy", *floors):
        if name in alone:
            extra[f"tapegrad/{name} in consecutive loops"] = alone["tapegrad"] / alone[name]
    return C.result("W3", title, "ms/step", threads, engines, ratios, checks, extra=extra,
                    notes=[f"'{SEMANTIC}': benchmarks/_floor.py (see W2) running this MLP (its own linear, relu, "
                           "log_softmax, nll_loss and the same momentum update; no nn.Module), for information: "
                           "the least an engine with torch's semantics pays over hand NumPy",
                           f"'{MODEL_FLOOR}': the same engine running the model code tapegrad and torch run here "
                           "(nn.Sequential of Linear/ReLU modules, cross_entropy, an SGD optimizer object), with only "
                           "what those protocols require (_floor.py: hook checks on each module call, parameters "
                           "found in _parameters by __getattr__, each group's hyper-parameters read at each step, "
                           "per-parameter state, version bumps): the least any engine pays for this workload's code "
                           "with torch's semantics",
                           "consecutive loop: each engine's steps run back to back (as a user's loop runs), "
                           "information only; the scored ratios are the interleaved, paired ones. Interleaving "
                           "leaves each step to start with the other engines' data in the caches, which costs an "
                           "engine more the more Python it runs between NumPy kernels"])


def main(argv=None):
    return C.script_main(run, __doc__, argv)


if __name__ == "__main__":
    main()
