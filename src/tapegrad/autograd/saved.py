"""What a graph node keeps for backward, and the errors about it.

A built-in op's forward names what its backward needs (``ctx.save_inputs``, ``save_result``...); when the op is
recorded, ``_keep_saved_plain`` (called by ``function._link_outputs``) turns that into ``ctx._saved``: an input as
the Tensor itself (its version checked on use), an output as a ``SavedTensor`` (its array and version, rebuilt on
unpack: no reference cycle through the output), or, while saved-tensor hooks are set, a ``PackedSaved`` (what the
pack hook returned). The node reads them back in ``BackwardNode.saved_tensors`` (``node.py``). See
docs/design.md, "What backward keeps".
"""

from __future__ import annotations

from .grad_mode import INFERENCE_SAVED, INFERENCE_VERSION, _state

_Tensor = None  # tapegrad.tensor.Tensor, bound by tensor.py through function.bind_tensor (no import: a cycle)
_unpack_hook = None  # autograd.forward_ad sets it while a dual level is active (see SavedTensor.unpack)

FREED_MSG = (
    "Trying to backward through the graph a second time (or directly access saved tensors after they have "
    "already been freed). Saved intermediate values of the graph are freed when you call .backward() or "
    "autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or if "
    "you need to access saved tensors after calling backward.")

_FREED = ("freed",)   # marks a node whose saved tensors were released by a backward without retain_graph


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
    elif t._view is not None:
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


class _Result:
    """Placeholder for "the output" in a Primitive's save list (the output does not exist during forward)."""


_RESULT = _Result()
_RESULT_ONLY = (_RESULT,)
_NO_VERSION = (None,)     # a saved output's version lives in its SavedTensor


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


def _position(t, outputs):
    for j, o in enumerate(outputs):
        if t is o:
            return j
    return -1
