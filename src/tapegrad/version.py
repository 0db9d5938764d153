"""``tapegrad.version``: what ``torch.version`` reports: the version ``torch.__version__`` is (the torch release
tapegrad answers for, with tapegrad's own in the local label: ``torch_version.py``), and no CUDA/ROCm build.
``tapegrad`` is tapegrad's own release."""

from __future__ import annotations

__all__ = ["__version__", "cuda", "hip", "debug", "git_version", "tapegrad"]

from .torch_version import TAPEGRAD as tapegrad
from .torch_version import __version__

cuda = None
hip = None
xpu = None
debug = False
git_version = "unknown"
