"""The one hook of the function transforms: an active Interpreter sees every op call, nested as torch.func's."""

import pathlib
import re
import threading

import numpy as np

import tapegrad
from tapegrad.autograd.function import Function, Interpreter, _apply, active_interpreters


class Log(Interpreter):
    def __init__(self, name, seen):
        self.name, self.seen = name, seen

    def process(self, cls, args, kwargs):
        self.seen.append((self.name, cls.__name__))
        return self.call_next(cls, args, kwargs)


def test_no_transform_is_the_plain_eager_call():
    assert Function.__dict__["apply"].__func__ is _apply
    assert active_interpreters() == ()


def test_an_interpreter_sees_every_op_and_restores_eager():
    seen = []
    x = tapegrad.tensor([1.0, 2.0], requires_grad=True)
    with Log("a", seen) as interp:
        assert active_interpreters() == (interp,)
        y = (x.exp() * 2).sum()
    assert [c for _, c in seen] == ["Exp", "Mul", "Sum"]
    assert Function.__dict__["apply"].__func__ is _apply
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.exp([1.0, 2.0]), rtol=1e-6)


def test_nesting_innermost_first_and_its_own_ops_go_outward():
    seen = []

    class Doubler(Interpreter):
        # does its own work with an op: that op must be seen by the outer transform only
        def process(self, cls, args, kwargs):
            seen.append(("inner", cls.__name__))
            out = self.call_next(cls, args, kwargs)
            return out * 1.0

    x = tapegrad.tensor([1.0, 2.0])
    with Log("outer", seen), Doubler():
        x.neg()
    assert seen == [("inner", "Neg"), ("outer", "Neg"), ("outer", "Mul")]


def test_exit_out_of_order_is_an_error():
    a, b = Interpreter(), Interpreter()
    a.enter()
    b.enter()
    try:
        a.exit()
    except RuntimeError as e:
        assert "reverse order" in str(e)
    else:
        raise AssertionError("no error")
    b.exit()
    a.exit()
    assert active_interpreters() == ()


def test_other_threads_stay_eager():
    seen, other = [], []
    with Log("main", seen):
        t = threading.Thread(target=lambda: other.append(tapegrad.tensor([1.0]).exp()))
        t.start()
        t.join()
    assert seen == [] and len(other) == 1


def test_no_module_keeps_a_bound_apply():
    # a transform replaces Function.apply: code that kept `X.apply` from import time would bypass it
    src = pathlib.Path(tapegrad.__file__).parent
    bad = [f"{p.relative_to(src)}: {line.strip()}" for p in src.rglob("*.py")
           for line in p.read_text().splitlines() if re.search(r"=\s*[\w.]+\.apply\s*(#.*)?$", line)]
    assert bad == [], bad


def test_hasattr_of_a_lazy_name_never_raises():
    # names listed as lazy answer hasattr with True or False, never with an import error
    for name in ["nn", "optim", "fft", "special", "backends", "testing", "func", "no_such_name"]:
        assert hasattr(tapegrad, name) in (True, False)
    for name in ["functional", "forward_ad", "graph", "trace", "no_such_name"]:
        assert hasattr(tapegrad.autograd, name) in (True, False)
    assert hasattr(tapegrad, "nn") and not hasattr(tapegrad, "no_such_name")
