"""``tapegrad.fx``: the part of ``torch.fx`` that model libraries call at import time.

tapegrad has no FX symbolic tracer (``tapegrad.compile`` captures programs by running them, see the README), so
what is here is what makes library code that prepares for FX tracing run: ``wrap`` registers a module-level
function as a leaf of a future trace and returns it unchanged, as torch's does (timm decorates its helpers with
``@torch.fx.wrap``).
"""

from __future__ import annotations

import inspect

__all__ = ["wrap"]

# (id of the calling module's globals, function name) -> those globals: torch keeps the same table
_wrapped_fns_to_patch: dict = {}


def wrap(fn_or_name):
    """Register ``fn_or_name`` (a function, or the name of a global function of the calling module) as a leaf
    function for FX tracing; returns it unchanged. Must be called at the top level of a module."""
    if not callable(fn_or_name) and not isinstance(fn_or_name, str):
        raise RuntimeError("Unsupported type for global function! Must be either a callable or string name")
    fn_name = fn_or_name.__name__ if callable(fn_or_name) else fn_or_name
    caller = inspect.currentframe().f_back
    if caller.f_code.co_name != "<module>":
        raise NotImplementedError("wrap must be called at the top level of a module")
    _wrapped_fns_to_patch[(id(caller.f_globals), fn_name)] = caller.f_globals
    return fn_or_name
