"""Special functions (torch.special and their top-level torch names), loaded on first use.

- ``_common``: float64 piecewise evaluation, Bernoulli numbers, Hurwitz's zeta, the Primitive factories;
- ``gamma``: lgamma, digamma, polygamma, mvlgamma, zeta;
- ``incomplete``: igamma / igammac (gammainc / gammaincc);
- ``bessel``: i0, i0e, i1, i1e, the modified Bessel K, J and Y functions, spherical j0, airy_ai;
- ``misc``: erfcx, ndtr, ndtri, log_ndtr, entr, sinc, xlog1py;
- ``polynomials``: Chebyshev, Hermite, Laguerre and Legendre polynomials.

``import tapegrad`` does not load this package: ``tapegrad.lgamma`` and the Tensor methods (``x.lgamma()``...)
load it on first use (see ``tapegrad.__getattr__`` and ``_LAZY_METHODS`` there).
"""

from .gamma import *  # noqa: F403
from .incomplete import *  # noqa: F403
from .bessel import *  # noqa: F403
from .misc import *  # noqa: F403
from .polynomials import *  # noqa: F403

# the names torch has at top level (tapegrad.<name>)
__all__ = ["lgamma", "digamma", "polygamma", "mvlgamma", "i0", "i0_", "igamma", "igammac", "sinc", "sinc_"]
