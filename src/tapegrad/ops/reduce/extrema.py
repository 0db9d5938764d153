# ruff: noqa: A001, A002 - torch's names (sum, max, all, any) and argument name (input)
"""Extrema and order statistics: max / min (over all, which split the gradient evenly between ties, and
over a dim, which send it to the selected index), amax / amin, aminmax, argmax / argmin, median, nanmedian,
mode.
"""

from __future__ import annotations

import numpy as np

from ...autograd.function import _active
from .._util import Primitive, Tensor, _inside, array_op, bind, normalize_dim, normalize_dims, refuse_complex
from ._common import (_const, _dim_args, _evenly, _expand_back, _kept_shape, _nonempty_dim, _select_backward,
                      _write_out, return_types)


# --- extrema split evenly between ties ------------------------------------------------------------------------------
def _evenly_cls(name, node_name, np_fn, op, nan_match=True):
    """A reduction whose gradient is split evenly between the elements equal to the result (``max()``, ``amax``)."""

    def forward(ctx, x, dims, keepdim):
        axis = None if dims is None else normalize_dims(dims, x.ndim)
        if x.size == 0:
            if dims is None or not x.ndim:
                if op in ("max", "min", "amax", "amin"):
                    raise RuntimeError(f"{op}(): Expected reduction dim to be specified for input.numel() == 0. "
                                       "Specify the reduction dim with the 'dim' argument.")
            else:
                for d in axis:
                    _nonempty_dim(op, x, d)
        ctx.shape, ctx.dims, ctx.keepdim = x.shape, axis if axis is not None else tuple(range(x.ndim)), keepdim
        res = np_fn(x, axis)
        keep = res.reshape(_kept_shape(x.shape, ctx.dims)) if x.ndim else res
        ctx.w = _evenly(x, keep, axis, nan_match)
        if keepdim:
            res = keep
        return np.asarray(res, x.dtype, order="C")

    def backward(ctx, grad):
        g = _expand_back(grad, ctx.shape, ctx.dims, ctx.keepdim)
        return g * _const(ctx.w, g), None, None

    return type(name, (Primitive,), {"forward": staticmethod(forward), "backward": staticmethod(backward),
                                     "node_name": node_name, "__doc__": f"{op} (ties share the gradient)"})


def _np_median(x, axis, nan=False):
    """The lower median (torch's), over ``axis`` (None: all); NaN propagates unless ``nan``."""
    if axis is None:
        x, axis = x.reshape(-1), (0,)
    axis = tuple(axis)
    rest = [d for d in range(x.ndim) if d not in axis]
    a = np.transpose(x, rest + list(axis)).reshape([x.shape[d] for d in rest] + [-1])
    s = np.sort(a, axis=-1)
    n = s.shape[-1]
    if n == 0:
        return np.full(a.shape[:-1], np.nan, x.dtype)
    if nan:
        k = np.maximum((np.sum(~np.isnan(s), axis=-1, keepdims=True) - 1) // 2, 0)
    else:
        k = np.full(a.shape[:-1] + (1,), (n - 1) // 2)
    res = np.take_along_axis(s, k, -1)[..., 0]
    if not nan and x.dtype.kind == "f":
        res = np.where(np.isnan(a).any(-1), np.nan, res)
    return res


MaxAll = _evenly_cls("MaxAll", "MaxBackward1", lambda x, ax: np.max(x, axis=ax), "max")
MinAll = _evenly_cls("MinAll", "MinBackward1", lambda x, ax: np.min(x, axis=ax), "min")
Amax = _evenly_cls("Amax", "AmaxBackward0", lambda x, ax: np.max(x, axis=ax), "amax", nan_match=False)
Amin = _evenly_cls("Amin", "AminBackward0", lambda x, ax: np.min(x, axis=ax), "amin", nan_match=False)
MedianAll = _evenly_cls("MedianAll", "MedianBackward0", lambda x, ax: _np_median(x, ax), "median")
NanmedianAll = _evenly_cls("NanmedianAll", "NanmedianBackward0", lambda x, ax: _np_median(x, ax, True), "nanmedian")


class Aminmax(Primitive):
    """``(min, max)`` in one pass; ties share each gradient."""

    @staticmethod
    def forward(ctx, x, dim, keepdim):
        if x.size == 0 and (dim is None or not x.ndim):
            raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the operation has no "
                               "identity.")
        if dim is not None and x.ndim and x.shape[dim] == 0:
            raise IndexError(f"aminmax: Expected reduction dim {dim} to have non-zero size.")
        axis = None if dim is None else ((dim,) if x.ndim else ())
        ctx.shape, ctx.dims, ctx.keepdim = x.shape, axis if axis is not None else tuple(range(x.ndim)), keepdim
        lo, hi = np.min(x, axis=axis), np.max(x, axis=axis)
        kshape = _kept_shape(x.shape, ctx.dims)
        ctx.wlo, ctx.whi = _evenly(x, lo.reshape(kshape), axis, False), _evenly(x, hi.reshape(kshape), axis, False)
        if keepdim:
            lo, hi = lo.reshape(kshape), hi.reshape(kshape)
        return np.asarray(lo, x.dtype, order="C"), np.asarray(hi, x.dtype, order="C")

    @staticmethod
    def backward(ctx, glo, ghi):
        lo = _expand_back(glo, ctx.shape, ctx.dims, ctx.keepdim)
        hi = _expand_back(ghi, ctx.shape, ctx.dims, ctx.keepdim)
        return lo * _const(ctx.wlo, lo) + hi * _const(ctx.whi, hi), None, None


# --- value-selecting reductions over one dim: (values, indices) -----------------------------------------------------
def _arg_extreme(x, d, largest):
    return (np.argmax if largest else np.argmin)(x, axis=d, keepdims=True)


def _median_idx(x, d, nan):
    order = np.argsort(x, axis=d, kind="stable")
    n = x.shape[d]
    if nan:
        cnt = np.sum(~np.isnan(x), axis=d, keepdims=True) if x.dtype.kind == "f" else np.full(
            _kept_shape(x.shape, (d,)), n)
        k = np.maximum((cnt - 1) // 2, 0)
    else:
        k = np.full(_kept_shape(x.shape, (d,)), (n - 1) // 2)
    idx = np.take_along_axis(order, k, d)
    if not nan and x.dtype.kind == "f":
        isn = np.isnan(x)
        has = isn.any(axis=d, keepdims=True)
        idx = np.where(has, np.argmax(isn, axis=d, keepdims=True), idx)
    return idx


def _mode_idx(x, d):
    a = np.moveaxis(x, d, -1)
    order = np.argsort(a, axis=-1, kind="stable")
    s = np.take_along_axis(a, order, -1)
    n = s.shape[-1]
    ar = np.broadcast_to(np.arange(n), s.shape)
    diff = s[..., 1:] != s[..., :-1]
    start = np.concatenate([np.ones(s.shape[:-1] + (1,), bool), diff], -1)
    end = np.concatenate([diff, np.ones(s.shape[:-1] + (1,), bool)], -1)
    lo = np.maximum.accumulate(np.where(start, ar, 0), axis=-1)
    hi = np.minimum.accumulate(np.where(end, ar, n)[..., ::-1], axis=-1)[..., ::-1]
    best = np.argmax(hi - lo, axis=-1)[..., None]            # first longest run: the smallest such value
    idx = np.take_along_axis(order, np.take_along_axis(hi, best, -1), -1)   # its last occurrence
    return np.moveaxis(idx, -1, d)


def _select_cls(name, node_name, idx_fn, op):
    """A reduction over one dim returning ``(values, indices)``; the gradient goes to the selected index."""

    def forward(ctx, x, dim, keepdim):
        zero_d = x.ndim == 0
        a = x.reshape(1) if zero_d else x
        _nonempty_dim("median" if op == "nanmedian" else op, a, dim)     # (torch's nanmedian says median())
        idx = idx_fn(a, dim)
        vals = np.take_along_axis(a, idx, dim)
        ctx.idx, ctx.dim, ctx.shape, ctx.keepdim, ctx.zero_d = idx, dim, x.shape, keepdim, zero_d
        if zero_d:
            vals, idx = vals.reshape(()), idx.reshape(())
        elif not keepdim:
            vals, idx = np.squeeze(vals, dim), np.squeeze(idx, dim)
        return vals, idx.astype(np.int64)

    def backward(ctx, grad, _gidx):
        return _select_backward(grad, ctx.idx, ctx.dim, ctx.shape, ctx.keepdim, ctx.zero_d), None, None

    return type(name, (Primitive,), {"forward": staticmethod(forward), "backward": staticmethod(backward),
                                     "node_name": node_name, "__doc__": f"{op} over a dim (values, indices)"})


MaxDim = _select_cls("MaxDim", "MaxBackward0", lambda x, d: _arg_extreme(x, d, True), "max")
MinDim = _select_cls("MinDim", "MinBackward0", lambda x, d: _arg_extreme(x, d, False), "min")
MedianDim = _select_cls("MedianDim", "MedianBackward1", lambda x, d: _median_idx(x, d, False), "median")
NanmedianDim = _select_cls("NanmedianDim", "NanmedianBackward1", lambda x, d: _median_idx(x, d, True), "nanmedian")
Mode = _select_cls("Mode", "ModeBackward0", _mode_idx, "mode")


def _with_dim(cls, input, dim, keepdim, rt):
    d = normalize_dim(dim, input._array.ndim)
    return getattr(return_types, rt)(*cls.apply(input, d, keepdim))


def max(input, dim=None, keepdim=False, *, other=None, out=None):  # noqa: A001 - torch's name
    """The largest element; with ``dim``, ``(values, indices)`` along it; with a tensor, ``maximum``.

    >>> tapegrad.tensor([[1., 5.], [3., 2.]]).max(0)
    tapegrad.return_types.max(
    values=tensor([3., 5.]),
    indices=tensor([1, 0]))
    """
    if isinstance(dim, Tensor) or other is not None:
        from ..elementwise import maximum
        return maximum(input, dim if other is None else other, out=out)     # (out: AMSGrad's max(m, v, out=m))
    if dim is None:
        refuse_complex(input, "max_all")
        return _write_out("max", MaxAll.apply(input, None, False), out)
    refuse_complex(input, message="max(): does not support complex input", error=RuntimeError)
    return _write_out("max", _with_dim(MaxDim, input, dim, keepdim, "max"), out)


def min(input, dim=None, keepdim=False, *, other=None, out=None):  # noqa: A001 - torch's name
    """The smallest element; with ``dim``, ``(values, indices)`` along it; with a tensor, ``minimum``.

    >>> tapegrad.tensor([3., 1., 2.]).min()
    tensor(1.)
    """
    if isinstance(dim, Tensor) or other is not None:
        from ..elementwise import minimum
        return minimum(input, dim if other is None else other, out=out)     # (out: AMSGrad's max(m, v, out=m))
    if dim is None:
        refuse_complex(input, "min_all")
        return _write_out("min", MinAll.apply(input, None, False), out)
    refuse_complex(input, message="min(): does not support complex input", error=RuntimeError)
    return _write_out("min", _with_dim(MinDim, input, dim, keepdim, "min"), out)


def amax(input, dim=(), keepdim=False, *, out=None):
    """Max over ``dim`` (int or tuple; all when empty); ties share the gradient evenly.

    >>> tapegrad.tensor([[1., 5.], [3., 2.]]).amax(1)
    tensor([5., 3.])
    """
    refuse_complex(input, "max_values_cpu")
    return _write_out("amax", Amax.apply(input, _dim_args(dim), keepdim), out, dtype="same",
                      error="Expected the dtype for input and out to match, but got {r} for input's dtype and {o} "
                            "for out's dtype.")


def amin(input, dim=(), keepdim=False, *, out=None):
    """Min over ``dim`` (int or tuple; all when empty); ties share the gradient evenly.

    >>> tapegrad.tensor([[1., 5.], [3., 2.]]).amin(1)
    tensor([1., 2.])
    """
    refuse_complex(input, "min_values_cpu")
    return _write_out("amin", Amin.apply(input, _dim_args(dim), keepdim), out, dtype="same",
                      error="Expected the dtype for input and out to match, but got {r} for input's dtype and {o} "
                            "for out's dtype.")


def aminmax(input, *, dim=None, keepdim=False, out=None):
    """``(min, max)`` over all elements or ``dim``.

    >>> tapegrad.aminmax(tapegrad.tensor([1., 5., 3.]))
    tapegrad.return_types.aminmax(
    min=tensor(1.),
    max=tensor(5.))
    """
    refuse_complex(input, "aminmax_cpu")
    d = None if dim is None else normalize_dim(dim, input._array.ndim)
    return _write_out("aminmax", return_types.aminmax(*Aminmax.apply(input, d, keepdim)), out, dtype="same")


def _arg(op, np_fn):
    def fn(input, dim=None, keepdim=False, *, out=None):
        if _active[0] and not _inside[0] and out is None:      # (a transform sees it as an op)
            return array_op(fn, False, (input, dim, keepdim))
        a = input._array
        if a.dtype == np.bool_:
            raise RuntimeError(f"{op}(): does not support bool input")
        refuse_complex(a, message=f"{op}(): does not support complex input", error=RuntimeError)
        if dim is None:
            if a.size == 0:
                raise IndexError(f"{op}(): Expected reduction dim to be specified for input.numel() == 0.")
            r = np.asarray(np_fn(a.reshape(-1)), np.int64)
            return _write_out(op, Tensor._make(r.reshape((1,) * a.ndim) if keepdim else r), out, dtype="same")
        if isinstance(dim, (tuple, list)):
            raise TypeError(f"{op}(): argument 'dim' must be int, not {type(dim).__name__}")
        d = normalize_dim(dim, a.ndim)
        if a.ndim == 0:
            return _write_out(op, Tensor._make(np.asarray(0, np.int64)), out, dtype="same")
        _nonempty_dim(op, a, d)
        return _write_out(op, Tensor._make(np.asarray(np_fn(a, axis=d, keepdims=keepdim), np.int64)), out, dtype="same")
    fn.__name__ = op
    fn.__doc__ = (f"Index of the {'largest' if op == 'argmax' else 'smallest'} element (flat, or along ``dim``), "
                  f"int64.\n\n    >>> tapegrad.tensor([3., 7., 5.]).{op}()\n    tensor({1 if op == 'argmax' else 0})\n")
    return fn


argmax, argmin = _arg("argmax", np.argmax), _arg("argmin", np.argmin)


def median(input, dim=None, keepdim=False, *, out=None):
    """The lower median (of all elements, or ``(values, indices)`` along ``dim``); NaN propagates.

    >>> tapegrad.tensor([1., 4., 2., 3.]).median()
    tensor(2.)
    """
    refuse_complex(input, "median_cpu" if dim is None else "median_out")
    if dim is None:
        return _write_out("median", MedianAll.apply(input, None, False), out)
    return _write_out("median", _with_dim(MedianDim, input, dim, keepdim, "median"), out)


def nanmedian(input, dim=None, keepdim=False, *, out=None):
    """``median`` ignoring NaNs.

    >>> tapegrad.tensor([1., float('nan'), 2.]).nanmedian()
    tensor(1.)
    """
    refuse_complex(input, "median_cpu" if dim is None else "median_out")
    if dim is None:
        return _write_out("nanmedian", NanmedianAll.apply(input, None, False), out)
    return _write_out("nanmedian", _with_dim(NanmedianDim, input, dim, keepdim, "nanmedian"), out)


def mode(input, dim=-1, keepdim=False, *, out=None):
    """The most frequent value along ``dim`` (the smallest among equally frequent), with its last index.

    >>> tapegrad.tensor([1., 2., 2., 3.]).mode()
    tapegrad.return_types.mode(
    values=tensor(2.),
    indices=tensor(2))
    """
    refuse_complex(input, "mode_cpu")
    return _write_out("mode", _with_dim(Mode, input, dim, keepdim, "mode"), out, dtype="same",
                      error=["expected scalar type '{r}' but got '{o}' for values output",
                             "expected scalar type '{r}' but got '{o}' for indices output"])


bind(max=max, min=min, amax=amax, amin=amin,
     aminmax=lambda self, *, dim=None, keepdim=False: aminmax(self, dim=dim, keepdim=keepdim),
     argmax=argmax, argmin=argmin, median=median, nanmedian=nanmedian, mode=mode)
