"""Runtime: the compiled callable, its cache of captured programs, and the region's one graph node.

``Compiled(fn)`` is what ``tapegrad.compile`` returns. A call looks for a cache entry whose guards hold; none:
it captures (the call runs eagerly under ``Capture`` and its eager result is returned) and adds an entry; past
``config.cache_size_limit`` entries it warns once and runs eagerly. An entry whose capture met a graph break runs
the function eagerly for that guard set (and ``fullgraph=True`` raised ``Unsupported`` instead).

A replayed call is one ``CompiledFunction`` op: one node (``CompiledFunctionBackward``, as torch's AOTAutograd
names it) whose edges go to the region's inputs (arguments, parameters, free tensors) and whose outputs are the
program's outputs. Its forward runs the generated forward on the input arrays; its backward (arrays in, arrays
out: ``array_backward``) runs the generated backward. With ``create_graph`` the backward reruns the function
eagerly and differentiates that (a recorded graph: higher derivatives work, as in eager mode).
"""

from __future__ import annotations

import functools
import gc
import warnings

from .. import _dtype
from ..autograd import function as _f
from ..autograd.function import Primitive, SavedTensor
from ..autograd.grad_mode import _state, enable_grad
from ..tensor import Size, Tensor
from . import capture as capture_mod
from . import codegen, guards
from . import dynamic as _dynamic
from . import settings as _settings
from .capture import Capture, GraphBreak, Program
from .exc import RecompileError, Unsupported

__all__ = ["Compiled", "CompiledFunction", "Unsupported", "config"]


config = _settings.load("dynamo")      # (torch._dynamo.config: recompile_limit, error_on_recompile, ...)
_disabled = [0]          # tapegrad.compiler.disable()'s depth (a context manager) or a global switch
_all = []                # weak references to every Compiled made (for reset)


class _State:
    """What a replayed region's node keeps: the contexts and arrays its backward needs, and the call (for the
    create_graph path)."""

    __slots__ = ("cs", "call", "inputs")

    def __init__(self, cs, call, inputs):
        self.cs, self.call, self.inputs = cs, call, inputs


class CompiledFunction(Primitive):
    """A compiled region as one op: forward and backward are the generated straight-line programs."""

    node_name = "CompiledFunctionBackward"
    array_backward = True

    @staticmethod
    def forward(ctx, *arrays, _entry, _call):
        outs, cs = _entry.forward(arrays)
        inputs = ctx._inputs
        if _entry.writebacks:
            outs = _entry.write_back(outs, inputs)
        ctx._entry = _entry
        ctx._to_save = (_State(cs, _call, inputs), *[inputs[k] for k in _entry.saved_slots])
        if _entry.non_diff:
            ctx.mark_non_differentiable(*[outs[j] for j in _entry.non_diff])
        return outs

    @staticmethod
    def backward(ctx, *grads):
        st = ctx.saved_tensors[0]        # (checks the saved inputs' versions; raises after a release)
        entry = ctx._entry
        if ctx._arrays:
            return entry.backward(st.cs, grads)
        if not _state.enabled:           # Tensors (a hook or autograd.grad watches this node), no graph needed
            res = entry.backward(st.cs, tuple(None if g is None else g._array for g in grads))
            return tuple(None if g is None else Tensor._make(g) for g in res)
        return entry.eager_backward(st, grads)


class Entry:
    """One captured program and its guards."""

    def __init__(self, compiled, prog, check, reason=None):
        self.compiled, self.prog, self.check = compiled, prog, check
        self.eager = reason is not None
        self.reason = reason
        self.forward = self.backward = None
        self.sources = (None, None)
        self.calls = 0
        self.relaxed = None      # the guards with every argument size free (automatic dynamic: see __call__)
        self.consts = {}
        self.out_values = ()
        self.dynamic_reason = None   # why this capture could not be made generic with the one before it
        self.pending = None      # a generic program not yet checked at a third size: the input shapes it knows
        self.shape_misses = 0    # calls run eagerly because a data-dependent shape differed from the capture's
        self.dd_failed = None    # why this program could not be made generic in its data-dependent shapes

    def build(self, out_values, with_grad):
        prog = self.prog
        with_grad = with_grad and bool(out_values)    # (nothing to differentiate: the forward-only program)
        self.out_values = out_values
        self.with_grad = with_grad
        slot = {inp[2]: k for k, inp in enumerate(prog.inputs)}
        self.writebacks = tuple((slot[i], v) for i, v in prog.writebacks.items())
        self.forward, self.backward, self.sources = codegen.generate(
            prog, out_values, with_grad, extra=[v for _, v in self.writebacks])
        live, _ = codegen.live_ops(prog, out_values) if with_grad else ([], None)
        saved = set()
        for rec, is_live in zip(prog.ops, live):
            if is_live:
                saved.update(rec.saved)
        self.saved_slots = tuple(k for k, inp in enumerate(prog.inputs) if inp[2] in saved)
        self.saved_outs = tuple(j for j, v in enumerate(out_values) if v in saved)
        self.non_diff = tuple(j for j, v in enumerate(out_values)
                              if not prog.rg[v] and prog.meta[v][1].kind in "fc")

    def write_back(self, outs, inputs):
        """An input the function changed in place (a buffer's counter): the new value written into it, its
        version bumped, as the eager in-place op would."""
        n = len(self.out_values)
        for (k, _), arr in zip(self.writebacks, outs[n:]):
            t = inputs[k]
            t._array[...] = arr
            t._vc[0] += 1
        return outs[:n]

    def run(self, ins, args, kwargs):
        self.calls += 1
        if self.eager:
            return self.compiled._fn(*args, **kwargs)
        try:
            return self._replay(ins, args, kwargs)
        except codegen.ShapeChanged:
            # a data-dependent shape (a mask's count) differs from the capture's: the recorded shapes after it
            # would be stale, so this call runs eagerly (nothing was written: see Capture's ``dd``), captured
            # when the program may become generic in those shapes (``dynamic.generalize(dd=True)``)
            self.shape_misses += 1
            if self.dd_failed is None and self.compiled.dynamic is not False and self in self.compiled.entries \
                    and (self.prog.dyn is None or self.prog.dd_known is not None):
                return self.compiled._capture(args, kwargs, dd_base=self)
            return self.compiled._fn(*args, **kwargs)

    def _replay(self, ins, args, kwargs):
        if not self.out_values and not self.writebacks:
            outs = ()
        elif self.with_grad:
            outs = CompiledFunction.apply(*ins, _entry=self, _call=(args, kwargs))
            if self.saved_outs:
                node = next(o.grad_fn for o in outs if o.grad_fn is not None)
                extra = tuple(SavedTensor(outs[j], j) for j in self.saved_outs)
                node._saved = node._saved + extra
                node._saved_versions = node._saved_versions + (None,) * len(extra)
        else:
            arrs = self.forward(tuple(t._array for t in ins))
            if self.writebacks:
                arrs = self.write_back(arrs, ins)
            outs = tuple(Tensor._make(a) for a in arrs)
        return self.rebuild(outs, ins)

    def eager_backward(self, st, grads):
        """create_graph through the region: rerun the function eagerly (recorded) and differentiate that."""
        from ..autograd import grad as _grad
        args, kwargs = st.call
        with enable_grad():
            res = self.compiled._fn(*args, **kwargs)
        leaves = [x for x in _flat_out(res)]
        outs, gs = [], []
        for j in range(len(self.out_values)):
            t = leaves[self.out_leaf[j]]
            if isinstance(t, Tensor) and t._rg and grads[j] is not None:
                outs.append(t)
                gs.append(grads[j])
        want = [k for k, t in enumerate(st.inputs) if t._rg]
        res = [None] * len(st.inputs)
        if outs and want:
            got = _grad(outs, [st.inputs[k] for k in want], gs, create_graph=True, allow_unused=True)
            for k, g in zip(want, got):
                res[k] = g
        return tuple(res)


def _guarded(fn, *args):
    """generalize / verify: a reason string where they could not compare (an unforeseen constant), never an
    error in the user's call (the program then stays static for its sizes: correct, just not shared)."""
    try:
        return fn(*args)
    except Exception as e:  # pragma: no cover - a safety net
        return f"the captures could not be compared ({type(e).__name__}: {e})"


def _shapes(prog):
    return tuple(prog.meta[inp[2]][0] for inp in prog.inputs)


def _flat_out(obj, depth=0):
    t = type(obj)
    if depth < 8 and isinstance(obj, tuple) and t is not Size:
        for o in obj:
            yield from _flat_out(o, depth + 1)
    elif depth < 8 and t is list:
        for o in obj:
            yield from _flat_out(o, depth + 1)
    elif depth < 8 and t is dict:
        for o in obj.values():
            yield from _flat_out(o, depth + 1)
    else:
        yield obj


def _out_source(obj, leaf, depth=0):
    """Source rebuilding the result's structure; ``leaf(obj)`` gives a leaf's expression."""
    t = type(obj)
    if depth < 8 and isinstance(obj, tuple) and t is not Size:
        items = [_out_source(o, leaf, depth + 1) for o in obj]
        if t is tuple:
            return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
        cls = leaf(t, const=True)
        if hasattr(t, "_fields"):
            return f"{cls}(" + ", ".join(items) + ")"
        return f"{cls}((" + ", ".join(items) + ("," if len(items) == 1 else "") + "))"
    if depth < 8 and t is list:
        return "[" + ", ".join(_out_source(o, leaf, depth + 1) for o in obj) + "]"
    if depth < 8 and t is dict:
        return "{" + ", ".join(f"{k!r}: {_out_source(o, leaf, depth + 1)}" for k, o in obj.items()) + "}"
    return leaf(obj)


_PLAIN_OUT = (*guards.SIMPLE, _dtype.dtype, Size)


class Compiled:
    """What ``tapegrad.compile(fn)`` returns: calls ``fn`` through the cache of captured programs."""

    def __init__(self, fn, *, fullgraph=False, dynamic=False, backend=None, mode=None, options=None,
                 module=None, disable=False):
        self._fn = fn
        self._orig_mod = module
        self.fullgraph, self.dynamic, self.backend, self.mode, self.options = fullgraph, dynamic, backend, mode, \
            options
        self.disabled = disable
        self.entries = []
        self.captures = 0        # how many calls were captured (each ran eagerly while recording)
        self._warned = False
        self._seen = False       # (stance "eager_then_compile": the first call ran eagerly)
        self._printed = set()
        import weakref
        _all.append(weakref.ref(self))
        functools.update_wrapper(self, fn, updated=())

    def __deepcopy__(self, memo):
        """A copy (``copy.deepcopy`` of a module compiled in place) starts with no programs: the cached ones
        name the original's parameters and modules."""
        import copy
        return Compiled(copy.deepcopy(self._fn, memo), fullgraph=self.fullgraph, dynamic=self.dynamic,
                        backend=self.backend, mode=self.mode, options=self.options,
                        module=copy.deepcopy(self._orig_mod, memo), disable=self.disabled)

    def __getstate__(self):
        state = dict(self.__dict__)
        state["entries"] = []          # (generated code does not pickle; the next call captures again)
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        import weakref
        _all.append(weakref.ref(self))

    def __get__(self, obj, objtype=None):          # used as a method decorator
        if obj is None:
            return self
        return functools.partial(self.__call__, obj)

    def __call__(self, *args, **kwargs):
        if self.disabled or _disabled[0] or _f._active[0] or _state.saved_hooks or _f._site_hook is not None:
            return self._fn(*args, **kwargs)
        for e in self.entries:
            ins = e.check(args, kwargs)
            if ins is not None:
                if e.pending is not None and tuple(t._array.shape for t in ins) not in e.pending:
                    return self._capture(args, kwargs, verify=e)      # a generic program's third size
                return e.run(ins, args, kwargs)
        if self.entries or _settings.current[0] != "default" or config.error_on_recompile:
            if self._stance_says_eager():
                return self._fn(*args, **kwargs)
        if len(self.entries) >= config.cache_size_limit:
            if not self._warned:
                self._warned = True
                warnings.warn(f"tapegrad.compile hit config.cache_size_limit ({config.cache_size_limit})\n"
                              f"   function: {getattr(self._fn, '__qualname__', repr(self._fn))!r}\n"
                              "   the guards failed for every cached program (shapes, dtypes, requires_grad, grad "
                              "mode, a module's training flag, parameters or globals changed): it now runs "
                              "eagerly for new guard sets.", stacklevel=2)
            return self._fn(*args, **kwargs)
        base = None
        if self.dynamic is not False:
            # automatic dynamic: a cached program whose guards fail only on argument sizes: capture this call
            # and try to make the two one generic program (dynamic.py)
            base = next((e for e in reversed(self.entries)
                         if e.relaxed is not None and e.relaxed(args, kwargs) is not None), None)
        return self._capture(args, kwargs, base=base)

    def _stance_says_eager(self):
        """Before a capture: whether the stance runs this call eagerly (or raises, for "fail_on_recompile")."""
        st = _settings.current[0]
        if st == "eager_then_compile" and not self._seen:
            self._seen = True
            return True
        if not self.entries:
            return False
        if st == "fail_on_recompile" or config.error_on_recompile:
            code = getattr(self._fn, "__code__", None)
            where = (f"filename: {code.co_filename!r}, function name: {code.co_name!r}, line number: "
                     f"{code.co_firstlineno}" if code is not None else f"function: {self._fn!r}")
            raise RecompileError(f"Detected recompile when torch.compile stance is 'fail_on_recompile'. {where}\n"
                                 "    triggered by: no cached program's guards hold for this call (shapes, dtypes, "
                                 "requires_grad, grad mode, a module's training flag, parameters or globals)")
        return st == "eager_on_recompile"

    # --- capture --------------------------------------------------------------------------------------------
    def _capture(self, args, kwargs, explain=False, base=None, verify=None, dd_base=None):
        prog = Program()
        cap = Capture(prog, fullgraph=self.fullgraph and not explain,
                      symbolic=self.dynamic is not False and not explain)
        cap.collect_all = explain
        leaves, containers = guards.flatten_args(args, kwargs)
        for path, v in leaves:
            if isinstance(v, Tensor):
                cap.add_arg(v, path)
        prog.grad_enabled = _state.enabled
        gc_was = gc.isenabled()
        gc.disable()          # (the capture's own bookkeeping would make the cyclic collector rescan it often)
        try:
            return self._capture_run(cap, prog, args, kwargs, leaves, containers, explain, base, verify, dd_base)
        finally:
            if gc_was:
                gc.enable()

    def _capture_run(self, cap, prog, args, kwargs, leaves, containers, explain, base=None, verify=None,
                     dd_base=None):
        cap.start()
        try:
            res = self._fn(*args, **kwargs)
        except GraphBreak as e:
            cap.stop_quietly()
            raise Unsupported(f"tapegrad.compile(fullgraph=True): graph break: {e}") from None
        except BaseException:
            cap.stop_quietly()
            raise
        try:
            if cap.stale and not cap.broken:     # (a returned view whose root was written: made again from it)
                for o in _flat_out(res):
                    if isinstance(o, Tensor):
                        cap.current(o)
            cap.stop()
        except GraphBreak as e:
            raise Unsupported(f"tapegrad.compile(fullgraph=True): graph break: {e}") from None
        # the result's leaves
        out_values, out_leaf, nleaf = [], [], [0]
        consts = {}
        n_ops = len(prog.ops)
        copies = {}          # a factory's tensor returned -> its copy made per call (capture.Fresh)

        def leaf(obj, const=False):
            if const or not isinstance(obj, Tensor):
                if not const and not isinstance(obj, _PLAIN_OUT):
                    cap.brk(f"the function returned a {type(obj).__name__}, which the replay cannot rebuild")
                name = f"C{len(consts)}"
                consts[name] = obj
                if not const:
                    nleaf[0] += 1
                return name
            pos = nleaf[0]
            nleaf[0] += 1
            idx = cap.vals.get(id(obj))
            if idx is None and id(obj) in cap.direct_made and not cap.broken:
                idx = cap.value_of(obj)       # (a factory's tensor: a constant, copied per call below)
            if idx is None:
                cap.brk("the function returned a tensor made outside any op (a factory such as zeros)")
                return "None"
            if idx in prog.made and not cap.broken:
                # a factory's tensor (a constant of the program): each call returns its own copy, as each eager
                # call made its own
                if prog.rg[idx]:
                    cap.brk("the function returned a tensor a factory made with requires_grad=True (a new leaf "
                            "per call)")
                    return "None"
                if idx not in copies:
                    copies[idx] = capture_mod.fresh_output(prog, idx)
                idx = copies[idx]
            elif idx in cap.input_values:
                k = next(k for k, inp in enumerate(prog.inputs) if inp[2] == idx)
                return f"i[{k}]"
            if idx not in out_values:
                out_values.append(idx)
                out_leaf.append(pos)
            return f"o[{out_values.index(idx)}]"

        try:
            src = _out_source(res, leaf)
            if not n_ops and not cap.broken and not any(isinstance(o, Tensor) for o in _flat_out(res)):
                # (an optimizer's step writes arrays directly and returns no tensor: nothing a replay could repeat)
                cap.brk("no op was recorded and no tensor was returned: nothing to replay (changes the function "
                        "makes outside the ops would be lost)")
        except GraphBreak as e:
            raise Unsupported(f"tapegrad.compile(fullgraph=True): graph break: {e}") from None
        modules = list(self._orig_mod.modules()) if self._orig_mod is not None else []
        fns = [type(m).forward for m in modules] if modules else [self._fn]
        reads = guards.python_reads(fns, modules)
        mod_set = []
        for m in modules:
            mod_set.extend(m.modules())
        prog.modules = mod_set
        check = guards.build(prog, leaves, containers, mod_set, reads)
        prog.guard_src = check.source
        if explain:
            return res, prog, out_values
        self.captures += 1
        relaxed, why = None, None
        dd_known = None
        if dd_base is not None:
            # a data-dependent shape (a mask's count) changed at a replay: this call was captured (its result is
            # the eager one); the two programs may become one generic in those shapes (as automatic dynamic does
            # for argument sizes), trusted after a third shape agrees (verify); else the static program stays and
            # its later misses run eagerly
            if dd_base.prog.dd_known is not None:
                why = _guarded(_dynamic.verify, dd_base.prog, prog, dd_base.out_values, out_values, dd_base.consts,
                               consts, True)
                if why is None:
                    for known in dd_base.prog.dd_known.values():
                        known.all = True
                    return res
                self.entries.remove(dd_base)
            elif not prog.breaks:
                why = _guarded(_dynamic.generalize, dd_base.prog, prog, dd_base.out_values, out_values,
                               dd_base.consts, consts, True)
                if why is None:
                    self.entries.remove(dd_base)
                    dd_known = {v: _dynamic.Known({dd_base.prog.meta[v][0], prog.meta[v][0]})
                                for rec in prog.ops if rec.dd for v in rec.outs if v is not None}
                    prog.dd_known = dd_known
            if dd_known is None:
                dd_base.dd_failed = why or "a graph break"
                if dd_base in self.entries:
                    return res
        if verify is not None:
            why = _guarded(_dynamic.verify, verify.prog, prog, verify.out_values, out_values, verify.consts, consts)
            if why is None:
                verify.pending = None          # the generic program predicted this capture: trusted from now on
                return res
            self.entries.remove(verify)        # it did not: forget it; this call's program is a static one
            base = None
        if self.dynamic is not False and not prog.breaks and dd_base is None:
            if base is not None:
                why = _guarded(_dynamic.generalize, base.prog, prog, base.out_values, out_values, base.consts,
                               consts)
                if why is None:
                    check = guards.build(prog, leaves, containers, mod_set, reads, prog.dyn, prog.dyn_relations)
                    prog.guard_src = check.source
            if prog.dyn is None:
                free = {k: dict.fromkeys(range(len(prog.meta[inp[2]][0]))) for k, inp in enumerate(prog.inputs)
                        if inp[0] == "arg"}
                if free:
                    relaxed = guards.build(prog, leaves, containers, mod_set, reads, free)
        entry = Entry(self, prog, check, reason=prog.breaks[0] if prog.breaks else None)
        entry.relaxed, entry.consts, entry.dynamic_reason = relaxed, consts, why
        if dd_base is not None and dd_known is None:
            entry.dd_failed = why          # (a generic program that failed its third shape: this one stays static)
        if prog.dyn is not None and dd_known is None:
            entry.pending = {_shapes(base.prog), _shapes(prog)}
        if not entry.eager:
            ns = dict(consts)
            code = f"def rebuild(o, i):\n    return {src}\n"
            exec(compile(code, "<tapegrad.compile outputs>", "exec"), ns)
            entry.rebuild = ns["rebuild"]
            entry.out_leaf = out_leaf
            with_grad = _state.enabled and any(prog.rg[inp[2]] for inp in prog.inputs)
            entry.build(out_values, with_grad)
            if self.backend == "print":
                self._print(entry)
        if prog.dyn is not None and self.dynamic is True and dd_known is None:
            self.entries.remove(base)          # dynamic=True: the generic program replaces the first one
        self.entries.append(entry)
        return res

    def _print(self, entry):
        name = type(self._orig_mod).__name__ if self._orig_mod is not None else getattr(self._fn, "__name__", "f")
        if not name.isidentifier():
            name = "f"
        print(f"# tapegrad.compile(backend='print'): {name}, program {len(self.entries) + 1}")
        print(codegen.listing(entry.prog, entry.out_values, name))

    def reset(self):
        self.entries = []
        self._warned = False


# Capture.stop without raising (used when the function itself raised)
def _stop_quietly(self):
    fg = self.fullgraph
    self.fullgraph = False
    try:
        self.stop()
    finally:
        self.fullgraph = fg


Capture.stop_quietly = _stop_quietly
