"""torch.distributed in a job of one process, against torch's gloo backend with world_size 1: the process group,
the collectives (what they leave, what they check), DistributedDataParallel and DistributedSampler."""

import contextlib
import os

import numpy as np
import pytest

import tapegrad
import tapegrad.distributed as tdist


@contextlib.contextmanager
def group(mod, tmp_path, name):
    mod.distributed.init_process_group("gloo", init_method=f"file://{tmp_path / name}", world_size=1, rank=0)
    try:
        yield mod.distributed
    finally:
        mod.distributed.destroy_process_group()


@pytest.fixture
def both(torch, tmp_path):
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")          # (torch warns about gloo's default timeout and device guesses)
        with group(tapegrad, tmp_path, "tg"), group(torch, tmp_path, "torch"):
            yield tapegrad, torch


def outcome(call):
    try:
        return ("ok", call())
    except Exception as e:          # (the comparison is the point: which error, with which words)
        return (type(e).__name__, str(e).split("\n")[0])


def same_outcome(fn):
    """``fn(T)`` on tapegrad and torch: the same result (tensors compared as arrays) or the same error."""
    import torch
    a, b = outcome(lambda: fn(tapegrad)), outcome(lambda: fn(torch))
    assert a[0] == b[0], (a, b)
    if a[0] != "ok":
        assert a[1] == b[1], (a, b)
    return a[1], b[1]


def arr(x):
    if isinstance(x, (list, tuple)):
        return [arr(v) for v in x]
    return x.detach().numpy() if hasattr(x, "detach") else x


def test_the_group_answers_as_torch_s(both):
    for T in both:
        d = T.distributed
        assert d.is_initialized() and d.get_rank() == 0 and d.get_world_size() == 1
        assert d.get_backend() == "gloo" and d.is_gloo_available() and not d.is_nccl_available()
        g = d.new_group([0])
        assert d.get_rank(g) == 0 and d.get_world_size(g) == 1
        assert d.group.WORLD is not None and d.GroupMember.WORLD is d.group.WORLD
    same_outcome(lambda T: T.distributed.new_group([1]))
    same_outcome(lambda T: T.distributed.init_process_group("gloo", init_method="file:///nowhere", world_size=1,
                                                            rank=0))


@pytest.mark.parametrize("op", ["SUM", "AVG", "MAX", "MIN", "PRODUCT"])
def test_all_reduce_with_one_process_leaves_the_tensor(both, op):
    def run(T):
        t = T.arange(4.0)
        work = T.distributed.all_reduce(t, op=getattr(T.distributed.ReduceOp, op))
        return work, t.numpy()
    (w1, a), (w2, b) = same_outcome(run)
    assert w1 is None and w2 is None
    np.testing.assert_array_equal(a, b)


def test_collectives_copy_and_check_as_gloo_does(both):
    def gather(T):
        out = [T.zeros(3)]
        T.distributed.all_gather(out, T.arange(3.0))
        return arr(out)
    a, b = same_outcome(gather)
    np.testing.assert_array_equal(a, b)

    def into(T):
        out = T.zeros(3)
        T.distributed.all_gather_into_tensor(out, T.arange(3.0))
        return arr(out)
    a, b = same_outcome(into)
    np.testing.assert_array_equal(a, b)

    def scatter(T):
        out = T.zeros(2)
        T.distributed.scatter(out, [T.ones(2)], src=0)
        return arr(out)
    a, b = same_outcome(scatter)
    np.testing.assert_array_equal(a, b)

    def gather_to(T):
        out = [T.zeros(2)]
        T.distributed.gather(T.full((2,), 3.0), out, dst=0)
        return arr(out)
    a, b = same_outcome(gather_to)
    np.testing.assert_array_equal(a, b)

    # gloo's checks: list lengths, sizes, roots, missing lists
    for bad in (lambda T: T.distributed.all_gather([T.zeros(3), T.zeros(3)], T.ones(3)),
                lambda T: T.distributed.all_gather([T.zeros(3)], T.ones(2)),
                lambda T: T.distributed.all_gather_into_tensor(T.zeros(3), T.ones(2)),
                lambda T: T.distributed.broadcast(T.ones(2), 1),
                lambda T: T.distributed.broadcast(T.ones(2), 0),
                lambda T: T.distributed.reduce(T.ones(2), 0),
                lambda T: T.distributed.barrier(),
                lambda T: T.distributed.scatter(T.zeros(2)),
                lambda T: T.distributed.gather(T.zeros(2)),
                lambda T: T.distributed.all_reduce([1.0])):
        same_outcome(bad)


def test_async_collectives_return_completed_work(both):
    for T in both:
        work = T.distributed.all_reduce(T.ones(2), async_op=True)
        assert work.wait() is True and work.is_completed() is True


def test_objects_are_copied(both):
    def run(T):
        obj = {"a": [1, 2]}
        out = [None, 5]
        T.distributed.all_gather_object(out, obj)
        assert out[0] is not obj
        T.distributed.broadcast_object_list(out, src=0)
        return out
    a, b = same_outcome(run)
    assert a == b
    same_outcome(lambda T: T.distributed.all_gather_object([], 1))


def test_ddp_is_its_module_with_one_process(both):
    tg, torch = both
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 3))
    grads, outs, keys = [], [], []
    for T in both:
        T.manual_seed(0)
        m = T.nn.Sequential(T.nn.Linear(3, 2), T.nn.BatchNorm1d(2)).double()
        ddp = T.nn.parallel.DistributedDataParallel(m)
        assert ddp.module is m and ddp.require_backward_grad_sync
        with ddp.no_sync():
            assert not ddp.require_backward_grad_sync
        assert ddp.require_backward_grad_sync
        y = ddp(T.from_numpy(x))
        y.pow(2).sum().backward()
        outs.append(arr(y))
        grads.append(arr(m[0].weight.grad))
        keys.append(list(ddp.state_dict()))
        assert str(ddp).startswith("DistributedDataParallel(\n  (module): Sequential(")
    np.testing.assert_allclose(outs[0], outs[1], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-9, atol=1e-12)
    assert keys[0] == keys[1]
    same_outcome(lambda T: T.nn.parallel.DistributedDataParallel(T.nn.ReLU()))


def test_sampler_reads_the_group(both):
    def run(T):
        s = T.utils.data.distributed.DistributedSampler(list(range(7)))
        return s.num_replicas, s.rank, list(s)
    a, b = same_outcome(run)
    assert a == b


def test_send_and_recv_explain_there_is_no_other_rank(both):
    with pytest.raises(RuntimeError, match="no other rank"):
        tdist.send(tapegrad.ones(2), 0)


@pytest.mark.filterwarnings("ignore:Attempted to get default timeout")
def test_init_reads_env_as_torch(torch, monkeypatch):
    for k in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"):
        monkeypatch.delenv(k, raising=False)
    for env in ({}, {"RANK": "0"}, {"RANK": "0", "WORLD_SIZE": "1"},
                {"RANK": "0", "WORLD_SIZE": "1", "MASTER_ADDR": "127.0.0.1"}):
        with monkeypatch.context() as m:
            for k, v in env.items():
                m.setenv(k, v)
            same_outcome(lambda T: T.distributed.init_process_group("gloo"))
    same_outcome(lambda T: T.distributed.init_process_group("nccl", init_method="file:///nowhere", world_size=1,
                                                            rank=0))
    same_outcome(lambda T: T.distributed.init_process_group("gloo", init_method="file:///nowhere"))
    assert not tdist.is_initialized() and not torch.distributed.is_initialized()
    monkeypatch.setenv("RANK", "0")
    monkeypatch.setenv("WORLD_SIZE", "1")
    monkeypatch.setenv("MASTER_ADDR", "127.0.0.1")
    monkeypatch.setenv("MASTER_PORT", str(29500 + os.getpid() % 1000))
    tdist.init_process_group("gloo")
    try:
        assert tdist.get_world_size() == 1
        with pytest.raises(ValueError, match="twice"):
            tdist.init_process_group("gloo")
    finally:
        tdist.destroy_process_group()


def test_functional_collectives_copy_and_pass_gradients_through(both):
    import torch.distributed.nn.functional  # noqa: F401  (neither package imports its `nn` by itself)
    import tapegrad.distributed.nn.functional  # noqa: F401
    results = []
    for mod in both:
        fn = mod.distributed.nn.functional
        x = mod.tensor([[1.0, -2.0], [3.0, 0.5]], dtype=mod.float64, requires_grad=True)
        xt = x.t()
        g = mod.distributed.group.WORLD          # (torch's defaults hold the group of the time of their import)
        outs = [fn.all_reduce(xt, group=g), fn.all_reduce(x, op=mod.distributed.ReduceOp.MAX, group=g),
                fn.reduce(x, 0, group=g), fn.broadcast(x, 0, group=g), fn.all_gather(x, group=g)[0],
                fn.gather(x, group=g)[0], fn.scatter([x], group=g)]
        w = mod.arange(4.0, dtype=mod.float64).reshape(2, 2)
        sum((o * (w + i)).sum() for i, o in enumerate(outs)).backward()
        results.append(([o.detach().numpy() for o in outs], [o.is_contiguous() for o in outs],
                        [o.data_ptr() != x.data_ptr() for o in outs], x.grad.numpy()))
    (a, ac, ad, ag), (b, bc, bd, bg) = results
    for u, v in zip(a, b):
        np.testing.assert_array_equal(u, v)
    assert ac == bc and ad == bd
    np.testing.assert_array_equal(ag, bg)


def test_functional_collectives_need_a_group():
    # (torch raises the same ValueError in a fresh process; after a group was made and destroyed, its functional
    # collectives keep the old group's handle, so only tapegrad is checked here)
    import tapegrad.distributed.nn.functional as fn
    for call in (lambda: fn.all_reduce(tapegrad.ones(2)), lambda: fn.all_gather(tapegrad.ones(2)),
                 lambda: fn.scatter([tapegrad.ones(2)])):
        with pytest.raises(ValueError, match="Default process group has not been initialized"):
            call()
