"""The rest of ``torch.compiler``'s and ``torch._dynamo``'s surface that training scripts call, answered for tapegrad's
capture-and-replay compiler.

tapegrad records every op a call runs (there is no bytecode tracer and no FX graph), so the hints that steer torch's
tracer change nothing here and are accepted as such: ``allow_in_graph``, ``assume_constant_result``,
``nested_compile_region``, ``substitute_in_graph`` (the function stays what it was), ``mark_dynamic`` and its kin
(tapegrad learns dynamic sizes from captures: ``runtime``/``dynamic``). ``graph_break()`` breaks a capture, as in
torch. Backends: torch's names are accepted and all mean tapegrad's replay; a registered or callable backend is
accepted too, with a warning that it is not called (there is no FX graph to hand it).
"""

from __future__ import annotations

import functools
import warnings

__all__ = ["BACKENDS", "list_backends", "lookup_backend", "register_backend", "is_dynamo_compiling",
           "is_exporting", "allow_in_graph", "disallow_in_graph", "assume_constant_result", "substitute_in_graph",
           "nested_compile_region", "cudagraph_mark_step_begin", "wrap_numpy", "graph_break", "mark_dynamic",
           "maybe_mark_dynamic", "mark_static", "mark_static_address", "optimize", "optimize_assert", "run",
           "save_cache_artifacts", "load_cache_artifacts", "get_default_backend", "set_default_backend",
           "keep_tensor_guards_unsafe", "skip_guard_on_inbuilt_nn_modules_unsafe",
           "skip_guard_on_all_nn_modules_unsafe", "skip_guard_on_globals_unsafe", "keep_portable_guards_unsafe",
           "skip_all_guards_unsafe", "warn_custom"]

# name -> tags (torch's list_backends() leaves out the "debug" and "experimental" ones)
BACKENDS = {"inductor": (), "cudagraphs": (), "openxla": (), "tvm": (), "tapegrad": ("debug",),
            "eager": ("debug",), "aot_eager": ("debug",), "aot_eager_decomp_partition": ("debug",),
            "aot_eager_default_partitioner": ("debug",), "eager_debug": ("debug",), "eager_noexcept": ("debug",),
            "pre_dispatch_eager": ("debug",), "print": ("debug",), "aot_ts": ("experimental",),
            "ts": ("experimental",), "openxla_eval": ("experimental",), "invoke_subgraph": ("debug",)}
_CUSTOM = {}            # registered backends: name -> the function (never called: see warn_custom)
_default = ["inductor"]


def list_backends(exclude_tags=("debug", "experimental")):
    """The backend names ``compile`` accepts (all run tapegrad's replay), as torch lists them."""
    exclude = set(exclude_tags or ())
    return sorted(n for n, tags in BACKENDS.items() if not exclude.intersection(tags))


def lookup_backend(compiler_fn):
    """A backend by name (the registered function, or the name itself for a built-in one); unknown names raise
    torch's ``InvalidBackend``."""
    if callable(compiler_fn):
        return compiler_fn
    from .exc import InvalidBackend
    if compiler_fn not in BACKENDS:
        raise InvalidBackend(compiler_fn)
    return _CUSTOM.get(compiler_fn, compiler_fn)


def register_backend(compiler_fn=None, name=None, tags=()):
    """Register a backend under ``name`` (its ``__name__`` by default), as a decorator or a call; ``compile``
    then accepts the name (and warns that tapegrad's replay runs instead of it)."""
    if compiler_fn is None:
        return functools.partial(register_backend, name=name, tags=tags)
    name = name or compiler_fn.__name__
    BACKENDS[name] = tuple(tags)
    _CUSTOM[name] = compiler_fn
    return compiler_fn


_warned_custom = set()


def warn_custom(backend):
    """A callable or registered backend is not called (tapegrad has no FX graph): say so, once per backend."""
    fn = backend if callable(backend) else _CUSTOM.get(backend)
    if fn is None or id(fn) in _warned_custom:
        return
    _warned_custom.add(id(fn))
    warnings.warn(f"tapegrad.compile: the backend {getattr(fn, '__name__', fn)!r} is not called: tapegrad records "
                  "the ops a call runs and replays them (there is no FX graph to hand a backend); the results are "
                  "eager's", stacklevel=3)


def get_default_backend():
    return _default[0]


def set_default_backend(backend):
    lookup_backend(backend)
    _default[0] = backend


def is_dynamo_compiling():
    """True while a capture runs (torch: while dynamo traces); see ``is_compiling``."""
    from . import is_compiling
    return is_compiling()


def is_exporting():
    """False: tapegrad has no ``torch.export``."""
    return False


def allow_in_graph(fn):
    """torch: trace ``fn`` as one node. tapegrad records the ops ``fn`` runs anyway: ``fn`` comes back as it is."""
    return fn


def disallow_in_graph(fn):
    """torch: calls to ``fn`` break the graph. tapegrad: ``fn`` comes back as it is (its ops are recorded)."""
    return fn


def assume_constant_result(fn):
    """torch: the result is a constant of the trace. tapegrad: ``fn`` comes back as it is (it runs each call)."""
    return fn


def nested_compile_region(fn=None, **kwargs):
    """torch: compile ``fn`` once and reuse it. tapegrad: ``fn`` comes back as it is (its ops are recorded)."""
    if fn is None:
        return lambda f: f
    return fn


def substitute_in_graph(original_fn, *, can_constant_fold_through=False, skip_signature_check=False):
    """torch: trace the decorated polyfill in place of ``original_fn``. tapegrad records what ``original_fn``
    runs, so the decorated function calls ``original_fn`` (as torch's does outside a trace)."""
    def deco(polyfill):
        @functools.wraps(polyfill)
        def wrapped(*args, **kwargs):
            return original_fn(*args, **kwargs)
        return wrapped
    return deco


def cudagraph_mark_step_begin():
    """Nothing to do: there are no CUDA graphs on the CPU."""


def wrap_numpy(fn):
    """``fn`` written on NumPy arrays, called with tensors: tensor arguments become arrays and array results
    tensors (torch's ``torch.compiler.wrap_numpy``). Not differentiable."""
    import numpy as np

    from ..tensor import Tensor

    def to_np(v):
        if isinstance(v, Tensor):
            return v.detach().numpy()
        if isinstance(v, (list, tuple)):
            return type(v)(to_np(x) for x in v)
        if isinstance(v, dict):
            return {k: to_np(x) for k, x in v.items()}
        return v

    def to_t(v):
        if isinstance(v, np.ndarray):
            return Tensor._make(v)
        if isinstance(v, (list, tuple)):
            return type(v)(to_t(x) for x in v)
        if isinstance(v, dict):
            return {k: to_t(x) for k, x in v.items()}
        return v

    @functools.wraps(fn)
    def wrapped(*args, **kwargs):
        return to_t(fn(*to_np(args), **to_np(kwargs)))
    return wrapped


def graph_break(msg=""):
    """Break the capture running now (torch's ``torch._dynamo.graph_break``): the call runs eagerly, and
    ``fullgraph=True`` raises. Outside a capture it does nothing."""
    from ..autograd.function import active_interpreters
    from .capture import Capture
    for interp in reversed(active_interpreters()):
        if isinstance(interp, Capture):
            if not interp.broken:
                interp.brk("torch._dynamo.graph_break() was called" + (f": {msg}" if msg else ""))
            return


def mark_dynamic(t, index, **kwargs):
    """torch: treat dimension(s) ``index`` of ``t`` as dynamic from the first capture. tapegrad learns dynamic
    sizes from captures at other sizes (``compile``'s ``dynamic``), so the hint changes nothing (and, as in torch,
    the index is not checked)."""


def maybe_mark_dynamic(t, index):
    """(as ``mark_dynamic``)"""


def mark_static(t, index=None):
    """torch: keep these sizes (or a module's) static. tapegrad's captures are static until a size changes."""


def mark_static_address(t, guard=True):
    """(a CUDA graphs hint: nothing to do on the CPU)"""


def optimize(backend="inductor", *, nopython=False, guard_export_fn=None, guard_fail_fn=None, disable=False,
             dynamic=None, **kwargs):
    """torch's older spelling of ``compile``: ``torch._dynamo.optimize(backend)(fn)``; ``nopython`` is
    ``fullgraph``."""
    from . import compile as _compile
    from .exc import InvalidBackend
    if not callable(backend) and backend not in BACKENDS:
        raise InvalidBackend(backend)
    return functools.partial(_compile, backend=backend, fullgraph=nopython, dynamic=dynamic, disable=disable)


def optimize_assert(backend="inductor", **kwargs):
    """``optimize(backend, nopython=True)``."""
    return optimize(backend, nopython=True, **kwargs)


def run(fn=None):
    """torch: run ``fn`` with the programs already compiled, compiling nothing new. tapegrad: ``fn`` as it is."""
    return fn


def save_cache_artifacts():
    """None: tapegrad keeps no compile cache on disk (a capture is one eager call)."""
    return None


def load_cache_artifacts(serialized_artifacts):
    """None: there is nothing to load (see ``save_cache_artifacts``)."""
    return None


# guard filters (torch.compile's ``options={"guard_filter_fn": ...}``): tapegrad's guards are its own and do not
# consult a filter; these answer as torch's do on the guard entries they are given
def _entries_filter(keep):
    def flt(guard_entries):
        return [bool(keep(e)) for e in guard_entries]
    return flt


keep_tensor_guards_unsafe = _entries_filter(lambda e: getattr(e, "guard_type", "") in ("TENSOR_MATCH",))
skip_guard_on_inbuilt_nn_modules_unsafe = _entries_filter(lambda e: not getattr(e, "is_inbuilt_nn_module", False))
skip_guard_on_all_nn_modules_unsafe = _entries_filter(lambda e: not getattr(e, "is_nn_module", False))
skip_guard_on_globals_unsafe = _entries_filter(lambda e: not getattr(e, "is_global", False))
keep_portable_guards_unsafe = _entries_filter(lambda e: True)
skip_all_guards_unsafe = _entries_filter(lambda e: False)
