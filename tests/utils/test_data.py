"""tapegrad.utils.data against torch.utils.data (batches, collation, samplers, splits)."""

import numpy as np
import pytest

import tapegrad
from tapegrad.utils.data import (BatchSampler, ConcatDataset, DataLoader, Dataset, IterableDataset, RandomSampler,
                                 SequentialSampler, Subset, TensorDataset, default_collate, random_split)


def test_tensor_dataset_and_loader_batches():
    x = tapegrad.arange(10.0).reshape(5, 2)
    y = tapegrad.arange(5)
    ds = TensorDataset(x, y)
    assert len(ds) == 5 and ds[1][0].tolist() == [2.0, 3.0] and ds[1][1].item() == 1
    batches = list(DataLoader(ds, batch_size=2))
    assert [b[1].tolist() for b in batches] == [[0, 1], [2, 3], [4]]
    assert batches[0][0].shape == (2, 2) and batches[0][0].dtype is tapegrad.float32
    assert len(DataLoader(ds, batch_size=2)) == 3 and len(DataLoader(ds, batch_size=2, drop_last=True)) == 2
    assert [b[1].tolist() for b in DataLoader(ds, batch_size=2, drop_last=True)] == [[0, 1], [2, 3]]
    with pytest.raises(AssertionError, match="Size mismatch between tensors"):
        TensorDataset(x, tapegrad.arange(4))


def test_shuffle_is_a_permutation_and_seeded():
    ds = TensorDataset(tapegrad.arange(20))
    tapegrad.manual_seed(0)
    a = [v for (b,) in DataLoader(ds, batch_size=6, shuffle=True) for v in b.tolist()]
    tapegrad.manual_seed(0)
    b = [v for (b,) in DataLoader(ds, batch_size=6, shuffle=True) for v in b.tolist()]
    assert a == b and sorted(a) == list(range(20)) and a != list(range(20))
    g = tapegrad.Generator().manual_seed(3)
    c = [v for (b,) in DataLoader(ds, batch_size=6, shuffle=True, generator=g) for v in b.tolist()]
    assert sorted(c) == list(range(20))


class Squares(Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        return {"x": np.array([i, i * i], dtype=np.float32), "y": i, "name": f"s{i}", "pair": (float(i), True)}


def test_default_collate_nests_like_torch(torch):
    from torch.utils.data import default_collate as torch_collate
    samples = [Squares()[i] for i in range(3)]
    ours, theirs = default_collate(samples), torch_collate(samples)
    assert ours["x"].tolist() == theirs["x"].tolist() and ours["x"].dtype.name == "float32"
    assert ours["y"].tolist() == theirs["y"].tolist() and str(ours["y"].dtype) == "tapegrad.int64"
    assert ours["name"] == theirs["name"]
    assert ours["pair"][0].tolist() == theirs["pair"][0].tolist()
    assert str(ours["pair"][0].dtype).split(".")[-1] == str(theirs["pair"][0].dtype).split(".")[-1]
    assert ours["pair"][1].tolist() == theirs["pair"][1].tolist()
    stacked = default_collate([tapegrad.ones(2), tapegrad.zeros(2)])
    assert stacked.shape == (2, 2)


def test_samplers_and_batch_sampler():
    assert list(SequentialSampler(range(3))) == [0, 1, 2]
    r = list(RandomSampler(range(5)))
    assert sorted(r) == list(range(5))
    assert len(list(RandomSampler(range(5), replacement=True, num_samples=9))) == 9
    assert list(BatchSampler(SequentialSampler(range(5)), 2, False)) == [[0, 1], [2, 3], [4]]
    assert list(BatchSampler(SequentialSampler(range(5)), 2, True)) == [[0, 1], [2, 3]]
    loader = DataLoader(TensorDataset(tapegrad.arange(6)), batch_sampler=BatchSampler(range(6), 4, False))
    assert [b[0].tolist() for b in loader] == [[0, 1, 2, 3], [4, 5]]
    with pytest.raises(ValueError, match="mutually exclusive"):
        DataLoader(TensorDataset(tapegrad.arange(6)), batch_size=2, batch_sampler=BatchSampler(range(6), 4, False))


def test_random_sampler_is_lazy_and_draws_in_torchs_order(torch):
    # makemore's InfiniteDataLoader: RandomSampler(replacement=True, num_samples=int(1e10)) must cost nothing up front
    loader = DataLoader(TensorDataset(tapegrad.arange(10)), batch_size=4,
                        sampler=RandomSampler(range(10), replacement=True, num_samples=int(1e10)))
    batch = next(iter(loader))[0]
    assert batch.shape == (4,) and 0 <= batch.min().item() and batch.max().item() < 10
    # the draws torch makes, in its order: randint in chunks of 32 (replacement), whole permutations (without)
    for lib in (tapegrad, torch):
        g, ref = lib.Generator(), lib.Generator()
        g.manual_seed(5), ref.manual_seed(5)
        drawn = list(lib.utils.data.RandomSampler(range(7), replacement=True, num_samples=40, generator=g))
        assert drawn == (lib.randint(high=7, size=(32,), generator=ref).tolist()
                         + lib.randint(high=7, size=(8,), generator=ref).tolist())
        drawn = list(lib.utils.data.RandomSampler(range(4), num_samples=10, generator=g))
        assert drawn == (lib.randperm(4, generator=ref).tolist() + lib.randperm(4, generator=ref).tolist()
                         + lib.randperm(4, generator=ref).tolist()[:2])


def test_making_an_iterator_draws_once_from_the_stream(torch):
    # torch draws its workers' base seed from the stream each time a DataLoader iterator is made, shuffled or not
    for lib in (tapegrad, torch):
        lib.manual_seed(1)
        expected = (lib.empty((), dtype=lib.int64).random_(), lib.randn(2))[1]
        lib.manual_seed(1)
        iter(lib.utils.data.DataLoader(lib.utils.data.TensorDataset(lib.arange(4)), batch_size=2))
        assert lib.equal(lib.randn(2), expected)


def test_loader_iterator_is_torchs(torch):
    # yunjey/pytorch-tutorial: `data_iter = iter(train_loader)`, then `len(data_iter)`, `next(data_iter)`, and its
    # stale `data_iter.next()` fails with torch's words
    for lib, workers in ((tapegrad, 0), (torch, 0), (tapegrad, 2)):
        it = iter(lib.utils.data.DataLoader(lib.utils.data.TensorDataset(lib.arange(5)), batch_size=2,
                                            num_workers=workers))
        name = "_MultiProcessingDataLoaderIter" if workers else "_SingleProcessDataLoaderIter"
        assert type(it).__name__ == name and iter(it) is it and len(it) == 3
        assert next(it)[0].tolist() == [0, 1] and it._num_yielded == 1
        with pytest.raises(AttributeError, match=f"'{name}' object has no attribute 'next'"):
            it.next()
        assert [b[0].tolist() for b in it] == [[2, 3], [4]]


def test_collate_gives_torchs_container_types(torch):
    class Seq(tuple):
        pass

    for lib in (tapegrad, torch):
        ds = lib.utils.data.TensorDataset(lib.arange(4), lib.arange(4.0))
        assert type(next(iter(lib.utils.data.DataLoader(ds, batch_size=2)))) is list   # the fast path too
        c = lib.utils.data.default_collate
        assert type(c([(lib.tensor(1), 2), (lib.tensor(3), 4)])) is list
        assert type(c([[1, 2], [3, 4]])) is list
        assert type(c([Seq((1, 2)), Seq((3, 4))])) is list
        out = c([range(2), range(2)])             # a sequence that cannot be rebuilt comes back as a list
        assert type(out) is list and out[1].tolist() == [1, 1]


def test_concat_subset_random_split():
    a, b = TensorDataset(tapegrad.arange(3)), TensorDataset(tapegrad.arange(3, 5))
    c = ConcatDataset([a, b])
    assert len(c) == 5 and c[3][0].item() == 3 and c[-1][0].item() == 4
    assert (a + b)[4][0].item() == 4
    s = Subset(c, [4, 0])
    assert len(s) == 2 and s[0][0].item() == 4
    parts = random_split(range(10), [7, 3])
    assert sorted(list(parts[0]) + list(parts[1])) == list(range(10))
    parts = random_split(range(10), [0.5, 0.5])
    assert [len(p) for p in parts] == [5, 5]
    with pytest.raises(ValueError, match="Sum of input lengths does not equal"):
        random_split(range(10), [3, 3])


def test_iterable_dataset_and_custom_collate():
    class Stream(IterableDataset):
        def __iter__(self):
            return iter(range(7))

    assert [b.tolist() for b in DataLoader(Stream(), batch_size=3)] == [[0, 1, 2], [3, 4, 5], [6]]
    assert list(DataLoader(Stream(), batch_size=3, collate_fn=lambda b: sum(b))) == [3, 12, 6]
    with pytest.raises(ValueError, match="expected unspecified shuffle option"):
        DataLoader(Stream(), shuffle=True)


def test_loader_matches_torch_batches(torch):
    x = np.arange(14, dtype=np.float32).reshape(7, 2)
    ours = [b[0].tolist() for b in DataLoader(TensorDataset(tapegrad.tensor(x)), batch_size=3)]
    theirs = [b[0].tolist() for b in torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.tensor(x)),
                                                                 batch_size=3)]
    assert ours == theirs


def test_pin_memory_warns_as_torch_without_an_accelerator(torch):
    import warnings

    def caught(T, **kw):
        loader = T.utils.data.DataLoader(T.utils.data.TensorDataset(T.arange(4.0)), batch_size=2, **kw)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            it = iter(loader)                          # (made, not yet read: torch warns here)
        return [str(x.message) for x in w], [b[0].tolist() for b in it]

    for kw in ({"pin_memory": True}, {"pin_memory": True, "pin_memory_device": "cpu"}, {}):
        assert caught(tapegrad, **kw) == caught(torch, **kw)


def test_loader_arguments_are_checked_as_torch(torch):
    # (the same errors with the same words; a valid context is kept, the batches are made in this process)
    cases = [dict(num_workers=0, prefetch_factor=2), dict(num_workers=0, persistent_workers=True),
             dict(num_workers=-1), dict(timeout=-1), dict(num_workers=2, prefetch_factor=-1),
             dict(multiprocessing_context="spawn"), dict(num_workers=1, multiprocessing_context="bogus"),
             dict(num_workers=1, multiprocessing_context=3), dict(num_workers=1, multiprocessing_context="spawn"),
             dict(shuffle=True, sampler=[0, 1]), dict(batch_size=None, drop_last=True)]

    def outcome(T, kw):
        try:
            dl = T.utils.data.DataLoader(T.utils.data.TensorDataset(T.arange(4.0)), **kw)
        except (ValueError, TypeError) as e:
            return type(e).__name__, str(e)
        return dl.prefetch_factor, dl.persistent_workers, type(dl.multiprocessing_context).__name__

    for kw in cases:
        assert outcome(tapegrad, kw) == outcome(torch, kw), kw
    for T in (tapegrad, torch):
        dl = T.utils.data.DataLoader(T.utils.data.TensorDataset(T.arange(4.0)), batch_size=2)
        for attr in ("batch_size", "sampler", "drop_last", "dataset"):
            with pytest.raises(ValueError, match=f"{attr} attribute should not be set after DataLoader is "
                                                 "initialized"):
                setattr(dl, attr, None)
        dl.collate_fn = dl.collate_fn           # (other attributes may change)


def test_a_users_own_class_named_tensor_dataset_is_indexed_by_its_getitem(torch):
    # torchnet and older scripts define their own `TensorDataset` (a list of tensors, samples as lists); the
    # loader's fast path is for the library's class only, so these batch through their own __getitem__
    def make(lib):
        class TensorDataset(lib.utils.data.Dataset):
            def __init__(self, data):
                self.data = data

            def __len__(self):
                return len(self.data[0])

            def __getitem__(self, i):
                return [d[i] * 2 for d in self.data]

        class Doubled(lib.utils.data.TensorDataset):
            def __getitem__(self, i):
                return tuple(t[i] * 2 for t in self.tensors)

        x, y = lib.arange(12.0).reshape(6, 2), lib.arange(6)
        return [[b.tolist() for b in batch] for ds in (TensorDataset([x, y]), Doubled(x, y))
                for batch in lib.utils.data.DataLoader(ds, batch_size=4)]

    assert make(tapegrad) == make(torch)
