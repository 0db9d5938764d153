"""``torch._utils``: the helpers code outside torch imports from it — flattening a list of tensors into one buffer
and back (gradient bucketing in data-parallel and model-parallel code), the ``_rebuild_*`` functions that
``torch.save`` pickles name, and a device-index helper.
"""

from __future__ import annotations

import importlib

from .serialization._torch_names import REBUILDS

globals().update({fn.__name__: fn for fn in REBUILDS})      # _rebuild_tensor_v2, _rebuild_parameter, ...


def _flatten_dense_tensors(tensors):
    """The tensors' elements, each in row-major order, one after another in a new 1-d tensor (differentiable)."""
    from .ops.shape import cat
    tensors = list(tensors)
    if len(tensors) == 1:
        return tensors[0].contiguous().view(-1)
    return cat([t.contiguous().view(-1) for t in tensors])


def _unflatten_dense_tensors(flat, tensors):
    """Views of ``flat`` shaped as ``tensors``, in order (the inverse of ``_flatten_dense_tensors``)."""
    out, offset = [], 0
    for t in tensors:
        n = t.numel()
        out.append(flat.narrow(0, offset, n).view(t.shape) if n else flat.new_empty(t.shape))
        offset += n
    return tuple(out)


def _element_size(dtype):
    """Bytes per element of ``dtype``."""
    from . import _dtype
    return _dtype.to_dtype(dtype).itemsize


def _get_device_index(device, optional=False, allow_cpu=False):
    """The index of ``device`` (a device, a string or an int); a CPU device is refused unless ``allow_cpu``, and
    a device without an index gives None when ``optional`` (as torch without an accelerator: no current one)."""
    from .tensor import device as _device
    if isinstance(device, str):
        device = _device(device)
    if isinstance(device, _device):
        if allow_cpu and device.type in ("cpu", "meta"):
            return -1
        if device.type == "cpu":
            raise ValueError(f"Expected a non cpu device, but got: {device}")
        index = device.index
    else:
        index = device
    if index is None:
        if not optional:
            raise ValueError(f"Expected a torch.device with a specified index or an integer, but got:{device}")
        return None
    return index


def _import_dotted_name(name):
    components = name.split(".")
    obj = importlib.import_module(components[0])
    for component in components[1:]:
        obj = getattr(obj, component)
    return obj


class _ClassPropertyDescriptor:
    def __init__(self, fget):
        self.fget = fget

    def __get__(self, instance, owner=None):
        return self.fget.__get__(instance, owner or type(instance))()


def classproperty(func):
    """A read-only property of the class (``torch._utils.classproperty``)."""
    if not isinstance(func, (classmethod, staticmethod)):
        func = classmethod(func)
    return _ClassPropertyDescriptor(func)
