"""Micro-task 1: swap tanh for relu and watch the "dead zone" — a negative input gets gradient 0.

Tools: ``tapegrad.autograd.trace`` shows the ReLU passing on 0; ``tapegrad.debug.activation_report`` counts the
units of a network that are dead for a whole batch.
"""

import random

import _path  # noqa: F401

import tapegrad
from tapegrad import debug
from tapegrad.scalar import Value
from tapegrad.scalar.nn import MLP

for x0 in [3.0, -3.0]:              # change this number and try both signs
    x = Value(x0, label="x")
    w = Value(2.0, label="w")
    y = (x * w).relu()
    y.label = "y"
    y.backward()
    print(f"x={x0:+.1f}  y={y.data}  x.grad={x.grad}  w.grad={w.grad}")

print("\nThe chain rule step by step for x = -3: the ReLU's local derivative is 0, so it passes on 0.")
x, w = Value(-3.0, label="x"), Value(2.0, label="w")
y = (x * w).relu()
y.label = "y"
with tapegrad.autograd.trace() as t:
    y.backward()
t.print()

print("\nA whole layer can die: push the biases of 3 of 6 hidden units far below zero.")
random.seed(0)
model = MLP(2, [6, 1])
for neuron in model.layers[0].neurons[:3]:
    neuron.b.data = -50.0
batch = [[random.uniform(-1, 1), random.uniform(-1, 1)] for _ in range(32)]
print(debug.activation_report(model, batch))
