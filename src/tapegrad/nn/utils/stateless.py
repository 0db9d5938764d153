"""``nn.utils.stateless``: the older home of ``functional_call`` (``tapegrad.func.functional_call`` is the one to
use; this one warns as torch's does). ``tapegrad.func`` loads on first use."""

from __future__ import annotations

import warnings

__all__ = ["functional_call"]


def _reparametrize_module(module, parameters_and_buffers, tie_weights=False, strict=False):
    """A context manager: ``module`` with ``parameters_and_buffers`` swapped in (restored on exit)."""
    from ...func._module import _reparametrize
    return _reparametrize(module, parameters_and_buffers, tie_weights=tie_weights, strict=strict)


def functional_call(module, parameters_and_buffers, args=None, kwargs=None, *, tie_weights=True, strict=False):
    """``module(*args, **kwargs)`` with ``parameters_and_buffers`` (one dict) in place of its own."""
    from ...func._module import _functional_call
    warnings.warn("`torch.nn.utils.stateless.functional_call` is deprecated as of PyTorch 2.0 and will be removed "
                  "in a future version of PyTorch. Please use `torch.func.functional_call` instead which is a "
                  "drop-in replacement.", FutureWarning, stacklevel=2)
    return _functional_call(module, parameters_and_buffers, args, kwargs, tie_weights=tie_weights, strict=strict)
