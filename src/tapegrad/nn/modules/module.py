"""torch's ``nn.modules.module`` path: ``Module`` (defined in ``tapegrad/nn/module.py``) and its helpers.

>>> tapegrad.nn.modules.module.Module is tapegrad.nn.Module
True
"""

from ..module import *  # noqa: F403
from ..module import Module, _addindent, _IncompatibleKeys  # noqa: F401
