"""Specs of ``tapegrad.fft``: every transform with ``n``/``s``, ``dim`` and ``norm``, cropping and padding.

A complex output is compared through its real and imaginary parts (``view_as_real``), so the table's real
cotangents, gradcheck and second derivatives apply. tapegrad's side uses the small pair of Primitives below
(torch.view_as_real needs a resolved conjugate, as torch's ``ifft`` of a real input returns a conjugate view).
Complex inputs are checked against torch in tests/test_fft.py.
"""

import numpy as np

from ops.op_db import OpSpec, S, noncontig, randn
from tapegrad.autograd.function import Primitive


class _ViewAsReal(Primitive):
    @staticmethod
    def forward(ctx, z):
        return np.stack([z.real, z.imag], -1)

    @staticmethod
    def backward(ctx, grad):
        return _ViewAsComplex.apply(grad)


class _ViewAsComplex(Primitive):
    @staticmethod
    def forward(ctx, x):
        return np.asarray(x[..., 0] + 1j * x[..., 1])

    @staticmethod
    def backward(ctx, grad):
        return _ViewAsReal.apply(grad)


def as_real(m, z):
    """A complex result as its (real, imaginary) pairs in a last dim of 2 (real results unchanged)."""
    if not z.dtype.is_complex:
        return z
    if m.__name__ == "torch":
        return m.view_as_real(z.resolve_conj())
    return _ViewAsReal.apply(z)


def _op(name, samples, **kw):
    return OpSpec(f"fft.{name}", lambda m, x, *a, **k: as_real(m, getattr(m.fft, name)(x, *a, **k)), samples,
                  check_grad_fn=False, **kw)


def _one_d(r):
    return [S(randn(r, 5)), S(randn(r, 2, 4), name="2d"), S(randn(r, 2, 4), 6, name="pad"),
            S(randn(r, 3, 5), 3, 0, name="crop_dim0"), S(randn(r, 4), norm="ortho", name="ortho"),
            S(randn(r, 4), norm="forward", name="forward"), S(noncontig(randn(r, 3, 4)), name="noncontig"),
            S(randn(r, 2, 3), n=4, dim=-2, norm="backward", name="kwargs")]


def _n_d(r, two=False):
    s = [S(randn(r, 3, 4)), S(randn(r, 2, 3, 4), name="3d"), S(randn(r, 3, 4), (4, 2), name="s_pad_crop"),
         S(randn(r, 2, 3, 4), dim=(0, 2), name="dims"), S(randn(r, 3, 4), norm="ortho", name="ortho"),
         S(noncontig(randn(r, 4, 3)), norm="forward", name="noncontig_forward"),
         S(randn(r, 2, 3, 4), s=(5, -1), dim=(1, 2), name="s_minus1")]
    if not two:
        s += [S(randn(r, 2, 3, 4), s=(2, 3), name="s_last_dims"), S(randn(r, 5), name="1d")]
    return s


def _half_one_d(r):
    # the one-sided input of irfft/hfft: m bins give 2 * (m - 1) points by default
    return [S(randn(r, 4)), S(randn(r, 2, 4), name="2d"), S(randn(r, 2, 4), 5, name="odd_n"),
            S(randn(r, 3, 4), 9, name="pad"), S(randn(r, 5, 3), 4, 0, name="crop_dim0"),
            S(randn(r, 4), norm="ortho", name="ortho"), S(randn(r, 4), norm="forward", name="forward"),
            S(noncontig(randn(r, 3, 4)), name="noncontig")]


def _half_n_d(r, two=False):
    s = [S(randn(r, 3, 4)), S(randn(r, 2, 3, 4), name="3d"), S(randn(r, 3, 4), (4, 5), name="s_odd"),
         S(randn(r, 3, 4), (2, 8), name="s_crop_pad"), S(randn(r, 2, 3, 4), dim=(0, 2), name="dims"),
         S(randn(r, 3, 4), norm="ortho", name="ortho"), S(noncontig(randn(r, 4, 3)), norm="forward", name="fwd")]
    if not two:
        s += [S(randn(r, 5), name="1d"), S(randn(r, 2, 3, 4), s=(3, 6), name="s_last_dims")]
    return s


SPECS = [
    _op("fft", _one_d), _op("ifft", _one_d), _op("rfft", _one_d), _op("ihfft", _one_d),
    _op("irfft", _half_one_d), _op("hfft", _half_one_d),
    _op("fft2", lambda r: _n_d(r, True)), _op("ifft2", lambda r: _n_d(r, True)),
    _op("fftn", _n_d), _op("ifftn", _n_d), _op("rfft2", lambda r: _n_d(r, True)), _op("rfftn", _n_d),
    _op("ihfft2", lambda r: _n_d(r, True)), _op("ihfftn", _n_d),
    _op("irfft2", lambda r: _half_n_d(r, True)), _op("irfftn", _half_n_d),
    _op("hfft2", lambda r: _half_n_d(r, True)), _op("hfftn", _half_n_d),
    OpSpec("fft.fftn_int", lambda m, x: as_real(m, m.fft.fftn(x)), lambda r: [
        S(np.arange(6).reshape(2, 3)), S(np.array([True, False, True]), name="bool")], grad=False),
    OpSpec("fft.fftshift", lambda m, x, **k: m.fft.fftshift(x, **k), lambda r: [
        S(randn(r, 5)), S(randn(r, 3, 4), name="2d"), S(randn(r, 3, 4), dim=0, name="dim"),
        S(randn(r, 2, 3, 5), dim=(0, -1), name="dims")]),
    OpSpec("fft.ifftshift", lambda m, x, **k: m.fft.ifftshift(x, **k), lambda r: [
        S(randn(r, 5)), S(randn(r, 3, 4), name="2d"), S(randn(r, 3, 5), dim=(-1,), name="dims")]),
    OpSpec("fft.fftfreq", lambda m, n, *a, **k: m.fft.fftfreq(n, *a, **k), lambda r: [
        S(5), S(4, 0.1, name="d"), S(7, dtype="float64", name="float64"), S(0, name="empty"), S(1, name="one")],
        grad=False),
    OpSpec("fft.rfftfreq", lambda m, n, *a, **k: m.fft.rfftfreq(n, *a, **k), lambda r: [
        S(5), S(4, 2.5, name="d"), S(6, dtype="float64", name="float64")], grad=False),
]


def _dtype_arg(spec):
    # fftfreq's dtype names a dtype of the module it runs on
    fn = spec.fn

    def call(m, *a, **k):
        if isinstance(k.get("dtype"), str):
            k = dict(k, dtype=getattr(m, k["dtype"]))
        return fn(m, *a, **k)
    spec.fn = call
    return spec


SPECS[-2:] = [_dtype_arg(s) for s in SPECS[-2:]]
