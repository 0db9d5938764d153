"""``tapegrad.mps``: not available (tapegrad runs on the CPU)."""

from __future__ import annotations

__all__ = ["is_available", "device_count", "manual_seed", "synchronize", "empty_cache"]


def is_available() -> bool:
    return False


def device_count() -> int:
    return 0


def manual_seed(seed) -> None:
    pass


def empty_cache() -> None:
    pass


def synchronize(device=None) -> None:
    raise RuntimeError("tapegrad runs on the CPU only: there is no mps device")
