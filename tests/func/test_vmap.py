"""tapegrad.func.vmap against torch.func.vmap 2.13: in_dims/out_dims (ints, None, pytrees), chunk_size, nesting,
randomness, errors word for word; the per-sample fallback warns once, naming the op; composition with the other
transforms (per-sample gradients of an MLP through functional_call, ensembles with stack_module_state, vmap of
jvp/jacrev/jacfwd, nested vmap of grad)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="torch is the oracle of these tests")

import tapegrad  # noqa: E402
import tapegrad.func  # noqa: E402,F401
from func.test_reverse import _err, _same  # noqa: E402

RNG = np.random.default_rng(3)
X, Y, W = RNG.standard_normal((5, 3)), RNG.standard_normal((3, 5)), RNG.standard_normal((4, 3))


@pytest.mark.parametrize("case", ["in_dims=1", "None in_dims", "out_dims=1", "tuple out", "dict in", "nested",
                                  "nested in_dims", "chunk", "unbatched out", "kwargs", "scalar out", "tuple in_dims"])
def test_vmap_forms(case):
    def run(m):
        x, y, w = m.tensor(X), m.tensor(Y), m.tensor(W)
        V = m.func.vmap
        return {"in_dims=1": lambda: V(lambda a, b: a * b, in_dims=(0, 1))(x, y),
                "None in_dims": lambda: V(lambda a, ww: ww @ a, in_dims=(0, None))(x, w),
                "out_dims=1": lambda: V(lambda a: a.exp(), out_dims=1)(x),
                "tuple out": lambda: V(lambda a: (a.sum(), a * 2), out_dims=(0, 1))(x),
                "dict in": lambda: V(lambda d: d["a"] - d["b"])({"a": x, "b": y.T}),
                "nested": lambda: V(V(lambda a: a.sin() * a))(x),
                "nested in_dims": lambda: V(V(lambda a, b: a * b, in_dims=(0, None)), in_dims=(None, 1))(x[0], y),
                "chunk": lambda: V(lambda a: a.softmax(0), chunk_size=2)(x),
                "unbatched out": lambda: V(lambda a: w.sum())(x),
                "kwargs": lambda: V(lambda a, scale=1.0: a * scale)(x, scale=3.0),
                "scalar out": lambda: V(lambda a: (a ** 2).mean())(x),
                "tuple in_dims": lambda: V(lambda p: p[0] + p[1], in_dims=((0, 1),))((x, y))}[case]()
    _same(run(tapegrad), run(torch))


@pytest.mark.parametrize("case", ["in_dims type", "no inputs", "in_dims structure", "in_dim range", "non-tensor",
                                  "sizes", "no batched", "out_dims None batched", "non-tensor out", "randomness",
                                  "out_dims structure", "random error", "item", "bool", "tolist", "allclose",
                                  "equal"])
def test_vmap_errors(case):
    def run(m):
        x = m.tensor(X)
        V = m.func.vmap
        f = {"in_dims type": lambda: V(lambda a: a, in_dims=[0])(x),
             "no inputs": lambda: V(lambda: 1)(),
             "in_dims structure": lambda: V(lambda a, b: a, in_dims=(0, 0, 0))(x, x),
             "in_dim range": lambda: V(lambda a: a, in_dims=2)(x),
             "non-tensor": lambda: V(lambda a, b: a, in_dims=(0, 0))(x, 3.0),
             "sizes": lambda: V(lambda a, b: a, in_dims=(0, 1))(x, x),
             "no batched": lambda: V(lambda a: a, in_dims=None)(x),
             "out_dims None batched": lambda: V(lambda a: a, out_dims=None)(x),
             "non-tensor out": lambda: V(lambda a: 3.0)(x),
             "randomness": lambda: V(lambda a: a, randomness="sometimes")(x),
             "out_dims structure": lambda: V(lambda a: (a, a), out_dims=(0, 0, 0))(x),
             "random error": lambda: V(lambda a: m.nn.functional.dropout(a, 0.5))(x),
             "item": lambda: V(lambda a: a.sum().item())(x),
             "bool": lambda: V(lambda a: a if a.sum() > 0 else -a)(x),
             "tolist": lambda: V(lambda a: a.tolist())(x),
             "allclose": lambda: V(lambda a: m.tensor(float(m.allclose(a, a))))(x),
             "equal": lambda: V(lambda a: m.tensor(float(m.equal(a, a))))(x)}[case]
        return _err(f)
    got, want = run(tapegrad), run(torch)
    assert want is not None and got == want, (got, want)


def test_randomness():
    x = tapegrad.ones(4, 50)
    same = tapegrad.func.vmap(lambda a: tapegrad.nn.functional.dropout(a, 0.5), randomness="same")(x)
    diff = tapegrad.func.vmap(lambda a: tapegrad.nn.functional.dropout(a, 0.5), randomness="different")(x)
    assert all(np.array_equal(same[0].numpy(), same[i].numpy()) for i in range(4))
    assert not all(np.array_equal(diff[0].numpy(), diff[i].numpy()) for i in range(4))
    assert set(np.unique(diff.numpy())) <= {0.0, 2.0}
    r = tapegrad.func.vmap(lambda a: tapegrad.rand(3) + a[:3], randomness="different")(x)
    assert r.shape == (4, 3) and not np.allclose(r[0].numpy(), r[1].numpy())
    r = tapegrad.func.vmap(lambda a: tapegrad.rand(3) + a[:3], randomness="same")(x)
    assert np.allclose(r[0].numpy(), r[1].numpy())


def test_fallback_warns_once_naming_the_op():
    from tapegrad.func import _vmap
    _vmap._warned.discard("tapegrad.ops.linalg.contractions.Kron")
    x = tapegrad.tensor(X)
    with warnings.catch_warnings(record=True) as ws:
        warnings.simplefilter("always")
        a = tapegrad.func.vmap(lambda v: tapegrad.kron(v, v))(x)
        tapegrad.func.vmap(lambda v: tapegrad.kron(v, v))(x)
    msgs = [str(w.message) for w in ws if "batching rule" in str(w.message)]
    assert msgs == ["There is a performance drop because we have not yet implemented the batching rule for "
                    "tapegrad.ops.linalg.contractions.Kron. Please file us an issue on GitHub so that we can "
                    "prioritize its implementation."]
    _same(a, torch.stack([torch.kron(r, r) for r in torch.tensor(X)]))


def test_batched_ops_do_not_warn():
    x = tapegrad.tensor(X)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tapegrad.func.vmap(lambda v: (tapegrad.tensor(W) @ v).relu().softmax(0).log().sum())(x)
        tapegrad.func.vmap(tapegrad.func.grad(lambda v: (v.sin() * v).sum()))(x)


# --- per-sample gradients, ensembles --------------------------------------------------------------------------------
def _mlp(m):
    m.manual_seed(0)
    return m.nn.Sequential(m.nn.Linear(3, 8), m.nn.Tanh(), m.nn.Linear(8, 4)).double()


def _copy(src, dst):
    with torch.no_grad():
        for (_, a), (_, b) in zip(src.named_parameters(), dst.named_parameters()):
            b.copy_(torch.tensor(a.detach().numpy()))


def test_per_sample_gradients_of_an_mlp():
    tm, pm = _mlp(tapegrad), _mlp(torch)
    _copy(tm, pm)
    labels = RNG.integers(0, 4, 5)

    def run(m, model):
        F = m.func
        params = {k: v.detach() for k, v in model.named_parameters()}

        def loss(p, x, y):
            out = F.functional_call(model, p, (x.unsqueeze(0),))
            return m.nn.functional.cross_entropy(out, y.unsqueeze(0))
        return F.vmap(F.grad(loss), in_dims=(None, 0, 0))(params, m.tensor(X), m.tensor(labels))
    got, want = run(tapegrad, tm), run(torch, pm)
    _same(got, want, rtol=1e-9)
    for k in got:       # and one gradient per sample, as a loop of ordinary backwards gives
        assert not got[k].requires_grad
    tm.zero_grad()
    tapegrad.nn.functional.cross_entropy(tm(tapegrad.tensor(X)), tapegrad.tensor(labels), reduction="sum").backward()
    for k, p in tm.named_parameters():
        np.testing.assert_allclose(got[k].sum(0).numpy(), p.grad.numpy(), rtol=1e-10, atol=1e-12)


def test_ensemble_with_stack_module_state():
    def run(m):
        models = []
        for s in range(3):
            m.manual_seed(s)
            models.append(m.nn.Linear(3, 2).double())
        return models
    tms, pms = run(tapegrad), run(torch)
    for a, b in zip(tms, pms):
        _copy(a, b)

    def go(m, models):
        params, buffers = m.func.stack_module_state(models)
        base = models[0]
        return m.func.vmap(lambda p, b, x: m.func.functional_call(base, (p, b), (x,)), in_dims=(0, 0, None))(
            params, buffers, m.tensor(X))
    _same(go(tapegrad, tms), go(torch, pms))


@pytest.mark.parametrize("case", ["vmap(jvp)", "vmap(jacrev)", "vmap(jacfwd)", "vmap(vjp)", "vmap(vmap(grad))",
                                  "vmap(grad) of relu/where", "vmap(grad(grad))"])
def test_vmap_compositions(case):
    def run(m):
        F = m.func
        x, w = m.tensor(X), m.tensor(W)
        f = lambda v: (w @ v).tanh()  # noqa: E731
        return {"vmap(jvp)": lambda: F.vmap(lambda v, t: F.jvp(f, (v,), (t,)))(x, x * 2),
                "vmap(jacrev)": lambda: F.vmap(F.jacrev(f))(x),
                "vmap(jacfwd)": lambda: F.vmap(F.jacfwd(f))(x),
                "vmap(vjp)": lambda: F.vmap(lambda v: F.vjp(f, v)[1](m.ones(4, dtype=m.float64)))(x),
                "vmap(vmap(grad))": lambda: F.vmap(F.vmap(F.grad(lambda s: s.exp() * s.sin())))(x),
                "vmap(grad) of relu/where": lambda: F.vmap(F.grad(
                    lambda v: m.where(v > 0, v * v, (w @ v).relu().sum() * v).sum()))(x),
                "vmap(grad(grad))": lambda: F.vmap(F.grad(F.grad(lambda s: s.sin() * s ** 3)))(x.reshape(-1))}[case]()
    _same(run(tapegrad), run(torch), rtol=1e-9)


def test_inplace():
    def run(m):
        x = m.tensor(X)

        def f(a):
            b = a * 1
            b[1] = 0.0
            b.add_(1).mul_(a)
            return b
        return m.func.vmap(f)(x)
    _same(run(tapegrad), run(torch))

    def bad(m):
        x = m.tensor(X)
        return _err(lambda: m.func.vmap(lambda a: m.zeros(3, dtype=m.float64).mul_(a))(x))
    assert bad(tapegrad) == bad(torch)

    def g(m):       # in place under vmap(grad): the write reaches the batched graph
        def f(a):
            b = a.sin() * 1
            b[0] = 0.0
            b[1:] = a[:2] * 2
            return (b * a).sum()
        return m.func.vmap(m.func.grad(f))(m.tensor(X))
    _same(g(tapegrad), g(torch))
    # (an in-place op whose own input is saved for its backward: the op reads a copy, as eager's; more in
    # test_gaps.py)
    _same(tapegrad.func.vmap(tapegrad.func.grad(lambda a: (a * 1).mul_(a).sum()))(tapegrad.tensor(X)),
          torch.func.vmap(torch.func.grad(lambda a: (a * 1).mul_(a).sum()))(torch.tensor(X)))


def test_top_level_vmap():
    assert tapegrad.vmap is tapegrad.func.vmap


@pytest.mark.parametrize("case", ["conv2d weights", "conv1d both", "layer_norm weights", "grad conv weights"])
def test_per_sample_weights_batch_without_a_loop(case):
    rng = np.random.default_rng(0)
    x, w, b = rng.standard_normal((2, 3, 8, 8)), rng.standard_normal((4, 5, 3, 3, 3)), rng.standard_normal((4, 5))
    x1, w1 = rng.standard_normal((4, 2, 3, 9)), rng.standard_normal((4, 5, 3, 2))
    lx, lw = rng.standard_normal((4, 5, 6)), rng.standard_normal((4, 6))

    def run(m):
        F, V, T = m.nn.functional, m.func.vmap, m.tensor
        return {"conv2d weights": lambda: V(lambda w, b: F.conv2d(T(x), w, b, padding=1))(T(w), T(b)),
                "conv1d both": lambda: V(lambda x, w: F.conv1d(x, w, stride=2))(T(x1), T(w1)),
                "layer_norm weights": lambda: V(lambda x, w: F.layer_norm(x, (6,), w, w))(T(lx), T(lw)),
                "grad conv weights": lambda: V(m.func.grad(lambda w: F.conv2d(T(x), w).tanh().sum()))(T(w))}[case]()
    with warnings.catch_warnings():
        warnings.simplefilter("error")        # (no per-sample fallback)
        got = run(tapegrad)
    _same(got, run(torch), rtol=1e-9)


@pytest.mark.parametrize("op", ["t_", "transpose_", "squeeze_", "unsqueeze_"])
def test_inplace_view_ops(torch, op):
    """``y.transpose_(0, 1)`` and the other in-place view ops under vmap (a batching rule each, no loop) and
    under vmap(grad)/jacrev/jvp: later ops see the view (they used the old physical tensor)."""
    args = {"t_": (), "transpose_": (0, 1), "squeeze_": (0,), "unsqueeze_": (1,)}[op]
    shape = (4, 3, 2) if op != "squeeze_" else (4, 1, 6)

    def run(m):
        x = m.tensor(np.arange(24.0).reshape(shape) / 7 + 0.5)

        def f(v):
            y = v * v
            getattr(y, op)(*args)
            return y * m.arange(1.0, y.shape[-1] + 1, dtype=m.float64)
        with warnings.catch_warnings():
            warnings.simplefilter("error")        # (no loop fallback)
            out = m.func.vmap(f)(x)
        per = m.func.vmap(m.func.grad(lambda v: f(v).sin().sum()))(x)
        jac = m.func.jacrev(lambda v: f(v).sum(0))(x[0])
        tan = m.func.jvp(f, (x[0],), (m.ones_like(x[0]),))[1]
        return out, per, jac, tan
    _same(run(tapegrad), run(torch))
