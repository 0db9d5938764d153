"""The op library: one package per family (elementwise, reduce, shape, index, linalg, nn_ops, conv), each split
into sub-family modules that declare their Functions and attach their Tensor methods (see docs/design.md)."""

import os as _os

import pkgutil as _pkgutil

loaded_libraries = set()     # torch.ops.loaded_libraries: the paths load_library loaded (never any here)


def load_library(path):
    """``torch.ops.load_library``: load a compiled library of custom operators. tapegrad runs no compiled torch
    extensions, so it raises torch's OSError for a missing file and for one that exists alike (libraries
    guard the call with ``except OSError`` and fall back to their Python code)."""
    path = _os.path.realpath(path)
    why = "" if not _os.path.exists(path) else " (tapegrad cannot run compiled torch extensions)"
    raise OSError(f"Could not load this library: {path}{why}")


_FAMILIES = {m.name for m in _pkgutil.iter_modules(__path__)}


def __getattr__(name):
    """``torch.ops.<namespace>``: the operators ``tapegrad.library`` defined there (any other name is an op
    family of this package, imported on first use)."""
    if name.startswith("_") and name not in _FAMILIES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    if name in _FAMILIES:
        import importlib
        return importlib.import_module(f"{__name__}.{name}")
    from ..library import _OpNamespace
    ns = globals()[name] = _OpNamespace(name)
    return ns
