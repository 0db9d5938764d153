"""``tapegrad.autograd.graph``: torch's hooks into the graph and into what it saves for backward.

- ``saved_tensors_hooks(pack_hook, unpack_hook)``: every tensor an op keeps for backward while it is active (the
  inputs and outputs built-in ops save, ``ctx.save_for_backward`` of a Function) goes through ``pack_hook`` at
  once, and the graph keeps what it returns; backward calls ``unpack_hook`` on it at each access. Only the
  innermost pair is used; the pair active when a tensor is saved is the one that unpacks it.
- ``save_on_cpu(pin_memory=False)``: such a pair that keeps a copy (tapegrad computes on the CPU only).
- ``disable_saved_tensors_hooks(error_message)``: setting hooks inside raises ``RuntimeError(error_message)``.
- ``allow_mutation_on_saved_tensors()``: a tensor saved for backward may be changed in place inside; the graph
  then keeps a copy of the value it had.
- ``register_multi_grad_hook(tensors, fn, mode="all"|"any")``: ``fn`` once all (or the first) of the tensors'
  gradients of a backward pass are known.
- ``Node`` (the base of every ``grad_fn``: ``name()``, ``metadata``, ``next_functions``, ``register_hook``,
  ``register_prehook``), ``GradientEdge`` and ``get_gradient_edge(t)``, ``increment_version(t)``.

The graph statistics that used to live here are ``tapegrad.autograd.graph_stats`` (module ``autograd.stats``);
``from tapegrad.autograd.graph import graph_stats`` still works.
"""

from __future__ import annotations

import contextlib
import threading

from .function import GradientEdge, Node, RemovableHandle, pop_saved_tensors_hooks, push_saved_tensors_hooks
from .grad_mode import INFERENCE_VERSION, _state
from .stats import GraphStats, NodeStats, graph_stats

__all__ = ["Node", "GradientEdge", "get_gradient_edge", "increment_version", "saved_tensors_hooks", "save_on_cpu",
           "disable_saved_tensors_hooks", "register_multi_grad_hook", "allow_mutation_on_saved_tensors",
           "graph_stats", "GraphStats", "NodeStats"]


def _tensor_cls():
    from ..tensor import Tensor
    return Tensor


def _node_of(t):
    """The node where ``t``'s gradient is computed: its ``grad_fn``, or its leaf's ``AccumulateGrad``."""
    if isinstance(t, GradientEdge):
        return t.node
    if t.grad_fn is not None:
        return t.grad_fn
    node = t._accumulator()
    if node is None:
        raise RuntimeError("It is not possible to get the gradient edge for a view created in no_grad mode "
                           "of a Tensor that requires gradients: no gradient ever reaches it")
    return node


def get_gradient_edge(tensor) -> GradientEdge:
    """The edge of the graph where ``tensor``'s gradient is computed: ``autograd.grad(loss, edge)`` gives the same
    as ``autograd.grad(loss, tensor)``, and it stays valid when ``tensor`` itself is gone or changed.

    >>> x = tapegrad.ones(2, requires_grad=True); y = x * 2
    >>> tapegrad.autograd.grad((y * y).sum(), get_gradient_edge(y))
    (tensor([4., 4.]),)
    """
    if not tensor.requires_grad:
        raise RuntimeError("It is not possible to get the gradient edge for a Tensor that does not require "
                           "gradients")
    return GradientEdge(_node_of(tensor), tensor._output_nr if tensor.grad_fn is not None else 0)


def increment_version(tensor) -> None:
    """Tell autograd that ``tensor`` (or each tensor of a list) was changed in place behind its back (its data
    written directly): backward then refuses graphs that saved the old value, as after any in-place op."""
    if isinstance(tensor, _tensor_cls()):
        tensor = (tensor,)
    for t in tensor:
        if t._vcl is not INFERENCE_VERSION:     # (an inference tensor has no version to bump: a no-op, as torch)
            t._vc[0] += 1


# --- saved-tensor hooks ----------------------------------------------------------------------------------------
class saved_tensors_hooks:
    """Context manager: tensors saved for backward inside go through ``pack_hook(tensor) -> anything`` when saved,
    and ``unpack_hook(packed) -> Tensor`` each time backward reads them.

    >>> a = tapegrad.ones(3, requires_grad=True)
    >>> with saved_tensors_hooks(lambda t: t.numpy(force=True).copy(), lambda arr: tapegrad.from_numpy(arr)):
    ...     y = a.exp()           # exp keeps its result: packed here, as a NumPy copy
    >>> y.sum().backward(); a.grad
    tensor([2.7183, 2.7183, 2.7183])

    ``pack_hook`` must not change its input in place (torch's error), and what it returns should not hold the
    tensor itself (that would keep the graph alive through a reference cycle: ``t.detach()`` is the usual fix).
    """

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        push_saved_tensors_hooks(self.pack_hook, self.unpack_hook)

    def __exit__(self, *exc):
        pop_saved_tensors_hooks()


class save_on_cpu(saved_tensors_hooks):
    """Keep the tensors saved for backward on the CPU. tapegrad computes on the CPU only, so, as torch does for
    a graph already on the CPU, each saved tensor is kept as a copy and handed back unchanged."""

    def __init__(self, pin_memory=False, device_type="cuda"):
        def pack_to_cpu(tensor):
            return (tensor.device, tensor.detach().clone())

        def unpack_from_cpu(packed):
            return packed[1]

        super().__init__(pack_to_cpu, unpack_from_cpu)


@contextlib.contextmanager
def disable_saved_tensors_hooks(error_message):
    """Inside, setting saved-tensor hooks (``saved_tensors_hooks``, ``save_on_cpu``, non-reentrant checkpoint)
    raises ``RuntimeError(error_message)``; so does entering it while hooks are set."""
    st = _state
    if st.saved_hooks:
        raise RuntimeError(error_message)
    prev = st.hooks_disabled
    st.hooks_disabled = str(error_message)
    try:
        yield
    finally:
        st.hooks_disabled = prev


# --- hooks over several tensors ----------------------------------------------------------------------------------
class _MultiHandle(RemovableHandle):
    """The handle of a hook made of one hook per tensor: ``remove()`` takes them all out."""

    __slots__ = ("handles",)

    def __init__(self, handles):
        self.handles = tuple(handles)

    def remove(self):
        for h in self.handles:
            h.remove()


def register_multi_grad_hook(tensors, fn, *, mode="all"):
    """Call ``fn`` once per backward pass: with ``mode="all"``, ``fn(grads)`` when the gradient of every tensor
    that this pass computes is known (None in the places of the others: tensors outside the graph, or not needed
    for the pass's ``inputs``); with ``mode="any"``, ``fn(grad)`` with the first one computed.

    >>> a = tapegrad.ones(2, requires_grad=True); b = tapegrad.ones(2, requires_grad=True)
    >>> h = register_multi_grad_hook((a, b), lambda gs: print([g is not None for g in gs]))
    >>> (a * 2).sum().backward()
    [True, False]
    """
    from . import engine
    if mode not in ("all", "any"):
        raise ValueError(f"Expects mode to be one of {('all', 'any')} but got {mode}")
    tensors = tuple(tensors)
    lock = threading.Lock()
    if mode == "any":
        ran = {}     # task id -> True once fn ran in that pass

        def wrapped(grad):
            task = engine.current_task()
            key = task.id if task is not None else None
            with lock:
                if ran.get(key):
                    return
                ran.clear()
                ran[key] = True
            fn(grad)
        return _MultiHandle(t.register_hook(wrapped) for t in tensors if t.requires_grad)

    nodes = [_node_of(t) for t in tensors]
    state = {}        # task id -> [calls left, gradients]

    def inner(i):
        def hook(grad):
            task = engine.current_task()
            if task is None:
                raise AssertionError("expected this hook to be called inside a backward call")
            with lock:
                st = state.get(task.id)
                if st is None:
                    state.clear()      # (a pass that ended early leaves nothing behind for long)
                    st = state[task.id] = [sum(map(task.will_execute, nodes)), [None] * len(tensors)]
                st[1][i] = grad
                st[0] -= 1
                done = st[0] == 0
                if done:
                    del state[task.id]
            if done:
                fn(st[1])
        return hook
    return _MultiHandle(t.register_hook(inner(i)) for i, t in enumerate(tensors) if t.requires_grad)


# --- allow_mutation_on_saved_tensors -------------------------------------------------------------------------
class _AllowMutationOnSavedContext:
    """The state of one ``allow_mutation_on_saved_tensors`` block: the saved tensors (by version counter and
    version) and the copies made of those changed in place since."""

    def __init__(self):
        self.original = {}     # key -> the tensor as saved
        self.cloned = {}       # key -> a copy of its value, made before an in-place change
        self.by_counter = {}   # (id of the version counter, version) -> keys of the tensors saved with it

    def clear(self):
        self.original.clear()
        self.cloned.clear()
        self.by_counter.clear()


_mutation_enabled = [False]
_OUTSIDE = ("Trying to backward outside of the 'allow_mutation_on_saved_tensors' context in which the graph was "
            "originally recorded.")


@contextlib.contextmanager
def allow_mutation_on_saved_tensors():
    """Inside, changing a tensor in place after an op saved it for backward is allowed: the graph keeps a copy of
    the value the op saw (made at the change). Run the backward inside the same block.

    >>> with allow_mutation_on_saved_tensors():
    ...     a = tapegrad.ones(2, 3, requires_grad=True)
    ...     b = a.clone()
    ...     out = (b ** 2).sum()
    ...     _ = b.sin_()
    ...     out.backward()
    >>> a.grad[0]
    tensor([2., 2., 2.])
    """
    from ..ops import _util
    if _mutation_enabled[0]:
        raise RuntimeError("allow_mutation_on_saved_tensors contexts cannot be nested")
    ctx = _AllowMutationOnSavedContext()
    keys = iter(range(1 << 62)).__next__

    def pack(t):
        vc = t._vc
        sid = (id(vc), vc[0])
        for k in ctx.by_counter.get(sid, ()):
            if ctx.original.get(k) is t:      # the same tensor, same version, saved again
                return k
        k = keys()
        ctx.original[k] = t
        ctx.by_counter.setdefault(sid, []).append(k)
        return k

    def unpack(k):
        if not _mutation_enabled[0]:
            raise AssertionError(_OUTSIDE)
        if k in ctx.cloned:
            return ctx.cloned[k]
        if k not in ctx.original:
            raise AssertionError(_OUTSIDE)
        return ctx.original[k]

    def before_write(t):
        vc = t._vc
        for k in ctx.by_counter.pop((id(vc), vc[0]), ()):
            orig = ctx.original.pop(k, None)
            if orig is not None and k not in ctx.cloned:
                ctx.cloned[k] = _tensor_cls()._make(orig._array.copy())

    hooks = saved_tensors_hooks(pack, unpack)
    with hooks:
        _mutation_enabled[0] = True
        prev = _util.set_before_write(before_write)
        try:
            yield ctx
        finally:
            _util.set_before_write(prev)
            ctx.clear()
            _mutation_enabled[0] = False
