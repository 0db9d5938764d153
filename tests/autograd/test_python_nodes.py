"""The nodes of Python Functions and the hooks of nodes, against torch: ``grad_fn.apply(*grads)`` calls the
Function's own backward by hand (as pytorch-book's autograd chapter does), such a node prints with torch's module
path, a node hook sees one gradient per edge of ``next_functions`` (none for an op's non-tensor arguments), and
``set_grad_enabled(...)`` shows as torch shows it in a notebook."""

from __future__ import annotations

import re

import numpy as np
import pytest

import tapegrad


def _mul_add(lib):
    class MulAdd(lib.autograd.Function):
        @staticmethod
        def forward(ctx, w, x, b):
            ctx.save_for_backward(w, x)
            return w * x + b

        @staticmethod
        def backward(ctx, grad):
            w, x = ctx.saved_tensors
            return grad * x, grad * w, grad * 1
    return MulAdd


def _apply_by_hand(lib):
    w = lib.tensor([0.5, -2.0], dtype=lib.float64, requires_grad=True)
    x = lib.tensor([3.0, 0.25], dtype=lib.float64)
    b = lib.tensor([1.0, 1.0], dtype=lib.float64, requires_grad=True)
    z = _mul_add(lib).apply(w, x, b)
    out = z.grad_fn.apply(lib.tensor([1.0, 2.0], dtype=lib.float64))
    return z, out


def test_python_node_apply_calls_its_backward(torch):
    (z1, ours), (z2, theirs) = _apply_by_hand(tapegrad), _apply_by_hand(torch)
    assert isinstance(ours, tuple) and len(ours) == len(theirs) == 3
    for a, b in zip(ours, theirs):
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
        assert a.requires_grad == b.requires_grad      # grad mode is on: grad * w records
        assert (a.grad_fn is None) == (b.grad_fn is None)
    assert z1.grad_fn.name() == z2.grad_fn.name() == "MulAddBackward"


def _addr(s):
    return re.sub(r"0x[0-9a-f]+", "0x?", s)


def test_python_node_repr_and_builtin_node_repr(torch):
    (z1, _), (z2, _) = _apply_by_hand(tapegrad), _apply_by_hand(torch)
    assert _addr(repr(z1.grad_fn)).replace("tapegrad.", "torch.") == _addr(repr(z2.grad_fn))
    assert _addr(repr((z1 * 2).grad_fn)) == _addr(repr((z2 * 2).grad_fn)) == "<MulBackward0 object at 0x?>"


def test_python_node_apply_with_backward_and_vjp_is_refused():
    class Both(tapegrad.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

        @staticmethod
        def vjp(ctx, g):
            return g * 2
    y = Both.apply(tapegrad.ones(2, requires_grad=True))
    with pytest.raises(RuntimeError, match="Implementing both 'backward' and 'vjp'"):
        y.grad_fn.apply(tapegrad.ones(2))


def _node_hook_log(lib):
    lib.manual_seed(0)
    log = []

    def hook(gi, go):
        log.append(([None if g is None else g.detach().numpy().copy() for g in gi], [g.shape for g in go]))
    conv = lib.nn.Conv2d(1, 2, 2)
    y = conv(lib.ones(1, 1, 3, 3))              # conv's stride/padding/... are not edges
    y.grad_fn.register_hook(hook)
    y.sum().backward()
    x = lib.arange(6.0, requires_grad=True)
    v = x.view(2, 3)                            # view's shape is not an edge
    v.grad_fn.register_hook(hook)
    (v * v).sum().backward()
    p = lib.tensor([1.0, 2.0], requires_grad=True)
    q = p.clamp(min=1.5)                        # nor is a clamp bound; a returned gradient replaces it
    q.grad_fn.register_hook(lambda gi, go: (gi[0] * 10,))
    q.sum().backward()
    return log, p.grad.numpy()


def test_node_hooks_see_one_gradient_per_edge(torch):
    (ours, pg1), (theirs, pg2) = _node_hook_log(tapegrad), _node_hook_log(torch)
    assert len(ours) == len(theirs) == 2
    for (gi1, go1), (gi2, go2) in zip(ours, theirs):
        assert len(gi1) == len(gi2)
        assert [tuple(s) for s in go1] == [tuple(s) for s in go2]
        for a, b in zip(gi1, gi2):
            assert (a is None) == (b is None)
            if a is not None:
                np.testing.assert_allclose(a, b, rtol=1e-6)
    np.testing.assert_array_equal(pg1, pg2)


def test_set_grad_enabled_shows_its_mode(torch):
    for lib in (tapegrad, torch):
        was = lib.is_grad_enabled()
        try:
            shown = [repr(lib.set_grad_enabled(False)), str(lib.set_grad_enabled(True))]
        finally:
            lib.set_grad_enabled(was)
        shown = [s.replace("tapegrad.", "torch.") for s in shown]
        assert shown == ["torch.autograd.grad_mode.set_grad_enabled(mode=False)",
                         "torch.autograd.grad_mode.set_grad_enabled(mode=True)"]
    assert tapegrad.set_grad_enabled(True).mode is True


def _saved_variables(lib):
    x = lib.ones(2, requires_grad=True)
    out = []
    try:
        (x * 3).grad_fn.saved_variables
    except AttributeError as e:
        out.append(str(e))

    class Twice(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * 2

        @staticmethod
        def backward(ctx, g):
            out.append(ctx.saved_variables[0].tolist())
            return g * 2
    y = Twice.apply(x)
    out.append(y.grad_fn.saved_variables[0].tolist())
    y.sum().backward()
    return out


def test_saved_variables_only_on_python_function_nodes(torch):
    import warnings
    with warnings.catch_warnings(record=True) as w1:
        warnings.simplefilter("always")
        ours = _saved_variables(tapegrad)
    with warnings.catch_warnings(record=True) as w2:
        warnings.simplefilter("always")
        theirs = _saved_variables(torch)
    assert ours == theirs == ["'MulBackward0' object has no attribute 'saved_variables'", [1.0, 1.0], [1.0, 1.0]]
    deprecations = [[str(w.message) for w in ws if w.category is DeprecationWarning] for ws in (w1, w2)]
    assert deprecations[0] == deprecations[1] == ["'saved_variables' is deprecated; use 'saved_tensors'"] * 2
