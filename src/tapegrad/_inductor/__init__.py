"""``tapegrad._inductor``: ``config``, with torch's keys and defaults (``tapegrad.compiler.settings``), which
scripts set (``torch._inductor.config.coordinate_descent_tuning = True``). tapegrad's replay has no code generator
to tune: the values are kept and read back, and change nothing. ``utils.fresh_inductor_cache()`` wraps a timed
first call (tapegrad keeps no on-disk cache to empty)."""

from __future__ import annotations

from ..compiler.settings import load as _load

config = _load("inductor")         # (also importable: ``import torch._inductor.config``)

from . import utils  # noqa: E402

__all__ = ["config", "utils"]
