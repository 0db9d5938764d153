"""``DistributedDataParallel`` in a job of one process (``tapegrad.distributed``).

Wrapping a model needs the default process group, as in torch: before ``init_process_group`` the constructor raises
torch's error. In the group of one process tapegrad can make, averaging each gradient over the processes leaves it
as it is and broadcasting the parameters and buffers from rank 0 does nothing, so the wrapper runs its module: the
same outputs, gradients and state_dict keys (``module.``-prefixed) as torch's DDP with one process. Scripts reach the
model through ``.module`` and use ``no_sync()`` for gradient accumulation; both work.
"""

from __future__ import annotations

import contextlib

from ... import distributed as dist
from ..module import Module

__all__ = ["DistributedDataParallel"]


class DistributedDataParallel(Module):
    """torch.nn.parallel.DistributedDataParallel with one process: the wrapped module, as ``.module``."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0, broadcast_buffers=True,
                 process_group=None, bucket_cap_mb=None, find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False, delay_all_reduce_named_params=None,
                 param_to_hook_all_reduce=None, mixed_precision=None, device_mesh=None,
                 skip_all_reduce_unused_params=False):
        super().__init__()
        self.process_group = dist._world(process_group)
        if not any(p.requires_grad for p in module.parameters()):
            raise RuntimeError("DistributedDataParallel is not needed when a module doesn't have any parameter that "
                               "requires a gradient.")
        self.module = module
        self.device_ids, self.output_device, self.dim = device_ids, output_device, dim
        self.broadcast_buffers, self.find_unused_parameters = broadcast_buffers, find_unused_parameters
        self.gradient_as_bucket_view, self.static_graph = gradient_as_bucket_view, static_graph
        self.require_backward_grad_sync = True
        self.require_forward_param_sync = True

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)

    @contextlib.contextmanager
    def no_sync(self):
        """Skip the gradients' all-reduce inside the block (gradient accumulation); with one process the gradients
        are the same either way."""
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old

    def join(self, divide_by_initial_world_size=True, enable=True, throw_on_early_termination=False):
        """Uneven inputs across processes: with one process there is nothing to wait for."""
        return contextlib.nullcontext()

    def register_comm_hook(self, state, hook):
        raise NotImplementedError("DistributedDataParallel.register_comm_hook: tapegrad's DDP runs one process and "
                                  "does no gradient communication for a hook to change; apply the hook's transform "
                                  "to the gradients yourself (e.g. in a tensor hook)")
