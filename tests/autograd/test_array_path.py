"""The engine's array path: without create_graph, ops declared ``array_backward`` run their backward formula on
ndarrays. Whatever path a node takes, users see the same gradients, as Tensors, as PyTorch gives them."""

import numpy as np
import pytest

import tapegrad
from tapegrad.autograd import Function


def leaf(v, **kw):
    return tapegrad.tensor(v, requires_grad=True, **kw)


def _graph(x, w):
    """A graph mixing array-path ops (mul, add, tanh, sigmoid, exp, matmul, sum, mean, log_softmax, nll) and
    ops whose backward needs Tensors (sin, cumsum)."""
    h = tapegrad.tanh(x @ w + 0.5) * tapegrad.sigmoid(x).sum(1, keepdim=True)
    h = h + tapegrad.sin(h).cumsum(1) + tapegrad.exp(-h * h)
    return tapegrad.nn.functional.cross_entropy(h, tapegrad.tensor([0, 2, 1])) + h.mean()


def test_array_path_gives_the_same_gradients_as_the_tensor_path():
    rng = np.random.default_rng(0)
    xv, wv = rng.standard_normal((3, 4)), rng.standard_normal((4, 3))
    x1, w1 = leaf(xv), leaf(wv)
    _graph(x1, w1).backward()                       # array path
    x2, w2 = leaf(xv), leaf(wv)
    _graph(x2, w2).backward(create_graph=True)      # Tensor path (the backward is recorded)
    np.testing.assert_allclose(x1.grad.numpy(), x2.grad.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(w1.grad.numpy(), w2.grad.detach().numpy(), rtol=1e-12)
    assert type(x1.grad) is tapegrad.Tensor and x1.grad.grad_fn is None and x2.grad.grad_fn is not None


def test_autograd_grad_and_hooks_see_tensors():
    x = leaf([1.0, 2.0])
    seen = []
    y = x * 3
    y.register_hook(lambda g: seen.append(type(g)))
    z = tapegrad.tanh(y)
    z.retain_grad()
    (gx,) = tapegrad.autograd.grad(z.sum(), x, retain_graph=True)
    assert type(gx) is tapegrad.Tensor and seen == [tapegrad.Tensor]
    z.sum().backward()
    assert type(z.grad) is tapegrad.Tensor and type(x.grad) is tapegrad.Tensor
    np.testing.assert_allclose(x.grad.numpy(), gx.numpy())


def test_one_gradient_sent_to_two_leaves_gives_two_independent_grads():
    a, b = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    (a + b).sum().backward()        # AddBackward0 passes the same array to both inputs
    assert not np.shares_memory(a.grad.numpy(), b.grad.numpy())
    a.grad.add_(1)
    assert b.grad.tolist() == [1.0, 1.0]


def test_grad_of_a_0d_chain_is_a_0d_tensor():
    x = leaf(0.5, dtype=tapegrad.float32)
    y = x
    for _ in range(5):
        y = tapegrad.exp(y * 0.5) + x
    y.backward()
    assert x.grad.shape == () and x.grad.dtype == tapegrad.float32 and isinstance(x.grad.numpy(), np.ndarray)


def test_saved_tensors_are_tensors_again_after_an_array_backward():
    x = leaf([1.0, 2.0])
    y = x * x
    y.sum().backward(retain_graph=True)
    saved = y.grad_fn.saved_tensors
    assert all(type(s) is tapegrad.Tensor for s in saved)


def test_a_user_function_in_the_array_walk_gets_tensors():
    class Double(Function):
        @staticmethod
        def forward(ctx, t):
            return t * 2

        @staticmethod
        def backward(ctx, g):
            assert type(g) is tapegrad.Tensor
            return g * 2

    x = leaf([1.0, 2.0])
    tapegrad.exp(Double.apply(x * 1.5)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 3 * np.exp(3 * np.array([1.0, 2.0])))


def test_the_array_path_keeps_torch_errors():
    x = leaf([1.0, 2.0])
    y = tapegrad.exp(x)
    loss = y.sum()
    y.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss.backward()
    z = (x * 2).sum()
    z.backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        z.backward()


# --- a gradient array that only the walk holds is reused in place (ReluBackward masks it, no new array) --------
def _relu_graphs(T, x1, x2):
    """Graphs where one gradient array could reach two relu nodes, or a view of it, or a user's own tensor."""
    relu = T.nn.functional.relu
    a, b = relu(x1), relu(x2)
    shared = ((a + b) * 3).sum()                 # add's backward sends one (writeable) array to both relus
    viewed = (relu(x1.reshape(2, 3)).reshape(6) * 2).sum() + relu(x2).sum()   # a view of a gradient on the way
    fanned = (relu(x1) * relu(x1)).sum()         # two gradients meet on x1
    return shared, viewed, fanned


def test_reused_gradient_arrays_give_torch_gradients(torch):
    rng = np.random.default_rng(3)
    v1, v2 = rng.standard_normal(6), rng.standard_normal(6)
    for k in range(3):
        x1, x2 = leaf(v1), leaf(v2)
        t1 = torch.tensor(v1, requires_grad=True)
        t2 = torch.tensor(v2, requires_grad=True)
        _relu_graphs(tapegrad, x1, x2)[k].backward()
        _relu_graphs(torch, t1, t2)[k].backward()
        np.testing.assert_array_equal(x1.grad.numpy(), t1.grad.numpy())
        if t2.grad is not None:
            np.testing.assert_array_equal(x2.grad.numpy(), t2.grad.numpy())


def test_a_gradient_someone_else_holds_is_not_written_into():
    x = leaf([-1.0, 2.0, -3.0, 4.0])
    y = tapegrad.relu(x)
    g = tapegrad.tensor([1.0, 2.0, 3.0, 4.0])
    y.backward(g, retain_graph=True)              # the user's gradient tensor: read, never changed
    assert g.tolist() == [1.0, 2.0, 3.0, 4.0]
    assert x.grad.tolist() == [0.0, 2.0, 0.0, 4.0]
    y.backward(g)                                 # and the second walk over the same graph agrees
    assert x.grad.tolist() == [0.0, 4.0, 0.0, 8.0]


def test_a_gradient_captured_by_autograd_grad_is_not_written_into():
    x = leaf([-1.0, 2.0])
    h = x * 3
    y = tapegrad.relu(h)
    gh, gx = tapegrad.autograd.grad(y.sum() * 2, (h, x))   # h's gradient is captured where relu's is made
    assert gh.tolist() == [0.0, 2.0] and gx.tolist() == [0.0, 6.0]
    gy, = tapegrad.autograd.grad((tapegrad.relu(x * 1) * 5).sum(), (x,))
    assert gy.tolist() == [0.0, 5.0]


def test_reuse_happens_where_nobody_else_holds_the_array(monkeypatch):
    from tapegrad.autograd.function import OWN_GRAD
    from tapegrad.ops.elementwise import Relu
    seen = []
    backward = Relu.backward

    def spy(ctx, grad):
        seen.append(ctx._arrays is OWN_GRAD)
        return backward(ctx, grad)
    monkeypatch.setattr(Relu, "backward", staticmethod(spy))
    w = tapegrad.ones(3, 2, requires_grad=True)
    tapegrad.relu(tapegrad.ones(4, 3) @ w).sum().backward()     # sum's backward expands: a view, not reused
    (tapegrad.relu(tapegrad.ones(4, 3) @ w) @ tapegrad.ones(2, 1)).sum().backward()   # matmul's fresh array
    assert seen == [False, True]
