"""Short text for numbers and arrays, shared by the tools that show a graph (``viz``) and a backward pass
(``autograd.trace``), so that neither imports the other."""

from __future__ import annotations

import numpy as np


def short_number(x):
    """A Python number as a graph label shows it (floats to 4 decimals)."""
    if isinstance(x, float):
        return f"{x:.4f}"
    return str(x)


def short_array(a, limit=6):
    """Short text for an ndarray's values: the numbers when few, else min/max."""
    a = np.asarray(a)
    if a.ndim == 0:
        return f"{a.item():.4g}" if a.dtype.kind in "fc" else str(a.item())
    if a.size <= limit:
        flat = ", ".join(f"{v:.4g}" if a.dtype.kind in "fc" else str(v) for v in a.ravel().tolist())
        return f"[{flat}]"
    if a.size == 0:
        return "[]"
    return f"min {a.min():.3g} max {a.max():.3g}"
