"""``tapegrad.nn.parallel``: ``DataParallel`` (a pass-through wrapper on the CPU, as torch's without a GPU)."""

from .data_parallel import DataParallel

__all__ = ["DataParallel"]
