"""The rest of torch's top-level functions and Tensor methods (tapegrad/_api_state.py, _api_funcs.py,
_tensor_api.py) against torch 2.13: same answers, same warnings and errors."""

import os
import warnings

import numpy as np
import pytest

import tapegrad


def _raises_same(torch, fn_tg, fn_th):
    with pytest.raises(Exception) as th:
        fn_th()
    with pytest.raises(type(th.value)) as tg:
        fn_tg()
    assert str(tg.value) == str(th.value)


def _warns(fn):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        out = fn()
    return out, [str(x.message) for x in w]


# --- switches and predicates --------------------------------------------------------------------------------

def test_deterministic_switches(torch):
    for m in (tapegrad, torch):
        assert m.are_deterministic_algorithms_enabled() is False and m.get_deterministic_debug_mode() == 0
    try:
        for mode in ("warn", "error", 1, "default"):
            for m in (tapegrad, torch):
                m.set_deterministic_debug_mode(mode)
            assert tapegrad.get_deterministic_debug_mode() == torch.get_deterministic_debug_mode()
            assert tapegrad.are_deterministic_algorithms_enabled() == torch.are_deterministic_algorithms_enabled()
            assert (tapegrad.is_deterministic_algorithms_warn_only_enabled()
                    == torch.is_deterministic_algorithms_warn_only_enabled())
        for m in (tapegrad, torch):
            m.use_deterministic_algorithms(True, warn_only=True)
        assert tapegrad.get_deterministic_debug_mode() == torch.get_deterministic_debug_mode() == 1
        _raises_same(torch, lambda: tapegrad.set_deterministic_debug_mode("foo"),
                     lambda: torch.set_deterministic_debug_mode("foo"))
        _raises_same(torch, lambda: tapegrad.set_deterministic_debug_mode(3),
                     lambda: torch.set_deterministic_debug_mode(3))
    finally:
        for m in (tapegrad, torch):
            m.use_deterministic_algorithms(False)


def test_matmul_precision_warn_always_threads_default_device(torch):
    try:
        for p in ("high", "medium", "highest"):
            tapegrad.set_float32_matmul_precision(p)
            torch.set_float32_matmul_precision(p)
            assert tapegrad.get_float32_matmul_precision() == torch.get_float32_matmul_precision()
        _, w = _warns(lambda: tapegrad.set_float32_matmul_precision("foo"))
        assert w and "foo is not one of 'highest', 'high', or 'medium'" in w[0]
        assert tapegrad.get_float32_matmul_precision() == "highest"
    finally:
        torch.set_float32_matmul_precision("highest")
    assert tapegrad.is_warn_always_enabled() is torch.is_warn_always_enabled() is False
    tapegrad.set_warn_always(True)
    assert tapegrad.is_warn_always_enabled()
    tapegrad.set_warn_always(False)
    tapegrad.set_num_interop_threads(3)
    assert tapegrad.get_num_interop_threads() == 3
    with pytest.raises(RuntimeError, match="positive number of threads"):
        tapegrad.set_num_interop_threads(0)
    tapegrad.set_num_interop_threads(1)
    assert tapegrad.init_num_threads() is None
    assert isinstance(tapegrad.set_flush_denormal(True), bool)
    assert str(tapegrad.get_default_device()) == str(torch.get_default_device()) == "cpu"
    tapegrad.set_default_device("cpu")
    tapegrad.set_default_device(None)
    with pytest.raises(RuntimeError, match="CPU only"):
        tapegrad.set_default_device("cuda")


def test_anomaly_switch(torch):
    assert tapegrad.is_anomaly_enabled() is torch.is_anomaly_enabled() is False
    try:
        tapegrad.set_anomaly_enabled(True, False)
        torch.set_anomaly_enabled(True, False)
        assert tapegrad.is_anomaly_enabled() is torch.is_anomaly_enabled() is True
        assert tapegrad.is_anomaly_check_nan_enabled() is torch.is_anomaly_check_nan_enabled() is False
        assert tapegrad.autograd.is_anomaly_enabled()
    finally:
        tapegrad.set_anomaly_enabled(False)
        torch.set_anomaly_enabled(False)
    assert tapegrad.is_anomaly_enabled() is False and tapegrad.is_anomaly_check_nan_enabled() is True


def test_set_default_tensor_type(torch):
    try:
        _, w = _warns(lambda: tapegrad.set_default_tensor_type(tapegrad.DoubleTensor))
        _, wt = _warns(lambda: torch.set_default_tensor_type(torch.DoubleTensor))
        assert w[0] == wt[0].split(" (Triggered")[0]
        assert tapegrad.get_default_dtype() is tapegrad.float64 and tapegrad.tensor([1.0]).dtype is tapegrad.float64
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tapegrad.set_default_tensor_type("torch.FloatTensor")
            assert tapegrad.get_default_dtype() is tapegrad.float32
            _raises_same(torch, lambda: tapegrad.set_default_tensor_type(tapegrad.LongTensor),
                         lambda: torch.set_default_tensor_type(torch.LongTensor))
    finally:
        torch.set_default_dtype(torch.float32)


def test_predicates_as_torch(torch):
    cases = [np.ones(2), np.array([1.5]), np.array([0.0]), np.ones(2, np.uint8), np.ones(2, bool),
             np.array([1 + 2j]), np.ones((2, 3))]
    for a in cases:
        x, y = tapegrad.tensor(a), torch.tensor(a)
        assert tapegrad.is_complex(x) == torch.is_complex(y)
        assert tapegrad.is_signed(x) == torch.is_signed(y) == x.is_signed()
        assert tapegrad.is_same_size(x, x.reshape(-1)) == torch.is_same_size(y, y.reshape(-1))
        assert tapegrad.is_distributed(x) is torch.is_distributed(y) is False
        assert tapegrad.get_device(x) == torch.get_device(y) == x.get_device() == -1
        assert tapegrad.is_storage(x) is torch.is_storage(y) is False
        if a.size == 1:
            assert tapegrad.is_nonzero(x) == torch.is_nonzero(y)
        else:
            _raises_same(torch, lambda: tapegrad.is_nonzero(x), lambda: torch.is_nonzero(y))
    _raises_same(torch, lambda: tapegrad.ones(0).is_nonzero(), lambda: torch.ones(0).is_nonzero())
    assert tapegrad.is_storage(tapegrad.ones(2).untyped_storage())
    a = tapegrad.ones(2, requires_grad=True) * 2
    d = tapegrad.detach(a)
    assert not d.requires_grad and d.data_ptr() == a.data_ptr()
    assert tapegrad.detach_(a) is a and not a.requires_grad and a.grad_fn is None


# --- Tensor methods -------------------------------------------------------------------------------------------

def test_device_predicates_and_small_properties(torch):
    a = np.arange(6.0).reshape(2, 3)
    x, y = tapegrad.tensor(a), torch.tensor(a)
    for name in ("is_cpu", "is_xpu", "is_ipu", "is_maia", "is_mkldnn", "is_mps", "is_mtia", "is_nested", "is_vulkan",
                 "is_xla", "is_sparse_csr", "output_nr", "name"):
        assert getattr(x, name) == getattr(y, name), name
    assert x.is_pinned() is y.is_pinned() is False
    _raises_same(torch, x.pin_memory, y.pin_memory)
    assert str(x.grad_dtype)[9:] == str(y.grad_dtype)[6:] == "float64"
    assert tapegrad.ones(2, dtype=tapegrad.int64).grad_dtype is tapegrad.int64
    v, w = _warns(lambda: x.volatile)
    vt, wt = _warns(lambda: y.volatile)
    assert v is vt is False and w == wt
    q = tapegrad.ones(2, requires_grad=True)
    out = q.unbind(0)
    assert [o.output_nr for o in out] == [o.output_nr for o in torch.ones(2, requires_grad=True).unbind(0)] == [0, 1]
    assert x.to_dense() is x and x.const_data_ptr() == x.data_ptr()
    assert x.cdouble().dtype is tapegrad.complex128 and x.cfloat().dtype is tapegrad.complex64
    _raises_same(torch, lambda: x.reinforce(1), lambda: y.reinforce(1))
    _raises_same(torch, lambda: x.eig(), lambda: y.eig())
    _raises_same(torch, lambda: x.symeig(), lambda: y.symeig())
    _raises_same(torch, lambda: tapegrad.eig(x), lambda: torch.eig(y))
    _raises_same(torch, lambda: tapegrad.symeig(x), lambda: torch.symeig(y))


@pytest.mark.parametrize("view", ["x", "x[1]", "x[:, 1:]", "x.t()", "x[1:, ::2]", "x.reshape(-1)[2:]",
                                  "x.as_strided((2, 2), (1, 2), 3)", "x[1:].as_strided((2,), (3,))"])
def test_storage_offset_storages_dim_order(torch, view):
    a = np.arange(12.0).reshape(3, 4)
    tv = eval(view, {"x": tapegrad.tensor(a)})
    rv = eval(view, {"x": torch.tensor(a)})
    assert tv.storage_offset() == rv.storage_offset()
    assert tv.dim_order() == rv.dim_order()
    assert tv.untyped_storage().nbytes() == rv.untyped_storage().nbytes()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert len(tv.storage()) == len(rv.storage()) and tv.storage().tolist() == rv.storage().tolist()


def test_dim_order_permutes(torch):
    for shape, perm in [((2, 3, 4), (2, 0, 1)), ((3, 1, 2), (2, 0, 1)), ((1, 2), (1, 0)), ((2, 2, 1), (0, 1, 2)),
                        ((2, 3, 4, 5), (0, 2, 3, 1))]:
        a = tapegrad.ones(*shape).permute(*perm)
        b = torch.ones(*shape).permute(*perm)
        assert a.dim_order() == b.dim_order(), (shape, perm)


def test_storage_shares_memory_and_warns(torch):
    x = tapegrad.zeros(2, 2)
    s = x.untyped_storage()
    assert s.data_ptr() == x.data_ptr() and len(s) == 16
    s[0:4] = 255
    assert x[0, 0].item() != 0
    _, w = _warns(lambda: x.storage())       # (torch gives it once per process: its text, checked here)
    assert w and w[0].startswith("TypedStorage is deprecated. It will be removed in the future and UntypedStorage")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        st = x.storage()
    st[3] = 7.0
    assert x[1, 1].item() == 7.0 and st.dtype is tapegrad.float32 and st.element_size() == 4


def test_share_memory_and_is_set_to(torch):
    for m in (tapegrad, torch):
        x = m.arange(6.0).reshape(2, 3)
        assert x.is_shared() is False
        assert x.share_memory_() is x and x.is_shared() is True
        assert x.is_set_to(x) and not x.is_set_to(x.view(3, 2)) and not x.is_set_to(x.clone())
        y, z = m.ones(3), m.zeros(2)
        y.set_(z)
        z[0] = 5
        assert y.tolist() == [5.0, 0.0] and y.is_set_to(z)
        y.set_()
        assert y.shape == (0,)
    _raises_same(torch, lambda: tapegrad.ones(2, requires_grad=True).set_(tapegrad.ones(2)),
                 lambda: torch.ones(2, requires_grad=True).set_(torch.ones(2)))


def test_resize_family(torch):
    a = np.arange(6.0).reshape(2, 3)
    for args in [(3, 2), (4,), ((2, 3),), (1, 6)]:
        assert np.array_equal(tapegrad.tensor(a).resize_(*args).numpy(), torch.tensor(a).resize_(*args).numpy())
    big = tapegrad.tensor(a).resize_(2, 4)
    assert big.shape == (2, 4) and big.reshape(-1)[:6].tolist() == list(range(6))
    assert tapegrad.tensor(a).resize_as_(tapegrad.ones(4)).tolist() == [0.0, 1.0, 2.0, 3.0]
    assert tapegrad.resize_as_(tapegrad.tensor(a), tapegrad.ones(1, 2)).tolist() == [[0.0, 1.0]]
    x = tapegrad.tensor(a)
    v = x._version
    x.resize_(6)
    assert x._version == v + 1
    r, w = _warns(lambda: tapegrad.tensor(a).resize(3, 2))
    rt, wt = _warns(lambda: torch.tensor(a).resize(3, 2))
    assert np.array_equal(r.numpy(), rt.numpy()) and w == wt
    r, w = _warns(lambda: tapegrad.tensor(a).resize_as(tapegrad.ones(3, 2)))
    rt, wt = _warns(lambda: torch.tensor(a).resize_as(torch.ones(3, 2)))
    assert np.array_equal(r.numpy(), rt.numpy()) and w == wt
    _raises_same(torch, lambda: tapegrad.ones(2, 3, requires_grad=True).resize_(2, 3),
                 lambda: torch.ones(2, 3, requires_grad=True).resize_(2, 3))


def test_new_empty_strided(torch):
    x = tapegrad.ones(2, 3)
    y = x.new_empty_strided((2, 3), (1, 2))
    assert y.shape == (2, 3) and y.stride() == torch.ones(1).new_empty_strided((2, 3), (1, 2)).stride() == (1, 2)
    z = x.new_empty_strided((2, 2), (2, 1), dtype=tapegrad.float64, requires_grad=True)
    assert z.dtype is tapegrad.float64 and z.requires_grad and z.is_leaf


def test_apply_map_map2(torch):
    a = np.arange(6.0).reshape(2, 3)
    outs = []
    for m in (tapegrad, torch):
        x = m.tensor(a)
        outs.append([x.clone().apply_(lambda v: v * 2).tolist(),
                     x.clone().map_(m.ones(3, dtype=m.float64), lambda p, q: p + q).tolist(),
                     x.clone().map2_(m.ones(3, dtype=m.float64), m.ones(2, 1, dtype=m.float64),
                                     lambda p, q, r: p + q + r).tolist(),
                     m.tensor([1, 2]).apply_(lambda v: v * 3).tolist()])
    assert outs[0] == outs[1]
    _raises_same(torch, lambda: tapegrad.ones(2, requires_grad=True).apply_(abs),
                 lambda: torch.ones(2, requires_grad=True).apply_(abs))
    _raises_same(torch, lambda: tapegrad.ones(2, dtype=tapegrad.float64).map_(tapegrad.ones(2), max),
                 lambda: torch.ones(2, dtype=torch.float64).map_(torch.ones(2), max))
    d = tapegrad.ones(2, dtype=tapegrad.float64)
    dt = torch.ones(2, dtype=torch.float64)
    _raises_same(torch, lambda: d.map2_(tapegrad.ones(2), d, max), lambda: dt.map2_(torch.ones(2), dt, max))
    _raises_same(torch, lambda: d.map2_(d, tapegrad.ones(2), max), lambda: dt.map2_(dt, torch.ones(2), max))


def test_as_subclass_and_module_load(torch):
    class Sub(tapegrad.Tensor):
        pass

    a = tapegrad.ones(2, requires_grad=True)
    b = a.as_subclass(Sub)
    assert type(b) is Sub and b is not a and b.data_ptr() == a.data_ptr() and b.requires_grad
    b.sum().backward()
    assert a.grad.tolist() == [1.0, 1.0]
    p = tapegrad.ones(2)
    assert p.module_load(tapegrad.zeros(2)).tolist() == torch.ones(2).module_load(torch.zeros(2)).tolist()
    assert p.tolist() == [0.0, 0.0]
    src = tapegrad.full((2,), 3.0)
    assert p.module_load(src, assign=True).data_ptr() == src.data_ptr()


# --- functions ------------------------------------------------------------------------------------------------

def test_range_deprecated(torch):
    for args, kw in [((0, 3), {}), ((0, 1, 0.25), {}), ((1, 4), {"dtype": "int64"}), ((3, 0, -1), {})]:
        kw_tg = {k: getattr(tapegrad, v) for k, v in kw.items()}
        kw_th = {k: getattr(torch, v) for k, v in kw.items()}
        r, w = _warns(lambda: tapegrad.range(*args, **kw_tg))
        rt, wt = _warns(lambda: torch.range(*args, **kw_th))
        assert np.array_equal(r.numpy(), rt.numpy()) and str(r.dtype)[9:] == str(rt.dtype)[6:]
        assert w == wt
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _raises_same(torch, lambda: tapegrad.range(5), lambda: torch.range(5))


def test_frombuffer_from_file_dlpack(torch, tmp_path):
    buf = bytearray(np.arange(4, dtype=np.int32).tobytes())
    x = tapegrad.frombuffer(buf, dtype=tapegrad.int32)
    y = torch.frombuffer(bytearray(buf), dtype=torch.int32)
    assert x.tolist() == y.tolist()
    buf[0] = 9
    assert x[0].item() == 9                                   # shares the buffer's memory, as torch's
    assert tapegrad.frombuffer(buf, dtype=tapegrad.int32, count=2, offset=4).tolist() == \
        torch.frombuffer(bytearray(buf), dtype=torch.int32, count=2, offset=4).tolist()
    _raises_same(torch, lambda: tapegrad.frombuffer(bytearray(b"abc"), dtype=tapegrad.int32),
                 lambda: torch.frombuffer(bytearray(b"abc"), dtype=torch.int32))
    path = os.path.join(tmp_path, "t.bin")
    np.arange(5, dtype=np.float32).tofile(path)
    assert tapegrad.from_file(path, size=5).tolist() == torch.from_file(path, size=5).tolist()
    s = tapegrad.from_file(path, shared=True, size=5)
    s[0] = 42.0
    assert np.fromfile(path, np.float32)[0] == 42.0
    t = torch.arange(3.0)
    assert tapegrad.from_dlpack(t).tolist() == [0.0, 1.0, 2.0]
    back = torch.from_dlpack(tapegrad.to_dlpack(tapegrad.tensor([1.0, 2.0])))
    assert back.tolist() == [1.0, 2.0]
    assert tapegrad.from_dlpack(np.ones(2)).dtype is tapegrad.float64


def test_addmv_alias_copy_binomial_embedding_renorm(torch):
    r = np.random.default_rng(0)
    v, m, x = r.standard_normal(3), r.standard_normal((3, 2)), r.standard_normal(2)
    a = tapegrad.tensor(v)
    tapegrad.addmv_(a, tapegrad.tensor(m), tapegrad.tensor(x), beta=0.5, alpha=2)
    b = torch.tensor(v)
    torch.addmv_(b, torch.tensor(m), torch.tensor(x), beta=0.5, alpha=2)
    np.testing.assert_allclose(a.numpy(), b.numpy())
    tapegrad.manual_seed(0)
    s = tapegrad.binomial(tapegrad.tensor([10.0, 5.0, 0.0]), tapegrad.tensor([0.5, 1.0, 0.3]))
    st = torch.binomial(torch.tensor([10.0, 5.0, 0.0]), torch.tensor([0.5, 1.0, 0.3]))
    assert s.dtype is tapegrad.float32 and str(st.dtype) == "torch.float32"
    assert 0 <= s[0].item() <= 10 and s[1].item() == 5.0 and s[2].item() == 0.0
    g = tapegrad.Generator().manual_seed(1)
    many = tapegrad.binomial(tapegrad.full((4000,), 20.0), tapegrad.full((4000,), 0.25), generator=g)
    assert abs(many.mean().item() - 5.0) < 0.2
    w = r.standard_normal((5, 3)) * 3
    tw, thw = tapegrad.tensor(w), torch.tensor(w)
    tapegrad.embedding_renorm_(tw, tapegrad.tensor([0, 1, 1, 4]), 1.0, 2.0)
    torch.embedding_renorm_(thw, torch.tensor([0, 1, 1, 4]), 1.0, 2.0)
    np.testing.assert_allclose(tw.numpy(), thw.numpy(), rtol=1e-6)


def test_segment_reduce_errors_and_offsets(torch):
    d = np.arange(1.0, 6.0)
    for kw in ({"lengths": [2, 0, 3]}, {"offsets": [0, 2, 2, 5]}, {"lengths": [2, 0, 3], "initial": 10.0}):
        for red in ("sum", "mean", "max", "min", "prod"):
            a = tapegrad.segment_reduce(tapegrad.tensor(d), red, **{k: tapegrad.tensor(v) if isinstance(v, list) else v
                                                                  for k, v in kw.items()})
            b = torch.segment_reduce(torch.tensor(d), red, **{k: torch.tensor(v) if isinstance(v, list) else v
                                                            for k, v in kw.items()})
            np.testing.assert_allclose(a.numpy(), b.numpy(), equal_nan=True)
    for kw in ({"reduce": "foo", "lengths": [5]}, {"reduce": "sum"}, {"reduce": "sum", "lengths": [2, 2]},
               {"reduce": "sum", "indices": [0, 1]}):
        _raises_same(torch, lambda: tapegrad.segment_reduce(tapegrad.tensor(d), **{
            k: tapegrad.tensor(v) if isinstance(v, list) else v for k, v in kw.items()}),
            lambda: torch.segment_reduce(torch.tensor(d), **{
                k: torch.tensor(v) if isinstance(v, list) else v for k, v in kw.items()}))


def test_thread_safe_generator(torch):
    assert tapegrad.thread_safe_generator() is None and torch.thread_safe_generator() is None


def test_cond_and_while_loop(torch):
    def run(m):
        x = m.tensor([1.0, 2.0])
        a = m.cond(x.sum() > 2, lambda t: t * 2, lambda t: t - 1, (x,))
        b = m.cond(False, lambda t: t * 2, lambda t: t - 1, [x])
        c = m.while_loop(lambda i, t: i < 3, lambda i, t: (i + 1, t * 2), (m.tensor(0), x))
        return a.tolist(), b.tolist(), c[0].item(), c[1].tolist()
    assert run(tapegrad) == run(torch)
    x = tapegrad.tensor([1.0, 2.0], requires_grad=True)
    tapegrad.cond(tapegrad.tensor(True), lambda t: (t * t).sum(), lambda t: t.sum(), (x,)).backward()
    assert x.grad.tolist() == [2.0, 4.0]
    with pytest.raises(RuntimeError, match="single-element"):
        tapegrad.cond(tapegrad.ones(2), abs, abs, ())


def test_nonzero_static_native_dropout_grid_sampler_3d(torch):
    a = np.array([[0.0, 1.0], [2.0, 0.0], [3.0, 4.0]])
    for kw in ({"size": 2}, {"size": 5, "fill_value": -3}, {"size": 0}):
        assert tapegrad.nonzero_static(tapegrad.tensor(a), **kw).tolist() == \
            torch.nonzero_static(torch.tensor(a), **kw).tolist()
        assert tapegrad.tensor(a).nonzero_static(**kw).tolist() == torch.tensor(a).nonzero_static(**kw).tolist()
    out, mask = tapegrad.native_dropout(tapegrad.ones(3), 0.5, False)
    ot, mt = torch.native_dropout(torch.ones(3), 0.5, False)
    assert out.tolist() == ot.tolist() and mask.tolist() == mt.tolist() and mask.dtype is tapegrad.bool
    tapegrad.manual_seed(0)
    out, mask = tapegrad.native_dropout(tapegrad.ones(10000), 0.3, True)
    assert abs(mask.float().mean().item() - 0.7) < 0.03
    np.testing.assert_allclose(out.numpy()[mask.numpy()], 1 / 0.7, rtol=1e-6)
    assert (out.numpy()[~mask.numpy()] == 0).all()
    r = np.random.default_rng(0)
    x, g = r.standard_normal((1, 2, 3, 4, 4)), r.uniform(-1, 1, (1, 2, 2, 3, 3))
    for interp, pad, align in ((0, 0, False), (1, 1, True)):
        np.testing.assert_allclose(
            tapegrad.grid_sampler_3d(tapegrad.tensor(x), tapegrad.tensor(g), interp, pad, align).numpy(),
            torch.grid_sampler_3d(torch.tensor(x), torch.tensor(g), interp, pad, align).numpy(), atol=1e-10)
        np.testing.assert_allclose(
            tapegrad.grid_sampler(tapegrad.tensor(x), tapegrad.tensor(g), interp, pad, align).numpy(),
            torch.grid_sampler(torch.tensor(x), torch.tensor(g), interp, pad, align).numpy(), atol=1e-10)


def test_apply_map_keep_the_version_as_torch(torch):
    """torch's apply_/map_/map2_ write the values directly: the version stays, so a tensor saved for backward and
    changed so is read changed (no version error), as in torch."""
    res = []
    for m in (tapegrad, torch):
        w = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
        row = []
        for how in ("apply_", "map_", "map2_"):
            a = m.tensor([4.0, 5.0, 6.0])
            v = a._version
            y = (a * w).sum()
            if how == "apply_":
                a.apply_(lambda t: t * 10)
            elif how == "map_":
                a.map_(a, lambda p, q: p + q)
            else:
                a.map2_(a, a, lambda p, q, r: p + q + r)
            y.backward()
            row += [a._version - v, w.grad.tolist()]
            w.grad = None
        res.append(row)
    assert res[0] == res[1]


def _resized(lib):
    """resize_ keeps the storage: the elements from the tensor's start in memory order, so shrinking then growing
    back gives the old ones (pytorch-book's Tensor chapter), and a transposed tensor is read in memory order."""
    a = lib.arange(6)
    b = a.view(2, 3)
    out = [b.resize_(1, 3).tolist(), b.resize_(2, 3).tolist()]
    b[1, 1] = 100                     # still a's memory
    c = a[2:]
    out += [a.tolist(), c.resize_(2).tolist(), c.resize_(4).tolist(), c.storage_offset()]
    for size in [(3, 2), (6,), (2,)]:
        out.append(lib.arange(6.0).view(2, 3).t().resize_(*size).tolist())
    x = lib.arange(24.0).view(1, 2, 3, 4).contiguous(memory_format=lib.channels_last)
    out.append(x.resize_(4, 6).tolist())
    return out


def test_resize_reads_the_storage(torch):
    assert _resized(tapegrad) == _resized(torch)
