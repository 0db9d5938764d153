"""The index ops' argument checks against torch: every index dtype (int64, int32, int16, int8, uint8, bool, float)
in every shape (non-empty, empty, 2-d, empty 2-d) for gather, scatter, scatter_add, index_select, index_add,
index_fill, index_copy, take, put and take_along_dim — torch's result or torch's error class and words; and
their gradients with repeated and negative indices."""

import pytest

from pairs import same

OPS = {
    "gather": "torch.gather(x, 1, i)",
    "scatter": "torch.scatter(x, 1, i, 1.)",
    "scatter_add": "torch.scatter_add(x, 1, i, torch.ones(i.shape))",
    "index_select": "torch.index_select(x, 1, i)",
    "index_add": "torch.index_add(x, 1, i, torch.ones(2, i.numel()))",
    "index_fill": "torch.index_fill(x, 1, i, 1.)",
    "index_copy": "torch.index_copy(x, 1, i, torch.ones(2, i.numel()))",
    "take": "torch.take(x, i)",
    "put": "torch.put(x, i, torch.ones(i.shape))",
    "take_along_dim": "torch.take_along_dim(x, i, 1)",
    "take_along_dim_flat": "torch.take_along_dim(x, i)",
}
DTYPES = ["long", "int32", "int16", "int8", "uint8", "bool", "float32"]
SHAPES = ["(2, 1)", "(2, 0)", "(0,)", "(1,)", "(2,)"]


@pytest.mark.parametrize("op", sorted(OPS))
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_index_dtype_and_shape_checks(torch, op, dtype, shape):
    same(torch, f"x = torch.arange(6.).reshape(2, 3); i = torch.zeros({shape}, dtype=torch.{dtype})", OPS[op])


INDEX_CASES = [
    # negative and out-of-range indices: each op's own rule
    ("x = torch.arange(6.).reshape(2, 3)", "torch.take_along_dim(x, torch.tensor([[-1], [0]]), 1)"),
    ("x = torch.arange(6.).reshape(2, 3)", "torch.take_along_dim(x, torch.tensor([[-4], [-6]]), 1)"),
    ("x = torch.arange(6.).reshape(2, 3)", "torch.take_along_dim(x, torch.tensor([[3], [5]]), 1)"),
    ("x = torch.arange(6.).reshape(2, 3)", "torch.take_along_dim(x, torch.tensor([[-1], [-3]]), 0)"),
    ("x = torch.arange(6.).reshape(2, 3)", "torch.take_along_dim(x, torch.tensor([[-1], [-3]]))"),
    ("x = torch.arange(6.).reshape(2, 3)", "torch.take_along_dim(x, torch.tensor([5, 6]))"),
    ("x = torch.arange(6.).reshape(2, 3)", "torch.take_along_dim(x, torch.tensor([[0, 1]]), 0)"),
    ("x = torch.arange(6.).reshape(2, 3)", "torch.take_along_dim(x, torch.tensor([[[0]]]), 0)"),
    ("x = torch.arange(6.).reshape(2, 3)", "torch.gather(x, 1, torch.tensor([[-1], [0]]))"),
    ("x = torch.arange(6.).reshape(2, 3)", "torch.gather(x, 1, torch.tensor([[3], [0]]))"),
    ("x = torch.arange(6.).reshape(2, 3)", "torch.take(x, torch.tensor([-1, -6]))"),
    ("x = torch.arange(6.).reshape(2, 3)", "torch.take(x, torch.tensor([-7]))"),
    ("x = torch.arange(6.).reshape(2, 3)", "torch.index_select(x, 1, torch.tensor([-1, 0]))"),
    ("x = torch.arange(6.).reshape(2, 3)", "torch.index_select(x, 1, torch.tensor([3]))"),
    ("x = torch.arange(6.).reshape(2, 3)", "torch.index_fill(x, 1, torch.tensor([-1]), 7.)"),
    ("x = torch.arange(6.).reshape(2, 3)", "torch.index_fill(x, 1, torch.tensor([-4]), 7.)"),
    ("x = torch.arange(6.).reshape(2, 3)", "torch.index_add(x, 1, torch.tensor([-1]), torch.ones(2, 1))"),
    ("x = torch.arange(6.).reshape(2, 3)", "torch.index_copy(x, 1, torch.tensor([3]), torch.ones(2, 1))"),
    ("x = torch.arange(6.).reshape(2, 3)", "torch.scatter(x, 1, torch.tensor([[-1], [0]]), 9.)"),
    ("x = torch.arange(6.).reshape(2, 3)", "torch.put(x, torch.tensor([-1]), torch.tensor([9.]))"),
    # repeated indices: the gradient of each op (index_fill's value counts each filled slot once)
    ("x = torch.ones(3, 4, requires_grad=True); v = torch.tensor(2., requires_grad=True); "
     "x.index_fill(1, torch.tensor([1, 1]), v).sum().backward()", "(x.grad, v.grad)"),
    ("x = torch.ones(3, 4, requires_grad=True); v = torch.tensor(2., requires_grad=True); "
     "x.index_fill(1, torch.tensor([1, -3, 3]), v).sum().backward()", "(x.grad, v.grad)"),
    ("x = torch.ones(3, 4, requires_grad=True); x.index_fill(1, torch.tensor([2, 2]), 0.).sum().backward()",
     "x.grad"),
    ("x = torch.ones(3, 4, requires_grad=True); v = torch.tensor(2., requires_grad=True); "
     "(x.index_fill(0, torch.tensor([0, 0, 2]), v) * torch.arange(12.).reshape(3, 4)).sum().backward()",
     "(x.grad, v.grad)"),
    ("x = torch.ones(3, 4, requires_grad=True); s = torch.ones(3, 2, requires_grad=True); "
     "x.index_add(1, torch.tensor([1, 1]), s).sum().backward()", "(x.grad, s.grad)"),
    ("x = torch.ones(5, requires_grad=True); s = torch.tensor([1., 2.], requires_grad=True); "
     "x.scatter_add(0, torch.tensor([1, 1]), s).sum().backward()", "(x.grad, s.grad)"),
    ("x = torch.ones(5, requires_grad=True); "
     "x.index_put((torch.tensor([1, 1]),), torch.tensor([5., 6.]), accumulate=True).sum().backward()", "x.grad"),
    ("x = torch.ones(5, requires_grad=True); x.put(torch.tensor([1, 1]), torch.tensor([5., 6.]), "
     "accumulate=True).sum().backward()", "x.grad"),
    ("x = torch.ones(5, requires_grad=True); s = torch.tensor([5., 6.], requires_grad=True); "
     "x.put(torch.tensor([1, -1]), s).sum().backward()", "(x.grad, s.grad)"),
    ("x = torch.ones(5, requires_grad=True); (x.take(torch.tensor([1, 1, -1])) * torch.tensor([1., 2., 3.]))"
     ".sum().backward()", "x.grad"),
    ("x = torch.arange(6.).reshape(2, 3).requires_grad_(); "
     "torch.take_along_dim(x, torch.tensor([[-1, 2], [0, 0]]), 1).sum().backward()", "x.grad"),
    ("x = torch.arange(6.).reshape(2, 3).requires_grad_(); "
     "torch.gather(x, 1, torch.tensor([[2, 2], [0, 0]])).sum().backward()", "x.grad"),
    ("x = torch.arange(6.).reshape(2, 3).requires_grad_(); "
     "torch.index_select(x, 1, torch.tensor([2, 2, 0])).sum().backward()", "x.grad"),
    ("x = torch.ones(3, 4, requires_grad=True); m = torch.tensor([True, False, True, False]); "
     "v = torch.tensor(3., requires_grad=True); x.masked_fill(m, v).sum().backward()", "(x.grad, v.grad)"),
]


@pytest.mark.parametrize("setup,expr", INDEX_CASES, ids=[e[:60] + " " + s[-50:] for s, e in INDEX_CASES])
def test_index_values_and_gradients(torch, setup, expr):
    same(torch, setup, expr)


ZERO_DIM_KEYS = ["0", "-1", "5", "np.int64(0)", "np.int64(2)", ":", "0:1", "::-1", "None", "...", "None, 0", "True",
                 "False", "torch.tensor(0)", "torch.tensor([0])", "[0]", "0, 0", "..., 0", "(0,)", "(slice(None),)",
                 "torch.tensor(True)"]


@pytest.mark.parametrize("key", ZERO_DIM_KEYS)
@pytest.mark.parametrize("rg", [False, True])
def test_indexing_a_0d_tensor_as_torch(torch, key, rg):
    # a lone int or slice has torch's own words (`loss.data[0]`, the pre-0.4 way to read a loss, names item())
    setup = f"x = torch.tensor(1.5, requires_grad={rg})"
    same(torch, setup, f"x[{key}]")
    same(torch, setup + f"\ny = x.detach().clone()\ny[{key}] = 5.", "y")
