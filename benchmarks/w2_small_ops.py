"""W2 small ops: a 200-op chain of add/mul/tanh/exp/sigmoid on a float32 tensor of shape (16,), forward+backward.

The chain cycles add(a), mul(b), tanh, exp, sigmoid (values stay in a safe range), then ``.sum().backward()``.
``x`` requires grad; ``a`` and ``b`` are constant (16,) tensors. Reports µs per op (the time of forward + backward
divided by the number of ops) for tapegrad, torch and hand-written NumPy (forward keeping the intermediates,
backward by hand); the check compares x.grad of every engine.

    python benchmarks/w2_small_ops.py [--quick] [--threads N] [--json]
"""

from __future__ import annotations

import _common as C
import _floor
import _peers
import numpy as np

N_OPS = 200
SIZE = 16


def data(size=SIZE, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, size).astype(np.float32)
    a = rng.uniform(-0.5, 0.5, size).astype(np.float32)
    b = rng.uniform(0.5, 1.5, size).astype(np.float32)
    return x, a, b


def chain_engine(T, x0, a0, b0, n_ops, compiled=False):
    """The same source for tapegrad and torch (``import tapegrad as torch`` runs PyTorch code). ``compiled``: the
    chain and its sum are one compiled function (``T.compile``); the step's ``.first`` is its ``FirstCall``."""
    a, b = T.from_numpy(a0), T.from_numpy(b0)

    steps = (lambda y: y + a, lambda y: y * b, T.tanh, T.exp, T.sigmoid)

    def chain(x):
        return C.cycle(x, n_ops, steps).sum()

    fn = C.FirstCall(T.compile(chain)) if compiled else chain

    def step():
        x = T.from_numpy(x0).requires_grad_()
        loss = fn(x)
        loss.backward()
        return loss, x.grad

    step.first = fn if compiled else None
    return step


def chain_numpy(x0, a, b, n_ops):
    """Hand-written forward (keeping what backward needs) and backward: the floor for a NumPy engine."""

    def step():
        y = x0
        saved = []
        for i in range(n_ops):
            k = i % 5
            if k == 0:
                y = y + a
                saved.append(None)
            elif k == 1:
                saved.append(None)
                y = y * b
            elif k == 2:
                y = np.tanh(y)
                saved.append(y)
            elif k == 3:
                y = np.exp(y)
                saved.append(y)
            else:
                y = 1.0 / (1.0 + np.exp(-y))
                saved.append(y)
        g = np.ones_like(y)
        for i in range(n_ops - 1, -1, -1):
            k = i % 5
            if k == 1:
                g = g * b
            elif k == 2:
                t = saved[i]
                g = g * (1 - t * t)
            elif k == 3:
                g = g * saved[i]
            elif k == 4:
                s = saved[i]
                g = g * (s * (1 - s))
        return y.sum(), g

    return step


FLOOR = "Python floor"
SEMANTIC = "semantic floor"


def chain_floor(x0, a, b, n_ops):
    """The least any Python-level engine pays (an informational engine, not a product): per op one output object
    and one node object, one Python call forward and one backward, the graph a linked list. None of torch's
    semantics — no DAG ordering, dtype promotion, broadcasting, version counters, grad mode, hooks or checks."""

    class Var:
        __slots__ = ("value", "node")

        def __init__(self, value, node):
            self.value, self.node = value, node

    class Node:
        __slots__ = ("backward", "saved", "parent")

        def __init__(self, backward, saved, parent):
            self.backward, self.saved, self.parent = backward, saved, parent

    def sigmoid(v):
        t = np.exp(-v)
        t += 1
        return np.reciprocal(t, out=t)

    def op(forward, backward, x, *args, save=None):
        out = forward(x.value, *args)
        return Var(out, Node(backward, out if save is None else save, x.node))

    ops = [(np.add, lambda g, s: g, a, None), (np.multiply, lambda g, s: g * s, b, b),
           (np.tanh, lambda g, s: g * (1 - s * s), None, None), (np.exp, lambda g, s: g * s, None, None),
           (sigmoid, lambda g, s: g * (s * (1 - s)), None, None)]

    def step():
        y = Var(x0, None)
        for i in range(n_ops):
            fwd, bwd, arg, save = ops[i % 5]
            y = op(fwd, bwd, y, arg, save=save) if arg is not None else op(fwd, bwd, y)
        g, node = np.ones_like(y.value), y.node
        while node is not None:
            g = node.backward(g, node.saved)
            node = node.parent
        return y.value.sum(), g

    return step


def run(quick=False, threads=1):
    import tapegrad
    torch = C.import_torch()
    n_ops = 20 if quick else N_OPS
    repeats = 2 if quick else 200
    x0, a, b = data()
    fns = {"tapegrad": chain_engine(tapegrad, x0, a, b, n_ops),
           C.COMPILED: chain_engine(tapegrad, x0, a, b, n_ops, compiled=True)}
    if torch is not None:
        fns["torch"] = chain_engine(torch, x0, a, b, n_ops)
        if C.torch_compile_enabled(quick):
            fns[C.TORCH_COMPILE] = chain_engine(torch, x0, a, b, n_ops, compiled=True)
    fns["numpy"] = chain_numpy(x0, a, b, n_ops)
    fns[FLOOR] = chain_floor(x0, a, b, n_ops)
    fns[SEMANTIC] = chain_engine(_floor, x0, a, b, n_ops)
    peers = list(_peers.available())
    for name in peers:
        fns[name] = _peers.chain(name, x0, a, b, n_ops)

    with C.pinned_threads(threads):
        outs = {name: [C.to_numpy(v) for v in f()] for name, f in fns.items()}
        checks = []
        for name, (loss, grad) in outs.items():
            if name != "tapegrad":
                C.assert_close(f"W2 output tapegrad vs {name}", outs["tapegrad"][0], loss, rtol=1e-5)
                C.assert_close(f"W2 x.grad tapegrad vs {name}", outs["tapegrad"][1], grad, rtol=1e-4)
                checks.append(f"output and x.grad: tapegrad == {name} (rtol 1e-5 / 1e-4)")
            if grad.dtype != np.float32:
                raise C.CheckFailed(f"W2: {name} gradient is {grad.dtype}, not float32")
        times = C.interleaved(fns, repeats, warmup=1 if quick else 5)

    per_op = 1e6 / n_ops
    engines = {name: C.stats(times.get(name), per_op) for name in ("tapegrad", "torch", "numpy", FLOOR, SEMANTIC,
                                                                     C.COMPILED, C.TORCH_COMPILE, *peers)}
    ratios = C.ratios(times, [("tapegrad", "torch"), ("tapegrad", "numpy"), ("numpy", "torch"), (FLOOR, "torch"),
                              (SEMANTIC, "torch"), ("tapegrad", SEMANTIC), (C.COMPILED, "torch"),
                              (C.COMPILED, "tapegrad"), (C.COMPILED, "numpy"), (C.TORCH_COMPILE, "torch"),
                              (C.COMPILED, C.TORCH_COMPILE)]
                      + [("tapegrad", p) for p in peers] + [(p, "torch") for p in peers], threads)
    extra = {"ops": n_ops, "repeats": repeats}
    C.capture_extra(fns[C.COMPILED].first.first_s, times, 1, extra)
    if C.TORCH_COMPILE in fns:
        extra[f"{C.TORCH_COMPILE} first call (inductor), s"] = fns[C.TORCH_COMPILE].first.first_s
    return C.result("W2", f"{n_ops}-op chain add/mul/tanh/exp/sigmoid on float32 ({SIZE},), fwd+bwd",
                    "µs/op", threads, engines, ratios, checks, extra=extra,
                    notes=[f"'{FLOOR}': a minimal Python tape (one output object and one node per op, one Python "
                           "call each way, a linked list; none of torch's semantics), for information: the least "
                           "a Python-level engine pays over hand NumPy",
                           f"'{SEMANTIC}': benchmarks/_floor.py, a compact engine doing only the per-op bookkeeping "
                           "torch's semantics require (edges, input shapes/dtypes, saved tensors with versions, "
                           "topological order, gradient checks, accumulation into .grad; no hooks, views, "
                           "anomaly, errors), for information: the least an engine with torch's semantics pays",
                           f"'{C.COMPILED}': the chain and its sum as one tapegrad.compile'd function (the first "
                           "call captures, in the warm-up; then one replayed node per step); "
                           f"'{C.TORCH_COMPILE}': the same with torch.compile (inductor)"])


def main(argv=None):
    return C.script_main(run, __doc__, argv)


if __name__ == "__main__":
    main()
