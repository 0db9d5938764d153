"""tapegrad.nn: modules, parameters, initialisation and the functional API, as ``torch.nn``.

>>> import tapegrad.nn as nn
>>> model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
>>> sum(p.numel() for p in model.parameters())
58
"""

from . import functional, init  # noqa: F401
from .module import Module  # noqa: F401
from .modules import *  # noqa: F403
from .modules import __all__ as _modules_all
from .parameter import Buffer, Parameter, UninitializedBuffer, UninitializedParameter
from . import parallel, utils  # noqa: F401
from .parallel import DataParallel

__all__ = (["Parameter", "Buffer", "UninitializedParameter", "UninitializedBuffer", "functional", "init", "utils",
            "parallel", "DataParallel"]
           + list(_modules_all))


def __getattr__(name):
    # torch.nn.attention (sdpa_kernel) and torch.nn._reduction (losses defined by libraries) load on first use
    if name in ("attention", "_reduction"):
        import importlib
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module 'tapegrad.nn' has no attribute {name!r}")
