"""The backward walk: the chain rule, run once over the recorded graph, without recursion.

1. A node is *ready* once a gradient arrived in its buffer; the ready nodes wait in a priority queue (a heap),
   latest-created first, as in torch's engine. Every node is created after the nodes of its inputs, so when the
   queue hands out a node, every node that could still add to its buffer (created later) has already run: the
   order is topological, and where paths meet, gradients are summed first (the seeds' ``x * x`` gives ``2x``).
2. Run the node's backward and put each input gradient into the buffer of the node it flows to, queueing that
   node if it was not waiting yet. Nodes no gradient reaches are never visited (an explicit queue: a chain of a
   million ops is fine).
3. After a node ran, release what it saved (unless ``retain_graph``): a second backward then raises.

Grad mode during the walk is ``create_graph``: with it on, the backward formulas (tapegrad ops) record a new
graph, which is how higher derivatives come for free. Without it (the common case) no graph of the backward is
needed, and ops whose formula also runs on NumPy arrays (``array_backward``) get arrays: the gradients flow as
plain ndarrays and are wrapped into a Tensor only where a user can see them (hooks, ``.grad``, results).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from heapq import heappop, heappush
from operator import attrgetter
from sys import getrefcount as _getrefcount

import numpy as np

from .._npcompat import QUIET, quiet_enter, quiet_exit
from . import function as _f
from .function import _FREED, FREED_MSG, OWN_GRAD, AccumulateGrad, GradientEdge
from .grad_mode import _state

__all__ = ["backward", "grad", "run_backward", "run_node", "current_task"]

_seq_key = attrgetter("sequence_nr")
_observers = []   # callables(node, grads_out, grads_in): autograd.trace and anomaly mode plug in here
_sum_to_shape = None
_task_ids = __import__("itertools").count(1).__next__   # (the walks of a thread: _state.tasks, innermost last)


class _Task:
    """One running backward walk, as hooks may ask about it (torch's "graph task"): a unique ``id``, and which
    nodes it will run (``will_execute``, worked out on the first question: nodes reachable from its roots that,
    with ``inputs``, lead to one of them)."""

    __slots__ = ("id", "roots", "needed", "_reach")

    def __init__(self, roots, needed):
        self.id, self.roots, self.needed, self._reach = _task_ids(), roots, needed, None

    def will_execute(self, node):
        if self.needed is not None:
            return node in self.needed
        if self._reach is None:
            seen, stack = set(), list(self.roots)
            while stack:
                n = stack.pop()
                if n is not None and n not in seen:
                    seen.add(n)
                    stack.extend(n._next_fns)
            self._reach = seen
        return node in self._reach


def current_task():
    """The innermost backward walk this thread is running (a ``_Task``), or None outside backward."""
    tasks = _state.tasks
    return tasks[-1] if tasks else None


def _reduce_grad(g, shape, node, index):
    """Sum a broadcast gradient (Tensor or array) back to its input's shape, or raise if it can't be."""
    global _sum_to_shape
    if _sum_to_shape is None:
        from ..ops._util import sum_to_shape as _sum_to_shape
    gs = g.shape
    n = len(shape)
    if len(gs) >= n and all(s == 1 or s == t for s, t in zip(shape, gs[len(gs) - n:])):
        return _sum_to_shape(g, shape)
    raise RuntimeError(f"Function {node.name()} returned an invalid gradient at index {index} - got "
                       f"[{', '.join(map(str, gs))}] but expected shape compatible with "
                       f"[{', '.join(map(str, shape))}]")


def run_node(node, grads):
    """Call one node's backward on its output gradients; return the gradients of its inputs (checked)."""
    if node._prehooks:
        for hook in tuple(node._prehooks):      # (as registered when the node began: a hook may remove another)
            r = hook(tuple(grads))
            if r is not None:
                grads = list(r)
    if node.__class__ is AccumulateGrad:
        return []
    n_none = 0
    if len(grads) > 1 or grads[0] is None:
        for g in grads:
            if g is None:
                n_none += 1
    if n_none:
        if n_none == len(grads):
            return [None] * len(node._next_fns)
        if node._materialize:       # (zeros for the tensor outputs; a non-tensor output's stays None, as torch's)
            for i, g in enumerate(grads):
                if g is None and node._out_meta[i] is not None:
                    shape, dtype = node._out_meta[i]
                    grads[i] = _f._Tensor._make(np.zeros(shape, dtype))
    fcls = node._forward_cls
    if node._saved is _f._FREED and fcls._array_forward:
        raise RuntimeError(FREED_MSG)
    out = fcls.backward(node, *grads)
    if out.__class__ is not tuple:
        out = (out,)
    metas = node._input_meta
    if len(out) != len(metas):
        out = _one_per_input(node, out, len(metas))
    res = list(out)
    i = 0
    for g in out:       # each gradient back to its input's shape and dtype
        if g is not None:
            meta = metas[i]
            if not meta:         # (None: no gradient needed; False: not a tensor)
                res[i] = None
            else:
                try:
                    arr = g._array
                except AttributeError:
                    raise TypeError(f"function {node.name()} returned a gradient of type {type(g).__name__} at "
                                    f"index {i}; expected a Tensor or None") from None
                if arr.shape != meta[0]:
                    g = res[i] = _reduce_grad(g, meta[0], node, i)
                if g._array.dtype != meta[1]:
                    if g._array.dtype.kind == "c" and meta[1].kind != "c":
                        g = g.real      # a real input of a complex op: the real part (torch's convention)
                    res[i] = g.to(_f._Tensor._dtype_of(meta[1]))
        i += 1
    if node._hooks:
        for hook in tuple(node._hooks):
            r = hook(tuple(res), tuple(grads))
            if r is not None:
                res = list(r)
    return res


def _one_per_input(node, out, n_in):
    """A backward's results cut to one per input (trailing Nones are allowed), or torch's error."""
    if len(out) > n_in and all(g is None for g in out[n_in:]):
        return out[:n_in]
    raise RuntimeError(f"function {node.name()} returned an incorrect number of gradients "
                       f"(expected {n_in}, got {len(out)})")


def _run_arrays(node, grads):
    """Call an ``array_backward`` op's formula on ndarrays (no hooks): its results, one per input, not yet checked
    against the inputs' shapes and dtypes (the walk checks each one as it routes it, see ``_conformed``)."""
    if len(grads) > 1 and node._materialize:
        for i, g in enumerate(grads):
            if g is None and node._out_meta[i] is not None:
                shape, dtype = node._out_meta[i]
                grads[i] = np.zeros(shape, dtype)
    if node._saved is _FREED:
        raise RuntimeError(FREED_MSG)
    g = grads[0]
    # A lone gradient that only this walk holds (not a view, no other reference: the list, g and the call count)
    # is the formula's to reuse: ReluBackward masks it in place rather than making a new array.
    node._arrays = OWN_GRAD if (len(grads) == 1 and g is not None and g.base is None and _getrefcount(g) == 3
                                and g.flags.writeable) else True
    g = None
    try:
        out = node._forward_cls.backward(node, *grads)
    finally:
        node._arrays = False
    if out.__class__ is not tuple:
        out = (out,)
    return out if len(out) == len(node._next_fns) else _one_per_input(node, out, len(node._next_fns))


def _conformed(g, node, meta):
    """A gradient of the array walk as an ndarray of its input's shape (summed if broadcast) and dtype (``meta``,
    one of ``node._input_meta``)."""
    if g.__class__ is not np.ndarray:
        g = g._array if g.__class__ is _f._Tensor else np.asarray(g)
    shape, dtype = meta
    if g.shape != shape:      # (the input's position, for the error: its metadata tuple is its own object)
        g = _reduce_grad(g, shape, node, next(k for k, m in enumerate(node._input_meta) if m is meta))
    if g.dtype != dtype:
        if g.dtype.kind == "c" and dtype.kind != "c":
            g = g.real          # a real input of a complex op: the real part (torch's convention)
        g = g.astype(dtype)
    return g


def _leading_to(captures, starts):
    """The nodes from which a path leads to a captured node (``autograd.grad``'s inputs): only those need run."""
    seen, order = set(), []
    stack = list(starts)
    while stack:            # every node reachable from the roots
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        order.append(node)
        for nxt in node._next_fns:
            if nxt is not None and nxt not in seen:
                stack.append(nxt)
    order.sort(key=_seq_key)      # inputs first: a node is needed if it is captured or leads to a needed node
    needed = set()
    for node in order:
        if node in captures or any(nxt in needed for nxt in node._next_fns if nxt is not None):
            needed.add(node)
    return needed


def _root_edge(t):
    if t.__class__ is GradientEdge:
        return (t.node, t.output_nr)
    fn = t.grad_fn
    return (fn, t._output_nr) if fn is not None else (t._accumulator(), 0)


def run_backward(roots, root_grads, retain_graph=False, create_graph=False, inputs=None, accumulate=True):
    """Back-propagate ``root_grads`` from ``roots``. With ``inputs``, return their gradients (captured at the
    node that receives them) and, when ``accumulate``, add into ``.grad`` of those inputs only."""
    edges = [_root_edge(t) for t in roots]

    # with inputs: where to capture, and which nodes lead there (the rest need not run)
    captures, needed = None, None
    if inputs is not None:
        captures = {}
        for k, t in enumerate(inputs):
            node, nr = _root_edge(t)
            captures.setdefault(node, []).append((nr, k))
        needed = _leading_to(captures, [e[0] for e in edges])
    results = [None] * (len(inputs) if inputs is not None else 0)

    # seed the buffers with the root gradients (as arrays, unless the backward itself is recorded, or anomaly
    # mode / autograd.trace watch every node's Tensors); a node's creation number orders the queue (each is unique)
    arrays = not create_graph and not _observers
    if arrays:
        root_grads = [g._array for g in root_grads]
    else:
        for obs in _observers:      # (an observer may ask to know when a walk begins: the profiler times from it)
            start = getattr(obs, "walk_start", None)
            if start is not None:
                start()
    buffers, ready = {}, []
    for (node, nr), g in zip(edges, root_grads):
        buf = buffers.get(node)
        if buf is None:
            buf = buffers[node] = [None] * len(node._out_meta)
            heappush(ready, (-node.sequence_nr, node))
        buf[nr] = g if buf[nr] is None else buf[nr] + g

    # the walk
    walk = None
    plain = arrays and captures is None      # the common case: no graph of the backward, nothing captured
    prev = _state.enabled
    _state.enabled = create_graph
    token = quiet_enter(QUIET)   # NumPy's inf/nan warnings off for the whole walk (torch is silent)
    tasks = _state.tasks
    _state.tasks = (*tasks, _Task([e[0] for e in edges], needed))
    try:
        pop = buffers.pop
        while ready:
            node = heappop(ready)[1]
            buf = pop(node)
            try:
                if plain and not node._hooked:        # arrays in, arrays out, no hooks to call
                    if node.__class__ is AccumulateGrad:
                        if accumulate and buf[0] is not None:
                            g = buf[0]
                            buf = None      # (so that an unshared gradient array is kept, not copied)
                            node.accumulate_array(g)
                            g = None
                        continue
                    grads_in = _run_arrays(node, buf) if node._array_backward else _run_wrapped(node, buf)
                else:
                    if walk is None:
                        walk = _Walk(arrays, create_graph, captures, needed, results, inputs, accumulate)
                    grads_in = _visit(node, buf, walk)
                    if grads_in is None:
                        continue
                if not retain_graph:
                    node._release()
                for nxt, nr, g, meta in zip(node._next_fns, node._next_nrs, grads_in, node._input_meta):
                    if nxt is None or g is None:
                        continue
                    if arrays:           # each gradient as an array of its input's shape and dtype (run_node
                        if g.__class__ is not np.ndarray or (g.shape, g.dtype) != meta:    # checks a Tensor
                            g = _conformed(g, node, meta)                                   # walk's)
                    b = buffers.get(nxt)
                    if b is None:          # a gradient reaches nxt: it is ready, and waits for its turn
                        b = buffers[nxt] = [None] * len(nxt._out_meta)
                        b[nr] = g
                        heappush(ready, (-nxt.sequence_nr, nxt))
                    elif b[nr] is None:
                        b[nr] = g
                    else:
                        b[nr] = b[nr] + g     # paths meet: sum (recorded when create_graph)
            except (RuntimeError, ValueError, TypeError) as e:   # say which node, and where it was created
                from .anomaly import annotate
                annotate(e, node)
                raise
            grads_in = g = b = buf = None    # drop our references: AccumulateGrad may then keep a gradient uncopied
    finally:
        _state.tasks = tasks
        _state.enabled = prev
        quiet_exit(token)
    return results


class _Walk:
    """The settings of one backward walk that the general path of a node reads."""

    __slots__ = ("arrays", "create_graph", "captures", "needed", "results", "inputs", "accumulate")

    def __init__(self, arrays, create_graph, captures, needed, results, inputs, accumulate):
        self.arrays, self.create_graph, self.captures, self.needed = arrays, create_graph, captures, needed
        self.results, self.inputs, self.accumulate = results, inputs, accumulate


def _run_wrapped(node, buf):
    """An op whose backward needs Tensors, in the array walk: wrap the gradients, unwrap its results."""
    T = _f._Tensor
    return [None if g is None else g._array for g in run_node(node, [None if g is None else T._make(g) for g in buf])]


def _visit(node, buf, w):
    """One node of the walk on the general path: Tensor gradients (hooks, retain_grad, captures of
    ``autograd.grad``, create_graph, observers). Returns the input gradients, or None when nothing flows on."""
    if w.needed is not None and node not in w.needed:
        return None
    captures = w.captures
    arrays = w.arrays and not (node._hooked or (captures is not None and node in captures))
    wrapped = w.arrays and not arrays
    if wrapped:               # a user sees these gradients: as Tensors
        wrapped_buf = [None if g is None else _f._Tensor._make(g) for g in buf]
        buf[:] = [None] * len(buf)    # (the walk's list lets go of the arrays: AccumulateGrad may keep one uncopied)
        buf = wrapped_buf
        wrapped_buf = None
    if node._tensor_prehooks:         # (each list as it was when the node began: a hook may remove another)
        for nr, hooks in tuple(node._tensor_prehooks.items()):
            for hook in tuple(hooks):       # (an output no gradient reached gets None, as torch calls it)
                r = hook(buf[nr])
                if r is not None:
                    buf[nr] = r
        r = None
    if node._retained:
        for nr, ref in node._retained.items():
            t = ref()
            if t is not None and buf[nr] is not None:
                g = buf[nr]
                t._grad = g._detached_copy() if t._grad is None else t._grad + g
    if captures is not None and node in captures and not w.accumulate:
        # autograd.grad: the gradient is captured here (after the tensor hooks); a node that leads to no other
        # input does not run (its own pre- and post-hooks neither, as torch's engine)
        for nr, k in captures[node]:
            if buf[nr] is not None:
                w.results[k] = buf[nr]
    if node.__class__ is AccumulateGrad:
        if w.accumulate and buf[0] is not None:
            if node._prehooks or node._hooks:         # (the node's own hooks see Tensors, as torch's)
                if arrays:
                    buf = [_f._Tensor._make(buf[0])]
                    arrays = False
                for hook in tuple(node._prehooks or ()):
                    r = hook(tuple(buf))
                    if r is not None:
                        buf = list(r)
                r = None
            g = buf[0]
            buf = None           # (only g holds the gradient now: accumulate may keep it as .grad, as torch steals
            if arrays:           # it, so that a post-hook's grad_outputs[0] is the leaf's .grad)
                node.accumulate_array(g)
            else:
                node.accumulate(g, w.create_graph)
            if node._post_hooks:
                _post_accumulate(node)
            for hook in tuple(node._hooks or ()):
                hook((), (g,))
            for obs in _observers:
                obs(node, [g], None)
        return None
    if captures is not None and not w.accumulate and \
            not any(nxt in w.needed for nxt in node._next_fns if nxt is not None):
        return None
    if arrays:                # (a node of autograd.grad's walk that no user sees)
        return _run_arrays(node, buf) if node._array_backward else _run_wrapped(node, buf)
    grads_in = run_node(node, buf)
    for obs in _observers:
        obs(node, buf, grads_in)
    if wrapped:
        grads_in = [None if g is None else g._array for g in grads_in]
    return grads_in


def _post_accumulate(node):
    """Call a leaf's post-accumulate-grad hooks, ``hook(leaf)``, once its ``.grad`` was updated."""
    var = node._variable()
    if var is None:
        return
    for hook in tuple(node._post_hooks):
        r = hook(var)
        if r is not None:     # (torch checks the type first: a non-Tensor is a TypeError)
            if not isinstance(r, _f._Tensor):
                raise TypeError(f"expected Variable, but hook returned '{type(r).__name__}'")
            raise RuntimeError("Tensor post accumulate grad hooks should return None.")


def _edge_grad(i, edge, g):
    """The gradient seeding a GradientEdge given as an output: ``g``, or ones for a one-element output."""
    T = _f._Tensor
    meta = edge.node._out_meta[edge.output_nr]
    if g is None:
        if meta is None or int(np.prod(meta[0])) != 1:
            raise RuntimeError("grad can be implicitly created only for scalar outputs")
        return T._make(np.ones(meta[0], meta[1]))
    if not isinstance(g, T):
        g = T._make(np.asarray(g, meta[1] if meta is not None else None))
    if meta is not None:
        from ..tensor import Size
        _check_grad_output(i, g, Size(meta[0]), T._dtype_of(meta[1]))
    return g


def _check_grad_output(i, g, shape, dtype):
    """torch's checks of a given grad_output against its output: the same shape, and complex only with complex."""
    if g.shape != shape:
        from ..tensor import Size
        raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of {Size(g.shape)} and "
                           f"output[{i}] has a shape of {Size(shape)}.")
    if g.dtype.is_complex != dtype.is_complex:
        raise RuntimeError(f"For complex Tensors, both grad_output and output are required to have the same dtype. "
                           f"Mismatch in dtype: grad_output[{i}] has a dtype of {g.dtype} and output[{i}] has a "
                           f"dtype of {dtype}.")


def _make_grads(outputs, grad_outputs, is_grads_batched=False):
    T = _f._Tensor
    res = []
    for i, (out, g) in enumerate(zip(outputs, grad_outputs)):
        if out.__class__ is GradientEdge:
            res.append(_edge_grad(i, out, g))
            continue
        # (a view made under no_grad requires grad, yet has no node to start from: its graph leads nowhere)
        if not out._rg or (out.grad_fn is None and out._accumulator() is None):
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")
        if g is None:
            if out._array.size != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            arr = out._array
            if arr.dtype.kind != "f":
                raise RuntimeError(f"grad can be implicitly created only for real scalar outputs but got "
                                   f"{out.dtype}")
            ones = np.empty(arr.shape, arr.dtype)
            ones.fill(1)          # (np.ones is a Python-level wrapper: twice the time for this one element)
            g = T._make(ones)
        else:
            if not isinstance(g, T):
                g = T._make(np.asarray(g, out.dtype.np))
            if g._array.shape != out._array.shape or g.dtype.is_complex != out.dtype.is_complex:
                _check_grad_output(i, g, out.shape, out.dtype)
            if g.dtype is not out.dtype:
                g = g.to(out.dtype)
        res.append(g)
    return res


def _as_list(x):
    if x is None:
        return None
    if isinstance(x, _f._Tensor) or x.__class__ is GradientEdge:
        return [x]
    return list(x)


def _inputs_list(inputs, fn):
    """``inputs`` as a list: a tensor or GradientEdge, a sequence of them, or a dict of them (its values, in
    order: ``dict(model.named_parameters())``), as torch takes them; other mappings are refused in torch's words."""
    if type(inputs) is dict:
        return list(inputs.values())
    if isinstance(inputs, (_f._Tensor, list, tuple)) or inputs.__class__ is GradientEdge:
        return _as_list(inputs)
    if isinstance(inputs, Mapping):
        raise TypeError(f"`inputs` argument to `{fn}()` must be a dict, not {type(inputs).__name__}. "
                        "Other Mapping types are not supported.")
    return _as_list(inputs)


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, grad_variables=None, inputs=None):
    """Accumulate d(tensors)/d(leaves) into the leaves' ``.grad`` (``Tensor.backward`` calls this).
    ``grad_variables``: torch's deprecated name of ``grad_tensors``.

    >>> x = tapegrad.tensor([1., 2., 3.], requires_grad=True)
    >>> (x ** 2).sum().backward(); x.grad
    tensor([2., 4., 6.])
    """
    if grad_variables is not None:
        warnings.warn("`grad_variables` is deprecated. Use `grad_tensors` instead.", FutureWarning, stacklevel=2)
        if grad_tensors is not None:
            raise RuntimeError("`grad_tensors` and `grad_variables` (deprecated) arguments both passed to "
                               "`backward()`. Please only use `grad_tensors`.")
        grad_tensors = grad_variables
    if inputs is not None:
        inputs = _inputs_list(inputs, "backward")
    tensors = _as_list(tensors)
    grads = _as_list(grad_tensors) or [None] * len(tensors)
    if len(grads) != len(tensors):
        raise RuntimeError(f"got {len(grads)} gradients for {len(tensors)} tensors")
    if retain_graph is None:
        retain_graph = create_graph
    if inputs is not None:
        if len(inputs) == 0:
            raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
        for t in inputs:
            if t.__class__ is not GradientEdge and not t._rg:
                raise RuntimeError("One of the differentiated Tensors does not require grad")
        for t in inputs:         # a non-leaf input gets its .grad as torch gives it: it now retains its gradient
            if t.__class__ is not GradientEdge and t.grad_fn is not None:
                t.retain_grad()
    if create_graph:
        _warn_create_graph()
    run_backward(tensors, _make_grads(tensors, grads), retain_graph, create_graph, inputs, accumulate=True)


_create_graph_warned = [False]


def _warn_create_graph():
    """torch's warning for ``backward(create_graph=True)``: once a process, or every time under
    ``set_warn_always(True)`` (``autograd.grad`` does not warn)."""
    from .._api_state import is_warn_always_enabled
    if _create_graph_warned[0] and not is_warn_always_enabled():
        return
    _create_graph_warned[0] = True
    warnings.warn("Using backward() with create_graph=True will create a reference cycle between the parameter and "
                  "its gradient which can cause a memory leak. We recommend using autograd.grad when creating the "
                  "graph to avoid this. If you have to use this function, make sure to reset the .grad fields of "
                  "your parameters to None after use to break the cycle and avoid the leak.", UserWarning,
                  stacklevel=3)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, only_inputs=True,
         allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """Return d(outputs)/d(inputs) without touching any ``.grad``.

    >>> x = tapegrad.tensor(3., requires_grad=True)
    >>> tapegrad.autograd.grad(x ** 2, x)
    (tensor(6.),)

    ``inputs`` may be a dict (``dict(model.named_parameters())``): the gradients come back as a dict with its keys.
    """
    if type(inputs) is dict:
        res = grad(outputs, list(inputs.values()), grad_outputs, retain_graph, create_graph, only_inputs,
                   allow_unused, is_grads_batched, materialize_grads)
        return dict(zip(inputs.keys(), res))
    inputs = _inputs_list(inputs, "grad")
    if not inputs:
        raise RuntimeError("`inputs` argument to `grad()` cannot be empty.")
    if not only_inputs:
        warnings.warn("only_inputs argument is deprecated and is ignored now (defaults to True). To accumulate "
                      "gradient for other parts of the graph, please use torch.autograd.backward.", FutureWarning,
                      stacklevel=2)
    outputs = _as_list(outputs)
    grads = _as_list(grad_outputs) or [None] * len(outputs)
    if materialize_grads and allow_unused is False:
        raise ValueError("Expected allow_unused to be True or not passed when materialize_grads=True, but got: "
                         "allow_unused=False.")
    if allow_unused is None:
        allow_unused = materialize_grads
    if retain_graph is None:
        retain_graph = create_graph
    for t in inputs:
        if t.__class__ is not GradientEdge and not t._rg:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    if is_grads_batched:
        for i, (out, g) in enumerate(zip(outputs, grads)):
            if g is not None and out.__class__ is not GradientEdge and tuple(g.shape[1:]) != tuple(out.shape):
                from ..tensor import Size      # (torch's message shows the grad_output's sizes from the third on)
                raise RuntimeError(
                    "If `is_grads_batched=True`, we interpret the first dimension of each grad_output as the batch "
                    "dimension. The sizes of the remaining dimensions are expected to match the shape of "
                    f"corresponding output, but a mismatch was detected: grad_output[{i}] has a shape of "
                    f"{Size(g.shape[2:])} and output[{i}] has a shape of {Size(out.shape)}. If you only want some "
                    "tensors in `grad_output` to be considered batched, consider using vmap.")
        rows = [grad(outputs, inputs, [g[j] for g in grads], True, create_graph, allow_unused=True,
                     materialize_grads=True) for j in range(grads[0].shape[0])]
        from ..ops.shape import stack
        return tuple(stack([r[k] for r in rows]) for k in range(len(inputs))) if rows else tuple(
            _f._Tensor._make(np.zeros((0,) + t.shape, t.dtype.np)) for t in inputs)
    res = run_backward(outputs, _make_grads(outputs, grads), retain_graph, create_graph, inputs, accumulate=False)
    for k, g in enumerate(res):
        if g is None:
            if materialize_grads:
                if inputs[k].__class__ is GradientEdge:
                    raise RuntimeError("materialize_grads cannot be used when the given input is a GradientEdge")
                shape, dtype = _shape_dtype(inputs[k])
                res[k] = _f._Tensor._make(np.zeros(shape, dtype))
                if create_graph:        # (torch's zeros_like(input, requires_grad=create_graph): a leaf)
                    res[k].requires_grad_()
            elif not allow_unused:
                raise RuntimeError(f"The differentiated Tensor at index {k} appears to not have been used in the "
                                   "graph. Set allow_unused=True if this is the desired behavior.")
        elif not create_graph and g._rg:
            res[k] = g.detach()
        t = inputs[k]
        if t.__class__ is not GradientEdge and t._array.__class__ is not np.ndarray and res[k] is not None:
            from .._meta import as_meta_tensor      # (a meta input's gradient is meta, whatever computed it)
            res[k] = as_meta_tensor(res[k])
    return tuple(res)


def _shape_dtype(t):
    """The shape and NumPy dtype of a tensor, or of the gradient a GradientEdge receives."""
    if t.__class__ is GradientEdge:
        if t.node.__class__ is AccumulateGrad:
            v = t.node.variable
            return v._array.shape, v._array.dtype
        return t.node._out_meta[t.output_nr]
    return t._array.shape, t._array.dtype
