"""Ops as hand-written optimizers call them (torch_optimizer's AMSGrad variants, LAMB, the Beale/Rosenbrock
benchmarks), against torch: ``torch.max(a, b, out=a)``, a 0-d tensor as ``alpha``/``value``."""

import numpy as np
import pytest

import tapegrad


def _both(torch, fn):
    return fn(torch), fn(tapegrad)


@pytest.mark.parametrize("op", ["max", "min"])
def test_max_min_of_two_tensors_writes_out(torch, op):
    def run(T):
        m = T.tensor([0.5, 2.0, -1.0])
        v = T.tensor([1.0, 1.0, 1.0])
        r = getattr(T, op)(m, v, out=m)        # AMSGrad: torch.max(max_exp_avg_sq, exp_avg_sq, out=max_exp_avg_sq)
        o = T.empty(3)
        r2 = getattr(T, op)(v, other=T.tensor([3.0, 0.0, 1.0]), out=o)
        return m.tolist(), r is m, o.tolist(), r2 is o
    expected, got = _both(torch, run)
    assert got == expected


@pytest.mark.parametrize("expr", [
    "a.add(b, alpha=-0.01 * tr)", "a.clone().add_(b, alpha=tr)", "a.sub(b, alpha=tr)", "a.clone().sub_(b, alpha=tr)",
    "torch.add(a, b, alpha=torch.tensor(3))", "a.addcmul(b, b, value=tr)", "a.clone().addcmul_(b, a, value=-tr)",
    "a.addcdiv(b, b + 1, value=tr)", "torch.addcdiv(a, b, b + 2, value=tr.double())",
])
def test_zero_dim_tensor_as_alpha_or_value(torch, expr):
    def run(T):
        env = {"torch": T, "a": T.arange(6.0).reshape(2, 3), "b": T.full((2, 3), 0.25), "tr": T.tensor(2.5)}
        r = eval(expr, env)
        return r.dtype == T.float32, r.numpy()
    (de, e), (dg, g) = _both(torch, run)
    assert de and dg
    np.testing.assert_array_equal(g, e)


@pytest.mark.parametrize("expr", [
    "a.add(b, alpha=torch.tensor([2.0]))", "a.sub_(b, alpha=torch.tensor([2.0]))",
    "a.add(b, alpha=torch.tensor(2.0, requires_grad=True))", "a.addcmul(b, b, value=torch.ones(2))",
    "a.addcdiv(b, b, value=torch.tensor(1.0, requires_grad=True))",
])
def test_other_tensors_as_alpha_or_value_refused(torch, expr):
    def run(T):
        with pytest.raises(TypeError) as info:
            eval(expr, {"torch": T, "a": T.ones(2), "b": T.ones(2)})
        return str(info.value)
    expected, got = _both(torch, run)
    assert got == expected
