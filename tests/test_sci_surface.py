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
exec("try:\\n    torch.linalg.solve(torch.zeros(2, 2), torch.ones(2))\\nexcept torch._C._LinAlgError as e:\\n    r = str(e)") or r
""")


@pytest.mark.parametrize("setup,expr", C_NAMES, ids=[e[:60] for _, e in C_NAMES])
def test_c_extension_names_vs_torch(torch, setup, expr):
    same(torch, setup.replace(" ;; ", "\n"), expr)
