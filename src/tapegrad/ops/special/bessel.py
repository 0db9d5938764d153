"""Bessel functions: i0, i0e, i1, i1e (with gradients), modified_bessel_i0/i1/k0/k1, scaled_modified_bessel_k0/k1,
bessel_j0/j1/y0/y1, spherical_bessel_j0 and airy_ai (torch gives the last eleven no derivative).

The methods, from the standard mathematics (Abramowitz & Stegun ch. 9-10, DLMF ch. 9-10):
- I_nu (nu = 0, 1): the power series sum (x/2)^(2k+nu) / (k! (k+nu)!) below 25 (all terms positive), Hankel's
  asymptotic expansion e^x / sqrt(2 pi x) sum_k (-1)^k a_k(nu) / x^k above (its smallest term is ~e^-2x).
- K_nu: below 1, the series of A&S 9.6.11 (K = -(log(x/2) + gamma) I + ... with harmonic numbers); above, the
  integral e^x K_nu(x) = int_0^inf exp(-x (cosh t - 1)) cosh(nu t) dt by the trapezoidal rule in u = t sqrt(x),
  step 1/4: the integrand is analytic in a strip and decays like a Gaussian, so the rule converges
  exponentially (the error is far below double precision here).
- J_nu, Y_nu: the series below 2; Miller's backward recurrence normalised by J0 + 2 sum J_2k = 1, with Neumann's
  series for Y0 and its derivative for Y1, from 2 to 25; Hankel's expansions (P cos - Q sin) above 25.
- Ai: the Maclaurin series for |x| < 2.09; (1/pi) sqrt(x/3) K_1/3(2/3 x^1.5) above; for -10.5 < x <= -2.09,
  Taylor series of the Airy equation y'' = x y about nodes 0.5 apart (their values found by stepping the same
  Taylor series from Ai(0), Ai'(0)); below -10.5, the oscillating asymptotic expansion (DLMF 9.7.9).
At +-inf the values follow torch's (NaN where its kernels give NaN).
"""

from __future__ import annotations

import math
from functools import cache

import numpy as np

from .._util import bind
from ..elementwise._common import _copy_out, _inplace, _w
from ._common import EULER, piecewise, special_unary

__all__ = ["i0", "i0_", "i0e", "i1", "i1e", "modified_bessel_i0", "modified_bessel_i1", "modified_bessel_k0",
           "modified_bessel_k1", "scaled_modified_bessel_k0", "scaled_modified_bessel_k1", "bessel_j0", "bessel_j1",
           "bessel_y0", "bessel_y1", "spherical_bessel_j0", "airy_ai"]

_TINY = 1e-17


# --- I_0, I_1 ----------------------------------------------------------------------------------------------
def _i_series(x, nu):
    """I_nu(x), x >= 0 (used up to 25)."""
    t = x * x / 4
    term = np.ones_like(x) if nu == 0 else x / 2
    total = term.copy()
    for k in range(1, 90):
        term = term * t / (k * (k + nu))
        total += term
        if np.all(term <= _TINY * total):
            break
    return total


def _hankel_terms(x, nu, alternating):
    """sum_k s^k a_k(nu) / x^k, a_k = prod_{j<=k} (4 nu^2 - (2j - 1)^2) / (k! 8^k), s = -1 when ``alternating``;
    stopped at the first term below 1e-17 of the sum (x >= 25 gets there long before the series diverges)."""
    mu = 4.0 * nu * nu
    term = np.ones_like(x)
    total = term.copy()
    for k in range(1, 80):
        term = term * (mu - (2 * k - 1) ** 2) / (8 * k * x)
        if alternating:
            term = -term
        total += term
        if np.all(np.abs(term) <= _TINY * np.abs(total)):
            break
    return total


def _i_scaled(x, nu):
    """e^-|x| I_nu(|x|)."""
    ax = np.abs(x)
    return piecewise(ax, (ax <= 25, lambda v: np.exp(-v) * _i_series(v, nu)),
                     (ax > 25, lambda v: _hankel_terms(v, nu, True) / np.sqrt(2 * np.pi * v)))


def _i0_np(x):
    ax = np.abs(x)
    out = piecewise(ax, (ax <= 25, lambda v: _i_series(v, 0)),
                    (ax > 25, lambda v: np.exp(v) * _hankel_terms(v, 0, True) / np.sqrt(2 * np.pi * v)))
    out[np.isinf(x)] = np.nan
    return out


def _i0e_np(x):
    out = _i_scaled(x, 0)
    out[np.isinf(x)] = 0.0
    return out


def _i1_np(x):
    ax = np.abs(x)
    out = piecewise(ax, (ax <= 25, lambda v: _i_series(v, 1)),
                    (ax > 25, lambda v: np.exp(v) * _hankel_terms(v, 1, True) / np.sqrt(2 * np.pi * v)))
    out = np.where(x < 0, -out, out)
    out[np.isinf(x)] = np.nan
    return out


def _i1e_np(x):
    out = _i_scaled(x, 1)
    out[np.isinf(x)] = 0.0
    return np.where(x < 0, -out, out)


# --- K_0, K_1 ----------------------------------------------------------------------------------------------
def _k_series(x, nu):
    """K_nu(x) for 0 < x <= 1 (A&S 9.6.11 with psi(k+1) = -gamma + H_k)."""
    t = x * x / 4
    log_half = np.log(x / 2)
    if nu == 0:
        term, harm = np.ones_like(x), 0.0
        total = np.zeros_like(x)
        for k in range(1, 40):
            term = term * t / (k * k)
            harm += 1.0 / k
            total += harm * term
        return -(log_half + EULER) * _i_series(x, 0) + total
    term = np.ones_like(x)
    harm = 0.0
    total = (-2 * EULER + 1.0) * term            # psi(1) + psi(2)
    for k in range(1, 40):
        term = term * t / (k * (k + 1))
        harm += 1.0 / k
        total += (-2 * EULER + 2 * harm + 1.0 / (k + 1)) * term
    return 1.0 / x + log_half * _i_series(x, 1) - x / 4 * total


_U = np.arange(0.0, 10.0 + 1e-9, 0.25)          # the trapezoidal rule's nodes in u = t sqrt(x)
_U_WEIGHT = np.where(_U == 0, 0.5, 1.0) * 0.25


def _k_scaled_integral(x, nu):
    """e^x K_nu(x) for x >= 1: the trapezoidal rule on int_0^inf exp(-x (cosh t - 1)) cosh(nu t) dt."""
    r = np.sqrt(x)[:, None]
    t = _U[None, :] / r
    f = np.exp(-2 * x[:, None] * np.sinh(t / 2) ** 2) * np.cosh(nu * t)
    return (f @ _U_WEIGHT) / r[:, 0]


def _k_np(x, nu, scaled):
    def small(v):
        k = _k_series(v, nu)
        return k * np.exp(v) if scaled else k

    def large(v):
        k = _k_scaled_integral(v, nu)
        return k if scaled else k * np.exp(-v)
    out = piecewise(x, ((x > 0) & (x <= 1), small), ((x > 1) & np.isfinite(x), large))
    out[x == 0] = np.inf
    out[x == np.inf] = 0.0
    return out


# --- J_0, J_1, Y_0, Y_1 ------------------------------------------------------------------------------------
def _jy_series(x):
    """(J0, J1, Y0, Y1) for 0 < x < 2."""
    t = x * x / 4
    j0, j1 = np.ones_like(x), np.ones_like(x)
    term0, term1 = np.ones_like(x), np.ones_like(x)
    y0s = np.zeros_like(x)
    harm = 0.0
    y1s = (-2 * EULER + 1.0) * np.ones_like(x)       # psi(1) + psi(2), k = 0
    for k in range(1, 40):
        term0 = -term0 * t / (k * k)
        term1 = -term1 * t / (k * (k + 1))
        harm += 1.0 / k
        j0 += term0
        j1 += term1
        y0s -= harm * term0
        y1s += (-2 * EULER + harm + harm + 1.0 / (k + 1)) * term1
    j1 *= x / 2
    lg = np.log(x / 2)
    y0 = 2 / np.pi * ((lg + EULER) * j0 + y0s)
    y1 = -2 / (np.pi * x) + 2 / np.pi * lg * j1 - x / (2 * np.pi) * y1s
    return j0, j1, y0, y1


def _jy_miller(x):
    """(J0, J1, Y0, Y1) for 2 <= x <= 25: Miller's backward recurrence from an even order N ~ x + 40."""
    n_top = 2 * int((x.max() + 42) // 2)
    j_next = np.zeros_like(x)                 # j_{n+1}
    j = np.full(x.shape, 1e-30)               # j_n, n = n_top
    norm = 2 * j                              # J0 + 2 sum_k J_2k (unnormalised)
    s_y0 = (-1.0) ** (n_top // 2) * j / (n_top // 2)
    s_y1 = np.zeros_like(x)
    j1 = None
    for n in range(n_top, 0, -1):             # j_{n-1} = (2n / x) j_n - j_{n+1}
        j_prev = (2 * n / x) * j - j_next
        m = n - 1
        if m % 2 == 1:                        # m = 2k - 1: sum (-1)^k (J_{2k-1} - J_{2k+1}) / k
            k = (m + 1) // 2
            s_y1 += (-1.0) ** k * (j_prev - j_next) / k
        elif m > 0:
            k = m // 2
            norm += 2 * j_prev
            s_y0 += (-1.0) ** k * j_prev / k
        else:
            norm += j_prev
        if m == 1:
            j1 = j_prev
        j_next, j = j, j_prev
        big = np.abs(j) > 1e250
        if big.any():
            for arr in (j, j_next, norm, s_y0, s_y1):
                arr[big] *= 1e-250
            if j1 is not None:
                j1[big] *= 1e-250
    j0, j1 = j / norm, j1 / norm
    s_y0, s_y1 = s_y0 / norm, s_y1 / norm
    lg = np.log(x / 2) + EULER
    y0 = 2 / np.pi * (lg * j0 - 2 * s_y0)
    y1 = 2 / np.pi * (lg * j1 - j0 / x + s_y1)
    return j0, j1, y0, y1


def _jy_hankel(x, nu):
    """(J_nu, Y_nu) for x >= 25 (Hankel: sqrt(2 / (pi x)) (P cos chi - Q sin chi), chi = x - (nu/2 + 1/4) pi)."""
    mu = 4.0 * nu * nu
    p, q = np.ones_like(x), np.zeros_like(x)
    term = np.ones_like(x)
    for k in range(1, 80):
        term = term * (mu - (2 * k - 1) ** 2) / (8 * k * x)
        sign = -1.0 if (k // 2) % 2 else 1.0     # (-1)^floor(k/2)
        if k % 2:
            q += sign * term
        else:
            p += sign * term
        if np.all(np.abs(term) <= _TINY):
            break
    c, s = np.cos(x), np.sin(x)
    if nu == 0:     # chi = x - pi/4
        cos_chi, sin_chi = (c + s) / math.sqrt(2), (s - c) / math.sqrt(2)
    else:           # chi = x - 3 pi / 4
        cos_chi, sin_chi = (s - c) / math.sqrt(2), -(s + c) / math.sqrt(2)
    amp = np.sqrt(2 / (np.pi * x))
    return amp * (p * cos_chi - q * sin_chi), amp * (p * sin_chi + q * cos_chi)


def _jy(x, which):
    """which: 0 J0, 1 J1, 2 Y0, 3 Y1, for x > 0."""
    def series(v):
        return _jy_series(v)[which]

    def miller(v):
        return _jy_miller(v)[which]

    def hankel(v):
        j, y = _jy_hankel(v, which % 2)
        return j if which < 2 else y
    return piecewise(x, ((x > 0) & (x < 2), series), ((x >= 2) & (x <= 25), miller), (x > 25, hankel))


def _j0_np(x):
    ax = np.abs(x)
    out = _jy(ax, 0)
    out[ax == 0] = 1.0
    out[np.isinf(x)] = np.nan
    return out


def _j1_np(x):
    ax = np.abs(x)
    out = _jy(ax, 1)
    out[ax == 0] = 0.0
    out = np.where(np.signbit(x), -out, out)     # (odd: J1(-0) is -0)
    out[np.isinf(x)] = np.nan
    return out


def _y_np(x, which):
    out = _jy(x, which)
    out[x == 0] = -np.inf
    out[x == np.inf] = np.nan
    return out


def _spherical_j0_np(x):
    def small(v):
        z = v * v
        return 1 - z / 6 * (1 - z / 20 * (1 - z / 42 * (1 - z / 72 * (1 - z / 110 * (1 - z / 156)))))
    ax = np.abs(x)
    out = piecewise(x, (np.isfinite(x), lambda v: np.sin(v) / v), (ax < 0.5, small))
    out[np.isinf(x)] = 0.0
    return out


# --- Airy Ai -----------------------------------------------------------------------------------------------
_AI0, _AIP0 = 0.35502805388781723926, -0.25881940379280679840   # Ai(0), Ai'(0)


def _airy_coefficients(x0, y0, yp0, terms=40):
    """Taylor coefficients about x0 of the solution of y'' = x y through (x0, y0, y0'):
    a_0 = y0, a_1 = y0', a_2 = x0 y0 / 2, (n+2)(n+1) a_{n+2} = x0 a_n + a_{n-1}."""
    coeffs = [y0, yp0, x0 * y0 / 2]
    for n in range(1, terms):
        coeffs.append((x0 * coeffs[n] + coeffs[n - 1]) / ((n + 2) * (n + 1)))
    return coeffs


def _airy_taylor(x0, y0, yp0, h):
    """(y, y') at x0 + h of the solution of y'' = x y through (x0, y0, y0')."""
    coeffs = _airy_coefficients(x0, y0, yp0)
    y = np.zeros_like(h)
    yp = np.zeros_like(h)
    for n in range(len(coeffs) - 1, -1, -1):
        y = y * h + coeffs[n]
        if n:
            yp = yp * h + n * coeffs[n]
    return y, yp


@cache
def _airy_nodes():
    """Ai and Ai' at x = 0, -0.5, ..., -10.5, stepped from Ai(0), Ai'(0) (the oscillating side: errors stay at
    the rounding level)."""
    xs, ys, yps = [0.0], [_AI0], [_AIP0]
    for k in range(1, 22):
        y, yp = _airy_taylor(xs[-1], np.asarray(ys[-1]), np.asarray(yps[-1]), np.asarray(-0.5))
        xs.append(-0.5 * k)
        ys.append(float(y))
        yps.append(float(yp))
    return np.array(xs), np.array(ys), np.array(yps)


def _airy_maclaurin(x):
    z = x ** 3
    f, g = np.ones_like(x), x.copy()
    tf, tg = np.ones_like(x), x.copy()
    for k in range(1, 60):
        tf = tf * z / ((3 * k - 1) * (3 * k))
        tg = tg * z / ((3 * k) * (3 * k + 1))
        f += tf
        g += tg
    return _AI0 * f + _AIP0 * g


def _airy_nodes_eval(x):
    xs, ys, yps = _airy_nodes()
    k = np.clip(np.round(-x / 0.5).astype(np.int64), 0, len(xs) - 1)
    x0 = xs[k]
    h = x - x0
    y = np.zeros_like(x)
    for cn in _airy_coefficients(x0, ys[k], yps[k])[::-1]:     # (arrays: each element's own node)
        y = y * h + cn
    return y


def _airy_negative_asymptotic(x):
    """Ai(-z) ~ (cos(zeta - pi/4) sum (-1)^k u_2k zeta^-2k + sin(zeta - pi/4) sum (-1)^k u_2k+1 zeta^-2k-1)
    / (sqrt(pi) z^(1/4)), zeta = 2/3 z^(3/2), u_k = (2k+1)(2k+3)...(6k-1) / (216^k k!)."""
    z = -x
    zeta = 2.0 / 3.0 * z * np.sqrt(z)
    p, q = np.ones_like(z), np.zeros_like(z)
    u = 1.0
    term = np.ones_like(z)
    for k in range(1, 60):
        u = u * (6 * k - 5) * (6 * k - 3) * (6 * k - 1) / ((2 * k - 1) * 216 * k)
        term = term / zeta
        sign = -1.0 if (k // 2) % 2 else 1.0
        if k % 2:
            q += sign * u * term
        else:
            p += sign * u * term
        if np.all(np.abs(u * term) <= _TINY):
            break
    c, s = np.cos(zeta), np.sin(zeta)
    cos_c, sin_c = (c + s) / math.sqrt(2), (s - c) / math.sqrt(2)    # of zeta - pi/4
    return (cos_c * p + sin_c * q) / (math.sqrt(math.pi) * np.sqrt(np.sqrt(z)))


def _airy_np(x):
    def positive(v):
        zeta = 2.0 / 3.0 * v * np.sqrt(v)
        return np.sqrt(v / 3) / np.pi * np.exp(-zeta) * _k_scaled_integral(zeta, 1.0 / 3.0)
    fin = np.isfinite(x)
    out = piecewise(x, (fin & (np.abs(x) < 2.09), _airy_maclaurin), (fin & (x >= 2.09), positive),
                    (fin & (x <= -2.09), _airy_nodes_eval), (fin & (x < -10.5), _airy_negative_asymptotic))
    return out


# --- the Primitives and functions --------------------------------------------------------------------------
def _safe_x(x):
    """x with its tiny entries replaced by eps (the backwards' division), and the mask of those kept."""
    eps = np.finfo(x._array.dtype).eps
    keep = np.abs(x._array) > eps
    return _w(keep, x, float(eps)), keep


def _i1_backward(grad, x, r):
    sx, keep = _safe_x(x)
    return grad * _w(keep, i0(sx) - r / sx, 0.5)


def _i1e_backward(grad, x, r):
    sx, keep = _safe_x(x)
    return grad * _w(keep, i0e(sx) - r * (sx.sign() + 1 / sx), 0.5)


I0 = special_unary("I0", _i0_np, lambda grad, x, r: grad * i1(x), kernel="i0_vml_cpu")
I0e = special_unary("I0e", _i0e_np, lambda grad, x, r: grad * (i1e(x) - x.sign() * r), node_name="SpecialI0EBackward0",
                    save="both", kernel="i0e_cpu")
I1 = special_unary("I1", _i1_np, _i1_backward, node_name="SpecialI1Backward0", save="both", kernel="i1_cpu")
I1e = special_unary("I1e", _i1e_np, _i1e_backward, node_name="SpecialI1EBackward0", save="both", kernel="i1e_cpu")

def _fn(name, cls, doc):
    def fn(input, *, out=None):  # noqa: A002
        res = cls.apply(input)
        return res if out is None else _copy_out(name, res, out)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


i0 = _fn("i0", I0, """The modified Bessel function of the first kind, order 0.

    >>> tapegrad.i0(tapegrad.tensor([0.0, 1.0]))
    tensor([1.0000, 1.2661])
    """)
i0e = _fn("i0e", I0e, "exp(-|x|) i0(x), the exponentially scaled i0.")
i1 = _fn("i1", I1, "The modified Bessel function of the first kind, order 1.")
i1e = _fn("i1e", I1e, "exp(-|x|) i1(x), the exponentially scaled i1.")


def _no_derivative(name, np_fn, doc):
    """A function torch gives no derivative: its output never requires grad."""
    cls = special_unary("".join(p.title() for p in name.split("_")), np_fn, None, kernel=f"{name}_cpu")
    return _fn(name, cls, doc)


modified_bessel_i0 = _no_derivative("modified_bessel_i0", _i0_np,
                                    "I_0(x) (torch gives it no derivative; ``i0`` has one).")
modified_bessel_i1 = _no_derivative("modified_bessel_i1", _i1_np, "I_1(x) (no derivative, as torch).")
modified_bessel_k0 = _no_derivative("modified_bessel_k0", lambda x: _k_np(x, 0, False),
                                    "K_0(x), the modified Bessel function of the second kind, order 0 (no derivative).")
modified_bessel_k1 = _no_derivative("modified_bessel_k1", lambda x: _k_np(x, 1, False), "K_1(x) (no derivative).")
scaled_modified_bessel_k0 = _no_derivative("scaled_modified_bessel_k0", lambda x: _k_np(x, 0, True),
                                           "exp(x) K_0(x) (no derivative).")
scaled_modified_bessel_k1 = _no_derivative("scaled_modified_bessel_k1", lambda x: _k_np(x, 1, True),
                                           "exp(x) K_1(x) (no derivative).")
bessel_j0 = _no_derivative("bessel_j0", _j0_np,
                           "J_0(x), the Bessel function of the first kind, order 0 (no derivative).")
bessel_j1 = _no_derivative("bessel_j1", _j1_np, "J_1(x) (no derivative).")
bessel_y0 = _no_derivative("bessel_y0", lambda x: _y_np(x, 2),
                           "Y_0(x), the Bessel function of the second kind, order 0 (no derivative).")
bessel_y1 = _no_derivative("bessel_y1", lambda x: _y_np(x, 3), "Y_1(x) (no derivative).")
spherical_bessel_j0 = _no_derivative("spherical_bessel_j0", _spherical_j0_np,
                                     "sin(x) / x, the spherical Bessel function j_0 (no derivative).")
airy_ai = _no_derivative("airy_ai", _airy_np, "Ai(x), the Airy function of the first kind (no derivative).")

i0_ = _inplace(i0)

bind(i0=i0, i0_=i0_)
