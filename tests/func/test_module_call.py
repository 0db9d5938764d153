"""functional_call (tapegrad.func and nn.utils.stateless) and stack_module_state against torch 2.13: values, the
module unchanged afterwards, dicts and tuples of dicts, buffers, tie_weights, strict, errors word for word."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="torch is the oracle of these tests")

import tapegrad  # noqa: E402
import tapegrad.func  # noqa: E402,F401
from func.test_reverse import _err, _same  # noqa: E402

X = np.random.default_rng(5).standard_normal((2, 3))


def _net(m):
    class Net(m.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = m.nn.Linear(3, 3).double()
            self.tied = self.lin          # (the same parameters under two names)
            self.register_buffer("shift", m.ones(3, dtype=m.float64))

        def forward(self, x):
            return self.tied(self.lin(x)) + self.shift
    net = Net()
    rng = np.random.default_rng(7)        # (the same values in both libraries, whose generators differ)
    with m.no_grad():
        net.lin.weight.copy_(m.tensor(rng.standard_normal((3, 3))))
        net.lin.bias.copy_(m.tensor(rng.standard_normal(3)))
    return net


def _values(m):
    rng = np.random.default_rng(1)
    return {"lin.weight": m.tensor(rng.standard_normal((3, 3))), "lin.bias": m.tensor(rng.standard_normal(3)),
            "shift": m.tensor(rng.standard_normal(3))}


@pytest.mark.parametrize("case", ["dict", "tuple of dicts", "partial", "tie_weights=False", "buffer only",
                                  "kwargs", "single arg"])
def test_functional_call(case):
    def run(m):
        net, v, x = _net(m), _values(m), m.tensor(X)
        before = {k: t.detach().clone() for k, t in net.state_dict().items()}
        F = m.func.functional_call
        out = {"dict": lambda: F(net, v, (x,)),
               "tuple of dicts": lambda: F(net, ({"lin.weight": v["lin.weight"]}, {"shift": v["shift"]}), (x,)),
               "partial": lambda: F(net, {"lin.bias": v["lin.bias"]}, (x,)),
               "tie_weights=False": lambda: F(net, {"tied.weight": v["lin.weight"]}, (x,), tie_weights=False),
               "buffer only": lambda: F(net, {"shift": v["shift"]}, x),
               "kwargs": lambda: F(net, v, (), {"x": x}),
               "single arg": lambda: F(net, v, x)}[case]()
        if m is tapegrad:       # the module is unchanged (torch 2.13 leaves tied weights swapped: not copied)
            for k, t in net.state_dict().items():
                assert np.array_equal(t.detach().numpy(), before[k].numpy())
        return out
    _same(run(tapegrad), run(torch))


@pytest.mark.parametrize("case", ["strict", "strict missing", "tied conflict", "repeated", "not dicts", "bad type"])
def test_functional_call_errors(case):
    def run(m):
        net, v, x = _net(m), _values(m), m.tensor(X)
        F = m.func.functional_call
        other = m.tensor(np.zeros((3, 3)))
        return _err({"strict": lambda: F(net, {**v, "extra": v["shift"]}, (x,), strict=True),
                     "strict missing": lambda: F(net, {"shift": v["shift"]}, (x,), strict=True),
                     "tied conflict": lambda: F(net, {"lin.weight": v["lin.weight"], "tied.weight": other}, (x,)),
                     "repeated": lambda: F(net, ({"shift": v["shift"]}, {"shift": v["shift"]}), (x,)),
                     "not dicts": lambda: F(net, ({"shift": v["shift"]}, 3), (x,)),
                     "bad type": lambda: F(net, 3, (x,))}[case])
    got, want = run(tapegrad), run(torch)
    assert want is not None and got == want, (got, want)


def test_stateless_functional_call_warns():
    def run(m):
        net, v, x = _net(m), _values(m), m.tensor(X)
        with warnings.catch_warnings(record=True) as ws:
            warnings.simplefilter("always")
            out = m.nn.utils.stateless.functional_call(net, v, (x,))
        return out, [(w.category, str(w.message)) for w in ws]
    (a, wa), (b, wb) = run(tapegrad), run(torch)
    _same(a, b)
    assert wa == wb


@pytest.mark.parametrize("case", ["parameters", "parameters and a buffer"])
def test_functional_call_restores_when_forward_raises(case):
    """The tensors swapped in are swapped back, the very same objects, when the module's forward raises (parameters
    only: the direct swap; with a buffer: the general one); the error is torch's type. (torch 2.13 leaves a tied
    weight's other name holding a different object afterwards: not compared.)"""
    def run(m):
        net, x = _net(m), m.tensor(X)
        before = dict(net.named_parameters(remove_duplicate=False))
        before.update(net.named_buffers())
        bad = {"lin.weight": m.zeros(2, 2, dtype=m.float64)}
        if case != "parameters":
            bad["shift"] = m.zeros(3, dtype=m.float64)
        with pytest.raises(RuntimeError):
            m.func.functional_call(net, bad, (x,))
        after = dict(net.named_parameters(remove_duplicate=False))
        after.update(net.named_buffers())
        return before, after
    before, after = run(tapegrad)
    assert after.keys() == before.keys() and all(after[k] is before[k] for k in before)
    run(torch)


def test_grad_through_functional_call():
    def run(m):
        net, v, x = _net(m), _values(m), m.tensor(X)
        return m.func.grad(lambda p: m.func.functional_call(net, p, (x,)).pow(2).sum())(v)
    _same(run(tapegrad), run(torch), rtol=1e-9)


@pytest.mark.parametrize("case", ["ok", "empty", "modes", "classes", "requires_grad"])
def test_stack_module_state(case):
    def run(m):
        a, b = m.nn.Linear(2, 2).double(), m.nn.Linear(2, 2).double()
        with m.no_grad():
            a.weight.copy_(m.tensor(np.arange(4.0).reshape(2, 2)))
            a.bias.copy_(m.tensor(np.array([0.5, -1.0])))
            b.weight.copy_(a.weight * 2)
            b.bias.copy_(a.bias + 1)
        if case == "modes":
            b.eval()
        if case == "requires_grad":
            b.weight.requires_grad_(False)
        models = {"empty": [], "classes": [a, m.nn.Identity()]}.get(case, [a, b])
        return models

    if case == "ok":
        (p, bufs), (pt, bt) = tapegrad.func.stack_module_state(run(tapegrad)), \
            torch.func.stack_module_state(run(torch))
        _same(p, pt)
        assert bufs == {} and bt == {}
        assert all(t.requires_grad and t.grad_fn is None for t in p.values())
        return
    got = _err(lambda: tapegrad.func.stack_module_state(run(tapegrad)))
    want = _err(lambda: torch.func.stack_module_state(run(torch)))
    assert want is not None and got == want
