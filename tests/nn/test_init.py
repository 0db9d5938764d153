"""nn.init and default layer initialisation: the distributions follow torch's formulas, in place, without grad."""

import math

import numpy as np
import pytest

import tapegrad
from tapegrad import nn
from tapegrad.nn import init


def _moments(t):
    a = t.detach().numpy().astype(np.float64).ravel()
    return a.mean(), a.std(), a.min(), a.max()


def test_calculate_gain_matches_torch(torch):
    for name, param in [("linear", None), ("conv2d", None), ("sigmoid", None), ("tanh", None), ("relu", None),
                        ("leaky_relu", None), ("leaky_relu", 0.2), ("leaky_relu", math.sqrt(5)), ("selu", None)]:
        assert init.calculate_gain(name, param) == torch.nn.init.calculate_gain(name, param)
    for bad in [("foo", None), ("leaky_relu", "x")]:
        with pytest.raises(ValueError) as te:
            torch.nn.init.calculate_gain(*bad)
        with pytest.raises(ValueError) as ge:
            init.calculate_gain(*bad)
        assert str(ge.value) == str(te.value)


def test_fan_in_fan_out_matches_torch(torch):
    for shape in [(3, 4), (5, 2, 3), (6, 4, 3, 3), (2, 3, 1, 2, 2)]:
        assert init._calculate_fan_in_and_fan_out(tapegrad.empty(shape)) == \
            torch.nn.init._calculate_fan_in_and_fan_out(torch.empty(shape))
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        init._calculate_fan_in_and_fan_out(tapegrad.empty(3))


def test_init_is_in_place_untracked_and_versioned():
    p = nn.Parameter(tapegrad.zeros(4, 5))
    v = p._version
    out = init.kaiming_uniform_(p, a=math.sqrt(5))
    assert out is p and p.grad_fn is None and p.requires_grad and p._version > v
    assert isinstance(p, nn.Parameter) and p.dtype is tapegrad.float32


N = (400, 500)


@pytest.mark.parametrize("fn,args,mean,std,lo,hi", [
    (init.uniform_, (-2.0, 3.0), 0.5, 5 / math.sqrt(12), -2.0, 3.0),
    (init.normal_, (1.0, 0.5), 1.0, 0.5, None, None),
    (init.xavier_uniform_, (), 0.0, math.sqrt(2 / (400 + 500)), -math.sqrt(6 / 900), math.sqrt(6 / 900)),
    (init.xavier_normal_, (2.0,), 0.0, 2 * math.sqrt(2 / 900), None, None),
    (init.kaiming_uniform_, (), 0.0, math.sqrt(2 / 500), -math.sqrt(6 / 500), math.sqrt(6 / 500)),
    (init.kaiming_uniform_, (math.sqrt(5),), 0.0, math.sqrt(1 / 3 / 500), -math.sqrt(1 / 500), math.sqrt(1 / 500)),
    (init.kaiming_normal_, (0, "fan_out", "relu"), 0.0, math.sqrt(2 / 400), None, None),
])
def test_distributions(fn, args, mean, std, lo, hi):
    t = fn(tapegrad.empty(N), *args)
    m, s, mn, mx = _moments(t)
    assert abs(m - mean) < 5 * std / math.sqrt(N[0] * N[1])
    assert abs(s - std) / std < 0.01
    if lo is not None:
        assert mn >= lo and mx <= hi and mn < lo + 0.01 * (hi - lo) and mx > hi - 0.01 * (hi - lo)


def test_trunc_normal_bounds_and_moments(torch):
    t = init.trunc_normal_(tapegrad.empty(N), mean=0.5, std=1.0, a=-1.0, b=1.5)
    ref = torch.nn.init.trunc_normal_(torch.empty(N, dtype=torch.float64), mean=0.5, std=1.0, a=-1.0, b=1.5)
    m, s, mn, mx = _moments(t)
    assert mn >= -1.0 and mx <= 1.5
    assert abs(m - float(ref.mean())) < 0.01 and abs(s - float(ref.std())) < 0.01


def test_constants_eye_dirac_orthogonal(torch):
    assert (init.constant_(tapegrad.empty(2, 3), 0.25).numpy() == 0.25).all()
    assert (init.ones_(tapegrad.empty(2)).numpy() == 1).all() and (init.zeros_(tapegrad.ones(2)).numpy() == 0).all()
    np.testing.assert_array_equal(init.eye_(tapegrad.empty(3, 4)).numpy(), torch.nn.init.eye_(torch.empty(3, 4)))
    for shape, groups in [((4, 2, 3), 1), ((6, 3, 3, 3), 2), ((4, 4, 3, 3, 3), 2)]:
        np.testing.assert_array_equal(init.dirac_(tapegrad.empty(shape), groups).numpy(),
                                      torch.nn.init.dirac_(torch.empty(shape), groups).numpy())
    for shape in [(5, 3), (3, 5), (4, 2, 3)]:
        w = init.orthogonal_(tapegrad.empty(shape, dtype=tapegrad.float64), gain=2.0).numpy().reshape(shape[0], -1)
        if shape[0] <= w.shape[1]:
            np.testing.assert_allclose(w @ w.T, 4 * np.eye(shape[0]), atol=1e-10)
        else:
            np.testing.assert_allclose(w.T @ w, 4 * np.eye(w.shape[1]), atol=1e-10)
    s = init.sparse_(tapegrad.empty(10, 6), sparsity=0.3).numpy()
    assert ((s == 0).sum(axis=0) >= 3).all()
    with pytest.raises(ValueError, match="2 dimensions"):
        init.eye_(tapegrad.empty(2, 2, 2))


def test_seeded_init_is_reproducible():
    tapegrad.manual_seed(3)
    a = nn.Linear(4, 3).state_dict()
    tapegrad.manual_seed(3)
    b = nn.Linear(4, 3).state_dict()
    for k in a:
        np.testing.assert_array_equal(a[k].numpy(), b[k].numpy())


def _bounds(t, bound, uniform=True):
    m, s, mn, mx = _moments(t)
    assert mn >= -bound and mx <= bound
    if uniform:
        assert abs(s - bound / math.sqrt(3)) / (bound / math.sqrt(3)) < 0.05


def test_default_layer_inits_follow_torch():
    lin = nn.Linear(300, 200)
    _bounds(lin.weight, 1 / math.sqrt(300))
    _bounds(lin.bias, 1 / math.sqrt(300), uniform=False)
    conv = nn.Conv2d(8, 64, 3)
    _bounds(conv.weight, 1 / math.sqrt(8 * 9))
    _bounds(conv.bias, 1 / math.sqrt(8 * 9), uniform=False)
    convt = nn.ConvTranspose2d(8, 40, 3, groups=2)
    _bounds(convt.weight, 1 / math.sqrt(20 * 9))
    emb = nn.Embedding(500, 64, padding_idx=3)
    m, s, _, _ = _moments(emb.weight)
    assert abs(m) < 0.02 and abs(s - 1) < 0.02 and (emb.weight.detach().numpy()[3] == 0).all()
    lstm = nn.LSTM(10, 50, num_layers=2)
    for p in lstm.parameters():
        _bounds(p, 1 / math.sqrt(50), uniform=p.numel() > 1000)
    mha = nn.MultiheadAttention(64, 4)
    _bounds(mha.in_proj_weight, math.sqrt(6 / (64 + 3 * 64)))
    assert (mha.in_proj_bias.detach().numpy() == 0).all() and (mha.out_proj.bias.detach().numpy() == 0).all()
    bn = nn.BatchNorm2d(5)
    assert (bn.weight.detach().numpy() == 1).all() and (bn.bias.detach().numpy() == 0).all()
    assert (bn.running_var.numpy() == 1).all() and int(bn.num_batches_tracked) == 0
    assert (nn.PReLU(3, init=0.1).weight.detach().numpy() == np.float32(0.1)).all()
    bil = nn.Bilinear(50, 20, 300)
    _bounds(bil.weight, 1 / math.sqrt(50))
