"""``tapegrad.xpu``: not available (tapegrad runs on the CPU)."""

from __future__ import annotations

from ._absent_device import absent

__all__ = ["is_available", "device_count", "manual_seed", "synchronize", "empty_cache"]

is_available, device_count, manual_seed, empty_cache, synchronize = absent("xpu")
