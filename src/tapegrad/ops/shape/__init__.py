# ruff: noqa: A002 - torch's argument name (input)
"""Shape ops: views and rearrangements, joins and splits, triangles and diagonals.

Every op that is a view in torch (view, reshape when possible, transpose, permute, squeeze, unsqueeze, expand,
narrow, select, unbind, split, chunk, diagonal, movedim, unflatten, flatten when possible) returns a NumPy view
of its input and is marked with ``mark_view``: it shares the input's version counter, and an in-place change of
the view rebases the base's history (``CopySlices``). The other ops (flip, roll, cat, repeat, tril, ...) copy.

The sub-family modules: ``views`` (reshape, view, transpose, permute, squeeze, unsqueeze, expand, contiguous),
``split_join`` (narrow, select, split, chunk, unbind, unfold; cat, stack) and ``rearrange`` (repeat, tile, flip,
roll, rot90, tril / triu, diagonals) and ``combine`` (meshgrid, block_diag, cartesian_prod, combinations,
vander, row_stack, unravel_index). ``strided`` (as_strided, the ``*_scatter`` and ``*_copy`` ops, unsafe
splits, empty_strided) loads on first use (``_LAZY_OPS`` in ``tapegrad/__init__.py``), not with this package.
"""

from .views import *  # noqa: F403
from .split_join import *  # noqa: F403
from .rearrange import *  # noqa: F403
from .combine import *  # noqa: F403

__all__ = ["reshape", "transpose", "swapaxes", "swapdims", "permute", "movedim", "moveaxis", "t", "unsqueeze",
           "squeeze", "flatten", "unflatten", "ravel", "broadcast_to", "broadcast_tensors", "broadcast_shapes",
           "repeat_interleave", "tile", "flip", "fliplr", "flipud", "roll", "rot90", "cat", "concat", "concatenate",
           "stack", "hstack", "vstack", "dstack", "column_stack", "split", "chunk", "tensor_split", "unbind", "narrow",
           "select", "split_with_sizes", "hsplit", "vsplit", "dsplit", "narrow_copy", "adjoint", "tril", "triu",
           "diag", "diagonal", "diag_embed", "diagflat", "atleast_1d", "atleast_2d", "atleast_3d",
           "meshgrid", "block_diag", "cartesian_prod", "combinations", "vander", "row_stack", "unravel_index"]
