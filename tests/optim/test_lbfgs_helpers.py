"""``torch.optim.lbfgs._strong_wolfe`` and ``_cubic_interpolate`` as libraries import them (pytorch-minimize's
line search passes flat Tensors and reads the gradient back as a Tensor): the same step, values, gradient and
evaluation count as torch 2.13 on the Rosenbrock function from several starts and directions."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="torch is the oracle of these tests")

import tapegrad  # noqa: E402
import tapegrad.optim.lbfgs  # noqa: E402,F401


def _rosen(m, x):
    return (100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2).sum()


def _search(m, start, direction, t):
    from importlib import import_module
    lb = import_module(f"{m.__name__}.optim.lbfgs")

    def fun(x, t, d):
        y = (x + t * d).detach().requires_grad_(True)
        f = _rosen(m, y)
        g, = m.autograd.grad(f, y)
        return f.item(), g

    x = m.tensor(start, dtype=m.float64)
    f, g = fun(x, 0.0, m.zeros_like(x))
    d = m.tensor(direction, dtype=m.float64) if direction is not None else -g
    f_new, g_new, t_new, evals = lb._strong_wolfe(fun, x, t, d, f, g, g.dot(d))
    assert isinstance(g_new, m.Tensor)
    interp = lb._cubic_interpolate(m.tensor(0.0), m.tensor(1.0), m.tensor(-2.0), m.tensor(1.0), m.tensor(0.5),
                                   m.tensor(0.3))
    return float(f_new), g_new.tolist(), float(t_new), evals, float(interp)


@pytest.mark.parametrize("start,direction,t", [([-1.2, 1.0], None, 1.0), ([0.5, -0.3, 2.0], None, 0.01),
                                               ([1.5, 1.5], [-1.0, -2.0], 1.0), ([0.0, 0.0, 0.0, 0.0], None, 5.0)])
def test_strong_wolfe_on_tensors_vs_torch(start, direction, t):
    mine, theirs = _search(tapegrad, start, direction, t), _search(torch, start, direction, t)
    assert mine[3] == theirs[3]
    np.testing.assert_allclose(mine[0], theirs[0], rtol=1e-12)
    np.testing.assert_allclose(mine[1], theirs[1], rtol=1e-12)
    np.testing.assert_allclose(mine[2], theirs[2], rtol=1e-12)
    np.testing.assert_allclose(mine[4], theirs[4], rtol=1e-6)
