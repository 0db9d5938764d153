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


def __getattr__(name):
    # SDPBackend lives in nn.attention (imported on first use: nn imports ops, which this module must not)
    if name == "SDPBackend":
        from ..nn.attention import SDPBackend
        return SDPBackend
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class sdp_kernel:   # noqa: N801 - torch's name
    """``with torch.backends.cuda.sdp_kernel(enable_flash=..., enable_math=..., enable_mem_efficient=...,
    enable_cudnn=...)``: torch's deprecated form of ``nn.attention.sdpa_kernel`` (the enabled backends for the
    block; on the CPU, the math and flash kernels are the ones that run)."""

    def __init__(self, enable_flash=True, enable_math=True, enable_mem_efficient=True, enable_cudnn=True):
        import warnings

        from ..nn.attention import SDPBackend, sdpa_kernel
        warnings.warn("`torch.backends.cuda.sdp_kernel()` is deprecated. In the future, this context manager will "
                      "be removed. Please see `torch.nn.attention.sdpa_kernel()` for the new context manager, with "
                      "updated signature.", FutureWarning, stacklevel=2)
        flags = ((enable_flash, SDPBackend.FLASH_ATTENTION), (enable_mem_efficient, SDPBackend.EFFICIENT_ATTENTION),
                 (enable_math, SDPBackend.MATH), (enable_cudnn, SDPBackend.CUDNN_ATTENTION))
        self._cm = sdpa_kernel([b for on, b in flags if on])

    def __enter__(self):
        return self._cm.__enter__()

    def __exit__(self, *exc):
        return self._cm.__exit__(*exc)
