"""PyTorch's legacy tensor API, still common in real code: ``torch.FloatTensor(2, 1)``, ``torch.LongTensor([1, 2])``,
``isinstance(x, torch.FloatTensor)``, ``torch.Tensor(2, 3)``, ``x.new(...)``, ``x.type()``, ``autograd.Variable``.

As in torch, the typed classes are not subclasses of ``Tensor``: calling one makes a plain ``Tensor`` of its
dtype, and ``isinstance`` asks the tensor's dtype (a metaclass check). ``x.type()`` and ``torch.typename``
return torch's strings (``'torch.FloatTensor'``), so that code comparing them with what torch returns works;
the classes print as ``<class 'tapegrad.FloatTensor'>``.
"""

from __future__ import annotations

import warnings

import numpy as np

from . import _dtype
from ._tensor_api import VOLATILE_REMOVED, TypedStorage, UntypedStorage
from .tensor import Size, Tensor, _require_cpu

__all__ = ["FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "ByteTensor", "CharTensor", "ShortTensor",
           "IntTensor", "LongTensor", "BoolTensor", "legacy_new", "Variable", "type_string", "parse_type"]


def _sizes_only(args):
    """The legacy constructors' shape form: ints (``FloatTensor(2, 3)``) or one ``Size``."""
    if len(args) == 1 and isinstance(args[0], Size):
        return tuple(args[0])
    if args and all(isinstance(a, (int, np.integer)) and not isinstance(a, (bool, np.bool_)) for a in args):
        return tuple(int(a) for a in args)
    return None


def legacy_new(d, args, device=None, op="new"):
    """torch's legacy constructor for dtype ``d`` (``torch.FloatTensor(...)``, ``torch.Tensor(...)``,
    ``x.new(...)``): no argument -> an empty tensor; ints or a ``Size`` -> an uninitialised tensor of that shape;
    one sequence or ndarray -> its data converted to ``d`` (with ``torch.tensor``'s overflow checks); a tensor of
    dtype ``d`` -> a tensor sharing its data (another dtype is torch's TypeError)."""
    if device is not None:
        _require_cpu(device)
    from .creation import _from_data
    shape = _sizes_only(args)
    if not args:
        arr = np.empty((0,), d.np)
    elif shape is not None:
        for s in shape:
            if s < 0:
                raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {list(shape)}")
        arr = np.empty(shape, d.np)
    elif len(args) == 1:
        data = args[0]
        if isinstance(data, Tensor):
            if data.dtype is not d:
                raise TypeError(f"expected {_options(d)} (got {_options(data.dtype)})")
            t = Tensor._make(data._array)
            t._vc = data._vc
            return t
        if isinstance(data, str):
            raise TypeError(f"{op}(): invalid data type 'str'")
        if isinstance(data, np.ndarray):
            if data.dtype == d.np:         # (torch's legacy constructors share an array of their own dtype)
                from .creation import from_numpy
                return from_numpy(data)
            arr = np.array(data, dtype=d.np)
        elif isinstance(data, (TypedStorage, UntypedStorage)):
            return _from_storage(d, data)
        elif isinstance(data, (list, tuple, range)):
            arr = _from_data(list(data) if isinstance(data, range) else data, d)
        else:
            kind = type(data)
            name = kind.__name__ if kind.__module__ == "builtins" else \
                f"{kind.__module__.split('.')[0]}.{kind.__name__}"
            raise TypeError(f"{op}(): data must be a sequence (got {name})")
    else:
        raise TypeError(f"{op}() received an invalid combination of arguments - got "
                        f"({', '.join(type(a).__name__ for a in args)}), but expected one of: (*, device), "
                        "(tuple of ints size, *, device), (object data, *, device), (Tensor other)")
    return Tensor._make(arr)


def _from_storage(d, storage):
    """``torch.FloatTensor(x.storage())``: a 1-d tensor of the whole storage, sharing its memory."""
    if isinstance(storage, TypedStorage):
        if storage.dtype is not d:
            raise RuntimeError(f"Expected a Storage of type {d._legacy} or an UntypedStorage, but got type "
                               f"{storage.dtype._legacy} for argument 1 'storage'")
        return Tensor._make(storage._array)
    raw = storage._bytes
    return Tensor._make(raw[:raw.size - raw.size % d.itemsize].view(d.np))


_C_DTYPE = {"float32": "float", "float64": "double", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
            "int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char",
            "uint8": "unsigned char", "bool": "bool"}


def _options(d):
    return (f"TensorOptions(dtype={_C_DTYPE.get(d.name, d.name)}, device=cpu, layout=Strided, requires_grad=false "
            "(default), pinned_memory=false (default), memory_format=(nullopt))")


class _TensorType(type):
    """The metaclass of the typed legacy classes: calling one constructs (``legacy_new``), ``isinstance`` checks
    the tensor's dtype."""

    def __call__(cls, *args, device=None):
        return legacy_new(cls.dtype, args, device)

    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor) and obj.dtype is cls.dtype and obj.is_sparse is cls.is_sparse

    def __subclasscheck__(cls, sub):
        return type(sub) is type(cls) and sub.dtype is cls.dtype


class _SparseTensorType(_TensorType):
    """``torch.sparse.FloatTensor`` and friends: calling one makes a COO tensor (``sparse.legacy_sparse_new``),
    ``isinstance`` checks the layout and the dtype."""

    def __call__(cls, *args, device=None):
        from .sparse import legacy_sparse_new
        return legacy_sparse_new(cls.dtype, args, device)


def _typed(d):
    name = f"{d._legacy}Tensor"
    cls = _TensorType(name, (), {"dtype": d, "is_cuda": False, "is_sparse": False, "__module__": "tapegrad",
                                 "__doc__": f"torch.{name}: ``{name}(2, 3)`` (a shape), ``{name}([1, 2])`` (data), "
                                            f"``isinstance(x, {name})`` (dtype {d.name})."})
    return cls


def sparse_typed(d):
    """``torch.sparse.<Name>Tensor`` for dtype ``d`` (bound in ``tapegrad.sparse``)."""
    name = f"{d._legacy}Tensor"
    return _SparseTensorType(name, (), {
        "dtype": d, "is_cuda": False, "is_sparse": True, "__module__": "tapegrad.sparse",
        "__doc__": f"torch.sparse.{name}: ``{name}(indices, values, size)`` (a COO tensor with the values' dtype), "
                   f"``{name}(2, 3)`` (an empty one), ``isinstance(x, {name})`` (sparse, dtype {d.name})."})


FloatTensor = _typed(_dtype.float32)
DoubleTensor = _typed(_dtype.float64)
HalfTensor = _typed(_dtype.float16)
BFloat16Tensor = _typed(_dtype.bfloat16)
ByteTensor = _typed(_dtype.uint8)
CharTensor = _typed(_dtype.int8)
ShortTensor = _typed(_dtype.int16)
IntTensor = _typed(_dtype.int32)
LongTensor = _typed(_dtype.int64)
BoolTensor = _typed(_dtype.bool)
_BY_LEGACY = {c.__name__: c for c in (FloatTensor, DoubleTensor, HalfTensor, BFloat16Tensor, ByteTensor, CharTensor,
                                      ShortTensor, IntTensor, LongTensor, BoolTensor)}


class _CudaTensorType(type):
    """``torch.cuda.FloatTensor`` and friends: no tensor is one; making one is the CPU-only error."""

    def __call__(cls, *args, **kwargs):
        # torch's CPU build's words and class (a TypeError); tapegrad's hint after them
        raise TypeError(f"type torch.cuda.{cls.__name__} not available. Torch not compiled with CUDA enabled. "
                        f"(tapegrad runs on the CPU only: use torch.{cls.__name__})")

    def __instancecheck__(cls, obj):
        return False


CUDA_TYPES = {name: _CudaTensorType(name, (), {"dtype": c.dtype, "is_cuda": True, "__module__": "tapegrad.cuda"})
              for name, c in _BY_LEGACY.items()}


def type_string(t) -> str:
    """``x.type()``: torch's name of the tensor's type, ``'torch.FloatTensor'`` (``'torch.sparse.FloatTensor'``
    for a COO tensor)."""
    return f"torch.{'sparse.' if t.is_sparse else ''}{t.dtype._legacy}Tensor"


# torch's CPU-only build's words for ``x.type(torch.cuda.FloatTensor)`` / ``x.type('torch.cuda.FloatTensor')``
_NO_CUDA_LIBRARY = (
    "Cannot initialize CUDA without ATen_cuda library. PyTorch splits its backend into two shared libraries: a CPU "
    "library and a CUDA library; this error has occurred because you are trying to use some CUDA functionality, but "
    "the CUDA library has not been loaded by the dynamic linker for some reason.  The CUDA library MUST be loaded, "
    "EVEN IF you don't directly use any symbols from the CUDA library! One common culprit is a lack of "
    "-Wl,--no-as-needed in your link arguments; many dynamic linkers will delete dynamic library dependencies if you "
    "don't depend on any of their symbols.  You can check if this has occurred by using ldd on your binary to see if "
    "there is a dependency on *_cuda.so library.")


def parse_type(t):
    """What ``x.type(t)`` accepts, as torch: a dtype, a typed class (``torch.LongTensor``), ``torch.Tensor`` (the
    default dtype) or a type name (``'torch.LongTensor'``, ``'torch.Tensor'``; ``'tapegrad.*'`` too); returns the
    dtype. Another class is an invalid type; anything else a TypeError."""
    if isinstance(t, _TensorType):
        return t.dtype
    if isinstance(t, _CudaTensorType):
        raise RuntimeError(_NO_CUDA_LIBRARY)
    if isinstance(t, _dtype.dtype):
        return t
    if t is Tensor:
        return _dtype.get_default_dtype()
    if isinstance(t, type):
        # torch names the class as CPython's tp_name does: a class made in Python by its name alone, a C one
        # with its module (numpy.float32), builtins without one
        heap = t.__flags__ & (1 << 9)
        name = t.__name__ if heap or t.__module__ == "builtins" else f"{t.__module__}.{t.__name__}"
        raise ValueError(f"invalid type: {name!r}")
    if not isinstance(t, str):
        raise TypeError("dtype must be a type, str, or dtype object")
    for prefix in ("torch.", "tapegrad."):
        if t.startswith(prefix):
            name = t[len(prefix):]
            if name.startswith("cuda."):
                raise RuntimeError(_NO_CUDA_LIBRARY)
            if name == "Tensor":
                return _dtype.get_default_dtype()
            if name in _BY_LEGACY:
                return _BY_LEGACY[name].dtype
    raise ValueError(f"invalid type: {t!r}")


def typename(obj) -> str:
    """torch.typename: ``'torch.FloatTensor'`` for a tensor, else the object's module and qualified name
    (``'tapegrad.nn.modules.linear.Linear'``, ``'int'``)."""
    if isinstance(obj, Tensor):
        return type_string(obj)
    module = getattr(obj, "__module__", "") or ""
    if hasattr(obj, "__qualname__"):
        qualname = obj.__qualname__
    elif hasattr(obj, "__name__"):
        qualname = obj.__name__
    else:
        module = obj.__class__.__module__ or ""
        qualname = obj.__class__.__qualname__
    if isinstance(obj, _TensorType):
        return f"torch.{'sparse.' if obj.is_sparse else ''}{obj.__name__}"
    return qualname if module in ("", "builtins") else f"{module}.{qualname}"


class _VariableMeta(type):
    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor)

    def __call__(cls, data=None, requires_grad=False, volatile=False, **kwargs):
        for name in kwargs:
            raise TypeError(f"'{name}' is an invalid keyword argument for this function")
        if volatile:
            warnings.warn(VOLATILE_REMOVED, UserWarning, stacklevel=2)
            if requires_grad:
                raise ValueError("Variable can't be volatile and require_grad at the same time!")
        if data is None:
            data = Tensor._make(np.empty((0,), _dtype.get_default_dtype().np))
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        t = Tensor._make(data._array)       # the same data, no history (torch's Variable(x) is x.detach())
        t._vc = data._vc
        if requires_grad:
            t.requires_grad_()
        return t


class Variable(metaclass=_VariableMeta):
    """The pre-0.4 wrapper, as torch keeps it: ``Variable(t, requires_grad=True)`` returns a tensor over t's data
    (with no history) that requires grad; ``isinstance(x, Variable)`` is true for every tensor."""


Variable.__module__ = "tapegrad.autograd.variable"


def new(self, *args, device=None):
    """``x.new(...)``: the legacy constructor with x's dtype (``x.new(2, 3)``, ``x.new([1, 2])``, ``x.new()``), on
    x's device (a meta tensor's: a meta tensor of that shape)."""
    t = legacy_new(self.dtype, args, device)
    if self.is_meta and device is None and not (len(args) == 1 and isinstance(args[0], Tensor)):
        from ._meta import as_meta_tensor
        return as_meta_tensor(t)
    return t


Tensor.new = new
