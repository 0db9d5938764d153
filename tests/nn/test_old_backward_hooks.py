"""``Module.register_backward_hook`` (the old-style hook, deprecated in torch but still in tutorials) against
torch: it hooks the grad_fn of the forward's output, so ``grad_input`` is what that last op's tensor inputs get
(a Conv2d's input, weight and bias; a Sequential's last layer's), returning new ones replaces them, torch's
FutureWarnings say when that differs from the module's inputs, and full and old-style hooks do not mix."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tapegrad


def _program(lib, make, x_grad):
    lib.manual_seed(3)
    net = make(lib)
    seen = []

    def hook(module, grad_input, grad_output):
        seen.append((type(module).__name__, [None if g is None else g.detach().numpy().copy() for g in grad_input],
                     [g.detach().numpy().copy() for g in grad_output]))
    net.register_backward_hook(hook)
    x = lib.randn(2, 1, 4, 4, requires_grad=x_grad)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        out = net(x)
    (out * out).sum().backward()
    return seen, [str(m.message) for m in w if m.category is FutureWarning], x.grad


def _conv(lib):
    return lib.nn.Conv2d(1, 2, 3)


def _seq(lib):
    return lib.nn.Sequential(lib.nn.Conv2d(1, 2, 3), lib.nn.ReLU(), lib.nn.Flatten(), lib.nn.Linear(8, 3))


def _relu(lib):
    return lib.nn.ReLU()


@pytest.mark.parametrize("make, x_grad", [(_conv, False), (_conv, True), (_seq, False), (_seq, True), (_relu, True)])
def test_old_style_hook_sees_the_last_nodes_gradients(torch, make, x_grad):
    (ours, w1, g1), (theirs, w2, g2) = _program(tapegrad, make, x_grad), _program(torch, make, x_grad)
    assert w1 == w2
    assert len(ours) == len(theirs) == 1
    (n1, gi1, go1), (n2, gi2, go2) = ours[0], theirs[0]
    assert n1 == n2 and len(go1) == len(go2)
    if make is not _seq:          # (a Linear's weight gradient comes through torch's TBackward0 as its transpose)
        assert len(gi1) == len(gi2)
        for a, b in zip(gi1, gi2):
            assert (a is None) == (b is None)
            if a is not None:
                np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    for a, b in zip(go1, go2):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    assert (g1 is None) == (g2 is None)


def _guided(lib):
    lib.manual_seed(0)
    relu = lib.nn.ReLU()
    relu.register_backward_hook(lambda m, gi, go: (lib.clamp(gi[0], min=0.0),))
    x = lib.randn(5, requires_grad=True)
    (relu(x) * lib.tensor([1.0, -1.0, 2.0, -2.0, 3.0])).sum().backward()
    return x.grad.numpy()


@pytest.mark.filterwarnings("ignore:Using a non-full backward hook:FutureWarning")
def test_old_style_hook_replaces_the_gradient(torch):
    np.testing.assert_array_equal(_guided(tapegrad), _guided(torch))


def test_full_and_old_style_hooks_do_not_mix(torch):
    for lib in (tapegrad, torch):
        m = lib.nn.Linear(2, 2)
        m.register_backward_hook(lambda *a: None)
        with pytest.raises(RuntimeError, match="Cannot use both regular backward hooks and full backward hooks"):
            m.register_full_backward_hook(lambda *a: None)
        m = lib.nn.Linear(2, 2)
        m.register_full_backward_hook(lambda *a: None)
        with pytest.raises(RuntimeError, match="Cannot use both regular backward hooks and full backward hooks"):
            m.register_backward_hook(lambda *a: None)
