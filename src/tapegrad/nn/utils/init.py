"""``nn.utils.skip_init``: build a layer without running its initialisation's result (its parameters hold
arbitrary values), for code that fills them itself.

>>> skip_init(tapegrad.nn.Linear, 3, 2).weight.shape
tapegrad.Size([2, 3])
"""

from __future__ import annotations

import inspect

__all__ = ["skip_init"]


def skip_init(module_cls, *args, **kwargs):
    """``module_cls(*args, **kwargs)`` with uninitialised parameters and buffers (the class must take ``device``,
    as torch requires)."""
    from ..module import Module
    if not issubclass(module_cls, Module):
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    device = kwargs.pop("device", "cpu")
    return module_cls(*args, **kwargs).to_empty(device=device)
