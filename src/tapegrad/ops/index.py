"""Indexing: ``x[key]`` (basic and advanced, NumPy/torch semantics) and ``x[key] = value``."""

from __future__ import annotations

import numpy as np

from ..autograd.grad_mode import _state
from ._util import Primitive, Tensor, apply_inplace, bind, mark_view

__all__ = []


def _convert_key(key):
    """Tensors and lists in an index become ndarrays; a tuple key is normalised to a tuple."""
    if not isinstance(key, tuple):
        key = (key,)
    out = []
    for k in key:
        if isinstance(k, Tensor):
            k = k._array
            if k.dtype.kind == "f":
                raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        elif isinstance(k, list):
            k = np.asarray([x._array if isinstance(x, Tensor) else x for x in k])
            if k.dtype.kind == "f":
                raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        out.append(k)
    return tuple(out)


def _is_advanced(key):
    return any(isinstance(k, np.ndarray) and k.ndim > 0 or isinstance(k, np.ndarray) and k.dtype == np.bool_
               for k in key)


def _node_name(key, advanced):
    """The grad_fn name torch shows for this index (the last non-trivial step of its decomposition)."""
    if advanced:
        return "IndexBackward0"
    name = "AliasBackward0"
    for k in key:
        if k is None:
            name = "UnsqueezeBackward0"
        elif isinstance(k, (int, np.integer)) or (isinstance(k, np.ndarray) and k.ndim == 0):
            name = "SelectBackward0"
        elif isinstance(k, slice):
            if k != slice(None) or len(key) == 1:
                name = "SliceBackward0"
    return name


def _check_bounds(shape, key):
    dim = 0
    for k in key:
        if k is Ellipsis:
            dim = len(shape) - sum(1 for kk in key if kk is not None and kk is not Ellipsis) + dim
            continue
        if k is None:
            continue
        if isinstance(k, (int, np.integer)) and not isinstance(k, bool):
            if dim >= len(shape):
                raise IndexError(f"too many indices for tensor of dimension {len(shape)}")
            if not -shape[dim] <= k < shape[dim]:
                raise IndexError(f"index {k} is out of bounds for dimension {dim} with size {shape[dim]}")
        dim += 1


class _ScatterGrad(Primitive):
    """Backward of indexing: a zero tensor of the input's shape with ``grad`` added at ``key``."""

    node_name = "IndexPutBackward0"

    @staticmethod
    def forward(ctx, grad, key, shape, advanced):
        ctx.key = key
        out = np.zeros(shape, grad.dtype)
        if advanced:
            np.add.at(out, key, grad)
        else:
            out[key] = grad
        return out

    @staticmethod
    def backward(ctx, gg):
        return GetItem.apply(gg, ctx.key), None, None, None


class GetItem(Primitive):
    """``x[key]``."""

    @staticmethod
    def forward(ctx, x, key):
        advanced = _is_advanced(key)
        if not advanced and Ellipsis not in key:
            key = key + (Ellipsis,)   # a 0-d result stays a view (NumPy would return a scalar copy)
        ctx.key, ctx.shape, ctx.advanced = key, x.shape, advanced
        return x[key]

    @staticmethod
    def backward(ctx, grad):
        return _ScatterGrad.apply(grad, ctx.key, ctx.shape, ctx.advanced), None


_getitem_classes = {}


def _getitem_cls(name):
    cls = _getitem_classes.get(name)
    if cls is None:
        cls = _getitem_classes[name] = type(name[:-len("Backward0")], (GetItem,), {"node_name": name})
    return cls


def getitem(self, key):
    key = _convert_key(key)
    _check_bounds(self._array.shape, key)
    advanced = _is_advanced(key)
    out = _getitem_cls(_node_name(key, advanced)).apply(self, key)
    if not advanced:
        mark_view(out, self, lambda t, k=key: t[k])
    return out


class IndexPut(Primitive):
    """``x`` with ``x[key]`` replaced by ``value`` (out of place; ``__setitem__`` writes it back)."""

    @staticmethod
    def forward(ctx, x, value, key):
        out = x.copy()
        out[key] = value
        ctx.key = key
        return out

    @staticmethod
    def backward(ctx, grad):
        need = ctx.needs_input_grad
        gx = gv = None
        if need[0]:
            mask = np.ones(grad._array.shape, grad._array.dtype)
            mask[ctx.key] = 0
            gx = grad * mask
        if need[1]:
            gv = GetItem.apply(grad, ctx.key)
        return gx, gv, None


def setitem(self, key, value):
    key = _convert_key(key)
    _check_bounds(self._array.shape, key)
    recording = _state.enabled and (self._rg or (isinstance(value, Tensor) and value._rg))
    if not recording:
        if _state.enabled and self._rg and self.grad_fn is None:
            raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
        self._array[key] = value._array if isinstance(value, Tensor) else value
        self._vc[0] += 1
        return
    if isinstance(value, Tensor) and value.dtype is not self.dtype:
        value = value.to(self.dtype)
    apply_inplace(self, IndexPut.apply, value, key)


bind(__getitem__=getitem, __setitem__=setitem)
