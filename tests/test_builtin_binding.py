"""torch's parser functions are C built-ins, which do not bind as methods: ``conv = torch.conv2d`` in a class body
and then ``self.conv(x, w)`` calls ``conv2d(x, w)`` (kornia's Hausdorff loss does this). The functions torch
writes in Python do bind. tapegrad matches torch name by name (``_aliases.builtin``), and its built-ins still
pickle, copy, introspect and call as torch's do."""

import copy
import functools
import inspect
import pickle
import pydoc
import types

import numpy as np
import pytest

import tapegrad
import tapegrad.fft
import tapegrad.linalg
import tapegrad.nn.functional
import tapegrad.special


def _binds(f):
    class Holder:
        op = f
    return Holder().op is not f


def _pairs(torch):
    """(namespace, name, torch's callable, tapegrad's) for every public function both have."""
    for th, tg, where in ((torch, tapegrad, "torch"), (torch.nn.functional, tapegrad.nn.functional, "F"),
                          (torch.linalg, tapegrad.linalg, "linalg"), (torch.fft, tapegrad.fft, "fft"),
                          (torch.special, tapegrad.special, "special")):
        for n in dir(th):
            ft = getattr(th, n, None)
            if n.startswith("_") or not callable(ft) or isinstance(ft, (type, types.ModuleType)):
                continue
            try:
                fg = getattr(tg, n)
            except AttributeError:
                continue
            if not isinstance(fg, type):
                yield where, n, ft, fg


def test_a_class_attribute_binds_exactly_where_torchs_does(torch):
    pairs = list(_pairs(torch))
    assert len(pairs) > 800
    wrong = [(w, n, _binds(ft)) for w, n, ft, fg in pairs if _binds(ft) != _binds(fg)]
    assert wrong == []
    # (both kinds are there: built-ins, and the functions torch writes in Python)
    assert not _binds(tapegrad.conv2d) and not _binds(tapegrad.nn.functional.linear) and _binds(tapegrad.split)
    assert _binds(tapegrad.nn.functional.relu) and not _binds(tapegrad.relu)


def _attribute_uses(m):
    """Built-ins kept as class attributes, in a dict and a list, and in partials: the values, in numpy."""
    F = m.nn.functional

    class Loss(m.nn.Module):          # kornia's HausdorffERLoss keeps its ops so
        conv = m.conv2d
        act = m.sigmoid
        lin = F.linear

        def forward(self, x, w, lw):
            return self.lin(self.act(self.conv(x, weight=w, padding=1, groups=1)).flatten(1), lw)

    class Plain:
        add = m.add
        det = m.linalg.det
        fft = m.fft.rfft
        erf = m.special.erf

        def run(self, a, b):
            return self.add(a, b, alpha=2), self.det(a), self.fft(a).abs(), self.erf(b)

    rng = np.random.default_rng(0)
    x, w, lw = (m.tensor(rng.standard_normal(s).astype(np.float32)) for s in ((2, 1, 4, 4), (3, 1, 3, 3), (5, 48)))
    a, b = (m.tensor(rng.standard_normal((3, 3))) for _ in range(2))
    table = {"relu": m.relu, "tanh": m.tanh}
    ops = [m.exp, m.neg]
    add2 = functools.partial(m.add, alpha=2)
    out = [Loss()(x, w, lw), *Plain().run(a, b), table["relu"](a), ops[1](a), add2(a, b),
           functools.partial(Plain.add, a)(b), Plain.add(a, b)]
    assert callable(m.add) and callable(Plain.det)
    return [o.detach().numpy() for o in out]


def test_builtins_as_attributes_dicts_lists_and_partials_compute_torchs_values(torch):
    got, want = _attribute_uses(tapegrad), _attribute_uses(torch)
    for g, t in zip(got, want, strict=True):
        np.testing.assert_allclose(g, t, rtol=1e-5, atol=1e-6)


def test_a_python_defined_function_binds_as_in_torch(torch):
    for m in (torch, tapegrad):
        class Holder:
            split = m.split
            relu = m.nn.functional.relu
        assert isinstance(Holder().split, types.MethodType) and isinstance(Holder().relu, types.MethodType)


def _builtins():
    for ns in (tapegrad, tapegrad.nn.functional, tapegrad.linalg, tapegrad.fft, tapegrad.special):
        for n, f in vars(ns).items():
            if isinstance(f, tapegrad._aliases.BUILTIN):
                yield ns, n, f


def test_every_builtin_pickles_and_copies_as_itself():
    seen = 0
    for ns, n, f in _builtins():
        assert pickle.loads(pickle.dumps(f)) is f, n
        assert copy.deepcopy(f) is f and copy.copy(f) is f, n
        assert f.__name__ == f.__qualname__ == n and f.__module__ in (ns.__name__, "tapegrad.overrides"), n
        seen += 1
    assert seen > 650
    # (torch's are pickled by name too; a partial of one carries it)
    p = pickle.loads(pickle.dumps(functools.partial(tapegrad.add, alpha=3)))
    assert p.func is tapegrad.add and p(tapegrad.ones(1), tapegrad.ones(1)).item() == 4.0
    assert copy.deepcopy({"op": tapegrad.relu})["op"] is tapegrad.relu


def test_builtins_introspect_as_their_functions():
    assert str(inspect.signature(tapegrad.add)) == "(input, other, *deprecated, alpha=1)"
    assert list(inspect.signature(tapegrad.nn.functional.linear).parameters) == ["input", "weight", "bias"]
    assert list(inspect.signature(tapegrad.linalg.det).parameters) == ["A", "out"]
    assert tapegrad.add.__doc__ and tapegrad.add.__doc__ == inspect.unwrap(tapegrad.add).__doc__
    assert inspect.unwrap(tapegrad.conv2d).__module__ == "tapegrad.ops.conv.convolution"
    assert "broadcasting" in pydoc.render_doc(tapegrad.add)
    assert "add" in repr(tapegrad.add)


def test_lazily_loaded_builtins_bind_to_nothing(torch):
    for n in ("lgamma", "as_strided", "lu_solve", "is_autocast_enabled", "spmm", "sparse_coo_tensor"):
        f = getattr(tapegrad, n)
        assert not _binds(f) and getattr(tapegrad, n) is f and pickle.loads(pickle.dumps(f)) is f, n
        assert not _binds(getattr(torch, n)), n
    from tapegrad import overrides
    assert not _binds(overrides.has_torch_function) and not overrides.has_torch_function([tapegrad.ones(1)])


def test_keyword_aliases_and_torchs_type_errors_still_reach_the_builtins():
    x = tapegrad.ones(2, 3)
    assert tapegrad.sum(x, axis=1, keepdims=True).shape == (2, 1)
    with pytest.raises(TypeError, match=r"exp\(\): argument 'input' \(position 1\) must be Tensor, not NoneType"):
        tapegrad.exp(None)

    class Holder:
        exp = tapegrad.exp
    with pytest.raises(TypeError, match=r"exp\(\): argument 'input' \(position 1\) must be Tensor, not str"):
        Holder().exp("a")
