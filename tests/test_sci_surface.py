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
