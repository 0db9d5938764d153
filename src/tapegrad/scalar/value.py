"""``Value``: one number plus its gradient — the micrograd / seed engine, fast and without recursion.

The idea is the seed's, unchanged: every operation records its inputs (``_prev``) and how to send the gradient
of its output back to them; ``backward()`` visits the graph from the output to the inputs and adds (``+=``)
into every input's ``.grad``.

One difference in *how* the "how to send it back" is stored. The seed (and micrograd) create a closure per
operation. Here each operation stores its **local derivatives** instead — ``d out / d input`` for each of its
(at most two) inputs, numbers computed during forward: for ``out = a * b``, inputs ``_k0, _k1 = a, b`` and local
derivatives ``_d0, _d1 = b.data, a.data``. The chain rule in ``backward()`` is then the same two lines for every
node::

    node._k0.grad += node._d0 * node.grad       # d L/d input += d out/d input * d L/d out
    node._k1.grad += node._d1 * node.grad       # (binary ops)

That is what the seed's ``_backward`` closures do, written once; ``v._backward()`` still exists and runs it for
one node, so the seed's loop ``for v in reversed(topo): v._backward()`` works. A ``_backward`` closure you assign
yourself (``out._backward = my_fn``, as in the seed's exercise "add ``__pow__``") is used as is, and
``Value(data, (a, b), "op")`` builds a node exactly as in micrograd.

Why it is fast: an operation allocates exactly one object (micrograd: the Value, a set, a closure, its cells
and often a wrapper Value for a constant), with ``__slots__``; a Python number on one side of ``+ - * /`` is not
wrapped into a node; and the topological order comes from a creation counter (every node is created after its
inputs, so decreasing creation number is a topological order — no recursive sort, so a chain of a million
operations works). Fewer objects also means less work for Python's cyclic garbage collector, which is most of
the time spent on a big scalar graph; this engine creates no reference cycles (micrograd's closures do), so
``gc.disable()`` around a training loop is safe here, and several times faster still.

Gradients accumulate with ``+=`` into leaves (``backward()`` twice doubles ``a.grad``; ``x * x`` gives
``2 * x``), exactly as in PyTorch: ``backward()`` starts every *interior* node of the graph at 0, so the
leaves get exactly one more copy of the gradient per call. (micrograd leaves stale interior gradients in place,
so a second ``backward()`` through a deeper graph gives its leaves three copies, not two.)
"""

from __future__ import annotations

import itertools
import math
import sys
from operator import attrgetter

__all__ = ["Value"]

_tick = itertools.count().__next__   # creation order: children are always created before their parents
_seq_of = attrgetter("_seq")
_new = object.__new__

# --- hook-ins: this engine imports nothing but the standard library; tools plug in from their side -------------
_observers = []   # callables(node, grad_out, [(child, grad_passed), ...]), called at each step of backward()
_tracers = []     # factories of recorders (context managers with .print()) that backward(trace=True) runs under


def _hook_host():
    """A package that embeds this engine (``tapegrad`` for ``tapegrad.scalar``) may define
    ``_hook_scalar(value_module)``: it is called once, as this module loads, to plug the host's tools in (tapegrad
    registers its ``autograd.trace`` in ``_tracers``). On its own, as a top-level package, the engine has no host."""
    host = sys.modules.get(__name__.split(".")[0])
    hook = getattr(host, "_hook_scalar", None) if __name__.count(".") >= 2 else None
    if hook is not None:
        hook(sys.modules[__name__])


class _UserNode:
    """Marks ``_k0`` of a node whose inputs and backward come from the user (``Value(x, children)``, or an
    assigned ``_backward``): its inputs are in ``_xk`` and its backward is ``_fn``."""

    __slots__ = ()

    def __repr__(self):
        return "<user node>"


_USER = _UserNode()
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

    # _k0/_k1: the inputs (None: leaf / unary), _d0/_d1: their local derivatives, _seq: creation number.
    # A node built by the user has _k0 = _USER, its inputs in _xk and its backward in _fn.
    __slots__ = ("data", "grad", "_k0", "_k1", "_d0", "_d1", "_op", "label", "_seq", "_fn", "_xk")

    def __init__(self, data, _children=(), _op="", label=""):
        if data.__class__ is not float and data.__class__ is not int and hasattr(data, "item"):
            data = data.item()      # a NumPy scalar becomes the same Python number (arithmetic 5x faster)
        self.data = data
        self.grad = 0.0
        self._k1 = None
        self._d0 = self._d1 = 0.0
        self._fn = None
        if _children:
            self._k0, self._xk = _USER, tuple(_children)
        else:
            self._k0 = self._xk = None
        self._op = _op
        self.label = label
        self._seq = _tick()

    # --- the graph, as micrograd names it ---------------------------------------------------------------
    @property
    def _kids(self):
        """The inputs, in order, as a tuple (``x * x`` has ``(x, x)``)."""
        k0 = self._k0
        if k0 is None:
            return ()
        if k0 is _USER:
            return self._xk
        k1 = self._k1
        return (k0,) if k1 is None else (k0, k1)

    @property
    def _prev(self):
        """The inputs this value was computed from (a set, as in micrograd: ``x * x`` has one)."""
        return set(self._kids)

    @_prev.setter
    def _prev(self, children):
        fn = self._fn if self._k0 is _USER else None
        self._k0, self._xk, self._fn = _USER, tuple(children), fn

    @property
    def _local(self):
        """The local derivatives ``d self / d input`` (a tuple; None for a leaf or a user-built node)."""
        k0 = self._k0
        if k0 is None or k0 is _USER:
            return None
        return (self._d0,) if self._k1 is None else (self._d0, self._d1)

    @property
    def _backward(self):
        """Send ``self.grad`` to the inputs (``+=``): the seed's closure, for this one node."""
        if self._k0 is _USER and self._fn is not None:
            return self._fn
        return self._chain

    @_backward.setter
    def _backward(self, fn):
        if self._k0 is not _USER:
            self._xk = self._kids
            self._k0 = _USER
        self._fn = fn

    def _chain(self):
        a = self._k0
        if a is None:
            return
        if a is _USER:
            if self._fn is not None:
                self._fn()
            return
        g = self.grad
        a.grad += self._d0 * g
        b = self._k1
        if b is not None:
            b.grad += self._d1 * g

    # --- arithmetic (the two hot ones written out) ----------------------------------------------------
    def __add__(self, other):
        out = _new(Value)
        if isinstance(other, Value):
            out.data = self.data + other.data
            out._k1 = other
            out._d1 = 1.0
        else:
            out.data = self.data + other
            out._k1 = None
        out._k0 = self
        out._d0 = 1.0
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
            out._k1 = other
            out._d0 = other.data
            out._d1 = self.data
        else:
            out.data = self.data * other
            out._k1 = None
            out._d0 = other
        out._k0 = self
        out.grad = 0.0
        out._op = "*"
        out.label = ""
        out._seq = _tick()
        return out

    __rmul__ = __mul__

    def __sub__(self, other):
        if isinstance(other, Value):
            return self._bin(self.data - other.data, other, 1.0, -1.0, "-")
        return self._un(self.data - other, 1.0, "-")

    def __rsub__(self, other):
        return self._un(other - self.data, -1.0, "-")

    def __truediv__(self, other):
        if isinstance(other, Value):
            b = other.data
            return self._bin(self.data / b, other, 1.0 / b, -self.data / (b * b), "/")
        return self._un(self.data / other, 1.0 / other, "/")

    def __rtruediv__(self, other):
        x = self.data
        return self._un(other / x, -other / (x * x), "/")

    def __neg__(self):
        return self._un(-self.data, -1.0, "neg")

    def __pos__(self):
        return self

    def __pow__(self, other):
        x = self.data
        if isinstance(other, Value):
            k = other.data
            y = _pow(x, k)
            return self._bin(y, other, k * _pow(x, k - 1), y * _log(x), "**")
        if not isinstance(other, (int, float)):
            return NotImplemented
        return self._un(_pow(x, other), other * _pow(x, other - 1), f"**{other}")

    def __rpow__(self, other):
        y = _pow(other, self.data)
        return self._un(y, y * _log(other), "**")

    # --- functions ------------------------------------------------------------------------------------
    def exp(self):
        y = _exp(self.data)
        return self._un(y, y, "exp")

    def log(self):
        x = self.data
        return self._un(_log(x), 1.0 / x if x else _INF, "log")

    def tanh(self):
        t = math.tanh(self.data)
        return self._un(t, 1.0 - t * t, "tanh")

    def relu(self):
        out = _new(Value)
        x = self.data
        if x > 0:
            out.data = x
            out._d0 = 1.0
        else:
            out.data = 0.0 if x == x else x
            out._d0 = 0.0
        out._k0 = self
        out._k1 = None
        out.grad = 0.0
        out._op = "ReLU"
        out.label = ""
        out._seq = _tick()
        return out

    def sigmoid(self):
        x = self.data
        if x >= 0:
            s = 1.0 / (1.0 + _exp(-x))
        else:
            e = _exp(x)
            s = e / (1.0 + e)
        return self._un(s, s * (1.0 - s), "sigmoid")

    def sin(self):
        return self._un(math.sin(self.data), math.cos(self.data), "sin")

    def cos(self):
        return self._un(math.cos(self.data), -math.sin(self.data), "cos")

    def sqrt(self):
        x = self.data
        r = math.sqrt(x) if x >= 0 else _NAN
        return self._un(r, 0.5 / r if r else _INF, "sqrt")

    def __abs__(self):
        x = self.data
        return self._un(abs(x), 1.0 if x > 0 else (-1.0 if x < 0 else 0.0), "abs")

    abs = __abs__  # noqa: A003 - Value.abs(), as Tensor.abs()

    def _un(self, data, d, op):
        """A new node with one input (self) and local derivative ``d``."""
        out = _new(Value)
        out.data = data
        out.grad = 0.0
        out._k0 = self
        out._k1 = None
        out._d0 = d
        out._op = op
        out.label = ""
        out._seq = _tick()
        return out

    def _bin(self, data, other, d0, d1, op):
        """A new node with inputs (self, other) and local derivatives ``d0``, ``d1``."""
        out = _new(Value)
        out.data = data
        out.grad = 0.0
        out._k0 = self
        out._k1 = other
        out._d0 = d0
        out._d1 = d1
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
            v = pop()
            k = v._k0
            if k is None:
                continue
            if k is _USER:
                for k in v._xk:
                    if k not in seen:
                        add(k)
                        push(k)
                continue
            if k not in seen:
                add(k)
                push(k)
            k = v._k1
            if k is not None and k not in seen:
                add(k)
                push(k)
        return sorted(seen, key=_seq_of, reverse=True)

    def backward(self, trace=False):
        """Fill ``.grad`` of every value this one depends on with d(self)/d(value), accumulating (``+=``).

        ``trace=True`` records each step of the chain rule under the tracer hooked into ``_tracers``, prints it
        as a table and returns the record (in tapegrad: a :class:`tapegrad.autograd.trace.Trace`, the same as
        ``with tapegrad.autograd.trace() as t:``).
        """
        if trace:
            if not _tracers:
                raise RuntimeError("backward(trace=True): no tracer is hooked into this engine (tapegrad hooks in "
                                   "autograd.trace; on its own, pass callables to value._observers to watch each "
                                   "step)")
            with _tracers[-1]() as t:
                self.backward()
            t.print()
            return t
        order = self._topo()
        for v in order:
            if v._k0 is not None:          # interior nodes start at 0; leaves keep accumulating
                v.grad = 0.0
        if self._k0 is None:
            self.grad += 1.0
        else:
            self.grad = 1.0
        if _observers:
            return _walk_observed(order)
        user = _USER
        for v in order:
            a = v._k0
            if a is None:
                continue
            if a is user:
                if v._fn is not None:
                    v._fn()
                continue
            g = v.grad
            a.grad += v._d0 * g
            b = v._k1
            if b is not None:
                b.grad += v._d1 * g

    def __repr__(self):
        return f"Value(data={self.data}, grad={self.grad})"


def _walk_observed(order):
    """The same walk, reporting every step to the observers (autograd.trace)."""
    for v in order:
        if v._k0 is None:
            continue
        kids = v._kids
        local = v._local
        before = [k.grad for k in kids]
        v._chain()
        if local is not None:
            passed = [d * v.grad for d in local]
        else:   # a user's closure: what it added, read back from the inputs
            seen, passed = set(), []
            for k, b in zip(kids, before):
                passed.append(None if k in seen else k.grad - b)
                seen.add(k)
        steps = list(zip(kids, passed))
        for obs in list(_observers):
            obs(v, v.grad, steps)


_hook_host()
