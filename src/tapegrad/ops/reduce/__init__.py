# ruff: noqa: A001, A002 - torch's names (sum, max, all, any) and argument name (input)
"""Reductions: sums, products, moments, extrema, order statistics, scans and logical reductions.

Every op reduces over all dims or over ``dim`` (an int, or a tuple where torch accepts one), with ``keepdim``;
integer outputs (indices, counts) are int64 and follow torch's dtype rules (``sum`` of ints is int64, ``mean`` of
ints is an error). Ops returning ``(values, indices)`` return named tuples that print like torch's
``torch.return_types.max(values=..., indices=...)``.

Gradients follow torch: ``max()``/``amax``/``median()`` split the gradient evenly between ties; ``max(dim)``,
``median(dim)``, ``mode``, ``cummax`` send it to the selected index.

The sub-family modules: ``_common`` (return types, argument helpers, ``out=``), ``sums`` (sum, mean, prod, var,
std, logsumexp, all / any), ``extrema`` (max, min, amax, argmax, median, mode), ``scans`` (cumsum, cumprod,
cummax, cummin), ``calculus`` (diff, gradient, trapezoid, cumulative_trapezoid, logcumsumexp) and ``stats``
(quantile, cov, corrcoef, dist, renorm, histc, histogram, histogramdd, bincount).
"""

from ._common import *  # noqa: F403
from .sums import *  # noqa: F403
from .extrema import *  # noqa: F403
from .scans import *  # noqa: F403
from .calculus import *  # noqa: F403
from .stats import *  # noqa: F403

__all__ = ["sum", "mean", "prod", "var", "std", "var_mean", "std_mean", "max", "min", "amax", "amin", "argmax",
           "argmin", "logsumexp", "cumsum", "cumprod", "cummax", "cummin", "all", "any", "median", "nanmedian",
           "mode", "count_nonzero", "hash_tensor", "nansum", "nanmean", "aminmax", "return_types",
           "diff", "gradient", "trapezoid", "trapz", "cumulative_trapezoid", "logcumsumexp", "quantile",
           "nanquantile", "cov", "corrcoef", "dist", "renorm", "histc", "histogram", "histogramdd", "bincount"]
