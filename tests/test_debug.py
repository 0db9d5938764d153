"""tapegrad.debug: each detector fires on the bad pattern and stays silent on correct code; off means off."""

import random
import warnings

import pytest

import tapegrad
from tapegrad import debug
from tapegrad.autograd import engine, function


class StandInSGD:
    """An optimizer following debug.py's contract (the real tapegrad.optim is written separately)."""

    def __init__(self, params, lr=0.01):
        self.param_groups = [{"params": list(params), "lr": lr}]

    def zero_grad(self):
        if debug.enabled:
            debug.on_zero_grad(self)
        for p in self.param_groups[0]["params"]:
            p.grad = None

    def step(self):
        if debug.enabled:
            debug.on_optimizer_step(self)
        with tapegrad.no_grad():
            for p in self.param_groups[0]["params"]:
                if p.grad is not None:
                    p.sub_(p.grad * self.param_groups[0]["lr"])


def optimizers(params):
    yield StandInSGD(params)
    try:
        from tapegrad.optim import SGD
    except ImportError:
        return
    yield SGD(params, lr=0.01)


@pytest.fixture
def dbg():
    debug.enable()
    debug._warned_sites.clear()
    debug._warned_optimizers.clear()
    yield debug
    debug.disable()


def problem():
    tapegrad.manual_seed(0)
    w = tapegrad.randn(3, requires_grad=True)
    x = tapegrad.randn(8, 3)
    return w, x


def caught(fn):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        fn()
    return [m for m in w if issubclass(m.category, UserWarning)]


# --- graph kept alive ---------------------------------------------------------------------------------------------
def test_total_loss_plus_equals_loss_warns_once_at_the_line(dbg):
    w, x = problem()
    opt = StandInSGD([w])

    def loop():
        total_loss = 0
        for _ in range(4):
            opt.zero_grad()
            loss = ((x @ w) ** 2).mean()
            loss.backward()
            opt.step()
            total_loss += loss                                  # the leak
        return total_loss

    ws = [m for m in caught(loop) if m.category is debug.GraphKeptAliveWarning]
    assert len(ws) == 1
    msg = str(ws[0].message)
    assert ws[0].filename == __file__ and "total_loss += loss" in open(__file__).read().splitlines()[ws[0].lineno - 1]
    assert "loss.item()" in msg and "detach()" in msg and "nodes" in msg


def test_correct_accumulation_is_silent(dbg):
    w, x = problem()
    for opt in optimizers([w]):
        def loop():
            total_loss = 0.0
            for _ in range(4):
                opt.zero_grad()
                loss = ((x @ w) ** 2).mean()
                loss.backward()
                opt.step()
                total_loss += loss.item()
            running = tapegrad.zeros(())
            for _ in range(3):
                opt.zero_grad()
                loss = ((x @ w) ** 2).mean()
                loss.backward()
                opt.step()
                running = running + loss.detach()
        assert caught(loop) == []


def test_kept_alive_reports_memory_held_without_backward(dbg):
    w, x = problem()

    def loop():
        total = 0
        for _ in range(3):
            total = total + (x * w).exp().sum()      # never backwarded: the saved tensors stay alive
            debug.mark_step()
    ws = [m for m in caught(loop) if m.category is debug.GraphKeptAliveWarning]
    assert len(ws) == 1 and "B saved for backward" in str(ws[0].message)
    assert " 0 B saved" not in str(ws[0].message)


# --- forgotten zero_grad ------------------------------------------------------------------------------------------
def test_forgotten_zero_grad_warns(dbg):
    w, x = problem()
    opt = StandInSGD([w])

    def loop():
        for _ in range(3):
            loss = ((x @ w) ** 2).mean()
            loss.backward()
            opt.step()
    ws = [m for m in caught(loop) if m.category is debug.ZeroGradWarning]
    assert len(ws) == 1
    assert "accumulated by 2 backward passes" in str(ws[0].message)
    assert "zero_grad()" in str(ws[0].message) and "expect_accumulation(2)" in str(ws[0].message)


@pytest.mark.parametrize("how", ["optimizer", "set_to_none", "zero_"])
def test_zeroing_any_way_is_silent(dbg, how):
    w, x = problem()
    opt = StandInSGD([w])

    def loop():
        for _ in range(3):
            if how == "optimizer":
                opt.zero_grad()
            elif how == "set_to_none":
                w.grad = None
            elif w.grad is not None:
                w.grad.zero_()
            loss = ((x @ w) ** 2).mean()
            loss.backward()
            opt.step()
    assert caught(loop) == []


def test_declared_accumulation_is_silent(dbg):
    w, x = problem()
    opt = StandInSGD([w])

    def loop(n):
        for _ in range(2):
            opt.zero_grad()
            for _ in range(n):
                ((x @ w) ** 2).mean().backward()
            opt.step()
    with debug.expect_accumulation(4):
        assert caught(lambda: loop(4)) == []
    assert debug._expected[0] == 1
    ws = caught(lambda: loop(3))
    assert [m.category for m in ws] == [debug.ZeroGradWarning]


# --- errors that say where ----------------------------------------------------------------------------------------
def test_debug_errors_name_the_line(dbg):
    w, _ = problem()
    y = w.exp()                                          # created here
    y.sum().backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time") as e:
        y.sum().backward()
    assert "y = w.exp()" in str(e.value) and "test_debug.py" in str(e.value)


# --- off means off ------------------------------------------------------------------------------------------------
def test_disabled_installs_nothing():
    debug.disable()
    assert not debug.enabled and function._site_hook is None and debug._on_node not in engine._observers
    debug.enable()
    assert function._site_hook is not None and debug._on_node in engine._observers
    debug.disable()
    assert function._site_hook is None and debug._on_node not in engine._observers
    w, x = problem()
    opt = StandInSGD([w])

    def loop():
        total = 0
        for _ in range(3):
            loss = ((x @ w) ** 2).mean()
            loss.backward()
            opt.step()
            total += loss
    assert caught(loop) == []          # the bad patterns, but debug is off


def test_env_var_enables(monkeypatch):
    import importlib
    import subprocess
    import sys
    code = "import tapegrad.debug as d, tapegrad.autograd.function as f; print(d.enabled, f._site_hook is not None)"
    import os
    src = os.path.join(os.path.dirname(__file__), "..", "src")
    env = dict(os.environ, TAPEGRAD_DEBUG="1", PYTHONPATH=src)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    assert out.split() == ["True", "True"]
    importlib.import_module("tapegrad.debug")


# --- dead units ---------------------------------------------------------------------------------------------------
def test_activation_report_nn():
    nn = pytest.importorskip("tapegrad.nn")
    tapegrad.manual_seed(0)
    model = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 4), nn.ReLU(), nn.Linear(4, 1))
    with tapegrad.no_grad():
        model[0].bias[:3] = -100.0               # three units of the first layer can never fire
        model[2].bias[:] = 100.0                 # every unit of the second layer always fires
    rep = debug.activation_report(model, tapegrad.randn(32, 2))
    assert [(r[0], r[1], r[2]) for r in rep] == [("1", 8, 3), ("3", 4, 0)]
    assert rep["1"] == pytest.approx(3 / 8)
    assert "fraction dead" in str(rep) and "37.5%" in str(rep)
    with pytest.raises(ValueError, match="no nn.ReLU modules"):
        debug.activation_report(nn.Linear(2, 2), tapegrad.randn(3, 2))


def test_activation_report_scalar_mlp():
    from tapegrad.scalar import nn as snn
    random.seed(1)
    model = snn.MLP(2, [6, 1])
    for n in model.layers[0].neurons[:2]:
        n.b.data = -100.0
    rep = debug.activation_report(model, [[0.5, -0.2], [1.0, 1.0], [-1.0, 0.3]])
    assert rep.rows[0][:3] == ("layers.0", 6, rep.rows[0][2]) and rep.rows[0][2] >= 2
    assert len(rep) == 1
