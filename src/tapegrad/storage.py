"""``torch.storage``: the storage classes. ``x.untyped_storage()`` is an ``UntypedStorage`` (the bytes) and
``x.storage()`` a ``TypedStorage`` (the elements in the tensor's dtype; ``_tensor_api.py`` defines both). The
legacy classes ``FloatStorage``, ``LongStorage``... are what torch's are: constructors of a ``TypedStorage`` of
their dtype (``FloatStorage([1, 2])``, ``LongStorage(3)``), and ``isinstance(s, FloatStorage)`` holds for a
``TypedStorage`` of that dtype."""

from __future__ import annotations

from . import _dtype
from ._tensor_api import TypedStorage, UntypedStorage

__all__ = ["TypedStorage", "UntypedStorage"]


class _LegacyStorageMeta(type):
    dtype = None

    def __instancecheck__(cls, instance):
        return type(instance) is TypedStorage and cls.dtype is not None and instance.dtype == cls.dtype


class _LegacyStorage(TypedStorage, metaclass=_LegacyStorageMeta):
    """A legacy storage class: calling it makes a ``TypedStorage`` of the class's dtype."""

    def __new__(cls, *args, **kwargs):
        from .creation import tensor, zeros
        if kwargs or len(args) > 1:
            raise TypeError(f"{cls.__name__}(): takes a size or a sequence of numbers")
        data = args[0] if args else 0
        if isinstance(data, int) and not isinstance(data, bool):
            arr = zeros(data, dtype=cls.dtype)._array
        elif isinstance(data, (list, tuple)):
            arr = tensor(data, dtype=cls.dtype)._array
        else:
            raise TypeError(f"new(): invalid data type '{type(data).__name__}'")
        return TypedStorage(arr, cls.dtype)


def _legacy(name, dtype):
    cls = _LegacyStorageMeta(name, (_LegacyStorage,), {"dtype": dtype, "__module__": "tapegrad",
                                                       "__doc__": f"A TypedStorage of {dtype}."})
    cls.__qualname__ = name
    return cls


LEGACY = {name: _legacy(name, getattr(_dtype, dt)) for name, dt in (
    ("DoubleStorage", "float64"), ("FloatStorage", "float32"), ("HalfStorage", "float16"),
    ("BFloat16Storage", "bfloat16"), ("LongStorage", "int64"), ("IntStorage", "int32"), ("ShortStorage", "int16"),
    ("CharStorage", "int8"), ("ByteStorage", "uint8"), ("BoolStorage", "bool"),
    ("ComplexFloatStorage", "complex64"), ("ComplexDoubleStorage", "complex128"))}
globals().update(LEGACY)
