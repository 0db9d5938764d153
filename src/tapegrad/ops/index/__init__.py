# ruff: noqa: A001, A002 - torch's names (sorted) and argument name (input)
"""Indexing: ``x[key]``, ``x[key] = value`` and the index ops (gather, scatter, index_*, masked_*, sort, topk, ...).

``x[key]`` follows torch's decomposition exactly: ints, slices, ``None`` and ``...`` become a chain of view ops
(``SelectBackward0``, ``SliceBackward0``, ``UnsqueezeBackward0``, ``AliasBackward0``), applied left to right; the
tensor indices left over (int arrays, bool masks) are then applied at once (``IndexBackward0``), with NumPy's
advanced-indexing rules on the sliced tensor (which are torch's). ``x[key] = v`` slices the same way, then
copies into the view (the base gets a ``CopySlices`` node) or runs ``index_put_``.

Every backward is written with the ops of this family, so that double backward works: gather's backward is a
scatter_add, whose backward is a gather, and so on. The sub-family modules:

- ``_common``: shared helpers (index checks, array kernels of gather / scatter);
- ``subscript``: ``x[key]``, ``x[key] = value``;
- ``masked``: masked_*, nonzero / argwhere, one_hot, tril / triu_indices;
- ``gathers``: gather, scatter, index_select / index_add / index_copy / index_fill / index_put, take / put /
  take_along_dim;
- ``sorting``: sort, argsort, topk, kthvalue, unique, searchsorted, bucketize;
- ``reductions``: index_reduce (prod, mean, amax, amin), isin, fill_diagonal_.
"""

from ._common import *  # noqa: F403
from .subscript import *  # noqa: F403
from .masked import *  # noqa: F403
from .gathers import *  # noqa: F403
from .sorting import *  # noqa: F403
from .reductions import *  # noqa: F403

__all__ = [
    "index_select", "gather", "scatter", "scatter_add", "scatter_reduce", "index_add", "index_copy", "index_fill",
    "index_put", "index_put_", "masked_fill", "masked_scatter", "masked_select", "take", "take_along_dim",
    "nonzero", "argwhere", "sort", "argsort", "topk", "kthvalue", "msort", "unique", "unique_consecutive",
    "searchsorted", "bucketize", "tril_indices", "triu_indices", "put", "index_reduce", "isin",
]
