"""``tapegrad.masked``: torch.masked's reductions and normalizations of dense tensors with a ``mask``.

Masked-out elements (``mask`` False; the mask broadcasts to the input) are replaced by the operation's identity
(0 for sums and norms, 1 for products, -inf for max / logsumexp / softmax, +inf for min / softmin, NaN for the
median) and the ordinary op runs, so values, dtypes and gradients are the ordinary op's: a masked-out element
gets a zero gradient. A row that is entirely masked out gives the identity (or NaN for mean, var, std, median,
as torch).
"""

from __future__ import annotations

import builtins
import math

import tapegrad as _tg

__all__ = ["sum", "prod", "cumsum", "cumprod", "amax", "amin", "argmax", "argmin", "mean", "median", "norm", "var",
           "std", "softmax", "log_softmax", "softmin", "normalize", "logaddexp", "logsumexp"]

_INT_PROMOTED = ("uint8", "bool", "int8", "int16", "int32")


def _canonical_dim(dim, ndim):
    """``dim`` as a sorted tuple of non-negative dims (None or () is every dim)."""
    if dim is None or dim == ():
        return tuple(builtins.range(ndim))
    ndim = builtins.max(ndim, 1)
    dims = []
    for d in ((dim,) if isinstance(dim, int) else dim):
        if d in dims:
            raise RuntimeError(f"dim={d} appears multiple times in the list of dims")
        if d >= ndim or d < -ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], but got {d})")
        dims.append(d % ndim)
    return tuple(sorted(dims))


def _input_mask(input, *args, mask=None, **kwargs):
    """The mask as a bool tensor of the input's shape."""
    if mask is None:
        raise ValueError("_input_mask requires explicit mask")
    if tuple(mask.shape) != tuple(input.shape):
        if mask.dim() > input.dim():
            raise IndexError("_input_mask expected broadcastable mask (got mask dimensionality higher than of the "
                             "input)")
        mask = _tg.broadcast_to(mask, tuple(input.shape))
    return mask.to(_tg.bool)


def _identity(name, input, *args):
    d = input.dtype
    floating = d.is_floating_point
    if name in ("sum", "cumsum"):
        return 0
    if name in ("prod", "cumprod"):
        return 1
    if name in ("amax", "argmax", "logaddexp", "logsumexp"):
        return -math.inf if floating or d.is_complex else _tg.iinfo(d).min
    if name in ("amin", "argmin"):
        return math.inf if floating else _tg.iinfo(d).max
    if name == "norm":
        return math.inf if (args[0] if args else 2) == -math.inf else 0
    if name == "median":
        return math.nan
    raise NotImplementedError(f"identity of {name} on {d} input")


def _combine(name, input, mask, *args):
    """The input with its masked-out elements replaced by the identity of ``name``."""
    if mask is None:
        return input
    m = _input_mask(input, mask=mask)
    return _tg.where(m, input, _tg.tensor(_identity(name, input, *args), dtype=input.dtype))


def _output_mask(op, input, *args, **kwargs):
    """Which output elements have at least one masked-in input (reductions), or the input mask
    (normalizations)."""
    name = op.__name__
    if name in ("sum", "prod", "amax", "amin", "argmax", "argmin", "mean", "median", "norm", "var", "std",
                "logsumexp"):
        if name == "norm" and args:
            args = args[1:]
        dim = args[0] if args else kwargs.get("dim")
        outmask = _input_mask(input, mask=kwargs.get("mask"))
        dims = _canonical_dim(dim, input.dim())
        return outmask.any(dim=dims, keepdim=bool(kwargs.get("keepdim", False))) if dims else outmask
    if name in ("softmax", "log_softmax", "softmin", "normalize", "cumsum", "cumprod"):
        return _input_mask(input, mask=kwargs.get("mask"))
    raise ValueError(f"_output_mask expected masked operation (got callable {op.__module__}.{name})")


def _int_promoted(input, dtype):
    if dtype is not None:
        return dtype
    return _tg.int64 if str(input.dtype).split(".")[-1] in _INT_PROMOTED else input.dtype


def sum(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    dtype = _int_promoted(input, dtype)
    dims = _canonical_dim(dim, input.dim())
    return _tg.sum(_combine("sum", input, mask), dims, bool(keepdim), dtype=dtype)


def prod(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    dtype = _int_promoted(input, dtype)
    r = _combine("prod", input, mask).to(dtype)
    for d in reversed(_canonical_dim(dim, input.dim())):
        r = r.prod(dim=d, keepdim=bool(keepdim))
    return r


def cumsum(input, dim, *, dtype=None, mask=None):
    dtype = dtype or input.dtype
    d = _canonical_dim(dim, input.dim())[0]
    return _tg.cumsum(_combine("sum", input, mask), d, dtype=dtype).to(dtype)


def cumprod(input, dim, *, dtype=None, mask=None):
    dtype = dtype or input.dtype
    d = _canonical_dim(dim, input.dim())[0]
    return _tg.cumprod(_combine("prod", input, mask), d, dtype=dtype).to(dtype)


def amax(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    dtype = dtype or input.dtype
    return _tg.amax(_combine("amax", input, mask), _canonical_dim(dim, input.dim()), bool(keepdim)).to(dtype)


def amin(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    dtype = dtype or input.dtype
    return _tg.amin(_combine("amin", input, mask), _canonical_dim(dim, input.dim()), bool(keepdim)).to(dtype)


def argmax(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """(torch's masked argmax returns its indices in ``dtype``, the input's by default.)"""
    dtype = dtype or input.dtype
    return _tg.argmax(_combine("argmax", input, mask), dim, bool(keepdim)).to(dtype)


def argmin(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    dtype = dtype or input.dtype
    return _tg.argmin(_combine("argmin", input, mask), dim, bool(keepdim)).to(dtype)


def mean(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    source = "Optional" if dtype is not None else "Input"
    dtype = dtype or input.dtype
    if not (dtype.is_floating_point or dtype.is_complex):
        raise ValueError(f"mean(): Could not infer output dtype. {source} dtype must be either a floating point or "
                         f"complex dtype. Got: {dtype}")
    if mask is None:
        count = sum(_tg.ones(tuple(input.shape), dtype=_tg.int64), dim, keepdim=keepdim)
        total = sum(input, dim, keepdim=keepdim, dtype=dtype)
    else:
        inmask = _input_mask(input, mask=mask)
        dims = _canonical_dim(dim, input.dim())
        count = inmask.sum(dim=dims, keepdim=bool(keepdim)) if dims else inmask.to(_tg.int64)
        total = sum(input, dim, keepdim=keepdim, dtype=dtype, mask=inmask)
    return total / count


def median(input, dim=-1, *, keepdim=False, dtype=None, mask=None):
    dtype = dtype or input.dtype
    d = _canonical_dim(dim, input.dim())[0]
    is_float = input.dtype.is_floating_point
    if not is_float:
        input = input.to(_tg.float32)
    out = _tg.nanmedian(_combine("median", input, mask), d, keepdim).values
    if is_float:
        return out
    if not out.isnan().any():
        return out.to(dtype)
    raise ValueError("masked median expects no fully masked out rows if dtype is not floating point")


def logsumexp(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    dtype = dtype or input.dtype
    return _tg.logsumexp(_combine("logsumexp", input, mask), _canonical_dim(dim, input.dim()),
                         keepdim=keepdim).to(dtype)


def logaddexp(input, other, *, dtype=None, input_mask=None, other_mask=None):
    dtype = dtype or input.dtype
    return _tg.logaddexp(_combine("logaddexp", input, input_mask), _combine("logaddexp", other, other_mask)).to(dtype)


def norm(input, ord=2.0, dim=None, *, keepdim=False, dtype=None, mask=None):
    dtype = dtype or input.dtype
    return _tg.linalg.vector_norm(_combine("norm", input, mask, ord), ord, _canonical_dim(dim, input.dim()),
                                  bool(keepdim), dtype=dtype)


def _std_var(input, dim, unbiased, correction_opt, keepdim, dtype, mask, take_sqrt):
    if unbiased is not None and correction_opt is not None:
        raise RuntimeError("Only one of unbiased and correction may be given")
    correction = 1.0
    if unbiased is not None:
        correction = 1.0 if unbiased else 0.0
    if correction_opt is not None:
        correction = float(correction_opt)
    if dtype is None:
        dtype = input.dtype
        if not (dtype.is_floating_point or dtype.is_complex):
            dtype = _tg.float32
    compute = dtype if (dtype.is_floating_point or dtype.is_complex) else _tg.float32
    dims = _canonical_dim(dim, input.dim())
    if mask is None:
        count = sum(_tg.ones(tuple(input.shape), dtype=_tg.int64), dim, keepdim=True)
        total0 = sum(input, dim, keepdim=True, dtype=dtype)
        inmask = None
    else:
        inmask = _input_mask(input, mask=mask)
        count = inmask.sum(dim=dims, keepdim=True) if dims else inmask.to(_tg.int64)
        total0 = sum(input, dim, keepdim=True, dtype=dtype, mask=inmask)
    x = input - total0 / count
    total = sum(x * x.conj(), dim, keepdim=keepdim, dtype=compute, mask=inmask)
    if not keepdim:
        count = count.reshape(tuple(total.shape))
    if correction != 0:
        real = compute if not compute.is_complex else (_tg.float64 if compute is _tg.complex128 else _tg.float32)
        count = count.to(real) - correction
        count = _tg.maximum(count, count.new_zeros([]))
    out = (total / count).to(dtype)
    return out.sqrt() if take_sqrt else out


def var(input, dim=None, unbiased=None, *, correction=None, keepdim=False, dtype=None, mask=None):
    return _std_var(input, dim, unbiased, correction, keepdim, dtype, mask, False)


def std(input, dim=None, unbiased=None, *, correction=None, keepdim=False, dtype=None, mask=None):
    return _std_var(input, dim, unbiased, correction, keepdim, dtype, mask, True)


def softmax(input, dim, *, dtype=None, mask=None):
    dtype = dtype or input.dtype
    d = _canonical_dim(dim, input.dim())[0]
    return _tg.nn.functional.softmax(_combine("amax", input, mask), d, dtype=dtype)


def log_softmax(input, dim, *, dtype=None, mask=None):
    dtype = dtype or input.dtype
    d = _canonical_dim(dim, input.dim())[0]
    return _tg.nn.functional.log_softmax(_combine("amax", input, mask), d, dtype=dtype)


def softmin(input, dim, *, dtype=None, mask=None):
    dtype = dtype or input.dtype
    d = _canonical_dim(dim, input.dim())[0]
    return _tg.nn.functional.softmin(_combine("amin", input, mask), d, dtype=dtype)


def normalize(input, ord, dim, *, eps=1e-12, dtype=None, mask=None):
    dtype = dtype or input.dtype
    masked_input = _combine("sum", input, mask)
    nrm = norm(input, ord, dim, keepdim=True, dtype=dtype, mask=mask)
    return masked_input / _tg.maximum(nrm, nrm.new_full([], eps))
