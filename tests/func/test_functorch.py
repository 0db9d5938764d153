"""``tapegrad.functorch`` against real functorch (torch 2.13's): make_functional(_with_buffers) and
combine_state_for_ensemble composed with the transforms, the deprecation warnings, and ``import functorch`` in a
parity run resolving to tapegrad's."""

import warnings

import numpy as np
import pytest

import tapegrad
import tapegrad.functorch as tft
from tapegrad import parity

functorch = pytest.importorskip("functorch", reason="real functorch (shipped with torch) is the oracle")


def _model(m, k=0):
    m.manual_seed(k)
    return m.nn.Sequential(m.nn.Linear(3, 4), m.nn.BatchNorm1d(4), m.nn.Tanh(), m.nn.Linear(4, 2)).eval()


def _quiet(f, *a):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        return f(*a)


@pytest.mark.filterwarnings("ignore:There is a performance drop because we have not yet implemented the batching")
def test_functional_models_under_transforms(torch):
    x = np.random.default_rng(0).standard_normal((5, 3))
    got = []
    for m, ft in ((tapegrad, tft), (torch, functorch)):
        data = m.tensor(x, dtype=m.float32)
        func, params, buffers = _quiet(ft.make_functional_with_buffers, _model(m))
        tangents = tuple(m.ones_like(p) for p in params)
        out, jvp_out = _quiet(ft.jvp, lambda ps: func(ps, buffers, data), (params,), (tangents,))
        f2, p2 = _quiet(ft.make_functional, m.nn.Linear(3, 2))
        g = _quiet(ft.grad, lambda ps: f2(ps, data).pow(2).sum())(p2)
        fe, pe, be = _quiet(ft.combine_state_for_ensemble, [_model(m, k) for k in range(3)])
        ens = _quiet(ft.vmap, fe, (0, 0, None))(pe, be, data)
        got.append([out, jvp_out, *g, ens, func.param_names, func.buffer_names, [tuple(p.shape) for p in pe]])
    for a, b in zip(*got):
        if isinstance(b, torch.Tensor):
            np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-5, atol=1e-6)
        else:
            assert a == b


def test_deprecation_warning_names_the_torch_func_api():
    with pytest.warns(FutureWarning, match="`functorch.make_functional` is deprecated.*torch.func.functional_call"):
        tft.make_functional(tapegrad.nn.Linear(2, 2))
    with pytest.warns(FutureWarning, match="`functorch.vmap` is deprecated.*`torch.vmap`"):
        tft.vmap(lambda t: t * 2)(tapegrad.ones(3))


def test_import_functorch_in_a_parity_run(tmp_path):
    script = tmp_path / "uses_functorch.py"
    script.write_text("import torch, functorch as ft\ntorch.manual_seed(0)\nm = torch.nn.Linear(3, 2)\n"
                      "f, ps = ft.make_functional(m)\nx = torch.randn(4, 3)\n"
                      "print(ft.grad(lambda p: f(p, x).sum())(ps)[0], ft.vmap(torch.sin)(x))\n")
    r = parity.run(str(script))
    assert r.agree, r.report()
    assert r.numbers_compared >= 10
