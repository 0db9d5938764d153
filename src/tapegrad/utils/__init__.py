"""tapegrad.utils: data loading (``tapegrad.utils.data``); loaded on first use: activation checkpointing
(``checkpoint``), TensorBoard logs (``tensorboard``), timing (``benchmark``), DLPack exchange (``dlpack``) and
``hooks``; ``swap_tensors``."""

from . import data  # noqa: F401
from ._swap import swap_tensors  # noqa: F401


def __getattr__(name):
    if name in ("checkpoint", "hooks", "tensorboard", "dlpack", "benchmark", "_pytree"):
        import importlib
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module 'tapegrad.utils' has no attribute {name!r}")
