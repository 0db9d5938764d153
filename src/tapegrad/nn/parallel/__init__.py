"""``tapegrad.nn.parallel``: ``DataParallel`` (a pass-through wrapper on the CPU, as torch's without a GPU), the
``data_parallel`` function (torch's error without a GPU) and ``DistributedDataParallel`` (torch's error without a
process group, which tapegrad never has)."""

from .data_parallel import DataParallel, data_parallel
from .distributed import DistributedDataParallel

__all__ = ["DataParallel", "data_parallel", "DistributedDataParallel"]
