"""``DataParallel`` as torch runs it without an accelerator: a wrapper that calls the module it holds.

Its value to tapegrad is compatibility: code that wraps a model (``model = nn.DataParallel(model)``) runs unchanged,
and state dicts keep torch's ``module.`` prefix, so checkpoints saved from a wrapped model load into a wrapped one.
"""

from __future__ import annotations

from ..module import Module

__all__ = ["DataParallel", "data_parallel"]


class DataParallel(Module):
    """Holds ``module`` (as ``self.module``) and forwards every call to it. ``device_ids`` is ``[]``: there is no
    device to scatter the batch over (torch's behaviour on a machine without one); the other arguments are
    accepted and ignored, as there.

    >>> net = tapegrad.nn.DataParallel(tapegrad.nn.Linear(2, 3))
    >>> list(net.state_dict())
    ['module.weight', 'module.bias']
    """

    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        self.module = module
        self.device_ids = []

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)


def data_parallel(module, inputs, device_ids=None, output_device=None, dim=0, module_kwargs=None):
    """The functional ``DataParallel``: it needs an accelerator to find its devices, and raises torch's error on a
    machine without one (dcgan calls it only when its input is on a GPU)."""
    raise RuntimeError("device type could not be determined")
