"""Exercise 1: add ``__pow__`` to the engine. Its backward is ``self.grad += k * self.data**(k-1) * out.grad``.

We take the seed's minimal engine, add ``__pow__`` the seed's way (a ``_backward`` closure), check x**2 at
x = 3 gives 6, and compare with ``tapegrad.scalar.Value``, where ``**`` is built in — and with PyTorch's answer
through tapegrad tensors.
"""

import _path  # noqa: F401

import tapegrad
from tapegrad.scalar import Value


class SeedValue:
    """The seed's engine: +, * and backward (shortened), plus the exercise's __pow__."""

    def __init__(self, data, _children=(), _op=""):
        self.data = data
        self.grad = 0.0
        self._backward = lambda: None
        self._prev = set(_children)
        self._op = _op

    def __mul__(self, other):
        other = other if isinstance(other, SeedValue) else SeedValue(other)
        out = SeedValue(self.data * other.data, (self, other), "*")

        def _backward():
            self.grad += other.data * out.grad
            other.grad += self.data * out.grad
        out._backward = _backward
        return out

    def __pow__(self, k):                     # the exercise
        assert isinstance(k, (int, float)), "only constant exponents"
        out = SeedValue(self.data ** k, (self,), f"**{k}")

        def _backward():
            self.grad += k * self.data ** (k - 1) * out.grad
        out._backward = _backward
        return out

    def backward(self):
        topo, visited = [], set()

        def build(v):
            if v not in visited:
                visited.add(v)
                for child in v._prev:
                    build(child)
                topo.append(v)
        build(self)
        self.grad = 1.0
        for v in reversed(topo):
            v._backward()


x = SeedValue(3.0)
y = x ** 2
y.backward()
print("seed engine + __pow__: x**2 at 3 -> x.grad =", x.grad)
assert x.grad == 6.0

v = Value(3.0)
(v ** 2).backward()
print("tapegrad.scalar.Value: x.grad =", v.grad, "| op name:", (v ** 2)._op)

t = tapegrad.tensor(3.0, requires_grad=True)
(t ** 2).backward()
print("tapegrad tensor      : x.grad =", t.grad.item(), "| grad_fn:", (t ** 2).grad_fn.name())

for k in (3, 0.5, -1):
    a = SeedValue(2.0)
    (a ** k).backward()
    b = Value(2.0)
    (b ** k).backward()
    print(f"k={k}: seed {a.grad:.6f}  tapegrad {b.grad:.6f}")
