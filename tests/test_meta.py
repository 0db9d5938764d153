"""The meta device (``device='meta'``): tensors with a shape, a dtype and autograd state but no data, checked
against torch: factories, ops and their autograd, printing, the errors torch raises, modules moved to and from it,
the default device, and the random stream left as it was."""

import gc

import pytest

import tapegrad
from tapegrad.autograd import function as _function


@pytest.fixture(autouse=True)
def _meta_step_off_after():
    """No meta tensor outlives a test here, so the meta step is off again for the tests after these."""
    yield
    gc.collect()
    tapegrad.ones(1) + 1
    assert _function._meta_step[0] is None


def _describe(r, strides=True):
    """What a result says without data: device, shape, dtype, requires_grad, strides (views and the layouts
    elementwise ops keep: tests/test_meta_gaps.py), printed form (tuples, the named tuples of max/sort/topk,
    element by element)."""
    if isinstance(r, tuple):
        return tuple(_describe(v, strides) for v in r)
    return (r.device.type, tuple(r.shape), str(r.dtype).split(".")[-1], r.requires_grad,
            r.stride() if strides else None, repr(r).replace("torch.", "tapegrad."))


def _outcome(f, T, strides=True):
    try:
        return _describe(f(T), strides)
    except Exception as e:  # noqa: BLE001 - the exception is what is compared
        return type(e).__name__, str(e).replace("torch.", "tapegrad.")


def _m(T, *shape, dtype=None, rg=False):
    return T.empty(shape, device="meta", dtype=dtype, requires_grad=rg)


FACTORIES = {
    "empty": lambda T: T.empty(2, 3, device="meta"),
    "empty_f64_rg": lambda T: T.empty(2, 3, device="meta", dtype=T.float64, requires_grad=True),
    "empty_0": lambda T: T.empty(0, 3, device="meta"),
    "zeros": lambda T: T.zeros((4,), device=T.device("meta")),
    "ones_int": lambda T: T.ones(2, 2, device="meta", dtype=T.int32),
    "full": lambda T: T.full((2,), 3, device="meta"),
    "full_float": lambda T: T.full((2, 1), 1.5, device="meta"),
    "arange": lambda T: T.arange(5, device="meta"),
    "arange_float": lambda T: T.arange(0, 1, 0.25, device="meta"),
    "linspace": lambda T: T.linspace(0, 1, 7, device="meta"),
    "eye": lambda T: T.eye(3, device="meta"),
    "rand": lambda T: T.rand(3, 2, device="meta"),
    "randn_rg": lambda T: T.randn(4, device="meta", requires_grad=True),
    "randint": lambda T: T.randint(0, 5, (2, 3), device="meta"),
    "randperm": lambda T: T.randperm(6, device="meta"),
    "normal": lambda T: T.normal(0.0, 1.0, (2,), device="meta"),
    "normal_tensors": lambda T: T.normal(_m(T, 3), _m(T, 2, 1)),
    "tensor": lambda T: T.tensor([1.0, 2.0], device="meta"),
    "tensor_int": lambda T: T.tensor([[1, 2]], device="meta"),
    "tensor_0d": lambda T: T.tensor(3.0, device="meta"),
    "empty_like": lambda T: T.empty_like(T.ones(2, 5), device="meta"),
    "zeros_like_meta": lambda T: T.zeros_like(_m(T, 2, 3)),
    "zeros_like_to_cpu": lambda T: T.zeros_like(_m(T, 2, 3), device="cpu"),
    "ones_like": lambda T: T.ones_like(_m(T, 3, dtype=T.float64)),
    "full_like": lambda T: T.full_like(_m(T, 3), 7),
    "rand_like": lambda T: T.rand_like(_m(T, 2, 2)),
    "randn_like": lambda T: T.randn_like(_m(T, 2, 2)),
    "randint_like": lambda T: T.randint_like(_m(T, 2, 2), 5),
    "new_zeros": lambda T: _m(T, 2).new_zeros(3),
    "new_ones_cpu": lambda T: _m(T, 2).new_ones(3, device="cpu"),
    "new_empty": lambda T: _m(T, 2).new_empty((2, 2), dtype=T.float64),
    "new_full": lambda T: _m(T, 2).new_full((2,), 1.0),
    "new_tensor": lambda T: _m(T, 2).new_tensor([1.0, 2.0, 3.0]),
    "cpu_new_empty_meta": lambda T: T.ones(2).new_empty(4, device="meta"),
    "empty_strided": lambda T: T.empty_strided((2, 3), (3, 1), device="meta"),
    "to_meta": lambda T: T.ones(2, 3).to("meta"),
    "to_meta_f64": lambda T: T.ones(2, 3).to("meta", T.float64),
    "to_meta_rg": lambda T: T.ones(2, requires_grad=True).to(device="meta"),
    "meta_to_meta": lambda T: _m(T, 2).to("meta"),
    "legacy_new": lambda T: _m(T, 2).new(3),
    "multinomial": lambda T: T.multinomial(_m(T, 2, 3), 2),
}


@pytest.mark.parametrize("name", list(FACTORIES))
def test_factories_on_meta_as_torch(torch, name):
    f = FACTORIES[name]
    assert _outcome(f, tapegrad) == _outcome(f, torch)


OPS = {
    "mul_add": lambda T: _m(T, 2, 3) * 2 + 1,
    "int_plus_float": lambda T: _m(T, 3, dtype=T.int64) + 1.5,
    "broadcast": lambda T: _m(T, 2, 1) - _m(T, 3),
    "cpu_scalar": lambda T: _m(T, 2, 3) + T.tensor(2.0),
    "compare": lambda T: _m(T, 2, 3) > 0,
    "where": lambda T: T.where(_m(T, 2, 3) > 0, _m(T, 2, 3), 0.0),
    "exp_sqrt": lambda T: _m(T, 4).abs().sqrt().exp(),
    "sum_dim": lambda T: _m(T, 2, 3).sum(0),
    "mean_keep": lambda T: _m(T, 2, 3).mean(1, keepdim=True),
    "var": lambda T: _m(T, 4, 3).var(0),
    "norm": lambda T: _m(T, 2, 3).norm(),
    "sum_int": lambda T: _m(T, 3, dtype=T.int32).sum(),
    "max_dim": lambda T: _m(T, 2, 3).max(0),
    "argmax": lambda T: _m(T, 2, 3).argmax(1),
    "sort": lambda T: _m(T, 2, 3).sort(),
    "topk": lambda T: _m(T, 2, 5).topk(2),
    "cumsum": lambda T: _m(T, 2, 3).cumsum(1),
    "any": lambda T: (_m(T, 2, 3) > 0).any(),
    "matmul": lambda T: _m(T, 2, 3) @ _m(T, 3, 4),
    "bmm": lambda T: _m(T, 5, 2, 3) @ _m(T, 3, 4),
    "einsum": lambda T: T.einsum("ij,jk->ik", _m(T, 2, 3), _m(T, 3, 4)),
    "view": lambda T: _m(T, 2, 3).view(3, 2),
    "reshape": lambda T: _m(T, 2, 3).reshape(-1),
    "permute": lambda T: _m(T, 2, 3, 4).permute(2, 0, 1).contiguous(),
    "expand": lambda T: _m(T, 1, 3).expand(4, 3),
    "slice": lambda T: _m(T, 4, 3)[1:3, ::2],
    "int_index": lambda T: _m(T, 4, 3)[0],
    "none_index": lambda T: _m(T, 4, 3)[..., None],
    "cpu_index_tensor": lambda T: _m(T, 4, 3)[T.tensor([0, 2, 2])],
    "index_select": lambda T: _m(T, 4, 3).index_select(0, T.tensor([1])),
    "gather": lambda T: _m(T, 2, 3).gather(1, T.zeros(2, 1, dtype=T.long, device="meta")),
    "cat": lambda T: T.cat([_m(T, 2, 3), _m(T, 1, 3)]),
    "stack": lambda T: T.stack([_m(T, 2), _m(T, 2)], 1),
    "chunk": lambda T: _m(T, 2, 6).chunk(3, 1),
    "flip_repeat": lambda T: _m(T, 2, 3).flip(0).repeat(2, 1),
    "casts": lambda T: _m(T, 2, 3).double().half(),
    "to_bool": lambda T: _m(T, 2).bool(),
    "clone": lambda T: _m(T, 2, 3).clone(),
    "inplace": lambda T: _m(T, 2, 3).add_(1).mul_(2),
    "fill_zero": lambda T: _m(T, 2, 3).fill_(3).zero_(),
    "copy_from_cpu": lambda T: _m(T, 2, 3).copy_(T.ones(2, 3)),
    "masked_fill": lambda T: _m(T, 2, 3).masked_fill(_m(T, 2, 3) > 0, 1.0),
    "softmax": lambda T: T.nn.functional.softmax(_m(T, 2, 3), -1),
    "linear": lambda T: T.nn.functional.linear(_m(T, 5, 3), _m(T, 4, 3), _m(T, 4)),
    "conv2d": lambda T: T.nn.functional.conv2d(_m(T, 1, 3, 8, 8), _m(T, 4, 3, 3, 3), padding=1),
    "max_pool2d": lambda T: T.nn.functional.max_pool2d(_m(T, 1, 3, 8, 8), 2),
    "layer_norm": lambda T: T.nn.functional.layer_norm(_m(T, 2, 3), (3,)),
    "gelu": lambda T: T.nn.functional.gelu(_m(T, 2, 3)),
    "dropout": lambda T: T.nn.functional.dropout(_m(T, 2, 3), 0.5),
    "cross_entropy": lambda T: T.nn.functional.cross_entropy(_m(T, 4, 3), T.empty(4, dtype=T.long, device="meta")),
    "embedding": lambda T: T.nn.functional.embedding(T.empty(2, 4, dtype=T.long, device="meta"), _m(T, 10, 5)),
    "sdpa": lambda T: T.nn.functional.scaled_dot_product_attention(_m(T, 1, 2, 4, 8), _m(T, 1, 2, 4, 8),
                                                                   _m(T, 1, 2, 4, 8)),
    "linalg_inv": lambda T: T.linalg.inv(_m(T, 3, 3)),
    "grad_fn_repr": lambda T: _m(T, 2, 3, rg=True).relu().sum(),
    "embedding_module": lambda T: T.nn.Embedding(10, 3, device="meta")(T.zeros(2, dtype=T.long, device="meta")),
    "conv_module": lambda T: T.nn.Conv2d(3, 4, 3, device="meta")(_m(T, 2, 3, 8, 8)),
    "lstm_module": lambda T: T.nn.LSTM(3, 4, batch_first=True, device="meta")(_m(T, 2, 5, 3))[0],
    "encoder_layer": lambda T: T.nn.TransformerEncoderLayer(8, 2, 16, batch_first=True, device="meta")(
        _m(T, 2, 5, 8)),
    "batchnorm_buffer": lambda T: T.nn.BatchNorm2d(3, device="meta").running_var,
}


@pytest.mark.parametrize("name", list(OPS))
def test_ops_on_meta_give_torchs_shapes_and_dtypes(torch, name):
    f = OPS[name]
    assert _outcome(f, tapegrad, strides=False) == _outcome(f, torch, strides=False)


ERRORS = {
    "item": lambda T: _m(T, 2, 3).item(),
    "item_1": lambda T: _m(T, 1).item(),
    "tolist": lambda T: _m(T, 2).tolist(),
    "numpy": lambda T: _m(T, 2).numpy(),
    "bool_many": lambda T: bool(_m(T, 2)),
    "bool_one": lambda T: bool(_m(T, 2).sum()),
    "float": lambda T: float(_m(T, 1)),
    "int": lambda T: int(_m(T)),
    "allclose": lambda T: T.allclose(_m(T, 2), _m(T, 2)),
    "nonzero": lambda T: _m(T, 2, 3).nonzero(),
    "bool_mask_index": lambda T: (lambda x: x[x > 0])(_m(T, 2, 3)),
    "masked_select": lambda T: (lambda x: x.masked_select(x > 0))(_m(T, 2, 3)),
    "unique": lambda T: _m(T, 4).unique(),
    "meta_plus_cpu": lambda T: _m(T, 2, 3) + T.ones(2, 3),
    "cpu_plus_meta": lambda T: T.ones(2, 3) + _m(T, 2, 3),
    "cpu_plus_meta_0d": lambda T: T.ones(2, 3) + _m(T),
    "cat_mixed": lambda T: T.cat([_m(T, 2), T.ones(2)]),
    "to_cpu": lambda T: _m(T, 2).to("cpu"),
    "cpu": lambda T: _m(T, 2).cpu(),
    "copy_out": lambda T: T.ones(2, 3).copy_(_m(T, 2, 3)),
    "copy_out_0d": lambda T: T.ones(2)[0:1].copy_(_m(T)),
    "module_to_cpu": lambda T: T.nn.Linear(2, 2, device="meta").to("cpu"),
    "bincount": lambda T: T.bincount(T.empty(3, dtype=T.long, device="meta")),
    "format_0d": lambda T: f"{_m(T):.3f}",
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_what_meta_tensors_cannot_do_raises_torchs_error(torch, name):
    f = ERRORS[name]
    ours, theirs = _outcome(f, tapegrad), _outcome(f, torch)
    assert ours == theirs
    assert ours[0].endswith("Error"), ours


def test_device_properties_as_torch(torch):
    for T in (tapegrad, torch):
        x = T.empty(2, 3, device="meta")
        assert x.is_meta and x.device == T.device("meta") and x.device.type == "meta" and str(x.device) == "meta"
        assert x.stride() == (3, 1) and x.is_contiguous() and x.data_ptr() == 0
        assert not T.ones(1).is_meta and T.ones(1).device.type == "cpu"
        assert x.t().shape == (3, 2) and x.numel() == 6 and x.element_size() == 4


def test_formatting_and_assert_close_as_torch(torch):
    for T in (tapegrad, torch):
        assert f"{_m(T)}" == "tensor(..., device='meta', size=())"
        T.testing.assert_close(_m(T, 2, 3), _m(T, 2, 3))
        with pytest.raises(AssertionError):
            T.testing.assert_close(_m(T, 2, 3), _m(T, 3, 2))


def test_nothing_is_drawn_on_meta(torch):
    # torch's random stream does not move for meta random factories and in-place fills
    for T in (tapegrad, torch):
        T.manual_seed(0)
        want = T.rand(3)
        T.manual_seed(0)
        T.rand(1000, device="meta")
        T.randn(4, device="meta")
        T.randint(0, 5, (3,), device="meta")
        T.normal(0.0, 1.0, (2,), device="meta")
        T.empty(3, device="meta").uniform_()
        T.empty(3, device="meta").normal_()
        T.empty(3, device="meta").bernoulli_(0.5)
        T.empty(2, 3, device="meta").random_(5)
        T.nn.init.normal_(T.empty(3, device="meta"))
        T.nn.init.kaiming_uniform_(T.empty(4, 3, device="meta"))
        T.nn.init.trunc_normal_(T.empty(4, device="meta"))
        T.nn.init.orthogonal_(T.empty(4, 3, device="meta"))
        T.nn.Linear(50, 40, device="meta")
        T.nn.functional.dropout(T.empty(100, device="meta"), 0.5)
        assert T.equal(T.rand(3), want)
    tapegrad.manual_seed(3)
    torch.manual_seed(3)
    tapegrad.randn(7, device="meta")
    torch.randn(7, device="meta")
    assert tapegrad.rand(4).tolist() == torch.rand(4).tolist()


def test_autograd_through_meta_gives_meta_grads(torch):
    def run(T):
        w = T.empty(3, 4, device="meta", requires_grad=True)
        b = T.zeros(4, device="meta", requires_grad=True)
        x = T.empty(5, 3, device="meta")
        loss = (T.tanh(x @ w + b) ** 2).mean()
        loss.backward()
        gx, = T.autograd.grad((x.requires_grad_() @ w).sum(), x)
        return [_describe(t) for t in (loss, w.grad, b.grad, gx)]
    assert run(tapegrad) == run(torch)


def test_modules_to_meta_and_back(torch):
    def run(T):
        T.manual_seed(0)
        src = T.nn.Sequential(T.nn.Linear(3, 4), T.nn.BatchNorm1d(4), T.nn.Linear(4, 2))
        m = src.to("meta")
        out = m(T.empty(5, 3, device="meta"))
        seen = [_describe(m[0].weight), _describe(m[1].running_mean), _describe(out), repr(m), repr(m[0].weight)]
        m[0].to_empty(device="cpu", recurse=False)
        seen.append([p.device.type for p in m.parameters()])
        m.to_empty(device="cpu")
        seen.append([p.device.type for p in m.parameters()] + [type(m[0].weight).__name__])
        with T.device("meta"):
            lazy = T.nn.Linear(3, 2)
            seen.append((T.zeros(1).device.type, T.get_default_device().type))
        seen.append((lazy.weight.device.type, T.zeros(1).device.type, T.get_default_device().type))
        state = {"weight": T.ones(2, 3), "bias": T.zeros(2)}
        lazy.load_state_dict(state, assign=True)
        seen.append((lazy.weight.device.type, lazy.weight.requires_grad, type(lazy.weight).__name__,
                     lazy(T.ones(1, 3)).tolist()))
        T.set_default_device("meta")
        try:
            seen.append((T.zeros(2).device.type, T.tensor([1.0]).device.type, T.get_default_device().type,
                         T.zeros_like(T.ones(1, device="cpu")).device.type, T.ones(1, device="cpu").to(
                             T.float64).device.type))
        finally:
            T.set_default_device(None)
        seen.append((T.zeros(1).device.type, str(T.get_default_device())))
        return seen
    ours, theirs = run(tapegrad), run(torch)
    assert [str(v).replace("torch.", "tapegrad.") for v in ours] == \
        [str(v).replace("torch.", "tapegrad.") for v in theirs]


def test_loading_into_a_meta_model_without_assign_warns_as_torch(torch):
    import warnings
    for T in (tapegrad, torch):
        m = T.nn.Linear(2, 2, device="meta")
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            m.load_state_dict(T.nn.Linear(2, 2).state_dict())
        assert [str(w.message)[:40] for w in seen] == ["for weight: copying from a non-meta para",
                                                       "for bias: copying from a non-meta parame"]
        assert m.weight.is_meta


def test_windows_and_frequencies_on_meta(torch):
    for f in (lambda T: T.hann_window(8, device="meta"), lambda T: T.fft.rfftfreq(6, device="meta"),
              lambda T: T.fft.fft(_m(T, 4, 8)),
              lambda T: T.stft(_m(T, 64), 16, window=T.hann_window(16, device="meta"), return_complex=True)):
        assert _outcome(f, tapegrad, strides=False) == _outcome(f, torch, strides=False)
    with pytest.raises(RuntimeError, match="sparse tensors are CPU only"):
        tapegrad.sparse_coo_tensor([[0]], [1.0], (2,), device="meta")


def test_functional_call_on_a_meta_base_under_vmap(torch):
    import copy

    import numpy as np
    rng = np.random.default_rng(0)
    ws = [rng.standard_normal((3, 4)).astype(np.float32) for _ in range(3)]
    xs = rng.standard_normal((3, 5, 4)).astype(np.float32)

    def run(T):
        models = []
        for w in ws:
            lin = T.nn.Linear(4, 3)
            with T.no_grad():
                lin.weight.copy_(T.from_numpy(w))
                lin.bias.zero_()
            models.append(lin)
        params, buffers = T.func.stack_module_state(models)
        base = copy.deepcopy(models[0]).to("meta")
        out = T.func.vmap(lambda p, b, x: T.func.functional_call(base, (p, b), (x,)))(params, buffers,
                                                                                      T.from_numpy(xs))
        return out.device.type, out.detach().numpy()
    (dt, ours), (dr, theirs) = run(tapegrad), run(torch)
    assert dt == dr == "cpu"
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)


def test_a_compiled_function_runs_meta_inputs_eagerly():
    f = tapegrad.compile(lambda a, b: (a.sin() * b).sum(1))
    r = f(tapegrad.empty(2, 3, device="meta"), tapegrad.empty(3, device="meta"))
    assert r.is_meta and r.shape == (2,)
    x = tapegrad.ones(2, 3)
    assert f(x, tapegrad.ones(3)).tolist() == pytest.approx([3 * 0.8414709848, 3 * 0.8414709848])


def test_the_meta_step_is_on_only_while_meta_tensors_exist():
    gc.collect()
    tapegrad.ones(1) + 1                 # (an op with no meta tensor alive turns the step off)
    assert _function._meta_step[0] is None
    x = tapegrad.empty(3, device="meta")
    assert _function._meta_step[0] is not None and _function._active[0] >= 1
    y = (x * 2).sum()
    del x, y
    gc.collect()
    tapegrad.ones(1) + 1
    assert _function._meta_step[0] is None
