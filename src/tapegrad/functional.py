"""``torch.functional``: the module where torch defines some of its top-level functions (``einsum``, ``split``,
``meshgrid``, ``stft`` ...). Programs import it by that name (``import torch.functional as F``); here each name
is tapegrad's top-level function itself."""

from __future__ import annotations

import tapegrad as _t

__all__ = ["atleast_1d", "atleast_2d", "atleast_3d", "broadcast_shapes", "broadcast_tensors", "cartesian_prod",
           "block_diag", "cdist", "chain_matmul", "einsum", "istft", "lu", "norm", "meshgrid", "pca_lowrank", "split",
           "stft", "svd_lowrank", "tensordot", "unique", "unique_consecutive", "unravel_index"]


def __getattr__(name):
    # (stft/istft and a few others load on first use at top level: fetched the same way here)
    if name in __all__:
        return getattr(_t, name)
    raise AttributeError(f"module 'tapegrad.functional' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))
