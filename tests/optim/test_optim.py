"""Optimizers and schedulers: 100 float64 steps agree with torch.optim to 1e-10 (relative), plus API semantics."""

import math
import re

import numpy as np
import pytest

import tapegrad

RNG = np.random.default_rng(0)
W0, B0 = RNG.standard_normal((3, 4)), RNG.standard_normal(3)
X, Y = RNG.standard_normal((8, 4)), RNG.standard_normal((8, 3))


def _loss(m, w, b):
    x, y = m.tensor(X), m.tensor(Y)
    out = m.tanh(x @ w.T + b)
    return ((out - y) ** 2).mean() + 0.01 * (w ** 4).sum()


def _params(m):
    return [m.tensor(W0.copy(), requires_grad=True), m.tensor(B0.copy(), requires_grad=True)]


def _run(m, make_opt, steps=100, make_sched=None, closure_opt=False, groups=False):
    w, b = _params(m)
    params = [{"params": [w]}, {"params": [b], "lr": 0.05}] if groups else [w, b]
    opt = make_opt(m, params)
    sched = make_sched(m, opt) if make_sched else None
    lrs = []
    for _ in range(steps):
        def closure():
            opt.zero_grad()
            loss = _loss(m, w, b)
            loss.backward()
            return loss
        if closure_opt:
            opt.step(closure)
        else:
            closure()
            opt.step()
        if sched is not None:
            sched.step()
            lrs.append(sched.get_last_lr())
    return w.detach().numpy(), b.detach().numpy(), lrs, opt


OPTIMIZERS = {
    "sgd": lambda m, p: m.optim.SGD(p, lr=0.1),
    "sgd_momentum": lambda m, p: m.optim.SGD(p, lr=0.05, momentum=0.9, dampening=0.1, weight_decay=0.01),
    "sgd_nesterov": lambda m, p: m.optim.SGD(p, lr=0.05, momentum=0.9, nesterov=True, maximize=False),
    "sgd_maximize": lambda m, p: m.optim.SGD(p, lr=0.01, maximize=True),
    "adam": lambda m, p: m.optim.Adam(p, lr=0.01),
    "adam_amsgrad_wd": lambda m, p: m.optim.Adam(p, lr=0.01, amsgrad=True, weight_decay=0.1),
    "adamw": lambda m, p: m.optim.AdamW(p, lr=0.01),
    "adamw_amsgrad": lambda m, p: m.optim.AdamW(p, lr=0.01, amsgrad=True, weight_decay=0.05),
    "rmsprop": lambda m, p: m.optim.RMSprop(p, lr=0.01),
    "rmsprop_centered_momentum": lambda m, p: m.optim.RMSprop(p, lr=0.01, momentum=0.5, centered=True,
                                                              weight_decay=0.01),
    "adagrad": lambda m, p: m.optim.Adagrad(p, lr=0.1, lr_decay=0.01, weight_decay=0.01,
                                            initial_accumulator_value=0.1),
    "adadelta": lambda m, p: m.optim.Adadelta(p, lr=1.0, weight_decay=0.01),
    "adamax": lambda m, p: m.optim.Adamax(p, lr=0.01, weight_decay=0.01),
    "nadam": lambda m, p: m.optim.NAdam(p, lr=0.01),
    "nadam_decoupled": lambda m, p: m.optim.NAdam(p, lr=0.01, weight_decay=0.1, decoupled_weight_decay=True),
    "radam": lambda m, p: m.optim.RAdam(p, lr=0.01),
    "radam_decoupled": lambda m, p: m.optim.RAdam(p, lr=0.01, weight_decay=0.1, decoupled_weight_decay=True),
    "rprop": lambda m, p: m.optim.Rprop(p, lr=0.01),
    "rprop_etas_maximize": lambda m, p: m.optim.Rprop(p, lr=0.02, etas=(0.3, 1.5), step_sizes=(1e-4, 0.05),
                                                      maximize=True),
    "asgd": lambda m, p: m.optim.ASGD(p, lr=0.05),
    "asgd_t0_wd": lambda m, p: m.optim.ASGD(p, lr=0.05, lambd=1e-3, alpha=0.6, t0=20, weight_decay=0.01),
    "adafactor": lambda m, p: m.optim.Adafactor(p, lr=0.05),
    "adafactor_wd_eps_d": lambda m, p: m.optim.Adafactor(p, lr=0.02, beta2_decay=-0.6, eps=(1e-20, 1e-2), d=1.5,
                                                         weight_decay=0.1, maximize=False),
}


def _close(a, b, rtol=1e-10):
    np.testing.assert_allclose(a, b, rtol=rtol, atol=1e-12)


@pytest.mark.parametrize("name", list(OPTIMIZERS))
def test_optimizer_matches_torch_over_100_steps(torch, name):
    ours = _run(tapegrad, OPTIMIZERS[name])
    theirs = _run(torch, OPTIMIZERS[name])
    _close(ours[0], theirs[0])
    _close(ours[1], theirs[1])


def test_param_groups_with_their_own_lr(torch):
    make = lambda m, p: m.optim.SGD(p, lr=0.1, momentum=0.9)
    ours, theirs = _run(tapegrad, make, groups=True), _run(torch, make, groups=True)
    _close(ours[0], theirs[0])
    _close(ours[1], theirs[1])


@pytest.mark.parametrize("line_search", [None, "strong_wolfe"])
def test_lbfgs_matches_torch(torch, line_search):
    make = lambda m, p: m.optim.LBFGS(p, lr=0.5 if line_search is None else 1, max_iter=10, history_size=5,
                                      line_search_fn=line_search)
    ours = _run(tapegrad, make, steps=5, closure_opt=True)
    theirs = _run(torch, make, steps=5, closure_opt=True)
    _close(ours[0], theirs[0], rtol=1e-8)
    _close(ours[1], theirs[1], rtol=1e-8)


SCHEDULERS = {
    "step": lambda m, o: m.optim.lr_scheduler.StepLR(o, step_size=7, gamma=0.5),
    "multistep": lambda m, o: m.optim.lr_scheduler.MultiStepLR(o, milestones=[10, 30, 30, 60], gamma=0.5),
    "exponential": lambda m, o: m.optim.lr_scheduler.ExponentialLR(o, gamma=0.97),
    "cosine": lambda m, o: m.optim.lr_scheduler.CosineAnnealingLR(o, T_max=30, eta_min=0.001),
    "warm_restarts": lambda m, o: m.optim.lr_scheduler.CosineAnnealingWarmRestarts(o, T_0=10, T_mult=2,
                                                                                   eta_min=0.001),
    "onecycle": lambda m, o: m.optim.lr_scheduler.OneCycleLR(o, max_lr=0.1, total_steps=100),
    "onecycle_linear_3phase": lambda m, o: m.optim.lr_scheduler.OneCycleLR(o, max_lr=0.1, total_steps=100,
                                                                           anneal_strategy="linear",
                                                                           three_phase=True),
    "linear": lambda m, o: m.optim.lr_scheduler.LinearLR(o, start_factor=0.1, total_iters=20),
    "lambda": lambda m, o: m.optim.lr_scheduler.LambdaLR(o, lambda e: 0.95 ** e),
    "sequential": lambda m, o: m.optim.lr_scheduler.SequentialLR(o, [
        m.optim.lr_scheduler.LinearLR(o, start_factor=0.1, total_iters=10),
        m.optim.lr_scheduler.CosineAnnealingLR(o, T_max=90)], milestones=[10]),
    "cyclic": lambda m, o: m.optim.lr_scheduler.CyclicLR(o, base_lr=0.001, max_lr=0.05, step_size_up=7),
    "cyclic_triangular2": lambda m, o: m.optim.lr_scheduler.CyclicLR(o, base_lr=0.001, max_lr=0.05, step_size_up=5,
                                                                     step_size_down=9, mode="triangular2"),
    "cyclic_exp_range": lambda m, o: m.optim.lr_scheduler.CyclicLR(o, base_lr=0.002, max_lr=0.04, step_size_up=6,
                                                                   mode="exp_range", gamma=0.98,
                                                                   base_momentum=0.7, max_momentum=0.95),
    "cyclic_scale_fn_no_momentum": lambda m, o: m.optim.lr_scheduler.CyclicLR(
        o, base_lr=0.001, max_lr=0.05, step_size_up=4, scale_fn=lambda x: 0.9 ** x, scale_mode="iterations",
        cycle_momentum=False),
    "polynomial": lambda m, o: m.optim.lr_scheduler.PolynomialLR(o, total_iters=60, power=1.5),
    "constant": lambda m, o: m.optim.lr_scheduler.ConstantLR(o, factor=0.3, total_iters=25),
    "multiplicative": lambda m, o: m.optim.lr_scheduler.MultiplicativeLR(o, lambda e: 0.97),
    "chained": lambda m, o: m.optim.lr_scheduler.ChainedScheduler([
        m.optim.lr_scheduler.ConstantLR(o, factor=0.5, total_iters=10),
        m.optim.lr_scheduler.ExponentialLR(o, gamma=0.98)]),
}


@pytest.mark.parametrize("name", list(SCHEDULERS))
@pytest.mark.parametrize("opt", ["sgd_momentum", "adam"])
def test_scheduler_matches_torch_over_100_steps(torch, name, opt):
    ours = _run(tapegrad, OPTIMIZERS[opt], make_sched=SCHEDULERS[name])
    theirs = _run(torch, OPTIMIZERS[opt], make_sched=SCHEDULERS[name])
    _close(np.array(ours[2]), np.array(theirs[2]), rtol=1e-12)
    _close(ours[0], theirs[0])
    _close(ours[1], theirs[1])


def test_reduce_lr_on_plateau_matches_torch(torch):
    metrics = [1.0, 0.9, 0.9, 0.9, 0.95, 0.91, 0.92, 0.5, 0.6, 0.6, 0.6, 0.6, 0.6]
    res = []
    for m in (tapegrad, torch):
        opt = m.optim.SGD([m.zeros(1, requires_grad=True)], lr=1.0)
        s = m.optim.lr_scheduler.ReduceLROnPlateau(opt, patience=2, factor=0.5, cooldown=1)
        lrs = []
        for v in metrics:
            s.step(v)
            lrs.append(opt.param_groups[0]["lr"])
        res.append(lrs)
    assert res[0] == res[1]


def test_zero_grad_set_to_none_and_zeros():
    w = tapegrad.ones(2, requires_grad=True)
    opt = tapegrad.optim.SGD([w], lr=0.1)
    (w * 2).sum().backward()
    opt.zero_grad(set_to_none=False)
    assert w.grad.tolist() == [0.0, 0.0]
    opt.zero_grad()
    assert w.grad is None
    opt.step()                       # no grad: nothing happens
    assert w.tolist() == [1.0, 1.0]


def test_errors_and_repr(torch):
    with pytest.raises(ValueError, match="optimizer got an empty parameter list"):
        tapegrad.optim.SGD([], lr=0.1)
    with pytest.raises(ValueError, match="Invalid learning rate: -1"):
        tapegrad.optim.Adam([tapegrad.ones(1, requires_grad=True)], lr=-1)
    w = tapegrad.ones(1, requires_grad=True)
    with pytest.raises(ValueError, match="some parameters appear in more than one parameter group"):
        tapegrad.optim.SGD([{"params": [w]}, {"params": [w]}], lr=0.1)
    ours = repr(tapegrad.optim.SGD([tapegrad.ones(1, requires_grad=True)], lr=0.1, momentum=0.9))
    theirs = repr(torch.optim.SGD([torch.ones(1, requires_grad=True)], lr=0.1, momentum=0.9))
    assert ours == theirs


def test_state_dict_round_trip_resumes_identically():
    def train(steps, opt=None, w=None, b=None):
        if w is None:
            w, b = _params(tapegrad)
            opt = tapegrad.optim.Adam([w, b], lr=0.01)
        for _ in range(steps):
            opt.zero_grad()
            _loss(tapegrad, w, b).backward()
            opt.step()
        return w, b, opt

    w, b, opt = train(20)
    w1, b1, opt1 = train(10)
    sd = opt1.state_dict()
    assert sorted(sd["state"][0]) == ["exp_avg", "exp_avg_sq", "step"] and sd["param_groups"][0]["params"] == [0, 1]
    w2, b2 = tapegrad.tensor(w1.detach().numpy(), requires_grad=True), tapegrad.tensor(b1.detach().numpy(),
                                                                                     requires_grad=True)
    opt2 = tapegrad.optim.Adam([w2, b2], lr=0.01)
    opt2.load_state_dict(sd)
    train(10, opt2, w2, b2)
    assert w2.detach().numpy().tobytes() == w.detach().numpy().tobytes()


def test_scheduler_state_dict_and_last_lr():
    opt = tapegrad.optim.SGD([tapegrad.ones(1, requires_grad=True)], lr=1.0)
    s = tapegrad.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    for _ in range(3):
        opt.step()
        s.step()
    sd = s.state_dict()
    assert "optimizer" not in sd and sd["last_epoch"] == 3 and s.get_last_lr() == [0.5]
    opt2 = tapegrad.optim.SGD([tapegrad.ones(1, requires_grad=True)], lr=1.0)
    s2 = tapegrad.optim.lr_scheduler.StepLR(opt2, step_size=2, gamma=0.5)
    s2.load_state_dict(sd)
    assert s2.last_epoch == 3 and math.isclose(s2.get_last_lr()[0], 0.5)


@pytest.mark.parametrize("name", ["SGD", "Adam"])
def test_a_step_moves_each_updated_parameter_version_on_as_torch(torch, name):
    # (the optimizers' in-place update bumps the version counter, made at 1 when the parameter had none yet)
    versions = []
    for m in (tapegrad, torch):
        p = m.nn.Parameter(m.ones(3))
        q = m.nn.Parameter(m.ones(3))
        opt = getattr(m.optim, name)([p, q], lr=0.1, **({"momentum": 0.9} if name == "SGD" else {}))
        seen = []
        for _ in range(2):
            (p * 2).sum().backward()      # q gets no gradient: not updated, its version stays
            opt.step()
            seen.append((p._version, q._version))
        versions.append(seen)
    assert versions[0] == versions[1]


def _embedding_run(m, make_opt, steps=100, sparse=False):
    """An embedding table trained on a few rows per step (the rest untouched): SparseAdam's use."""
    rng = np.random.default_rng(3)
    emb = m.nn.Embedding(12, 3, padding_idx=0, sparse=sparse, dtype=m.float64)
    with m.no_grad():
        emb.weight.copy_(m.tensor(np.random.default_rng(4).standard_normal((12, 3))))
    opt = make_opt(m, emb.parameters())
    for _ in range(steps):
        idx = m.tensor(rng.integers(0, 6, size=(4,)))      # rows 6.. are never looked up, row 0 is padding
        target = m.tensor(rng.standard_normal((4, 3)))
        opt.zero_grad()
        ((emb(idx) - target) ** 2).sum().backward()
        opt.step()
    return emb.weight.detach().numpy(), opt


@pytest.mark.parametrize("kw", [{}, {"lr": 0.01, "betas": (0.8, 0.99), "eps": 1e-6, "maximize": False}])
def test_sparse_adam_matches_torch_on_a_sparse_embedding(torch, kw):
    make = lambda m, p: m.optim.SparseAdam(list(p), **({"lr": 0.05} | kw))
    ours, opt = _embedding_run(tapegrad, make)
    theirs, topt = _embedding_run(torch, make, sparse=True)
    _close(ours, theirs)
    assert sorted(opt.state_dict()["state"][0]) == sorted(topt.state_dict()["state"][0])
    np.testing.assert_array_equal(ours[6:], np.random.default_rng(4).standard_normal((12, 3))[6:])


def test_sparse_adam_errors_as_torch(torch):
    for m in (tapegrad, torch):
        w = m.ones(2, requires_grad=True)
        with pytest.raises(ValueError, match="Invalid learning rate: 0"):
            m.optim.SparseAdam([w], lr=0)
        with pytest.raises(ValueError, match="Invalid beta parameter at index 1: 1.0"):
            m.optim.SparseAdam([w], betas=(0.9, 1.0))


@pytest.mark.parametrize("shape", [(3, 4), (5, 2)])
@pytest.mark.parametrize("kw", [dict(lr=0.02, weight_decay=0.01),
                                dict(lr=0.01, nesterov=False, adjust_lr_fn="match_rms_adamw"),
                                dict(lr=0.02, momentum=0.9, ns_steps=3)])
def test_muon_matches_torch_over_100_steps(torch, shape, kw):
    # (torch runs the Newton-Schulz iteration in bfloat16, tapegrad rounds to bfloat16 by hand: measured agreement
    # ~1e-16 after 100 steps, up to ~1e-8 where one bfloat16 rounding falls the other way)
    rng = np.random.default_rng(0)
    W, Xs, Ys = rng.standard_normal(shape), rng.standard_normal((8, shape[1])), rng.standard_normal((8, shape[0]))
    res = []
    for m in (tapegrad, torch):
        w = m.tensor(W.copy(), requires_grad=True)
        opt = m.optim.Muon([w], **kw)
        for _ in range(100):
            opt.zero_grad()
            ((m.tanh(m.tensor(Xs) @ w.T) - m.tensor(Ys)) ** 2).mean().backward()
            opt.step()
        res.append(w.detach().numpy())
    np.testing.assert_allclose(res[0], res[1], rtol=0, atol=1e-7)
    assert np.abs(res[0] - W).max() > 0.05


def test_muon_rejects_what_torch_rejects(torch):
    for m in (tapegrad, torch):
        with pytest.raises(ValueError, match="Muon only supports 2D parameters whereas we found a parameter with "
                                             "size: (tapegrad|torch).Size\\(\\[3\\]\\)"):
            m.optim.Muon([m.ones(3, requires_grad=True)])
        with pytest.raises(ValueError, match="Adjust learning rate function foo is not supported"):
            m.optim.Muon([m.ones(2, 2, requires_grad=True)], adjust_lr_fn="foo")


NEW = ["rprop", "asgd_t0_wd", "adafactor_wd_eps_d"]


@pytest.mark.parametrize("name", NEW)
def test_new_optimizers_state_dict_keys_and_round_trip(torch, name):
    ours = _run(tapegrad, OPTIMIZERS[name], steps=10)[3]
    theirs = _run(torch, OPTIMIZERS[name], steps=10)[3]
    sd, tsd = ours.state_dict(), theirs.state_dict()
    for k in sd["state"]:
        assert list(sd["state"][k]) == list(tsd["state"][k])
        for key, v in sd["state"][k].items():
            tv = tsd["state"][k][key]
            assert tuple(v.shape) == tuple(tv.shape) and str(v.dtype)[9:] == str(tv.dtype)[6:], key
            _close(v.numpy(), tv.numpy())
    assert [sorted(g) for g in sd["param_groups"]] == [sorted(g) for g in tsd["param_groups"]]
    assert repr(ours) == repr(theirs)
    # resuming from the state dict continues exactly as an uninterrupted run
    w, b = _params(tapegrad)
    opt = OPTIMIZERS[name](tapegrad, [w, b])
    w1, b1, _, o1 = _run(tapegrad, OPTIMIZERS[name], steps=10)
    w2, b2 = tapegrad.tensor(w1, requires_grad=True), tapegrad.tensor(b1, requires_grad=True)
    opt = OPTIMIZERS[name](tapegrad, [w2, b2])
    opt.load_state_dict(o1.state_dict())
    for _ in range(10):
        opt.zero_grad()
        _loss(tapegrad, w2, b2).backward()
        opt.step()
    full = _run(tapegrad, OPTIMIZERS[name], steps=20)
    np.testing.assert_array_equal(w2.detach().numpy(), full[0])


@pytest.mark.parametrize("make,message", [
    (lambda m, p: m.optim.Rprop(p, etas=(1.5, 1.2)), "Invalid eta values: 1.5, 1.2"),
    (lambda m, p: m.optim.Rprop(p, lr=-1.0), "Invalid learning rate: -1.0"),
    (lambda m, p: m.optim.ASGD(p, weight_decay=-1), "Invalid weight_decay value: -1"),
    (lambda m, p: m.optim.Adafactor(p, beta2_decay=0.5), "beta2_decay should be <= 0 but is: 0.5"),
    (lambda m, p: m.optim.Adafactor(p, d=0.5), "Clipping threshold d should be >= 1 but is: 0.5"),
    (lambda m, p: m.optim.Adafactor(p, eps=(-1.0, 1e-3)), "epsilon1 should be >= 0 but is: -1.0"),
])
def test_new_optimizers_validate_as_torch(torch, make, message):
    for m in (tapegrad, torch):
        with pytest.raises(ValueError, match=re.escape(message)):
            make(m, [m.ones(2, requires_grad=True)])


def test_cyclic_lr_state_dict_round_trip(torch):
    sds = []
    for m in (tapegrad, torch):
        opt = m.optim.SGD([m.zeros(1, requires_grad=True)], lr=0.1, momentum=0.9)
        s = m.optim.lr_scheduler.CyclicLR(opt, 0.01, 0.1, step_size_up=3, mode="exp_range", gamma=0.9)
        for _ in range(5):
            opt.step()
            s.step()
        sds.append(s.state_dict())
    assert sorted(sds[0]) == sorted(sds[1])
    opt = tapegrad.optim.SGD([tapegrad.zeros(1, requires_grad=True)], lr=0.1, momentum=0.9)
    s2 = tapegrad.optim.lr_scheduler.CyclicLR(opt, 0.01, 0.1, step_size_up=3, mode="exp_range", gamma=0.9)
    s2.load_state_dict(sds[0])
    assert s2.last_epoch == 5 and s2.get_last_lr() == sds[1]["_last_lr"]
    s2.step()
    assert s2.scale_fn(2) == 0.9 ** 2


def _get_lr_and_resume(m, name):
    """get_lr() called outside step() (SimCLR logs `scheduler.get_lr()[0]`), and a scheduler made with
    last_epoch=k over an optimizer that has 'initial_lr' (a resumed run): torch's step counts decide the formula."""
    import warnings
    out = []
    for resume in (False, True):
        w = m.nn.Parameter(m.ones(2))
        opt = m.optim.SGD([w], lr=0.3)
        if resume:
            opt.param_groups[0]["initial_lr"] = 0.5
        sched = SCHEDULERS[name](m, opt) if not resume else _resumed(m, name, opt)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for _ in range(4):
                out.append(list(sched.get_lr()) + sched.get_last_lr() + [opt.param_groups[0]["lr"]])
                opt.step()
                sched.step()
    return out


def _resumed(m, name, opt):
    s = m.optim.lr_scheduler
    return {"exponential": lambda: s.ExponentialLR(opt, gamma=0.9, last_epoch=3),
            "cosine": lambda: s.CosineAnnealingLR(opt, T_max=8, eta_min=0.01, last_epoch=3),
            "linear": lambda: s.LinearLR(opt, start_factor=0.1, total_iters=6, last_epoch=3),
            "polynomial": lambda: s.PolynomialLR(opt, total_iters=6, power=2.0, last_epoch=3),
            "multiplicative": lambda: s.MultiplicativeLR(opt, lambda e: 0.9, last_epoch=3),
            "step": lambda: s.StepLR(opt, step_size=2, gamma=0.5, last_epoch=3),
            "constant": lambda: s.ConstantLR(opt, factor=0.3, total_iters=5, last_epoch=3)}[name]()


@pytest.mark.parametrize("name", ["exponential", "cosine", "linear", "polynomial", "multiplicative", "step",
                                  "constant"])
def test_scheduler_get_lr_outside_step_and_resumed_match_torch(torch, name):
    _close(np.array(_get_lr_and_resume(tapegrad, name)), np.array(_get_lr_and_resume(torch, name)), rtol=1e-12)
