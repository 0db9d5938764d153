"""``tapegrad.nn.parallel``: ``DataParallel`` (a pass-through wrapper on the CPU, as torch's without a GPU), the
``data_parallel`` function (torch's error without a GPU), ``DistributedDataParallel`` (torch's error without a
process group, which tapegrad never has) and the multi-GPU primitives ``scatter``/``gather``/``replicate``/
``parallel_apply`` (importable; torch's errors on the CPU)."""

from .data_parallel import DataParallel, data_parallel
from .distributed import DistributedDataParallel
from .parallel_apply import parallel_apply
from .replicate import replicate
from .scatter_gather import gather, scatter

__all__ = ["DataParallel", "data_parallel", "DistributedDataParallel", "parallel_apply", "replicate", "scatter",
           "gather"]
