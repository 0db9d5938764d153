"""What ``torch.jit.script``/``trace`` return passes torch's isinstance checks (kornia checks
``isinstance(m, torch.jit.ScriptModule)``): modules become RecursiveScriptModule / TopLevelTracedModule over the
same Parameters, functions ScriptFunction; each still runs as eager Python. Compared with torch."""

import numpy as np
import pytest

import tapegrad


def _net(lib):
    nn = lib.nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3, 2)
            self.bn = nn.BatchNorm1d(2)
            self.body = nn.Sequential(nn.Linear(2, 2), nn.ReLU())
            self.scale = 2.0

        def forward(self, x):
            return self.body(self.bn(self.fc(x))) * self.scale

    lib.manual_seed(0)
    return Net()


def _facts(lib, how):
    m = _net(lib)
    x = lib.tensor(np.random.default_rng(1).standard_normal((4, 3)).astype(np.float32))
    s = lib.jit.script(m) if how == "script" else lib.jit.trace(m, x)
    jit = lib.jit
    facts = {
        "ScriptModule": isinstance(s, jit.ScriptModule), "Module": isinstance(s, lib.nn.Module),
        "Recursive": isinstance(s, jit.RecursiveScriptModule), "Traced": isinstance(s, jit.TracedModule),
        "TopLevel": isinstance(s, jit.TopLevelTracedModule), "name": type(s).__name__,
        "sub": (type(s.fc).__name__, isinstance(s.fc, jit.ScriptModule), isinstance(s.body, jit.ScriptModule)),
        "original_name": (s.original_name, s.fc.original_name), "repr": repr(s),
        "keys": list(s.state_dict()), "params": [n for n, _ in s.named_parameters()],
        "modules": [n for n, _ in s.named_modules()],
        "shared": s.fc.weight is m.fc.weight and s.bn.running_mean is m.bn.running_mean,
        "again": lib.jit.script(s) is s,
    }
    if how == "script":
        facts["scale"] = s.scale           # (a trace keeps no Python attribute)
    out_train = s(x)                     # (train mode: updates the shared running statistics)
    s.eval()
    facts["training"] = (s.training, s.bn.training, m.training, m.bn.training)
    out_eval, ref = s(x), m.eval()(x)
    s.train()
    facts["train"] = (s.training, s.body.training, m.training)
    values = [out_train.detach().numpy(), out_eval.detach().numpy(), ref.detach().numpy()]
    # (torch's trace runs the module on the example inputs, six times with its checks: running statistics move)
    return facts, values + [m.bn.running_mean.numpy()] * (how == "script")


@pytest.mark.filterwarnings("ignore:Converting a tensor to a Python boolean")   # (torch.jit.trace's TracerWarning)
@pytest.mark.parametrize("how", ["script", "trace"])
def test_scripted_and_traced_modules_are_torchs_classes_over_the_same_state(torch, how):
    ours, got = _facts(tapegrad, how)
    theirs, want = _facts(torch, how)
    assert ours == theirs
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


def test_a_scripted_module_trains_its_modules_parameters():
    m = _net(tapegrad)
    s = tapegrad.jit.script(m)
    opt = tapegrad.optim.SGD(s.parameters(), lr=0.1)
    before = m.fc.weight.detach().clone()
    s.eval()
    x = tapegrad.ones(4, 3)
    ((s(x) ** 2).sum() + s.fc(x).sum()).backward()
    opt.step()
    assert m.fc.weight.grad is not None and not tapegrad.equal(m.fc.weight, before)   # (the same Parameters)
    s.load_state_dict({k: v * 0 for k, v in m.state_dict().items()})
    assert float(m.fc.weight.abs().sum()) == 0.0
    assert isinstance(s, type(m))         # (tapegrad's class is made over the module's own; torch's is not)
    with pytest.raises(AttributeError, match="no TorchScript"):
        s.code


def test_scripted_and_traced_functions_are_script_functions(torch):
    def f(x, y):
        return x * 2 + y

    for lib in (torch, tapegrad):
        a = lib.ones(3)
        for sf in (lib.jit.script(f), lib.jit.trace(f, (a, a))):
            assert isinstance(sf, lib.jit.ScriptFunction) and callable(sf) and sf.name == "f"
            assert sf(a, a).tolist() == [3.0, 3.0, 3.0]

            class Holder:
                op = sf
            assert Holder().op is sf                     # (no binding as a method, as torch's)
    assert tapegrad.jit.script(tapegrad.jit.script(f)).name == "f"


def test_old_style_script_module_subclass_runs_eagerly():
    class M(tapegrad.jit.ScriptModule):
        def __init__(self):
            super().__init__()
            self.lin = tapegrad.nn.Linear(2, 1)

        @tapegrad.jit.script_method
        def forward(self, x):
            return self.lin(x)

    m = M()
    assert isinstance(m, tapegrad.jit.ScriptModule) and m(tapegrad.ones(3, 2)).shape == (3, 1)
    assert list(m.state_dict()) == ["lin.weight", "lin.bias"]
