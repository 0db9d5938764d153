"""``tapegrad.__version__``: a version string that answers as ``torch.__version__`` does.

Code written for torch gates features on its version (``if torch.__version__ >= "2.0":`` before calling
``F.scaled_dot_product_attention``). tapegrad implements torch 2.13's API and semantics (torch 2.13 is its test
oracle), so ``__version__`` is ``"2.13.0+tapegrad.<tapegrad's version>"``: the torch release it answers for, with
tapegrad's own release in the local label (PEP 440), as torch's is ``"2.13.0+cpu"``. Like torch's
``TorchVersion`` it is a ``str`` that also compares with version strings and tuples by release number.
tapegrad's own release is ``tapegrad.version.tapegrad`` (the package's version, ``0.1.0``).
"""

from __future__ import annotations

import re

__all__ = ["TorchVersion", "TAPEGRAD", "TORCH_API"]

TAPEGRAD = "0.1.0"          # (pyproject.toml's version; tests/test_env_surface.py checks they agree)
TORCH_API = "2.13.0"


def _key(v):
    """``v`` (a version string or a tuple of ints) as (release numbers, local label): a version with a local label
    sorts after the same release without one (PEP 440: ``2.13.0+cpu > 2.13.0``), as torch's comparisons do."""
    if isinstance(v, tuple):
        return tuple(int(x) for x in v), ()
    m = re.match(r"\s*v?(\d+(?:\.\d+)*)[^+]*(?:\+(.*))?$", str(v))
    if m is None:
        raise ValueError(f"Invalid version: {v!r}")
    local = tuple(m.group(2).split(".")) if m.group(2) else ()
    return tuple(int(x) for x in m.group(1).split(".")), local


def _cmp(a, b):
    (a, la), (b, lb) = _key(a), _key(b)
    n = max(len(a), len(b))
    a, b = a + (0,) * (n - len(a)), b + (0,) * (n - len(b))
    if a != b:
        return (a > b) - (a < b)
    la, lb = (bool(la), la), (bool(lb), lb)
    return (la > lb) - (la < lb)


class TorchVersion(str):
    """A version string comparing by release number with strings and tuples (``v >= "2.0"``, ``v < (3, 0)``)."""

    def __lt__(self, other):
        return _cmp(self, other) < 0

    def __le__(self, other):
        return _cmp(self, other) <= 0

    def __gt__(self, other):
        return _cmp(self, other) > 0

    def __ge__(self, other):
        return _cmp(self, other) >= 0

    def __eq__(self, other):
        if isinstance(other, tuple):
            return _cmp(self, other) == 0
        return str.__eq__(self, other)        # (a string: as text, so "2.13.0+tapegrad.0.1.0" is itself)

    def __ne__(self, other):
        return not self.__eq__(other)

    __hash__ = str.__hash__


__version__ = TorchVersion(f"{TORCH_API}+tapegrad.{TAPEGRAD}")
