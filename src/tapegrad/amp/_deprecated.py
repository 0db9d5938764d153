"""``torch.cuda.amp`` and ``torch.cpu.amp``'s ``autocast`` and ``GradScaler``: the ``torch.amp`` ones for one device,
each warning at creation that the spelling is deprecated, in torch's words."""

from __future__ import annotations

import warnings

from .autocast_mode import autocast as _autocast
from .grad_scaler import GradScaler as _GradScaler


def deprecated_amp(device):
    """``(autocast, GradScaler)`` classes of ``torch.<device>.amp``."""
    class autocast(_autocast):
        def __init__(self, enabled=True, dtype=None, cache_enabled=True):
            warnings.warn(f"`torch.{device}.amp.autocast(args...)` is deprecated. Please use `torch.amp.autocast("
                          f"'{device}', args...)` instead.", FutureWarning, stacklevel=2)
            super().__init__(device, dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)

    class GradScaler(_GradScaler):
        def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000,
                     enabled=True):
            warnings.warn(f"`torch.{device}.amp.GradScaler(args...)` is deprecated. Please use `torch.amp."
                          f"GradScaler('{device}', args...)` instead.", FutureWarning, stacklevel=2)
            super().__init__(device, init_scale, growth_factor, backoff_factor, growth_interval, enabled)

    for cls in (autocast, GradScaler):
        cls.__module__ = f"tapegrad.{device}.amp"
        cls.__qualname__ = cls.__name__
    return autocast, GradScaler
