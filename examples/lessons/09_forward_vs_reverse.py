"""Lesson 9: forward mode vs reverse mode — the same Jacobian, column by column (jvp) and row by row (vjp).

f(x) = W2 @ tanh(W1 @ x) maps n inputs to m outputs. Its Jacobian J (m x n) can be built two ways:
- forward mode: push a tangent e_j through f alongside the values (a dual number per value); what comes out is
  J e_j, column j. n forward passes.
- reverse mode: run f once, then pull a cotangent e_i back through the recorded graph; what comes out is
  e_i^T J, row i. m backward passes.
Same numbers; the cost differs: forward mode pays per input, reverse mode per output. So a loss (m = 1) wants
reverse mode (backpropagation), a function of few inputs and many outputs wants forward mode.

    python examples/lessons/09_forward_vs_reverse.py [out_dir]   # writes forward_vs_reverse.png (matplotlib)
"""

import os
import sys
import tempfile
import time

import _path  # noqa: F401

import tapegrad
import tapegrad.autograd.forward_ad as fwAD
from tapegrad.autograd.functional import vjp
from tapegrad.func import jacfwd, jvp

HIDDEN = 16


def make_f(n, m, seed=0):
    g = tapegrad.Generator().manual_seed(seed)
    w1 = tapegrad.randn(HIDDEN, n, generator=g, dtype=tapegrad.float64) / n ** 0.5
    w2 = tapegrad.randn(m, HIDDEN, generator=g, dtype=tapegrad.float64) / HIDDEN ** 0.5
    return lambda x: w2 @ (w1 @ x).tanh()


def unit(k, size):
    e = tapegrad.zeros(size, dtype=tapegrad.float64)
    e[k] = 1.0
    return e


def jacobian_by_columns(f, x, m):
    """n jvps: each a forward pass with a tangent, giving one column."""
    return tapegrad.stack([jvp(f, (x,), (unit(j, x.numel()),))[1] for j in range(x.numel())], dim=1)


def jacobian_by_rows(f, x, m):
    """m vjps: f runs once per vjp here (autograd.functional), then one backward gives one row."""
    return tapegrad.stack([vjp(f, x, unit(i, m))[1] for i in range(m)], dim=0)


def best_time(fn, *args, repeat=3):
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn(*args)
        best = min(best, time.perf_counter() - t0)
    return best


n, m = 3, 2
f = make_f(n, m)
x = tapegrad.tensor([0.5, -1.0, 2.0], dtype=tapegrad.float64)
J_cols, J_rows = jacobian_by_columns(f, x, m), jacobian_by_rows(f, x, m)
print(f"f: R^{n} -> R^{m}, its Jacobian ({m} x {n})")
print("by columns (forward mode, jvp):\n", J_cols)
print("by rows    (reverse mode, vjp):\n", J_rows)
print("the same:", bool(tapegrad.allclose(J_cols, J_rows)), "| and jacfwd agrees:",
      bool(tapegrad.allclose(jacfwd(f)(x), J_cols)))

print("\nforward mode, watched: the tangent e_0 flows forward with the values (autograd.trace)")
with tapegrad.autograd.trace() as t, fwAD.dual_level():
    out = f(fwAD.make_dual(x, unit(0, n)))
    column0 = fwAD.unpack_dual(out).tangent
print(t.tangent_table())
print("column 0 =", column0)

print("\nreverse mode, watched: the cotangent e_0 flows backward after them")
xr = x.detach().requires_grad_()
y = f(xr)
with tapegrad.autograd.trace(params={"x": xr}) as t:
    y.backward(unit(0, m))
print(t.table())
print("row 0 =", xr.grad)

print("\ncost (seconds, best of 3): forward mode grows with n, reverse mode with m")
sizes = [2, 8, 32, 64]
rows = []
for vary in ("n", "m"):
    for k in sizes:
        n_, m_ = (k, 4) if vary == "n" else (4, k)
        f_ = make_f(n_, m_)
        x_ = tapegrad.randn(n_, dtype=tapegrad.float64)
        tf = best_time(jacobian_by_columns, f_, x_, m_)
        tr = best_time(jacobian_by_rows, f_, x_, m_)
        rows.append((vary, n_, m_, tf, tr))
        print(f"  n={n_:3d} m={m_:3d}   jvp columns {tf:8.4f}   vjp rows {tr:8.4f}   "
              f"-> {'forward' if tf < tr else 'reverse'} mode is cheaper")

out_dir = sys.argv[1] if len(sys.argv) > 1 else tempfile.gettempdir()
try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    print("\n(matplotlib is not installed: no plot)")
else:
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.5))
    for ax, vary in zip(axes, ("n", "m")):
        pts = [r for r in rows if r[0] == vary]
        xs = [r[1] if vary == "n" else r[2] for r in pts]
        ax.plot(xs, [r[3] for r in pts], "o-", label="forward (jvp per column)")
        ax.plot(xs, [r[4] for r in pts], "s-", label="reverse (vjp per row)")
        ax.set_xlabel(f"{vary} ({'inputs' if vary == 'n' else 'outputs'}; the other is 4)")
        ax.set_ylabel("seconds for the whole Jacobian")
        ax.set_xscale("log", base=2)
        ax.legend()
    fig.suptitle("The same Jacobian, by columns and by rows")
    fig.tight_layout()
    path = os.path.join(out_dir, "forward_vs_reverse.png")
    fig.savefig(path, dpi=80)
    print("\nplot saved to", path)
