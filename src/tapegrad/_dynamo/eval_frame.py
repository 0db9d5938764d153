"""``tapegrad._dynamo.eval_frame``: where torch keeps ``OptimizedModule`` (scripts test
``isinstance(model, torch._dynamo.eval_frame.OptimizedModule)`` before saving ``model._orig_mod``)."""

from __future__ import annotations

from ..compiler.optimized import OptimizedModule

__all__ = ["OptimizedModule"]
