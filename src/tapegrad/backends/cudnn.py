"""``torch.backends.cudnn``: there is no cuDNN (as in PyTorch's CPU build: ``is_available()`` is False,
``version()`` None); ``enabled``, ``benchmark``, ``deterministic`` and ``allow_tf32`` keep what a script sets."""

from __future__ import annotations

import sys

from ._flags import set_flags

enabled = True
benchmark = False
benchmark_limit = 10
deterministic = False
allow_tf32 = True


def is_available() -> bool:
    return False


def is_acceptable(tensor) -> bool:
    return False


def version():
    return None


def flags(enabled=False, benchmark=False, benchmark_limit=10, deterministic=False, allow_tf32=True):
    """``with torch.backends.cudnn.flags(enabled=..., ...):`` the given switches for the block."""
    return set_flags(sys.modules[__name__], enabled=enabled, benchmark=benchmark, benchmark_limit=benchmark_limit,
                     deterministic=deterministic, allow_tf32=allow_tf32)
