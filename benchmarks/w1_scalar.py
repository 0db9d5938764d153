"""W1 scalar engine: micrograd's demo, ``MLP(2, [16, 16, 1])`` on 100 two-moons points, max-margin loss + L2, SGD.

``tapegrad.scalar`` vs micrograd (when installed) vs torch on 0-d float64 tensors (micrograd's classes rebuilt on
``torch.tensor`` scalars below), all through ``bench_scalar.train_steps`` (the loop of micrograd's demo notebook)
with the same seed, so the same initial weights. Repeats are single training steps (on a freshly built model,
plus collecting the step's cyclic garbage), interleaved between the engines. The check: the loss after two steps
is the same in every engine (all compute in float64). Also reported: each engine's median s/step over
consecutive steps of one model (micrograd's loop as written, garbage left to Python's automatic collector).
s/step.

    python benchmarks/w1_scalar.py [--quick] [--json]      (benchmarks/bench_scalar.py: tapegrad vs micrograd only)
"""

from __future__ import annotations

import random
import statistics
import types

import _common as C
import bench_scalar


def torch_scalar_nn(torch):
    """micrograd.nn's Neuron/Layer/MLP on 0-d float64 torch tensors (same random draws as micrograd's)."""

    def value(v):
        return torch.tensor(float(v), dtype=torch.float64, requires_grad=True)

    class Module:
        def zero_grad(self):
            for p in self.parameters():
                p.grad = None

        def parameters(self):
            return []

    class Neuron(Module):
        def __init__(self, nin, nonlin=True):
            self.w = [value(random.uniform(-1, 1)) for _ in range(nin)]
            self.b = value(0)
            self.nonlin = nonlin

        def __call__(self, x):
            act = sum((wi * xi for wi, xi in zip(self.w, x)), self.b)
            return act.relu() if self.nonlin else act

        def parameters(self):
            return self.w + [self.b]

    class Layer(Module):
        def __init__(self, nin, nout, **kwargs):
            self.neurons = [Neuron(nin, **kwargs) for _ in range(nout)]

        def __call__(self, x):
            out = [n(x) for n in self.neurons]
            return out[0] if len(out) == 1 else out

        def parameters(self):
            return [p for n in self.neurons for p in n.parameters()]

    class MLP(Module):
        def __init__(self, nin, nouts):
            sz = [nin] + nouts
            self.layers = [Layer(sz[i], sz[i + 1], nonlin=i != len(nouts) - 1) for i in range(len(nouts))]

        def __call__(self, x):
            for layer in self.layers:
                x = layer(x)
            return x

        def parameters(self):
            return [p for layer in self.layers for p in layer.parameters()]

    return types.SimpleNamespace(MLP=MLP)


def engines_nn():
    import tapegrad.scalar.nn as tg_nn
    out = {"tapegrad": tg_nn}
    try:
        import micrograd.nn as mg_nn
        out["micrograd"] = mg_nn
    except ImportError:
        pass
    torch = C.import_torch()
    if torch is not None:
        out["torch"] = torch_scalar_nn(torch)
    return out


def run(quick=False, threads=1):
    X, y = bench_scalar.make_data(100)
    if quick:
        X, y = X[:8], y[:8]
    repeats = 1 if quick else 5
    mods = engines_nn()
    with C.pinned_threads(threads):
        # train_steps returns (wall times, [CPU times,] final loss, final accuracy)
        losses = {name: float(bench_scalar.train_steps(m, X, y, 2)[-2]) for name, m in mods.items()}
        ref = "micrograd" if "micrograd" in mods else "tapegrad"
        checks = []
        for name in mods:
            if name != ref:
                C.assert_close(f"W1 loss after 2 steps, {name} vs {ref}", losses[name], losses[ref], rtol=1e-9)
                checks.append(f"loss after 2 steps: {name} == {ref} (rtol 1e-9, float64)")
        # one call = build the model (337 parameters: ~1% of a step) + one training step + collecting its garbage
        fns = {name: (lambda m=m: bench_scalar.train_steps(m, X, y, 1)) for name, m in mods.items()}
        times = C.interleaved(fns, repeats, warmup=0)
    engines = {name: C.stats(times.get(name)) for name in ("tapegrad", "micrograd", "torch")}
    ratios = C.ratios(times, [("tapegrad", "micrograd"), ("torch", "micrograd"), ("tapegrad", "torch")], threads)
    # also as a user's loop runs: consecutive steps of one model, garbage left to Python's automatic collector
    # (engines whose graphs hold reference cycles pay here for the collector scanning the live graphs)
    extra = {"repeats": repeats}
    for name, m in mods.items():
        extra[f"{name} s/step in a consecutive loop (median)"] = statistics.median(
            bench_scalar.train_steps(m, X, y, 2 if quick else 4)[0])
    notes = [] if "micrograd" in mods else ["micrograd is not installed (pip install micrograd)"]
    return C.result("W1", f"micrograd MLP(2, [16, 16, 1]) on {len(X)} moons points, one SGD step", "s/step", threads,
                    engines, ratios, checks, extra=extra, notes=notes)


def main(argv=None):
    return C.script_main(run, __doc__, argv, has_threads=False)


if __name__ == "__main__":
    main()
