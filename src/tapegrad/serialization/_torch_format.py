"""PyTorch's checkpoint formats, written and read without torch.

The zip format (``torch.save`` since PyTorch 1.6): ``<archive>/data.pkl`` is a pickle (protocol 2) of the object
in which every tensor is ``torch._utils._rebuild_tensor_v2(storage, offset, size, stride, requires_grad,
hooks)`` and every storage a persistent id ``("storage", torch.FloatStorage, key, "cpu", numel)`` whose bytes
are the record ``<archive>/data/<key>``; ``byteorder``, ``version``, ``.format_version`` and
``.storage_alignment`` records say how to read them. The legacy format (before 1.6) is a sequence of pickles:
a magic number, the protocol version, system info, the object, the list of storage keys, then each storage's
element count and bytes.

Saving finds each tensor's storage as torch does: a NumPy view and the array it views are one storage, so
views keep their offset and strides and ``{'a': x, 'b': x[1:]}`` stays shared. Loading reads a storage once
(each reference to it is a view into the same bytes) and bounds every declared size by what the file holds.
"""

from __future__ import annotations

import hashlib
import io
import os
import pickle
import struct
import sys
from collections import OrderedDict
from types import FunctionType

import numpy as np

from .. import _dtype
from ..tensor import Size, Tensor, _require_cpu, device
from . import _torch_names as names
from ._common import Bounded, Corrupt, Memory
from ._unpickler import Unpickler
from ._zip import ZipWriter

__all__ = ["write", "load_zip", "load_legacy", "MAGIC_NUMBER", "PROTOCOL_VERSION", "DEFAULT_PROTOCOL"]

DEFAULT_PROTOCOL = 2
MAGIC_NUMBER = 0x1950A86A20F9469CFC6C
PROTOCOL_VERSION = 1001


# --- saving ------------------------------------------------------------------------------------------------
class _StorageRef:
    __slots__ = ("key", "stype", "numel")

    def __init__(self, key, stype, numel):
        self.key, self.stype, self.numel = key, stype, numel


def _ptr(arr):
    return arr.__array_interface__["data"][0]


_UNTYPED_ONLY = {np.dtype(np.uint16), np.dtype(np.uint32), np.dtype(np.uint64)}


class _Storages:
    """The storages of the tensors being saved: one per array that views share (keyed by that array)."""

    def __init__(self):
        self.by_root, self.records = {}, []      # id(root) -> (ref, root); [(key, flat uint8 bytes, root)]

    def _add(self, root, stype, item):
        flat = (root if root.flags.c_contiguous else root.T).reshape(-1).view(np.uint8)
        ref = _StorageRef(str(len(self.records)), stype, root.nbytes // (1 if stype is names.UNTYPED else item))
        self.records.append((ref.key, flat, root))
        self.by_root[id(root)] = (ref, root)
        return ref

    def tensor_args(self, t):
        """(storage reference, offset, size, stride) of tensor ``t``, as ``_rebuild_tensor_v2`` takes them."""
        arr = t._array
        stype = names.STORAGE_OF.get(arr.dtype)
        if stype is None and arr.dtype in _UNTYPED_ONLY:
            stype = names.UNTYPED        # (torch has no typed storage of these: bytes, and the dtype beside them)
        if stype is None:
            raise TypeError(f"save: a tensor's array has NumPy dtype {arr.dtype}, which no torch dtype matches")
        item = arr.itemsize
        root = arr
        while isinstance(root.base, np.ndarray):
            root = root.base
        shared = (arr.size > 0 and all(s >= 0 and s % item == 0 for s in arr.strides)
                  and (root.flags.c_contiguous or root.flags.f_contiguous) and root.nbytes % item == 0
                  and (_ptr(arr) - _ptr(root)) % item == 0)
        if shared:
            hit = self.by_root.get(id(root))
            if hit is None:
                ref = self._add(root, stype, item)
            elif hit[0].stype is stype:
                ref = hit[0]
            else:       # torch refuses two dtypes over one storage; the later tensor is saved as its own copy
                shared = False
        if not shared:
            arr = arr.copy(order="C")
            ref = self._add(arr, stype, item)
            root = arr
        offset = (_ptr(arr) - _ptr(root)) // item if arr.size else 0
        return ref, offset, tuple(arr.shape), tuple(s // item for s in arr.strides)


class _LayoutName:
    """A layout as torch pickles it: ``torch.serialization._get_layout(name)``."""

    def __init__(self, name):
        self.name = name


class _Pickler(pickle._Pickler):
    """Python's own pickler (the pure-Python one, whose name writing can be changed), naming tapegrad's tensors,
    dtypes, sizes and devices as torch's and their storages as persistent ids."""

    dispatch = pickle._Pickler.dispatch.copy()

    def __init__(self, file, protocol, storages, legacy):
        super().__init__(file, protocol)
        self.storages, self.legacy = storages, legacy
        self.torch_names = names.torch_names()

    def persistent_id(self, obj):
        if type(obj) is _StorageRef:
            pid = ("storage", obj.stype, obj.key, "cpu", obj.numel)
            return pid + (None,) if self.legacy else pid
        return None

    def reducer_override(self, obj):
        if isinstance(obj, Tensor):
            return self._reduce_tensor(obj)
        if type(obj) is Size:
            return (Size, (tuple(obj),))
        if type(obj) is _LayoutName:
            return (names._get_layout, (obj.name,))
        if type(obj) is device:
            return (device, (obj.type,) if obj.index is None else (obj.type, obj.index))
        return NotImplemented

    def _reduce_tensor(self, t):
        from ..nn.parameter import Parameter, UninitializedBuffer, UninitializedParameter
        kind = type(t)
        if t.is_meta and kind is not Parameter:   # torch's form: dtype, size, stride and requires_grad, no storage
            args = (t.dtype, tuple(t.shape), t.stride(), t.requires_grad)
            if kind is Tensor:
                return (names._rebuild_meta_tensor_no_storage, args)
            return (names._rebuild_from_type_v2, (names._rebuild_meta_tensor_no_storage, kind, args,
                                                  getattr(t, "__dict__", None) or {}))
        if t.is_sparse:          # torch's form: the layout by name, then (indices, values, size, is_coalesced)
            data = (Tensor._make(t._coo_indices), Tensor._make(t._coo_values._array), Size(t.shape),
                    t.is_coalesced())
            return (names._rebuild_sparse_tensor, (_LayoutName("torch.sparse_coo"), data))
        if kind in (UninitializedParameter, UninitializedBuffer):
            return (kind, (t.requires_grad,))
        if kind is Parameter:
            return (names._rebuild_parameter, (Tensor._make(t._array), t.requires_grad, OrderedDict()))
        args = self.storages.tensor_args(t) + (t.requires_grad, OrderedDict())
        if args[0].stype is names.UNTYPED:       # uint16/32/64: torch's v3 form names the dtype
            args = (names._rebuild_tensor_v3, args + (t.dtype,))
            return args if kind is Tensor else (names._rebuild_from_type_v2, (*args[:1], kind, args[1],
                                                                                getattr(t, "__dict__", None) or {}))
        if kind is Tensor:
            return (names._rebuild_tensor_v2, args)
        state = getattr(t, "__dict__", None) or {}
        return (names._rebuild_from_type_v2, (names._rebuild_tensor_v2, kind, args, state))

    def save_global(self, obj, name=None):
        try:
            full = self.torch_names.get(obj)
        except TypeError:           # an unhashable object saved as a global
            full = None
        if full is None:
            spellings = names.torch_spellings(obj)     # tapegrad's own class or function: torch's name for it
            if not spellings:
                return super().save_global(obj, name)
            full = spellings[0]
        self._write_global(obj, *full.rsplit(".", 1))

    def _write_global(self, obj, module, name):
        self.write(pickle.GLOBAL + f"{module}\n{name}\n".encode())
        self.memoize(obj)

    def _save_dtype(self, obj):
        self._write_global(obj, "torch", obj.name)

    def _save_storage_type(self, obj):
        self._write_global(obj, "torch.storage" if obj is names.UNTYPED else "torch", obj.name)

    dispatch[FunctionType] = save_global
    dispatch[_dtype.dtype] = _save_dtype
    dispatch[names.StorageType] = _save_storage_type
    dispatch[names.ForeignDtype] = _save_dtype


def _pickle(obj, protocol, legacy):
    storages = _Storages()
    buf = io.BytesIO()
    _Pickler(buf, protocol, storages, legacy).dump(obj)
    return buf.getvalue(), storages.records


def write(fh, obj, archive="archive", protocol=DEFAULT_PROTOCOL, legacy=False, byteorder=True):
    """Write ``obj`` to the binary file ``fh`` as ``torch.save`` would."""
    data, records = _pickle(obj, protocol, legacy)
    if legacy:
        for head in (MAGIC_NUMBER, PROTOCOL_VERSION,
                     {"protocol_version": PROTOCOL_VERSION, "little_endian": sys.byteorder == "little",
                      "type_sizes": {"short": 2, "int": 4, "long": 4}}):
            fh.write(pickle.dumps(head, protocol=protocol))
        fh.write(data)
        keys = sorted(key for key, _, _ in records)
        fh.write(pickle.dumps(keys, protocol=protocol))
        by_key = {key: (flat, root) for key, flat, root in records}
        for key in keys:
            flat, root = by_key[key]
            fh.write(struct.pack("<q", root.nbytes // root.itemsize))
            fh.write(memoryview(flat))
        return
    zw = ZipWriter(fh)
    zw.add(f"{archive}/data.pkl", [data])
    zw.add(f"{archive}/.format_version", [b"1"])
    zw.add(f"{archive}/.storage_alignment", [b"64"])
    if byteorder:
        zw.add(f"{archive}/byteorder", [sys.byteorder.encode()])
    digest = hashlib.sha1(data)
    for key, flat, _ in records:
        zw.add(f"{archive}/data/{key}", [flat])
        digest.update(str(flat.size).encode())
    zw.add(f"{archive}/version", [b"3\n"])
    zw.add(f"{archive}/.data/serialization_id", [str(int(digest.hexdigest(), 16) % 10 ** 40).zfill(40).encode()])
    zw.close()


# --- loading -----------------------------------------------------------------------------------------------
def _restorer(map_location):
    """A function ``(Typed, location) -> Typed`` as ``map_location`` asks; every storage ends up on the CPU."""
    if map_location is None:
        return lambda storage, location: storage
    if isinstance(map_location, (str, bytes, device)):
        _require_cpu(map_location.decode() if isinstance(map_location, bytes) else map_location)
        return lambda storage, location: storage
    if isinstance(map_location, dict):
        def restore(storage, location):
            target = map_location.get(location, location)
            if target != location:
                _require_cpu(target)               # a mapping to an accelerator is refused: CPU only
            return storage
        return restore
    if hasattr(map_location, "type") and not callable(map_location):        # a torch.device, say
        _require_cpu(str(map_location))
        return lambda storage, location: storage
    if callable(map_location):
        def restore(storage, location):
            result = map_location(storage, location)
            if result is None:
                return storage
            if not isinstance(result, names.Typed):
                raise Corrupt(f"map_location returned {type(result).__name__}, not the storage it was given")
            return result
        return restore
    raise ValueError(f"map_location should be a str, a device, a dict or a callable, not "
                     f"{type(map_location).__name__}")


class _Loader:
    """The storages of one checkpoint being loaded, read (or mapped) once each, and the unpicklers over it."""

    def __init__(self, source, map_location, weights_only, encoding):
        self.source, self.weights_only, self.encoding = source, weights_only, encoding
        self.restore = _restorer(map_location)
        self.storages = {}
        self.fetch = None           # (key, nbytes, location) -> Storage; set by the format

    def persistent_load(self, pid):
        if not isinstance(pid, tuple) or not pid:
            raise Corrupt(f"a persistent id is {type(pid).__name__}, not a storage reference")
        kind = pid[0].decode("ascii") if isinstance(pid[0], bytes) else pid[0]
        if kind == "module" and not self.weights_only and len(pid) > 1:      # legacy: a class and its source
            return pid[1]
        if kind != "storage" or len(pid) not in (5, 6):
            raise Corrupt(f"Unknown saved id type: {pid[0]!r}")
        stype, key, location, numel = pid[1:5]
        view = pid[5] if len(pid) == 6 else None
        if not isinstance(stype, names.StorageType) or stype.kind is None:
            raise Corrupt(f"a storage reference names {stype!r}, not a storage type")
        if not isinstance(key, str) or type(numel) is not int or numel < 0:
            raise Corrupt(f"a storage reference has key {key!r} and size {numel!r}")
        location = location.decode("ascii") if isinstance(location, bytes) else str(location)
        if key not in self.storages:
            self.storages[key] = self.fetch(key, numel * stype.kind.itemsize, location)
            self.storages[key].item = stype.kind.itemsize
        typed = self.restore(names.Typed(self.storages[key], stype.kind), location)
        if view is not None:                          # a view of a storage (files of PyTorch before 0.4)
            view_key, offset, size = view
            if view_key not in self.storages:
                item = stype.kind.itemsize
                raw = typed.storage.raw[offset * item:(offset + size) * item]
                if raw.size != size * item:
                    raise Corrupt(f"a storage view of {size} elements at {offset} lies outside its storage")
                self.storages[view_key] = names.Storage(raw, location, typed.storage.filled, typed.storage.swap)
                self.storages[view_key].parent = typed.storage
            typed = names.Typed(self.storages[view_key], stype.kind)
        return typed

    def unpickle(self, reader):
        if self.weights_only:
            from ..nn.parameter import Parameter
            return Unpickler(reader, allowed=names.allowed(), callable_ids=names.callable_ids(),
                             persistent_load=self.persistent_load, parameter=(Parameter, names._parameter),
                             build={Tensor: _build_tensor, Parameter: _build_parameter},
                             encoding=self.encoding).load()
        return _FullUnpickler(reader, self).load()


def _build_tensor(inst, state):
    """BUILD on a ``torch.Tensor()`` object: the legacy ``set_(storage, offset, size, stride)``."""
    if not isinstance(state, tuple) or len(state) != 4:
        raise Corrupt(f"a legacy tensor's state is {type(state).__name__}, not (storage, offset, size, stride)")
    inst._array = names._view(*state)


def _build_parameter(inst, state):
    if isinstance(state, tuple) and state and isinstance(state[0], Tensor):
        inst._array = state[0]._array
        if len(state) > 1 and state[1] is True:
            inst.requires_grad_()
    elif state:
        raise Corrupt(f"a Parameter's state is {type(state).__name__}, not (data, requires_grad, ...)")


class _FullUnpickler(pickle.Unpickler):
    """``weights_only=False``: Python's unpickler (which imports and calls what the file names, as torch's does),
    with torch's names mapped to tapegrad's (``torch.nn.modules.linear.Linear`` is tapegrad's Linear)."""

    def __init__(self, reader, loader):
        super().__init__(reader, encoding=loader.encoding)
        self.loader = loader

    def persistent_load(self, pid):
        return self.loader.persistent_load(pid)

    def find_class(self, module, name):
        module = "torch._tensor" if module == "torch.tensor" else module
        full = f"{module}.{name}"
        table = names.allowed()
        if full in table:
            return table[full]
        if module == "torch" or module.startswith("torch."):
            return _tapegrad_equivalent(module, name)
        return super().find_class(module, name)


def _tapegrad_equivalent(module, name):
    import importlib
    tail = module[len("torch"):]
    candidates = ["tapegrad" + tail]
    if tail.startswith(".nn.modules"):
        candidates.append("tapegrad.nn")
    for candidate in candidates:
        try:
            obj = importlib.import_module(candidate)
            for part in name.split("."):
                obj = getattr(obj, part)
            return obj
        except (ImportError, AttributeError):
            continue
    raise Corrupt(f"the checkpoint needs torch's {module}.{name}, which tapegrad does not have (load the file in "
                  "PyTorch and save a state_dict() instead)")


def _byteorder(zr, prefix):
    name = prefix + "byteorder"
    if name not in zr:
        return False
    order = zr.read(name, limit=16).tobytes()
    if order not in (b"little", b"big"):
        raise Corrupt(f"Unknown endianness type: {order.decode('latin-1')}")
    return order.decode() != sys.byteorder


def load_zip(zr, prefix, map_location, weights_only, encoding, mm=None):
    """The object in the PyTorch zip archive ``zr`` whose records start with ``prefix`` (``"archive/"``)."""
    loader = _Loader(zr.source, map_location, weights_only, encoding)
    swap = _byteorder(zr, prefix)

    def fetch(key, nbytes, location):
        name = f"{prefix}data/{key}"
        if name not in zr:
            raise Corrupt(f"the storage record {name} is missing (the file is truncated or was modified after it "
                          "was saved)")
        held = zr.locate(name)[1].file_size
        if held != nbytes:
            raise Corrupt(f"storage {key!r} declares {nbytes} bytes, but its record {name} holds {held}")
        raw = zr.map(name, mm) if mm is not None else zr.read(name)
        return names.Storage(raw, location, swap=swap)

    loader.fetch = fetch
    data = zr.read(prefix + "data.pkl")
    return loader.unpickle(Memory(data, zr.source, "pickle"))


def load_legacy(source, map_location, weights_only, encoding):
    """The object in a legacy (before PyTorch 1.6) ``torch.save`` file."""
    loader = _Loader(source, map_location, weights_only, encoding)
    reader = Bounded(source, source.start, source.size, "pickle")

    def small():        # the magic number, versions, system info and key list: plain data, nothing allowed
        return Unpickler(reader, allowed={}, callable_ids=set(), persistent_load=loader.persistent_load).load()

    if small() != MAGIC_NUMBER:
        raise Corrupt("Invalid magic number; corrupt file?")
    version = small()
    if version != PROTOCOL_VERSION:
        raise Corrupt(f"Invalid protocol version: {version}")
    info = small()
    swap = isinstance(info, dict) and info.get("little_endian", True) is not (sys.byteorder == "little")
    declared = [0]

    def fetch(key, nbytes, location):
        declared[0] += nbytes
        if declared[0] > source.size - reader.pos:
            raise Corrupt(f"the storages declare {declared[0]} bytes, but only {source.size - reader.pos} remain "
                          "in the file")
        return names.Storage(np.empty(nbytes, np.uint8), location, filled=False, swap=swap)

    loader.fetch = fetch
    result = loader.unpickle(reader)
    keys = small()
    if not isinstance(keys, list):
        raise Corrupt(f"the storage key list is {type(keys).__name__}, not a list")
    for key in keys:
        storage = loader.storages.get(key) if isinstance(key, str) else None
        if storage is None or storage.filled or storage.parent is not None:
            raise Corrupt(f"the storage key {key!r} is not one the pickle references (or appears twice)")
        numel = struct.unpack("<q", reader.read(8))[0]
        if numel * storage.item != storage.raw.size:
            raise Corrupt(f"storage {key!r} holds {numel} elements of {storage.item} bytes, but the pickle declared "
                          f"{storage.raw.size} bytes")
        reader.readinto(memoryview(storage.raw))
        storage.complete()
    for storage in loader.storages.values():       # views of storages, then any storage left without data
        if not storage.filled:
            if storage.parent is None or not storage.parent.filled:
                raise Corrupt("a storage the pickle references has no data in the file")
            storage.complete()
    return result


def is_legacy(head):
    return head[:1] == b"\x80"


def archive_name(path):
    return os.path.splitext(os.path.basename(path))[0] if path is not None else "archive"
