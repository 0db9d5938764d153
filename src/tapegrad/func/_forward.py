"""torch.func's forward-mode transforms: ``jvp``, ``jacfwd``, ``linearize``, ``hessian``.

``jvp`` runs the function once inside its own dual level (``autograd.forward_ad.DualLevel``: an Interpreter, so
it nests — ``jvp(jvp(f))``, ``jacfwd(jacfwd(f))`` — and composes with reverse mode: ``jacfwd(jacrev(f))``).
``jacfwd`` pushes the standard basis of the inputs through ``jvp`` in one ``vmap`` over the basis, as torch
does (``randomness`` is that vmap's: "error" refuses a random op, "same" gives every basis vector the same random
numbers, "different" does not). ``linearize`` runs the function
once, recording the graph, and answers each tangent with one backward of the recorded vjp (the vjp is linear in
its cotangent; its backward with respect to the cotangent is ``J t``): the forward pass is not repeated.

Under vmap (the transforms nearest to the call being vmap levels) ``jvp``'s dual level goes *below* the vmaps and
sees the batched arrays: ``vmap(jvp(f))`` is computed as ``jvp(vmap(f))`` with batched tangents, so a reverse
transform inside (``vmap(jacfwd(jacrev(f)))``) and an op run sample by sample (a per-sample index) work there.

Inputs and outputs are pytrees (tuples, lists, dicts, namedtuples of Tensors), as torch's.
"""

from __future__ import annotations

from collections import OrderedDict, defaultdict, deque

import numpy as np

from ..autograd import forward_ad as _fw
from ..autograd.engine import grad as _grad
from ..autograd.function import active_interpreters
from ..autograd.grad_mode import _state, enable_grad, is_grad_enabled, no_grad
from ..tensor import Size, Tensor

__all__ = ["jvp", "jacfwd", "linearize", "hessian"]

_JVP = "jvp(f, primals, tangents)"


# --- pytrees (the containers torch.func's transforms take and return) -----------------------------------------------
class _Spec:
    """The structure of a pytree: a node type (None for a leaf), its context (dict keys, namedtuple type) and its
    children; prints as torch's ``TreeSpec``."""

    __slots__ = ("kind", "context", "children")

    def __init__(self, kind, context=None, children=()):
        self.kind, self.context, self.children = kind, context, children

    def __eq__(self, other):
        return isinstance(other, _Spec) and (self.kind, self.context, self.children) == \
            (other.kind, other.context, other.children)

    __hash__ = None

    def _text(self, indent):
        if self.kind is None:
            return "*"
        kids = (",\n" + " " * (indent + 2)).join(c._text(indent + 2) for c in self.children)
        ctx = "None" if self.context is None else str(self.context) if self.kind is _NAMEDTUPLE or \
            self.kind in REGISTERED else repr(self.context)
        if self.kind is defaultdict:
            ctx = f"[{self.context[0]}, {self.context[1]!r}]"
        name = "namedtuple" if self.kind is _NAMEDTUPLE else self.kind.__name__
        return f"TreeSpec({name}, {ctx}, [{kids}])"

    def __repr__(self):
        return self._text(0)

    # (torch.utils._pytree's TreeSpec surface)
    @property
    def num_leaves(self):
        return 1 if self.kind is None else sum(c.num_leaves for c in self.children)

    @property
    def num_children(self):
        return len(self.children)

    def is_leaf(self):
        return self.kind is None

    def unflatten(self, leaves):
        leaves = list(leaves)
        if len(leaves) != self.num_leaves:
            raise ValueError(f"treespec.unflatten(leaves): `leaves` has length {len(leaves)} but the spec refers to "
                             f"a pytree that holds {self.num_leaves} items ({self}).")
        return _build(self, iter(leaves))


class _NAMEDTUPLE:
    pass


# the node types registered by ``torch.utils._pytree.register_pytree_node``: class -> (flatten_fn, unflatten_fn)
REGISTERED = {}


_LEAF = _Spec(None)


def _flatten(tree, leaves):
    kind = tree.__class__
    if kind is Tensor:                        # (the common cases first: exact types)
        leaves.append(tree)
        return _LEAF
    if kind is dict:
        keys = list(tree)
        return _Spec(dict, keys, tuple([_flatten(tree[k], leaves) for k in keys]))
    if kind is tuple or kind is list:
        return _Spec(kind, None, tuple([_flatten(c, leaves) for c in tree]))
    if isinstance(tree, Tensor):
        leaves.append(tree)
        return _LEAF
    # torch's registered node types; any other subclass of list/tuple/dict is a leaf, as in torch.utils._pytree
    if kind is Size or (hasattr(kind, "_fields") and kind.__module__.endswith("return_types")):
        return _Spec(kind, None, tuple(_flatten(c, leaves) for c in tree))    # (torch.Size, structseq results)
    if isinstance(tree, tuple) and hasattr(type(tree), "_fields"):
        return _Spec(_NAMEDTUPLE, type(tree), tuple(_flatten(c, leaves) for c in tree))
    node = REGISTERED.get(kind)
    if node is not None:                     # (register_pytree_node: the class's own flatten)
        children, context = node[0](tree)
        return _Spec(kind, context, tuple(_flatten(c, leaves) for c in children))
    if kind is OrderedDict:
        keys = list(tree)
        return _Spec(kind, keys, tuple(_flatten(tree[k], leaves) for k in keys))
    if kind is defaultdict:
        keys = list(tree)
        return _Spec(kind, (tree.default_factory, keys), tuple(_flatten(tree[k], leaves) for k in keys))
    if kind is deque:
        return _Spec(kind, tree.maxlen, tuple(_flatten(c, leaves) for c in tree))
    leaves.append(tree)
    return _LEAF


def tree_flatten(tree):
    """``(leaves, spec)``."""
    leaves = []
    return leaves, _flatten(tree, leaves)


def tree_unflatten(leaves, spec):
    return _build(spec, iter(leaves))


def _build(s, it):
    """(A module function, not a closure calling itself: that would be a reference cycle holding the leaves until
    the cyclic collector runs.)"""
    if s.kind is None:
        return next(it)
    kids = [_build(c, it) for c in s.children]
    if s.kind is _NAMEDTUPLE:
        return s.context(*kids)
    if hasattr(s.kind, "_fields"):           # a structseq result (return_types.max...)
        return s.kind(*kids)
    if s.kind is Size:                        # (torch's Size node unflattens to a tuple)
        return tuple(kids)
    if s.kind is defaultdict:
        return defaultdict(s.context[0], zip(s.context[1], kids))
    if s.kind is deque:
        return deque(kids, s.context)
    if s.kind is dict or s.kind is OrderedDict:
        return s.kind(zip(s.context, kids))
    node = REGISTERED.get(s.kind)
    if node is not None:
        return node[1](kids, s.context)
    return s.kind(kids)


# --- argnums --------------------------------------------------------------------------------------------------------
def _wrap_argnum(argnum, num_args):
    if not isinstance(argnum, int):
        raise RuntimeError(f"argnum must be int, got: {type(argnum)}")
    if 0 <= argnum < num_args:
        return argnum
    if -num_args <= argnum < 0:
        return argnum + num_args
    raise RuntimeError(f"Got argnum={argnum}, but only {num_args} positional inputs")


def _slice_argnums(args, argnums, as_tuple=True):
    if not isinstance(argnums, (int, tuple)):
        raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")
    if isinstance(argnums, int):
        a = args[_wrap_argnum(argnums, len(args))]
        return (a,) if as_tuple else a
    argnums = tuple(_wrap_argnum(a, len(args)) for a in argnums)
    if len(argnums) == 0:
        raise RuntimeError("argnums must be non-empty")
    if len(set(argnums)) != len(argnums):
        raise RuntimeError(f"argnums elements must be unique, got {argnums}")
    return tuple(args[i] for i in argnums)


def _replace_args(args, new, argnums):
    if isinstance(argnums, int):
        k = _wrap_argnum(argnums, len(args))
        return tuple(new[0] if i == k else a for i, a in enumerate(args))
    pos = [_wrap_argnum(a, len(args)) for a in argnums]
    return tuple(new[pos.index(i)] if i in pos else a for i, a in enumerate(args))


def _tensors_only(items, api, argname):
    if len(items) == 0:
        raise RuntimeError(f"{api}: Expected {argname} to contain at least one Tensor.")
    for t in items:
        if not isinstance(t, Tensor):
            raise RuntimeError(f"{api}: Expected {argname} to only contain Tensors, got {type(t)}")


def _outputs_only_tensors(outs, api):
    if (len(outs) == 1 and outs[0] is None) or len(outs) < 1:
        raise RuntimeError(f"{api}: Expected f to be a function that has non-empty output (got output = {outs})")
    for o in outs:
        if not isinstance(o, Tensor):
            raise RuntimeError(f"{api}: expected f(*primals) to return only tensors, got unsupported type {type(o)}")


def _zeros_like(t):
    return Tensor._make(np.zeros(t._array.shape, t._array.dtype))


# --- jvp -------------------------------------------------------------------------------------------------------------
def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    """``(func(*primals), J tangents)`` (and ``aux`` with ``has_aux``): the Jacobian-vector product, in one
    forward pass.

    >>> jvp(lambda x: x.sin(), (tapegrad.tensor([0., 1.]),), (tapegrad.tensor([1., 1.]),))
    (tensor([0.0000, 0.8415]), tensor([1.0000, 0.5403]))
    """
    return _jvp_with_argnums(func, primals, tangents, None, strict=strict, has_aux=has_aux)


def _jvp_with_argnums(func, primals, tangents, argnums, *, strict=False, has_aux=False):
    if not isinstance(primals, tuple):
        raise RuntimeError(f"{_JVP}: Expected primals to be a tuple. E.g. it should be valid to call f(*primals).")
    diff = primals if argnums is None else _slice_argnums(primals, argnums)
    flat_p, p_spec = tree_flatten(diff)
    flat_t, t_spec = tree_flatten(tangents)
    if p_spec != t_spec:
        raise RuntimeError(f"{_JVP}: Expected primals and tangents to have the same python structure. For example, "
                           f"if primals is a tuple of 3 tensors, tangents also must be. Got primals with structure "
                           f"{p_spec} and tangents with structure {t_spec}")
    _tensors_only(flat_p, _JVP, "primals")
    _tensors_only(flat_t, _JVP, "tangents")
    batch = _top_vmaps()
    if batch:
        return _lowered_jvp(func, primals, flat_p, flat_t, p_spec, argnums, strict, has_aux, batch)
    level = _fw.DualLevel()
    with level:
        duals = tree_unflatten([_fw._dual(level, p, t) for p, t in zip(flat_p, flat_t)], p_spec)
        if argnums is not None:
            duals = _replace_args(primals, duals, argnums)
        flat_out, o_spec, aux = _jvp_outputs(func, duals, has_aux)
        prim, tans = [], []
        for o in flat_out:
            t = level.tangent(o)
            if t is None:
                if strict:
                    raise RuntimeError("jvp(f, primals, tangents, strict=True): The output of f is independent of the "
                                       "inputs. This is not allowed with strict=True.")
                t = _zeros_like(o)
            prim.append(o)
            tans.append(t)
        if has_aux:
            flat_aux, a_spec = tree_flatten(aux)
            for a in flat_aux:
                if not isinstance(a, Tensor):
                    raise RuntimeError(f"Expected tensors, got unsupported type {type(a)}")
            aux = tree_unflatten(flat_aux, a_spec)
    res = (tree_unflatten(prim, o_spec), tree_unflatten(tans, o_spec))
    return (*res, aux) if has_aux else res


# --- jvp under vmap: the dual level goes below the vmaps --------------------------------------------------------------
def _top_vmaps():
    """The vmap levels at the top of this thread's transform stack (innermost first)."""
    from ..autograd.grad_mode import _state
    out, i = [], _state.top
    while i >= 0 and getattr(_state.interpreters[i], "batching", False):
        out.append(_state.interpreters[i])
        i -= 1
    return out


class _Below:
    """``level`` entered, then moved down to stack index ``pos`` (below the transforms from there up), and moved
    back to the top to be exited. ``jvp`` under vmap puts its dual level below the vmaps at the top of the stack:
    ``vmap(jvp(f))`` computed as ``jvp(vmap(f))`` with batched tangents (the same numbers: the samples are
    independent); ``jacrev`` puts the vmap over its basis vectors below the vmaps it was called under."""

    def __init__(self, level, pos):
        self.level, self.pos = level, pos

    def _place(self, pos):
        from ..autograd.grad_mode import _state
        stack = [i for i in _state.interpreters if i is not self.level]
        stack.insert(pos, self.level)
        _state.interpreters = tuple(stack)
        for k, i in enumerate(stack):
            i.level = k

    def __enter__(self):
        from ..autograd.grad_mode import _state
        prev, _state.top = _state.top, len(_state.interpreters) - 1     # (entered at the top, then moved)
        self.level.enter()
        self._place(self.pos)
        _state.top = prev if prev < self.pos else prev + 1
        return self.level

    def __exit__(self, *exc):
        from ..autograd.grad_mode import _state
        prev, _state.top = _state.top, len(_state.interpreters) - 1
        self._place(len(_state.interpreters) - 1)
        self.level.exit()
        _state.top = prev if prev < self.pos else prev - 1
        return False


class Layer:
    """While a transform (grad, vjp, jacrev, jvp, jacfwd, vmap, functionalize) runs the user's function: what
    ``torch._C._are_functorch_transforms_active()`` reports (torch's functorch layer stack is not empty).
    ``linearize`` and forward AD's ``dual_level`` are no such layer in torch, nor is a ``vjp_fn`` call."""

    def __enter__(self):
        _state.func_layers += 1

    def __exit__(self, *exc):
        _state.func_layers -= 1


def _jvp_outputs(func, duals, has_aux):
    """``func(*duals)``'s outputs for ``jvp``: flattened (tensors only, torch's error otherwise), their spec, and
    the aux output (with ``has_aux``)."""
    with Layer():
        out = func(*duals)
    aux = None
    if has_aux:
        if not (isinstance(out, tuple) and len(out) == 2):
            raise RuntimeError(f"{_JVP}: output of function f should be a tuple: (output, aux) if has_aux is True")
        out, aux = out
    flat_out, o_spec = tree_flatten(out)
    _outputs_only_tensors(flat_out, _JVP)
    return flat_out, o_spec, aux


def _lowered_jvp(func, primals, flat_p, flat_t, p_spec, argnums, strict, has_aux, batch):
    """``jvp`` called under vmap (the transforms nearest to the call being vmap levels ``batch``): the dual level
    sits below the vmaps and sees the batched (physical) tensors. The primals and tangents are taken to their
    physical tensors (each level's batch dim; one not batched at a level is expanded along it), made duals there
    and wrapped back up; ``f`` runs batched; the outputs' physical tangents are wrapped up. Everything ``f`` does
    is then batched *before* it is differentiated forward: a per-sample index (run sample by sample), a reverse
    transform inside (``vmap(jacfwd(jacrev(f)))``: the backward on the batched arrays, seen by the dual level)."""
    from ._reverse import _At, _down, _up
    for p, t in zip(flat_p, flat_t):
        if tuple(t.shape) != tuple(p.shape):
            raise RuntimeError(_fw._size_error(p.shape, t.shape))
    level = _fw.DualLevel()
    with _Below(level, batch[-1].level):
        bottom = level.level
        with _At(bottom):
            phys = [_fw._dual(level, _down(p, batch), _down(t, batch)) for p, t in zip(flat_p, flat_t)]
        with _At(bottom - 1 if bottom else -1):
            duals = tree_unflatten([_up(p, batch) for p in phys], p_spec)
        if argnums is not None:
            duals = _replace_args(primals, duals, argnums)
        flat_out, o_spec, aux = _jvp_outputs(func, duals, has_aux)
        tans = []
        for o in flat_out:
            with _At(bottom):
                t = level.tangent(_down(o, batch))
            if t is None:
                if strict:
                    raise RuntimeError("jvp(f, primals, tangents, strict=True): The output of f is independent of the "
                                       "inputs. This is not allowed with strict=True.")
                tans.append(_zeros_like(o))
            else:
                tans.append(_up(t, batch))
        if has_aux:
            for a in tree_flatten(aux)[0]:
                if not isinstance(a, Tensor):
                    raise RuntimeError(f"Expected tensors, got unsupported type {type(a)}")
    res = (tree_unflatten(flat_out, o_spec), tree_unflatten(tans, o_spec))
    return (*res, aux) if has_aux else res


# --- jacfwd, hessian -------------------------------------------------------------------------------------------------
def _error_if_complex(name, leaves, is_input):
    for idx, a in enumerate(leaves):
        if isinstance(a, Tensor) and a.dtype.is_complex:
            what = "inputs" if is_input else "outputs"
            raise RuntimeError(f"{name}: Expected all {what} to be real but received complex tensor at flattened input "
                               f"idx: {idx}")


_RANDOM_ERROR = ("vmap: called random operation while in randomness error mode. Please either use the 'same' or "
                 "'different' randomness flags on vmap or perform the randomness operation out of vmap")


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    """The Jacobian of ``func`` with respect to the arguments ``argnums`` by forward mode: a jvp for every basis
    vector of the inputs, run as one ``vmap`` over the basis (as torch.func's). Returns a function of the same
    arguments.

    >>> jacfwd(lambda x: x ** 2)(tapegrad.tensor([1., 2.]))
    tensor([[2., 0.],
            [0., 4.]])
    """
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or 'same'. Got {randomness}")

    def wrapper(*args):
        _error_if_complex("jacfwd", tree_flatten(args)[0], True)
        primals = _slice_argnums(args, argnums)
        flat_p, p_spec = tree_flatten(primals)
        numels = [p.nelement() for p in flat_p]
        total = sum(numels)
        dtype = np.result_type(*[p._array.dtype for p in flat_p]) if flat_p else np.float32
        eye = np.eye(total, dtype=dtype)
        basis, start = [], 0
        for p, n in zip(flat_p, numels):      # row k of the identity, cut into the inputs' shapes: (total, *shape)
            basis.append(Tensor._make(eye[:, start:start + n].astype(p._array.dtype).reshape((total, *p.shape))))
            start += n

        def push(*flat_t):                    # one jvp; vmap runs it for every basis vector at once
            out = _jvp_with_argnums(func, args, tree_unflatten(list(flat_t), p_spec), argnums, has_aux=has_aux)
            _error_if_complex("jacfwd", tree_flatten(out[0])[0], False)
            return (out[1], out[2]) if has_aux else out[1]

        if total == 0:                        # (no basis vector: f runs once, for the outputs' shapes)
            out = _jvp_with_argnums(func, args, tree_unflatten([_zeros_like(p) for p in flat_p], p_spec), argnums,
                                    has_aux=has_aux)
            flat_o, o_spec = tree_flatten(out[1])
            flat_t = [_zeros_like(t).reshape((0, *t.shape)) for t in flat_o]
            aux = out[2] if has_aux else None
        else:
            from ._vmap import vmap
            res = vmap(push, randomness=randomness)(*basis)
            tans, aux = res if has_aux else (res, None)
            flat_t, o_spec = tree_flatten(tans)
            if has_aux:                       # (computed for every basis vector: the first is f's aux)
                flat_a, a_spec = tree_flatten(aux)
                aux = tree_unflatten([a[0] if isinstance(a, Tensor) else a for a in flat_a], a_spec)
        jac = []
        for t in flat_t:                      # (total, *out.shape) -> one (*out.shape, *in.shape) per input
            col = t.movedim(0, -1)
            ins, start = [], 0
            for p, n in zip(flat_p, numels):
                ins.append(col[..., start:start + n].reshape(tuple(col.shape[:-1]) + tuple(p.shape)))
                start += n
            ins = tree_unflatten(ins, p_spec)
            jac.append(ins[0] if isinstance(argnums, int) else ins)
        res = tree_unflatten(jac, o_spec)
        return (res, aux) if has_aux else res
    return wrapper


def hessian(func, argnums=0):
    """The Hessian of a scalar ``func`` with respect to ``argnums``: ``jacfwd(jacrev(func))`` (forward-over-reverse).

    >>> hessian(lambda x: (x ** 3).sum())(tapegrad.tensor([1., 2.]))
    tensor([[ 6.,  0.],
            [ 0., 12.]])
    """
    from ._reverse import _batch_levels, jacrev
    fwd_over_rev = jacfwd(jacrev(func, argnums), argnums)
    rev_over_rev = jacrev(jacrev(func, argnums), argnums)

    def wrapper(*args, **kwargs):
        # under vmap: reverse-over-reverse (the same numbers as torch's jacfwd(jacrev), which works there too,
        # and four times faster: both row loops are one batched backward each)
        return (rev_over_rev if _batch_levels() else fwd_over_rev)(*args, **kwargs)
    return wrapper


# --- linearize -------------------------------------------------------------------------------------------------------
def linearize(func, *primals):
    """``(func(*primals), jvp_fn)``: ``jvp_fn(*tangents)`` is ``J tangents`` at ``primals``, each call one backward
    over the graph recorded once here (the forward pass is not repeated).

    >>> out, jvp_fn = linearize(lambda x: x.sin(), tapegrad.zeros(2))
    >>> jvp_fn(tapegrad.ones(2))
    tensor([1., 1.])
    """
    flat_p, p_spec = tree_flatten(primals)
    if _top_vmaps():
        return _lowered_linearize(func, primals, flat_p, p_spec)
    with enable_grad():
        leaves = []
        for p in flat_p:
            if p.requires_grad:
                leaves.append(p.view_as(p))
            else:
                with no_grad():
                    s = p.view_as(p)
                leaves.append(s.requires_grad_())
        out = func(*tree_unflatten(leaves, p_spec))
        flat_o, o_spec = tree_flatten(out)
        diff = [o for o in flat_o if isinstance(o, Tensor) and o.requires_grad]
        us = [Tensor._make(np.zeros(o._array.shape, o._array.dtype), True) for o in diff]
        gs = _grad(diff, leaves, us, create_graph=True, allow_unused=True) if diff else [None] * len(leaves)
    recorded = any(p.requires_grad for p in flat_p)
    result = out if recorded else tree_unflatten([o.detach() if isinstance(o, Tensor) else o for o in flat_o], o_spec)
    def jvp_fn(*tangents):
        flat_t = _linearize_tangents(tangents, flat_p, p_spec)
        pairs = [(g, t) for g, t in zip(gs, flat_t) if g is not None and g.requires_grad]
        graph = is_grad_enabled() and any(t.requires_grad for t in flat_t)
        with enable_grad():      # (with a transform active, a recorded walk: the transform sees its ops)
            ts = _grad([g for g, _ in pairs], us, [t for _, t in pairs], retain_graph=True,
                       create_graph=graph or bool(active_interpreters()), allow_unused=True) \
                if pairs and us else [None] * len(us)
        if not graph:
            for t in ts:
                if t is not None and t.grad_fn is not None:
                    t.grad_fn, t._rg = None, False
        by_out = {id(o): t for o, t in zip(diff, ts)}
        res = []
        for o in flat_o:
            t = by_out.get(id(o))
            res.append(t if t is not None else _zeros_like(o))
        return tree_unflatten(res, o_spec)
    return result, jvp_fn


def _linearize_tangents(tangents, flat_p, p_spec):
    """``jvp_fn``'s tangents flattened, with torch's checks against the primals."""
    flat_t, t_spec = tree_flatten(tangents)
    if t_spec != p_spec:
        raise RuntimeError(f"Expected the tangents {t_spec} to have the same argspec as the primals {p_spec}")
    for idx, (t, p) in enumerate(zip(flat_t, flat_p)):
        if tuple(t.shape) != tuple(p.shape):
            raise RuntimeError(f"tangent:{idx} with shape {t.shape} in flattened pytree doesn't match the shape "
                               f"{p.shape} of the corresponding primal.")
        if t.dtype != p.dtype:
            raise RuntimeError(f"tangent:{idx} with dtype {t.dtype} in flattened pytree doesn't match the dtype "
                               f"{p.dtype} of the corresponding primal.")
    return flat_t


def _lowered_linearize(func, primals, flat_p, p_spec):
    """``linearize`` under vmap: recorded on the batched (physical) tensors, as the reverse transforms are
    (``_reverse._Run``), and each ``jvp_fn`` call one backward there (the samples never mix)."""
    from ._reverse import _At, _down, _Run, _up
    run = _Run(func, primals, None, "linearize", False, "linearize")
    flat_o, o_spec = tree_flatten(run.out)
    phys = run.physical(flat_o)
    with enable_grad(), _At(run.bottom):
        diff = [(k, o) for k, o in enumerate(phys) if isinstance(o, Tensor) and o.requires_grad]
        us = [Tensor._make(np.zeros(o._array.shape, o._array.dtype), True) for _, o in diff]
        gs = _grad([o for _, o in diff], run.leaves, us, create_graph=True, allow_unused=True) if diff else \
            [None] * len(run.leaves)
    outside = run.needs_graph(phys)
    value = run.finish(run.out, outside)

    def jvp_fn(*tangents):
        flat_t = _linearize_tangents(tangents, flat_p, p_spec)
        with enable_grad(), _At(run.bottom):
            pairs = [(g, _down(t, run.levels)) for g, t in zip(gs, flat_t) if g is not None and g.requires_grad]
            graph = outside or is_grad_enabled() and any(t.requires_grad for _, t in pairs)
            ts = _grad([g for g, _ in pairs], us, [t for _, t in pairs], retain_graph=True, create_graph=graph,
                       allow_unused=True) if pairs and us else [None] * len(us)
            by_out = {k: t for (k, _), t in zip(diff, ts) if t is not None}
            res = [_up(by_out[k], run.levels) if k in by_out else _zeros_like(o) for k, o in enumerate(flat_o)]
        return tree_unflatten(res, o_spec)
    return value, jvp_fn
