"""``torch.backends.mkldnn``: tapegrad's kernels are NumPy's; there is no oneDNN to switch."""

from __future__ import annotations

import sys

from ._flags import set_flags

enabled = True
deterministic = False


def is_available() -> bool:
    return False


def flags(enabled=False, deterministic=False):
    return set_flags(sys.modules[__name__], enabled=enabled, deterministic=deterministic)
