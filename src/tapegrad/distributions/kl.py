"""``kl_divergence(p, q)`` and ``register_kl(type_p, type_q)``: closed forms of KL(p || q) = E_p[log p - log q]
for pairs of distribution types, dispatched on both types (the most specific registered pair wins; when two
pairs are equally specific in different ways, a RuntimeWarning names the ambiguity, as torch's).

Where q's support does not cover p's, the divergence is +inf. Pairs of the same exponential family without a
closed form here use the Bregman divergence of the log-normalizer, by automatic differentiation.
"""

from __future__ import annotations

import math
import warnings
from functools import total_ordering

import tapegrad

from .bernoulli import Bernoulli
from .beta import Beta
from .binomial import Binomial
from .categorical import Categorical
from .cauchy import Cauchy
from .continuous_bernoulli import ContinuousBernoulli
from .dirichlet import Dirichlet
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .exponential import Exponential
from .gamma import Gamma
from .geometric import Geometric
from .gumbel import Gumbel
from .half_normal import HalfNormal
from .independent import Independent
from .laplace import Laplace
from .lowrank_multivariate_normal import LowRankMultivariateNormal
from .multivariate_normal import MultivariateNormal, _batch_mahalanobis
from .normal import Normal
from .one_hot_categorical import OneHotCategorical
from .pareto import Pareto
from .poisson import Poisson
from .transformed_distribution import TransformedDistribution
from .uniform import Uniform
from .utils import _sum_rightmost, euler_constant

__all__ = ["register_kl", "kl_divergence"]

_KL_REGISTRY = {}     # (type_p, type_q) -> kl function
_KL_MEMOIZE = {}      # the dispatch's answer per exact pair of types


def register_kl(type_p, type_q):
    """Decorator: ``@register_kl(Normal, Normal) def kl(p, q): ...`` registers KL(p || q) for the pair."""
    if not isinstance(type_p, type) or not issubclass(type_p, Distribution):
        raise TypeError(f"Expected type_p to be a Distribution subclass but got {type_p}")
    if not isinstance(type_q, type) or not issubclass(type_q, Distribution):
        raise TypeError(f"Expected type_q to be a Distribution subclass but got {type_q}")

    def decorator(fun):
        _KL_REGISTRY[type_p, type_q] = fun
        _KL_MEMOIZE.clear()
        return fun
    return decorator


@total_ordering
class _Match:
    """A registered pair, ordered by specificity: (A, B) <= (C, D) when A is a subclass of C, B of D on ties."""

    __slots__ = ["types"]

    def __init__(self, *types):
        self.types = types

    def __eq__(self, other):
        return self.types == other.types

    def __le__(self, other):
        for x, y in zip(self.types, other.types):
            if not issubclass(x, y):
                return False
            if x is not y:
                break
        return True


def _dispatch_kl(type_p, type_q):
    matches = [(sp, sq) for sp, sq in _KL_REGISTRY if issubclass(type_p, sp) and issubclass(type_q, sq)]
    if not matches:
        return NotImplemented
    left_p, left_q = min(_Match(*m) for m in matches).types
    right_q, right_p = min(_Match(*reversed(m)) for m in matches).types
    left_fun = _KL_REGISTRY[left_p, left_q]
    right_fun = _KL_REGISTRY[right_p, right_q]
    if left_fun is not right_fun:
        warnings.warn(f"Ambiguous kl_divergence({type_p.__name__}, {type_q.__name__}). Please register_kl("
                      f"{left_p.__name__}, {right_q.__name__})", RuntimeWarning, stacklevel=3)
    return left_fun


def kl_divergence(p, q):
    """KL(p || q), batched over the distributions' batch shapes.

    >>> kl_divergence(Normal(0.0, 1.0), Normal(1.0, 1.0))
    tensor(0.5000)
    """
    try:
        fun = _KL_MEMOIZE[type(p), type(q)]
    except KeyError:
        fun = _dispatch_kl(type(p), type(q))
        _KL_MEMOIZE[type(p), type(q)] = fun
    if fun is NotImplemented:
        raise NotImplementedError(f"No KL(p || q) is implemented for p type {p.__class__.__name__} and q type "
                                  f"{q.__class__.__name__}")
    return fun(p, q)


def _infinite_like(t):
    return tapegrad.full_like(t, math.inf)


def _x_log_x(t):
    return t * t.log()


def _batch_trace_XXT(bmat):
    """trace(X X^T) over the batch: the sum of squares of each matrix."""
    return bmat.pow(2).reshape(bmat.shape[:-2] + (-1,)).sum(-1)


def _softplus(x):
    return tapegrad.nn.functional.softplus(x)


# --- pairs of the same family -------------------------------------------------------------------------------
@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p, q):
    t1 = p.probs * (_softplus(-q.logits) - _softplus(-p.logits))
    t1[q.probs == 0] = math.inf
    t1[p.probs == 0] = 0
    t2 = (1 - p.probs) * (_softplus(q.logits) - _softplus(p.logits))
    t2[q.probs == 1] = math.inf
    t2[p.probs == 1] = 0
    return t1 + t2


@register_kl(Beta, Beta)
def _kl_beta_beta(p, q):
    sum_p = p.concentration1 + p.concentration0
    sum_q = q.concentration1 + q.concentration0
    t1 = q.concentration1.lgamma() + q.concentration0.lgamma() + sum_p.lgamma()
    t2 = p.concentration1.lgamma() + p.concentration0.lgamma() + sum_q.lgamma()
    t3 = (p.concentration1 - q.concentration1) * tapegrad.digamma(p.concentration1)
    t4 = (p.concentration0 - q.concentration0) * tapegrad.digamma(p.concentration0)
    t5 = (sum_q - sum_p) * tapegrad.digamma(sum_p)
    return t1 - t2 + t3 + t4 + t5


@register_kl(Binomial, Binomial)
def _kl_binomial_binomial(p, q):
    if bool((p.total_count < q.total_count).any()):
        raise NotImplementedError("KL between Binomials where q.total_count > p.total_count is not implemented")
    kl = p.total_count * (p.probs * (p.logits - q.logits) + (-p.probs).log1p() - (-q.probs).log1p())
    inf_idxs = p.total_count > q.total_count
    kl[inf_idxs] = math.inf
    return kl


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p, q):
    t = p.probs * (p.logits - q.logits)
    t[(q.probs == 0).expand_as(t)] = math.inf
    t[(p.probs == 0).expand_as(t)] = 0
    return t.sum(-1)


@register_kl(Cauchy, Cauchy)
def _kl_cauchy_cauchy(p, q):
    t1 = ((p.scale + q.scale).pow(2) + (p.loc - q.loc).pow(2)).log()
    t2 = (4 * p.scale * q.scale).log()
    return t1 - t2


@register_kl(ContinuousBernoulli, ContinuousBernoulli)
def _kl_continuous_bernoulli_continuous_bernoulli(p, q):
    t1 = p.mean * (p.logits - q.logits)
    t2 = p._cont_bern_log_norm() + tapegrad.log1p(-p.probs)
    t3 = -q._cont_bern_log_norm() - tapegrad.log1p(-q.probs)
    return t1 + t2 + t3


@register_kl(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(p, q):
    sum_p = p.concentration.sum(-1)
    sum_q = q.concentration.sum(-1)
    t1 = sum_p.lgamma() - sum_q.lgamma()
    t2 = (p.concentration.lgamma() - q.concentration.lgamma()).sum(-1)
    t3 = p.concentration - q.concentration
    t4 = p.concentration.digamma() - sum_p.digamma().unsqueeze(-1)
    return t1 - t2 + (t3 * t4).sum(-1)


@register_kl(Exponential, Exponential)
def _kl_exponential_exponential(p, q):
    rate_ratio = q.rate / p.rate
    return -rate_ratio.log() + rate_ratio - 1


@register_kl(ExponentialFamily, ExponentialFamily)
def _kl_expfamily_expfamily(p, q):
    if type(p) is not type(q):
        raise NotImplementedError("The cross KL-divergence between different exponential families cannot be "
                                  "computed using Bregman divergences")
    p_nparams = [n.detach().requires_grad_() for n in p._natural_params]
    q_nparams = q._natural_params
    lg_normal = p._log_normalizer(*p_nparams)
    gradients = tapegrad.autograd.grad(lg_normal.sum(), p_nparams, create_graph=True)
    result = q._log_normalizer(*q_nparams) - lg_normal
    for pnp, qnp, g in zip(p_nparams, q_nparams, gradients):
        result = result - _sum_rightmost((qnp - pnp) * g, len(q.event_shape))
    return result


@register_kl(Gamma, Gamma)
def _kl_gamma_gamma(p, q):
    t1 = q.concentration * tapegrad.log(p.rate / q.rate)
    t2 = tapegrad.lgamma(q.concentration) - tapegrad.lgamma(p.concentration)
    t3 = (p.concentration - q.concentration) * tapegrad.digamma(p.concentration)
    t4 = (q.rate - p.rate) * (p.concentration / p.rate)
    return t1 + t2 + t3 + t4


@register_kl(Gumbel, Gumbel)
def _kl_gumbel_gumbel(p, q):
    ct1 = p.scale / q.scale
    ct2 = q.loc / q.scale
    ct3 = p.loc / q.scale
    t1 = -ct1.log() - ct2 + ct3
    t2 = ct1 * euler_constant
    t3 = tapegrad.exp(ct2 + (1 + ct1).lgamma() - ct3)
    return t1 + t2 + t3 - (1 + euler_constant)


@register_kl(Geometric, Geometric)
def _kl_geometric_geometric(p, q):
    return -p.entropy() - tapegrad.log1p(-q.probs) / p.probs - q.logits


@register_kl(HalfNormal, HalfNormal)
def _kl_halfnormal_halfnormal(p, q):
    return _kl_normal_normal(p.base_dist, q.base_dist)


@register_kl(Laplace, Laplace)
def _kl_laplace_laplace(p, q):
    scale_ratio = p.scale / q.scale
    loc_abs_diff = (p.loc - q.loc).abs()
    return -scale_ratio.log() + loc_abs_diff / q.scale + scale_ratio * tapegrad.exp(-loc_abs_diff / p.scale) - 1


def _as_full_mvn(d):
    return MultivariateNormal(d.loc, covariance_matrix=d.covariance_matrix, validate_args=False)


@register_kl(MultivariateNormal, MultivariateNormal)
def _kl_multivariatenormal_multivariatenormal(p, q):
    if tuple(p.event_shape) != tuple(q.event_shape):
        raise ValueError("KL-divergence between two Multivariate Normals with different event shapes cannot be "
                         "computed")
    pl, ql = p._unbroadcasted_scale_tril, q._unbroadcasted_scale_tril
    half_term1 = ql.diagonal(dim1=-2, dim2=-1).log().sum(-1) - pl.diagonal(dim1=-2, dim2=-1).log().sum(-1)
    batch = tuple(tapegrad.broadcast_shapes(ql.shape[:-2], pl.shape[:-2]))
    n = p.event_shape[0]
    q_tril = ql.expand(batch + (n, n))
    p_tril = pl.expand(batch + (n, n))
    term2 = _batch_trace_XXT(tapegrad.linalg.solve_triangular(q_tril, p_tril, upper=False))
    term3 = _batch_mahalanobis(ql, q.loc - p.loc)
    return half_term1 + 0.5 * (term2 + term3 - n)


def _lowrank_event_check(p, q):
    if tuple(p.event_shape) != tuple(q.event_shape):
        raise ValueError("KL-divergence between two (Low Rank) Multivariate Normals with different event shapes "
                         "cannot be computed")


@register_kl(LowRankMultivariateNormal, LowRankMultivariateNormal)
def _kl_lowrankmultivariatenormal_lowrankmultivariatenormal(p, q):
    _lowrank_event_check(p, q)
    return _kl_multivariatenormal_multivariatenormal(_as_full_mvn(p), _as_full_mvn(q))


@register_kl(LowRankMultivariateNormal, MultivariateNormal)
def _kl_lowrankmultivariatenormal_multivariatenormal(p, q):
    _lowrank_event_check(p, q)
    return _kl_multivariatenormal_multivariatenormal(_as_full_mvn(p), q)


@register_kl(MultivariateNormal, LowRankMultivariateNormal)
def _kl_multivariatenormal_lowrankmultivariatenormal(p, q):
    _lowrank_event_check(p, q)
    return _kl_multivariatenormal_multivariatenormal(p, _as_full_mvn(q))


@register_kl(Normal, Normal)
def _kl_normal_normal(p, q):
    var_ratio = (p.scale / q.scale).pow(2)
    t1 = ((p.loc - q.loc) / q.scale).pow(2)
    return 0.5 * (var_ratio + t1 - 1 - var_ratio.log())


@register_kl(OneHotCategorical, OneHotCategorical)
def _kl_onehotcategorical_onehotcategorical(p, q):
    return _kl_categorical_categorical(p._categorical, q._categorical)


@register_kl(Pareto, Pareto)
def _kl_pareto_pareto(p, q):
    scale_ratio = p.scale / q.scale
    alpha_ratio = q.alpha / p.alpha
    result = q.alpha * scale_ratio.log() - alpha_ratio.log() + alpha_ratio - 1
    result[p.support.lower_bound < q.support.lower_bound] = math.inf
    return result


@register_kl(Poisson, Poisson)
def _kl_poisson_poisson(p, q):
    return p.rate * (p.rate.log() - q.rate.log()) - (p.rate - q.rate)


@register_kl(TransformedDistribution, TransformedDistribution)
def _kl_transformed_transformed(p, q):
    if p.transforms != q.transforms:
        raise NotImplementedError
    if tuple(p.event_shape) != tuple(q.event_shape):
        raise NotImplementedError
    return kl_divergence(p.base_dist, q.base_dist)


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p, q):
    result = ((q.high - q.low) / (p.high - p.low)).log()
    result[(q.low > p.low) | (q.high < p.high)] = math.inf
    return result


@register_kl(Independent, Independent)
def _kl_independent_independent(p, q):
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError
    return _sum_rightmost(kl_divergence(p.base_dist, q.base_dist), p.reinterpreted_batch_ndims)


# --- pairs of different families: -H(p) - E_p[log q] ---------------------------------------------------------
def _normal_cross(p_mean, p_second_moment, q):
    """-E_p[log q] for a normal q, from p's mean and E[x^2]."""
    e_sq = p_second_moment - 2 * q.loc * p_mean + q.loc.pow(2)
    return 0.5 * tapegrad.log(2 * math.pi * q.scale.pow(2)) + e_sq / (2 * q.scale.pow(2))


def _gumbel_cross(p_mean, p_exp_neg, q):
    """-E_p[log q] for a Gumbel q, from E[x] and E[exp(-x / q.scale)]."""
    return q.scale.log() + (p_mean - q.loc) / q.scale + tapegrad.exp(q.loc / q.scale) * p_exp_neg


@register_kl(Bernoulli, Poisson)
def _kl_bernoulli_poisson(p, q):
    return -p.entropy() - (p.probs * q.rate.log() - q.rate)


@register_kl(Beta, Exponential)
def _kl_beta_exponential(p, q):
    return -p.entropy() - q.rate.log() + q.rate * p.mean


@register_kl(Beta, Gamma)
def _kl_beta_gamma(p, q):
    e_log_x = p.concentration1.digamma() - (p.concentration1 + p.concentration0).digamma()
    return (-p.entropy() + q.concentration.lgamma() - q.concentration * q.rate.log()
            - (q.concentration - 1) * e_log_x + q.rate * p.mean)


@register_kl(Beta, Normal)
def _kl_beta_normal(p, q):
    return -p.entropy() + _normal_cross(p.mean, p.mean.pow(2) + p.variance, q)


@register_kl(Beta, Uniform)
def _kl_beta_uniform(p, q):
    result = -p.entropy() + (q.high - q.low).log()
    result[(q.low > p.support.lower_bound) | (q.high < p.support.upper_bound)] = math.inf
    return result


def _cross_entropy_to_continuous_bernoulli(p, q):
    """-E_p[log q(x)] for q continuous Bernoulli: E_p[x] logits_q = E_p[log q(x)] - log(1 - probs_q) - log C_q."""
    return -p.mean * q.logits - tapegrad.log1p(-q.probs) - q._cont_bern_log_norm()


@register_kl(Beta, ContinuousBernoulli)
def _kl_beta_continuous_bernoulli(p, q):
    return -p.entropy() + _cross_entropy_to_continuous_bernoulli(p, q)


@register_kl(ContinuousBernoulli, Exponential)
def _kl_continuous_bernoulli_exponential(p, q):
    return -p.entropy() - tapegrad.log(q.rate) + q.rate * p.mean


@register_kl(ContinuousBernoulli, Normal)
def _kl_continuous_bernoulli_normal(p, q):
    t1 = -p.entropy()
    t2 = 0.5 * (math.log(2.0 * math.pi) + tapegrad.square(q.loc / q.scale)) + tapegrad.log(q.scale)
    t3 = (p.variance + tapegrad.square(p.mean) - 2.0 * q.loc * p.mean) / (2.0 * tapegrad.square(q.scale))
    return t1 + t2 + t3


@register_kl(ContinuousBernoulli, Uniform)
def _kl_continuous_bernoulli_uniform(p, q):
    # (as torch's: +inf unless the uniform lies strictly inside [0, 1] at both ends -- torch's test, kept as is)
    result = -p.entropy() + (q.high - q.low).log()
    outside = (q.low >= p.support.lower_bound) | (q.high <= p.support.upper_bound)
    return tapegrad.where(outside, tapegrad.ones_like(result) * math.inf, result)


@register_kl(Uniform, ContinuousBernoulli)
def _kl_uniform_continuous_bernoulli(p, q):
    result = -p.entropy() + _cross_entropy_to_continuous_bernoulli(p, q)
    outside = (p.high >= q.support.upper_bound) | (p.low <= q.support.lower_bound)
    return tapegrad.where(outside, tapegrad.ones_like(result) * math.inf, result)


@register_kl(Exponential, Gamma)
def _kl_exponential_gamma(p, q):
    ratio = q.rate / p.rate
    return (-q.concentration * tapegrad.log(ratio) + ratio + q.concentration.lgamma()
            + (q.concentration - 1) * euler_constant - 1)


@register_kl(Exponential, Gumbel)
def _kl_exponential_gumbel(p, q):
    s = q.scale
    return -p.entropy() + _gumbel_cross(p.mean, p.rate * s / (p.rate * s + 1), q)


@register_kl(Exponential, Normal)
def _kl_exponential_normal(p, q):
    return -p.entropy() + _normal_cross(p.mean, 2 * p.rate.pow(-2), q)


@register_kl(Gamma, Exponential)
def _kl_gamma_exponential(p, q):
    return -p.entropy() - q.rate.log() + q.rate * p.mean


@register_kl(Gamma, Gumbel)
def _kl_gamma_gumbel(p, q):
    b = p.rate * q.scale
    return -p.entropy() + _gumbel_cross(p.mean, (b / (b + 1)).pow(p.concentration), q)


@register_kl(Gamma, Normal)
def _kl_gamma_normal(p, q):
    return -p.entropy() + _normal_cross(p.mean, p.variance + p.mean.pow(2), q)


@register_kl(Gumbel, Normal)
def _kl_gumbel_normal(p, q):
    return -p.entropy() + _normal_cross(p.mean, p.variance + p.mean.pow(2), q)


@register_kl(Laplace, Normal)
def _kl_laplace_normal(p, q):
    return -p.entropy() + _normal_cross(p.loc, 2 * p.scale.pow(2) + p.loc.pow(2), q)


@register_kl(Normal, Gumbel)
def _kl_normal_gumbel(p, q):
    exp_neg = tapegrad.exp(-p.loc / q.scale + p.scale.pow(2) / (2 * q.scale.pow(2)))
    return -p.entropy() + _gumbel_cross(p.loc, exp_neg, q)


@register_kl(Normal, Laplace)
def _kl_normal_laplace(p, q):
    d = p.loc - q.loc
    e_abs = p.scale * math.sqrt(2 / math.pi) * tapegrad.exp(-d.pow(2) / (2 * p.scale.pow(2))) + \
        d * tapegrad.erf(d / (p.scale * math.sqrt(2)))
    return -p.entropy() + tapegrad.log(2 * q.scale) + e_abs / q.scale


@register_kl(Pareto, Exponential)
def _kl_pareto_exponential(p, q):
    result = -p.entropy() - q.rate.log() + q.rate * p.mean
    result[p.alpha <= 1] = math.inf
    return result


@register_kl(Pareto, Gamma)
def _kl_pareto_gamma(p, q):
    e_log_x = p.scale.log() + p.alpha.reciprocal()
    result = (-p.entropy() - q.concentration * q.rate.log() + q.concentration.lgamma()
              - (q.concentration - 1) * e_log_x + q.rate * p.mean)
    result[p.alpha <= 1] = math.inf
    return result


@register_kl(Pareto, Normal)
def _kl_pareto_normal(p, q):
    second = p.alpha * p.scale.pow(2) / (p.alpha - 2)
    result = -p.entropy() + _normal_cross(p.mean, second, q)
    result[p.alpha <= 2] = math.inf
    return result


@register_kl(Poisson, Bernoulli)
@register_kl(Poisson, Binomial)
def _kl_poisson_infinity(p, q):
    return _infinite_like(p.rate)


def _uniform_e_log(lo, hi):
    """E[log x] for x uniform on [lo, hi] (lo >= 0)."""
    return (tapegrad.xlogy(hi, hi) - tapegrad.xlogy(lo, lo)) / (hi - lo) - 1


@register_kl(Uniform, Beta)
def _kl_uniform_beta(p, q):
    width = p.high - p.low
    e_log_x = _uniform_e_log(p.low, p.high)
    e_log_1mx = _uniform_e_log(1 - p.high, 1 - p.low)
    lbeta = q.concentration1.lgamma() + q.concentration0.lgamma() - (q.concentration1 + q.concentration0).lgamma()
    result = -width.log() + lbeta - (q.concentration1 - 1) * e_log_x - (q.concentration0 - 1) * e_log_1mx
    result[(p.high > q.support.upper_bound) | (p.low < q.support.lower_bound)] = math.inf
    return result


@register_kl(Uniform, Exponential)
def _kl_uniform_exponential(p, q):
    result = -(p.high - p.low).log() - q.rate.log() + q.rate * (p.high + p.low) / 2
    result[p.low < q.support.lower_bound] = math.inf
    return result


@register_kl(Uniform, Gamma)
def _kl_uniform_gamma(p, q):
    e_log_x = _uniform_e_log(p.low, p.high)
    result = (-(p.high - p.low).log() - q.concentration * q.rate.log() + q.concentration.lgamma()
              - (q.concentration - 1) * e_log_x + q.rate * (p.high + p.low) / 2)
    result[p.low < q.support.lower_bound] = math.inf
    return result


@register_kl(Uniform, Gumbel)
def _kl_uniform_gumbel(p, q):
    s = q.scale
    exp_neg = s * (tapegrad.exp(-p.low / s) - tapegrad.exp(-p.high / s)) / (p.high - p.low)
    return -(p.high - p.low).log() + _gumbel_cross((p.high + p.low) / 2, exp_neg, q)


@register_kl(Uniform, Normal)
def _kl_uniform_normal(p, q):
    mean = (p.high + p.low) / 2
    return -(p.high - p.low).log() + _normal_cross(mean, (p.high - p.low).pow(2) / 12 + mean.pow(2), q)


@register_kl(Uniform, Pareto)
def _kl_uniform_pareto(p, q):
    e_log_x = _uniform_e_log(p.low, p.high)
    result = -(p.high - p.low).log() - q.alpha.log() - q.alpha * q.scale.log() + (q.alpha + 1) * e_log_x
    result[p.low < q.support.lower_bound] = math.inf
    return result


# --- q's support misses part of p's: +inf ------------------------------------------------------------------
def _infinity_of(attr):
    def kl(p, q):
        return _infinite_like(getattr(p, attr))
    return kl


for _p, _attr, _qs in ((Beta, "concentration1", (Pareto,)), (ContinuousBernoulli, "probs", (Pareto,)),
                       (Exponential, "rate", (Uniform, Pareto, Beta, ContinuousBernoulli)),
                       (Gamma, "concentration", (Uniform, Pareto, Beta, ContinuousBernoulli)),
                       (Gumbel, "loc", (Uniform, Pareto, Gamma, Exponential, Beta, ContinuousBernoulli)),
                       (Laplace, "loc", (Uniform, Pareto, Gamma, Exponential, Beta, ContinuousBernoulli)),
                       (Normal, "loc", (Uniform, Pareto, Gamma, Exponential, Beta, ContinuousBernoulli)),
                       (Pareto, "scale", (Uniform, Beta, ContinuousBernoulli))):
    for _q in _qs:
        register_kl(_p, _q)(_infinity_of(_attr))
