"""The surface of torch.compile that training scripts touch besides the call itself: OptimizedModule (isinstance,
_orig_mod, attribute and training-flag forwarding, copies), set_stance, the config modules (torch's keys,
aliases, patch), graph_break, the older optimize() spelling, backends, and the tracer hints; checked against
torch where torch answers without compiling, and by a script run under both through the parity runner."""

from __future__ import annotations

import copy
import importlib
import json
import pickle
import textwrap
import warnings

import numpy as np
import pytest

import tapegrad
import tapegrad.nn as nn
import tapegrad.nn.functional as F
from tapegrad import compiler, parity
from tapegrad.compiler import settings


@pytest.fixture(autouse=True)
def _default_stance():
    yield
    compiler.set_stance("default")


def _mlp(T):
    m = T.nn.Sequential(T.nn.Linear(3, 4), T.nn.ReLU(), T.nn.Linear(4, 2))
    with T.no_grad():
        for i, p in enumerate(m.parameters()):
            p.copy_(T.linspace(-1, 1, p.numel()).reshape(p.shape) * (i + 1) / 4)
    return m


# --- OptimizedModule ------------------------------------------------------------------------------------------------
def test_optimized_module_is_a_class_scripts_can_test(torch):
    m = _mlp(tapegrad)
    cm = tapegrad.compile(m)
    assert isinstance(cm, tapegrad._dynamo.eval_frame.OptimizedModule)
    assert isinstance(cm, compiler.OptimizedModule) and isinstance(cm, nn.Module)
    assert type(cm).__name__ == "OptimizedModule" and cm._orig_mod is m
    tm = _mlp(torch)
    tcm = torch.compile(tm)
    assert repr(cm) == repr(tcm)
    assert list(cm.state_dict()) == list(tcm.state_dict())
    assert [n for n, _ in cm.named_parameters()] == [n for n, _ in tcm.named_parameters()]
    assert list(m.state_dict()) == list(tm.state_dict())        # (the module itself keeps its keys)


def test_optimized_module_forwards_attributes_and_training(torch):
    for T in (tapegrad, torch):
        m = _mlp(T)
        cm = T.compile(m)
        cm.foo = 5                                   # written through to the module, as torch does
        assert m.foo == 5 and cm.foo == 5 and "foo" not in cm.__dict__
        cm.eval()
        assert (m.training, cm.training) == (False, False)
        cm.train()
        assert (m.training, cm.training) == (True, True)
        m.eval()
        assert cm.training is False


def test_optimized_module_copies_and_pickles():
    m = _mlp(tapegrad)
    cm = tapegrad.compile(m)
    x = tapegrad.linspace(-1, 1, 6).reshape(2, 3)
    want = m(x).detach().numpy()
    c2 = copy.deepcopy(cm)
    assert type(c2) is type(cm) and c2._orig_mod is not m
    np.testing.assert_array_equal(c2(x).detach().numpy(), want)
    c3 = pickle.loads(pickle.dumps(cm))
    np.testing.assert_array_equal(c3(x).detach().numpy(), want)
    np.testing.assert_array_equal(c3(x).detach().numpy(), want)     # (the copy's own captures replay)
    assert cm.to(tapegrad.float64)._orig_mod[0].weight.dtype == tapegrad.float64


def test_saving_orig_mod_of_a_compiled_model_round_trips(tmp_path):
    m = _mlp(tapegrad)
    model = tapegrad.compile(m)
    raw = model._orig_mod if isinstance(model, tapegrad._dynamo.eval_frame.OptimizedModule) else model
    tapegrad.save(raw.state_dict(), tmp_path / "ck.pt")
    fresh = _mlp(tapegrad)
    for p in fresh.parameters():
        p.data.zero_()
    fresh.load_state_dict(tapegrad.load(tmp_path / "ck.pt"))
    x = tapegrad.ones(2, 3)
    np.testing.assert_array_equal(fresh(x).detach().numpy(), model(x).detach().numpy())


# --- set_stance -----------------------------------------------------------------------------------------------------
def _counting():
    def f(x):
        f.compiling.append(compiler.is_compiling())
        return (x * 2).sin()
    f.compiling = []
    return f


def test_stance_force_eager_runs_eagerly():
    f = _counting()
    cf = tapegrad.compile(f)
    with compiler.set_stance("force_eager"):
        cf(tapegrad.ones(3))
        cf(tapegrad.ones(3))
    assert f.compiling == [False, False] and cf.captures == 0
    cf(tapegrad.ones(3))
    assert f.compiling == [False, False, True] and cf.captures == 1


def test_stance_eager_on_recompile_and_fail_on_recompile(torch):
    f = _counting()
    cf = tapegrad.compile(f, dynamic=False)
    cf(tapegrad.ones(3))
    with compiler.set_stance("eager_on_recompile"):
        out = cf(tapegrad.ones(2, 2))
        cf(tapegrad.ones(3))                              # (the cached program still replays)
    assert cf.captures == 1 and out.shape == (2, 2)
    with compiler.set_stance("fail_on_recompile"):
        cf(tapegrad.ones(3))
        with pytest.raises(compiler.RecompileError,
                           match="Detected recompile when torch.compile stance is 'fail_on_recompile'"):
            cf(tapegrad.ones(4, 4))
    assert issubclass(compiler.RecompileError, RuntimeError)
    assert issubclass(torch._dynamo.exc.RecompileError, RuntimeError)
    with tapegrad._dynamo.config.patch(error_on_recompile=True):
        with pytest.raises(compiler.RecompileError):
            cf(tapegrad.ones(5, 5))


def test_stance_eager_then_compile():
    f = _counting()
    cf = tapegrad.compile(f)
    with compiler.set_stance("eager_then_compile"):
        cf(tapegrad.ones(3))
        cf(tapegrad.ones(3))
        cf(tapegrad.ones(3))
    assert f.compiling == [False, True] and cf.captures == 1


def test_set_stance_call_context_and_decorator(torch):
    for T in (tapegrad, torch):
        cur = (lambda: settings.current[0]) if T is tapegrad else (lambda: T._dynamo.eval_frame._stance.stance)
        T.compiler.set_stance("force_eager")
        assert cur() == "force_eager"
        T.compiler.set_stance("default")
        with T.compiler.set_stance("eager_on_recompile"):
            assert cur() == "eager_on_recompile"
        assert cur() == "default"

        @T.compiler.set_stance("force_eager")
        def g():
            return cur()
        assert cur() == "default" and g() == "force_eager" and cur() == "default"
    with pytest.raises(RuntimeError, match="invalid torch.compile stance 'nope'"):
        compiler.set_stance("nope")


# --- config modules -------------------------------------------------------------------------------------------------
def test_config_table_is_torchs(torch):
    import sys
    sys.path.insert(0, __file__.rsplit("/", 1)[0])
    try:
        gen = importlib.import_module("gen_torch_config")
    finally:
        sys.path.pop(0)
    with open(settings.__file__.replace("settings.py", "torch_config.json")) as fh:
        assert json.load(fh) == json.loads(json.dumps(gen.table())), \
            "torch_config.json is out of date: run python tests/compiler/gen_torch_config.py"


def test_config_keys_defaults_aliases_and_errors(torch):
    dc, ic = tapegrad._dynamo.config, tapegrad._inductor.config
    for key in ("recompile_limit", "cache_size_limit", "suppress_errors", "verbose", "capture_scalar_outputs",
                "optimize_ddp", "automatic_dynamic_shapes", "accumulated_cache_size_limit"):
        assert getattr(dc, key) == getattr(torch._dynamo.config, key), key
    for key in ("coordinate_descent_tuning", "fx_graph_cache", "max_autotune", "freezing", "epilogue_fusion"):
        assert getattr(ic, key) == getattr(torch._inductor.config, key), key
    assert ic.triton.unique_kernel_names == torch._inductor.config.triton.unique_kernel_names
    assert ic.cpp.threads == torch._inductor.config.cpp.threads
    with pytest.raises(AttributeError, match=r"tapegrad._dynamo.config.not_a_key does not exist"):
        dc.not_a_key = 3
    with pytest.raises(AttributeError, match=r"does not exist"):
        dc.not_a_key
    with pytest.raises(AttributeError, match=r"tapegrad._inductor.config.triton.nope does not exist"):
        ic.triton.nope = 1
    old = dc.recompile_limit
    try:
        dc.cache_size_limit = 3                       # (an alias of recompile_limit, as in torch)
        assert dc.recompile_limit == 3 and compiler.config.cache_size_limit == 3
        ic.triton.unique_kernel_names = False
        assert ic.triton.unique_kernel_names is False and ic.get_config_copy()["triton.unique_kernel_names"] is False
    finally:
        dc.recompile_limit = old
        ic.triton.unique_kernel_names = True
    import tapegrad._inductor.config as ic2
    import tapegrad._dynamo.config as dc2
    assert ic2 is ic and dc2 is dc is compiler.config


def test_config_patch_context_and_decorator():
    dc = tapegrad._dynamo.config
    with dc.patch(cache_size_limit=2, suppress_errors=True):
        assert dc.recompile_limit == 2 and dc.suppress_errors is True
    assert dc.recompile_limit == 8 and dc.suppress_errors is False

    @dc.patch("recompile_limit", 5)
    def g():
        return dc.cache_size_limit
    assert g() == 5 and dc.recompile_limit == 8
    with pytest.raises(AttributeError):
        dc.patch(nope=1)


def test_recompile_limit_is_honoured():
    cf = tapegrad.compile(lambda x: x + 1, dynamic=False)
    with tapegrad._dynamo.config.patch(recompile_limit=2):
        cf(tapegrad.ones(1, 2))
        cf(tapegrad.ones(2, 3))
        with pytest.warns(UserWarning, match="cache_size_limit"):
            out = cf(tapegrad.ones(3, 4))
    assert cf.captures == 2 and out.shape == (3, 4)


# --- graph_break, optimize, backends, hints --------------------------------------------------------------------------
def _with_break(x):
    y = x.exp()
    tapegrad._dynamo.graph_break()
    return y * 2


def test_graph_break_breaks_the_capture():
    x = tapegrad.linspace(0, 1, 4)
    out = tapegrad.compile(_with_break)(x)
    np.testing.assert_array_equal(out.numpy(), (x.exp() * 2).numpy())
    ex = compiler.explain(_with_break)(x)
    assert ex.graph_break_count == 1 and "graph_break() was called" in ex.break_reasons[0]
    with pytest.raises(compiler.Unsupported, match="graph_break"):
        tapegrad.compile(_with_break, fullgraph=True)(x)
    tapegrad._dynamo.graph_break()                        # (outside a capture: nothing)


def test_optimize_and_backends(torch):
    f = tapegrad._dynamo.optimize("inductor")(lambda x: x.cos() + 1)
    x = tapegrad.linspace(0, 1, 3)
    np.testing.assert_array_equal(f(x).numpy(), (x.cos() + 1).numpy())
    f(x)
    assert f.captures == 1
    with pytest.raises(compiler.Unsupported):
        tapegrad._dynamo.optimize_assert("eager")(_with_break)(x)
    for bad in (lambda: tapegrad.compile(lambda x: x, backend="nope"), lambda: tapegrad._dynamo.optimize("nope")):
        with pytest.raises(tapegrad._dynamo.exc.InvalidBackend) as ours:
            bad()
        with pytest.raises(torch._dynamo.exc.InvalidBackend) as theirs:
            torch.compile(lambda x: x, backend="nope")
        assert str(ours.value) == str(theirs.value)
    assert compiler.list_backends() == torch.compiler.list_backends()
    assert tapegrad._dynamo.list_backends() == torch._dynamo.list_backends()
    for name in ("cudagraphs", "aot_eager", "eager", "inductor", "tvm"):
        tapegrad.compile(lambda x: x, backend=name)


def test_registered_and_callable_backends_warn_that_they_are_not_called():
    seen = []

    @tapegrad._dynamo.register_backend
    def my_backend(gm, example_inputs):
        seen.append(gm)
        return gm.forward

    assert "my_backend" in tapegrad._dynamo.list_backends(exclude_tags=None)
    assert tapegrad._dynamo.lookup_backend("my_backend") is my_backend
    with pytest.warns(UserWarning, match="'my_backend' is not called"):
        cf = tapegrad.compile(lambda x: x * 3, backend="my_backend")
    np.testing.assert_array_equal(cf(tapegrad.ones(2)).numpy(), [3, 3])
    assert seen == []
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tapegrad.compile(lambda x: x, backend="my_backend")       # (once per backend)


def test_tracer_hints_return_the_function_and_wrap_numpy(torch):
    def f(x):
        return x + 1
    for hint in (compiler.allow_in_graph, compiler.assume_constant_result, compiler.nested_compile_region,
                 tapegrad._dynamo.disallow_in_graph, tapegrad._dynamo.run):
        assert hint(f) is f
    assert compiler.nested_compile_region()(f) is f

    @compiler.substitute_in_graph(np.add)
    def poly(a, b):
        return a - b             # (never runs: the original does)
    assert poly(2, 3) == 5
    for T in (tapegrad, torch):
        g = T.compiler.wrap_numpy(lambda a, b: np.sum(a * b, axis=0))
        out = g(T.ones(2, 3), T.full((2, 3), 2.0))
        assert type(out) is T.Tensor and out.tolist() == [4.0, 4.0, 4.0]
    x = tapegrad.ones(2, 3)
    tapegrad._dynamo.mark_dynamic(x, 0)
    tapegrad._dynamo.maybe_mark_dynamic(x, [0, 1])
    tapegrad._dynamo.mark_static(x, 1)
    compiler.cudagraph_mark_step_begin()
    assert compiler.save_cache_artifacts() is None and compiler.is_exporting() is False
    seen = []
    tapegrad.compile(lambda t: seen.append(compiler.is_dynamo_compiling()) or t * 2)(x)
    assert seen == [True] and compiler.is_dynamo_compiling() is False


def test_compile_turns_distribution_validation_off_as_torch(torch):
    """torch.compile's first call turns torch.distributions' default argument validation off for the process
    (dynamo's patching); tapegrad.compile does the same, so a script that compiles builds the same distributions."""
    import os
    import subprocess
    import sys
    code = ("import {m}; D = {m}.distributions.Distribution; a = D._validate_args; {m}.compile(lambda x: x); "
            "print(a, D._validate_args, {m}.distributions.Normal({m}.tensor(0.), {m}.tensor(-1.)).scale.item())")
    env = dict(os.environ, PYTHONPATH=os.path.dirname(tapegrad.__path__[0]))
    outs = [subprocess.run([sys.executable, "-c", code.format(m=m)], capture_output=True, text=True, env=env
                           ).stdout.split() for m in ("torch", "tapegrad")]
    assert outs[0] == outs[1] == ["True", "False", "-1.0"]


def test_whole_train_step_compiled_matches_eager():
    """backward() and the optimizer step inside the compiled function (torch compiles around them): each
    step's loss and the final weights are eager's."""
    def run(compiled):
        m = _mlp(tapegrad)
        opt = tapegrad.optim.AdamW(m.parameters(), lr=0.05)

        def step(x, y):
            opt.zero_grad(set_to_none=True)
            loss = F.cross_entropy(m(x), y)
            loss.backward()
            opt.step()
            return loss
        fn = tapegrad.compile(step) if compiled else step
        x = tapegrad.linspace(-1, 1, 24).reshape(8, 3)
        y = tapegrad.tensor([0, 1, 1, 0, 1, 0, 0, 1])
        losses = [fn(x, y).item() for _ in range(4)]
        return losses, [p.detach().numpy().copy() for p in m.parameters()]
    (l1, w1), (l2, w2) = run(False), run(True)
    assert l1 == l2
    for a, b in zip(w1, w2):
        np.testing.assert_array_equal(a, b)


SCRIPT = textwrap.dedent('''
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    import torch._dynamo
    import torch._inductor.config

    torch._inductor.config.coordinate_descent_tuning = True
    torch._inductor.config.triton.unique_kernel_names = True
    torch._inductor.config.fx_graph_cache = True
    torch._dynamo.config.cache_size_limit = 16
    torch._dynamo.config.suppress_errors = True
    print("limits", torch._dynamo.config.recompile_limit, torch._dynamo.config.accumulated_cache_size_limit)
    net = nn.Sequential(nn.Linear(6, 16), nn.GELU(), nn.LayerNorm(16), nn.Linear(16, 3))
    with torch.no_grad():
        for i, p in enumerate(net.parameters()):
            p.copy_(torch.linspace(-0.5, 0.5, p.numel()).reshape(p.shape) * (i + 1) / 3)
    model = torch.compile(net, backend="eager")
    opt = torch.optim.AdamW(model.parameters(), lr=0.01)

    @torch.compile(backend="eager")
    def train_step(x, y):
        opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss

    x = torch.linspace(-1, 1, 48).reshape(8, 6)
    torch._dynamo.mark_dynamic(x, 0)
    y = torch.tensor([0, 1, 2, 0, 1, 2, 0, 1])
    for step in range(4):
        print("step", step, round(train_step(x, y).item(), 6))
    raw = model._orig_mod if isinstance(model, torch._dynamo.eval_frame.OptimizedModule) else model
    print(sorted(raw.state_dict())[:2], sorted(model.state_dict())[:1])
    print("compiling", torch.compiler.is_compiling(), torch.compiler.is_dynamo_compiling())
    with torch.compiler.set_stance("force_eager"):
        print("eager", round(model(x).sum().item(), 5))
    model.eval()
    with torch.no_grad():
        print("eval", round(model(x[:5]).sum().item(), 5), model.training, net.training)
''')


def test_compile_surface_script_agrees_with_torch(tmp_path, torch):
    script = tmp_path / "compile_surface.py"
    script.write_text(SCRIPT)
    r = parity.run(str(script), [], timeout=600, warm=True)
    assert r.torch_available and r.agree, r.report()


def test_fresh_inductor_cache_wraps_a_timed_first_call():
    # torch._inductor.utils.fresh_inductor_cache() around a compiled model's first call (regional compilation
    # recipe): the block runs and the compiled result equals eager's; tapegrad writes no cache files
    import tapegrad._inductor.utils as iu
    assert iu.fresh_inductor_cache is iu.fresh_cache
    lin = tapegrad.nn.Linear(3, 2)
    f = tapegrad.compile(lambda x: tapegrad.relu(lin(x)))
    x = tapegrad.randn(4, 3)
    entries = {}
    tapegrad.compiler.reset()
    with tapegrad._inductor.utils.fresh_inductor_cache(cache_entries=entries):
        out = f(x)
    assert entries == {}
    assert tapegrad.equal(out, tapegrad.relu(lin(x)))
    with pytest.raises(AssertionError, match="expected empty cache_entries dict"):
        with iu.fresh_cache(cache_entries={"x": 1}):
            pass
