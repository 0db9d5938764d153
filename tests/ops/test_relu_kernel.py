"""relu's forward kernel (``_max0``: NumPy's maximum against a block of zeros) on every path it takes: small
arrays, large C-contiguous ones (row by row, with a tail), other layouts, integer dtypes, special values."""

import numpy as np
import pytest

import tapegrad
from tapegrad.ops.elementwise.activations import _ZERO_BLOCK, _max0

R = np.random.default_rng(3)
SIZES = [(), (7,), (_ZERO_BLOCK,), (_ZERO_BLOCK + 1,), (3, _ZERO_BLOCK), (64, 16, 28, 28), (5, 7, 1001)]


@pytest.mark.parametrize("shape", SIZES, ids=str)
@pytest.mark.parametrize("layout", ["C", "F", "T", "strided"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int16])
def test_max0_equals_maximum_with_zero(shape, layout, dtype):
    x = (R.standard_normal(shape) * 10).astype(dtype)
    if layout == "F":
        x = np.asfortranarray(x)
    elif layout == "T":
        x = x.T
    elif layout == "strided" and x.ndim:
        x = x[..., ::2]
    got = _max0(x)
    want = np.maximum(x, dtype(0))
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)
    assert not np.shares_memory(got, x)


def test_max0_keeps_special_values():
    x = np.array([-0.0, 0.0, np.nan, -np.inf, np.inf, -1.0, 2.0] * 5000, np.float32)
    got, want = _max0(x), np.maximum(x, np.float32(0))
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


def test_relu_of_a_large_tensor_and_its_gradient(torch):
    x = R.standard_normal((4, 3, 50, 50))
    g = tapegrad.tensor(x, requires_grad=True)
    t = torch.tensor(x, requires_grad=True)
    tapegrad.relu(g).sum().backward()
    torch.relu(t).sum().backward()
    np.testing.assert_array_equal(tapegrad.relu(g).detach().numpy(), torch.relu(t).detach().numpy())
    np.testing.assert_array_equal(g.grad.numpy(), t.grad.numpy())


@pytest.mark.parametrize("shape", [(2, 3, 4), (8, 300, 40)], ids=str)
def test_relu_keeps_the_input_layout_as_torch(torch, shape):
    """torch's relu of a transposed tensor keeps its layout, so transposing back gives a contiguous tensor that
    ``view`` accepts; the compiled replay does the same."""
    x = R.standard_normal(shape).astype(np.float32)
    want = torch.relu(torch.tensor(x).transpose(1, 2))
    for relu in (tapegrad.relu, tapegrad.nn.functional.relu, tapegrad.compile(lambda v: tapegrad.relu(v) * 1)):
        for _ in range(3):           # (capture, then replays)
            got = relu(tapegrad.tensor(x).transpose(1, 2))
            assert got.stride() == want.stride()
            assert got.transpose(1, 2).view(-1).shape == (x.size,)
            np.testing.assert_array_equal(got.numpy(), want.numpy())
