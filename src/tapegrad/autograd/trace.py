"""``trace()``: watch the chain rule run, one node at a time.

>>> import tapegrad
>>> a = tapegrad.tensor(2., requires_grad=True); b = tapegrad.tensor(-3., requires_grad=True)
>>> L = a * b + 10
>>> with tapegrad.autograd.trace(params={"a": a, "b": b}) as t:
...     L.backward()
>>> [s.name for s in t.steps]
['AddBackward0', 'MulBackward0', 'AccumulateGrad', 'AccumulateGrad']
>>> t.print()                                                             # doctest: +SKIP
step  node            grad in   -> input         grad out  accumulates into
   1  AddBackward0    1         -> MulBackward0  1         MulBackward0's buffer
   ...

Each step records the node, the gradient(s) that arrived at it (``grads_out``: d loss / d its outputs), and for
each of its inputs the gradient it passed on (``d loss / d input``) and where that lands: the buffer of the next
node (summed there with other paths), or a leaf's ``.grad`` (``+=``). Works for ``tapegrad.scalar.Value``
graphs too (``value.backward(trace=True)``, or the same ``with`` block).

Forward mode is traced too: inside a dual level (``autograd.forward_ad``, ``func.jvp``), every op that carries a
tangent is a ``TangentStep`` in ``t.tangents`` — the tangents that came in (one per input that has one), the
tangent that goes out, and the rule that made it ("natural", or "derived" from the op's backward) — in the order
the ops ran: tangents flow forward with the values, as gradients flow backward after them.
"""

from __future__ import annotations

import sys
import types

from .._format import short_array

__all__ = ["trace", "Trace", "Step", "Edge", "TangentStep"]


class Edge:
    """One input of a step: ``target`` (name), ``grad`` passed to it, ``into`` (where it accumulates)."""

    __slots__ = ("target", "grad", "into", "obj")

    def __init__(self, target, grad, into, obj=None):
        self.target, self.grad, self.into, self.obj = target, grad, into, obj

    def __repr__(self):
        return f"Edge({self.target}: {_fmt(self.grad)} -> {self.into})"


class Step:
    """One node run by the engine: ``node``, ``name``, ``grads_out`` (arrived), ``edges`` (passed on)."""

    __slots__ = ("index", "node", "name", "grads_out", "edges")

    def __init__(self, index, node, name, grads_out, edges):
        self.index, self.node, self.name, self.grads_out, self.edges = index, node, name, grads_out, edges

    @property
    def grads_in(self):
        """The gradients passed to each input (in input order)."""
        return [e.grad for e in self.edges]

    def __repr__(self):
        return f"Step({self.index}: {self.name}, in={[_fmt(g) for g in self.grads_out]}, edges={self.edges})"


class TangentStep:
    """One op run with tangents (forward mode): ``name``, ``rule``, ``tangents_in`` ((input position, tangent)
    for each input that had one), ``tangents_out`` (one per output, None where it has none)."""

    __slots__ = ("index", "name", "rule", "tangents_in", "tangents_out")

    def __init__(self, index, name, rule, tangents_in, tangents_out):
        self.index, self.name, self.rule = index, name, rule
        self.tangents_in, self.tangents_out = tangents_in, tangents_out

    def __repr__(self):
        ins = ", ".join(f"{i}: {_fmt(t)}" for i, t in self.tangents_in)
        return f"TangentStep({self.index}: {self.name}, in={{{ins}}}, out={[_fmt(t) for t in self.tangents_out]})"


def _fmt(g):
    if g is None:
        return "None"
    if isinstance(g, float):
        return f"{g:.4g}"
    if isinstance(g, int):
        return str(g)
    return short_array(getattr(g, "_array", g))


class Trace:
    """The record of one or more backward passes; use as ``with tapegrad.autograd.trace() as t:``."""

    def __init__(self, params=None):
        self.steps = []
        self.tangents = []      # forward mode's steps (TangentStep), in the order the ops ran
        self._names = {id(v): k for k, v in (dict(params) if params else {}).items()}

    # --- recording ------------------------------------------------------------------------------------------
    def __enter__(self):
        # the tracer hooks into both engines from its side: each keeps a list of observers it calls at every
        # step of a backward pass (imported here, on use: neither engine imports the tracer)
        from . import engine, forward_ad
        from ..scalar import value
        engine._observers.append(self._on_node)
        value._observers.append(self._on_value)
        forward_ad._observers.append(self._on_tangent)
        return self

    def __exit__(self, *exc):
        from . import engine, forward_ad
        from ..scalar import value
        for lst, fn in ((engine._observers, self._on_node), (value._observers, self._on_value),
                        (forward_ad._observers, self._on_tangent)):
            try:
                lst.remove(fn)
            except ValueError:
                pass
        return False

    def _leaf_name(self, t):
        if t is None:
            return "leaf"
        return self._names.get(id(t)) or f"leaf{tuple(t.shape)}"

    def _on_node(self, node, grads_out, grads_in):
        from .function import AccumulateGrad
        if node.__class__ is AccumulateGrad:
            var = node.variable
            name = self._leaf_name(var)
            after = None if var is None or var._grad is None else var._grad._array.copy()
            edges = [Edge(f"{name}.grad", grads_out[0], f"{name}.grad = {_fmt(after)}", var)]
            self.steps.append(Step(len(self.steps) + 1, node, "AccumulateGrad", list(grads_out), edges))
            return
        edges = []
        for nxt, nr, g in zip(node._next_fns, node._next_nrs, grads_in):
            if nxt is None:
                continue
            if nxt.__class__ is AccumulateGrad:
                into = f"{self._leaf_name(nxt.variable)}.grad (via AccumulateGrad)"
            else:
                into = f"{nxt.name()}'s buffer" + (f" [{nr}]" if nr else "")
            edges.append(Edge(nxt.name(), g, into, nxt))
        self.steps.append(Step(len(self.steps) + 1, node, node.name(), list(grads_out), edges))

    def _on_tangent(self, cls, rule, tangents_in, tangents_out, level):
        name = cls.__name__
        ins = [(i, t._array.copy()) for i, t in enumerate(tangents_in) if t is not None]
        outs = [None if t is None else t._array.copy() for t in tangents_out]
        self.tangents.append(TangentStep(len(self.tangents) + 1, name, rule, ins, outs))

    def _on_value(self, v, grad, kid_grads):
        edges = []
        for k, g in kid_grads:
            name = k.label or (k._op and f"({k._op})") or "leaf"
            edges.append(Edge(name, g, f"{name}.grad = {_fmt(k.grad)}", k))
        name = f"{v.label} [{v._op}]" if v.label else (v._op or "op")
        self.steps.append(Step(len(self.steps) + 1, v, name, [grad], edges))

    # --- showing --------------------------------------------------------------------------------------------
    def tangent_table(self):
        """Forward mode's steps as a text table: each op, the tangents that came in, the one that went out."""
        head = ("step", "op", "tangent in", "-> tangent out", "rule")
        rows = []
        for s in self.tangents:
            gin = ", ".join(f"[{i}] {_fmt(t)}" for i, t in s.tangents_in)
            gout = ", ".join(_fmt(t) for t in s.tangents_out)
            rows.append((str(s.index), s.name, gin, "-> " + gout, s.rule))
        return _columns(head, rows)

    def table(self):
        """The steps as a text table (what ``print()`` shows): forward mode's steps first, if any."""
        if self.tangents:
            back = self._backward_table() if self.steps else ""
            return self.tangent_table() + ("\n\n" + back if back else "")
        return self._backward_table()

    def _backward_table(self):
        head = ("step", "node", "grad in", "-> input", "grad out", "accumulates into")
        rows = []
        for s in self.steps:
            gin = ", ".join(_fmt(g) for g in s.grads_out)
            if not s.edges:
                rows.append((str(s.index), s.name, gin, "", "", ""))
            for j, e in enumerate(s.edges):
                first = j == 0
                rows.append((str(s.index) if first else "", s.name if first else "", gin if first else "",
                             "-> " + e.target, _fmt(e.grad), e.into))
        return _columns(head, rows)

    def print(self, file=None):  # noqa: A003 - t.print(), as the issue names it
        """Print the steps as a table."""
        print(self.table(), file=file or sys.stdout)

    def __str__(self):
        return self.table()

    def __repr__(self):
        more = f", {len(self.tangents)} forward-mode steps" if self.tangents else ""
        return f"<tapegrad.autograd.Trace: {len(self.steps)} steps{more}>"

    def __len__(self):
        return len(self.steps)


def _columns(head, rows):
    widths = [max(len(r[i]) for r in [head] + rows) for i in range(len(head))]
    lines = []
    for r in [head] + rows:
        cells = [r[0].rjust(widths[0])] + [c.ljust(w) for c, w in zip(r[1:], widths[1:])]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines)


def trace(params=None):
    """Record every node the backward engine runs (Tensor and ``scalar.Value`` graphs).

    ``params``: a dict name -> leaf tensor, to name the leaves in the table (e.g. ``dict(model.named_parameters())``).
    """
    return Trace(params)


class _CallableModule(types.ModuleType):
    """``tapegrad.autograd.trace`` is this module *and* the function: ``with tapegrad.autograd.trace() as t:``
    works even after ``import tapegrad.autograd.trace`` (which makes the package attribute the module)."""

    def __call__(self, params=None):
        return Trace(params)


sys.modules[__name__].__class__ = _CallableModule
