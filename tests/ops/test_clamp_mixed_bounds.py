"""clamp/clip with one number and one tensor bound take torch's Number overload: a 0-d tensor without grad is
read as a number (YOLO target builders write ``gj.clamp_(0, gain[3] - 1)``), with the number's type promotion; any
other tensor there is a TypeError, as in torch."""

import numpy as np
import pytest

import tapegrad

OK = [
    "x.clamp(0, torch.tensor(3.))", "x.clamp(torch.tensor(1), 3)", "x.clamp(min=0.5, max=torch.tensor(3))",
    "torch.clip(x, 0, torch.tensor(3.))", "x.clone().clamp_(0, torch.tensor(3))", "f.clamp(0, torch.tensor(1.5))",
    "torch.clamp(f, torch.tensor(-0.5, dtype=torch.float64), 1)", "f.clone().clip_(torch.tensor(0), 1)",
    "torch.tensor([1, 2], dtype=torch.uint8).clamp(-1, torch.tensor(1, dtype=torch.uint8))",
    "f.clamp(0, torch.tensor(float('nan')))", "torch.clamp(x, 0, torch.tensor(3.), out=torch.empty(3))",
]
BAD = [
    "torch.clamp(f, 1, torch.tensor([2., 3., 4.]))", "f.clamp(0.5, torch.tensor([3, 4, 5]))",
    "torch.clamp(f, 1, torch.tensor(2.5, requires_grad=True))", "x.clone().clamp_(0, torch.tensor(3.))",
]


def _env(T):
    return {"torch": T, "x": T.tensor([5, -1, 2]), "f": T.tensor([0.25, -2.0, 3.0])}


@pytest.mark.parametrize("expr", OK)
def test_number_and_0d_tensor_bounds_as_torch(torch, expr):
    expected = eval(expr, _env(torch))
    got = eval(expr, _env(tapegrad))
    assert str(got.dtype) == str(expected.dtype).replace("torch", "tapegrad")
    np.testing.assert_array_equal(got.numpy(), expected.numpy())


@pytest.mark.parametrize("expr", BAD)
def test_other_mixed_bounds_raise_as_torch(torch, expr):
    with pytest.raises(Exception) as want:
        eval(expr, _env(torch))
    with pytest.raises(type(want.value)):
        eval(expr, _env(tapegrad))


def test_0d_bound_gradient_goes_to_input_only():
    a = tapegrad.tensor([0.5, 2.0, 3.0], dtype=tapegrad.float64, requires_grad=True)
    tapegrad.clamp(a, 1, tapegrad.tensor(2.5, dtype=tapegrad.float64)).sum().backward()
    assert a.grad.tolist() == [0.0, 1.0, 0.0]


@pytest.mark.parametrize("expr", [
    "x.clone().clamp_(0, 1.5)", "x.clone().clamp_(0.5)", "x.clone().clamp_min_(0.5)", "x.clone().clamp_(max=2.5)",
    "x.clone().clip_(0, torch.tensor(3.))", "x.int().clamp_(0, 1.5)", "torch.tensor([True]).clamp_(0, 1.5)",
    "x.clone().clamp_(torch.tensor([0.5, 1., 2.]), None)", "x.clone().clamp_max_(torch.tensor(2.5))",
])
def test_inplace_cast_error_words_as_torch(torch, expr):
    """The Number-overload kernel names the output type as C++ does ('long int'); the Tensor one says 'Long'."""
    with pytest.raises(RuntimeError) as want:
        eval(expr, _env(torch))
    with pytest.raises(RuntimeError) as got:
        eval(expr, _env(tapegrad))
    assert str(got.value) == str(want.value)
