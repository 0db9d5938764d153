"""``torch.get_device_module``: the module of a device type (``tapegrad.cpu``, ``tapegrad.cuda``, ...)."""

from __future__ import annotations

import importlib


def get(device=None):
    """The module for ``device`` (a device, a string, or None: the current accelerator's, which is the CPU's
    here: tapegrad runs on the CPU)."""
    from .tensor import device as device_cls
    if isinstance(device, device_cls):
        name = device.type
    elif isinstance(device, str):
        name = device_cls(device).type
    elif device is None:
        name = "cpu"
    else:
        raise RuntimeError(f"Invalid value of device '{device}', expect torch.device, str, or None")
    try:
        module = importlib.import_module(f"tapegrad.{name}")
    except ModuleNotFoundError:
        module = None
    if module is None or name == "meta":
        raise RuntimeError(f"Device '{name}' does not have a corresponding module registered as 'torch.{name}'.")
    return module


def is_vulkan_available():
    """Whether the Vulkan backend is there: never (tapegrad runs on the CPU, like torch's CPU build)."""
    return False
