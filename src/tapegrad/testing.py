"""``tapegrad.testing``: ``assert_close`` and ``make_tensor``, as ``torch.testing`` has them.

``assert_close(actual, expected)`` compares Tensors (or NumPy arrays, or Python scalars, or sequences and
mappings of them, pairwise) with torch's default tolerances for the dtype, and fails with torch's message:
how many elements mismatch, and the greatest absolute and relative differences with their index.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from . import _dtype
from .tensor import Tensor

__all__ = ["assert_close", "make_tensor", "assert_allclose"]

# torch's default (rtol, atol) per dtype
_TOLS = {"float16": (1e-3, 1e-5), "bfloat16": (1.6e-2, 1e-5), "float32": (1.3e-6, 1e-5), "float64": (1e-7, 1e-7),
         "complex64": (1.3e-6, 1e-5), "complex128": (1e-7, 1e-7)}


def _tols(*dtypes):
    pairs = [_TOLS.get(getattr(d, "name", str(d)).replace("torch.", "").replace("tapegrad.", ""), (0.0, 0.0))
             for d in dtypes]
    return max(p[0] for p in pairs), max(p[1] for p in pairs)


def _fail(text, msg, where):
    if where:
        text += f"\n\nThe failure occurred for item {where}"
    if msg is not None:
        text = msg(text) if callable(msg) else msg
    raise AssertionError(text)


def _kind(x):
    if isinstance(x, Tensor):
        return "tensor"
    if isinstance(x, np.ndarray):
        return "array"
    if isinstance(x, bool) or isinstance(x, np.bool_):
        return "bool"
    if isinstance(x, (int, float, complex, np.number)):
        return "scalar"
    if isinstance(x, Mapping):
        return "mapping"
    if isinstance(x, Sequence) and not isinstance(x, (str, bytes)):
        return "sequence"
    return None


def _index(flat_i, shape):
    return tuple(int(i) for i in np.unravel_index(flat_i, shape)) if shape else ()


def _num(v):
    """A difference as torch prints it (a Python int for integer tensors, else a float)."""
    v = v.item() if hasattr(v, "item") else v
    return v


def _compare_arrays(a, b, rtol, atol, equal_nan, msg, where, what="Tensor-likes"):
    """The values of two same-shape arrays (already in one dtype), torch's way."""
    if a.size == 0:
        return
    exact = rtol == 0 and atol == 0
    if a.dtype.kind in "biu" and b.dtype.kind in "biu":
        close = a == b
    else:
        with np.errstate(invalid="ignore", over="ignore"):
            close = np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)
        # np.isclose's inf handling and torch's agree (equal infs are close); NaN only with equal_nan
    if close.all():
        return
    mism = int((~close).sum())
    total = close.size
    kind = "equal" if exact else "close"
    with np.errstate(all="ignore"):
        if a.dtype.kind == "b":
            a, b = a.astype(np.int64), b.astype(np.int64)
        diff = np.abs(a - b) if a.dtype.kind not in "u" else np.abs(a.astype(np.int64) - b.astype(np.int64))
        rel_dtype = np.float32 if diff.dtype.kind in "iu" else None
        rel = (diff.astype(rel_dtype) if rel_dtype else diff) / np.abs(b).astype(rel_dtype or diff.dtype)
    d_flat, r_flat = diff.reshape(-1), np.asarray(rel).reshape(-1)
    # (NaNs first, as torch's argmax of a tensor with NaN)
    di = int(np.argmax(np.where(np.isnan(d_flat), np.inf, d_flat) if d_flat.dtype.kind in "fc" else d_flat))
    ri = int(np.argmax(np.where(np.isnan(r_flat), np.inf, r_flat)))
    lines = [f"{what} are not {kind}!", "", f"Mismatched elements: {mism} / {total} "
             f"({100.0 * mism / total:.1f}%)"]
    da, ra = _num(d_flat[di]), _num(r_flat[ri])
    if exact:
        lines.append(f"Greatest absolute difference: {da} at index {_index(di, a.shape)}")
        lines.append(f"Greatest relative difference: {ra} at index {_index(ri, a.shape)}")
    else:
        lines.append(f"Greatest absolute difference: {da} at index {_index(di, a.shape)} (up to {atol} allowed)")
        lines.append(f"Greatest relative difference: {ra} at index {_index(ri, a.shape)} (up to {rtol} allowed)")
    _fail("\n".join(lines), msg, where)


def _pair(actual, expected, rtol, atol, equal_nan, check_dtype, check_stride, msg, where):
    ka, kb = _kind(actual), _kind(expected)
    if ka is None or kb is None or (ka != kb and {ka, kb} != {"scalar", "bool"}):
        raise TypeError(f"No comparison pair was able to handle inputs of type {_torch_type(actual)} and "
                        f"{_torch_type(expected)}.")
    if ka == "mapping":
        ak, bk = set(actual), set(expected)
        if ak != bk:
            missing, extra = sorted(bk - ak, key=repr), sorted(ak - bk, key=repr)
            _fail(f"The keys of the mappings do not match:\nMissing keys in the actual mapping: {missing}\n"
                  f"Additional keys in the actual mapping: {extra}", msg, where)
        for k in expected:
            _pair(actual[k], expected[k], rtol, atol, equal_nan, check_dtype, check_stride, msg,
                  f"{where}[{k!r}]")
        return
    if ka == "sequence":
        if len(actual) != len(expected):
            _fail(f"The length of the sequences mismatch: {len(actual)} != {len(expected)}", msg, where)
        for i, (x, y) in enumerate(zip(actual, expected)):
            _pair(x, y, rtol, atol, equal_nan, check_dtype, check_stride, msg, f"{where}[{i}]")
        return
    if ka == "bool" and kb == "bool":
        if bool(actual) != bool(expected):
            _fail(f"Booleans mismatch: {bool(actual)} is not {bool(expected)}", msg, where)
        return
    if ka in ("scalar", "bool"):
        if type(actual) is not type(expected):
            _fail(f"The (d)types do not match: {type(actual)} != {type(expected)}.", msg, where)
        r, t = (rtol, atol) if rtol is not None else ((0.0, 0.0) if isinstance(actual, int) else (1e-7, 1e-7))
        if actual == expected or (equal_nan and _isnan(actual) and _isnan(expected)):
            return
        if not isinstance(actual, int) and abs(actual - expected) <= t + r * abs(expected):
            return
        diff = abs(actual - expected)
        rel = diff / abs(expected) if expected != 0 else math.inf
        if r == 0 and t == 0:
            _fail(f"Scalars are not equal!\n\nExpected {expected} but got {actual}.\nAbsolute difference: {diff}\n"
                  f"Relative difference: {rel}", msg, where)
        _fail(f"Scalars are not close!\n\nExpected {expected} but got {actual}.\nAbsolute difference: {diff} (up to "
              f"{t} allowed)\nRelative difference: {rel} (up to {r} allowed)", msg, where)
    # Tensors, or NumPy arrays
    if tuple(actual.shape) != tuple(expected.shape):
        sa, sb = (f"torch.Size({list(x.shape)})" if isinstance(x, Tensor) else str(x.shape)
                  for x in (actual, expected))
        _fail(f"The values for attribute 'shape' do not match: {sa} != {sb}.", msg, where)
    da, db = (x.dtype for x in (actual, expected))
    if check_dtype and da != db:
        names = (f"torch.{d.name}" if isinstance(d, _dtype.dtype) else str(d) for d in (da, db))
        _fail("The values for attribute 'dtype' do not match: {} != {}.".format(*names), msg, where)
    if check_stride and isinstance(actual, Tensor) and actual.stride() != expected.stride():
        _fail(f"The values for attribute 'stride()' do not match: {actual.stride()} != {expected.stride()}.", msg,
              where)
    r, t = (rtol, atol) if rtol is not None else _tols(da, db)
    a = actual._array if isinstance(actual, Tensor) else np.asarray(actual)
    b = expected._array if isinstance(expected, Tensor) else np.asarray(expected)
    if a.dtype != b.dtype:
        common = np.result_type(a, b)
        a, b = a.astype(common), b.astype(common)
    _compare_arrays(a, b, r, t, equal_nan, msg, where)


def _isnan(x):
    return isinstance(x, (float, complex)) and x != x


def _torch_type(x):
    return "<class 'torch.Tensor'>" if isinstance(x, Tensor) else str(type(x))


def assert_close(actual, expected, *, allow_subclasses=True, rtol=None, atol=None, equal_nan=False,
                 check_device=True, check_dtype=True, check_layout=True, check_stride=False, msg=None):
    """Assert that ``actual`` and ``expected`` are close: ``|actual - expected| <= atol + rtol * |expected|``
    elementwise, with torch's default tolerances for their dtype (float32: rtol 1.3e-6, atol 1e-5; float64:
    1e-7 both; integers and bools: equal). Shapes (and dtypes, with ``check_dtype``) must match. ``msg``: a
    string replacing the message, or a callable editing it."""
    if (rtol is None) != (atol is None):
        raise ValueError(f"Both 'rtol' and 'atol' must be either specified or omitted, but got no "
                         f"{'atol' if atol is None else 'rtol'}.")
    __tracebackhide__ = True
    if isinstance(actual, Tensor) and isinstance(expected, Tensor) and actual.is_meta and expected.is_meta:
        # (torch compares meta tensors' metadata only: no values to compare)
        actual, expected = (Tensor._make(np.broadcast_to(np.zeros((), t._array.dtype), t.shape))
                            for t in (actual, expected))
    _pair(actual, expected, rtol, atol, equal_nan, check_dtype, check_stride, msg, "")


def assert_allclose(actual, expected, rtol=None, atol=None, equal_nan=True, msg=""):
    """The deprecated ``torch.testing.assert_allclose``: ``assert_close`` without the dtype check, NaNs equal."""
    import warnings
    warnings.warn("`torch.testing.assert_allclose()` is deprecated since 1.12 and will be removed in a future "
                  "release. Please use `torch.testing.assert_close()` instead.", FutureWarning, stacklevel=2)
    if not isinstance(actual, Tensor):
        actual = Tensor._make(np.asarray(actual))
    if not isinstance(expected, Tensor):
        expected = Tensor._make(np.asarray(expected, dtype=actual._array.dtype))
    assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan, check_dtype=False,
                 msg=msg or None)


def make_tensor(*shape, dtype, device, low=None, high=None, requires_grad=False, noncontiguous=False,
                exclude_zero=False, memory_format=None):
    """A tensor of ``shape`` filled with random values of ``dtype`` in [low, high) (torch's defaults: floats in
    [-9, 9), integers in [-9, 10), bools either; ``exclude_zero`` replaces zeros by the dtype's tiny)."""
    from . import creation
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    shape = tuple(int(s) for s in shape)
    d = _dtype.to_dtype(dtype)
    if d.name == "bool":
        out = creation.randint(0, 2, shape).to(d)
    elif d.np.kind in "iu":
        info = np.iinfo(d.np)
        lo = max(-9 if low is None else math.ceil(low), info.min)
        hi = min(10 if high is None else math.ceil(high), info.max)
        if d.name == "uint8":
            lo = max(lo, 0)
        if lo >= hi:
            raise ValueError(f"`low` must be less than `high`, but got {lo} >= {hi}")
        out = creation.randint(lo, hi, shape, dtype=d)
    else:
        if low is not None and high is not None and low >= high:
            raise ValueError(f"`low` must be less than `high`, but got {low} >= {high}")
        lo = -9.0 if low is None else float(low)
        hi = 9.0 if high is None else float(high)
        real = _dtype.float32 if d.name == "complex64" else _dtype.float64 if d.name == "complex128" else d
        out = creation.empty(shape, dtype=real).uniform_(lo, hi)
        if d.np.kind == "c":
            from .ops.elementwise.complex import complex as _complex
            out = _complex(out, creation.empty(shape, dtype=real).uniform_(lo, hi))
    if exclude_zero and d.name != "bool":
        tiny = 1 if d.np.kind in "iu" else float(np.finfo(np.float32 if d.np.kind == "c" else d.np).tiny)
        out = out.masked_fill(out == 0, tiny)
    if noncontiguous and out.numel() > 1:
        out = out.repeat_interleave(2, dim=-1)[..., ::2]
    if requires_grad:
        out.requires_grad_(True)
    return out
