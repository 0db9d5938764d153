"""The one mechanism behind every op: ``Function`` (forward + backward) and the graph ``Node`` it records.

When ``MyFn.apply(*args)`` runs with grad mode on and some input requires grad, the context object ``ctx``
that forward saw becomes the graph node: ``out.grad_fn`` is ``ctx``, an instance of ``MyFnBackward`` whose
``next_functions`` point at the nodes that made the inputs (an ``AccumulateGrad`` for a leaf). Nothing is
recorded otherwise, so code under ``no_grad`` pays only for the forward.

Built-in ops subclass ``Primitive``: the same ``Function``, except that forward receives and returns NumPy
arrays (fast), and backward, as for every Function, receives and returns Tensors, so that it is itself recorded
under ``create_graph=True``.
"""

from __future__ import annotations

import itertools
import warnings
import weakref
from collections import namedtuple
from sys import getrefcount as _getrefcount

import numpy as np

from .. import _argtypes
from .._npcompat import QUIET, broadcast_error, quiet_enter, quiet_exit, quiet_state
from .grad_mode import INFERENCE_SAVED, INFERENCE_VERSION, _state, no_grad

__all__ = ["Function", "Primitive", "FunctionCtx", "Node", "BackwardNode", "AccumulateGrad", "once_differentiable",
           "RemovableHandle", "Interpreter", "GradientEdge"]

_next_seq = itertools.count().__next__   # creation order of nodes; reversed, it is a topological order
_Tensor = None  # tapegrad.tensor.Tensor, bound by tensor.py (this module must not import it: a cycle)
_site_hook = None  # autograd.anomaly / tapegrad.debug set it to record where a node is made (None: off, free)
_unpack_hook = None  # autograd.forward_ad sets it while a dual level is active (see SavedTensor.unpack)

FREED_MSG = (
    "Trying to backward through the graph a second time (or directly access saved tensors after they have "
    "already been freed). Saved intermediate values of the graph are freed when you call .backward() or "
    "autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or if "
    "you need to access saved tensors after calling backward.")


class RemovableHandle:
    """What ``register_hook`` returns; ``handle.remove()`` takes the hook out again."""

    __slots__ = ("_list", "_item")

    def __init__(self, lst, item):
        self._list, self._item = lst, item

    def remove(self):
        try:
            self._list.remove(self._item)
        except ValueError:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def _tensor_desc(t, shape=None) -> str:
    """``[tapegrad.FloatTensor [2, 3]]`` — how PyTorch names a tensor in autograd errors."""
    return f"[tapegrad.{t.dtype._legacy}Tensor [{', '.join(map(str, t.shape if shape is None else shape))}]]"


def _short(node_name: str) -> str:
    """``MulBackward0`` -> ``Mul``: how torch names a node in the in-place error."""
    i = node_name.rfind("Backward")
    return node_name[:i] if i > 0 else node_name


def _version_error(t, where, current, expected):
    return RuntimeError(
        "one of the variables needed for gradient computation has been modified by an inplace "
        f"operation: {_tensor_desc(t)}{where} is at version {current}; expected version "
        f"{expected} instead. Hint: enable anomaly detection to find the operation that failed "
        "to compute its gradient, with tapegrad.autograd.set_detect_anomaly(True, check_nan=False).")


def _input_version_error(t, expected, transposed=False):
    if transposed:
        # torch kept ``t.t()``, a view, and names that: its shape reversed and, when t requires grad, the
        # AsStridedBackward0 node a view of a tensor changed in place gets
        where = ", which is output 0 of AsStrided," if t.requires_grad else ""
        return RuntimeError(_version_error(t, where, t._vcl[0], expected).args[0].replace(
            _tensor_desc(t), _tensor_desc(t, t.shape[::-1]), 1))
    if t.grad_fn is None:
        where = ""
    elif t._base is not None:
        # a view whose tensor changed since: torch regenerates its grad_fn (on access, whatever the grad mode of
        # the change) as AsStridedBackward0
        where = ", which is output 0 of AsStrided,"
    else:
        where = f", which is output {t._output_nr} of {_short(t.grad_fn.name())},"
    return _version_error(t, where, t._vcl[0], expected)


class SavedTensor:
    """An *output* kept for backward: its array and version, rebuilt into a Tensor on unpack.

    (Keeping the output Tensor itself would form the reference cycle ``out.grad_fn -> ctx -> out``.) Saved
    inputs need no wrapper: the node keeps the Tensor itself — still connected to its graph, which is what makes
    double backward right — and the version it had (``ctx._saved_versions``).
    """

    __slots__ = ("_data", "_vc", "_version", "_output_nr")

    def __init__(self, tensor, output_nr):
        vc = tensor._vcl
        if vc is None:                   # (made now if the tensor had none: it must be shared)
            vc = tensor._vcl = [0]
        self._vc = vc
        self._version = vc[0]
        self._output_nr = output_nr
        self._data = tensor._array

    def unpack(self, node):
        if self._vc[0] != self._version:
            t = _Tensor._make(self._data)
            raise _version_error(t, f", which is output {self._output_nr} of {_short(node.name())},", self._vc[0],
                                 self._version)
        t = _Tensor._make(self._data, True)
        t.grad_fn, t._output_nr, t._vcl = node, self._output_nr, self._vc
        if _unpack_hook is not None:     # forward AD: the rebuilt output gets the tangents the output had
            _unpack_hook(self._data, t)
        return t


PACK_INPLACE_MSG = (
    "A saved tensor pack hook is modifying its input in place. Tensors provided as input to pack hook cannot be "
    "modified by in-place operations as this can lead to unexpected side-effects. Please open an issue if you need "
    "to perform in-place operations on the input to a pack hook.")


class PackedSaved:
    """A tensor kept for backward while saved-tensor hooks were set (``autograd.graph.saved_tensors_hooks``):
    what the pack hook returned, unpacked by the unpack hook on every access.

    As in torch, the unpacked tensor is a new Tensor over the unpack hook's data that carries the saved tensor's
    place in the graph (its ``grad_fn`` and output number, or its leaf's ``AccumulateGrad``), so double backward
    still reaches the graph; no version check is made (the hooks own the data).
    """

    __slots__ = ("_packed", "_unpack", "_output_nr", "_rg", "_fn", "_acc")

    def __init__(self, t, pack, unpack, output_nr):
        vc = t._vc
        v = vc[0]
        self._packed = pack(t)
        if vc[0] != v:
            raise RuntimeError(PACK_INPLACE_MSG)
        self._unpack = unpack
        self._rg = t._rg
        if output_nr >= 0:           # an output of the node that keeps it: rebuilt with that node (no cycle)
            self._fn = self._acc = None
        else:
            self._fn = t.grad_fn
            self._acc = t._accumulator() if t._rg and t.grad_fn is None else None
            output_nr = -1 - t._output_nr
        self._output_nr = output_nr      # >= 0: output of the node; < 0: -1 - the tensor's own output number

    def unpack(self, node):
        t = self._unpack(self._packed)
        if not isinstance(t, _Tensor):
            raise TypeError(f"Output of saved tensor unpack_hook expected to be a Tensor but got result of type "
                            f"{type(t).__name__}")
        u = _Tensor._make(t._array, self._rg)
        u._vcl = t._vc
        nr = self._output_nr
        if nr >= 0:
            u.grad_fn, u._output_nr = node, nr
        else:
            u.grad_fn, u._output_nr, u._acc = self._fn, -1 - nr, self._acc
        return u


def saved_entries(node):
    """What ``node`` keeps for backward: None, "freed", or ``[(kind, ndarray, tensor_or_None)]`` with kind
    "input" or "result" (used by ``viz`` and ``autograd.graph_stats``)."""
    saved = getattr(node, "_saved", None)
    if saved is None:
        return None
    if saved is _FREED:
        return "freed"
    out = []
    for s, v in zip(saved, node._saved_versions):
        if s.__class__ is SavedTensor:
            out.append(("result", s._data, None))
        elif v is not None:
            out.append(("input", s._array, s))
        # (a PackedSaved holds what a pack hook returned: nothing this graph keeps as an array)
    return out


_FREED = ("freed",)   # marks a node whose saved tensors were released by a backward without retain_graph


class _OwnGrad:
    """``ctx._arrays`` while the array walk runs a formula whose one incoming gradient array nobody else holds:
    the formula may write its result into that array (true, like ``_arrays = True``: arrays in, arrays out)."""

    __slots__ = ()

    def __repr__(self):
        return "OWN_GRAD"


OWN_GRAD = _OwnGrad()


class Node:
    """A node of the backward graph: what ``grad_fn`` returns. Concrete nodes are ``XxxBackward0`` classes.

    ``next_functions`` — ``((node, input_nr), ...)``, one per input, ``(None, 0)`` where no gradient flows.
    ``register_hook(fn)`` — ``fn(grad_inputs, grad_outputs)`` after the node ran; may return new grad_inputs.
    ``register_prehook(fn)`` — ``fn(grad_outputs)`` before it runs; may return new grad_outputs.
    """

    # Defaults live on the class, so making a node sets nothing it doesn't need (the hot path).
    _name = "Node"
    _next_fns = _next_nrs = ()   # the edges: node and output number of each input (None, 0 where none flows)
    sequence_nr = -1
    _hooks = _prehooks = _tensor_prehooks = _retained = None
    _hooked = False          # True once any hook or retain_grad is set: the engine then takes the Tensor path
    _array_backward = False  # the op's backward formula also runs on ndarrays (see Function.array_backward)

    _metadata = None

    def name(self) -> str:
        return self._name

    @property
    def metadata(self) -> dict:
        """A dict of the user's own, kept with the node (torch's ``Node.metadata``)."""
        d = self._metadata
        if d is None:
            d = self._metadata = {}
        return d

    @property
    def next_functions(self):
        return tuple(zip(self._next_fns, self._next_nrs))

    def register_hook(self, fn):
        if self._hooks is None:
            self._hooks = []
        self._hooked = True
        fn = self._edge_hook(fn)
        self._hooks.append(fn)
        return RemovableHandle(self._hooks, fn)

    def _edge_hook(self, fn):
        """``fn`` as the engine calls node hooks, with one gradient per input slot of the op (a non-tensor
        argument's slot holds None); torch's hook sees one per edge of ``next_functions``: the slots of
        non-tensor arguments are left out of the ``grad_inputs`` it gets, and put back around what it returns."""
        meta = getattr(self, "_input_meta", None)
        if not meta or self._forward_cls._scalar_edges or all(m is not False for m in meta):
            return fn
        keep = [i for i, m in enumerate(meta) if m is not False]

        def hook(grad_inputs, grad_outputs):
            r = fn(tuple(grad_inputs[i] for i in keep), grad_outputs)
            if r is None:
                return None
            full = list(grad_inputs)
            for i, g in zip(keep, r):
                full[i] = g
            return full
        return hook

    def register_prehook(self, fn):
        if self._prehooks is None:
            self._prehooks = []
        self._hooked = True
        self._prehooks.append(fn)
        return RemovableHandle(self._prehooks, fn)

    def _add_tensor_prehook(self, output_nr, fn):
        if self._tensor_prehooks is None:
            self._tensor_prehooks = {}
        self._hooked = True
        hooks = self._tensor_prehooks.setdefault(output_nr, [])
        hooks.append(fn)
        return RemovableHandle(hooks, fn)

    def __repr__(self):
        return f"<{self._name} object at {hex(id(self))}>"

    def __call__(self, *grads):
        """Run this node's backward by hand (as ``grad_fn(g)`` in torch); returns its input gradients."""
        from .engine import run_node
        out = run_node(self, list(grads))
        return out[0] if len(out) == 1 else tuple(out)


GradientEdge = namedtuple("GradientEdge", ["node", "output_nr", "ownership_token"], defaults=[None])
GradientEdge.__doc__ = """Where the gradient of a tensor is computed: ``(node, output_nr)`` (from
``autograd.graph.get_gradient_edge(t)``); usable in place of the tensor as ``autograd.grad``'s inputs or outputs."""
GradientEdge.__module__ = "tapegrad.autograd.graph"


class AccumulateGrad(Node):
    """The node of a leaf that requires grad: its backward adds the incoming gradient into ``leaf.grad``."""

    _name = "AccumulateGrad"
    _out_meta = (None,)
    _post_hooks = None       # Tensor.register_post_accumulate_grad_hook: fn(leaf) after .grad was updated
    _sparse_rows = None      # rows a sparse=True embedding's backward read: .grad becomes a COO tensor of them

    def __init__(self, variable):
        self._variable = weakref.ref(variable)   # weak: the leaf owns its node, not the other way round
        self.sequence_nr = _next_seq()

    @property
    def variable(self):
        """The leaf tensor this node accumulates into."""
        return self._variable()

    def accumulate(self, grad, create_graph):
        """``leaf.grad += grad``: a new tensor on first use, in place afterwards (out of place with a graph)."""
        var = self._variable()
        if var is None or not var._rg:    # frozen after the graph was recorded: torch skips it too
            return
        if var._grad is None:
            if create_graph and grad._rg:
                var._grad = grad
            elif _getrefcount(grad) <= 3 and _getrefcount(grad._array) <= 2 and grad._array.base is None and \
                    grad._array.flags.writeable:
                # nobody else holds this gradient (the engine's buffer and this call's arguments are the
                # references counted): keep it, as torch's AccumulateGrad "steals" it, instead of copying
                var._grad = grad
            else:
                # copy: the same gradient object also flows to another leaf, or belongs to the caller
                var._grad = grad._detached_copy()
        elif create_graph or var._grad._rg:
            var._grad = var._grad + grad
        else:
            var._grad._array += grad._array
            var._grad._vc[0] += 1
        if var._array.__class__ is not np.ndarray:
            _meta_grad(var)
        if self._sparse_rows is not None:
            self._sparse_grad(var)

    def accumulate_array(self, grad):
        """``accumulate`` for a gradient that arrives as an ndarray (a backward without create_graph)."""
        var = self._variable()
        if var is None or not var._rg:
            return
        if var._grad is None:
            # keep the array when nobody else holds it (the engine dropped its references before this call: the
            # argument and getrefcount's own are what is counted), else copy it
            if grad.__class__ is np.ndarray and _getrefcount(grad) <= 3 and grad.base is None and \
                    grad.flags.writeable:
                var._grad = _Tensor._make(grad)
            else:
                var._grad = _Tensor._make(np.array(grad) if grad.__class__ is np.ndarray else grad.copy())
        else:
            old = var._grad
            if old._rg:
                var._grad = old + _Tensor._make(grad)
            else:
                old._array += grad
                old._vc[0] += 1
        if var._array.__class__ is not np.ndarray:
            _meta_grad(var)
        if self._sparse_rows is not None:
            self._sparse_grad(var)

    def _sparse_grad(self, var):
        """``leaf.grad`` as the sparse gradient torch gives an ``Embedding(sparse=True)`` weight."""
        from ..sparse import sparse_grad
        rows, self._sparse_rows = self._sparse_rows, None
        sparse_grad(var, rows)


def _meta_grad(var):
    """A meta leaf's gradient is meta (a backward formula that left NumPy's dispatch computed it on zeros)."""
    from .._meta import MetaArray, meta_array
    g = var._grad
    if var._array.__class__ is MetaArray and g is not None and g._array.__class__ is not MetaArray:
        g._array = meta_array(g._array.shape, g._array.dtype)


_NO_GRAD_NEEDED = (False,) * 64


class BackwardNode(Node):
    """The node (and ctx) of one call of a ``Function``; ``XxxBackward0`` classes derive from it.

    Also the ``ctx`` that forward and backward receive: ``save_for_backward``, ``saved_tensors``,
    ``needs_input_grad``, ``mark_dirty``, ``mark_non_differentiable``, ``set_materialize_grads``;
    forward may keep anything else on ``ctx`` (``ctx.dim = dim``).
    """

    # What every recorded node has lives in slots (fast, and out of the instance dict that ``_release`` scans);
    # what only some nodes have is a class-level default, overridden in the instance dict when set.
    __slots__ = ("_next_fns", "_next_nrs", "_input_meta", "_out_meta", "sequence_nr", "_inputs", "_saved",
                 "_saved_versions", "needs_input_grad", "_to_save", "_arrays")   # (set by _edges / _link_outputs)
    _forward_cls = None
    _non_diff = _dirty = _site = None
    _materialize = True
    _cplx = False      # set by a built-in op's forward on complex operands: its backward then conjugates

    # --- what forward calls -------------------------------------------------------------------------------
    def save_for_backward(self, *tensors):
        """Keep tensors (inputs, outputs or others) for backward; read them back as ``ctx.saved_tensors``."""
        self._to_save = tensors

    def save_inputs(self, *positions):
        """(Primitive ops) keep the forward inputs at these positions, as the connected Tensors; a position None
        keeps nothing there (``saved_tensors`` gives None in its place)."""
        inputs = self._inputs
        self._to_save = [None if i is None else inputs[i] for i in positions]

    def save_crossed(self, i, j):
        """(Primitive ops) the product rule's saving, as torch's: input ``i`` is kept only if input ``j`` needs a
        gradient (which is made from ``i``), and ``j`` only if ``i`` does. An operand nobody needs is not kept:
        changing it in place before backward is then no error."""
        need, inputs = self.needs_input_grad, self._inputs
        self._to_save = (inputs[i] if need[j] else None, inputs[j] if need[i] else None)

    def save_result(self, *extra_positions):
        """(Primitive ops) keep output 0 (as ``saved_tensors[0]``), then the inputs at ``extra_positions``."""
        if extra_positions:
            inputs = self._inputs
            self._to_save = (_RESULT, *[inputs[i] for i in extra_positions])
        else:
            self._to_save = _RESULT_ONLY

    def save_for_forward(self, *tensors):
        """Keep tensors for a custom Function's ``jvp`` (forward-mode AD), where ``ctx.saved_tensors`` reads them;
        torch keeps them as the public attribute ``ctx.saved_for_forward`` too (libraries read it in ``jvp``)."""
        from ..tensor import Tensor
        for t in tensors:
            if not (t is None or isinstance(t, Tensor)):
                raise AssertionError("save_for_forward expects all arguments to be tensors; you should save "
                                     "non-tensors as attributes on ctx.")
        self.saved_for_forward = tensors

    def mark_dirty(self, *tensors):
        """Declare inputs that forward modified in place (they become outputs with this node as grad_fn)."""
        self._dirty = tensors

    def mark_non_differentiable(self, *outputs):
        """Declare outputs that have no gradient (e.g. indices); they get ``requires_grad=False``."""
        self._non_diff = outputs

    def set_materialize_grads(self, value: bool):
        """With False, backward receives None (not zeros) for outputs that got no gradient."""
        self._materialize = bool(value)

    def __getattr__(self, name):
        # (only for a name not found: torch's ``grad_fn._saved_self`` / ``_raw_saved_self``, autograd/saved_attrs.py)
        if name.startswith(("_saved_", "_raw_saved_")) and name != "_saved_versions":
            from .saved_attrs import saved_attribute
            return saved_attribute(self, name)
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    # --- what backward reads ------------------------------------------------------------------------------
    @property
    def saved_tensors(self):
        """What forward saved, as Tensors — or as ndarrays while the engine runs an ``array_backward``."""
        try:
            saved = self._saved
        except AttributeError:   # a ctx that was never linked into a graph
            return ()
        if saved is _FREED:
            raise RuntimeError(FREED_MSG)
        if saved is None:
            return ()
        arrays = self._arrays
        res = []
        for s, v in zip(saved, self._saved_versions):
            if v is not None:          # a saved input: still the version it had when saved?
                vc = s._vcl
                if vc is not None and vc[0] != v:
                    # (an op whose class lists a slot in ``_saved_transposed`` kept that input as torch keeps
                    # ``input.t()``: linear's weight)
                    k = next(i for i, x in enumerate(saved) if x is s)
                    raise _input_version_error(s, v, k in getattr(self._forward_cls, "_saved_transposed", ()))
                res.append(s._array if arrays else s)
            elif s.__class__ is SavedTensor:
                res.append(s.unpack(self) if not arrays or s._vc[0] != s._version else s._data)
            elif s.__class__ is PackedSaved:      # kept through saved-tensor hooks: unpacked on each access
                t = s.unpack(self)
                res.append(t._array if arrays else t)
            else:
                res.append(s)
        return tuple(res)

    @property
    def saved_variables(self):
        """The old name of ``saved_tensors``, on a Python Function's ctx only (deprecated, with torch's warning);
        a built-in op's node has no such attribute in torch."""
        if self._forward_cls._array_forward:
            raise AttributeError(f"'{type(self).__name__}' object has no attribute 'saved_variables'")
        warnings.warn("'saved_variables' is deprecated; use 'saved_tensors'", DeprecationWarning, stacklevel=2)
        return self.saved_tensors

    @property
    def next_functions(self):
        meta = self._input_meta     # False marks an argument that was not a tensor (a Python number, a dim...)
        edges = tuple(zip(self._next_fns, self._next_nrs))
        if not self._forward_cls._scalar_edges and any(m is False for m in meta):
            return tuple(e for e, m in zip(edges, meta) if m is not False)
        return edges

    def _release(self):
        """Free what backward needed: a second backward then raises PyTorch's error."""
        if self._saved is not None:
            self._saved = _FREED
        if self._forward_cls._array_forward:
            # arrays a Primitive kept on ctx (masks, indices) count as saved; small metadata (dims) stays
            d = self.__dict__
            if d:
                arrays = [k for k, v in d.items() if v.__class__ is np.ndarray]
                if arrays:
                    for k in arrays:
                        del d[k]
                    self._saved = _FREED


class _Result:
    """Placeholder for "the output" in a Primitive's save list (the output does not exist during forward)."""


_RESULT = _Result()
_RESULT_ONLY = (_RESULT,)
_NO_VERSION = (None,)     # a saved output's version lives in its SavedTensor


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


# --- interpreters: how the function transforms see every op ----------------------------------------------------
class Interpreter:
    """One active function transform (forward-mode AD, vmap, compile's capture): while it is active, every op
    call (``SomeFunction.apply``, built-in or user-defined) goes to its ``process(cls, args, kwargs)``.

    ``process`` runs the op itself with ``self.call_next(cls, args, kwargs)`` and does its own work around
    that (unwrapping its tensors before, wrapping or recording after). Transforms nest as in ``torch.func``:
    the one entered last sees an op first, and while it processes that op, every op it calls (``call_next``
    included, and the ops it uses for its own work, e.g. a tangent's formula) goes to the transforms entered
    before it, and finally to eager. So ``vmap(jvp(f))`` batches the tangent formulas too.

    ``with interp:`` activates it in this thread (``enter()``/``exit()`` without ``with``). With no transform
    active anywhere, ``Function.apply`` is the plain eager call: an eager op pays nothing for this mechanism.
    """

    level = None      # its position in this thread's stack while active

    def process(self, cls, args, kwargs):
        return self.call_next(cls, args, kwargs)

    @staticmethod
    def call_next(cls, args, kwargs):
        return cls.apply(*args, **kwargs)

    def enter(self):
        st = _state
        if st.top != len(st.interpreters) - 1:
            raise RuntimeError("a function transform cannot be entered while another one is processing an op")
        self.level = len(st.interpreters)
        st.interpreters = (*st.interpreters, self)
        st.top = self.level
        _count_active(1)
        return self

    def exit(self):
        st = _state
        if not st.interpreters or st.interpreters[-1] is not self:
            raise RuntimeError(f"{type(self).__name__}: transforms must be exited in the reverse order of entering")
        st.interpreters = st.interpreters[:-1]
        st.top = len(st.interpreters) - 1
        self.level = None
        _count_active(-1)

    def __enter__(self):
        return self.enter()

    def __exit__(self, *exc):
        self.exit()
        return False


def active_interpreters():
    """This thread's active transforms, outermost first."""
    return _state.interpreters


def _apply_interpreted(cls, *args, **kwargs):
    """``Function.apply`` while some thread has a transform active: the current one processes the call (with
    the ones below it as its next), or eager when this thread has none."""
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


_active = [0]   # active transforms in all threads: Function.apply is the interpreted call while it is above 0
# The meta device's step (``_meta.apply_meta``), set while meta tensors exist (it counts as one active transform):
# the last one an op call passes before eager.
_meta_step = [None]
_active_lock = __import__("threading").Lock()


_EAGER_CODE = _apply.__code__


def _count_active(delta):
    """Switch ``Function.apply`` between the eager and the interpreted call when the count of active transforms
    leaves or reaches 0. The switch swaps the code of the one function behind the classmethod rather than the
    class attribute: rebinding ``Function.apply`` would invalidate the attribute caches of every op class (a
    walk over some 360 subclasses: ~20 us per transform call, ~100 us with cold caches, twice per call)."""
    with _active_lock:
        _active[0] += delta
        _apply.__code__ = _apply_interpreted.__code__ if _active[0] > 0 else _EAGER_CODE


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


def _keep_saved_plain(ctx, outputs, fresh):
    """Turn what forward asked to save (``ctx._to_save``) into ``ctx._saved`` and ``ctx._saved_versions``: an
    output as a ``SavedTensor`` (no reference cycle through it), an input as itself with the version it has now,
    anything else (a number, None for "not kept") as is. ``fresh``: the outputs were just made, so no saved input
    can be one of them."""
    to_save = ctx._to_save
    ctx._inputs = ctx._to_save = None
    if to_save is None:
        ctx._saved = None
        return
    if to_save is _RESULT_ONLY:          # (the output alone: the common case of a unary op)
        ctx._saved = (SavedTensor(outputs[0], 0),)
        ctx._saved_versions = _NO_VERSION
        return
    saved, versions = [], []
    for s in to_save:
        v = None
        if s is _RESULT:
            s = SavedTensor(outputs[0], 0)
        elif isinstance(s, _Tensor):
            j = -1 if fresh else _position(s, outputs)
            if j >= 0:
                s = SavedTensor(s, j)
            else:
                vc = s._vcl
                if vc is None:
                    v = 0
                elif vc is INFERENCE_VERSION:
                    raise RuntimeError(INFERENCE_SAVED)
                else:
                    v = vc[0]
        saved.append(s)
        versions.append(v)
    ctx._saved = tuple(saved)
    ctx._saved_versions = tuple(versions)


def _keep_saved_hooked(ctx, outputs, fresh):
    """``_keep_saved`` while saved-tensor hooks are set in some thread: with a pair set in this thread, every
    tensor kept is handed to the innermost pack hook at once (outputs included) and what it returns is kept."""
    _keep_saved_plain(ctx, outputs, fresh)
    hooks = _state.saved_hooks
    saved = ctx._saved
    if not hooks or saved is None:
        return
    pack, unpack = hooks[-1]
    res = list(saved)
    versions = ctx._saved_versions
    # (the pack hook sees the tensors in torch's order: its derivative formulas' order, which for some binary
    # ops is the second operand first; ``_pack_order`` on the op's class gives it by slot)
    order = getattr(ctx._forward_cls, "_pack_order", None)
    for i in (order if order is not None and len(order) == len(res) else range(len(res))):
        s = res[i]
        if s.__class__ is SavedTensor:
            res[i] = PackedSaved(outputs[s._output_nr], pack, unpack, s._output_nr)
        elif versions[i] is not None:
            res[i] = PackedSaved(s, pack, unpack, -1)
    ctx._saved = tuple(res)
    ctx._saved_versions = (None,) * len(res)


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


def _position(t, outputs):
    for j, o in enumerate(outputs):
        if t is o:
            return j
    return -1


def _marked(o, non_diff):
    for n in non_diff:
        if o is n or o._array is n:
            return True
    return False


class _DelayedError(Function):
    """Stands in for a once-differentiable backward's result; differentiating it again raises."""

    @staticmethod
    def forward(ctx, x):
        return x._alias()

    @staticmethod
    def backward(ctx, grad):
        raise RuntimeError("trying to differentiate twice a function that was marked with @once_differentiable")


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
