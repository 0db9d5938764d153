"""``torch.cpu.amp``: the deprecated home of CPU ``autocast`` (``torch.autocast("cpu", ...)`` is the one to use)."""

from __future__ import annotations

from ..amp._deprecated import deprecated_amp

__all__ = ["autocast", "GradScaler"]

autocast, GradScaler = deprecated_amp("cpu")
