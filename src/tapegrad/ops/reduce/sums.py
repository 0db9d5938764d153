# ruff: noqa: A001, A002 - torch's names (sum, max, all, any) and argument name (input)
"""Sums and moments: sum, mean, nansum, nanmean, prod, var, std, var_mean, std_mean, logsumexp; the logical
reductions all, any and count_nonzero.
"""

from __future__ import annotations

import warnings

import numpy as np

from ... import _dtype
from ...autograd.function import _active
from .._util import (Primitive, Tensor, _inside, array_op, bind, capturing, cj, linear_jvp, normalize_dim,
                     normalize_dims)
from ._common import (_axis, _bmax, _const, _dim_args, _dtype_arg, _expand_back, _int_to_long, _kept_shape, _legacy,
                      _write_out)


# --- sum / mean / nansum / nanmean ------------------------------------------------------------------------------
class Sum(Primitive):
    """Sum over ``dims`` (all when None); integer and bool inputs sum to int64, as in torch."""

    array_backward = True

    jvp = staticmethod(linear_jvp)   # linear: the op itself applied to the tangents

    @staticmethod
    def forward(ctx, x, dims=None, keepdim=False, dtype=None):
        ctx.shape, ctx.dims, ctx.keepdim = x.shape, normalize_dims(dims, x.ndim), keepdim
        x = _int_to_long(x, dtype)
        axis = ctx.dims if dims is not None else None
        return np.asarray(np.sum(x, axis=axis, keepdims=keepdim), x.dtype, order="C")

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
        return np.asarray(np.nansum(x, axis=axis, keepdims=keepdim), x.dtype, order="C")

    @staticmethod
    def backward(ctx, grad):
        g = _expand_back(grad, ctx.shape, ctx.dims, ctx.keepdim)
        return (g * Tensor._make(ctx.mask) if ctx.mask is not None else g), None, None, None


class Mean(Primitive):
    """Mean over ``dims`` (all when None); floating inputs only, as in torch."""

    array_backward = True

    jvp = staticmethod(linear_jvp)   # linear: the op itself applied to the tangents

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
        return np.asarray(out, x.dtype, order="C")

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
    if out is not None and dtype is None:   # torch sums in the out tensor's dtype
        dtype = out.dtype
    return _write_out("sum", (Sum if dim is None else SumDim).apply(input, dim, keepdim, _dtype_arg(dtype)), out)


def _mean_dtype_error(op, dtype):
    return RuntimeError(f"{op}(): could not infer output dtype. Optional dtype must be either a floating point or "
                        f"complex dtype. Got: {dtype._legacy}")


def mean(input, dim=None, keepdim=False, *, dtype=None, out=None):
    """Mean of elements, over all dims or ``dim`` (int or tuple).

    >>> tapegrad.tensor([1., 2., 3.]).mean()
    tensor(2.)
    """
    dim = _dim_args(dim)
    dtype = _dtype_arg(dtype)
    if dtype is not None and not (dtype.is_floating_point or dtype.is_complex):
        raise _mean_dtype_error("mean", dtype)
    res = (Mean if dim is None else MeanDim).apply(input, dim, keepdim, dtype)
    return _write_out("mean", res, out,
                      error="mean.dtype_out(): input types can't be cast to the desired output type {o}")

_NANSUM_OUT = (NotImplementedError, "\"nansum_cpu\" not implemented for '{o}'")   # torch's words: out not floating



def nansum(input, dim=None, keepdim=False, *, dtype=None, out=None):
    """Sum treating NaN as zero.

    >>> tapegrad.tensor([1., float('nan'), 2.]).nansum()
    tensor(3.)
    """
    res = Nansum.apply(input, _dim_args(dim), keepdim, _dtype_arg(dtype))
    return _write_out("nansum", res, out, dtype="kind", error=_NANSUM_OUT)


def nanmean(input, dim=None, keepdim=False, *, dtype=None, out=None):
    """Mean of the non-NaN elements (``nansum / count``).

    >>> tapegrad.tensor([1., float('nan'), 2.]).nanmean()
    tensor(1.5000)
    """
    a = input._array
    if dtype is not None and not (_dtype.to_dtype(dtype).is_floating_point or _dtype.to_dtype(dtype).is_complex):
        raise _mean_dtype_error("nanmean", _dtype.to_dtype(dtype))
    if dtype is None and a.dtype.kind not in "fc":
        raise RuntimeError(f"nanmean(): expected input to have floating point or complex dtype but got {_legacy(a)}")
    dim = _dim_args(dim)
    total = nansum(input, dim, keepdim, dtype=dtype)
    if _active[0] and capturing():     # (compile's capture: the count as ops, recomputed by each replay)
        cnt = (~input.isnan()).sum(dim, keepdim).to(total.dtype)
        return _write_out("nanmean", total / cnt, out, dtype="kind", error=_NANSUM_OUT)
    cnt = np.sum(~np.isnan(a), axis=_axis(dim, a.ndim), keepdims=keepdim)
    res = total / Tensor._make(np.asarray(cnt, total._array.dtype))
    return _write_out("nanmean", res, out, dtype="kind", error=_NANSUM_OUT)


# --- prod --------------------------------------------------------------------------------------------------------
def _exclusive_prod(x, d):
    """Product of all the other elements of each line along ``d`` (no division: right with zeros)."""
    n = x._array.shape[d]
    ones = _const(np.ones(_kept_shape(x._array.shape, (d,))), x)
    from ..shape import cat
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
        if x.dtype.kind == "c":
            ctx._cplx = True
        return np.asarray(np.prod(x, axis=dim, keepdims=keepdim), x.dtype, order="C")

    @staticmethod
    def backward(ctx, grad):
        result, x = ctx.saved_tensors
        if ctx._cplx:      # the conjugate derivative: the same products of the conjugates
            result, x = cj(result), cj(x)
        if ctx.dim is None:
            if np.count_nonzero(x._array == 0) > 1:     # torch: two zeros make every partial product 0, even
                return Tensor._make(np.zeros_like(x._array)), None, None, None   # next to a NaN or an inf
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
    if out is not None and dtype is None:   # torch multiplies in the out tensor's dtype
        dtype = out.dtype
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
    if x.dtype == np.float16:       # torch accumulates Half in float32 and rounds the results once
        v, m = _var_np(x.astype(np.float32), dims, keepdim, dof)
        return v.astype(np.float16), m.astype(np.float16)
    with np.errstate(invalid="ignore", divide="ignore"):
        m = np.mean(x, axis=dims, keepdims=True)
        ss = np.sum(np.abs(x - m) ** 2, axis=dims, keepdims=keepdim)
        real = x.real.dtype           # (the variance of complex numbers is real: the mean of |x - mean|^2)
        return (np.asarray(np.true_divide(ss, dof), real, order="C"),
                np.asarray(np.squeeze(m, dims) if not keepdim else m, x.dtype, order="C"))


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
        if x.dtype == np.float16:       # (the root of the float32 variance, rounded once, as torch)
            return np.sqrt(_var_np(x.astype(np.float32), dims, keepdim, dof)[0]).astype(np.float16)
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
        if x.dtype == np.float16:       # (the root of the float32 variance, rounded once, as torch)
            v, m = _var_np(x.astype(np.float32), dims, keepdim, dof)
            return np.sqrt(v).astype(np.float16), m.astype(np.float16)
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


# --- logsumexp -----------------------------------------------------------------------------------------------------
class Logsumexp(Primitive):
    """log(sum(exp(x))) over ``dims``, shifted by the max so that it is stable for large inputs."""

    @staticmethod
    def forward(ctx, x, dims, keepdim):
        if x.dtype.kind not in "fc":
            x = x.astype(_dtype.get_default_dtype().np)
        ctx.shape, ctx.dims, ctx.keepdim = x.shape, dims, keepdim
        ctx.save_result(0)
        if x.dtype.kind == "c":
            ctx._cplx = True
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            if x.size:
                m = np.max(x.real, axis=dims, keepdims=True)      # (complex: shifted by the largest real part)
                m = np.where(np.isfinite(m), m, 0)
            else:
                m = np.zeros(_kept_shape(x.shape, dims), x.dtype)
            out = np.log(np.sum(np.exp(x - m), axis=dims, keepdims=True)) + m
        if not keepdim:
            out = out.reshape([s for i, s in enumerate(x.shape) if i not in dims])
        return np.asarray(out, x.dtype, order="C")

    @staticmethod
    def backward(ctx, grad):
        result, x = ctx.saved_tensors
        g = _expand_back(grad, ctx.shape, ctx.dims, ctx.keepdim)
        r = _expand_back(result, ctx.shape, ctx.dims, ctx.keepdim)
        e = (x - r).exp()
        return g * (cj(e) if ctx._cplx else e), None, None


def logsumexp(input, dim, keepdim=False, *, out=None):
    """``log(sum(exp(input), dim))``, computed stably (``dim``: int or tuple).

    >>> tapegrad.tensor([1e4, 1e4]).logsumexp(0)
    tensor(10000.6934)
    """
    dim = _dim_args(dim)
    dims = normalize_dims(dim, input._array.ndim)
    return _write_out("logsumexp", Logsumexp.apply(input, dims, keepdim), out,
                      error="logsumexp(): Expected floating point type for result tensor, but got: {o}")


# --- logical reductions and counts ---------------------------------------------------------------------------------
def _logical(op, np_fn):
    def fn(input, dim=None, keepdim=False, *, out=None):
        if _active[0] and not _inside[0] and out is None:      # (a transform sees it as an op)
            return array_op(fn, False, (input, dim, keepdim))
        a = input._array
        dim = _dim_args(dim)
        axis = _axis(dim, a.ndim)
        r = np.asarray(np_fn(a, axis=axis, keepdims=keepdim and dim is not None))
        res = Tensor._make(np.asarray(r, np.uint8 if a.dtype == np.uint8 else np.bool_, order="C"))
        return _write_out(op, res, out, dtype="same", error=op + " only supports bool tensor for result, got: {o}")
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
    if _active[0] and not _inside[0]:      # (a transform sees it as an op)
        return array_op(count_nonzero, False, (input, dim))
    a = input._array
    dim = _dim_args(dim)
    return Tensor._make(np.asarray(np.count_nonzero(a, axis=_axis(dim, a.ndim)), np.int64, order="C"))


def hash_tensor(input, dim=None, *, keepdim=False, mode=0, out=None):
    """A hash of the elements (over all, or ``dim``): each element widened to its 64-bit float or integer kind,
    read as uint64 bits, and the bits xor-ed together (mode 0, torch's only mode). uint64.

    >>> tapegrad.hash_tensor(tapegrad.tensor([1., 2.]))
    tensor(9223372036854775808, dtype=tapegrad.uint64)
    """
    if _active[0] and not _inside[0] and out is None:      # (a transform sees it as an op)
        return array_op(hash_tensor, False, (input, dim), dict(keepdim=keepdim, mode=mode))
    if mode != 0:
        raise RuntimeError(f"Unknown hash_tensor mode: {mode}")
    a = input._array
    if a.dtype.kind == "c":
        raise NotImplementedError(f'"xor_sum_cpu" not implemented for '
                                  f"'{_dtype.from_numpy_dtype(a.dtype)._legacy}'")
    dim = _dim_args(dim)
    if dim is None and a.size == 0:
        raise RuntimeError("hash_tensor: Expected reduction dim to be specified for input.numel() == 0. Specify "
                           "the reduction dim with the 'dim' argument.")
    axis = _axis(dim, a.ndim)
    for d in (() if dim is None or a.ndim == 0 else (dim,) if isinstance(dim, int) else dim):   # (named as given)
        if a.shape[d] == 0:
            raise IndexError(f"hash_tensor: Expected reduction dim {d} to have non-zero size.")
    wide = a.astype(np.float64 if a.dtype.kind == "f" else np.int64)
    bits = np.bitwise_xor.reduce(wide.view(np.uint64), axis=axis, keepdims=keepdim)
    return _write_out("hash_tensor", Tensor._make(np.asarray(bits, np.uint64)), out, dtype="same",
                      error="Expected result to be of dtype uint64, but got {o}")


bind(sum=sum, mean=mean, nansum=nansum, nanmean=nanmean, prod=prod, var=var, std=std, logsumexp=logsumexp,
     all=all, any=any, count_nonzero=count_nonzero, hash_tensor=hash_tensor)
