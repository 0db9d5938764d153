"""Exercise 3 and the engineering trap: ``total_loss += loss`` drags every iteration's graph along.

A tensor that requires grad *is* a graph: adding it to a running total builds a new node on top of the old
total's graph, iteration after iteration. ``loss.item()`` (a Python float) or ``loss.detach()`` cut it.
Tools: ``tapegrad.autograd.graph_stats`` shows the graph growing; ``tapegrad.debug`` warns at the guilty line.
"""

import warnings

import _path  # noqa: F401

import tapegrad
from tapegrad import debug
from tapegrad.autograd import graph_stats

tapegrad.manual_seed(0)
w = tapegrad.randn(4, requires_grad=True)
x = tapegrad.randn(64, 4)
y = tapegrad.randn(64)


def train_step():
    loss = ((x @ w - y) ** 2).mean()
    w.grad = None                      # zero_grad
    loss.backward()
    with tapegrad.no_grad():
        w.sub_(0.05 * w.grad)          # sgd
    debug.mark_step()                  # (an optimizer's step() does this when debug is on)
    return loss


print("WRONG: total_loss += loss")
total_loss = 0
for it in range(5):
    loss = train_step()
    total_loss += loss                 # loss has a grad_fn: the whole graph stays attached
    s = graph_stats(total_loss)
    print(f"  iteration {it}: total_loss holds a graph of {s.nodes} nodes")

print("RIGHT: total_loss += loss.item()")
total_loss = 0.0
for _ in range(5):
    loss = train_step()
    total_loss += loss.item()          # a Python float: no graph
print(f"  total_loss = {total_loss:.4f} ({type(total_loss).__name__}, no graph)")

print("\ntapegrad.debug points at the line:")
debug.enable()
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    total_loss = 0
    for _ in range(3):
        loss = train_step()
        total_loss += loss
for m in caught:
    print(f"  {m.category.__name__} at line {m.lineno}: {m.message}")
with warnings.catch_warnings(record=True) as clean:
    warnings.simplefilter("always")
    total_loss = 0.0
    for _ in range(3):
        total_loss += train_step().item()
print(f"  the correct loop: {len(clean)} warnings")
debug.disable()
