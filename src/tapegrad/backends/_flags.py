"""The ``flags(...)`` context manager the backend modules share: set some module attributes, restore them after."""

from __future__ import annotations

import contextlib


@contextlib.contextmanager
def set_flags(module, **values):
    """Within the block, ``module.<name> = value`` for each given value that is not None; the old values after."""
    given = {k: v for k, v in values.items() if v is not None}
    old = {k: getattr(module, k) for k in given}
    for k, v in given.items():
        setattr(module, k, v)
    try:
        yield
    finally:
        for k, v in old.items():
            setattr(module, k, v)
