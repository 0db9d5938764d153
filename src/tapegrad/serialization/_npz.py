"""tapegrad's own checkpoint format (``save_npz``): an npz archive with the structure as JSON, never unpickled.

A file is a NumPy ``.npz`` archive (a zip of ``.npy`` files): every distinct tensor or array is one ``<i>.npy``
entry and ``__tapegrad__.npy`` holds the object's structure as UTF-8 JSON (dicts, lists, tuples, tensors,
numbers, strings, booleans, None), e.g. ``{"__tensor__": 0, "dtype": "float32"}``. Read it without tapegrad
with ``np.load(path)``. Loading validates every node of the JSON (a tampered file gives a ``CheckpointError``
naming it), reads each array once (two references to one entry are one array) straight into its memory, and
checks each ``.npy`` header's shape against the bytes its entry holds.
"""

from __future__ import annotations

import io
import json
import math
from collections import OrderedDict

import numpy as np

from .. import _dtype
from ..tensor import Tensor
from ._common import Corrupt as _Bad
from ._zip import ZipWriter

__all__ = ["write", "read", "MANIFEST"]

FORMAT = "tapegrad-checkpoint"
VERSION = 1
MANIFEST = "__tapegrad__.npy"
MAX_DEPTH = 100            # containers nested deeper than this are refused (save and load alike)
_MAX_MANIFEST = 1 << 30
_NPY_HEADER_MAX = 65536 + 16


# --- writing ---------------------------------------------------------------------------------------------
def _encode(obj, arrays, seen, depth):
    if depth > MAX_DEPTH:
        raise ValueError(f"save_npz: the object is nested deeper than {MAX_DEPTH} levels")
    if isinstance(obj, Tensor):
        node = {"__tensor__": _index(obj._array, arrays, seen), "dtype": obj.dtype.name}
        if obj.requires_grad:
            node["requires_grad"] = True
        if type(obj).__name__ == "Parameter":
            node["parameter"] = True
        return node
    if isinstance(obj, np.ndarray):
        if obj.dtype.kind not in "biufc":
            raise TypeError(f"save_npz: arrays of dtype {obj.dtype} cannot be saved (only numeric and bool "
                            "arrays)")
        return {"__ndarray__": _index(obj, arrays, seen)}
    if obj is None or isinstance(obj, (bool, str)):
        return obj
    if isinstance(obj, np.bool_):
        return bool(obj)
    if isinstance(obj, (int, np.integer)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        v = float(obj)
        return v if math.isfinite(v) else {"__float__": repr(v)}
    if isinstance(obj, _dtype.dtype):
        return {"__dtype__": obj.name}
    if isinstance(obj, dict):
        if all(isinstance(k, str) for k in obj):
            items = {k: _encode(v, arrays, seen, depth + 1) for k, v in obj.items()}
            return {"__dict__": items, "ordered": isinstance(obj, OrderedDict)}
        return {"__pairs__": [[_encode(k, arrays, seen, depth + 1), _encode(v, arrays, seen, depth + 1)]
                              for k, v in obj.items()]}
    if isinstance(obj, tuple):
        return {"__tuple__": [_encode(v, arrays, seen, depth + 1) for v in obj]}
    if isinstance(obj, list):
        return [_encode(v, arrays, seen, depth + 1) for v in obj]
    raise TypeError(f"save_npz: objects of type {type(obj).__name__} cannot be saved; this format holds tensors, "
                    "arrays, numbers, strings, booleans, None and dicts/lists/tuples of them (save a model's "
                    "state_dict(), not the model, or use tapegrad.save, which pickles as torch.save)")


def _index(arr, arrays, seen):
    """The entry of ``arr``: the same array object twice is one entry (it loads as one shared array)."""
    hit = seen.get(id(arr))
    if hit is None:
        arrays.append(arr)
        hit = seen[id(arr)] = (len(arrays) - 1, arr)      # (keeps arr alive so that its id stays unique)
    return hit[0]


def _npy_parts(arr):
    arr = arr if arr.flags.c_contiguous else arr.copy(order="C")
    header = io.BytesIO()
    meta = np.lib.format.header_data_from_array_1_0(arr)
    try:
        np.lib.format.write_array_header_1_0(header, meta)
    except ValueError:
        np.lib.format.write_array_header_2_0(header, meta)
    return [header.getvalue(), arr.reshape(-1).view(np.uint8)]


def write(fh, obj):
    arrays, seen = [], {}
    structure = _encode(obj, arrays, seen, 0)
    manifest = json.dumps({"format": FORMAT, "version": VERSION, "n_arrays": len(arrays), "object": structure})
    zw = ZipWriter(fh)
    for i, arr in enumerate(arrays):
        zw.add(f"{i}.npy", _npy_parts(arr))
    zw.add(MANIFEST, _npy_parts(np.frombuffer(manifest.encode(), np.uint8)))
    zw.close()


# --- reading ---------------------------------------------------------------------------------------------
def _parse_npy_header(head, name):
    fp = io.BytesIO(head)
    try:
        version = np.lib.format.read_magic(fp)
        if version == (1, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_1_0(fp)
        elif version == (2, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_2_0(fp)
        else:
            raise _Bad(f"the array entry {name!r} has .npy format version {version}, which is not read")
    except _Bad:
        raise
    except Exception as e:      # NumPy raises ValueError/SyntaxError/TypeError for a malformed header
        raise _Bad(f"the array entry {name!r} has a corrupted .npy header ({type(e).__name__}: {e})") from None
    if dtype.hasobject or dtype.kind not in "biufc" or dtype.subdtype is not None:
        raise _Bad(f"the array entry {name!r} has dtype {dtype}; only numeric and bool arrays are read")
    return shape, fortran, dtype, fp.tell()


def _read_npy(zr, name, mm):
    offset, info = zr.locate(name)
    stored = info.compress_type == 0
    raw = None
    if stored:
        head = zr.source.read_at(offset, min(info.file_size, _NPY_HEADER_MAX))
    else:
        raw = zr.read(name)
        head = raw[:_NPY_HEADER_MAX].tobytes()
    shape, fortran, dtype, header_len = _parse_npy_header(head, name)
    count = math.prod(shape)
    held = info.file_size - header_len
    if count * dtype.itemsize != held:
        raise _Bad(f"the array entry {name!r} declares shape {shape} of {dtype} ({count * dtype.itemsize} "
                   f"bytes), but holds {held} bytes")
    order = "F" if fortran else "C"
    if raw is not None:
        flat = raw[header_len:].view(dtype)
    elif mm is not None:
        flat = np.frombuffer(mm, dtype, count=count, offset=offset + header_len)
    else:
        flat = np.empty(count, dtype)
        data = memoryview(flat.view(np.uint8))
        zr.source.readinto_at(offset + header_len, data)
        zr.check_crc(name, info, [head[:header_len], data])
    arr = flat.reshape(shape, order=order)
    if not dtype.isnative:
        arr = arr.astype(dtype.newbyteorder("="))
    return arr


_TAGS = ("__tensor__", "__ndarray__", "__float__", "__dtype__", "__tuple__", "__pairs__", "__dict__")


class _Decoder:
    def __init__(self, zr, n_arrays, mm):
        self.zr, self.n, self.mm = zr, n_arrays, mm
        self.arrays, self.tensors = {}, {}

    def array(self, i):
        if type(i) is not int or not 0 <= i < self.n:
            raise _Bad(f"an array reference {i!r} is not one of the {self.n} arrays")
        if i not in self.arrays:
            self.arrays[i] = _read_npy(self.zr, f"{i}.npy", self.mm)
        return self.arrays[i]

    def flag(self, node, key):
        v = node.get(key, False)
        if type(v) is not bool:
            raise _Bad(f"the {key!r} of a tensor is {v!r}, not true/false")
        return v

    def node(self, v, depth):
        if depth > MAX_DEPTH:
            raise _Bad(f"the structure is nested deeper than {MAX_DEPTH} levels")
        if isinstance(v, list):
            return [self.node(x, depth + 1) for x in v]
        if v is None or isinstance(v, (bool, int, float, str)):
            return v
        tags = [k for k in _TAGS if k in v]
        if len(tags) != 1:
            raise _Bad(f"an entry with keys {sorted(v)[:4]} is not a node this format writes")
        tag, body = tags[0], v[tags[0]]
        if tag == "__tensor__":
            return self.tensor(v, body)
        if tag == "__ndarray__":
            return self.array(body)
        if tag == "__float__":
            if body not in ("inf", "-inf", "nan"):
                raise _Bad(f"a __float__ entry holds {body!r}, not 'inf', '-inf' or 'nan'")
            return float(body)
        if tag == "__dtype__":
            return self.dtype(body)
        if tag == "__tuple__":
            if not isinstance(body, list):
                raise _Bad(f"a __tuple__ entry holds {type(body).__name__} {body!r}, not a list")
            return tuple(self.node(x, depth + 1) for x in body)
        if tag == "__pairs__":
            if not isinstance(body, list) or not all(isinstance(p, list) and len(p) == 2 for p in body):
                raise _Bad("a __pairs__ entry is not a list of [key, value] pairs")
            out = {}
            for k, val in body:
                key = self.node(k, depth + 1)
                try:
                    hash(key)
                except TypeError:
                    raise _Bad(f"a dict key of type {type(key).__name__} is unhashable") from None
                out[key] = self.node(val, depth + 1)
            return out
        if not isinstance(body, dict):
            raise _Bad(f"a __dict__ entry holds {type(body).__name__} {body!r}, not an object")
        ordered = v.get("ordered", False)
        if type(ordered) is not bool:
            raise _Bad(f"the 'ordered' flag of a dict is {ordered!r}, not true/false")
        items = {k: self.node(x, depth + 1) for k, x in body.items()}
        return OrderedDict(items) if ordered else items

    def dtype(self, name):
        if not isinstance(name, str) or name not in _dtype._BY_NAME:
            raise _Bad(f"unknown dtype {name!r}")
        return _dtype._BY_NAME[name]

    def tensor(self, node, i):
        d = self.dtype(node.get("dtype"))
        rg, param = self.flag(node, "requires_grad"), self.flag(node, "parameter")
        key = (i, d.name, rg, param)
        if key in self.tensors:
            return self.tensors[key]
        if rg and not (d.is_floating_point or d.is_complex):
            raise _Bad(f"tensor {i} of dtype {d.name} is marked requires_grad; only Tensors of floating point "
                       "and complex dtype can require gradients")
        arr = self.array(i)
        if arr.dtype != d.np:
            raise _Bad(f"tensor {i} has dtype {arr.dtype}, but the manifest says {d.name}")
        t = Tensor._make(arr)
        if param:
            from ..nn.parameter import Parameter
            t = Parameter(t, requires_grad=rg)
        elif rg:
            t.requires_grad_()
        self.tensors[key] = t
        return t


def read(zr, mm=None):
    """The object in the tapegrad archive ``zr`` (a ``_zip.ZipReader``); ``mm`` maps the arrays."""
    try:
        raw = _read_npy(zr, MANIFEST, None)
        if raw.dtype != np.uint8 or raw.ndim != 1 or raw.size > _MAX_MANIFEST:
            raise _Bad("the manifest entry is not a byte string")
        try:
            manifest = json.loads(raw.tobytes().decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            raise _Bad(f"the manifest is not JSON ({e})") from None
        if not isinstance(manifest, dict):
            raise _Bad(f"the manifest is a JSON {type(manifest).__name__}, not an object")
        if manifest.get("format") != FORMAT:
            raise _Bad(f"not a tapegrad checkpoint (format {manifest.get('format')!r})")
        version = manifest.get("version")
        if type(version) is not int or version < 1:
            raise _Bad(f"the manifest's version is {version!r}, not a positive integer")
        if version > VERSION:
            raise _Bad(f"checkpoint version {version} is newer than this tapegrad understands ({VERSION}); "
                       "upgrade tapegrad")
        n = manifest.get("n_arrays")
        if type(n) is not int or n < 0:
            raise _Bad(f"the manifest's array count is {n!r}, not a count")
        held = sorted(name for name in zr.names if name != MANIFEST)
        if held != sorted(f"{i}.npy" for i in range(n)):
            raise _Bad(f"the manifest lists {n} arrays, but the archive holds {len(held)} other entries "
                       f"({', '.join(held[:4])}{', ...' if len(held) > 4 else ''})")
        if "object" not in manifest:
            raise _Bad("the manifest has no 'object'")
        return _Decoder(zr, n, mm).node(manifest["object"], 0)
    except RecursionError:
        raise zr.source.error(f"corrupted tapegrad checkpoint: the structure is nested too deeply (more than "
                              f"{MAX_DEPTH} levels)") from None
    except _Bad as e:
        raise zr.source.error(f"corrupted tapegrad checkpoint: {e}") from None
