"""torch.utils.swap_tensors: contents swap, identities stay; against torch."""

import numpy as np
import pytest
import torch

import tapegrad


def _both(fn):
    return fn(torch), fn(tapegrad)


def test_swap_values_shapes_dtypes_and_identity():
    def run(lib):
        a = lib.arange(2)
        b = lib.tensor([[1.5, 2.5, 3.5]])
        ia, ib = id(a), id(b)
        lib.utils.swap_tensors(a, b)
        return (id(a) == ia, id(b) == ib, a.tolist(), b.tolist(), str(a.dtype).split(".")[-1],
                str(b.dtype).split(".")[-1], tuple(a.shape), tuple(b.shape))
    t, g = _both(run)
    assert t == g


def test_swap_parameters_classes_attributes_and_grad():
    def run(lib):
        p = lib.nn.Parameter(lib.tensor([1.0, 2.0]))
        q = lib.tensor([3.0, 4.0, 5.0])
        p.tag = "param"
        (p * 2).sum().backward()
        lib.utils.swap_tensors(p, q)
        out = (type(p).__name__, type(q).__name__, p.requires_grad, q.requires_grad, q.grad.tolist(),
               p.grad, getattr(q, "tag", None), getattr(p, "tag", None), q.is_leaf)
        (q * 3).sum().backward()          # a graph recorded after the swap works
        return out + (q.grad.tolist(),)
    t, g = _both(run)
    assert t == g


def test_optimizer_sees_swapped_parameter():
    def run(lib):
        m = lib.nn.Linear(2, 1, bias=False)
        opt = lib.optim.SGD(m.parameters(), lr=0.5)
        w = m.weight
        new = lib.nn.Parameter(lib.tensor([[1.0, -1.0]]))
        lib.utils.swap_tensors(m.weight, new)
        m(lib.tensor([[2.0, 3.0]])).sum().backward()
        opt.step()
        return opt.param_groups[0]["params"][0] is w, w.tolist()
    t, g = _both(run)
    assert t == g
    assert np.allclose(g[1], [[0.0, -2.5]])


def test_backward_through_graph_recorded_before_swap_raises():
    for lib in (torch, tapegrad):
        p = lib.nn.Parameter(lib.tensor([1.0, 2.0]))
        loss = (p * 2).sum()
        q = lib.nn.Parameter(lib.tensor([0.0, 0.0, 0.0]))
        lib.utils.swap_tensors(p, q)
        with pytest.raises(RuntimeError, match="poisoned by swap_tensors"):
            loss.backward()


def test_errors_as_torch():
    import weakref
    for lib in (torch, tapegrad):
        a, b = lib.zeros(2), lib.ones(2)
        r = weakref.ref(a)
        with pytest.raises(RuntimeError, match="Cannot swap t1 because it has weakref associated with it"):
            lib.utils.swap_tensors(a, b)
        del r
    with pytest.raises(TypeError):
        tapegrad.utils.swap_tensors(tapegrad.zeros(1), [1.0])
