"""``x.copy_(src)`` as torch's: a CopyBackwards node with an edge to x's old history and one to src; src gets the
gradient (summed over the broadcast, cast back to its dtype), x's old values a zero gradient; torch's errors."""

import numpy as np
import pytest


def _run(T, self_needs, src_shape, self_dtype):
    leaf_self = T.ones(2, 3, requires_grad=self_needs)
    leaf_src = T.tensor(np.arange(1.0, 1.0 + np.prod(src_shape)).reshape(src_shape), dtype=T.float32,
                        requires_grad=True)
    x = leaf_self * 1.0 if self_needs else T.zeros(2, 3, dtype=getattr(T, self_dtype))
    x.copy_(leaf_src * 2.0)
    node = x.grad_fn
    edges = [None if f is None else type(f).__name__ if T.__name__ == "torch" else f.name()
             for f, _ in node.next_functions]
    w = T.tensor(np.arange(6.0).reshape(2, 3), dtype=x.dtype)
    (x * w).sum().backward()
    return (type(node).__name__ if T.__name__ == "torch" else node.name(), edges, str(x.dtype).split(".")[-1],
            x.detach().numpy().tolist(), leaf_src.grad.numpy().tolist(), str(leaf_src.grad.dtype).split(".")[-1],
            None if leaf_self.grad is None else leaf_self.grad.numpy().tolist())


@pytest.mark.parametrize("self_needs", [False, True])
@pytest.mark.parametrize("src_shape", [(2, 3), (3,), (1, 3)])
@pytest.mark.parametrize("self_dtype", ["float32", "float64"])
def test_copy_graph_and_gradients_as_torch(torch, self_needs, src_shape, self_dtype):
    import tapegrad
    if self_needs and self_dtype == "float64":
        pytest.skip("x is float32 when it needs a gradient here")
    assert _run(tapegrad, self_needs, src_shape, self_dtype) == _run(torch, self_needs, src_shape, self_dtype)


@pytest.mark.parametrize("dst,src", [((2, 3), (4,)), ((3,), (2, 3))])
def test_copy_shape_errors_as_torch(torch, dst, src):
    import tapegrad
    msgs = []
    for T in (tapegrad, torch):
        with pytest.raises(RuntimeError) as e:
            T.zeros(*dst).copy_(T.ones(*src))
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]


def test_copy_gradcheck():
    import tapegrad
    src = tapegrad.randn(3, dtype=tapegrad.float64, requires_grad=True)
    base = tapegrad.randn(2, 3, dtype=tapegrad.float64, requires_grad=True)

    def f(b, s):
        x = b * 1.0
        x.copy_(s * 2.0)
        return x * b
    assert tapegrad.autograd.gradcheck(f, (base, src))
    assert tapegrad.autograd.gradgradcheck(f, (base, src))
