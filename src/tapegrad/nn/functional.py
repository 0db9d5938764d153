"""tapegrad.nn.functional: PyTorch's functional API (activations, losses, convolution, pooling, ...).

The ops live in ``tapegrad.ops.nn_ops`` and ``tapegrad.ops.conv``; this module re-exports them under torch's names.
"""

from ..ops.elementwise import relu, sigmoid, tanh  # noqa: F401
from ..ops.nn_ops import *  # noqa: F401,F403
from ..ops.conv import *  # noqa: F401,F403
