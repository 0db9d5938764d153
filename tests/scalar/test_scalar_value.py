"""tapegrad.scalar.Value: micrograd's own engine tests (torch as oracle), the seed's examples, += semantics."""

import math
import random

import pytest

from tapegrad.scalar import Value
from tapegrad.scalar import nn as snn
from tapegrad.scalar import ops as sops


def test_sanity_check(torch):
    # micrograd/test/test_engine.py::test_sanity_check
    x = Value(-4.0)
    z = 2 * x + 2 + x
    q = z.relu() + z * x
    h = (z * z).relu()
    y = h + q + q * x
    y.backward()
    xmg, ymg = x, y

    x = torch.Tensor([-4.0]).double()
    x.requires_grad = True
    z = 2 * x + 2 + x
    q = z.relu() + z * x
    h = (z * z).relu()
    y = h + q + q * x
    y.backward()
    xpt, ypt = x, y

    assert ymg.data == ypt.data.item()
    assert xmg.grad == xpt.grad.item()


def test_more_ops(torch):
    # micrograd/test/test_engine.py::test_more_ops
    a = Value(-4.0)
    b = Value(2.0)
    c = a + b
    d = a * b + b**3
    c += c + 1
    c += 1 + c + (-a)
    d += d * 2 + (b + a).relu()
    d += 3 * d + (b - a).relu()
    e = c - d
    f = e**2
    g = f / 2.0
    g += 10.0 / f
    g.backward()
    amg, bmg, gmg = a, b, g

    a = torch.Tensor([-4.0]).double()
    b = torch.Tensor([2.0]).double()
    a.requires_grad = True
    b.requires_grad = True
    c = a + b
    d = a * b + b**3
    c = c + c + 1
    c = c + 1 + c + (-a)
    d = d + d * 2 + (b + a).relu()
    d = d + 3 * d + (b - a).relu()
    e = c - d
    f = e**2
    g = f / 2.0
    g = g + 10.0 / f
    g.backward()
    apt, bpt, gpt = a, b, g

    tol = 1e-6
    assert abs(gmg.data - gpt.data.item()) < tol
    assert abs(amg.grad - apt.grad.item()) < tol
    assert abs(bmg.grad - bpt.grad.item()) < tol


UNARY = [
    ("exp", lambda v: v.exp(), lambda t: t.exp(), [-1.5, 0.3, 2.0]),
    ("log", lambda v: v.log(), lambda t: t.log(), [0.2, 1.0, 3.5]),
    ("tanh", lambda v: v.tanh(), lambda t: t.tanh(), [-2.0, 0.1, 1.3]),
    ("relu", lambda v: v.relu(), lambda t: t.relu(), [-2.0, 0.5, 3.0]),
    ("sigmoid", lambda v: v.sigmoid(), lambda t: t.sigmoid(), [-30.0, -1.0, 0.0, 2.5, 40.0]),
    ("sin", lambda v: v.sin(), lambda t: t.sin(), [-1.0, 0.4, 2.2]),
    ("cos", lambda v: v.cos(), lambda t: t.cos(), [-1.0, 0.4, 2.2]),
    ("sqrt", lambda v: v.sqrt(), lambda t: t.sqrt(), [0.25, 2.0, 9.0]),
    ("abs", lambda v: abs(v), lambda t: t.abs(), [-2.5, 1.5]),
    ("abs_method", lambda v: v.abs(), lambda t: t.abs(), [-2.5, 1.5]),
    ("neg", lambda v: -v, lambda t: -t, [1.5]),
    ("pow_int", lambda v: v ** 3, lambda t: t ** 3, [-1.5, 2.0]),
    ("pow_float", lambda v: v ** 0.5, lambda t: t ** 0.5, [0.7, 4.0]),
    ("pow_neg", lambda v: v ** -2, lambda t: t ** -2, [-1.5, 0.5]),
    ("rpow", lambda v: 2.0 ** v, lambda t: 2.0 ** t, [-1.0, 0.5, 3.0]),
    ("rsub", lambda v: 3.0 - v, lambda t: 3.0 - t, [1.25]),
    ("rdiv", lambda v: 3.0 / v, lambda t: 3.0 / t, [-2.0, 0.5]),
    ("div_num", lambda v: v / 4.0, lambda t: t / 4.0, [3.0]),
    ("radd_rmul", lambda v: 2 + 3 * v, lambda t: 2 + 3 * t, [1.5]),
]


@pytest.mark.parametrize("name,fv,ft,xs", UNARY, ids=[u[0] for u in UNARY])
def test_unary_vs_torch(torch, name, fv, ft, xs):
    for x0 in xs:
        x = Value(x0)
        y = fv(x)
        y.backward()
        xt = torch.tensor(x0, dtype=torch.float64, requires_grad=True)
        yt = ft(xt)
        yt.backward()
        assert y.data == pytest.approx(yt.item(), rel=1e-12, abs=1e-15)
        assert x.grad == pytest.approx(xt.grad.item(), rel=1e-12, abs=1e-15)


BINARY = [
    ("add", lambda a, b: a + b), ("sub", lambda a, b: a - b), ("mul", lambda a, b: a * b),
    ("div", lambda a, b: a / b), ("pow", lambda a, b: a ** b), ("mixed", lambda a, b: (a * b + a / b).tanh() * b),
]


@pytest.mark.parametrize("name,f", BINARY, ids=[b[0] for b in BINARY])
def test_binary_vs_torch(torch, name, f):
    a, b = Value(1.7), Value(-0.6)
    y = f(a, b)
    y.backward()
    at = torch.tensor(1.7, dtype=torch.float64, requires_grad=True)
    bt = torch.tensor(-0.6, dtype=torch.float64, requires_grad=True)
    yt = f(at, bt)
    yt.backward()
    assert y.data == pytest.approx(yt.item(), rel=1e-12)
    assert a.grad == pytest.approx(at.grad.item(), rel=1e-12)
    assert b.grad == pytest.approx(bt.grad.item(), rel=1e-12)


def test_edge_values_follow_torch(torch):
    # where Python's math would raise, the engine gives torch's answers
    for f in (lambda v: v.sqrt(), lambda v: v.log(), lambda v: v ** 0.5):
        x = Value(0.0)
        y = f(x)
        y.backward()
        xt = torch.tensor(0.0, dtype=torch.float64, requires_grad=True)
        yt = f(xt)
        yt.backward()
        assert y.data == yt.item() and x.grad == xt.grad.item()
    assert math.isnan(Value(-1.0).log().data) and math.isnan((Value(-8.0) ** (1 / 3)).data)
    assert Value(1000.0).exp().data == math.inf


def test_seed_example_L():
    a, b, c = Value(2.0), Value(-3.0), Value(10.0)
    L = a * b + c
    L.backward()
    assert (L.data, a.grad, b.grad, c.grad) == (4.0, -3.0, 2.0, 1.0)
    assert L._op == "+" and {p._op for p in L._prev} == {"*", ""}
    assert repr(L) == "Value(data=4.0, grad=1.0)"


def test_backward_twice_doubles_leaf_grads():
    # seed micro-task 2: leaves accumulate (+=); only the output is reset
    a, b = Value(2.0), Value(-3.0)
    L = a * b
    L.backward()
    assert a.grad == -3.0
    L.backward()
    assert a.grad == -6.0 and b.grad == 4.0
    # a deeper graph doubles too (interior nodes restart at 0 each call, as in PyTorch)
    a, b = Value(2.0), Value(-3.0)
    L = (a * b + a).tanh()
    L.backward()
    g1 = (a.grad, b.grad)
    L.backward()
    assert (a.grad, b.grad) == pytest.approx((2 * g1[0], 2 * g1[1]))


def test_x_times_x_is_2x():
    # seed micro-task 3: one edge in _prev (a set), two += in the backward
    x = Value(5.0)
    f = x * x
    f.backward()
    assert x.grad == 10.0
    assert f._prev == {x} and isinstance(f._prev, set)


def test_relu_dead_zone():
    # seed micro-task 1
    grads = {}
    for x0 in (3.0, -3.0):
        x, w = Value(x0), Value(2.0)
        y = (x * w).relu()
        y.backward()
        grads[x0] = (y.data, x.grad, w.grad)
    assert grads[3.0] == (6.0, 2.0, 3.0)
    assert grads[-3.0] == (0.0, 0.0, 0.0)


def test_seed_loop_with_backward_closures():
    # the seed's own backward: a recursive topo sort then v._backward() in reverse
    a, b, c = Value(2.0), Value(-3.0), Value(10.0)
    L = a * b + c
    topo, visited = [], set()

    def build(v):
        if v not in visited:
            visited.add(v)
            for child in v._prev:
                build(child)
            topo.append(v)
    build(L)
    L.grad = 1.0
    for v in reversed(topo):
        v._backward()
    assert (a.grad, b.grad, c.grad) == (-3.0, 2.0, 1.0)


def test_user_defined_op_with_closure():
    # the seed's exercise 1, done the seed's way: an op whose _backward is a closure
    def cube(self):
        out = Value(self.data ** 3, (self,), "**3")

        def _backward():
            self.grad += 3 * self.data ** 2 * out.grad
        out._backward = _backward
        return out

    x = Value(3.0)
    y = cube(x) * 2.0
    y.backward()
    assert x.grad == 54.0
    assert callable(y._backward)


def test_constructor_signature_and_label():
    v = Value(1.5, (), "", label="w")
    assert (v.data, v.grad, v._op, v.label, v._prev) == (1.5, 0.0, "", "w", set())
    leaf = Value(3.0)
    leaf.backward()
    assert leaf.grad == 1.0


def test_million_op_chain():
    x = Value(1.0)
    y = x
    for _ in range(1_000_000):
        y = y * 1.000001
    y.backward()
    assert x.grad == pytest.approx(1.000001 ** 1_000_000, rel=1e-9)


def test_matches_micrograd_mlp():
    mg = pytest.importorskip("micrograd.nn")
    xs = [[0.5, -1.0], [1.5, 0.25], [-0.3, 0.8]]
    res = []
    for mod in (snn, mg):
        random.seed(7)
        model = mod.MLP(2, [8, 8, 1])
        loss = sum((1 + -y * model(x)).relu() for x, y in zip(xs, [1, -1, 1])) + 1e-3 * sum(
            p * p for p in model.parameters())
        model.zero_grad()
        loss.backward()
        res.append((loss.data, [p.grad for p in model.parameters()]))
    assert res[0][0] == pytest.approx(res[1][0], rel=1e-12)
    assert res[0][1] == pytest.approx(res[1][1], rel=1e-12, abs=1e-15)


def test_nn_parameters_and_zero_grad():
    random.seed(0)
    model = snn.MLP(3, [4, 4, 1])
    assert len(model.parameters()) == 4 * 4 + 4 * 5 + 5
    out = model([1.0, -2.0, 0.5])
    out.backward()
    assert any(p.grad != 0 for p in model.parameters())
    model.zero_grad()
    assert all(p.grad == 0 for p in model.parameters())
    assert repr(model).startswith("MLP of [Layer of [ReLUNeuron(3)")
    assert isinstance(model.layers[0]([1.0, 2.0, 3.0]), list)


def test_seed_ops_example():
    a, b, c, d = 2, 3, 2, 2
    multiply_op, add_op, exp_op = sops.multiply(), sops.add(), sops.exponential()
    g = exp_op(add_op(multiply_op(a, b), multiply_op(c, d)))
    assert g == 22026.465794806718
    assert repr(g) == "22026.465794806718"
    # the add op from the seed
    x, y = 1, 4
    add_op = sops.add()
    add_op(x, y)
    assert add_op.backward(grads=1) == (1, 1)


def test_seed_ops_backward_by_hand_matches_value_engine():
    m1, m2, s, e = sops.Multiply(), sops.Multiply(), sops.Add(), sops.Exp()
    g = e(s(m1(2, 3), m2(2, 2)))
    ds = e.backward(1.0)
    dab, dcd = s.backward(ds)
    ga, gb = m1.backward(dab)
    gc, gd = m2.backward(dcd)
    A, B, C, D = Value(2.0), Value(3.0), Value(2.0), Value(2.0)
    G = (A * B + C * D).exp()
    G.backward()
    assert g == G.data
    assert (ga, gb, gc, gd) == pytest.approx((A.grad, B.grad, C.grad, D.grad), rel=1e-15)
    # one shared instance keeps only its last call: its backward is that of c*d
    shared = sops.multiply()
    shared(2, 3)
    shared(5, 7)
    assert shared.backward(1.0) == (7, 5)


@pytest.mark.parametrize("cls,args,k", [(sops.Subtract, (5.0, 2.0), None), (sops.Divide, (3.0, 4.0), None),
                                         (sops.Tanh, (0.3,), None), (sops.ReLU, (-1.0,), None),
                                         (sops.Sigmoid, (0.7,), None), (sops.Log, (2.0,), None),
                                         (sops.Power, (1.5,), 3)])
def test_seed_ops_more_vs_value(cls, args, k):
    op = cls(k) if k is not None else cls()
    out = op(*args)
    grads = op.backward(1.0)
    grads = grads if isinstance(grads, tuple) else (grads,)
    vs = [Value(a) for a in args]
    f = {sops.Subtract: lambda a, b: a - b, sops.Divide: lambda a, b: a / b, sops.Tanh: lambda a: a.tanh(),
         sops.ReLU: lambda a: a.relu(), sops.Sigmoid: lambda a: a.sigmoid(), sops.Log: lambda a: a.log(),
         sops.Power: lambda a: a ** 3}[cls]
    y = f(*vs)
    y.backward()
    assert out == pytest.approx(y.data, rel=1e-14)
    assert grads == pytest.approx(tuple(v.grad for v in vs), rel=1e-14)
    with pytest.raises(NotImplementedError):
        sops.Op()(1)
