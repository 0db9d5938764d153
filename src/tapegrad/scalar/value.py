"""``Value``: one number plus its gradient — the micrograd / seed engine, fast and without recursion.

The idea is the seed's, unchanged: every operation records its inputs (``_prev``) and how to send the gradient
of its output back to them; ``backward()`` visits the graph from the output to the inputs and adds (``+=``)
into every input's ``.grad``.

One difference in *how* the "how to send it back" is stored. The seed (and micrograd) create a closure per
operation. Here each operation stores its **local derivatives** instead — ``d out / d input`` for each input,
numbers computed during forward (for ``out = a * b``: ``(b.data, a.data)``). The chain rule in ``backward()`` is
then one line for every node::

    for child, local in zip(node._kids, node._local):
        child.grad += local * node.grad          # the chain rule: d L/d child += d out/d child * d L/d out

That line is what the seed's ``_backward`` closures do, written once; ``v._backward()`` still exists and runs
it for one node, so the seed's loop ``for v in reversed(topo): v._backward()`` works. A ``_backward`` closure you
assign yourself (``out._backward = my_fn``, as in the seed's exercise "add ``__pow__``") is used as is.

Three more choices make it fast and safe: ``__slots__`` (small objects, quick attribute access); a Python
number on one side of ``+ - * /`` is not wrapped into a ``Value`` node; and the topological order comes from a
creation counter (every node is created after its inputs, so decreasing creation number is a topological order
— no recursive sort, so a chain of a million operations works).

Speed tip: in a big scalar graph most of the time goes to Python's cyclic garbage collector scanning the
hundreds of thousands of live ``Value`` objects. This engine creates no reference cycles (micrograd's closures
do), so ``gc.disable()`` around a training loop is safe here, and several times faster.

Gradients accumulate with ``+=`` into leaves (``backward()`` twice doubles ``a.grad``; ``x * x`` gives
``2 * x``), exactly as in PyTorch: ``backward()`` starts every *interior* node of the graph at 0, so the
leaves get exactly one more copy of the gradient per call. (micrograd leaves stale interior gradients in place,
so a second ``backward()`` through a deeper graph gives its leaves three copies, not two.)
"""

from __future__ import annotations

import itertools
import math
from operator import attrgetter

__all__ = ["Value"]

_tick = itertools.count().__next__   # creation order: children are always created before their parents
_seq_of = attrgetter("_seq")
_new = object.__new__
_observers = []   # callables(node, grad_out, [(child, grad_passed), ...]) — autograd.trace plugs in here
_ONE = (1.0,)
_ONE_ONE = (1.0, 1.0)
_ONE_MINUS = (1.0, -1.0)
_MINUS = (-1.0,)
_INF = float("inf")
_NAN = float("nan")


def _log(x):
    """math.log, with torch's answers instead of an error: -inf at 0, nan below."""
    if x > 0:
        return math.log(x)
    return -_INF if x == 0 else _NAN


def _exp(x):
    try:
        return math.exp(x)
    except OverflowError:
        return _INF


def _pow(x, k):
    """x ** k as a real number (nan where Python would return a complex one, inf for 0 ** negative)."""
    try:
        r = x ** k
    except ZeroDivisionError:
        return _INF
    return _NAN if r.__class__ is complex else r


class Value:
    """A scalar that remembers how it was computed.

    >>> a, b, c = Value(2.0), Value(-3.0), Value(10.0)
    >>> L = a * b + c
    >>> L.backward()
    >>> L.data, a.grad, b.grad, c.grad
    (4.0, -3.0, 2.0, 1.0)
    """

    __slots__ = ("data", "grad", "_kids", "_local", "_op", "label", "_seq")

    def __init__(self, data, _children=(), _op="", label=""):
        if data.__class__ is not float and data.__class__ is not int and hasattr(data, "item"):
            data = data.item()      # a NumPy scalar becomes the same Python number (arithmetic 5x faster)
        self.data = data
        self.grad = 0.0
        self._kids = tuple(_children)
        self._local = None          # tuple of local derivatives, a user's _backward closure, or None (leaf)
        self._op = _op
        self.label = label
        self._seq = _tick()

    # --- the graph, as micrograd names it ---------------------------------------------------------------
    @property
    def _prev(self):
        """The inputs this value was computed from (a set, as in micrograd: ``x * x`` has one)."""
        return set(self._kids)

    @_prev.setter
    def _prev(self, children):
        self._kids = tuple(children)

    @property
    def _backward(self):
        """Send ``self.grad`` to the inputs (``+=``): the seed's closure, for this one node."""
        local = self._local
        if local is None or local.__class__ is tuple:
            return self._chain
        return local

    @_backward.setter
    def _backward(self, fn):
        self._local = fn

    def _chain(self):
        local = self._local
        if local.__class__ is tuple:
            g = self.grad
            for child, d in zip(self._kids, local):
                child.grad += d * g
        elif local is not None:
            local()

    # --- arithmetic -----------------------------------------------------------------------------------
    def __add__(self, other):
        out = _new(Value)
        if isinstance(other, Value):
            out.data = self.data + other.data
            out._kids = (self, other)
            out._local = _ONE_ONE
        else:
            out.data = self.data + other
            out._kids = (self,)
            out._local = _ONE
        out.grad = 0.0
        out._op = "+"
        out.label = ""
        out._seq = _tick()
        return out

    __radd__ = __add__

    def __mul__(self, other):
        out = _new(Value)
        if isinstance(other, Value):
            out.data = self.data * other.data
            out._kids = (self, other)
            out._local = (other.data, self.data)
        else:
            out.data = self.data * other
            out._kids = (self,)
            out._local = (other,)
        out.grad = 0.0
        out._op = "*"
        out.label = ""
        out._seq = _tick()
        return out

    __rmul__ = __mul__

    def __sub__(self, other):
        if isinstance(other, Value):
            return self._make(self.data - other.data, (self, other), _ONE_MINUS, "-")
        return self._make(self.data - other, (self,), _ONE, "-")

    def __rsub__(self, other):
        return self._make(other - self.data, (self,), _MINUS, "-")

    def __truediv__(self, other):
        if isinstance(other, Value):
            b = other.data
            return self._make(self.data / b, (self, other), (1.0 / b, -self.data / (b * b)), "/")
        return self._make(self.data / other, (self,), (1.0 / other,), "/")

    def __rtruediv__(self, other):
        x = self.data
        return self._make(other / x, (self,), (-other / (x * x),), "/")

    def __neg__(self):
        return self._make(-self.data, (self,), _MINUS, "neg")

    def __pos__(self):
        return self

    def __pow__(self, other):
        x = self.data
        if isinstance(other, Value):
            k = other.data
            y = _pow(x, k)
            return self._make(y, (self, other), (k * _pow(x, k - 1), y * _log(x)), "**")
        if not isinstance(other, (int, float)):
            return NotImplemented
        return self._make(_pow(x, other), (self,), (other * _pow(x, other - 1),), f"**{other}")

    def __rpow__(self, other):
        y = _pow(other, self.data)
        return self._make(y, (self,), (y * _log(other),), "**")

    # --- functions ------------------------------------------------------------------------------------
    def exp(self):
        y = _exp(self.data)
        return self._make(y, (self,), (y,), "exp")

    def log(self):
        x = self.data
        return self._make(_log(x), (self,), (1.0 / x if x else _INF,), "log")

    def tanh(self):
        t = math.tanh(self.data)
        return self._make(t, (self,), (1.0 - t * t,), "tanh")

    def relu(self):
        x = self.data
        if x > 0:
            return self._make(x, (self,), _ONE, "ReLU")
        return self._make(0.0 if x == x else x, (self,), (0.0,), "ReLU")

    def sigmoid(self):
        x = self.data
        if x >= 0:
            s = 1.0 / (1.0 + _exp(-x))
        else:
            e = _exp(x)
            s = e / (1.0 + e)
        return self._make(s, (self,), (s * (1.0 - s),), "sigmoid")

    def sin(self):
        return self._make(math.sin(self.data), (self,), (math.cos(self.data),), "sin")

    def cos(self):
        return self._make(math.cos(self.data), (self,), (-math.sin(self.data),), "cos")

    def sqrt(self):
        x = self.data
        r = math.sqrt(x) if x >= 0 else _NAN
        return self._make(r, (self,), (0.5 / r if r else _INF,), "sqrt")

    def __abs__(self):
        x = self.data
        return self._make(abs(x), (self,), (1.0 if x > 0 else (-1.0 if x < 0 else 0.0),), "abs")

    abs = __abs__  # noqa: A003 - Value.abs(), as Tensor.abs()

    @staticmethod
    def _make(data, kids, local, op):
        out = _new(Value)
        out.data = data
        out.grad = 0.0
        out._kids = kids
        out._local = local
        out._op = op
        out.label = ""
        out._seq = _tick()
        return out

    # --- the backward pass ------------------------------------------------------------------------------
    def _topo(self):
        """Every value this one depends on, outputs first (a topological order, found without recursion)."""
        seen = {self}
        stack = [self]
        pop, push, add = stack.pop, stack.append, seen.add
        while stack:
            for k in pop()._kids:
                if k not in seen:
                    add(k)
                    push(k)
        return sorted(seen, key=_seq_of, reverse=True)

    def backward(self, trace=False):
        """Fill ``.grad`` of every value this one depends on with d(self)/d(value), accumulating (``+=``).

        ``trace=True`` records each step of the chain rule, prints it as a table and returns the
        :class:`tapegrad.autograd.trace.Trace` (the same as ``with tapegrad.autograd.trace() as t:``).
        """
        if trace:
            from ..autograd.trace import trace as _trace
            with _trace() as t:
                self.backward()
            t.print()
            return t
        order = self._topo()
        for v in order:
            if v._local is not None:          # interior nodes start at 0; leaves keep accumulating
                v.grad = 0.0
        if self._local is None:
            self.grad += 1.0
        else:
            self.grad = 1.0
        if _observers:
            return _walk_observed(order)
        _ONE_T, tuple_ = _ONE, tuple
        for v in order:
            local = v._local
            if local is None:
                continue
            if local.__class__ is tuple_:
                kids = v._kids
                g = v.grad
                if local is _ONE_ONE:
                    a, b = kids
                    a.grad += g
                    b.grad += g
                elif local is _ONE_T:
                    kids[0].grad += g
                elif len(kids) == 1:
                    kids[0].grad += local[0] * g
                else:
                    a, b = kids
                    da, db = local
                    a.grad += da * g
                    b.grad += db * g
            else:
                local()

    def __repr__(self):
        return f"Value(data={self.data}, grad={self.grad})"


def _walk_observed(order):
    """The same walk, reporting every step to the observers (autograd.trace)."""
    for v in order:
        local = v._local
        if local is None:
            continue
        kids = v._kids
        before = [k.grad for k in kids]
        v._chain()
        if local.__class__ is tuple:
            passed = [d * v.grad for d in local]
        else:   # a user's closure: what it added, read back from the children
            seen, passed = set(), []
            for k, b in zip(kids, before):
                passed.append(None if k in seen else k.grad - b)
                seen.add(k)
        steps = list(zip(kids, passed))
        for obs in list(_observers):
            obs(v, v.grad, steps)
