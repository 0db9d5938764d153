"""gradcheck's modes against torch's: ``check_forward_ad`` compares the forward-mode Jacobian (a tangent per input
element) with finite differences, ``check_backward_ad=False`` leaves backward out (a Function with only ``jvp``)."""

import numpy as np
import pytest

import tapegrad


def _functions(m, wrong_jvp=False):
    class Exp(m.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.result = x.exp()
            return ctx.result

        @staticmethod
        def jvp(ctx, t):
            return t * ctx.result * (2 if wrong_jvp else 1)

    return Exp


@pytest.mark.parametrize("wrong", [False, True])
def test_check_forward_ad_without_backward(torch, wrong):
    got = []
    for m in (tapegrad, torch):
        Exp = _functions(m, wrong)
        x = m.tensor(np.linspace(-1, 1, 6).reshape(2, 3), dtype=m.float64, requires_grad=True)
        got.append(m.autograd.gradcheck(Exp.apply, (x,), check_forward_ad=True, check_backward_ad=False,
                                        check_undefined_grad=False, check_batched_grad=False, raise_exception=False))
    assert got[0] == got[1] == (not wrong)


def test_check_forward_ad_of_builtin_ops_with_several_inputs(torch):
    for m in (tapegrad, torch):
        a = m.tensor([[0.3, -0.7], [1.2, 0.5]], dtype=m.float64, requires_grad=True)
        b = m.tensor([0.9, -0.4], dtype=m.float64, requires_grad=True)
        assert m.autograd.gradcheck(lambda a, b: ((a @ b).sin(), a * b.tanh()), (a, b), check_forward_ad=True)
        z = m.tensor([0.3 + 0.2j, -0.5 + 1.0j], dtype=m.complex128, requires_grad=True)
        assert m.autograd.gradcheck(lambda z: (z * z).exp(), (z,), check_forward_ad=True)


def test_wrong_forward_derivative_raises(torch):
    for m in (tapegrad, torch):
        Exp = _functions(m, wrong_jvp=True)
        x = m.tensor([0.1, 0.2], dtype=m.float64, requires_grad=True)
        with pytest.raises(RuntimeError, match="Jacobian computed with forward mode mismatch for output 0 with respect to input 0"):
            m.autograd.gradcheck(Exp.apply, (x,), check_forward_ad=True, check_backward_ad=False)


def test_gradgradcheck_draws_its_grad_outputs_from_the_global_generator(torch):
    """Without grad_outputs, gradgradcheck draws them as torch does (make_tensor in [-1, 1) from the global
    generator), so a seeded program's later draws stay torch's."""
    after = []
    for m in (tapegrad, torch):
        m.manual_seed(3)
        x = m.rand(2, 3, dtype=m.float64, requires_grad=True)
        assert m.autograd.gradgradcheck(lambda x: (x.sin() * x, x.exp().sum()), (x,))
        assert m.autograd.gradgradcheck(lambda x: x * x, (x,), check_fwd_over_rev=True)
        after.append(m.rand(4).tolist())
    assert after[0] == after[1]


# outputs that do not require grad (computed through .item() or .detach(), kornia's Otsu threshold) are left out, and
# the rest are numbered among themselves; with none that requires grad, every finite difference must be zero
NON_DIFF = {
    "item_output": lambda m, x: (x.sin(), m.ones(1, dtype=m.float64) * x.max().item()),
    "first_is_detached": lambda m, x: (x.detach() * 2, x.cos()),
    "wrong_after_detached": lambda m, x: (x.detach() * 2, _WrongGrad(m).apply(x)),
    "none_differentiable_constant": lambda m, x: (x.detach() * 0 + 1,),
    "none_differentiable_varies": lambda m, x: (x.detach() * 3,),
}


def _WrongGrad(m):
    class Wrong(m.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 3

    return Wrong


@pytest.mark.parametrize("name", list(NON_DIFF))
@pytest.mark.parametrize("fast", [False, True])
def test_outputs_without_grad_are_not_compared(torch, name, fast):
    if fast and name == "first_is_detached":
        pytest.skip("torch's fast mode pairs its numerical vJu with the wrong output when a non-differentiable "
                    "output comes first (it reports a mismatch); tapegrad's fast mode is the slow check")
    got = []
    for m in (tapegrad, torch):
        x = m.tensor([0.3, -0.7, 1.1], dtype=m.float64, requires_grad=True)
        f = lambda x: NON_DIFF[name](m, x)      # noqa: E731
        try:
            got.append(m.autograd.gradcheck(f, (x,), fast_mode=fast))
        except Exception as e:
            got.append(str(e).split("\n")[0].split(",")[0])
    assert got[0] == got[1]
