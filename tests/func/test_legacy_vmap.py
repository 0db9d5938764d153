"""Batched vector-Jacobian products against torch 2.13: ``autograd.grad`` under ``vmap`` with batched
``grad_outputs`` on a graph recorded outside (it used to read sample 0 only and repeat it: silently wrong),
nested vmaps, several outputs and inputs, ``allow_unused``; ``torch._vmap_internals._vmap``/``vmap`` (in_dims,
out_dims, allow_none_pass_through, the errors and the deprecation warning) and
``autograd.functional._construct_standard_basis_for`` as pytorch-minimize uses them."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="torch is the oracle of these tests")

import tapegrad  # noqa: E402
import tapegrad._vmap_internals  # noqa: E402,F401
import tapegrad.autograd.functional  # noqa: E402,F401
import tapegrad.func  # noqa: E402,F401

RNG = np.random.default_rng(7)
X, Z = RNG.standard_normal(3), RNG.standard_normal(2)


def _np(r):
    if r is None:
        return None
    if isinstance(r, (tuple, list)):
        return [_np(x) for x in r]
    return r.detach().numpy()


def _same(a, b):
    if isinstance(b, list):
        assert isinstance(a, list) and len(a) == len(b)
        for x, y in zip(a, b):
            _same(x, y)
    elif b is None:
        assert a is None
    else:
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


def _graph(m):
    x = m.tensor(X, requires_grad=True)
    z = m.tensor(Z, requires_grad=True)
    y = m.stack([x[0] * x[1], x.sin().sum(), (x ** 3).sum() * z[0]])
    g = m.autograd.grad((y ** 2).sum(), x, create_graph=True)[0]
    return x, z, y, g


def _vjps(m):
    x, z, y, g = _graph(m)
    eye = m.eye(3, dtype=m.float64)
    vm = m.func.vmap
    res = [vm(lambda v: m.autograd.grad(y, x, v, retain_graph=True)[0])(eye),
           vm(lambda v: m.autograd.grad(g, x, v, retain_graph=True)[0])(eye),          # Hessian rows
           vm(lambda v: m.autograd.grad(y, x, v, retain_graph=True)[0], in_dims=1)(eye * 2),
           vm(lambda v: m.autograd.grad([y, y.sum()], [x, z], [v, v.sum()], retain_graph=True))(eye),
           vm(vm(lambda v: m.autograd.grad(y, x, v, retain_graph=True)[0]))(eye.reshape(3, 1, 3).expand(3, 2, 3)),
           vm(lambda v: m.autograd.grad(y[:2], [x, z], v, retain_graph=True, allow_unused=True))(eye[:, :2]),
           vm(lambda v: m.autograd.grad(y[:2], [x, z], v, retain_graph=True, materialize_grads=True))(eye[:, :2])]
    hess = vm(lambda v: m.autograd.grad(g, x, v, retain_graph=True, create_graph=True)[0])(eye)
    res.append(m.autograd.grad(hess.trace(), x)[0])                                     # through create_graph
    return _np(res)


def test_autograd_grad_with_batched_grad_outputs_vs_torch():
    _same(_vjps(tapegrad), _vjps(torch))


def _legacy(m):
    from importlib import import_module
    vmi = import_module(f"{m.__name__}._vmap_internals")
    x, z, y, g = _graph(m)
    eye = m.eye(3, dtype=m.float64)
    out = [vmi._vmap(lambda v: m.autograd.grad(y, x, v, retain_graph=True)[0])(eye),
           vmi._vmap(lambda v: m.autograd.grad(g, x, v, retain_graph=True)[0], out_dims=1)(eye),
           vmi._vmap(lambda v: m.autograd.grad(y[:2], [x, z], v, retain_graph=True, allow_unused=True),
                     allow_none_pass_through=True)(eye[:, :2]),
           vmi._vmap(lambda a, b: (a * b, a + 1), in_dims=(1, None), out_dims=(0, 1))(
               m.ones(2, 3, dtype=m.float64), m.arange(2.0, dtype=m.float64)),
           m.autograd.functional._construct_standard_basis_for(
               (m.zeros(2, dtype=m.float64), m.zeros(3, dtype=m.float64)), (2, 3)),
           m.autograd.functional._as_tuple_nocheck([eye])]
    errors = []
    for bad in (lambda: vmi._vmap(lambda v: 3)(eye), lambda: vmi._vmap(lambda v: (v, 2))(eye),
                lambda: vmi._vmap(lambda v: v, out_dims=(0, 1))(eye), lambda: vmi._vmap(lambda v: v, out_dims="a")(eye),
                lambda: vmi._vmap(lambda: 1)(), lambda: vmi._vmap(lambda v: v, in_dims=[0])(eye),
                lambda: m.autograd.functional._construct_standard_basis_for((eye,), (1, 2))):
        try:
            bad()
        except (ValueError, AssertionError) as e:
            errors.append((type(e).__name__, str(e).split("<lambda>")[0]))
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        out.append(vmi.vmap(m.sin)(eye))
    return _np(out), errors, [(x.category.__name__, str(x.message)) for x in w]


def test_vmap_internals_vs_torch():
    mine, theirs = _legacy(tapegrad), _legacy(torch)
    _same(mine[0], theirs[0])
    assert mine[1:] == theirs[1:]
