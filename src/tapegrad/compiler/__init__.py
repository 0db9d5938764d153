"""``tapegrad.compile``: capture a step once, replay it as straight-line NumPy.

    model = tapegrad.compile(model)          # or model.compile(), or @tapegrad.compile on a function
    loss = F.cross_entropy(model(x), y)      # first call: runs eagerly while recording the ops (the capture)
    loss.backward()                          # later calls with the same guards: the generated program

The pieces (each its own module): ``capture`` (an ``Interpreter`` that records every op call into a flat program,
and notes graph breaks), ``guards`` (when a program may be replayed: one generated check function), ``dynamic``
(two captures at other sizes made one shape-generic program), ``codegen``
(the program as Python source: a forward without Tensors or nodes per op, a backward running the ops' own
formulas in reverse on arrays) with ``kernels`` (hot elementwise ops inline), and ``runtime`` (the cache, and
the region's one graph node, ``CompiledFunctionBackward``).

torch's names where they make sense: ``tapegrad.compiler.reset()``, ``disable(fn)`` / ``with disable():``,
``explain(fn, *args)``, ``set_stance`` and the config modules (``settings``: ``config.cache_size_limit`` is torch's
``torch._dynamo.config.cache_size_limit``, 8), the errors (``exc``), ``OptimizedModule`` (``optimized``), and the
rest of ``torch.compiler``'s and ``torch._dynamo``'s surface (``api``: tracer hints accepted, backends).
"""

from __future__ import annotations

import functools

from . import api as _api
from . import codegen
from .api import (allow_in_graph, assume_constant_result, cudagraph_mark_step_begin, get_default_backend,
                  is_dynamo_compiling, is_exporting, keep_portable_guards_unsafe, keep_tensor_guards_unsafe,
                  list_backends, load_cache_artifacts, nested_compile_region, save_cache_artifacts,
                  set_default_backend, skip_all_guards_unsafe, skip_guard_on_all_nn_modules_unsafe,
                  skip_guard_on_globals_unsafe, skip_guard_on_inbuilt_nn_modules_unsafe, substitute_in_graph,
                  wrap_numpy)
from .capture import GraphBreak
from .exc import InvalidBackend, RecompileError, Unsupported
from .runtime import Compiled, CompiledFunction, _all, _disabled, config
from .settings import set_stance

__all__ = ["compile", "reset", "disable", "explain", "config", "Unsupported", "ExplainOutput", "CompiledFunction",
           "is_compiling", "GraphBreak", "OptimizedModule", "InvalidBackend", "RecompileError", "set_stance",
           "allow_in_graph", "assume_constant_result", "cudagraph_mark_step_begin", "get_default_backend",
           "is_dynamo_compiling", "is_exporting", "keep_portable_guards_unsafe", "keep_tensor_guards_unsafe",
           "list_backends", "load_cache_artifacts", "nested_compile_region", "save_cache_artifacts",
           "set_default_backend", "skip_all_guards_unsafe", "skip_guard_on_all_nn_modules_unsafe",
           "skip_guard_on_globals_unsafe", "skip_guard_on_inbuilt_nn_modules_unsafe", "substitute_in_graph",
           "wrap_numpy"]


def __getattr__(name):
    if name == "OptimizedModule":        # (a Module subclass: loads tapegrad.nn, so on first use)
        from .optimized import OptimizedModule
        return OptimizedModule
    raise AttributeError(f"module 'tapegrad.compiler' has no attribute '{name}'")


_patched = []


def compile(model=None, *, fullgraph=False, dynamic=None, backend="inductor", mode=None, options=None,  # noqa: A001
            disable=False):
    """Compile a function or module (torch.compile's signature): returns a callable that captures the ops of
    its first call and replays them as generated straight-line NumPy code.

    ``backend``: torch's names are accepted and all mean tapegrad's replay; ``"print"`` also prints each
    captured program as readable Python (the forward one line per op, the backward one line per op's chain-rule
    step). ``fullgraph=True`` raises ``Unsupported`` at a graph break instead of running that call eagerly.
    ``dynamic``: ``None`` (torch's automatic dynamic) captures a call whose argument sizes changed and makes the
    two captures one generic program, trusted after a third size agrees (``compiler/dynamic.py``: sizes 0 and 1
    stay static; what cannot be made generic keeps a program per size); ``True`` the same, the generic program
    replacing the first; ``False`` one program per shape. ``mode`` and ``options`` are accepted. Used bare, as
    ``@tapegrad.compile``, or with arguments, as ``@tapegrad.compile(fullgraph=True)``.

    >>> f = tapegrad.compile(lambda x: (x * 2).sin().sum())
    >>> x = tapegrad.ones(3, requires_grad=True)
    >>> f(x); f(x).backward(); x.grad
    tensor([-0.8323, -0.8323, -0.8323])
    """
    if not callable(backend) and backend is not None and backend not in _api.BACKENDS:
        raise InvalidBackend(backend)
    if not disable:
        _api.warn_custom(backend)
    if mode is not None and options is not None:
        raise RuntimeError("Either mode or options can be specified, but both can't be specified at the same time.")
    if mode not in (None, "default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs"):
        raise RuntimeError(f"Unrecognized mode={mode}, should be one of: default, reduce-overhead, max-autotune, "
                           "max-autotune-no-cudagraphs")
    kw = dict(fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode, options=options, disable=disable)
    if model is None:
        return lambda m: compile(m, **kw)
    if not _patched:
        _patched.append(True)
        from ..distributions import Distribution     # (torch.compile's first call turns distributions' argument
        Distribution.set_default_validate_args(False)  # validation off for the process; so does tapegrad's)
    if not callable(model):
        raise RuntimeError("tapegrad.compile: the argument must be callable (a function or an nn.Module)")
    from ..nn.module import Module
    if isinstance(model, Module):
        from .optimized import OptimizedModule
        return OptimizedModule(model, **kw)
    return Compiled(model, **kw)


def reset():
    """Forget every captured program (torch's ``torch.compiler.reset``): the next calls capture again."""
    for ref in list(_all):
        c = ref()
        if c is None:
            _all.remove(ref)
        else:
            c.reset()


class disable:
    """``tapegrad.compiler.disable(fn)``: ``fn`` always runs eagerly, also inside a compiled function (its ops
    are then part of no capture: the caller's capture breaks there). Also a context manager: compiled functions
    called inside ``with tapegrad.compiler.disable():`` run eagerly."""

    def __init__(self, fn=None, recursive=True):
        self.fn = fn
        if fn is not None:
            functools.update_wrapper(self, fn)

    def __call__(self, *args, **kwargs):
        if self.fn is None:
            if len(args) == 1 and callable(args[0]) and not kwargs:
                return disable(args[0])
            raise TypeError("disable() takes a function")
        _disabled[0] += 1
        try:
            return self.fn(*args, **kwargs)
        finally:
            _disabled[0] -= 1

    def __enter__(self):
        _disabled[0] += 1
        return self

    def __exit__(self, *exc):
        _disabled[0] -= 1
        return False


def is_compiling():
    """True while a capture is running (torch's ``torch.compiler.is_compiling``)."""
    from ..autograd.function import active_interpreters
    from .capture import Capture
    return any(isinstance(i, Capture) for i in active_interpreters())


class ExplainOutput:
    """What ``explain`` found (torch's ``torch._dynamo.explain`` fields): ``graph_count``, ``graph_break_count``,
    ``break_reasons``, ``op_count``, ``ops_per_graph`` (op names), ``out_guards`` (the guard function's source),
    ``graphs`` (each captured program as readable Python: see ``backend="print"``)."""

    def __init__(self, prog, out_values, guard_src):
        self.break_reasons = list(prog.breaks)
        self.graph_break_count = len(prog.breaks)
        cuts = [0, *prog.break_at, len(prog.ops)]
        self.ops_per_graph = [[rec.name for rec in prog.ops[a:b]] for a, b in zip(cuts[:-1], cuts[1:])]
        self.ops_per_graph = [g for g in self.ops_per_graph if g] or [[]]
        self.graph_count = len([g for g in self.ops_per_graph if g])
        self.op_count = len(prog.ops)
        self.out_guards = guard_src
        self.graphs = [codegen.listing(prog, out_values)] if not prog.breaks else []
        self.compiled = not prog.breaks

    def __str__(self):
        lines = [f"Graph Count: {self.graph_count}", f"Graph Break Count: {self.graph_break_count}",
                 f"Op Count: {self.op_count}", "Break Reasons:"]
        for i, r in enumerate(self.break_reasons, 1):
            lines.append(f"  Break Reason {i}:\n    Reason: {r}")
        lines.append("Ops per Graph:")
        for i, ops in enumerate(self.ops_per_graph, 1):
            lines.append(f"  Ops {i}:")
            lines.extend(f"    {o}" for o in ops)
        lines.append("What tapegrad does: " + ("replays the whole call as one compiled region" if self.compiled
                                               else "runs calls with these guards eagerly (a graph break)"))
        return "\n".join(lines)

    __repr__ = __str__


def explain(fn, *args, **kwargs):
    """List the graph breaks of ``fn(*args, **kwargs)`` and why (torch's ``torch._dynamo.explain``); returns an
    ``ExplainOutput``. ``explain(fn)(*args)`` works too, as in torch. The call runs once, eagerly."""
    if not args and not kwargs:
        return lambda *a, **k: _explain(fn, a, k)
    return _explain(fn, args, kwargs)


def _explain(fn, args, kwargs):
    from ..nn.module import Module
    c = Compiled(fn._call_impl_eager, module=fn) if isinstance(fn, Module) else Compiled(fn)
    _all.pop()
    res, prog, out_values = c._capture(args, kwargs, explain=True)
    guard = getattr(prog, "guard_src", "")
    return ExplainOutput(prog, out_values, guard)


