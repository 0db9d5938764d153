"""``tapegrad.accelerator``: there is none (``torch.accelerator.is_available()`` is False, as on a CPU-only
machine), so ``device = torch.accelerator.current_accelerator() or "cpu"``-style code picks the CPU."""

from __future__ import annotations

__all__ = ["is_available", "current_accelerator", "device_count", "current_device_index", "set_device_index",
           "synchronize"]


def is_available() -> bool:
    return False


def current_accelerator(check_available: bool = False):
    return None


def device_count() -> int:
    return 0


def _none(*args, **kwargs):
    raise RuntimeError("tapegrad runs on the CPU only: there is no accelerator (torch.accelerator.is_available() is "
                       "False)")


current_device_index = set_device_index = synchronize = _none
