"""nn.utils vs torch: gradient clipping and parameter/vector conversion."""

import numpy as np
import pytest

import tapegrad
from tapegrad import nn


def _pair(torch, dtype="float64", scale=1.0):
    rng = np.random.default_rng(0)
    shapes = [(3, 4), (4,), (2, 2, 2)]
    grads = [rng.standard_normal(s).astype(dtype) * scale for s in shapes]
    tp = [torch.nn.Parameter(torch.zeros(s, dtype=getattr(torch, dtype))) for s in shapes]
    gp = [nn.Parameter(tapegrad.zeros(s, dtype=getattr(tapegrad, dtype))) for s in shapes]
    for p, q, g in zip(tp, gp, grads):
        p.grad = torch.tensor(g)
        q.grad = tapegrad.tensor(g)
    return tp, gp


@pytest.mark.parametrize("norm_type", [2.0, 1, 3.5, float("inf")])
@pytest.mark.parametrize("max_norm", [0.5, 100.0])
def test_clip_grad_norm_matches_torch(torch, norm_type, max_norm):
    tp, gp = _pair(torch)
    tn = torch.nn.utils.clip_grad_norm_(tp, max_norm, norm_type)
    gn = nn.utils.clip_grad_norm_(iter(gp), max_norm, norm_type)
    assert isinstance(gn, tapegrad.Tensor) and gn.dtype is tapegrad.float64 and gn.shape == ()
    np.testing.assert_allclose(gn.numpy(), tn.numpy(), rtol=1e-12)
    for p, q in zip(tp, gp):
        np.testing.assert_allclose(q.grad.numpy(), p.grad.numpy(), rtol=1e-12)


def test_clip_grad_norm_float32_and_edge_cases(torch):
    tp, gp = _pair(torch, "float32", scale=10)
    tn = torch.nn.utils.clip_grad_norm_(tp, 1.0)
    gn = nn.utils.clip_grad_norm_(gp, 1.0)
    assert gn.dtype is tapegrad.float32
    np.testing.assert_allclose(gn.numpy(), tn.numpy(), rtol=1e-6)
    for p, q in zip(tp, gp):
        np.testing.assert_allclose(q.grad.numpy(), p.grad.numpy(), rtol=1e-6)
    # no gradients: a zero norm
    assert float(nn.utils.clip_grad_norm_([nn.Parameter(tapegrad.zeros(2))], 1.0)) == 0.0
    # a single tensor is accepted
    p = nn.Parameter(tapegrad.zeros(2))
    p.grad = tapegrad.tensor([3.0, 4.0])
    assert float(nn.utils.clip_grad_norm_(p, 1.0)) == 5.0
    np.testing.assert_allclose(p.grad.numpy(), np.array([3.0, 4.0]) / (5 + 1e-6), rtol=1e-6)


def test_clip_grad_norm_nonfinite(torch):
    tp, gp = _pair(torch)
    tp[0].grad[0, 0] = float("nan")
    gp[0].grad._array[0, 0] = np.nan
    with pytest.raises(RuntimeError) as te:
        torch.nn.utils.clip_grad_norm_(tp, 1.0, error_if_nonfinite=True)
    with pytest.raises(RuntimeError) as ge:
        nn.utils.clip_grad_norm_(gp, 1.0, error_if_nonfinite=True)
    assert str(ge.value) == str(te.value)
    assert np.isnan(float(nn.utils.clip_grad_norm_(gp, 1.0)))


def test_clip_grad_value_matches_torch(torch):
    tp, gp = _pair(torch)
    torch.nn.utils.clip_grad_value_(tp, 0.3)
    v = gp[0].grad._version
    nn.utils.clip_grad_value_(gp, 0.3)
    assert gp[0].grad._version > v
    for p, q in zip(tp, gp):
        np.testing.assert_array_equal(q.grad.numpy(), p.grad.numpy())


def test_parameters_to_vector_and_back(torch):
    tapegrad.manual_seed(0)
    g = nn.Sequential(nn.Linear(3, 2), nn.Linear(2, 1))
    t = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.Linear(2, 1))
    t.load_state_dict({k: torch.tensor(v.numpy()) for k, v in g.state_dict().items()})
    gv = nn.utils.parameters_to_vector(g.parameters())
    tv = torch.nn.utils.parameters_to_vector(t.parameters())
    np.testing.assert_array_equal(gv.detach().numpy(), tv.detach().numpy())
    assert gv.requires_grad and gv.grad_fn is not None
    (gv * tapegrad.arange(gv.numel())).sum().backward()
    np.testing.assert_array_equal(g[0].weight.grad.numpy().ravel(), np.arange(6))
    new = tapegrad.arange(11, dtype=tapegrad.float32)
    nn.utils.vector_to_parameters(new, g.parameters())
    np.testing.assert_array_equal(g[1].bias.detach().numpy(), [10.0])
    assert isinstance(g[1].bias, nn.Parameter) and g[1].bias.requires_grad
    with pytest.raises(TypeError, match="expected torch.Tensor, but got: list"):
        nn.utils.vector_to_parameters([1.0], g.parameters())


@pytest.mark.parametrize("kind", ["conv", "convT", "linear"])
def test_fusion_matches_torch(torch, kind):
    import numpy as np
    outs = []
    for m in (tapegrad, torch):
        rng = np.random.default_rng(5)
        if kind == "conv":
            layer, bn, x = m.nn.Conv2d(2, 3, 3).double(), m.nn.BatchNorm2d(3).double(), rng.standard_normal((1, 2, 4, 4))
        elif kind == "convT":
            layer, bn, x = m.nn.ConvTranspose2d(2, 3, 2).double(), m.nn.BatchNorm2d(3).double(), \
                rng.standard_normal((1, 2, 3, 3))
        else:
            layer, bn, x = m.nn.Linear(3, 4, bias=False).double(), m.nn.BatchNorm1d(4).double(), \
                rng.standard_normal((2, 3))
        r2 = np.random.default_rng(6)
        with m.no_grad():
            for t in list(layer.parameters()) + list(bn.parameters()) + [bn.running_mean]:
                t.copy_(m.tensor(r2.standard_normal(tuple(t.shape))))
            bn.running_var.copy_(m.tensor(r2.uniform(0.5, 2, tuple(bn.running_var.shape))))
        layer.eval(), bn.eval()
        if kind == "linear":
            fused = m.nn.utils.fuse_linear_bn_eval(layer, bn)
        else:
            fused = m.nn.utils.fuse_conv_bn_eval(layer, bn, transpose=kind == "convT")
        outs.append((fused(m.tensor(x)).detach().numpy(), bn(layer(m.tensor(x))).detach().numpy()))
    np.testing.assert_allclose(outs[0][0], outs[1][0], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(outs[0][0], outs[0][1], rtol=1e-10, atol=1e-10)
    with pytest.raises(AssertionError, match="Fusion only for eval!"):
        tapegrad.nn.utils.fuse_conv_bn_eval(tapegrad.nn.Conv2d(1, 1, 1), tapegrad.nn.BatchNorm2d(1))


def test_skip_init_as_torch(torch):
    lin = tapegrad.nn.utils.skip_init(tapegrad.nn.Linear, 3, 2, bias=False)
    assert tuple(lin.weight.shape) == (2, 3) and lin.bias is None
    for m in (tapegrad, torch):
        with pytest.raises(RuntimeError, match="Module must support a 'device' arg to skip initialization"):
            m.nn.utils.skip_init(m.nn.ReLU)
