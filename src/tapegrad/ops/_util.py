"""Shared helpers of the op modules: dims, dtypes, broadcasting's reverse, method binding, in-place ops.

Conventions every op module follows:
- an op is a ``Primitive`` (forward on arrays, backward on Tensors) declared next to its public function;
- ``@method("exp", "exp_")``-style binding (``bind``) attaches public functions to ``Tensor``;
- in-place variants go through ``apply_inplace``, which bumps the version and rebases the graph;
- view ops mark their outputs with ``mark_view`` so an in-place change of the view updates the base's history.
"""

from __future__ import annotations

import functools
import weakref

import numpy as np

from .. import _aliases, _argtypes, _dtype
from ..autograd.function import Primitive, _Scratch, _active
from ..autograd.grad_mode import _state
from ..tensor import Tensor

__all__ = ["quiet", "normalize_dim", "normalize_dims", "sum_to_shape", "sum_keepdim", "expand_to", "kernel", "mT",
           "zero_link", "cj", "bind", "as_float", "promote", "op_error", "apply_inplace", "mark_view", "unary",
           "Tensor", "Primitive", "shape_str", "to_array", "linear_jvp", "multilinear_jvp", "real_only", "add_tangents",
           "ELEMENTWISE", "transform_visible", "sample_data", "vmap_per_sample"]


from .._npcompat import quiet  # noqa: E402,F401  (re-exported for the op modules)


class ArrayOp(Primitive):
    """A public function computed on the arrays outside the op mechanism (comparisons, arg-reductions, tests:
    nothing to differentiate), run as one op while a function transform is active, so that the transform sees
    it (vmap batches it: ``elementwise`` ones by broadcasting, the others once per sample). ``mask`` says which
    arguments were Tensors. Such a function starts with ``if _active[0] and not _inside[0]: return
    array_op(itself, ...)`` — eager calls pay that one check."""

    node_name = "ArrayOpBackward0"

    @staticmethod
    def forward(ctx, fn, elementwise, mask, *args, **kwargs):
        _inside[0] = True            # (fn runs its own body now, on the arrays)
        try:
            out = fn(*(Tensor._make(a) if m else a for a, m in zip(args, mask)), **kwargs)
        finally:
            _inside[0] = False
        if isinstance(out, tuple):
            return tuple(o._array if isinstance(o, Tensor) else o for o in out)
        return out._array if isinstance(out, Tensor) else out

    @staticmethod
    def backward(ctx, *grads):
        return (None,) * len(ctx._input_meta)


_inside = [False]


# CPU autocast (tapegrad.amp) hooks in here while a region is enabled: an object whose ``cast(args, kwargs, kind)``
# casts an op's floating-point Tensor arguments for PyTorch's autocast list ``kind`` ("fp32" or "lower"). The
# listed ops that are not one primitive (composite losses, the 3-d pools, ...) read it through ``autocast_listed``;
# outside autocast they pay one list read.
AUTOCAST = [None]


def autocast_listed(kind):
    """Decorator: the op is on PyTorch's CPU autocast list ``kind``."""
    def deco(fn):
        @functools.wraps(fn)
        def wrapped(*args, **kwargs):
            ac = AUTOCAST[0]
            if ac is not None:
                args, kwargs = ac.cast(args, kwargs, kind)
            try:
                return fn(*args, **kwargs)
            except Exception as e:      # a wrong-typed argument: torch's TypeError (free when nothing fails)
                err = _argtypes.from_stack(e)
                if err is None:
                    raise
                raise err from None
        _argtypes.WRAPPER_CODES.add(wrapped.__code__)
        return wrapped
    return deco

def array_op(fn, elementwise, args, kwargs=None):
    """``fn(*args, **kwargs)`` as an ``ArrayOp`` (called by ``fn`` itself while a transform is active)."""
    return ArrayOp.apply(fn, elementwise, tuple(isinstance(a, Tensor) for a in args), *args, **(kwargs or {}))


def vmap_per_sample(fn, args, kwargs, watch, target=None):
    """Called by a public function while a transform is active (``if _active[0]:``): under a vmap at which one of
    the tensors ``watch`` is batched (an index or mask the function hands its Primitive as an array, which the
    vmap cannot see), ``fn`` run once per sample and the results stacked (``func._vmap.per_sample``); otherwise
    NotImplemented, and the function goes on."""
    from ..func._vmap import per_sample
    return per_sample(fn, args, kwargs or {}, watch, target)


def capturing() -> bool:
    """Whether the op call about to be made goes to compile's capture (called behind ``_active[0]``): a public
    function then hands its Primitive the index and mask tensors themselves and checks their values in the
    forward, which every replay runs (eagerly, and under vmap or forward AD, the arrays as before)."""
    st = _state
    return st.top >= 0 and getattr(st.interpreters[st.top], "index_args", False)


def sample_data(t) -> np.ndarray:
    """The array an error check on ``t``'s values reads: ``t``'s own eagerly; under ``vmap``, every sample's (the
    physical array, the batch dims of the vmaps ``t`` is batched in first), so that a check fails where a
    per-sample loop would (a logical tensor's array is sample 0's only). A transform that records ops (compile's
    capture) is told of the read: the check runs in Python, outside any op, so a replay would skip it."""
    if _active[0]:
        for lv in reversed(_state.interpreters):
            read = getattr(lv, "data_read", None)     # (compile's capture: a check it cannot replay breaks there)
            if read is not None:
                read(t)
            physical = getattr(lv, "physical", None)
            p = None if physical is None else physical(t)
            if p is not None:
                t = p
    return t._array


def transform_visible(elementwise=False):
    """Decorator of a public function computed on the arrays whose arguments or results are nested (tensors in
    lists or keyword arguments, named tuples holding tuples): while a transform is active, the call is one
    ``ArrayOp`` of the flat tensors (found anywhere in the arguments), and the results are rebuilt in their
    structure. The eager call pays the same one check as the inline ``array_op`` pattern plus one wrapper call,
    so hot functions keep the inline check; ``out=`` calls run as they are."""
    def deco(fn):
        @functools.wraps(fn)
        def visible(*args, **kwargs):
            if _active[0] and not _inside[0] and kwargs.get("out") is None:
                return _visible_call(fn, elementwise, args, kwargs)
            return fn(*args, **kwargs)
        visible.__wrapped_array_fn__ = fn
        return visible
    return deco


def _visible_call(fn, elementwise, args, kwargs):
    from ..func._forward import tree_flatten, tree_unflatten
    leaves, spec = tree_flatten((args, kwargs))
    where = [i for i, v in enumerate(leaves) if isinstance(v, Tensor)]
    if not where:
        return fn(*args, **kwargs)
    out_spec = []
    consts = [None if isinstance(v, Tensor) else v for v in leaves]    # (a compiled program keeps ``flat``)

    def flat(*tensors):
        full = list(consts)
        for i, t in zip(where, tensors):
            full[i] = t
        a, kw = tree_unflatten(full, spec)
        outs, s = tree_flatten(fn(*a, **kw))
        out_spec[:] = [s, [_A_TENSOR if isinstance(o, Tensor) else o for o in outs]]
        tensors = tuple(o for o in outs if isinstance(o, Tensor))
        return tensors[0] if len(tensors) == 1 else tensors      # (one output: as a single-output op)

    flat.__name__ = fn.__name__
    got = ArrayOp.apply(flat, elementwise, (True,) * len(where), *(leaves[i] for i in where))
    s, outs = out_spec
    it = iter(got if isinstance(got, tuple) else (got,))
    return tree_unflatten([next(it) if o is _A_TENSOR else o for o in outs], s)


_A_TENSOR = object()     # (where a result of a visible function was a tensor)


class Detach(Primitive):
    """``x.detach()`` while a function transform is active (eager ``detach`` makes no op): a view that carries no
    gradient, so that vmap gives it its batch and a dual level no tangent."""

    node_name = "DetachBackward0"

    @staticmethod
    def forward(ctx, x):
        out = x.view()
        ctx.mark_non_differentiable(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        return None


def op_error(op: str, message: str, exc=RuntimeError):
    """The one error helper: ``op: message`` (torch's own wording inside ``message`` where it has one)."""
    return exc(f"{op}: {message}")


def shape_str(shape) -> str:
    return "[" + ", ".join(map(str, shape)) + "]"


def normalize_dim(dim: int, ndim: int) -> int:
    """A dim in ``[-ndim, ndim)`` (0-d tensors accept -1 and 0) as a non-negative index; torch's IndexError."""
    n = max(ndim, 1)
    try:
        inside = -n <= dim < n
    except TypeError:      # not a number: torch's TypeError for the public call's argument (free when it is one)
        err = _argtypes.from_stack()
        if err is None:
            raise
        raise err from None
    if not inside:
        if not isinstance(dim, (int, np.integer)):     # (x.sum(1.5) on a 1-d tensor: torch's TypeError)
            err = _argtypes.from_stack()
            if err is not None:
                raise err
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
    return dim % n


def normalize_dims(dim, ndim: int) -> tuple:
    """``None`` -> all dims; an int or a sequence -> sorted non-negative tuple (duplicates are an error)."""
    if dim is None:
        return tuple(range(ndim))
    if isinstance(dim, (int, np.integer)):
        return (normalize_dim(int(dim), ndim),) if ndim else ()
    dims = tuple(normalize_dim(int(d), ndim) for d in dim)
    if len(set(dims)) != len(dims):
        dup = next(d for i, d in enumerate(dims) if d in dims[:i])
        raise RuntimeError(f"dim {dup} appears multiple times in the list of dims")
    return tuple(sorted(d for d in dims if ndim)) if ndim else ()


# --- the few helpers an ``array_backward`` formula needs beyond operators: each takes a Tensor (recorded under
# create_graph) or an ndarray (the engine's array path) and returns the same kind ---------------------------------
def sum_to_shape(g, shape):
    """Sum ``g`` down to ``shape`` (the reverse of broadcasting)."""
    gs = g.shape
    if gs == shape or gs == tuple(shape):
        return g
    if gs[1:] == shape:     # the most common case (a bias over a batch): one leading dim added, nothing stretched
        return g.sum(0) if g.__class__ is Tensor else np.add.reduce(g, axis=0)
    lead = len(gs) - len(shape)
    dims = list(range(lead))          # the leading dims broadcasting added, and the dims it stretched from 1
    for i, s in enumerate(shape):
        if s == 1 and gs[lead + i] != 1:
            dims.append(lead + i)
    if dims:
        dims = tuple(dims)
        g = g.sum(dims, keepdim=True) if g.__class__ is Tensor else np.add.reduce(g, axis=dims, keepdims=True)
    if lead:
        g = g.reshape(tuple(shape))
    return g


def sum_keepdim(g, dim):
    """Sum over ``dim``, keeping it (a 0-d ``g`` has nothing to sum: returned as is)."""
    if not g.ndim:
        return g
    return g.sum(dim, keepdim=True) if g.__class__ is Tensor else np.add.reduce(g, axis=dim, keepdims=True)


def expand_to(g, shape):
    """Broadcast ``g`` to ``shape`` (a view)."""
    return g.expand(shape) if g.__class__ is Tensor else np.broadcast_to(g, shape)


def cj(x):
    """The complex conjugate of a complex Tensor or ndarray; a real one itself (no copy). Backward formulas of
    complex-capable ops conjugate what torch's conjugate (``grad * cj(b)`` for a product), only once their forward
    has marked the node complex (``ctx._cplx``), so that real nodes pay nothing."""
    if x.__class__ is Tensor or isinstance(x, Tensor):       # (a Parameter too)
        return x.conj() if x._array.dtype.kind == "c" else x
    dt = getattr(x, "dtype", None)
    if dt is None:           # a Python number (an operand kept by value)
        return x.conjugate() if isinstance(x, complex) else x
    return np.conjugate(x) if dt.kind == "c" else x


def input_shape(ctx, i):
    """The shape forward's input ``i`` had (known for every input that needs a gradient, saved or not)."""
    return ctx._input_meta[i][0]


def mT(g):
    """Swap the last two dims (a view)."""
    if g.__class__ is Tensor:
        return g.transpose(-1, -2)
    return g.T if g.ndim == 2 else g.swapaxes(-1, -2)


def kernel(cls, grad, *args):
    """Run the backward kernel ``cls`` (a Primitive such as ``_TanhGrad``, whose ``compute`` is its arithmetic on
    arrays): applied on Tensors, so that it is recorded for double backward; computed directly on arrays in
    the engine's array path."""
    if grad.__class__ is Tensor:
        return cls.apply(grad, *args)
    compute = getattr(cls, "compute", None)
    if compute is None:          # a kernel without its own array function: its forward, with a throw-away ctx
        return cls.forward(_Scratch(), grad, *args)
    return compute(grad, *args)


class _ZeroLink(Primitive):
    """``value`` unchanged, and a function of ``x`` whose derivative is zero. torch's backward of a masking op
    (``threshold_backward``, ``hardtanh_backward``, ``max_pool2d_with_indices_backward``...) takes the input
    itself, so a gradient computed with ``create_graph`` stays in the input's graph, and differentiating it again
    gives zeros, not "not used". A tapegrad formula whose mask is a constant array says so with this link."""

    @staticmethod
    def forward(ctx, value, x):
        ctx.x_meta = (x.shape, x.dtype)
        return value.copy()

    @staticmethod
    def backward(ctx, gg):
        shape, dtype = ctx.x_meta
        return gg, (Tensor._make(np.zeros(shape, dtype)) if ctx.needs_input_grad[1] else None)

    @staticmethod
    def jvp(ctx, tv, tx):            # the identity in value, constant in x
        return tv


def zero_link(ctx, value, i=0, link=_ZeroLink):
    """``value`` (a Tensor gradient a backward formula computed) connected with zero derivative to the op's input
    that forward kept as ``saved_tensors[i]``, when grad mode records (``create_graph``) and that input requires
    grad; otherwise ``value`` as it is (nothing is unpacked: plain backward and the array path pay nothing)."""
    if _state.enabled and value.__class__ is Tensor:
        x = ctx.saved_tensors[i]
        if x is not None and x._rg:
            return link.apply(value, x)
    return value


def bind(**methods):
    """Attach functions to Tensor: ``bind(exp=exp, exp_=exp_)`` (taking torch's NumPy-style argument names too,
    ``x.sum(axis=0, keepdims=True)``: see ``_aliases.py``)."""
    for name, fn in methods.items():
        setattr(Tensor, name, _aliases.method(name, fn))


def to_array(x):
    return x._array if isinstance(x, Tensor) else x


def as_float(a: np.ndarray) -> np.ndarray:
    """Integer/bool input of a float op becomes the default float dtype (torch: ``exp(int) -> float32``)."""
    if a.dtype.kind in "fc":
        return a
    return a.astype(_dtype.get_default_dtype().np)


def promote(a, b):
    """Cast array/number operands to torch's result dtype; returns ``(a, b, dtype)``."""
    ta, tb = a.__class__, b.__class__
    if ta is np.ndarray and tb is np.ndarray:
        if a.dtype == b.dtype:
            return a, b, a.dtype
    elif ta is np.ndarray and tb is float and a.dtype.kind == "f":
        return a, b, a.dtype
    elif tb is np.ndarray and ta is float and b.dtype.kind == "f":
        return a, b, b.dtype
    d = _dtype.result_type(a, b).np
    if ta is np.ndarray and a.dtype != d:
        a = a.astype(d)
    elif ta is not np.ndarray:
        a = _scalar_as(a, d)
    if tb is np.ndarray and b.dtype != d:
        b = b.astype(d)
    elif tb is not np.ndarray:
        b = _scalar_as(b, d)
    return a, b, d


def _scalar_as(v, d):
    """A Python number as a NumPy scalar of dtype ``d`` (two numbers: ``add(2.5, 3.5)`` is the default dtype, as
    torch). An int that does not fit an integer dtype wraps around as torch's arithmetic does (``int8 + 300``
    adds 44); NumPy would refuse it."""
    if isinstance(v, (np.ndarray, np.generic)):
        return np.asarray(v, d)
    try:
        return d.type(v)
    except OverflowError:
        return np.asarray(v).astype(d)[()]


def broadcast_or_error(*shapes):
    """The broadcast shape of ``shapes``, or torch's error, which calls the shape broadcast so far "tensor a" and
    the next one "tensor b" (``broadcast_or_error((2, 3), (4, 3))``: "The size of tensor a (2) must match the size
    of tensor b (4) at non-singleton dimension 0")."""
    a = tuple(shapes[0])
    for b in shapes[1:]:
        b = tuple(b)
        if a == b:
            continue
        n = max(len(a), len(b))
        pa, pb = (1,) * (n - len(a)) + a, (1,) * (n - len(b)) + b
        for i in range(n - 1, -1, -1):
            if pa[i] != pb[i] and 1 not in (pa[i], pb[i]):
                raise RuntimeError(f"The size of tensor a ({pa[i]}) must match the size of tensor b ({pb[i]}) at "
                                   f"non-singleton dimension {i}")
        a = tuple(max(x, y) if 1 in (x, y) else x for x, y in zip(pa, pb))
    return a


def mark_view(out: Tensor, base: Tensor, view_fn, multi=False) -> Tensor:
    """Record that ``out`` is a view of ``base`` obtained by ``view_fn(base)`` (shares its version counter).

    ``out._view`` is ``(root, fn from root to out, how)``; ``how`` (torch's "creation meta") is None, or "multi"
    for (a view of) one of several views one op returned with grad mode on (split, chunk, unbind), or "no_grad"
    for (a view of) a view made under ``no_grad``: torch forbids changing either in place while recording
    (``check_view_inplace``). A view made under ``no_grad`` of a tensor that requires grad requires grad too, as
    in torch, with no graph behind it (see ``Tensor._accumulator``).
    """
    if out._array.size == 0 or np.may_share_memory(out._array, base._array):   # an empty view is still a view
        out._vc = base._vc
        how = ("multi" if multi else None) if _state.enabled else "no_grad"
        if how == "no_grad" and base._rg:
            # torch: it requires grad as its base does, yet, made with no node, it is a leaf whose graph leads
            # nowhere (its ``_accumulator()`` is None: ops on it get a (None, 0) edge)
            out._rg = True
        outer = base._view
        if outer is not None:
            inner = outer[1]
            out._view = (outer[0], lambda t, f=view_fn, g=inner: f(g(t)), how or outer[2])
        else:
            out._view = (base, view_fn, how)
        _register_view(out, base._vc)
    return out


_NO_GRAD_VIEW = ("Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify your code "
                 "by moving both the view and the inplace either both inside the no_grad block (if you don't want "
                 "the inplace to be tracked) or both outside (if you want the inplace to be tracked).")


def check_view_inplace(x: Tensor, recording: bool) -> None:
    """torch's refusals to change a view in place with grad mode on (``recording``: some input of the in-place
    op requires grad): a view one op returned among several, while recording; a view made under ``no_grad``,
    while recording or when its base requires grad. The message names the view's own node when it has one."""
    base = x._view
    how = base[2] if base is not None else None
    if how is None or not (recording or (how == "no_grad" and base[0]._rg)):
        return
    node = x.grad_fn
    if node is not None:
        name = node.name()
        i = name.rfind("Backward")
        output = f"Output {x._output_nr} of {name[:i] if i > 0 else name} is a view"
    if how == "multi":
        what = f"{output} and is being modified inplace." if node is not None else \
            "A view was created in no_grad mode and is being modified inplace with grad mode enabled."
        raise RuntimeError(f"{what} This view is the output of a function that returns multiple views. Such "
                           "functions do not allow the output views to be modified inplace. You should replace the "
                           "inplace operation by an out-of-place one.")
    what = f"{output} of a view which was created in no_grad mode and is" if node is not None else \
        "A view was created in no_grad mode and is"
    raise RuntimeError(f"{what} being modified inplace with grad mode enabled. {_NO_GRAD_VIEW}")


def _register_view(view: Tensor, vc: list) -> None:
    """Remember a live view of a root (weakly), in a dict kept beside the shared version counter ``vc[1]``.

    After an in-place change of the root or of any of its views, every live view gets its ``grad_fn``
    regenerated from the root's new history (``_refresh_views``), as torch does.
    """
    if len(vc) == 1:
        vc.append({})
    views, k = vc[1], id(view)
    views[k] = weakref.ref(view, lambda _r, d=views, k=k: d.pop(k, None))


def _refresh_views(root: Tensor) -> None:
    """Give each live view of ``root`` a fresh ``AsStridedBackward0`` node on the root's current history."""
    vc = root._vc
    if len(vc) < 2 or not root._rg:
        return
    for ref in list(vc[1].values()):
        v = ref()
        if v is None or v._view is None or v._view[0] is not root:
            continue
        r = AsStrided.apply(root, v._view[1])
        old_fn, old_nr = v.grad_fn, v._output_nr
        v.grad_fn, v._output_nr, v._rg = r.grad_fn, 0, True
        carry_retain(v, old_fn, old_nr)


def _no_grad_call(fn, *args):
    prev = _state.enabled
    _state.enabled = False
    try:
        return fn(*args)
    finally:
        _state.enabled = prev


def _flat_positions(view_fn, shape) -> np.ndarray:
    """For each element of ``view_fn(root)``, its flat position in the root (works for any view, even expand)."""
    pos = Tensor._make(np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape))
    return np.asarray(_no_grad_call(view_fn, pos)._array)


class AsStrided(Primitive):
    """A view regenerated from its root after an in-place change (torch's ``AsStridedBackward0`` node)."""

    node_name = "AsStridedBackward0"

    @staticmethod
    def forward(ctx, root, view_fn):
        ctx.view_fn, ctx.shape, ctx.dtype = view_fn, root.shape, root.dtype
        return _no_grad_call(view_fn, Tensor._make(root))._array

    @staticmethod
    def backward(ctx, grad):
        return AsStridedScatter.apply(grad, ctx.view_fn, ctx.shape, ctx.dtype), None


class AsStridedScatter(Primitive):
    """The adjoint of a view: ``grad`` summed into a zero root at the positions the view reads."""

    node_name = "AsStridedBackwardBackward0"

    @staticmethod
    def forward(ctx, grad, view_fn, shape, dtype=None):
        ctx.view_fn = view_fn
        if dtype is not None and (dtype.kind == "c") != (grad.dtype.kind == "c"):
            return _view_adjoint(grad, view_fn, shape, dtype)
        pos = _flat_positions(view_fn, shape).ravel()
        n = int(np.prod(shape))
        if grad.dtype.kind == "c":
            out = np.zeros(n, grad.dtype)
            np.add.at(out, pos, grad.ravel())
        else:
            out = np.bincount(pos, weights=grad.ravel(), minlength=n).astype(grad.dtype, copy=False)
        return out.reshape(shape)

    @staticmethod
    def backward(ctx, gg):
        return AsStrided.apply(gg, ctx.view_fn), None, None, None


def _view_adjoint(grad, view_fn, shape, dtype):
    """The adjoint of a view that changes the dtype (``z.real``, ``view_as_real(z)``...: no flat positions to
    scatter to): the gradient that backward through ``view_fn`` itself gives, from a zero root."""
    from ..autograd.engine import grad as autograd_grad
    root = Tensor._make(np.zeros(shape, dtype), True)
    prev = _state.enabled
    _state.enabled = True
    try:
        out = view_fn(root)
        return autograd_grad(out, root, Tensor._make(grad))[0]._array
    finally:
        _state.enabled = prev


class CopySlices(Primitive):
    """The base of a view after an in-place change of the view: ``base`` with ``view_fn(base)`` replaced."""

    node_name = "CopySlices"

    @staticmethod
    def forward(ctx, base, value, view_fn):
        ctx.view_fn = view_fn
        return base   # the data is already there: the view shares the base's memory

    @staticmethod
    def backward(ctx, grad):
        a = grad._array
        if a.dtype.kind == "c":
            # complex: the view may cover one part of the numbers only (``z.real``): zero what it covers, part by
            # part, with a mask of 1 + 1j whose covered parts the view sets to 0
            mask = np.full(a.shape, 1 + 1j, a.dtype)
            writable(ctx.view_fn(Tensor._make(mask))._array)[...] = 0
            keep = grad.real * Tensor._make(mask.real.copy()) + (grad.imag * Tensor._make(mask.imag.copy())) * 1j
            return keep, ctx.view_fn(grad), None
        mask = Tensor._make(np.ones(a.shape, a.dtype))
        writable(ctx.view_fn(mask)._array)[...] = 0
        return grad * mask, ctx.view_fn(grad), None


_inplace_tangents = None   # forward AD's hook while a dual level is active (autograd/forward_ad.py); None: off
_before_write = None    # autograd.graph.allow_mutation_on_saved_tensors: fn(tensor) before its data is changed


def set_before_write(fn):
    """Set the function called with a tensor just before an in-place op writes into it; returns the previous one."""
    global _before_write
    prev, _before_write = _before_write, fn
    return prev


def before_write(x: Tensor) -> None:
    """Tell the hook (if one is set) that ``x``'s data is about to change in place."""
    if _before_write is not None:
        _before_write(x)


_INTERNAL_OVERLAP = ("unsupported operation: more than one element of the written-to tensor refers to a single memory "
                     "location. Please clone() the tensor before performing the operation.")
_PARTIAL_OVERLAP = ("unsupported operation: some elements of the input tensor and the written-to tensor refer to a "
                    "single memory location. Please clone() the tensor before performing the operation.")


def _dense(a) -> bool:
    """Whether ``a`` covers its memory without gaps or repeats in some order of its dims (torch's
    non-overlapping-and-dense)."""
    if a.flags.c_contiguous or a.flags.f_contiguous:
        return True
    expected = a.itemsize
    for s, n in sorted((abs(s), n) for s, n in zip(a.strides, a.shape) if n != 1):
        if s != expected:
            return False
        expected *= n
    return True


def refuse_complex(x, kernel=None, message=None, error=NotImplementedError) -> None:
    """torch's error for an op that needs an order (or a real line) on a complex tensor, array or dtype: its
    kernel's ``"kernel" not implemented for 'ComplexFloat'`` or the op's own ``message``; nothing for other dtypes
    (nor for an argument of the wrong type: the op's own call reports that, see ``_argtypes``)."""
    d = x._array.dtype if isinstance(x, Tensor) else x if isinstance(x, np.dtype) else getattr(x, "dtype", None)
    if d is not None and d.kind == "c":
        raise error(message if message is not None else
                    f'"{kernel}" not implemented for \'{_dtype.from_numpy_dtype(d)._legacy}\'')


def check_overlap(xa, args, kwargs=None) -> None:
    """torch's check before an op writes into ``xa`` (in place, or as ``out=``): no input may overlap it partly
    (``b[1:].mul_(b[:-1])``). An input that is ``xa`` itself, or the same memory with the same strides, is fine;
    where either layout has gaps, torch does not try to tell, and neither does this. (Writing into a tensor whose
    elements repeat, as after ``expand``, is refused where the write happens: see ``_write``.)"""
    own = xa.base is None
    for a in (*args, *kwargs.values()) if kwargs else args:
        if a.__class__ is not Tensor and not isinstance(a, Tensor):
            continue
        b = a._array
        if b is xa or (own and b.base is None):      # (two arrays owning their memory: apart)
            continue
        if not np.may_share_memory(xa, b) or not (_dense(xa) and _dense(b)):
            continue
        if xa.strides == b.strides and _byte_bounds(xa) == _byte_bounds(b):
            continue
        raise RuntimeError(_PARTIAL_OVERLAP)


def assert_no_overlap(out, inputs) -> None:
    """torch's ``assert_no_internal_overlap`` and ``assert_no_overlap`` of the out= kernels that read their inputs
    while writing (gather, index_select, masked_select, cat): ``out``'s elements may not repeat (an expanded
    tensor), and an input may share no memory with it, not even all of it."""
    oa = out._array
    if any(s == 0 and n > 1 for s, n in zip(oa.strides, oa.shape)):
        raise RuntimeError(_INTERNAL_OVERLAP)
    for t in inputs:
        if isinstance(t, Tensor) and (t is out or np.may_share_memory(oa, t._array)):   # (an empty out too)
            raise RuntimeError(_PARTIAL_OVERLAP)


def _overlap_args(xa, args, kwargs):
    """``check_overlap`` where it can matter: a Tensor argument when either array is a view (arrays that own
    their memory are apart, the usual case)."""
    xb = xa.base
    for a in args:
        if isinstance(a, Tensor) and (xb is not None or a._array.base is not None):
            return check_overlap(xa, args, kwargs)
    if kwargs:
        for a in kwargs.values():
            if isinstance(a, Tensor) and (xb is not None or a._array.base is not None):
                return check_overlap(xa, args, kwargs)


try:                                  # (NumPy's first and one-past-last byte of an array's memory)
    from numpy.lib.array_utils import byte_bounds as _byte_bounds
except ImportError:                   # (NumPy < 2)
    _byte_bounds = np.byte_bounds


def _view_path_hooked(node, root_fn) -> bool:
    """Whether a view's node, or one on its chain of view nodes down to its root's node, has a hook or retains
    a gradient (the chain is a few view ops; one that does not lead to ``root_fn`` soon counts as hooked)."""
    for _ in range(16):
        if node is None or node is root_fn:
            return False
        if node._hooked:
            return True
        nexts = node._next_fns
        node = nexts[0] if nexts else None
    return True


def apply_inplace(x: Tensor, fn, *args, **kwargs) -> Tensor:
    """``x.op_(*args)``: compute ``fn(x, *args)`` and write it into x's memory, as torch's in-place ops do.

    The version counter is bumped (saved copies of x become invalid for backward) and, when a graph is being
    recorded, x's history is rebased onto the new node. A view's base gets a ``CopySlices`` node.
    """
    recording = _state.enabled and (x._rg or any(isinstance(a, Tensor) and a._rg for a in args))
    if not _active[0]:     # (under a transform the arrays are its physical ones, batched: torch checks those)
        _overlap_args(x._array, args, kwargs)
    base = x._view
    if base is not None and _state.enabled:      # (the view's rules first, then the leaf's, as torch checks)
        check_view_inplace(x, recording)
        if recording and base[0]._rg and base[0].grad_fn is None:
            raise RuntimeError("a view of a leaf Variable that requires grad is being used in an in-place operation.")
    if _state.enabled and x._rg and x.grad_fn is None:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
    if recording:
        old = Tensor._make(x._array.copy(), x._rg)
        if base is not None and base[0]._rg and _view_path_hooked(x.grad_fn, base[0].grad_fn):
            # a view whose nodes up to the base hold hooks: the op reads the view's values out of the base's
            # current history afresh, as torch's CopySlices hands the op's gradient for them straight to the base,
            # past the view's old nodes (whose hooks stay unfired). Without hooks the old nodes give the same
            # gradients, so they are kept: the fresh view op would cost every such change a recorded op.
            r = base[1](base[0])
            old.grad_fn, old._output_nr, old._rg = r.grad_fn, r._output_nr, True
        else:
            old.grad_fn, old._output_nr, old._acc = x.grad_fn, x._output_nr, x._acc
        if _inplace_tangents is not None:
            _inplace_tangents.alias(x, old)
        out = fn(old, *args, **kwargs)
    elif _active[0]:         # (a transform: what requires grad may be hidden from x and args, e.g. vmap's batch)
        if _vmap_records is not None and _vmap_records(x, args):
            # (under vmap(grad) the write is recorded into x's physical tensor: the op reads a copy, as eager's
            #  `old` above, so that what it saves of x stays valid after the write)
            out = fn(x.clone(), *args, **kwargs)
        else:
            out = fn(x, *args, **kwargs)
    else:
        prev = _state.enabled
        _state.enabled = False
        try:
            out = fn(x, *args, **kwargs)
        finally:
            _state.enabled = prev
    if _before_write is not None:
        _before_write(x)
    _write(x, out, fn)
    if _inplace_tangents is not None:
        _inplace_tangents.written(x, out)
    if recording:
        old_fn, old_nr = x.grad_fn, x._output_nr
        x.grad_fn, x._output_nr, x._rg = out.grad_fn, out._output_nr, out._rg
        if old_fn is not None and old_fn._retained:     # (retain_grad follows the tensor: carry_retain)
            carry_retain(x, old_fn, old_nr)
        if base is not None:
            b = base[0]
            old_b = Tensor._make(b._array, b._rg)
            old_b.grad_fn, old_b._output_nr = b.grad_fn, b._output_nr
            new_b = CopySlices.apply(old_b, x, base[1])
            b.grad_fn, b._output_nr, b._rg = new_b.grad_fn, 0, True
            carry_retain(b, old_b.grad_fn, old_b._output_nr)
        _refresh_views(base[0] if base is not None else x)
    return x


def carry_retain(t: Tensor, old_fn, old_nr) -> None:
    """``t`` was given a new history by an in-place change: if it retained its gradient on the old node, it now
    retains it on the new one (torch's rule: ``.grad`` is the gradient of the latest version; tensor hooks
    registered before the change stay on the old node)."""
    kept = old_fn._retained if old_fn is not None else None
    if kept and old_nr in kept and kept[old_nr]() is t and t.grad_fn is not old_fn:
        del kept[old_nr]
        t.retain_grad()


_vmap_write = None    # func.vmap's hook while a vmap is active: writes an in-place result into the physical arrays
_vmap_records = None  # and its question: is that write recorded (the physical tensors require grad)?


def _write(x: Tensor, out: Tensor, fn):
    """Copy an in-place op's result into x, with torch's checks on dtype and shape."""
    src = out._array
    if src.shape != x._array.shape:
        if np.broadcast_shapes(src.shape, x._array.shape) != x._array.shape:
            raise RuntimeError(f"output with shape {shape_str(x._array.shape)} doesn't match the broadcast shape "
                               f"{shape_str(np.broadcast_shapes(src.shape, x._array.shape))}")
    xd, od = x.dtype, out.dtype
    if xd is not od and not _dtype.can_cast(od, xd):
        raise RuntimeError(f"result type {od._legacy} can't be cast to the desired output type {xd._legacy}")
    if _vmap_write is not None and _vmap_write(x, out):      # (a batched tensor: its whole batch written)
        x._vc[0] += 1
        return
    if src is not x._array:
        xa = x._array
        try:
            np.copyto(xa, src, casting="unsafe")
        except ValueError:
            if xa.flags.writeable:
                raise
            # (an expanded tensor, or a view of one: fill_ and zero_ may write its repeated elements; recorded,
            #  CopySlices' backward then refuses them, as torch's)
            np.copyto(writable(xa, getattr(getattr(fn, "__self__", None), "fills", False)), src, casting="unsafe")
    x._vc[0] += 1


# --- tangent rules (forward-mode AD, autograd/forward_ad.py) -------------------------------------------------------
# An op's rule is its ``jvp(ctx, *tangents)`` staticmethod: ``ctx.op``, ``ctx.inputs``, ``ctx.kwargs`` and
# ``ctx.result`` describe the call; one tangent per argument (None: none, i.e. zero); it returns the output's
# tangent (a tuple for several outputs, None for an output without one). An op without one gets the rule derived
# from its backward. The rules are written in tapegrad ops, so tangents are differentiable and batchable.
def linear_jvp(ctx, *tangents):
    """The rule of an op linear in its floating tensor arguments (views, shape ops, sums, indexing, cat...): the op
    itself applied to the tangents (zeros for a floating input without one; other arguments as they were)."""
    args = list(ctx.inputs)
    for i, t in enumerate(tangents):
        if t is not None:
            args[i] = t
        else:
            a = args[i]
            if isinstance(a, Tensor) and a._array.dtype.kind in "fc":
                args[i] = Tensor._make(np.zeros(a._array.shape, a._array.dtype))
    return ctx.op.apply(*args, **ctx.kwargs)


def multilinear_jvp(ctx, *tangents):
    """The product rule of an op linear in each floating tensor argument separately (matmul, einsum, kron...): the
    sum over the inputs with a tangent of the op with that input replaced by its tangent."""
    total = None
    for i, t in enumerate(tangents):
        if t is not None:
            args = list(ctx.inputs)
            args[i] = t
            total = add_tangents(total, ctx.op.apply(*args, **ctx.kwargs))
    return total


class _Elementwise:
    """``jvp = ELEMENTWISE``: the rule of an elementwise op of one tensor input (its Jacobian is diagonal): the
    tangent is the op's backward formula applied to it (real tensors; forward AD runs the op's node on it)."""

    real_only = True          # (complex: the backward formula is conjugated; the derived rule is used)

    def __repr__(self):
        return "ELEMENTWISE"


ELEMENTWISE = _Elementwise()


def real_only(rule):
    """Mark a tangent rule valid for real tensors only (it takes the tangent through a backward formula, which for
    complex ones is conjugated): with a complex input the derived rule is used."""
    fn = rule.__func__ if isinstance(rule, staticmethod) else rule
    fn.real_only = True
    return staticmethod(fn)


def add_tangents(a, b):
    """``a + b`` where either may be None (no tangent)."""
    if a is None:
        return b
    if b is None:
        return a
    return a + b


_F16 = np.dtype(np.float16)


def unary(name: str, forward, backward, save: str = "input", node_name: str | None = None, floating=True,
          array_backward=False):
    """Make a one-input Primitive from a NumPy forward and a Tensor backward ``backward(grad, x, result)``.

    ``save`` is "input", "result", "both" or "none": what backward needs (the rest is passed as None).
    ``array_backward``: the formula runs on arrays too (see ``Function.array_backward``).
    """
    if save not in ("input", "result", "both", "none"):
        raise ValueError(f"unary({name!r}): save must be 'input', 'result', 'both' or 'none', not {save!r}")
    default = _dtype.get_default_dtype

    def fwd(ctx, x):
        k = x.dtype.kind
        if k != "f":
            if k == "c":
                ctx._cplx = True        # backward conjugates x and the result (see below)
            elif floating:
                x = x.astype(default().np)
        if save == "result":
            ctx.save_result()
        elif save == "input":
            ctx.save_inputs(0)
        elif save == "both":
            ctx.save_result(0)
        if x.dtype is _F16:      # torch computes Half in float32 and rounds once (a formula's steps would round)
            return forward(x.astype(np.float32)).astype(_F16)
        return forward(x)

    # A complex input (``ctx._cplx``): torch's gradient is grad * conj(f'(z)). Every formula here is grad * f'(x)
    # with f real on the real axis (exp, log, sin, tanh, sqrt, sigmoid...), so conj(f'(z)) = f'(conj z): the
    # formula is given the conjugates of z and of the result.
    if save == "result":       # (the branch is taken once here, not on every backward)
        def bwd(ctx, grad):
            r = ctx.saved_tensors[0]
            return backward(grad, None, cj(r) if ctx._cplx else r)
    elif save == "input":
        def bwd(ctx, grad):
            x = ctx.saved_tensors[0]
            return backward(grad, cj(x) if ctx._cplx else x, None)
    elif save == "both":
        def bwd(ctx, grad):
            result, x = ctx.saved_tensors
            if ctx._cplx:
                result, x = cj(result), cj(x)
            return backward(grad, x, result)
    else:
        def bwd(ctx, grad):
            return backward(grad, None, None)

    def jvp(ctx, t):      # elementwise: the tangent through the backward formula (a diagonal Jacobian)
        return backward(t, ctx.inputs[0], ctx.result)

    return type(name, (Primitive,), {"forward": staticmethod(fwd), "backward": staticmethod(bwd),
                                     "jvp": real_only(jvp),
                                     "node_name": node_name or name + "Backward0", "__doc__": f"{name} op",
                                     "array_backward": array_backward})


# out= and writes refused by NumPy: their own module, re-exported here where op modules import them from
from ._out import _CPP_NAMES, castable, check_out_dtype, write_out, writable, writes_out  # noqa: E402,F401
