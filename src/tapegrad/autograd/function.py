"""The one mechanism behind every op: ``Function`` (forward + backward) and the graph ``Node`` it records.

When ``MyFn.apply(*args)`` runs with grad mode on and some input requires grad, the context object ``ctx``
that forward saw becomes the graph node: ``out.grad_fn`` is ``ctx``, an instance of ``MyFnBackward`` whose
``next_functions`` point at the nodes that made the inputs (an ``AccumulateGrad`` for a leaf). Nothing is
recorded otherwise, so code under ``no_grad`` pays only for the forward.

Built-in ops subclass ``Primitive``: the same ``Function``, except that forward receives and returns NumPy
arrays (fast), and backward, as for every Function, receives and returns Tensors, so that it is itself recorded
under ``create_graph=True``.

The mechanism's other parts: the nodes (``node.py``), what they keep for backward (``saved.py``) and the
interpreters that let function transforms see every call (``interpreter.py``). This module makes and links the
nodes (``Function.apply``) and keeps the switches that make the hooks free while unused.
"""

from __future__ import annotations

import warnings

from .. import _argtypes
from .._npcompat import QUIET, broadcast_error, quiet_enter, quiet_exit, quiet_state
from . import interpreter as _interpreter_mod
from . import node as _node_mod
from . import saved as _saved_mod
from .grad_mode import _state, no_grad
from .interpreter import Interpreter, _active_lock, _meta_step
from .node import AccumulateGrad, BackwardNode, GradientEdge, Node, RemovableHandle, _next_seq
from .saved import _keep_saved_hooked, _keep_saved_plain

# (the names below lived here before node.py, saved.py and interpreter.py were split off: their import paths stay)
from .interpreter import _active, _count_active, active_interpreters  # noqa: F401
from .node import OWN_GRAD, _meta_grad, _OwnGrad  # noqa: F401
from .saved import (_FREED, _NO_VERSION, _RESULT, _RESULT_ONLY, FREED_MSG, PACK_INPLACE_MSG, PackedSaved,  # noqa: F401
                    SavedTensor, _input_version_error, _position, _Result, _short, _tensor_desc, _version_error,
                    saved_entries)

__all__ = ["Function", "Primitive", "FunctionCtx", "Node", "BackwardNode", "AccumulateGrad", "once_differentiable",
           "RemovableHandle", "Interpreter", "GradientEdge", "InplaceFunction"]

_Tensor = None  # tapegrad.tensor.Tensor, bound by tensor.py (bind_tensor: these modules must not import it, a cycle)
_site_hook = None  # autograd.anomaly / tapegrad.debug set it to record where a node is made (None: off, free)
_NO_GRAD_NEEDED = (False,) * 64


def bind_tensor(cls):
    """tensor.py hands its Tensor class to the modules of the op mechanism (function, node, saved) once."""
    global _Tensor
    _Tensor = _node_mod._Tensor = _saved_mod._Tensor = cls


class FunctionMeta(type):
    """Gives every Function subclass its own node class, named as PyTorch names it (``MulBackward0``).

    The node class is made the first time the op is recorded (``_node_class(cls)``), not when the op is
    declared: hundreds of ops are declared at import and most programs record a few dozen. Each class starts
    with its own ``_node_cls = None`` (so a subclass never sees its parent's node class).
    """

    def __init__(cls, name, bases, attrs):
        super().__init__(name, bases, attrs)
        cls._node_cls = None
        cls._array_backward = attrs.get("array_backward", False)   # declared by each class itself, not inherited

    @property
    def _backward_cls(cls):
        return cls._node_cls or _node_class(cls)


def _node_class(cls):
    name = cls.__dict__.get("node_name") or (cls.__name__ + ("Backward0" if cls._array_forward else "Backward"))
    attrs = {"_forward_cls": cls, "_name": name, "_array_backward": cls._array_backward,
             "__module__": cls.__module__}
    if not cls._array_forward:      # a Python Function's node, as torch's BackwardCFunction
        attrs.update(apply=_node_apply, apply_jvp=_node_apply_jvp, __repr__=_python_node_repr)
    node_cls = cls._node_cls = type(name, (BackwardNode,), attrs)
    return node_cls


def _node_apply(self, *grads):
    """``grad_fn.apply(*grads)`` of a Python Function's node: its own backward (or vjp) called by hand, with
    this node as ctx; returns what that returns."""
    cls = self._forward_cls
    if cls.backward is not Function.backward and cls.vjp is not Function.vjp and cls.vjp is not cls.backward:
        raise RuntimeError("Implementing both 'backward' and 'vjp' for a custom Function is not allowed. You "
                           "should only implement one of them.")
    user_fn = cls.vjp if cls.vjp is not Function.vjp else cls.backward
    return user_fn(self, *grads)


def _node_apply_jvp(self, *grads):
    return self._forward_cls.jvp(self, *grads)


def _python_node_repr(self):
    # (torch makes these node classes in torch.autograd.function, and prints the module with the name)
    return f"<tapegrad.autograd.function.{self._name} object at {hex(id(self))}>"


class Function(metaclass=FunctionMeta):
    """Base of every differentiable op: define ``forward(ctx, *args)`` and ``backward(ctx, *grads)``.

    >>> class Square(tapegrad.autograd.Function):
    ...     @staticmethod
    ...     def forward(ctx, x):
    ...         ctx.save_for_backward(x)
    ...         return x * x
    ...     @staticmethod
    ...     def backward(ctx, grad):
    ...         x, = ctx.saved_tensors
    ...         return 2 * x * grad
    >>> Square.apply(tapegrad.tensor(3., requires_grad=True))
    tensor(9., grad_fn=<SquareBackward>)

    torch 2.x's style works too: ``forward(*args)`` without ctx plus ``setup_context(ctx, inputs, output)``.
    """

    _array_forward = False   # Primitive: forward on ndarrays
    # A class that sets ``array_backward = True`` promises that its backward formula runs unchanged on NumPy
    # arrays (operators, ``sum_to_shape``, ``kernel``): when no graph of the backward is needed
    # (``create_graph=False``), the engine then passes arrays and ``ctx.saved_tensors`` gives arrays — no
    # Tensor, node or dispatch per backward op. Not inherited: each class declares it for its own formula.
    array_backward = False
    _scalar_edges = False    # list Python-number arguments in next_functions as (None, 0), as torch's arithmetic
    node_name = None

    def __init__(self, *args, **kwargs):
        warnings.warn(f"{self.__class__} should not be instantiated. Methods on autograd functions are all static, "
                      "so you should invoke them on the class itself. Instantiating an autograd function will raise "
                      "an error in a future version of PyTorch.", DeprecationWarning, stacklevel=2)

    def __call__(self, *args, **kwargs):
        # (the pre-1.3 style: an instance with a non-static forward, called; torch refuses it in these words)
        raise RuntimeError("Legacy autograd function with non-static forward method is deprecated. Please use "
                           "new-style autograd function with static forward method. (Example: "
                           "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)")

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for your custom "
                                  "autograd.Function to use it with backward mode AD.")

    vjp = backward
    setup_context = None  # torch 2.x style when overridden
    # vmap (func/_vmap_function.py): run forward under the vmap (setup_context style), or a vmap staticmethod
    generate_vmap_rule = False

    @staticmethod
    def vmap(info, in_dims, *args):
        """The Function under ``vmap``: ``info`` (batch_size, randomness), ``in_dims`` (the batched dim of each
        argument, None where it is not batched) and the arguments; returns ``(output, out_dims)``."""
        raise NotImplementedError("To use autograd.Function with vmap, you must either override the vmap "
                                  "staticmethod or set generate_vmap_rule=True.")

    @staticmethod
    def jvp(ctx, *grad_inputs):
        """Forward-mode AD (``autograd.forward_ad``): the output tangents from the input tangents (zeros for a
        tensor input without one, None for a non-tensor input); ``ctx.saved_tensors`` are what forward gave
        ``ctx.save_for_forward``."""
        raise NotImplementedError("You must implement the jvp function for custom autograd.Function to use it "
                                  "with forward mode AD.")

    @classmethod
    def apply(cls, *args, **kwargs):
        """Run the op: forward now, and (when recording) the node that backward will call."""
        return _apply(cls, *args, **kwargs)   # replaced by classmethod(_apply) below, the same without a hop


class Primitive(Function):
    """A built-in op: forward gets NumPy arrays (and Python values) and returns arrays."""

    _array_forward = True
    # The op's tangent rule for forward-mode AD (``autograd/forward_ad.py``): ``jvp(ctx, *tangents)`` with
    # ``ctx.inputs``, ``ctx.kwargs``, ``ctx.result``; None derives it from the differentiable backward.
    jvp = None


FunctionCtx = BackwardNode


class _Scratch:
    """The ctx a Primitive's forward gets when nothing is recorded: saving is a no-op, attributes are dropped
    with it. (Making a real node only to throw it away is the largest cost of an op under ``no_grad``.)"""

    needs_input_grad = _NO_GRAD_NEEDED

    def save_inputs(self, *positions):
        pass

    save_result = save_for_backward = mark_non_differentiable = mark_dirty = save_crossed = save_inputs

    def set_materialize_grads(self, value):
        pass


def _apply(cls, *args, **kwargs):
    """Run forward; if recording (grad mode on and an input requires grad), link ctx into the graph."""
    T = _Tensor
    if _state.enabled:
        for a in args:
            if isinstance(a, T) and a._rg:
                return _record(cls, args, kwargs) if cls._array_forward else _apply_function(cls, args, kwargs, True)
    if not cls._array_forward:
        return _apply_function(cls, args, kwargs, False)
    # the fast path of a built-in op: one NumPy call and one Tensor wrapper
    raw = []
    for a in args:       # (a loop: cheaper than a list comprehension for the usual one or two arguments)
        raw.append(a._array if isinstance(a, T) else a)
    # built-in ops are silent about inf/nan, as torch's (NumPy would warn); the backward walk is silenced
    # once for all its ops, so only ops outside it pay for this
    token = None if quiet_state() is QUIET else quiet_enter(QUIET)
    try:
        out = cls.forward(_Scratch(), *raw, **kwargs)
    except Exception as e:   # torch's error for a wrong-typed argument or a broadcast (free when nothing fails)
        err = _forward_error(e)
        if err is None:
            raise
        raise err from None
    finally:
        if token is not None:
            quiet_exit(token)
    if out.__class__ is tuple:
        return tuple(T._make(o) if o.__class__ is not T else o for o in out)
    return T._make(out)


def _forward_error(e):
    """The error torch raises where a built-in op's forward failed with ``e`` (None: ``e`` itself): a wrong-typed
    argument of the public call in progress is torch's TypeError (its parser checks types first), NumPy's
    broadcasting ValueError torch's RuntimeError."""
    err = _argtypes.from_stack(e)
    if err is None and isinstance(e, ValueError):
        err = broadcast_error(e)
    return err


Function.apply = classmethod(_apply)   # one call less per op than a method that calls _apply
_apply_eager = type(_apply)(_apply.__code__, _apply.__globals__, "_apply_eager")   # (never switched: see below)


# --- the interpreted call: Function.apply while a transform is active somewhere (interpreter.py) ---------------
def _apply_interpreted(cls, *args, **kwargs):
    """``Function.apply`` while some thread has a transform active: the current one processes the call (with
    the ones below it as its next), or eager when this thread has none. (Its code runs as ``_apply``'s, with
    this module's globals: ``interpreter._count_active`` swaps it in.)"""
    st = _state
    top = st.top
    if top < 0:
        step = _meta_step[0]
        return _apply_eager(cls, *args, **kwargs) if step is None else step(cls, args, kwargs)
    interp = st.interpreters[top]
    st.top = top - 1
    try:
        return interp.process(cls, args, kwargs)
    finally:
        st.top = top


_EAGER_CODE = _apply.__code__
_interpreter_mod._switch = (_apply, _EAGER_CODE, _apply_interpreted.__code__)


# --- recording a built-in op ---------------------------------------------------------------------------------
def _record(cls, args, kwargs):
    """A built-in op that is recorded: its edges, forward on the arrays, the outputs linked to the node."""
    T = _Tensor
    ctx = (cls._node_cls or _node_class(cls))()
    raw = _edges(ctx, args)
    ctx._inputs = args
    ctx._to_save = None
    token = None if quiet_state() is QUIET else quiet_enter(QUIET)
    try:
        out = cls.forward(ctx, *raw, **kwargs)
    except Exception as e:
        err = _forward_error(e)
        if err is None:
            raise
        raise err from None
    finally:
        if token is not None:
            quiet_exit(token)
    if out.__class__ is tuple:
        outputs = tuple(T._make(o) if o.__class__ is not T else o for o in out)
        _link_outputs(ctx, outputs)
        return outputs
    if out.__class__ is T:          # a forward that handed back a Tensor (not a fresh output)
        _link_outputs(ctx, (out,))
        return out
    o = T._make(out)               # the common case: one new array (or a NumPy scalar, from a 0-d op)
    _link_outputs(ctx, (o,), fresh=True)
    return o


def _edges(ctx, args):
    """Give ctx one edge per argument (its node and output number, ``(None, 0)`` where no gradient flows), the
    arguments' shapes and dtypes, and ``needs_input_grad``; return what forward gets (arrays for tensors)."""
    T = _Tensor
    rows = []
    for a in args:   # one row per argument: (what forward gets, node, output number, metadata, needs a gradient)
        if isinstance(a, T):
            arr = a._array
            if a._rg:
                fn = a.grad_fn
                if fn is None:
                    rows.append((arr, a._acc or a._accumulator(), 0, (arr.shape, arr.dtype), True))
                else:
                    rows.append((arr, fn, a._output_nr, (arr.shape, arr.dtype), True))
            else:
                rows.append((arr, None, 0, None, False))     # metadata None: a tensor that needs no gradient
        else:
            rows.append((a, None, 0, False, False))         # metadata False: not a tensor
    # the rows' columns, each as a tuple (zip(*rows) transposes in C)
    raw, ctx._next_fns, ctx._next_nrs, ctx._input_meta, ctx.needs_input_grad = zip(*rows) if rows else _NO_ARGS
    return raw


_NO_ARGS = ((),) * 5


def _apply_function(cls, args, kwargs, record):
    """A user-defined Function: forward on Tensors (with grad mode off), then link when recording."""
    ctx = (cls._node_cls or _node_class(cls))()
    ctx._inputs = args
    ctx._to_save = None
    if record:
        _edges(ctx, args)     # (taken before forward, as for a built-in op)
    else:
        ctx.needs_input_grad = _NO_GRAD_NEEDED
    with no_grad():
        if cls.setup_context is not None and _is_ctxless(cls):
            out = cls.forward(*args, **kwargs)
            cls.setup_context(ctx, args, out)
        else:
            out = cls.forward(ctx, *args, **kwargs)
    single = out.__class__ is not tuple
    outputs = _user_outputs(ctx, args, (out,) if single else out)
    if record:
        _link_outputs(ctx, outputs)
    elif ctx._dirty:
        for t in ctx._dirty:
            t._vc[0] += 1
    return outputs[0] if single else outputs


def _is_ctxless(cls):
    import inspect
    params = list(inspect.signature(cls.forward).parameters)
    return not params or params[0] != "ctx"


def _user_outputs(ctx, args, outputs):
    """For a user Function: an output that *is* an input gets a fresh alias, unless marked dirty."""
    dirty = ctx._dirty or ()
    res = []
    for o in outputs:
        if isinstance(o, _Tensor) and any(o is a for a in args) and not any(o is d for d in dirty):
            o = o._alias()
        res.append(o)
    return tuple(res)


def _link_outputs(ctx, outputs, fresh=False):
    """Make ctx the ``grad_fn`` of its (floating) outputs and keep what it saved for backward. ``fresh``: the
    outputs were just made, so no saved input can be one of them."""
    T = _Tensor
    ctx._arrays = False
    dirty = ctx._dirty
    if dirty:
        for t in dirty:
            if t.grad_fn is None and t._rg:
                raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
    ctx.sequence_nr = _next_seq()
    if _site_hook is not None:
        ctx._site = _site_hook(ctx)
    non_diff = ctx._non_diff
    if len(outputs) == 1 and not non_diff:      # the common case: one floating output
        o = outputs[0]
        arr = o._array
        ctx._out_meta = ((arr.shape, arr.dtype),)
        if arr.dtype.kind in "fc":
            o._rg = True
            o.grad_fn = ctx
            o._output_nr = 0
        else:
            o._rg = False
    else:
        out_meta = []
        for i, o in enumerate(outputs):
            if not isinstance(o, T):
                out_meta.append(None)
                continue
            arr = o._array
            out_meta.append((arr.shape, arr.dtype))
            if arr.dtype.kind not in "fc" or (non_diff and _marked(o, non_diff)):
                o._rg = False
            else:
                o._rg = True
                o.grad_fn = ctx
                o._output_nr = i
        ctx._out_meta = tuple(out_meta)
    if dirty:
        for t in dirty:
            t._vc[0] += 1
    _keep_saved(ctx, outputs, fresh)


def _marked(o, non_diff):
    for n in non_diff:
        if o is n or o._array is n:
            return True
    return False


# --- saved-tensor hooks: the switch (what is kept, and how: saved.py) -------------------------------------------
_keep_saved = _keep_saved_plain   # _keep_saved_hooked while any thread has saved-tensor hooks (none: no cost)
_hook_pairs = [0]                 # hook pairs set, all threads together


def push_saved_tensors_hooks(pack, unpack):
    """Set a (pack, unpack) pair for this thread (``autograd.graph.saved_tensors_hooks`` enters with this)."""
    st = _state
    if st.hooks_disabled is not None:
        raise RuntimeError(st.hooks_disabled)
    st.saved_hooks = (*st.saved_hooks, (pack, unpack))
    _count_hooks(1)


def pop_saved_tensors_hooks():
    st = _state
    if not st.saved_hooks:
        raise RuntimeError("pop_saved_tensors_hooks: no saved-tensor hooks are set in this thread")
    st.saved_hooks = st.saved_hooks[:-1]
    _count_hooks(-1)


def _count_hooks(delta):
    global _keep_saved
    with _active_lock:
        _hook_pairs[0] += delta
        _keep_saved = _keep_saved_hooked if _hook_pairs[0] > 0 else _keep_saved_plain


# --- custom Functions whose backward is not differentiable ----------------------------------------------------
class _DelayedError(Function):
    """Stands in for a once-differentiable backward's result; differentiating it again raises."""

    _vmap_per_sample = True     # (tapegrad's own: once per sample under vmap, func/_vmap_function.py)

    @staticmethod
    def forward(ctx, x):
        return x._alias()

    @staticmethod
    def backward(ctx, grad):
        raise RuntimeError("trying to differentiate twice a function that was marked with @once_differentiable")


class InplaceFunction(Function):
    """A ``Function`` with an ``inplace`` flag, kept (as torch keeps it) for old code; use ``Function``."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace


def once_differentiable(backward):
    """Decorator for a backward that is not itself differentiable (e.g. written in raw NumPy)."""
    import functools

    @functools.wraps(backward)
    def wrapper(ctx, *grads):
        with no_grad():
            out = backward(ctx, *grads)
        if not _state.enabled or not any(isinstance(g, _Tensor) and g._rg for g in grads):
            return out
        single = not isinstance(out, tuple)
        outs = (out,) if single else out
        outs = tuple(_DelayedError.apply(g.detach().requires_grad_()) if isinstance(g, _Tensor) and
                     g.dtype.is_floating_point else g for g in outs)
        return outs[0] if single else outs
    wrapper.once_differentiable = True    # (forward AD cannot transpose it: it builds the Jacobian's rows instead)
    return wrapper
