"""``num_workers > 0`` in one process: the random states torch's worker processes would have.

torch loads batch ``i`` of a map-style dataset in worker ``i % num_workers``, a process that starts with Python's
``random`` seeded ``base_seed + id``, torch's generator seeded the same, and NumPy's global generator seeded with a
128-bit state hashed from ``(base_seed, id)``; it then calls ``worker_init_fn(id)``, and keeps its states from one
batch to the next. A dataset that augments at random (a random crop with ``np.random``, a flip with
``torch.rand``) therefore draws per worker, and none of it moves the main process's generators.

tapegrad makes the batches in the main process (``DataLoader``'s design), so ``Workers`` keeps one set of states
per worker and swaps it in around each batch: the batches, their random draws and ``get_worker_info()`` inside
the dataset are torch's, and the main process's generators are untouched. (Unlike a worker process, the dataset
object is shared: attributes a dataset sets on itself while loading are seen by the other workers.)
"""

from __future__ import annotations

import random

import numpy as np

__all__ = ["WorkerInfo", "get_worker_info", "Workers", "numpy_worker_seed"]

_current = [None]          # the WorkerInfo of the worker whose batch is being made, else None


class WorkerInfo:
    """What ``get_worker_info()`` returns while a worker makes a batch: ``id``, ``num_workers``, ``seed`` and
    ``dataset``; read-only once made (torch's error)."""

    def __init__(self, **kwargs):
        for key, value in kwargs.items():
            object.__setattr__(self, key, value)
        object.__setattr__(self, "_keys", tuple(kwargs))

    def __setattr__(self, key, value):
        raise RuntimeError(f"Cannot assign attributes to {type(self).__name__} objects")

    def __repr__(self):
        return f"{type(self).__name__}({', '.join(f'{k}={getattr(self, k)}' for k in self._keys)})"


def get_worker_info():
    """Inside a ``DataLoader`` worker (while the dataset makes a batch of a loader with ``num_workers > 0``): its
    ``WorkerInfo``; otherwise None."""
    return _current[0]


_M32 = 0xFFFFFFFF


def numpy_worker_seed(base_seed, worker_id):
    """The four 32-bit words torch seeds a worker's NumPy generator with: a hash of ``(worker_id, base_seed)`` in
    the style of NumPy's SeedSequence (its constants), so that neighbouring workers get unrelated streams."""
    mult_hash = [0x43B0D7E5]

    def hashed(v):
        k = mult_hash[0]
        mult_hash[0] = (k * 0x931E8875) & _M32
        v = ((v ^ k) * mult_hash[0]) & _M32
        return v ^ (v >> 16)

    def mixed(x, y):
        v = ((0xCA01F9DD * x) - (0x4973F715 * y)) & _M32
        return v ^ (v >> 16)

    pool = [hashed(v) for v in (worker_id, base_seed & _M32, base_seed >> 32, 0)]
    for src in range(4):
        for dst in range(4):
            if src != dst:
                pool[dst] = mixed(pool[dst], hashed(pool[src]))
    words, k = [], 0x8B51F9DD
    for v in pool:
        v ^= k
        k = (k * 0x58F38DED) & _M32
        v = (v * k) & _M32
        words.append(v ^ (v >> 16))
    return words


class Workers:
    """The states of a loader's ``num_workers`` emulated workers for one iterator (or for every epoch, with
    ``persistent_workers``): ``run(i, make)`` makes batch ``i`` as worker ``i % num_workers`` would."""

    def __init__(self, loader, base_seed):
        self.n, self.base_seed = loader.num_workers, base_seed
        self.dataset, self.init_fn = loader.dataset, loader.worker_init_fn
        self.states = [None] * self.n
        self.infos = [None] * self.n

    def run(self, i, make):
        from ... import _random
        gen = _random.default_generator
        w = i % self.n
        main = random.getstate(), np.random.get_state(), gen._snapshot()
        try:
            if self.states[w] is None:           # the worker starts: torch's seeding, then worker_init_fn
                seed = self.base_seed + w
                random.seed(seed)
                gen.manual_seed(seed)
                np.random.seed(numpy_worker_seed(self.base_seed, w))
                self.infos[w] = _current[0] = WorkerInfo(id=w, num_workers=self.n, seed=seed,
                                                         dataset=self.dataset)
                if self.init_fn is not None:
                    self.init_fn(w)
            else:
                py, npy, snap = self.states[w]
                random.setstate(py)
                np.random.set_state(npy)
                gen._restore(snap)
                _current[0] = self.infos[w]
            out = make()
            self.states[w] = random.getstate(), np.random.get_state(), gen._snapshot()
            return out
        finally:
            _current[0] = None
            random.setstate(main[0])
            np.random.set_state(main[1])
            gen._restore(main[2])
