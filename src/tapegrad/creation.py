"""Making tensors: from data, filled, ranges and random."""

from __future__ import annotations

import math
import operator
import warnings

import numpy as np

from . import _dtype, _random
from ._random import _gen
from ._meta import meta_array as _meta_array
from .tensor import Tensor, _check_device, _size, _varargs_keyword, int_arg, invalid_arguments

__all__ = ["tensor", "as_tensor", "from_numpy", "asarray", "zeros", "ones", "full", "empty", "zeros_like",
           "ones_like", "full_like", "empty_like", "arange", "linspace", "logspace", "eye", "rand", "randn",
           "randint", "randperm", "rand_like", "randn_like", "randint_like", "scalar_tensor"]


def _finish(arr, requires_grad):
    t = Tensor._make(arr)
    if requires_grad:
        t.requires_grad = True
    return t


def _infer(data, target=None):
    """An ndarray of ``data`` with torch's dtype inference for Python data (floats -> the default dtype, ints ->
    int64, bools -> bool) and torch's errors for data it refuses; ``target`` is the dtype asked for (a Python int
    beyond int64 is an overflow unless that is a floating dtype)."""
    if isinstance(data, np.ndarray):
        return data
    if isinstance(data, np.generic):
        return np.asarray(data)
    if isinstance(data, Tensor):
        return data._array
    if isinstance(data, str):
        raise TypeError(f"new(): invalid data type '{type(data).__name__}'")
    if isinstance(data, (list, tuple)) and _holds_typed(data):
        return _typed_nested(data, target)
    return _infer_plain(data, target)


def _infer_plain(flat, target):
    """``_infer`` for numbers in nested lists (and, from ``_typed_nested``, ndarray blocks of the right shape)."""
    data = flat
    if target is _dtype.uint64:
        return _u64(flat)          # (ints past int64's range: only a uint64 tensor holds them)
    try:
        arr = np.array(flat)
    except (ValueError, TypeError):
        arr = None
    if arr is None or arr.dtype.kind not in "biufc":
        _refuse(data, target)        # raises torch's error for this data
        arr = np.array(flat, dtype=target.np)   # (only big Python ints for a floating target get here)
        return arr
    kind = arr.dtype.kind
    if kind == "u" or (kind == "f" and arr.size and not (np.abs(arr) < 2.0 ** 63).all()):
        if target is not None and (target.is_floating_point or target.is_complex):
            return arr.astype(np.float64) if kind == "u" else arr
        _check_ints(data)        # [1, 2**63] is an overflow in torch, not a float tensor
    if target is not None:          # (converted to the dtype asked for by the caller, from full precision)
        if kind == "c" and not target.is_complex and target is not _dtype.bool:   # a complex for a real number
            raise TypeError("must be real number, not complex" if target.is_floating_point else
                            "'complex' object cannot be interpreted as an integer")
        return arr.astype(np.int64) if kind in "iu" else arr
    if kind == "f" and not _has_np_float(data):
        arr = arr.astype(_dtype.get_default_dtype().np)
    elif kind in "iu":
        arr = arr.astype(np.int64)
    elif kind == "c":
        arr = arr.astype(np.complex128 if _dtype.get_default_dtype() is _dtype.float64 else np.complex64)
    return arr


def _leaves(data):
    """The scalars of nested Python data, depth first."""
    stack = [data]
    while stack:
        x = stack.pop()
        if isinstance(x, (list, tuple)):
            stack.extend(reversed(x))
        else:
            yield x


def _u64(flat):
    """Python data as a uint64 array, each number converted as Python's unsigned conversion does (torch's uint64
    path): an integer in [0, 2**64), else OverflowError; a float is a TypeError."""
    def conv(x):
        if isinstance(x, list):
            return [conv(v) for v in x]
        if not isinstance(x, (int, np.integer, np.bool_)):
            raise TypeError("an integer is required")
        x = int(x)
        if x < 0:
            raise OverflowError("can't convert negative int to unsigned")
        if x >= 2 ** 64:
            raise OverflowError("int too big to convert")
        return x
    return np.array(conv(flat), np.uint64)


def _check_ints(data):
    """Python ints beyond int64 in data torch infers as integral (no float among them): torch's overflow."""
    big = False
    for v in _leaves(data):
        if isinstance(v, (float, complex, np.floating, np.complexfloating)):
            return
        big = big or (v.__class__ is int and not -2 ** 63 <= v < 2 ** 63)
    if big:
        raise ValueError("Overflow when unpacking long long")    # torch's words


def _refuse(data, target):
    """torch's error for Python data NumPy could not make a number array of: an object it can't infer a dtype
    of, a string inside, a ragged list, a sequence where a number belongs, a Python int beyond int64."""
    floating = target is not None and (target.is_floating_point or target.is_complex)
    for v in _leaves(data):
        if isinstance(v, str):
            raise ValueError(f"too many dimensions '{type(v).__name__}'")
        if not isinstance(v, (int, float, complex, np.number, np.bool_, np.ndarray, Tensor)):
            raise RuntimeError(f"Could not infer dtype of {type(v).__name__}")
    if not floating:
        _check_ints(data)
    sizes, x = [], data      # torch reads the shape off the first elements, then checks every sequence
    while isinstance(x, (list, tuple)):
        sizes.append(len(x))
        if not x:
            break
        x = x[0]

    def check(x, dim):
        if dim == len(sizes):
            if isinstance(x, (list, tuple)):
                raise TypeError(f"'{type(x).__name__}' object cannot be interpreted as an integer")
            return
        if not isinstance(x, (list, tuple)):
            raise TypeError("not a sequence")
        if len(x) != sizes[dim]:
            raise ValueError(f"expected sequence of length {sizes[dim]} at dim {dim} (got {len(x)})")
        for e in x:
            check(e, dim + 1)
    check(data, 0)
    if not floating:
        raise TypeError(f"Could not infer dtype of {type(data).__name__}")


def _has_np_float(data):
    return isinstance(data, np.floating)


_TYPED = (Tensor, np.ndarray, np.generic)


def _holds_typed(data):
    """Whether nested lists/tuples hold a tensor, an ndarray or a NumPy scalar (values that carry a dtype)."""
    for v in data:
        if isinstance(v, (list, tuple)):
            if _holds_typed(v):
                return True
        elif isinstance(v, _TYPED):
            return True
    return False


def _data_dtype(x):
    """torch's dtype inference for data: Python numbers as the defaults, tensors, ndarrays and NumPy scalars by
    their own dtype, a sequence by promoting its items' (an empty one: the default dtype)."""
    if isinstance(x, Tensor):
        return x.dtype
    if isinstance(x, (np.ndarray, np.generic)):
        return _dtype.from_numpy_dtype(x.dtype)
    if isinstance(x, (list, tuple)):
        if all(type(v) is np.ndarray for v in x):         # (a batch of arrays: one look per dtype)
            kinds = [_dtype.from_numpy_dtype(t) for t in {v.dtype for v in x}]
        else:
            kinds = [_data_dtype(v) for v in x]
        d = None
        for e in kinds:
            d = e if d is None else _dtype.promote_types(d, e)
        return _dtype.get_default_dtype() if d is None else d
    if isinstance(x, str):
        raise TypeError(f"new(): invalid data type '{type(x).__name__}'")
    return _dtype._scalar_dtype(x) if isinstance(x, (bool, int, float, complex)) else _refuse_leaf(x)


def _refuse_leaf(x):
    raise RuntimeError(f"Could not infer dtype of {type(x).__name__}")


def _data_sizes(x):
    """The shape torch reads off nested data: the lengths of the first elements, down to a non-sequence (a tensor
    is not a sequence to it; an ndarray is)."""
    sizes = []
    while isinstance(x, (list, tuple, np.ndarray)):
        if isinstance(x, np.ndarray):
            if x.ndim == 0:
                raise TypeError("len() of unsized object")
            for n in x.shape:
                sizes.append(n)
                if n == 0:
                    break
            return sizes
        sizes.append(len(x))
        if not x:
            break
        x = x[0]
    return sizes


def _typed_nested(data, target):
    """torch.tensor of lists holding tensors, ndarrays or NumPy scalars, as torch builds it: the dtype promoted
    from every item's, the shape read off the first elements, and each value stored one by one (a tensor where a
    number belongs must have one element; an ndarray is a sequence)."""
    d = target if target is not None else _data_dtype(data)
    sizes = _data_sizes(data)

    def store(x, dim):
        if dim == len(sizes):
            return _leaf_value(x, d)
        if isinstance(x, Tensor):
            if x.ndim == 0:
                raise TypeError("not a sequence")
            x = list(x.unbind(0))
        elif isinstance(x, np.ndarray):
            if x.ndim == 0:
                raise TypeError("not a sequence")
            if x.shape == tuple(sizes[dim:]) and x.dtype.kind in "biuf":
                return x                # (a whole block of numbers, converted as the values one by one are)
        elif not isinstance(x, (list, tuple)):
            raise TypeError("not a sequence")
        if len(x) != sizes[dim]:
            raise ValueError(f"expected sequence of length {sizes[dim]} at dim {dim} (got {len(x)})")
        sub = tuple(sizes[dim + 1:])
        if sub and all(type(v) is np.ndarray and v.shape == sub and v.dtype.kind in "biuf" for v in x):
            return np.stack(x)          # (a batch of same-shaped arrays, a replay buffer's states)
        return [store(v, dim + 1) for v in x]
    res = store(data, 0)
    arr = res if isinstance(res, np.ndarray) else _infer_plain(res, d)
    if arr.dtype == d.np:
        return np.array(arr, copy=True)
    with np.errstate(over="ignore"):
        return _dtype.checked_cast(arr, d)


def _leaf_value(x, d):
    """The Python number torch stores for item ``x`` of a tensor of dtype ``d``."""
    if isinstance(x, Tensor):
        if d.is_floating_point or d.is_complex:
            if x.numel() != 1:
                raise ValueError("only one element tensors can be converted to Python scalars")
            if x.is_complex() and not d.is_complex:
                raise RuntimeError("value cannot be converted to type double without overflow")
        elif x.numel() != 1 or x.is_floating_point() or x.is_complex():
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return x._array.reshape(()).item()
    if isinstance(x, (list, tuple)):
        if d.is_floating_point or d.is_complex:
            raise TypeError(f"must be real number, not {type(x).__name__}")
        raise TypeError(f"'{type(x).__name__}' object cannot be interpreted as an integer")
    if isinstance(x, np.ndarray):
        return complex(x) if d.is_complex else float(x) if d.is_floating_point else operator.index(x)
    if isinstance(x, (np.floating, np.complexfloating)) and not d.is_floating_point and not d.is_complex \
            and not isinstance(x, float):       # (np.float64 is a Python float: it converts)
        raise TypeError(f"'numpy.{type(x).__name__}' object cannot be interpreted as an integer")
    if isinstance(x, np.complexfloating) and d.is_floating_point:
        return x.real.item()                    # (NumPy's float() of a complex scalar: its real part)
    return x.item() if isinstance(x, np.generic) else x


def _from_data(data, dtype):
    """``tensor(data, dtype=...)``'s array (a copy): Python data converted element by element with torch's
    overflow checks; an ndarray or tensor cast as NumPy casts."""
    if dtype is None:
        arr = _infer(data)
        return np.array(arr, copy=True)
    d = _dtype.to_dtype(dtype)
    if isinstance(data, (np.ndarray, np.generic, Tensor)):
        with np.errstate(over="ignore", invalid="ignore"):   # a float too large for the dtype is inf, as in torch
            return _dtype.cast(np.asarray(_infer(data)), d.np).copy(order="K")   # its layout kept, as torch
    arr = _infer(data, d)
    if arr.dtype == d.np:
        return np.array(arr, copy=True)
    with np.errstate(over="ignore"):
        return _dtype.checked_cast(arr, d)


def _copy_construct_warning(what):
    warnings.warn("To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone() or "
                  f"sourceTensor.detach().clone().requires_grad_(True), rather than {what}(sourceTensor).",
                  UserWarning, stacklevel=3)


def tensor(data, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """A new tensor holding a copy of ``data`` (numbers, nested lists, ndarrays).

    >>> tapegrad.tensor([1., 2., 3.], requires_grad=True)
    tensor([1., 2., 3.], requires_grad=True)
    >>> tapegrad.tensor(2.0, dtype=tapegrad.float64)
    tensor(2., dtype=tapegrad.float64)
    """
    meta = _check_device(device)
    if isinstance(data, Tensor):
        _copy_construct_warning("tapegrad.tensor")
    arr = _from_data(data, dtype)
    return _finish(_meta_array(arr.shape, arr.dtype) if meta else arr, requires_grad)


def as_tensor(data, dtype=None, device=None):
    """Like ``tensor`` but shares memory with an ndarray or tensor of the right dtype."""
    if _check_device(device):
        return tensor(data, dtype=dtype, device=device) if not isinstance(data, Tensor) else \
            data.to(dtype=dtype, device="meta")
    if isinstance(data, Tensor):
        return data if dtype is None or data.dtype is _dtype.to_dtype(dtype) else data.to(dtype)
    if dtype is not None and not isinstance(data, (np.ndarray, np.generic)):
        return Tensor._make(_from_data(data, dtype))
    arr = _infer(data)
    if dtype is not None:
        arr = _dtype.cast(arr, _dtype.to_dtype(dtype).np) if arr.dtype != _dtype.to_dtype(dtype).np else arr
    _dtype.from_numpy_dtype(arr.dtype)
    return Tensor._make(arr)


_ASARRAY_UNSET = object()
_asarray_warned = []


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=_ASARRAY_UNSET):
    """``torch.asarray``: ``as_tensor`` (shares memory where it can) with ``copy=True`` (always a copy: a tensor's
    is a ``clone`` in the graph, an array's keeps its layout), ``copy=False`` (sharing or torch's ValueError) and
    ``requires_grad``; left unset, a tensor keeps its own (with torch's one-time warning)."""
    if copy is False:
        if not isinstance(obj, (Tensor, np.ndarray)):
            raise ValueError("can't alias arbitrary sequence into a tensor.")
        have = obj.dtype if isinstance(obj, Tensor) else _dtype.from_numpy_dtype(obj.dtype)
        want = have if dtype is None else _dtype.to_dtype(dtype)
        if want is not have:
            raise ValueError(f"can't alias tensor with dtype '{have._legacy}' into dtype '{want._legacy}'.")
        if _check_device(device):
            raise ValueError("can't alias tensor from device 'cpu' to 'meta'.")
    if copy and isinstance(obj, Tensor) and not _check_device(device):
        out = obj.clone()
        out = out if dtype is None else out.to(dtype)
    elif copy:
        out = tensor(obj, dtype=dtype, device=device)
    else:
        out = as_tensor(obj, dtype=dtype, device=device)
    if requires_grad is _ASARRAY_UNSET:
        if isinstance(obj, Tensor) and obj.requires_grad and not _asarray_warned:
            _asarray_warned.append(True)
            warnings.warn("torch.asarray: unspecified requires_grad now defaults to obj.requires_grad instead of "
                          "False. Pass requires_grad=False explicitly to get the old behavior and silence this "
                          "warning.", UserWarning, stacklevel=2)
    elif requires_grad:
        out = out.requires_grad_(True) if not out.requires_grad else out
    elif out.requires_grad:
        out = out.detach()
    return out


def from_numpy(ndarray):
    """A tensor sharing memory with ``ndarray`` (changes to one show in the other)."""
    if not isinstance(ndarray, np.ndarray):
        t = type(ndarray)     # named as CPython's tp_name: a C type's with its module (numpy.float32), a class's bare
        name = t.__name__ if t.__flags__ & (1 << 9) or t.__module__ == "builtins" else f"{t.__module__}.{t.__name__}"
        raise TypeError(f"expected np.ndarray (got {name})")
    _dtype.from_numpy_dtype(ndarray.dtype)
    if any(st < 0 for st in ndarray.strides):
        raise ValueError("At least one stride in the given numpy array is negative, and tensors with negative "
                         "strides are not currently supported. (You can probably work around this by making a copy "
                         "of your array  with array.copy().) ")
    return Tensor._make(ndarray)


def scalar_tensor(s, *, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    return full((), s, dtype=dtype or _dtype.get_default_dtype(), layout=layout, device=device,
                requires_grad=requires_grad)


# --- every creation function takes torch's keywords: ``out=`` (the result is written into that tensor),
# ``dtype``, ``layout`` (only ``tapegrad.strided``), ``device`` (only the CPU), ``requires_grad``, ``pin_memory``
# (accepted, nothing to pin on the CPU) ----------------------------------------------------------------------------
def _dt(dtype, default=None):
    return _dtype.to_dtype(dtype).np if dtype is not None else (default or _dtype.get_default_dtype()).np


def _made(arr, requires_grad, out=None, op="", meta=False):
    """The new tensor, or ``out`` holding it (resized when its shape differs, as torch's ``out=``); ``meta``: on
    the meta device (its shape and dtype only)."""
    if out is None:
        return _finish(_meta_array(arr.shape, arr.dtype) if meta else arr, requires_grad)
    if not isinstance(out, Tensor):
        raise TypeError(f"{op}(): argument 'out' must be Tensor, not {type(out).__name__}")
    if out._array.shape != arr.shape:
        out._array = arr.astype(out._array.dtype)
    else:
        np.copyto(out._array, arr, casting="unsafe")
    out._vc[0] += 1
    if requires_grad:
        out.requires_grad_()
    return out


def _out_dtype(dtype, out):
    """An ``out=`` tensor decides the dtype when none is given (torch.zeros(2, out=int_tensor) is int64)."""
    return out.dtype if dtype is None and isinstance(out, Tensor) else dtype


def zeros(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False, **kw):
    """A tensor of zeros: ``zeros(2, 3)``, ``zeros((2, 3))`` or ``zeros(size=(2, 3))``."""
    meta = _check_device(device, layout)
    if kw:
        size = _varargs_keyword(size, kw, "zeros", "size")
    return _made((_meta_array if meta else np.zeros)(_size(size), _dt(_out_dtype(dtype, out))), requires_grad, out,
                 "zeros")


def ones(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False, **kw):
    """A tensor of ones."""
    meta = _check_device(device, layout)
    if kw:
        size = _varargs_keyword(size, kw, "ones", "size")
    return _made((_meta_array if meta else np.ones)(_size(size), _dt(_out_dtype(dtype, out))), requires_grad, out,
                 "ones")


def empty(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False,
          memory_format=None, **kw):
    """An uninitialised tensor (``memory_format=tapegrad.channels_last``: its dims laid out NHWC)."""
    meta = _check_device(device, layout)
    if kw:
        size = _varargs_keyword(size, kw, "empty", "size")
    shape = _size(size)
    perm = None
    if memory_format is not None:
        from .tensor import _format_perm, preserve_format
        if memory_format is preserve_format:
            raise RuntimeError("unsupported memory format Preserve")
        perm = _format_perm(memory_format, len(shape))
    return _made(_laid_out(_meta_array if meta else np.empty, shape, _dt(_out_dtype(dtype, out)), perm), requires_grad,
                 out, "empty")


def full(size, fill_value, *, out=None, dtype=None, layout=None, device=None, requires_grad=False,
         pin_memory=False):
    """A tensor filled with ``fill_value`` (its dtype inferred from the value, as torch does)."""
    meta = _check_device(device, layout)
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    dtype = _out_dtype(dtype, out)
    d = _dtype.to_dtype(dtype) if dtype is not None else _dtype.result_type(fill_value)
    shape = _size((size,) if isinstance(size, int) else (size,))
    if meta:
        return _made(_meta_array(shape, d.np), requires_grad, out, "full", meta)
    arr = np.full(shape, _dtype.fill_scalar(fill_value, d, False), d.np)
    return _made(arr, requires_grad, out, "full")


def _like(input, dtype, device, layout):
    _check_device(device, layout, default=False)
    return _dtype.to_dtype(dtype).np if dtype is not None else input._array.dtype


def _like_meta(input, device):
    """Whether a ``*_like`` result is a meta tensor: on ``device``, else on the input's device (the default device
    does not count, as in torch)."""
    return input.is_meta if device is None else _check_device(device, default=False)


def _dim_order(a, memory_format):
    """The memory order of the dims (outermost first) of a ``*_like`` result: the prototype's own (torch's
    ``preserve_format``: dims by decreasing stride), or the one ``memory_format`` names; None for row-major."""
    from .tensor import _format_perm, preserve_format
    if memory_format is None or memory_format is preserve_format:
        if a.ndim < 2 or a.flags.c_contiguous:
            return None
        return sorted(range(a.ndim), key=lambda i: -abs(a.strides[i]) if a.shape[i] > 1 else 0)
    return _format_perm(memory_format, a.ndim)


def _laid_out(make, shape, dt, perm):
    """``make(shape, dt)`` with its dims in memory in the order ``perm`` (None: row-major)."""
    if perm is None:
        return make(shape, dt)
    perm = list(perm)
    return make(tuple(shape[p] for p in perm), dt).transpose(np.argsort(perm))


def zeros_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None,
               pin_memory=False):
    dt = _like(input, dtype, device, layout)
    if _like_meta(input, device):
        return _finish(_meta_array(input._array.shape, dt), requires_grad)
    return _finish(_laid_out(np.zeros, input._array.shape, dt, _dim_order(input._array, memory_format)),
                   requires_grad)


def ones_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None,
              pin_memory=False):
    dt = _like(input, dtype, device, layout)
    if _like_meta(input, device):
        return _finish(_meta_array(input._array.shape, dt), requires_grad)
    return _finish(_laid_out(np.ones, input._array.shape, dt, _dim_order(input._array, memory_format)),
                   requires_grad)


def empty_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None,
               pin_memory=False):
    dt = _like(input, dtype, device, layout)
    if _like_meta(input, device):
        return _finish(_meta_array(input._array.shape, dt), requires_grad)
    return _finish(_laid_out(np.empty, input._array.shape, dt, _dim_order(input._array, memory_format)),
                   requires_grad)


def full_like(input, fill_value, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None,
              pin_memory=False):
    d = _dtype.from_numpy_dtype(_like(input, dtype, device, layout)) if dtype is None else _dtype.to_dtype(dtype)
    v = _dtype.fill_scalar(fill_value, d, halves=False)
    if _like_meta(input, device):
        return _finish(_meta_array(input._array.shape, d.np), requires_grad)
    return _finish(_laid_out(lambda shape, dt: np.full(shape, v, dt), input._array.shape, d.np,
                             _dim_order(input._array, memory_format)), requires_grad)


def arange(start=0, end=None, step=1, *, out=None, dtype=None, layout=None, device=None, requires_grad=False,
           pin_memory=False):
    """Values from ``start`` to ``end`` (exclusive) by ``step``; int64 when all are ints.

    >>> tapegrad.arange(3)
    tensor([0, 1, 2])
    """
    meta = _check_device(device, layout)
    if end is None:
        start, end = 0, start
    vals = [v.item() if isinstance(v, Tensor) else v for v in (start, end, step)]
    if vals[2] == 0:
        raise RuntimeError("step must be nonzero")
    dtype = _out_dtype(dtype, out)
    integral = all(isinstance(v, (int, np.integer)) for v in vals)
    for v in vals:            # torch computes the range in int64 (or double): a bound beyond it is its error
        if isinstance(v, (int, np.integer)):
            _dtype.check_scalar(v, _dtype.int64)
    if dtype is None:
        dtype = _dtype.int64 if integral else _dtype.get_default_dtype()
    d = _dtype.to_dtype(dtype)
    if not all(np.isfinite(float(v)) for v in vals):
        raise RuntimeError(f"unsupported range: {vals[0]} -> {vals[1]}")
    if (vals[1] - vals[0]) * vals[2] < 0 and vals[1] != vals[0]:
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    n = max(int(np.ceil((vals[1] - vals[0]) / vals[2])), 0)
    if not integral and not (d.is_floating_point or d.is_complex):
        # an integer result from float bounds: torch truncates start and step to integers; the count comes from
        # the float bounds, but for int64 from the truncated ones (and a step truncated to 0 is refused)
        vals = [int(v) for v in vals]
        integral = True
        if d is _dtype.int64:
            if vals[2] == 0:
                raise ValueError("step must be nonzero")
            sgn = (vals[2] > 0) - (vals[2] < 0)
            q = vals[1] - vals[0] + vals[2] - sgn
            n = max(abs(q) // abs(vals[2]) * (1 if (q >= 0) == (vals[2] > 0) else -1), 0)   # C's division
    work = np.int64 if integral and not d.is_floating_point else np.float64
    if d.np in (np.float32, np.float64) and not integral:
        arr = _float_range(float(vals[0]), float(vals[2]), n, d.np)
    else:
        with np.errstate(over="ignore"):
            arr = (vals[0] + np.arange(n, dtype=work) * vals[2]).astype(d.np)
    return _made(arr, requires_grad, out, "arange", meta)


def _float_range(start, step, n, np_dtype):
    """torch's float32/float64 ``arange`` values, bit for bit: its CPU kernel computes ``start + step * i`` in
    double (one rounding: a fused multiply-add), in runs of two 32-byte vectors whose lanes are the vector's first
    value plus ``lane * step`` (fused too for float64), and the leftover elements one by one; each thread's chunk
    of a long range starts a new run. (Computing each value directly differed in the last bit:
    ``arange(-5, 5, 0.1)[10]`` is -3.9999998 in torch.)"""
    width = 32 // np.dtype(np_dtype).itemsize
    out = np.empty(n, np_dtype)
    if n == 0:
        return out
    chunk = n
    if n > 32768:              # at::parallel_for: one chunk per thread, at least 32768 elements each
        from . import get_num_threads
        threads = min(get_num_threads(), -(-n // 32768))
        chunk = -(-n // threads)
    lane_p = step * np.arange(width, dtype=np.float64)
    for begin in range(0, n, chunk):
        size = min(chunk, n - begin)
        full = (size // (2 * width)) * 2 * width
        if full:
            firsts = np.arange(begin, begin + full, width, dtype=np.float64)
            base = _fma(step, firsts, start).astype(np_dtype).astype(np.float64)[:, None]
            if np_dtype == np.float64:        # fma(step, lane, base): base + p rounded once, p's error added
                lane_e = _fma(np.float64(step), np.arange(width, dtype=np.float64), -lane_p)
                s = base + lane_p
                v = s - base
                vals = s + (((base - (s - v)) + (lane_p - v)) + lane_e)
            else:
                vals = base + lane_p
            out[begin:begin + full] = vals.reshape(-1)
        rest = np.arange(begin + full, begin + size, dtype=np.float64)
        out[begin + full:begin + size] = _fma(step, rest, start)
    return out


_SPACE_OPTIONS = ("*, Tensor out = None, torch.dtype dtype = None, torch.layout layout = None, torch.device device "
                  "= None, bool pin_memory = False, bool requires_grad = False")


def _space_args(op, start, end, steps, base=None):
    """torch's checks of linspace/logspace's arguments: an int count of steps, not negative; 0-d tensor ends."""
    if not isinstance(steps, (int, np.integer)) or isinstance(steps, bool):
        b = "" if base is None else "float base = 10.0, "
        raise invalid_arguments(op, (start, end, steps), [
            f"{a} start, {e} end, int steps, {b}{_SPACE_OPTIONS}"
            for a, e in (("Tensor", "Tensor"), ("Number", "Tensor"), ("Tensor", "Number"), ("Number", "Number"))])
    bad = [f"{name} with {t.ndim} dimension(s)" for name, t in (("start", start), ("end", end))
           if isinstance(t, Tensor) and t.ndim]
    if bad:
        raise RuntimeError(f"{op} only supports 0-dimensional start and end tensors, but got {' and '.join(bad)}.")
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")


def linspace(start, end, steps, *, out=None, dtype=None, layout=None, device=None, requires_grad=False,
             pin_memory=False):
    """``steps`` evenly spaced values from ``start`` to ``end`` inclusive."""
    meta = _check_device(device, layout)
    steps = int_arg(steps)
    _space_args("linspace", start, end, steps)
    d = np.dtype(_dt(_out_dtype(dtype, out)))
    if d.kind in "iuf" and not isinstance(start, complex) and not isinstance(end, complex):
        arr = _linspace_as_torch(float(start), float(end), int(steps), d)
    else:
        arr = np.linspace(start, end, int(steps)).astype(d)
    return _made(arr, requires_grad, out, "linspace", meta)


def _linspace_as_torch(lo, hi, n, d):
    """torch's linspace kernel, to the last bit: the step in the output dtype, the first half counted up from
    ``lo`` and the rest down from ``hi``, each value ``step * i + end`` rounded once (a fused multiply-add:
    float32 products are exact in float64; float64 ones are made exact by splitting, as Dekker's TwoProduct;
    float16 rounds the product and the sum, as torch's half kernel does)."""
    if n <= 1:
        return np.full(max(n, 0), lo).astype(d)
    if d.kind in "iu":           # integers: the same halves in double precision, truncated
        d, out = np.dtype(np.float64), d
        return _linspace_as_torch(lo, hi, n, d).astype(out)
    step = (d.type(hi) - d.type(lo)) / d.type(n - 1)
    i = np.arange(n, dtype=np.float64)
    first = i < n // 2
    k = np.where(first, i, i - (n - 1))               # i, or -(steps left to the end)
    c = np.where(first, float(d.type(lo)), float(d.type(hi)))
    if d == np.float16:          # half precision: each product and sum rounded, as torch's half kernel
        return c.astype(d) + step * k.astype(d)
    if d == np.float32:
        return (c + float(step) * k).astype(d)
    return _fma(np.full(n, float(step)), k, c)


def _fma(a, b, c):
    """a * b + c with one rounding, in float64 arrays (error-free transformations)."""
    p = a * b
    ah, al = _split(a)
    bh, bl = _split(b)
    e = ((ah * bh - p) + ah * bl + al * bh) + al * bl   # the product's rounding error, exactly
    s = p + c
    v = s - p
    return s + (e + ((p - (s - v)) + (c - v)))          # plus the sum's rounding error


def _split(x):
    t = 134217729.0 * x          # 2**27 + 1
    hi = t - (t - x)
    return hi, x - hi


def logspace(start, end, steps, base=10.0, *, out=None, dtype=None, layout=None, device=None, requires_grad=False,
             pin_memory=False):
    meta = _check_device(device, layout)
    steps = int_arg(steps)
    _space_args("logspace", start, end, steps, base)
    arr = np.logspace(float(start), float(end), int(steps), base=base).astype(_dt(_out_dtype(dtype, out)))
    return _made(arr, requires_grad, out, "logspace", meta)


def eye(n, m=None, *, out=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    """The identity matrix (``n`` x ``m``)."""
    meta = _check_device(device, layout)
    n, m = int_arg(n), int_arg(m)
    for i, (name, v) in enumerate((("n", n), ("m", m))):
        if v is None:
            continue
        if not isinstance(v, (int, np.integer)) or isinstance(v, bool):
            raise TypeError(f"eye(): argument '{name}' (position {i + 1}) must be int, not {type(v).__name__}")
        if v < 0:
            raise RuntimeError(f"{name} must be greater or equal to 0, got {v}")
    arr = np.eye(n, m if m is not None else n, dtype=_dt(_out_dtype(dtype, out)))
    return _made(arr, requires_grad, out, "eye", meta)


# --- random tensors (torch's numbers for the same seed: see _random.py) ---------------------------------------
def _float_dt(dtype, kernel="check_uniform_bounds"):
    d = _dtype.to_dtype(dtype) if dtype is not None else _dtype.get_default_dtype()
    if not (d.is_floating_point or d.is_complex):
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{d._legacy}'")
    return d


def _random_values(draw, shape, d):
    """An array of ``shape`` and dtype ``d`` from ``draw(n, kind)`` (n values of the rule's dtype); a complex dtype
    draws its real and imaginary parts interleaved, as torch fills the complex tensor's real view."""
    n = math.prod(shape)
    if d.is_complex:
        real = np.float64 if d.np == np.complex128 else np.float32
        return draw(2 * n, real).astype(real).view(d.np).reshape(shape)
    return draw(n, _random.kind(d)).astype(d.np, copy=False).reshape(shape)


def _sizes(size, kw, op):
    return _size(_varargs_keyword(size, kw, op, "size") if kw else size)


def rand(*size, generator=None, out=None, dtype=None, layout=None, device=None, requires_grad=False,
         pin_memory=False, **kw):
    """Uniform samples in [0, 1): ``rand(2, 3)``, ``rand((2, 3))``, ``rand(size=(2, 3))`` (complex dtypes: real
    and imaginary parts each uniform)."""
    meta = _check_device(device, layout)
    shape = _sizes(size, kw, "rand")
    d = _float_dt(_out_dtype(dtype, out))
    if meta:                                      # (no data: nothing drawn)
        return _made(_meta_array(shape, d.np), requires_grad, out, "rand")
    shape, wrap = _random.draw_shape(shape)       # (vmap with randomness="different": one draw per sample)
    g = _gen(generator)
    arr = _random_values(lambda n, k: _random.uniform(g, n, 0.0, 1.0, k), shape, d)
    return _made(arr, requires_grad, out, "rand") if wrap is None else wrap(Tensor._make(arr))


def randn(*size, generator=None, out=None, dtype=None, layout=None, device=None, requires_grad=False,
          pin_memory=False, **kw):
    """Standard normal samples: ``randn(2, 3)``, ``randn((2, 3))``, ``randn(size=(2, 3))`` (complex dtypes:
    variance 1, half in the real part, half in the imaginary part)."""
    meta = _check_device(device, layout)
    shape = _sizes(size, kw, "randn")
    d = _float_dt(_out_dtype(dtype, out), "normal_kernel_cpu")
    if meta:
        return _made(_meta_array(shape, d.np), requires_grad, out, "randn")
    shape, wrap = _random.draw_shape(shape)       # (vmap with randomness="different": one draw per sample)
    g = _gen(generator)
    std = math.sqrt(0.5) if d.is_complex else 1.0
    arr = _random_values(lambda n, k: _random.normal(g, n, 0.0, std, k), shape, d)
    return _made(arr, requires_grad, out, "randn") if wrap is None else wrap(Tensor._make(arr))


def _int_range(low, high, op="random_"):
    if low >= high:
        raise RuntimeError(f"{op} expects 'from' to be less than 'to', but got from={low} >= to={high}")


def randint(low=None, high=None, size=None, *, generator=None, out=None, dtype=None, layout=None, device=None,
            requires_grad=False, pin_memory=False):
    """Random integers in [low, high): ``randint(10, (3,))``, ``randint(10, size=(3,))`` or ``randint(0, 10, (3,))``."""
    meta = _check_device(device, layout)
    position = ""
    if size is None:                    # randint(high, size): the arguments shift
        low, high, size, position = None, low, high, " (position 2)"
    elif high is None:                  # randint(high, size=...)
        low, high = None, low
    if high is None or size is None:
        raise TypeError("randint() missing required argument 'size'" if high is not None else
                        "randint() missing required argument 'high'")
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"randint(): argument 'size'{position} must be tuple of ints, not {type(size).__name__}")
    low, high = int(low or 0), int(high)
    _int_range(low, high)
    d = _dtype.to_dtype(_out_dtype(dtype, out) or _dtype.int64)
    shape = _size((size,))
    if meta:
        return _made(_meta_array(shape, d.np), requires_grad, out, "randint")
    arr = _random.integers(_gen(generator), math.prod(shape), low, high).reshape(shape)
    return _made(arr.astype(d.np), requires_grad, out, "randint")


def randperm(n, *, generator=None, out=None, dtype=None, layout=None, device=None, requires_grad=False,
             pin_memory=False):
    """A random permutation of ``0 .. n-1``."""
    meta = _check_device(device, layout)
    if n < 0:
        raise RuntimeError(f"n must be non-negative, got{n}")
    if meta:
        return _made(_meta_array((int(n),), _dt(_out_dtype(dtype, out), _dtype.int64)), requires_grad, out,
                     "randperm")
    arr = np.array(_random.randperm(_gen(generator), int(n)), _dt(_out_dtype(dtype, out), _dtype.int64))
    return _made(arr, requires_grad, out, "randperm")


def _random_like(input, dtype, layout, device, memory_format, requires_grad, fill, drawn):
    """torch's ``*_like`` random ops: ``empty_like`` (the input's layout: a transposed input gives a transposed
    result) filled in place, in memory order, as torch's kernels draw. Under vmap: ``drawn()``, the op drawing
    a new tensor of the input's shape (``randomness`` decides whether the samples share the draw)."""
    if _random._vmap_hook is not None:
        _check_device(device, layout)
        return drawn()
    t = empty_like(input, dtype=dtype, layout=layout, device=device, memory_format=memory_format)
    fill(t)
    return _finish(t._array, requires_grad)


def rand_like(input, *, generator=None, dtype=None, layout=None, device=None, requires_grad=False,
              memory_format=None, pin_memory=False):
    return _random_like(input, dtype, layout, device, memory_format, requires_grad,
                        lambda t: t.uniform_(0, 1, generator=generator),
                        lambda: rand(input._array.shape, dtype=dtype or input.dtype, generator=generator,
                                     requires_grad=requires_grad))


def randn_like(input, *, generator=None, dtype=None, layout=None, device=None, requires_grad=False,
               memory_format=None, pin_memory=False):
    return _random_like(input, dtype, layout, device, memory_format, requires_grad,
                        lambda t: t.normal_(0, 1, generator=generator),
                        lambda: randn(input._array.shape, dtype=dtype or input.dtype, generator=generator,
                                      requires_grad=requires_grad))


def randint_like(input, low=0, high=None, *, generator=None, dtype=None, layout=None, device=None,
                 requires_grad=False, memory_format=None, pin_memory=False):
    if high is None:
        low, high = 0, low
    _int_range(int(low), int(high))
    return _random_like(input, dtype, layout, device, memory_format, requires_grad,
                        lambda t: t.random_(int(low), int(high), generator=generator),
                        lambda: randint(low, high, input._array.shape, generator=generator,
                                        dtype=dtype or input.dtype, requires_grad=requires_grad))
