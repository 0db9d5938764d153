"""tapegrad.compile's inline kernels for a training step's hot ops (kernels.py: linear's addmm / mm, relu,
log_softmax, nll_loss): compiled == eager bitwise (values and every gradient), in float32 and float64, with and
without a bias, for each requires_grad combination; the cases they do not take (a broadcast bias, ignored or
out-of-range targets, class weights) run the op's own code and still match; double backward reruns eagerly."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import tapegrad
import tapegrad.nn.functional as F


def _t(shape, dtype, rg, seed, scale=1.0):
    a = np.random.default_rng(seed).standard_normal(shape) * scale
    return tapegrad.tensor(a, dtype=dtype, requires_grad=rg)


def _run(fn, args, retain=False):
    for a in args:
        if isinstance(a, tapegrad.Tensor):
            a.grad = None
    out = fn(*args)
    if out.requires_grad:
        out.backward(retain_graph=retain)
        if retain:
            out.backward()
    grads = [a.grad.numpy().copy() if isinstance(a, tapegrad.Tensor) and a.grad is not None else None
             for a in args]
    return out.detach().numpy().copy(), grads


def _same(fn, args, kernels=(), retain=False, replayed=True):
    """fn compiled == fn eager, bitwise, on two replays; ``kernels``: names the generated forward must call.
    ``replayed=False``: a capture that meets a graph break (then the calls run eagerly)."""
    ref = _run(fn, args, retain)
    cf = tapegrad.compile(fn)
    cf(*args)                                          # (the capture)
    for _ in range(2):
        got = _run(cf, args, retain)
        np.testing.assert_array_equal(got[0], ref[0])
        assert got[0].dtype == ref[0].dtype
        for g, r in zip(got[1], ref[1]):
            assert (g is None) == (r is None)
            if r is not None:
                np.testing.assert_array_equal(g, r)
                assert g.dtype == r.dtype
    entry = cf.entries[0]
    assert entry.eager is not replayed and entry.calls == 2
    for k in kernels:
        assert k in entry.sources[0], (k, entry.sources[0])
    return entry


DTYPES = (tapegrad.float32, tapegrad.float64)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("rg", list(itertools.product([True, False], repeat=3)))
def test_mlp_loss_bitwise(dtype, bias, rg):
    x = _t((16, 12), dtype, rg[0], 0)
    w1, w2 = _t((20, 12), dtype, rg[1], 1, 0.3), _t((5, 20), dtype, rg[1], 2, 0.3)
    b1, b2 = (_t((20,), dtype, rg[2], 3), _t((5,), dtype, rg[2], 4)) if bias else (None, None)
    y = tapegrad.tensor(np.random.default_rng(5).integers(0, 5, 16))

    def f(x, w1, b1, w2, b2, y):
        return F.cross_entropy(F.linear(F.relu(F.linear(x, w1, b1)), w2, b2), y)

    _same(f, (x, w1, b1, w2, b2, y), kernels=("_Z16_20_", "_lsm(", "_nll(", ".T"))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", ["mean", "sum"])
def test_log_softmax_nll_and_retain_graph(dtype, reduction):
    x = _t((9, 7), dtype, True, 0, 4.0)
    y = tapegrad.tensor(np.random.default_rng(1).integers(0, 7, 9).astype(np.int32))

    def f(x, y):          # the log-probabilities are read twice: their gradient is not the kernel's own array
        lp = F.log_softmax(x * 1.5, dim=1)
        return F.nll_loss(lp, y, reduction=reduction) + (lp * lp).sum()

    # twice backward (retain_graph): the kernels write into gradients only, never into what backward keeps
    _same(f, (x, y), kernels=("_lsm(", "_nll("), retain=True)


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_log_softmax_any_dim_3d(dim):
    x = _t((4, 3, 5), tapegrad.float64, True, 0)
    _same(lambda x: (F.log_softmax(x, dim) * x).sum(), (x,), kernels=("_lsm(",))


@pytest.mark.parametrize("shape", [(7,), (5, 6), (128, 256), (3, 10000), (2, 3, 4), (600, 500)])
def test_relu_shapes_in_place_and_not(shape):
    """Up to 2**18 elements a static relu is ``maximum`` against zeros of its shape (past ``_max0``'s block, only
    on a C-contiguous operand); larger ones run ``_max0`` / ``_relu_`` (its blocks, in place)."""
    x = _t(shape, tapegrad.float32, True, 0)
    x.data[(0,) * len(shape)] = float("nan")          # NaN passes through, its gradient is 1
    x.data[(1,) + (0,) * (len(shape) - 1)] = -0.0      # and -0.0 gives what eager's maximum gives
    c = _t(shape, tapegrad.float32, False, 2)
    big = np.prod(shape) > 1 << 18

    def fresh(x):          # relu of a fresh inline result: written in place; its output used twice, its
        r = F.relu(x + x)  # gradient finite at the NaN (masked in place: owned)
        return (r * c).sum() + r.sum()

    _same(fresh, (x,), kernels=("_relu_(v1)" if big else "_maximum(v1, _Z",))
    _same(lambda x: F.relu(x).sum(), (x,), kernels=("_max0(v0)" if big else "_maximum(v0, _Z",))  # a new array
    xt = _t(shape[::-1], tapegrad.float32, True, 1)
    xt.data.view(-1)[1] = -0.0
    _same(lambda x: F.relu(x.t() if x.dim() == 2 else x).sum(), (xt,))     # a non-contiguous operand
    r = F.relu(xt.t() if xt.dim() == 2 else xt)
    cf = tapegrad.compile(lambda x: F.relu(x.t() if x.dim() == 2 else x) * 1.0)
    cf(xt)
    got = cf(xt)
    assert np.array_equal(np.signbit(got.detach().numpy()), np.signbit(r.detach().numpy()))   # zeros' signs too


def test_linear_3d_input_and_shared_weight():
    x = _t((2, 3, 6), tapegrad.float64, True, 0)
    w, b = _t((6, 6), tapegrad.float64, True, 1), _t((6,), tapegrad.float64, True, 2)

    def f(x, w, b):       # the same weight twice: its gradients meet; the 3-d input goes through a view
        h = F.linear(x, w, b)
        return F.linear(F.relu(h), w).sum()

    _same(f, (x, w, b), kernels=(".T",))


@pytest.mark.parametrize("bias_shape", [(), (1, 5)])
def test_broadcast_bias_runs_the_op(bias_shape):
    x, w = _t((4, 3), tapegrad.float32, True, 0), _t((5, 3), tapegrad.float32, True, 1)
    b = _t(bias_shape, tapegrad.float32, True, 2)
    entry = _same(lambda x, w, b: F.linear(x, w, b).sum(), (x, w, b))
    assert " @ " not in entry.sources[0]          # not the addmm kernel: the op's own forward


def test_nll_cases_outside_the_kernel():
    x = _t((6, 4), tapegrad.float32, True, 0)
    y = tapegrad.tensor([0, -100, 3, 2, -100, 1])          # ignored targets: the op's own forward, called inline
    _same(lambda x, y: F.cross_entropy(x, y), (x, y), kernels=("_nll(",))
    y2 = tapegrad.tensor([0, 1, 3, 2, 1, 1])
    _same(lambda x, y: F.cross_entropy(x, y, ignore_index=1), (x, y2))               # a class ignored: no kernel
    wt = tapegrad.tensor([1.0, 2.0, 0.5, 1.0])
    # class weights: no kernel; NllLoss's own forward and backward, replayed (the weight is a traced tensor)
    _same(lambda x, y: F.cross_entropy(x, y, weight=wt), (x, y2))
    _same(lambda x, y: F.nll_loss(F.log_softmax(x, 1), y, weight=wt, reduction="sum"), (x, y))
    cf = tapegrad.compile(lambda x, y: F.cross_entropy(x, y))
    cf(x, y2)
    for bad in ([0, 1, 4, 2, 1, 1], [0, 1, -3, 2, 1, 1]):
        with pytest.raises(IndexError) as eager_err:
            F.cross_entropy(x, tapegrad.tensor(bad))
        with pytest.raises(IndexError) as err:
            cf(x, tapegrad.tensor(bad))
        assert str(err.value) == str(eager_err.value)
    assert cf.entries[0].calls == 2 and not cf.entries[0].eager


def test_double_backward_through_kernels():
    x = _t((5, 4), tapegrad.float64, True, 0)
    w, b = _t((3, 4), tapegrad.float64, True, 1), _t((3,), tapegrad.float64, True, 2)
    y = tapegrad.tensor([0, 2, 1, 1, 0])

    def f(x, w, b):
        return F.cross_entropy(F.relu(F.linear(x, w, b)) * 2.0, y)

    def gg(fn):
        (gx,) = tapegrad.autograd.grad(fn(x, w, b), (x,), create_graph=True)
        return tapegrad.autograd.grad((gx * gx).sum(), (w,))[0].numpy().copy()

    ref = gg(f)
    cf = tapegrad.compile(f)
    cf(x, w, b)
    np.testing.assert_allclose(gg(cf), ref, rtol=1e-12, atol=1e-15)
    assert "_nll(" in cf.entries[0].sources[0]


def test_generic_program_over_batch_sizes():
    """A generic (dynamic-shape) program uses the linear, relu and log_softmax kernels at every batch size (nll_loss
    runs its own op there: its kernel is for static programs); every size equals eager bitwise."""
    w1, b1 = _t((8, 6), tapegrad.float32, True, 1), _t((8,), tapegrad.float32, True, 2)
    w2 = _t((4, 8), tapegrad.float32, True, 3)

    def f(x, y):
        return F.cross_entropy(F.linear(F.relu(F.linear(x, w1, b1)), w2), y)

    cf = tapegrad.compile(f)
    rng = np.random.default_rng(0)
    for n in (4, 6, 9, 5, 13, 7):
        x = tapegrad.tensor(rng.standard_normal((n, 6)), dtype=tapegrad.float32)
        y = tapegrad.tensor(rng.integers(0, 4, n))
        for p in (w1, b1, w2):
            p.grad = None
        out_e = f(x, y)
        out_e.backward()
        ge = [p.grad.numpy().copy() for p in (w1, b1, w2)]
        for p in (w1, b1, w2):
            p.grad = None
        out_c = cf(x, y)
        out_c.backward()
        np.testing.assert_array_equal(out_c.detach().numpy(), out_e.detach().numpy())
        for p, g in zip((w1, b1, w2), ge):
            np.testing.assert_array_equal(p.grad.numpy(), g)
    generic = [e for e in cf.entries if e.prog.dyn is not None]
    assert len(generic) == 1 and generic[0].calls >= 2
    src = generic[0].sources[0]
    assert "_relu_(" in src and "_lsm(" in src and ".T" in src and "_nll(" not in src


def test_backend_print_lists_the_kernels(capsys):
    w, b = _t((5, 6), tapegrad.float32, True, 1), _t((5,), tapegrad.float32, True, 2)
    f = tapegrad.compile(lambda x, y: F.cross_entropy(F.relu(F.linear(x, w, b)), y), backend="print")
    f(_t((4, 6), tapegrad.float32, False, 0), tapegrad.tensor([0, 1, 4, 1]))
    out = capsys.readouterr().out
    for line in ("v5 = Relu(v4)", "v6 = LogSoftmax(v5, 1)", "g6 = g7 * v7m    # NllLossBackward0",
                 "g5 = g6 - exp(v6) * sum(g6, axis=1, keepdims=True)", "g4 = g5 * (v5 != 0)",
                 "g2 = sum(g4, axis=0); g3 = g4.T @ v0"):
        assert line in out, out
