"""Keep freed array memory for reuse instead of returning it to the OS after every step (glibc only).

glibc's malloc serves blocks above a threshold (128 KiB at start, raised as large blocks are freed) with mmap,
and trims the top of its heap as soon as twice that much is free there. A training loop that allocates and
frees the same few MB of temporaries every step then gets them back as fresh pages each time: a page fault per
4 KiB (measured on the LeNet benchmark, W4: ~1,000 faults and ~20% of every step, for tapegrad and for
hand-written NumPy alike; PyTorch's allocator avoids them). At import, tapegrad fixes the two thresholds at the
values glibc's own dynamic scheme can reach (blocks up to 32 MiB come from the heap; the heap is trimmed when
64 MiB are free at its top): the process keeps up to that much freed memory for reuse.

This changes the process's allocator settings, so it is documented (README, "Where tapegrad differs") and can
be declined: it is skipped when ``TAPEGRAD_MALLOC=system`` is set, when any ``MALLOC_*_`` variable is set (the
user's own glibc tuning wins), and off glibc. ``tapegrad._malloc.TUNED`` says whether it was applied.
"""

from __future__ import annotations

import os
import sys

M_TRIM_THRESHOLD = -1     # glibc's mallopt parameter numbers (malloc.h)
M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD = 32 * 2 ** 20
TRIM_THRESHOLD = 64 * 2 ** 20

TUNED = False


def tune() -> bool:
    """Apply the thresholds (once); returns whether they are in effect."""
    global TUNED
    if TUNED:
        return True
    if not sys.platform.startswith("linux") or os.environ.get("TAPEGRAD_MALLOC", "").lower() == "system":
        return False
    if any(k.startswith("MALLOC_") and k.endswith("_") for k in os.environ):
        return False
    try:
        import ctypes
        libc = ctypes.CDLL(None)
        if not hasattr(libc, "gnu_get_libc_version"):    # glibc only (musl's mallopt does nothing)
            return False
        mallopt = libc.mallopt
    except (OSError, AttributeError, ImportError):
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    TUNED = bool(mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD))
    return TUNED
