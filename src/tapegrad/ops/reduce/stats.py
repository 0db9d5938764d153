# ruff: noqa: A002 - torch's argument names (input, range)
"""Statistics: quantile / nanquantile, cov / corrcoef, dist, renorm; and counting: histc, histogram,
histogramdd, bincount.

quantile, cov and corrcoef are compositions (sort, gather, lerp, mm...), as torch's, so their gradients come
from those ops; dist and renorm have their own nodes (DistBackward0, RenormBackward0) whose backwards are
torch's formulas in tapegrad ops. The counting ops have no gradient (bincount's weights: grad_fn
``NotImplemented``, as torch's).
"""

from __future__ import annotations

import builtins
import math
import warnings

import numpy as np

from ... import _dtype, _meta
from .._util import Primitive, Tensor, apply_inplace, bind, broadcast_or_error, normalize_dim, transform_visible
from ._common import _write_out, return_types
from .._util import autocast_listed

_range = builtins.range
_CNAMES = {"float32": "float", "float64": "double", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
           "int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char", "uint8": "unsigned char",
           "bool": "bool", "complex64": "c10::complex<float>", "complex128": "c10::complex<double>"}


def _need_tensor(op, name, pos, v):
    if not isinstance(v, Tensor):
        raise TypeError(f"{op}(): argument '{name}' (position {pos}) must be Tensor, not {type(v).__name__}")


def _legacy(t):
    return t.dtype._legacy


# --- quantile, nanquantile ---------------------------------------------------------------------------------------
_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile(name, input, q, dim, keepdim, interpolation, out, ignore_nan):
    _need_tensor(name, "input", 1, input)
    op = "quantile"            # (torch's messages say quantile() for nanquantile too)
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError(f"{op}() interpolation must be one of linear, lower, higher, midpoint or nearest, but "
                           f"got {interpolation}")
    a = input._array
    if isinstance(q, Tensor):
        qa = q._array
    else:
        if not 0 <= q <= 1:
            raise RuntimeError(f"{op}() q must be in the range [0, 1] but got {q}")
        qa = np.asarray(q, a.dtype if a.dtype.kind == "f" else np.float64)
    if a.size == 0:
        raise RuntimeError(f"{op}() input tensor must be non-empty")
    if qa.ndim > 1:
        raise RuntimeError(f"{op}() q must be a scalar or 1D tensor")
    if a.dtype not in (np.float32, np.float64):
        raise RuntimeError(f"{op}() input tensor must be either float or double dtype")
    if qa.dtype != a.dtype:
        raise RuntimeError(f"{op}() q tensor must be same dtype as the input tensor")
    if not np.all((qa >= 0) & (qa <= 1)):
        raise RuntimeError(f"{op}() q values must be in the range [0, 1]")
    if a.size > 2 ** 24:
        raise RuntimeError(f"{op}() input tensor is too large")
    nd = a.ndim
    if dim is None:
        x = input.reshape(-1)
        kept = (1,) * nd if keepdim else ()
    else:
        d = normalize_dim(dim, nd)
        x = input.reshape(1) if nd == 0 else input.movedim(d, -1)
        kept = tuple(1 if k == d else s for k, s in enumerate(a.shape)) if keepdim else \
            tuple(s for k, s in enumerate(a.shape) if k != d)
    xs = x.sort(-1).values                             # (NaN sorts last)
    sa = xs._array
    n = sa.shape[-1]
    qv = np.atleast_1d(qa)
    nan = np.isnan(sa)
    if ignore_nan:          # ranks among the non-NaN values; rows of NaN only give NaN (the last element)
        scale = np.sum(~nan, -1, keepdims=True).astype(a.dtype) - 1
        ranks = qv * scale
        last = ranks < 0
    else:                   # a row with a NaN gives NaN (the last element)
        scale = np.full(sa.shape[:-1] + (1,), n - 1, a.dtype)
        ranks = qv * scale
        last = np.broadcast_to(nan.any(-1, keepdims=True), ranks.shape)
    ranks = np.asarray(np.where(last, a.dtype.type(n - 1), ranks), a.dtype)
    below = np.floor(ranks)
    if interpolation in ("lower", "higher", "nearest"):
        pick = {"lower": below, "higher": np.ceil(ranks), "nearest": np.rint(ranks)}[interpolation]
        res = xs.gather(-1, Tensor._make(pick.astype(np.int64)))
    else:
        above = np.ceil(ranks)
        if interpolation == "midpoint":
            weights = Tensor._make(np.where(above > below, 0.5, 0.0).astype(a.dtype))
        elif isinstance(q, Tensor):      # torch's ranks q * (count - 1) are differentiable in q: so are the weights
            weights = (q * Tensor._make(scale)).where(Tensor._make(~last), a.dtype.type(n - 1)) - \
                Tensor._make(below)
        else:
            weights = Tensor._make(ranks - below)
        lo = xs.gather(-1, Tensor._make(below.astype(np.int64)))
        hi = xs.gather(-1, Tensor._make(above.astype(np.int64)))
        res = lo.lerp(hi, weights)
    res = res.movedim(-1, 0)                          # (q, ...)
    shape = ((qv.size,) if qa.ndim == 1 else ()) + kept
    return _write_out(name, res.reshape(shape), out, dtype="same",
                      error="quantile() out tensor must be same dtype as the input tensor")


@autocast_listed("fp32")
def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear", out=None):
    """The ``q``-th quantiles (``q`` a number or a 1-d tensor in [0, 1]) of all of ``input`` or along ``dim``,
    interpolating between the two nearest values (``interpolation``: linear, lower, higher, midpoint or nearest);
    a 1-d ``q`` adds a leading dim. A row with a NaN gives NaN.

    >>> tapegrad.quantile(tapegrad.tensor([1., 2., 3., 4.]), 0.5)
    tensor(2.5000)
    """
    return _quantile("quantile", input, q, dim, keepdim, interpolation, out, False)


@autocast_listed("fp32")
def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear", out=None):
    """``quantile`` ignoring NaN values (a row of NaN only gives NaN).

    >>> tapegrad.nanquantile(tapegrad.tensor([1., float("nan"), 3.]), 0.5)
    tensor(2.)
    """
    return _quantile("nanquantile", input, q, dim, keepdim, interpolation, out, True)


# --- cov, corrcoef -------------------------------------------------------------------------------------------------
def _check_weights(name, w, n_obs, integral):
    if w._array.ndim > 1:
        raise RuntimeError(f"cov(): expected {name} to have one or fewer dimensions but got {name} with "
                           f"{w._array.ndim} dimensions")
    if integral and w._array.dtype.kind not in "iub":
        raise RuntimeError(f"cov(): expected fweights to have integral dtype but got fweights with {_legacy(w)} "
                           "dtype")
    if not integral and w._array.dtype.kind != "f":
        raise RuntimeError(f"cov(): expected aweights to have floating point dtype but got aweights with "
                           f"{_legacy(w)} dtype")
    if w._array.size != n_obs:
        raise RuntimeError(f"cov(): expected {name} to have the same numel as there are observations in the input "
                           f"but got {w._array.size} != {n_obs}")
    if (w._array < 0).any():
        raise RuntimeError(f"cov(): {name} cannot be negative")


def _two_or_fewer_dims(op, input):
    """cov's and corrcoef's check of ``input``: a tensor of at most 2 dims (returns its number of dims)."""
    _need_tensor(op, "input", 1, input)
    nd = input._array.ndim
    if nd > 2:
        raise RuntimeError(f"{op}(): expected input to have two or fewer dimensions but got an input with {nd} "
                           "dimensions")
    return nd


def cov(input, *, correction=1, fweights=None, aweights=None):
    """The covariance matrix of the variables in the rows of ``input`` (observations in the columns; a 1-d
    input is one variable), with ``correction`` (1: Bessel's), integer frequency weights ``fweights`` and
    float observation weights ``aweights``.

    >>> tapegrad.cov(tapegrad.tensor([[0., 1., 2.], [2., 1., 0.]]))
    tensor([[ 1., -1.],
            [-1.,  1.]])
    """
    nd = _two_or_fewer_dims("cov", input)
    x = input.reshape(1, -1) if nd < 2 else input
    n_obs = x._array.shape[1]
    w = None
    if fweights is not None:
        _check_weights("fweights", fweights, n_obs, True)
        w = fweights
    if aweights is not None:
        _check_weights("aweights", aweights, n_obs, False)
        w = aweights if w is None else w * aweights
    if w is None:
        w_sum = n_obs
        avg = x.sum(1) / n_obs
        norm = n_obs - correction
    else:
        w_sum = w.sum()
        avg = (x * w).sum(1) / w_sum
        if correction == 0:
            norm = w_sum
        elif aweights is None:
            norm = w_sum - correction
        else:
            norm = w_sum - correction * (w * aweights).sum() / w_sum
    if float(norm._array if isinstance(norm, Tensor) else norm) <= 0:
        warnings.warn("cov(): degrees of freedom is <= 0. Correction should be strictly less than the number of "
                      "observations.", UserWarning, stacklevel=3)
        norm = norm * 0 if isinstance(norm, Tensor) else 0
    xm = x - avg.unsqueeze(1)
    right = xm if w is None else xm * w
    c = xm.mm(right.t().conj())
    return (c / norm).squeeze()


def corrcoef(input):
    """Pearson's correlation coefficients of the variables in the rows of ``input`` (``cov`` normalised by the
    standard deviations, clipped to [-1, 1]).

    >>> tapegrad.corrcoef(tapegrad.tensor([[0., 1., 2.], [2., 1., 0.]]))
    tensor([[ 1., -1.],
            [-1.,  1.]])
    """
    _two_or_fewer_dims("corrcoef", input)
    c = cov(input)
    if c._array.ndim == 0:
        return c / c
    d = c.diagonal()
    std = (d.real if d.is_complex() else d).sqrt()
    c = c / std.unsqueeze(1)
    c = c / std.unsqueeze(0)
    if c.is_complex():
        from ..elementwise import complex as make_complex
        return make_complex(c.real.clip(-1, 1), c.imag.clip(-1, 1))
    return c.clip(-1, 1)


# --- dist, renorm ----------------------------------------------------------------------------------------------------
def _vector_norm_np(a, p, axis, keepdims):
    if a.dtype == np.float16:       # torch sums Half in float32 and rounds the norm once (squares overflow Half)
        return _vector_norm_np(a.astype(np.float32), p, axis, keepdims).astype(np.float16)
    a = np.abs(a)
    if p == 2:
        return np.sqrt(np.sum(a * a, axis=axis, keepdims=keepdims))
    if p == 1:
        return np.sum(a, axis=axis, keepdims=keepdims)
    if p == 0:
        return np.sum(a != 0, axis=axis, keepdims=keepdims).astype(a.dtype)
    if math.isinf(p):
        if a.size == 0:
            return np.zeros(np.sum(a, axis=axis, keepdims=keepdims).shape, a.dtype)
        return (np.max if p > 0 else np.min)(a, axis=axis, keepdims=keepdims)
    return np.power(np.sum(np.power(a, p), axis=axis, keepdims=keepdims), 1.0 / p)


def _norm_grad(x, norm, s, p, dims):
    """The gradient of the p-norm of ``x`` over ``dims`` (kept as size 1 in ``norm`` and in the incoming gradient
    ``s``), torch's formula in tapegrad ops: 0 where the norm is 0 (a masked quotient, so that the second
    derivative there is NaN as torch's); the inf-norm's split evenly between the largest entries (and NaNs)."""
    xa = x._array
    if p == 0:
        return x * 0
    sign = x.sgn() if xa.dtype.kind == "c" else Tensor._make(np.where(np.isnan(xa), 0, np.sign(xa)))   # (0 at NaN)
    if p == 1:
        return sign * s
    if math.isinf(p):
        ab = np.abs(xa)
        mask = Tensor._make(((ab == norm._array) | np.isnan(ab)).astype(ab.dtype))
        return sign * (s / mask.sum(dims, keepdim=True) * mask)
    nonzero = Tensor._make(norm._array != 0)
    if p < 1:
        scaled = (sign * x.abs() ** (p - 1)).where(Tensor._make(xa != 0), 0.0)
        return scaled * s * norm ** (1 - p)
    scaled = sign * x.abs() ** (p - 1) if p < 2 else x * x.abs() ** (p - 2)
    return scaled * (s / norm ** (p - 1)).where(nonzero, 0.0)


class Dist(Primitive):
    """``vector_norm(a - b, p)`` over all elements (broadcasting)."""

    @staticmethod
    def forward(ctx, a, b, p):
        d = _dtype.result_type(a, b).np
        if d.kind not in "fc":
            raise RuntimeError(f"norm(): input dtype should be either floating point or complex. Got "
                               f"{_dtype.from_numpy_dtype(d)._legacy} instead.")
        ctx.p = p
        ctx.save_result(0, 1)
        diff = a.astype(d, copy=False) - b.astype(d, copy=False)
        return np.asarray(_vector_norm_np(diff, p, None, False), diff.real.dtype)

    @staticmethod
    def backward(ctx, grad):
        norm, a, b = ctx.saved_tensors
        g = _norm_grad(a - b, norm, grad, ctx.p, None)
        need = ctx.needs_input_grad
        return (g if need[0] else None), (-g if need[1] else None), None


def dist(input, other, p=2):
    """``vector_norm(input - other, p)`` (broadcasting).

    >>> tapegrad.dist(tapegrad.tensor([0., 0.]), tapegrad.tensor([3., 4.]))
    tensor(5.)
    """
    _need_tensor("dist", "input", 1, input)
    _need_tensor("dist", "other", 2, other)
    p = float(p.item() if isinstance(p, Tensor) else p)
    broadcast_or_error(input._array.shape, other._array.shape)     # (torch's RuntimeError)
    return Dist.apply(input, other, p)


class Renorm(Primitive):
    """Each slice along ``dim`` whose p-norm exceeds ``maxnorm`` scaled down to norm ``maxnorm``."""

    @staticmethod
    def forward(ctx, x, p, d, maxnorm):
        ctx.p, ctx.d, ctx.maxnorm = p, d, maxnorm
        ctx.save_inputs(0)
        dims = tuple(k for k in _range(x.ndim) if k != d)
        norm = _vector_norm_np(x, p, dims, True)
        factor = np.where(norm > maxnorm, maxnorm / (norm + 1e-7), 1.0).astype(x.real.dtype)
        return np.asarray(x * factor, x.dtype)

    @staticmethod
    def backward(ctx, grad):
        from ..linalg.norms import vector_norm
        (x,) = ctx.saved_tensors
        p, maxnorm = ctx.p, ctx.maxnorm
        dims = tuple(k for k in _range(x._array.ndim) if k != ctx.d)
        norm = vector_norm(x, p, dims, keepdim=True)
        s = (x.conj() * grad).sum(dims, keepdim=True)
        if s.is_complex():
            s = s.real
        nb = _norm_grad(x, norm, s, p, dims)
        inv = 1 / (norm + 1e-7)
        factor = inv * maxnorm
        return (factor * grad - factor * inv * nb).where(Tensor._make(norm._array > maxnorm), grad), None, None, None


def renorm(input, p, dim, maxnorm, *, out=None):
    """Each sub-tensor along ``dim`` (``input.select(dim, i)``) whose ``p``-norm exceeds ``maxnorm`` scaled to
    norm ``maxnorm``; the others are kept.

    >>> tapegrad.renorm(tapegrad.tensor([[3., 4.], [0.3, 0.4]]), 2, 0, 1.)
    tensor([[0.6000, 0.8000],
            [0.3000, 0.4000]])
    """
    _need_tensor("renorm", "input", 1, input)
    a = input._array
    p = float(p.item() if isinstance(p, Tensor) else p)
    maxnorm = float(maxnorm.item() if isinstance(maxnorm, Tensor) else maxnorm)
    if p <= 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm:g}")
    if a.ndim <= 1:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {a.ndim} dimensions")
    if a.dtype.kind not in "fc":
        raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor as input. Got "
                           f"{_legacy(input)}")
    return _write_out("renorm", Renorm.apply(input, p, normalize_dim(dim, a.ndim), maxnorm), out, dtype="same")


# --- histograms -----------------------------------------------------------------------------------------------------
def _linspace_edges(lo, hi, n, d):
    """``n`` edges from lo to hi in NumPy dtype ``d``, exactly as torch's linspace kernel computes them."""
    from ...creation import _linspace_as_torch
    return _linspace_as_torch(float(lo), float(hi), n, np.dtype(d))


def _num(v, c_nan=False):
    """A number as torch's C++ message prints it (a NaN computed from data prints as "-nan" there)."""
    return "-nan" if c_nan and math.isnan(v) else f"{float(v):g}"


def _histogram_counts(samples, edges, weight, density, linear=None):
    """Counts (or summed weights) of the rows of ``samples`` (N, D) in the bins of ``edges`` (one array per dim;
    each bin ``[e_i, e_i+1)``, the last one closed). ``linear`` (histc, one dim): the number of bins, found by
    division between the two edges given, as torch's."""
    d = samples.dtype
    nbins = [linear] if linear is not None else [len(e) - 1 for e in edges]
    flat = np.zeros(samples.shape[0], np.int64)
    valid = np.ones(samples.shape[0], bool)
    for k, e in enumerate(edges):
        x = samples[:, k]
        valid &= (x >= e[0]) & (x <= e[-1])
        if linear is not None:
            lo, hi = e[0], e[-1]
            with np.errstate(invalid="ignore"):
                pos = np.where(valid, (x - lo) * d.type(nbins[k]) / (hi - lo), 0).astype(np.int64)
        else:
            pos = np.searchsorted(e, x, side="right") - 1
        pos = np.clip(pos, 0, nbins[k] - 1)
        flat = flat * nbins[k] + pos
    w = None if weight is None else weight[valid]
    hist = np.bincount(flat[valid], weights=w, minlength=math.prod(nbins)).astype(d).reshape(nbins)
    if density:
        hist = hist / hist.sum()
        for k, e in enumerate(edges):
            shape = [1] * len(edges)
            shape[k] = -1
            hist = hist / np.diff(e).reshape(shape)
        hist = hist.astype(d)
    return hist

# torch's words for an out of histc/histogram whose dtype is not the input's
_HIST_OUT = ("torch.histogram: input tensor and {0} tensor should have the same dtype, but got input {{rc}} and {0} "
             "{{oc}}")



@transform_visible()
def histc(input, bins=100, min=0, max=0, *, out=None):
    """Counts of the elements in ``bins`` equal bins between ``min`` and ``max`` (both 0: the data's range);
    elements outside are ignored. No gradient.

    >>> tapegrad.histc(tapegrad.tensor([1., 2., 1.]), bins=4, min=0, max=3)
    tensor([0., 2., 1., 0.])
    """
    _need_tensor("histc", "input", 1, input)
    a = input._array
    if a.__class__ is _meta.MetaArray:   # (torch's meta kernel: the shape from ``bins``, in its own words)
        if bins <= 0:
            raise RuntimeError(f"histc(): bins must be > 0, but got {bins}")
        if max < min:
            raise RuntimeError("histc(): max must be larger than min")
        return _write_out("histc", Tensor._make(_meta.meta_array((int(bins),), a.dtype)), out, dtype="same",
                          error=_HIST_OUT.format("hist"))
    if a.dtype.kind == "c" and min == max:     # (torch first takes the data's range)
        raise NotImplementedError(f"\"aminmax_cpu\" not implemented for '{_legacy(input)}'")
    if a.dtype.kind != "f":
        raise NotImplementedError(f"\"histogram_cpu\" not implemented for '{_legacy(input)}'")
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    if max < min:
        raise RuntimeError("torch.histc: max must be larger than min")
    lo, hi = a.dtype.type(min), a.dtype.type(max)
    if lo == hi and a.size:
        lo, hi = a.min(), a.max()
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if not (np.isfinite(lo) and np.isfinite(hi)):
        raise RuntimeError(f"torch.histc: range of [{_num(lo, True)}, {_num(hi, True)}] is not finite")
    hist = _histogram_counts(a.reshape(-1, 1), [np.array([lo, hi], a.dtype)], None, False, linear=int(bins))
    return _write_out("histc", Tensor._make(hist), out, dtype="same", error=_HIST_OUT.format("hist"))


def _histogramdd(op, input, bins, range, weight, density, flat_weight=False):
    """The shared work of histogram and histogramdd: (hist array, [edge arrays]). ``flat_weight`` (histogram):
    any weight of the input's number of elements is taken flat."""
    a = input._array
    if a.dtype.kind != "f":
        raise NotImplementedError(f"\"histogramdd\" not implemented for '{_legacy(input)}'")
    if a.ndim < 2:
        raise RuntimeError("torch.histogramdd: input tensor should have at least 2 dimensions")
    D = a.shape[-1]  # noqa: N806
    samples = a.reshape(-1, D)
    if weight is not None:
        wshape = (weight._array.size,) if flat_weight else weight._array.shape
        if wshape != a.shape[:-1]:
            raise RuntimeError(
                "torch.histogramdd: if weight tensor is provided it should have the same shape as the input tensor "
                f"excluding its innermost dimension, but got input with shape {list(a.shape)} and weight with "
                f"shape {list(weight._array.shape)}")
        if weight._array.dtype != a.dtype:
            raise RuntimeError(
                "torch.histogramdd: if weight tensor is provided, input tensor and weight tensor should have the "
                f"same dtype, but got input({_CNAMES[a.dtype.name]}), and weight({_CNAMES[weight.dtype.np.name]})")
    tensor_bins = not isinstance(bins, (int, np.integer)) and isinstance(bins[0], Tensor)
    if not isinstance(bins, (int, np.integer)) and len(bins) != D:
        raise RuntimeError("histogramdd: The size of bins must be equal to the innermost dimension of the input.")
    edges = []
    if tensor_bins:
        for k, b in enumerate(bins):
            if b._array.ndim != 1:
                raise RuntimeError(f"torch.histogramdd: bins tensor should have one dimension, but got "
                                   f"{b._array.ndim} dimensions in the bins tensor for dimension {k}")
            if b._array.dtype != a.dtype:
                raise RuntimeError(
                    "torch.histogramdd: input tensor and bins tensors should have the same dtype, but got input "
                    f"with dtype {_CNAMES[a.dtype.name]} and bins for dimension {k} with dtype "
                    f"{_CNAMES[b._array.dtype.name]}")
            edges.append(b._array.copy())
    else:
        counts = [int(bins)] * D if isinstance(bins, (int, np.integer)) else [int(b) for b in bins]
        for k, n in enumerate(counts):
            if n <= 0:
                raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {n} for dimension {k}")
            if range is not None:
                lo, hi = float(range[2 * k]), float(range[2 * k + 1])
            elif samples.shape[0]:
                lo, hi = float(samples[:, k].min()), float(samples[:, k].max())
            else:
                lo, hi = 0.0, 1.0
            if lo > hi:
                raise RuntimeError(f"torch.histogramdd: min should not exceed max, but got min {_num(lo)} max "
                                   f"{_num(hi)} for dimension {k}")
            if not (math.isfinite(lo) and math.isfinite(hi)):
                raise RuntimeError(f"torch.histogramdd: dimension {k}'s range [{_num(lo)}, {_num(hi)}] is not "
                                   "finite")
            if lo == hi:
                lo, hi = lo - 0.5, hi + 0.5
            edges.append(_linspace_edges(lo, hi, n + 1, a.dtype))
    w = None if weight is None else weight._array.reshape(-1)
    return _histogram_counts(samples, edges, w, density), edges


@transform_visible()
def histogram(input, bins=100, *, range=None, weight=None, density=False, out=None):
    """A histogram of ``input``'s values: ``bins`` equal bins over ``range`` (default: the data's), or the bin
    edges given as a 1-d tensor; with ``weight`` each element counts its weight; ``density`` normalises to a
    probability density. Returns ``(hist, bin_edges)``; no gradient.

    >>> tapegrad.histogram(tapegrad.tensor([1., 2., 1.]), bins=2, range=(0., 2.)).hist
    tensor([0., 3.])
    """
    _need_tensor("histogram", "input", 1, input)
    rng = None if range is None else (range[0], range[1])
    b = [bins] if isinstance(bins, Tensor) else bins
    hist, edges = _histogramdd("histogram", input.reshape(-1, 1), b, rng, weight, density, flat_weight=True)
    res = return_types.histogram(Tensor._make(hist), Tensor._make(edges[0]))
    return _write_out("histogram", res, out, dtype="same",
                      error=[_HIST_OUT.format("hist"), _HIST_OUT.format("bin_edges") + " for dimension 0"])


@transform_visible()
def histogramdd(input, bins=10, *, range=None, weight=None, density=False):
    """A D-dimensional histogram of the rows of ``input`` (``(..., D)``: the last dim holds the coordinates):
    ``bins`` an int, one int per dim, or one 1-d tensor of edges per dim; ``range`` a flat list (min0, max0,
    min1, ...). Returns ``(hist, bin_edges)`` with one edge tensor per dim; no gradient.

    >>> tapegrad.histogramdd(tapegrad.tensor([[0., 0.], [1., 1.]]), bins=2).hist
    tensor([[1., 0.],
            [0., 1.]])
    """
    _need_tensor("histogramdd", "input", 1, input)
    hist, edges = _histogramdd("histogramdd", input, bins, range, weight, density)
    return return_types.histogramdd(Tensor._make(hist), tuple(Tensor._make(e) for e in edges))


# --- bincount -------------------------------------------------------------------------------------------------------
class _WeightedBincount(Primitive):
    """Summed weights per value (torch defines no derivative: grad_fn ``NotImplemented``)."""

    node_name = "NotImplemented"

    @staticmethod
    def forward(ctx, idx, weights, minlength):
        out_dtype = weights.dtype if weights.dtype in (np.float32, np.float64) else np.float64
        return np.bincount(idx, weights=weights.astype(np.float64), minlength=minlength).astype(out_dtype)

    @staticmethod
    def backward(ctx, grad):
        raise RuntimeError("derivative for aten::_bincount is not implemented")


@transform_visible()
def bincount(input, weights=None, minlength=0):
    """How many times each value 0, 1, ... occurs in a 1-d tensor of non-negative integers (at least
    ``minlength`` counts); with ``weights``, their sums instead (float).

    >>> tapegrad.bincount(tapegrad.tensor([0, 1, 1, 3]))
    tensor([1, 2, 0, 1])
    """
    _need_tensor("bincount", "input", 1, input)
    a = input._array
    if a.dtype.kind not in "iu":
        raise NotImplementedError(f"\"bincount_cpu\" not implemented for '{_legacy(input)}'")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if a.ndim != 1 or (a.size and a.min() < 0):
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if weights is not None and (weights._array.ndim != 1 or weights._array.shape[0] != a.shape[0]):
        raise RuntimeError("weights should be 1-d and have the same length as input")
    if weights is None or a.size == 0:
        return Tensor._make(np.bincount(a.astype(np.int64), minlength=minlength).astype(np.int64))
    return _WeightedBincount.apply(input._array.astype(np.int64), weights, int(minlength))


bind(quantile=quantile, nanquantile=nanquantile, cov=cov, corrcoef=corrcoef, dist=dist, renorm=renorm,
     renorm_=lambda self, p, dim, maxnorm: apply_inplace(self, renorm, p, dim, maxnorm),
     histc=histc, histogram=histogram, bincount=bincount)
