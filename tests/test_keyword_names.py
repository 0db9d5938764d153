"""Keyword names of torch's parser functions: every top-level function and Tensor method torch's C++ parser
defines takes its ATen schema's argument names as keywords here too (``torch.det(input=x)``,
``x.tensor_split(sections=2)``, ``torch.promote_types(type1=..., type2=...)``), checked by a scan against the
schemas and by calls against torch."""

import inspect

import numpy as np
import pytest

import tapegrad

# (namespace, name): schema names tapegrad still does not take, and why
KNOWN = {
    ("torch", "rrelu"): "generator: tapegrad's rrelu draws from the default generator only",
    ("torch", "rrelu_"): "generator: as rrelu",
    ("torch", "range"): "pin_memory: tapegrad's factories have no pinned memory",
    ("torch", "tril_indices"): "pin_memory: as range",
    ("torch", "triu_indices"): "pin_memory: as range",
    ("torch", "sparse_coo_tensor"): "layout: COO is the only sparse layout here",
    ("torch", "wait"): "torch.wait is torch._C's wait(arg0) (torch.jit.wait's), not aten::wait: torch refuses input=",
}


def _params(fn):
    while getattr(fn, "__wrapped__", None) is not None:
        fn = fn.__wrapped__
    try:
        return inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return None


def _accepted(fn, table):
    ps = _params(fn)
    if ps is None or any(p.kind == p.VAR_KEYWORD for p in ps.values()):
        return None
    names = {k for k, p in ps.items() if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    return names | set(table or {})


def _missing(torch, where):
    src_t, src_g = (torch, tapegrad) if where == "torch" else (torch.Tensor, tapegrad.Tensor)
    out = {}
    for n in dir(src_t):
        ft, fg = getattr(src_t, n, None), getattr(src_g, n, None)
        if n.startswith("_") or fg is None or not callable(fg) or isinstance(fg, type) or \
                ft.__class__.__name__ not in ("builtin_function_or_method", "method_descriptor"):
            continue
        names = _accepted(fg, getattr(fg, "_aliases", None))
        schemas = torch._C._jit_get_schemas_for_operator("aten::" + n)
        if names is None or not schemas:
            continue
        best = None
        for s in schemas:
            theirs = [a.name for a in s.arguments if a.name != "out"]
            theirs = ["input" if a == "self" else a for a in theirs] if where == "torch" else \
                [a for a in theirs if a != "self"]
            if any(a.name == "out" for a in s.arguments):
                continue
            miss = [a for a in theirs if a not in names]
            if best is None or len(miss) < len(best):
                best = miss
        if best:
            out[(where, n)] = best
    return out


@pytest.mark.parametrize("where", ["torch", "Tensor"])
def test_every_parser_function_takes_its_schema_s_keyword_names(torch, where):
    missing = {k: v for k, v in _missing(torch, where).items() if k not in KNOWN}
    assert missing == {}


def test_known_gaps_are_still_gaps(torch):
    found = _missing(torch, "torch")
    assert set(KNOWN) <= set(found)


def outcome(call):
    try:
        r = call()
    except Exception as e:  # noqa: BLE001 - compared
        return type(e).__name__, str(e).replace("tapegrad.", "torch.")
    if isinstance(r, (tuple, list)):
        return [t.tolist() for t in r]
    return r.tolist() if hasattr(r, "shape") else str(r).replace("tapegrad.", "torch.")


CALLS = [
    "T.det(input=a)", "!T.det(A=a)", "T.matrix_exp(input=a)", "T.matrix_power(input=a, n=2)",
    "T.hsplit(a, sections=2)", "T.hsplit(a, indices=[1])", "T.vsplit(a, sections=2)", "T.dsplit(c, indices=[1])",
    "T.tensor_split(a, sections=3)", "T.tensor_split(a, indices=[1, 2], dim=1)",
    "T.tensor_split(a, tensor_indices_or_sections=T.tensor(2))", "a.tensor_split(sections=2)",
    "a.hsplit(sections=2)", "T.swapaxes(c, axis0=0, axis1=2)", "c.swapaxes(axis0=0, axis1=1)",
    "T.promote_types(type1=T.int32, type2=T.float32)", "T.result_type(tensor=a, other=2.0)",
    "T.result_type(scalar1=1, scalar2=2.0)", "T.result_type(scalar=1, tensor=i)", "T.result_type(a, 1)",
    "T.result_type(a)", "T.result_type(a, a, a)", "T.result_type(tensor=a)", "!T.result_type(a, None)",
    "T.neg_(input=a.clone())", "T.negative_(input=a.clone())",
    "T.orgqr(T.geqrf(a)[0], input2=T.geqrf(a)[1])",
    "T.ormqr(T.geqrf(a)[0], input2=T.geqrf(a)[1], input3=a, transpose=True)",
    "T.lu_solve(input=b, LU_data=T.linalg.lu_factor(a)[0], LU_pivots=T.linalg.lu_factor(a)[1])",
    "T.triangular_solve(input=b, A=a.triu() + 4 * T.eye(4))[0]",
    "T.dropout(a, p=0.5, train=False)", "!T.dropout(a, 0.5, training=False)", "T.dropout(a, 2.0, True)",
    "T.alpha_dropout(a, 0.5, train=False)", "T.feature_alpha_dropout(c, 0.5, train=False)",
    "T.dropout_(a.clone(), 1.5, False)", "T.feature_dropout(c, -1.0, False)",
    "T.nn.functional.dropout(a, 0.5, training=False)", "T.nn.functional.dropout(a, 2.0)",
    "T.group_norm(c, 1, None, None, 1e-5, False)", "T.group_norm(c, 1, cudnn_enabled=True)",
    "T.layer_norm(a, [4], None, None, 1e-5, cudnn_enable=False)",
]


@pytest.mark.parametrize("call", CALLS)
def test_keyword_calls_agree_with_torch(torch, call):
    def run(T):
        g = np.random.default_rng(0)
        a = T.tensor(g.standard_normal((4, 4)))
        b = T.tensor(g.standard_normal((4, 2)))
        c = T.tensor(g.standard_normal((2, 3, 4)))
        i = T.tensor([1, 2])
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")       # (lu_solve / triangular_solve: torch's deprecation warnings)
            return outcome(lambda: eval(call.lstrip("!"), {"T": T, "a": a, "b": b, "c": c, "i": i}))
    ours, theirs = run(tapegrad), run(torch)
    if call.startswith("!"):           # (refused by both: the type of the error; the words are Python's here)
        assert ours[0] == theirs[0] == "TypeError"
        return
    assert type(ours) is type(theirs), (ours, theirs)
    if isinstance(theirs, float):
        assert ours == pytest.approx(theirs, rel=1e-12)
    elif isinstance(theirs, list):
        assert len(ours) == len(theirs)
        for o, t in zip(ours, theirs):
            np.testing.assert_allclose(np.asarray(o, float), np.asarray(t, float), rtol=1e-10, atol=1e-12)
    else:
        assert ours == theirs
