"""``torch.cuda.amp``: the deprecated home of ``autocast`` and ``GradScaler`` for CUDA. There is no GPU: each warns
as torch does (deprecated, then disabled) and changes nothing."""

from __future__ import annotations

from ..amp import custom_bwd as _custom_bwd
from ..amp import custom_fwd as _custom_fwd
from ..amp._deprecated import deprecated_amp

__all__ = ["autocast", "GradScaler", "custom_fwd", "custom_bwd"]

autocast, GradScaler = deprecated_amp("cuda")


def custom_fwd(fwd=None, *, cast_inputs=None):
    return _custom_fwd(fwd, device_type="cuda", cast_inputs=cast_inputs)


def custom_bwd(bwd=None):
    return _custom_bwd(bwd, device_type="cuda")
