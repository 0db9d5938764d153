"""Helpers that run one op spec on tapegrad and on torch and compare values, gradients and second derivatives."""

from __future__ import annotations

import numpy as np

import tapegrad


def _cast(x, dtype):
    """A float sample array in ``dtype``; a complex one in the complex dtype of the same precision."""
    if x.dtype.kind == "c":
        return x.astype(np.complex128 if np.dtype(dtype) == np.float64 else np.complex64)
    return x.astype(dtype)


def to_tg(x, dtype, requires_grad=True):
    if isinstance(x, np.ndarray):
        if x.dtype.kind in "fc":
            return tapegrad.tensor(_cast(x, dtype), requires_grad=requires_grad)
        return tapegrad.tensor(x)
    if isinstance(x, (list, tuple)) and x and all(isinstance(e, np.ndarray) for e in x):
        return type(x)(to_tg(e, dtype, requires_grad) for e in x)
    return x


def to_torch(torch, x, dtype, requires_grad=True):
    if isinstance(x, np.ndarray):
        if x.dtype.kind in "fc":
            return torch.tensor(_cast(x, dtype), requires_grad=requires_grad)
        return torch.tensor(x)
    if isinstance(x, (list, tuple)) and x and all(isinstance(e, np.ndarray) for e in x):
        return type(x)(to_torch(torch, e, dtype, requires_grad) for e in x)
    return x


def leaves(args):
    out = []
    for a in args:
        if isinstance(a, (list, tuple)):
            out.extend(leaves(a))
        elif hasattr(a, "requires_grad") and getattr(a, "requires_grad", False):
            out.append(a)
    return out


def outputs(spec, res):
    if spec.output_process is not None:
        res = spec.output_process(res)
    if isinstance(res, (list, tuple)):
        return [r for r in res if r is not None]
    return [res]


def as_np(t):
    if hasattr(t, "detach"):
        t = t.detach()
    if hasattr(t, "numpy"):
        try:
            return np.asarray(t.numpy())
        except RuntimeError:  # torch ZeroTensor
            return np.asarray(t.numpy(force=True))
    return np.asarray(t)


def dtype_name(t):
    return str(t.dtype).split(".")[-1]
