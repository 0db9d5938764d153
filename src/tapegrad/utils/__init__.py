"""tapegrad.utils: data loading (``tapegrad.utils.data``) and activation checkpointing
(``tapegrad.utils.checkpoint``, loaded on first use)."""

from . import data  # noqa: F401


def __getattr__(name):
    if name == "checkpoint":
        from . import checkpoint
        return checkpoint
    raise AttributeError(f"module 'tapegrad.utils' has no attribute {name!r}")
