"""The compositions of torch.func that tapegrad once got wrong or refused (issue 16), each against torch.func
2.13 on the same inputs, values and gradients: as_strided of a batch whose samples interleave in memory (the
gradient per sample), in-place ops on saved tensors under vmap(grad), vmap of forward-over-reverse
(vmap(jacfwd(jacrev(f))), vmap(hessian(f))), a per-sample index under vmap(jvp), jacrev's and jacfwd's chunk_size."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="torch is the oracle of these tests")

import tapegrad  # noqa: E402
import tapegrad.func  # noqa: E402,F401
from func.test_reverse import _err, _same  # noqa: E402

RNG = np.random.default_rng(16)
X = RNG.standard_normal((4, 6))


def _quiet(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn()


def _both(run, rtol=1e-10):
    _same(_quiet(lambda: run(tapegrad)), _quiet(lambda: run(torch)), rtol)


# --- as_strided of interleaved samples: each sample's gradient is its own ----------------------------------------
STRIDED = {
    "interleaved": (lambda t: t.as_strided((2, 2), (1, 2)), 1),
    "interleaved_offset": (lambda t: t.as_strided((3,), (2,), 1), 1),
    "interleaved_overlapping": (lambda t: t.as_strided((3, 2), (1, 1)), 1),
    "interleaved_copy": (lambda t: t.as_strided_copy((2, 2), (1, 2), 1) if hasattr(t, "as_strided_copy") else
                         torch.as_strided_copy(t, (2, 2), (1, 2), 1), 1),
    "view_of_interleaved": (lambda t: t[1:].as_strided((2,), (3,)), 1),
    "outermost": (lambda t: t.as_strided((2, 2), (1, 2)), 0),
}


@pytest.mark.parametrize("case", list(STRIDED))
def test_as_strided_interleaved_values_and_grads(case):
    f, in_dim = STRIDED[case]
    w = np.cos(np.arange(6.))

    def run(m):
        x = m.tensor(X)
        g = f if not (case == "interleaved_copy" and m is tapegrad) else \
            (lambda t: tapegrad.as_strided_copy(t, (2, 2), (1, 2), 1))
        out = m.func.vmap(g, in_dims=in_dim)(x)
        ww = m.tensor(w[:out[0].numel()]).reshape(out.shape[1:])
        grads = m.func.vmap(m.func.grad(lambda t: (g(t) * ww).sum()), in_dims=in_dim)(x)
        return out, grads
    _both(run)


def test_as_strided_interleaved_grad_is_the_per_sample_loop():
    """Each sample differentiated alone (a loop over torch.autograd.grad) is what vmap(grad) gives: elements of
    the neighbours a sample reads get nothing."""
    x = tapegrad.tensor(X)
    f = lambda t: (t.as_strided((2, 2), (1, 2)) ** 2).sum()  # noqa: E731
    got = _quiet(lambda: tapegrad.func.vmap(tapegrad.func.grad(f), in_dims=1)(x))
    want = []
    for i in range(X.shape[1]):
        xt = torch.tensor(X)
        xt.requires_grad_()
        col = xt[:, i]                    # (sample i: a strided view of the storage, as vmap's sample is)
        (g,) = torch.autograd.grad(f(col), xt)
        want.append(g[:, i].numpy())
    np.testing.assert_allclose(got.numpy(), np.stack(want), rtol=1e-12)


def test_as_strided_nested_vmap_interleaved():
    x3 = RNG.standard_normal((3, 4, 5))
    f = lambda t: (t.as_strided((2,), (2,), 1) ** 2).sum()  # noqa: E731

    def run(m):
        V, G = m.func.vmap, m.func.grad
        x = m.tensor(x3)
        return V(V(f, in_dims=1), in_dims=2)(x), V(V(G(f), in_dims=1), in_dims=2)(x), \
            V(V(G(f), in_dims=0), in_dims=1)(x)
    _both(run)


def test_as_strided_of_an_unbatched_input_under_vmap_grad():
    """The input is not batched: vmap(grad) differentiates it per sample on a broadcast (all samples share the
    memory), and each sample's gradient is its own, not the batch's mean."""
    y = RNG.standard_normal((5, 2))

    def run(m):
        f = lambda t, c: (t.as_strided((2, 2), (1, 2)) * c.sum() ** 2).sum()  # noqa: E731
        return m.func.vmap(m.func.grad(f), in_dims=(None, 0))(m.tensor(X[0]), m.tensor(y))
    _both(run)


def test_as_strided_interleaved_jvp_and_hessian():
    t = RNG.standard_normal((4, 6))

    def run(m):
        f = lambda x: x.as_strided((2, 2), (1, 2)).sin()  # noqa: E731
        jv = m.func.vmap(lambda x, v: m.func.jvp(f, (x,), (v,)), in_dims=1)(m.tensor(X), m.tensor(t))
        h = m.func.vmap(m.func.hessian(lambda x: f(x).sum()), in_dims=1)(m.tensor(X))
        return jv, h
    _both(run)


# --- in place under vmap(grad): an op whose own input is saved -------------------------------------------------
def _inplace_cases():
    def saved_self(a):
        b = a * 1
        b.mul_(a)
        return b.sum()

    def chain(a):
        b = a.sin()
        b.div_(a)
        b.add_(a * a)
        return (b * b).sum()

    def clone_pow(a):
        b = a.clone()
        b.pow_(2)
        b.mul_(a)
        return b.sum()

    def addcmul_tanh(a):
        b = a * 1
        b.addcmul_(a, a)
        b.tanh_()
        return b.sum()

    def copy_then_mul(a):
        b = a * 1
        b.copy_(a * a)
        b.mul_(a)
        return b.sum()

    def through_views(a):
        b = a * 1
        b.t().mul_(a.t())
        b.diagonal().mul_(a.diagonal())
        return (b ** 3).sum()

    def expand_then_inplace(a):
        b = a[:1].expand(3, 4) * 1
        b.mul_(a[0])
        return (b * a[0]).sum()

    def unfold_then_inplace(a):
        b = a * 1
        b.unfold(1, 2, 2).mul_(a[:, ::2, None])     # (windows apart: writing overlapping ones is undefined)
        return (b * a).sum()

    def strided_view(a):
        b = a.reshape(-1) * 1
        b.as_strided((2, 2), (1, 2)).mul_(a[:2, :2])
        return (b ** 2).sum()

    def other_batched(a, y):            # (y mapped, not differentiated)
        b = y * 1
        b.mul_(a)
        return b.sum()

    def both(a, y):
        b = a * 1
        b.mul_(y)
        b.mul_(a)
        return (b * y).sum()
    return {f.__name__: f for f in (saved_self, chain, clone_pow, addcmul_tanh, copy_then_mul, through_views,
                                     expand_then_inplace, unfold_then_inplace, strided_view, other_batched, both)}


INPLACE = _inplace_cases()
XS = RNG.standard_normal((2, 3, 4))


@pytest.mark.parametrize("case", list(INPLACE))
def test_inplace_on_saved_input_under_vmap_grad(case):
    f = INPLACE[case]

    def run(m):
        args = (m.tensor(XS),) if f.__code__.co_argcount == 1 else (m.tensor(XS), m.tensor(XS[::-1].copy()))
        g = m.func.vmap(m.func.grad(f))(*args)
        gv = m.func.vmap(m.func.grad_and_value(f, argnums=tuple(range(len(args)))))(*args)
        return g, gv
    _both(run)


def test_inplace_under_nested_vmap_grad_and_vmap_jvp():
    def f(a):
        b = a * 1
        b.mul_(a)
        b[1:] *= b[:-1].exp()
        return (b * a).sum()

    def run(m):
        x = m.tensor(XS)
        nested = m.func.vmap(m.func.vmap(m.func.grad(f)))(x)
        tangent = m.func.vmap(lambda a, t: m.func.jvp(f, (a,), (t,)))(x[0], x[1])
        hess = m.func.vmap(m.func.hessian(lambda a: f(a.reshape(3, 4))))(x.reshape(2, 12))
        return nested, tangent, hess
    _both(run)


@pytest.mark.parametrize("case", ["result_saved", "input_saved_elsewhere", "overlapping_views"])
def test_genuine_version_errors_under_vmap_grad_are_torch_errors(case):
    def f(m):
        def result_saved(a):          # exp saved its result, which mul_ then changes
            b = a.exp()
            b.mul_(2)
            return b.sum()

        def input_saved_elsewhere(a):   # c = b * a saved b
            b = a * 1
            c = b * a
            b.mul_(2)
            return c.sum()

        def overlapping_views(a):
            b = a * 1
            b[1:].mul_(b[:3])
            return (b ** 2).sum()
        return {"result_saved": result_saved, "input_saved_elsewhere": input_saved_elsewhere,
                "overlapping_views": overlapping_views}[case]
    got = _err(lambda: tapegrad.func.vmap(tapegrad.func.grad(f(tapegrad)))(tapegrad.tensor(XS[0])))
    want = _err(lambda: torch.func.vmap(torch.func.grad(f(torch)))(torch.tensor(XS[0])))
    assert want is not None and got == want


# --- vmap of forward-over-reverse ----------------------------------------------------------------------------------
def _fns(m):
    w = m.tensor(np.linspace(-1, 1, 12).reshape(4, 3))
    return {
        "poly": lambda x: (x ** 3).sum() + (x[0] * x[1:]).sum(),
        "mlp": lambda x: ((x @ w).tanh() ** 2).sum() + x.sin().prod(),
        "softmax": lambda x: (x.softmax(0) * x.exp()).sum(),
        "norm": lambda x: m.linalg.vector_norm(x) * x.logsumexp(0),
    }


A34, B34, W4 = RNG.standard_normal((3, 4)), RNG.standard_normal((3, 4)), RNG.standard_normal(4)


@pytest.mark.parametrize("fn", ["poly", "mlp", "softmax", "norm"])
def test_vmap_of_forward_over_reverse(fn):
    def run(m):
        F, f = m.func, _fns(m)[fn]
        x = m.tensor(A34)
        fr = F.vmap(F.jacfwd(F.jacrev(f)))(x)
        h = F.vmap(F.hessian(f))(x)
        assert not fr.requires_grad and not h.requires_grad
        hvp = F.vmap(lambda a, v: F.jvp(F.grad(f), (a,), (v,)))(x, x.cos())
        return fr, h, hvp
    _both(run, rtol=1e-9)


def test_vmap_of_forward_over_reverse_forms():
    """argnums, has_aux, an unbatched argument, out_dims, nested vmap, a closed-over parameter."""
    def run(m):
        F = m.func
        x, y = m.tensor(A34), m.tensor(B34)
        f2 = lambda a, b: (a.sin() * b.exp()).sum() + (a * a * b).sum()  # noqa: E731
        aux = lambda a: ((a ** 3).sum(), a.cos())  # noqa: E731
        return (F.vmap(F.jacfwd(F.jacrev(f2, argnums=1), argnums=0))(x, y),
                F.vmap(F.jacfwd(F.jacrev(f2, argnums=(0, 1)), argnums=(0, 1)))(x, y),
                F.vmap(F.jacfwd(F.jacrev(aux, has_aux=True), has_aux=True))(x),
                F.vmap(F.jacfwd(F.jacrev(f2)), in_dims=(0, None))(x, y[0]),
                F.vmap(F.jacfwd(F.jacrev(f2)), in_dims=(None, 0), out_dims=1)(x[0], y),
                F.vmap(F.vmap(F.jacfwd(F.jacrev(lambda a: (a ** 4).sum()))))(x.reshape(3, 2, 2)),
                F.vmap(F.jacfwd(F.jacrev(lambda a: (a * y[1]).tanh().sum())))(x))
    _both(run, rtol=1e-9)


def test_grad_through_vmap_of_forward_over_reverse():
    """An outer grad differentiates through it: the graph is kept where something outside needs it."""
    def run(m):
        F = m.func
        x, w = m.tensor(A34), m.tensor(W4)
        return F.grad(lambda w: F.vmap(F.jacfwd(F.jacrev(lambda a: ((a * w).sin()).sum())))(x).sum())(w)
    _both(run, rtol=1e-9)


# --- a per-sample index under vmap(jvp) ------------------------------------------------------------------------
def _indexed(m, name):
    F = m.nn.functional
    return {
        "getitem": lambda a, i: a[i] ** 2,
        "getitem_2d": lambda a, i: a.reshape(2, 3)[i % 2, i % 3].exp(),
        "gather": lambda a, i: m.gather(a.sin(), 0, i),
        "index_select": lambda a, i: a.index_select(0, i) * a.sum(),
        "take_along_dim": lambda a, i: m.take_along_dim(a.cos(), i),
        "embedding": lambda a, i: F.embedding(i % 3, a.reshape(3, 2)).tanh(),
        "cross_entropy": lambda a, i: F.cross_entropy(a.reshape(2, 3), i[:2] % 3),
        "nll_loss": lambda a, i: F.nll_loss(a.reshape(2, 3).log_softmax(1), i[:2] % 3),
        "index_add": lambda a, i: a.index_add(0, i, a[:4] * 2),
        "scatter_add": lambda a, i: a.scatter_add(0, i, a[:4].exp()),
        "setitem": lambda a, i: _setitem(a, i),
    }[name]


def _setitem(a, i):
    b = a * 1
    b[i] = a[:4] ** 2
    return b


@pytest.mark.parametrize("name", ["getitem", "getitem_2d", "gather", "index_select", "take_along_dim", "embedding",
                                  "cross_entropy", "nll_loss", "index_add", "scatter_add", "setitem"])
def test_per_sample_index_under_vmap_jvp(name):
    xs, ts = RNG.standard_normal((3, 6)), RNG.standard_normal((3, 6))
    ix = np.array([[0, 5, 2, 2], [1, 1, 3, 4], [5, 4, 0, 3]])

    def run(m):
        F, f = m.func, _indexed(m, name)
        x, t, i = m.tensor(xs), m.tensor(ts), m.tensor(ix)
        inside = F.vmap(lambda a, v, k: F.jvp(lambda b: f(b, k), (a,), (v,)))(x, t, i)
        if m is torch and name == "setitem":     # (torch's vmap(jacfwd) fails there: its per-sample loop)
            jac = m.stack([F.jacfwd(f)(x[k], i[k]) for k in range(3)])
        else:
            jac = F.vmap(F.jacfwd(f))(x, i)
        return inside, jac
    _both(run)


@pytest.mark.parametrize("name", ["getitem", "getitem_2d", "gather", "index_select", "take_along_dim", "embedding",
                                  "index_add", "scatter_add"])
def test_index_of_an_outer_vmap_under_nested_vmap_jvp(name):
    """vmap(vmap(jvp)) with an index batched only at the outer vmap (jacfwd under vmap is this): each outer
    sample's own index (it was the first sample's, silently)."""
    xs = RNG.standard_normal((3, 6))
    ix = np.array([[0, 5, 2, 2], [1, 1, 3, 4], [5, 4, 0, 3]])

    def run(m):
        F, f = m.func, _indexed(m, name)
        x, i, basis = m.tensor(xs), m.tensor(ix), m.eye(6, dtype=m.float64)
        return F.vmap(lambda a, k: F.vmap(lambda v: F.jvp(lambda b: f(b, k), (a,), (v,))[1])(basis))(x, i)
    _both(run)


# --- jacrev's chunk_size: the rows by a vmap over basis cotangents -------------------------------------------------
def test_jacrev_chunk_sizes_as_torch():
    w = RNG.standard_normal((5, 5))

    def run(m):
        F, W = m.func, m.tensor(w)
        f = lambda x: ((x @ W).tanh(), x.sin().sum() * x[:3])  # noqa: E731
        x = m.tensor(np.append(A34[0], 0.5))
        out = [F.jacrev(f, chunk_size=c)(x) for c in (None, 1, 2, 3, 100)]
        out += [F.vmap(F.jacrev(f, chunk_size=c))(m.stack([x, x.cos()])) for c in (None, 1, 4)]
        out.append(F.jacrev(lambda a, b: (a * b).exp(), argnums=(0, 1), chunk_size=2)(x, x.flip(0)))
        out.append(F.jacrev(lambda a: (a.exp(), a.sum()), has_aux=True, chunk_size=3)(x))
        out.append(F.jacfwd(F.jacrev(lambda a: (a ** 3).sum() * a, chunk_size=2))(x))
        out.append(F.jacrev(F.jacrev(lambda a: (a ** 3).prod(), chunk_size=2), chunk_size=3)(x))
        return out
    _both(run)


def test_jacrev_rows_batched_without_a_per_sample_loop():
    """All rows at once (chunk_size=None, torch's default) is one backward batched by vmap: no op of an MLP's
    backward falls back to running sample by sample (no warning)."""
    x, w1, w2 = tapegrad.tensor(A34), tapegrad.tensor(RNG.standard_normal((4, 8))), \
        tapegrad.tensor(RNG.standard_normal((8, 3)))
    F = tapegrad.nn.functional
    f = lambda a: F.log_softmax(F.gelu(F.layer_norm(a @ w1, (8,))) @ w2, -1)  # noqa: E731
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = tapegrad.func.jacrev(f)(x)
    _same(got, tapegrad.func.jacrev(f, chunk_size=1)(x))



def _grad_ops():
    from ops.op_db import OPS
    return [pytest.param(s, id=s.name) for s in OPS if s.grad]


@pytest.mark.parametrize("spec", _grad_ops())
def test_jacrev_all_rows_at_once_is_the_row_loop(spec):
    """Every differentiable op of the op table: the Jacobian by one vmapped backward (chunk_size=None) equals the
    one by a backward per row (chunk_size=1), so that no backward formula reads a batched cotangent's data."""
    sample = spec.samples(np.random.default_rng(0))[0]
    pos = [i for i, a in enumerate(sample.args) if isinstance(a, np.ndarray) and a.dtype.kind == "f"]
    if not pos:
        pytest.skip("no floating tensor argument")
    i0 = pos[0]
    rest = [tapegrad.tensor(a) if isinstance(a, np.ndarray) else a for a in sample.args]

    def f(x):
        args = list(rest)
        args[i0] = x
        res = spec.fn(tapegrad, *args, **sample.kwargs)
        flat = list(res) if isinstance(res, (tuple, list)) else [res]
        return tuple(o for o in flat if isinstance(o, tapegrad.Tensor) and o.dtype.is_floating_point)
    x = tapegrad.tensor(sample.args[i0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tapegrad.manual_seed(0)
        try:
            want = tapegrad.func.jacrev(f, chunk_size=1)(x)
        except Exception as e:  # noqa: BLE001 - no floating output, an integer-valued op...
            pytest.skip(f"no Jacobian eagerly: {type(e).__name__}")
        tapegrad.manual_seed(0)
        got = tapegrad.func.jacrev(f)(x)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=max(spec.rtol, 1e-7) * 10,
                                   atol=max(spec.atol, 1e-9) * 10, equal_nan=True)


# --- other compositions under vmap ------------------------------------------------------------------------------
def test_vmap_of_linearize_is_the_per_sample_loop():
    """torch's vmap refuses linearize (no batching rule for _make_dual); tapegrad records it on the batched arrays
    (it once gave zeros): the per-sample loop of torch.func.linearize is the reference."""
    f = lambda m: (lambda a: ((a.sin() * a.cumsum(0)).exp(), a.norm()))  # noqa: E731
    x, t = RNG.standard_normal((4, 6)), RNG.standard_normal((4, 6))
    F = tapegrad.func
    got = F.vmap(lambda a, v: F.linearize(f(tapegrad), a)[1](v))(tapegrad.tensor(x), tapegrad.tensor(t))
    val = F.vmap(lambda a: F.linearize(f(tapegrad), a)[0])(tapegrad.tensor(x))
    want = _quiet(lambda: [torch.func.linearize(f(torch), torch.tensor(x[i])) for i in range(4)])
    for k in range(2):
        np.testing.assert_allclose(got[k].numpy(), np.stack([w[1](torch.tensor(t[i]))[k].numpy()
                                                              for i, w in enumerate(want)]), rtol=1e-10)
        np.testing.assert_allclose(val[k].numpy(), np.stack([w[0][k].numpy() for w in want]), rtol=1e-12)
        assert not got[k].requires_grad


def test_compositions_with_vmap():
    x, t, y = RNG.standard_normal((4, 6)), RNG.standard_normal((4, 6)), RNG.standard_normal((6, 4))

    def run(m):
        F = m.func
        X, T, Y = m.tensor(x), m.tensor(t), m.tensor(y)
        f = lambda a: (a.sin() * a.cumsum(0)).exp()  # noqa: E731
        s = lambda a: (a.sin() * a.cumsum(0)).sum()  # noqa: E731
        return (F.vmap(lambda a, v: F.vjp(f, a)[1](v))(X, T),
                F.jacrev(F.vmap(f))(X), F.jacfwd(F.vmap(f))(X),
                F.vmap(F.grad(lambda a: (a.unfold(0, 2, 1) ** 2).sum()), in_dims=1)(Y),
                F.vmap(lambda a, v: F.jvp(lambda b: b.unfold(0, 2, 1).exp(), (a,), (v,)), in_dims=1)(Y, Y.cos()),
                F.vmap(F.hessian(lambda a, b: (a * b.exp()).sum() * a.sum(), argnums=1))(X, T),
                F.vmap(F.jacfwd(lambda a: (a.sin(), a.sum()), has_aux=True))(X),
                F.grad(lambda w: F.vmap(lambda a: F.jvp(lambda b: (b * w).sin(), (a,), (a.cos(),))[1])(X).sum())(T[0]),
                F.vmap(lambda a, v: F.jvp(lambda b: F.jvp(f, (b,), (v,))[1], (a,), (v,)))(X, T),
                F.vmap(F.vmap(lambda a, v: F.jvp(f, (a,), (v,))[1], in_dims=(0, None)), in_dims=(None, 0))(X, T),
                F.vmap(F.grad(lambda a: F.jvp(s, (a,), (a.cos(),))[1]))(X),
                F.vmap(F.jacrev(lambda a: F.jvp(f, (a,), (a.cos(),))[1]))(X),
                F.vmap(lambda a, v: F.jvp(lambda b: F.vjp(f, b)[1](v)[0], (a,), (v,)))(X, T))
    _both(run, rtol=1e-9)


def test_vmap_jvp_randomness():
    x, t = tapegrad.tensor(RNG.standard_normal((4, 6))), tapegrad.tensor(RNG.standard_normal((4, 6)))
    F = tapegrad.func

    def g(randomness):
        return F.vmap(lambda a, v: F.jvp(lambda b: b * tapegrad.rand(6), (a,), (v,))[1], randomness=randomness)(x, t)
    same, different = (g("same") / t).numpy(), (g("different") / t).numpy()
    assert np.allclose(same, same[0]) and not np.allclose(different, different[0])
    got = _err(lambda: g("error"))
    want = _err(lambda: torch.func.vmap(lambda a, v: torch.func.jvp(lambda b: b * torch.rand(6), (a,), (v,))[1])(
        torch.tensor(x.numpy()), torch.tensor(t.numpy())))
    assert want is not None and got == want


def test_public_dual_level_inside_vmap_still_refuses_what_it_cannot_batch():
    """A forward_ad.dual_level entered inside vmap stays above it (func.jvp's goes below): a per-sample index and
    a reverse transform there are clear errors naming the fix, never sample 0's values."""
    import tapegrad.autograd.forward_ad as fwAD
    x, i = tapegrad.tensor(RNG.standard_normal((3, 4))), tapegrad.tensor([[0, 1], [2, 3], [1, 1]])

    def index(a, k):
        with fwAD.dual_level():
            return fwAD.unpack_dual(tapegrad.gather(fwAD.make_dual(a, a.cos()).sin(), 0, k)).tangent

    def reverse(a):
        with fwAD.dual_level():
            d = fwAD.make_dual(a, a.cos())
            return fwAD.unpack_dual(tapegrad.func.grad(lambda b: b.sin().sum())(d)).tangent
    with pytest.raises(RuntimeError, match=r"gather with a batched index .*forward_ad\.dual_level.* use func\.jvp"):
        _quiet(lambda: tapegrad.func.vmap(index)(x, i))
    with pytest.raises(RuntimeError, match=r"reverse-mode transform called inside a forward AD level"):
        tapegrad.func.vmap(reverse)(x)


def test_tangent_rules_under_a_public_dual_level_inside_vmap_are_per_sample():
    """A natural tangent rule that sees logical tensors (a forward_ad level inside vmap) computes with ops, not
    with sample 0's arrays: logcumsumexp's stabilising max, sinc's zero mask."""
    import tapegrad.autograd.forward_ad as fwAD
    x = np.array([[0.1, -0.3, 0.2, 0.5], [800.0, 790.0, 805.0, 801.0], [0.0, 1.0, 0.0, -2.0]])
    t = RNG.standard_normal((3, 4))

    def f(a, v):
        with fwAD.dual_level():
            d = fwAD.make_dual(a, v)
            return (fwAD.unpack_dual(tapegrad.logcumsumexp(d, 0)).tangent,
                    fwAD.unpack_dual(tapegrad.sinc(d)).tangent)
    got = _quiet(lambda: tapegrad.func.vmap(f)(tapegrad.tensor(x), tapegrad.tensor(t)))
    want = [f(tapegrad.tensor(x[i]), tapegrad.tensor(t[i])) for i in range(3)]
    for k in range(2):
        np.testing.assert_allclose(got[k].numpy(), np.stack([w[k].numpy() for w in want]), rtol=1e-12)
    assert np.isfinite(got[0].numpy()).all()


@pytest.mark.parametrize("chunk", [None, 1, 2])
def test_jacrev_results_are_writable_new_tensors(chunk):
    """Rows of an input the output does not use, or of an output that uses no input: zeros in memory of their own
    (written in place without error), as torch's."""
    F = tapegrad.func
    x = tapegrad.tensor(A34[0])
    ja, jb = F.jacrev(lambda a, b: a * 2, argnums=(0, 1), chunk_size=chunk)(x, x)
    jc = F.jacrev(lambda a: tapegrad.ones(4), chunk_size=chunk)(x)
    for j in (ja, jb, jc):
        j.add_(1)
    assert jb.eq(1).all() and jc.eq(1).all()


def test_as_strided_jacobians_under_vmap_batch_without_a_loop():
    """as_strided's gradient op has a batching rule: its Jacobian rows, all at once, and vmap's Hessians run no
    per-sample fallback (no warning), with torch's values."""
    def run(m):
        F = m.func
        f = lambda t: t.as_strided((3, 2), (1, 1)).sin()  # noqa: E731
        x = m.tensor(X)
        return F.jacrev(f)(x[0]), F.vmap(F.hessian(lambda t: f(t).sum()), in_dims=1)(x), \
            F.vmap(F.jacrev(F.jacrev(lambda t: (f(t) ** 2).sum())), in_dims=1)(x)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = run(tapegrad)
    _same(got, _quiet(lambda: run(torch)))


def test_jacrev_rows_quiet_about_its_own_fallbacks():
    """A backward op without a batching rule runs sample by sample inside jacrev's batched rows: the right numbers,
    no warning (jacrev's own business), and a vmap of the caller's still warns for that op."""
    from tapegrad.func import _vmap
    x, i = tapegrad.tensor(A34[0]), tapegrad.tensor([0, 2, 2, 3])
    _vmap._warned.discard("tapegrad.ops.index.gathers.Scatter")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = tapegrad.func.jacrev(lambda a: tapegrad.gather(a, 0, i).sin())(x)
    _same(got, torch.func.jacrev(lambda a: torch.gather(a, 0, torch.tensor([0, 2, 2, 3])).sin())(
        torch.tensor(A34[0])))
    with pytest.warns(UserWarning, match="batching rule for tapegrad.ops.index.gathers.Scatter"):
        tapegrad.func.vmap(lambda g: tapegrad.zeros(4, dtype=tapegrad.float64).scatter(0, i, g))(
            tapegrad.tensor(A34))
