"""``torch.backends.cuda``: not built (as in PyTorch's CPU build); ``matmul.allow_tf32`` and the
scaled-dot-product-attention switches keep what a script sets."""

from __future__ import annotations


class _MatmulFlags:
    """``torch.backends.cuda.matmul``: ``allow_tf32`` (False), ``allow_fp16_reduced_precision_reduction`` and
    ``allow_bf16_reduced_precision_reduction`` (True), as torch's defaults."""

    def __init__(self):
        self.allow_tf32 = False
        self.allow_fp16_reduced_precision_reduction = True
        self.allow_bf16_reduced_precision_reduction = True
        self.fp32_precision = "none"


matmul = _MatmulFlags()
_sdp = {"flash": True, "mem_efficient": True, "math": True, "cudnn": True}


def is_built() -> bool:
    return False


def preferred_linalg_library(backend=None):
    return "default"


def _switch(name):
    def enable(enabled: bool) -> None:
        _sdp[name] = bool(enabled)

    def query() -> bool:
        return _sdp[name]
    enable.__name__, query.__name__ = f"enable_{name}_sdp", f"{name}_sdp_enabled"
    return enable, query


enable_flash_sdp, flash_sdp_enabled = _switch("flash")
enable_mem_efficient_sdp, mem_efficient_sdp_enabled = _switch("mem_efficient")
enable_math_sdp, math_sdp_enabled = _switch("math")
enable_cudnn_sdp, cudnn_sdp_enabled = _switch("cudnn")
