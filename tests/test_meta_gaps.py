"""The meta device against torch where it fell short: strides of views, ops whose output shape comes from their
arguments (histc), pickling and saving meta tensors, and the live-array count under threads."""

import gc
import io
import pickle
import sys
import threading

import pytest

import tapegrad
from tapegrad import _meta
from tapegrad.autograd import function as _function


@pytest.fixture(autouse=True)
def _meta_step_off_after():
    yield
    gc.collect()
    tapegrad.ones(1) + 1
    assert _function._meta_step[0] is None


def _m(T, *shape, dtype=None, rg=False):
    return T.empty(shape, device="meta", dtype=dtype, requires_grad=rg)


def test_live_meta_array_count_is_exact_under_threads():
    """Threads making and dropping meta arrays at once leave the count at what is alive (a lost update would
    leave the meta step on for good, or off while meta arrays live)."""
    gc.collect()
    tapegrad.ones(1) + 1
    base = _meta.live_count()
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)          # (switch threads as often as possible: races show at once)
    errors = []

    def work():
        try:
            for _ in range(3000):
                x = _meta.meta_array((2, 3), "float32")
                y = x[0]
                del x, y
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)
    try:
        threads = [threading.Thread(target=work) for _ in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(old)
    gc.collect()
    assert not errors
    assert _meta.live_count() == base
    keep = tapegrad.empty(2, device="meta")
    assert _meta.live_count() >= base + 1 and _function._meta_step[0] is not None
    del keep


def test_meta_op_in_one_thread_does_not_let_another_read_data():
    """A meta array's truth value passes (False) only inside a meta op of the same thread."""
    inside = threading.Event()
    release = threading.Event()

    class Slow(tapegrad.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            inside.set()
            release.wait(5)
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g

    t = threading.Thread(target=lambda: Slow.apply(_m(tapegrad, 2)))
    t.start()
    try:
        assert inside.wait(5)
        with pytest.raises(RuntimeError, match="Tensor.item"):
            bool(_meta.meta_array((1,), "float32"))     # (what an op's own value check reads)
    finally:
        release.set()
        t.join()


def _saved_meta(T):
    return {"w": _m(T, 2, 3), "t": _m(T, 3, 4).t(), "p": T.nn.Parameter(_m(T, 2)), "i": _m(T, 5, dtype=T.int64),
            "rg": _m(T, 2, dtype=T.float64, rg=True)}


def _meta_facts(d):
    return {k: (v.device.type, tuple(v.shape), str(v.dtype).split(".")[-1], v.stride(), v.requires_grad,
                type(v).__name__) for k, v in d.items()}


@pytest.mark.parametrize("weights_only", [True, False])
def test_saving_and_loading_meta_tensors_as_torch(torch, weights_only):
    """tapegrad.save writes torch's form (dtype, size, stride, no storage): torch loads it as meta tensors, and
    tapegrad loads torch's, with or without weights_only."""
    ours, theirs = io.BytesIO(), io.BytesIO()
    tapegrad.save(_saved_meta(tapegrad), ours)
    torch.save(_saved_meta(torch), theirs)
    expected = _meta_facts(_saved_meta(torch))
    assert _meta_facts(torch.load(io.BytesIO(ours.getvalue()), weights_only=weights_only)) == expected
    assert _meta_facts(tapegrad.load(io.BytesIO(theirs.getvalue()), weights_only=weights_only)) == expected
    assert _meta_facts(tapegrad.load(io.BytesIO(ours.getvalue()), weights_only=weights_only)) == expected
    sd = tapegrad.nn.Linear(2, 3, device="meta").state_dict()
    buf = io.BytesIO()
    tapegrad.save(sd, buf)
    assert {k: (v.is_meta, tuple(v.shape)) for k, v in tapegrad.load(io.BytesIO(buf.getvalue())).items()} == \
        {"weight": (True, (3, 2)), "bias": (True, (3,))}


def test_a_meta_checkpoint_with_bad_geometry_is_refused():
    from tapegrad.serialization._torch_names import Corrupt, _rebuild_meta_tensor_no_storage
    for size, stride in (((2, -1), (1, 1)), ((2, 3), (1,)), ("ab", (1, 1))):
        with pytest.raises(Corrupt):
            _rebuild_meta_tensor_no_storage(tapegrad.float32, size, stride, False)
    with pytest.raises(Corrupt):
        _rebuild_meta_tensor_no_storage(tapegrad.int64, (2,), (1,), True)


def test_pickling_a_meta_tensor_as_torch(torch):
    import copy
    for T in (tapegrad, torch):
        x = _m(T, 2, 3, rg=True)
        for y in (pickle.loads(pickle.dumps(x)), copy.deepcopy(x)):
            assert y.is_meta and y.shape == (2, 3) and y.requires_grad and y.stride() == (3, 1)
        p = pickle.loads(pickle.dumps(T.nn.Parameter(_m(T, 4))))
        assert type(p).__name__ == "Parameter" and p.is_meta and p.shape == (4,)
        t = pickle.loads(pickle.dumps(_m(T, 3, 4).t()))
        assert t.is_meta and t.stride() == (1, 4)


VIEWS = {
    "t": lambda x: x.t(),
    "mT": lambda x: x.mT,
    "transpose": lambda x: x.transpose(0, 1),
    "permute": lambda x: x.permute(1, 0),
    "expand": lambda x: x[None].expand(2, 3, 4),
    "expand_dim": lambda x: x[:, :1].expand(3, 5),
    "step_slice": lambda x: x[:, ::2],
    "rows": lambda x: x[1:],
    "select": lambda x: x[1],
    "select_col": lambda x: x[:, 1],
    "narrow": lambda x: x.narrow(1, 1, 2),
    "none": lambda x: x[:, None],
    "unsqueeze_t": lambda x: x.t().unsqueeze(0),
    "as_strided": lambda x: x.as_strided((2, 2), (1, 3), 1),
    "as_strided_0": lambda x: x.as_strided((3, 3), (0, 1)),
    "contiguous": lambda x: x.t().contiguous(),
    "reshape_copy": lambda x: x.t().reshape(-1),
    "reshape_view": lambda x: x[:, ::2].reshape(3, 2, 1),
    "view": lambda x: x.view(2, 6),
    "view_of_t": lambda x: x.t().view(4, 3, 1),
    "flatten_t": lambda x: x.t().flatten(),
    "diagonal": lambda x: x.diagonal(),
    "movedim": lambda x: x.unsqueeze(2).movedim(0, 2),
    "swapaxes": lambda x: x.swapaxes(0, 1),
    "unbind": lambda x: x.t().unbind(0)[1],
    "chunk": lambda x: x.chunk(2, 1)[1],
    "split": lambda x: x.split(1, 0)[2],
    "squeeze": lambda x: x[:, None, 1:].squeeze(1),
    "t_then_slice": lambda x: x.t()[::2, 1:],
    "clone_t": lambda x: x.t().clone(),
    "add_t": lambda x: x.t() + 1,
}


def _strides(f, T, device):
    try:
        y = f(T.arange(12.0, device=device).reshape(3, 4) if device == "cpu" else T.empty(3, 4, device="meta"))
    except Exception as e:  # noqa: BLE001 - the exception is what is compared
        return type(e).__name__
    return tuple(y.shape), y.stride(), y.is_contiguous()


@pytest.mark.parametrize("name", list(VIEWS))
def test_meta_strides_as_torch_where_cpu_strides_agree(torch, name):
    """A meta tensor reports the strides torch's meta kernels give, wherever tapegrad's CPU tensors already report
    torch's CPU strides (``x.t()``: ``(1, 4)``, ``x[:, ::2]``: ``(4, 2)``, ``contiguous()``: row-major)."""
    f = VIEWS[name]
    if _strides(f, tapegrad, "cpu") != _strides(f, torch, "cpu"):
        pytest.skip("tapegrad's CPU strides differ from torch's here")
    assert _strides(f, tapegrad, "meta") == _strides(f, torch, "meta")


def test_reshape_of_a_non_viewable_meta_tensor_copies_as_torch(torch):
    for T in (tapegrad, torch):
        y = T.empty(3, 4, device="meta", requires_grad=True).t().reshape(-1)
        assert y.grad_fn.name() in ("UnsafeViewBackward0", "CloneBackward0") or "View" in y.grad_fn.name()
        with pytest.raises(RuntimeError, match="view size is not compatible"):
            T.empty(3, 4, device="meta").t().view(-1)
    assert type(tapegrad.empty(3, 4, device="meta", requires_grad=True).t().reshape(-1).grad_fn).__name__ == \
        type(torch.empty(3, 4, device="meta", requires_grad=True).t().reshape(-1).grad_fn).__name__


SHAPE_FROM_ARGS = {
    "histc": lambda T: T.histc(_m(T, 3, 4), bins=7),
    "histc_default": lambda T: T.histc(_m(T, 5, dtype=T.float64)),
    "histc_range": lambda T: _m(T, 2, 2).histc(4, min=-1, max=1),
    "histc_bad_bins": lambda T: T.histc(_m(T, 3), bins=0),
    "histc_bad_range": lambda T: T.histc(_m(T, 3), min=2, max=1),
    "count_nonzero": lambda T: T.count_nonzero(_m(T, 3, 4)),
    "count_nonzero_dim": lambda T: T.count_nonzero(_m(T, 3, 4), dim=1),
    "count_nonzero_dims": lambda T: _m(T, 2, 3, 4).count_nonzero((0, 2)),
    "nonzero_static": lambda T: T.nonzero_static(_m(T, 3, 4), size=5),
    "index_select": lambda T: T.index_select(_m(T, 4, 3), 0, T.zeros(2, dtype=T.long, device="meta")),
    "index_select_0d": lambda T: T.index_select(_m(T), 0, T.zeros(1, dtype=T.long, device="meta")),
    "index_fill": lambda T: _m(T, 4, 3).index_fill(0, T.zeros(2, dtype=T.long, device="meta"), _m(T)),
    "index_fill_number": lambda T: _m(T, 4, 3).index_fill(1, T.zeros(2, dtype=T.long, device="meta"), 2.0),
    "index_add": lambda T: _m(T, 4, 3).index_add(0, T.zeros(2, dtype=T.long, device="meta"), _m(T, 2, 3)),
    "index_copy": lambda T: _m(T, 4, 3).index_copy(0, T.zeros(2, dtype=T.long, device="meta"), _m(T, 2, 3)),
    "take": lambda T: _m(T, 3, 3).take(T.zeros(4, dtype=T.long, device="meta")),
    "put": lambda T: _m(T, 3, 3).put(T.zeros(2, dtype=T.long, device="meta"), _m(T, 2)),
    "index_put_int": lambda T: _m(T, 5, 5).index_put((T.zeros(2, dtype=T.long, device="meta"),), _m(T, 2, 5)),
    # NumPy's decompositions return named tuples: on meta, each field a meta array of its shape
    "eigh": lambda T: T.linalg.eigh(_m(T, 2, 5, 5))[1],
    "eigvalsh": lambda T: T.linalg.eigvalsh(_m(T, 5, 5)),
    "eig": lambda T: T.linalg.eig(_m(T, 4, 4))[1],
    "eigvals": lambda T: T.linalg.eigvals(_m(T, 4, 4)),
    "svd": lambda T: T.linalg.svd(_m(T, 3, 5), full_matrices=False)[2],
    "svdvals": lambda T: T.linalg.svdvals(_m(T, 3, 5)),
    "qr": lambda T: T.linalg.qr(_m(T, 5, 3))[1],
    "slogdet": lambda T: T.linalg.slogdet(_m(T, 2, 4, 4))[1],
    "logdet": lambda T: T.logdet(_m(T, 4, 4)),
    "pinv": lambda T: T.linalg.pinv(_m(T, 3, 5)),
    "cond": lambda T: T.linalg.cond(_m(T, 4, 4)),
    "nuclear_norm": lambda T: T.linalg.matrix_norm(_m(T, 4, 4), "nuc"),
}


def _outcome(f, T):
    try:
        r = f(T)
    except Exception as e:  # noqa: BLE001 - the exception is what is compared
        return type(e).__name__, str(e).replace("torch.", "tapegrad.")
    return r.device.type, tuple(r.shape), str(r.dtype).split(".")[-1]


@pytest.mark.parametrize("name", list(SHAPE_FROM_ARGS))
def test_ops_whose_shape_comes_from_arguments_work_on_meta_as_torch(torch, name):
    """An op whose output shape is known from its arguments (histc's bins, count_nonzero's dims, an index's
    length) gives a meta result as torch's meta kernel does, even where tapegrad's own code reads the data (to
    count, or to check index bounds): on meta there are no values to read or check."""
    f = SHAPE_FROM_ARGS[name]
    assert _outcome(f, tapegrad) == _outcome(f, torch)


def test_strided_factories_on_meta_as_torch(torch):
    def made(f, T):
        try:
            r = f(T)
        except Exception as e:  # noqa: BLE001 - the exception is what is compared
            return type(e).__name__, str(e)
        return r.device.type, tuple(r.shape), r.stride(), r.is_contiguous()
    for f in (lambda T: T.empty_strided((2, 3), (1, 2), device="meta"),
              lambda T: T.empty(2, device="meta").new_empty_strided((2, 3), (1, 2)),
              lambda T: T.ones(2).new_empty_strided((4, 3), (1, 4), device="meta"),
              lambda T: T.empty_strided((2, 3), (1,), device="meta")):
        assert made(f, tapegrad) == made(f, torch)
