"""``nn.utils.convert_conv2d_weight_memory_format`` / ``..._conv3d_...``: the convolutions' weights of a module tree
in a memory format (``channels_last`` for 2-d, ``channels_last_3d`` for 3-d), as torch's."""

from __future__ import annotations

__all__ = ["convert_conv2d_weight_memory_format", "convert_conv3d_weight_memory_format"]


def _convert(module, memory_format, classes):
    from ..modules import conv
    kinds = tuple(getattr(conv, c) for c in classes)
    if isinstance(module, kinds):
        w = module.weight.detach().clone(memory_format=memory_format)
        module.weight.data = w.resize_(w.size(), memory_format=memory_format)
    for child in module.children():
        _convert(child, memory_format, classes)
    return module


def convert_conv2d_weight_memory_format(module, memory_format):
    """Every ``Conv2d`` / ``ConvTranspose2d`` weight in ``module`` (and its children) in ``memory_format``."""
    return _convert(module, memory_format, ("Conv2d", "ConvTranspose2d"))


def convert_conv3d_weight_memory_format(module, memory_format):
    """Every ``Conv3d`` / ``ConvTranspose3d`` weight in ``module`` (and its children) in ``memory_format``."""
    return _convert(module, memory_format, ("Conv3d", "ConvTranspose3d"))
