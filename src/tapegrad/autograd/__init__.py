"""tapegrad.autograd: the graph (Function, nodes), the engine (backward, grad) and grad modes."""

from .engine import backward, grad
from .function import Function, FunctionCtx, Primitive, once_differentiable
from .gradcheck import GradcheckError, gradcheck, gradgradcheck
from .grad_mode import (enable_grad, inference_mode, is_grad_enabled, is_inference_mode_enabled, no_grad,
                        set_grad_enabled)

__all__ = ["backward", "grad", "Function", "FunctionCtx", "Primitive", "once_differentiable", "gradcheck",
           "gradgradcheck", "GradcheckError", "no_grad", "enable_grad", "set_grad_enabled", "inference_mode",
           "is_grad_enabled", "is_inference_mode_enabled"]


def __getattr__(name):
    # the optional tools load on first use, so `import tapegrad` stays fast
    if name in ("functional", "anomaly", "trace", "graph"):
        import importlib
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'tapegrad.autograd' has no attribute {name!r}")
