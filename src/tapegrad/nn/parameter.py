"""``Parameter``: a Tensor that a ``Module`` registers as a learnable weight when assigned as an attribute.

>>> p = tapegrad.nn.Parameter(tapegrad.zeros(2))
>>> p.requires_grad
True
"""

from __future__ import annotations

import numpy as np

from ..tensor import Tensor

__all__ = ["Parameter", "Buffer", "UninitializedParameter", "UninitializedBuffer", "is_lazy"]


def _no_detach(data):
    """torch's Parameter/Buffer call ``data.detach()``: a number, list or array fails with Python's AttributeError."""
    data.detach                             # noqa: B018 - raises the AttributeError in Python's own words
    raise TypeError(f"Parameter data must be a tapegrad Tensor, not {type(data).__name__}")


def _init_from(t, data, requires_grad):
    if data is None:
        arr = np.empty((0,), np.float32)
        vc = [0]
    elif isinstance(data, Tensor):
        arr, vc = data._array, data._vc
    else:                                   # torch detaches its argument: anything but a tensor fails there
        _no_detach(data)
    t._array = arr
    t._rg = False
    t.grad_fn = t._grad = t._acc = t._view = None
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
        if self.__dict__:                  # (its attributes are pickled; a deepcopy leaves them, as torch's)
            return (_rebuild_parameter, (self._array, self._rg), dict(self.__dict__))
        return (_rebuild_parameter, (self._array, self._rg))


def _rebuild_parameter(array, rg):
    return Parameter(Tensor._make(array), rg)


_SHAPE_ERROR = ("Can't access the shape of an uninitialized parameter or buffer. This error usually happens in "
                "`load_state_dict` when trying to load an uninitialized parameter into an initialized one. Call "
                "`forward` to initialize the parameters before accessing their attributes.")


class _Unmaterialized(np.ndarray):
    """The (empty) array of an uninitialized parameter or buffer: NumPy refuses to compute with it and its shape
    cannot be read, so that using a lazy module's weight before its first forward fails loudly, as in torch."""

    @property
    def shape(self):
        raise RuntimeError(_SHAPE_ERROR)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        raise ValueError(_use_error(f"numpy.{ufunc.__name__}"))

    def __array_function__(self, func, types, args, kwargs):
        raise ValueError(_use_error(f"numpy.{func.__name__}"))


def _use_error(what):
    return (f"Attempted to use an uninitialized parameter in {what}. This error happens when you are using a "
            "`LazyModule` or explicitly manipulating `tapegrad.nn.parameter.UninitializedParameter` (or "
            "`UninitializedBuffer`) objects. When using LazyModules Call `forward` with a dummy batch to initialize "
            "the parameters before calling tapegrad functions")


class UninitializedTensorMixin:
    """What an uninitialized parameter or buffer of a lazy module (``nn.LazyLinear``...) is: a placeholder with a
    dtype and no shape. ``materialize(shape)`` gives it an array of that shape (uninitialized memory, for the
    module's ``reset_parameters`` to fill) and turns it into ``cls_to_become``, keeping its identity, so that an
    optimizer given it before the first forward updates the materialized weight."""

    __slots__ = ()
    cls_to_become = None

    def materialize(self, shape, device=None, dtype=None):
        from .. import _dtype
        d = self._array.dtype if dtype is None else _dtype.to_dtype(dtype).np
        self._array = np.empty(tuple(shape), d)
        self._vc[0] += 1
        self.__class__ = self.cls_to_become

    @property
    def shape(self):
        raise RuntimeError(_SHAPE_ERROR)

    def size(self, dim=None):
        from ..tensor import Size
        return Size((0,)) if dim is None else 0

    def share_memory_(self):
        raise RuntimeError("Can't share memory on an uninitialized parameter or buffer. Call `forward` to initialize "
                           "the parameters before calling `module.share_memory()`.")

    def __repr__(self):
        return f"<{type(self).__name__}>"

    def __deepcopy__(self, memo):
        if id(self) not in memo:
            memo[id(self)] = type(self)(self._rg, None, self._array.dtype)
        return memo[id(self)]

    def __reduce_ex__(self, proto):
        return (type(self), (self._rg,))


def _placeholder(cls, requires_grad, dtype):
    from .. import _dtype
    d = (_dtype.to_dtype(dtype) if dtype is not None else _dtype.get_default_dtype()).np
    t = object.__new__(cls)
    _init_from(t, None, requires_grad)
    t._array = np.empty((0,), d).view(_Unmaterialized)
    return t


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    """A lazy module's parameter before its first forward: no shape yet (``materialize`` gives it one and makes it
    a ``Parameter``).

    >>> lazy = tapegrad.nn.LazyLinear(3)
    >>> lazy.weight
    <UninitializedParameter>
    """

    __slots__ = ()
    cls_to_become = Parameter

    def __new__(cls, requires_grad=True, device=None, dtype=None):
        return _placeholder(cls, requires_grad, dtype)

    def __init__(self, requires_grad=True, device=None, dtype=None):
        pass


class UninitializedBuffer(UninitializedTensorMixin, Tensor):
    """A lazy module's buffer (``running_mean``...) before its first forward; ``materialize`` makes it a Tensor."""

    __slots__ = ()
    cls_to_become = Tensor

    def __new__(cls, requires_grad=False, device=None, dtype=None, persistent=True):
        t = _placeholder(cls, requires_grad, dtype)
        t.persistent = persistent
        return t

    def __init__(self, requires_grad=False, device=None, dtype=None, persistent=True):
        pass


def is_lazy(t):
    """Whether ``t`` is an uninitialized parameter or buffer."""
    return isinstance(t, UninitializedTensorMixin)


class Buffer:
    """``nn.Buffer(tensor, persistent=True)``: a marker that ``Module.__setattr__`` registers as a buffer.

    >>> m = tapegrad.nn.Module(); m.count = tapegrad.nn.Buffer(tapegrad.zeros(1))
    """

    def __init__(self, data=None, *, persistent=True):
        if data is not None and not isinstance(data, Tensor):
            _no_detach(data)
        self.data = data if data is not None else Tensor._make(np.empty((0,), np.float32))
        self.persistent = persistent
