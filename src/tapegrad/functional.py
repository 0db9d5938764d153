"""``torch.functional``: the module where torch defines some of its top-level functions (``einsum``, ``split``,
``meshgrid``, ``stft`` ...). Programs import it by that name (``import torch.functional as F``); here each name
is tapegrad's top-level function itself."""

from __future__ import annotations

from tapegrad import (atleast_1d, atleast_2d, atleast_3d, block_diag, broadcast_shapes, broadcast_tensors,
                      cartesian_prod, cdist, chain_matmul, einsum, istft, lu, meshgrid, norm, pca_lowrank, split,
                      stft, svd_lowrank, tensordot, unique, unique_consecutive, unravel_index)

__all__ = ["atleast_1d", "atleast_2d", "atleast_3d", "broadcast_shapes", "broadcast_tensors", "cartesian_prod",
           "block_diag", "cdist", "chain_matmul", "einsum", "istft", "lu", "norm", "meshgrid", "pca_lowrank", "split",
           "stft", "svd_lowrank", "tensordot", "unique", "unique_consecutive", "unravel_index"]
