# ruff: noqa: A001, A002 - torch's names (sorted) and argument name (input)
"""Shared helpers of the index ops: index checks, the gather / scatter kernels on arrays, in-place
variants.
"""

from __future__ import annotations

import numpy as np

from ...autograd.grad_mode import _state
from .._util import Tensor, apply_inplace, shape_str


_INT_INDEX = (np.int64, np.int32, np.int16, np.int8, np.uint8)


def _arr(x):
    return x._array if isinstance(x, Tensor) else x


def _no_grad(fn, *args, **kwargs):
    prev = _state.enabled
    _state.enabled = False
    try:
        return fn(*args, **kwargs)
    finally:
        _state.enabled = prev


# ============================================================================================================
# shared helpers of the index ops
# ============================================================================================================
def _tensor(a, dtype=None):
    """A constant tensor (no history) over an array or number."""
    a = np.asarray(a) if dtype is None else np.asarray(a, dtype)
    return Tensor._make(a)


def _zeros(shape, dtype):
    return Tensor._make(np.zeros(shape, dtype))


def _dim_key(dim, idx):
    return (slice(None),) * dim + (idx,)


def _grid(index, dim):
    """The NumPy key that reads ``x[i][index[i][j][k]][k]``-style positions (gather/scatter along ``dim``)."""
    n = index.ndim
    return tuple(index if j == dim else np.arange(s).reshape([s if k == j else 1 for k in range(n)])
                 for j, s in enumerate(index.shape))


def _check_gather(op, shape, dim, index, src_shape=None):
    n = max(len(shape), 1)
    if max(index.ndim, 1) != n:
        what = "input" if op == "gather" else "self"
        raise RuntimeError(f"Index tensor must have the same number of dimensions as {what} tensor")
    if src_shape is not None and max(len(src_shape), 1) != n:
        raise RuntimeError("Index tensor must have the same number of dimensions as src tensor")
    ishape = index.shape if index.ndim else (1,)
    xshape = shape if shape else (1,)
    sshape = None if src_shape is None else (src_shape if src_shape else (1,))
    for d in range(n):
        self_bad = d != dim and ishape[d] > xshape[d]
        if op == "gather" and self_bad:
            raise RuntimeError(f"Size does not match at dimension {d} expected index {shape_str(ishape)} to be no "
                               f"larger than self {shape_str(xshape)} apart from dimension {dim}")
        if self_bad or (sshape is not None and ishape[d] > sshape[d]):
            src = "" if sshape is None else f" and to be no larger size than src {shape_str(sshape)}"
            raise RuntimeError(f"Expected index {shape_str(ishape)} to be no larger than self {shape_str(xshape)} "
                               f"apart from dimension {dim}{src}")


def _check_gather_bounds(x, dim, index):
    """gather's and scatter's bounds rule. The ops' forwards run it (not the public functions), so that a compiled
    replay checks each call's index too (a negative one would silently wrap in NumPy)."""
    size = x.shape[dim] if x.ndim else 1
    if index.min() < 0 or index.max() >= size:
        bad = (index < 0) | (index >= size)         # the first one in order, as torch reports it
        first = int(index.reshape(-1)[np.argmax(bad.reshape(-1))])
        raise RuntimeError(f"index {first} is out of bounds for dimension {dim} with size {size}")


def _gather_np(x, dim, index):
    if index.size == 0:            # (an empty index of any rank reads nothing)
        return np.zeros(index.shape, x.dtype)
    _check_gather_bounds(x, dim, index)
    x1 = x.reshape(1) if x.ndim == 0 else x
    i1 = index.reshape(1) if index.ndim == 0 else index
    return x1[_grid(i1, dim)].reshape(index.shape)


_IDENTITY = {"sum": 0, "mean": 0, "prod": 1}


def _scatter_np(x, dim, index, src, mode="set", include_self=True):
    """``x`` (copied) with ``src`` (array or number) scattered at ``index`` along ``dim``."""
    if index.size == 0:
        return np.array(x, copy=True)
    _check_gather_bounds(x, dim, index)
    out = np.array(x, copy=True).reshape(x.shape if x.ndim else (1,))
    i1 = index.reshape(1) if index.ndim == 0 else index
    key = _grid(i1, dim)
    if isinstance(src, np.ndarray) and src.ndim:
        s = src[tuple(slice(0, k) for k in i1.shape)]
    else:
        s = np.asarray(src).reshape(()) if isinstance(src, np.ndarray) else src
    if isinstance(s, np.ndarray) and s.dtype != out.dtype:
        s = s.astype(out.dtype)
    if mode == "set":
        out[key] = s
    else:
        if not include_self and index.size:
            kind, amax = out.dtype.kind, mode == "amax"
            if mode in _IDENTITY:
                ident = _IDENTITY[mode]
            elif kind == "f":
                ident = -np.inf if amax else np.inf
            elif kind in "iu":
                ident = np.iinfo(out.dtype).min if amax else np.iinfo(out.dtype).max
            else:
                ident = not amax
            out[key] = ident
        ufunc = {"sum": np.add, "add": np.add, "mean": np.add, "prod": np.multiply, "multiply": np.multiply,
                 "amax": np.maximum, "amin": np.minimum}[mode]
        ufunc.at(out, key, np.broadcast_to(s, i1.shape))
        if mode == "mean":
            count = np.ones(out.shape, np.int64) if include_self else np.zeros(out.shape, np.int64)
            np.add.at(count, key, 1)
            count[count == 0] = 1
            out = out // count.astype(out.dtype) if out.dtype.kind in "iu" else (out / count).astype(out.dtype)
    return out.reshape(x.shape)


def _scatter_counts(shape, dim, index, include_self):
    """How many values land at each position (the self value counting as one with include_self)."""
    count = np.ones(shape, np.float64) if include_self else np.zeros(shape, np.float64)
    i1 = index.reshape(1) if index.ndim == 0 else index
    c1 = count.reshape(shape if shape else (1,))
    np.add.at(c1, _grid(i1, dim), 1)
    return c1.reshape(shape)


def _inplace(fn):
    def op_(self, *args, **kwargs):
        return apply_inplace(self, fn, *args, **kwargs)
    op_.__name__ = fn.__name__ + "_"
    op_.__doc__ = f"In-place ``{fn.__name__}`` (bumps the version; differentiable)."
    return op_
