"""The layout of reductions over a dim, of stack along an inner dim and of DataLoader batches when the input is
laid out non-row-major (a field read transposed from a MATLAB file, a permuted activation): torch writes each of
them row-major, so a following ``.view`` works there (an FNO's normaliser decoded a batch and viewed it)."""

import numpy as np
import pytest
import torch

import tapegrad


def _inputs(m):
    return {"perm3": m.arange(24.).reshape(4, 3, 2).permute(0, 2, 1),
            "t3": m.arange(60.).reshape(5, 4, 3).permute(2, 1, 0),
            "cl4": m.arange(360.).reshape(5, 4, 6, 3).permute(0, 3, 1, 2)}


REDUCTIONS = [
    ("sum", lambda x, d: x.sum(d)), ("sum_keep", lambda x, d: x.sum(d, keepdim=True)),
    ("mean", lambda x, d: x.mean(d)), ("nansum", lambda x, d: x.nansum(d)), ("prod", lambda x, d: x.prod(d)),
    ("std", lambda x, d: x.std(d)), ("var", lambda x, d: x.var(d)), ("var_mean", lambda x, d: torch_like(x).var_mean(x, d)[1]),
    ("std_mean0", lambda x, d: torch_like(x).std_mean(x, d)[0]), ("amax", lambda x, d: x.amax(d)), ("amin", lambda x, d: x.amin(d)),
    ("aminmax", lambda x, d: x.aminmax(dim=d)[1]), ("logsumexp", lambda x, d: x.logsumexp(d)),
    ("norm", lambda x, d: x.norm(dim=d)), ("norm1", lambda x, d: x.norm(p=1, dim=d)),
    ("vector_norm", lambda x, d: torch_like(x).linalg.vector_norm(x, 3, dim=d)),
    ("all", lambda x, d: (x > 20).all(d)), ("any", lambda x, d: (x > 20).any(d)),
    ("count_nonzero", lambda x, d: torch_like(x).count_nonzero(x - 20, d)),
    ("median", lambda x, d: x.median(d)[0]), ("argmax", lambda x, d: x.argmax(d)),
]


def _strides(t):
    """The strides of the dims longer than 1 (a size-1 dim's stride is free in NumPy's row-major arrays)."""
    return tuple(s for s, n in zip(t.stride(), t.shape) if n > 1)


def torch_like(x):
    return tapegrad if isinstance(x, tapegrad.Tensor) else torch


@pytest.mark.parametrize("name,fn", REDUCTIONS, ids=[r[0] for r in REDUCTIONS])
@pytest.mark.parametrize("inp", ["perm3", "t3", "cl4"])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_reduction_over_a_dim_is_row_major(name, fn, inp, dim):
    want = fn(_inputs(torch)[inp], dim)
    got = fn(_inputs(tapegrad)[inp], dim)
    assert _strides(got) == _strides(want)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)
    assert got.dtype == getattr(tapegrad, str(want.dtype).split(".")[1])
    got.view(-1)        # (row-major: a flat view exists, as in torch)


@pytest.mark.parametrize("inp", ["perm3", "t3", "cl4"])
@pytest.mark.parametrize("dim", [0, 1, 2, -1])
def test_stack_layout(inp, dim):
    def run(m):
        x = _inputs(m)[inp]
        return m.stack([x[0], x[1] * 2, x[2]], dim)
    want, got = run(torch), run(tapegrad)
    assert got.stride() == want.stride()
    np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_stack_inner_dim_gradient():
    def run(m):
        x = m.arange(24., requires_grad=True)
        y = x.reshape(4, 3, 2).permute(0, 2, 1)
        s = m.stack([y[0], y[1].exp()], 1)
        (s.reshape(-1) * m.arange(float(s.numel()))).sum().backward()
        return s.stride(), x.grad.numpy()
    (ws, wg), (gs, gg) = run(torch), run(tapegrad)
    assert ws == gs
    np.testing.assert_allclose(gg, wg, rtol=1e-6)


@pytest.mark.parametrize("shuffle", [False, True])
def test_dataloader_batches_of_transposed_data_are_row_major(shuffle):
    def run(m):
        m.manual_seed(0)
        data = m.arange(5 * 3 * 4, dtype=m.float32).reshape(4, 3, 5).permute(2, 1, 0)   # (5, 3, 4), transposed
        ds = m.utils.data.TensorDataset(data, m.arange(5))
        out = []
        for x, y in m.utils.data.DataLoader(ds, batch_size=2, shuffle=shuffle):
            out.append((x.stride(), x.view(x.shape[0], -1).sum(1).tolist(), y.tolist()))
        coll = m.utils.data.default_collate([data[0], data[1]])
        arr = m.utils.data.default_collate([data[0].numpy(), data[1].numpy()])
        return out, coll.stride(), arr.stride()
    assert run(tapegrad) == run(torch)


def test_einsum_backward_with_a_complex_parameter():
    """A complex nn.Parameter as an einsum operand (an FNO's spectral weights): the other operand's gradient
    contracts its conjugate."""
    def run(m):
        m.manual_seed(0)
        w = m.nn.Parameter(m.rand(3, 4, 5, dtype=m.cfloat))
        x = m.rand(2, 3, 5, dtype=m.cfloat, requires_grad=True)
        y = m.einsum("bix,iox->box", x, w)
        (y.real.square().sum() + y.imag.sum()).backward()
        return x.grad.numpy(), w.grad.numpy()
    for g, w in zip(run(tapegrad), run(torch)):
        np.testing.assert_allclose(g, w, rtol=1e-5)


def test_einsum_complex_parameter_gradcheck():
    w = tapegrad.nn.Parameter(tapegrad.rand(2, 3, 4, dtype=tapegrad.cdouble))
    x = tapegrad.rand(2, 2, 4, dtype=tapegrad.cdouble, requires_grad=True)
    assert tapegrad.autograd.gradcheck(lambda a, b: tapegrad.einsum("bix,iox->box", a, b), (x, w))
