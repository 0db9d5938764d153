"""``tapegrad.amp``: automatic mixed precision, as ``torch.amp``: ``autocast`` and ``GradScaler``.

``autocast("cpu", dtype=torch.float16)`` runs the ops PyTorch runs in lower precision on the CPU (the matrix
products, ``linear``, the convolutions, ``prelu``, scaled-dot-product attention) in that dtype, and the ops it keeps
in float32 (the losses, ``cdist``, ``trace``, the linalg decompositions and solvers, ``fft``) in float32; other ops
run in their inputs' dtype. The casts are recorded ops, so gradients flow back to float32 parameters in float32.
bfloat16 (CPU autocast's default dtype) is stored as float32 in tapegrad (NumPy has no bfloat16), so under it
the lower-precision ops run in float32 too. ``autocast("cuda")`` disables itself with torch's warning (there is no
GPU), as it does on PyTorch's CPU build.

``GradScaler("cpu")`` scales the loss, unscales the gradients, skips the step when one is not finite and adapts the
scale, as torch's; ``GradScaler()`` (device "cuda") disables itself with torch's warning.
"""

from .autocast_mode import (autocast, custom_bwd, custom_fwd, get_autocast_dtype, is_autocast_available,
                            is_autocast_enabled)
from .grad_scaler import GradScaler

__all__ = ["autocast", "GradScaler", "custom_fwd", "custom_bwd", "is_autocast_available", "is_autocast_enabled",
           "get_autocast_dtype"]
