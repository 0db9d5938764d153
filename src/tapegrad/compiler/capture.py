"""Capture: run a function eagerly once while recording every op call into a flat program.

``Capture`` is an ``Interpreter`` (``autograd/function.py``): while it is active, each ``SomeOp.apply(...)`` comes
to its ``process``, which runs the op eagerly (``call_next``) and writes down one ``OpRecord``: the op class, which
arguments were values of the program (tensors: inputs or earlier outputs) and which were constants, the keyword
arguments, the output values, and what the eager node knew (``needs_input_grad``, the inputs' shapes and dtypes).

Program values are numbered: first the region's inputs (the tensors among the call's arguments, found by path,
then the *free* tensors the function reached by itself: parameters, buffers, tensors in globals or closures,
constants it made), then every op output in order. A tensor is identified by its object while the capture runs
(the capture keeps a reference to each one, so no identity is reused).

What cannot be replayed is a *graph break*: the capture notes the reason and lets the eager run finish (the
call's result is the eager one). Causes: reading a tensor's data into Python (``.item()``, ``bool``, ``.tolist()``,
``print``, ``.numpy()``), a user ``autograd.Function``, a hook or ``backward`` inside the region, writing into an
input in place, random numbers drawn outside an op, an op given a computed tensor inside a container, and
function transforms entered inside the region. The Tensor methods are wrapped only while a capture runs, so eager
code pays nothing for this.
"""

from __future__ import annotations

from sys import _getframe
from threading import get_ident as _get_ident

import numpy as np

from .. import _random
from ..autograd import engine as _engine
from ..autograd import function as _f
from ..autograd.grad_mode import _state
from ..ops import _util
from ..tensor import Tensor
from . import dynamic as _dyn

__all__ = ["Capture", "OpRecord", "Program", "GraphBreak"]


class GraphBreak(Exception):
    """Raised inside a capture with ``fullgraph=True`` (wrapped into ``Unsupported`` by the caller)."""


class OpRecord:
    """One op call of the program: ``cls.forward`` on ``args`` (``("v", index)`` for a program value, ``("c",
    obj)`` for a constant) and ``kwargs``, giving the values ``outs`` (None where an output is not a tensor)."""

    __slots__ = ("cls", "args", "kwargs", "outs", "nig", "input_meta", "out_meta", "recorded", "site", "out_rg",
                 "saved", "multi", "dd")

    def __init__(self, cls, args, kwargs, outs, node, out_rg):
        self.cls, self.args, self.kwargs, self.outs, self.out_rg = cls, args, kwargs, outs, out_rg
        self.recorded = node is not None
        if node is not None:
            self.nig = tuple(node.needs_input_grad)
            self.input_meta = tuple(node._input_meta)
            self.out_meta = tuple(node._out_meta)
        else:
            self.nig = self.input_meta = self.out_meta = None
        self.site = None
        self.saved = []      # the program values the eager node kept for backward
        self.multi = False   # the forward gives a tuple (of one: split into one piece)
        self.dd = False      # its output shapes depend on its input's values (a mask): the replay checks them

    @property
    def name(self):
        return self.cls.__name__


class Program:
    """What a capture found: ``inputs`` (one per input value: ``("arg", path)`` or ``("free", tensor)``), ``ops``,
    the meta (shape, dtype) of every value, and ``outputs`` (the call's result as a tree whose tensor leaves name
    values: see ``runtime``)."""

    def __init__(self):
        self.inputs = []         # ("arg", path, value) | ("free", tensor, value)
        self.meta = []           # value index -> (shape, dtype)
        self.rg = []             # value index -> requires_grad during the capture
        self.ops = []
        self.out_tree = None     # the result's structure (runtime.flatten's spec)
        self.out_leaves = []     # ("v", index) | ("c", obj)
        self.duplicates = []     # (path, first_path): the same tensor passed twice
        self.writebacks = {}     # input value -> its new value (an input changed in place, nothing recorded)
        self.breaks = []         # the reasons of the graph breaks met
        self.break_at = []       # how many ops had been recorded at each
        self.modules = []        # modules whose state the guards check
        self.grad_enabled = True
        self.relations = []      # (lhs, op, rhs, result): comparisons of sizes that user code made (dynamic.py)
        self.made = set()        # values made by factories in the region (program constants)
        self.dyn = None          # {slot: {dim: group}} for a generic program (dynamic.generalize)
        self.dyn_relations = ()
        self.meta_alt = None     # the other capture's shapes, for a generic program
        self.fills = {}          # value -> (shape with Syms, dtype, value): a generic program's zeros(batch, n)
        self.wrote = False       # an op changed an input's array in place in its forward (a running statistic)
        self.dd_known = None     # a program generic in its data-dependent shapes: value -> the shapes it accepts


_MISSING = object()


def _version(t):
    vc = t._vcl
    return 0 if vc is None else vc[0]


def _rng_state():
    """The default generator's draw count (``_random.Generator._version``: moves on every draw or reseed)."""
    return _random.default_generator._version


class Capture(_f.Interpreter):
    """The interpreter that records a program while the function runs eagerly (see the module's docstring)."""

    index_args = True    # indexing hands its index tensors to the op (``ops._util.capturing``)

    def __init__(self, program, fullgraph=False, symbolic=False):
        self.prog = program
        self.symbolic = symbolic   # user code reads sizes as SymInts (dynamic.py)
        self.free_values = set()
        self.fullgraph = fullgraph
        self.vals = {}          # id(tensor) -> value index
        self.keep = []          # every tensor seen (so that no id is reused while capturing)
        self.pending = {}       # id -> tensor written in place outside apply_inplace (setitem, out=)
        self.broken = False
        self.collect_all = False   # explain: note every break and go on recording
        self.inside = 0            # > 0 while an op runs (tensors made then are its outputs)
        self.factory = 0           # > 0 while a factory (zeros, arange, tensor...) runs
        self.outside = set()       # ids of tensors made outside any op and any factory during the capture
        self.made_here = set()     # ids of tensors the factories made during the capture (program constants)
        self.input_values = set()
        self.versions = []      # (input tensor, its version when last looked at): changed outside an op = break
        self.arrays = {}        # id(ndarray) -> the value whose array it is
        self.written_inputs = program.writebacks   # input value -> the value written into it in place
        self.rng = None
        self._saved_methods = None
        self._prev_hooks = None
        self.saved_tensors = []    # the tensors recorded ops saved for backward (a write into one: eager's error)
        self.stale = {}            # id -> a view whose root was written since its value was recorded
        self.bookkeeping = False   # apply_inplace's own CopySlices/AsStrided calls after a write the capture handled
        self.snapshots = set()     # ids of factory-made tensors written in place (the program keeps a copy)
        self.tainted = set()       # ids of version counters of tensors viewed through a tensor's value (x[t])
        self.direct_made = {}      # id -> a tensor a factory made, called by a reference taken before the capture

    # --- values -------------------------------------------------------------------------------------------
    def _new_value(self, t):
        arr = t._array
        idx = len(self.prog.meta)
        self.prog.meta.append((arr.shape, arr.dtype))
        self.prog.rg.append(bool(t._rg))
        self.vals[id(t)] = idx
        self.arrays.setdefault(id(arr), idx)
        self.keep.append(t)
        return idx

    def add_arg(self, t, path):
        idx = self.vals.get(id(t))
        if idx is not None:
            first = next(inp[1] for inp in self.prog.inputs if inp[2] == idx)
            self.prog.duplicates.append((path, first))
            return idx
        idx = self._new_value(t)
        self.prog.inputs.append(("arg", path, idx))
        self.input_values.add(idx)
        self.versions.append((t, _version(t)))
        return idx

    def current(self, t):
        """The value ``t`` holds now: a view whose root was written since (``stale``) is made again from the
        root's latest value (``_util.AsStrided``, recorded): a view reads its root's memory, as in eager mode."""
        if self.stale and id(t) in self.stale:
            del self.stale[id(t)]
            base = t._view
            r = self._record(_util.AsStrided, base[0], base[1])
            idx = self.vals.get(id(r))
            if idx is not None:
                self.vals[id(t)] = idx
            self.keep.append(r)
        return self.vals.get(id(t))

    def _record(self, cls, *args):
        """Run and record an op of the capture's own (outside an op call: through ``apply``, as user code's ops
        come; inside this interpreter's ``process``: ``process`` itself)."""
        self.bookkeeping = False
        if _state.top == self.level:
            return cls.apply(*args)
        return self.process(cls, args, {})

    def value_of(self, t):
        idx = self.current(t) if self.stale else self.vals.get(id(t))
        if idx is None:       # a tensor the function reached by itself: a parameter, a global, a constant it made
            if id(t) in self.outside:
                self.brk("a tensor computed outside the op mechanism (from another tensor's data, without a "
                         "recorded op) is used by an op: the replay could not recompute it")
            idx = self._new_value(t)
            self.prog.inputs.append(("free", t, idx))
            self.free_values.add(idx)
            self.input_values.add(idx)
            self.versions.append((t, _version(t)))
            if id(t) in self.direct_made:        # (a constant of the program, as the wrapped factories' results)
                self.prog.made.add(idx)
                self.made_here.add(id(t))
        return idx

    # --- breaks ---------------------------------------------------------------------------------------------
    def brk(self, reason):
        self.prog.breaks.append(reason)
        self.prog.break_at.append(len(self.prog.ops))
        if not self.collect_all:
            self.broken = True
        if self.fullgraph:
            raise GraphBreak(reason)

    def data_read(self, t):
        """An error check read ``t``'s values in Python (``ops._util.sample_data``: linalg's singularity checks,
        istft's window): the replay runs only the ops, so it would skip the check."""
        if not self.broken and not self.inside and self.mine():
            self.brk("an error check reads an op's result in Python (e.g. linalg.inv's test for a singular "
                     "matrix): the replay would skip it")

    # --- the op hook ----------------------------------------------------------------------------------------
    def process(self, cls, args, kwargs):
        if self.symbolic:       # an op gets plain ints, as in eager mode (its code may test ``type(n) is int``)
            args = tuple(_dyn.plain(a) for a in args)
            kwargs = {k: _dyn.plain(v) for k, v in kwargs.items()}
        if self.bookkeeping:
            if cls is _util.CopySlices or cls is _util.AsStrided:
                # (apply_inplace's graph bookkeeping after a write through a view: the capture recorded the write
                #  as ViewWrite and makes the views again from the new root when they are used)
                self.inside += 1
                try:
                    return self.call_next(cls, args, kwargs)
                finally:
                    self.inside -= 1
            self.bookkeeping = False
        if self.broken:
            return self.call_next(cls, args, kwargs)
        st = _state
        if len(st.interpreters) != self.level + 1:
            self.brk("a function transform (forward AD, vmap, ...) was entered inside the compiled region")
            return self.call_next(cls, args, kwargs)
        if self.pending:
            self._pending_break()
            return self.call_next(cls, args, kwargs)
        if not cls._array_forward:
            self.brk(f"a user autograd.Function ({cls.__name__}) cannot be replayed")
            return self.call_next(cls, args, kwargs)
        if not self._versions_kept():
            return self.call_next(cls, args, kwargs)
        state = _rng_state()
        if state != self.rng:
            self.brk("random numbers were drawn outside an op (a factory such as randn, rand or randint)")
            return self.call_next(cls, args, kwargs)
        spec = []
        for a in args:
            if isinstance(a, Tensor):
                spec.append(("v", self.value_of(a)))
            elif a.__class__ is np.ndarray:
                # a tensor's array passed raw (nll_loss's target): that value; an array from elsewhere may hold
                # values computed from a tensor's data outside the ops, which the replay could not recompute
                idx = self.arrays.get(id(a))
                if idx is None:
                    self.brk(f"{cls.__name__} was given a NumPy array that is no tensor's data")
                    return self.call_next(cls, args, kwargs)
                spec.append(("v", idx))
            else:
                if self._holds_computed(a):
                    self.brk(f"{cls.__name__} was given a computed tensor or an array inside a container")
                    return self.call_next(cls, args, kwargs)
                spec.append(("c", a))
        for v in kwargs.values():
            if isinstance(v, Tensor) or self._holds_computed(v):
                self.brk(f"{cls.__name__} was given a tensor as a keyword argument")
                return self.call_next(cls, args, kwargs)
        self.inside += 1
        try:
            out = self.call_next(cls, args, kwargs)
        finally:
            self.inside -= 1
        # what an op changes in place (a running statistic) its replay changes again: take the new versions
        versions = [(t, _version(t)) for t, _ in self.versions]
        if any(v != w for (_, v), (_, w) in zip(versions, self.versions)) or \
                any(kind == "c" and _has_tensor(a) for kind, a in spec):
            self.prog.wrote = True     # (tensors given as constants: BatchNorm's running statistics, written)
        self.versions = versions
        self.rng = _rng_state()
        outs = out if out.__class__ is tuple else (out,)
        node = None
        out_idx, out_rg = [], []
        for o in outs:
            if isinstance(o, Tensor):
                if node is None and o.grad_fn is not None and o.grad_fn._forward_cls is cls:
                    node = o.grad_fn
                if id(o) in self.vals:   # a forward that handed back one of its inputs
                    self.brk(f"{cls.__name__} returned one of its inputs")
                    return out
                out_idx.append(self._new_value(o))
                out_rg.append(bool(o._rg))
            else:
                out_idx.append(None)
                out_rg.append(False)
        if getattr(cls, "data_view", False):     # (x[t]: a write through this view would bake t's value)
            self.tainted.add(id(args[0]._vc))
        rec = OpRecord(cls, tuple(spec), dict(kwargs), tuple(out_idx), node, tuple(out_rg))
        rec.multi = out.__class__ is tuple
        if _data_shaped(cls, spec):
            # the replay checks this op's output shapes against these (a mask's count of True: the guard of a
            # data-dependent shape) and runs the call eagerly when they differ; an op before it that changed an
            # input in place would then have done so twice
            if self.prog.wrote:
                self.brk(f"{cls.__name__}'s output shape depends on data, after an op that changed an input in "
                         "place (a replay that meets another shape reruns the call eagerly)")
                return out
            rec.dd = True
        if node is not None:
            sv = node._saved
            if sv is not None and sv is not _f._FREED:
                for s, v in zip(sv, node._saved_versions):
                    if s.__class__ is _f.SavedTensor:
                        rec.saved.append(out_idx[s._output_nr])
                        self.saved_tensors.append(outs[s._output_nr])
                    elif v is not None and id(s) in self.vals:
                        rec.saved.append(self.vals[id(s)])
                        self.saved_tensors.append(s)
        self.prog.ops.append(rec)
        return out

    def _holds_computed(self, obj, depth=0):
        """Whether a container argument holds a tensor computed in this region (the replay cannot give it)."""
        if depth > 3:
            return False
        if isinstance(obj, Tensor):
            if id(obj) in self.outside:      # made from another tensor's data without an op
                return True
            idx = self.vals.get(id(obj))
            return idx is not None and not self._is_input_value(idx)
        if id(obj) in self.stale:
            return True
        if obj.__class__ is np.ndarray and depth > 0:
            return True           # an array inside a container (an index key): possibly a tensor's data
        if isinstance(obj, (list, tuple)):
            return any(self._holds_computed(o, depth + 1) for o in obj)
        if isinstance(obj, dict):
            return any(self._holds_computed(o, depth + 1) for o in obj.values())
        return False

    def _versions_kept(self):
        """Whether no input tensor was changed in place outside the ops since the last look (an optimizer's step
        writes arrays directly: the replay would not)."""
        for t, v in self.versions:
            if _version(t) != v:
                self.brk("an input tensor was changed in place outside the ops (e.g. an optimizer's step): the "
                         "replay could not repeat it")
                return False
        return True

    def _holds_tensor(self, obj, depth=0):
        if isinstance(obj, Tensor):
            return id(obj) in self.vals or id(obj) in self.outside
        if depth < 3 and isinstance(obj, (list, tuple)):
            return any(self._holds_tensor(o, depth + 1) for o in obj)
        return False

    def _is_input_value(self, idx):
        return idx in self.input_values

    def _pending_break(self):
        self.brk("a tensor was written in place outside an op (x[k] = v or out=)")

    # --- in-place writes (ops/_util.apply_inplace's hooks) ------------------------------------------------
    def alias(self, x, old):
        """apply_inplace made ``old``, a copy of x's history, to compute the new value from."""
        if not self.mine():
            return
        idx = self.current(x) if self.stale and not self.broken else self.vals.get(id(x))
        if idx is not None:
            self.vals[id(old)] = idx
            self.keep.append(old)

    def written(self, x, out):
        """apply_inplace wrote ``out`` into ``x``: x is now that value."""
        if not self.mine():
            return
        self.pending.pop(id(x), None)
        if self.broken:
            return
        idx = self.vals.get(id(x))
        if idx is None:
            self.brk("an in-place op wrote into a tensor the capture did not see")
            return
        vc = x._vcl
        if x._view is not None or (vc is not None and len(vc) > 1 and vc[1]):
            self._write_shared(x, out)
            return
        o = self.vals.get(id(out))
        if o is None:
            self.brk("an in-place op wrote a value the capture did not see")
            return
        if self._saved_written(x._vcl):
            return
        if x._rg and not _state.enabled:
            self._detached_write(x, x, out, None)
            return
        if id(x) in self.made_here:       # (the program keeps the factory's values: see before_write)
            self._refresh_versions(x._vc)
            self.vals[id(x)] = o
            return
        if self._is_input_value(idx) or idx in self.written_inputs.values():
            # an input changed in place (a buffer's counter, a running statistic): allowed when nothing records
            # it; the replay writes the new value back into the input after the forward (AOTAutograd's epilogue)
            if x._rg or out._rg:
                self.brk("an input of the region (argument, parameter or buffer) was changed in place while "
                         "recording a graph")
                return
            first = next((k for k, v in self.written_inputs.items() if v == idx), idx)
            self.written_inputs[first] = o
            self.pending.pop(id(x), None)
            self._refresh_version(x)
        self.vals[id(x)] = o

    def _write_shared(self, x, out):
        """An in-place op wrote ``out`` into a view ``x`` (or into a root ``x`` that has views), in a tensor made in
        the region: recorded functionally (torch's functionalization): the root's new value is ``ViewWrite(root,
        out)`` (for a root written itself: ``out``), and each view of it is made again from that value when used
        next (``current``)."""
        base = x._view
        root = base[0] if base is not None else x
        ridx, o = self.vals.get(id(root)), self.vals.get(id(out))
        if self.inside or ridx is None or o is None:
            self.brk("a view (or a tensor with views) was changed in place by an op the capture did not see")
            return
        if (self._is_input_value(ridx) and id(root) not in self.made_here) or ridx in self.written_inputs.values():
            self.brk("a view of an input of the region (or an input with views) was changed in place: the replay "
                     "could not repeat the write into the caller's tensor")
            return
        vcl = root._vc
        if id(vcl) in self.tainted:
            self.brk("a view made with a tensor's value (x[t], t a 0-d tensor) was changed in place")
            return
        if self._saved_written(vcl):
            return
        self._refresh_versions(vcl)
        if root._rg and not _state.enabled:
            self._detached_write(root, x, out, None if base is None else base[1])
            new = None
        elif base is None:
            new = o
        else:
            r = self._record(ViewWrite, root, out, base[1])
            if self.broken:
                return
            new = self.vals[id(r)]
            self.keep.append(r)
        if new is not None:
            self.vals[id(root)] = new
        views = vcl[1] if len(vcl) > 1 else {}
        for ref in list(views.values()):
            v = ref()
            if v is not None and v._view is not None and v._view[0] is root:
                self.stale[id(v)] = v
        self.bookkeeping = True

    def _detached_write(self, root, x, out, view_fn):
        """A write under no_grad into a tensor that requires grad: the data changes, the graph does not (eager
        keeps the root's history): ``DetachedWrite``, recorded with grad mode on so that the root's gradient goes
        through it unchanged."""
        if self._is_input_value(self.vals[id(root)]) and id(root) not in self.made_here:
            self.brk("an input of the region was changed in place under no_grad")
            return
        prev = _state.enabled
        _state.enabled = True
        try:
            r = self._record(DetachedWrite, root, out, view_fn)
        finally:
            _state.enabled = prev
        if not self.broken:
            self.vals[id(root)] = self.vals[id(r)]
            self.keep.append(r)

    def _saved_written(self, vcl):
        """Whether a write into this version counter's tensors changes one that a recorded op saved for backward:
        eager's backward raises then, and the replay's op would use the old values, so the capture breaks."""
        if vcl is not None and any(t._vcl is vcl for t in self.saved_tensors):
            self.brk("a tensor saved for backward was changed in place (eager's backward raises)")
            return True
        return False

    def _refresh_versions(self, vcl):
        """A write the capture recorded moved the version of this counter (a factory-made tensor's): expect it."""
        self.versions = [(t, _version(t) if t._vcl is vcl else v) for t, v in self.versions]

    def _snapshot(self, root):
        """A factory-made tensor (a constant of the program) is about to be written in place: the program keeps a
        copy of the values it was made with (the eager write changes the captured tensor itself)."""
        self.snapshots.add(id(root))
        idx = self.vals.get(id(root))
        for k, inp in enumerate(self.prog.inputs):
            if inp[0] == "free" and inp[1] is root:
                copy = Tensor._make(root._array.copy(order="K"), root._rg)
                self.keep.append(copy)
                self.prog.inputs[k] = ("free", copy, idx)
                return

    def reshaped(self, x, out):
        """An in-place view op (``t_``, ``transpose_``, ``squeeze_``, ``unsqueeze_``) made x the view ``out``."""
        if self.broken or not self.mine():
            return
        idx, o = self.current(x), self.vals.get(id(out))
        if idx is None or o is None:
            self.brk("an in-place view op (transpose_, squeeze_, ...) changed a tensor the capture did not see")
        elif self._is_input_value(idx):
            self.brk("an input of the region was reshaped in place (t_, transpose_, squeeze_, unsqueeze_): the "
                     "replay could not repeat it")
        else:
            self.vals[id(x)] = o

    def _refresh_version(self, x):
        """apply_inplace will bump x's version after this hook: expect that."""
        self.versions = [(t, v + 1 if t is x else v) for t, v in self.versions]

    def before_write(self, x):
        if self._prev_write is not None:
            self._prev_write(x)
        if self.broken or not self.mine():
            return
        idx = self.vals.get(id(x))
        if idx is None:
            return
        root = x._view[0] if x._view is not None else x
        if id(root) in self.made_here and id(root) not in self.snapshots:
            self._snapshot(root)
        self.pending[id(x)] = x

    # --- entering and leaving: the hooks and the wrapped Tensor methods -------------------------------------
    def mine(self):
        """Whether the calling thread is the capturing one (the wrapped methods and hooks are process-wide while a
        capture runs; other threads' code passes through them untouched)."""
        return _get_ident() == self.thread

    def start(self):
        self.thread = _get_ident()
        self.rng = _rng_state()
        self._prev_inplace = _util._inplace_tangents
        self._prev_write = _util._before_write
        _util._inplace_tangents = self
        _util._before_write = self.before_write
        self._saved_methods = _wrap_methods(self)
        self._prev_backward = _engine.run_backward
        cap = self

        def run_backward(*a, **k):
            if cap.mine():
                cap.brk("backward() or autograd.grad() inside the compiled region")
            return cap._prev_backward(*a, **k)
        _engine.run_backward = run_backward
        self._saved_make = Tensor.__dict__["_make"]
        make = self._saved_make.__func__

        codes = _factory_codes()

        def _make(array, rg=False):
            t = make(array, rg)
            if not cap.inside and not cap.factory and cap.mine():
                if _in_factory(cap, codes):
                    cap.direct_made[id(t)] = t
                else:
                    cap.outside.add(id(t))
                cap.keep.append(t)
            return t
        Tensor._make = staticmethod(_make)
        self._saved_factories = _wrap_factories(self)
        self._saved_sizes = _dyn.install(self) if self.symbolic else None
        self.enter()

    def stop(self):
        self.exit()
        _util._inplace_tangents = self._prev_inplace
        _util._before_write = self._prev_write
        _engine.run_backward = self._prev_backward
        for name, m in self._saved_methods.items():
            setattr(Tensor, name, m)
        Tensor._make = self._saved_make
        if self._saved_sizes is not None:
            _dyn.uninstall(self._saved_sizes)
            self._saved_sizes = None
        for (mod, name), fn in self._saved_factories.items():
            setattr(mod, name, fn)
        if not self.broken:
            if self.pending:
                self._pending_break()
            elif not self._versions_kept():
                pass
            elif _rng_state() != self.rng:
                self.brk("random numbers were drawn outside an op (a factory such as randn, rand or randint)")


class ViewWrite(_f.Primitive):
    """A write through a view as the replay makes it (torch's functionalization): a copy of the root with the
    view's positions (``view_fn`` of the root, as ``Tensor._view`` keeps it) replaced by ``value``. Its gradients
    are ``CopySlices``' (the eager node of such a write)."""

    node_name = "CopySlices"

    @staticmethod
    def forward(ctx, base, value, view_fn):
        ctx.view_fn = view_fn
        out = base.copy(order="K")
        dst = _util._no_grad_call(view_fn, Tensor._make(out))._array
        np.copyto(dst, value, casting="unsafe")
        return out

    backward = staticmethod(_util.CopySlices.backward)


class DetachedWrite(_f.Primitive):
    """A write under ``no_grad`` into a tensor that requires grad (or through a view of it: ``view_fn``), as the
    replay makes it: the root's new values, while its gradient goes to its old history unchanged (eager records
    nothing: the tensor keeps its ``grad_fn``)."""

    @staticmethod
    def forward(ctx, base, value, view_fn):
        out = base.copy(order="K")
        dst = out if view_fn is None else _util._no_grad_call(view_fn, Tensor._make(out))._array
        np.copyto(dst, value, casting="unsafe")
        return out

    @staticmethod
    def backward(ctx, grad):
        return grad, None, None


class Fresh(_f.Primitive):
    """A copy of a program constant (a factory's tensor) that the function returns: each call gets its own tensor,
    as each eager call made one (``runtime``'s result leaves)."""

    @staticmethod
    def forward(ctx, x):
        return x.copy(order="K")

    @staticmethod
    def backward(ctx, grad):
        return None


def fresh_output(prog, v):
    """Append a ``Fresh`` copy of constant value ``v`` to the program; returns the copy's value."""
    idx = len(prog.meta)
    prog.meta.append(prog.meta[v])
    prog.rg.append(False)
    prog.ops.append(OpRecord(Fresh, (("v", v),), {}, (idx,), None, (False,)))
    return idx


def _has_tensor(obj, depth=0):
    if isinstance(obj, Tensor):
        return True
    return depth < 2 and isinstance(obj, (list, tuple)) and any(_has_tensor(o, depth + 1) for o in obj)


# the functions computed on arrays (``ArrayOp``) whose output shapes depend on the values
_DATA_SHAPED_FNS = frozenset(("nonzero", "argwhere", "one_hot", "bincount", "nonzero_static"))


def _data_shaped(cls, spec):
    """Whether an op's output shapes depend on its inputs' values (``data_shaped`` ops: masked_select, indexing
    with a mask, unique; an ``ArrayOp`` of nonzero, argwhere, one_hot without num_classes, bincount)."""
    if getattr(cls, "data_shaped", False):
        return True
    return cls is _util.ArrayOp and getattr(spec[0][1], "__name__", None) in _DATA_SHAPED_FNS


# Tensor methods that read a tensor's data into Python, or hook into its backward: a graph break while capturing
_DATA = {"item": "Tensor.item() reads a value into Python",
         "tolist": "Tensor.tolist() reads the values into Python",
         "__bool__": "bool(tensor): data-dependent Python control flow",
         "__float__": "float(tensor) reads a value into Python",
         "__int__": "int(tensor) reads a value into Python",
         "__complex__": "complex(tensor) reads a value into Python",
         "__index__": "a tensor used as a Python index reads its value",
         "numpy": "Tensor.numpy() hands the data to NumPy",
         "__array__": "NumPy read the tensor's data (np.asarray / __array__)",
         "__repr__": "print or repr of a tensor reads its values",
         "__str__": "print or str of a tensor reads its values",
         "__format__": "formatting a tensor reads its values",
         "apply_": "Tensor.apply_() runs a Python callable on the values",
         "map_": "Tensor.map_() runs a Python callable on the values",
         "map2_": "Tensor.map2_() runs a Python callable on the values",
         "register_hook": "a hook registered on a tensor inside the region",
         "retain_grad": "retain_grad() inside the region",
         "register_post_accumulate_grad_hook": "a hook registered on a tensor inside the region"}


def _wrap_methods(cap):
    saved = {}
    for name, reason in _DATA.items():
        orig = Tensor.__dict__.get(name)
        if orig is None:
            orig = getattr(Tensor, name)
        saved[name] = orig
        setattr(Tensor, name, _breaking(cap, orig, reason))
    # x.data: a detached alias (changes through it are not tracked): the trace cannot follow it
    saved["data"] = Tensor.__dict__["data"]
    prop = saved["data"]

    def get_data(self):
        if not cap.broken and not cap.inside and cap.mine() and (id(self) in cap.vals or id(self) in cap.outside):
            cap.brk("Tensor.data inside the region (an untracked alias)")
        return prop.fget(self)
    Tensor.data = property(get_data, prop.fset)
    return saved


_FACTORIES = ("zeros", "ones", "full", "empty", "arange", "linspace", "logspace", "eye", "scalar_tensor",
              "zeros_like", "ones_like", "full_like", "empty_like", "tensor", "as_tensor", "from_numpy")
_COPYING = ("tensor", "as_tensor", "from_numpy")     # these read the data of a tensor they are given
_NEW_METHODS = ("new_zeros", "new_ones", "new_full", "new_empty", "new_empty_strided")   # (x.new_zeros(...): x's
#                                                          dtype and device, never its values)


def _wrap_factories(cap):
    """tapegrad's factories, marked while they run: what they make depends on Python values only (constants of
    the program), unless ``tensor``/``as_tensor`` is given a computed tensor (its data: a graph break)."""
    import tapegrad
    from .. import creation
    from ..ops.nn_ops import attention
    saved = {}
    for mod, names in ((tapegrad, _FACTORIES), (creation, _FACTORIES), (Tensor, _NEW_METHODS),
                       (attention, ("_generate_square_subsequent_mask",))):
        for name in names:
            orig = mod.__dict__.get(name)
            if orig is None:
                continue
            saved[(mod, name)] = orig
            setattr(mod, name, _factory(cap, orig, name in _COPYING))
    return saved


_WINDOWS = ("hann_window", "hamming_window", "blackman_window", "bartlett_window", "kaiser_window", "exponential",
            "cosine", "gaussian", "kaiser", "general_cosine", "general_hamming", "hamming", "hann", "blackman",
            "nuttall", "bartlett")


def _factory_codes():
    """The code objects of the factories that make tensors from Python values only (not ``tensor``/``as_tensor``,
    which copy a tensor's data): a tensor made under one of them is a constant of the program even when the
    function called it by a reference taken before the capture wrapped the module's name (``from tapegrad import
    zeros``, a table of functions)."""
    import tapegrad
    from .. import creation
    from ..ops import signal
    fns = [getattr(m, n, None) for m in (tapegrad, creation) for n in _FACTORIES if n not in _COPYING]
    from ..ops.index import subscript
    fns += [Tensor.__dict__.get(n) for n in _NEW_METHODS] + [getattr(signal, n, None) for n in _WINDOWS]
    fns.append(subscript._value_tensor)          # (x[k] = 0.5: the number as a tensor)
    codes = set()
    for fn in fns:
        while fn is not None and not hasattr(fn, "__code__") and hasattr(fn, "__wrapped__"):
            fn = fn.__wrapped__
        code = getattr(fn, "__code__", None)
        if code is not None:
            codes.add(code)
    return frozenset(codes)


def _in_factory(cap, codes):
    """Whether ``Tensor._make`` was called (a few frames down) by one of those factories, given no tensor the
    region computed (``full(n, t)`` reads t's value: not a constant; ``zeros_like``'s ``input`` only lends its
    shape and dtype)."""
    f = _getframe(2)
    for _ in range(8):
        if f is None:
            return False
        if f.f_code in codes:
            return not any(name not in ("input", "self") and cap._holds_computed(v)
                           for name, v in f.f_locals.items())
        f = f.f_back
    return False


def _factory(cap, orig, copying):
    def factory(*args, **kwargs):
        if not cap.mine():
            return orig(*args, **kwargs)
        if cap.symbolic:
            args = tuple(_dyn.plain(a) for a in args)
            kwargs = {k: _dyn.plain(v) for k, v in kwargs.items()}
        if copying and not cap.broken and args and cap._holds_tensor(args[0]):
            cap.brk(f"tapegrad.{orig.__name__}() of a tensor reads its data")
        cap.factory += 1
        try:
            out = orig(*args, **kwargs)
        finally:
            cap.factory -= 1
        if isinstance(out, Tensor) and id(out) not in cap.vals and not cap.inside:
            cap.prog.made.add(cap.value_of(out))
            cap.made_here.add(id(out))        # a constant of the program (its array may reach an op raw: an index)
        return out
    factory.__name__ = orig.__name__
    return factory


def _breaking(cap, orig, reason):
    def method(self, *args, **kwargs):
        if not cap.broken and not cap.inside and cap.mine():
            cap.brk(reason)
        return orig(self, *args, **kwargs)
    method.__name__ = getattr(orig, "__name__", "method")
    return method


def np_dtype_name(d):
    return np.dtype(d).name
