"""share_memory_ / Module.share_memory put storage in shared memory, as torch's do: a process the tensor is sent to
through tapegrad.multiprocessing (spawn or fork) reads and writes the same numbers (Hogwild training,
pytorch/examples' mnist_hogwild); ordinary pickling still copies."""

import pickle
import warnings

import numpy as np
import pytest

import tapegrad
import tapegrad.multiprocessing as mp


def test_share_memory_keeps_values_views_and_identity(torch):
    for T in (torch, tapegrad):
        x = T.arange(6.0).reshape(2, 3)
        row = x[1]
        assert not x.untyped_storage().is_shared()
        assert x.share_memory_() is x and x.is_shared() and row.is_shared() and row.untyped_storage().is_shared()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")            # (TypedStorage is deprecated)
            assert x.storage().is_shared()
        assert x.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
        row[0] = 9.0                                   # the view made before still views x's (moved) storage
        x[0, 0] = -1.0
        assert x[1, 0].item() == 9.0 and x.storage_offset() == 0 and row.storage_offset() == 3
        assert x.share_memory_() is x                 # (a second call keeps it where it is)
        y = pickle.loads(pickle.dumps(x))              # ordinary pickling copies
        y[0, 0] = 5.0
        assert x[0, 0].item() == -1.0 and not y.is_shared()


def test_every_alias_of_the_storage_follows(torch):
    # torch shares the storage: p.data.share_memory_() shares p, and detach()/.data aliases made before see it too
    for T in (torch, tapegrad):
        p = T.nn.Parameter(T.zeros(3))
        before = p.detach()
        p.data.share_memory_()
        assert p.is_shared() and before.is_shared()
        before[1] = 4.0
        assert p.tolist() == [0.0, 4.0, 0.0]


def test_module_share_memory_shares_every_parameter_and_buffer():
    m = tapegrad.nn.Sequential(tapegrad.nn.Linear(3, 2), tapegrad.nn.BatchNorm1d(2))
    w = m[0].weight
    before = [t.detach().clone() for t in m.state_dict().values()]
    assert m.share_memory() is m and m[0].weight is w
    assert all(t.is_shared() for t in m.state_dict().values())
    with pytest.raises(RuntimeError, match="Can't share memory on an uninitialized parameter"):
        tapegrad.nn.LazyLinear(2).share_memory()
    assert all(np.array_equal(a.numpy(), b.numpy()) for a, b in zip(before, m.state_dict().values()))
    m(tapegrad.ones(4, 3)).sum().backward()         # still trains
    assert w.grad is not None and w.grad.shape == (2, 3)


def _train(model, steps, seed):
    opt = tapegrad.optim.SGD(model.parameters(), lr=0.1)
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        opt.zero_grad()
        x = tapegrad.from_numpy(rng.standard_normal((4, 3)).astype(np.float32))
        model(x).pow(2).mean().backward()
        opt.step()


def _reference(model, steps, seed):
    m = tapegrad.nn.Linear(3, 2)
    m.load_state_dict(model.state_dict())
    _train(m, steps, seed)
    return m.state_dict()


@pytest.mark.parametrize("method", ["spawn", "fork"])
def test_a_child_process_trains_the_parents_shared_parameters(method):
    tapegrad.manual_seed(0)
    model = tapegrad.nn.Linear(3, 2)
    expected = _reference(model, 3, seed=1)
    model.share_memory()
    p = mp.get_context(method).Process(target=_train, args=(model, 3, 1))
    p.start()
    p.join(60)
    assert p.exitcode == 0
    for k, v in model.state_dict().items():
        np.testing.assert_allclose(v.numpy(), expected[k].numpy(), rtol=1e-6)


def _add_through_queue(q, done):
    t = q.get()
    t.add_(1.0)
    done.put(t.is_shared())


def test_a_shared_tensor_sent_through_a_queue_is_the_same_memory():
    ctx = mp.get_context("spawn")
    q, done = ctx.Queue(), ctx.Queue()
    x = tapegrad.zeros(2, 2).share_memory_()
    p = ctx.Process(target=_add_through_queue, args=(q, done))
    p.start()
    q.put(x[1])                                        # (a view: sent as its place in the shared storage)
    assert done.get(timeout=60) is True
    p.join(60)
    assert x.tolist() == [[0.0, 0.0], [1.0, 1.0]]
