"""``DistributedDataParallel`` where no process group can exist (``tapegrad.distributed``).

Scripts import it at the top and test ``isinstance(model, DistributedDataParallel)`` to reach the wrapped model, also
when they run in one process (pytorch/examples' minGPT-ddp trainer): both work. Wrapping a model needs the default
process group, which tapegrad never has: constructing one raises torch's error for a process group that was not
initialised.
"""

from __future__ import annotations

from ...distributed import _NOT_INIT
from ..module import Module

__all__ = ["DistributedDataParallel"]


class DistributedDataParallel(Module):
    """torch.nn.parallel.DistributedDataParallel: raises, as torch's does without ``init_process_group``."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0, broadcast_buffers=True,
                 process_group=None, bucket_cap_mb=None, find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False, delay_all_reduce_named_params=None,
                 param_to_hook_all_reduce=None, mixed_precision=None, device_mesh=None,
                 skip_all_reduce_unused_params=False):
        raise ValueError(_NOT_INIT)
