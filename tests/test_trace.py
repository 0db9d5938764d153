"""tapegrad.autograd.trace: every node the engine runs, its incoming gradient and what it passes on."""

import pytest

import tapegrad
from tapegrad.scalar import Value


def test_tensor_trace_steps_match_torch(torch):
    a = tapegrad.tensor(2.0, requires_grad=True)
    b = tapegrad.tensor(-3.0, requires_grad=True)
    c = tapegrad.tensor(10.0, requires_grad=True)
    L = a * b + c
    with tapegrad.autograd.trace(params={"a": a, "b": b, "c": c}) as t:
        L.backward()
    names = [s.name for s in t.steps]
    assert [n for n in names if n != "AccumulateGrad"] == ["AddBackward0", "MulBackward0"]
    assert names.count("AccumulateGrad") == 3 and names[0] == "AddBackward0"
    add, mul = t.steps[0], t.steps[names.index("MulBackward0")]
    assert add.grads_out[0].item() == 1.0
    assert [e.target for e in add.edges] == ["MulBackward0", "AccumulateGrad"]
    assert [e.into for e in add.edges] == ["MulBackward0's buffer", "c.grad (via AccumulateGrad)"]
    # what MulBackward0 passes on is d L / d a and d L / d b — torch's numbers
    at, bt = torch.tensor(2.0, requires_grad=True), torch.tensor(-3.0, requires_grad=True)
    (at * bt + 10).backward()
    assert [g.item() for g in mul.grads_in] == [at.grad.item(), bt.grad.item()]
    acc = {s.edges[0].target: s for s in t.steps if s.name == "AccumulateGrad"}
    assert acc["a.grad"].edges[0].into == "a.grad = -3"
    assert acc["b.grad"].grads_out[0].item() == 2.0


def test_trace_table_printing(capsys):
    x = tapegrad.tensor([1.0, 2.0], requires_grad=True)
    with tapegrad.autograd.trace() as t:
        (x * x).sum().backward()
    t.print()
    out = capsys.readouterr().out.splitlines()
    assert out[0].split() == ["step", "node", "grad", "in", "->", "input", "grad", "out", "accumulates", "into"]
    assert out[1].split()[:2] == ["1", "SumBackward0"]
    # x * x: MulBackward0 sends a gradient down both of its edges, both to x's AccumulateGrad
    mul = t.steps[1]
    assert mul.name == "MulBackward0" and [e.target for e in mul.edges] == ["AccumulateGrad"] * 2
    assert t.steps[-1].edges[0].into == "leaf(2,).grad = [2, 4]"
    assert len(t) == 3 and "AccumulateGrad" in str(t)


def test_trace_stops_recording_after_the_block():
    x = tapegrad.tensor(3.0, requires_grad=True)
    with tapegrad.autograd.trace() as t:
        (x * 2).backward()
    n = len(t.steps)
    (x * 2).backward()
    assert len(t.steps) == n
    from tapegrad.autograd import engine
    from tapegrad.scalar import value
    assert t._on_node not in engine._observers and t._on_value not in value._observers


def test_value_trace_context_and_flag(capsys):
    a, b = Value(2.0, label="a"), Value(-3.0, label="b")
    L = a * b + a
    L.label = "L"
    with tapegrad.autograd.trace() as t:
        L.backward()
    assert [s.name for s in t.steps] == ["L [+]", "*"]
    first = t.steps[0]
    assert first.grads_out == [1.0]
    assert [(e.target, e.grad) for e in first.edges] == [("(*)", 1.0), ("a", 1.0)]
    second = t.steps[1]
    assert [(e.target, e.grad) for e in second.edges] == [("a", -3.0), ("b", 2.0)]
    # where it accumulates: a got 1 from the + and then -3 from the *: a.grad = -2
    assert second.edges[0].into == "a.grad = -2"
    a.grad = b.grad = 0.0
    t2 = L.backward(trace=True)
    out = capsys.readouterr().out
    assert "accumulates into" in out and "a.grad = -2" in out
    assert len(t2.steps) == 2 and a.grad == -2.0


def test_value_trace_with_user_closure():
    x = Value(3.0, label="x")
    out = Value(x.data ** 2, (x,), "**2")

    def _backward():
        x.grad += 2 * x.data * out.grad
    out._backward = _backward
    with tapegrad.autograd.trace() as t:
        out.backward()
    assert t.steps[0].edges[0].grad == pytest.approx(6.0)
    assert x.grad == 6.0
