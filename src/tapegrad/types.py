"""``torch.types``: the type aliases torch's annotations use (``Number``, ``_size``, ``Device``, ``_dtype``...),
for code that imports them (``from torch.types import Number, _size``)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import IO, TYPE_CHECKING, Union

from ._dtype import dtype as _dtype
from ._sym import SymBool, SymFloat, SymInt
from .tensor import Size, Tensor, device as _device, layout as _layout

if TYPE_CHECKING:
    from .autograd.graph import GradientEdge  # noqa: F401  (named as a forward reference below, as torch does)

__all__ = ["Number", "Device", "FileLike", "Storage", "IntLikeType", "FloatLikeType", "BoolLikeType",
           "PySymType", "py_sym_types", "SymInt", "SymFloat", "SymBool", "Size", "Tensor"]

_int, _float, _bool, _complex, _str, _bytes = int, float, bool, complex, str, bytes
Number = int | float | bool
_Number = (int, float, bool)
_size = Size | list[int] | tuple[int, ...]
_symsize = Size | Sequence[int | SymInt]
Device = _device | str | int | None
_TensorOrTensors = Tensor | Sequence[Tensor]
_TensorOrOptionalTensors = Tensor | Sequence[Tensor | None]
_TensorOrTensorsOrGradEdge = Union[Tensor, Sequence[Tensor], "GradientEdge", Sequence["GradientEdge"]]  # noqa: UP007
IntLikeType = int | SymInt
FloatLikeType = float | SymFloat
BoolLikeType = bool | SymBool
py_sym_types = (SymInt, SymFloat, SymBool)
PySymType = SymInt | SymFloat | SymBool
FileLike = Union[str, os.PathLike[str], IO[bytes]]  # noqa: UP007
_dtype, _device, _layout = _dtype, _device, _layout


class Storage:
    """The interface a storage offers (torch.types.Storage, for annotations; the storages themselves are
    ``tapegrad.storage.UntypedStorage`` and ``TypedStorage``)."""

    _cdata: int
    device: _device
    dtype: _dtype
    _torch_load_uninitialized: bool

    def element_size(self) -> int:
        raise NotImplementedError

    def nbytes(self) -> int:
        raise NotImplementedError

    def data_ptr(self) -> int:
        raise NotImplementedError

    def is_shared(self) -> bool:
        raise NotImplementedError

    def share_memory_(self):
        raise NotImplementedError

    def cpu(self):
        raise NotImplementedError
