"""num_workers > 0: each batch is made with the random states of the worker torch gives it; against torch."""

import random

import numpy as np
import pytest

import tapegrad
from tapegrad.utils.data._workers import numpy_worker_seed


def test_numpy_worker_seed_is_torchs():
    from torch.utils.data._utils.worker import _generate_state
    rng = random.Random(0)
    for _ in range(500):
        base, w = rng.getrandbits(63), rng.randrange(32)
        assert numpy_worker_seed(base, w) == _generate_state(base, w)


def _augmenting(lib):
    class Jitter(lib.utils.data.Dataset):
        """Each item drawn with NumPy, torch and Python's random, as augmentations do."""

        def __len__(self):
            return 10

        def __getitem__(self, i):
            info = lib.utils.data.get_worker_info()
            shift = np.random.randint(0, 100)
            noise = lib.rand(2)
            coin = random.random()
            who = -1 if info is None else info.id * 1000 + info.num_workers * 100 + (info.seed - lib.initial_seed())
            return lib.tensor([i, shift, coin, who]).double(), noise
    return Jitter()


def _epochs(lib, n_epochs=2, **kw):
    lib.manual_seed(5)
    np.random.seed(9)
    random.seed(3)
    loader = lib.utils.data.DataLoader(_augmenting(lib), batch_size=3, shuffle=True, **kw)
    out = []
    for _ in range(n_epochs):
        for a, b in loader:
            out.append((a.tolist(), b.tolist()))
    # the main process's generators: untouched by the workers
    out.append((lib.rand(2).tolist(), np.random.randint(0, 10 ** 6), random.random()))
    return out


def _reseed_numpy(worker_id):        # a common worker_init_fn (it runs in the worker, after torch's seeding)
    np.random.seed(1000 + worker_id)


@pytest.mark.filterwarnings("ignore:This DataLoader will create")     # (torch's, for 3 workers on 2 cores)
@pytest.mark.parametrize("kw", [dict(num_workers=0), dict(num_workers=1), dict(num_workers=3),
                                dict(num_workers=2, persistent_workers=True),
                                dict(num_workers=2, worker_init_fn=_reseed_numpy)])
def test_random_augmentation_per_worker_as_torch(torch, kw):
    ours, theirs = _epochs(tapegrad, **kw), _epochs(torch, **kw)
    assert len(ours) == len(theirs)
    for (a1, b1), (a2, b2) in zip(ours[:-1], theirs[:-1]):
        assert a1 == a2
        np.testing.assert_allclose(b1, b2, rtol=1e-6)
    np.testing.assert_allclose(ours[-1][0], theirs[-1][0], rtol=1e-6)
    assert ours[-1][1:] == theirs[-1][1:]


def test_worker_info_is_read_only_and_none_outside():
    assert tapegrad.utils.data.get_worker_info() is None
    seen = []

    class Peek(tapegrad.utils.data.Dataset):
        def __len__(self):
            return 2

        def __getitem__(self, i):
            info = tapegrad.utils.data.get_worker_info()
            seen.append(repr(info).split(",")[0])
            with pytest.raises(RuntimeError, match="Cannot assign attributes to WorkerInfo objects"):
                info.id = 7
            return i

    list(tapegrad.utils.data.DataLoader(Peek(), num_workers=2))
    assert seen == ["WorkerInfo(id=0", "WorkerInfo(id=1"]
    assert tapegrad.utils.data.get_worker_info() is None
