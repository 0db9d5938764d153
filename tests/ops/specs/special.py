"""Specs of the special functions (torch.special and their top-level names): samples spread over each
algorithm's ranges (series, recurrences, asymptotic expansions, reflection), gradients where torch has them.
Accuracy over wide ranges against mpmath and torch is in tests/test_special.py."""

import numpy as np

from ops.op_db import OpSpec, S, noncontig, randn


def _sp(name):
    return lambda m, *a, **k: getattr(m.special, name)(*a, **k)


def _pos(r, lo, hi, *shape):
    return r.uniform(lo, hi, size=shape or (5,))


def _lgamma_samples(r):
    return [S(_pos(r, 0.1, 5, 2, 3)), S(np.array([0.2, 0.999, 1.001, 1.999, 2.0001, 2.6])),
            S(np.array([12.5, 40.0, 300.0])), S(np.array([-0.5, -1.3, -2.7, -4.2])), S(np.asarray(3.3), name="0d"),
            S(noncontig(_pos(r, 0.5, 8, 3, 2)), name="noncontig"), S(np.array([[1, 2], [5, 7]]), name="int")]


def _digamma_samples(r):
    return [S(_pos(r, 0.1, 5, 2, 3)), S(np.array([1.3, 1.4616, 1.5, 1.7])), S(np.array([10.5, 25.0, 250.0])),
            S(np.array([-0.5, -1.3, -2.7])), S(np.asarray(0.75), name="0d"), S(np.array([1, 3]), name="int")]


def _bessel_samples(r, zero=0.0):
    return [S(randn(r, 2, 3) * 3), S(np.array([zero, 1e-3, 0.7, 24.5, 26.0, 40.0])), S(-_pos(r, 0.5, 30)),
            S(np.asarray(2.5), name="0d"), S(noncontig(randn(r, 3, 2)), name="noncontig"),
            S(np.array([1, -2]), name="int")]


def _nondiff(name, samples, **kw):
    return OpSpec(f"special.{name}", _sp(name), samples, grad=False, **kw)


def _positive(r):
    return [S(_pos(r, 0.05, 3, 2, 3)), S(np.array([0.5, 1.0, 1.5, 2.5, 8.0, 30.0, 300.0])),
            S(np.asarray(4.5), name="0d"), S(np.array([1, 3]), name="int")]


def _real_line(r):
    return [S(randn(r, 2, 3) * 4), S(np.array([-30.0, -12.0, -5.5, -2.5, -0.5, 0.0, 0.5, 2.1, 5.0, 11.0, 40.0])),
            S(np.asarray(-3.3), name="0d"), S(np.array([-1, 2]), name="int")]


def _poly_samples(r):
    return [S(r.uniform(-1, 1, 6), 3, name="n3"), S(r.uniform(-1, 1, 6), np.array([0, 1, 2, 7, 9, 12]), name="n_tensor"),
            S(r.uniform(-2, 2, (2, 3)), np.array([4, 5, 6]), name="broadcast"),
            S(np.array([1.0, -1.0, 0.0, 0.5]), 5, name="edges"), S(r.uniform(-1, 1, 4), -1, name="negative_n"),
            S(0.5, np.array([0, 1, 2, 3]), name="number_x"), S(np.array([0.3, 0.6]), 2.7, name="float_n")]


def _igamma_samples(r):
    # x (differentiable) first, a (torch has no derivative in it) as a keyword
    return [S(_pos(r, 0.05, 8), a=_pos(r, 0.1, 5)),
            S(np.array([0.4, 1.05, 1.2, 48.0, 230.0, 0.3]), a=np.array([0.01, 0.3, 2.0, 50.0, 200.0, 0.005]),
              name="regions"),
            S(np.asarray(2.0), a=np.asarray(3.0), name="0d")]


SPECS = [
    OpSpec("lgamma", lambda m, x: m.lgamma(x), _lgamma_samples, inplace=lambda x: x.lgamma_()),
    OpSpec("special.gammaln", _sp("gammaln"), _lgamma_samples),
    OpSpec("digamma", lambda m, x: m.digamma(x), _digamma_samples, inplace=lambda x: x.digamma_()),
    OpSpec("special.psi", _sp("psi"), _digamma_samples),
    OpSpec("polygamma", lambda m, n, x: m.polygamma(n, x), lambda r: [
        S(0, _pos(r, 0.2, 4)), S(1, _pos(r, 0.2, 4), name="n1"), S(1, np.array([-0.5, -1.5, -2.3]), name="n1_neg"),
        S(2, _pos(r, 0.2, 4), name="n2"), S(3, np.array([0.4, 1.5, 3.0, 12.0]), name="n3"),
        S(2, np.array([-0.5, -1.3]), name="n2_neg"), S(1, np.asarray(2.0), name="0d")]),
    OpSpec("polygamma_method", lambda m, x, n: x.polygamma(n), lambda r: [S(_pos(r, 0.2, 4), 2)],
           inplace=lambda x, n: x.polygamma_(n)),
    OpSpec("mvlgamma", lambda m, x, p: m.mvlgamma(x, p), lambda r: [
        S(_pos(r, 2.5, 6), 1, name="p1"), S(_pos(r, 2.5, 6), 3, name="p3"), S(np.asarray(4.2), 2, name="0d")],
        inplace=lambda x, p: x.mvlgamma_(p)),
    OpSpec("special.multigammaln", _sp("multigammaln"), lambda r: [S(_pos(r, 1.6, 6, 2, 2), 4)]),
    OpSpec("special.zeta", lambda m, q, x: m.special.zeta(m.tensor(x), q), lambda r: [
        S(_pos(r, 0.2, 5), x=_pos(r, 1.1, 6)), S(np.array([-0.5, -1.5, -2.25]), x=np.array([2.0, 3.0, 4.0]), name="neg_q"),
        S(np.array([1e3, 3.0]), x=np.array([2.0, 30.0]), name="large"), S(np.asarray(1.5), x=np.asarray(2.5), name="0d")],
        notes="torch has no derivative in x (SpecialZetaBackward0 raises): x is given without grad"),
    OpSpec("special.zeta_number_x", lambda m, q: m.special.zeta(3.0, q), lambda r: [S(_pos(r, 0.3, 4))]),
    OpSpec("special.zeta_number_q", lambda m, x: m.special.zeta(x, 2.0), lambda r: [S(_pos(r, 1.5, 4))],
           grad=False),
    OpSpec("igamma", lambda m, x, a: m.igamma(m.tensor(a), x), lambda r: _igamma_samples(r),
           notes="torch has no derivative in a: a is given without grad"),
    OpSpec("igamma_method", lambda m, a, x: a.igamma(x), lambda r: [S(_pos(r, 0.1, 5), _pos(r, 0.05, 8))],
           grad=False, inplace=lambda a, x: a.igamma_(x)),
    OpSpec("igammac", lambda m, x, a: m.igammac(m.tensor(a), x), lambda r: _igamma_samples(r),
           notes="torch has no derivative in a: a is given without grad"),
    OpSpec("igammac_method", lambda m, a, x: a.igammac(x), lambda r: [S(_pos(r, 0.1, 5), _pos(r, 0.05, 8))],
           grad=False, inplace=lambda a, x: a.igammac_(x)),
    OpSpec("special.gammainc", lambda m, x, a: m.special.gammainc(m.tensor(a), x), _igamma_samples),
    OpSpec("special.gammaincc", lambda m, x, a: m.special.gammaincc(m.tensor(a), x), _igamma_samples),
    OpSpec("i0", lambda m, x: m.i0(x), _bessel_samples, inplace=lambda x: x.i0_()),
    OpSpec("special.i0", _sp("i0"), _bessel_samples),
    OpSpec("special.i0e", _sp("i0e"), lambda r: _bessel_samples(r, zero=0.3),
           notes="|x| has a kink at 0: i0e's samples avoid it"),
    OpSpec("special.i1", _sp("i1"), _bessel_samples),
    OpSpec("special.i1e", _sp("i1e"), _bessel_samples),
    OpSpec("special.erfcx", _sp("erfcx"), lambda r: [
        S(randn(r, 2, 3) * 2), S(np.array([-5.0, -0.3, 0.2, 0.47, 0.5, 3.9, 4.1, 30.0, 1e3])),
        S(np.asarray(1.5), name="0d"), S(np.array([0, 2]), name="int")]),
    OpSpec("special.ndtr", _sp("ndtr"), lambda r: [S(randn(r, 2, 3) * 2), S(np.array([-6.0, -1.0, 0.0, 3.0])),
                                                 S(np.asarray(0.3), name="0d")], check_grad_fn=False,
           notes="torch's ndtr is the composite (1 + erf(x / sqrt 2)) * 0.5; tapegrad's one node is named as its "
                 "last (MulBackward1)"),
    OpSpec("special.log_ndtr", _sp("log_ndtr"), lambda r: [
        S(randn(r, 2, 3) * 3), S(np.array([-40.0, -10.0, -1.5, -1.0, -0.5, 0.0, 2.0, 9.0])),
        S(np.asarray(-3.0), name="0d")]),
    OpSpec("special.ndtri", _sp("ndtri"), lambda r: [
        S(r.uniform(0.02, 0.98, (2, 3))), S(np.array([1e-3, 0.02, 0.2, 0.26, 0.5, 0.74, 0.8, 0.999])),
        S(np.asarray(0.3), name="0d")], gc_atol=1e-4),
    OpSpec("special.entr", _sp("entr"), lambda r: [S(_pos(r, 0.05, 3, 2, 3)), S(np.asarray(0.7), name="0d"),
                                                 S(np.array([0, 1, 3]), name="int")]),
    OpSpec("sinc", lambda m, x: m.sinc(x), lambda r: [S(randn(r, 2, 3) * 2), S(np.array([0.0, 0.5, 1.0, -2.5, 1e-3]), smooth=False),
                                                   S(np.asarray(0.25), name="0d"), S(np.array([0, 2]), name="int")],
           inplace=lambda x: x.sinc_()),
    OpSpec("special.sinc", _sp("sinc"), lambda r: [S(randn(r, 4))]),
    OpSpec("special.xlog1py", _sp("xlog1py"), lambda r: [
        S(randn(r, 2, 3), _pos(r, -0.9, 3, 2, 3)), S(np.array([0.0, 0.0, 1.5, -2.0]), np.array([0.0, 2.0, 0.5, -0.5]),
                                                    name="zeros"),
        S(randn(r, 3), _pos(r, 0.1, 2, 2, 1), name="broadcast")]),
    OpSpec("special.xlog1py_number", lambda m, x, y: m.special.xlog1py(2.0, y) + m.special.xlog1py(x, 0.5),
           lambda r: [S(randn(r, 3), _pos(r, 0.0, 2, 3))], check_grad_fn=False),
    # no derivative in torch: values only
    _nondiff("modified_bessel_i0", _real_line), _nondiff("modified_bessel_i1", _real_line),
    _nondiff("modified_bessel_k0", _positive), _nondiff("modified_bessel_k1", _positive),
    _nondiff("scaled_modified_bessel_k0", _positive), _nondiff("scaled_modified_bessel_k1", _positive),
    _nondiff("bessel_j0", _real_line, atol=1e-6, notes="torch's own J0 is off by up to 4e-7 near x = 5 "
             "(tests/test_special.py compares with mpmath)"),
    _nondiff("bessel_j1", _real_line, atol=1e-6, notes="torch's J1 is off by up to 4e-7 near x = 5"),
    _nondiff("bessel_y0", _positive, atol=1e-6, notes="torch's Y0 is off by up to 2e-7 near x = 5"),
    _nondiff("bessel_y1", _positive, atol=1e-6, notes="torch's Y1 is off by up to 8e-7 near x = 5"),
    _nondiff("spherical_bessel_j0", _real_line), _nondiff("airy_ai", _real_line, atol=1e-5,
                                                         notes="torch's Ai is off by up to 3e-6 near x = -2.09"),
] + [_nondiff(k, _poly_samples) for k in (
    "chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w",
    "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
    "shifted_chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he", "laguerre_polynomial_l",
    "legendre_polynomial_p")]
