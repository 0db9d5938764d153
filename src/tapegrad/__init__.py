"""tapegrad: PyTorch's autograd, rebuilt in clear Python on NumPy.

``import tapegrad as torch`` runs PyTorch-style code: tensors that record a dynamic graph, ``backward()``,
``nn``, ``optim``, ``utils.data``. Submodules that are not needed for the core load on first use.
"""

from . import _dtype
from ._dtype import (bfloat16, bool, cdouble, cfloat, complex64, complex128, double, dtype, finfo, float, float16,
                     float32, float64, get_default_dtype, half, iinfo, int, int8, int16, int32, int64, long,
                     promote_types, result_type, set_default_dtype, short, uint8, can_cast)
from ._random import Generator, get_rng_state, initial_seed, manual_seed, seed, set_rng_state, default_generator
from ._tensor_str import set_printoptions
from .tensor import Size, Tensor, device
from .creation import *  # noqa: F403
from .autograd import enable_grad, inference_mode, is_grad_enabled, no_grad, set_grad_enabled
from .autograd.grad_mode import is_inference_mode_enabled
from .ops.elementwise import *  # noqa: F403
from .ops.reduce import *  # noqa: F403
from .ops.shape import *  # noqa: F403
from .ops.index import *  # noqa: F403
from .ops.linalg import *  # noqa: F403
from .ops.nn_ops import *  # noqa: F403
from . import autograd

__version__ = "0.1.0"

_LAZY = {"nn", "optim", "utils", "scalar", "viz", "linalg", "debug", "serialization", "parity", "special", "fft",
         "cuda", "backends", "testing"}


def __getattr__(name):
    # heavy or optional parts load on first use so that `import tapegrad` stays under 0.2 s
    if name in _LAZY:
        import importlib
        mod = importlib.import_module(f".{name}", __name__)
        globals()[name] = mod
        return mod
    if name in ("save", "load"):
        from . import serialization
        return getattr(serialization, name)
    raise AttributeError(f"module 'tapegrad' has no attribute {name!r}")


def is_tensor(obj):
    """True for a tapegrad Tensor."""
    return isinstance(obj, Tensor)


def numel(input):
    return input.numel()


def is_floating_point(input):
    return input.is_floating_point()


def set_num_threads(n):
    """Accepted for compatibility; NumPy's BLAS threads are set by its environment variables."""


def get_num_threads():
    return 1


def typename(obj):
    return f"tapegrad.{obj.dtype._legacy}Tensor" if isinstance(obj, Tensor) else type(obj).__name__
