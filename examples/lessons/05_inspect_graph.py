"""Exercise 2: build (a*b + a).tanh(), print every node's _op and .grad after backward; check by hand.

Then: a second backward without zeroing, and the tensor side — grad_fn disappears after .detach(), .grad stays
None when requires_grad=False. Tools: ``tapegrad.viz.print_graph`` (text) and ``tapegrad.viz.draw`` (a picture).
"""

import math
import os
import sys
import tempfile

import _path  # noqa: F401

import tapegrad
from tapegrad import viz
from tapegrad.scalar import Value

a, b = Value(2.0, label="a"), Value(-3.0, label="b")
L = (a * b + a).tanh()
L.label = "L"
print("before backward (the bookkeeping):")
viz.print_graph(L)
L.backward()
print("\nafter backward (the accountability):")
viz.print_graph(L)

# by hand: s = a*b + a = -4; dL/ds = 1 - tanh(s)^2; dL/da = dL/ds * (b + 1); dL/db = dL/ds * a
ds = 1 - math.tanh(-4.0) ** 2
print(f"\nby hand: a.grad = {ds * (-3.0 + 1):.6f}, b.grad = {ds * 2.0:.6f}")

L.backward()
print(f"second backward without zeroing: a.grad = {a.grad:.6f}, b.grad = {b.grad:.6f} (doubled)")

out_dir = sys.argv[1] if len(sys.argv) > 1 else tempfile.gettempdir()
path = viz.draw(L).save(os.path.join(out_dir, "lesson05_graph.svg"))
print("picture saved to", path)

print("\ntensors:")
x = tapegrad.tensor(2.0, requires_grad=True)
w = tapegrad.tensor(-3.0)                 # requires_grad=False
y = (x * w + x).tanh()
print("y.grad_fn =", y.grad_fn.name(), "| next:", [n.name() if n else None for n, _ in y.grad_fn.next_functions])
print("y.detach().grad_fn =", y.detach().grad_fn)
y.backward()
print("x.grad =", x.grad, "| w.grad =", w.grad, "(requires_grad=False: None)")
