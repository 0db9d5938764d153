"""``Parameter``: a Tensor that a ``Module`` registers as a learnable weight when assigned as an attribute.

>>> p = tapegrad.nn.Parameter(tapegrad.zeros(2))
>>> p.requires_grad
True
"""

from __future__ import annotations

import numpy as np

from ..tensor import Tensor

__all__ = ["Parameter", "Buffer", "UninitializedParameter"]


def _init_from(t, data, requires_grad):
    if data is None:
        arr = np.empty((0,), np.float32)
        vc = [0]
    elif isinstance(data, Tensor):
        arr, vc = data._array, data._vc
    else:
        arr, vc = np.asarray(data), [0]
    t._array = arr
    t._rg = False
    t.grad_fn = t._grad = t._acc = t._base = None
    t._output_nr = 0
    t._vc = vc
    if requires_grad:
        t.requires_grad = True


class Parameter(Tensor):
    """A leaf Tensor (sharing ``data``'s memory) that requires grad and is registered by ``Module.__setattr__``.

    >>> lin_w = tapegrad.nn.Parameter(tapegrad.randn(3, 2))
    """

    __slots__ = ()

    def __new__(cls, data=None, requires_grad=True):
        t = object.__new__(cls)
        _init_from(t, data, requires_grad)
        return t

    def __init__(self, data=None, requires_grad=True):
        pass    # all set by __new__ (Tensor.__init__ would re-read the arguments)

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        new = type(self)(Tensor._make(self._array.copy()), self._rg)
        if self._grad is not None:
            new._grad = self._grad._detached_copy()
        memo[id(self)] = new
        return new

    def __reduce_ex__(self, proto):
        return (_rebuild_parameter, (self._array, self._rg))


def _rebuild_parameter(array, rg):
    return Parameter(Tensor._make(array), rg)


class UninitializedParameter(Parameter):
    """Accepted for compatibility: lazy modules are not provided by tapegrad."""

    __slots__ = ()


class Buffer:
    """``nn.Buffer(tensor, persistent=True)``: a marker that ``Module.__setattr__`` registers as a buffer.

    >>> m = tapegrad.nn.Module(); m.count = tapegrad.nn.Buffer(tapegrad.zeros(1))
    """

    def __init__(self, data=None, *, persistent=True):
        self.data = data if data is not None else Tensor._make(np.empty((0,), np.float32))
        self.persistent = persistent
