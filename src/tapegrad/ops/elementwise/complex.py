"""Complex numbers: conj (and torch's conj/neg-bit queries), real and imag (views), view_as_real and
view_as_complex (views), complex, polar, angle, sgn.

Gradients follow torch's convention: for a real loss L of a complex z = x + iy, ``z.grad`` is
dL/dx + i dL/dy (twice the conjugate Wirtinger derivative dL/dz*). A holomorphic op's backward multiplies by the
*conjugate* of its derivative, and a real input of a complex op gets the real part of what flows back to it (the
engine takes it when it casts a gradient to its input's dtype).

tapegrad conjugates physically: ``z.conj()`` is a new tensor (a copy with a ``ConjBackward0`` node), never a
lazy view with torch's conjugate bit, so ``is_conj()`` and ``is_neg()`` are always False and ``resolve_conj``
/ ``resolve_neg`` return their input.
"""

from __future__ import annotations

import numpy as np

from .._util import Primitive, Tensor, bind, mark_view
from ._common import _need_tensor, _w, _with_out, _zeros_like
from .unary import _sign
from .._util import autocast_listed


def _real_np(d):
    return np.dtype(np.float64) if d == np.complex128 else np.dtype(np.float32)


def _complex_np(d):
    return np.dtype(np.complex128) if d == np.float64 else np.dtype(np.complex64)


# --- conj ------------------------------------------------------------------------------------------------------
class Conj(Primitive):
    """The complex conjugate (a copy); its gradient is the conjugate of the incoming one."""

    array_backward = True

    @staticmethod
    def forward(ctx, x):
        return np.conjugate(x)

    @staticmethod
    def backward(ctx, grad):
        return grad.conj()


class ConjPhysical(Primitive):
    """``conj_physical``: the conjugate, always materialised (the same as ``conj`` in tapegrad)."""

    array_backward = True

    @staticmethod
    def forward(ctx, x):
        return np.conjugate(x)

    @staticmethod
    def backward(ctx, grad):
        return grad.conj()


def conj(input):  # noqa: A002
    """The complex conjugate; a real tensor is returned as it is.

    >>> tapegrad.conj(tapegrad.tensor([1 + 2j, 3 - 1j]))
    tensor([1.-2.j, 3.+1.j])
    """
    return Conj.apply(input) if input._array.dtype.kind == "c" else input


@_with_out(error="Found dtype {o} but expected {r}")
def conj_physical(input):  # noqa: A002
    """The complex conjugate, computed now (tapegrad's ``conj`` is never lazy either); a real tensor is returned as
    it is."""
    return ConjPhysical.apply(input) if input._array.dtype.kind == "c" else input


def conj_physical_(input):  # noqa: A002
    """In-place ``conj_physical``."""
    if input._array.dtype.kind != "c":
        return input
    from .._util import apply_inplace
    return apply_inplace(input, lambda t: ConjPhysical.apply(t))


def resolve_conj(input):  # noqa: A002
    """``input`` itself: tapegrad never has a lazily conjugated tensor to resolve."""
    return input


def resolve_neg(input):  # noqa: A002
    """``input`` itself: tapegrad never has a lazily negated tensor to resolve."""
    return input


def is_conj(input):  # noqa: A002
    """False: tapegrad conjugates physically (no conjugate bit)."""
    return False


def is_neg(input):  # noqa: A002
    """False: tapegrad negates physically (no negative bit)."""
    return False


# --- real and imag: views of a complex tensor --------------------------------------------------------------------
class _Embed(Primitive):
    """A real tensor put into the real (part 0) or imaginary (part 1) part of zeros: the backward of real/imag."""

    node_name = "SelectBackwardBackward0"
    array_backward = True

    @staticmethod
    def forward(ctx, grad, part):
        ctx.part = part
        return _embed(grad, part)

    @staticmethod
    def backward(ctx, gg):
        return (gg.real if ctx.part == 0 else gg.imag), None


def _embed(g, part):
    """``g`` (real) as the real or imaginary part of a complex array."""
    out = np.zeros(g.shape, _complex_np(g.dtype))
    if part == 0:
        out.real = g
    else:
        out.imag = g
    return out


class RealView(Primitive):
    """``z.real``: the real parts, as a view (writing into it writes into z). torch names its node
    ``SelectBackward0`` (it selects from ``view_as_real``)."""

    node_name = "SelectBackward0"
    array_backward = True

    @staticmethod
    def forward(ctx, z):
        return z.real

    @staticmethod
    def backward(ctx, grad):
        return _Embed.apply(grad, 0) if grad.__class__ is Tensor else _embed(grad, 0)


class ImagView(Primitive):
    """``z.imag``: the imaginary parts, as a view."""

    node_name = "SelectBackward0"
    array_backward = True

    @staticmethod
    def forward(ctx, z):
        return z.imag

    @staticmethod
    def backward(ctx, grad):
        return _Embed.apply(grad, 1) if grad.__class__ is Tensor else _embed(grad, 1)


def _real_view_fn(t):
    return real(t)


def _imag_view_fn(t):
    return imag(t)


def real(input):  # noqa: A002
    """The real parts of a complex tensor, as a view (``z.real[0] = 5`` changes z); a real tensor itself.

    >>> tapegrad.real(tapegrad.tensor([1 + 2j, 3 - 1j]))
    tensor([1., 3.])
    """
    _need_tensor("real", "input", 1, input)
    if input._array.dtype.kind != "c":
        return input
    return mark_view(RealView.apply(input), input, _real_view_fn)


def imag(input):  # noqa: A002
    """The imaginary parts of a complex tensor, as a view (complex tensors only, as in torch).

    >>> tapegrad.imag(tapegrad.tensor([1 + 2j, 3 - 1j]))
    tensor([ 2., -1.])
    """
    _need_tensor("imag", "input", 1, input)
    if input._array.dtype.kind != "c":
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return mark_view(ImagView.apply(input), input, _imag_view_fn)


def _set_real(self, value):
    self.real.copy_(value)


def _set_imag(self, value):
    self.imag.copy_(value)


# --- view_as_real / view_as_complex ------------------------------------------------------------------------------
def _as_real(z):
    """A complex array's (..., 2) real view (any strides)."""
    r = z.real
    step = z.dtype.itemsize // 2
    return np.lib.stride_tricks.as_strided(r, z.shape + (2,), r.strides + (step,), writeable=z.flags.writeable)


def _view_complex(x):
    """(..., 2) floats with a unit last stride as complex numbers over the same memory."""
    cd = _complex_np(x.dtype)
    if x.size == 0:
        return np.empty(x.shape[:-1], cd)
    c0 = x[(0,) * (x.ndim - 1)].view(cd)       # the first pair (contiguous) as one complex number
    return np.lib.stride_tricks.as_strided(c0, x.shape[:-1], x.strides[:-1], writeable=x.flags.writeable)


class ViewAsReal(Primitive):
    """``view_as_real(z)``: the (..., 2) real view of complex z."""

    array_backward = True

    @staticmethod
    def forward(ctx, z):
        return _as_real(z)

    @staticmethod
    def backward(ctx, grad):
        if grad.__class__ is Tensor:
            return ViewAsComplex.apply(grad.contiguous())
        return _view_complex(np.ascontiguousarray(grad))


class ViewAsComplex(Primitive):
    """``view_as_complex(x)``: pairs of floats (last dim 2, unit stride) as complex numbers, a view."""

    array_backward = True

    @staticmethod
    def forward(ctx, x):
        return _view_complex(x)

    @staticmethod
    def backward(ctx, grad):
        return ViewAsReal.apply(grad) if grad.__class__ is Tensor else _as_real(grad)


def view_as_real(input):  # noqa: A002
    """A complex tensor's numbers as pairs (real, imaginary) in a new last dimension of size 2; a view.

    >>> tapegrad.view_as_real(tapegrad.tensor([1 + 2j]))
    tensor([[1., 2.]])
    """
    if input._array.dtype.kind != "c":
        raise RuntimeError("view_as_real is only supported for complex tensors")
    return mark_view(ViewAsReal.apply(input), input, view_as_real)


@autocast_listed("fp32")
def view_as_complex(input):  # noqa: A002
    """Pairs of floats (a last dimension of size 2, stride 1) read as complex numbers; a view.

    >>> tapegrad.view_as_complex(tapegrad.tensor([[1., 2.], [3., -1.]]))
    tensor([1.+2.j, 3.-1.j])
    """
    a = input._array
    if a.dtype not in (np.float32, np.float64):
        raise RuntimeError(f"view_as_complex is only supported for float and double tensors, but got a tensor of "
                           f"scalar type: {input.dtype._legacy}")
    if a.ndim == 0 or a.shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    if a.strides[-1] != a.itemsize:
        raise RuntimeError("Tensor must have a last dimension with stride 1")
    if any(s % (2 * a.itemsize) for s, n in zip(a.strides[:-1], a.shape[:-1]) if n > 1):
        raise RuntimeError("Tensor must have a stride divisible by 2 for all but last dimension")
    return mark_view(ViewAsComplex.apply(input), input, view_as_complex)


# --- complex, polar ----------------------------------------------------------------------------------------------
def _check_pair(op, a, b):
    if a.dtype not in (np.float32, np.float64, np.float16) or b.dtype not in (np.float32, np.float64, np.float16):
        raise RuntimeError(f"Expected both inputs to be Half, Float or Double tensors but got "
                           f"{_legacy_name(a.dtype)} and {_legacy_name(b.dtype)}")
    if a.dtype != b.dtype:
        raise RuntimeError(f"Expected object of scalar type {_legacy_name(a.dtype)} but got scalar type "
                           f"{_legacy_name(b.dtype)} for second argument")


def _legacy_name(d):
    from ... import _dtype
    return _dtype.from_numpy_dtype(d)._legacy


class Complex(Primitive):
    """``complex(real, imag)``: real + i imag, broadcasting."""

    array_backward = True

    @staticmethod
    def forward(ctx, re, im):
        _check_pair("complex", re, im)
        out = np.empty(np.broadcast_shapes(re.shape, im.shape), _complex_np(re.dtype))
        out.real = re
        out.imag = im
        return out

    @staticmethod
    def backward(ctx, grad):
        need = ctx.needs_input_grad
        return (grad.real if need[0] else None), (grad.imag if need[1] else None)


class Polar(Primitive):
    """``polar(abs, angle)``: abs * (cos(angle) + i sin(angle))."""

    @staticmethod
    def forward(ctx, r, theta):
        _check_pair("polar", r, theta)
        out = np.empty(np.broadcast_shapes(r.shape, theta.shape), _complex_np(r.dtype))
        out.real = r * np.cos(theta)
        out.imag = r * np.sin(theta)
        ctx.save_result(0, 1)
        return out

    @staticmethod
    def backward(ctx, grad):
        z, r, theta = ctx.saved_tensors
        need = ctx.needs_input_grad
        # z = r e^(i theta): dz/dr = e^(i theta), dz/dtheta = i z; a real input gets Re(conj(dz/dinput) grad)
        gr = (grad * complex(theta.cos(), theta.sin()).conj()).real if need[0] else None
        gt = (grad * z.conj()).imag if need[1] else None
        return gr, gt


def complex(real, imag, *, out=None):  # noqa: A001,A002 - torch's names
    """The complex tensor ``real + i imag`` (both float, of the same dtype), broadcasting.

    >>> tapegrad.complex(tapegrad.tensor([1., 3.]), tapegrad.tensor([2., -1.]))
    tensor([1.+2.j, 3.-1.j])
    """
    res = Complex.apply(real, imag)
    if out is not None:
        from ._common import _copy_out
        return _copy_out("complex", res, out, "same",
                         error="Expected object of scalar type {r} but got scalar type {o} for argument 'out'")
    return res


@autocast_listed("fp32")
def polar(abs, angle, *, out=None):  # noqa: A002 - torch's names
    """The complex tensor with absolute value ``abs`` and angle ``angle``.

    >>> tapegrad.polar(tapegrad.tensor([2.]), tapegrad.tensor([0.]))
    tensor([2.+0.j])
    """
    res = Polar.apply(abs, angle)
    if out is not None:
        from ._common import _copy_out
        return _copy_out("polar", res, out, "same",
                         error="Expected object of scalar type {r} but got scalar type {o} for argument 'out'")
    return res


# --- angle, sgn ------------------------------------------------------------------------------------------------
class Angle(Primitive):
    """The argument of each number (atan2(imag, real)); for real input 0 or pi (nan stays nan)."""

    @staticmethod
    def forward(ctx, x):
        if x.dtype.kind != "c":
            from .._util import as_float
            x = as_float(x)
            ctx.real_input = True
            return np.where(np.isnan(x), x, np.where(x < 0, x.dtype.type(np.pi), x.dtype.type(0)))
        ctx.save_inputs(0)
        return np.angle(x)

    @staticmethod
    def backward(ctx, grad):
        if getattr(ctx, "real_input", False):
            return _zeros_like(grad)     # (grad * 0 would be NaN where grad is inf)
        z, = ctx.saved_tensors
        # d angle = (x dy - y dx) / |z|^2: the gradient is grad * (-y + i x) / |z|^2 = grad * i z / |z|^2
        a2 = z.real * z.real + z.imag * z.imag
        return _w(a2._array == 0, 0.0, (grad / a2) * (z * 1j))


class Sgn(Primitive):
    """``sgn``: z / |z| (0 at 0); for real input the sign."""

    @staticmethod
    def forward(ctx, x):
        if x.dtype.kind != "c":
            ctx.real_input = True
            return x.copy() if x.dtype == np.bool_ else _sign(x)     # torch's: 0 at NaN
        ctx.save_result(0)
        a = np.abs(x)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(a == 0, x.dtype.type(0), x / np.where(a == 0, 1, a))

    @staticmethod
    def backward(ctx, grad):
        if getattr(ctx, "real_input", False):
            return _zeros_like(grad)     # (grad * 0 would be NaN where grad is inf)
        s, z = ctx.saved_tensors
        a = z.abs()
        # s = z / |z| moves only along the circle: the gradient is (grad - Re(grad conj(s)) s) / |z|
        g = (grad - (grad * s.conj()).real * s) / a
        return _w(a._array == 0, 0.0, g)


@_with_out
def angle(input):  # noqa: A002
    """The angle (argument) of each element, in radians; 0 or pi for real input.

    >>> tapegrad.angle(tapegrad.tensor([1j, -1.]))
    tensor([1.5708, 3.1416])
    """
    return Angle.apply(input)


@_with_out(error="Found dtype {o} but expected {r}")
def sgn(input):  # noqa: A002
    """z / |z| for complex input (0 at 0), the sign for real input.

    >>> tapegrad.sgn(tapegrad.tensor([3 + 4j, 0j]))
    tensor([0.6000+0.8000j, 0.0000+0.0000j])
    """
    return Sgn.apply(input)


def _sgn_(self):
    from .._util import apply_inplace
    return apply_inplace(self, sgn)


bind(conj=conj, conj_physical=conj_physical, conj_physical_=conj_physical_, resolve_conj=resolve_conj,
     resolve_neg=resolve_neg, is_conj=is_conj, is_neg=is_neg, angle=angle, sgn=sgn, sgn_=_sgn_)
Tensor.real = property(real, _set_real)
Tensor.imag = property(imag, _set_imag)
