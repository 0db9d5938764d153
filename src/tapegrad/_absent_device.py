"""The API of an accelerator tapegrad does not have (``tapegrad.mps``, ``tapegrad.xpu``): not available, no
devices, seeding and emptying the cache do nothing, synchronizing is an error naming the device."""

from __future__ import annotations


def absent(name):
    """``(is_available, device_count, manual_seed, empty_cache, synchronize)`` for the device ``name``."""
    def is_available() -> bool:
        return False

    def device_count() -> int:
        return 0

    def manual_seed(seed) -> None:
        pass

    def empty_cache() -> None:
        pass

    def synchronize(device=None) -> None:
        raise RuntimeError(f"tapegrad runs on the CPU only: there is no {name} device")
    return is_available, device_count, manual_seed, empty_cache, synchronize
