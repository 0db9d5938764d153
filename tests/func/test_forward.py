"""tapegrad.func's forward-mode transforms against torch.func 2.13: jvp, jacfwd, linearize, hessian — values,
pytree structures, has_aux, argnums, strict, randomness, errors word for word — and their compositions: jvp of
jvp, jacfwd of jacfwd, hessian = jacfwd(jacrev), forward-over-reverse hvp = reverse-over-reverse."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tapegrad
import tapegrad.func  # noqa: F401 - makes m.func resolvable


def _err(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the class and message are what is compared
        return type(e).__name__, str(e).replace("tapegrad", "torch")
    return None


def _same(a, b, rtol=1e-10):
    """The same pytree structure and values."""
    if isinstance(b, dict):
        assert type(a) is type(b) and list(a) == list(b)
        for k in b:
            _same(a[k], b[k], rtol)
        return
    if isinstance(b, (tuple, list)):
        assert type(a) is type(b), f"{type(a).__name__} != torch's {type(b).__name__}"
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _same(x, y, rtol)
        return
    assert not isinstance(a, (tuple, list, dict)), f"{type(a).__name__} != torch's Tensor"
    assert tuple(a.shape) == tuple(b.shape), (a.shape, b.shape)
    assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1]
    assert a.requires_grad == b.requires_grad, (a.requires_grad, b.requires_grad)
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=rtol, atol=1e-12)


def _x(m, *shape, seed=0):
    return m.tensor(np.random.default_rng(seed).standard_normal(shape))


def _both(torch, fn, rtol=1e-10):
    a, b = fn(tapegrad), fn(torch)
    _same(a, b, rtol)
    return a


# --- jvp --------------------------------------------------------------------------------------------------------------
def test_jvp_values_and_structures(torch):
    _both(torch, lambda m: m.func.jvp(lambda x: x.sin() * x, (_x(m, 3),), (_x(m, 3, seed=1),)))
    _both(torch, lambda m: m.func.jvp(lambda x, y: (x * y, (x ** 2).sum()), (_x(m, 3), _x(m, 3, seed=2)),
                                      (_x(m, 3, seed=1), _x(m, 3, seed=3))))
    _both(torch, lambda m: m.func.jvp(lambda d: {"u": d["a"].exp(), "v": [d["a"].sum() * d["b"]]},
                                      ({"a": _x(m, 2), "b": _x(m, 1)},), ({"a": _x(m, 2, seed=4), "b": _x(m, 1)},)))
    _both(torch, lambda m: m.func.jvp(lambda x: (x.tanh(), x.sum()), (_x(m, 3),), (_x(m, 3, seed=1),),
                                      has_aux=True))
    _both(torch, lambda m: m.func.jvp(lambda x: x.argmax(), (_x(m, 3),), (_x(m, 3, seed=1),)))   # int: zeros
    _both(torch, lambda m: m.func.jvp(lambda x: _x(m, 2) * 2, (_x(m, 3),), (_x(m, 3, seed=1),)))  # independent


def test_jvp_keeps_the_graph_of_inputs_that_require_grad(torch):
    def run(m):
        x = _x(m, 3).requires_grad_()
        out, t = m.func.jvp(lambda a: (a ** 3).sum(), (x,), (m.ones(3, dtype=m.float64),))
        return m.autograd.grad(t, x)
    _both(torch, run)


def test_nested_jvp(torch):
    def run(m):
        f = lambda x: (x.sin() * x ** 2).sum()
        inner = lambda x: m.func.jvp(f, (x,), (m.ones(3, dtype=m.float64),))[1]
        return m.func.jvp(inner, (_x(m, 3),), (_x(m, 3, seed=1),))
    _both(torch, run)


JVP_ERRORS = [
    ("not_tuple", lambda m: m.func.jvp(lambda a: a, m.ones(2), m.ones(2))),
    ("structure", lambda m: m.func.jvp(lambda a: a, (m.ones(2),), (m.ones(2), m.ones(2)))),
    ("list", lambda m: m.func.jvp(lambda a: a, (m.ones(2),), [m.ones(2)])),
    ("empty", lambda m: m.func.jvp(lambda: m.ones(1), (), ())),
    ("not_tensor_out", lambda m: m.func.jvp(lambda a: 3, (m.ones(2),), (m.ones(2),))),
    ("strict", lambda m: m.func.jvp(lambda a: m.ones(2) * 2, (m.ones(2),), (m.ones(2),), strict=True)),
    ("aux", lambda m: m.func.jvp(lambda a: a * 2, (m.ones(2),), (m.ones(2),), has_aux=True)),
    ("aux_type", lambda m: m.func.jvp(lambda a: (a * 2, 5), (m.ones(2),), (m.ones(2),), has_aux=True)),
    ("size", lambda m: m.func.jvp(lambda a: a * 2, (m.ones(2),), (m.ones(3),))),
    ("primal_type", lambda m: m.func.jvp(lambda a: a, (1.0,), (m.ones(1),))),
]


@pytest.mark.parametrize("name,fn", JVP_ERRORS, ids=[e[0] for e in JVP_ERRORS])
def test_jvp_errors_as_torch(torch, name, fn):
    a, b = _err(lambda: fn(tapegrad)), _err(lambda: fn(torch))
    assert a is not None and a == b


# --- jacfwd -----------------------------------------------------------------------------------------------------------
def _f2(x, y):
    return (x.unsqueeze(1) * y).tanh()


def test_jacfwd_vs_torch(torch):
    _both(torch, lambda m: m.func.jacfwd(lambda x: x.sin() * x[0])(_x(m, 3)))
    _both(torch, lambda m: m.func.jacfwd(_f2)(_x(m, 3), _x(m, 2, seed=1)))
    _both(torch, lambda m: m.func.jacfwd(_f2, argnums=1)(_x(m, 3), _x(m, 2, seed=1)))
    _both(torch, lambda m: m.func.jacfwd(_f2, argnums=(0, 1))(_x(m, 3), _x(m, 2, seed=1)))
    # a negative argnums: torch 2.13 returns zeros (its _replace_args compares the unwrapped -1 with the
    # positions, so the duals never reach f); tapegrad wraps it, as jvp and the error messages do
    j = tapegrad.func.jacfwd(_f2, argnums=-1)(_x(tapegrad, 3), _x(tapegrad, 2, seed=1))
    _same(j, torch.func.jacfwd(_f2, argnums=1)(_x(torch, 3), _x(torch, 2, seed=1)))
    _both(torch, lambda m: m.func.jacfwd(lambda x: {"a": x * 2, "b": (x.sum(), x ** 2)})(_x(m, 2)))
    _both(torch, lambda m: m.func.jacfwd(lambda d: d["p"] * d["q"])({"p": _x(m, 2), "q": _x(m, 2, seed=1)}))
    _both(torch, lambda m: m.func.jacfwd(lambda x: (x.exp(), x.sum()), has_aux=True)(_x(m, 3)))
    _both(torch, lambda m: m.func.jacfwd(lambda x: x.sum())(_x(m, 2, 2)))
    _both(torch, lambda m: m.func.jacfwd(lambda x: x.argmax())(_x(m, 3)))


def test_jacfwd_of_jacfwd_and_of_jacrev_is_the_hessian(torch):
    f = lambda x: (x.sin() * x.exp()).sum() + (x ** 3).prod()
    ref = torch.func.hessian(f)(_x(torch, 3))
    _same(tapegrad.func.jacfwd(tapegrad.func.jacfwd(f))(_x(tapegrad, 3)), ref, rtol=1e-9)
    _same(tapegrad.func.hessian(f)(_x(tapegrad, 3)), ref, rtol=1e-9)


def test_hessian_vs_torch(torch):
    _both(torch, lambda m: m.func.hessian(lambda x: (x ** 3).sum() * x[0])(_x(m, 3)), rtol=1e-9)
    _both(torch, lambda m: m.func.hessian(lambda x, y: (x.unsqueeze(1) * y).sin().sum(), argnums=(0, 1))(
        _x(m, 3), _x(m, 2, seed=1)), rtol=1e-9)
    _both(torch, lambda m: m.func.hessian(lambda x, y: (x * y).exp().sum(), argnums=1)(_x(m, 2), _x(m, 2, seed=1)),
          rtol=1e-9)
    _both(torch, lambda m: m.func.hessian(lambda x: (x ** 2).sum())(_x(m, 2, 2)), rtol=1e-9)


def test_randomness(torch):
    f = lambda m: (lambda x: x * m.rand(3, dtype=m.float64))
    a = _err(lambda: tapegrad.func.jacfwd(f(tapegrad))(_x(tapegrad, 3)))
    b = _err(lambda: torch.func.jacfwd(f(torch))(_x(torch, 3)))
    assert a == b
    assert _err(lambda: tapegrad.func.jacfwd(f(tapegrad), randomness="x")) == \
        _err(lambda: torch.func.jacfwd(f(torch), randomness="x")(_x(torch, 3)))
    g = lambda m: (lambda x: x.sum() * m.rand(3, dtype=m.float64))     # column k: the draw of basis vector k
    for m in (tapegrad, torch):       # "same": every basis vector sees the same random numbers
        j = m.func.jacfwd(g(m), randomness="same")(_x(m, 3)).numpy()
        assert np.allclose(j, j[:, :1])
        j = m.func.jacfwd(g(m), randomness="different")(_x(m, 3)).numpy()
        assert not np.allclose(j, j[:, :1])


JACFWD_ERRORS = [
    ("argnum_range", lambda m: m.func.jacfwd(lambda a: a * 2, argnums=3)(m.ones(2))),
    ("argnums_empty", lambda m: m.func.jacfwd(lambda a: a * 2, argnums=())(m.ones(2))),
    ("argnums_unique", lambda m: m.func.jacfwd(lambda a: a * 2, argnums=(0, 0))(m.ones(2))),
    ("argnums_type", lambda m: m.func.jacfwd(lambda a: a * 2, argnums=1.0)(m.ones(2))),
    ("complex", lambda m: m.func.jacfwd(lambda a: a * 2)(m.tensor([1 + 1j]))),
    ("not_tensor", lambda m: m.func.jacfwd(lambda a: 3)(m.ones(2))),
]


@pytest.mark.parametrize("name,fn", JACFWD_ERRORS, ids=[e[0] for e in JACFWD_ERRORS])
def test_jacfwd_errors_as_torch(torch, name, fn):
    a, b = _err(lambda: fn(tapegrad)), _err(lambda: fn(torch))
    assert a is not None and a == b


# --- linearize --------------------------------------------------------------------------------------------------------
def _linearize(m, f, *primals):
    with warnings.catch_warnings():       # (torch's tracer warns about its constant folding)
        warnings.simplefilter("ignore")
        return m.func.linearize(f, *primals)


def test_linearize_vs_torch(torch):
    def run(m):
        out, fn = _linearize(m, lambda x, y: ((x * y).sin(), x.sum() * y), _x(m, 3), _x(m, 3, seed=1))
        return out, fn(_x(m, 3, seed=2), _x(m, 3, seed=3)), fn(_x(m, 3, seed=4), _x(m, 3, seed=5))
    _both(torch, run)


def test_linearize_runs_the_forward_once():
    calls = []

    def f(x):
        calls.append(1)
        return x.exp()
    out, fn = tapegrad.func.linearize(f, tapegrad.zeros(2))
    for _ in range(3):
        fn(tapegrad.ones(2))
    assert len(calls) == 1 and fn(tapegrad.ones(2)).tolist() == [1.0, 1.0]


LINEARIZE_ERRORS = [
    ("shape", lambda m: _linearize(m, lambda a: a.sin(), m.ones(2))[1](m.ones(3))),
    ("dtype", lambda m: _linearize(m, lambda a: a.sin(), m.ones(2))[1](m.ones(2, dtype=m.float64))),
    ("argspec", lambda m: _linearize(m, lambda a: a.sin(), m.ones(2))[1](m.ones(2), m.ones(2))),
]


@pytest.mark.parametrize("name,fn", LINEARIZE_ERRORS, ids=[e[0] for e in LINEARIZE_ERRORS])
def test_linearize_errors_as_torch(torch, name, fn):
    a, b = _err(lambda: fn(tapegrad)), _err(lambda: fn(torch))
    assert a is not None and a == b


# --- forward-over-reverse ---------------------------------------------------------------------------------------------
def test_forward_over_reverse_hvp_equals_reverse_over_reverse(torch):
    f = lambda x: (x.exp() * x.sin()).sum() + (x ** 2).prod()

    def grad_of(m):
        return lambda x: m.autograd.grad(f(x), x, create_graph=True)[0]

    x, v = _x(tapegrad, 4), _x(tapegrad, 4, seed=1)
    fwd = tapegrad.func.jvp(grad_of(tapegrad), (x.requires_grad_(),), (v,))[1]
    rev = tapegrad.autograd.functional.hvp(f, x.detach(), v)[1]
    ref = torch.autograd.functional.hvp(f, _x(torch, 4), _x(torch, 4, seed=1))[1]
    np.testing.assert_allclose(fwd.detach().numpy(), rev.numpy(), rtol=1e-12)
    np.testing.assert_allclose(fwd.detach().numpy(), ref.numpy(), rtol=1e-10)


# --- jacfwd as one vmap over the basis (as torch.func's) -----------------------------------------------------------
def _mlp_like(m, n=7):
    W = m.linspace(-0.5, 0.5, n * n, dtype=m.float64).reshape(n, n)
    return lambda x: (W @ x).tanh() * x.sin()


@pytest.mark.parametrize("n", [1, 7, 40])
def test_jacfwd_and_hessian_through_vmap_over_the_basis(torch, n):
    def run(m):
        f = _mlp_like(m, n)
        x = m.linspace(-1, 1, n, dtype=m.float64)
        h = lambda v: f(v).sum()  # noqa: E731
        return (m.func.jacfwd(f)(x), m.func.hessian(h)(x), m.func.jacfwd(m.func.jacrev(h))(x),
                m.func.jacfwd(m.func.jacfwd(h))(x))
    with warnings.catch_warnings():
        warnings.simplefilter("error")            # (no op of these falls back to a per-sample loop)
        ours = run(tapegrad)
    _same(ours, run(torch), rtol=1e-9)


def test_jacfwd_forms_as_torch(torch):
    def run(m):
        a, b = m.linspace(-1, 1, 6, dtype=m.float64).reshape(2, 3), m.linspace(0.5, 2, 3, dtype=m.float64)
        f = lambda x, y: ((x * y).sin(), {"s": (x.exp() @ y).sum()})  # noqa: E731
        g = lambda x: (x.cos() * 2, (x.sum(), x.max()))  # noqa: E731
        return (m.func.jacfwd(f, argnums=(0, 1))(a, b), m.func.jacfwd(f, argnums=1)(a, b),
                m.func.jacfwd(g, has_aux=True)(b), m.func.jacfwd(lambda x: x * 2)(m.ones(0, dtype=m.float64)),
                m.func.jacfwd(lambda x: x.argmax() * x)(b))
    _same(run(tapegrad), run(torch))


def test_argmax_argmin_batching_rules_as_torch(torch):
    x = np.random.default_rng(3).standard_normal((4, 3, 5))

    def run(m):
        X, v = m.tensor(x), m.func.vmap
        return (v(lambda a: a.argmax())(X), v(lambda a: a.argmax(1))(X), v(lambda a: a.argmin(0, keepdim=True))(X),
                v(lambda a: m.argmax(a, dim=-1))(X), v(lambda a: a.argmin(), in_dims=1)(X),
                v(lambda a: a.argmin(-1, True), in_dims=2)(X))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ours = run(tapegrad)
    _same(ours, run(torch))


def test_requires_grad_on_a_batched_tensor_is_refused_as_torch(torch):
    """requires_grad_() on a tensor a vmap batches (jacfwd's basis included) raises torch's error; it gave zero
    Jacobians (the physical tensor under the vmap did not follow)."""
    def run(m):
        x = m.linspace(-1, 1, 4, dtype=m.float64)

        def jf(v):
            v = v.requires_grad_(True)
            return m.autograd.functional.jacobian(lambda u: (u ** 3).sum(), v, create_graph=True)
        return [_err(lambda: m.func.jacfwd(jf)(x)), _err(lambda: m.func.vmap(lambda v: v.requires_grad_())(x))]
    ours, theirs = run(tapegrad), run(torch)
    assert ours == theirs and ours[0] is not None and "requires_grad_()" in ours[0][1]
