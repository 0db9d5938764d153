"""tapegrad keeps freed array memory for reuse on glibc (see src/tapegrad/_malloc.py), and declines to when asked."""

import os
import subprocess
import sys

import pytest

SRC = os.path.join(os.path.dirname(__file__), "..", "src")
CODE = "import tapegrad, tapegrad._malloc as m; print(m.TUNED)"


def _run(**env):
    e = {k: v for k, v in os.environ.items() if not (k.startswith("MALLOC_") and k.endswith("_"))}
    e.pop("TAPEGRAD_MALLOC", None)
    e.update(env, PYTHONPATH=SRC)
    out = subprocess.run([sys.executable, "-c", CODE], env=e, capture_output=True, text=True, check=True)
    return out.stdout.strip()


def _glibc():
    try:
        import ctypes
        return hasattr(ctypes.CDLL(None), "gnu_get_libc_version") and sys.platform.startswith("linux")
    except (OSError, AttributeError):
        return False


@pytest.mark.skipif(not _glibc(), reason="the allocator tuning applies to glibc only")
def test_tuned_on_glibc_by_default():
    assert _run() == "True"


def test_declined_by_env_and_by_the_users_own_malloc_settings():
    assert _run(TAPEGRAD_MALLOC="system") == "False"
    assert _run(MALLOC_ARENA_MAX_="2") == "False"
