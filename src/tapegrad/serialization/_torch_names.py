"""What the names in a PyTorch pickle mean in tapegrad: dtypes, storages and the tensor rebuild functions.

A ``torch.save`` pickle names torch objects (``torch._utils._rebuild_tensor_v2``, ``torch.FloatStorage``,
``torch.float32``...). Here each has a tapegrad stand-in of the same name: ``allowed()`` is the table the
``weights_only`` unpickler resolves names through (torch 2.13's default allowlist), and ``TORCH_NAME`` maps the
stand-ins back to torch's names for the pickler that writes such files.

A storage is loaded as its raw bytes (``Storage.raw``, read from its record or mapped); a tensor is a NumPy view
into a typed array over those bytes, so two tensors of one storage share memory as in torch. Element types
NumPy lacks are converted once per storage: bfloat16 to float32 (how tapegrad stores it), uint16/32/64 to int64
(as ``tapegrad.from_numpy``), big-endian files to native order.
"""

from __future__ import annotations

import codecs
import math
import warnings
from collections import Counter, OrderedDict

import numpy as np

from .. import _dtype
from ..tensor import Size, Tensor, _require_cpu, device
from ._common import Corrupt

__all__ = ["Kind", "KINDS", "StorageType", "STORAGE_OF", "Storage", "Typed", "allowed", "callable_ids",
           "torch_names", "REBUILDS"]


class Kind:
    """A torch element type: its name, how an element lies on disk, the tapegrad dtype it loads as (or None)."""

    def __init__(self, name, disk, itemsize, tg=None, convert=None):
        self.name, self.itemsize, self.tg, self.convert = name, itemsize, tg, convert
        self.disk = np.dtype(disk) if disk is not None else None
        self.dtype = tg if tg is not None and tg.name == name else ForeignDtype(name, self)

    def typed(self, raw, swap):
        """``raw`` (uint8) viewed as this kind's disk elements, in the file's byte order."""
        return raw.view(self.disk.newbyteorder(">" if swap else "<") if self.disk.itemsize > 1 else self.disk)


class ForeignDtype:
    """A torch dtype tapegrad has no tensors of (``torch.uint16``, ``torch.float8_e4m3fn``...)."""

    def __init__(self, name, kind):
        self.name, self.kind = name, kind

    def __repr__(self):
        return f"torch.{self.name}"

    def __reduce__(self):
        return (_foreign_dtype, (self.name,))


def _foreign_dtype(name):
    return KINDS[name].dtype


def _bf16_to_f32(src, out):
    out.view(np.uint32)[...] = src.astype(np.uint32) << 16


def _make_kinds():
    t = _dtype
    kinds = [Kind("float32", "<f4", 4, t.float32), Kind("float64", "<f8", 8, t.float64),
             Kind("float16", "<f2", 2, t.float16), Kind("bfloat16", "<u2", 2, t.bfloat16, _bf16_to_f32),
             Kind("uint8", "u1", 1, t.uint8), Kind("int8", "i1", 1, t.int8), Kind("int16", "<i2", 2, t.int16),
             Kind("int32", "<i4", 4, t.int32), Kind("int64", "<i8", 8, t.int64), Kind("bool", "?", 1, t.bool),
             Kind("complex64", "<c8", 8, t.complex64), Kind("complex128", "<c16", 16, t.complex128)]
    kinds += [Kind(f"uint{bits}", f"<u{bits // 8}", bits // 8, getattr(t, f"uint{bits}")) for bits in (16, 32, 64)]
    unsupported = {"complex32": 4, "qint32": 4, "bits16": 2, "float8_e4m3fn": 1, "float8_e4m3fnuz": 1,
                   "float8_e5m2": 1, "float8_e5m2fnuz": 1, "float8_e8m0fnu": 1, "float4_e2m1fn_x2": 1,
                   "bits8": 1, "bits1x8": 1, "bits2x4": 1, "bits4x2": 1, "qint8": 1, "quint8": 1, "quint4x2": 1,
                   "quint2x4": 1}
    unsupported.update({f"{p}int{b}": 1 for p in ("", "u") for b in range(1, 8)})
    kinds += [Kind(name, None, size) for name, size in unsupported.items()]
    return {k.name: k for k in kinds}


KINDS = _make_kinds()


def kind_of(dtype):
    name = getattr(dtype, "name", None)
    if not isinstance(dtype, (_dtype.dtype, ForeignDtype)) or name not in KINDS:
        raise Corrupt(f"a tensor's dtype is {dtype!r}, not a dtype")
    return KINDS[name]


class StorageType:
    """``torch.FloatStorage`` and friends: the element kind of a storage reference (``None``: untyped bytes)."""

    def __init__(self, name, kind):
        self.name, self.kind = name, kind

    def __repr__(self):
        return f"StorageType(dtype=torch.{self.kind.name})" if self.kind else f"torch.storage.{self.name}"


_STORAGE_NAMES = {"Float": "float32", "Double": "float64", "Half": "float16", "BFloat16": "bfloat16",
                  "Byte": "uint8", "Char": "int8", "Short": "int16", "Int": "int32", "Long": "int64",
                  "Bool": "bool", "ComplexFloat": "complex64", "ComplexDouble": "complex128"}
_QUANTIZED_STORAGES = {"QInt8": "qint8", "QUInt8": "quint8", "QInt32": "qint32", "QUInt4x2": "quint4x2",
                       "QUInt2x4": "quint2x4"}
STORAGE_TYPES = {f"{p}Storage": StorageType(f"{p}Storage", KINDS[k])
                 for p, k in {**_STORAGE_NAMES, **_QUANTIZED_STORAGES}.items()}
UNTYPED = StorageType("UntypedStorage", KINDS["uint8"])
UNTYPED.untyped = True
TYPED_STORAGE = StorageType("TypedStorage", None)
STORAGE_OF = {KINDS[k].tg.np: STORAGE_TYPES[f"{p}Storage"] for p, k in _STORAGE_NAMES.items() if p != "BFloat16"}


class Storage:
    """One saved storage: its bytes (``raw``) and the typed arrays over them that tensors are views of.

    ``filled`` is False while the bytes are still to be read (the legacy format stores them after the pickle);
    arrays that must be converted or copied are then filled by ``complete()`` once they are.
    """

    def __init__(self, raw, location, filled=True, swap=False):
        self.raw, self.location, self.filled, self.swap = raw, location, filled, swap
        self.pending, self._typed = [], {}
        self.item, self.parent = 1, None       # the element size it was declared in; the storage it views

    def typed(self, kind):
        hit = self._typed.get(kind.name)
        if hit is not None:
            return hit
        if kind.tg is None:
            raise Corrupt(f"a tensor has dtype torch.{kind.name}, which tapegrad cannot hold (it has no such "
                          "dtype); convert it in PyTorch first, e.g. to float32")
        if self.raw.size % kind.itemsize:
            raise Corrupt(f"a storage of {self.raw.size} bytes does not hold whole torch.{kind.name} elements")
        src = kind.typed(self.raw, self.swap)
        if kind.convert is None and src.dtype == kind.tg.np:
            out = src                                         # the common case: a view, no copy
        else:
            convert = kind.convert or (lambda s, o: o.__setitem__(Ellipsis, s))
            out = self.derive((src.size,), kind.tg.np, lambda o: convert(src, o))
        self._typed[kind.name] = out
        return out

    def derive(self, shape, np_dtype, fill):
        """A new array that ``fill(out)`` computes from the bytes, now or once they are read."""
        out = np.empty(shape, np_dtype)
        if self.filled:
            fill(out)
        else:
            self.pending.append((fill, out))
        return out

    def complete(self):
        self.filled = True
        for fill, out in self.pending:
            fill(out)
        self.pending = []


class Typed:
    """What a storage reference in the pickle loads as: a storage seen as elements of one kind.

    ``map_location`` callables receive it (``lambda storage, loc: storage`` returns it unchanged).
    """

    def __init__(self, storage, kind):
        self.storage, self.kind = storage, kind

    @property
    def dtype(self):
        return self.kind.dtype

    @property
    def device(self):
        return device("cpu")

    def nbytes(self):
        return self.storage.raw.size

    def size(self):
        return self.storage.raw.size // self.kind.itemsize

    def cpu(self):
        return self

    def cuda(self, *args, **kwargs):
        raise RuntimeError("tapegrad runs on the CPU only: a storage cannot be moved to CUDA (return the storage "
                           "itself from map_location, or use map_location='cpu')")

    def to(self, *args, **kwargs):
        _require_cpu(kwargs.get("device", args[0] if args else "cpu"))
        return self


# --- the rebuild functions, under torch's names ------------------------------------------------------------
def _check_ints(what, values):
    if not isinstance(values, (tuple, list)) or len(values) > 64 or \
            not all(type(v) is int and v >= 0 for v in values):
        raise Corrupt(f"a tensor's {what} is {values!r}, not a sequence of non-negative ints")
    return tuple(values)


def _view(storage, offset, size, stride, kind=None):
    """The array that ``storage`` (a ``Typed``) holds at ``offset`` with ``size`` and ``stride`` (elements)."""
    if not isinstance(storage, Typed):
        raise Corrupt(f"a tensor's storage is {type(storage).__name__}, not a storage")
    typed = storage.storage.typed(kind or storage.kind)
    size, stride = _check_ints("size", size), _check_ints("stride", stride)
    if type(offset) is not int or offset < 0 or len(size) != len(stride):
        raise Corrupt(f"a tensor has storage offset {offset!r}, size {size} and stride {stride}, which do not fit "
                      "together")
    if math.prod(size) == 0:
        if offset > typed.size:
            raise Corrupt(f"a tensor's storage offset {offset} lies past its storage of {typed.size} elements")
        return np.empty(size, typed.dtype)
    last = offset + sum((n - 1) * s for n, s in zip(size, stride))
    if last >= typed.size:
        raise Corrupt(f"a tensor of size {list(size)}, stride {list(stride)} and storage offset {offset} reaches "
                      f"element {last}, but its storage holds {typed.size} elements")
    item = typed.itemsize
    return np.ndarray(size, typed.dtype, buffer=typed, offset=offset * item, strides=tuple(s * item for s in stride))


def _tensor(arr, requires_grad):
    if type(requires_grad) is not bool:
        raise Corrupt(f"a tensor's requires_grad is {requires_grad!r}, not True/False")
    t = Tensor._make(arr)
    if requires_grad:
        if arr.dtype.kind not in "fc":
            raise Corrupt(f"a tensor of dtype {_dtype.from_numpy_dtype(arr.dtype).name} is marked requires_grad; "
                          "only Tensors of floating point and complex dtype can require gradients")
        t.requires_grad_()
    return t


def _with_metadata(storage, arr, metadata):
    if not metadata:
        return arr
    if not isinstance(metadata, dict):
        raise Corrupt(f"a tensor's metadata is {type(metadata).__name__}, not a dict")
    conj, neg = bool(metadata.get("conj")), bool(metadata.get("neg"))
    if not (conj or neg):
        return arr

    def fill(out):
        np.copyto(out, arr)
        if conj:
            np.conjugate(out, out=out)
        if neg:
            np.negative(out, out=out)
    return storage.storage.derive(arr.shape, arr.dtype, fill)


def _rebuild_tensor(storage, storage_offset, size, stride):
    return _tensor(_view(storage, storage_offset, size, stride), False)


def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, backward_hooks, metadata=None):
    arr = _with_metadata(storage, _view(storage, storage_offset, size, stride), metadata)
    return _tensor(arr, requires_grad)


def _rebuild_tensor_v3(storage, storage_offset, size, stride, requires_grad, backward_hooks, dtype,
                       metadata=None):
    arr = _with_metadata(storage, _view(storage, storage_offset, size, stride, kind_of(dtype)), metadata)
    return _tensor(arr, requires_grad)


def _parameter(data=None, requires_grad=True):
    from ..nn.parameter import Parameter
    if data is not None and not isinstance(data, Tensor):
        raise Corrupt(f"a Parameter's data is {type(data).__name__}, not a tensor")
    if type(requires_grad) is not bool:
        raise Corrupt(f"a Parameter's requires_grad is {requires_grad!r}, not True/False")
    if requires_grad and data is not None and data._array.dtype.kind not in "fc":
        raise Corrupt(f"a Parameter of dtype {data.dtype.name} is marked requires_grad; only Tensors of "
                      "floating point and complex dtype can require gradients")
    return Parameter(data, requires_grad)


def _set_state(obj, state):
    """Set the Python attributes a checkpoint saved on a tensor (``t.tag = ...``), as torch does. A name the tensor
    class itself has (its fields, properties, methods: ``_array``, ``grad``, ``add``...) or a non-string one is
    dropped with a warning: a file cannot overwrite the tensor's own state."""
    if not state:
        return obj
    if isinstance(state, tuple):
        if len(state) != 2:
            raise Corrupt(f"Invalid serialized state: {state!r}")
        items = {**(state[0] or {}), **(state[1] or {})}
    elif isinstance(state, dict):
        items = state
    else:
        raise Corrupt(f"a tensor's state is {type(state).__name__}, not a dict")
    dropped = []
    for k, v in items.items():
        if type(k) is not str or not k.isidentifier() or hasattr(type(obj), k):
            dropped.append(k)
            continue
        setattr(obj, k, v)
    if dropped:
        names = ", ".join(sorted(map(repr, dropped)))
        warnings.warn(f"the checkpoint sets {names} on a tensor: names of the tensor's own fields or methods (or "
                      "not names), so they were dropped", UserWarning, stacklevel=2)
    return obj


def _rebuild_parameter(data, requires_grad, backward_hooks):
    return _parameter(data, requires_grad)


def _rebuild_parameter_with_state(data, requires_grad, backward_hooks, state):
    return _set_state(_parameter(data, requires_grad), state)


def _as_type(t, cls):
    from ..nn.parameter import Parameter
    if cls is Tensor or type(t) is cls:
        return t
    if cls is Parameter:
        return _parameter(t, t.requires_grad)
    if not (isinstance(cls, type) and issubclass(cls, Tensor)):
        raise Corrupt(f"a tensor's type is {cls!r}, not a tensor class")
    new = object.__new__(cls)
    for slot in ("_array", "_rg", "grad_fn", "_grad", "_output_nr", "_vcl", "_acc", "_view"):
        object.__setattr__(new, slot, getattr(t, slot))
    return new


def _rebuild_from_type_v2(func, new_type, args, state):
    if func not in REBUILDS or type(args) is not tuple:
        raise Corrupt(f"a tensor is rebuilt by {func!r}, which is not a tensor rebuild function")
    return _set_state(_as_type(func(*args), new_type), state)


def _rebuild_device_tensor_from_cpu_tensor(data, dtype, device, requires_grad):
    if not isinstance(data, Tensor):
        raise Corrupt(f"a device tensor's data is {type(data).__name__}, not a tensor")
    return _tensor(data._array.astype(kind_of(dtype).tg.np, copy=False), requires_grad)


def _rebuild_device_tensor_from_numpy(data, dtype, device, requires_grad):
    if not isinstance(data, np.ndarray):
        raise Corrupt(f"a device tensor's data is {type(data).__name__}, not an array")
    return _tensor(np.asarray(data, kind_of(dtype).tg.np), requires_grad)


def _unsupported(name, what):
    def rebuild(*args, **kwargs):
        raise Corrupt(f"the checkpoint holds {what}, which tapegrad does not have (convert them to dense CPU "
                      "tensors in PyTorch and save again)")
    rebuild.__name__ = rebuild.__qualname__ = name
    return rebuild


_rebuild_qtensor = _unsupported("_rebuild_qtensor", "quantized tensors")
_sparse_layouts_unsupported = _unsupported("_rebuild_sparse_tensor", "sparse CSR/CSC/BSR tensors")


def _rebuild_sparse_tensor(layout, data):
    """A COO tensor from ``(indices, values, size[, is_coalesced])`` (the other sparse layouts are refused)."""
    from ..tensor import sparse_coo
    if layout is not sparse_coo:
        _sparse_layouts_unsupported()
    if not isinstance(data, tuple) or len(data) not in (3, 4) or not all(isinstance(d, Tensor) for d in data[:2]):
        raise Corrupt("a sparse tensor's data is not (indices, values, size[, is_coalesced])")
    from ..sparse import sparse_coo_tensor
    indices, values, size = data[:3]
    return sparse_coo_tensor(indices, values, tuple(size), is_coalesced=data[3] if len(data) == 4 else None)


_rebuild_nested_tensor = _unsupported("_rebuild_nested_tensor", "nested tensors")
_rebuild_wrapper_subclass = _unsupported("_rebuild_wrapper_subclass", "tensor subclasses without storage")


def _rebuild_meta_tensor_no_storage(dtype, size, stride, requires_grad):
    """A meta tensor as torch saves one: its dtype, size and strides, no storage."""
    from .._meta import meta_array
    kind = kind_of(dtype)
    size, stride = _check_ints("size", size), _check_ints("stride", stride)
    if len(size) != len(stride):
        raise Corrupt(f"a meta tensor has size {size} and stride {stride}, which do not fit together")
    if kind.tg is None:
        raise Corrupt(f"the checkpoint holds a meta tensor of dtype torch.{kind.name}, which tapegrad does not have")
    return _tensor(meta_array(size, kind.tg.np, stride), requires_grad)


REBUILDS = (_rebuild_tensor, _rebuild_tensor_v2, _rebuild_tensor_v3, _rebuild_parameter,
            _rebuild_parameter_with_state, _rebuild_device_tensor_from_cpu_tensor,
            _rebuild_device_tensor_from_numpy, _rebuild_qtensor, _rebuild_sparse_tensor, _rebuild_nested_tensor,
            _rebuild_wrapper_subclass, _rebuild_meta_tensor_no_storage)


# --- the few builtins torch allows, checked ----------------------------------------------------------------
_BYTE_CODECS = ("latin1", "latin-1", "iso-8859-1", "utf-8", "utf8", "ascii")


def _encode(obj, encoding="utf-8", errors="strict"):
    """``_codecs.encode`` as pickle uses it (bytes pickled by protocol 2 are text in latin-1)."""
    if not isinstance(obj, str) or not isinstance(encoding, str) or encoding.lower() not in _BYTE_CODECS:
        raise Corrupt(f"_codecs.encode({type(obj).__name__}, {encoding!r}) is not how pickle stores bytes")
    return codecs.encode(obj, encoding, errors)


def _bytearray(*args):
    if not args:
        return bytearray()
    if isinstance(args[0], (bytes, bytearray)) and len(args) == 1:
        return bytearray(args[0])
    if isinstance(args[0], str) and len(args) == 2:
        return bytearray(_encode(args[0], args[1]))
    raise Corrupt(f"bytearray{tuple(type(a).__name__ for a in args)} is not how pickle stores a bytearray")


def _device(type="cpu", index=None):  # noqa: A002 - torch's name
    """``torch.device``: tapegrad computes on the CPU, so every device a checkpoint names loads as the CPU."""
    if not isinstance(type, str):
        raise Corrupt(f"a device is {type!r}, not a device name")
    return device("cpu")


class _Marker:
    """A torch object tapegrad has no equivalent of (a legacy tensor class, a layout, a quantization scheme)."""

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return self.name


_LAYOUTS = {}


def _get_layout(name):
    if not isinstance(name, str):
        raise Corrupt(f"a layout is {name!r}, not a layout name")
    if name == "torch.sparse_coo":
        from ..tensor import sparse_coo
        return sparse_coo
    return _LAYOUTS.setdefault(name, _Marker(name))


_TABLE = {}


def allowed():
    """``{"torch.name": stand-in}``: what ``weights_only`` loading resolves (torch 2.13's default allowlist)."""
    if _TABLE:
        return _TABLE
    from ..nn.parameter import Parameter
    t = {"collections.OrderedDict": OrderedDict, "collections.Counter": Counter,
         "torch.nn.parameter.Parameter": Parameter, "torch.serialization._get_layout": _get_layout,
         "torch.Size": Size, "torch.Tensor": Tensor, "torch.device": _device, "_codecs.encode": _encode,
         "builtins.bytearray": _bytearray, "builtins.set": set, "builtins.complex": complex}
    for name, kind in KINDS.items():
        t[f"torch.{name}"] = kind.dtype
    for name, stype in STORAGE_TYPES.items():
        t[f"torch.{name}"] = stype
        if not name.startswith("Q"):
            t[f"torch.cuda.{name}"] = stype
    t["torch.storage.UntypedStorage"] = UNTYPED
    t["torch.storage.TypedStorage"] = TYPED_STORAGE
    for prefix in ("torch", "torch.cuda", "torch.sparse", "torch.cuda.sparse"):
        for p in _STORAGE_NAMES:
            if not p.startswith("Complex") and not (p == "Bool" and "sparse" in prefix):
                t[f"{prefix}.{p}Tensor"] = _Marker(f"{prefix}.{p}Tensor")
    for q in ("per_tensor_affine", "per_tensor_symmetric", "per_channel_affine", "per_channel_symmetric",
              "per_channel_affine_float_qparams"):
        t[f"torch.{q}"] = _Marker(f"torch.{q}")
    for fn in REBUILDS:
        t[f"torch._utils.{fn.__name__}"] = fn
    t["torch._tensor._rebuild_from_type_v2"] = _rebuild_from_type_v2
    _TABLE.update(t)
    _CALLABLE.update(id(f) for f in (*REBUILDS, _rebuild_from_type_v2, OrderedDict, Counter, _get_layout, Size,
                                    _device, _encode, _bytearray, set, complex, Parameter))
    return _TABLE


_CALLABLE = set()


def callable_ids():
    """The ids of the stand-ins that REDUCE may call (not the classes, storages and dtypes: they are values)."""
    allowed()
    return _CALLABLE


def torch_names():
    """``{stand-in: "module.name"}``: how the pickler names tapegrad's objects in a file torch reads."""
    from ..nn.parameter import Parameter, UninitializedBuffer, UninitializedParameter
    names = {fn: f"torch._utils.{fn.__name__}" for fn in REBUILDS}
    names.update({_rebuild_from_type_v2: "torch._tensor._rebuild_from_type_v2", Size: "torch.Size",
                  _get_layout: "torch.serialization._get_layout",
                  device: "torch.device", Tensor: "torch.Tensor", Parameter: "torch.nn.parameter.Parameter",
                  UninitializedParameter: "torch.nn.parameter.UninitializedParameter",
                  UninitializedBuffer: "torch.nn.parameter.UninitializedBuffer"})
    return names


# --- torch's names for tapegrad's own globals (classes and functions pickled by name) ---------------------------
# nn/, optim/, distributions/, utils/ ... have torch's files, so a class there is named by its path
# (tapegrad.nn.modules.linear.Linear -> torch.nn.modules.linear.Linear); the exceptions:
_MODULE_AS_TORCH = {"tapegrad.nn.module": "torch.nn.modules.module"}
# ops live in tapegrad.ops.<family>, not where torch defines them: they are named by where torch has them public
# (F.relu -> torch.nn.functional.relu, as torch pickles it), in this order
_PUBLIC = ("nn.functional", "", "nn.init", "linalg", "special", "fft")
_PUBLIC_NAMES = {}


def _public_names():
    if not _PUBLIC_NAMES:
        import importlib
        for ns in _PUBLIC:
            mod = importlib.import_module("tapegrad" + ("." + ns if ns else ""))
            where = "torch" + ("." + ns if ns else "")
            for name, obj in vars(mod).items():
                if not name.startswith("_") and callable(obj) and \
                        str(getattr(obj, "__module__", "")).startswith("tapegrad"):
                    _PUBLIC_NAMES.setdefault(id(obj), (obj, f"{where}.{name}"))
    return _PUBLIC_NAMES


def torch_spellings(obj) -> list:
    """The names torch gives the tapegrad global ``obj`` (a class or function) in a pickle, the one torch writes
    first: ``[]`` for an object that is not tapegrad's."""
    module, qualname = getattr(obj, "__module__", None), getattr(obj, "__qualname__", None)
    if not isinstance(module, str) or not isinstance(qualname, str) or \
            not (module == "tapegrad" or module.startswith("tapegrad.")):
        return []
    out = []
    public = _public_names().get(id(obj))
    if public is not None and public[0] is obj:
        out.append(public[1])
    if not module.startswith(("tapegrad.ops.", "tapegrad._")) and "<locals>" not in qualname:
        path = f"{_MODULE_AS_TORCH.get(module, 'torch' + module[len('tapegrad'):])}.{qualname}"
        if path not in out:
            out.append(path)
    return out
