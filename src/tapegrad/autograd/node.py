"""The backward graph's nodes: ``Node`` (what ``grad_fn`` is), ``BackwardNode`` (a recorded op's node, which is
also the ``ctx`` its forward and backward receive) and ``AccumulateGrad`` (a leaf's node, which adds into
``.grad``). ``Function.apply`` (``function.py``) makes and links them; the engine (``engine.py``) runs them.
"""

from __future__ import annotations

import itertools
import warnings
import weakref
from collections import namedtuple
from sys import getrefcount as _getrefcount

import numpy as np

from .saved import _FREED, _RESULT, _RESULT_ONLY, FREED_MSG, PackedSaved, SavedTensor, _input_version_error

_next_seq = itertools.count().__next__   # creation order of nodes; reversed, it is a topological order
_Tensor = None  # tapegrad.tensor.Tensor, bound by tensor.py through function.bind_tensor (no import: a cycle)


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
        if len(grads) != len(self._out_meta):
            raise TypeError(f"expected {len(self._out_meta)} arguments, got {len(grads)} instead")
        out = run_node(self, list(grads))
        meta = getattr(self, "_input_meta", None)
        if meta and len(out) == len(meta) and not self._forward_cls._scalar_edges and False in meta:
            out = [g for g, m in zip(out, meta) if m is not False]     # one per edge (non-tensor arguments have none)
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
                var._grad = grad if grad._view is None else grad.clone()   # (torch's .grad is never a view)
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
        for t in tensors:
            if not (t is None or isinstance(t, _Tensor)):
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
            # arrays a Primitive kept on ctx (masks, indices, an index key holding them) count as saved; small
            # metadata (dims, a key of slices) stays
            d = self.__dict__
            if d:
                arrays = [k for k, v in d.items() if v.__class__ is np.ndarray or (
                    v.__class__ is tuple and any(a.__class__ is np.ndarray for a in v))]
                if arrays:
                    for k in arrays:
                        del d[k]
                    self._saved = _FREED
