"""Where the time of one small op goes: a per-op cost breakdown behind W2 (and every workload of small tensors).

For add, mul, tanh and exp on a float32 (16,) tensor, best of several runs, in µs per op:

- ``numpy``: the NumPy kernel alone (what hand-written NumPy pays);
- ``no_grad``: the tapegrad op under ``no_grad`` (dispatch, dtype promotion, the Tensor wrapper);
- ``recorded``: the op with an input that requires grad (plus the node, its edges and what it saves);
- ``backward``: one node of a 200-op chain of that op during ``backward()`` (the walk, the formula, its kernel);
- the same for torch (``torch no_grad``, ``torch recorded``, ``torch backward``) when it is installed.

    python benchmarks/breakdown.py [--quick]     (--quick: a few iterations, to check that it runs)
"""

from __future__ import annotations

import sys
import time

import numpy as np

N_CHAIN = 200
QUICK = False


def best_us(fn, number, repeat=7):
    if QUICK:
        number, repeat = max(1, number // 1000), 1
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        best = min(best, (time.perf_counter() - t0) / number)
    return best * 1e6


def op_row(T, op, x0, c):
    """µs per op for one op on engine T (tapegrad or torch): no_grad, recorded, backward per node."""
    x = T.from_numpy(x0.copy()).requires_grad_()
    with T.no_grad():
        nog = best_us(lambda: op(T, x, c), 20000)
    rec = best_us(lambda: op(T, x, c), 20000)

    def chain():
        y = x
        for _ in range(N_CHAIN):
            y = op(T, y, c)
        return y.sum()

    def chain_backward():
        chain().backward()

    fwd = best_us(chain, 30) / N_CHAIN
    both = best_us(chain_backward, 30) / N_CHAIN
    return nog, rec, both - fwd


def engine_rows(T, ops, x0, c0):
    c = T.from_numpy(c0)
    return {name: op_row(T, op, x0, c) for name, op in ops.items()}


def run():
    import tapegrad
    try:
        import torch
        torch.set_num_threads(1)
    except ImportError:
        torch = None
    rng = np.random.default_rng(0)
    x0 = rng.uniform(-0.5, 0.5, 16).astype(np.float32)
    c0 = rng.uniform(0.9, 1.1, 16).astype(np.float32)
    ops = {"add": lambda T, y, c: y + c, "mul": lambda T, y, c: y * c,
           "tanh": lambda T, y, c: T.tanh(y), "exp": lambda T, y, c: T.exp(y * 0.5)}
    np_ops = {"add": lambda: np.add(x0, c0), "mul": lambda: np.multiply(x0, c0), "tanh": lambda: np.tanh(x0),
              "exp": lambda: np.exp(np.multiply(x0, np.float32(0.5)))}
    numpy_us = {name: best_us(f, 50000) for name, f in np_ops.items()}
    tg = engine_rows(tapegrad, ops, x0, c0)
    th = engine_rows(torch, ops, x0, c0) if torch is not None else None
    return numpy_us, tg, th


def table(numpy_us, tg, th):
    head = ["op", "numpy", "tapegrad no_grad", "tapegrad recorded", "tapegrad backward/node"]
    if th:
        head += ["torch no_grad", "torch recorded", "torch backward/node"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name in tg:
        cells = [name, f"{numpy_us[name]:.2f}"] + [f"{v:.2f}" for v in tg[name]]
        if th:
            cells += [f"{v:.2f}" for v in th[name]]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv=None):
    global QUICK
    import _common as C
    QUICK = "--quick" in (sys.argv[1:] if argv is None else argv)
    with C.pinned_threads(1):
        numpy_us, tg, th = run()
    print("µs per op on a float32 (16,) tensor, 1 thread, best of 7 runs (exp's row includes its `* 0.5`):")
    print(table(numpy_us, tg, th))


if __name__ == "__main__":
    main()
