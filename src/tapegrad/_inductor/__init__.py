"""``tapegrad._inductor``: ``config``, with torch's keys and defaults (``tapegrad.compiler.settings``), which
scripts set (``torch._inductor.config.coordinate_descent_tuning = True``). tapegrad's replay has no code generator
to tune: the values are kept and read back, and change nothing."""

from __future__ import annotations

from ..compiler.settings import load as _load

config = _load("inductor")         # (also importable: ``import torch._inductor.config``)

__all__ = ["config"]
