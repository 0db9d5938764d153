"""Call forms that scientific-ML programs (torchdiffeq's solvers, PINNs, flows, Gaussian processes, Bayesian and
Hamiltonian nets) use, against torch: each case is one snippet run on both (see pairs.py)."""

import pytest

from pairs import cases, same

CASES = cases("""
x = torch.arange(4.).reshape(2, 2) ;; x.tile(2)
x = torch.arange(4.).reshape(2, 2) ;; x.tile(2, 3)
x = torch.arange(4.).reshape(2, 2) ;; x.unsqueeze(-1).tile(3)
x = torch.arange(4.).reshape(2, 2) ;; x.tile([2])
x = torch.arange(4.).reshape(2, 2) ;; x.tile(dims=(1, 2))
x = torch.arange(4.).reshape(2, 2) ;; x.tile(torch.Size([2, 1]))
x = torch.arange(4.).reshape(2, 2) ;; torch.tile(x, (2,))
x = torch.arange(4.).reshape(2, 2) ;; torch.tile(x, dims=[3])
x = torch.arange(4.).reshape(2, 2) ;; torch.tile(x, 2)
x = torch.arange(4.).reshape(2, 2) ;; x.tile()
x = torch.arange(4.).reshape(2, 2) ;; x.tile(2, dims=(2,))
""")


@pytest.mark.parametrize("setup,expr", CASES, ids=[e[:60] for _, e in CASES])
def test_sci_call_forms_vs_torch(torch, setup, expr):
    same(torch, setup.replace(" ;; ", "\n"), expr)


# the sparse accessors exist on strided tensors too (torch: a bound method; calling it raises)
LAYOUT_ERRORS = cases("""
x = torch.ones(2, 3) ;; callable(torch.mean(x, dim=0).values)
x = torch.ones(2, 3) ;; x.values()
x = torch.ones(2, 3) ;; x.indices()
x = torch.ones(2, 3) ;; x.coalesce()
x = torch.ones(2, 3) ;; x.is_coalesced()
x = torch.ones(2, 3) ;; x.crow_indices()
x = torch.ones(2, 3) ;; x.col_indices()
x = torch.ones(2, 3) ;; x.ccol_indices()
x = torch.ones(2, 3) ;; x.row_indices()
x = torch.ones(2, 3) ;; [x.sparse_dim(), x.dense_dim(), torch.tensor(1.).dense_dim()]
x = torch.ones(2, 3).to_sparse() ;; x.crow_indices()
x = torch.ones(2, 3).to_sparse() ;; [x.sparse_dim(), x.dense_dim(), x.values()]
x = torch.max(torch.ones(2, 3), dim=0) ;; x.values
""")
# (torch's dispatcher message goes on about its build: the class is compared)
LAYOUT_ERRORS_CLASS_ONLY = cases("""
x = torch.ones(2, 3) ;; x._values()
x = torch.ones(2, 3) ;; x._indices()
x = torch.ones(2, 3) ;; x._nnz()
""")


@pytest.mark.parametrize("setup,expr", LAYOUT_ERRORS, ids=[e[:60] for _, e in LAYOUT_ERRORS])
def test_sparse_accessors_on_strided_tensors_vs_torch(torch, setup, expr):
    same(torch, setup.replace(" ;; ", "\n"), expr)


@pytest.mark.parametrize("setup,expr", LAYOUT_ERRORS_CLASS_ONLY, ids=[e[:60] for _, e in LAYOUT_ERRORS_CLASS_ONLY])
def test_sparse_private_accessors_on_strided_tensors_vs_torch(torch, setup, expr):
    same(torch, setup.replace(" ;; ", "\n"), expr, words=False)


# torch._C's names that programs use directly are tapegrad's objects (torchdiffeq: `except torch._C._LinAlgError`)
C_NAMES = cases("""
torch._C._LinAlgError is torch.linalg.LinAlgError
torch._C.Generator is torch.Generator
torch._C._get_tracing_state()
torch._C._log_api_usage_once("torcheval.metrics.Mean")
torch._C._log_api_usage_once(3)
torch._C.Value()
torch._C.Node()
[isinstance(torch.ones(2), torch._C.Value), isinstance(None, torch._C.Node), torch._C.Value.__name__]
exec("try:\\n    torch.linalg.solve(torch.zeros(2, 2), torch.ones(2))\\nexcept torch._C._LinAlgError as e:\\n    r = str(e)") or r
""")


@pytest.mark.parametrize("setup,expr", C_NAMES, ids=[e[:60] for _, e in C_NAMES])
def test_c_extension_names_vs_torch(torch, setup, expr):
    same(torch, setup.replace(" ;; ", "\n"), expr)


# NumPy's ufuncs on tensors compute with NumPy and come back as tensors, as in torch (normflows' Uniform takes
# np.log of a tensor); NumPy scalars on the left of an operator still give tapegrad's (differentiable) result
UFUNCS = cases("""
np.log(torch.tensor(2.0))
np.log(torch.tensor([1.0, 4.0]))
np.sqrt(torch.arange(6.).reshape(2, 3).t())
np.exp(torch.tensor([[1.0], [2.0]], dtype=torch.float64))
np.log(torch.tensor([1, 4]))
np.add(torch.tensor([1, 4]), 1.5)
np.add(torch.tensor([1.0, 4.0]), 1)
np.maximum(torch.tensor([1.0, 4.0]), 2)
np.isnan(torch.tensor([1.0, float("nan")]))
np.greater(torch.tensor([1.0, 4.0]), 2)
np.log1p(torch.tensor([1.0, 4.0]).half())
np.modf(torch.tensor([1.5, -2.25]))
np.divmod(torch.tensor([7.0, 4.0]), 3)
np.add.reduce(torch.tensor([1.0, 4.0]))
np.maximum.accumulate(torch.tensor([1.0, 4.0, 2.0]))
(lambda r: (type(r).__name__, r.tolist()))(np.add.outer(torch.tensor([1.0, 4.0]), torch.tensor([1.0, 2.0])))
(lambda r: (type(r).__name__, r.tolist()))(np.add(torch.tensor([1.0, 4.0]), 1, out=np.zeros(2, np.float32)))
np.log(torch.ones(2, requires_grad=True))
np.add.at(torch.ones(2), [0], 1)
-2 * np.log(torch.tensor(2.0) - torch.tensor(-1.0))
np.float64(2) * torch.tensor([1.0, 4.0])
np.float32(1.5) + torch.tensor([1, 4])
np.int64(3) * torch.tensor([1.0, 4.0])
np.float64(2.0) ** torch.tensor([1.0, 3.0])
np.float64(2.0) > torch.tensor([1.0, 3.0])
np.prod(torch.ones(2, 3).shape)
w = torch.ones(2, requires_grad=True) ;; (np.float64(2) * w).sum().backward() or w.grad
""")


@pytest.mark.parametrize("setup,expr", UFUNCS, ids=[e[:60] for _, e in UFUNCS])
def test_numpy_ufuncs_on_tensors_vs_torch(torch, setup, expr):
    same(torch, setup.replace(" ;; ", "\n"), expr)


# NumPy conversion of a tensor that requires grad is refused outside no_grad, as torch's __array__ refuses it
# (magnusross/pytorch-lagrangian-nn's q2xy tries np.zeros_like(x) and falls back to torch.zeros_like on that error)
ARRAY_CONVERSION = cases("""
w = torch.ones(2, requires_grad=True) ;; np.asarray(w)
w = torch.ones(2, requires_grad=True) ;; np.zeros_like(w)
w = torch.ones(2, requires_grad=True) ;; np.array([w[0], w[1]])
w = torch.ones(2, requires_grad=True) ;; np.sin(w * 2)
w = torch.ones(2, requires_grad=True) ;; np.asarray(w.detach()).tolist()
w = torch.ones(2, requires_grad=True) ;; exec("with torch.no_grad(): r = (np.asarray(w).tolist(), np.log(w))") or r
w = torch.ones(2) ;; np.zeros_like(w).tolist()
""")


@pytest.mark.parametrize("setup,expr", ARRAY_CONVERSION, ids=[e[:60] for _, e in ARRAY_CONVERSION])
def test_numpy_conversion_of_grad_tensors_vs_torch(torch, setup, expr):
    same(torch, setup.replace(" ;; ", "\n"), expr)
