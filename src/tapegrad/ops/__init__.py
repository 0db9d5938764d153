"""The op library: one package per family (elementwise, reduce, shape, index, linalg, nn_ops, conv), each split
into sub-family modules that declare their Functions and attach their Tensor methods (see docs/design.md)."""

import os as _os

loaded_libraries = set()     # torch.ops.loaded_libraries: the paths load_library loaded (never any here)


def load_library(path):
    """``torch.ops.load_library``: load a compiled library of custom operators. tapegrad runs no compiled torch
    extensions, so it raises torch's OSError for a missing file and for one that exists alike (libraries
    guard the call with ``except OSError`` and fall back to their Python code)."""
    path = _os.path.realpath(path)
    why = "" if not _os.path.exists(path) else " (tapegrad cannot run compiled torch extensions)"
    raise OSError(f"Could not load this library: {path}{why}")
