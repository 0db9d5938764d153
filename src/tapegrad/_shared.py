"""Shared-memory storage: what ``Tensor.share_memory_()`` and ``Module.share_memory()`` do.

A shared tensor's storage (the ndarray that owns its memory, ``_tensor_api._root``) is moved into a named POSIX
shared-memory segment (``multiprocessing.shared_memory``): a new ndarray of the same shape, dtype and strides over
the segment, holding the same numbers, replaces it in every tensor over it (``share``). When ``multiprocessing``
sends such a tensor to another process (a ``spawn``ed ``Process``'s arguments, a ``Queue``), it pickles it with
``ForkingPickler``, for which ``register_reducers`` installs ``reduce_tensor``: the receiver gets the segment's
name and the tensor's place in it, and maps the same memory. Parameters updated in place by one process's
optimizer are then seen by every other (Hogwild training, pytorch/examples' mnist_hogwild). A ``fork``ed child
inherits the mapping itself. Ordinary pickling (``torch.save``, ``copy.deepcopy``) still copies the numbers.

The process that created a segment removes it when the storage's last array is gone (or at exit); a process that
only maps it unmaps it then. torch moves a tensor's whole storage in ``share_memory_``; so does this, and every
tensor over that storage follows (NumPy arrays taken from them before, ``x.numpy()``, keep the old memory).
"""

from __future__ import annotations

import gc
import weakref
from multiprocessing import shared_memory

import numpy as np

_SEGMENTS: dict = {}     # segment name -> (SharedMemory, weakref to the storage ndarray over it)
_BY_STORAGE: dict = {}   # id(storage ndarray) -> segment name
_REGISTERED = [False]


def _storage(a: np.ndarray) -> np.ndarray:
    from .ops.shape.strided import _storage as storage
    return storage(a)


def _addr(a: np.ndarray) -> int:
    return a.__array_interface__["data"][0]


def segment_of(a: np.ndarray):
    """The name of the shared segment ``a``'s storage lives in, or None."""
    return _BY_STORAGE.get(id(_storage(a)))


def _release(name, owner):
    shm, _ = _SEGMENTS.pop(name, (None, None))
    for k in [k for k, v in _BY_STORAGE.items() if v == name]:
        del _BY_STORAGE[k]
    if shm is None:
        return
    try:
        shm.close()
    except BufferError:        # (an array over it still exists somewhere: the mapping goes with the process)
        pass
    if owner:
        try:
            shm.unlink()
        except FileNotFoundError:
            pass


def _adopt(shm, storage, owner):
    _SEGMENTS[shm.name] = (shm, weakref.ref(storage))
    _BY_STORAGE[id(storage)] = shm.name
    weakref.finalize(storage, _release, shm.name, owner)


def _over(shm, shape, dtype, strides):
    """The storage ndarray over a whole segment."""
    return np.ndarray(shape, dtype, buffer=shm.buf, strides=strides)


class _Holder:
    """What NumPy's ``as_strided`` puts between a view and its storage: an ``__array_interface__`` and a ``base``
    (so ``_storage`` finds the storage through it)."""

    def __init__(self, interface, base):
        self.__array_interface__, self.base = interface, base


def _view(storage, shape, dtype, strides, offset, writeable):
    """An ndarray over ``storage``'s memory, ``offset`` bytes in, with the given geometry."""
    if offset == 0 and tuple(shape) == storage.shape and tuple(strides) == storage.strides \
            and np.dtype(dtype) == storage.dtype and writeable:
        return storage
    iface = {"data": (_addr(storage) + offset, not writeable), "shape": tuple(shape), "typestr": np.dtype(dtype).str,
             "descr": np.dtype(dtype).descr, "strides": tuple(strides), "version": 3}
    return np.asarray(_Holder(iface, storage))


def share(tensors) -> None:
    """Move the storages of ``tensors`` (those not shared yet) into new shared segments. Every live tensor over one
    of them takes an array of the same geometry over the segment: views, ``detach()`` and ``.data`` aliases alike,
    as all of torch's tensors on a storage do (tapegrad has no storage object that they would share, so they are
    found by one walk over the tensors alive: this is a setup call, made once per model)."""
    register_reducers()
    moved = {}                   # id(old storage) -> (old storage, new storage)
    for t in tensors:
        old = _storage(t._array)
        if id(old) in moved or id(old) in _BY_STORAGE:
            continue
        shm = shared_memory.SharedMemory(create=True, size=max(old.nbytes, 1))
        new = _over(shm, old.shape, old.dtype, old.strides)
        if old.size:
            np.copyto(new, old)
        _adopt(shm, new, owner=True)
        moved[id(old)] = (old, new)
    if not moved:
        return
    from .tensor import Tensor
    for u in gc.get_objects():
        if not issubclass(type(u), Tensor):      # (type(): an object's own __class__ may be a property that warns)
            continue
        a = getattr(u, "_array", None)
        if not isinstance(a, np.ndarray):
            continue
        pair = moved.get(id(_storage(a)))
        if pair is not None:
            old, new = pair
            u._array = _view(new, a.shape, a.dtype, a.strides, _addr(a) - _addr(old), a.flags.writeable)


# --- sending a shared tensor to another process --------------------------------------------------------------
def _attach(name):
    """This process's mapping of the segment ``name``. (Before Python 3.13 attaching registers the name with the
    resource tracker again: a process started by multiprocessing shares its parent's tracker, where that is a
    no-op, and the creator's unlink unregisters it.)"""
    try:
        return shared_memory.SharedMemory(name=name, track=False)      # Python >= 3.13
    except TypeError:
        return shared_memory.SharedMemory(name=name)


def _rebuild_shared(cls, name, storage_meta, meta, requires_grad):
    from .nn.parameter import Parameter
    from .tensor import Tensor
    register_reducers()
    entry = _SEGMENTS.get(name)
    storage = entry[1]() if entry is not None else None
    if storage is None:
        shm = _attach(name)
        storage = _over(shm, *storage_meta)
        _adopt(shm, storage, owner=False)
    t = Tensor._make(_view(storage, *meta))
    if issubclass(cls, Parameter):
        return Parameter(t, requires_grad)
    if requires_grad:
        t.requires_grad_(True)
    return t


def reduce_tensor(t):
    """ForkingPickler's reduction of a Tensor or Parameter: by segment name when shared, else a copy."""
    a = t._array
    name = segment_of(a)
    if name is None or t.grad_fn is not None:
        return t.__reduce_ex__(4)
    s = _storage(a)
    return (_rebuild_shared, (type(t), name, (s.shape, s.dtype, s.strides),
                              (a.shape, a.dtype, a.strides, _addr(a) - _addr(s), a.flags.writeable), t._rg))


def register_reducers() -> None:
    if _REGISTERED[0]:
        return
    from multiprocessing.reduction import ForkingPickler

    from .nn.parameter import Parameter
    from .tensor import Tensor
    for cls in (Tensor, Parameter):
        ForkingPickler.register(cls, reduce_tensor)
    _REGISTERED[0] = True
