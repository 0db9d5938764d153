"""``torch._C._are_functorch_transforms_active()`` against torch 2.13: True while a torch.func transform runs the
user's function (grad, grad_and_value, vjp, jacrev, jvp, jacfwd, hessian, vmap, vmap(grad), functionalize), False
in eager code, in forward AD's ``dual_level`` and in a ``vjp_fn`` call, back to False after an error inside a
transform; its argument error in torch's words. roma's Procrustes Function asks it under ``torch.compile``."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch", reason="torch is the oracle of these tests")

import tapegrad  # noqa: E402
import tapegrad.func  # noqa: E402,F401


def _report(m):
    fn_ = m.func
    fw = m.autograd.forward_ad
    seen = []

    def f(x):
        seen.append(m._C._are_functorch_transforms_active())
        return (x.sin() * 2).sum()

    def boom(x):
        raise ValueError("inside")

    x = m.tensor([0.5, 1.0], dtype=m.float64)
    f(x)
    fn_.grad(f)(x)
    fn_.grad_and_value(f)(x)
    fn_.vmap(f)(x.reshape(2, 1))
    fn_.jvp(f, (x,), (x,))
    _, vjp_fn = fn_.vjp(f, x)
    fn_.jacrev(f)(x)
    fn_.jacfwd(f)(x)
    fn_.hessian(f)(x)
    fn_.functionalize(f)(x)
    fn_.vmap(fn_.grad(f))(x.reshape(2, 1))
    fn_.grad(fn_.grad(f))(m.tensor(0.3, dtype=m.float64))
    with fw.dual_level():
        f(fw.make_dual(x, x))
    outside = []
    vjp_fn(m.tensor(1.0, dtype=m.float64))
    outside.append(m._C._are_functorch_transforms_active())
    with pytest.raises(ValueError):
        fn_.grad(boom)(x)
    outside.append(m._C._are_functorch_transforms_active())
    errors = []
    for args, kwargs in (((1,), {}), ((), {"x": 2}), ((1, "a"), {"x": 2})):
        with pytest.raises(TypeError) as e:
            m._C._are_functorch_transforms_active(*args, **kwargs)
        errors.append(str(e.value))
    return seen, outside, errors


def test_are_functorch_transforms_active_vs_torch():
    mine, theirs = _report(tapegrad), _report(torch)
    assert mine == theirs
    assert mine[0][0] is False and mine[0][1] is True
