"""Samplers: the order in which a DataLoader visits a dataset's indices."""

from __future__ import annotations

from typing import Generic, TypeVar

import numpy as np

from ...tensor import Tensor

from ..._random import _gen

T_co = TypeVar("T_co", covariant=True)


class Sampler(Generic[T_co]):
    """Base class: an iterable of indices (or of lists of indices, for batch samplers)."""

    def __init__(self, data_source=None):
        pass

    def __iter__(self):
        raise NotImplementedError


class SequentialSampler(Sampler):
    """0, 1, ..., len(data_source) - 1."""

    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self):
        return len(self.data_source)


class RandomSampler(Sampler):
    """A random permutation (or ``num_samples`` draws with replacement) from tapegrad's generator."""

    def __init__(self, data_source, replacement=False, num_samples=None, generator=None):
        self.data_source, self.replacement, self._num_samples, self.generator = \
            data_source, replacement, num_samples, generator
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got num_samples="
                             f"{self.num_samples}")

    @property
    def num_samples(self):
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self):
        """torch's order: without a generator, a fresh one seeded by a 64-bit draw of the global one; whole
        permutations (then a part of one), or with replacement randint in groups of 32 (then the rest). Lazy, as
        torch's (a generator function: the draws start at the first ``next``), so an "infinite" sampler
        (``num_samples=int(1e10)``, makemore's) costs nothing until it is read."""
        from ... import _random
        n, k = len(self.data_source), self.num_samples
        g = self.generator
        if g is None:
            seed = int(_random.full_range(_random.default_generator, 1, np.int64)[0])
            g = _random.Generator().manual_seed(seed)
        g = _gen(g)
        if self.replacement:
            for _ in range(k // 32):
                yield from (int(i) for i in _random.integers(g, 32, 0, n))
            if k % 32:
                yield from (int(i) for i in _random.integers(g, k % 32, 0, n))
            return
        for _ in range(k // n):
            yield from _random.randperm(g, n)
        if k % n:
            yield from _random.randperm(g, n)[:k % n]

    def __len__(self):
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given indices in a random order."""

    def __init__(self, indices, generator=None):
        self.indices, self.generator = indices, generator

    def __iter__(self):
        from ... import _random
        return iter([self.indices[i] for i in _random.randperm(_gen(self.generator), len(self.indices))])

    def __len__(self):
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """``num_samples`` indices drawn with probabilities proportional to ``weights``."""

    def __init__(self, weights, num_samples, replacement=True, generator=None):
        w = np.asarray(weights._array if hasattr(weights, "_array") else weights, dtype=np.float64)
        self.weights, self.num_samples, self.replacement, self.generator = w, num_samples, replacement, generator

    def __iter__(self):
        from ...ops.sampling import multinomial          # torch's: multinomial of the float64 weights
        w = Tensor._make(self.weights)
        return iter(multinomial(w, self.num_samples, self.replacement, generator=self.generator).tolist())

    def __len__(self):
        return self.num_samples


class BatchSampler(Sampler):
    """Groups another sampler's indices into lists of ``batch_size``."""

    def __init__(self, sampler, batch_size, drop_last):
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError(f"batch_size should be a positive integer value, but got batch_size={batch_size}")
        self.sampler, self.batch_size, self.drop_last = sampler, batch_size, drop_last

    def __iter__(self):
        batch = []
        for idx in self.sampler:
            batch.append(idx)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self):
        n = len(self.sampler)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
