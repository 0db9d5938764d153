"""Per-sample gradients, ``vmap(grad(f))``, and vmap's lean path for it (``func._reverse.per_sample_grads``): values
against torch.func 2.13 (argnums, has_aux, grad_and_value, dict/tuple parameters, in_dims/out_dims, unused inputs,
kwargs, chunks, randomness), the same numbers as the general path (the transforms nested as written), errors word
for word, and the cases where the lean path must not apply (an outer autograd, nested vmap, jacrev, jvp around it)
giving torch's results, with or without a graph as torch's."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="torch is the oracle of these tests")

import tapegrad  # noqa: E402
import tapegrad.func  # noqa: E402,F401
from tapegrad.func import _reverse  # noqa: E402
from func.test_forward import _err  # noqa: E402

RNG = np.random.default_rng(7)
B, N_IN, HID, N_OUT = 6, 5, 7, 3
X = RNG.standard_normal((B, N_IN))
Y = RNG.integers(0, N_OUT, B)
W1, B1 = RNG.standard_normal((HID, N_IN)) * 0.5, RNG.standard_normal(HID) * 0.1
W2, B2 = RNG.standard_normal((N_OUT, HID)) * 0.5, RNG.standard_normal(N_OUT) * 0.1


def _same(a, b, rtol=1e-10):
    """The same pytree structure and values (``b`` may be torch's or tapegrad's)."""
    if isinstance(b, dict):
        assert type(a) is type(b) and list(a) == list(b)
        for k in b:
            _same(a[k], b[k], rtol)
        return
    if isinstance(b, (tuple, list)):
        assert type(a) is type(b) and len(a) == len(b), (type(a), type(b))
        for x, y in zip(a, b):
            _same(x, y, rtol)
        return
    assert isinstance(a, tapegrad.Tensor), type(a)
    assert tuple(a.shape) == tuple(b.shape), (tuple(a.shape), tuple(b.shape))
    assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1]
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=rtol, atol=1e-12)


def _params(m, kind="dict"):
    ps = [m.tensor(a) for a in (W1, B1, W2, B2)]
    if kind == "dict":
        return {"0.weight": ps[0], "0.bias": ps[1], "2.weight": ps[2], "2.bias": ps[3]}
    if kind == "tuple":
        return tuple(ps)
    return {"first": (ps[0], ps[1]), "second": [ps[2], {"b": ps[3]}]}      # nested


def _mlp(m, p, x):
    if isinstance(p, tuple):
        w1, b1, w2, b2 = p
    elif "first" in p:
        (w1, b1), (w2, d) = p["first"], p["second"]
        b2 = d["b"]
    else:
        w1, b1, w2, b2 = p["0.weight"], p["0.bias"], p["2.weight"], p["2.bias"]
    F = m.nn.functional
    return F.linear(F.relu(F.linear(x, w1, b1)), w2, b2)


def _loss(m, kind="dict"):
    def loss(p, x, y):
        out = _mlp(m, p, x.unsqueeze(0))
        return m.nn.functional.cross_entropy(out, y.unsqueeze(0))
    return loss


def _data(m):
    return m.tensor(X), m.tensor(Y)


class _Spy:
    """Counts the calls of vmap's lean path that it answered (not NotImplemented)."""

    def __init__(self, monkeypatch):
        self.taken = self.declined = 0
        orig = _reverse.per_sample_grads

        def spy(*a, **k):
            r = orig(*a, **k)
            if r is NotImplemented:
                self.declined += 1
            else:
                self.taken += 1
            return r
        monkeypatch.setattr(_reverse, "per_sample_grads", spy)


@pytest.fixture
def spy(monkeypatch):
    return _Spy(monkeypatch)


def _general(transform, f, *a, **k):
    """The transform of ``f`` behind a lambda: vmap sees no grad, so the general (nested) path runs."""
    g = transform(f, *a, **k)
    return lambda *args, **kw: g(*args, **kw)


# --- values against torch.func, and the same numbers as the general path -------------------------------------------
@pytest.mark.parametrize("kind", ["dict", "tuple", "nested"])
def test_mlp_per_sample_grads(kind, spy):
    def run(m, lean=True):
        x, y = _data(m)
        g = m.func.grad(_loss(m), 0) if lean else _general(m.func.grad, _loss(m), 0)
        return m.func.vmap(g, in_dims=(None, 0, 0))(_params(m, kind), x, y)
    got = run(tapegrad)
    assert spy.taken == 1
    _same(got, run(torch))
    _same(got, run(tapegrad, lean=False), rtol=0)
    assert spy.taken == 1


@pytest.mark.parametrize("argnums", [0, 1, -2, (0, 1), (1, 0)])
@pytest.mark.parametrize("api", ["grad", "grad_and_value"])
def test_argnums(argnums, api, spy):
    def run(m, lean=True):
        x, y = _data(m)
        t = getattr(m.func, api)
        g = t(_loss(m), argnums) if lean else _general(t, _loss(m), argnums)
        return m.func.vmap(g, in_dims=(None, 0, 0))(_params(m), x.to(m.float64), y)
    got = run(tapegrad)
    assert spy.taken == 1
    _same(got, run(torch))
    _same(got, run(tapegrad, lean=False), rtol=0)


@pytest.mark.parametrize("api", ["grad", "grad_and_value"])
def test_has_aux(api, spy):
    def run(m, lean=True):
        x, y = _data(m)

        def f(p, xi, yi):
            out = _mlp(m, p, xi.unsqueeze(0))
            loss = m.nn.functional.cross_entropy(out, yi.unsqueeze(0))
            return loss, {"logits": out, "twice": loss * 2, "from params": p["0.bias"][:2] * 1,
                          "unbatched": m.ones(2, dtype=m.float64) * 3}
        t = getattr(m.func, api)
        g = t(f, has_aux=True) if lean else _general(t, f, has_aux=True)
        return m.func.vmap(g, in_dims=(None, 0, 0))(_params(m), x, y)
    got = run(tapegrad)
    assert spy.taken == 1
    _same(got, run(torch))
    _same(got, run(tapegrad, lean=False), rtol=0)
    aux = got[1] if api == "grad" else got[1][1]
    assert not any(t.requires_grad for t in aux.values())
    assert not got[0]["0.weight"].requires_grad


@pytest.mark.parametrize("case", ["x dim 1", "negative dims", "params batched", "out_dims 1", "unused inputs",
                                  "kwargs", "chunks", "scalar per sample", "float32"])
def test_variants(case, spy):
    def run(m, lean=True):
        x, y = _data(m)
        grad = m.func.grad if lean else (lambda f, *a, **k: _general(m.func.grad, f, *a, **k))
        V, p = m.func.vmap, _params(m)
        if case == "x dim 1":
            return V(grad(_loss(m)), in_dims=(None, 1, 0))(p, x.t().contiguous(), y)
        if case == "negative dims":
            return V(grad(_loss(m), argnums=1), in_dims=(None, -1, -1))(p, x.t().contiguous(), y)
        if case == "params batched":          # one set of parameters per sample (an ensemble's shape)
            pb = {k: v.unsqueeze(0).expand((B,) + tuple(v.shape)) * (1 + m.arange(B).reshape((B,) + (1,) * v.dim()))
                  for k, v in p.items()}
            return V(grad(_loss(m)), in_dims=(0, 0, 0))(pb, x, y)
        if case == "out_dims 1":
            return V(grad(_loss(m)), in_dims=(None, 0, 0), out_dims=1)(p, x, y)
        if case == "unused inputs":
            def f(p, xi, yi, extra):
                return (p["0.bias"] * xi[:HID].sum()).sum()
            return V(grad(f, argnums=(0, 3)), in_dims=(None, 0, 0, None))(p, x, y, m.ones(4, dtype=m.float64))
        if case == "kwargs":
            def f(p, xi, yi, scale=1.0):
                return _loss(m)(p, xi, yi) * scale
            return V(grad(f), in_dims=(None, 0, 0))(p, x, y, scale=3.0)
        if case == "chunks":
            return V(grad(_loss(m)), in_dims=(None, 0, 0), chunk_size=4)(p, x, y)
        if case == "scalar per sample":
            return V(grad(lambda a, w: (a * w).sin().sum()), in_dims=(0, None))(x[:, 0].contiguous(), p["0.bias"])
        p32 = {k: v.to(m.float32) for k, v in p.items()}
        return V(grad(_loss(m)), in_dims=(None, 0, 0))(p32, x.to(m.float32), y)
    got = run(tapegrad)
    assert spy.taken >= 1 and spy.declined == 0
    _same(got, run(torch), rtol=1e-5 if case == "float32" else 1e-10)
    _same(got, run(tapegrad, lean=False), rtol=0)


def test_inplace_inside(spy):
    def run(m, lean=True):
        def f(w, xi):
            h = xi * w
            h.mul_(2).add_(1)
            return (h.tanh() * w).sum()
        g = m.func.grad(f) if lean else _general(m.func.grad, f)
        return m.func.vmap(g, in_dims=(None, 0))(m.tensor(W1[0]), m.tensor(X))
    got = run(tapegrad)
    assert spy.taken == 1
    _same(got, run(torch))
    _same(got, run(tapegrad, lean=False), rtol=0)


def test_under_no_grad(spy):
    def run(m):
        x, y = _data(m)
        with m.no_grad():
            return m.func.vmap(m.func.grad(_loss(m)), in_dims=(None, 0, 0))(_params(m), x, y)
    got = run(tapegrad)
    assert spy.taken == 1
    _same(got, run(torch))


# --- randomness ------------------------------------------------------------------------------------------------------
def _dropout_loss(m):
    def loss(w, xi):
        return (m.nn.functional.dropout(xi, 0.5) * w).sum()
    return loss


def test_randomness_error():
    def run(m):
        return m.func.vmap(m.func.grad(_dropout_loss(m)), in_dims=(None, 0))(m.tensor(X[0]), m.tensor(X))
    assert _err(lambda: run(tapegrad)) == _err(lambda: run(torch))
    state = tapegrad.get_rng_state()
    _err(lambda: run(tapegrad))
    assert tapegrad.equal(state, tapegrad.get_rng_state())          # the generator put back as it was


@pytest.mark.parametrize("randomness", ["same", "different"])
def test_randomness_dropout(randomness, spy):
    x = np.repeat(X[:1], B, 0)                  # every sample the same: only the masks can tell them apart

    def run(m, lean=True):
        g = m.func.grad(_dropout_loss(m)) if lean else _general(m.func.grad, _dropout_loss(m))
        return m.func.vmap(g, in_dims=(None, 0), randomness=randomness)(m.tensor(X[0]), m.tensor(x))
    tapegrad.manual_seed(3)
    got = run(tapegrad)
    tapegrad.manual_seed(3)
    general = run(tapegrad, lean=False)
    assert spy.taken == 1
    _same(got, general, rtol=0)                 # the same draws in the same order
    want = run(torch)
    a = got.numpy()
    kept = (a == 0) | np.isclose(a, 2 * X[0])
    assert kept.all()                           # each gradient is 0 or x / (1 - p), as torch's
    assert want.shape == tuple(got.shape)
    rows_equal = all(np.array_equal(a[0], r) for r in a)
    assert rows_equal == (randomness == "same")


# --- errors word for word ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("case", ["non-scalar", "not a tensor", "aux not a pair", "argnums out of range",
                                  "argnums repeated", "argnum not a tensor", "empty argnums"])
def test_errors(case):
    def run(m):
        V, G, x = m.func.vmap, m.func.grad, m.tensor(X)
        return {"non-scalar": lambda: V(G(lambda a: a * 2))(x),
                "not a tensor": lambda: V(G(lambda a: 3.0))(x),
                "aux not a pair": lambda: V(G(lambda a: a.sum(), has_aux=True))(x),
                "argnums out of range": lambda: V(G(lambda a: a.sum(), argnums=2))(x),
                "argnums repeated": lambda: V(G(lambda a, b: a.sum(), argnums=(0, 0)), in_dims=(0, None))(x, 1.0),
                "argnum not a tensor": lambda: V(G(lambda a, b: a.sum(), argnums=1), in_dims=(0, None))(x, 1.0),
                "empty argnums": lambda: V(G(lambda a: a.sum(), argnums=()))(x)}[case]()
    got, want = _err(lambda: run(tapegrad)), _err(lambda: run(torch))
    assert got is not None and want is not None
    assert got == want


# --- where the lean path must not apply: the general path's results, as torch's ------------------------------------
def test_outer_autograd_through_parameters(spy):
    """Parameters that require grad: the per-sample gradients carry a graph back to them (second order)."""
    def run(m):
        x, y = _data(m)
        p = {k: v.requires_grad_() for k, v in _params(m).items()}
        g = m.func.vmap(m.func.grad(_loss(m)), in_dims=(None, 0, 0))(p, x, y)
        assert g["0.weight"].requires_grad
        total = sum((v ** 2).sum() for v in g.values())
        return m.autograd.grad(total, list(p.values()))
    got = run(tapegrad)
    assert spy.taken == 0 and spy.declined == 1
    _same(list(got), list(run(torch)), rtol=1e-9)


def test_outer_autograd_through_a_closed_over_tensor(spy):
    """A tensor that requires grad closed over by f: the lean path runs, and keeps the graph to it."""
    def run(m):
        scale = m.tensor(1.5, dtype=m.float64, requires_grad=True)

        def f(w, xi):
            return (xi * w * scale).sin().sum()
        g = m.func.vmap(m.func.grad(f), in_dims=(None, 0))(m.tensor(W1[0]), m.tensor(X))
        assert g.requires_grad
        return g, m.autograd.grad(g.sum(), scale)[0]
    got = run(tapegrad)
    assert spy.taken == 1
    _same(got, run(torch), rtol=1e-9)


def test_grad_of_vmap_grad(spy):
    def run(m):
        def outer(w):
            return m.func.vmap(m.func.grad(lambda v, xi: (v * xi).sin().sum()), in_dims=(None, 0))(w, m.tensor(X)).sum()
        return m.func.grad(outer)(m.tensor(W1[0]))
    got = run(tapegrad)
    assert spy.taken == 0
    _same(got, run(torch), rtol=1e-9)


@pytest.mark.parametrize("case", ["vmap(vmap(grad))", "vmap(jacrev)", "jvp(vmap(grad))", "vmap(grad(grad))",
                                  "vmap(grad(vmap))"])
def test_other_compositions(case, spy):
    x3 = X.reshape(2, 3, N_IN)

    def run(m):
        F, x = m.func, m.tensor(X)

        def f(v):
            return (v.sin() * v).sum()
        if case == "vmap(vmap(grad))":
            return F.vmap(F.vmap(F.grad(f)))(m.tensor(x3))
        if case == "vmap(jacrev)":
            return F.vmap(F.jacrev(lambda v: v.sin() * v[0]))(x)
        if case == "jvp(vmap(grad))":
            return F.jvp(lambda a: F.vmap(F.grad(f))(a), (x,), (m.ones_like(x),))
        if case == "vmap(grad(vmap))":          # (a vmap inside f: its own level, above the lean path's)
            return F.vmap(F.grad(lambda w, rows: F.vmap(lambda r: (w * r).sin().sum())(rows).sum()),
                          in_dims=(None, 0))(m.tensor(W1[0]), m.tensor(x3))
        return F.vmap(F.grad(lambda v: F.grad(f)(v).sum()))(x)
    got = run(tapegrad)
    if case == "vmap(vmap(grad))":
        assert spy.taken == 0 and spy.declined == 1       # (the inner vmap: another level is active)
    if case == "jvp(vmap(grad))":
        assert spy.taken == 0 and spy.declined == 1
    if case in ("vmap(grad(grad))", "vmap(grad(vmap))"):
        assert spy.taken == 1                             # (the outer grad lowers to the vmap level; the inner one
        #                                                    is the general path, inside f)
    _same(got, run(torch), rtol=1e-9)


def test_no_reference_cycles():
    """A vmap call leaves no cyclic garbage (its results would be kept until the collector ran)."""
    import gc
    x, y = _data(tapegrad)
    f = tapegrad.func.vmap(tapegrad.func.grad(_loss(tapegrad)), in_dims=(None, 0, 0))
    f(_params(tapegrad), x, y)
    gc.collect()
    was = gc.isenabled()
    gc.disable()
    try:
        f(_params(tapegrad), x, y)
        assert gc.collect() == 0
    finally:
        if was:
            gc.enable()


def test_tied_weights_through_functional_call(spy):
    """functional_call gives a tensor tied in the module (one weight under two names) the value given for any of
    its names (its walk over the module's parameters is its own: the names must be named_parameters')."""
    def run(m):
        m.manual_seed(0)
        net = m.nn.Sequential(m.nn.Linear(4, 4), m.nn.Tanh(), m.nn.Linear(4, 4)).double()
        net[2].weight = net[0].weight
        p = {"0.weight": m.tensor(RNG_TIED_W), "0.bias": m.tensor(RNG_TIED_B), "2.bias": m.tensor(RNG_TIED_B[::-1].copy())}

        def loss(p, xi):
            return m.func.functional_call(net, p, (xi,)).pow(2).sum()
        return m.func.vmap(m.func.grad(loss), in_dims=(None, 0))(p, m.tensor(X[:, :4].copy()))
    got = run(tapegrad)
    assert spy.taken == 1
    _same(got, run(torch), rtol=1e-9)


RNG_TIED_W = np.random.default_rng(3).standard_normal((4, 4))
RNG_TIED_B = np.random.default_rng(4).standard_normal(4)


def test_eager_apply_restored():
    """A transform switches the code of the function behind ``Function.apply`` (not the class attribute: that
    would invalidate every op class's attribute caches); after it, the eager call's code is back."""
    from tapegrad.autograd import function as fn
    seen = []

    def f(v):
        seen.append(fn._apply.__code__ is fn._EAGER_CODE)
        return (v * v).sum()
    tapegrad.func.vmap(tapegrad.func.grad(f))(tapegrad.tensor(X))
    assert seen == [False]
    assert fn.Function.__dict__["apply"].__func__ is fn._apply
    assert fn._apply.__code__ is fn._EAGER_CODE
    assert fn._apply_eager.__code__ is fn._EAGER_CODE
