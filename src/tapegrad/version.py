"""``tapegrad.version``: what ``torch.version`` reports. tapegrad's own version, and no CUDA/ROCm build."""

from __future__ import annotations

__all__ = ["__version__", "cuda", "hip", "debug", "git_version"]

from . import __version__  # (tapegrad's one version string)
cuda = None
hip = None
xpu = None
debug = False
git_version = "unknown"
