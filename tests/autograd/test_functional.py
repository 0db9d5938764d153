"""autograd.functional against torch 2.13: vjp, jvp, jacobian, hessian, vhp, hvp on the same functions and
inputs — values, the nesting of the results (tuple / list / Tensor), create_graph (the results stay
differentiable), strict mode's errors, vectorize, the strategies — and torch's errors word for word."""

from __future__ import annotations

import numpy as np
import pytest

import tapegrad
import tapegrad.autograd.functional  # noqa: F401 - makes m.autograd.functional resolvable


def _err(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the class and message are what is compared
        return type(e).__name__, str(e).replace("tapegrad", "torch")
    return None


def _same(a, b, rtol=1e-10):
    """The same nesting (tuple/list/Tensor) and the same values."""
    if isinstance(b, (tuple, list)):
        assert type(a) is type(b), f"{type(a).__name__} != torch's {type(b).__name__}"
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _same(x, y, rtol)
        return
    assert not isinstance(a, (tuple, list)), f"{type(a).__name__} != torch's Tensor"
    assert tuple(a.shape) == tuple(b.shape)
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=rtol, atol=1e-12)


def _requires(a):
    if isinstance(a, (tuple, list)):
        return [_requires(x) for x in a]
    return a.requires_grad


# functions of one input and of two; one output and two
def f_scalar(m, x):
    return (x.exp() * x.sin()).sum()


def f_vec(m, x):
    return x.tanh() * x[0]


def f_two_in(m, x, y):
    return (x.unsqueeze(1) * y).sin()


def f_two_out(m, x, y):
    return x * y.sum(), (x ** 2).sum() + y[1]


def f_scalar_two(m, x, y):
    return (x.exp() * y[:3]).sum() + (y ** 3).sum()


def _inputs(m, n):
    rng = np.random.default_rng(n)
    xs = (m.tensor(rng.standard_normal(3)), m.tensor(rng.standard_normal(4)))
    return xs[0] if n == 1 else xs


def _vec(m, shapes, seed=5):
    rng = np.random.default_rng(seed)
    vs = tuple(m.tensor(rng.standard_normal(s)) for s in shapes)
    return vs if len(vs) > 1 else vs[0]


CASES = [("scalar", f_scalar, 1), ("vec", f_vec, 1), ("two_in", f_two_in, 2), ("two_out", f_two_out, 2)]


def _call(m, fn, f, n, *args, **kw):
    return fn(lambda *a: f(m, *a), _inputs(m, n), *args, **kw)


@pytest.mark.parametrize("name,f,n", CASES)
@pytest.mark.parametrize("create_graph", [False, True])
def test_vjp_and_jvp_vs_torch(torch, name, f, n, create_graph):
    F = {m: m.autograd.functional for m in (tapegrad, torch)}
    outs = {m: f(m, *((_inputs(m, n),) if n == 1 else _inputs(m, n))) for m in (tapegrad, torch)}
    out_shapes = [tuple(o.shape) for o in (outs[torch] if isinstance(outs[torch], tuple) else (outs[torch],))]
    in_shapes = [(3,)] if n == 1 else [(3,), (4,)]
    res = {}
    for m in (tapegrad, torch):
        v_out = _vec(m, out_shapes)
        v_in = _vec(m, in_shapes, 6)
        res[m] = (_call(m, F[m].vjp, f, n, v_out, create_graph=create_graph),
                  _call(m, F[m].jvp, f, n, v_in, create_graph=create_graph))
    _same(res[tapegrad], res[torch])
    assert _requires(res[tapegrad]) == _requires(res[torch])


@pytest.mark.parametrize("name,f,n", CASES)
@pytest.mark.parametrize("opts", [dict(), dict(vectorize=True), dict(create_graph=True),
                                  dict(vectorize=True, strategy="forward-mode")])
def test_jacobian_vs_torch(torch, name, f, n, opts):
    res = {m: _call(m, m.autograd.functional.jacobian, f, n, **opts) for m in (tapegrad, torch)}
    _same(res[tapegrad], res[torch])
    assert _requires(res[tapegrad]) == _requires(res[torch])


@pytest.mark.parametrize("name,f,n", [("scalar", f_scalar, 1), ("scalar_two", f_scalar_two, 2)])
@pytest.mark.parametrize("opts", [dict(), dict(vectorize=True), dict(create_graph=True),
                                  dict(vectorize=True, outer_jacobian_strategy="forward-mode")])
def test_hessian_vs_torch(torch, name, f, n, opts):
    res = {m: _call(m, m.autograd.functional.hessian, f, n, **opts) for m in (tapegrad, torch)}
    _same(res[tapegrad], res[torch])
    assert _requires(res[tapegrad]) == _requires(res[torch])


@pytest.mark.parametrize("name,f,n", [("scalar", f_scalar, 1), ("scalar_two", f_scalar_two, 2)])
@pytest.mark.parametrize("create_graph", [False, True])
def test_vhp_hvp_vs_torch(torch, name, f, n, create_graph):
    in_shapes = [(3,)] if n == 1 else [(3,), (4,)]
    res = {}
    for m in (tapegrad, torch):
        F = m.autograd.functional
        res[m] = (_call(m, F.vhp, f, n, _vec(m, in_shapes), create_graph=create_graph),
                  _call(m, F.hvp, f, n, _vec(m, in_shapes), create_graph=create_graph))
    _same(res[tapegrad], res[torch])
    assert _requires(res[tapegrad]) == _requires(res[torch])
    # forward-over-reverse (tapegrad's strategy="forward-mode") gives the same H v as reverse-over-reverse
    fwd = _call(tapegrad, tapegrad.autograd.functional.hvp, f, n, _vec(tapegrad, in_shapes),
                create_graph=create_graph, strategy="forward-mode")
    _same(fwd, res[torch][1])
    assert _requires(fwd) == _requires(res[torch][1])


def test_create_graph_results_are_differentiable(torch):
    res = []
    for m in (tapegrad, torch):
        x = m.tensor([0.3, -0.7, 1.1], dtype=m.float64, requires_grad=True)
        F = m.autograd.functional
        jac = F.jacobian(lambda t: (t ** 3).sin(), x, create_graph=True)
        hess = F.hessian(lambda t: (t.exp() * t).sum(), x, create_graph=True)
        _, hv = F.hvp(lambda t: (t ** 4).sum(), x, m.ones(3, dtype=m.float64), create_graph=True)
        g = m.autograd.grad(jac.sum() + hess.sum() + hv.sum(), x)[0]
        res.append(g)
    _same(res[0], res[1])


def test_v_none_and_scalar_cases(torch):
    res = {}
    for m in (tapegrad, torch):
        F = m.autograd.functional
        x = m.tensor([0.5])
        res[m] = (F.vjp(lambda t: (t * 3).sum(), x), F.jvp(lambda t: t.exp(), x), F.hvp(lambda t: (t ** 3).sum(), x),
                  F.vhp(lambda t: (t ** 3).sum(), x), F.jacobian(lambda t: t.sum(), m.tensor(2.0)),
                  F.hessian(lambda t: t ** 3, m.tensor(2.0)))
    _same(res[tapegrad], res[torch])


def test_independent_outputs_give_zeros(torch):
    res = {}
    for m in (tapegrad, torch):
        F = m.autograd.functional
        xs = (m.tensor([1.0, 2.0]), m.tensor([3.0]))
        res[m] = (F.jacobian(lambda a, b: a * 2, xs), F.vjp(lambda a, b: a.sum(), xs),
                  F.hessian(lambda a, b: (a ** 2).sum(), xs), F.jvp(lambda a, b: a * 2, xs, (m.ones(2), m.ones(1))))
    _same(res[tapegrad], res[torch])


STRICT = [
    ("vjp_independent", lambda F, m: F.vjp(lambda a, b: a.sum(), (m.ones(2), m.ones(2)), strict=True)),
    ("vjp_constant", lambda F, m: F.vjp(lambda a: m.ones(2), m.ones(2), m.ones(2), strict=True)),
    ("jvp_independent", lambda F, m: F.jvp(lambda a, b: a * 2, (m.ones(2), m.ones(2)), (m.ones(2), m.ones(2)),
                                           strict=True)),
    ("jacobian_independent", lambda F, m: F.jacobian(lambda a, b: a * 2, (m.ones(2), m.ones(2)), strict=True)),
    ("jacobian_linear_cg", lambda F, m: F.jacobian(lambda a: a * 2, m.ones(2), strict=True, create_graph=True)),
    ("jacobian_vectorize", lambda F, m: F.jacobian(lambda a: a * 2, m.ones(2), strict=True, vectorize=True)),
    ("jacobian_fwd_strict", lambda F, m: F.jacobian(lambda a: a * 2, m.ones(2), strict=True,
                                                    strategy="forward-mode", vectorize=True)),
    ("hessian_linear", lambda F, m: F.hessian(lambda a: a.sum() * 2, m.ones(2), strict=True)),
    ("hvp_linear", lambda F, m: F.hvp(lambda a: a.sum(), m.ones(2), m.ones(2), strict=True)),
    ("vhp_linear", lambda F, m: F.vhp(lambda a: a.sum(), m.ones(2), m.ones(2), strict=True)),
    ("vhp_quadratic_independent", lambda F, m: F.vhp(lambda a, b: (a ** 2).sum(), (m.ones(2), m.ones(2)),
                                                     (m.ones(2), m.ones(2)), strict=True)),
]


@pytest.mark.parametrize("name,fn", STRICT, ids=[s[0] for s in STRICT])
def test_strict_errors_as_torch(torch, name, fn):
    a = _err(lambda: fn(tapegrad.autograd.functional, tapegrad))
    b = _err(lambda: fn(torch.autograd.functional, torch))
    assert a == b


ERRORS = [
    ("not_tensor", lambda F, m: F.vjp(lambda a: a, 3.0)),
    ("not_tensor_in_tuple", lambda F, m: F.jacobian(lambda a, b: a, (m.ones(1), 2))),
    ("output_not_tensor", lambda F, m: F.vjp(lambda a: 3.0, m.ones(1))),
    ("v_none_vjp", lambda F, m: F.vjp(lambda a: a, m.ones(2))),
    ("v_none_jvp", lambda F, m: F.jvp(lambda a: a, m.ones(2))),
    ("v_none_hvp", lambda F, m: F.hvp(lambda a: a.sum(), m.ones(2))),
    ("v_size", lambda F, m: F.vjp(lambda a: a, m.ones(2), m.ones(3))),
    ("v_size_tuple", lambda F, m: F.jvp(lambda a, b: a, (m.ones(2), m.ones(2)), (m.ones(2), m.ones(3)))),
    ("v_length", lambda F, m: F.vjp(lambda a, b: (a, b), (m.ones(2), m.ones(2)), (m.ones(2),))),
    ("v_single", lambda F, m: F.jvp(lambda a: a, m.ones(2), (m.ones(2), m.ones(2)))),
    ("hessian_vector_output", lambda F, m: F.hessian(lambda a: a * 2, m.ones(2))),
    ("hessian_tuple_output", lambda F, m: F.hessian(lambda a: (a.sum(),), m.ones(2))),
    ("hvp_vector_output", lambda F, m: F.hvp(lambda a: a * 2, m.ones(2), m.ones(2))),
    ("vhp_tuple_output", lambda F, m: F.vhp(lambda a: (a.sum(), a.sum()), m.ones(2), m.ones(2))),
    ("strategy", lambda F, m: F.jacobian(lambda a: a, m.ones(2), strategy="sideways")),
    ("outer_strategy", lambda F, m: F.hessian(lambda a: a.sum(), m.ones(2), outer_jacobian_strategy="up")),
    ("forward_needs_vectorize", lambda F, m: F.jacobian(lambda a: a, m.ones(2), strategy="forward-mode")),
    ("forward_create_graph", lambda F, m: F.jacobian(lambda a: a, m.ones(2), strategy="forward-mode",
                                                     create_graph=True)),
]


@pytest.mark.parametrize("name,fn", ERRORS, ids=[s[0] for s in ERRORS])
def test_errors_as_torch(torch, name, fn):
    a = _err(lambda: fn(tapegrad.autograd.functional, tapegrad))
    b = _err(lambda: fn(torch.autograd.functional, torch))
    assert a is not None and a == b


def test_inputs_keep_their_state(torch):
    """The caller's inputs are not changed (no requires_grad set on them, no .grad)."""
    x = tapegrad.tensor([1.0, 2.0])
    tapegrad.autograd.functional.hessian(lambda t: (t ** 3).sum(), x)
    tapegrad.autograd.functional.jacobian(lambda t: t * 2, x, vectorize=True, strategy="forward-mode")
    assert not x.requires_grad and x.grad is None
