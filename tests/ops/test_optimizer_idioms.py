"""Ops as hand-written optimizers call them (torch_optimizer's AMSGrad variants, LAMB, the Beale/Rosenbrock
benchmarks), against torch: ``torch.max(a, b, out=a)``, a 0-d tensor as ``alpha``/``value``, and the exponents
torch's pow kernel computes by formula (3, -2, -0.5), bit for bit, with their gradients."""

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


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("e", [3, 3.0, -2, -0.5, 4, 2, -1])
def test_pow_exponents_bitwise(torch, dtype, e):
    """torch's kernel: x * x * x, 1 / (x * x), 1 / sqrt(x) (and x * x, 1 / x), each step rounded; the backward's
    ``pow(x, e - 1)`` goes through the same kernel (e = 4 gives x * x * x there). Other exponents are a general
    power in torch (its rounding, not NumPy's): close, not bit for bit."""
    rng = np.random.default_rng(7)
    x = rng.uniform(0.05, 4.0, 2000) * np.where(rng.random(2000) < 0.5, -1, 1)
    if e != int(e):
        x = np.abs(x)

    def run(T):
        t = T.tensor(x, dtype=getattr(T, dtype), requires_grad=True)
        y = t ** e
        g, = T.autograd.grad(y, t, T.ones_like(y))
        return y.detach().numpy(), g.numpy()
    (ye, ge), (yg, gg) = _both(torch, run)
    rtol = 1e-6 if dtype == "float32" else 1e-14
    for got, expected, exact in ((yg, ye, e != 4), (gg, ge, e in (3, 4, 2, -1))):
        if exact:
            np.testing.assert_array_equal(got, expected)
        else:
            np.testing.assert_allclose(got, expected, rtol=rtol)


def test_pow_special_exponents_gradcheck():
    x = tapegrad.tensor([0.7, 1.3, 2.1], dtype=tapegrad.float64, requires_grad=True)
    for e in (3, -2, -0.5):
        assert tapegrad.autograd.gradcheck(lambda t: t ** e, (x,))
        assert tapegrad.autograd.gradgradcheck(lambda t: t ** e, (x,))


@pytest.mark.filterwarnings("ignore:Using backward\\(\\) with create_graph=True")
def test_beale_gradient_bitwise(torch):
    """The optimizer benchmarks' Beale function: ``y ** 3`` inside, gradient taken with create_graph."""
    def run(T):
        x = T.tensor([0.8140911, -1.1420619], requires_grad=True)
        a, b = x
        f = (1.5 - a + a * b) ** 2 + (2.25 - a + a * b ** 2) ** 2 + (2.625 - a + a * b ** 3) ** 2
        f.backward(create_graph=True)
        return f.item(), x.grad.tolist()
    expected, got = _both(torch, run)
    assert got == expected
