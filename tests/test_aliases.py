"""NumPy-style argument names (``axis``, ``keepdims``, ``x``/``a``/``x1``, ``x2``), accepted exactly where torch's
argument parser accepts them: torch.xxx ops, Tensor methods, the built-ins of nn.functional and linalg."""

import types

import numpy as np
import pytest

import tapegrad
from tapegrad import _aliases


def _torch_python_defined(ns):
    return sorted(n for n in dir(ns) if not n.startswith("_") and (
        isinstance(getattr(ns, n, None), (types.FunctionType, types.MethodType))
        or (callable(getattr(ns, n, None)) and hasattr(getattr(ns, n), "__wrapped__"))))


def test_the_lists_of_python_defined_callables_are_torchs(torch):
    assert sorted(_aliases.PYTHON_DEFINED["torch"]) == _torch_python_defined(torch)
    assert sorted(_aliases.PYTHON_DEFINED["Tensor"]) == _torch_python_defined(torch.Tensor)
    for ns in (torch.linalg, torch.special, torch.fft):
        assert _torch_python_defined(ns) == []
    F = torch.nn.functional
    builtins = sorted(n for n in dir(F) if not n.startswith("_") and type(getattr(F, n)).__name__ ==
                      "builtin_function_or_method" and not n.startswith("has_torch_function"))
    assert sorted(_aliases.PARSER_FUNCTIONS["nn.functional"]) == builtins


def _has_targets(fn, method):
    return _aliases._table(fn, method) is not None


def _namespaces(torch):
    import tapegrad.fft
    import tapegrad.linalg
    import tapegrad.nn.functional
    import tapegrad.special
    yield "torch", tapegrad, torch, False
    yield "Tensor", tapegrad.Tensor, torch.Tensor, True
    yield "nn.functional", tapegrad.nn.functional, torch.nn.functional, False
    yield "linalg", tapegrad.linalg, torch.linalg, False
    yield "special", tapegrad.special, torch.special, False
    yield "fft", tapegrad.fft, torch.fft, False


def test_aliases_are_given_exactly_where_torchs_parser_sees_the_call(torch):
    """Every tapegrad function or method with a dim/keepdim/input/other parameter takes the aliases iff torch's
    version is a built-in of its argument parser."""
    wrong = []
    for where, tg_ns, th_ns, method in _namespaces(torch):
        for name, fn in vars(tg_ns).items():
            if name.startswith("_") or not callable(fn) or not hasattr(th_ns, name):
                continue
            inner = getattr(fn, "__wrapped__", fn) if hasattr(fn, "_aliases") else fn
            if inner.__class__.__name__ != "function" or not _has_targets(inner, method):
                continue
            th = getattr(th_ns, name)
            parser = type(th).__name__ in ("builtin_function_or_method", "method_descriptor")
            if parser != hasattr(fn, "_aliases"):
                wrong.append(f"{where}.{name}: torch's parser {'sees' if parser else 'does not see'} it")
    assert not wrong, wrong


def _pair(torch, expr, **arrays):
    out = []
    for m in (tapegrad, torch):
        env = {"torch": m, "F": m.nn.functional, **{k: m.tensor(v) for k, v in arrays.items()}}
        try:
            out.append(eval(expr, env))
        except TypeError as e:
            out.append(TypeError(str(e)))
    return out


X = np.arange(12.0).reshape(3, 4) - 5.5

CALLS = [
    "x.sum(axis=1, keepdims=True)", "torch.sum(x, axis=0)", "torch.sum(x, axis=(0, 1), keepdims=True)",
    "x.mean(axis=0)", "torch.mean(x, axis=-1, keepdims=True)", "x.argmax(axis=1)", "torch.argmax(x, axis=0)",
    "x.argmin(axis=1, keepdims=True)", "x.max(axis=0).values", "torch.max(x, axis=1, keepdims=True).indices",
    "x.min(axis=1)[0]", "x.std(axis=0)", "torch.var(x, axis=1, keepdims=True)", "x.prod(axis=1)",
    "torch.cumsum(x, axis=1)", "x.cumprod(axis=0)", "x.logsumexp(axis=1)", "x.softmax(axis=0)",
    "torch.log_softmax(x, axis=1)", "torch.cat([x, x], axis=1)", "torch.stack([x, x], axis=2)",
    "x.unsqueeze(axis=0)", "torch.squeeze(x[None], axis=0)", "x.any(axis=0)", "torch.all(x > -9, axis=1)",
    "x.amax(axis=0, keepdims=True)", "torch.amin(x, axis=1)", "x.median(axis=1).values", "x.flip(axis=0)",
    "torch.gather(x, axis=1, index=torch.tensor([[0], [1], [2]]))", "x.norm(dim=1)",
    "torch.linalg.vector_norm(x, axis=0, keepdims=True)", "torch.sum(a=x)", "torch.sum(x=x)", "torch.exp(x1=x)",
    "torch.add(x1=x, x2=x)", "x.add(x2=x)", "x.mul(x2=x)", "torch.maximum(x, x2=x)", "torch.matmul(x, x2=x.T)",
    "F.linear(x=x, weight=x)", "F.gelu(x=x)", "x.size(axis=0)", "torch.fft.fft(x, axis=0).abs()",
    "torch.special.logsumexp(x, axis=1, keepdims=True)", "torch.special.expit(x=x)", "torch.lgamma(x=x.abs() + 1)",
    # where torch takes no alias (its Python-defined functions), tapegrad doesn't either
    "F.softmax(x, axis=1)", "F.log_softmax(x, axis=0)", "F.relu(x=x)", "torch.split(x, 1, axis=0)",
    "x.split(1, axis=0)", "x.unique(axis=0)", "torch.norm(x, axis=0)", "x.transpose(axis0=0, axis1=1)",
    # both names at once: torch's TypeError
    "torch.sum(x, dim=0, axis=0)", "x.sum(0, axis=0)", "torch.add(x, other=x, x2=x)", "x.add(x, x2=x)",
    "torch.sum(a=x, x=x)", "torch.sum(x, axis=0, keepdims=True, keepdim=True)",
]


@pytest.mark.parametrize("expr", CALLS)
def test_alias_calls_vs_torch(torch, expr):
    ours, theirs = _pair(torch, expr, x=X)
    if isinstance(theirs, TypeError):
        assert isinstance(ours, TypeError), f"{expr}: torch raises TypeError ({theirs}), tapegrad gives {ours}"
        return
    assert not isinstance(ours, TypeError), f"{expr}: {ours}"
    if isinstance(theirs, int):
        assert ours == theirs
        return
    np.testing.assert_allclose(np.asarray(ours), theirs.numpy(), rtol=1e-6)


def test_duplicate_names_say_which_keyword():
    x = tapegrad.ones(2, 3)
    with pytest.raises(TypeError, match=r"^sum\(\) got an unexpected keyword argument 'axis'$"):
        x.sum(0, axis=0)
    with pytest.raises(TypeError, match=r"^sum\(\) got an unexpected keyword argument 'axis'$"):
        tapegrad.sum(x, dim=1, axis=0)


def test_wrapped_functions_keep_name_doc_and_signature():
    import inspect
    assert tapegrad.sum.__name__ == "sum" and tapegrad.sum.__doc__ == tapegrad.ops.reduce.sum.__doc__
    assert list(inspect.signature(tapegrad.Tensor.sum).parameters)[:3] == ["input", "dim", "keepdim"]
    assert tapegrad.Tensor.sum.__wrapped__ is not None


def test_gradients_flow_through_an_aliased_call():
    x = tapegrad.tensor(X, requires_grad=True)
    x.sum(axis=1, keepdims=True).pow(2).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.broadcast_to(X.sum(1, keepdims=True), X.shape))


def test_python_defined_methods_take_torchs_keyword_names(torch):
    """torch's Python-defined Tensor methods name their parameters themselves (``Tensor.split(split_size, dim)``,
    unlike ``torch.split(tensor, split_size_or_sections, dim)``); a program may pass any of them by keyword."""
    import inspect

    for n in sorted(_aliases.PYTHON_DEFINED["Tensor"]):
        if not hasattr(tapegrad.Tensor, n):          # (Tensor.index: a torch internal)
            continue
        theirs = inspect.signature(getattr(torch.Tensor, n)).parameters
        ours = inspect.signature(getattr(tapegrad.Tensor, n)).parameters
        if any(p.kind is p.VAR_KEYWORD for p in ours.values()):
            continue
        wanted = [k for k, p in list(theirs.items())[1:] if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
        assert set(wanted) <= set(ours), (n, wanted, list(ours))
    x = tapegrad.arange(10.0).reshape(2, 5)
    a, b = x.split(split_size=[2, 3], dim=-1)
    assert a.tolist() == [[0.0, 1.0], [5.0, 6.0]] and b.shape == (2, 3)
    assert [t.shape[0] for t in x.split(split_size=1)] == [1, 1]
    with pytest.raises(TypeError, match="split_size_or_sections"):
        x.split(split_size_or_sections=1)
