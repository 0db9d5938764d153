"""``tapegrad.special``: torch.special's functions, with gradients where torch has them (loaded on first use).

The new functions live in ``tapegrad.ops.special`` (NumPy only: series, continued fractions, asymptotic
expansions and quadratures, see each module's docstring); the rest are torch.special's aliases of ops tapegrad
already has (erf, expit = sigmoid, logsumexp, softmax...).
"""

from .ops.elementwise import erf, erfc, erfinv, exp2, expm1, log1p, logit, round, xlogy  # noqa: A004
from .ops.elementwise import sigmoid as expit
from .ops.nn_ops import log_softmax as _log_softmax
from .ops.nn_ops import softmax as _softmax
from .ops.reduce import logsumexp
from .ops.special import (airy_ai, bessel_j0, bessel_j1, bessel_y0, bessel_y1, chebyshev_polynomial_t,
                          chebyshev_polynomial_u, chebyshev_polynomial_v, chebyshev_polynomial_w, digamma, entr,
                          erfcx, gammainc, gammaincc, gammaln, hermite_polynomial_h, hermite_polynomial_he, i0, i0e,
                          i1, i1e, laguerre_polynomial_l, legendre_polynomial_p, log_ndtr, modified_bessel_i0,
                          modified_bessel_i1, modified_bessel_k0, modified_bessel_k1, multigammaln, ndtr, ndtri,
                          polygamma, psi, scaled_modified_bessel_k0, scaled_modified_bessel_k1,
                          shifted_chebyshev_polynomial_t, shifted_chebyshev_polynomial_u,
                          shifted_chebyshev_polynomial_v, shifted_chebyshev_polynomial_w, sinc,
                          spherical_bessel_j0, xlog1py, zeta)

__all__ = ["airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "chebyshev_polynomial_t",
           "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w", "digamma", "entr", "erf",
           "erfc", "erfcx", "erfinv", "exp2", "expit", "expm1", "gammainc", "gammaincc", "gammaln",
           "hermite_polynomial_h", "hermite_polynomial_he", "i0", "i0e", "i1", "i1e", "laguerre_polynomial_l",
           "legendre_polynomial_p", "log1p", "log_ndtr", "log_softmax", "logit", "logsumexp", "modified_bessel_i0",
           "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1", "multigammaln", "ndtr", "ndtri",
           "polygamma", "psi", "round", "scaled_modified_bessel_k0", "scaled_modified_bessel_k1",
           "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
           "shifted_chebyshev_polynomial_w", "sinc", "softmax", "spherical_bessel_j0", "xlog1py", "xlogy", "zeta"]


def softmax(input, dim, *, dtype=None):  # noqa: A002
    """``softmax`` along ``dim`` (torch.special's signature: ``dim`` required)."""
    return _softmax(input, dim, dtype=dtype)


def log_softmax(input, dim, *, dtype=None):  # noqa: A002
    """``log_softmax`` along ``dim`` (torch.special's signature: ``dim`` required)."""
    return _log_softmax(input, dim, dtype=dtype)


from . import _aliases  # noqa: E402
_aliases.install(globals(), "special")   # torch.special's functions take axis=/keepdims=/x=... too (_aliases.py)
