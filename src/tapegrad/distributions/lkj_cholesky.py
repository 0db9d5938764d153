"""The LKJ distribution over lower Cholesky factors L of correlation matrices (Lewandowski, Kurowicka & Joe,
2009): the correlation matrix L L^T has density proportional to det(L L^T)^(concentration - 1), so
concentration 1 is uniform over correlation matrices.

The density of L itself carries the Jacobian of L -> L L^T, prod_i L_ii^(D - i), so that
log p(L) = sum_{i=2..D} (2 (eta - 1) + D - i) log L_ii - log of the normalizer (LKJ's paper, p. 1999).
Draws use the onion method (the paper's section 3.2) for the Cholesky factor directly: row k of L (k >= 1) is
sqrt(y_k) times a uniform direction in its first k coordinates, y_k ~ Beta(k/2, eta + (D - 1)/2 - k/2), and the
diagonal entry makes the row a unit vector; all rows are drawn at once.
"""

from __future__ import annotations

import math

import tapegrad
from tapegrad.tensor import Size

from . import constraints
from .beta import Beta
from .distribution import Distribution
from .utils import _standard_normal, broadcast_all

__all__ = ["LKJCholesky"]


class LKJCholesky(Distribution):
    """LKJCholesky(dim, concentration=1.0): lower Cholesky factors of dim x dim correlation matrices.

    >>> LKJCholesky(2, 1.0).log_prob(tapegrad.eye(2))
    tensor(-0.6931)
    """

    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim, concentration=1.0, validate_args=None):
        if dim < 2:
            raise ValueError(f"Expected dim to be an integer greater than or equal to 2. Found dim={dim}.")
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        batch_shape = self.concentration.size()
        event_shape = Size((dim, dim))
        # the onion method's Beta draws, one per row (row 0's is unused): row k's squared off-diagonal norm is
        # Beta(k/2, eta + (D - 1)/2 - k/2), so that each L_k0 = r_k0 has E[r^2] = 1/(2 eta + D - 1) as LKJ's
        # marginals. (torch 2.13 uses Beta(k - 1/2, ...) for k >= 2, whose draws have too large correlations.)
        marginal_conc = self.concentration + 0.5 * (self.dim - 2)
        offset = 0.5 * tapegrad.arange(self.dim - 1, dtype=self.concentration.dtype)
        offset = tapegrad.cat([offset.new_zeros((1,)), offset])
        # (every concentration here is >= eta: a bad eta is reported as LKJCholesky's own parameter below, where
        # torch's message names this internal Beta's)
        self._beta = Beta(offset + 0.5, marginal_conc.unsqueeze(-1) - offset, validate_args=False)
        super().__init__(batch_shape, event_shape, validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LKJCholesky, _instance)
        batch_shape = Size(batch_shape)
        new.dim = self.dim
        new.concentration = self.concentration.expand(batch_shape)
        new._beta = self._beta.expand(Size(tuple(batch_shape) + (self.dim,)))
        super(LKJCholesky, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def sample(self, sample_shape=Size()):
        with tapegrad.no_grad():
            y = self._beta.sample(sample_shape).unsqueeze(-1)
            u_normal = _standard_normal(self._extended_shape(sample_shape), y.dtype).tril(-1)
            u_hypersphere = u_normal / u_normal.norm(dim=-1, keepdim=True)
            u_hypersphere[..., 0, :] = 0.0          # (row 0 has no free coordinates: 0/0 above)
            w = tapegrad.sqrt(y) * u_hypersphere
            eps = tapegrad.finfo(w.dtype).tiny       # (keeps the diagonal positive where rounding reaches 1)
            diag_elems = tapegrad.clamp(1 - tapegrad.sum(w ** 2, dim=-1), min=eps).sqrt()
            return w + tapegrad.diag_embed(diag_elems)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        diag_elems = value.diagonal(dim1=-1, dim2=-2)[..., 1:]
        order = tapegrad.arange(2, self.dim + 1)
        order = 2 * (self.concentration - 1).unsqueeze(-1) + self.dim - order
        unnormalized_log_pdf = tapegrad.sum(order * diag_elems.log(), dim=-1)
        # the normalizer: pi^((D-1)/2) Gamma_{D-1}(alpha - 1/2) / Gamma(alpha)^(D-1), alpha = eta + (D-1)/2 (the
        # multivariate gamma's own pi factor is pi^((D-1)(D-2)/4), hence the extra (D - 1)/2 log pi)
        dm1 = self.dim - 1
        alpha = self.concentration + 0.5 * dm1
        denominator = tapegrad.lgamma(alpha) * dm1
        numerator = tapegrad.mvlgamma(alpha - 0.5, dm1)
        pi_constant = 0.5 * dm1 * math.log(math.pi)
        return unnormalized_log_pdf - (pi_constant + numerator - denominator)
