"""Copies and casts: clone, to, the ``x.float()`` / ``x.long()`` family, ``type``; zero_, fill_ and
copy_.
"""

from __future__ import annotations

import warnings

import numpy as np

from ... import _dtype
from ...autograd.function import _active
from .._util import Primitive, Tensor, apply_inplace, bind, broadcast_or_error, linear_jvp


# --- copies and casts ---------------------------------------------------------------------------------------
class Clone(Primitive):
    """A copy with its own memory; the gradient passes through."""

    array_backward = True

    jvp = staticmethod(linear_jvp)   # linear: the op itself applied to the tangents

    @staticmethod
    def forward(ctx, x, memory_format=None):
        if memory_format is None:
            return x.copy(order="K")    # (torch's preserve_format: a dense input keeps its dim order)
        from ...tensor import _in_format
        return _in_format(x, memory_format)

    @staticmethod
    def backward(ctx, grad):
        return grad, None


class ToCopy(Primitive):
    """A cast to another dtype; the gradient is cast back."""

    jvp = staticmethod(linear_jvp)   # linear: the op itself applied to the tangents

    @staticmethod
    def forward(ctx, x, dtype):
        if x.dtype.kind == "c" and dtype.np.kind != "c":
            warnings.warn("Casting complex values to real discards the imaginary part", UserWarning, stacklevel=5)
            x = x.real
        return _dtype.cast(x, dtype.np)

    @staticmethod
    def backward(ctx, grad):
        return grad, None   # the engine casts a gradient to its input's dtype


def clone(input, *, memory_format=None):  # noqa: A002
    """A copy of ``input`` that stays in the graph (gradient flows back to ``input``); laid out as
    ``memory_format`` asks (default ``preserve_format``: the input's dim order)."""
    if memory_format is not None:
        from ...tensor import _format_perm, preserve_format
        if memory_format is not preserve_format:
            _format_perm(memory_format, input._array.ndim)     # (torch's error for a wrong rank, up front)
            return Clone.apply(input, memory_format)
    return Clone.apply(input)


_TO_SIGNATURES = (" * (torch.device device = None, torch.dtype dtype = None, bool non_blocking = False, "
                  "bool copy = False, *, torch.memory_format memory_format = None)\n"
                  " * (torch.dtype dtype, bool non_blocking = False, bool copy = False, *, torch.memory_format "
                  "memory_format = None)\n"
                  " * (Tensor tensor, bool non_blocking = False, bool copy = False, *, torch.memory_format "
                  "memory_format = None)\n")


def _torch_type_name(a):
    """An argument's type as torch's argument parser names it in its errors."""
    if isinstance(a, Tensor):
        return "Tensor"
    kind = type(a).__name__
    return f"torch.{kind}" if kind in ("dtype", "device", "memory_format", "layout") else kind


def to_arguments_error(args, kwargs):
    """torch's TypeError for ``.to(...)`` (of a tensor or a module) called with an argument it does not take
    (``a.to(requires_grad=True)``, from an old tutorial): every argument given, the keywords in the reverse of
    the order they were passed in (as torch lists them)."""
    kws = [f"{k}={_torch_type_name(v)}" for k, v in reversed(kwargs.items())]
    got = ", ".join([_torch_type_name(a) for a in args] + kws) if args else "".join(k + ", " for k in kws)
    return TypeError(f"to() received an invalid combination of arguments - got ({got}), but expected one of:\n"
                     + _TO_SIGNATURES)


def to(input, *args, dtype=None, device=None, non_blocking=False, copy=False, memory_format=None,  # noqa: A002
       **unexpected):
    """``x.to(tapegrad.float64)``, ``x.to("cpu")``, ``x.to(other)``: a cast (only the CPU exists)."""
    from ...tensor import _check_device
    if unexpected:
        given = dict(dtype=dtype, device=device, non_blocking=non_blocking, copy=copy, memory_format=memory_format)
        given = {k: v for k, v in given.items() if v not in (None, False)}
        raise to_arguments_error(args, {**given, **unexpected})
    meta = None if device is None else _check_device(device, default=False)   # (None: the device stays)
    for a in args:
        if isinstance(a, Tensor):
            dtype = a.dtype
            meta = a.is_meta
        elif isinstance(a, _dtype.dtype) or (not isinstance(a, str) and hasattr(a, "is_floating_point")):
            dtype = a
        elif isinstance(a, (str,)) or a.__class__.__name__ == "device":
            meta = _check_device(a, default=False)
    if meta is not None and meta is not input.is_meta:
        return _to_device(input, dtype, meta)
    if dtype is not None:
        d = _dtype.to_dtype(dtype)
        if d is not input.dtype:
            if input._rg and not d.is_floating_point and not d.is_complex:
                return Tensor._make(ToCopy.forward(None, input._array, d))
            out = ToCopy.apply(input, d)
            return out if memory_format is None else to(out, memory_format=memory_format)
    if memory_format is not None:
        from ...tensor import _is_in_format, preserve_format
        if memory_format is not preserve_format and not _is_in_format(input._array, memory_format):
            return clone(input, memory_format=memory_format)
    return clone(input) if copy else input


def _to_device(input, dtype, meta):
    """``x.to("meta")``: a meta tensor of x's shape (and ``dtype``), recorded as a copy; from the meta device to
    the CPU there is no data to copy (torch's error)."""
    from ..._meta import NO_DATA, meta_array
    if not meta:
        raise NotImplementedError(NO_DATA)
    d = _dtype.to_dtype(dtype) if dtype is not None else input.dtype
    if input._rg:
        out = ToCopy.apply(input, d)
        out._array = meta_array(out._array.shape, d.np)
        return out
    return Tensor._make(meta_array(input._array.shape, d.np))


def _cast(dt):
    def cast(self, memory_format=None):
        return to(self, dt)
    return cast


def _type(self, dtype=None, non_blocking=False, **kwargs):
    """``x.type()`` is torch's type name, ``'torch.FloatTensor'`` (what code written for torch compares with);
    ``x.type(t)`` casts to a dtype, a typed class (``torch.LongTensor``) or a type name (``'torch.LongTensor'``)."""
    from ..._legacy import parse_type, type_string
    if dtype is None:
        return type_string(self)
    d = parse_type(dtype)
    return self if d is self.dtype else to(self, d)


class Zero(Primitive):
    """``x.zero_()``'s op: zeros of x's shape and dtype; x's old values get a zero gradient (torch's
    ZeroBackward0, so the result still requires grad)."""

    node_name = "ZeroBackward0"
    fills = True       # (one value written: torch allows it into an expanded tensor, ops/_util.writable)
    array_backward = True

    @staticmethod
    def forward(ctx, x):
        return np.zeros(x.shape, x.dtype)

    @staticmethod
    def backward(ctx, grad):
        return np.zeros_like(grad) if grad.__class__ is np.ndarray else Tensor._make(np.zeros_like(grad._array))


class FillScalar(Primitive):
    """``x.fill_(number)``'s op (FillBackward2): x's old values get a zero gradient."""

    node_name = "FillBackward2"
    fills = True

    @staticmethod
    def forward(ctx, x, value):
        return np.full(x.shape, value, x.dtype)

    @staticmethod
    def backward(ctx, grad):
        return Tensor._make(np.zeros_like(grad._array)), None


class FillTensor(Primitive):
    """``x.fill_(value_tensor)``'s op (FillBackward3): the 0-d value gets the sum of the gradient."""

    node_name = "FillBackward3"

    @staticmethod
    def forward(ctx, x, value):
        return np.full(x.shape, value, x.dtype)

    @staticmethod
    def backward(ctx, grad):
        need = ctx.needs_input_grad
        return (Tensor._make(np.zeros_like(grad._array)) if need[0] else None), (grad.sum() if need[1] else None)


def zero_(self):
    """Fill with zeros in place (``x.grad.zero_()``)."""
    return apply_inplace(self, Zero.apply)


def fill_(self, value):
    """Fill with ``value`` (a number, or a 0-d tensor: differentiable in it) in place."""
    if isinstance(value, Tensor):
        if value._array.ndim:
            raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with "
                               f"{value._array.ndim} dimensions.")
        return apply_inplace(self, FillTensor.apply, value)
    v = _dtype.fill_scalar(value, self.dtype, halves=False)
    if _active[0]:         # (a NumPy scalar: compile's capture takes it as a constant, an array it could not)
        v = v[()]
    return apply_inplace(self, FillScalar.apply, v)


class _CopyFrom(Primitive):
    """``x.copy_(src)``'s op: ``src`` broadcast to x's shape and cast to its dtype (torch's CopyBackwards). x's old
    values get a zero gradient; ``src`` gets the gradient, summed over the broadcast and cast back (the engine
    does both from src's recorded shape and dtype)."""

    node_name = "CopyBackwards"
    array_backward = True

    jvp = staticmethod(lambda ctx, tx, tsrc: None if tsrc is None else ctx.op.apply(ctx.inputs[0], tsrc))

    @staticmethod
    def forward(ctx, x, src):
        # (a src that broadcasts beyond x's shape gives a larger result: apply_inplace's write refuses it, as torch)
        shape = x.shape if src.shape == x.shape else broadcast_or_error(x.shape, src.shape)
        return _dtype.cast(np.broadcast_to(src, shape), x.dtype)

    @staticmethod
    def backward(ctx, grad):
        gx = None
        if ctx.needs_input_grad[0]:
            gx = np.zeros_like(grad) if grad.__class__ is np.ndarray else Tensor._make(np.zeros_like(grad._array))
        return gx, grad


def copy_(self, src, non_blocking=False):
    """Copy ``src`` (broadcast, cast) into this tensor in place; differentiable with respect to ``src``."""
    if not isinstance(src, Tensor):
        src = Tensor._make(np.asarray(src))
    return apply_inplace(self, _CopyFrom.apply, src)


bind(
    zero_=zero_, fill_=fill_, copy_=copy_,
    clone=clone, to=to, float=_cast(_dtype.float32), double=_cast(_dtype.float64), half=_cast(_dtype.float16),
    bfloat16=_cast(_dtype.bfloat16), long=_cast(_dtype.int64), int=_cast(_dtype.int32), short=_cast(_dtype.int16),
    char=_cast(_dtype.int8), byte=_cast(_dtype.uint8), bool=_cast(_dtype.bool), type=_type,
    type_as=lambda self, other: to(self, other.dtype),
)
