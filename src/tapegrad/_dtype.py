"""dtypes and PyTorch's type-promotion rules.

A ``dtype`` wraps a NumPy dtype and knows its torch name. ``result_type`` follows torch, not NumPy:
Python numbers are "weak" (``int64_tensor + 2.5`` is float32, the default dtype), 0-d tensors only win
when they bring a higher category (``float32[3] + float64[]`` stays float32).
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "dtype", "float16", "half", "bfloat16", "float32", "float", "float64", "double", "int8", "uint8", "int16",
    "short", "uint16", "uint32", "uint64", "int32", "int", "int64", "long", "bool", "complex64", "cfloat",
    "complex128", "cdouble", "complex32", "chalf",
    "get_default_dtype", "set_default_dtype", "promote_types", "result_type", "can_cast", "finfo", "iinfo",
]


class dtype:
    """A tensor element type, e.g. ``tapegrad.float32``; ``.is_floating_point``, ``.itemsize``."""

    __slots__ = ("name", "np", "is_floating_point", "is_complex", "is_signed", "itemsize", "_legacy", "_cat")

    def __init__(self, name: str, np_dtype, legacy: str):
        self.name = name
        self.np = np.dtype(np_dtype)
        self.is_floating_point = self.np.kind == "f"
        self.is_complex = self.np.kind == "c"
        self.is_signed = self.np.kind in "ifc"
        self.itemsize = self.np.itemsize
        self._legacy = legacy  # "Float" as in torch.FloatTensor, used in error messages
        self._cat = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}[self.np.kind]

    def __repr__(self):
        return f"tapegrad.{self.name}"

    def __reduce__(self):
        return (_by_name, (self.name,))

    def to_complex(self):
        return complex128 if self is float64 else complex64

    def to_real(self):
        return float64 if self is complex128 else float32 if self is complex64 else self


float16 = half = dtype("float16", np.float16, "Half")
float32 = float = dtype("float32", np.float32, "Float")  # noqa: A001 - torch's names
float64 = double = dtype("float64", np.float64, "Double")
# NumPy has no bfloat16: it is stored as float32 (documented difference).
bfloat16 = dtype("bfloat16", np.float32, "BFloat16")
int8 = dtype("int8", np.int8, "Char")
uint8 = dtype("uint8", np.uint8, "Byte")
int16 = short = dtype("int16", np.int16, "Short")
int32 = int = dtype("int32", np.int32, "Int")  # noqa: A001
int64 = long = dtype("int64", np.int64, "Long")
bool = dtype("bool", np.bool_, "Bool")  # noqa: A001
# torch's "shell" unsigned types: stored, converted, compared and printed; torch computes little with them and
# promotes them with no other integer type (promote_types raises); NumPy computes what torch does not (README)
uint16 = dtype("uint16", np.uint16, "UInt16")
uint32 = dtype("uint32", np.uint32, "UInt32")
uint64 = dtype("uint64", np.uint64, "UInt64")
complex64 = cfloat = dtype("complex64", np.complex64, "ComplexFloat")
complex128 = cdouble = dtype("complex128", np.complex128, "ComplexDouble")



class _Unstorable(dtype):
    """A torch dtype NumPy has no type for: it exists to be named and compared (``x.dtype == torch.complex32``),
    and refuses to make a tensor."""

    __slots__ = ()


complex32 = chalf = _Unstorable("complex32", np.complex64, "ComplexHalf")
complex32.itemsize = 4

_ALL = (float16, float32, float64, bfloat16, int8, uint8, int16, int32, int64, bool, complex64, complex128,
        uint16, uint32, uint64)
_SHELL = (uint16, uint32, uint64)
_FROM_NP = {d.np: d for d in reversed(_ALL)}  # bfloat16 is never inferred from an array
_BY_NAME = {d.name: d for d in _ALL}


def _by_name(name):
    return _BY_NAME[name]


def from_numpy_dtype(np_dtype) -> dtype:
    """The tapegrad dtype of a NumPy dtype; raise a clear TypeError for unsupported ones."""
    try:
        return _FROM_NP[np_dtype]
    except (KeyError, TypeError):
        pass
    nd = np.dtype(np_dtype)
    if nd in _FROM_NP:
        return _FROM_NP[nd]
    raise TypeError(f"can't convert np.ndarray of type numpy.{nd.type.__name__}. The only supported types are: "
                    "float64, float32, float16, complex64, complex128, int64, int32, int16, int8, uint64, uint32, "
                    "uint16, uint8, and bool.")


def to_dtype(d) -> dtype:
    """Accept a tapegrad dtype, a NumPy dtype/type, a Python type or a name; return a tapegrad dtype."""
    if d.__class__ is dtype:
        return d
    if d.__class__ is _Unstorable:
        raise TypeError(f"tapegrad has no {d.name} ({d._legacy}) tensors: NumPy has no complex half-precision type")
    if d is builtins_float:
        return float64
    if d is builtins_int:
        return int64
    if d is builtins_bool:
        return bool
    if isinstance(d, str):
        name = d.replace("torch.", "").replace("tapegrad.", "")
        if name in _BY_NAME:
            return _BY_NAME[name]
        alias = {"float": float32, "double": float64, "half": float16, "long": int64, "int": int32, "short": int16}
        if name in alias:
            return alias[name]
    name = getattr(d, "__module__", "")
    if name.startswith("torch") and hasattr(d, "is_floating_point"):  # a real torch.dtype
        return _BY_NAME[str(d).split(".")[-1]]
    try:
        return from_numpy_dtype(d)
    except TypeError:      # not a dtype: torch's TypeError for the public call's argument, where it has one
        from ._argtypes import from_stack
        err = from_stack()
        if err is None:
            raise
        raise err from None


import builtins as _b  # noqa: E402

builtins_float, builtins_int, builtins_bool = _b.float, _b.int, _b.bool

_default = [float32]


def get_default_dtype() -> dtype:
    """The dtype of tensors made from Python floats (``float32`` unless changed)."""
    return _default[0]


def set_default_dtype(d) -> None:
    """Set the default floating dtype (``tapegrad.float32`` or ``tapegrad.float64``)."""
    d = to_dtype(d)
    if not d.is_floating_point:
        raise TypeError(f"only floating-point types are supported as the default type, got {d}")
    _default[0] = d


def promote_types(a: dtype, b: dtype) -> dtype:
    """The smallest dtype both ``a`` and ``b`` can be cast to, by torch's table."""
    if a is b:
        return a
    if (a in _SHELL or b in _SHELL) and not (a.is_floating_point or b.is_floating_point):
        raise RuntimeError("Promotion for uint16, uint32, uint64 types is not supported, attempted to promote "
                           f"{a._legacy} and {b._legacy}")
    if a is bool:
        return b
    if b is bool:
        return a
    if a is bfloat16 or b is bfloat16:
        other = b if a is bfloat16 else a
        if other is float16:
            return float32
        if other._cat <= 1:
            return bfloat16
        return other
    if {a, b} == {uint8, int8}:
        return int16
    if (a._cat >= 2) != (b._cat >= 2):  # floating/complex with integral: the floating one (float32 + int64 -> float32)
        return a if a._cat >= 2 else b
    return _FROM_NP[np.promote_types(a.np, b.np)]


def _scalar_dtype(x):
    t = type(x)
    if t is builtins_bool or isinstance(x, np.bool_):
        return bool
    if t is builtins_int or isinstance(x, np.integer):
        return int64
    if t is builtins_float or isinstance(x, np.floating):
        return _default[0]
    if t is complex or isinstance(x, np.complexfloating):
        return complex64 if _default[0] is not float64 else complex128
    raise TypeError(f"unsupported operand type {t.__name__!r}")


def _combine(higher, lower):
    """torch's combine_categories: a lower-priority group only wins when it brings a higher category."""
    if higher is None:
        return lower
    if lower is None:
        return higher
    if higher._cat >= lower._cat:
        return higher
    if lower._cat == 3 and higher._cat == 2:  # float tensor with a complex number: complex of that width
        return higher.to_complex()
    return promote_types(higher, lower)


def result_type(*operands) -> dtype:
    """Result dtype of an op over tensors and Python numbers, exactly as ``torch.result_type``."""
    dim = zero = wrapped = None
    for x in operands:
        d = getattr(x, "dtype", None)
        if d is None or x.__class__ in (builtins_float, builtins_int, builtins_bool, complex):
            d = _scalar_dtype(x)
            wrapped = d if wrapped is None else promote_types(wrapped, d)
            continue
        if d.__class__ is not dtype:
            # a NumPy scalar is a number to torch, not a 0-d tensor; np.bool_ is read as a float (torch's quirk);
            # (an array, the usual operand here, skips the isinstance test)
            if x.__class__ is not np.ndarray and isinstance(x, np.generic):
                d = _default[0] if isinstance(x, np.bool_) else _scalar_dtype(x)
                wrapped = d if wrapped is None else promote_types(wrapped, d)
                continue
            d = from_numpy_dtype(d)
        if x.ndim == 0:
            zero = d if zero is None else promote_types(zero, d)
        else:
            dim = d if dim is None else promote_types(dim, d)
    return _combine(dim, _combine(zero, wrapped))


def can_cast(from_: dtype, to: dtype) -> builtins_bool:
    """torch.can_cast: same-kind casting (float can't go to int, anything goes up the category ladder)."""
    return from_._cat <= to._cat


# bfloat16 is stored as float32 (see README): its limits are its own (8 exponent bits, 8 significand bits)
_BF16 = {"bits": 16, "eps": 2.0 ** -7, "max": 3.3895313892515355e38, "tiny": 2.0 ** -126, "resolution": 0.01}


class finfo:
    """Machine limits of a floating dtype (torch.finfo: ``bits``, ``eps``, ``max``, ``min``, ``tiny`` =
    ``smallest_normal``, ``resolution``, ``dtype``); a complex dtype gives its real counterpart's."""

    def __init__(self, type=None):  # noqa: A002 - torch's name
        d = to_dtype(type or _default[0])
        if not (d.is_floating_point or d.is_complex):
            raise TypeError("torch.finfo() requires a floating point input type. Use torch.iinfo to handle "
                            "'torch.finfo'")
        if d.name == "bfloat16":
            lim = dict(_BF16)
            self.dtype = "bfloat16"
        else:
            fi = np.finfo(d.np)
            lim = {"bits": fi.bits, "eps": fi.eps, "max": fi.max, "tiny": fi.tiny, "resolution": 10.0 ** -fi.precision}
            self.dtype = {"complex64": "float32", "complex128": "float64", "complex32": "float16"}.get(d.name, d.name)
        self.bits = builtins_int(lim["bits"])
        self.eps = builtins_float(lim["eps"])
        self.max = builtins_float(lim["max"])
        self.min = -self.max
        self.tiny = self.smallest_normal = builtins_float(lim["tiny"])
        self.resolution = builtins_float(lim["resolution"])

    def __eq__(self, other):
        return isinstance(other, finfo) and self.dtype == other.dtype

    def __hash__(self):
        return hash(("finfo", self.dtype))

    def __repr__(self):
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, eps={self.eps:g}, "
                f"smallest_normal={self.smallest_normal:g}, tiny={self.tiny:g}, dtype={self.dtype})")


class iinfo:
    """Limits of an integer dtype (torch.iinfo: ``max``, ``min``, ``bits``, ``dtype``)."""

    def __init__(self, type):  # noqa: A002
        d = to_dtype(type)
        if d.name == "bool":
            raise TypeError("torch.bool is not supported by torch.iinfo")
        if d.is_floating_point or d.is_complex:
            raise TypeError("torch.iinfo() requires an integer input type. Use torch.finfo to handle "
                            "'torch.iinfo'")
        ii = np.iinfo(d.np)
        self.dtype = d.name
        self.bits, self.max, self.min = ii.bits, builtins_int(ii.max), builtins_int(ii.min)

    def __eq__(self, other):
        return isinstance(other, iinfo) and self.dtype == other.dtype

    def __hash__(self):
        return hash(("iinfo", self.dtype))

    def __repr__(self):
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype})"


# --- torch's checked conversions of Python values (c10's ``overflows``): where a value that does not fit is an
# error, not a wrap-around ------------------------------------------------------------------------------------
# the names torch's messages give: a tensor built from Python data names the dtype; an op taking a scalar names
# the C++ type (``full((2,), 300, dtype=int8)``: "value cannot be converted to type int8_t without overflow")
_C_NAMES = {"int8": "int8_t", "uint8": "uint8_t", "uint16": "uint16_t", "uint32": "uint32_t", "uint64": "uint64_t",
            "int16": "int16_t", "int32": "int", "int64": "int64_t",
            "float32": "float", "float64": "double", "float16": "c10::Half", "bfloat16": "c10::BFloat16"}
_FLOAT_MAX = {"float16": 65504.0, "float32": 3.4028234663852886e38, "bfloat16": 3.3895313892515355e38}


def _overflow(d: dtype, c_name):
    return RuntimeError(f"value cannot be converted to type {_C_NAMES.get(d.name, d.name) if c_name else d.name} "
                        "without overflow")


def check_scalar(value, d: dtype, halves=True):
    """A Python number an op writes into a tensor of dtype ``d`` (``fill_``, ``full``, ``masked_fill``, ``clamp``
    bounds...): torch's RuntimeError when it does not fit. Integers: signed ones must lie in the dtype's range,
    unsigned ones in ``[-max, max]`` (-1 becomes 255, as in torch); a float must be finite and lie in the
    dtype's range before truncation (127.5 is no int8, -0.5 no uint8).
    Floats: a finite value beyond the dtype's largest is an error for float32 (and for float16/bfloat16 when
    ``halves``: torch's fill-like ops let those overflow to inf). A complex number into a real dtype must have a
    zero imaginary part (then its real part is checked and returned). Returns the value."""
    if d is bool or d.is_complex or value.__class__ is builtins_bool:
        return value
    if value.__class__ is _b.complex or isinstance(value, np.complexfloating):
        if value.imag != 0:
            raise _overflow(d, True)
        value = value.real
    if d.is_floating_point:
        lim = _FLOAT_MAX.get(d.name) if (halves or d is float32) else None
        if lim is not None and value.__class__ in (builtins_int, builtins_float) and abs(value) > lim \
                and value not in (np.inf, -np.inf):
            raise _overflow(d, True)
        return value
    ii = np.iinfo(d.np)
    if value.__class__ is builtins_int or isinstance(value, np.integer):
        v = builtins_int(value)
    elif value.__class__ is builtins_float or isinstance(value, np.floating):
        # a float must lie in the dtype's range as it is, before truncation (127.5 is no int8, -0.5 no uint8),
        # the range's top as a double (as torch compares: 2.0**63 passes for int64)
        if not np.isfinite(value) or not ii.min <= builtins_float(value) <= builtins_float(ii.max):
            raise _overflow(d, True)
        return value
    else:
        return value
    if v >= 2 ** 64:
        raise OverflowError("int too big to convert")
    if (v > ii.max or v < ii.min) if ii.min < 0 else (v > ii.max or v < -builtins_int(ii.max)):
        raise _overflow(d, True)
    return value


_F16, _F64 = np.dtype(np.float16), np.dtype(np.float64)


def through_float(arr: np.ndarray, np_dtype) -> np.ndarray:
    """``arr`` ready to be converted to ``np_dtype`` as torch converts: float64 bound for float16 first becomes
    float32 (torch's double to Half conversion rounds twice; NumPy's rounds once, and 1 value in 15,000 differs
    in its last bit); anything else as it is."""
    return arr.astype(np.float32) if arr.dtype == _F64 and np_dtype == _F16 else arr


def cast(arr: np.ndarray, np_dtype) -> np.ndarray:
    """``arr.astype(np_dtype)`` as torch converts (``through_float``)."""
    return through_float(arr, np_dtype).astype(np_dtype)


def checked_cast(arr: np.ndarray, d: dtype) -> np.ndarray:
    """An array of Python data (as NumPy inferred it: bool, int64 or float64) cast to ``d`` as ``torch.tensor``
    converts each element: out-of-range integers and non-finite or out-of-range floats (a float's range is the
    dtype's before truncation: 127.5 is no int8, -0.5 no uint8) into an integer dtype are torch's RuntimeError
    naming the dtype; floats overflow to inf silently; the integer -1 into uint8 is 255."""
    if d.is_floating_point or d.is_complex or d is bool or arr.dtype.kind not in "iuf" or arr.size == 0:
        return cast(arr, d.np)
    ii = np.iinfo(d.np)
    if arr.dtype.kind == "f":      # in the dtype's range as they are (before truncation), finite
        if not np.isfinite(arr).all() or arr.min() < ii.min or arr.max() > builtins_float(ii.max):
            raise _overflow(d, False)
        with np.errstate(invalid="ignore"):       # (2.0**63 into int64 wraps, as torch's conversion does)
            return arr.astype(d.np)
    if arr.max() > ii.max or arr.min() < (ii.min if ii.min < 0 else -builtins_int(ii.max)):
        raise _overflow(d, False)
    return arr.astype(d.np)


def fill_scalar(value, d: dtype, halves=True) -> np.ndarray:
    """``value`` checked (``check_scalar``) and converted to a 0-d array of ``d`` (-1 into uint8 is 255)."""
    value = check_scalar(value, d, halves)
    if d is float16 and value.__class__ is builtins_float:
        return cast(np.asarray(value), _F16)
    if d._cat == 1 and (value.__class__ is builtins_int or value.__class__ is builtins_float):
        with np.errstate(invalid="ignore"):     # (NumPy would refuse -1 for uint8, or 2.0**63 for int64: torch
            return np.asarray(value).astype(d.np)   # wraps them)
    return np.asarray(value, d.np)


def check_scalar_operand(tensor_dtype: dtype, value, halves=True):
    """A Python-number operand of an op that writes it into a tensor of its own dtype (``where(c, int8, 300)``,
    ``clamp(int8, max=300)``): checked as ``check_scalar`` when the result keeps the tensor's dtype (a float
    bound on an int tensor promotes instead, and is not checked)."""
    if value.__class__ in (builtins_int, builtins_float) and _scalar_dtype(value)._cat <= tensor_dtype._cat:
        check_scalar(value, tensor_dtype, halves)
