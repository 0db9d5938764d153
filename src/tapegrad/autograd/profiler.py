"""``tapegrad.autograd.profiler``: torch's older profiler names (``profile``, ``record_function``), served by
``tapegrad.profiler``."""

from __future__ import annotations

from ..profiler import EventList, record_function
from ..profiler import profile as _profile

__all__ = ["profile", "record_function", "EventList"]


class profile(_profile):
    """``torch.autograd.profiler.profile(enabled=True, *, use_cuda=False, record_shapes=False, ...)``."""

    def __init__(self, enabled=True, *, use_cuda=False, use_device=None, record_shapes=False, with_flops=False,
                 profile_memory=False, with_stack=False, with_modules=False, use_kineto=False, use_cpu=True,
                 experimental_config=None, acc_events=False, custom_trace_id_callback=None):
        super().__init__(record_shapes=record_shapes, profile_memory=profile_memory, with_stack=with_stack,
                         with_flops=with_flops, with_modules=with_modules)
        self.enabled = enabled

    def __enter__(self):
        return super().__enter__() if self.enabled else self

    def table(self, *args, **kwargs):
        return self.key_averages().table(*args, **kwargs)
