"""tapegrad.testing against torch.testing: assert_close's verdicts and messages (tensors, arrays, scalars,
sequences, mappings; dtype and shape checks; tolerances; msg), make_tensor's ranges and options."""

import numpy as np
import pytest

import tapegrad
from pairs import cases, same

CASES = cases("""
torch.testing.assert_close(torch.tensor([1., 2., 3.]), torch.tensor([1., 2.5, 3.]))
torch.testing.assert_close(torch.tensor([1., 2.]), torch.tensor([1., 2.]))
torch.testing.assert_close(torch.tensor([1., 2.]), torch.tensor([1., 2.]) + 1e-6)
torch.testing.assert_close(torch.tensor([1., 2.]), np.array([1., 2.], np.float32))
torch.testing.assert_close(np.array([1., 2.]), np.array([1., 2.5]))
torch.testing.assert_close(torch.tensor(1.), 1.0)
torch.testing.assert_close(1, 1.0)
torch.testing.assert_close(1, 2)
torch.testing.assert_close(1.0, 1.1)
torch.testing.assert_close(1.0, 1.0 + 1e-9)
torch.testing.assert_close(True, False)
torch.testing.assert_close([1, 2], [1, 2, 3])
torch.testing.assert_close({'a': 1}, {'b': 1})
torch.testing.assert_close([torch.ones(2)], [torch.zeros(2)])
torch.testing.assert_close({'a': torch.ones(2)}, {'a': torch.ones(2) * 2})
torch.testing.assert_close((torch.ones(1), [torch.ones(2)]), (torch.ones(1), [torch.ones(2)]))
torch.testing.assert_close(torch.tensor([0., 1.]), torch.tensor([1., 1.]))
torch.testing.assert_close(torch.ones(2, 2), torch.zeros(2, 2))
torch.testing.assert_close(torch.ones(2, 3), torch.ones(3, 2))
torch.testing.assert_close(torch.tensor([1., 2.]), torch.tensor([1., 2.]).double())
torch.testing.assert_close(torch.tensor([1., 2.]), torch.tensor([1., 2.]).double(), check_dtype=False)
torch.testing.assert_close(torch.tensor([1., 1.]), torch.tensor([1.0001, 1.]).double(), check_dtype=False)
torch.testing.assert_close(torch.tensor([1, 2]), torch.tensor([1, 3]))
torch.testing.assert_close(torch.tensor([True, False]), torch.tensor([True, True]))
torch.testing.assert_close(torch.tensor([1., float('nan')]), torch.tensor([1., float('nan')]))
torch.testing.assert_close(torch.tensor([1., float('nan')]), torch.tensor([1., float('nan')]), equal_nan=True)
torch.testing.assert_close(torch.tensor([1., float('inf')]), torch.tensor([1., float('inf')]))
torch.testing.assert_close(torch.tensor([1., float('inf')]), torch.tensor([1., -float('inf')]))
torch.testing.assert_close(torch.ones(2), torch.ones(2) * 1.1, rtol=0.2, atol=0.)
torch.testing.assert_close(torch.ones(2), torch.zeros(2), rtol=1e-3)
torch.testing.assert_close(torch.ones(2), torch.zeros(2), msg='custom message')
torch.testing.assert_close(torch.ones(2), torch.zeros(2), msg=lambda m: m + ' EXTRA')
torch.testing.assert_close(torch.ones(2), torch.zeros(2), rtol=0., atol=0.)
torch.testing.assert_close(torch.tensor([1., 2.]).half(), torch.tensor([1.0005, 2.]).half())
torch.testing.assert_close(torch.tensor([[1., 2.], [3., 4.]]), torch.tensor([[1., 2.], [3., 4.1]]))
torch.testing.assert_close(torch.zeros(0), torch.zeros(0))
torch.testing.assert_close('a', 'a')
""")


@pytest.mark.parametrize("setup,expr", CASES, ids=[e[25:85] for _, e in CASES])
def test_assert_close_vs_torch(torch, setup, expr):
    same(torch, setup, expr)


def test_make_tensor_ranges_and_options(torch):
    mt = tapegrad.testing.make_tensor
    t = mt((3, 4), dtype=tapegrad.float32, device="cpu", low=-1, high=1)
    assert t.shape == (3, 4) and t.dtype == tapegrad.float32 and bool(((t >= -1) & (t < 1)).all())
    i = mt(50, dtype=tapegrad.int64, device="cpu", low=0, high=5, noncontiguous=True)
    assert not i.is_contiguous() and bool(((i >= 0) & (i < 5)).all()) and i.shape == (50,)
    assert mt((2,), dtype=tapegrad.bool, device="cpu").dtype == tapegrad.bool
    assert mt((2, 2), dtype=tapegrad.float64, device="cpu", requires_grad=True).requires_grad
    assert mt(2, 2, dtype=tapegrad.complex64, device="cpu").dtype == tapegrad.complex64
    z = mt((200,), dtype=tapegrad.int8, device="cpu", low=-1, high=2, exclude_zero=True)
    assert bool((z != 0).all())
    d = mt((100,), dtype=tapegrad.float32, device="cpu")
    assert float(d.min()) >= -9 and float(d.max()) < 9                 # (torch's default range)
    same(torch, "", "torch.testing.make_tensor((2,), dtype=torch.float32, device='cpu', low=2, high=1)")
    same(torch, "", "torch.testing.make_tensor((2,), dtype=torch.float32)")


def test_half_precision_linalg_errors_are_torchs(torch):
    for expr in ("torch.linalg.inv(a)", "torch.linalg.det(a)", "torch.linalg.slogdet(a)", "torch.linalg.solve(a, a)",
                 "torch.linalg.cholesky(a)", "torch.linalg.qr(a)", "torch.linalg.svd(a)", "torch.linalg.eigh(a)",
                 "torch.linalg.eig(a)", "torch.linalg.lu_factor(a)", "torch.linalg.solve_triangular(a, a, upper=True)",
                 "torch.geqrf(a)", "torch.cholesky_solve(a, a)", "torch.linalg.householder_product(a, a[0, :2])",
                 "torch.linalg.matrix_norm(a, 'nuc')", "torch.linalg.matrix_norm(a)", "torch.linalg.vector_norm(a)",
                 "torch.linalg.ldl_factor(a)"):
        same(torch, "a = (torch.eye(3) + 0.1).half()", expr)
    # (matrix_exp runs in half precision in both; torch 2.13's CPU kernel overflows to inf on this matrix, where
    #  tapegrad's result is the float16 rounding of the exact one)
    e = tapegrad.linalg.matrix_exp((tapegrad.eye(3) + 0.1).half())
    ref = torch.linalg.matrix_exp((torch.eye(3) + 0.1).double()).numpy()
    assert e.dtype == tapegrad.float16 and np.allclose(e.numpy().astype(np.float64), ref, rtol=2e-3)


def test_assert_allclose_is_the_deprecated_spelling(torch):
    for T in (torch, tapegrad):
        with pytest.warns(FutureWarning, match="assert_close"):
            T.testing.assert_allclose(T.ones(2), [1.0, 1.0])
        with pytest.warns(FutureWarning), pytest.raises(AssertionError, match="Tensor-likes are not close!"):
            T.testing.assert_allclose(T.ones(2), T.zeros(2))
