"""Making tensors: from data, filled, ranges and random."""

from __future__ import annotations

import warnings

import numpy as np

from . import _dtype
from ._random import _gen
from .tensor import Tensor, _check_device, _size

__all__ = ["tensor", "as_tensor", "from_numpy", "asarray", "zeros", "ones", "full", "empty", "zeros_like",
           "ones_like", "full_like", "empty_like", "arange", "linspace", "logspace", "eye", "rand", "randn",
           "randint", "randperm", "rand_like", "randn_like", "randint_like", "normal", "bernoulli", "multinomial",
           "scalar_tensor"]


def _finish(arr, requires_grad):
    t = Tensor._make(arr)
    if requires_grad:
        t.requires_grad = True
    return t


def _infer(data):
    """An ndarray with torch's dtype inference for Python data (floats -> default dtype, ints -> int64)."""
    if isinstance(data, np.ndarray):
        return data
    if isinstance(data, np.generic):
        return np.asarray(data)
    if isinstance(data, Tensor):
        return data._array
    if isinstance(data, (list, tuple)):
        data = _unwrap(data)
    try:
        arr = np.array(data)
    except ValueError as e:
        raise ValueError(f"expected sequence of equal lengths (ragged nested lists cannot become a tensor): {e}") \
            from None
    if arr.dtype == object:
        raise TypeError(f"Could not infer dtype of {type(data).__name__}")
    kind = arr.dtype.kind
    if kind == "f" and not _has_np_float(data):
        arr = arr.astype(_dtype.get_default_dtype().np)
    elif kind in "iu":
        arr = arr.astype(np.int64)
    elif kind == "c":
        arr = arr.astype(np.complex128 if _dtype.get_default_dtype() is _dtype.float64 else np.complex64)
    elif kind not in "fb":
        raise TypeError(f"Could not infer dtype of {type(data).__name__}")
    return arr


def _has_np_float(data):
    return isinstance(data, np.floating)


def _unwrap(data):
    if isinstance(data, (list, tuple)):
        return [_unwrap(d) for d in data]
    if isinstance(data, Tensor):
        return data._array.tolist() if data._array.ndim else data._array.item()
    return data


def tensor(data, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """A new tensor holding a copy of ``data`` (numbers, nested lists, ndarrays).

    >>> tapegrad.tensor([1., 2., 3.], requires_grad=True)
    tensor([1., 2., 3.], requires_grad=True)
    >>> tapegrad.tensor(2.0, dtype=tapegrad.float64)
    tensor(2., dtype=tapegrad.float64)
    """
    _check_device(device)
    if isinstance(data, Tensor):
        warnings.warn("To copy construct from a tensor, it is recommended to use sourceTensor.clone().detach() or "
                      "sourceTensor.clone().detach().requires_grad_(True), rather than tapegrad.tensor(sourceTensor).",
                      UserWarning, stacklevel=2)
    if dtype is not None and not isinstance(data, (np.ndarray, Tensor)):
        _infer(data)  # validates the data (ragged lists, objects) with torch's errors
        with np.errstate(over="ignore"):        # a float too large for the dtype is inf, silently, as in torch
            arr = np.array(_unwrap(data) if isinstance(data, (list, tuple)) else data,
                           dtype=_dtype.to_dtype(dtype).np)
    else:
        arr = _infer(data)
        if dtype is None:
            arr = np.array(arr, copy=True)
        else:
            with np.errstate(over="ignore"):
                arr = np.array(arr, dtype=_dtype.to_dtype(dtype).np, copy=True)
    return _finish(arr, requires_grad)


def as_tensor(data, dtype=None, device=None):
    """Like ``tensor`` but shares memory with an ndarray or tensor of the right dtype."""
    _check_device(device)
    if isinstance(data, Tensor):
        return data if dtype is None or data.dtype is _dtype.to_dtype(dtype) else data.to(dtype)
    arr = _infer(data)
    if dtype is not None:
        arr = arr.astype(_dtype.to_dtype(dtype).np, copy=False)
    _dtype.from_numpy_dtype(arr.dtype)
    return Tensor._make(arr)


asarray = as_tensor


def from_numpy(ndarray):
    """A tensor sharing memory with ``ndarray`` (changes to one show in the other)."""
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    _dtype.from_numpy_dtype(ndarray.dtype)
    if ndarray.dtype.kind == "u" and ndarray.dtype != np.uint8:
        raise TypeError(f"can't convert np.ndarray of type numpy.{ndarray.dtype}. The only supported types are: "
                        "float64, float32, float16, complex64, complex128, int64, int32, int16, int8, uint8, and bool.")
    return Tensor._make(ndarray)


def scalar_tensor(s, dtype=None, device=None, requires_grad=False):
    return full((), s, dtype=dtype or _dtype.get_default_dtype(), requires_grad=requires_grad)


def _dt(dtype, default=None):
    return _dtype.to_dtype(dtype).np if dtype is not None else (default or _dtype.get_default_dtype()).np


def zeros(*size, dtype=None, device=None, requires_grad=False, out=None, layout=None):
    """A tensor of zeros: ``zeros(2, 3)`` or ``zeros((2, 3))``."""
    _check_device(device)
    return _finish(np.zeros(_size(size), _dt(dtype)), requires_grad)


def ones(*size, dtype=None, device=None, requires_grad=False, out=None, layout=None):
    """A tensor of ones."""
    _check_device(device)
    return _finish(np.ones(_size(size), _dt(dtype)), requires_grad)


def empty(*size, dtype=None, device=None, requires_grad=False, out=None, layout=None, memory_format=None,
          pin_memory=False):
    """An uninitialised tensor."""
    _check_device(device)
    return _finish(np.empty(_size(size), _dt(dtype)), requires_grad)


def full(size, fill_value, *, dtype=None, device=None, requires_grad=False, out=None, layout=None):
    """A tensor filled with ``fill_value`` (its dtype inferred from the value, as torch does)."""
    _check_device(device)
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    if dtype is None:
        dtype = _dtype.result_type(fill_value)
    return _finish(np.full(_size((size,) if isinstance(size, int) else (size,)), fill_value, _dt(dtype)),
                   requires_grad)


def _like(input, dtype):
    return _dtype.to_dtype(dtype).np if dtype is not None else input._array.dtype


def zeros_like(input, *, dtype=None, device=None, requires_grad=False, layout=None, memory_format=None):
    return _finish(np.zeros(input._array.shape, _like(input, dtype)), requires_grad)


def ones_like(input, *, dtype=None, device=None, requires_grad=False, layout=None, memory_format=None):
    return _finish(np.ones(input._array.shape, _like(input, dtype)), requires_grad)


def empty_like(input, *, dtype=None, device=None, requires_grad=False, layout=None, memory_format=None):
    return _finish(np.empty(input._array.shape, _like(input, dtype)), requires_grad)


def full_like(input, fill_value, *, dtype=None, device=None, requires_grad=False, layout=None,
              memory_format=None):
    return _finish(np.full(input._array.shape, fill_value, _like(input, dtype)), requires_grad)


def arange(start, end=None, step=1, *, dtype=None, device=None, requires_grad=False, out=None, layout=None):
    """Values from ``start`` to ``end`` (exclusive) by ``step``; int64 when all are ints.

    >>> tapegrad.arange(3)
    tensor([0, 1, 2])
    """
    _check_device(device)
    if end is None:
        start, end = 0, start
    vals = [v.item() if isinstance(v, Tensor) else v for v in (start, end, step)]
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if dtype is None:
        dtype = _dtype.int64 if all(isinstance(v, (int, np.integer)) for v in vals) else _dtype.get_default_dtype()
    d = _dtype.to_dtype(dtype)
    n = max(int(np.ceil((vals[1] - vals[0]) / vals[2])), 0)
    arr = (vals[0] + np.arange(n, dtype=np.float64 if d.is_floating_point else np.int64) * vals[2]).astype(d.np)
    return _finish(arr, requires_grad)


def linspace(start, end, steps, *, dtype=None, device=None, requires_grad=False, out=None, layout=None):
    """``steps`` evenly spaced values from ``start`` to ``end`` inclusive."""
    _check_device(device)
    return _finish(np.linspace(float(start), float(end), int(steps)).astype(_dt(dtype)), requires_grad)


def logspace(start, end, steps, base=10.0, *, dtype=None, device=None, requires_grad=False):
    return _finish(np.logspace(float(start), float(end), int(steps), base=base).astype(_dt(dtype)), requires_grad)


def eye(n, m=None, *, dtype=None, device=None, requires_grad=False, out=None, layout=None):
    """The identity matrix (``n`` x ``m``)."""
    _check_device(device)
    return _finish(np.eye(n, m if m is not None else n, dtype=_dt(dtype)), requires_grad)


def _float_dt(dtype):
    d = _dtype.to_dtype(dtype) if dtype is not None else _dtype.get_default_dtype()
    if not (d.is_floating_point or d.is_complex):
        raise RuntimeError(f"\"check_uniform_bounds\" not implemented for '{d._legacy}'")
    return d.np


def _complex_draw(draw, shape, d, scale=1.0):
    """A complex sample: real and imaginary parts drawn one after the other (as torch, each part scaled)."""
    real = np.float64 if d == np.complex128 else np.float32
    out = np.empty(shape, d)
    out.real = draw(shape, real) * scale
    out.imag = draw(shape, real) * scale
    return out


def rand(*size, generator=None, dtype=None, device=None, requires_grad=False, out=None, layout=None):
    """Uniform samples in [0, 1) (complex dtypes: real and imaginary parts each uniform)."""
    _check_device(device)
    d = _float_dt(dtype)
    g = _gen(generator)
    if d.kind == "c":
        return _finish(_complex_draw(lambda s, t: g.random(s, dtype=t), _size(size), d), requires_grad)
    arr = g.random(_size(size), dtype=d) if d in (np.float32, np.float64) else g.random(_size(size)).astype(d)
    return _finish(arr, requires_grad)


def randn(*size, generator=None, dtype=None, device=None, requires_grad=False, out=None, layout=None):
    """Standard normal samples (complex dtypes: variance 1, half in the real part, half in the imaginary part)."""
    _check_device(device)
    d = _float_dt(dtype)
    g = _gen(generator)
    if d.kind == "c":
        return _finish(_complex_draw(lambda s, t: g.standard_normal(s, dtype=t), _size(size), d, 0.5 ** 0.5),
                       requires_grad)
    arr = g.standard_normal(_size(size), dtype=d) if d in (np.float32, np.float64) else \
        g.standard_normal(_size(size)).astype(d)
    return _finish(arr, requires_grad)


def randint(low=0, high=None, size=None, *, generator=None, dtype=None, device=None, requires_grad=False):
    """Random integers in [low, high): ``randint(10, (3,))`` or ``randint(0, 10, (3,))``."""
    if size is None:
        low, high, size = 0, low, high
    if high is None:
        raise TypeError("randint() missing required argument 'high'")
    arr = _gen(generator).integers(low, high, size=_size((size,)), dtype=np.int64)
    return _finish(arr.astype(_dt(dtype, _dtype.int64)), requires_grad)


def randperm(n, *, generator=None, dtype=None, device=None, requires_grad=False):
    """A random permutation of ``0 .. n-1``."""
    return _finish(_gen(generator).permutation(n).astype(_dt(dtype, _dtype.int64)), requires_grad)


def rand_like(input, *, dtype=None, generator=None, **kw):
    return rand(input._array.shape, dtype=dtype or input.dtype, generator=generator)


def randn_like(input, *, dtype=None, generator=None, **kw):
    return randn(input._array.shape, dtype=dtype or input.dtype, generator=generator)


def randint_like(input, low=0, high=None, *, dtype=None, **kw):
    if high is None:
        low, high = 0, low
    return randint(low, high, input._array.shape, dtype=dtype or input.dtype)


def normal(mean=0.0, std=1.0, size=None, *, generator=None, dtype=None, out=None):
    """Normal samples with ``mean`` and ``std`` (numbers or tensors)."""
    m = mean._array if isinstance(mean, Tensor) else mean
    s = std._array if isinstance(std, Tensor) else std
    shape = _size((size,)) if size is not None else np.broadcast_shapes(np.shape(m), np.shape(s))
    d = mean.dtype if isinstance(mean, Tensor) else std.dtype if isinstance(std, Tensor) else None
    arr = (_gen(generator).standard_normal(shape) * s + m).astype(_dt(dtype, d))
    return Tensor._make(arr)


def bernoulli(input, p=None, *, generator=None, out=None):
    """Samples 1 with probability ``input`` (or ``p``), else 0."""
    probs = input._array if p is None else np.full(input._array.shape, p)
    return Tensor._make((_gen(generator).random(input._array.shape) < probs).astype(input._array.dtype))


def multinomial(input, num_samples, replacement=False, *, generator=None):
    """Draw ``num_samples`` indices per row with probabilities proportional to ``input``."""
    p = np.asarray(input._array, np.float64)
    rows = p.reshape(-1, p.shape[-1])
    g = _gen(generator)
    out = np.stack([g.choice(rows.shape[1], num_samples, replace=replacement, p=r / r.sum()) for r in rows])
    return Tensor._make(out.reshape(p.shape[:-1] + (num_samples,)).astype(np.int64))
