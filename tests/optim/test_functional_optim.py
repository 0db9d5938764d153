"""The functional update rules (``torch.optim.adam.adam``, ``adamw.adamw``, ``sgd.sgd``, ``torch.optim._functional``)
against torch: parameters, moments, step counters and momentum buffers (created in the list where it holds None),
with AMSGrad, maximize, a tensor lr, decoupled weight decay, dampening and Nesterov."""

import numpy as np

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
