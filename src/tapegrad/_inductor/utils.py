"""``tapegrad._inductor.utils``: the helpers scripts call around ``torch.compile`` timings.

``fresh_inductor_cache()`` (torch's older name) and ``fresh_cache()`` give torch's inductor a clean on-disk cache
for the duration of a block, so that a timed first call compiles from scratch. tapegrad's compiled regions write no
code to disk (a region is replayed by Python, see ``tapegrad.compiler``), so there is no such cache to empty: the
block runs as is, and a ``cache_entries`` dict (torch fills it with the files the block created) stays empty.
"""

from __future__ import annotations

import contextlib

__all__ = ["fresh_cache", "fresh_inductor_cache"]


@contextlib.contextmanager
def fresh_cache(cache_entries=None, dir=None, delete=True):
    """Run the block with a clean compile cache: for tapegrad, which keeps none on disk, the block as is."""
    if cache_entries is not None and not isinstance(cache_entries, dict):
        raise TypeError(f"cache_entries must be a dict, not {type(cache_entries).__name__}")
    if isinstance(cache_entries, dict) and cache_entries:
        raise AssertionError("expected empty cache_entries dict")
    yield


fresh_inductor_cache = fresh_cache
