"""The Wishart distribution W(df, Sigma) over positive definite p x p matrices: the law of X X^T for df columns
X_k ~ N(0, Sigma) (for integer df), with density
|S|^((df - p - 1)/2) exp(-tr(Sigma^-1 S) / 2) / (2^(df p / 2) |Sigma|^(df / 2) Gamma_p(df / 2)).

Sigma is given as ``covariance_matrix``, ``precision_matrix`` (its inverse) or ``scale_tril`` (its lower
Cholesky factor L; everything is computed from L). Draws use the Bartlett decomposition: S = (L A)(L A)^T with
A lower triangular, A_ii = sqrt(chi2(df - i)) and A_ij ~ N(0, 1) below the diagonal; the chi-square draws are
reparameterized (implicitly, through the gamma's), so ``rsample`` is differentiable in df and in Sigma.
"""

from __future__ import annotations

import math
import warnings
from numbers import Number

import tapegrad
from tapegrad.tensor import Size

from . import constraints
from .chi2 import Chi2
from .exp_family import ExponentialFamily
from .multivariate_normal import _precision_to_scale_tril
from .utils import _standard_normal, lazy_property, vec_to_tril_matrix

__all__ = ["Wishart"]

_log_2 = math.log(2)


def _mvdigamma(x, p):
    """The multivariate digamma function: sum_{i<p} digamma(x - i/2)."""
    if not bool(x.gt((p - 1) / 2).all()):
        raise AssertionError("Wrong domain for multivariate digamma function.")
    return tapegrad.digamma(x.unsqueeze(-1) - tapegrad.arange(p, dtype=x.dtype).div(2).expand(x.shape + (-1,))).sum(-1)


def _clamp_above_eps(x):
    return x.clamp(min=tapegrad.finfo(x.dtype).eps)


class Wishart(ExponentialFamily):
    """Wishart(df, covariance_matrix= | precision_matrix= | scale_tril=) (exactly one of the three).

    >>> Wishart(tapegrad.tensor(3.0), covariance_matrix=tapegrad.eye(2)).mean
    tensor([[3., 0.],
            [0., 3.]])
    """

    support = constraints.positive_definite
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def arg_constraints(self):
        return {"covariance_matrix": constraints.positive_definite,
                "precision_matrix": constraints.positive_definite,
                "scale_tril": constraints.lower_cholesky,
                "df": constraints.greater_than(self.event_shape[-1] - 1)}

    def __init__(self, df, covariance_matrix=None, precision_matrix=None, scale_tril=None, validate_args=None):
        if (covariance_matrix is not None) + (scale_tril is not None) + (precision_matrix is not None) != 1:
            raise AssertionError("Exactly one of covariance_matrix or precision_matrix or scale_tril may be "
                                 "specified.")
        param = next(p for p in (covariance_matrix, precision_matrix, scale_tril) if p is not None)
        if param.dim() < 2:
            raise ValueError("scale_tril must be at least two-dimensional, with optional leading batch dimensions")
        if isinstance(df, Number):
            batch_shape = Size(param.shape[:-2])
            self.df = tapegrad.tensor(df, dtype=param.dtype)
        else:
            batch_shape = tapegrad.broadcast_shapes(param.shape[:-2], df.shape)
            self.df = df.expand(batch_shape)
        event_shape = param.shape[-2:]
        if bool(self.df.le(event_shape[-1] - 1).any()):
            raise ValueError(f"Value of df={df} expected to be greater than ndim - 1 = {event_shape[-1] - 1}.")
        full_shape = tuple(batch_shape) + (-1, -1)
        if scale_tril is not None:
            self.scale_tril = param.expand(full_shape)
        elif covariance_matrix is not None:
            self.covariance_matrix = param.expand(full_shape)
        else:
            self.precision_matrix = param.expand(full_shape)
        if bool(self.df.lt(event_shape[-1]).any()):
            warnings.warn("Low df values detected. Singular samples are highly likely to occur for ndim - 1 < df "
                          "< ndim.", stacklevel=2)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        self._batch_dims = [-(x + 1) for x in range(len(self._batch_shape))]
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = tapegrad.linalg.cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(precision_matrix)
        self._dist_chi2 = self._bartlett_chi2(batch_shape)

    def _bartlett_chi2(self, batch_shape):
        """Chi2(df - i) for i = 0..p-1: the squares of the Bartlett factor's diagonal."""
        p = self._event_shape[-1]
        steps = tapegrad.arange(p, dtype=self._unbroadcasted_scale_tril.dtype).expand(tuple(batch_shape) + (-1,))
        return Chi2(df=self.df.unsqueeze(-1) - steps)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Wishart, _instance)
        batch_shape = Size(batch_shape)
        cov_shape = tuple(batch_shape) + tuple(self.event_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril.expand(cov_shape)
        new.df = self.df.expand(batch_shape)
        new._batch_dims = [-(x + 1) for x in range(len(batch_shape))]
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, getattr(self, name).expand(cov_shape))
        super(Wishart, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._dist_chi2 = new._bartlett_chi2(batch_shape)
        new._validate_args = self._validate_args
        return new

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(tuple(self._batch_shape) + tuple(self._event_shape))

    @lazy_property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril
        return (L @ L.transpose(-2, -1)).expand(tuple(self._batch_shape) + tuple(self._event_shape))

    @lazy_property
    def precision_matrix(self):
        identity = tapegrad.eye(self._event_shape[-1], dtype=self._unbroadcasted_scale_tril.dtype)
        return tapegrad.cholesky_solve(identity, self._unbroadcasted_scale_tril).expand(
            tuple(self._batch_shape) + tuple(self._event_shape))

    def _df_matrix(self, value):
        """df (or ``value``, of df's shape) as batch x 1 x 1, to scale matrices. (A number df stays 0-dim, as
        torch's; torch's view of it then fails for a batch of matrices: here it is broadcast.)"""
        return value.expand(self._batch_shape).reshape(tuple(self._batch_shape) + (1, 1))

    @property
    def mean(self):
        return self._df_matrix(self.df) * self.covariance_matrix

    @property
    def mode(self):
        factor = self.df - self.covariance_matrix.shape[-1] - 1
        factor = tapegrad.where(factor <= 0, math.nan, factor)      # (no mode for df <= p + 1)
        return self._df_matrix(factor) * self.covariance_matrix

    @property
    def variance(self):
        V = self.covariance_matrix
        diag_V = V.diagonal(dim1=-2, dim2=-1)
        return self._df_matrix(self.df) * (V.pow(2) + tapegrad.einsum("...i,...j->...ij", diag_V, diag_V))

    def _bartlett_sampling(self, sample_shape=Size()):
        p = self._event_shape[-1]
        diagonal = _clamp_above_eps(self._dist_chi2.rsample(sample_shape).sqrt())
        below = _standard_normal(tuple(sample_shape) + tuple(self._batch_shape) + (p * (p - 1) // 2,),
                                 diagonal.dtype)
        noise = tapegrad.diag_embed(diagonal) + vec_to_tril_matrix(below, diag=-1)
        chol = self._unbroadcasted_scale_tril @ noise
        return chol @ chol.transpose(-2, -1)

    def _singular(self, sample):
        """Per entry of the sample shape: is any of its batch's matrices not positive definite?"""
        singular = ~self.support.check(sample)
        if self._batch_shape:
            singular = singular.amax(self._batch_dims)
        return singular

    def rsample(self, sample_shape=Size(), max_try_correction=None):
        """Bartlett draws; draws that came out singular (in floating point; likely for df < p) are drawn again,
        up to ``max_try_correction`` times (default 10), with a warning. Some may still be singular after that
        (their ``log_prob`` is -inf): then raise ``df`` or ``max_try_correction``."""
        if max_try_correction is None:
            max_try_correction = 10
        sample_shape = Size(sample_shape)
        sample = self._bartlett_sampling(sample_shape)
        is_singular = self._singular(sample)
        if bool(is_singular.any()):
            warnings.warn("Singular sample detected.", stacklevel=2)
            for _ in range(max_try_correction):
                sample_new = self._bartlett_sampling(Size((int(is_singular.sum()),)))
                sample[is_singular] = sample_new
                is_singular[is_singular.clone()] = self._singular(sample_new)
                if not bool(is_singular.any()):
                    break
        return sample

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        nu = self.df
        p = self._event_shape[-1]
        half_log_det = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        trace = tapegrad.cholesky_solve(value, self._unbroadcasted_scale_tril).diagonal(dim1=-2, dim2=-1).sum(dim=-1)
        return (-nu * (p * _log_2 / 2 + half_log_det) - tapegrad.mvlgamma(nu / 2, p=p)
                + (nu - p - 1) / 2 * tapegrad.linalg.slogdet(value).logabsdet - trace / 2)

    def entropy(self):
        nu = self.df
        p = self._event_shape[-1]
        half_log_det = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        return ((p + 1) * (p * _log_2 / 2 + half_log_det) + tapegrad.mvlgamma(nu / 2, p=p)
                - (nu - p - 1) / 2 * _mvdigamma(nu / 2, p=p) + nu * p / 2)

    @property
    def _natural_params(self):
        p = self._event_shape[-1]
        return -self.precision_matrix / 2, (self.df - p - 1) / 2

    def _log_normalizer(self, x, y):
        p = self._event_shape[-1]
        return ((y + (p + 1) / 2) * (-tapegrad.linalg.slogdet(-2 * x).logabsdet + _log_2 * p)
                + tapegrad.mvlgamma(y + (p + 1) / 2, p=p))
