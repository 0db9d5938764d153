"""``torch.nn._reduction``: the reduction names as the integers torch's kernels take, and the translation of the
deprecated ``size_average`` / ``reduce`` arguments (libraries that define their own losses import it)."""

from __future__ import annotations

import warnings

_ENUM = {"none": 0, "mean": 1, "sum": 2}


def get_enum(reduction: str) -> int:
    """0, 1 or 2 for ``'none'``, ``'mean'`` (``'elementwise_mean'``, deprecated) and ``'sum'``."""
    if reduction == "elementwise_mean":
        warnings.warn("reduction='elementwise_mean' is deprecated. Please use reduction='mean' instead.",
                      stacklevel=2)
        reduction = "mean"
    if reduction not in _ENUM:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return _ENUM[reduction]


def legacy_get_string(size_average, reduce, emit_warning=True) -> str:
    """The ``reduction`` that ``size_average`` and ``reduce`` stand for (None counts as True), with torch's
    deprecation warning."""
    from .modules.loss import _legacy_reduction
    return _legacy_reduction(size_average, reduce, emit_warning)


def legacy_get_enum(size_average, reduce, emit_warning=True) -> int:
    """``get_enum(legacy_get_string(...))``."""
    return get_enum(legacy_get_string(size_average, reduce, emit_warning))
