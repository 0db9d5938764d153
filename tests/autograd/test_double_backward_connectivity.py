"""Second-order connectivity, against torch: a gradient computed with ``create_graph`` through a masking op
(relu, hardtanh, leaky_relu, max_pool...) stays in the input's graph, as torch's ``*_backward`` ops take the input,
so differentiating it again gives zeros (not None, not "not used"); ops whose torch gradient is disconnected
stay so."""

import pytest
import torch

import tapegrad

VALS = [[0.3, -0.7, 1.2, -2.0], [0.5, 0.0, -0.1, 2.5], [1.5, -0.3, 0.2, -1.1], [-0.4, 0.9, -0.8, 0.05]]


def _cases(t):
    F = t.nn.functional
    return {
        "relu": lambda a: t.relu(a),
        "relu_": lambda a: a.clone().relu_(),
        "leaky_relu": lambda a: F.leaky_relu(a, 0.1),
        "leaky_relu_": lambda a: F.leaky_relu(a.clone(), 0.1, inplace=True),
        "hardtanh": lambda a: F.hardtanh(a),
        "hardtanh_": lambda a: F.hardtanh(a.clone(), inplace=True),
        "relu6": lambda a: F.relu6(a),
        "threshold": lambda a: F.threshold(a, 0.1, 2.0),
        "hardsigmoid": lambda a: F.hardsigmoid(a),
        "hardswish": lambda a: F.hardswish(a),
        "hardshrink": lambda a: F.hardshrink(a),
        "softshrink": lambda a: F.softshrink(a),
        "rrelu_eval": lambda a: F.rrelu(a, training=False),
        "abs": lambda a: a.abs(),
        "l1_loss": lambda a: F.l1_loss(a, t.zeros_like(a)),
        "norm_1": lambda a: a.norm(1),
        "vector_norm_1_dim": lambda a: t.linalg.vector_norm(a, 1, dim=1),
        "vector_norm_inf": lambda a: t.linalg.vector_norm(a, float("inf")),
        "clamp": lambda a: a.clamp(-0.5, 0.5),
        "sign": lambda a: a.sign(),
        "max": lambda a: a.max(),
        "max_dim": lambda a: a.max(1)[0],
        "max_pool1d": lambda a: F.max_pool1d(a[None], 2),
        "max_pool2d": lambda a: F.max_pool2d(a[None, None], 2),
        "adaptive_max_pool1d": lambda a: F.adaptive_max_pool1d(a[None], 2),
        "adaptive_max_pool2d": lambda a: F.adaptive_max_pool2d(a[None, None], 2),
        "where": lambda a: t.where(a > 0, a, a * 2),
        "masked_fill": lambda a: a.masked_fill(a > 0, 1.0),
        "dropout": lambda a: F.dropout(a, 0.5, True),
        "floor": lambda a: a.floor(),
        "round": lambda a: a.round(),
        "index": lambda a: a[[0, 1, 0]],
        "gather": lambda a: a.gather(1, t.tensor([[0], [1], [0], [1]])),
        "sort": lambda a: a.sort(1)[0],
    }


def _second_order(t, f):
    """What the first-order gradient is (requires_grad, grad_fn is None) and what differentiating it gives."""
    t.manual_seed(0)
    a = t.tensor(VALS, dtype=t.float64, requires_grad=True)
    g, = t.autograd.grad(f(a).sum(), a, create_graph=True)
    first = (g.requires_grad, g.grad_fn is None)
    if not g.requires_grad:
        return first, None, None
    try:
        gg, = t.autograd.grad(g.sum(), a, allow_unused=True)
    except RuntimeError as e:
        return first, "error", str(e)
    # (torch's zero gradient may be an efficient zero tensor, without storage: added to zeros to read it)
    return first, None if gg is None else t.zeros(gg.shape, dtype=gg.dtype).add(gg).tolist(), None


@pytest.mark.parametrize("name", list(_cases(torch)))
def test_second_order_connectivity_as_torch(name):
    got = _second_order(tapegrad, _cases(tapegrad)[name])
    want = _second_order(torch, _cases(torch)[name])
    assert got[0] == want[0]
    if isinstance(want[1], list):
        assert sum(got[1], []) == pytest.approx(sum(want[1], []), rel=1e-12, abs=1e-12)
    else:
        assert got[1] == want[1]
    if want[1] == "error":
        assert got[2] == want[2]


@pytest.mark.parametrize("name", ["relu", "hardtanh", "leaky_relu", "max_pool2d", "abs"])
def test_second_order_not_unused(name):
    """With allow_unused=False torch raises no "not used" error: the input is in the gradient's graph."""
    for t in (torch, tapegrad):
        a = t.tensor(VALS, dtype=t.float64, requires_grad=True)
        g, = t.autograd.grad(_cases(t)[name](a).sum(), a, create_graph=True)
        gg, = t.autograd.grad(g.sum(), a)
        assert t.zeros(gg.shape, dtype=gg.dtype).add(gg).tolist() == [[0.0] * 4] * 4


def test_plain_backward_unchanged():
    """Without create_graph the gradient is a plain tensor (no graph), and the values are torch's."""
    for name in ("relu", "hardtanh", "leaky_relu", "max_pool2d", "abs"):
        a = tapegrad.tensor(VALS, dtype=tapegrad.float64, requires_grad=True)
        g, = tapegrad.autograd.grad(_cases(tapegrad)[name](a).sum(), a)
        b = torch.tensor(VALS, dtype=torch.float64, requires_grad=True)
        h, = torch.autograd.grad(_cases(torch)[name](b).sum(), b)
        assert g.grad_fn is None and not g.requires_grad
        assert g.tolist() == h.tolist()


def test_gradgradcheck_through_links():
    """Third order through the links is zero and finite differences agree (float64)."""
    x = tapegrad.tensor([[0.3, -0.7, 1.2], [0.5, -0.1, 2.5]], dtype=tapegrad.float64, requires_grad=True)
    F = tapegrad.nn.functional
    for f in (F.hardtanh, lambda v: F.leaky_relu(v, 0.2), tapegrad.abs, lambda v: F.max_pool1d(v[None], 2)):
        assert tapegrad.autograd.gradgradcheck(f, (x,))



def test_links_under_transforms():
    """vmap(grad), vmap(hessian) and jvp(grad) through the links: torch's values (second order zero)."""
    x = [[0.3, -0.7, 1.2, -2.0, 0.4], [0.5, 0.1, -0.1, 2.5, -3.0]]
    got = {}
    for t in (torch, tapegrad):
        F = t.nn.functional
        v = t.tensor(x, dtype=t.float64)
        for name, f in (("hardtanh", lambda u: F.hardtanh(u).sum()),
                        ("max_pool1d", lambda u: F.max_pool1d(u[None], 2).sum())):
            got[t, name] = t.func.vmap(t.func.grad(f))(v).tolist()
            assert t.func.vmap(t.func.hessian(f))(v).abs().sum().item() == 0
            assert t.func.jvp(t.func.grad(f), (v,), (v,))[1].abs().sum().item() == 0
    for name in ("hardtanh", "max_pool1d"):
        assert got[tapegrad, name] == got[torch, name]
