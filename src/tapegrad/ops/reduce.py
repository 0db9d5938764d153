# ruff: noqa: A001, A002 - torch's names (sum, max, all, any) and argument name (input)
"""Reductions: sums, products, moments, extrema, order statistics, scans and logical reductions.

Every op reduces over all dims or over ``dim`` (an int, or a tuple where torch accepts one), with ``keepdim``;
integer outputs (indices, counts) are int64 and follow torch's dtype rules (``sum`` of ints is int64, ``mean`` of
ints is an error). Ops returning ``(values, indices)`` return named tuples that print like torch's
``torch.return_types.max(values=..., indices=...)``.

Gradients follow torch: ``max()``/``amax``/``median()`` split the gradient evenly between ties; ``max(dim)``,
``median(dim)``, ``mode``, ``cummax`` send it to the selected index.
"""

from __future__ import annotations

import builtins
import types
import warnings

import numpy as np

from .. import _dtype
from ..autograd.grad_mode import _state
from ._util import Primitive, Tensor, apply_inplace, bind, expand_to, normalize_dim, normalize_dims

__all__ = ["sum", "mean", "prod", "var", "std", "var_mean", "std_mean", "max", "min", "amax", "amin", "argmax",
           "argmin", "logsumexp", "cumsum", "cumprod", "cummax", "cummin", "all", "any", "median", "nanmedian",
           "mode", "count_nonzero", "nansum", "nanmean", "aminmax", "return_types"]

_bmax = builtins.max


# --- named tuples (torch.return_types) ------------------------------------------------------------------------
def _return_type(name, fields):
    def __repr__(self):
        body = ",\n".join(f"{f}={v!r}" for f, v in zip(fields, self))
        return f"tapegrad.return_types.{name}(\n{body})"

    def __new__(cls, *values):
        return tuple.__new__(cls, values)

    attrs = {"__slots__": (), "__repr__": __repr__, "__str__": __repr__, "__new__": __new__, "_fields": fields,
             "__module__": "tapegrad.return_types", "__doc__": f"``({', '.join(fields)})`` of ``{name}``."}
    for i, f in enumerate(fields):
        attrs[f] = property(lambda self, i=i: tuple.__getitem__(self, i))
    return type(name, (tuple,), attrs)


return_types = types.ModuleType("tapegrad.return_types", "Named tuples returned by ops, as torch.return_types.")
for _n in ("max", "min", "median", "nanmedian", "mode", "cummax", "cummin"):
    setattr(return_types, _n, _return_type(_n, ("values", "indices")))
return_types.aminmax = _return_type("aminmax", ("min", "max"))


# --- helpers -------------------------------------------------------------------------------------------------
def _kept_shape(shape, dims):
    """The shape with each reduced dim kept as 1 (to broadcast a gradient back)."""
    return tuple(1 if i in dims else s for i, s in enumerate(shape))


def _expand_back(grad, shape, dims, keepdim):
    """Broadcast the gradient of a reduction back over the reduced dims (differentiable)."""
    if not keepdim and dims:
        grad = grad.reshape(_kept_shape(shape, dims))
    return expand_to(grad, shape)


def _const(arr, like):
    """A constant (no-grad) tensor with ``like``'s dtype."""
    return Tensor._make(np.asarray(arr, like._array.dtype))


def _dim_args(dim):
    """``dim`` as None (all dims), an int or a tuple (a list is a tuple; an empty one means all dims)."""
    if isinstance(dim, Tensor):
        dim = dim.tolist()
    if isinstance(dim, list):
        dim = tuple(dim)
    if isinstance(dim, tuple) and len(dim) == 0:
        dim = None
    return dim


def _axis(dims, ndim):
    return None if dims is None else normalize_dims(dims, ndim)


def _dtype_arg(dtype):
    return None if dtype is None else _dtype.to_dtype(dtype)


def _int_to_long(x, dtype):
    """torch's rule for sum-like ops: an explicit dtype wins; integer and bool inputs accumulate in int64."""
    if dtype is not None:
        return x.astype(dtype.np)
    if x.dtype.kind in "biu":
        return x.astype(np.int64)
    return x


def _legacy(a):
    return _dtype.from_numpy_dtype(a.dtype)._legacy


def _nonempty_dim(op, x, d):
    if x.ndim and x.shape[d] == 0:
        raise IndexError(f"{op}(): Expected reduction dim {d} to have non-zero size.")


def _evenly(x, res_keep, axis, nan_match):
    """Weights that split a gradient evenly between the elements equal to the reduced value (ties).

    ``nan_match`` (torch's ``evenly_distribute_backward``: ``max()``, ``median()``): a NaN result shares the
    gradient between the NaNs. Otherwise (``amax``, ``aminmax``: ``grad / count * mask``) a line whose result is
    NaN matches nothing and its gradient is NaN, as in torch.
    """
    if x.dtype.kind not in "fc":
        return None
    mask = (x == res_keep)
    if nan_match:
        mask |= np.isnan(x) & np.isnan(res_keep)
    cnt = mask.sum(axis=axis, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (mask / cnt).astype(x.dtype)


def _write_out(op, result, out):
    """torch's ``out=``: the result is copied (cast, resized with torch's warning) into ``out``, which is returned.

    ``out=`` does not record a graph, so an input that requires grad is torch's error.
    """
    if out is None:
        return result
    if isinstance(result, tuple):
        outs = tuple(_write_out(op, r, o) for r, o in zip(result, out))
        return type(result)(*outs) if hasattr(result, "_fields") else outs
    if _state.enabled and (result._rg or out._rg):
        raise RuntimeError(f"{op}(): functions with out=... arguments don't support automatic differentiation, "
                           "but one of the arguments requires grad.")
    arr = result._array
    if out._array.shape != arr.shape:
        if out._array.size:
            warnings.warn(f"An output with one or more elements was resized since it had shape "
                          f"[{', '.join(map(str, out._array.shape))}], which does not match the required output "
                          f"shape [{', '.join(map(str, arr.shape))}]. This behavior is deprecated, and in a future "
                          "PyTorch release outputs will not be resized unless they have zero elements. You can "
                          "explicitly reuse an out tensor t by resizing it, inplace, to zero elements with "
                          "t.resize_(0).", UserWarning, stacklevel=3)
        out._array = np.empty(arr.shape, out._array.dtype)
    np.copyto(out._array, arr, casting="unsafe")
    out._vc[0] += 1
    return out


# --- gather / scatter along a dim (the backward pair of index-selecting reductions) --------------------------
def _open_index(idx, dim):
    ix = list(np.indices(idx.shape, sparse=True))
    ix[dim] = idx
    return tuple(ix)


class _TakeAlong(Primitive):
    """``x`` gathered at ``idx`` along ``dim`` (``idx`` has x's ndim); backward scatters back."""

    node_name = "GatherBackward0"

    @staticmethod
    def forward(ctx, x, idx, dim):
        ctx.idx, ctx.dim, ctx.shape = idx, dim, x.shape
        return np.take_along_axis(x, idx, dim)

    @staticmethod
    def backward(ctx, grad):
        return _PutAlong.apply(grad, ctx.idx, ctx.dim, ctx.shape), None, None


class _PutAlong(Primitive):
    """Zeros of ``shape`` with ``g`` added at ``idx`` along ``dim`` (duplicates accumulate)."""

    node_name = "ScatterAddBackward0"

    @staticmethod
    def forward(ctx, g, idx, dim, shape):
        ctx.idx, ctx.dim = idx, dim
        out = np.zeros(shape, g.dtype)
        if idx.shape[dim] == 1:           # one index per line (max, median, mode): no duplicates to add up
            np.put_along_axis(out, idx, g, dim)
        elif idx.size:
            np.add.at(out, _open_index(idx, dim), g)
        return out

    @staticmethod
    def backward(ctx, gg):
        return _TakeAlong.apply(gg, ctx.idx, ctx.dim), None, None, None


def _select_backward(grad, idx_keep, dim, shape, keepdim, zero_d):
    """Gradient of a value-selecting reduction: ``grad`` placed at the selected indices, zero elsewhere."""
    if zero_d:
        return grad.reshape(shape)
    if not keepdim:
        grad = grad.unsqueeze(dim)
    return _PutAlong.apply(grad, idx_keep, dim, shape)


# --- sum / mean / nansum / nanmean ------------------------------------------------------------------------------
class Sum(Primitive):
    """Sum over ``dims`` (all when None); integer and bool inputs sum to int64, as in torch."""

    array_backward = True

    @staticmethod
    def forward(ctx, x, dims=None, keepdim=False, dtype=None):
        ctx.shape, ctx.dims, ctx.keepdim = x.shape, normalize_dims(dims, x.ndim), keepdim
        x = _int_to_long(x, dtype)
        axis = ctx.dims if dims is not None else None
        return np.asarray(np.sum(x, axis=axis, keepdims=keepdim), x.dtype)

    @staticmethod
    def backward(ctx, grad):
        return _expand_back(grad, ctx.shape, ctx.dims, ctx.keepdim), None, None, None


class SumDim(Sum):
    node_name = "SumBackward1"
    array_backward = True


class Nansum(Primitive):
    """Sum treating NaN as zero; the gradient is zero at the NaNs."""

    @staticmethod
    def forward(ctx, x, dims=None, keepdim=False, dtype=None):
        ctx.shape, ctx.dims, ctx.keepdim = x.shape, normalize_dims(dims, x.ndim), keepdim
        ctx.mask = ~np.isnan(x) if x.dtype.kind in "fc" else None
        x = _int_to_long(x, dtype)
        axis = ctx.dims if dims is not None else None
        return np.asarray(np.nansum(x, axis=axis, keepdims=keepdim), x.dtype)

    @staticmethod
    def backward(ctx, grad):
        g = _expand_back(grad, ctx.shape, ctx.dims, ctx.keepdim)
        return (g * Tensor._make(ctx.mask) if ctx.mask is not None else g), None, None, None


class Mean(Primitive):
    """Mean over ``dims`` (all when None); floating inputs only, as in torch."""

    array_backward = True

    @staticmethod
    def forward(ctx, x, dims=None, keepdim=False, dtype=None):
        if dtype is not None:
            x = x.astype(dtype.np)
        elif x.dtype.kind not in "fc":
            raise RuntimeError("mean(): could not infer output dtype. Input dtype must be either a floating "
                               f"point or complex dtype. Got: {_legacy(x)}")
        ctx.shape, ctx.dims, ctx.keepdim = x.shape, normalize_dims(dims, x.ndim), keepdim
        ctx.count = int(np.prod([x.shape[d] for d in ctx.dims])) if x.ndim else 1
        with np.errstate(invalid="ignore", divide="ignore"):
            out = np.mean(x, axis=ctx.dims if dims is not None else None, keepdims=keepdim)
        return np.asarray(out, x.dtype)

    @staticmethod
    def backward(ctx, grad):
        return _expand_back(grad, ctx.shape, ctx.dims, ctx.keepdim) / ctx.count, None, None, None


class MeanDim(Mean):
    node_name = "MeanBackward1"
    array_backward = True


def sum(input, dim=None, keepdim=False, *, dtype=None, out=None):  # noqa: A001 - torch's name
    """Sum of elements, over all dims or ``dim`` (int or tuple), keeping reduced dims if ``keepdim``.

    >>> tapegrad.tensor([[1., 2.], [3., 4.]]).sum(0)
    tensor([4., 6.])
    """
    dim = _dim_args(dim)
    return _write_out("sum", (Sum if dim is None else SumDim).apply(input, dim, keepdim, _dtype_arg(dtype)), out)


def mean(input, dim=None, keepdim=False, *, dtype=None, out=None):
    """Mean of elements, over all dims or ``dim`` (int or tuple).

    >>> tapegrad.tensor([1., 2., 3.]).mean()
    tensor(2.)
    """
    dim = _dim_args(dim)
    return _write_out("mean", (Mean if dim is None else MeanDim).apply(input, dim, keepdim, _dtype_arg(dtype)), out)


def nansum(input, dim=None, keepdim=False, *, dtype=None, out=None):
    """Sum treating NaN as zero.

    >>> tapegrad.tensor([1., float('nan'), 2.]).nansum()
    tensor(3.)
    """
    return _write_out("nansum", Nansum.apply(input, _dim_args(dim), keepdim, _dtype_arg(dtype)), out)


def nanmean(input, dim=None, keepdim=False, *, dtype=None, out=None):
    """Mean of the non-NaN elements (``nansum / count``).

    >>> tapegrad.tensor([1., float('nan'), 2.]).nanmean()
    tensor(1.5000)
    """
    a = input._array
    if dtype is None and a.dtype.kind not in "fc":
        raise RuntimeError(f"nanmean(): expected input to have floating point or complex dtype but got {_legacy(a)}")
    dim = _dim_args(dim)
    total = nansum(input, dim, keepdim, dtype=dtype)
    cnt = np.sum(~np.isnan(a), axis=_axis(dim, a.ndim), keepdims=keepdim)
    return _write_out("nanmean", total / Tensor._make(np.asarray(cnt, total._array.dtype)), out)


# --- prod --------------------------------------------------------------------------------------------------------
def _exclusive_prod(x, d):
    """Product of all the other elements of each line along ``d`` (no division: right with zeros)."""
    n = x._array.shape[d]
    ones = _const(np.ones(_kept_shape(x._array.shape, (d,))), x)
    from .shape import cat
    left = (ones if n == 1 else cat([ones, x.narrow(d, 0, n - 1)], d)).cumprod(d)
    right = (ones if n == 1 else cat([x.narrow(d, 1, n - 1), ones], d)).flip(d).cumprod(d).flip(d)
    return left * right


def _prod_backward(grad_keep, x, result_keep, d):
    """d prod / d x along dim ``d`` (grad and result have the reduced dim kept)."""
    if x._array.size == 0:
        return x * 0
    if not (x._array == 0).any():
        return grad_keep * result_keep / x
    return grad_keep * _exclusive_prod(x, d)


class Prod(Primitive):
    """Product over all elements or one dim; integer and bool inputs give int64."""

    @staticmethod
    def forward(ctx, x, dim=None, keepdim=False, dtype=None):
        ctx.shape, ctx.dim, ctx.keepdim = x.shape, dim, keepdim
        ctx.save_result(0)
        x = _int_to_long(x, dtype)
        return np.asarray(np.prod(x, axis=dim, keepdims=keepdim), x.dtype)

    @staticmethod
    def backward(ctx, grad):
        result, x = ctx.saved_tensors
        if ctx.dim is None:
            flat = x.reshape(-1)
            g = _prod_backward(grad.reshape(1), flat, result.reshape(1), 0).reshape(ctx.shape)
        else:
            d = ctx.dim
            if not ctx.keepdim and x._array.ndim:
                grad, result = grad.unsqueeze(d), result.unsqueeze(d)
            g = grad if x._array.ndim == 0 else _prod_backward(grad, x, result, d)
        return g, None, None, None


class ProdDim(Prod):
    node_name = "ProdBackward1"


def prod(input, dim=None, keepdim=False, *, dtype=None, out=None):
    """Product of elements, over all or along ``dim`` (an int); zeros are handled exactly in the gradient.

    >>> tapegrad.tensor([1., 2., 3.]).prod()
    tensor(6.)
    """
    if dim is None:
        return _write_out("prod", Prod.apply(input, None, False, _dtype_arg(dtype)), out)
    d = normalize_dim(dim, input._array.ndim)
    return _write_out("prod", ProdDim.apply(input, d if input._array.ndim else None, keepdim, _dtype_arg(dtype)), out)


# --- var / std -----------------------------------------------------------------------------------------------------
def _var_args(op, input, dim, unbiased, keepdim, correction):
    if isinstance(dim, bool):        # var(x, True): the legacy ``unbiased`` positional
        dim, unbiased = None, dim
    if unbiased is not None and correction is not None:
        raise RuntimeError(f"{op}: cannot specify both `unbiased` and `correction`")
    if correction is None:
        correction = 1 if unbiased is None or unbiased else 0
    a = input._array
    if a.dtype.kind not in "fc":
        raise RuntimeError("std and var only support floating point and complex dtypes")
    dim = _dim_args(dim)
    dims = normalize_dims(dim, a.ndim)
    n = int(np.prod([a.shape[d] for d in dims])) if a.ndim else 1
    dof = _bmax(n - correction, 0)
    if dof <= 0:
        warnings.warn(f"{op}(): degrees of freedom is <= 0. Correction should be strictly less than the reduction "
                      "factor (input numel divided by output numel).", UserWarning, stacklevel=3)
    return dims, float(correction), keepdim, dof


def _var_np(x, dims, keepdim, dof):
    with np.errstate(invalid="ignore", divide="ignore"):
        m = np.mean(x, axis=dims, keepdims=True)
        ss = np.sum(np.abs(x - m) ** 2, axis=dims, keepdims=keepdim)
        return np.asarray(np.true_divide(ss, dof), x.dtype), np.asarray(np.squeeze(m, dims) if not keepdim else m,
                                                                          x.dtype)


def _var_backward(grad, x, dims, keepdim, dof):
    g = _expand_back(grad, x._array.shape, dims, keepdim)
    with np.errstate(divide="ignore"):
        f = np.true_divide(2.0, dof)
    return g * (x - x.mean(dims, keepdim=True)) * float(f)


def _std_grad(grad, result):
    """``grad / (2 std)``, zero where std is zero (as torch)."""
    zero = result._array == 0
    return grad / (result * 2 + _const(zero, result)) * _const(~zero, result)


class Var(Primitive):
    """Variance with ``correction`` (Bessel's by default), over all dims or ``dims``."""

    @staticmethod
    def forward(ctx, x, dims, correction, keepdim, dof):
        ctx.dims, ctx.keepdim, ctx.dof = dims, keepdim, dof
        ctx.save_inputs(0)
        return _var_np(x, dims, keepdim, dof)[0]

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        return _var_backward(grad, x, ctx.dims, ctx.keepdim, ctx.dof), None, None, None, None


class Std(Primitive):
    """Standard deviation: the square root of ``var``."""

    @staticmethod
    def forward(ctx, x, dims, correction, keepdim, dof):
        ctx.dims, ctx.keepdim, ctx.dof = dims, keepdim, dof
        ctx.save_result(0)
        return np.sqrt(_var_np(x, dims, keepdim, dof)[0])

    @staticmethod
    def backward(ctx, grad):
        result, x = ctx.saved_tensors
        return _var_backward(_std_grad(grad, result), x, ctx.dims, ctx.keepdim, ctx.dof), None, None, None, None


class VarMean(Primitive):
    """``(var, mean)`` in one pass."""

    @staticmethod
    def forward(ctx, x, dims, correction, keepdim, dof):
        ctx.dims, ctx.keepdim, ctx.dof = dims, keepdim, dof
        ctx.count = int(np.prod([x.shape[d] for d in dims])) if x.ndim else 1
        ctx.save_inputs(0)
        return _var_np(x, dims, keepdim, dof)

    @staticmethod
    def backward(ctx, gvar, gmean):
        x, = ctx.saved_tensors
        shape = x._array.shape
        return (_var_backward(gvar, x, ctx.dims, ctx.keepdim, ctx.dof)
                + _expand_back(gmean, shape, ctx.dims, ctx.keepdim) / _bmax(ctx.count, 1)), None, None, None, None


class StdMean(Primitive):
    """``(std, mean)`` in one pass."""

    @staticmethod
    def forward(ctx, x, dims, correction, keepdim, dof):
        ctx.dims, ctx.keepdim, ctx.dof = dims, keepdim, dof
        ctx.count = int(np.prod([x.shape[d] for d in dims])) if x.ndim else 1
        ctx.save_result(0)
        v, m = _var_np(x, dims, keepdim, dof)
        return np.sqrt(v), m

    @staticmethod
    def backward(ctx, gstd, gmean):
        result, x = ctx.saved_tensors
        shape = x._array.shape
        return (_var_backward(_std_grad(gstd, result), x, ctx.dims, ctx.keepdim, ctx.dof)
                + _expand_back(gmean, shape, ctx.dims, ctx.keepdim) / _bmax(ctx.count, 1)), None, None, None, None


def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None, out=None):
    """Variance over all dims or ``dim`` with ``correction`` (default 1; ``unbiased=False`` means 0).

    >>> tapegrad.tensor([1., 2., 3., 4.]).var()
    tensor(1.6667)
    """
    return _write_out("var", Var.apply(input, *_var_args("var", input, dim, unbiased, keepdim, correction)), out)


def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None, out=None):
    """Standard deviation over all dims or ``dim`` with ``correction`` (default 1).

    >>> tapegrad.tensor([1., 2., 3., 4.]).std()
    tensor(1.2910)
    """
    return _write_out("std", Std.apply(input, *_var_args("std", input, dim, unbiased, keepdim, correction)), out)


def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """``(var, mean)`` over all dims or ``dim``.

    >>> tapegrad.var_mean(tapegrad.tensor([1., 2., 3.]))
    (tensor(1.), tensor(2.))
    """
    return VarMean.apply(input, *_var_args("var_mean", input, dim, unbiased, keepdim, correction))


def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """``(std, mean)`` over all dims or ``dim``.

    >>> tapegrad.std_mean(tapegrad.tensor([1., 2., 3.]))
    (tensor(1.), tensor(2.))
    """
    return StdMean.apply(input, *_var_args("std_mean", input, dim, unbiased, keepdim, correction))


# --- extrema split evenly between ties ------------------------------------------------------------------------------
def _evenly_cls(name, node_name, np_fn, op, nan_match=True):
    """A reduction whose gradient is split evenly between the elements equal to the result (``max()``, ``amax``)."""

    def forward(ctx, x, dims, keepdim):
        axis = None if dims is None else normalize_dims(dims, x.ndim)
        if x.size == 0:
            if dims is None or not x.ndim:
                if op in ("max", "min"):
                    raise RuntimeError(f"{op}(): Expected reduction dim to be specified for input.numel() == 0. "
                                       "Specify the reduction dim with the 'dim' argument.")
                if op in ("amax", "amin"):
                    raise IndexError(f"{op}(): Expected reduction dim to be specified for input.numel() == 0.")
            else:
                for d in axis:
                    _nonempty_dim(op, x, d)
        ctx.shape, ctx.dims, ctx.keepdim = x.shape, axis if axis is not None else tuple(range(x.ndim)), keepdim
        res = np_fn(x, axis)
        keep = res.reshape(_kept_shape(x.shape, ctx.dims)) if x.ndim else res
        ctx.w = _evenly(x, keep, axis, nan_match)
        if keepdim:
            res = keep
        return np.asarray(res, x.dtype)

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
        if x.size == 0 and (dim is None or not x.ndim or x.shape[dim] == 0):
            raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the operation has no "
                               "identity.")
        axis = None if dim is None else ((dim,) if x.ndim else ())
        ctx.shape, ctx.dims, ctx.keepdim = x.shape, axis if axis is not None else tuple(range(x.ndim)), keepdim
        lo, hi = np.min(x, axis=axis), np.max(x, axis=axis)
        kshape = _kept_shape(x.shape, ctx.dims)
        ctx.wlo, ctx.whi = _evenly(x, lo.reshape(kshape), axis, False), _evenly(x, hi.reshape(kshape), axis, False)
        if keepdim:
            lo, hi = lo.reshape(kshape), hi.reshape(kshape)
        return np.asarray(lo, x.dtype), np.asarray(hi, x.dtype)

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
        _nonempty_dim(op, a, dim)
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
        from .elementwise import maximum
        return maximum(input, dim if other is None else other)
    if dim is None:
        return _write_out("max", MaxAll.apply(input, None, False), out)
    return _write_out("max", _with_dim(MaxDim, input, dim, keepdim, "max"), out)


def min(input, dim=None, keepdim=False, *, other=None, out=None):  # noqa: A001 - torch's name
    """The smallest element; with ``dim``, ``(values, indices)`` along it; with a tensor, ``minimum``.

    >>> tapegrad.tensor([3., 1., 2.]).min()
    tensor(1.)
    """
    if isinstance(dim, Tensor) or other is not None:
        from .elementwise import minimum
        return minimum(input, dim if other is None else other)
    if dim is None:
        return _write_out("min", MinAll.apply(input, None, False), out)
    return _write_out("min", _with_dim(MinDim, input, dim, keepdim, "min"), out)


def amax(input, dim=(), keepdim=False, *, out=None):
    """Max over ``dim`` (int or tuple; all when empty); ties share the gradient evenly.

    >>> tapegrad.tensor([[1., 5.], [3., 2.]]).amax(1)
    tensor([5., 3.])
    """
    return _write_out("amax", Amax.apply(input, _dim_args(dim), keepdim), out)


def amin(input, dim=(), keepdim=False, *, out=None):
    """Min over ``dim`` (int or tuple; all when empty); ties share the gradient evenly.

    >>> tapegrad.tensor([[1., 5.], [3., 2.]]).amin(1)
    tensor([1., 2.])
    """
    return _write_out("amin", Amin.apply(input, _dim_args(dim), keepdim), out)


def aminmax(input, *, dim=None, keepdim=False, out=None):
    """``(min, max)`` over all elements or ``dim``.

    >>> tapegrad.aminmax(tapegrad.tensor([1., 5., 3.]))
    tapegrad.return_types.aminmax(
    min=tensor(1.),
    max=tensor(5.))
    """
    d = None if dim is None else normalize_dim(dim, input._array.ndim)
    return _write_out("aminmax", return_types.aminmax(*Aminmax.apply(input, d, keepdim)), out)


def _arg(op, np_fn):
    def fn(input, dim=None, keepdim=False, *, out=None):
        a = input._array
        if a.dtype == np.bool_:
            raise RuntimeError(f"{op}(): does not support bool input")
        if dim is None:
            if a.size == 0:
                raise IndexError(f"{op}(): Expected reduction dim to be specified for input.numel() == 0.")
            r = np.asarray(np_fn(a.reshape(-1)), np.int64)
            return _write_out(op, Tensor._make(r.reshape((1,) * a.ndim) if keepdim else r), out)
        if isinstance(dim, (tuple, list)):
            raise TypeError(f"{op}(): argument 'dim' must be int, not {type(dim).__name__}")
        d = normalize_dim(dim, a.ndim)
        if a.ndim == 0:
            return _write_out(op, Tensor._make(np.asarray(0, np.int64)), out)
        _nonempty_dim(op, a, d)
        return _write_out(op, Tensor._make(np.asarray(np_fn(a, axis=d, keepdims=keepdim), np.int64)), out)
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
    if dim is None:
        return _write_out("median", MedianAll.apply(input, None, False), out)
    return _write_out("median", _with_dim(MedianDim, input, dim, keepdim, "median"), out)


def nanmedian(input, dim=None, keepdim=False, *, out=None):
    """``median`` ignoring NaNs.

    >>> tapegrad.tensor([1., float('nan'), 2.]).nanmedian()
    tensor(1.)
    """
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
    return _write_out("mode", _with_dim(Mode, input, dim, keepdim, "mode"), out)


# --- logsumexp -----------------------------------------------------------------------------------------------------
class Logsumexp(Primitive):
    """log(sum(exp(x))) over ``dims``, shifted by the max so that it is stable for large inputs."""

    @staticmethod
    def forward(ctx, x, dims, keepdim):
        if x.dtype.kind not in "fc":
            x = x.astype(_dtype.get_default_dtype().np)
        ctx.shape, ctx.dims, ctx.keepdim = x.shape, dims, keepdim
        ctx.save_result(0)
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            if x.size:
                m = np.max(x, axis=dims, keepdims=True)
                m = np.where(np.isfinite(m), m, 0)
            else:
                m = np.zeros(_kept_shape(x.shape, dims), x.dtype)
            out = np.log(np.sum(np.exp(x - m), axis=dims, keepdims=True)) + m
        if not keepdim:
            out = out.reshape([s for i, s in enumerate(x.shape) if i not in dims])
        return np.asarray(out, x.dtype)

    @staticmethod
    def backward(ctx, grad):
        result, x = ctx.saved_tensors
        g = _expand_back(grad, ctx.shape, ctx.dims, ctx.keepdim)
        r = _expand_back(result, ctx.shape, ctx.dims, ctx.keepdim)
        return g * (x - r).exp(), None, None


def logsumexp(input, dim, keepdim=False, *, out=None):
    """``log(sum(exp(input), dim))``, computed stably (``dim``: int or tuple).

    >>> tapegrad.tensor([1e4, 1e4]).logsumexp(0)
    tensor(10000.6934)
    """
    dim = _dim_args(dim)
    dims = normalize_dims(dim, input._array.ndim)
    return _write_out("logsumexp", Logsumexp.apply(input, dims, keepdim), out)


# --- scans ---------------------------------------------------------------------------------------------------------
def _scan_dim(x, dim):
    return normalize_dim(dim, x.ndim) if x.ndim else None


def _scan(np_fn, x, d, dtype):
    x = _int_to_long(x, dtype)
    if d is None:
        return np.asarray(np_fn(x.reshape(1), axis=0).reshape(()), x.dtype)
    return np.asarray(np_fn(x, axis=d), x.dtype)


def _rev_cumsum(g, d):
    if d is None:
        return g
    return g.flip(d).cumsum(d).flip(d)


class Cumsum(Primitive):
    """Running sum along ``dim``; integer and bool inputs give int64."""

    @staticmethod
    def forward(ctx, x, d, dtype=None):
        ctx.d = d
        return _scan(np.cumsum, x, d, dtype)

    @staticmethod
    def backward(ctx, grad):
        return _rev_cumsum(grad, ctx.d), None, None


def _cumprod_grad_zeros(g, x, out, d):
    """First-order gradient of cumprod with zeros, O(n) per line (NumPy: no graph is being recorded).

    With ``z`` the first zero of a line: before it, ``revcumsum(grad * out) / x`` (the outputs from ``z`` on are 0);
    at it, ``prod(x[:z]) * sum_{k >= z} grad_k * prod(x[z+1:k+1])``; after it, 0.
    """
    g, x, out = (np.moveaxis(a, d, -1) for a in (g, x, out))
    n = x.shape[-1]
    ar = np.arange(n)
    zero = x == 0
    z = np.where(zero.any(-1), zero.argmax(-1), n)[..., None]
    before = ar < z
    with np.errstate(invalid="ignore", divide="ignore"):
        rev = np.flip(np.cumsum(np.flip(g * out, -1), -1), -1)
        res = np.where(before, rev / np.where(before, x, 1), 0)
    q = np.cumprod(np.where(ar <= z, 1, x), -1)
    at_zero = np.sum(np.where(ar >= z, g * q, 0), -1, keepdims=True) * np.prod(np.where(before, x, 1), -1,
                                                                                 keepdims=True)
    res = res + np.where(ar == z, at_zero, 0)
    return np.moveaxis(res.astype(x.dtype, copy=False), -1, d)


def _cumprod_backward(grad, x, result, d):
    if d is None or x._array.size == 0:
        return grad
    if not (x._array == 0).any():
        return _rev_cumsum(grad * result, d) / x
    if not _state.enabled:    # first order only: the O(n) formula
        return Tensor._make(_cumprod_grad_zeros(grad._array, x._array, result._array, d))
    # create_graph: sum_{k >= i} grad_k * prod_{j <= k, j != i} x_j, with an (n, n) table per line (exact to any
    # order, O(n^2) like torch's double-differentiable path)
    n = x._array.shape[d]
    xm = x.movedim(d, -1)
    eye = np.eye(n, dtype=x._array.dtype)
    rows = xm.unsqueeze(-2).expand(xm._array.shape[:-1] + (n, n)) * _const(1 - eye, x) + _const(eye, x)
    table = rows.cumprod(-1) * _const(np.triu(np.ones((n, n))), x)
    return (table * grad.movedim(d, -1).unsqueeze(-2)).sum(-1).movedim(-1, d)


class Cumprod(Primitive):
    """Running product along ``dim``; the gradient is exact with zeros."""

    @staticmethod
    def forward(ctx, x, d, dtype=None):
        ctx.d = d
        ctx.save_result(0)
        return _scan(np.cumprod, x, d, dtype)

    @staticmethod
    def backward(ctx, grad):
        result, x = ctx.saved_tensors
        return _cumprod_backward(grad, x, result, ctx.d), None, None


def _cum_extreme_idx(x, d, largest):
    acc = np.maximum if largest else np.minimum
    vals = acc.accumulate(x, axis=d)
    hit = x == vals
    if x.dtype.kind == "f":
        hit |= np.isnan(x)
    ar = np.arange(x.shape[d]).reshape([-1 if i == d else 1 for i in range(x.ndim)])
    idx = np.maximum.accumulate(np.where(hit, ar, 0), axis=d)
    return vals, idx.astype(np.int64)


def _cum_select_cls(name, node_name, largest):
    def forward(ctx, x, d):
        ctx.d, ctx.shape = d, x.shape
        if d is None:
            return x.copy(), np.zeros((), np.int64)
        vals, idx = _cum_extreme_idx(x, d, largest)
        ctx.idx = idx
        return vals, idx

    def backward(ctx, grad, _gidx):
        if ctx.d is None:
            return grad, None
        return _PutAlong.apply(grad, ctx.idx, ctx.d, ctx.shape), None

    return type(name, (Primitive,), {"forward": staticmethod(forward), "backward": staticmethod(backward),
                                     "node_name": node_name, "__doc__": "running extreme (values, indices)"})


Cummax = _cum_select_cls("Cummax", "CummaxBackward0", True)
Cummin = _cum_select_cls("Cummin", "CumminBackward0", False)


def cumsum(input, dim, *, dtype=None, out=None):
    """Running sum along ``dim``.

    >>> tapegrad.tensor([1., 2., 3.]).cumsum(0)
    tensor([1., 3., 6.])
    """
    if out is not None and dtype is None:   # torch scans in the out tensor's dtype
        dtype = out.dtype
    return _write_out("cumsum", Cumsum.apply(input, _scan_dim(input._array, dim), _dtype_arg(dtype)), out)


def cumprod(input, dim, *, dtype=None, out=None):
    """Running product along ``dim``.

    >>> tapegrad.tensor([1., 2., 3.]).cumprod(0)
    tensor([1., 2., 6.])
    """
    if out is not None and dtype is None:   # torch scans in the out tensor's dtype
        dtype = out.dtype
    return _write_out("cumprod", Cumprod.apply(input, _scan_dim(input._array, dim), _dtype_arg(dtype)), out)


def cummax(input, dim, *, out=None):
    """Running max along ``dim`` with the index where it was reached (ties: the latest).

    >>> tapegrad.tensor([1., 3., 2.]).cummax(0).values
    tensor([1., 3., 3.])
    """
    return _write_out("cummax", return_types.cummax(*Cummax.apply(input, _scan_dim(input._array, dim))), out)


def cummin(input, dim, *, out=None):
    """Running min along ``dim`` with the index where it was reached (ties: the latest).

    >>> tapegrad.tensor([3., 1., 2.]).cummin(0).values
    tensor([3., 1., 1.])
    """
    return _write_out("cummin", return_types.cummin(*Cummin.apply(input, _scan_dim(input._array, dim))), out)


# --- logical reductions and counts ---------------------------------------------------------------------------------
def _logical(op, np_fn):
    def fn(input, dim=None, keepdim=False, *, out=None):
        a = input._array
        dim = _dim_args(dim)
        axis = _axis(dim, a.ndim)
        r = np.asarray(np_fn(a, axis=axis, keepdims=keepdim and dim is not None))
        return _write_out(op, Tensor._make(r.astype(np.uint8 if a.dtype == np.uint8 else np.bool_)), out)
    fn.__name__ = op
    fn.__doc__ = (f"Whether {'all' if op == 'all' else 'any'} elements are nonzero (over all or ``dim``); "
                  f"bool (uint8 for uint8 input).\n\n    >>> tapegrad.tensor([1, 0]).{op}()\n"
                  f"    tensor({op == 'any'})\n")
    return fn


all, any = _logical("all", np.all), _logical("any", np.any)  # noqa: A001 - torch's names


def count_nonzero(input, dim=None):
    """Number of nonzero elements (over all, or ``dim``: int or tuple), int64.

    >>> tapegrad.tensor([0., 1., 2.]).count_nonzero()
    tensor(2)
    """
    a = input._array
    dim = _dim_args(dim)
    return Tensor._make(np.asarray(np.count_nonzero(a, axis=_axis(dim, a.ndim)), np.int64))


# --- methods -------------------------------------------------------------------------------------------------------
bind(sum=sum, mean=mean, nansum=nansum, nanmean=nanmean, prod=prod, var=var, std=std, max=max, min=min,
     amax=amax, amin=amin, aminmax=lambda self, *, dim=None, keepdim=False: aminmax(self, dim=dim, keepdim=keepdim),
     argmax=argmax, argmin=argmin, median=median, nanmedian=nanmedian, mode=mode, logsumexp=logsumexp,
     cumsum=cumsum, cumprod=cumprod, cummax=cummax, cummin=cummin, all=all, any=any, count_nonzero=count_nonzero,
     cumsum_=lambda self, dim, *, dtype=None: apply_inplace(self, cumsum, dim, dtype=dtype),
     cumprod_=lambda self, dim, *, dtype=None: apply_inplace(self, cumprod, dim, dtype=dtype))
