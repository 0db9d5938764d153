"""torch.futures' Future and torch.distributed.rpc with one worker, against torch (its TensorPipe agent started
with world_size 1): results, callbacks, errors and their words, RRefs, and the ``isinstance(x, rpc.api.RRef)``
check training helpers make before any ``init_rpc``."""

import socket

import numpy as np
import pytest

import tapegrad


def outcome(call):
    try:
        return ("ok", call())
    except Exception as e:          # (the comparison is the point: which error, with which words)
        return (type(e).__name__, str(e).split("\n")[0])


def same(fn, torch):
    a, b = outcome(lambda: fn(tapegrad)), outcome(lambda: fn(torch))
    assert a[0] == b[0], (a, b)
    if a[0] != "ok":
        assert a[1] == b[1], (a, b)
    return a[1], b[1]


def test_future_results_callbacks_and_errors(torch):
    for T in (tapegrad, torch):
        f = T.futures.Future()
        assert not f.done()
        g = f.then(lambda fut: fut.wait() * 2)
        seen = []
        f.add_done_callback(lambda fut: seen.append(fut.value().sum().item()))
        f.set_result(T.ones(2))
        assert f.done() and g.done() and seen == [2.0]
        np.testing.assert_array_equal(g.wait().numpy(), [2.0, 2.0])
        late = []
        f.add_done_callback(lambda fut: late.append(1))       # (already complete: runs at once)
        assert late == [1]
        both = T.futures.collect_all([f, g])
        assert both.done() and [x.wait().tolist() for x in both.wait()] == [[1.0, 1.0], [2.0, 2.0]]
        assert [v.tolist() for v in T.futures.wait_all([f, g])] == [[1.0, 1.0], [2.0, 2.0]]
        assert T.futures.collect_all([]).wait() == []
        assert type(g) is T.Future and issubclass(T.futures.Future, T.Future)
        forked = T.jit.fork(lambda x: x + 1, 2)
        assert type(forked) is T.Future and not isinstance(forked, T.jit.Future) and forked.wait() == 3
        assert T.jit.wait(forked) == 3 and issubclass(T.jit.Future, T.Future)

    def again(T):
        f = T.futures.Future()
        f.set_result(1)
        f.set_result(2)
    same(again, torch)

    def failed(T):
        f = T.futures.Future()
        f.set_exception(ValueError("bad"))
        return f.wait()
    same(failed, torch)

    def failing_callback(T):
        f = T.futures.Future()
        g = f.then(lambda fut: 1 / 0)
        f.set_result(1)
        return g.wait()
    same(failing_callback, torch)

    def ignoring_callback(T):                # (a callback that never reads the error succeeds)
        f = T.futures.Future()
        f.set_exception(ValueError("bad"))
        return f.then(lambda fut: 7).wait()
    same(ignoring_callback, torch)


def test_rref_type_is_there_before_init_rpc(torch):
    for T in (tapegrad, torch):
        rpc = T.distributed.rpc
        assert rpc.is_available() and rpc.api.RRef is rpc.RRef
        assert not isinstance(T.ones(2), rpc.api.RRef)
    same(lambda T: T.distributed.rpc.RRef(T.ones(1)), torch)
    same(lambda T: T.distributed.rpc.rpc_sync("worker0", T.add, args=(1, 2)), torch)
    same(lambda T: T.distributed.rpc.get_worker_info(), torch)
    same(lambda T: T.distributed.rpc.shutdown(), torch)


def boom():
    raise ValueError("x")


@pytest.fixture
def one_worker(torch, monkeypatch):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("MASTER_ADDR", "127.0.0.1")
    monkeypatch.setenv("MASTER_PORT", str(port))
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for T in (tapegrad, torch):
            T.distributed.rpc.init_rpc("worker0", rank=0, world_size=1)
        try:
            yield
        finally:
            for T in (tapegrad, torch):
                T.distributed.rpc.shutdown()


def test_calls_to_the_one_worker(torch, one_worker):
    for T in (tapegrad, torch):
        rpc = T.distributed.rpc
        me = rpc.get_worker_info()
        assert (me.name, me.id, repr(me)) == ("worker0", 0, "WorkerInfo(id=0, name=worker0)")
        assert rpc.get_worker_info("worker0") == me
        for to in ("worker0", 0, me):
            assert rpc.rpc_sync(to, T.add, args=(T.ones(2), 3)).tolist() == [4.0, 4.0]
        assert rpc.rpc_sync("worker0", T.add, args=(T.ones(2),), kwargs={"other": 3}).tolist() == [4.0, 4.0]
        f = rpc.rpc_async("worker0", T.mul, args=(T.ones(2), 3))
        assert type(f) is T.Future and not isinstance(f, T.futures.Future)    # (the C-level base in torch)
        assert f.wait().tolist() == [3.0, 3.0]
        r = rpc.remote("worker0", T.add, args=(T.ones(2), 1))
        assert r.to_here().tolist() == r.local_value().tolist() == [2.0, 2.0]
        assert r.is_owner() and r.confirmed_by_owner() and r.owner() == me and r.owner_name() == "worker0"
        assert r.rpc_sync().add(1).tolist() == [3.0, 3.0]
        assert r.rpc_async().sum().wait().item() == 4.0
        assert r.remote().mul(2).to_here().tolist() == [4.0, 4.0]
        local = rpc.RRef(T.zeros(1))
        assert isinstance(local, rpc.api.RRef) and local.is_owner() and local.to_here().tolist() == [0.0]
        assert repr(local).startswith("OwnerRRef(GloballyUniqueId(created_on=0, local_id=")
    same(lambda T: T.distributed.rpc.rpc_sync("nobody", T.add, args=(1, 2)), torch)
    same(lambda T: T.distributed.rpc.get_worker_info("nobody"), torch)
    same(lambda T: T.distributed.rpc.init_rpc("worker0", rank=0, world_size=1), torch)
    (_, a), (_, b) = [outcome(lambda: T.distributed.rpc.rpc_sync("worker0", boom)) for T in (tapegrad, torch)]
    assert a == b == "ValueError: On WorkerInfo(id=0, name=worker0):"
    errs = [T.distributed.rpc.rpc_async("worker0", boom) for T in (tapegrad, torch)]
    assert [outcome(e.wait)[0] for e in errs] == ["ValueError", "ValueError"]


def test_more_than_one_worker_is_refused(monkeypatch):
    monkeypatch.setenv("MASTER_ADDR", "127.0.0.1")
    monkeypatch.setenv("MASTER_PORT", "29500")
    with pytest.raises(RuntimeError, match="world_size 1"):
        tapegrad.distributed.rpc.init_rpc("worker0", rank=0, world_size=2)
    monkeypatch.delenv("MASTER_ADDR")
    with pytest.raises(ValueError, match="MASTER_ADDR expected"):
        tapegrad.distributed.rpc.init_rpc("worker0", rank=0, world_size=1)
