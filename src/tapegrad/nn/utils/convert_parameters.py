"""``parameters_to_vector`` / ``vector_to_parameters``: flatten parameters into one vector and back."""

from __future__ import annotations

from ...tensor import Tensor

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def _typename(obj):
    return f"tapegrad.{obj.dtype._legacy}Tensor" if isinstance(obj, Tensor) else type(obj).__name__


def parameters_to_vector(parameters):
    """One 1-D tensor holding every parameter, flattened and concatenated (differentiable).

    >>> vec = tapegrad.nn.utils.parameters_to_vector(model.parameters())
    """
    from ... import cat
    return cat([p.reshape(-1) for p in parameters])


def vector_to_parameters(vec, parameters):
    """Copy consecutive slices of the 1-D ``vec`` into the ``.data`` of each parameter."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {_typename(vec)}")
    pointer = 0
    flat = vec._array.reshape(-1)
    for param in parameters:
        n = param.numel()
        param.data = Tensor._make(flat[pointer:pointer + n].reshape(param._array.shape))
        pointer += n
