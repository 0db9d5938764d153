"""torch.func's reverse-mode transforms: ``grad``, ``grad_and_value``, ``vjp``, ``jacrev``.

Each is plain reverse mode over the graph that the function records, with one twist per input: the tensors to
differentiate are replaced by stand-ins that require grad (a ``view_as`` alias: the transforms outside see it, so
``jacfwd(jacrev(f))`` gets its tangents through), so ``f`` may be given tensors that do not require grad and
nothing of the graph leaks out. The gradients are computed with ``create_graph`` only where something needs
their graph — a tensor outside the call that requires grad (an outer ``grad``, a closed-over parameter) or a
transform active below (a dual level: forward-over-reverse); otherwise the fast array path of the engine runs
and the results are plain tensors.

Under ``vmap`` (the transforms nearest to the call being batching levels) the same is done one level down: the
inputs are taken to their physical, batched arrays (an input not batched at a level is expanded along that
level's batch dim first, so its gradient is per sample), the stand-ins are made there and wrapped back up, and
after ``f`` the physical outputs are differentiated. Samples of a batch never mix, so the gradient of the sum over
the batch of the physical outputs is every sample's own gradient: ``vmap(grad(f))`` is one batched forward and one
batched backward. With no other transform active, vmap answers ``vmap(grad(f))`` through ``per_sample_grads``: the
same computation without the general machinery (the lean path).
"""

from __future__ import annotations

import numpy as np

from ..autograd import forward_ad as _fw
from ..autograd.engine import grad as _grad
from ..autograd.engine import _make_grads, run_backward
from ..autograd.function import AccumulateGrad
from ..autograd.grad_mode import _state, enable_grad, is_grad_enabled, no_grad
from ..tensor import Tensor
from ._vmap import BatchedLevel, _count
from ._forward import (Layer, _Spec, _error_if_complex, _outputs_only_tensors, _replace_args, _slice_argnums,
                       _wrap_argnum, tree_flatten, tree_unflatten)

__all__ = ["grad", "grad_and_value", "vjp", "jacrev"]


# --- levels: which batching levels the call is lowered through ------------------------------------------------------
def _batch_levels():
    """The vmap levels at the top of this thread's transform stack (innermost first): the ones a reverse transform
    called here differentiates through."""
    st = _state
    out = []
    i = st.top
    while i >= 0 and isinstance(st.interpreters[i], BatchedLevel):
        out.append(st.interpreters[i])
        i -= 1
    return out


def _below_vmap():
    """Whether a vmap level is active in this thread below the transform that sees the next op."""
    st = _state
    return any(isinstance(i, BatchedLevel) for i in st.interpreters[:st.top + 1])


class _At:
    """Run ops as if only the transforms up to stack index ``top`` were active."""

    def __init__(self, top):
        self.top = top

    def __enter__(self):
        self.prev = _state.top
        _state.top = self.top

    def __exit__(self, *exc):
        _state.top = self.prev


def _down(t, levels):
    """The tensor of ``t`` under all ``levels`` (innermost first): batched at every one of them."""
    for lv in levels:
        p = lv.physical(t)
        if p is None:
            with _At(lv.level - 1):
                p = lv.broadcast(t)
        t = p
    return t


def _up(t, levels):
    for lv in reversed(levels):
        t = lv.wrap(t)
    return t


def _bottom(levels):
    return levels[-1].level - 1 if levels else _state.top


def _stand_in(x):
    """An alias of ``x`` that requires grad (recorded from ``x`` when ``x`` requires grad)."""
    if x.requires_grad:
        return x.view_as(x)
    with no_grad():
        s = x.view_as(x)
    return s.requires_grad_()


def _reaches_outside(outputs, own):
    """Whether the graph of ``outputs`` reaches a leaf other than the stand-ins ``own`` (ids of the stand-ins)."""
    stack = []
    for o in outputs:
        if isinstance(o, Tensor):
            n = o.grad_fn
            if n is not None:
                stack.append(n)
            elif o.requires_grad and id(o) not in own:
                return True
    seen = set()
    while stack:
        n = stack.pop()
        k = id(n)
        if k in seen:
            continue
        seen.add(k)
        if isinstance(n, AccumulateGrad):
            v = n.variable
            if v is None or id(v) not in own:
                return True
            continue
        for f in getattr(n, "_next_fns", ()) or ():
            if f is not None and id(f) not in seen:
                stack.append(f)
    return False


class _Run:
    """One call of ``f`` with stand-ins for the differentiated inputs: what the transforms differentiate."""

    def __init__(self, func, args, argnums, api, has_aux, aux_api, kwargs=None):
        self.levels = _batch_levels()
        self.bottom = _bottom(self.levels)
        self.top = _state.top           # (vjp_fn may be called under transforms entered later: see _vjp_above)
        if not self.levels and _below_vmap():
            raise RuntimeError(f"{api}: a reverse-mode transform called inside a forward AD level "
                               f"(forward_ad.dual_level) inside vmap is not supported; use func.jvp/jacfwd there "
                               f"instead (they put their level below the vmap), or vmap inside it")
        with enable_grad():
            diff = _slice_argnums(args, argnums, as_tuple=False) if argnums is not None else args
            flat_d, self.d_spec = tree_flatten(diff)
            for d in flat_d:
                if not isinstance(d, Tensor):
                    raise ValueError(f"Thing passed to transform API must be Tensor, got {type(d)}")
            self.private = True         # (every leaf is a new tensor of ours, recorded from nothing: see _leaf)
            with _At(self.bottom):
                self.leaves = [self._leaf(d) for d in flat_d]
            new = tree_unflatten([_up(s, self.levels) for s in self.leaves], self.d_spec)
            call = args if argnums is None else \
                _replace_args(args, (new,) if isinstance(argnums, int) else new, argnums)
            if argnums is None:
                call = new
            for lv in self.levels:      # (a user Function's vmap rule is torch's forward only: see _vmap_function)
                lv.reverse_inside += 1
            try:
                with Layer():
                    out = func(*call, **(kwargs or {}))
            finally:
                for lv in self.levels:
                    lv.reverse_inside -= 1
        self.aux = None
        if has_aux:
            if not (isinstance(out, tuple) and len(out) == 2):
                raise RuntimeError(f"{aux_api}: output of function f should be a tuple: (output, aux) if has_aux "
                                   f"is True")
            out, self.aux = out
        self.out = out
        self.args = args

    def _leaf(self, d):
        """The stand-in of input ``d`` at the bottom. With nothing below the vmap levels to see ops (the common
        case), an input that does not require grad needs none: a new leaf over its physical array (an unbatched
        one broadcast along the batch dims, a view) does."""
        if self.levels and self.bottom < 0 and not d.requires_grad:
            shape, p = (), d
            for lv in self.levels:
                q = lv.physical(p)
                if q is None:
                    shape = (lv.size,) + shape
                else:
                    if shape:
                        break
                    p = q
            else:
                if not p.requires_grad:
                    arr = p._array
                    for n in reversed(shape):
                        arr = _expanded(arr, n)
                    return Tensor._make(arr, True)
        self.private = False
        return _stand_in(_down(d, self.levels))

    def physical(self, outs):
        with enable_grad(), _At(self.bottom):
            return [_down(o, self.levels) for o in outs]

    def needs_graph(self, phys_outs):
        """Whether the gradients must be recorded: something outside requires grad through them, or a transform
        below the call (a dual level) sees the backward."""
        self.closed = False
        if self.bottom >= 0:
            return True
        if not is_grad_enabled():
            return False
        self.closed = not _reaches_outside(phys_outs, {id(s) for s in self.leaves})
        return not self.closed

    def grads(self, phys_outs, cotangents, graph, retain=True):
        outs = [o for o in phys_outs]
        with enable_grad(), _At(self.bottom):
            diff = [(o, c) for o, c in zip(outs, cotangents) if o.requires_grad]
            if diff and not graph and self.private and self.closed:
                return self._private_grads(diff, retain)
            if diff:
                try:
                    gs = _grad([o for o, _ in diff], self.leaves, [c for _, c in diff], retain_graph=retain or graph,
                               create_graph=graph, allow_unused=True)
                except RuntimeError as e:
                    raise _in_sample_terms(e, len(self.levels)) from None
            else:
                gs = [None] * len(self.leaves)
            gs = [g if g is not None else _zeros(s) for g, s in zip(gs, self.leaves)]
            return gs

    def _private_grads(self, diff, retain):
        try:
            gs = _accumulated(self.leaves, [o for o, _ in diff], [c for _, c in diff], retain)
        except RuntimeError as e:
            raise _in_sample_terms(e, len(self.levels)) from None
        return [g if g is not None else _zeros(s) for g, s in zip(gs, self.leaves)]

    def lift(self, ts, graph):
        """Physical results back to the caller's level (and without a graph where none is needed)."""
        if not graph:
            for t in ts:
                _fw._drop_graph(t)
        elif self.bottom >= 0:
            self.unrecord(ts)
        with _At(self.bottom):
            return [_up(t, self.levels) for t in ts]

    def unrecord(self, ts):
        """Results recorded only so that a transform below (a dual level) saw the backward, whose graph reaches
        nothing but the stand-ins, lose it in place, and so do their tangents whose graph reaches nothing else (as
        torch's: ``jacfwd(jacrev(f))(x)`` does not require grad)."""
        own = {id(s) for s in self.leaves}
        levels = _fw._thread_levels()
        for t in ts:
            if t.requires_grad and not _reaches_outside([t], own):
                t.grad_fn, t._rg = None, False
            for lv in levels:
                tl = lv.tangent(t)
                if tl is not None and tl.requires_grad and not _reaches_outside([tl], own):
                    tl.grad_fn, tl._rg = None, False

    def finish(self, tree, graph):
        """The value (or aux) as ``f`` returned it; without a graph (new tensors over the same arrays) unless one is
        needed. (Not in place: ``vjp_fn`` still differentiates the outputs, and aux may be anyone's tensor.)"""
        if graph:
            return tree
        flat, spec = tree_flatten(tree)
        out = []
        for t in flat:
            if isinstance(t, Tensor) and (t.requires_grad or self.levels):
                with enable_grad(), _At(self.bottom):
                    p = _down(t, self.levels)
                    if p.requires_grad:
                        t = _up(Tensor._make(p._array), self.levels)
            out.append(t)
        return tree_unflatten(out, spec)


def _in_sample_terms(e, nb):
    """An in-place (version) error met differentiating the physical tensors, naming the tensor by one sample's
    shape as torch's does (its batch dims dropped)."""
    import re
    msg = str(e)
    m = re.search(r"\[(tapegrad\.\w+Tensor) \[([\d, ]*)\]\]", msg)
    if not nb or m is None or not msg.startswith("one of the variables needed for gradient computation"):
        return e
    dims = [d for d in m.group(2).split(", ") if d][nb:]
    return RuntimeError(msg[:m.start()] + f"[{m.group(1)} [{', '.join(dims)}]]" + msg[m.end():])


def _accumulated(leaves, outs, cotangents, retain):
    """The gradients of ``outs`` for our new ``leaves`` (None where none arrives) when the graph of ``outs`` leads to
    those leaves only: the engine's plain walk, accumulating into the leaves' ``.grad`` (nobody else sees them) —
    no capture of ``autograd.grad``'s inputs, and no walk to find the nodes that lead to them (every node does)."""
    for s in leaves:
        s._grad = None
    run_backward(outs, _make_grads(outs, cotangents), retain_graph=retain)
    gs = [s._grad for s in leaves]
    for s in leaves:
        s._grad = None
    return gs


def _expanded(arr, size):
    """``arr`` expanded along a new leading dim of ``size`` (stride 0, read-only): ``np.broadcast_to``'s result,
    made directly where ``arr`` is contiguous (a fifth of the time)."""
    if arr.flags.c_contiguous and arr.size:
        out = np.ndarray((size,) + arr.shape, arr.dtype, arr, 0, (0,) + arr.strides)
        out.flags.writeable = False
        return out
    return np.broadcast_to(arr, (size,) + arr.shape)


def _finish_aux(aux, level):
    """``_Run.finish`` of ``aux`` for the lean path (one vmap level, nothing below it): a tensor that requires grad
    becomes a new one over its physical array."""
    flat, spec = tree_flatten(aux)
    out = []
    for t in flat:
        if isinstance(t, Tensor):
            p = _down(t, (level,))
            if p.requires_grad:
                t = level.wrap(Tensor._make(p._array))
        out.append(t)
    return tree_unflatten(out, spec)


def _zeros(like):
    return Tensor._make(np.zeros(like._array.shape, like._array.dtype))


def _ones(like):
    return Tensor._make(np.ones(like._array.shape, like._array.dtype))


# --- grad, grad_and_value ----------------------------------------------------------------------------------------
def grad_and_value(func, argnums=0, has_aux=False):
    """A function returning ``(gradient, value)`` of the scalar ``func`` with respect to the arguments ``argnums``
    (``((gradient, (value, aux))`` with ``has_aux``).

    >>> grad_and_value(lambda x: (x ** 2).sum())(tapegrad.tensor([1., 2.]))
    (tensor([2., 4.]), tensor(5.))
    """
    def wrapper(*args, **kwargs):
        run = _Run(func, args, argnums, "grad_and_value(f)(*args)", has_aux, "grad_and_value(f)(*args)", kwargs)
        out = run.out
        if not isinstance(out, Tensor):
            raise RuntimeError(f"grad_and_value(f)(*args): Expected f(*args) to return a Tensor, got {type(out)}")
        if out.dim() != 0:
            raise RuntimeError(f"grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, got tensor "
                               f"with {out.dim()} dims. Maybe you wanted to use the vjp or jacrev APIs instead?")
        (phys,) = run.physical([out])
        graph = run.needs_graph([phys])
        gs = run.lift(run.grads([phys], [_ones(phys)], graph, retain=False), graph)
        g = tree_unflatten(gs, run.d_spec)
        if graph and run.bottom >= 0:        # (the backward is done: the value and aux need no graph of their own)
            with enable_grad(), _At(run.bottom):
                run.unrecord([_down(t, run.levels) for t in tree_flatten((out, run.aux))[0] if isinstance(t, Tensor)])
        value = run.finish(out, graph)
        if has_aux:
            return g, (value, run.finish(run.aux, graph))
        return g, value
    _name(wrapper, func, "grad_and_value")
    wrapper._per_sample = (func, argnums, has_aux, True)       # (what vmap's lean path needs: per_sample_grads)
    return wrapper


def grad(func, argnums=0, has_aux=False):
    """A function returning the gradient of the scalar ``func`` with respect to the arguments ``argnums`` (an int,
    or a tuple of ints: a tuple of gradients); each argument may be a pytree of tensors. With ``has_aux``, ``func``
    returns ``(output, aux)`` and the function ``(gradient, aux)``.

    >>> grad(lambda x: x.sin().sum())(tapegrad.tensor([0., 1.]))
    tensor([1.0000, 0.5403])
    """
    gv = grad_and_value(func, argnums, has_aux)

    def wrapper(*args, **kwargs):
        g, value = gv(*args, **kwargs)
        return (g, value[1]) if has_aux else g
    _name(wrapper, func, "grad")
    wrapper._per_sample = (func, argnums, has_aux, False)
    return wrapper


def _name(wrapper, func, what):
    wrapper.__name__ = getattr(func, "__name__", what)
    wrapper.__doc__ = getattr(func, "__doc__", None)
    wrapper.__wrapped__ = func


# --- vmap(grad(f)): per-sample gradients, the lean path --------------------------------------------------------------
class Physical:
    """``per_sample_grads``'s answer for ``grad(f)``: the physical gradients (batch dim first), flattened, and their
    tree's spec."""

    __slots__ = ("flat", "spec")

    def __init__(self, flat, spec):
        self.flat, self.spec = flat, spec


def per_sample_grads(level, lean, flat, spec, dims, kwargs):
    """``vmap(grad(f))`` (or ``grad_and_value``) called with nothing else active: what ``grad`` lowered through the
    vmap level computes (see ``_Run``), without its general machinery. The differentiated inputs become new leaves
    over their physical arrays (an unbatched one expanded along the batch: stride 0, so ``BatchedLinear`` takes its
    one-product path), ``f`` runs once under ``level``, and one backward of the physical output (the per-sample
    values: the gradient of their sum is each sample's own gradient, the samples never mixing) gives every sample's
    gradient, already batched. ``flat``/``spec``/``dims``: the flattened arguments of the vmap call and their
    mapped dims. Returns the logical results (for vmap's outputs; for ``grad(f)``, its physical gradients as a
    ``Physical``), or NotImplemented when the general path must
    run: another transform active, an input to differentiate that is not a tensor or requires grad (an outer
    autograd needs the graph), argnums the general path refuses (it raises torch's errors)."""
    func, argnums, has_aux, with_value = lean
    if level.level != 0 or spec.kind is not tuple:
        return NotImplemented
    n = len(spec.children)
    try:
        ks = (_wrap_argnum(argnums, n),) if isinstance(argnums, int) else \
            tuple(_wrap_argnum(a, n) for a in argnums) if isinstance(argnums, tuple) else None
    except RuntimeError:
        return NotImplemented
    if not ks or len(set(ks)) != len(ks):
        return NotImplemented
    starts, at = [], 0
    for c in spec.children:
        starts.append(at)
        at += _count(c)
    size = level.size
    positions = []
    for k in ks:
        positions.extend(range(starts[k], starts[k] + _count(spec.children[k])))
    for j in positions:
        a = flat[j]
        if not isinstance(a, Tensor) or a.requires_grad:
            return NotImplemented
    logical = list(flat)
    leaves = []
    for j in positions:
        a, d = flat[j], dims[j]
        arr = a._array
        arr = _expanded(arr, size) if d is None else np.moveaxis(arr, d, 0) if d else arr
        s = Tensor._make(arr, True)
        leaves.append(s)
        logical[j] = level.wrap(s)
    chosen = set(positions)
    for j, (a, d) in enumerate(zip(flat, dims)):
        if d is not None and j not in chosen:
            logical[j] = level.wrap(a.movedim(d, 0) if d else a)
    level.reverse_inside += 1
    try:
        with enable_grad(), Layer():
            out = func(*tree_unflatten(logical, spec), **kwargs)
    finally:
        level.reverse_inside -= 1
    api = "grad_and_value(f)(*args)"
    aux = None
    if has_aux:
        if not (isinstance(out, tuple) and len(out) == 2):
            raise RuntimeError(f"{api}: output of function f should be a tuple: (output, aux) if has_aux is True")
        out, aux = out
    if not isinstance(out, Tensor):
        raise RuntimeError(f"{api}: Expected f(*args) to return a Tensor, got {type(out)}")
    if out.dim() != 0:
        raise RuntimeError(f"{api}: Expected f(*args) to return a scalar Tensor, got tensor with {out.dim()} dims. "
                           f"Maybe you wanted to use the vjp or jacrev APIs instead?")
    ambient = is_grad_enabled()
    with enable_grad(), _At(-1):
        p = level.physical(out)
        if p is None:           # (an output not batched: expanded along the batch, as _down does)
            p = _down(out, (level,))
        graph = ambient and _reaches_outside([p], {id(s) for s in leaves})     # (as _Run.needs_graph)
        try:
            if not p.requires_grad:
                gs = [None] * len(leaves)
            elif ambient and not graph:           # (the graph leads to our leaves only)
                gs = _accumulated(leaves, [p], [_ones(p)], False)
            else:
                gs = list(_grad([p], leaves, [_ones(p)], retain_graph=graph, create_graph=graph, allow_unused=True))
        except RuntimeError as e:
            raise _in_sample_terms(e, 1) from None
        gs = [g if g is not None else _zeros(s) for g, s in zip(gs, leaves)]
        d_spec = spec.children[ks[0]] if isinstance(argnums, int) else _Spec(tuple, None,
                                                                              tuple(spec.children[k] for k in ks))
        if not (with_value or has_aux):       # (grad(f): the gradients only, every one batched: vmap takes them
            level._phys.clear()                #  as they are, with no logical wrap to look up again; the table
            return Physical(gs, d_spec)        #  cleared while the logical tensors live: no weakref callbacks)
        gs = [level.wrap(g) for g in gs]
        if not graph:
            if p.requires_grad:
                out = level.wrap(Tensor._make(p._array))
            if has_aux:
                aux = _finish_aux(aux, level)
    g = tree_unflatten(gs, d_spec)
    if with_value:
        return (g, (out, aux)) if has_aux else (g, out)
    return (g, aux) if has_aux else g


# --- vjp -----------------------------------------------------------------------------------------------------------
def vjp(func, *primals, has_aux=False):
    """``(func(*primals), vjp_fn)`` (and ``aux``): ``vjp_fn(cotangents)`` is the tuple of vector-Jacobian products,
    one per primal, each one backward over the graph recorded here.

    >>> out, vjp_fn = vjp(lambda x: x ** 2, tapegrad.tensor([1., 2.]))
    >>> vjp_fn(tapegrad.tensor([1., 1.]))
    (tensor([2., 4.]),)
    """
    return _vjp_with_argnums(func, primals, None, has_aux)


def _vjp_with_argnums(func, primals, argnums, has_aux):
    run = _Run(func, primals, argnums, "vjp(f, *primals)", has_aux, "vjp(f, *primals)")
    flat_o, o_spec = tree_flatten(run.out)
    if len(flat_o) == 0 or (len(flat_o) == 1 and flat_o[0] is None):
        raise RuntimeError(f"vjp(f, *primals): Expected f to be a function that has non-empty output (got output = "
                           f"{flat_o})")
    for o in flat_o:
        if not isinstance(o, Tensor):
            raise RuntimeError(f"vjp(f, *primals): expected f(*primals) to return only tensors, got unsupported type "
                               f"{type(o)}")
        if not (o.dtype.is_floating_point or o.dtype.is_complex):
            raise RuntimeError(f"vjp(f, ...): All outputs of f must be floating-point or complex Tensors, got Tensor "
                               f"with dtype {o.dtype}")
    phys = run.physical(flat_o)
    graph_out = run.needs_graph(phys)

    def vjp_fn(cotangents, retain_graph=True, create_graph=None):
        flat_c, c_spec = tree_flatten(cotangents)
        if c_spec != o_spec:
            raise RuntimeError(f"Expected pytree structure of cotangents to be the same as pytree structure of outputs "
                               f"to the function. cotangents: {c_spec}, primal output: {o_spec}")
        for c, o in zip(flat_c, flat_o):
            if not isinstance(c, Tensor):
                raise RuntimeError(f"Expected tensors, got unsupported type {type(c)}")
            if tuple(c.shape) != tuple(o.shape):
                raise RuntimeError(f"Mismatch in shape: grad_output[0] has a shape of {c.shape} and output[0] has a "
                                   f"shape of {o.shape}.")
        graph = graph_out or (create_graph if create_graph is not None else is_grad_enabled()) and \
            any(c.requires_grad for c in flat_c)
        if _state.top > run.top:
            if run.levels:
                return tree_unflatten(_vjp_per_sample(run, phys, flat_c, graph), run.d_spec)
            return tree_unflatten(_vjp_above(run, phys, flat_c, graph), run.d_spec)
        return tree_unflatten(_vjp_here(run, phys, flat_c, graph, retain_graph), run.d_spec)

    value = run.finish(run.out, graph_out)
    if has_aux:
        return value, vjp_fn, run.finish(run.aux, graph_out)
    return value, vjp_fn


def _vjp_here(run, phys, cotangents, graph, retain):
    """``vjp_fn`` at the transform stack ``vjp`` saw: the cotangents down to the physical outputs, one backward."""
    with enable_grad(), _At(run.bottom):
        cs = [_down(c, run.levels) for c in cotangents]
    return run.lift(run.grads(phys, cs, graph, retain=retain), graph)


def _vjp_per_sample(run, phys, cotangents, graph):
    """``vjp_fn`` of a ``vjp`` taken under vmap, called under vmaps entered after it (the NTK's
    ``vmap(vmap(get_ntk))`` mapping ``vjp_fn`` over basis vectors): the backward stays batched by the vmaps below,
    and runs once per sample of the new ones (their cotangents sliced, the results stacked and wrapped back)."""
    new = []
    i = _state.top
    while i > run.top:
        lv = _state.interpreters[i]
        if not isinstance(lv, BatchedLevel):
            raise RuntimeError("vjp_fn: the vjp_fn of a vjp computed under vmap can be called under vmaps entered "
                               "after that vjp, not under other transforms; call vjp inside that transform instead")
        new.append(lv)
        i -= 1
    sizes = [lv.size for lv in reversed(new)]         # outermost first, as _down lays the batch dims out
    n = int(np.prod(sizes))
    with enable_grad(), _At(run.top):
        flat = [_down(c, new) for c in cotangents]
        flat = [c.reshape((n,) + tuple(c.shape[len(sizes):])) for c in flat]
        rows = [_vjp_here(run, phys, [c[k] for c in flat], graph, True) for k in range(n)]
        from ..ops.shape import stack
        gs = [stack(list(col)).reshape(tuple(sizes) + tuple(col[0].shape)) for col in zip(*rows)]
        return [_up(g, new) for g in gs]


def _vjp_above(run, phys, cotangents, graph):
    """``vjp_fn`` called under transforms entered after ``vjp`` (``vmap(vjp_fn)(basis)``: a Jacobian's rows at
    once): the backward is walked as recorded ops, which those transforms see (a vmap batches them by the
    cotangents), and its results are detached unless a graph is wanted."""
    diff = [(o, c) for o, c in zip(phys, cotangents) if o.requires_grad]
    with enable_grad():
        gs = _grad([o for o, _ in diff], run.leaves, [c for _, c in diff], retain_graph=True, create_graph=True,
                   allow_unused=True) if diff else [None] * len(run.leaves)
        gs = [g if g is not None else _zeros(s) for g, s in zip(gs, run.leaves)]
    return gs if graph else [g.detach() for g in gs]


# --- jacrev ---------------------------------------------------------------------------------------------------------
def _batchable(p):
    """Whether the backward of ``p``'s graph can be batched by vmap: every node a built-in op whose backward is
    written in tapegrad ops (not a user's ``Function``, whose backward may read its arrays, nor a
    ``once_differentiable`` one, which does)."""
    from ..autograd.function import Primitive
    seen, stack = set(), [p.grad_fn]
    while stack:
        n = stack.pop()
        if n is None or id(n) in seen:
            continue
        seen.add(id(n))
        cls = getattr(n, "_forward_cls", None)
        if cls is not None and (not issubclass(cls, Primitive) or getattr(cls.backward, "once_differentiable", False)):
            return False
        stack.extend(getattr(n, "_next_fns", ()) or ())
    return True


def _chunk_rows(run, p, start, k, nb):
    """Rows ``start .. start + k`` of the Jacobian of the physical output ``p`` (``nb`` batch dims), as torch's
    ``jacrev`` computes them: the vjp of the recorded graph mapped by a vmap over ``k`` basis cotangents — one
    batched backward. The vmap level is entered just above the graph's level (below the vmaps ``jacrev`` was
    called under), so that it batches the backward's ops on the physical tensors. Per differentiated input, a
    tensor of shape ``batch + (k,) + input shape``."""
    from ._forward import _Below
    shape = tuple(p.shape)
    basis = np.zeros((k, int(np.prod(shape[nb:], dtype=np.int64))), p._array.dtype)
    basis[np.arange(k), start + np.arange(k)] = 1
    basis = basis.reshape((k,) + (1,) * nb + shape[nb:])
    import warnings

    from . import _vmap
    level = BatchedLevel(k)
    warned = set(_vmap._warned)
    with _Below(level, run.bottom + 1), warnings.catch_warnings():
        # (a backward op without a batching rule runs row by row, as jacrev did before: jacrev's own business,
        #  not the caller's vmap, so no warning here, and none kept from giving one to a vmap of the caller's)
        warnings.filterwarnings("ignore", "There is a performance drop", UserWarning)
        with enable_grad(), _At(level.level):
            cot = level.wrap(Tensor._make(np.broadcast_to(basis, (k,) + shape)))
            gs = _grad([p], run.leaves, [cot], retain_graph=True, create_graph=True, allow_unused=True)
        _vmap._warned.intersection_update(warned)
        out = []
        with enable_grad(), _At(level.level - 1):
            for g, s in zip(gs, run.leaves):
                q = level.physical(g) if g is not None else None
                if g is None:
                    q = Tensor._make(np.zeros((k,) + s._array.shape, s._array.dtype))
                elif q is None:       # (not batched by the cotangents: every row the same; new memory)
                    q = g.expand((k,) + tuple(s.shape)).contiguous()
                out.append(q.movedim(0, nb))
    return out


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None, _preallocate_and_copy=False):
    """The Jacobian of ``func`` with respect to the arguments ``argnums`` by reverse mode, over a graph recorded
    once: its rows ``chunk_size`` at a time (None: all at once) by one backward batched by vmap over that many basis
    cotangents, as torch's (``chunk_size=1``: a backward per row). ``jac[i][j]`` has shape
    ``output_i.shape + input_j.shape``.

    >>> jacrev(lambda x: x ** 2)(tapegrad.tensor([1., 2.]))
    tensor([[2., 0.],
            [0., 4.]])
    """
    if not (chunk_size is None or chunk_size > 0):
        raise ValueError("jacrev: `chunk_size` should be greater than 0.")

    def wrapper(*args):
        _error_if_complex("jacrev", tree_flatten(args)[0], True)
        run = _Run(func, args, argnums, "vjp(f, *primals)", has_aux, "vjp(f, *primals)")
        flat_o, o_spec = tree_flatten(run.out)
        _outputs_only_tensors(flat_o, "vjp(f, *primals)")
        _error_if_complex("jacrev", flat_o, False)
        phys = run.physical(flat_o)
        graph = run.needs_graph(phys)
        from ..ops.shape import cat
        nb = len(run.levels)
        jac = []
        with enable_grad(), _At(run.bottom):
            for o, p in zip(flat_o, phys):
                n = o.nelement()
                rows = [[] for _ in run.leaves]
                flat = p.reshape(tuple(p.shape[:nb]) + (-1,))
                step = max(n, 1) if chunk_size is None else chunk_size
                batched = step > 1 and n > 1 and p.requires_grad and _batchable(p)
                for start in range(0, n, step):
                    k = min(step, n - start)
                    if batched:
                        gs = _chunk_rows(run, p, start, k, nb)
                    elif not p.requires_grad:     # (the output does not depend on the inputs)
                        gs = [Tensor._make(np.zeros(s._array.shape[:nb] + (k,) + s._array.shape[nb:], s._array.dtype))
                              for s in run.leaves]
                    else:                   # (a row at a time: one backward each)
                        gs = []
                        for j in range(start, min(start + step, n)):
                            row = flat[(slice(None),) * nb + (j,)]
                            gs.append([g.unsqueeze(nb) for g in run.grads([row], [_ones(row)], graph, retain=True)])
                        gs = [g[0] if len(gs) == 1 else cat(list(g), nb) for g in zip(*gs)]
                    for r, g in zip(rows, gs):
                        r.append(g)
                ins = []
                for r, s in zip(rows, run.leaves):
                    batch, shape = tuple(s.shape[:nb]), tuple(s.shape[nb:])
                    m = (r[0] if len(r) == 1 else cat(r, nb)) if r else _zeros(s).reshape(batch + (0,) + shape)
                    ins.append(m.reshape(batch + tuple(o.shape) + shape))
                jac.append(ins)
        res = []
        for ins in jac:
            lifted = tree_unflatten(run.lift(ins, graph), run.d_spec)
            res.append(lifted)
        res = tree_unflatten(res, o_spec)
        if has_aux:
            return res, run.finish(run.aux, graph)
        return res
    _name(wrapper, func, "jacrev")
    return wrapper
