"""Convolutions give a channels-last output when their input or weight is laid out channels last (torch's
"channels last dominates"), as the memory-format tutorial shows; values and gradients are unchanged."""

import numpy as np
import pytest

import tapegrad

CASES = {
    "input cl": lambda m, x, w: m.nn.functional.conv2d(x.to(memory_format=m.channels_last), w),
    "weight cl": lambda m, x, w: m.nn.functional.conv2d(x, w.to(memory_format=m.channels_last)),
    "neither": lambda m, x, w: m.nn.functional.conv2d(x, w),
    "strided": lambda m, x, w: m.nn.functional.conv2d(x.to(memory_format=m.channels_last), w, stride=2, padding=1),
    "groups on a slice": lambda m, x, w: m.nn.functional.conv2d(x.to(memory_format=m.channels_last)[:, :4], w[:, :2],
                                                                groups=2),
    "transposed": lambda m, x, w: m.nn.functional.conv_transpose2d(x.to(memory_format=m.channels_last),
                                                                   w.transpose(0, 1).contiguous()),
    "3d": lambda m, x, w: m.nn.functional.conv3d(x.unsqueeze(2).expand(2, 8, 2, 5, 5).contiguous().to(
        memory_format=m.channels_last_3d), w.unsqueeze(2)),
    "3d float32": lambda m, x, w: m.nn.functional.conv3d(x.float().unsqueeze(2).expand(2, 8, 2, 5, 5).contiguous().to(
        memory_format=m.channels_last_3d), w.float().unsqueeze(2)).double(),
    "module": lambda m, x, w: m.nn.Conv2d(8, 4, 3).double().to(memory_format=m.channels_last)(x),
}


@pytest.mark.parametrize("name", list(CASES))
def test_channels_last_dominates(torch, name):
    rng = np.random.default_rng(0)
    xa, wa = rng.standard_normal((2, 8, 5, 5)), rng.standard_normal((4, 8, 3, 3))
    got = []
    for m in (tapegrad, torch):
        m.manual_seed(0)
        x, w = m.tensor(xa, requires_grad=True), m.tensor(wa, requires_grad=True)
        out = CASES[name](m, x, w)
        out.pow(2).sum().backward()
        got.append((out.stride(), out.detach().numpy(), x.grad.numpy(), None if w.grad is None else w.grad.numpy()))
    (sa, *a), (sb, *b) = got
    assert sa == sb
    for u, v in zip(a, b):
        assert (u is None) == (v is None)
        if u is not None:
            tol = 1e-4 if "float32" in name else 1e-10
            np.testing.assert_allclose(u, v, rtol=tol, atol=tol)


@pytest.mark.parametrize("conv,cin,groups", [("conv1d", 1, 1), ("conv2d", 1, 1), ("conv2d", 3, 1), ("conv2d", 4, 2),
                                             ("conv2d", 4, 4), ("conv3d", 1, 1)])
def test_weight_gradient_is_row_major_as_torchs(torch, conv, cin, groups):
    """A first conv layer (one input channel) got its weight gradient as a transposed view, so iMAML's
    ``torch.cat([g.view(-1) for g in autograd.grad(...)])`` failed; torch's is row-major (values unchanged)."""
    rng = np.random.default_rng(1)
    nd = int(conv[-2])
    xa, wa = rng.standard_normal((2, cin) + (7,) * nd), rng.standard_normal((8, cin // groups) + (3,) * nd)
    got = []
    for m in (tapegrad, torch):
        x, w = m.tensor(xa, requires_grad=True), m.tensor(wa, requires_grad=True)
        y = getattr(m.nn.functional, conv)(x, w, padding=1, groups=groups)
        gw, = m.autograd.grad(y.square().sum(), w)
        got.append((gw.is_contiguous(), gw.view(-1).numpy()))
    assert got[0][0] and got[1][0]
    np.testing.assert_allclose(got[0][1], got[1][1], rtol=1e-12)
