"""The semantic floor (W2, W3, W6): the least a NumPy engine pays per op for torch's core autograd bookkeeping.

An informational engine, not a product. Where W2's "Python floor" is a bare tape (one object and one node per op,
a linked list walked backwards), this one does, per op, what PyTorch's semantics require of any engine:

forward: dispatch from a Tensor operator or function; the grad-mode check; requires_grad of every input; the
dtype check (same dtype, else promotion); an output Tensor; a node with one edge per input (its node and output
number), the inputs' shapes and dtypes (to check the gradients that come back), ``needs_input_grad`` and a
sequence number (the topological order); saved inputs kept with the version they had (a product's operands
only for each other's gradient, as torch keeps them), a saved output kept without a reference cycle (its array
and its shared version counter);

backward: every reachable node found and ordered; per node its gradient buffer, the version check of what it
saved, its formula on arrays, the release of what it saved (a second backward must fail), each input gradient
checked against the input's shape (reduced where it was broadcast) and dtype, and routed to the next node (summed
where paths meet); a leaf's gradient kept (or added) into ``.grad``.

Left out, though tapegrad has them: hooks, retain_grad, anomaly mode, create_graph, views and in-place ops,
user Functions, multiple outputs, non-floating outputs, scalar-operand promotion, warnings silenced, errors that
name the op. So a real engine with torch's semantics costs at least this much per op, and more.
"""

from __future__ import annotations

from operator import attrgetter

import numpy as np
from _common import relu

_grad_enabled = [True]
_seq = [0]


class Tensor:
    __slots__ = ("data", "requires_grad", "grad_fn", "output_nr", "grad", "vc", "acc")

    def __init__(self, data, requires_grad=False):
        self.data, self.requires_grad, self.grad_fn, self.output_nr = data, requires_grad, None, 0
        self.grad = self.vc = self.acc = None

    def __add__(self, other):
        return Add.apply(self, other)

    def __mul__(self, other):
        return Mul.apply(self, other)

    def sum(self):
        return Sum.apply(self)

    def backward(self):
        backward(self)

    # (what the workloads' shared source calls: ``chain_engine(T, ...)`` runs on this module as on torch)
    def requires_grad_(self):
        self.requires_grad = True
        return self

    def detach(self):
        return Tensor(self.data)

    def numpy(self):
        return np.asarray(self.data)


class Node:
    __slots__ = ("next_fns", "next_nrs", "input_meta", "needs_input_grad", "seq", "saved", "versions")
    backward = None

    def saved_arrays(self):
        if self.saved is _FREED:
            raise RuntimeError("Trying to backward through the graph a second time")
        out = []
        for s, v in zip(self.saved, self.versions):
            if s is None:          # not kept: no gradient needs it
                out.append(None)
                continue
            vc = s.vc
            if (0 if vc is None else vc[0]) != v:
                raise RuntimeError("one of the variables needed for gradient computation has been modified")
            out.append(s.data)
        return out


_FREED = ("freed",)


class AccumulateGrad(Node):
    __slots__ = ("variable",)


class _SavedOutput:
    """An output kept by its own node: its array and version counter, not the Tensor (no reference cycle)."""

    __slots__ = ("data", "vc")

    def __init__(self, t):
        if t.vc is None:
            t.vc = [0]
        self.data, self.vc = t.data, t.vc


class Function:
    save = ()          # positions of inputs to save; "out" saves the output; "crossed": operand 0 only for operand
    #                    1's gradient and the other way round (torch's product rule)

    @classmethod
    def apply(cls, *args):
        raw = [a.data for a in args]
        if _grad_enabled[0]:
            for a in args:
                if a.requires_grad:
                    return cls._record(args, raw)
        return Tensor(cls.forward(*raw))

    @classmethod
    def _record(cls, args, raw):
        node = cls.Node()
        fns, nrs, meta, need = [], [], [], []
        for a in args:
            if a.requires_grad:
                fn = a.grad_fn
                if fn is None:
                    fn = a.acc
                    if fn is None:
                        fn = a.acc = AccumulateGrad()
                        fn.variable, fn.seq, fn.next_fns = a, -1, ()
                fns.append(fn)
                nrs.append(a.output_nr)
                meta.append((a.data.shape, a.data.dtype))
                need.append(True)
            else:
                fns.append(None)
                nrs.append(0)
                meta.append(None)
                need.append(False)
        node.next_fns, node.next_nrs, node.input_meta, node.needs_input_grad = \
            tuple(fns), tuple(nrs), tuple(meta), tuple(need)
        out = Tensor(cls.forward(*raw), True)
        out.grad_fn = node
        _seq[0] += 1
        node.seq = _seq[0]
        if cls.save == "out":
            node.saved, node.versions = (_SavedOutput(out),), (0,)
        elif cls.save:
            if cls.save == "crossed":
                i, j = cls.crossed
                saved = (args[i] if need[j] else None, args[j] if need[i] else None)
            else:
                saved = tuple(args[i] for i in cls.save)
            node.saved = saved
            node.versions = tuple(0 if s is None or s.vc is None else s.vc[0] for s in saved)
        else:
            node.saved = None
        return out


def _node(name, cls):
    cls.Node = type(name, (Node,), {"__slots__": (), "backward": staticmethod(cls.backward)})
    return cls


def _same_dtype(a, b):
    if a.dtype != b.dtype:
        d = np.result_type(a, b)
        a, b = a.astype(d), b.astype(d)
    return a, b


class Add(Function):
    @staticmethod
    def forward(a, b):
        a, b = _same_dtype(a, b)
        return a + b

    @staticmethod
    def backward(node, g):
        return g, g


class Mul(Function):
    save, crossed = "crossed", (0, 1)

    @staticmethod
    def forward(a, b):
        a, b = _same_dtype(a, b)
        return a * b

    @staticmethod
    def backward(node, g):
        a, b = node.saved_arrays()
        need = node.needs_input_grad
        return (g * b if need[0] else None), (g * a if need[1] else None)


class Tanh(Function):
    save = "out"
    forward = staticmethod(np.tanh)

    @staticmethod
    def backward(node, g):
        (y,) = node.saved_arrays()
        return (g * (1 - y * y),)


class Exp(Function):
    save = "out"
    forward = staticmethod(np.exp)

    @staticmethod
    def backward(node, g):
        (y,) = node.saved_arrays()
        return (g * y,)


class Log(Function):
    save = (0,)
    forward = staticmethod(np.log)

    @staticmethod
    def backward(node, g):
        (x,) = node.saved_arrays()
        return (g / x,)


class Sigmoid(Function):
    save = "out"

    @staticmethod
    def forward(x):
        t = np.exp(-x)
        t += 1
        return np.reciprocal(t, out=t)

    @staticmethod
    def backward(node, g):
        (y,) = node.saved_arrays()
        return (g * (y * (1 - y)),)


class Sum(Function):
    @staticmethod
    def forward(x):
        return np.asarray(x.sum())

    @staticmethod
    def backward(node, g):
        return (np.broadcast_to(g, node.input_meta[0][0]),)


# --- W3's ops: linear (addmm), relu, log_softmax, nll_loss (mean) ---------------------------------------------
class Addmm(Function):
    save, crossed = "crossed", (1, 2)

    @staticmethod
    def forward(bias, x, w):
        if not x.dtype == w.dtype == bias.dtype:
            raise RuntimeError("dtypes differ")
        out = x @ w.T
        out += bias
        return out

    @staticmethod
    def backward(node, g):
        x, w = node.saved_arrays()
        need = node.needs_input_grad
        return (g.sum(0) if need[0] else None), (g @ w if need[1] else None), (g.T @ x if need[2] else None)


class Relu(Function):
    save = "out"

    @staticmethod
    def forward(x):
        return relu(x)

    @staticmethod
    def backward(node, g):
        (y,) = node.saved_arrays()
        return (g * (y > 0),)


class LogSoftmax(Function):
    save = "out"

    @staticmethod
    def forward(x):
        s = x - np.maximum.reduce(x, axis=1, keepdims=True)
        return s - np.log(np.add.reduce(np.exp(s), axis=1, keepdims=True))

    @staticmethod
    def backward(node, g):
        (y,) = node.saved_arrays()
        return (g - np.exp(y) * np.add.reduce(g, axis=1, keepdims=True),)


class NllLoss(Function):
    save = (1,)

    @staticmethod
    def forward(x, t):
        if t.dtype.kind not in "iu" or t.min() < 0 or t.max() >= x.shape[1]:
            raise IndexError("target out of bounds")
        return np.asarray(-x[np.arange(len(t)), t].sum() / x.dtype.type(len(t)), x.dtype)

    @staticmethod
    def backward(node, g):
        (t,) = node.saved_arrays()
        shape, dtype = node.input_meta[0]
        m = np.zeros(shape, dtype)
        m[np.arange(len(t)), t] = -g / dtype.type(len(t))
        return m, None


for _name, _cls in (("AddBackward0", Add), ("MulBackward0", Mul), ("TanhBackward0", Tanh),
                    ("ExpBackward0", Exp), ("LogBackward0", Log), ("SigmoidBackward0", Sigmoid),
                    ("SumBackward0", Sum), ("AddmmBackward0", Addmm), ("ReluBackward0", Relu),
                    ("LogSoftmaxBackward0", LogSoftmax), ("NllLossBackward0", NllLoss)):
    _node(_name, _cls)

tanh, exp, log, sigmoid = Tanh.apply, Exp.apply, Log.apply, Sigmoid.apply
from_numpy = Tensor
_by_seq = attrgetter("seq")


class MLP:
    """W3's model and step on this engine: linear/relu layers, log_softmax + nll_loss, then torch's SGD with
    momentum on the parameters' arrays (in place, each parameter's version bumped, as an optimizer must)."""

    def __init__(self, state, batches, lr, momentum):
        self.keys = list(state)
        self.params = [Tensor(state[k].copy(), True) for k in self.keys]
        self.bufs = [None] * len(self.params)
        self.batches = [(Tensor(x), Tensor(y)) for x, y in batches]
        self.lr, self.momentum, self.i = lr, momentum, 0

    def step(self):
        x, y = self.batches[self.i % len(self.batches)]
        self.i += 1
        ps = self.params
        for p in ps:
            p.grad = None
        a, n = x, len(ps) // 2
        for li in range(n):
            a = Addmm.apply(ps[2 * li + 1], a, ps[2 * li])
            if li < n - 1:
                a = Relu.apply(a)
        loss = NllLoss.apply(LogSoftmax.apply(a), y)
        loss.backward()
        for i, p in enumerate(ps):
            g = p.grad.data
            buf = self.bufs[i]
            if buf is None:
                buf = self.bufs[i] = g.copy()
            else:
                buf *= self.momentum
                buf += g
            p.data -= self.lr * buf
            if p.vc is not None:
                p.vc[0] += 1
        return loss.data

    def state(self):
        return {k: p.data for k, p in zip(self.keys, self.params)}


def backward(root):
    order, seen, stack = [], set(), [root.grad_fn]
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        order.append(node)
        for nxt in node.next_fns:
            if nxt is not None and nxt not in seen:
                stack.append(nxt)
    order.sort(key=_by_seq, reverse=True)
    buffers = {root.grad_fn: [np.ones_like(root.data)]}
    prev, _grad_enabled[0] = _grad_enabled[0], False
    try:
        for node in order:
            buf = buffers.pop(node, None)
            if buf is None:
                continue
            if node.__class__ is AccumulateGrad:
                var = node.variable
                if var.grad is None:
                    var.grad = Tensor(buf[0])
                else:
                    var.grad.data += buf[0]
                continue
            grads = node.backward(node, *buf)
            if node.saved is not None:
                node.saved = _FREED
            for nxt, nr, g, meta in zip(node.next_fns, node.next_nrs, grads, node.input_meta):
                if nxt is None or g is None:
                    continue
                if g.shape != meta[0]:
                    g = np.sum(g, axis=tuple(range(g.ndim - len(meta[0]))))
                if g.dtype != meta[1]:
                    g = g.astype(meta[1])
                b = buffers.get(nxt)
                if b is None:
                    buffers[nxt] = [g]
                else:
                    b[nr] = b[nr] + g
    finally:
        _grad_enabled[0] = prev


# --- W3's model code on this engine: the least of torch's nn.Module and optim.SGD protocols -------------------
# W3's tapegrad and torch run ``nn.Sequential(nn.Linear, nn.ReLU, ...)``, ``F.cross_entropy`` and
# ``optim.SGD(momentum=0.9)``. What those protocols require of any implementation, and only that: a module call
# checks the module's hooks (and the global ones) before running forward; a parameter lives in the module's
# ``_parameters`` (found by ``__getattr__``, as torch stores it), a child in ``_modules``; the optimizer reads
# each group's hyper-parameters at every step (a user may change ``lr`` between steps), skips parameters without
# a gradient, keeps a per-parameter state dict, updates in place and bumps each updated parameter's version.
# Left out: hook calling, state_dict, train/eval, devices and dtypes, every option (nesterov, weight decay ...).

_global_forward_hooks = {}


class Module:
    def __init__(self):
        d = self.__dict__
        d["_parameters"], d["_modules"] = {}, {}
        d["_forward_hooks"], d["_forward_pre_hooks"], d["_backward_hooks"] = {}, {}, {}

    def __setattr__(self, name, value):
        if isinstance(value, Tensor) and value.requires_grad:
            self._parameters[name] = value
        elif isinstance(value, Module):
            self._modules[name] = value
        else:
            object.__setattr__(self, name, value)

    def __getattr__(self, name):
        d = self.__dict__
        if name in d["_parameters"]:
            return d["_parameters"][name]
        if name in d["_modules"]:
            return d["_modules"][name]
        raise AttributeError(name)

    def __call__(self, *args):
        if self._forward_hooks or self._forward_pre_hooks or self._backward_hooks or _global_forward_hooks:
            raise NotImplementedError("hooks are not part of the floor")
        return self.forward(*args)

    def parameters(self):
        out = list(self._parameters.values())
        for m in self._modules.values():
            out.extend(m.parameters())
        return out


class Linear(Module):
    def __init__(self, weight, bias):
        super().__init__()
        self.weight, self.bias = weight, bias

    def forward(self, x):
        return Addmm.apply(self.bias, x, self.weight)


class ReLU(Module):
    def forward(self, x):
        return Relu.apply(x)


class Sequential(Module):
    def __init__(self, *modules):
        super().__init__()
        for i, m in enumerate(modules):
            self._modules[str(i)] = m

    def forward(self, x):
        for m in self._modules.values():
            x = m(x)
        return x


def cross_entropy(logits, target):
    return NllLoss.apply(LogSoftmax.apply(logits), target)


class SGD:
    def __init__(self, params, lr, momentum):
        self.param_groups = [{"params": list(params), "lr": lr, "momentum": momentum}]
        self.state = {}

    def zero_grad(self):
        for group in self.param_groups:
            for p in group["params"]:
                p.grad = None

    def step(self):
        for group in self.param_groups:
            lr, momentum = group["lr"], group["momentum"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                g = p.grad.data
                state = self.state.get(p)
                if state is None:
                    state = self.state[p] = {}
                buf = state.get("momentum_buffer")
                if buf is None:
                    buf = state["momentum_buffer"] = g.copy()
                else:
                    buf *= momentum
                    buf += g
                p.data -= lr * buf
                if p.vc is not None:
                    p.vc[0] += 1


class ModelMLP:
    """W3's step through the model code above: ``opt.zero_grad(); cross_entropy(model(x), y).backward();
    opt.step()`` — what tapegrad and torch run, on the semantic floor's ops."""

    def __init__(self, state, batches, lr, momentum):
        n = len(state) // 2
        layers = []
        for li in range(n):
            layers.append(Linear(Tensor(state[f"{2 * li}.weight"].copy(), True),
                                 Tensor(state[f"{2 * li}.bias"].copy(), True)))
            if li < n - 1:
                layers.append(ReLU())
        self.model = Sequential(*layers)
        self.opt = SGD(self.model.parameters(), lr, momentum)
        self.batches = [(Tensor(x), Tensor(y)) for x, y in batches]
        self.i = 0

    def step(self):
        x, y = self.batches[self.i % len(self.batches)]
        self.i += 1
        self.opt.zero_grad()
        loss = cross_entropy(self.model(x), y)
        loss.backward()
        self.opt.step()
        return loss.data

    def state(self):
        out = {}
        for k, m in self.model._modules.items():
            for name, p in m._parameters.items():
                out[f"{k}.{name}"] = p.data
        return out
