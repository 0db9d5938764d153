"""What the special functions share: float64 evaluation of a piecewise definition, Bernoulli numbers, Hurwitz's
zeta function (Euler-Maclaurin; every gamma-family function leans on it), and the Primitive factories.

Every function is evaluated in float64 from NumPy only (no SciPy): series, continued fractions, asymptotic
expansions and quadratures written from the published mathematics (the sources are named where each is used),
then cast to the input's dtype. Integer and bool inputs give the default float dtype, as in torch; complex inputs
raise torch's NotImplementedError.
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import cache

import numpy as np

from ..._dtype import get_default_dtype
from .._util import Primitive, Tensor
from ..elementwise._common import _cast_all, _legacy, _result

EULER = 0.57721566490153286061   # Euler-Mascheroni constant
LOG_2PI_HALF = 0.91893853320467274178   # log(2 pi) / 2


def piecewise(x, *cases, default=np.nan):
    """``out[mask] = fn(x[mask])`` for each ``(mask, fn)`` in turn (later cases win); elsewhere ``default``.
    Each branch sees only its own elements, so no branch is evaluated where it overflows or divides by zero."""
    out = np.full(x.shape, default, np.float64)
    for mask, fn in cases:
        if np.any(mask):
            out[mask] = fn(x[mask])
    return out


@cache
def bernoulli(n_max=40):
    """B_0 .. B_n_max as floats (exact rationals first: B_m = -1/(m+1) sum_{k<m} C(m+1, k) B_k)."""
    b = [Fraction(1)]
    for m in range(1, n_max + 1):
        b.append(-sum(math.comb(m + 1, k) * b[k] for k in range(m)) / (m + 1))
    return tuple(float(v) for v in b)


def _zeta_tail_coefficients(m=13):
    """B_2j / (2j)! for j = 1..m: the Euler-Maclaurin correction terms."""
    b = bernoulli(2 * m)
    return tuple(b[2 * j] / math.factorial(2 * j) for j in range(1, m + 1))


_EM = _zeta_tail_coefficients()


def hurwitz_zeta(s, q):
    """zeta(s, q) = sum_{k>=0} (q + k)^-s for s > 1, as torch's (Cephes) conventions: inf at s == 1 and at q a
    non-positive integer, NaN for s < 1, for negative non-integer q with non-integer s, and for infinite s or q.

    The first terms are summed directly until q + N >= max(12, s), then the Euler-Maclaurin formula gives the
    rest: a^(1-s)/(s-1) + a^-s/2 + sum_j B_2j/(2j)! s(s+1)..(s+2j-2) a^(1-s-2j), a = q + N. With a that large
    the correction terms fall by (s + 2j)^2 / (2 pi a)^2 each, so 13 of them reach double precision.
    A direct sum whose terms drop below 1e-18 of the total stops early and skips the correction.
    """
    s, q = np.broadcast_arrays(np.asarray(s, np.float64), np.asarray(q, np.float64))
    s, q = s.ravel(), q.ravel()
    out = np.full(s.shape, np.nan)
    ok = (s > 1) & np.isfinite(s) & np.isfinite(q)
    pole = (s == 1) | ((q <= 0) & (q == np.floor(q)) & ~np.isnan(s) & (s >= 1))
    ok &= ~pole & ~((q < 0) & (s != np.floor(s)))
    out[pole] = np.inf
    if np.any(ok):
        out[ok] = _zeta_em(s[ok], q[ok])
    return out


def _zeta_em(s, q):
    target = np.maximum(12.0, s)
    n_terms = np.maximum(0, np.ceil(target - q)).astype(np.int64)
    total = np.zeros(s.shape)
    done = np.zeros(s.shape, bool)
    for k in range(int(n_terms.max(initial=0))):
        act = (k < n_terms) & ~done
        if not act.any():
            break
        term = np.power(q[act] + k, -s[act])
        total[act] += term
        done[act] |= np.abs(term) <= 1e-18 * np.abs(total[act])
    todo = ~done
    if np.any(todo):
        ss, a = s[todo], q[todo] + n_terms[todo]
        tail = np.power(a, 1.0 - ss) / (ss - 1.0) + 0.5 * np.power(a, -ss)
        rising = ss.copy()                       # s (s+1) ... (s + 2j - 2)
        apow = np.power(a, -ss - 1.0)            # a^(1 - s - 2j)
        inv_a2 = 1.0 / (a * a)
        for j, c in enumerate(_EM, start=1):
            tail += c * rising * apow
            rising = rising * (ss + 2 * j - 1) * (ss + 2 * j)
            apow = apow * inv_a2
        total[todo] += tail
    return total


# --- dtypes ------------------------------------------------------------------------------------------------
def float_input(x, kernel):
    """A special function's input array: complex refused as torch's kernels do, integers -> default float."""
    if x.dtype.kind == "c":
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_legacy(x.dtype)}\'')
    if x.dtype.kind not in "f":
        x = x.astype(get_default_dtype().np)
    return x


def in_float64(fn, x):
    """``fn`` evaluated in float64 on ``x``'s values, returned in ``x``'s dtype."""
    return np.asarray(fn(np.asarray(x, np.float64)), np.float64).astype(x.dtype, copy=False)


def binary_inputs(a, b, kernel):
    """Two operands (arrays or numbers) promoted as torch promotes them (integers -> the default float dtype)."""
    d = _result(a, b, floating=True)
    if d.kind == "c":
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_legacy(d)}\'')
    return _cast_all((a, b), d) + [d]


# --- Primitive factories -------------------------------------------------------------------------------------
def special_unary(name, fn, backward=None, node_name=None, kernel=None, save="input"):
    """A one-input special function as a Primitive. ``fn`` maps float64 arrays; ``backward(grad, x, result)``
    is written in tapegrad ops (``None``: torch gives this function no derivative, its output never requires
    grad). ``save``: "input", "result" or "both"."""
    kernel = kernel or f"{name.lower()}_cpu"

    def forward(ctx, x):
        x = float_input(x, kernel)
        out = in_float64(fn, x)
        if backward is None:
            ctx.mark_non_differentiable(out)
        elif save == "input":
            ctx.save_inputs(0)
        elif save == "result":
            ctx.save_result()
        else:
            ctx.save_result(0)
        return out

    def bwd(ctx, grad):
        if save == "input":
            return backward(grad, ctx.saved_tensors[0], None)
        if save == "result":
            return backward(grad, None, ctx.saved_tensors[0])
        r, x = ctx.saved_tensors
        return backward(grad, x, r)

    return type(name, (Primitive,), {"forward": staticmethod(forward), "backward": staticmethod(bwd),
                                     "node_name": node_name or f"{name}Backward0", "__doc__": f"{name} op"})


def not_implemented(what):
    """torch's error for a derivative it does not have."""
    return RuntimeError(f"the derivative for '{what}' is not implemented.")


def tensor_arg(x):
    return x if isinstance(x, Tensor) else Tensor._make(np.asarray(x))
