"""``scheduler.get_lr()`` called by a training script (TingsongYu's tutorial logs it each iteration) gives
torch's values and torch's UserWarning for every built-in scheduler; ``step()`` itself warns about nothing
but the order of ``optimizer.step()``."""

from __future__ import annotations

import warnings

import pytest

import tapegrad

_MAKERS = {
    "LambdaLR": lambda o, S: S.LambdaLR(o, lambda e: 0.9 ** e),
    "MultiplicativeLR": lambda o, S: S.MultiplicativeLR(o, lambda e: 0.9),
    "StepLR": lambda o, S: S.StepLR(o, step_size=2, gamma=0.1),
    "MultiStepLR": lambda o, S: S.MultiStepLR(o, milestones=[1, 3], gamma=0.5),
    "ConstantLR": lambda o, S: S.ConstantLR(o, factor=0.5, total_iters=2),
    "LinearLR": lambda o, S: S.LinearLR(o, start_factor=0.25, total_iters=3),
    "ExponentialLR": lambda o, S: S.ExponentialLR(o, gamma=0.8),
    "PolynomialLR": lambda o, S: S.PolynomialLR(o, total_iters=4, power=2.0),
    "CosineAnnealingLR": lambda o, S: S.CosineAnnealingLR(o, T_max=3),
    "CosineAnnealingWarmRestarts": lambda o, S: S.CosineAnnealingWarmRestarts(o, T_0=2, T_mult=2),
    "CyclicLR": lambda o, S: S.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=2),
    "OneCycleLR": lambda o, S: S.OneCycleLR(o, max_lr=0.5, total_steps=8),
}


def _run(lib, name):
    w = lib.zeros(2, requires_grad=True)
    opt = lib.optim.SGD([w], lr=0.1, momentum=0.9)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sched = _MAKERS[name](opt, lib.optim.lr_scheduler)
        made = len(caught)
        seen = []
        for _ in range(5):
            opt.step()
            sched.step()
            steps = len(caught)
            seen.append((sched.get_lr(), sched.get_last_lr(), opt.param_groups[0]["lr"]))
            assert len(caught) == steps + 1, "get_lr() warns once"
    messages = [str(c.message) for c in caught[made:]]
    return seen, messages


@pytest.mark.parametrize("name", sorted(_MAKERS))
def test_get_lr_outside_step_warns_as_torch(torch, name):
    (ours, m1), (theirs, m2) = _run(tapegrad, name), _run(torch, name)
    assert m1 == m2 and m1.count("To get the last learning rate computed by the scheduler, please use "
                                 "`get_last_lr()`.") == 5
    for a, b in zip(ours, theirs):
        assert a[0] == pytest.approx(b[0], rel=1e-12) and a[1] == pytest.approx(b[1], rel=1e-12)
        assert a[2] == pytest.approx(b[2], rel=1e-12)
