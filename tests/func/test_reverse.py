"""tapegrad.func's reverse-mode transforms against torch.func 2.13: grad, grad_and_value, vjp, jacrev — values,
pytree structures, argnums, has_aux, errors word for word, whether results carry a graph — and their
compositions: grad of grad, jacrev of jacrev, jacfwd of jacrev, jacrev of jacfwd, under and over vmap."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="torch is the oracle of these tests")

import tapegrad  # noqa: E402
import tapegrad.func  # noqa: E402,F401
from func.test_forward import _err  # noqa: E402,F401  (also used by test_vmap, test_module_call)


def _same(a, b, rtol=1e-10):
    """The same pytree structure and values."""
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
    assert tuple(a.shape) == tuple(b.shape)
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=rtol, atol=1e-12)


def _both(arrays, requires_grad=False):
    return ([tapegrad.tensor(a, requires_grad=requires_grad) for a in arrays],
            [torch.tensor(a, requires_grad=requires_grad) for a in arrays])


RNG = np.random.default_rng(0)
A, B, W = RNG.standard_normal(4), RNG.standard_normal(4), RNG.standard_normal((3, 4))


def f_scalar(m):
    return lambda x, y: (x.sin() * y).sum() + (x ** 2).sum()


# --- grad, grad_and_value ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("argnums", [0, 1, -1, (0, 1), (1, 0)])
def test_grad_argnums(argnums):
    (x, y), (xt, yt) = _both([A, B])
    _same(tapegrad.func.grad(f_scalar(tapegrad), argnums)(x, y), torch.func.grad(f_scalar(torch), argnums)(xt, yt))


def test_grad_pytree_and_kwargs():
    (x, y), (xt, yt) = _both([A, B])

    def f(d, scale=1.0):
        return ((d["a"] * d["b"][0]).exp() * scale).sum()
    got = tapegrad.func.grad(f)({"a": x, "b": (y,)}, scale=2.0)
    want = torch.func.grad(f)({"a": xt, "b": (yt,)}, scale=2.0)
    _same(got, want)


def test_grad_has_aux_and_grad_and_value():
    (x,), (xt,) = _both([A])

    def f(x):
        return (x ** 3).sum(), {"sq": x ** 2}
    _same(tapegrad.func.grad(f, has_aux=True)(x), torch.func.grad(f, has_aux=True)(xt))
    _same(tapegrad.func.grad_and_value(f, has_aux=True)(x), torch.func.grad_and_value(f, has_aux=True)(xt))
    _same(tapegrad.func.grad_and_value(lambda x: x.tanh().sum())(x),
          torch.func.grad_and_value(lambda x: x.tanh().sum())(xt))


def test_grad_graph_state():
    """No graph leaks out for inputs that do not require grad; a graph to anything outside that requires grad
    (an input, a closed-over parameter) is kept, as torch's."""
    (x,), (xt,) = _both([A])
    (xr, w), (xrt, wt) = _both([A, W], requires_grad=True)
    for tg_fn, t_fn in [(lambda: tapegrad.func.grad(lambda v: (v ** 3).sum())(x),
                         lambda: torch.func.grad(lambda v: (v ** 3).sum())(xt)),
                        (lambda: tapegrad.func.grad(lambda v: (v ** 3).sum())(xr),
                         lambda: torch.func.grad(lambda v: (v ** 3).sum())(xrt)),
                        (lambda: tapegrad.func.grad(lambda v: (w @ v).tanh().sum())(x),
                         lambda: torch.func.grad(lambda v: (wt @ v).tanh().sum())(xt))]:
        a, b = tg_fn(), t_fn()
        assert a.requires_grad == b.requires_grad
        _same(a, b)
    g = tapegrad.func.grad(lambda v: (v ** 3).sum())(xr).sum()
    gt = torch.func.grad(lambda v: (v ** 3).sum())(xrt).sum()
    _same(tapegrad.autograd.grad(g, xr)[0], torch.autograd.grad(gt, xrt)[0])


@pytest.mark.parametrize("case", ["non-scalar", "non-tensor", "aux-not-tuple", "argnum-range", "argnum-type",
                                  "argnums-empty", "argnums-dup"])
def test_grad_errors(case):
    def run(m):
        x = m.tensor(A)
        f = {"non-scalar": lambda: m.func.grad(lambda v: v * 2)(x),
             "non-tensor": lambda: m.func.grad(lambda v: 1.0)(x),
             "aux-not-tuple": lambda: m.func.grad(lambda v: v.sum(), has_aux=True)(x),
             "argnum-range": lambda: m.func.grad(lambda v: v.sum(), argnums=3)(x),
             "argnum-type": lambda: m.func.grad(lambda v: v.sum(), argnums=0.5)(x),
             "argnums-empty": lambda: m.func.grad(lambda v: v.sum(), argnums=())(x),
             "argnums-dup": lambda: m.func.grad(lambda v, w: v.sum(), argnums=(0, 0))(x, x)}[case]
        return _err(f)
    got, want = run(tapegrad), run(torch)
    assert want is not None and got == want


# --- vjp ------------------------------------------------------------------------------------------------------------
def test_vjp_values_structure_and_aux():
    (x, y, v), (xt, yt, vt) = _both([A, B, RNG.standard_normal(4)])

    def f(x, y):
        return {"p": x * y, "q": (x.sin(),)}
    out, fn = tapegrad.func.vjp(f, x, y)
    outt, fnt = torch.func.vjp(f, xt, yt)
    _same(out, outt)
    _same(fn({"p": v, "q": (v * 2,)}), fnt({"p": vt, "q": (vt * 2,)}))
    o, fn, aux = tapegrad.func.vjp(lambda x: (x.exp(), x.cos()), x, has_aux=True)
    ot, fnt, auxt = torch.func.vjp(lambda x: (x.exp(), x.cos()), xt, has_aux=True)
    _same((o, aux, fn(v)), (ot, auxt, fnt(vt)))


def test_vjp_errors():
    def run(m, case):
        x = m.tensor(A)
        _, fn = m.func.vjp(lambda v: (v * 2, v), x)
        return _err({"structure": lambda: fn(x),
                     "no-output": lambda: m.func.vjp(lambda v: None, x),
                     "int-output": lambda: m.func.vjp(lambda v: (v > 0).long(), x),
                     "aux": lambda: m.func.vjp(lambda v: v, x, has_aux=True)}[case])
    for case in ("structure", "no-output", "int-output", "aux"):
        got, want = run(tapegrad, case), run(torch, case)
        assert want is not None and got is not None and got[0] == want[0], (case, got, want)
        if case != "structure":      # (the TreeSpec repr differs in layout)
            assert got == want, (case, got, want)


# --- jacrev ---------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("argnums", [0, (0, 1)])
def test_jacrev(argnums):
    (x, y), (xt, yt) = _both([A, B])

    def f(m):
        return lambda x, y: (x.sin() * y, (m.tensor(W) @ x).tanh())
    _same(tapegrad.func.jacrev(f(tapegrad), argnums)(x, y), torch.func.jacrev(f(torch), argnums)(xt, yt))


def test_jacrev_aux_chunk_and_errors():
    (x,), (xt,) = _both([A])
    _same(tapegrad.func.jacrev(lambda v: (v.exp(), v.sum()), has_aux=True, chunk_size=2)(x),
          torch.func.jacrev(lambda v: (v.exp(), v.sum()), has_aux=True, chunk_size=2)(xt))
    got = _err(lambda: tapegrad.func.jacrev(lambda v: v, chunk_size=0))
    want = _err(lambda: torch.func.jacrev(lambda v: v, chunk_size=0))
    assert got == want
    z = np.array([1 + 2j, 3 - 1j])
    got = _err(lambda: tapegrad.func.jacrev(lambda v: v * 2)(tapegrad.tensor(z)))
    want = _err(lambda: torch.func.jacrev(lambda v: v * 2)(torch.tensor(z)))
    assert got == want


# --- compositions ----------------------------------------------------------------------------------------------------
def _f(x):
    return x.sin() * x.sum() + x.exp().prod()


@pytest.mark.parametrize("name", ["grad(grad)", "jacrev(jacrev)", "jacfwd(jacrev)", "jacrev(jacfwd)", "hessian",
                                  "vmap(grad)", "vmap(jacrev)", "vmap(hessian)", "grad(vmap)", "vmap(vmap(grad))"])
def test_compositions(name):
    def run(m):
        F = m.func
        x = m.tensor(np.stack([A, B, A * 0.5]))
        g = lambda v: _f(v).sum()  # noqa: E731
        return {"grad(grad)": lambda: F.grad(lambda v: F.grad(g)(v).sum())(x[0]),
                "jacrev(jacrev)": lambda: F.jacrev(F.jacrev(_f))(x[0]),
                "jacfwd(jacrev)": lambda: F.jacfwd(F.jacrev(_f))(x[0]),
                "jacrev(jacfwd)": lambda: F.jacrev(F.jacfwd(_f))(x[0]),
                "hessian": lambda: F.hessian(g)(x[0]),
                "vmap(grad)": lambda: F.vmap(F.grad(g))(x),
                "vmap(jacrev)": lambda: F.vmap(F.jacrev(_f))(x),
                "vmap(hessian)": lambda: F.vmap(F.hessian(g))(x),
                "grad(vmap)": lambda: F.grad(lambda v: F.vmap(g)(v).sum())(x),
                "vmap(vmap(grad))": lambda: F.vmap(F.vmap(F.grad(lambda s: s.sin() * s)))(x)}[name]()
    _same(run(tapegrad), run(torch), rtol=1e-9)


def test_reverse_inside_forward_inside_vmap():
    """vmap(jacfwd(jacrev(f))): the dual level goes below the vmap, the backward runs on the batched arrays."""
    def run(m):
        F = m.func
        return F.vmap(F.jacfwd(F.jacrev(_f)))(m.tensor(np.stack([A, B])))
    _same(run(tapegrad), run(torch), rtol=1e-9)


def test_vmap_of_vjp_fn_gives_every_row():
    """``vmap(vjp_fn)(basis)`` with ``vjp`` taken outside the vmap (the Jacobian by rows): each cotangent its own
    backward (they all came out as the first row), and the graph kept where the primal requires grad."""
    def f(lib):
        return lambda x: lib.nn.functional.linear(x, lib.tensor(W), lib.tensor(W[:, 0])).tanh() ** 3

    for rg in (False, True):
        (a,), (b,) = _both([A], requires_grad=rg)
        basis = np.eye(3)
        _, fa = tapegrad.func.vjp(f(tapegrad), a)
        _, fb = torch.func.vjp(f(torch), b)
        ja, = tapegrad.func.vmap(fa)(tapegrad.tensor(basis))
        jb, = torch.func.vmap(fb)(torch.tensor(basis))
        _same(ja, jb)
        assert ja.requires_grad == jb.requires_grad == rg
        if rg:
            ga, = tapegrad.autograd.grad(ja.sum(), a)
            gb, = torch.autograd.grad(jb.sum(), b)
            _same(ga, gb)


def test_vmap_of_vjp_fn_under_vmap():
    """The NTK's shape: ``vjp`` taken under a vmap over inputs, its ``vjp_fn`` mapped over basis cotangents by a
    vmap entered after it (and composed with jvp), as torch.func computes it."""
    def ntk(lib):
        w = lib.tensor(W)

        def per_input(x):
            out, vjp_fn = lib.func.vjp(lambda w: (w @ x).sin(), w)

            def row(v):
                g, = vjp_fn(v)
                return lib.func.jvp(lambda w: (w @ x).sin(), (w,), (g,))[1]
            return lib.func.vmap(row)(lib.eye(3, dtype=lib.float64))
        return lib.func.vmap(per_input)(lib.tensor(np.stack([A, B])))

    _same(ntk(tapegrad), ntk(torch))
