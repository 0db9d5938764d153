"""The classical orthogonal polynomials of torch.special, p_n(x) with n a tensor or a number (truncated to an
integer; negative n gives 0): Chebyshev T, U, V, W and their shifted forms (argument 2x - 1), Hermite H
(physicists') and He (probabilists'), Laguerre L and Legendre P. torch gives them no derivative.

Each is its three-term recurrence, p_{k+1} = (a_k x + b_k) p_k - c_k p_{k-1}, run for every element up to its
own n. Inside [-1, 1] and for n above a few, the Chebyshev polynomials use their trigonometric forms
(T_n(cos t) = cos(n t), U_n = sin((n+1) t) / sin t, V_n = cos((n+1/2) t) / cos(t/2), W_n = sin((n+1/2) t) /
sin(t/2)), as torch's kernels do; at x = +-1 they take their exact values.
"""

from __future__ import annotations

import numpy as np

from .._util import Primitive, Tensor
from ..elementwise._common import _copy_out
from ._common import binary_inputs

__all__ = ["chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w",
           "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
           "shifted_chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he",
           "laguerre_polynomial_l", "legendre_polynomial_p"]


def _recurrence(x, n, p0, p1, step):
    """p_n(x) by ``p_{k+1} = step(k, x, p_k, p_{k-1})`` from p_0 = p0(x), p_1 = p1(x); n an int64 array."""
    out = np.where(n == 0, p0(x), p1(x))
    todo = n >= 2
    if not todo.any():
        return out
    idx = np.nonzero(todo)[0]
    xs, ns = x[idx], n[idx]
    prev, cur = p0(xs), p1(xs)
    for k in range(1, int(ns.max())):
        nxt = step(k, xs, cur, prev)
        prev, cur = cur, nxt
        finished = ns == k + 1
        if finished.any():
            out[idx[finished]] = cur[finished]
            keep = ~finished
            idx, xs, ns, prev, cur = idx[keep], xs[keep], ns[keep], prev[keep], cur[keep]
            if not idx.size:
                break
    return out


def _cheb_step(k, x, cur, prev):
    return 2 * x * cur - prev


def _chebyshev(kind, x, n):
    one = np.ones_like
    p1 = {"t": lambda v: v, "u": lambda v: 2 * v, "v": lambda v: 2 * v - 1, "w": lambda v: 2 * v + 1}[kind]
    out = _recurrence(x, n, one, p1, _cheb_step)
    inside = (np.abs(x) < 1) & (n > (6 if kind == "t" else 8))
    if inside.any():
        t = np.arccos(x[inside])
        m = n[inside].astype(np.float64)
        if kind == "t":
            v = np.cos(m * t)
        elif kind == "u":
            v = np.sin((m + 1) * t) / np.sin(t)
        elif kind == "v":
            v = np.cos((m + 0.5) * t) / np.cos(t / 2)
        else:
            v = np.sin((m + 0.5) * t) / np.sin(t / 2)
        out[inside] = v
    nf = n.astype(np.float64)
    even = n % 2 == 0
    at_one = {"t": 1.0, "u": nf + 1, "v": 1.0, "w": 2 * nf + 1}[kind]
    at_minus = {"t": np.where(even, 1.0, -1.0), "u": np.where(even, nf + 1, -(nf + 1)),
                "v": np.where(even, 2 * nf + 1, -(2 * nf + 1)), "w": np.where(even, 1.0, -1.0)}[kind]
    out = np.where(x == 1, at_one, out)
    out = np.where(x == -1, at_minus, out)
    return out


def _hermite_h(x, n):
    return _recurrence(x, n, np.ones_like, lambda v: 2 * v, lambda k, v, c, p: 2 * v * c - 2 * k * p)


def _hermite_he(x, n):
    return _recurrence(x, n, np.ones_like, lambda v: v.copy(), lambda k, v, c, p: v * c - k * p)


def _laguerre(x, n):
    out = _recurrence(x, n, np.ones_like, lambda v: 1 - v, lambda k, v, c, p: ((2 * k + 1 - v) * c - k * p) / (k + 1))
    return np.where(x == 0, 1.0, out)


def _legendre(x, n):
    out = _recurrence(x, n, np.ones_like, lambda v: v.copy(),
                      lambda k, v, c, p: ((2 * k + 1) * v * c - k * p) / (k + 1))
    out = np.where(x == 1, 1.0, out)
    return np.where(x == -1, np.where(n % 2 == 0, 1.0, -1.0), out)


_KINDS = {
    "chebyshev_polynomial_t": lambda x, n: _chebyshev("t", x, n),
    "chebyshev_polynomial_u": lambda x, n: _chebyshev("u", x, n),
    "chebyshev_polynomial_v": lambda x, n: _chebyshev("v", x, n),
    "chebyshev_polynomial_w": lambda x, n: _chebyshev("w", x, n),
    "shifted_chebyshev_polynomial_t": lambda x, n: _chebyshev("t", 2 * x - 1, n),
    "shifted_chebyshev_polynomial_u": lambda x, n: _chebyshev("u", 2 * x - 1, n),
    "shifted_chebyshev_polynomial_v": lambda x, n: _chebyshev("v", 2 * x - 1, n),
    "shifted_chebyshev_polynomial_w": lambda x, n: _chebyshev("w", 2 * x - 1, n),
    "hermite_polynomial_h": _hermite_h,
    "hermite_polynomial_he": _hermite_he,
    "laguerre_polynomial_l": _laguerre,
    "legendre_polynomial_p": _legendre,
}


class Polynomial(Primitive):
    """p_n(x) for one family (``kind``); not differentiable (as torch)."""

    @staticmethod
    def forward(ctx, kind, x, n):
        x, n, d = binary_inputs(x, n, f"{kind}_cpu")
        shape = np.broadcast_shapes(np.shape(x), np.shape(n))
        xs = np.broadcast_to(np.asarray(x, np.float64), shape).ravel()
        with np.errstate(invalid="ignore"):
            ns = np.broadcast_to(np.asarray(n, np.float64), shape).ravel()
            ni = np.where(np.isfinite(ns), ns, 0).astype(np.int64)
        out = np.where(ni < 0, 0.0, _KINDS[kind](xs, np.maximum(ni, 0)))
        out = np.where(np.isnan(xs), np.nan, out)
        res = np.asarray(out.reshape(shape)).astype(d, copy=False)
        ctx.mark_non_differentiable(res)
        return res

    @staticmethod
    def backward(ctx, grad):  # pragma: no cover - its output never requires grad
        return None, None, None


def _make(kind):
    def fn(input, n, *, out=None):  # noqa: A002
        if not isinstance(input, Tensor) and not isinstance(n, Tensor):
            raise TypeError(f"special_{kind}(): expected at least one Tensor argument")
        res = Polynomial.apply(kind, input, n)
        return res if out is None else _copy_out(f"special_{kind}", res, out)
    fn.__name__ = fn.__qualname__ = kind
    fn.__doc__ = f"``{kind}(input, n)``: the polynomial of degree ``n`` at ``input`` (no derivative, as torch)."
    return fn


chebyshev_polynomial_t = _make("chebyshev_polynomial_t")
chebyshev_polynomial_u = _make("chebyshev_polynomial_u")
chebyshev_polynomial_v = _make("chebyshev_polynomial_v")
chebyshev_polynomial_w = _make("chebyshev_polynomial_w")
shifted_chebyshev_polynomial_t = _make("shifted_chebyshev_polynomial_t")
shifted_chebyshev_polynomial_u = _make("shifted_chebyshev_polynomial_u")
shifted_chebyshev_polynomial_v = _make("shifted_chebyshev_polynomial_v")
shifted_chebyshev_polynomial_w = _make("shifted_chebyshev_polynomial_w")
hermite_polynomial_h = _make("hermite_polynomial_h")
hermite_polynomial_he = _make("hermite_polynomial_he")
laguerre_polynomial_l = _make("laguerre_polynomial_l")
legendre_polynomial_p = _make("legendre_polynomial_p")
