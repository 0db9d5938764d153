"""``out=`` is honoured wherever a function declares it (it was silently ignored by the linalg, product, sorting
and gather families: the result went nowhere and ``out`` kept its old values)."""

from __future__ import annotations

import ast
import warnings
import pathlib

import numpy as np
import pytest

import tapegrad

SRC = pathlib.Path(__file__).resolve().parents[1] / "src" / "tapegrad"
RAISES_ONLY = {"removed.py", "_api_funcs.py:symeig",   # names torch removed: they raise before any output
               "fft.py:_r2c"}                           # a helper: its callers write out


def test_every_function_with_out_uses_it_or_writes_it():
    """A function that declares ``out`` either reads it or is wrapped by ``ops._util.writes_out`` (bare or called
    with its dtype rule)."""
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
            wrapped = any(isinstance(d, ast.Name) and d.id == "writes_out" or isinstance(d, ast.Call)
                          and isinstance(d.func, ast.Name) and d.func.id == "writes_out" for d in node.decorator_list)
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


# --- out='s dtype and shape rules, every function against torch 2.13's (tests/out_rules.py, out_rules_table.py) --
from out_rules import measure, names  # noqa: E402  (tests/ is on sys.path: conftest)
from out_rules_table import TABLE  # noqa: E402

# Where tapegrad still answers otherwise than torch (case -> why); everything else must match the table exactly.
KNOWN = {
    "alias_copy": "out= written by _api_funcs.alias_copy itself (copy_ broadcasting, no dtype check): not yet moved",
    "diag": "torch words it two ways (\"Expected out tensor...\" for floats, \"diag: result type...\" for ints)",
    "ldexp": "torch's own float/complex outs fail with an internal assert; the integer ones are refused as ours",
    "linalg.matrix_power": "shares matrix_power's function, whose torch rule is \"cast\" (linalg's is \"same\")",
    "lu": "torch resizes lu's outputs without the resize warning",
    "addbmm": "torch resizes addbmm's output without the resize warning",
}


def test_the_table_lists_every_function_with_out():
    assert sorted(TABLE) == sorted(names(tapegrad))


@pytest.mark.parametrize("name", sorted(n for n in TABLE if TABLE[n] and n not in KNOWN))
def test_out_dtype_and_shape_rules_as_torch(name):
    """Accepted or refused (exception class and torch's message) as torch 2.13, for an out of the result's dtype,
    of each other dtype, of a wrong shape (resized with torch's warning) and empty (resized silently)."""
    want = TABLE[name]
    got = measure(tapegrad, name, want["sample"])
    assert {k: got.get(k) for k in want} == want


@pytest.mark.parametrize("name", sorted(KNOWN))
def test_known_differences_are_still_differences(name):
    """A KNOWN entry that now matches torch is removed from KNOWN (so the list stays true)."""
    want = TABLE[name]
    got = measure(tapegrad, name, want["sample"])
    assert {k: got.get(k) for k in want} != want


@pytest.mark.parametrize("name", sorted(n for n in TABLE if TABLE[n]))
def test_table_is_torchs(torch, name):
    """The stored table is what torch answers now (rewrite it with ``python tests/out_rules.py``)."""
    assert measure(torch, name, TABLE[name]["sample"]) == TABLE[name]


X = np.array([[1.5, -2.0], [1.5, 4.0]], np.float32)
COMPUTE_IN_OUT = {   # torch computes these in out's dtype (the input cast first), not the result cast afterwards
    "sum": lambda m, o: m.sum(m.tensor(X), 0, out=o),
    "prod": lambda m, o: m.prod(m.tensor(X), 0, out=o),
    "cumsum": lambda m, o: m.cumsum(m.tensor(X), 0, out=o),
    "cumprod": lambda m, o: m.cumprod(m.tensor(X), 0, out=o),
}


@pytest.mark.parametrize("dtype", ["int64", "int32", "float16", "float64", "complex64"])
@pytest.mark.parametrize("name", sorted(COMPUTE_IN_OUT))
def test_reductions_compute_in_outs_dtype(torch, name, dtype):
    res = {}
    for m in (tapegrad, torch):
        out = m.zeros(0, dtype=getattr(m, dtype))
        got = COMPUTE_IN_OUT[name](m, out)
        assert got is out
        res[m.__name__] = out.numpy()
    np.testing.assert_allclose(res["tapegrad"], res["torch"], rtol=1e-3)
    assert res["tapegrad"].dtype == res["torch"].dtype


ALIASING = {   # out is one of the inputs, of the result's shape (torch allows it; cat refuses, a resize clobbers)
    "add": lambda m, a, b: m.add(a, b, out=a),
    "mul": lambda m, a, b: m.mul(a, b, out=b),
    "clamp": lambda m, a, b: m.clamp(a, -1.0, 1.0, out=a),
    "where": lambda m, a, b: m.where(a > 0, a, b, out=a),
    "cumsum": lambda m, a, b: m.cumsum(a, 1, out=a),
    "matmul": lambda m, a, b: m.matmul(a, b, out=a),
    "sort": lambda m, a, b: m.sort(a, 1, out=(a, m.zeros(2, 2, dtype=m.int64)))[0],
}


@pytest.mark.parametrize("name", sorted(ALIASING))
def test_out_aliasing_an_input(torch, name):
    res = {}
    for m in (tapegrad, torch):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            a, b = m.tensor(X), m.tensor(X[::-1].copy())
            got = ALIASING[name](m, a, b)
        res[m.__name__] = got.numpy().copy()
    np.testing.assert_allclose(res["tapegrad"], res["torch"], rtol=1e-6)


def test_coordinators_cases():
    """The first reports: a float32 result into outs torch refuses, and prod computed in out's dtype."""
    x = tapegrad.tensor([[1.5, -2.0], [3.0, 4.0]])
    z = tapegrad.zeros
    with pytest.raises(RuntimeError, match="^Expected out tensor to have dtype float, but got double instead$"):
        tapegrad.matmul(x, x, out=z(2, 2, dtype=tapegrad.float64))
    with pytest.raises(RuntimeError, match="^Expected out tensor to have dtype long int, but got float instead$"):
        tapegrad.argmax(x, 0, out=z(2))
    with pytest.raises(RuntimeError, match="^result type Float can't be cast to the desired output type Long$"):
        tapegrad.std(x, 0, out=z(2, dtype=tapegrad.int64))
    with pytest.raises(TypeError, match="^torch.cat\\(\\): input types can't be cast to the desired output type Long$"):
        tapegrad.cat([x, x], out=z(4, 2, dtype=tapegrad.int64))
    assert tapegrad.cat([x, x], out=z(4, 2, dtype=tapegrad.float64)).dtype == tapegrad.float64
    with pytest.raises(RuntimeError, match="^nonzero: Expected out tensor to have scalar type Long but got scalar "
                                           "typeInt$"):
        tapegrad.nonzero(x, out=z(4, 2, dtype=tapegrad.int32))
    assert tapegrad.prod(x, 0, out=z(2, dtype=tapegrad.int64)).tolist() == [3, -8]
