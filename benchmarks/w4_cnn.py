"""W4 CNN: LeNet-5-like (conv5x5x6, maxpool, conv5x5x16, maxpool, fc 120-84-10), batch 64, 28x28x1, 20 steps.

ReLU after every conv and hidden fc, cross-entropy, SGD with momentum 0.9. tapegrad and torch run the same
``nn.Sequential`` code; the hand-written NumPy version does conv as one GEMM over an im2col window view
(``sliding_window_view``), 2x2 max-pool through a reshape + argmax, and every backward by hand. Same seeded weights
and batches for all; the check compares losses of a few steps and the weights after them. ms/step, over
interleaved runs of 20 steps (``C.runs``: each round runs every engine's 20 steps back to back).

    python benchmarks/w4_cnn.py [--quick] [--threads N] [--json]
"""

from __future__ import annotations

import _common as C
import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

LR, MOMENTUM = 0.02, 0.9
# indices of the layers with weights in the nn.Sequential (state_dict keys "0.weight", ...)
CONV1, CONV2, FC1, FC2, FC3 = 0, 3, 7, 9, 11


def build_model(T, side=28):
    s2 = ((side - 4) // 2 - 4) // 2                              # the side after conv, pool, conv, pool
    flat = 16 * s2 * s2
    return T.nn.Sequential(
        T.nn.Conv2d(1, 6, 5), T.nn.ReLU(), T.nn.MaxPool2d(2),
        T.nn.Conv2d(6, 16, 5), T.nn.ReLU(), T.nn.MaxPool2d(2),
        T.nn.Flatten(), T.nn.Linear(flat, 120), T.nn.ReLU(), T.nn.Linear(120, 84), T.nn.ReLU(),
        T.nn.Linear(84, 10))


def init_state(side=28, seed=0):
    """torch's default init bounds (uniform +-1/sqrt(fan_in)), seeded, float32."""
    rng = np.random.default_rng(seed)
    s1 = (side - 4) // 2
    s2 = (s1 - 4) // 2
    shapes = {CONV1: (6, 1, 5, 5), CONV2: (16, 6, 5, 5), FC1: (120, 16 * s2 * s2), FC2: (84, 120), FC3: (10, 84)}
    state = {}
    for idx, shape in shapes.items():
        bound = 1 / np.sqrt(np.prod(shape[1:]))
        state[f"{idx}.weight"] = rng.uniform(-bound, bound, shape).astype(np.float32)
        state[f"{idx}.bias"] = rng.uniform(-bound, bound, shape[0]).astype(np.float32)
    return state


def make_batches(n, batch, side=28, seed=1):
    rng = np.random.default_rng(seed)
    return [(rng.standard_normal((batch, 1, side, side)).astype(np.float32),
             rng.integers(0, 10, batch).astype(np.int64)) for _ in range(n)]


def sgd(T, params):
    return T.optim.SGD(params, lr=LR, momentum=MOMENTUM)


# --- hand-written NumPy -------------------------------------------------------------------------------------
def conv_forward(x, w, b):
    n, c, h, wd = x.shape
    o, _, k, _ = w.shape
    ho, wo = h - k + 1, wd - k + 1
    cols = sliding_window_view(x, (k, k), axis=(2, 3))           # (n, c, ho, wo, k, k), a view
    cols = cols.transpose(0, 2, 3, 1, 4, 5).reshape(n * ho * wo, c * k * k)
    out = cols @ w.reshape(o, -1).T
    out += b
    return out.reshape(n, ho, wo, o).transpose(0, 3, 1, 2), cols


def conv_backward(gout, x_shape, w, cols, need_gx):
    n, c, h, wd = x_shape
    o, _, k, _ = w.shape
    ho, wo = h - k + 1, wd - k + 1
    g2 = gout.transpose(0, 2, 3, 1).reshape(-1, o)
    gw = (g2.T @ cols).reshape(w.shape)
    gb = g2.sum(axis=0)
    gx = None
    if need_gx:
        gcols = (g2 @ w.reshape(o, -1)).reshape(n, ho, wo, c, k, k)
        gx = np.zeros(x_shape, dtype=gout.dtype)
        for i in range(k):
            for j in range(k):
                gx[:, :, i:i + ho, j:j + wo] += gcols[:, :, :, :, i, j].transpose(0, 3, 1, 2)
    return gx, gw, gb


def pool_forward(x):
    n, c, h, w = x.shape
    win = x.reshape(n, c, h // 2, 2, w // 2, 2).transpose(0, 1, 2, 4, 3, 5).reshape(n, c, h // 2, w // 2, 4)
    idx = win.argmax(axis=-1)                                    # the first maximum, as torch
    return np.take_along_axis(win, idx[..., None], axis=-1)[..., 0], idx


def pool_backward(gout, idx, x_shape):
    n, c, h, w = x_shape
    g = np.zeros((n, c, h // 2, w // 2, 4), dtype=gout.dtype)
    np.put_along_axis(g, idx[..., None], gout[..., None], axis=-1)
    return g.reshape(n, c, h // 2, w // 2, 2, 2).transpose(0, 1, 2, 4, 3, 5).reshape(x_shape)


class NumpyLeNet:
    def __init__(self, state, batches):
        self.p = {k: v.copy() for k, v in state.items()}
        self.bufs = {}
        self.batches = batches
        self.i = 0

    def step(self):
        x, y = self.batches[self.i % len(self.batches)]
        self.i += 1
        p = self.p
        c1, cols1 = conv_forward(x, p["0.weight"], p["0.bias"])
        r1 = C.relu(c1)
        m1, i1 = pool_forward(r1)
        c2, cols2 = conv_forward(m1, p["3.weight"], p["3.bias"])
        r2 = C.relu(c2)
        m2, i2 = pool_forward(r2)
        f0 = m2.reshape(len(x), -1)
        z1 = f0 @ p["7.weight"].T + p["7.bias"]
        a1 = C.relu(z1)
        z2 = a1 @ p["9.weight"].T + p["9.bias"]
        a2 = C.relu(z2)
        logits = a2 @ p["11.weight"].T + p["11.bias"]
        shifted = logits - logits.max(axis=1, keepdims=True)
        e = np.exp(shifted)
        s = e.sum(axis=1, keepdims=True)
        n = len(y)
        rows = np.arange(n)
        loss = float(np.log(s[:, 0]).sum() - shifted[rows, y].sum()) / n
        g = e / s
        g[rows, y] -= 1
        g /= n
        gr = {"11.weight": g.T @ a2, "11.bias": g.sum(0)}
        g = (g @ p["11.weight"]) * (z2 > 0)
        gr["9.weight"], gr["9.bias"] = g.T @ a1, g.sum(0)
        g = (g @ p["9.weight"]) * (z1 > 0)
        gr["7.weight"], gr["7.bias"] = g.T @ f0, g.sum(0)
        g = (g @ p["7.weight"]).reshape(m2.shape)
        g = pool_backward(g, i2, r2.shape) * (c2 > 0)
        g, gr["3.weight"], gr["3.bias"] = conv_backward(g, m1.shape, p["3.weight"], cols2, True)
        g = pool_backward(g, i1, r1.shape) * (c1 > 0)
        _, gr["0.weight"], gr["0.bias"] = conv_backward(g, x.shape, p["0.weight"], cols1, False)
        for k, gk in gr.items():
            buf = self.bufs.get(k)
            if buf is None:
                self.bufs[k] = buf = gk.copy()
            else:
                buf *= MOMENTUM
                buf += gk
            p[k] -= LR * buf
        return np.float32(loss)

    def state(self):
        return self.p


def trainers(state, batches, side, quick=False):
    import tapegrad
    torch = C.import_torch()
    out = {"tapegrad": C.Trainer(tapegrad, build_model(tapegrad, side), state, batches, sgd),
           C.COMPILED: C.CompiledTrainer(tapegrad, build_model(tapegrad, side), state, batches, sgd)}
    if torch is not None:
        out["torch"] = C.Trainer(torch, build_model(torch, side), state, batches, sgd)
        if C.torch_compile_enabled(quick):
            out[C.TORCH_COMPILE] = C.CompiledTrainer(torch, build_model(torch, side), state, batches, sgd)
    out["numpy"] = NumpyLeNet(state, batches)
    return out


def run(quick=False, threads=1):
    side, batch = (16, 4) if quick else (28, 64)
    steps = 2 if quick else 20
    rounds = 2 if quick else 10
    state = init_state(side)
    batches = make_batches(3 if quick else 5, batch, side)
    with C.pinned_threads(threads):
        first = trainers(state, batches, side, quick)      # (their first calls capture / compile)
        checks, _ = C.check_training("W4", first, 3, rtol=2e-4)
        tr = trainers(state, batches, side, quick)
        times = C.interleaved(C.runs({name: t.step for name, t in tr.items()}, steps), rounds, warmup=1)
    engines = {name: C.stats(times.get(name), 1e3 / steps)
               for name in ("tapegrad", "torch", "numpy", C.COMPILED, C.TORCH_COMPILE)}
    ratios = C.ratios(times, [("tapegrad", "torch"), ("tapegrad", "numpy"), ("numpy", "torch"), (C.COMPILED, "torch"),
                              (C.COMPILED, "tapegrad"), (C.TORCH_COMPILE, "torch")], threads)
    extra = {"steps per run": steps, "rounds": rounds}
    C.capture_extra(first[C.COMPILED].loss.first_s, times, steps, extra)
    if C.TORCH_COMPILE in first:
        extra[f"{C.TORCH_COMPILE} first call (inductor), s"] = first[C.TORCH_COMPILE].loss.first_s
    title = (f"LeNet-5-like conv5x5x6-pool-conv5x5x16-pool-fc120-84-10, batch {batch}, {side}x{side}x1, "
             f"SGD momentum, {rounds} interleaved runs of {steps} steps")
    return C.result("W4", title, "ms/step", threads, engines, ratios, checks, extra=extra,
                    notes=[f"'{C.COMPILED}': the step's forward and cross-entropy as one tapegrad.compile'd function "
                           f"(the optimizer step eager); '{C.TORCH_COMPILE}': the same with torch.compile (inductor)"])


def main(argv=None):
    return C.script_main(run, __doc__, argv)


if __name__ == "__main__":
    main()
