"""W3 MLP: 784-256-128-10 ReLU MLP, cross-entropy, batch 128, SGD with momentum, 50 steps. ms/step.

Scored over interleaved runs: each round runs every engine's 50 steps back to back (``C.runs``), in a random
order; the same engines interleaved step by step are reported for information.

tapegrad and torch run the same model code (``nn.Sequential`` of ``nn.Linear``/``nn.ReLU``, ``F.cross_entropy``,
``optim.SGD(momentum=0.9)``); the hand-written NumPy version does forward, backward and the momentum update by
hand (the floor a NumPy engine can reach), and 'numpy ideal' does the same with every array preallocated
(``out=``: nothing allocated per step). All start from the same seeded weights and see the same batches; the
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
            a = C.relu(z) if li < self.n_layers - 1 else z
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


class IdealNumpyMLP:
    """Hand NumPy's step (the same math, in the same order) with every array preallocated and written with
    ``out=``: the activations, the softmax, every gradient and the update's temporaries. Nothing is allocated per
    step (what no engine that hands fresh gradients to its user can do): the floor of a NumPy step on this
    machine."""

    def __init__(self, state, batches):
        self.params = {k: v.copy() for k, v in state.items()}
        self.n_layers = n_layers = len(state) // 2
        self.batches = batches
        self.i = 0
        n = batches[0][0].shape[0]
        f32 = np.float32
        outs = [self.params[f"{2 * li}.weight"].shape[0] for li in range(n_layers)]
        self.z = [np.empty((n, o), f32) for o in outs]                 # pre-activations, relu'd in place
        self.zeros = [np.zeros((n, o), f32) for o in outs]
        self.mx, self.s = np.empty((n, 1), f32), np.empty((n, 1), f32)
        self.e = np.empty((n, outs[-1]), f32)
        self.g = [np.empty((n, o), f32) for o in outs]                 # each layer's output gradient
        self.mask = [np.empty((n, o), bool) for o in outs]
        self.grads = {k: np.empty_like(v) for k, v in self.params.items()}
        self.bufs = {k: np.empty_like(v) for k, v in self.params.items()}
        self.tmp = {k: np.empty_like(v) for k, v in self.params.items()}
        self.rows = np.arange(n)
        self.first = True

    def step(self):
        x, y = self.batches[self.i % len(self.batches)]
        self.i += 1
        p, z = self.params, self.z
        acts, a = [x], x
        for li in range(self.n_layers):
            np.matmul(a, p[f"{2 * li}.weight"].T, out=z[li])
            z[li] += p[f"{2 * li}.bias"]
            if li < self.n_layers - 1:
                np.maximum(z[li], self.zeros[li], out=z[li])
            a = z[li]
            acts.append(a)
        logits, e, s, rows = acts[-1], self.e, self.s, self.rows
        np.max(logits, axis=1, keepdims=True, out=self.mx)
        np.subtract(logits, self.mx, out=e)                          # (shifted, then exponentiated in place)
        n = len(y)
        picked = e[rows, y].sum()
        np.exp(e, out=e)
        np.sum(e, axis=1, keepdims=True, out=s)
        loss = float(np.log(s[:, 0]).sum() - picked) / n
        g = self.g[-1]
        np.divide(e, s, out=g)
        g[rows, y] -= 1
        g /= n
        grads = self.grads
        for li in range(self.n_layers - 1, -1, -1):
            a_in = acts[li]
            np.matmul(g.T, a_in, out=grads[f"{2 * li}.weight"])
            np.sum(g, axis=0, out=grads[f"{2 * li}.bias"])
            if li > 0:
                gp = self.g[li - 1]
                np.matmul(g, p[f"{2 * li}.weight"], out=gp)
                np.greater(a_in, 0, out=self.mask[li - 1])
                gp *= self.mask[li - 1]
                g = gp
        for k, gk in grads.items():
            buf = self.bufs[k]
            if self.first:
                np.copyto(buf, gk)
            else:
                buf *= MOMENTUM
                buf += gk
            tmp = self.tmp[k]
            np.multiply(buf, LR, out=tmp)
            p[k] -= tmp
        self.first = False
        return np.float32(loss)

    def state(self):
        return self.params


class MatmulsOnly:
    """Only the matrix products of hand NumPy's step (each layer's forward product, its weight gradient and, past
    the first layer, its input gradient) on the same shapes: no bias, activation, loss or update. Not an engine
    (it trains nothing, so it is timed but not checked); its time is what any engine using NumPy's matmul pays
    at the least, so its ratio to torch bounds every NumPy engine's."""

    def __init__(self, state, batches):
        self.weights = [state[f"{2 * li}.weight"] for li in range(len(state) // 2)]
        self.batches = batches
        self.grads = [np.ones((batches[0][0].shape[0], w.shape[0]), np.float32) for w in self.weights]
        self.i = 0

    def step(self):
        x, _ = self.batches[self.i % len(self.batches)]
        self.i += 1
        acts = [x]
        for w in self.weights:
            acts.append(acts[-1] @ w.T)
        for li in range(len(self.weights) - 1, -1, -1):
            g = self.grads[li]
            g.T @ acts[li]
            if li > 0:
                g @ self.weights[li]


IDEAL = "numpy ideal"
SEMANTIC = "semantic floor"
MATMULS = "matmuls only"
MODEL_FLOOR = "model-code floor"
ENGINES = ("tapegrad", "torch", "numpy", IDEAL, SEMANTIC, MODEL_FLOOR, _peers.MYGRAD, _peers.AUTOGRAD, C.COMPILED,
           C.TORCH_COMPILE)


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
        elif name == C.COMPILED:
            import tapegrad
            out[name] = C.CompiledTrainer(tapegrad, build_model(tapegrad, sizes), state, batches, sgd)
        elif name == C.TORCH_COMPILE and C.import_torch() is not None:
            torch = C.import_torch()
            out[name] = C.CompiledTrainer(torch, build_model(torch, sizes), state, batches, sgd)
        elif name == "numpy":
            out[name] = NumpyMLP(state, batches)
        elif name == IDEAL:
            out[name] = IdealNumpyMLP(state, batches)
        elif name == SEMANTIC:
            out[name] = _floor.MLP(state, batches, LR, MOMENTUM)
        elif name == MODEL_FLOOR:
            out[name] = _floor.ModelMLP(state, batches, LR, MOMENTUM)
        elif name in peers:
            out[name] = _peers.PeerMLP(name, state, batches, LR, MOMENTUM)
    return out


def run(quick=False, threads=1):
    which = ENGINES if C.torch_compile_enabled(quick) else tuple(e for e in ENGINES if e != C.TORCH_COMPILE)
    sizes = (784, 32, 16, 10) if quick else SIZES
    batch = 16 if quick else 128
    steps = 2 if quick else 50
    rounds = 2 if quick else 20
    state = init_state(sizes)
    batches = make_batches(4 if quick else 10, batch, sizes[0])
    with C.pinned_threads(threads):
        first = trainers(state, batches, which, sizes=sizes)      # (their first calls capture / compile)
        checks, _ = C.check_training("W3", first, 3, rtol=1e-4)
        tr = trainers(state, batches, which, sizes=sizes)
        tr[MATMULS] = MatmulsOnly(state, batches)
        step_fns = {name: t.step for name, t in tr.items()}
        times = C.interleaved(C.runs(step_fns, steps), rounds, warmup=1)
        single = C.interleaved(step_fns, 2 if quick else 300, warmup=1)
    peers = [p for p in (_peers.MYGRAD, _peers.AUTOGRAD) if p in times]
    floors = (SEMANTIC, MODEL_FLOOR)
    engines = {name: C.stats(times.get(name), 1e3 / steps)
               for name in ("tapegrad", "torch", "numpy", IDEAL, *floors, *peers, MATMULS, C.COMPILED, C.TORCH_COMPILE)}
    ratios = C.ratios(times, [("tapegrad", "torch"), ("tapegrad", "numpy"), ("numpy", "torch"),
                                       (IDEAL, "torch"), (IDEAL, "numpy")]
                      + [(f, "numpy") for f in floors] + [(f, "torch") for f in floors]
                      + [("tapegrad", f) for f in floors]
                      + [("tapegrad", p) for p in peers] + [(p, "torch") for p in peers]
                      + [(MATMULS, "torch"), (MATMULS, "numpy"), (C.COMPILED, "torch"), (C.COMPILED, "tapegrad"),
                         (C.COMPILED, "numpy"), (C.COMPILED, IDEAL),
                         (C.TORCH_COMPILE, "torch"), (C.COMPILED, C.TORCH_COMPILE)], threads)
    title = (f"{'-'.join(map(str, sizes))} ReLU MLP, cross-entropy, batch {batch}, SGD momentum, "
             f"{rounds} interleaved runs of {steps} steps")
    extra = {"steps per run": steps, "rounds": rounds}
    C.capture_extra(first[C.COMPILED].loss.first_s, times, steps, extra)
    if C.TORCH_COMPILE in first:
        extra[f"{C.TORCH_COMPILE} first call (inductor), s"] = first[C.TORCH_COMPILE].loss.first_s
    for name, ts in single.items():
        extra[f"{name} ms/step, single steps interleaved (median)"] = C.stats(ts, 1e3)["median"]
    for a, b in (("tapegrad", "torch"), ("tapegrad", "numpy"), ("numpy", "torch"), ("tapegrad", MODEL_FLOOR),
                 (MATMULS, "torch")):
        if a in single and b in single:
            extra[f"{a}/{b}, single steps interleaved"] = C.paired_ratio(single[a], single[b])
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
                           f"'{C.COMPILED}': the same step with the model's forward and the cross-entropy as one "
                           "tapegrad.compile'd function (the optimizer step eager); "
                           f"'{C.TORCH_COMPILE}': the same with torch.compile (inductor)",
                           f"'{IDEAL}': hand NumPy's step with every array preallocated and written with out= "
                           "(class IdealNumpyMLP; nothing allocated per step): the floor of a NumPy step here",
                           f"'{MATMULS}': the step's matrix products alone, in NumPy (class MatmulsOnly): the least "
                           "any engine on NumPy's matmul pays; not checked, as it trains nothing",
                           "scored: each round runs every engine's run of "
                           f"{steps} steps back to back (C.runs), in a random order; 'single steps interleaved' "
                           "(information only) interleaves the engines step by step instead, so that every step "
                           "starts with the other engines' code and data in the caches: a state no user's loop is "
                           "in, which costs an engine more the more Python and C++ it runs between kernels, and "
                           "whose ratios depend on how many engines take part"])


def main(argv=None):
    return C.script_main(run, __doc__, argv)


if __name__ == "__main__":
    main()
