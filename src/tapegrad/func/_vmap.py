"""``vmap``: the function runs once, on batched arrays.

A vmap call is a ``BatchedLevel`` interpreter. Each batched tensor the function sees (a *logical* tensor: the
shape of one sample) is a plain Tensor whose array is a view of sample 0 of its *physical* tensor (the whole batch,
batch dim first); the level keeps the physical tensor in a table keyed by the logical one's identity (as a dual
level keeps tangents), so ``Tensor`` and eager ops are unchanged. ``process`` looks the op's arguments up; with no
batched argument the op runs as is (``call_next``). Otherwise the op's batching rule (``func/batching/``, one
module per op family) computes the physical result with ordinary ops, which go to the transforms entered before
this one and finally to eager, and the result is wrapped as a new logical tensor. An op without a rule runs once
per sample on slices of the physical tensors, and the results are stacked: the same values, with a warning, once
per op, that names it.

Autograd happens on the physical tensors: the graph of a batched computation is the ordinary graph of the
batched ops. ``grad``/``vjp``/``jacrev`` called under vmap differentiate one level down (see ``_reverse``), so
``vmap(grad(f))`` is one batched forward and one batched backward.
"""

from __future__ import annotations

import warnings
import weakref

import numpy as np

from .. import _random
from ..autograd.function import Interpreter
from ..tensor import Tensor
from ._forward import _RANDOM_ERROR, Layer, tree_flatten, tree_unflatten
from . import _vmap_function as _vfn
from .batching import RULES, rule_for

__all__ = ["vmap", "BatchedLevel"]

_warned = set()
log = None        # a list while docs/ops.md is generated: (op name, "rule" | "loop") of each batched op call


def _fallback_warning(cls, args=()):
    name = _op_name(cls, args)
    if name in _warned:
        return
    _warned.add(name)
    warnings.warn(f"There is a performance drop because we have not yet implemented the batching rule for {name}. "
                  f"Please file us an issue on GitHub so that we can prioritize its implementation.", UserWarning,
                  stacklevel=4)


def _op_name(cls, args=()):
    if cls is None or (cls.__name__ == "ArrayOp" and args):       # (a function computed on arrays: its own name)
        return f"tapegrad.{getattr(args[0], '__name__', 'function')}"
    return f"tapegrad.{cls.__module__.removeprefix('tapegrad.')}.{cls.__name__}"


_OPS_UTIL = []


def _ops_util():
    """``tapegrad.ops._util`` (imported on first use, then kept: an import statement per vmap call costs)."""
    if not _OPS_UTIL:
        from ..ops import _util
        _OPS_UTIL.append(_util)
    return _OPS_UTIL[0]



class BatchedLevel(Interpreter):
    """One ``vmap`` call: the batch size, the randomness mode and the physical tensor of each logical one."""

    batching = True
    reverse_inside = 0      # how many reverse transforms lowered through this level are running f now

    def __init__(self, size, randomness="error"):
        self.size = size
        self.randomness = randomness
        self._phys = {}

    # --- the table ---------------------------------------------------------------------------------------------
    def physical(self, t):
        """The physical tensor (batch dim first) of the logical tensor ``t``; None if ``t`` is not batched here."""
        e = self._phys.get(id(t))
        if e is not None and e[0]() is t:
            return e[1]
        return None

    def wrap(self, p):
        """A new logical tensor for the physical tensor ``p`` (batch dim first)."""
        t = Tensor._make(p._array[0, ...])
        key = id(t)
        table = self._phys

        def gone(_, key=key, table=table):
            table.pop(key, None)
        table[key] = (weakref.ref(t, gone), p)
        return t

    def rebind(self, t, p):
        """The logical tensor ``t`` now stands for the physical ``p`` (an in-place view op reshaped it)."""
        key, table = id(t), self._phys

        def gone(_, key=key, table=table):
            table.pop(key, None)
        table[key] = (weakref.ref(t, gone), p)

    def enter(self):
        super().enter()
        _util = _ops_util()
        self._prev_write, _util._vmap_write = _util._vmap_write, _write_batched
        self._prev_records, _util._vmap_records = _util._vmap_records, _write_recorded
        self._prev_hook = _random._vmap_hook
        if self.randomness == "different":
            _random._vmap_hook = self._draw
        return self

    def exit(self):
        _util = _ops_util()
        _util._vmap_write = self._prev_write
        _util._vmap_records = self._prev_records
        _random._vmap_hook = self._prev_hook
        super().exit()

    def _draw(self, shape):
        """``_random.draw_shape`` while this level is the one that sees the call: one draw per sample."""
        from ..autograd.grad_mode import _state
        if _state.top != self.level:
            return shape, None
        return (self.size,) + shape, self.wrap

    def broadcast(self, t):
        """``t`` (not batched here) as a physical tensor: expanded along a new batch dim (a view)."""
        return t.expand((self.size,) + tuple(t.shape))

    # --- ops -----------------------------------------------------------------------------------------------------
    def process(self, cls, args, kwargs):
        table = self._phys
        phys = None
        i = 0
        for a in args:          # (the table is keyed by id: any argument may be looked up, its entry checked)
            e = table.get(id(a))
            if e is not None and e[0]() is a:
                if phys is None:
                    phys = [None] * len(args)
                phys[i] = e[1]
            i += 1
        batched_kw = False
        if kwargs:
            batched_kw = any(isinstance(v, Tensor) and self.physical(v) is not None for v in kwargs.values())
        if not cls._array_forward:      # a Python autograd.Function: torch's rules for it (func/_vmap_function.py)
            how = _vfn.check(cls)
            if how != "loop":
                return self._function(cls, args, kwargs, phys, batched_kw, how)
        if phys is None and not batched_kw:
            return self.call_next(cls, args, kwargs)
        rule = None if batched_kw else (RULES.get(cls) or rule_for(cls))
        out = NotImplemented
        if rule is not None:
            out = rule(self, cls, args, kwargs, phys)
        if out is NotImplemented:
            _fallback_warning(cls, args)
            out = self._loop(cls, args, kwargs)
            if log is not None:
                log.append((_op_name(cls, args), "loop"))
        elif log is not None:
            log.append((_op_name(cls, args), "rule"))
        if out.__class__ is Tensor:
            return self.wrap(out)
        if isinstance(out, tuple):
            return tuple(self.wrap(o) if isinstance(o, Tensor) else o for o in out)
        return self.wrap(out)

    def lowered_jvp(self, dual, cls, args, kwargs, found):
        """The tangent rule derived from the op's backward for a dual level ``dual`` right above this vmap (and the
        vmaps right below it): the op's graph is the batched arrays' graph, so the derivation runs there — stand-ins
        that require grad for the physical inputs with a tangent, the op called on their logical wraps, then the
        vjp of a zero cotangent ``u`` and the gradient of ``<vjp(u), t>`` with respect to ``u``, which is ``J t``
        (as ``forward_ad.DualLevel._derived`` does on one level)."""
        from ..autograd.engine import grad as _grad
        from ..autograd.forward_ad import _conform, _real_inner
        from ..autograd.grad_mode import _state, enable_grad, no_grad
        from ._reverse import _At, _down, _up
        levels, i = [], self.level
        while i >= 0 and getattr(_state.interpreters[i], "batching", False):
            levels.append(_state.interpreters[i])
            i -= 1
        bottom = i
        run, pairs, own = list(args), [], False
        with enable_grad():
            with _At(bottom):
                for k, t in enumerate(found):
                    if t is None:
                        continue
                    p = _down(args[k], levels)
                    own = own or p.requires_grad
                    if p.requires_grad:
                        s = p.view_as(p)
                    else:
                        with no_grad():
                            s = p.view_as(p)
                        s.requires_grad_()
                    pairs.append((s, _down(t, levels)))
                    run[k] = _up(s, levels)
            out = dual.call_next(cls, tuple(run), kwargs)
            outs = out if isinstance(out, tuple) else (out,)
            with _At(bottom):
                phys = [(k, _down(o, levels)) for k, o in enumerate(outs)
                        if isinstance(o, Tensor) and o._array.dtype.kind in "fc"]
                phys = [(k, po) for k, po in phys if po.requires_grad]
                tangents = {}
                if phys and getattr(cls.backward, "once_differentiable", False):
                    for k, po in phys:             # (a backward not differentiable again: J t by the rows of J)
                        t = _rows_jvp(po, pairs, len(levels))
                        if t is not None:
                            tangents[k] = _up(t, levels)
                    phys_rows, phys = phys, []
                else:
                    phys_rows = []
                if phys:
                    us = [Tensor._make(np.zeros(po._array.shape, po._array.dtype), True) for _, po in phys]
                    gs = _grad([po for _, po in phys], [s for s, _ in pairs], us, create_graph=True,
                               allow_unused=True)
                    total = None
                    for g, (_, tp) in zip(gs, pairs):
                        if g is not None:
                            term = _real_inner(g, tp)
                            total = term if total is None else total + term
                    if total is not None and total.requires_grad:
                        graph = own or bottom >= 0 or any(tp.requires_grad for _, tp in pairs)
                        ts = _grad(total, us, create_graph=graph, allow_unused=True)
                        for (k, _), t in zip(phys, ts):
                            if t is not None:
                                tangents[k] = _up(t, levels)
                if not own and bottom < 0:          # (the stand-ins' graph: nobody outside needs it)
                    for _, po in phys + phys_rows:
                        po.grad_fn, po._rg = None, False
        for k, t in tangents.items():
            dual.set_tangent(outs[k], _conform(t, outs[k]))
        return out

    def _function(self, cls, args, kwargs, phys, batched_kw, how):
        grad = _vfn.needs_grad(self, args, phys)
        if how == "user" and not (grad and self.reverse_inside):
            return _vfn.call_user_rule(self, cls, args, kwargs, phys)
        if not grad:
            return _vfn.call_generated(self, cls, args, kwargs)
        # (a gradient to keep with generate_vmap_rule, or a reverse transform inside this vmap differentiating the
        #  Function: torch differentiates it by its own backward; here it runs once per sample, that backward
        #  recorded for each: the same values and gradients. Plain autograd outside the vmap differentiates a
        #  user vmap staticmethod's ops, as torch's.)
        if phys is None and not batched_kw:
            return self.call_next(cls, args, kwargs)
        out = self._loop(cls, args, kwargs)
        if isinstance(out, tuple):
            return tuple(self.wrap(o) if isinstance(o, Tensor) else o for o in out)
        return self.wrap(out)

    def _loop(self, cls, args, kwargs):
        """The op once per sample, on slices; the results stacked (the fallback of an op without a rule)."""
        from ..ops.shape import stack
        state = _random.get_rng_state() if self.randomness == "same" else None
        results = []
        for b in range(self.size):
            if state is not None:
                _random.set_rng_state(state)
            a_b = tuple(self._slice(a, b) for a in args)
            kw_b = {k: self._slice(v, b) for k, v in kwargs.items()}
            results.append(self.call_next(cls, a_b, kw_b))
        first = results[0]
        if isinstance(first, tuple):
            return tuple(stack([r[i] for r in results]) if isinstance(first[i], Tensor) else first[i]
                         for i in range(len(first)))
        return stack(results)

    def _slice(self, a, b):
        if isinstance(a, Tensor):
            p = self.physical(a)
            if p is not None:
                return p.select(0, b)
        return a


_REQUIRES_GRAD_ERROR = (
    "You are attempting to call Tensor.requires_grad_() (or perhaps using torch.autograd.functional.* APIs) inside "
    "of a function being transformed by a functorch transform. This is unsupported, please attempt to use the "
    "functorch transforms (e.g. grad, vjp, jacrev, jacfwd, hessian) or call requires_grad_() outside of a function "
    "being transformed instead.")


def grad_with_batched_cotangents(grad, outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused,
                                  materialize_grads):
    """``autograd.grad`` called under vmap with ``grad_outputs`` batched at the level that sees the call, on a
    graph recorded outside it (nothing of ``outputs``/``inputs`` batched there): torch's batched vector-Jacobian
    product (the Jacobian and Hessian rows of ``vmap(vjp)(I)``, as pytorch-minimize and torch's own legacy
    ``_vmap`` take them). One backward per sample, below this level, stacked and wrapped as logical tensors.
    NotImplemented where this is not the case (the engine takes the call)."""
    from ..autograd.grad_mode import _state
    st = _state
    level = st.interpreters[st.top] if st.top >= 0 else None
    if not isinstance(level, BatchedLevel) or type(inputs) is dict:
        return NotImplemented
    outs = [outputs] if isinstance(outputs, Tensor) else list(outputs)
    gos = [grad_outputs] if isinstance(grad_outputs, Tensor) else list(grad_outputs)
    ins = [inputs] if isinstance(inputs, Tensor) else list(inputs)
    phys = [level.physical(g) if isinstance(g, Tensor) else None for g in gos]
    if all(p is None for p in phys) or any(isinstance(t, Tensor) and level.physical(t) is not None
                                           for t in (*outs, *ins)):
        return NotImplemented
    if retain_graph is None:
        retain_graph = create_graph
    prev = st.top
    st.top = prev - 1
    try:
        rows = [grad(outs, ins, [g if p is None else p[j] for g, p in zip(gos, phys)],
                     retain_graph or j < level.size - 1, create_graph, allow_unused=allow_unused,
                     materialize_grads=materialize_grads) for j in range(level.size)]
        from ..ops.shape import stack
        cols = [None if rows[0][k] is None else stack([r[k] for r in rows]) for k in range(len(ins))]
    finally:
        st.top = prev
    return tuple(None if c is None else level.wrap(c) for c in cols)


def refuse_requires_grad(t):
    """``t.requires_grad_()`` on a tensor a vmap batches: the physical tensor under it would not follow, and a
    backward through it would give zeros, so it is refused with torch's error (torch refuses requires_grad_ on any
    tensor inside a transform; tapegrad only on the batched ones)."""
    from ..autograd.function import active_interpreters
    for i in active_interpreters():
        if isinstance(i, BatchedLevel) and i.physical(t) is not None:
            raise RuntimeError(_REQUIRES_GRAD_ERROR)


def per_sample(fn, args, kwargs, watch, target=None):
    """``fn(*args, **kwargs)`` once per sample of the vmap that sees the call, when one of the tensors ``watch``
    (discrete arguments a public function hands its Primitive as arrays: indices, masks) is batched there: the
    batched tensors among the arguments sliced (``select`` of their physical tensors, so gradients flow), the
    results stacked and wrapped. NotImplemented when the top transform is no vmap or none of ``watch`` is
    batched at it (the call then goes on as usual). ``func.jvp`` under vmap puts its dual level below the vmap,
    so the samples run apart keep their tangents; under a public ``forward_ad.dual_level`` entered inside a vmap
    they could not, and a batched ``watch`` that differs between the samples is an error there (equal in every
    sample, sample 0's array is right for all)."""
    from ..autograd.grad_mode import _state
    from ..ops.shape import stack
    from ._reverse import _At
    top = _state.top
    lv = _state.interpreters[top] if top >= 0 else None
    if not isinstance(lv, BatchedLevel):
        below = next((i for i in _state.interpreters[top::-1] if isinstance(i, BatchedLevel)), None) \
            if top >= 0 else None
        if below is not None and not all(_same_in_every_sample(t) for t in watch if isinstance(t, Tensor)):
            raise RuntimeError(f"vmap: {getattr(fn, '__name__', 'this function')} with a batched index (or mask, "
                               "or target) inside a forward AD level (forward_ad.dual_level) inside vmap is not "
                               "supported: use func.jvp there, or vmap inside the level")
        return NotImplemented
    if all(lv.physical(t) is None for t in watch if isinstance(t, Tensor)):
        # none batched here; one batched at a vmap further down (``vmap(vmap(jvp(f)))`` with an index of the outer
        # level): run per sample here too, so that each call meets that vmap with the index still batched there
        # (handed on as an array now, it would be the outer vmap's first sample's)
        if not any(isinstance(i, BatchedLevel) and i.physical(t) is not None
                   for i in _state.interpreters[:top] for t in watch if isinstance(t, Tensor)):
            return NotImplemented
    if target is not None and lv.physical(target) is None:      # (an in-place write of batched data)
        raise RuntimeError(_INPLACE_ERROR.replace("inplace arithmetic", "index_put_").replace(
            "operators instead of inplace arithmetic", "operators instead of index_put_"))
    _fallback_warning(None, (fn,))
    leaves, spec = tree_flatten((args, kwargs))
    phys = [lv.physical(t) if isinstance(t, Tensor) else None for t in leaves]
    state = _random.get_rng_state() if lv.randomness == "same" else None
    results = []
    with _At(lv.level - 1):
        for b in range(lv.size):
            if state is not None:
                _random.set_rng_state(state)
            a, kw = tree_unflatten([t if p is None else p.select(0, b) for t, p in zip(leaves, phys)], spec)
            results.append(tree_flatten(fn(*a, **kw)))
        outs, ospec = results[0]
        stacked = [stack([r[0][i] for r in results]) if isinstance(o, Tensor) else o for i, o in enumerate(outs)]
    return tree_unflatten([lv.wrap(t) if isinstance(t, Tensor) else t for t in stacked], ospec)


def _same_in_every_sample(t):
    """Whether ``t`` holds the same values in every sample of the vmaps it is batched in (then sample 0's array,
    which an op handed ``t``'s array computes with, is every sample's)."""
    from ..ops._util import sample_data
    a = sample_data(t)
    n = a.ndim - t._array.ndim
    if n == 0:
        return True
    flat = a.reshape((-1,) + t._array.shape)
    return bool((flat == flat[:1]).all())


def _rows_jvp(po, pairs, nb):
    """``J t`` of the physical output ``po`` (``nb`` batch dims) row by row: one backward per output element of
    a sample (the samples are independent, so the gradient of the batch's sum is every sample's row)."""
    from ..autograd.engine import grad as _grad
    from ..ops.shape import stack
    batch = tuple(po.shape[:nb])
    flat = po.reshape(batch + (-1,))
    cols = []
    for j in range(flat.shape[-1]):
        e = flat[(slice(None),) * nb + (j,)]
        gs = _grad(e.sum(), [s for s, _ in pairs], retain_graph=True, allow_unused=True)
        col = None
        for g, (_, t) in zip(gs, pairs):
            if g is not None:
                term = (g * t).reshape(batch + (-1,)).sum(-1)
                col = term if col is None else col + term
        cols.append(col if col is not None else Tensor._make(np.zeros(batch, po._array.dtype)))
    return stack(cols, -1).reshape(tuple(po.shape)) if cols else None


# --- reading a batched tensor's data --------------------------------------------------------------------------------
_DATA_ERRORS = {
    "item": "vmap: It looks like you're calling .item() on a Tensor. We don't support vmap over calling .item() on a "
            "Tensor, please try to rewrite what you're doing with other operations. If error is occurring somewhere "
            "inside PyTorch internals, please file a bug report.",
    "bool": "vmap: It looks like you're attempting to use a Tensor in some data-dependent control flow. We don't "
            "support that yet, please file an issue at https://github.com/pytorch/pytorch/issues .",
    "data": "Cannot access data pointer of Tensor that doesn't have storage"}


def _batched_data(t, what):
    """``Tensor.item``/``__bool__``/``numpy``/``tolist``'s check while a transform is active: a batched tensor's data
    is one sample's only (torch's errors)."""
    from ..autograd.grad_mode import _state
    for lv in _state.interpreters:
        if isinstance(lv, BatchedLevel) and lv.physical(t) is not None:
            raise RuntimeError(_DATA_ERRORS[what])


def _install():
    import sys
    sys.modules["tapegrad.tensor"]._batched_data = _batched_data


_install()


# --- in-place writes --------------------------------------------------------------------------------------------
_INPLACE_ERROR = ("vmap: inplace arithmetic(self, *extra_args) is not possible because there exists a Tensor `other` "
                  "in extra_args that has more elements than `self`. This happened due to `other` being vmapped over "
                  "but `self` not being vmapped over in a vmap. Please try to use out-of-place operators instead of "
                  "inplace arithmetic. If said operator is being called inside the PyTorch framework, please file a "
                  "bug report instead.")


def _write_batched(x, out):
    """``ops._util._write``'s hook: an in-place result ``out`` written into ``x`` where either is batched — the
    physical arrays, level by level (True), or nothing to do here (False: an ordinary write)."""
    from ..autograd.grad_mode import _state
    levels = [i for i in _state.interpreters if isinstance(i, BatchedLevel)][::-1]     # innermost first
    return _write_down(x, out, levels)


def rebind_view(x, out):
    """``ops/shape/views._inplace_view``'s hook while a vmap runs: ``x`` became the view ``out`` (``x.t_()``,
    ``transpose_``, ``squeeze_``, ``unsqueeze_``), so at every level where ``out`` is batched ``x`` now stands for
    ``out``'s physical tensor."""
    from ..autograd.grad_mode import _state
    for lv in _state.interpreters:
        if isinstance(lv, BatchedLevel):
            p = lv.physical(out)
            if p is not None:
                lv.rebind(x, p)


def _write_recorded(x, args):
    """``ops._util.apply_inplace``'s question: whether writing an in-place result into the batched ``x`` is a
    recorded copy (``x``'s physical tensor, or an argument's, requires grad: under ``vmap(grad)``)."""
    from ..autograd.grad_mode import _state
    levels = [i for i in _state.interpreters if isinstance(i, BatchedLevel)][::-1]     # innermost first

    def bottom(t):
        for lv in levels:
            p = lv.physical(t)
            if p is not None:
                t = p
        return t
    px = bottom(x)
    if px is x:
        return False
    return px.requires_grad or any(isinstance(a, Tensor) and bottom(a).requires_grad for a in args)


def _write_down(x, out, levels):
    from ..ops._util import _write
    from ._reverse import _At
    for k, lv in enumerate(levels):
        px, po = lv.physical(x), lv.physical(out)
        if px is None and po is None:
            continue
        if px is None:
            raise RuntimeError(_INPLACE_ERROR)
        if po is None:
            with _At(lv.level - 1):
                po = lv.broadcast(out)
        if not _write_down(px, po, levels[k + 1:]):
            if px.requires_grad or po.requires_grad:     # (differentiated under vmap: an in-place copy, recorded;
                #                                              a view made by a rule is marked as one: see shape.py)
                with _At(levels[-1].level - 1):
                    if po.requires_grad and po.shape == px.shape and po.dtype == px.dtype:
                        from ..ops._util import apply_inplace     # (the op's own node becomes px's history, as
                        apply_inplace(px, lambda old, v: v, po)   #  an eager in-place op's: torch's names)
                    else:
                        px.copy_(po)
            else:
                _write(px, po, None)
                from ..ops import _util
                if _util._inplace_tangents is not None:      # (a dual level below the vmaps: vmap(jvp(f)))
                    with _At(levels[-1].level - 1):
                        _util._inplace_tangents.written(px, po)
        return True
    return False


# --- vmap -------------------------------------------------------------------------------------------------------
def _name(func):
    if hasattr(func, "__name__"):
        return func.__name__
    if hasattr(func, "func"):           # functools.partial
        return f"functools.partial({_name(func.func)}, ...)"
    return repr(func)


def _broadcast_dims(dims, spec):
    """``dims`` (an int/None, or a pytree matching a prefix of ``spec``) as one entry per leaf of ``spec``;
    None if they do not fit."""
    if dims is None or isinstance(dims, int):
        return [dims] * _count(spec)
    if spec.kind is None:
        return None
    if dims.__class__ is tuple and spec.kind is tuple and len(dims) == len(spec.children) and \
            all(d is None or d.__class__ is int for d in dims):      # (the common case: one int/None per argument)
        out = []
        for d, c in zip(dims, spec.children):
            if c.kind is None:
                out.append(d)
            else:
                out.extend([d] * _count(c))
        return out
    if isinstance(dims, (tuple, list, dict)):
        if type(dims) is not spec.kind and not (isinstance(dims, tuple) and spec.kind is tuple):
            if not (isinstance(dims, (tuple, list)) and spec.kind in (tuple, list)) or len(dims) != len(spec.children):
                return None
        if isinstance(dims, dict):
            if list(dims) != list(spec.context):
                return None
            dims = list(dims.values())
        if len(dims) != len(spec.children):
            return None
        out = []
        for d, c in zip(dims, spec.children):
            r = _broadcast_dims(d, c)
            if r is None:
                return None
            out.extend(r)
        return out
    return None


def _count(spec):
    if spec.kind is None:
        return 1
    n = 0
    for c in spec.children:
        n += 1 if c.kind is None else _count(c)
    return n


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """``func`` mapped over a dim of its inputs: ``vmap(f)(x)[i] == f(x[i])``, computed in one call of ``f`` on
    the whole batch (each op by its batching rule). ``in_dims``/``out_dims`` give the mapped dim per input/output
    (None: not mapped), as ints or pytrees matching the arguments/outputs; ``randomness``: "error" refuses random
    ops, "different" gives each sample its own random numbers, "same" gives all samples the same;
    ``chunk_size``: map that many samples at a time.

    >>> vmap(lambda x: x.sum())(tapegrad.ones(3, 2))
    tensor([2., 2., 2.])
    """
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or 'same'. Got {randomness}")
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size <= 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")
    _check_out_dims(out_dims, func)
    lean = getattr(func, "_per_sample", None)      # (func is grad(f) or grad_and_value(f): see per_sample_grads)

    name = _name(func)

    def wrapped(*args, **kwargs):
        if not isinstance(in_dims, (int, tuple)):
            raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): expected `in_dims` to be int or a "
                             f"(potentially nested) tuple matching the structure of inputs, got: {type(in_dims)}.")
        if len(args) == 0:
            raise ValueError(f"vmap({name})(<inputs>): got no inputs. Maybe you forgot to add inputs, or you are "
                             f"trying to vmap over a function with no inputs. The latter is unsupported.")
        flat, spec = tree_flatten(args)
        dims = _broadcast_dims(in_dims, spec)
        if dims is None:
            raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): in_dims is not compatible with the "
                             f"structure of `inputs`. in_dims has structure {tree_flatten(in_dims)[1]} but inputs "
                             f"has structure {spec}.")
        sizes = []
        for i, (a, d) in enumerate(zip(flat, dims)):
            if d is None:
                continue
            if not isinstance(d, int):
                raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for an input but "
                                 f"in_dim must be either an integer dimension or None.")
            if not isinstance(a, Tensor):
                raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for an input but "
                                 f"the input is of type {type(a)}. We cannot vmap over non-Tensor arguments, please "
                                 f"use None as the respective in_dim")
            n = a._array.ndim
            if d < -n or d >= n:
                raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for some input, "
                                 f"but that input is a Tensor of dimensionality {n} so expected in_dim to "
                                 f"satisfy -{n} <= in_dim < {n}.")
            if d < 0:
                d = dims[i] = d % n
            sizes.append(a._array.shape[d])
        if not sizes:
            raise ValueError("vmap: Expected at least one Tensor to vmap over")
        if any(s != sizes[0] for s in sizes):
            raise ValueError(f"vmap: Expected all tensors to have the same size in the mapped dimension, got sizes "
                             f"{sizes} for the mapped dimension")
        size = sizes[0]
        if chunk_size is None or chunk_size >= size:
            return _run(func, flat, spec, dims, size, kwargs, out_dims, randomness, name, lean)
        from ..ops.shape import cat
        chunks, outs, o_spec, o_dims = [], [], None, None
        for start in range(0, size, chunk_size):
            n = min(chunk_size, size - start)
            part = [a.narrow(d, start, n) if d is not None else a for a, d in zip(flat, dims)]
            out = _run(func, part, spec, dims, n, kwargs, out_dims, randomness, name, lean)
            fo, o_spec = tree_flatten(out)
            outs.append(fo)
            chunks.append(n)
        o_dims = _out_dims_for(out_dims, o_spec, outs[0], name)
        merged = [cat([o[i] for o in outs], o_dims[i]) if o_dims[i] is not None else outs[0][i]
                  for i in range(len(outs[0]))]
        return tree_unflatten(merged, o_spec)
    wrapped.__name__ = getattr(func, "__name__", "vmap")
    wrapped.__wrapped__ = func
    return wrapped


def _check_out_dims(out_dims, func):
    for d in tree_flatten(out_dims)[0] if not isinstance(out_dims, int) and out_dims is not None else [out_dims]:
        if d is not None and not isinstance(d, int):
            raise ValueError(f"vmap({_name(func)}, ..., out_dims={out_dims}): `out_dims` must be an int, None or a "
                             f"python collection of ints representing where in the outputs the vmapped dimension "
                             f"should appear.")


def _out_dims_for(out_dims, o_spec, flat_out, name):
    def incompatible():
        return ValueError(f"vmap({name}, ..., out_dims={out_dims})(<inputs>): out_dims is not compatible with the "
                          f"structure of `outputs`. out_dims has structure {tree_flatten(out_dims)[1]} but outputs "
                          f"has structure {o_spec}.")
    if o_spec.kind is None:
        if isinstance(out_dims, int) or out_dims is None:
            return [out_dims]
        if isinstance(out_dims, tuple) and len(out_dims) == 1:
            return list(out_dims)
        raise incompatible()
    res = _broadcast_dims(out_dims, o_spec)
    if res is None:
        raise incompatible()
    return res


def _run(func, flat, spec, dims, size, kwargs, out_dims, randomness, name, lean=None):
    level = BatchedLevel(size, randomness)
    try:
        return _run_level(level, func, flat, spec, dims, kwargs, out_dims, randomness, name, lean)
    finally:
        level._phys.clear()     # (its entries' weakref callbacks hold the table: a cycle that would keep the
        #                          physical tensors, the per-sample results among them, until the cyclic collector)


def _run_level(level, func, flat, spec, dims, kwargs, out_dims, randomness, name, lean=None):
    snap = _rng_snapshot() if randomness == "error" else None
    with level, Layer():
        out = NotImplemented
        if lean is not None:        # vmap(grad(f)): the lean path, where it applies (see _reverse.per_sample_grads)
            if not _REVERSE:
                from . import _reverse
                _REVERSE.append(_reverse)
            out = _REVERSE[0].per_sample_grads(level, lean, flat, spec, dims, kwargs)
        if out is NotImplemented:
            logical = []
            for a, d in zip(flat, dims):
                if d is None:
                    logical.append(a)
                else:
                    logical.append(level.wrap(a.movedim(d, 0) if d else a))
            out = func(*tree_unflatten(logical, spec), **kwargs)
    if snap is not None and _rng_moved(snap):
        raise RuntimeError(_RANDOM_ERROR)
    if out.__class__ is _REVERSE[0].Physical if _REVERSE else False:    # (the lean path's gradients, batched)
        return _physical_out(out, out_dims, name)
    flat_out, o_spec = tree_flatten(out)
    o_dims = _out_dims_for(out_dims, o_spec, flat_out, name)
    res = []
    for o, d in zip(flat_out, o_dims):
        if d is None:
            if isinstance(o, Tensor) and level.physical(o) is not None:
                raise ValueError(f"vmap({name}, ...): `{name}` can not return a BatchedTensor when out_dim is None")
            res.append(o)
            continue
        if not isinstance(o, Tensor):
            raise ValueError(f"vmap({name}, ...): `{name}` must only return Tensors, got type {type(o)}. Did you "
                             f"mean to set out_dims= to None for output?")
        p = level.physical(o)
        if p is None:
            p = level.broadcast(o)
        n = p.dim()
        if not -n <= d < n:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {d})")
        res.append(p.movedim(0, d) if d % n else p)
    level._phys.clear()         # (now, while the logical tensors are alive: their weakrefs go without a callback)
    return tree_unflatten(res, o_spec)


_REVERSE = []      # func._reverse, imported on first use (its per_sample_grads looked up on it: tests spy on it)


def _physical_out(out, out_dims, name):
    """vmap's outputs from the physical tensors ``out.flat`` (every one batched), as ``_run_level`` makes them."""
    if out_dims.__class__ is int and out_dims == 0:        # (the default: each as it is, batch dim first)
        return tree_unflatten(out.flat, out.spec)
    o_dims = _out_dims_for(out_dims, out.spec, out.flat, name)
    res = []
    for p, d in zip(out.flat, o_dims):
        if d is None:
            raise ValueError(f"vmap({name}, ...): `{name}` can not return a BatchedTensor when out_dim is None")
        n = p._array.ndim
        if not -n <= d < n:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {d})")
        res.append(p.movedim(0, d) if d % n else p)
    return tree_unflatten(res, out.spec)


def _rng_snapshot():
    """The global generator as randomness="error" compares it (a random op draws from it): a lazy snapshot
    (``Generator._mark``), whose state is copied only if the generator changes."""
    return _random.default_generator._mark()


def _rng_moved(snap):
    """Whether the global generator drew since ``snap``; if it did, it is put back as it was."""
    return _random.default_generator._moved(snap)
