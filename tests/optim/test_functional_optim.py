"""The functional update rules (``torch.optim.adam.adam``, ``adamw.adamw``, ``sgd.sgd``, ``torch.optim._functional``)
against torch: parameters, moments, step counters and momentum buffers (created in the list where it holds None),
with AMSGrad, maximize, a tensor lr, decoupled weight decay, dampening and Nesterov."""

import numpy as np
import pytest

import tapegrad


def _run(T):
    from importlib import import_module
    F = import_module(T.__name__ + ".optim._functional")
    adam = import_module(T.__name__ + ".optim.adam").adam
    sgd = import_module(T.__name__ + ".optim.sgd").sgd
    rng = np.random.default_rng(0)
    ps = [T.tensor(rng.standard_normal((3, 2))), T.tensor(rng.standard_normal(4))]
    grads = [T.tensor(rng.standard_normal((3, 2))), T.tensor(rng.standard_normal(4))]
    m, v, vm = ([T.zeros_like(p) for p in ps] for _ in range(3))
    steps = [T.tensor(0.0) for _ in ps]
    for _ in range(3):
        adam(ps, grads, m, v, vm, steps, amsgrad=True, beta1=0.9, beta2=0.99, lr=0.01, weight_decay=0.1, eps=1e-8,
             maximize=False)
        F.adamw(ps, grads, m, v, vm, steps, amsgrad=False, beta1=0.9, beta2=0.99, lr=T.tensor(0.01),
                weight_decay=0.1, eps=1e-8, maximize=True)
    bufs = [None, None]
    for _ in range(3):
        sgd(ps, grads, bufs, weight_decay=0.01, momentum=0.9, lr=0.1, dampening=0.1, nesterov=False, maximize=False)
        F.sgd(ps, grads, bufs, weight_decay=0.0, momentum=0.9, lr=0.1, dampening=0.0, nesterov=True, maximize=True)
    F.sgd(ps, grads, [None, None], weight_decay=0.0, momentum=0.0, lr=0.1, dampening=0.0, nesterov=False,
          maximize=False)
    return [a.numpy() for a in ps + m + v + vm + bufs] + [[s.item() for s in steps]]


def test_functional_rules_match_torch(torch):
    expected, got = _run(torch), _run(tapegrad)
    assert got[-1] == expected[-1]
    for g, e in zip(got[:-1], expected[:-1]):
        np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-15)


def _run_rest(T, dtype):
    """Three steps of each other functional rule (alternating maximize), from torch's own state lists."""
    from importlib import import_module
    F = import_module(T.__name__ + ".optim._functional")
    rng = np.random.default_rng(1)
    dt = getattr(T, dtype)

    def lists():
        return [T.tensor(rng.standard_normal((3, 2)), dtype=dt), T.tensor(rng.standard_normal(4), dtype=dt)]

    def zeros(ps, fill=0.0):
        return [T.full_like(p, fill) for p in ps]

    def steps():
        return [T.tensor(0.0) for _ in range(2)]

    out = []
    ps, gs = lists(), lists()
    sums, st = zeros(ps, 0.1), steps()
    for i in range(3):
        F.adagrad(ps, gs, sums, st, lr=0.1, weight_decay=0.01, lr_decay=0.01, eps=1e-10, maximize=bool(i % 2))
    out += ps + sums + st
    sq, acc, st = zeros(ps), zeros(ps), steps()
    for i in range(3):
        F.adadelta(ps, gs, sq, acc, st, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0.01, maximize=bool(i % 2))
    out += ps + sq + acc + st
    m, u, st = zeros(ps), zeros(ps), steps()
    for i in range(3):
        F.adamax(ps, gs, m, u, st, eps=1e-8, beta1=0.9, beta2=0.99, lr=0.01, weight_decay=0.01, maximize=bool(i % 2))
    out += ps + m + u + st
    ax, mu, eta, st = zeros(ps), [T.ones(()) for _ in ps], [T.tensor(0.05) for _ in ps], steps()
    for i in range(3):
        F.asgd(ps, gs, ax, mu, eta, st, lambd=1e-3, lr=0.05, t0=1.0, alpha=0.75, weight_decay=0.01,
               maximize=bool(i % 2))
    out += ps + ax + mu + eta + st
    m, v, mp, st = zeros(ps), zeros(ps), [T.ones(()) for _ in ps], steps()
    for i in range(3):
        F.nadam(ps, gs, m, v, mp, st, beta1=0.9, beta2=0.99, lr=0.01, weight_decay=0.01, momentum_decay=4e-3,
                eps=1e-8, maximize=bool(i % 2), decoupled_weight_decay=i == 2)
    out += ps + m + v + mp + st
    m, v, st = zeros(ps), zeros(ps), steps()
    for i in range(8):      # past step 5, where the rectified form begins
        F.radam(ps, gs, m, v, st, beta1=0.9, beta2=0.99, lr=0.01, weight_decay=0.01, eps=1e-8,
                maximize=bool(i % 2), decoupled_weight_decay=i == 7)
    out += ps + m + v + st
    for centered, momentum in ((False, 0.0), (True, 0.5)):
        sq, ga, buf, st = zeros(ps), zeros(ps), zeros(ps), steps()
        for i in range(3):
            F.rmsprop(ps, gs, sq, ga, buf, st, lr=0.01, alpha=0.9, eps=1e-8, weight_decay=0.01, momentum=momentum,
                      centered=centered, maximize=bool(i % 2))
        out += ps + sq + ga + buf + st
    prev, sizes, st = zeros(ps), zeros(ps, 0.01), steps()
    for i in range(4):
        grads = gs if i != 2 else [-g for g in gs]      # a sign flip: that step is skipped
        F.rprop(ps, grads, prev, sizes, st, step_size_min=1e-6, step_size_max=50.0, etaminus=0.5, etaplus=1.2,
                maximize=False)
    out += ps + prev + sizes + st
    return [(a.dtype, a.numpy()) for a in out]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_every_functional_rule_matches_torch(torch, dtype):
    expected, got = _run_rest(torch, dtype), _run_rest(tapegrad, dtype)
    assert len(got) == len(expected)
    for (gd, g), (ed, e) in zip(got, expected):
        assert str(gd).split(".")[-1] == str(ed).split(".")[-1]
        np.testing.assert_allclose(g, e, rtol=1e-12 if dtype == "float64" else 1e-5, atol=1e-15 if dtype == "float64" else 1e-7)


@pytest.mark.parametrize("name", ["adam", "adagrad", "adamax", "radam", "rmsprop", "rprop"])
def test_functional_rules_refuse_number_steps_in_torch_words(torch, name):
    def call(T):
        from importlib import import_module
        fn = getattr(import_module(T.__name__ + ".optim._functional"), name)
        p, z = T.zeros(2), T.zeros(2)
        kw = {"adam": dict(amsgrad=False, beta1=0.9, beta2=0.99, lr=0.1, weight_decay=0.0, eps=1e-8,
                           maximize=False),
              "adagrad": dict(lr=0.1, weight_decay=0.0, lr_decay=0.0, eps=1e-10, maximize=False),
              "adamax": dict(eps=1e-8, beta1=0.9, beta2=0.99, lr=0.1, weight_decay=0.0),
              "radam": dict(beta1=0.9, beta2=0.99, lr=0.1, weight_decay=0.0, eps=1e-8),
              "rmsprop": dict(lr=0.1, alpha=0.9, eps=1e-8, weight_decay=0.0, momentum=0.0, centered=False),
              "rprop": dict(step_size_min=1e-6, step_size_max=50.0, etaminus=0.5, etaplus=1.2)}[name]
        lists = {"adam": 3, "adagrad": 1, "adamax": 2, "radam": 2, "rmsprop": 3, "rprop": 2}[name]
        with pytest.raises(RuntimeError) as e:
            fn([p], [z], *[[T.zeros(2)] for _ in range(lists)], [0], **kw)
        return str(e.value)
    assert call(tapegrad) == call(torch)


def test_functional_rules_live_in_their_optimizer_modules(torch):
    import tapegrad.optim._functional as F
    for name in ["adadelta", "adagrad", "adam", "adamax", "adamw", "asgd", "nadam", "radam", "rmsprop", "rprop",
                 "sgd"]:
        mod = __import__(f"tapegrad.optim.{name}", fromlist=[name])
        assert getattr(mod, name) is getattr(F, name)
        assert hasattr(torch.optim._functional, name)
