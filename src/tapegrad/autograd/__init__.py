"""tapegrad.autograd: the graph (Function, nodes), the engine (backward, grad) and grad modes."""

import tapegrad as torch  # noqa: F401  (torch.autograd.torch is the torch module, as torch's own import there leaves it)

from . import engine as _engine
from .engine import backward
from .function import Function, FunctionCtx, Primitive, once_differentiable
from .gradcheck import GradcheckError, gradcheck, gradgradcheck
from .grad_mode import _state as _grad_state
from .grad_mode import (enable_grad, inference_mode, is_grad_enabled, is_inference_mode_enabled,
                        is_multithreading_enabled, no_grad, set_grad_enabled, set_multithreading_enabled)

__all__ = ["backward", "grad", "Function", "FunctionCtx", "Primitive", "once_differentiable", "gradcheck",
           "gradgradcheck", "GradcheckError", "no_grad", "enable_grad", "set_grad_enabled", "inference_mode",
           "is_grad_enabled", "is_inference_mode_enabled", "is_multithreading_enabled", "set_multithreading_enabled",
           "is_tensor_like"]


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, only_inputs=True,
         allow_unused=None, is_grads_batched=False, materialize_grads=False):
    if grad_outputs is not None and _grad_state.interpreters and not is_grads_batched:
        # under vmap, cotangents batched there on a graph recorded outside: one vjp per sample (func/_vmap.py)
        from ..func._vmap import grad_with_batched_cotangents
        res = grad_with_batched_cotangents(grad, outputs, inputs, grad_outputs, retain_graph, create_graph,
                                           allow_unused, materialize_grads)
        if res is not NotImplemented:
            return res
    return _engine.grad(outputs, inputs, grad_outputs, retain_graph, create_graph, only_inputs, allow_unused,
                        is_grads_batched, materialize_grads)


grad.__doc__ = _engine.grad.__doc__
_LAZY_NAMES = {"detect_anomaly": "anomaly", "set_detect_anomaly": "anomaly", "is_anomaly_enabled": "anomaly",
               "is_anomaly_check_nan_enabled": "anomaly", "graph_stats": "stats"}


def __getattr__(name):
    # the optional tools load on first use, so `import tapegrad` stays fast
    from .. import _import_lazy
    if name in ("functional", "anomaly", "trace", "graph", "stats", "forward_ad", "profiler"):
        return _import_lazy(f"{__name__}.{name}", __name__)
    if name == "Variable":       # the legacy wrapper: Variable(t, requires_grad=True) is a tensor
        from .._legacy import Variable
        return Variable
    if name == "is_tensor_like":              # (torch.autograd re-exports torch.overrides' predicate)
        from ..overrides import is_tensor_like
        return is_tensor_like
    if name in _LAZY_NAMES:   # tools that live in those modules (trace is the module, itself callable)
        return getattr(_import_lazy(f"{__name__}.{_LAZY_NAMES[name]}", __name__), name)
    raise AttributeError(f"module 'tapegrad.autograd' has no attribute {name!r}")
