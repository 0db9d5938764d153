"""DataLoader: batches from a dataset, in order or shuffled, collated into tensors."""

from __future__ import annotations

import collections.abc
import copy
import numbers
import warnings
from typing import Generic

import numpy as np

from ...tensor import Tensor
from .dataset import IterableDataset, T_co, TensorDataset
from ._workers import WorkerInfo, Workers, get_worker_info  # noqa: F401  (re-exported)
from .sampler import BatchSampler, RandomSampler, SequentialSampler


def _stack(tensors):
    from ...ops.shape import stack
    return stack(tensors, 0)


def default_collate(batch):
    """Stack a list of samples into a batch: tensors, NumPy arrays and numbers become stacked tensors; tuples,
    lists and dicts are collated field by field (as torch's default_collate)."""
    elem = batch[0]
    if isinstance(elem, Tensor):
        if elem._array.flags.c_contiguous and all(not t.requires_grad for t in batch):
            return Tensor._make(np.stack([t._array for t in batch]))
        return _stack(batch)        # (torch.stack's layout: row-major, whatever the samples' layouts)
    if isinstance(elem, np.ndarray):
        if elem.dtype.kind in "OSU":
            raise TypeError(f"default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; "
                            f"found {elem.dtype}")
        if not elem.flags.c_contiguous:
            return _stack([Tensor._make(b) for b in batch])
        return Tensor._make(np.stack(batch))
    if isinstance(elem, np.generic):
        return Tensor._make(np.asarray(batch))
    if isinstance(elem, bool):
        return Tensor._make(np.asarray(batch, dtype=np.bool_))
    if isinstance(elem, numbers.Integral):
        return Tensor._make(np.asarray(batch, dtype=np.int64))
    if isinstance(elem, float):
        return Tensor._make(np.asarray(batch, dtype=np.float64))
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        return type(elem)({k: default_collate([d[k] for d in batch]) for k in elem}) if not isinstance(
            elem, collections.OrderedDict) else collections.OrderedDict(
            (k, default_collate([d[k] for d in batch])) for k in elem)
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):
        return type(elem)(*(default_collate(s) for s in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        if any(len(e) != len(elem) for e in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        cols = [default_collate(list(s)) for s in zip(*batch)]
        if isinstance(elem, (tuple, list)):
            return cols                 # a tuple's fields come back as a list, as in torch
        try:                            # torch keeps another sequence's type where it can
            if isinstance(elem, collections.abc.MutableSequence):
                clone = copy.copy(elem)
                for i, col in enumerate(cols):
                    clone[i] = col
                return clone
            return type(elem)(cols)
        except TypeError:
            return cols
    raise TypeError(f"default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found "
                    f"{type(elem)}")


def default_convert(data):
    """What the DataLoader does without batching: NumPy arrays become tensors, containers are kept."""
    if isinstance(data, np.ndarray):
        return Tensor._make(data)
    if isinstance(data, collections.abc.Mapping):
        return type(data)({k: default_convert(v) for k, v in data.items()})
    if isinstance(data, (list, tuple)) and not isinstance(data, str):
        return type(data)(default_convert(d) for d in data) if not hasattr(data, "_fields") else \
            type(data)(*(default_convert(d) for d in data))
    return data


def _context(ctx, num_workers):
    """torch's checks of ``multiprocessing_context`` (a start method's name becomes its context). The batches are
    made in this process whatever the number of workers: the context is kept, as torch keeps it."""
    if ctx is None:
        return None
    if num_workers <= 0:
        raise ValueError(f"multiprocessing_context can only be used with multi-process loading (num_workers > 0), "
                         f"but got num_workers={num_workers}")
    import multiprocessing
    if isinstance(ctx, str):
        methods = multiprocessing.get_all_start_methods()
        if ctx not in methods:
            raise ValueError(f"multiprocessing_context option should specify a valid start method in {methods!r}, "
                             f"but got multiprocessing_context={ctx!r}")
        ctx = multiprocessing.get_context(ctx)
    if not isinstance(ctx, multiprocessing.context.BaseContext):
        raise TypeError(f"multiprocessing_context option should be a valid context object or a string specifying "
                        f"the start method, but got multiprocessing_context={ctx}")
    return ctx


class DataLoader(Generic[T_co]):
    """Iterate over ``dataset`` in batches.

    >>> ds = tapegrad.utils.data.TensorDataset(tapegrad.arange(10.0), tapegrad.arange(10))
    >>> xb, yb = next(iter(tapegrad.utils.data.DataLoader(ds, batch_size=4)))
    >>> xb
    tensor([0., 1., 2., 3.])

    Loading happens in the main process; with ``num_workers > 0`` each batch is made with the random states of
    the worker torch would give it (``_workers.py``), so random augmentation draws as in torch. ``pin_memory``
    and friends are accepted for compatibility.
    """

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None, num_workers=0,
                 collate_fn=None, pin_memory=False, drop_last=False, timeout=0, worker_init_fn=None,
                 multiprocessing_context=None, generator=None, *, prefetch_factor=None, persistent_workers=False,
                 pin_memory_device="", in_order=True):
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to disable "
                             "multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in multiprocessing.let num_workers > 0 "
                             "to enable multiprocessing, otherwise set prefetch_factor to None.")
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        elif prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        self.dataset = dataset
        self.num_workers, self.pin_memory, self.timeout = num_workers, pin_memory, timeout
        self.pin_memory_device, self.prefetch_factor, self.persistent_workers = \
            pin_memory_device, prefetch_factor, persistent_workers
        self.worker_init_fn, self.in_order = worker_init_fn, in_order
        self.multiprocessing_context = _context(multiprocessing_context, num_workers)
        self.generator = generator
        self._iterable = isinstance(dataset, IterableDataset)
        if self._iterable:
            if shuffle:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified shuffle option, but got "
                                 f"shuffle={shuffle}")
            if sampler is not None or batch_sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified sampler option")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, "
                                 "and drop_last")
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually exclusive with "
                             "drop_last")
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if sampler is None and not self._iterable:
            sampler = RandomSampler(dataset, generator=generator) if shuffle else SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None and not self._iterable:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.batch_size, self.drop_last, self.sampler, self.batch_sampler = batch_size, drop_last, sampler, \
            batch_sampler
        self.collate_fn = collate_fn or (default_collate if (batch_size is not None or batch_sampler is not None)
                                         else default_convert)
        self._initialized = True

    _FIXED = frozenset(("batch_size", "batch_sampler", "sampler", "drop_last", "dataset", "persistent_workers"))

    def __setattr__(self, attr, value):
        if attr in self._FIXED and self.__dict__.get("_initialized"):
            raise ValueError(f"{attr} attribute should not be set after {type(self).__name__} is initialized")
        object.__setattr__(self, attr, value)

    def __iter__(self):
        """An iterator over the batches (torch's iterator classes); like torch's, making one draws a 64-bit base seed
        (for workers) from the loader's generator, so that the draws after it (a shuffle's) are torch's."""
        # (torch's warnings when an iterator is made: tapegrad has no accelerator, so nothing is pinned)
        if self.pin_memory and self.pin_memory_device:
            warnings.warn("pin_memory_device is deprecated, the current accelerator will be used as the device,"
                          f"ignore pin_memory_device='{self.pin_memory_device}'.", stacklevel=2)
        if self.pin_memory:
            warnings.warn("'pin_memory' argument is set as true but no accelerator is found, then device pinned "
                          "memory won't be used.", stacklevel=2)
        # torch draws the workers' base seed when an iterator is made, shuffled or not: one draw from the stream
        # (persistent workers keep theirs across epochs: torch draws it for the first iterator only)
        workers = self.__dict__.get("_workers")
        if workers is None or not self.persistent_workers:
            from ... import empty, int64
            self._base_seed = empty((), dtype=int64).random_(generator=self.generator).item()
            workers = Workers(self, self._base_seed) if self.num_workers > 0 else None
            if self.persistent_workers:
                self._workers = workers
        kind = _MultiProcessingDataLoaderIter if self.num_workers > 0 else _SingleProcessDataLoaderIter
        return kind(self, workers)

    def _batches(self, workers=None):
        if workers is None or self._iterable or (self.worker_init_fn is None and self.collate_fn is default_collate
                                                  and type(self.dataset) is TensorDataset):
            yield from self._made()     # (a TensorDataset's batches draw nothing: no states to swap)
            return
        for i, make in enumerate(self._makers()):
            yield workers.run(i, make)

    def _made(self):
        if self._iterable:
            if self.batch_size is None:
                for item in self.dataset:
                    yield self.collate_fn(item)
                return
            batch = []
            for item in self.dataset:
                batch.append(item)
                if len(batch) == self.batch_size:
                    yield self.collate_fn(batch)
                    batch = []
            if batch and not self.drop_last:
                yield self.collate_fn(batch)
            return
        if self.batch_sampler is None:
            for idx in self.sampler:
                yield self.collate_fn(self.dataset[idx])
            return
        if type(self.dataset) is TensorDataset and self.collate_fn is default_collate:
            # the same batches as stacking samples one by one, with one fancy index per tensor
            tensors = self.dataset.tensors
            for indices in self.batch_sampler:
                idx = np.asarray(indices, dtype=np.int64)
                yield [_stack([t[i] for i in indices]) if t.requires_grad or not t._array.flags.c_contiguous
                       else Tensor._make(t._array[idx]) for t in tensors]
            return
        fetch_many = getattr(self.dataset, "__getitems__", None)
        for indices in self.batch_sampler:
            samples = fetch_many(indices) if fetch_many else [self.dataset[i] for i in indices]
            yield self.collate_fn(samples)

    def _makers(self):
        """A map-style dataset's batches as calls to make (each one a worker's batch), in order."""
        collate = self.collate_fn
        if self.batch_sampler is None:
            for idx in self.sampler:
                yield lambda idx=idx: collate(self.dataset[idx])
            return
        fetch_many = getattr(self.dataset, "__getitems__", None)
        for indices in self.batch_sampler:
            yield lambda indices=indices: collate(fetch_many(indices) if fetch_many else
                                                  [self.dataset[i] for i in indices])

    def __len__(self):
        if self._iterable:
            n = len(self.dataset)
            if self.batch_size is None:
                return n
            return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
        if self.batch_sampler is not None:
            return len(self.batch_sampler)
        return len(self.sampler)


class _BaseDataLoaderIter:
    """What ``iter(loader)`` gives, as torch's: an iterator (``next(it)``; there is no ``.next()``, as in torch) with
    ``len()`` the loader's and a count of the batches it has yielded. Batches are made in this process."""

    def __init__(self, loader, workers=None):
        self._dataset, self._num_yielded = loader.dataset, 0
        self._len = loader.__len__ if not loader._iterable or hasattr(loader.dataset, "__len__") else None
        self._batches = loader._batches(workers)

    def __iter__(self):
        return self

    def __next__(self):
        batch = next(self._batches)
        self._num_yielded += 1
        return batch

    def __len__(self):
        if self._len is None:
            raise TypeError(f"object of type '{type(self._dataset).__name__}' has no len()")
        return self._len()


class _SingleProcessDataLoaderIter(_BaseDataLoaderIter):
    pass


class _MultiProcessingDataLoaderIter(_BaseDataLoaderIter):
    """``num_workers > 0``: the same batches, in the same order, made in the main process with each worker's
    random states (``_workers.Workers``)."""
