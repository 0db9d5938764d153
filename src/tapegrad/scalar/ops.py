"""The seed's operator classes: one object per operation, with a ``forward`` and a ``backward`` you call by hand.

An operator remembers its inputs during ``forward`` and, given the gradient of its output, returns the
gradients of its inputs in ``backward``. Nothing is automatic here: *you* are the autograd engine, calling
``backward`` in reverse order and passing each result on (the chain rule, by hand).

>>> a, b, c, d = 2, 3, 2, 2
>>> mul1, mul2, add_op, exp_op = multiply(), multiply(), add(), exponential()
>>> g = exp_op(add_op(mul1(a, b), mul2(c, d)))
>>> g
22026.465794806718
>>> ds = exp_op.backward(1.0)              # dg/ds, where s = a*b + c*d
>>> dab, dcd = add_op.backward(ds)         # the sum hands its gradient to both products unchanged
>>> mul1.backward(dab)                     # (dg/da, dg/db) = (dab * b, dab * a)
(66079.39738442015, 44052.931589613436)

Note: the seed's example uses **one** ``multiply_op`` for both products. That computes ``g`` correctly, but an
operator keeps only its *last* inputs (``self.x``, ``self.y``), so its backward can only be walked for the
second product. Use one instance per use, as above — exactly why autograd creates one node per operation.
"""

from __future__ import annotations

import math

__all__ = ["Op", "add", "multiply", "exponential", "subtract", "divide", "power", "tanh", "relu", "sigmoid",
           "log", "Add", "Multiply", "Exp", "Subtract", "Divide", "Power", "Tanh", "ReLU", "Sigmoid", "Log"]


class Op:
    """算子基类 — the operator base class: subclasses implement ``forward`` / ``backward``."""

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)

    def forward(self, *args, **kwargs):
        raise NotImplementedError

    def backward(self, *args, **kwargs):
        raise NotImplementedError

    def __repr__(self):
        return f"<{type(self).__name__} op>"


class add(Op):
    """z = x + y; backward hands the upstream gradient to both inputs unchanged."""

    def forward(self, x, y):
        self.x = x
        self.y = y
        return x + y

    def backward(self, grads):
        return grads, grads


class multiply(Op):
    """z = x * y; backward: (grads * y, grads * x)."""

    def forward(self, x, y):
        self.x = x
        self.y = y
        return x * y

    def backward(self, grads):
        return grads * self.y, grads * self.x


class exponential(Op):
    """z = e^x; backward: grads * e^x."""

    def forward(self, x):
        self.x = x
        return math.exp(x)

    def backward(self, grads):
        return grads * math.exp(self.x)


class subtract(Op):
    """z = x - y; backward: (grads, -grads)."""

    def forward(self, x, y):
        self.x = x
        self.y = y
        return x - y

    def backward(self, grads):
        return grads, -grads


class divide(Op):
    """z = x / y; backward: (grads / y, -grads * x / y**2)."""

    def forward(self, x, y):
        self.x = x
        self.y = y
        return x / y

    def backward(self, grads):
        return grads / self.y, -grads * self.x / (self.y * self.y)


class power(Op):
    """z = x ** k for a constant k; backward: grads * k * x**(k-1)."""

    def __init__(self, k=2):
        self.k = k

    def forward(self, x):
        self.x = x
        return x ** self.k

    def backward(self, grads):
        return grads * self.k * self.x ** (self.k - 1)


class tanh(Op):
    """z = tanh(x); backward: grads * (1 - z**2)."""

    def forward(self, x):
        self.x = x
        self.z = math.tanh(x)
        return self.z

    def backward(self, grads):
        return grads * (1 - self.z ** 2)


class relu(Op):
    """z = max(x, 0); backward: grads where x > 0, else 0 (the dead zone)."""

    def forward(self, x):
        self.x = x
        return x if x > 0 else 0.0

    def backward(self, grads):
        return grads * (1.0 if self.x > 0 else 0.0)


class sigmoid(Op):
    """z = 1 / (1 + e^-x); backward: grads * z * (1 - z)."""

    def forward(self, x):
        self.x = x
        self.z = 1.0 / (1.0 + math.exp(-x))
        return self.z

    def backward(self, grads):
        return grads * self.z * (1 - self.z)


class log(Op):
    """z = ln(x); backward: grads / x."""

    def forward(self, x):
        self.x = x
        return math.log(x)

    def backward(self, grads):
        return grads / self.x


# CamelCase names, as the issue and PyTorch-style code spell operator classes
Add, Multiply, Exp, Subtract, Divide, Power = add, multiply, exponential, subtract, divide, power
Tanh, ReLU, Sigmoid, Log = tanh, relu, sigmoid, log
