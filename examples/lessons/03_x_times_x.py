"""Micro-task 3: a node used twice — f = x * x gives x.grad = 2x.

In the multiply's backward, ``self`` and ``other`` are the same x, so one call adds into x.grad twice.
``_prev`` is a set, so it holds x only once: the doubling comes from the two ``+=``, not from two edges.
Tools: the trace shows both contributions; a tensor graph lists x twice in ``next_functions``.
"""

import _path  # noqa: F401

import tapegrad
from tapegrad.scalar import Value

x = Value(5.0, label="x")
f = x * x
f.label = "f"
f.backward()
print("f =", f.data, " x.grad =", x.grad, "(should be 2x = 10)")
print("f._prev =", f._prev, "-> one element")

x.grad = 0.0
with tapegrad.autograd.trace() as t:
    f.backward()
t.print()

xt = tapegrad.tensor(5.0, requires_grad=True)
ft = xt * xt
print("\ntensor: f.grad_fn.next_functions =", ft.grad_fn.next_functions)
ft.backward()
print("tensor: x.grad =", xt.grad)
