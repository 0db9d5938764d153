"""``ExponentialFamily``: distributions p(x) = h(x) exp(<theta, t(x)> - F(theta)); their entropy and their KL
divergence to each other come from the log-normalizer F by automatic differentiation (Bregman divergence)."""

from __future__ import annotations

import tapegrad

from .distribution import Distribution

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):
    """Subclasses give ``_natural_params``, ``_log_normalizer(*params)`` and ``_mean_carrier_measure``."""

    @property
    def _natural_params(self):
        raise NotImplementedError

    def _log_normalizer(self, *natural_params):
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self):
        raise NotImplementedError

    def entropy(self):
        """F(theta) - <theta, grad F(theta)> - E[log h(x)]."""
        result = -self._mean_carrier_measure
        nparams = [p.detach().requires_grad_() for p in self._natural_params]
        lg_normal = self._log_normalizer(*nparams)
        gradients = tapegrad.autograd.grad(lg_normal.sum(), nparams, create_graph=True)
        result = result + lg_normal
        for p, g in zip(nparams, gradients):
            result = result - (p * g).reshape(tuple(self._batch_shape) + (-1,)).sum(-1)
        return result
