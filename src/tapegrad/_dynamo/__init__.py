"""``tapegrad._dynamo``: the ``torch._dynamo`` names training scripts use with ``torch.compile``, served by
``tapegrad.compiler``: ``reset()``, ``config`` (torch's keys: ``compiler.settings``), ``explain(fn)(*args)``,
``disable``, ``is_compiling()``, ``graph_break()``, ``optimize(backend)``, the tracer hints (``mark_dynamic``,
``allow_in_graph``, ...: accepted, see ``compiler.api``), ``eval_frame.OptimizedModule`` and ``exc``'s errors."""

from __future__ import annotations

from ..compiler import (allow_in_graph, assume_constant_result, disable, explain, is_compiling, list_backends,
                        reset, set_stance, substitute_in_graph)
from ..compiler.api import (disallow_in_graph, graph_break, lookup_backend, mark_dynamic, mark_static,
                            mark_static_address, maybe_mark_dynamic, optimize, optimize_assert, register_backend,
                            run)
from ..compiler.exc import Unsupported
from ..compiler.settings import load as _load
from . import eval_frame, exc

config = _load("dynamo")         # (also importable: ``import torch._dynamo.config``)
OptimizedModule = eval_frame.OptimizedModule

__all__ = ["reset", "config", "explain", "disable", "is_compiling", "Unsupported", "graph_break", "optimize",
           "optimize_assert", "run", "mark_dynamic", "maybe_mark_dynamic", "mark_static", "mark_static_address",
           "allow_in_graph", "disallow_in_graph", "assume_constant_result", "substitute_in_graph", "list_backends",
           "lookup_backend", "register_backend", "set_stance", "OptimizedModule", "eval_frame", "exc"]
