"""``out=`` is honoured wherever a function declares it (it was silently ignored by the linalg, product, sorting
and gather families: the result went nowhere and ``out`` kept its old values)."""

from __future__ import annotations

import ast
import pathlib

import numpy as np
import pytest

import tapegrad

SRC = pathlib.Path(__file__).resolve().parents[1] / "src" / "tapegrad"
RAISES_ONLY = {"removed.py", "_api_funcs.py:symeig",   # names torch removed: they raise before any output
               "fft.py:_r2c"}                           # a helper: its callers write out


def test_every_function_with_out_uses_it_or_writes_it():
    """A function that declares ``out`` either reads it or is wrapped by ``ops._util.writes_out``."""
    bad = []
    for path in SRC.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.FunctionDef):
                continue
            if "out" not in [a.arg for a in node.args.args + node.args.kwonlyargs]:
                continue
            if path.name in RAISES_ONLY or f"{path.name}:{node.name}" in RAISES_ONLY:
                continue
            used = any(isinstance(n, ast.Name) and n.id == "out" and isinstance(n.ctx, ast.Load)
                       for b in node.body for n in ast.walk(b))
            wrapped = any(isinstance(d, ast.Name) and d.id == "writes_out" for d in node.decorator_list)
            if not (used or wrapped):
                bad.append(f"{path.relative_to(SRC)}:{node.lineno} {node.name}")
    assert not bad, "out= declared but ignored:\n" + "\n".join(bad)


A = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]])
B = np.array([[1.0, 2.0, 0.0], [0.5, -1.0, 2.0], [3.0, 0.0, 1.0]])
V = np.array([1.0, -2.0, 0.5])
I = np.array([[0, 2, 1], [1, 1, 0], [2, 0, 0]])
CASES = {
    "matmul": lambda m: (m.matmul, (m.tensor(A), m.tensor(B)), {}),
    "mm": lambda m: (m.mm, (m.tensor(A), m.tensor(B)), {}),
    "bmm": lambda m: (m.bmm, (m.tensor(A[None]), m.tensor(B[None])), {}),
    "mv": lambda m: (m.mv, (m.tensor(A), m.tensor(V)), {}),
    "dot": lambda m: (m.dot, (m.tensor(V), m.tensor(V)), {}),
    "outer": lambda m: (m.outer, (m.tensor(V), m.tensor(V)), {}),
    "addmm": lambda m: (m.addmm, (m.tensor(A), m.tensor(A), m.tensor(B)), {}),
    "kron": lambda m: (m.kron, (m.tensor(A), m.tensor(B)), {}),
    "tensordot": lambda m: (m.tensordot, (m.tensor(A), m.tensor(B)), {"dims": 1}),
    "cross": lambda m: (m.linalg.cross, (m.tensor(A), m.tensor(B)), {}),
    "inv": lambda m: (m.linalg.inv, (m.tensor(A),), {}),
    "det": lambda m: (m.linalg.det, (m.tensor(A),), {}),
    "slogdet": lambda m: (m.linalg.slogdet, (m.tensor(A),), {}),
    "solve": lambda m: (m.linalg.solve, (m.tensor(A), m.tensor(B)), {}),
    "cholesky": lambda m: (m.linalg.cholesky, (m.tensor(A),), {}),
    "eigvalsh": lambda m: (m.linalg.eigvalsh, (m.tensor(A),), {}),
    "svdvals": lambda m: (m.linalg.svdvals, (m.tensor(B),), {}),
    "pinv": lambda m: (m.linalg.pinv, (m.tensor(B),), {}),
    "matrix_power": lambda m: (m.linalg.matrix_power, (m.tensor(A), 3), {}),
    "vector_norm": lambda m: (m.linalg.vector_norm, (m.tensor(B),), {"dim": 1}),
    "matrix_norm": lambda m: (m.linalg.matrix_norm, (m.tensor(B),), {}),
    "lu_factor": lambda m: (m.linalg.lu_factor, (m.tensor(B),), {}),
    "gather": lambda m: (m.gather, (m.tensor(B), 1, m.tensor(I)), {}),
    "index_select": lambda m: (m.index_select, (m.tensor(B), 0, m.tensor([2, 0])), {}),
    "take_along_dim": lambda m: (m.take_along_dim, (m.tensor(B), m.tensor(I)), {"dim": 1}),
    "masked_select": lambda m: (m.masked_select, (m.tensor(B), m.tensor(B > 0.6)), {}),
    "nonzero": lambda m: (m.nonzero, (m.tensor(B),), {}),
    "sort": lambda m: (m.sort, (m.tensor(B),), {"dim": 1}),
    "topk": lambda m: (m.topk, (m.tensor(B), 2), {}),
    "kthvalue": lambda m: (m.kthvalue, (m.tensor(B), 2), {}),
    "searchsorted": lambda m: (m.searchsorted, (m.tensor([0.0, 1.0, 2.0]), m.tensor(V)), {}),
}


def _empty_like_result(m, r):
    if isinstance(r, tuple):
        return tuple(_empty_like_result(m, x) for x in r)
    return m.full(tuple(r.shape), 7, dtype=r.dtype)


@pytest.mark.parametrize("name", sorted(CASES))
def test_out_receives_the_result_as_torch(torch, name):
    for m in (tapegrad, torch):
        fn, args, kwargs = CASES[name](m)
        expected = fn(*args, **kwargs)
        out = _empty_like_result(m, expected)
        got = fn(*args, out=out, **kwargs)
        flat_out = out if isinstance(out, tuple) else (out,)
        flat_exp = expected if isinstance(expected, tuple) else (expected,)
        for o, e in zip(flat_out, flat_exp):
            np.testing.assert_allclose(o.numpy(), e.numpy(), rtol=1e-12, err_msg=f"{name} on {m.__name__}")
        if not isinstance(out, tuple):
            assert got is out, f"{name}: the result is not out itself"
