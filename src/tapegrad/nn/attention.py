"""``tapegrad.nn.attention``: which kernels ``scaled_dot_product_attention`` may use (``sdpa_kernel``).

tapegrad has one CPU kernel, the math one (torch's CPU build also has a flash kernel; both give the same values up
to rounding), so a block that allows ``MATH`` or ``FLASH_ATTENTION`` runs as usual, and one that allows neither
fails as torch's CPU build does.
"""

from __future__ import annotations

import contextlib
import enum

__all__ = ["SDPBackend", "sdpa_kernel"]


class SDPBackend(enum.Enum):
    """The kernels of ``scaled_dot_product_attention``: prints as torch's (``SDPBackend.MATH``), converts to its
    number with ``int()``, and is not equal to that number (torch's is not an int)."""
    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4

    def __str__(self):
        return f"SDPBackend.{self.name}"

    def __int__(self):
        return self.value

    __index__ = __int__


_ALL = frozenset(b for b in SDPBackend if b is not SDPBackend.ERROR)
_allowed = [_ALL]


def math_allowed() -> bool:
    """Whether the CPU kernels may run (``F.scaled_dot_product_attention`` asks)."""
    a = _allowed[0]
    return SDPBackend.MATH in a or SDPBackend.FLASH_ATTENTION in a


def flash_allowed() -> bool:
    """Whether torch's fused CPU kernel may run (else the math path does: its output is laid out contiguously)."""
    return SDPBackend.FLASH_ATTENTION in _allowed[0]


NO_KERNEL = ("No viable backend for scaled_dot_product_attention was found. This is likely due to turning off both "
             "the math kernel and the fused kernels.")


def _hook_in():
    import sys

    from ..ops.nn_ops import attention
    attention._sdpa_limits = sys.modules[__name__]


_hook_in()


@contextlib.contextmanager
def sdpa_kernel(backends, set_priority: bool = False):
    """``with sdpa_kernel(SDPBackend.MATH):`` (or a list of backends): only those for the block."""
    if isinstance(backends, SDPBackend):
        backends = [backends]
    if not isinstance(backends, (list, tuple, set)) or not all(isinstance(b, SDPBackend) for b in backends):
        raise AssertionError("Backend must be an instance of SDPBackend or a list of SDPBackend instances, got "
                             f"{type(backends).__name__ if not isinstance(backends, (list, tuple, set)) else 'list'}")
    prev = _allowed[0]
    _allowed[0] = frozenset(backends)
    try:
        yield {}
    finally:
        _allowed[0] = prev
