"""Checkpoints: ``save(obj, f)`` / ``load(f)`` in an open format that never runs code when loaded.

A file is a NumPy ``.npz`` archive (a zip of ``.npy`` files): every tensor or array is one ``.npy`` entry and
``__tapegrad__.npy`` holds the object's structure as UTF-8 JSON (dicts, lists, tuples, tensors, numbers,
strings, booleans, None). Read it without tapegrad with ``np.load(path)``. Loading uses ``allow_pickle=False``:
a checkpoint cannot execute code. Writes go to a temporary file that is fsynced and then renamed over the target,
so a crash leaves either the old checkpoint or the new one, never half of one.
"""

from __future__ import annotations

import io
import json
import math
import os
import tempfile
import zipfile

import numpy as np

from . import _dtype
from .tensor import Tensor

__all__ = ["save", "load", "CheckpointError"]

FORMAT = "tapegrad-checkpoint"
VERSION = 1
_MANIFEST = "__tapegrad__"


class CheckpointError(RuntimeError):
    """A file that is not a readable tapegrad checkpoint (truncated, corrupted or foreign)."""


def _encode(obj, arrays):
    """The JSON-able structure of ``obj``; tensors and arrays are appended to ``arrays`` and referenced."""
    if isinstance(obj, Tensor):
        arrays.append(obj._array)
        node = {"__tensor__": len(arrays) - 1, "dtype": obj.dtype.name}
        if obj.requires_grad:
            node["requires_grad"] = True
        if type(obj).__name__ == "Parameter":
            node["parameter"] = True
        return node
    if isinstance(obj, np.ndarray):
        if obj.dtype.kind in "OVSU":
            raise TypeError(f"save: arrays of dtype {obj.dtype} cannot be saved (only numeric and bool arrays)")
        arrays.append(obj)
        return {"__ndarray__": len(arrays) - 1}
    if obj is None or isinstance(obj, (bool, str)):
        return obj
    if isinstance(obj, (int, np.integer)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        v = float(obj)
        return v if math.isfinite(v) else {"__float__": repr(v)}
    if isinstance(obj, _dtype.dtype):
        return {"__dtype__": obj.name}
    if isinstance(obj, dict):
        if all(isinstance(k, str) for k in obj):
            items = {k: _encode(v, arrays) for k, v in obj.items()}
            return {"__dict__": items, "ordered": type(obj).__name__ == "OrderedDict"}
        return {"__pairs__": [[_encode(k, arrays), _encode(v, arrays)] for k, v in obj.items()]}
    if isinstance(obj, tuple):
        return {"__tuple__": [_encode(v, arrays) for v in obj]}
    if isinstance(obj, list):
        return [_encode(v, arrays) for v in obj]
    raise TypeError(f"save: objects of type {type(obj).__name__} cannot be saved; a checkpoint holds tensors, "
                    "arrays, numbers, strings, booleans, None and dicts/lists/tuples of them (save a model's "
                    "state_dict(), not the model)")


def _decode(node, arrays):
    if isinstance(node, list):
        return [_decode(v, arrays) for v in node]
    if not isinstance(node, dict):
        return node
    if "__tensor__" in node:
        arr = arrays(node["__tensor__"])
        d = _dtype.to_dtype(node["dtype"])
        if arr.dtype != d.np:
            raise CheckpointError(f"tensor {node['__tensor__']} has dtype {arr.dtype}, expected {d.np}")
        t = Tensor._make(arr)
        if node.get("parameter"):
            from .nn.parameter import Parameter
            return Parameter(t, requires_grad=node.get("requires_grad", False))
        if node.get("requires_grad"):
            t.requires_grad_()
        return t
    if "__ndarray__" in node:
        return arrays(node["__ndarray__"])
    if "__float__" in node:
        return float(node["__float__"])
    if "__dtype__" in node:
        return _dtype.to_dtype(node["__dtype__"])
    if "__tuple__" in node:
        return tuple(_decode(v, arrays) for v in node["__tuple__"])
    if "__pairs__" in node:
        return {_decode(k, arrays): _decode(v, arrays) for k, v in node["__pairs__"]}
    if "__dict__" in node:
        items = {k: _decode(v, arrays) for k, v in node["__dict__"].items()}
        if node.get("ordered"):
            from collections import OrderedDict
            return OrderedDict(items)
        return items
    raise CheckpointError(f"unknown entry in the structure: {sorted(node)[:3]}")


def _write(fileobj, obj):
    arrays = []
    structure = _encode(obj, arrays)
    manifest = json.dumps({"format": FORMAT, "version": VERSION, "n_arrays": len(arrays), "object": structure})
    with zipfile.ZipFile(fileobj, "w", compression=zipfile.ZIP_STORED, allowZip64=True) as zf:
        for i, arr in enumerate(arrays):
            with zf.open(f"{i}.npy", "w", force_zip64=True) as f:
                arr = arr if arr.flags.c_contiguous else arr.copy(order="C")   # (ascontiguousarray makes 0-d 1-d)
                np.lib.format.write_array(f, arr, allow_pickle=False)
        with zf.open(f"{_MANIFEST}.npy", "w") as f:
            np.lib.format.write_array(f, np.frombuffer(manifest.encode(), np.uint8), allow_pickle=False)


def save(obj, f, pickle_module=None, pickle_protocol=None, _use_new_zipfile_serialization=True) -> None:
    """Save tensors or (nested) state dicts to ``f`` (a path or a binary file object), atomically for paths.

    >>> tapegrad.save({"w": tapegrad.ones(2), "step": 3}, "ckpt.pt")
    >>> tapegrad.load("ckpt.pt")["step"]
    3
    """
    if not isinstance(f, (str, os.PathLike)):
        _write(f, obj)
        return
    path = os.fspath(f)
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".tmp-" + os.path.basename(path) + "-", dir=directory)
    try:
        with os.fdopen(fd, "wb") as fh:
            _write(fh, obj)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    try:  # make the rename itself durable
        dfd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)
    except OSError:
        pass


def load(f, map_location=None, pickle_module=None, *, weights_only=True, mmap=None, **kwargs):
    """Load what ``save`` wrote. Never unpickles: loading cannot run code. ``map_location`` is accepted (CPU).

    Truncated, corrupted or foreign files raise ``CheckpointError`` naming the file.
    """
    name = os.fspath(f) if isinstance(f, (str, os.PathLike)) else getattr(f, "name", "<file object>")
    try:
        if isinstance(f, (str, os.PathLike)):
            with open(f, "rb") as fh:
                data = fh.read()
        else:
            data = f.read()
        zf = zipfile.ZipFile(io.BytesIO(data))
    except FileNotFoundError:
        raise
    except (zipfile.BadZipFile, OSError, EOFError) as e:
        raise CheckpointError(f"{name!s}: not a tapegrad checkpoint (not a readable npz/zip archive: {e}); the "
                              "file may be truncated or corrupted, or it was written by another program "
                              "(a pickle-based torch.save file cannot be loaded: convert it with numpy)") from None
    with zf:
        try:
            names = set(zf.namelist())
            if f"{_MANIFEST}.npy" not in names:
                raise CheckpointError(f"{name!s}: not a tapegrad checkpoint (no {_MANIFEST} entry; an npz written "
                                      "by numpy can be read with numpy.load)")
            with zf.open(f"{_MANIFEST}.npy") as mf:
                raw = np.lib.format.read_array(mf, allow_pickle=False)
            manifest = json.loads(raw.tobytes().decode())
            if manifest.get("format") != FORMAT:
                raise CheckpointError(f"{name!s}: not a tapegrad checkpoint (format {manifest.get('format')!r})")
            if manifest.get("version", 0) > VERSION:
                raise CheckpointError(f"{name!s}: checkpoint version {manifest['version']} is newer than this "
                                      f"tapegrad understands ({VERSION}); upgrade tapegrad")

            def array(i):
                with zf.open(f"{i}.npy") as af:
                    return np.lib.format.read_array(af, allow_pickle=False)

            return _decode(manifest["object"], array)
        except CheckpointError:
            raise
        except (KeyError, ValueError, zipfile.BadZipFile, EOFError, OSError, UnicodeDecodeError,
                json.JSONDecodeError) as e:
            raise CheckpointError(f"{name!s}: corrupted tapegrad checkpoint ({type(e).__name__}: {e})") from None
