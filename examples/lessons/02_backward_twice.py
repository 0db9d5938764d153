"""Micro-task 2: call backward twice without zeroing — the leaf gradients double.

``backward()`` sets the output's gradient to 1 and starts every interior node afresh, but the leaves' ``.grad``
slots only ever get ``+=``: nobody clears them. That is why PyTorch's ``zero_grad`` clears parameters (leaves),
not the loss. Tools: ``tapegrad.debug`` notices when ``optimizer.step()`` uses such doubled gradients.
"""

import warnings

import _path  # noqa: F401

import tapegrad
from tapegrad import debug
from tapegrad.scalar import Value

a, b = Value(2.0), Value(-3.0)
L = a * b
L.backward()
print("1st a.grad =", a.grad)
L.backward()
print("2nd a.grad =", a.grad, "(doubled!)")
a.grad = 0.0
b.grad = 0.0
L.backward()
print("after zeroing, a.grad =", a.grad)

print("\nThe same with tensors (retain_graph=True keeps the graph for a second backward):")
w = tapegrad.tensor([1.0, 2.0, 3.0], requires_grad=True)
y = (w ** 2).sum()
y.backward(retain_graph=True)
print("1st w.grad =", w.grad)
y.backward()
print("2nd w.grad =", w.grad, "(accumulated)")

print("\ntapegrad.debug catches a training loop that forgets zero_grad:")


class SGD:
    """A minimal optimizer honouring tapegrad.debug's contract (tapegrad.optim.SGD does the same)."""

    def __init__(self, params, lr):
        self.param_groups = [{"params": list(params), "lr": lr}]

    def zero_grad(self):
        if debug.enabled:
            debug.on_zero_grad(self)
        for p in self.param_groups[0]["params"]:
            p.grad = None

    def step(self):
        if debug.enabled:
            debug.on_optimizer_step(self)
        with tapegrad.no_grad():
            for p in self.param_groups[0]["params"]:
                p -= self.param_groups[0]["lr"] * p.grad


debug.enable()
w = tapegrad.tensor([1.0, 2.0, 3.0], requires_grad=True)
opt = SGD([w], lr=0.1)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    for _step in range(3):
        loss = (w ** 2).sum()
        loss.backward()              # forgot opt.zero_grad()
        opt.step()
for m in caught:
    print(f"{m.category.__name__}: {m.message}")
debug.disable()
