"""float32 lerp and addcdiv round as torch's CPU kernels do (lerp a fused multiply-add, addcdiv
``x + (value * t1) / t2``): bit for bit against torch, in-place and out-of-place, broadcast, with the scalar and
the tensor weight. A soft target update by ``lerp_`` then stays torch's number for number. (add/sub with alpha and
addcmul are fused in torch too; emulating that in float64 costs three times their speed, so they still round the
product first.)"""

import numpy as np
import pytest

import tapegrad

EXPRS = [
    "a.addcdiv(b, c, value=0.001)", "a.addcdiv(b, c)", "a.clone().addcdiv_(b, c, value=-3e-4)",
    "a[:1].addcdiv(b, c, value=0.5)", "a.lerp(b, 0.1)", "a.lerp(b, 0.9)", "a.clone().lerp_(b, 0.005)",
    "a.lerp(b, w)", "torch.lerp(a, b, 1.5)", "torch.lerp(a, b, -0.25)", "a.lerp(b[:1], w)", "a[:1].lerp(b, 0.3)",
    "torch.lerp(a[0], b[0], 0.3)", "a[0].lerp(b[1], w[2])", "a[0].addcdiv(b[1], c[2], value=0.7)",
]


def _inputs(T, n):
    rng = np.random.default_rng(n)
    a = rng.standard_normal(n).astype(np.float32)
    b = (rng.standard_normal(n) * 10.0 ** rng.uniform(-3, 3, n)).astype(np.float32)
    c = (np.abs(rng.standard_normal(n)) + 0.1).astype(np.float32)
    w = rng.uniform(0, 1, n).astype(np.float32)
    return {"torch": T, "a": T.tensor(a), "b": T.tensor(b), "c": T.tensor(c), "w": T.tensor(w)}


@pytest.mark.parametrize("n", [5, 37, 1000])
@pytest.mark.parametrize("expr", EXPRS)
def test_float32_fused_ops_bitwise_as_torch(torch, expr, n):
    expected = eval(expr, _inputs(torch, n)).numpy()
    got = eval(expr, _inputs(tapegrad, n)).numpy()
    assert got.dtype == expected.dtype == np.float32
    np.testing.assert_array_equal(got.view(np.int32), expected.view(np.int32))


def test_soft_update_loop_stays_bitwise(torch):
    """Polyak averaging of a target copy by lerp_, 50 times, as RL scripts write it."""
    def run(T):
        rng = np.random.default_rng(0)
        p, t1 = T.tensor(rng.standard_normal(300).astype(np.float32)), T.zeros(300)
        for k in range(50):
            p.sub_(T.tensor(rng.standard_normal(300).astype(np.float32)) * 1e-3)
            t1.lerp_(p, 0.005)
        return t1.numpy().view(np.int32), p.numpy().view(np.int32)
    for e, g in zip(run(torch), run(tapegrad)):
        np.testing.assert_array_equal(g, e)


def test_gradients_unchanged(torch):
    """Only the float32 forward rounding changed: the gradients are the same formulas."""
    for T in (torch, tapegrad):
        a = T.tensor([1.0, -2.0, 3.0], requires_grad=True)
        b = T.tensor([0.5, 0.25, -1.0], requires_grad=True)
        (a.add(b, alpha=0.3) * a.lerp(b, 0.2) + a.addcmul(b, b, value=0.5) + a.addcdiv(b, a, value=2)).sum().backward()
        if T is torch:
            ga, gb = a.grad.numpy(), b.grad.numpy()
        else:
            np.testing.assert_allclose(a.grad.numpy(), ga, rtol=1e-6)
            np.testing.assert_allclose(b.grad.numpy(), gb, rtol=1e-6)
