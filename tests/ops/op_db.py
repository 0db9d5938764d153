"""The one table of op specs that drives the op tests (and docs/ops.md).

Each family has its own file in ``specs/`` (``SPECS = [OpSpec(...), ...]``); this module collects them.
An ``OpSpec`` names the op as a lambda over a module (``lambda m, x, y: m.mul(x, y)``), so the same code runs
on tapegrad and on torch, and gives sample inputs as NumPy arrays (float arrays become tensors that require
grad; int/bool arrays become plain tensors; anything else is passed as is).
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np


@dataclass
class Sample:
    args: tuple
    kwargs: dict = field(default_factory=dict)
    name: str = ""
    smooth: bool = True     # False at a kink (ties of max/min/median) or where the second derivative is nan as
    #                         torch's: finite differences of the first derivative mean nothing there, so only
    #                         gradgradcheck skips it (second derivatives are still compared with torch's)


@dataclass
class OpSpec:
    name: str                              # the public name, e.g. "exp" or "nn.functional.relu"
    fn: Callable                           # lambda m, *args, **kwargs -> output(s); m is tapegrad or torch
    samples: Callable[[np.random.Generator], list]   # rng -> [Sample, ...] (keep them small: gradcheck is O(n))
    family: str = ""
    grad: bool = True                      # differentiable at all
    gradgrad: bool = True                  # second derivatives checked (gradgradcheck + vs torch)
    check_grad_fn: bool = True             # grad_fn name equal to torch's
    float32: bool = True                   # also compare values in float32
    atol: float = 1e-7
    rtol: float = 1e-6
    gc_atol: float = 1e-5                  # gradcheck tolerances
    gc_rtol: float = 1e-3
    output_process: Callable | None = None  # e.g. take [0] of a (values, indices) pair before comparing
    inplace: Callable | None = None        # lambda x, *args: x.op_(*args) — checked for value and version bump
    warns: str = ""                        # regex of a UserWarning torch gives for this op: tapegrad gives it too
    torch_warns: str = ""                  # regex of a warning torch alone gives (tapegrad does not: see notes)
    notes: str = ""
    extra: dict = field(default_factory=dict)
    complex: bool = False                  # also checked on complex samples (complex_ops.py; set there for most)
    aliases: tuple = ()                    # the NumPy-style names torch takes for the samples' keywords ("axis",
    #                                        "keepdims", "x", "x2"...): each is checked against torch by
    #                                        tests/ops/test_op_aliases.py (every sample keyword is, declared or not)


def S(*args, name="", smooth=True, **kwargs) -> Sample:
    return Sample(args, kwargs, name, smooth)


def randn(rng, *shape, positive=False, low=None, high=None):
    """A float64 sample array (``positive`` keeps it in [0.5, 2]; ``low``/``high`` picks a uniform range)."""
    if low is not None:
        return rng.uniform(low, high, size=shape)
    a = rng.standard_normal(shape)
    return np.abs(a) + 0.5 if positive else a


def noncontig(a):
    """The same values in a non-contiguous layout (the transpose of a transposed copy)."""
    return np.ascontiguousarray(a.T).T if a.ndim >= 2 else a[::-1].copy()[::-1]


def _collect():
    from . import specs
    from .complex_ops import COMPLEX
    out = []
    for mod in sorted(pkgutil.iter_modules(specs.__path__), key=lambda m: m.name):
        m = importlib.import_module(f"{specs.__name__}.{mod.name}")
        for spec in getattr(m, "SPECS", []):
            spec.family = spec.family or mod.name
            spec.complex = spec.complex or spec.name in COMPLEX
            out.append(spec)
    return out


OPS: list[OpSpec] = _collect()
Any = Any
