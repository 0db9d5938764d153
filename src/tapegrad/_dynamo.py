"""``tapegrad._dynamo``: the ``torch._dynamo`` names training scripts use with ``torch.compile``, served by
``tapegrad.compiler``: ``reset()``, ``config`` (``cache_size_limit``; the other switches scripts set, such as
``suppress_errors``, are kept), ``explain(fn)(*args)``, ``disable`` and ``is_compiling()``."""

from __future__ import annotations

from .compiler import config, disable, explain, is_compiling, reset
from .compiler.runtime import Unsupported

__all__ = ["reset", "config", "explain", "disable", "is_compiling", "Unsupported"]
