"""Convolution at LeNet size: float32 values and gradients vs torch, a training step that stays fast, higher-order
derivatives through conv / pooling, and torch's error wording for bad input."""


import numpy as np
import pytest

import tapegrad
import tapegrad.nn.functional as F


def _lenet_params(rng):
    return {
        "w1": (rng.standard_normal((6, 1, 5, 5)) * 0.2).astype(np.float32),
        "b1": (rng.standard_normal(6) * 0.1).astype(np.float32),
        "w2": (rng.standard_normal((16, 6, 5, 5)) * 0.1).astype(np.float32),
        "b2": (rng.standard_normal(16) * 0.1).astype(np.float32),
        "w3": (rng.standard_normal((10, 16 * 5 * 5)) * 0.05).astype(np.float32),
    }


def _lenet_loss(m, Fm, x, p):
    h = Fm.max_pool2d(Fm.conv2d(x, p["w1"], p["b1"], padding=2).relu(), 2)     # 6 x 14 x 14
    h = Fm.avg_pool2d(Fm.conv2d(h, p["w2"], p["b2"]).relu(), 2)                 # 16 x 5 x 5
    logits = h.reshape(h.shape[0], -1) @ p["w3"].t()
    return (logits * logits).mean()


def test_lenet_conv_float32_matches_torch(torch):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 1, 28, 28)).astype(np.float32)
    w = (rng.standard_normal((6, 1, 5, 5)) * 0.2).astype(np.float32)
    b = rng.standard_normal(6).astype(np.float32)
    tx, tw, tb = (tapegrad.tensor(a, requires_grad=True) for a in (x, w, b))
    rx, rw, rb = (torch.tensor(a, requires_grad=True) for a in (x, w, b))
    out, ref = F.conv2d(tx, tw, tb), torch.nn.functional.conv2d(rx, rw, rb)
    assert out.dtype == tapegrad.float32 and tuple(out.shape) == (64, 6, 24, 24)
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), rtol=1e-4, atol=1e-5)
    g = rng.standard_normal(ref.shape).astype(np.float32)
    out.backward(tapegrad.tensor(g))
    ref.backward(torch.tensor(g))
    for a, r in ((tx, rx), (tw, rw), (tb, rb)):
        assert a.grad.dtype == tapegrad.float32
        np.testing.assert_allclose(a.grad.numpy(), r.grad.numpy(), rtol=1e-4, atol=1e-3)


def test_lenet_training_step_float32(torch):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((64, 1, 28, 28)).astype(np.float32)
    raw = _lenet_params(rng)
    tp = {k: tapegrad.tensor(v, requires_grad=True) for k, v in raw.items()}
    rp = {k: torch.tensor(v, requires_grad=True) for k, v in raw.items()}
    _lenet_loss(tapegrad, F, tapegrad.tensor(x), tp).backward()        # warm-up
    for p in tp.values():
        p.grad = None
    loss = _lenet_loss(tapegrad, F, tapegrad.tensor(x), tp)
    loss.backward()
    ref = _lenet_loss(torch, torch.nn.functional, torch.tensor(x), rp)
    ref.backward()
    assert loss.dtype == tapegrad.float32
    np.testing.assert_allclose(loss.item(), ref.item(), rtol=1e-4)
    for k in raw:
        assert tp[k].grad.dtype == tapegrad.float32
        np.testing.assert_allclose(tp[k].grad.numpy(), rp[k].grad.numpy(), rtol=2e-3, atol=2e-5, err_msg=k)


@pytest.mark.parametrize("pool", ["max", "avg", "none"])
def test_mixed_second_derivatives_through_conv(torch, pool):
    """d/dw of |d tanh(conv(x, w)).sum() / dx|^2: runs the backward of the backward of conv (and of pooling)."""
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 3, 6, 6))
    w = rng.standard_normal((4, 3, 3, 3)) * 0.3

    def run(m, Fm):
        tx, tw = m.tensor(x, requires_grad=True), m.tensor(w, requires_grad=True)
        h = Fm.conv2d(tx, tw, stride=1, padding=1).tanh()
        if pool == "max":
            h = Fm.max_pool2d(h, 3, stride=2, padding=1)
        elif pool == "avg":
            h = Fm.avg_pool2d(h, 2, ceil_mode=True)
        gx, = m.autograd.grad(h.sum(), tx, create_graph=True)
        gw, = m.autograd.grad((gx * gx).sum(), tw)
        return gx.detach().numpy(), gw.numpy()

    for a, b in zip(run(tapegrad, F), run(torch, torch.nn.functional)):
        np.testing.assert_allclose(a, b, rtol=1e-7, atol=1e-9)


def test_third_derivative_of_conv_transpose(torch):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((1, 2, 3, 3))
    w = rng.standard_normal((2, 2, 2, 2))

    def run(m, Fm):
        tx, tw = m.tensor(x, requires_grad=True), m.tensor(w, requires_grad=True)
        y = Fm.conv_transpose2d(tx, tw, stride=2).sin()
        g1, = m.autograd.grad(y.sum(), tx, create_graph=True)
        g2, = m.autograd.grad((g1 ** 2).sum(), tw, create_graph=True)
        g3, = m.autograd.grad(g2.sum(), tx)
        return g3.numpy()

    np.testing.assert_allclose(run(tapegrad, F), run(torch, torch.nn.functional), rtol=1e-7, atol=1e-9)


def _arr(*shape, dtype=np.float32):
    return np.random.default_rng(0).standard_normal(shape).astype(dtype)


ERROR_CASES = [
    ("channels", lambda m, Fm: Fm.conv2d(m.tensor(_arr(1, 1, 28, 28)), m.tensor(_arr(6, 3, 5, 5)))),
    ("kernel_too_big", lambda m, Fm: Fm.conv2d(m.tensor(_arr(1, 3, 3, 3)), m.tensor(_arr(6, 3, 5, 5)))),
    ("input_dims", lambda m, Fm: Fm.conv2d(m.tensor(_arr(3, 3)), m.tensor(_arr(6, 3, 5, 5)))),
    ("weight_dims", lambda m, Fm: Fm.conv1d(m.tensor(_arr(1, 4, 8)), m.tensor(_arr(6, 4, 3, 3)))),
    ("groups_divisible", lambda m, Fm: Fm.conv2d(m.tensor(_arr(1, 4, 8, 8)), m.tensor(_arr(6, 2, 3, 3)), groups=4)),
    ("bias_size", lambda m, Fm: Fm.conv2d(m.tensor(_arr(1, 4, 8, 8)), m.tensor(_arr(6, 2, 3, 3)), groups=2,
                                          bias=m.tensor(_arr(5)))),
    ("same_strided", lambda m, Fm: Fm.conv2d(m.tensor(_arr(1, 4, 8, 8)), m.tensor(_arr(6, 4, 3, 3)), stride=2,
                                             padding="same")),
    ("bad_padding_string", lambda m, Fm: Fm.conv2d(m.tensor(_arr(1, 4, 8, 8)), m.tensor(_arr(6, 4, 3, 3)),
                                                   padding="foo")),
    ("stride_len", lambda m, Fm: Fm.conv2d(m.tensor(_arr(1, 4, 8, 8)), m.tensor(_arr(6, 4, 3, 3)),
                                           stride=(1, 1, 1))),
    ("dtype_mismatch", lambda m, Fm: Fm.conv2d(m.tensor(_arr(1, 4, 8, 8)), m.tensor(_arr(6, 4, 3, 3, dtype=np.float64)))),
    ("transposed_channels", lambda m, Fm: Fm.conv_transpose2d(m.tensor(_arr(1, 4, 8, 8)), m.tensor(_arr(3, 4, 3, 3)))),
    ("output_padding", lambda m, Fm: Fm.conv_transpose2d(m.tensor(_arr(1, 4, 8, 8)), m.tensor(_arr(4, 4, 3, 3)),
                                                         stride=2, output_padding=2)),
    ("pool_too_small", lambda m, Fm: Fm.max_pool2d(m.tensor(_arr(1, 1, 2, 2)), 3)),
    ("pool_pad", lambda m, Fm: Fm.max_pool2d(m.tensor(_arr(1, 1, 4, 4)), 2, padding=2)),
    ("avg_pool_pad", lambda m, Fm: Fm.avg_pool2d(m.tensor(_arr(1, 1, 4, 4)), 2, padding=2)),
    ("unfold_blocks", lambda m, Fm: Fm.unfold(m.tensor(_arr(1, 1, 2, 2)), 3)),
    ("fold_blocks", lambda m, Fm: Fm.fold(m.tensor(_arr(1, 8, 5)), (3, 3), 2)),
    ("fold_divisible", lambda m, Fm: Fm.fold(m.tensor(_arr(1, 7, 4)), (3, 3), 2)),
    ("reflect_too_big", lambda m, Fm: Fm.pad(m.tensor(_arr(1, 2, 3)), (4, 4), mode="reflect")),
    ("pad_odd", lambda m, Fm: Fm.pad(m.tensor(_arr(1, 2, 3)), (1, 1, 1))),
    ("circular_wrap", lambda m, Fm: Fm.pad(m.tensor(_arr(1, 2, 3)), (4, 4), mode="circular")),
    ("pad_mode", lambda m, Fm: Fm.pad(m.tensor(_arr(1, 2, 3)), (1, 1), mode="foo")),
    ("pixel_shuffle_channels", lambda m, Fm: Fm.pixel_shuffle(m.tensor(_arr(1, 7, 2, 2)), 2)),
    ("pixel_unshuffle_height", lambda m, Fm: Fm.pixel_unshuffle(m.tensor(_arr(1, 1, 3, 3)), 2)),
    ("interpolate_no_size", lambda m, Fm: Fm.interpolate(m.tensor(_arr(1, 1, 3, 3)), mode="bilinear")),
    ("interpolate_both", lambda m, Fm: Fm.interpolate(m.tensor(_arr(1, 1, 3, 3)), size=4, scale_factor=2)),
    ("interpolate_dims", lambda m, Fm: Fm.interpolate(m.tensor(_arr(1, 1, 3)), size=4, mode="bilinear")),
    ("interpolate_align", lambda m, Fm: Fm.interpolate(m.tensor(_arr(1, 1, 3)), size=4, align_corners=True)),
    ("unpool_index", lambda m, Fm: Fm.max_unpool2d(m.tensor(_arr(1, 1, 2, 2)),
                                                   m.tensor(np.array([[[[0, 1], [2, 99]]]])), 2)),
]


@pytest.mark.parametrize("name,call", ERROR_CASES, ids=[c[0] for c in ERROR_CASES])
def test_errors_use_torchs_wording(torch, name, call):
    with pytest.raises(Exception) as ref:
        call(torch, torch.nn.functional)
    with pytest.raises(type(ref.value)) as ours:
        call(tapegrad, F)
    expected = str(ref.value).replace("torch.", "tapegrad.")
    assert expected in str(ours.value), f"{name}: {ours.value!s} does not contain torch's message {expected!r}"


@pytest.mark.parametrize("shape,scale", [((1, 2, 4), 1.2), ((1, 2, 3), 2.3), ((1, 1, 2, 3, 2), (1.2, 2.3, 2.0))])
def test_nearest_1d_3d_scaled_gradient_is_the_derivative_of_the_output(torch, shape, scale):
    """torch's nearest 1d/3d backward disagrees with its own forward for these scales (legacy index shortcuts);
    tapegrad's values equal torch's and its gradient is the true derivative of those values."""
    x = np.random.default_rng(4).standard_normal(shape)
    ours = F.interpolate(tapegrad.tensor(x), scale_factor=scale)
    np.testing.assert_array_equal(ours.numpy(), torch.nn.functional.interpolate(torch.tensor(x), scale_factor=scale))
    fn = lambda t: F.interpolate(t, scale_factor=scale)
    assert tapegrad.autograd.gradcheck(fn, (tapegrad.tensor(x, requires_grad=True),))
    assert tapegrad.autograd.gradgradcheck(fn, (tapegrad.tensor(x, requires_grad=True),))
