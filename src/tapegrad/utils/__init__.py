"""tapegrad.utils: data loading (``tapegrad.utils.data``) and activation checkpointing
(``tapegrad.utils.checkpoint``, loaded on first use)."""

from . import data  # noqa: F401


def __getattr__(name):
    if name in ("checkpoint", "hooks", "tensorboard", "benchmark"):
        import importlib
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module 'tapegrad.utils' has no attribute {name!r}")
