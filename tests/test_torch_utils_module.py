"""``torch._utils``: flattening tensors into one buffer and back (model-parallel and data-parallel code imports
these), device indices and the rebuild functions pickles name, against torch."""

import pytest
import torch

import tapegrad
import tapegrad._utils as U


def _parts(m):
    return [m.arange(6., requires_grad=True).view(2, 3).t(), m.ones(2, requires_grad=True) * 2, m.empty(0, 3),
            m.arange(4.).view(2, 2)]


def test_flatten_unflatten_values_and_gradients():
    def run(m, utils):
        parts = _parts(m)
        flat = utils._flatten_dense_tensors(parts)
        back = utils._unflatten_dense_tensors(flat * 3, parts)
        (flat * m.arange(float(flat.numel()))).sum().backward()
        leaf = parts[0]._base if m is torch else None
        return (flat.tolist(), flat.requires_grad, type(back).__name__, [tuple(b.shape) for b in back],
                [b.tolist() for b in back], [b.is_contiguous() for b in back], leaf is not None)
    got, want = run(tapegrad, U), run(torch, torch._utils)
    assert got[:6] == want[:6]


def test_flatten_one_and_none():
    a = tapegrad.arange(6.).view(2, 3).t()
    ta = torch.arange(6.).view(2, 3).t()
    assert U._flatten_dense_tensors([a]).tolist() == torch._utils._flatten_dense_tensors([ta]).tolist()
    with pytest.raises(ValueError) as got:
        U._flatten_dense_tensors([])
    with pytest.raises(ValueError) as want:
        torch._utils._flatten_dense_tensors([])
    assert str(got.value).replace("tapegrad", "torch") == str(want.value)


def test_flatten_gradcheck():
    a = tapegrad.rand(2, 3, dtype=tapegrad.float64, requires_grad=True)
    b = tapegrad.rand(4, dtype=tapegrad.float64, requires_grad=True)

    def f(x, y):
        flat = U._flatten_dense_tensors([x.t(), y])
        p, q = U._unflatten_dense_tensors(flat.sin(), [x.t(), y])
        return p.sum(0) * q[:2].sum() + q.prod()
    assert tapegrad.autograd.gradcheck(f, (a, b))


@pytest.mark.parametrize("args", [("cuda:1",), ("cpu",), ("cuda",), ("cuda", True), ("cpu", False, True), (3,)])
def test_get_device_index(args):
    def run(m, utils):
        a = (m.device(args[0]) if isinstance(args[0], str) and len(args) == 3 else args[0],) + args[1:]
        try:
            return utils._get_device_index(*a)
        except ValueError as e:
            return str(e)
    assert run(tapegrad, U) == run(torch, torch._utils)


def test_element_size_and_rebuild_names():
    for d in ("float16", "float32", "int64", "bool", "complex64"):
        assert U._element_size(getattr(tapegrad, d)) == torch._utils._element_size(getattr(torch, d))
    for name in ("_rebuild_tensor_v2", "_rebuild_parameter", "_rebuild_sparse_tensor"):
        assert callable(getattr(U, name)) and hasattr(torch._utils, name)
    assert U._import_dotted_name("tapegrad.nn.Linear") is tapegrad.nn.Linear

    class A:
        @U.classproperty
        def name(cls):
            return cls.__name__
    assert A.name == "A"
