"""optim.swa_utils vs torch 2.13: AveragedModel (SWA, EMA, avg_fn / multi_avg_fn, use_buffers), update_bn and
SWALR give torch's numbers (float64, over many updates)."""

import warnings

import numpy as np
import pytest

import tapegrad

RNG = np.random.default_rng(7)
XS = [RNG.standard_normal((6, 3)) for _ in range(12)]
YS = [RNG.standard_normal((6, 2)) for _ in range(12)]


def _pair(torch):
    """The same small model (with a BatchNorm) in both libraries."""
    def make(m):
        return m.nn.Sequential(m.nn.Linear(3, 4), m.nn.BatchNorm1d(4), m.nn.ReLU(), m.nn.Linear(4, 2)).double()
    torch.manual_seed(0)
    tm = make(torch)
    gm = make(tapegrad)
    gm.load_state_dict({k: v.detach().numpy().copy() for k, v in tm.state_dict().items()})
    return gm, tm


def _train(m, model, averaged, steps=12, lr=0.1, sched=None):
    opt = m.optim.SGD(model.parameters(), lr=lr, momentum=0.5)
    swa_sched = sched(m, opt) if sched else None
    lrs = []
    for x, y in zip(XS[:steps], YS[:steps]):
        opt.zero_grad()
        ((model(m.tensor(x)) - m.tensor(y)) ** 2).mean().backward()
        opt.step()
        averaged.update_parameters(model)
        if swa_sched is not None:
            swa_sched.step()
            lrs.append(swa_sched.get_last_lr())
    return lrs


def _compare(ga, ta):
    gs, ts = ga.state_dict(), ta.state_dict()
    assert list(gs) == list(ts)
    for k in ts:
        np.testing.assert_allclose(gs[k].numpy(), ts[k].numpy(), rtol=1e-12, atol=1e-13, err_msg=k)


AVERAGERS = {
    "swa": lambda m: {},
    "ema_multi_buffers": lambda m: {"multi_avg_fn": m.optim.swa_utils.get_ema_multi_avg_fn(0.9),
                                    "use_buffers": True},
    "ema_avg_fn": lambda m: {"avg_fn": m.optim.swa_utils.get_ema_avg_fn(0.8)},
    "swa_multi": lambda m: {"multi_avg_fn": m.optim.swa_utils.get_swa_multi_avg_fn()},
    "swa_avg_fn_buffers_float": lambda m: {"avg_fn": m.optim.swa_utils.get_swa_avg_fn()},
}


@pytest.mark.parametrize("name", list(AVERAGERS))
def test_averaged_model_matches_torch(torch, name):
    gm, tm = _pair(torch)
    ga = tapegrad.optim.swa_utils.AveragedModel(gm, **AVERAGERS[name](tapegrad))
    ta = torch.optim.swa_utils.AveragedModel(tm, **AVERAGERS[name](torch))
    _train(tapegrad, gm, ga)
    _train(torch, tm, ta)
    _compare(ga, ta)
    assert int(ga.n_averaged) == 12 and repr(ga) == repr(ta).replace("torch.", "tapegrad.")
    x = XS[0]
    ga.eval(), ta.eval()
    np.testing.assert_allclose(ga(tapegrad.tensor(x)).detach().numpy(), ta(torch.tensor(x)).detach().numpy(),
                               rtol=1e-12, atol=1e-13)


def test_update_bn_matches_torch(torch):
    gm, tm = _pair(torch)
    ga, ta = tapegrad.optim.swa_utils.AveragedModel(gm), torch.optim.swa_utils.AveragedModel(tm)
    _train(tapegrad, gm, ga)
    _train(torch, tm, ta)
    loader_g = [(tapegrad.tensor(x), 0) for x in XS[:5]]
    loader_t = [(torch.tensor(x), 0) for x in XS[:5]]
    tapegrad.optim.swa_utils.update_bn(loader_g, ga)
    torch.optim.swa_utils.update_bn(loader_t, ta)
    _compare(ga, ta)
    bn = ga.module[1]
    assert bn.momentum == 0.1 and int(bn.num_batches_tracked) == 5 and ga.training


@pytest.mark.parametrize("kw", [{"swa_lr": 0.05}, {"swa_lr": 0.02, "anneal_epochs": 4, "anneal_strategy": "linear"},
                                {"swa_lr": 0.03, "anneal_epochs": 0}])
def test_swalr_matches_torch(torch, kw):
    gm, tm = _pair(torch)
    ga, ta = tapegrad.optim.swa_utils.AveragedModel(gm), torch.optim.swa_utils.AveragedModel(tm)
    make = lambda m, o: m.optim.swa_utils.SWALR(o, **kw)
    ours = _train(tapegrad, gm, ga, sched=make)
    theirs = _train(torch, tm, ta, sched=make)
    np.testing.assert_allclose(np.array(ours), np.array(theirs), rtol=1e-13)
    _compare(ga, ta)


def test_swalr_state_dict_round_trip_and_errors(torch):
    for m in (tapegrad, torch):
        opt = m.optim.SGD([m.zeros(1, requires_grad=True)], lr=1.0)
        with pytest.raises(ValueError, match="anneal_strategy must be one of 'cos' or 'linear', instead got foo"):
            m.optim.swa_utils.SWALR(opt, 0.1, anneal_strategy="foo")
        with pytest.raises(ValueError, match="anneal_epochs must be equal or greater than 0, got -1"):
            m.optim.swa_utils.SWALR(opt, 0.1, anneal_epochs=-1)
        with pytest.raises(ValueError, match=r"Invalid decay value 1.5 provided. Please provide a value in \[0,1\]"):
            m.optim.swa_utils.get_ema_multi_avg_fn(1.5)
        with pytest.raises(AssertionError, match="Only one of avg_fn and multi_avg_fn should be provided"):
            m.optim.swa_utils.AveragedModel(m.nn.Linear(1, 1), avg_fn=lambda *a: 0, multi_avg_fn=lambda *a: 0)
    opt = tapegrad.optim.SGD([tapegrad.zeros(1, requires_grad=True)], lr=1.0)
    s = tapegrad.optim.swa_utils.SWALR(opt, 0.1, anneal_epochs=5, anneal_strategy="linear")
    for _ in range(3):
        opt.step()
        s.step()
    sd = s.state_dict()
    assert "anneal_func" not in sd and sd["_anneal_strategy"] == "linear"
    opt2 = tapegrad.optim.SGD([tapegrad.zeros(1, requires_grad=True)], lr=1.0)
    s2 = tapegrad.optim.swa_utils.SWALR(opt2, 0.1)
    s2.load_state_dict(sd)
    assert s2.anneal_func(0.5) == 0.5 and s2.get_last_lr() == s.get_last_lr()
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        s2.get_lr()
    assert "please use `get_last_lr()`" in str(w[0].message)


def test_module_paths_of_swa_utils(torch):
    names = [n for n in torch.optim.swa_utils.__all__]
    assert all(hasattr(tapegrad.optim.swa_utils, n) for n in names)
