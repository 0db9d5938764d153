"""Specs of the complex-number ops: conj and its relatives, real/imag, view_as_real/view_as_complex, complex,
polar, angle, sgn (complex samples are complex NumPy arrays: they become complex tensors that require grad)."""

import numpy as np

from ops.op_db import OpSpec, S, noncontig, randn


def crandn(r, *shape):
    return np.asarray(randn(r, *shape) + 1j * randn(r, *shape))


def _z(r):
    return [S(crandn(r, 2, 3)), S(crandn(r), name="0d"), S(noncontig(crandn(r, 3, 2)), name="noncontig")]


SPECS = [
    OpSpec("conj", lambda m, x: m.conj(x) * 1, _z),                 # (* 1: torch's conj is a lazy view)
    OpSpec("conj_method", lambda m, x: x.conj() * 1, lambda r: [S(crandn(r, 3))]),
    OpSpec("conj_physical", lambda m, x: m.conj_physical(x), _z),
    OpSpec("resolve_conj", lambda m, x: m.resolve_conj(x.conj()), lambda r: [S(crandn(r, 2, 3))],
           check_grad_fn=False, notes="torch resolves a lazy conjugate (CloneBackward0); tapegrad's conj is a copy"),
    OpSpec("resolve_neg", lambda m, x: m.resolve_neg(x * 2), lambda r: [S(crandn(r, 2, 3))]),
    OpSpec("real", lambda m, x: m.real(x) * 1, _z),
    OpSpec("real_of_real", lambda m, x: m.real(x) * 1, lambda r: [S(randn(r, 2, 3))]),
    OpSpec("imag", lambda m, x: m.imag(x) * 1, _z),
    OpSpec("real_imag_props", lambda m, x: x.real * x.imag, _z),
    OpSpec("view_as_real", lambda m, x: m.view_as_real(x), lambda r: [S(crandn(r, 2, 3)), S(crandn(r), name="0d")]),
    OpSpec("view_as_complex", lambda m, x: m.view_as_complex(x), lambda r: [
        S(randn(r, 2, 3, 2)), S(randn(r, 2), name="0d_out")]),
    OpSpec("complex", lambda m, x, y: m.complex(x, y), lambda r: [
        S(randn(r, 2, 3), randn(r, 2, 3)), S(randn(r, 2, 3), randn(r, 3), name="broadcast"),
        S(np.asarray(randn(r)), np.asarray(randn(r)), name="0d")]),
    OpSpec("polar", lambda m, x, y: m.polar(x, y), lambda r: [
        S(randn(r, 2, 3, positive=True), randn(r, 2, 3)), S(randn(r, 3, positive=True), randn(r, 2, 3),
                                                             name="broadcast")]),
    OpSpec("angle", lambda m, x: m.angle(x), lambda r: _z(r) + [S(randn(r, 2, 3), name="real")]),
    OpSpec("sgn", lambda m, x: m.sgn(x), lambda r: _z(r) + [S(randn(r, 2, 3), name="real")]),
    OpSpec("abs_complex", lambda m, x: m.abs(x), _z),
    OpSpec("complex_chain", lambda m, x: (x * x).abs().sum() + (x.exp() / (x + 3)).sum().real, _z),
]
