"""gradcheck and gradgradcheck must fail on a wrong derivative, not only pass on right ones: each check is run on
a Function whose first or second derivative is wrong on purpose."""

import pytest

import tapegrad
from tapegrad.autograd import Function
from tapegrad.autograd.gradcheck import GradcheckError


class SquareRightTwice(Function):
    """x**2 with a backward that is itself differentiable: first and second derivatives right."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        return 2 * x * grad


class SquareWrongSecond(SquareRightTwice):
    """x**2 whose backward hides x from the graph: the first derivative is right, the second (0, not 2) wrong."""

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        return 2 * x.detach() * grad


class SquareWrongFirst(SquareRightTwice):
    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        return 3 * x * grad


def _x():
    return tapegrad.tensor([0.5, -1.5, 2.0], dtype=tapegrad.float64, requires_grad=True)


def test_right_derivatives_pass_both_checks():
    assert tapegrad.autograd.gradcheck(SquareRightTwice.apply, (_x(),))
    assert tapegrad.autograd.gradgradcheck(SquareRightTwice.apply, (_x(),))


def test_a_wrong_first_derivative_fails_gradcheck():
    with pytest.raises(GradcheckError, match="Jacobian mismatch for output 0 with respect to input 0"):
        tapegrad.autograd.gradcheck(SquareWrongFirst.apply, (_x(),))
    assert tapegrad.autograd.gradcheck(SquareWrongFirst.apply, (_x(),), raise_exception=False) is False


def test_a_wrong_second_derivative_fails_gradgradcheck():
    # (gradgradcheck differentiates the first derivative numerically: that part runs under no_grad, yet the first
    # derivative it differentiates needs its graph; an empty numerical side once made this check pass vacuously)
    assert tapegrad.autograd.gradcheck(SquareWrongSecond.apply, (_x(),))
    with pytest.raises(GradcheckError, match="Jacobian mismatch"):
        tapegrad.autograd.gradgradcheck(SquareWrongSecond.apply, (_x(),))


def test_gradgradcheck_of_builtin_ops_with_views():
    # a view's first derivative is computed from outputs made under no_grad during the finite differences
    x = tapegrad.randn(3, 4, dtype=tapegrad.float64, requires_grad=True)
    assert tapegrad.autograd.gradgradcheck(lambda a: (a.t() * a.t()).diagonal(), (x,))
    assert tapegrad.autograd.gradgradcheck(lambda a: a[1:].sin().unsqueeze(0), (x,))


def test_outputs_that_differ_under_no_grad_are_an_error():
    # a function whose floating outputs under no_grad are not those it gives with grad mode on cannot be checked
    x = _x()

    def f(a):
        return (a * 2,) if tapegrad.is_grad_enabled() else ()

    with pytest.raises(GradcheckError, match="gave 0 floating outputs under no_grad"):
        tapegrad.autograd.gradcheck(f, (x,))
