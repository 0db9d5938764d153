"""Mixed precision against torch: autocast's casts per op list (CPU, float16), nesting, the decorator form, the
disabled devices, gradients reaching float32 parameters; GradScaler's scaling, unscaling, skipped steps, scale
updates and state; the deprecated torch.cuda.amp / torch.cpu.amp spellings."""

import warnings

import numpy as np
import pytest

import tapegrad
from pairs import cases, same

SETUP = ("x = torch.tensor(np.random.default_rng(0).standard_normal((8, 6)), dtype=torch.float32) ;; "
         "w = torch.tensor(np.random.default_rng(1).standard_normal((4, 6)), dtype=torch.float32) ;; "
         "y = torch.tensor([0, 1, 2, 3, 0, 1, 2, 3])")

EXPRS = """
F.linear(x, w)
F.linear(x, w, torch.ones(4))
x @ w.T
torch.mm(x, w.T)
torch.matmul(x, w.T)
torch.bmm(x[None], w.T[None])
torch.addmm(torch.zeros(8, 4), x, w.T)
torch.baddbmm(torch.zeros(1, 8, 4), x[None], w.T[None])
F.conv1d(x.view(2, 4, 6), w.view(4, 6)[:, :4].reshape(4, 4, 1))
F.relu(F.linear(x, w))
torch.softmax(F.linear(x, w), -1)
F.linear(x, w) + 1
F.mse_loss(F.linear(x, w), torch.zeros(8, 4))
F.cross_entropy(F.linear(x, w), y)
F.nll_loss(F.linear(x, w).float().log_softmax(-1), y)
F.binary_cross_entropy_with_logits(F.linear(x, w), torch.zeros(8, 4))
torch.cdist(x, x)
x.double() @ x.double().T
x.half() @ x.half().T
torch.linalg.inv(x[:6].half())
torch.trace(x[:6, :6].half())
"""
CASES = cases(EXPRS)


@pytest.mark.parametrize("expr", [e for _, e in CASES])
def test_cpu_float16_autocast_vs_torch(torch, expr):
    # the result's dtype and (to float16 rounding) its values; the autocast state is restored after
    code = f"exec('with torch.autocast(\"cpu\", dtype=torch.float16):\\n    r = {expr}') or r"
    same(torch, SETUP.replace(" ;; ", "\n"), code)
    assert not tapegrad.is_autocast_enabled("cpu")


STATE = cases("""
torch.is_autocast_enabled()
torch.is_autocast_enabled("cpu")
torch.get_autocast_dtype("cpu")
torch.get_autocast_dtype("cuda")
torch.amp.is_autocast_available("cpu")
exec("with torch.autocast('cpu'):\\n r = torch.is_autocast_enabled('cpu')") or r
exec("with torch.autocast('cpu', dtype=torch.float16):\\n with torch.autocast('cpu', enabled=False):\\n  r = (torch.is_autocast_enabled('cpu'), (torch.ones(2, 2) @ torch.ones(2, 2)).dtype)") or r
exec("with torch.autocast('cpu', dtype=torch.float16):\\n with torch.autocast('cpu', enabled=False):\\n  pass\\n r = (torch.ones(2, 2) @ torch.ones(2, 2)).dtype") or r
exec("with torch.autocast('cpu', dtype=torch.float32):\\n r = torch.is_autocast_enabled('cpu')") or r
exec("with torch.autocast('cuda'):\\n r = torch.is_autocast_enabled('cuda')") or r
torch.autocast("cpu", dtype=torch.float16)(lambda a: a @ a.T)(torch.ones(2, 3)).dtype
torch.autocast(device_type="nonsense")
""")


@pytest.mark.parametrize("setup,expr", STATE, ids=[e[:70] for _, e in STATE])
def test_autocast_state_vs_torch(torch, setup, expr):
    same(torch, setup, expr, words=False)
    assert not tapegrad.is_autocast_enabled("cpu")


def _models(torch, T):
    rng = np.random.default_rng(3)
    m = T.nn.Sequential(T.nn.Linear(6, 5), T.nn.ReLU(), T.nn.Linear(5, 3))
    with T.no_grad():
        for p in m.parameters():
            p.copy_(T.tensor(rng.standard_normal(tuple(p.shape)) * 0.5, dtype=T.float32))
    return m


def test_gradients_through_autocast_reach_float32_parameters(torch):
    out = {}
    for T in (torch, tapegrad):
        m = _models(torch, T)
        x = T.tensor(np.random.default_rng(4).standard_normal((7, 6)), dtype=T.float32)
        with T.autocast("cpu", dtype=T.float16):
            loss = T.nn.functional.cross_entropy(m(x), T.tensor([0, 1, 2, 0, 1, 2, 0]))
        loss.backward()
        out[T.__name__] = (str(loss.dtype).split(".")[-1], [(str(p.grad.dtype).split(".")[-1], p.grad.numpy())
                                                             for p in m.parameters()])
    t, o = out["torch"], out["tapegrad"]
    assert t[0] == o[0]
    for (dt, gt), (do, go) in zip(t[1], o[1]):
        assert dt == do == "float32"
        np.testing.assert_allclose(go, gt, rtol=2e-2, atol=2e-3)     # (float16 forward: its rounding)


def test_bfloat16_autocast_runs_in_float32():
    # bfloat16 is stored as float32 (NumPy has none): the lower-precision ops keep float32
    with tapegrad.autocast("cpu"):
        assert tapegrad.get_autocast_dtype("cpu") is tapegrad.bfloat16
        r = tapegrad.ones(2, 3) @ tapegrad.ones(3, 2)
    assert r.dtype in (tapegrad.float32, tapegrad.bfloat16)


def _scaler_run(T, device, grads, **kw):
    p = T.nn.Parameter(T.tensor([1.0, -2.0, 3.0]))
    opt = T.optim.SGD([p], lr=0.1)
    s = T.amp.GradScaler(device, **kw)
    log = []
    for g in grads:
        opt.zero_grad()
        loss = (p * T.tensor(g, dtype=T.float32)).sum()
        s.scale(loss).backward()
        log.append(("scaled grad", p.grad.tolist()))
        s.unscale_(opt)
        log.append(("unscaled", p.grad.tolist()))
        r = s.step(opt)
        s.update()
        log.append(("step", r, p.detach().tolist(), s.get_scale(), s.state_dict()))
    return log


@pytest.mark.parametrize("kw", [{}, {"init_scale": 8.0, "growth_interval": 2}, {"growth_factor": 4.0,
                                                                                 "backoff_factor": 0.25}])
def test_grad_scaler_cpu_vs_torch(torch, kw):
    grads = [[1.0, 2.0, 3.0], [float("inf"), 1.0, 0.0], [0.5, 0.5, 0.5], [1.0, float("nan"), 1.0], [1.0, 1.0, 1.0]]
    theirs = _scaler_run(torch, "cpu", grads, **kw)
    ours = _scaler_run(tapegrad, "cpu", grads, **kw)
    assert repr(ours) == repr(theirs)


def test_grad_scaler_errors_and_state_vs_torch(torch):
    same(torch, "s = torch.amp.GradScaler('cpu') ;; p = torch.nn.Parameter(torch.ones(2)) ;; "
                "opt = torch.optim.SGD([p], lr=0.1) ;; s.scale(p.sum()).backward() ;; s.unscale_(opt)",
         "s.unscale_(opt)")
    same(torch, "s = torch.amp.GradScaler('cpu') ;; p = torch.nn.Parameter(torch.ones(2)) ;; "
                "opt = torch.optim.SGD([p], lr=0.1) ;; s.scale(p.sum()).backward() ;; s.step(opt)", "s.step(opt)")
    same(torch, "s = torch.amp.GradScaler('cpu')", "s.step(torch.optim.SGD([torch.nn.Parameter(torch.ones(1))], "
                "lr=1), closure=lambda: 0)")
    same(torch, "s = torch.amp.GradScaler('cpu')", "s.load_state_dict({})")
    same(torch, "s = torch.amp.GradScaler('cpu')", "[s.scale([torch.ones(1), (torch.ones(2),)]), s.get_scale()]")
    same(torch, "s = torch.amp.GradScaler('cpu') ;; s.update(2.0 ** 10)", "s.state_dict()")
    same(torch, "s = torch.amp.GradScaler('cpu') ;; t = torch.amp.GradScaler('cpu', init_scale=4.) ;; "
                "t.load_state_dict(s.state_dict())", "t.get_scale()")


def test_disabled_scalers_and_deprecated_spellings_warn_as_torch(torch):
    for T in (torch, tapegrad):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            s = T.amp.GradScaler()                          # device "cuda": no GPU
            c = T.cuda.amp.GradScaler()
            with T.cuda.amp.autocast():
                inside = T.is_autocast_enabled()
            with T.cpu.amp.autocast():
                cpu_on = T.is_autocast_enabled("cpu")
        kinds = [(x.category.__name__, str(x.message).split(".")[0]) for x in w
                 if x.category is not ImportWarning]
        loss = T.ones(1)
        assert (s.is_enabled(), c.is_enabled(), inside, cpu_on, s.scale(loss) is loss, s.get_scale(),
                s.state_dict()) == (False, False, False, True, True, 1.0, {})
        if T is torch:
            expected = kinds
        else:
            assert kinds == expected


def test_autocast_is_per_thread(torch):
    # as torch's: a region in one thread changes nothing in another
    import threading
    results = {}

    def other(T, key):
        results[key] = (T.is_autocast_enabled("cpu"), (T.ones(2, 2) @ T.ones(2, 2)).dtype,
                        T.nn.functional.mse_loss(T.ones(2).half(), T.zeros(2).half()).dtype)
    for T in (torch, tapegrad):
        with T.autocast("cpu", dtype=T.float16):
            t = threading.Thread(target=other, args=(T, T.__name__))
            t.start()
            t.join()
            inside = (T.ones(2, 2) @ T.ones(2, 2)).dtype
        assert str(inside).endswith("float16")
    assert [str(v).replace("tapegrad.", "torch.") for v in results["tapegrad"]] == [str(v) for v in results["torch"]]
    assert not tapegrad.is_autocast_enabled("cpu") and tapegrad.ops._util.AUTOCAST[0] is None


def test_custom_fwd_casts_and_turns_autocast_off_as_torch(torch):
    got = {}
    for T in (torch, tapegrad):
        class F(T.autograd.Function):
            @staticmethod
            @T.amp.custom_fwd(device_type="cpu", cast_inputs=T.float32)
            def forward(ctx, x):
                return x * 2, T.is_autocast_enabled("cpu")

            @staticmethod
            @T.amp.custom_bwd(device_type="cpu")
            def backward(ctx, g, _):
                return g * 2
        with T.autocast("cpu", dtype=T.float16):
            inside = F.apply(T.ones(2).half())
        outside = F.apply(T.ones(2).half())
        got[T.__name__] = [str(inside[0].dtype).split(".")[-1], inside[1], str(outside[0].dtype).split(".")[-1],
                           outside[1]]
    assert got["tapegrad"] == got["torch"] == ["float32", False, "float16", False]
