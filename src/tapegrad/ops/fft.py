"""The discrete Fourier transforms behind ``tapegrad.fft`` (torch.fft's functions; NumPy's pocketfft computes).

Three linear maps do all the work, as torch's three kernels do. Each is a Primitive whose backward is another
of the three, so derivatives of every order exist:

- ``FftC2C``: complex -> complex over ``dims``, with the forward (e^-i) or inverse (e^+i) sign. Its adjoint is
  the other sign with the same scaling.
- ``FftR2C``: real -> complex, forward sign: the full spectrum, or (``onesided``) the first n//2 + 1 bins of the
  last dim. Adjoint: the real part of the inverse-sign transform of the spectrum zero-padded to full length.
- ``FftC2R``: a one-sided Hermitian spectrum -> real, inverse sign (irfft). Adjoint: the one-sided forward
  transform with doubled bins where one bin stands for two (all but the first and the Nyquist bin).

A map's scaling is "none", "sqrt" (1/sqrt(n)) or "n" (1/n), from torch's ``norm`` and the direction.
Gradients follow torch's convention for complex numbers (the conjugate Wirtinger derivative, so the gradient
through a complex-linear map is its conjugate transpose applied to the incoming gradient; a real input gets the
real part). The public functions crop (``SliceBackward0``) or zero-pad (``ConstantPadNdBackward0``) the input to
``n``/``s`` first, and cast real input to complex (``ToCopyBackward0``) or conjugate (``ConjBackward0``) where
torch does, so the graphs carry torch's node names.
"""

from __future__ import annotations

import numpy as np

from .. import _dtype
from ._util import Primitive, Tensor, normalize_dim
from .conv.resampling import ConstantPadNd
from .elementwise._common import _copy_out
from .shape.rearrange import roll
from .shape.split_join import narrow

__all__ = ["fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2", "irfft2", "rfftn", "irfftn",
           "hfft", "ihfft", "hfft2", "ihfft2", "hfftn", "ihfftn", "fftfreq", "rfftfreq", "fftshift", "ifftshift"]

# NumPy's ``norm`` that gives each scaling, for the forward-sign and the inverse-sign functions
_NP_NORM = {True: {"none": "backward", "sqrt": "ortho", "n": "forward"},
            False: {"none": "forward", "sqrt": "ortho", "n": "backward"}}


def _scaling(norm, forward):
    """torch's ``norm`` argument as the scaling a transform in direction ``forward`` applies."""
    if norm is None or norm == "backward":
        return "none" if forward else "n"
    if norm == "forward":
        return "n" if forward else "none"
    if norm == "ortho":
        return "sqrt"
    raise RuntimeError(f'Invalid normalization mode: "{norm}"')


class FftC2C(Primitive):
    """Complex-to-complex transform over ``dims`` (``forward``: the e^-i sign)."""

    @staticmethod
    def forward(ctx, z, dims, scale, forward):
        ctx.args = dims, scale, forward
        if not dims:
            return z.copy()
        f = np.fft.fftn if forward else np.fft.ifftn
        return np.asarray(f(z, axes=dims, norm=_NP_NORM[forward][scale]), z.dtype)

    @staticmethod
    def backward(ctx, grad):
        dims, scale, forward = ctx.args
        return FftC2C.apply(grad, dims, scale, not forward), None, None, None


class FftR2C(Primitive):
    """Real-to-complex forward-sign transform over ``dims``; ``onesided`` keeps n//2 + 1 bins of the last."""

    @staticmethod
    def forward(ctx, x, dims, scale, onesided):
        ctx.args = dims, scale, onesided
        ctx.last = x.shape[dims[-1]]
        cd = _complex_of(x.dtype)
        f = np.fft.rfftn if onesided else np.fft.fftn
        return np.asarray(f(x, axes=dims, norm=_NP_NORM[True][scale]), cd)

    @staticmethod
    def backward(ctx, grad):
        dims, scale, onesided = ctx.args
        if onesided and grad.shape[dims[-1]] < ctx.last:   # the bins rfft dropped: zero
            grad = _pad_dim(grad, dims[-1], ctx.last - grad.shape[dims[-1]])
        return _Real.apply(FftC2C.apply(grad, dims, scale, False)), None, None, None


class FftC2R(Primitive):
    """One-sided Hermitian spectrum to real, inverse sign, over ``dims``; the last dim becomes ``last_size``
    long (the input's last dim is already ``last_size // 2 + 1``)."""

    @staticmethod
    def forward(ctx, z, dims, scale, last_size):
        ctx.args = dims, scale, last_size
        s = [z.shape[d] for d in dims[:-1]] + [last_size]
        return np.asarray(np.fft.irfftn(z, s=s, axes=dims, norm=_NP_NORM[False][scale]), _real_of(z.dtype))

    @staticmethod
    def backward(ctx, grad):
        dims, scale, last_size = ctx.args
        g = FftR2C.apply(grad, dims, scale, True)
        m = last_size // 2 + 1
        double = last_size - m                 # the bins 1 .. double stand for themselves and their mirror image
        if double > 0:
            w = np.ones(m, _real_of(g._array.dtype))
            w[1:1 + double] = 2
            d = dims[-1]
            g = g * Tensor._make(w.reshape((m,) + (1,) * (g.ndim - 1 - d)))
        return g, None, None, None


class _ToComplex(Primitive):
    """A real tensor as complex (torch's cast to complex before a complex transform); the gradient is the real
    part."""

    node_name = "ToCopyBackward0"

    @staticmethod
    def forward(ctx, x):
        return x.astype(_complex_of(x.dtype))

    @staticmethod
    def backward(ctx, grad):
        return _Real.apply(grad)


class _Real(Primitive):
    """The real part (a copy); the gradient is the incoming real gradient as a complex one."""

    node_name = "RealBackward0"

    @staticmethod
    def forward(ctx, z):
        return np.real(z).copy()

    @staticmethod
    def backward(ctx, grad):
        return _ToComplex.apply(grad)


class _Conj(Primitive):
    """Complex conjugate; the gradient is conjugated too."""

    node_name = "ConjBackward0"

    @staticmethod
    def forward(ctx, z):
        return np.conj(z)

    @staticmethod
    def backward(ctx, grad):
        return _Conj.apply(grad)


class _ConjPhysical(_Conj):
    """Complex conjugate as a copy (torch's ``conj_physical``)."""

    node_name = "ConjPhysicalBackward0"

    @staticmethod
    def backward(ctx, grad):
        return _ConjPhysical.apply(grad)


# --- dtypes and arguments ----------------------------------------------------------------------------------
def _complex_of(d):
    return np.dtype(np.complex64) if np.dtype(d) in (np.float32, np.complex64) else np.dtype(np.complex128)


def _real_of(d):
    return np.dtype(np.float32) if np.dtype(d) in (np.float32, np.complex64) else np.dtype(np.float64)


def _floating(x, name, real_only=None):
    """``x`` with torch's dtype rules: integers and bools become the default float dtype; half and bfloat16
    are refused as on torch's CPU; ``real_only`` is the message for complex input where only real is taken."""
    if not isinstance(x, Tensor):
        raise TypeError(f"fft_{name}(): argument 'input' (position 1) must be Tensor, not {type(x).__name__}")
    d = x.dtype
    if d in (_dtype.float16, _dtype.bfloat16):
        raise RuntimeError(f"Unsupported dtype {d._legacy}")
    if d.is_complex:
        if real_only:
            raise RuntimeError(f"{real_only}, but got {d._legacy}")
        return x
    if not d.is_floating_point:
        x = x.to(_dtype.get_default_dtype())
    return x


def _n_points(n):
    if n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")
    return n


def _dim1(x, dim, name):
    if not isinstance(dim, (int, np.integer)) or isinstance(dim, bool):
        raise TypeError(f"fft_{name}(): argument 'dim' must be int, not {type(dim).__name__}")
    if x.ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    return normalize_dim(int(dim), x.ndim)


def _shape_and_dims(x, s, dim):
    """torch's canonical (sizes, dims) of an n-dimensional transform: ``dim`` None means the last len(s) dims
    (all dims without ``s``); -1 in ``s`` keeps that dim's size."""
    if dim is not None:
        dim = (dim,) if isinstance(dim, (int, np.integer)) else tuple(dim)
        if x.ndim == 0 and dim:
            raise IndexError(f"Dimension specified as {dim[0]} but tensor has no dimensions")
        dims = tuple(normalize_dim(int(d), x.ndim) for d in dim)
        if len(set(dims)) != len(dims):
            raise RuntimeError("FFT dims must be unique")
    if s is not None:
        s = (s,) if isinstance(s, (int, np.integer)) else tuple(s)
        if dim is not None and len(s) != len(dims):
            raise RuntimeError("When given, dim and shape arguments must have the same length")
        if dim is None:
            if len(s) > x.ndim:
                raise RuntimeError(f"Got shape with {len(s)} values but input tensor only has {x.ndim} dimensions.")
            dims = tuple(range(x.ndim - len(s), x.ndim))
        sizes = tuple(x.shape[d] if int(n) == -1 else _n_points(int(n)) for d, n in zip(dims, s))
    else:
        if dim is None:
            dims = tuple(range(x.ndim))
        sizes = tuple(x.shape[d] for d in dims)
    return sizes, dims


def _pad_dim(x, d, extra):
    """Zero-pad ``x`` at the end of dim ``d`` (a ConstantPadNd over the dims from ``d`` on)."""
    return ConstantPadNd.apply(x, ((0, extra),) + ((0, 0),) * (x.ndim - 1 - d), 0)


def _resize(x, dims, sizes):
    """Crop (``narrow``) the dims longer than asked for, then zero-pad the shorter ones in one ConstantPadNd, as
    torch resizes an FFT's input."""
    pads = {}
    for d, n in zip(dims, sizes):
        have = x.shape[d]
        if have > n:
            x = narrow(x, d, 0, n)
        elif have < n:
            pads[d] = n - have
    if pads:
        lo = min(pads)
        x = ConstantPadNd.apply(x, tuple((0, pads.get(d, 0)) for d in range(lo, x.ndim)), 0)
    return x


def _check_nonempty(x, dims):
    for d in dims:
        if x.shape[d] < 1:
            raise RuntimeError(f"Invalid number of data points ({x.shape[d]}) specified")


def _out(res, out, name):
    if out is None:
        return res
    named = "fftn" if name in ("fft2", "ifft2", "ifftn") else name.replace("2", "n")    # as torch's messages
    if res.dtype.is_complex:
        return _copy_out(f"fft_{name}", res, out, error=f"{named} expects a complex output tensor, but got {{o}}")
    return _copy_out(f"fft_{name}", res, out, dtype="kind",
                     error=f"{named} expects a floating point output tensor, but got {{o}}")


# --- the complex and real-input transforms -------------------------------------------------------------------
def _c2c_or_r2c(name, input, sizes, dims, norm, forward, out, to_complex):
    """fft/ifft (1-d, real input: r2c + conj as torch) and fftn/ifftn (real input cast to complex first)."""
    x = _floating(input, name)
    scale = _scaling(norm, forward)
    if not x.dtype.is_complex and not to_complex:
        x = _resize(x, dims, sizes)
        _check_nonempty(x, dims)
        r = FftR2C.apply(x, dims, scale, False)
        return _out(r if forward else _Conj.apply(r), out, name)
    if not x.dtype.is_complex:
        x = _ToComplex.apply(x)
    x = _resize(x, dims, sizes)
    _check_nonempty(x, dims)
    return _out(FftC2C.apply(x, dims, scale, forward), out, name)


def fft(input, n=None, dim=-1, norm=None, *, out=None):  # noqa: A002
    """The 1-d discrete Fourier transform along ``dim`` (cropped or zero-padded to ``n`` points).

    >>> tapegrad.fft.fft(tapegrad.tensor([1., 2., 3., 4.]))
    tensor([10.+0.j, -2.+2.j, -2.+0.j, -2.-2.j])
    """
    d = _dim1(input, dim, "fft")
    n = input.shape[d] if n is None else _n_points(int(n))
    return _c2c_or_r2c("fft", input, (n,), (d,), norm, True, out, False)


def ifft(input, n=None, dim=-1, norm=None, *, out=None):  # noqa: A002
    """The 1-d inverse transform (``norm="backward"``: scaled by 1/n).

    >>> tapegrad.fft.ifft(tapegrad.tensor([4., 0.]))
    tensor([2.+0.j, 2.+0.j])
    """
    d = _dim1(input, dim, "ifft")
    n = input.shape[d] if n is None else _n_points(int(n))
    return _c2c_or_r2c("ifft", input, (n,), (d,), norm, False, out, False)


def fftn(input, s=None, dim=None, norm=None, *, out=None):  # noqa: A002
    """The n-dimensional transform over ``dim`` (all dims by default), each resized to ``s``.

    >>> tapegrad.fft.fftn(tapegrad.ones(2, 2))
    tensor([[4.+0.j, 0.+0.j],
            [0.+0.j, 0.+0.j]])
    """
    sizes, dims = _shape_and_dims(input, s, dim)
    return _c2c_or_r2c("fftn", input, sizes, dims, norm, True, out, True)


def ifftn(input, s=None, dim=None, norm=None, *, out=None):  # noqa: A002
    """The n-dimensional inverse transform."""
    sizes, dims = _shape_and_dims(input, s, dim)
    return _c2c_or_r2c("ifftn", input, sizes, dims, norm, False, out, True)


def fft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):  # noqa: A002
    """The 2-d transform over the last two dims (``fftn`` with ``dim=(-2, -1)``)."""
    sizes, dims = _shape_and_dims(input, s, dim)
    return _c2c_or_r2c("fft2", input, sizes, dims, norm, True, out, True)


def ifft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):  # noqa: A002
    """The 2-d inverse transform."""
    sizes, dims = _shape_and_dims(input, s, dim)
    return _c2c_or_r2c("ifft2", input, sizes, dims, norm, False, out, True)


# --- real input, one-sided output: rfft and ihfft ------------------------------------------------------------
def _r2c(name, input, sizes, dims, norm, forward, out, message):
    x = _floating(input, name, real_only=message)
    x = _resize(x, dims, sizes)
    _check_nonempty(x, dims)
    return FftR2C.apply(x, dims, _scaling(norm, forward), True)


def rfft(input, n=None, dim=-1, norm=None, *, out=None):  # noqa: A002
    """The transform of a real signal: the n//2 + 1 non-negative frequencies.

    >>> tapegrad.fft.rfft(tapegrad.tensor([1., 2., 3., 4.]))
    tensor([10.+0.j, -2.+2.j, -2.+0.j])
    """
    d = _dim1(input, dim, "rfft")
    n = input.shape[d] if n is None else _n_points(int(n))
    return _out(_r2c("rfft", input, (n,), (d,), norm, True, out, "rfft expects a real input tensor"), out, "rfft")


def rfftn(input, s=None, dim=None, norm=None, *, out=None):  # noqa: A002
    """The n-dimensional transform of a real signal (one-sided in the last of ``dim``)."""
    sizes, dims = _shape_and_dims(input, s, dim)
    return _out(_r2c("rfftn", input, sizes, dims, norm, True, out, "rfftn expects a real-valued input tensor"),
                out, "rfftn")


def rfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):  # noqa: A002
    """``rfftn`` over the last two dims."""
    sizes, dims = _shape_and_dims(input, s, dim)
    return _out(_r2c("rfft2", input, sizes, dims, norm, True, out, "rfftn expects a real-valued input tensor"),
                out, "rfft2")


def ihfft(input, n=None, dim=-1, norm=None, *, out=None):  # noqa: A002
    """The inverse of ``hfft``: the one-sided inverse transform of a real signal.

    >>> tapegrad.fft.ihfft(tapegrad.tensor([1., 2., 3., 4.]))
    tensor([ 2.5000-0.0000j, -0.5000-0.5000j, -0.5000-0.0000j])
    """
    d = _dim1(input, dim, "ihfft")
    n = input.shape[d] if n is None else _n_points(int(n))
    r = _r2c("ihfft", input, (n,), (d,), norm, False, out, "ihfft expects a real input tensor")
    return _out(_Conj.apply(r), out, "ihfft")


def _ihfftn(name, input, s, dim, norm, out):
    sizes, dims = _shape_and_dims(input, s, dim)
    if input.dtype.is_complex:
        raise RuntimeError(f"Only supports floating-point dtypes, but found: {input.dtype._legacy}")
    x = _resize(_floating(input, name), dims, sizes)
    r = _r2c(name, x, sizes[-1:], dims[-1:], norm, False, out, None)
    _check_nonempty(x, dims)
    r = _ConjPhysical.apply(r)
    if len(dims) > 1:
        r = FftC2C.apply(r, dims[:-1], _scaling(norm, False), False)
    return _out(r, out, name)


def ihfftn(input, s=None, dim=None, norm=None, *, out=None):  # noqa: A002
    """The n-dimensional ``ihfft`` (one-sided in the last of ``dim``)."""
    return _ihfftn("ihfftn", input, s, dim, norm, out)


def ihfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):  # noqa: A002
    """``ihfftn`` over the last two dims."""
    return _ihfftn("ihfft2", input, s, dim, norm, out)


# --- one-sided input, real output: irfft and hfft ------------------------------------------------------------
def _c2r(name, x, sizes, dims, last_size, norm, forward, conj_leading):
    """irfft(n) / hfft(n): ``x`` (complex) resized to ``sizes`` in the leading dims and last_size // 2 + 1 in
    the last; hfft conjugates (after its leading dims' transform, as torch)."""
    x = _resize(x, dims, sizes[:-1] + (last_size // 2 + 1,))
    _check_nonempty(x, dims[:-1])
    scale = _scaling(norm, forward)
    if conj_leading:
        if len(dims) > 1:
            x = FftC2C.apply(x, dims[:-1], scale, True)
        x = _Conj.apply(x)
        return FftC2R.apply(x, dims[-1:], scale, last_size)
    return FftC2R.apply(x, dims, scale, last_size)


def _complex_input(input, name):
    x = _floating(input, name)
    return x if x.dtype.is_complex else _ToComplex.apply(x)


def irfft(input, n=None, dim=-1, norm=None, *, out=None):  # noqa: A002
    """The inverse of ``rfft``: a real signal of ``n`` points (default 2 * (m - 1)) from m one-sided bins.

    >>> tapegrad.fft.irfft(tapegrad.fft.rfft(tapegrad.tensor([1., 2., 3., 4.])))
    tensor([1., 2., 3., 4.])
    """
    d = _dim1(input, dim, "irfft")
    n = _n_points(2 * (input.shape[d] - 1) if n is None else int(n))
    x = _complex_input(input, "irfft")
    return _out(_c2r("irfft", x, (n,), (d,), n, norm, False, False), out, "irfft")


def hfft(input, n=None, dim=-1, norm=None, *, out=None):  # noqa: A002
    """The transform of a Hermitian-symmetric signal given by its first half: a real spectrum of ``n`` points.

    >>> tapegrad.fft.hfft(tapegrad.tensor([1., 2., 3.]))
    tensor([ 8., -2.,  0., -2.])
    """
    d = _dim1(input, dim, "hfft")
    n = _n_points(2 * (input.shape[d] - 1) if n is None else int(n))
    x = _complex_input(input, "hfft")
    return _out(_c2r("hfft", x, (n,), (d,), n, norm, True, True), out, "hfft")


def _nd_c2r(name, input, s, dim, norm, forward, conj_leading, out):
    sizes, dims = _shape_and_dims(input, s, dim)
    if not dims:
        raise RuntimeError(f"{name} must transform at least one axis")
    last = _n_points(sizes[-1] if s is not None else 2 * (input.shape[dims[-1]] - 1))
    x = _complex_input(input, name)
    return _out(_c2r(name, x, sizes, dims, last, norm, forward, conj_leading), out, name)


def irfftn(input, s=None, dim=None, norm=None, *, out=None):  # noqa: A002
    """The inverse of ``rfftn`` (``s[-1]`` is the real output's last size; default 2 * (m - 1))."""
    return _nd_c2r("irfftn", input, s, dim, norm, False, False, out)


def irfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):  # noqa: A002
    """``irfftn`` over the last two dims."""
    return _nd_c2r("irfft2", input, s, dim, norm, False, False, out)


def hfftn(input, s=None, dim=None, norm=None, *, out=None):  # noqa: A002
    """The n-dimensional ``hfft`` (the input is one-sided in the last of ``dim``)."""
    return _nd_c2r("hfftn", input, s, dim, norm, True, True, out)


def hfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):  # noqa: A002
    """``hfftn`` over the last two dims."""
    return _nd_c2r("hfft2", input, s, dim, norm, True, True, out)


# --- frequencies and shifts --------------------------------------------------------------------------------
def _freq_dtype(dtype, name):
    d = _dtype.get_default_dtype() if dtype is None else _dtype.to_dtype(dtype)
    if not (d.is_floating_point or d.is_complex):
        raise RuntimeError(f"{name} requires a floating point or complex dtype")
    return d


def _freq_tensor(values, d, scale, requires_grad, device, out, name):
    from ..tensor import _check_device
    meta = _check_device(device)
    a = values.astype(d.np) * np.asarray(scale, d.np)
    t = Tensor._make(np.asarray(a, d.np), bool(requires_grad))
    if meta:
        from .._meta import as_meta_tensor
        as_meta_tensor(t)
    return t if out is None else _copy_out(f"fft_{name}", t, out)


def _spacing(d):
    return float(d.item() if isinstance(d, Tensor) else d)


def fftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """The sample frequencies of an ``n``-point transform with sample spacing ``d``:
    [0, 1, ..., (n - 1) // 2, -(n // 2), ..., -1] / (d * n).

    >>> tapegrad.fft.fftfreq(4)
    tensor([ 0.0000,  0.2500, -0.5000, -0.2500])
    """
    n = int(n)
    dt = _freq_dtype(dtype, "fftfreq")
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    k = np.concatenate([np.arange((n + 1) // 2), np.arange(-(n // 2), 0)]).astype(np.float64)
    return _freq_tensor(k, dt, 1.0 / (n * _spacing(d)) if n else 0.0, requires_grad, device, out, "fftfreq")


def rfftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """The non-negative frequencies of ``rfft``: [0, 1, ..., n // 2] / (d * n).

    >>> tapegrad.fft.rfftfreq(4)
    tensor([0.0000, 0.2500, 0.5000])
    """
    n = int(n)
    dt = _freq_dtype(dtype, "rfftfreq")
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n // 2 + 1}: [{n // 2 + 1}]")
    k = np.arange(n // 2 + 1, dtype=np.float64)
    return _freq_tensor(k, dt, 1.0 / (n * _spacing(d)) if n else 0.0, requires_grad, device, out, "rfftfreq")


def _shift_dims(input, dim):
    if dim is None:
        return tuple(range(input.ndim))
    dims = (dim,) if isinstance(dim, (int, np.integer)) else tuple(dim)
    return tuple(normalize_dim(int(d), input.ndim) for d in dims)


def fftshift(input, dim=None):  # noqa: A002
    """Move the zero frequency to the centre (a ``roll`` by half of each dim).

    >>> tapegrad.fft.fftshift(tapegrad.fft.fftfreq(4))
    tensor([-0.5000, -0.2500,  0.0000,  0.2500])
    """
    dims = _shift_dims(input, dim)
    if not dims:
        return roll(input, 0, 0) if input.ndim else input.clone()
    return roll(input, tuple(input.shape[d] // 2 for d in dims), dims)


def ifftshift(input, dim=None):  # noqa: A002
    """The inverse of ``fftshift``.

    >>> tapegrad.fft.ifftshift(tapegrad.fft.fftshift(tapegrad.arange(5)))
    tensor([0, 1, 2, 3, 4])
    """
    dims = _shift_dims(input, dim)
    if not dims:
        return roll(input, 0, 0) if input.ndim else input.clone()
    return roll(input, tuple((input.shape[d] + 1) // 2 for d in dims), dims)
