"""tapegrad.nn.functional: PyTorch's functional API (activations, losses, convolution, pooling, ...).

The ops live in ``tapegrad.ops.nn_ops`` (losses, softmax, dropout, normalisation, embedding, attention),
``tapegrad.ops.conv`` (convolution, pooling, padding, interpolation) and ``tapegrad.ops.elementwise``
(activations); this module re-exports them under torch's names. Each import is defensive: a family that is
missing or still being written never breaks ``import tapegrad``.
"""

from ..ops import nn_ops as _nn
from ..ops.nn_ops import *  # noqa: F401,F403
from ..ops.conv import *  # noqa: F401,F403

for _name in _nn.FUNCTIONAL:      # nn.functional's signature where torch.xxx differs (batch_norm, embedding, ...)
    globals()[_name] = _nn.FUNCTIONAL_OVERRIDES.get(_name) or getattr(_nn, _name)


def _export(module_name, names):
    """Copy ``names`` (those that exist) from ``tapegrad.ops.<module_name>`` into this module."""
    import importlib
    try:
        mod = importlib.import_module(f"..ops.{module_name}", __package__)
    except ImportError:
        return
    for n in list(names) + list(getattr(mod, "FUNCTIONAL", [])):
        fn = getattr(mod, n, None)
        if fn is not None and n not in globals():
            globals()[n] = fn


# activations (torch.nn.functional names; the elementwise module lists its own in FUNCTIONAL)
_export("elementwise", ["relu", "relu_", "relu6", "elu", "elu_", "selu", "selu_", "celu", "celu_", "leaky_relu",
                        "leaky_relu_", "prelu", "rrelu", "rrelu_", "glu", "gelu", "logsigmoid", "hardshrink",
                        "tanhshrink", "softsign", "softplus", "softshrink", "threshold", "threshold_", "hardtanh",
                        "hardtanh_", "hardsigmoid", "hardswish", "silu", "mish", "sigmoid", "tanh"])
_export("index", ["one_hot"])
_export("conv", [])

# the star imports bring ops torch has at top level only (torch.dropout_, torch.native_batch_norm, ...)
for _name in ("alpha_dropout_", "dropout_", "feature_alpha_dropout_", "feature_dropout", "feature_dropout_",
              "native_batch_norm", "native_layer_norm", "norm_except_dim"):
    del globals()[_name]
del _name

# torch.overrides' dispatch helpers, which torch's functional module imports (copied functional code calls them)
from ..overrides import (handle_torch_function, has_torch_function, has_torch_function_unary,  # noqa: E402,F401
                         has_torch_function_variadic)
from .. import _aliases  # noqa: E402
_aliases.install(globals(), "nn.functional")   # F.linear(x=...), F.gelu(x=...): torch's built-ins of nn.functional
