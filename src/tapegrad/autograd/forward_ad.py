"""Forward-mode AD, as ``torch.autograd.forward_ad``: dual tensors carry a tangent through every op.

>>> import tapegrad.autograd.forward_ad as fwAD
>>> with fwAD.dual_level():
...     x = fwAD.make_dual(tapegrad.tensor([1., 2.]), tapegrad.tensor([1., 0.]))
...     fwAD.unpack_dual(x.exp() * 3).tangent
tensor([8.1548, 0.0000])

How it works. A dual level is an ``Interpreter`` (``autograd/function.py``): while it is active it sees every op
call. An op none of whose tensor arguments has a tangent at this level just runs (``call_next``). Otherwise the
op runs (the primal, through the transforms entered before this one and eager) and the output tangents are
computed from the input tangents by the op's tangent rule, written in tapegrad ops — so tangents are themselves
differentiable (reverse mode records them) and an outer transform sees those ops too (an outer ``vmap`` batches
them, an outer dual level differentiates them). Tangents are kept here, per level, in a dict keyed by the
tensor's identity (weakly: the entry goes when the tensor does), not on the Tensor: an eager op pays nothing.

The rule of an op is ``cls.jvp``:
- a Primitive's own ``jvp(ctx, *tangents)``, where ``ctx.inputs``, ``ctx.kwargs`` and ``ctx.result`` are the
  call's arguments and output(s) and each tangent is a Tensor or None (no tangent: zero); it returns the
  output's tangent (a tuple for several outputs, None where an output has none). ``ops/_util.py`` has the
  common ones: ``linear_jvp`` (the op applied to the tangents) and the elementwise rule ``unary`` makes;
- ``None`` (every other Primitive): the rule derived from the op's differentiable backward, by transposition.
  With ``u`` a zero cotangent of the outputs that requires grad, ``g_i = vjp_i(u)`` is recorded
  (``create_graph``); it is linear in ``u``, so the gradient of ``<g, t> = sum_i Re(sum(conj(g_i) * t_i))`` with
  respect to ``u`` is exactly ``J t`` — for complex tensors too, with torch's conjugate-Wirtinger convention
  (the vjp is the adjoint of ``J`` for the real inner product). It costs two small backward walks;
- a user ``Function``'s ``jvp(ctx, *tangents)``, torch's protocol (``ctx.save_for_forward``; zeros for tensor
  inputs without a tangent, None for non-tensor ones).
"""

from __future__ import annotations

import weakref
from collections import namedtuple

import numpy as np

from .. import _tensor_str
from .._npcompat import QUIET, quiet_enter, quiet_exit
from ..ops import _util as _ops_util
from ..tensor import Tensor
from . import saved as _saved
from .function import Function, Interpreter, Primitive, _state
from .saved import SavedTensor as _SavedTensor
from .grad_mode import enable_grad, no_grad, set_grad_enabled

__all__ = ["UnpackedDualTensor", "enter_dual_level", "exit_dual_level", "make_dual", "unpack_dual", "dual_level"]


class UnpackedDualTensor(namedtuple("UnpackedDualTensor", ["primal", "tangent"])):
    """What ``unpack_dual`` returns: the primal (a view of the dual tensor, without its tangent) and the tangent
    (None for a tensor that has none at that level)."""

    __slots__ = ()


class JvpContext:
    """What a Primitive's ``jvp(ctx, *tangents)`` receives: the op class, the call's arguments and its result."""

    __slots__ = ("op", "inputs", "kwargs", "result")

    def __init__(self, op, inputs, kwargs, result):
        self.op, self.inputs, self.kwargs, self.result = op, inputs, kwargs, result


class _FunctionJvpCtx:
    """A user Function's ctx as its ``jvp`` sees it: ``saved_tensors`` are what forward gave ``save_for_forward``
    (torch's protocol); every other attribute is the ctx's own."""

    def __init__(self, ctx):
        object.__setattr__(self, "_ctx", ctx)

    @property
    def saved_tensors(self):
        return tuple(getattr(self._ctx, "saved_for_forward", None) or ())

    def __getattr__(self, name):
        return getattr(self._ctx, name)

    def __setattr__(self, name, value):
        setattr(self._ctx, name, value)

    def __delattr__(self, name):
        delattr(self._ctx, name)


_observers = []   # autograd.trace adds itself: called after each op that propagated tangents (nothing else: free)



class DualLevel(Interpreter):
    """One level of forward-mode AD: the tangents of this level and the interpreter that propagates them."""

    log = None     # a list to see which rule each op call used: (op class, "natural" | "derived" | "jvp")

    def __init__(self):
        self._tangents = {}    # id(tensor) -> (weakref to it, tangent)
        self._saved = {}       # id(array) -> (weakref to it, tangent): outputs their nodes keep for backward

    # --- the tangents this level keeps ------------------------------------------------------------------------
    def tangent(self, t):
        """The tangent of ``t`` at this level, or None."""
        e = self._tangents.get(id(t))
        if e is not None and e[0]() is t:
            return e[1]
        return None

    def set_tangent(self, t, tangent):
        """Give ``t`` its tangent at this level (None: take it away)."""
        k = id(t)
        d = self._tangents
        if tangent is None:
            d.pop(k, None)
            return

        def gone(ref, d=d, k=k):
            e = d.get(k)
            if e is not None and e[0] is ref:
                del d[k]
        d[k] = (weakref.ref(t, gone), tangent)
        node = t.grad_fn
        if node is not None and t._rg:
            saved = getattr(node, "_saved", None)
            if saved is not None and saved.__class__ is tuple and \
                    any(s.__class__ is _SavedTensor and s._data is t._array for s in saved):
                # its node keeps it for backward as an array, rebuilt into a new Tensor on unpack: remember the
                # tangent by the array (``_unpack_hook``), so that a backward run inside the level sees it
                self._remember_saved(t._array, tangent)

    def _remember_saved(self, arr, tangent):
        k = id(arr)
        d = self._saved

        def gone(ref, d=d, k=k):
            e = d.get(k)
            if e is not None and e[0] is ref:
                del d[k]
        d[k] = (weakref.ref(arr, gone), tangent)

    def saved_tangent(self, arr):
        e = self._saved.get(id(arr))
        if e is not None and e[0]() is arr:
            return e[1]
        return None

    def enter(self):
        super().enter()
        _levels_entered.append(self)
        _inplace_hook_update()
        return self

    def exit(self):
        super().exit()
        _levels_entered.remove(self)
        self._tangents, self._saved = {}, {}
        _inplace_hook_update()

    # --- the interpreter --------------------------------------------------------------------------------------
    def process(self, cls, args, kwargs):
        found = None
        d = self._tangents
        for i, a in enumerate(args):
            if isinstance(a, Tensor):
                e = d.get(id(a))
                if e is not None and e[0]() is a:
                    if found is None:
                        found = [None] * len(args)
                    t = e[1]
                    if t._array.dtype != a._array.dtype:
                        t = t.to(a.dtype)      # (make_dual accepts another floating dtype: ops see the primal's)
                    found[i] = t
        if found is None:
            return self.call_next(cls, args, kwargs)
        if not cls._array_forward:
            kind = "jvp"
            out = self._user_function(cls, args, kwargs, found)
        else:
            rule = cls.jvp
            below = _state.interpreters[self.level - 1] if self.level else None
            if (rule is None or rule is _ops_util.ELEMENTWISE or (getattr(rule, "real_only", False) and
                                                                   _any_complex(args, found))) and \
                    getattr(below, "batching", False):
                # (directly above a vmap: the rule derived from the backward runs on the batched arrays, where the
                #  op's graph is: func/_vmap.lowered_jvp)
                kind = "derived"
                out = below.lowered_jvp(self, cls, args, kwargs, found)
            elif rule is None or (getattr(rule, "real_only", False) and _any_complex(args, found)):
                kind = "derived"
                out = self._derived(cls, args, kwargs, found)
            elif rule is _ops_util.ELEMENTWISE:
                kind = "natural"
                out = self._elementwise(cls, args, kwargs, found)
            else:
                kind = "natural"
                out = self.call_next(cls, args, kwargs)
                self._attach(cls, out, rule(JvpContext(cls, args, kwargs, out), *found))
        if self.log is not None:
            self.log.append((cls, kind))
        if _observers:
            outs = out if out.__class__ is tuple else (out,)
            tangents_out = [self.tangent(o) if isinstance(o, Tensor) else None for o in outs]
            for obs in list(_observers):
                obs(cls, kind, found, tangents_out, self)
        return out

    def _attach(self, cls, out, tangents):
        """Give each floating output its tangent (broadcast to its shape, cast to its dtype)."""
        if out.__class__ is not tuple:
            out, tangents = (out,), (tangents,)
        elif tangents.__class__ is not tuple and tangents.__class__ is not list:
            raise RuntimeError(f"{cls.__name__}: its jvp rule must return one tangent per output "
                               f"(expected {len(out)}, got one)")
        for o, t in zip(out, tangents):
            if t is None or not isinstance(o, Tensor) or o._array.dtype.kind not in "fc":
                continue
            self.set_tangent(o, _conform(t, o))

    def _run_recorded(self, cls, args, kwargs, found, leaf=True):
        """Run the op so that it is recorded from every input that has a tangent: an input that does not require
        grad (or every one, under ``no_grad``) is replaced by an alias that does. Returns the output, the
        (graph input, tangent) pairs, the substitutes and whether the call would have been recorded anyway."""
        grad_on = _state.enabled
        recorded = grad_on and any(isinstance(a, Tensor) and a._rg for a in args)
        run = list(args)
        pairs, subs = [], {}
        for i, t in enumerate(found):
            if t is None:
                continue
            a = args[i]
            if grad_on and a._rg:
                s = a
            else:
                s = subs.get(id(a))
                if s is None:
                    s = subs[id(a)] = _substitute(a, leaf)
                    self.set_tangent(s, t)   # (the op's node keeps it: a backward inside the level needs it)
            run[i] = s
            if not any(p is s for p, _ in pairs):
                pairs.append((s, t))
        with enable_grad():
            out = self.call_next(cls, tuple(run), kwargs)
        return out, pairs, subs, recorded

    def _outer_free(self, args):
        """The outer dual levels, and whether nothing outside requires grad (no argument, under grad mode, and
        no tangent an outer level keeps for one): then what this call computed from its substitutes (which
        require grad only for the derivation) may lose its graph, at every level."""
        outer = [lv for lv in _state.interpreters[:self.level] if isinstance(lv, DualLevel)]
        if not _state.enabled:
            return outer, True
        for a in args:
            if isinstance(a, Tensor):
                if a._rg:
                    return outer, False
                for lv in outer:
                    t = lv.tangent(a)
                    if t is not None and t._rg:
                        return outer, False
        return outer, True

    def _derived(self, cls, args, kwargs, found):
        """The tangent by transposing the op's differentiable backward (see the module's docstring)."""
        from .engine import grad as _grad
        out, pairs, subs, recorded = self._run_recorded(cls, args, kwargs, found)
        outs = out if out.__class__ is tuple else (out,)
        diff = [k for k, o in enumerate(outs) if isinstance(o, Tensor) and o._rg and o.grad_fn is not None
                and o._array.dtype.kind in "fc"]
        tangents = [None] * len(outs)
        if diff and getattr(cls.backward, "once_differentiable", False):
            tangents = _tangents_by_rows(outs, diff, found)
            diff = ()
        if diff:
            keep = _state.enabled
            with enable_grad():
                us = [Tensor._make(np.zeros(outs[k]._array.shape, outs[k]._array.dtype), True) for k in diff]
                gs, ts_in = self._vjp(outs, diff, us, args, found, pairs)
                total = None
                for g, t in zip(gs, ts_in):
                    if g is None or t is None:
                        continue
                    term = _real_inner(g, t)
                    total = term if total is None else total + term
                if total is not None and total._rg:
                    graph = keep and (recorded or any(t._rg for _, t in pairs))
                    # (a transform outside this one must see the backward's ops: then they run as Tensor ops, a
                    #  recorded walk, whose graph is dropped after if nobody needs it)
                    outer = _state.top >= 0
                    ts = _grad(total, us, create_graph=graph or outer, allow_unused=True)
                    levels, free = self._outer_free(args)
                    for k, t in zip(diff, ts):
                        if t is not None and not graph:
                            _strip_deep(t, levels if free else ())
                        tangents[k] = t
        _strip(outs, subs, recorded, self)
        if not recorded and subs:
            levels, free = self._outer_free(args)
            if free:
                for o in outs:
                    if isinstance(o, Tensor):
                        _strip_deep(o, levels)
        for o, t in zip(outs, tangents):
            if t is not None:
                self.set_tangent(o, _conform(t, o))
        return out

    def _elementwise(self, cls, args, kwargs, found):
        """``jvp = ELEMENTWISE``: a one-tensor-input elementwise op's Jacobian is diagonal, so for real tensors
        ``J t`` is its backward formula applied to ``t`` — one call of the op's node (recorded where a graph is
        needed), not the derived rule's two walks."""
        from .engine import run_node
        out, pairs, subs, recorded = self._run_recorded(cls, args, kwargs, found)
        t = pairs[0][1]
        tangent = None
        node = out.grad_fn if isinstance(out, Tensor) else None
        levels, free = self._outer_free(args)
        if node is not None and out._rg and out._array.dtype.kind in "fc":
            graph = _state.enabled and (recorded or t._rg or not free)
            with set_grad_enabled(graph):
                token = quiet_enter(QUIET)
                try:
                    gs = run_node(node, [t.to(out.dtype) if t._array.dtype != out._array.dtype else t])
                finally:
                    quiet_exit(token)
            tangent = next((g for g, tf in zip(gs, found) if tf is not None), None)
        _strip((out,), subs, recorded, self)
        if not recorded and subs and free and isinstance(out, Tensor):
            _strip_deep(out, levels)
        if tangent is not None:
            self.set_tangent(out, _conform(tangent, out))
        return out

    @staticmethod
    def _vjp(outs, diff, us, args, found, pairs):
        """The op's own vjp of ``us``, recorded: its node's backward formula run on them (``run_node``), one
        gradient per argument — partial derivatives, even where two arguments are one tensor or one is computed
        from another (a gradient taken over the whole graph would sum those paths). Returns the gradients and
        the matching tangents."""
        from .engine import grad as _grad
        from .engine import run_node
        node = outs[diff[0]].grad_fn
        if node._forward_cls is not None and all(outs[k].grad_fn is node for k in diff):
            grads = [None] * len(node._out_meta)
            for k, u in zip(diff, us):
                grads[outs[k]._output_nr] = u
            token = quiet_enter(QUIET)
            try:
                gs = run_node(node, grads)
            finally:
                quiet_exit(token)
            return gs, found
        # (an output an outer transform made: over the graph, from the stand-ins)
        return _grad([outs[k] for k in diff], [s for s, _ in pairs], us, create_graph=True, allow_unused=True), \
            [t for _, t in pairs]

    def _user_function(self, cls, args, kwargs, found):
        """A user ``Function`` meeting a dual input: torch's protocol, its ``jvp(ctx, *tangents)``."""
        if cls.jvp is Function.jvp:
            raise NotImplementedError("You must implement the jvp function for custom autograd.Function to use it "
                                      "with forward mode AD.")
        # (substitutes that are not leaves: forward may change one in place and mark it dirty)
        out, _, subs, recorded = self._run_recorded(cls, args, kwargs, found, leaf=False)
        single = out.__class__ is not tuple
        outs = (out,) if single else out
        ctx = next((o.grad_fn for o in outs if isinstance(o, Tensor) and o.grad_fn is not None
                    and o.grad_fn._forward_cls is cls), None)
        # an output that is a substitute is an input forward changed in place (mark_dirty): give back the input
        back = {id(s): a for a in args if isinstance(a, Tensor) and id(a) in subs for s in (subs[id(a)],)}
        outs = tuple(_dirty_back(o, back) for o in outs)
        _strip(outs, subs, recorded, self)
        if ctx is None:       # no differentiable output: nothing to propagate
            return outs[0] if single else outs
        tangents = [t if t is not None else (_zeros_like(a) if isinstance(a, Tensor) else None)
                    for a, t in zip(args, found)]
        for i, a in enumerate(args):
            if isinstance(a, Tensor) and found[i] is None and a._array.dtype.kind not in "fc":
                tangents[i] = None
        res = cls.jvp(_FunctionJvpCtx(ctx), *tangents)
        if "saved_for_forward" in ctx.__dict__:
            ctx.saved_for_forward = None     # torch lets them go once jvp has run (a None attribute stays)
        res = res if isinstance(res, tuple) else (res,)
        if len(res) != len(outs):
            raise RuntimeError(f"Function's jvp returned an invalid number of forward gradients (expected "
                               f"{len(outs)} but got {len(res)})")
        non_diff = ctx._non_diff or ()
        for o, t in zip(outs, res):
            if t is None or not isinstance(o, Tensor) or o._array.dtype.kind not in "fc":
                continue
            if any(o is n for n in non_diff):
                continue
            if tuple(t.shape) != tuple(o.shape):
                raise RuntimeError(_size_error(o.shape, t.shape))
            self.set_tangent(o, t)
        return outs[0] if single else outs


def _tangents_by_rows(outs, diff, found):
    """The derived rule for an op whose backward is not differentiable (``once_differentiable``: its vjp cannot
    be transposed by autograd): the Jacobian's rows, one vjp per output element (a unit cotangent, and for a
    complex output also i times it), each dotted with the input tangents. Exact; the tangent has no graph."""
    from .engine import run_node
    node = outs[diff[0]].grad_fn
    res = [None] * len(outs)
    with no_grad():
        for k in diff:
            o = outs[k]
            arr = o._array
            cplx = arr.dtype.kind == "c"
            flat = np.zeros(arr.size, arr.dtype)
            for j in range(arr.size):
                for unit in ((1, 1j) if cplx else (1,)):
                    e = np.zeros(arr.size, arr.dtype)
                    e[j] = unit
                    grads = [None] * len(node._out_meta)
                    grads[o._output_nr] = Tensor._make(e.reshape(arr.shape))
                    token = quiet_enter(QUIET)
                    try:
                        gs = run_node(node, grads)
                    finally:
                        quiet_exit(token)
                    s = sum(float(_real_inner(g, t)._array) for g, t in zip(gs, found)
                            if g is not None and t is not None)
                    flat[j] += s * unit
            res[k] = Tensor._make(flat.reshape(arr.shape))
    return res


def _conform(t, o):
    """A tangent shaped and typed as its output: broadcast (a rule may give it before broadcasting) and cast."""
    if t._array.shape != o._array.shape:
        t = t.expand(o._array.shape)
    if t._array.dtype != o._array.dtype and not (o._array.dtype.kind == "c" and t._array.dtype.kind == "c"):
        t = t.to(o.dtype)
    return t


def _real_inner(g, t):
    """``<g, t>`` for the real inner product: ``sum(g * t)``, or ``Re(sum(conj(g) * t))`` for complex tensors
    (both have the input's dtype: the engine casts g, ``process`` casts t)."""
    if g._array.dtype.kind == "c":
        return _RealInner.apply(g, t)
    return (g * t).sum()


class _RealInner(Primitive):
    """``Re(sum(conj(g) * t))`` of two complex tensors, differentiable in both: with torch's convention (the
    gradient of a real function is ``dL/dRe + i dL/dIm``) the gradients are ``grad * t`` and ``grad * g``."""

    @staticmethod
    def forward(ctx, g, t):
        ctx.save_inputs(0, 1)
        return np.asarray(np.vdot(g, t).real)

    @staticmethod
    def backward(ctx, grad):
        g, t = ctx.saved_tensors
        return grad * t, grad * g


def _any_complex(args, found):
    for a, t in zip(args, found):
        if t is not None and (a._array.dtype.kind == "c" or t._array.dtype.kind == "c"):
            return True
    return False


def _substitute(a, leaf=True):
    """An alias of ``a`` that requires grad, made by an op so that outer transforms see it (its tangents at
    outer levels, its batching); a leaf, or (``leaf=False``) the alias of one."""
    from ..ops.index.subscript import Alias
    with no_grad():
        s = Alias.apply(a)
    s._rg = True
    if not leaf:
        with enable_grad():
            s = Alias.apply(s)
    return s


def _strip(outs, subs, recorded, lvl):
    """After a call run with forced recording: outputs that would not have been recorded lose their node."""
    if recorded or not subs:
        return
    for o in outs:
        if isinstance(o, Tensor) and o.grad_fn is not None:
            o.grad_fn = None
            o._rg = False


def _strip_deep(t, levels):
    """``t`` loses its node (in place: the levels find it by identity), and so do its tangents at ``levels``
    (outer dual levels, outermost first), and theirs at the levels outside those."""
    if t.grad_fn is not None:
        t.grad_fn, t._rg = None, False
    for i, lv in enumerate(levels):
        tl = lv.tangent(t)
        if tl is not None:
            _strip_deep(tl, levels[:i])


def _drop_graph(t):
    """``t`` and its tangents at every dual level of this thread lose their graph, in place (for results that
    required grad only because they were derived from stand-ins that did: ``func``'s jacobians)."""
    _strip_deep(t, _thread_levels())


def _dirty_back(o, back):
    a = back.get(id(o)) if isinstance(o, Tensor) else None
    if a is None:
        return o
    a._vc[0] += 1
    return a


def _zeros_like(a):
    return Tensor._make(np.zeros(a._array.shape, a._array.dtype))


def _size_error(shape, got):
    return ("Trying to set a forward gradient that has a different size than that of the original Tensor, this is "
            f"not supported. Tensor is of size [{', '.join(map(str, shape))}] while the given forward gradient is "
            f"of size [{', '.join(map(str, got))}].")


# --- in-place ops: a tensor changed in place takes its new value's tangent -----------------------------------------
_levels_entered = []     # every DualLevel active in this process (any thread), in order of entering


def _inplace_hook_update():
    """Switch the hooks in ``ops/_util`` (in-place ops), ``saved`` (saved outputs) and ``_tensor_str``
    (printing) on while a level is active, off otherwise."""
    on = bool(_levels_entered)
    _ops_util._inplace_tangents = _InplaceTangents if on else None
    _saved._unpack_hook = _unpacked if on else None
    _tensor_str._tangent_of = _printed_tangent if _public else None


class _InplaceTangents:
    """What ``ops/_util.apply_inplace`` calls while a dual level is active (None otherwise: no cost)."""

    @staticmethod
    def alias(x, copy):
        """``copy`` stands for ``x``'s old value: it gets ``x``'s tangents."""
        for lvl in _thread_levels():
            t = lvl.tangent(x)
            if t is not None:
                lvl.set_tangent(copy, t)

    @staticmethod
    def written(x, out):
        """``x`` now holds ``out``'s value: it takes ``out``'s tangent; a view's base and the base's other views
        see the change, as torch's tangents of views are views of the base's tangent."""
        for lvl in _thread_levels():
            t = lvl.tangent(out)
            base = x._view
            if t is None and lvl.tangent(x) is None and (base is None or lvl.tangent(base[0]) is None):
                continue
            if t is not None and t._array.shape != x._array.shape:
                t = t.expand(x._array.shape)
            if t is not None and t._array.dtype != x._array.dtype:
                t = t.to(x.dtype)
            if base is None:
                lvl.set_tangent(x, t)
                _refresh_view_tangents(lvl, x)
                continue
            root, view_fn = base[0], base[1]
            rt = lvl.tangent(root)
            new_rt = rt.clone() if rt is not None else _zeros_like(root)
            region = view_fn(new_rt)
            region.copy_(t if t is not None else _zeros_like(x))
            lvl.set_tangent(root, new_rt)
            _refresh_view_tangents(lvl, root)

    # an in-place view op (t_, transpose_, squeeze_, unsqueeze_): the tensor's tangent is the view's tangent
    reshaped = written


def _unpacked(arr, t):
    """A saved output rebuilt for backward (``SavedTensor.unpack``) gets the tangents the output had."""
    for lvl in _thread_levels():
        tangent = lvl.saved_tangent(arr)
        if tangent is not None:
            lvl.set_tangent(t, tangent)


def _refresh_view_tangents(lvl, root):
    """Each live view of ``root`` gets the matching view of the root's tangent."""
    vc = root._vcl
    if vc is None or len(vc) < 2:
        return
    rt = lvl.tangent(root)
    for ref in list(vc[1].values()):
        v = ref()
        if v is None or v._view is None or v._view[0] is not root:
            continue
        lvl.set_tangent(v, None if rt is None else v._view[1](rt))


def _thread_levels():
    return [i for i in _state.interpreters if isinstance(i, DualLevel)]


# --- torch's API ---------------------------------------------------------------------------------------------------
_public = []     # the levels entered with enter_dual_level (torch allows one at a time)


def _level(level, what):
    if level is None:
        if not _public:
            return None
        return _public[-1]
    if not isinstance(level, int) or level < 0 or level >= len(_public):
        raise RuntimeError(f"Invalid level given to {what}")
    return _public[level]


def enter_dual_level():
    """Enter a new forward-AD level and return its index (``dual_level()`` is the context manager form).
    Levels do not nest, as in torch."""
    if _public:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    lvl = DualLevel()
    lvl.enter()
    _public.append(lvl)
    _inplace_hook_update()
    return len(_public) - 1


def exit_dual_level(*, level=None):
    """Exit the forward-AD level ``level`` (the current one by default); its tangents are dropped."""
    current = len(_public) - 1
    if level is None:
        level = current
    if level != current:
        raise RuntimeError("Trying to exit a forward AD level that was not the last one that was created. This is "
                           "not supported.")
    if level < 0:
        raise RuntimeError("Dual level must be a positive number.")
    lvl = _public.pop()
    lvl.exit()
    _inplace_hook_update()


def make_dual(tensor, tangent, *, level=None):
    """A dual tensor: a view of ``tensor`` whose tangent (forward gradient) is ``tangent``, at ``level`` (the
    current one by default).

    >>> with dual_level():
    ...     d = make_dual(tapegrad.tensor([1., 2.]), tapegrad.tensor([0.5, 0.]))
    ...     unpack_dual(d ** 2).tangent
    tensor([1., 0.])
    """
    if level is None and not _public:
        raise RuntimeError("Trying to create a dual Tensor for forward AD but no level exists, make sure to "
                           "enter_dual_level() first.")
    if not (tensor.is_floating_point() or tensor.is_complex()):
        raise ValueError(f"Expected primal to be floating point or complex, but got: {tensor.dtype}")
    if not (tangent.is_floating_point() or tangent.is_complex()):
        raise ValueError(f"Expected tangent to be floating point or complex, but got: {tangent.dtype}")
    lvl = _level(level, "_make_dual")
    if lvl.tangent(tensor) is not None:
        raise RuntimeError("Making a dual Tensor based on a Tensor that already has a forward gradient at the same "
                           f"level {_public.index(lvl)} is not supported.")
    return _dual(lvl, tensor, tangent)


def _dual(lvl, tensor, tangent):
    """A view of ``tensor`` with ``tangent`` at level ``lvl`` (make_dual's work, after its checks of the level)."""
    if tuple(tangent.shape) != tuple(tensor.shape):
        raise RuntimeError(_size_error(tensor.shape, tangent.shape))
    dual = tensor.view(tensor.shape)
    lvl.set_tangent(dual, tangent)
    return dual


def unpack_dual(tensor, *, level=None):
    """``(primal, tangent)`` of a tensor at ``level`` (the current one by default): the primal is a view of
    ``tensor`` without its tangent; the tangent is None if it has none.

    >>> with dual_level():
    ...     unpack_dual(make_dual(tapegrad.tensor(1.), tapegrad.tensor(2.)) * 3)
    UnpackedDualTensor(primal=tensor(3.), tangent=tensor(6.))
    """
    if not isinstance(tensor, Tensor):
        raise TypeError(f"unpack_dual(): argument 'tensor' (position 1) must be Tensor, not {type(tensor).__name__}")
    if not any(lv.tangent(tensor) is not None for lv in _public):    # (torch checks the level of a dual only)
        return UnpackedDualTensor(tensor, None)
    lvl = _level(level, "_fw_primal")
    tangent = lvl.tangent(tensor)
    if tangent is None:
        return UnpackedDualTensor(tensor, None)
    st = _state
    top = st.top
    if lvl.level is not None and top >= lvl.level:
        st.top = lvl.level - 1           # (the view is made outside this level, as if it were processing an op:
    try:                                 #  the primal has no tangent here, and the transforms outside see it)
        primal = tensor.view(tensor.shape)
    finally:
        st.top = top
    return UnpackedDualTensor(primal, tangent)


class dual_level:
    """Context manager of a forward-AD level: tangents made inside live until it exits.

    >>> with dual_level():
    ...     x = make_dual(tapegrad.tensor(2.), tapegrad.tensor(1.))
    ...     unpack_dual(x * x).tangent
    tensor(4.)
    """

    def __enter__(self):
        return enter_dual_level()

    def __exit__(self, *exc):
        exit_dual_level()
        return False


def _printed_tangent(t):
    """The tangent ``repr`` shows (torch shows the first level's)."""
    return _public[0].tangent(t) if _public else None
