"""``grad_fn._saved_<name>`` and ``grad_fn._raw_saved_<name>``: what a built-in op's node keeps for backward, under
torch's argument names (the glass box torch opens in its "saved tensors" notes).

A node of a built-in op keeps its saved tensors in ``_saved``: an input as the Tensor itself, an output as a
``SavedTensor``. Their names are torch's: ``result`` for an output (``result0``, ``result1``... where the op has
several), and for an input the name torch's signature gives its position (``self``, ``other`` by default;
``mat2`` for ``mm``...), and a few numbers (``exponent`` of ``pow``). An input's position is found by the edge
it feeds (the node's ``next_functions``), else by its place among the saved slots. ``_saved_x`` unpacks as
``saved_tensors`` does (a saved input is the input itself, ``x is y.grad_fn._saved_self`` as in torch; an output
is rebuilt); ``_raw_saved_x`` is a handle whose ``register_hooks(pack, unpack)`` puts that one tensor through
saved-tensor hooks, as torch's ``SavedTensor``.
A name the node does not keep, or a custom Function's node, is an AttributeError, as in torch.
"""

from __future__ import annotations

from .function import _FREED, FREED_MSG, PackedSaved, Primitive
from .function import SavedTensor as _KeptOutput

# torch's argument names by position where they are not (self, other, ...)
_ARG_NAMES = {
    "MmBackward0": ("self", "mat2"), "BmmBackward0": ("self", "mat2"), "MvBackward0": ("self", "vec"),
    "AddmmBackward0": ("self", "mat1", "mat2"), "AddbmmBackward0": ("self", "batch1", "batch2"),
    "BaddbmmBackward0": ("self", "batch1", "batch2"), "AddmvBackward0": ("self", "mat", "vec"),
    "DotBackward0": ("self", "tensor"), "VdotBackward0": ("self", "other"),
    "ConvolutionBackward0": ("input", "weight", "bias"), "PowBackward1": ("self", "exponent"),
    "PowBackward2": ("self", "exponent"), "WhereBackward0": ("condition", "self", "other"),
    "LerpBackward1": ("self", "end", "weight"), "AddcmulBackward0": ("self", "tensor1", "tensor2"),
    "AddcdivBackward0": ("self", "tensor1", "tensor2"), "MaskedFillBackward0": ("self", "mask"),
    "EmbeddingBackward0": ("weight", "indices"), "NllLossBackward0": ("self", "target", "weight"),
    "NativeLayerNormBackward0": ("input", "weight", "bias"), "GatherBackward0": ("self", "index"),
    "IndexSelectBackward0": ("self", "index"), "CumsumBackward0": ("self",), "PreluKernelBackward0": ("self", "weight"),
    **{f"{k}Backward0": ("self", "target")
       for k in ("MseLoss", "L1Loss", "SmoothL1Loss", "HuberLoss", "SoftMarginLoss")},
    "BinaryCrossEntropyBackward0": ("self", "target", "weight"),
    "BinaryCrossEntropyWithLogitsBackward0": ("self", "target", "weight", "pos_weight"),
}
# numbers torch keeps under these names, read from the node's own attribute of the same name
_NUMBERS = ("exponent", "alpha", "negative_slope")


def _edge(s):
    """The (node, output number) a saved input feeds backward into, or None (it needs no gradient)."""
    if s.__class__ is PackedSaved:
        if s._fn is not None:
            return s._fn, -1 - s._output_nr
        return (s._acc, 0) if s._acc is not None else None
    if s.grad_fn is not None:
        return s.grad_fn, s._output_nr
    return (s._accumulator(), 0) if s._rg else None


def _names(node):
    """[(torch's name, slot index)] of what the node keeps."""
    saved = node._saved
    if saved is _FREED:
        raise RuntimeError(FREED_MSG)
    if not saved:
        return []
    args = _ARG_NAMES.get(type(node).__name__, ("self", "other"))
    edges = list(zip(node._next_fns, node._next_nrs))
    n_out = len(node._out_meta)
    res, results = [], 0
    for i, s in enumerate(saved):
        output = s.__class__ is _KeptOutput or (s.__class__ is PackedSaved and s._output_nr >= 0)
        if output:
            nr = s._output_nr
            res.append(("result" if n_out == 1 else f"result{nr}", i))
            results += 1
            continue
        if s is None:           # (an operand not kept, as nobody needed it: torch's attribute is None)
            if i - results < len(args):
                res.append((args[i - results], i))
            continue
        if not (hasattr(s, "_array") or s.__class__ is PackedSaved):
            continue            # (a number)
        edge = _edge(s)
        k = next((j for j, e in enumerate(edges) if edge is not None and e[0] is edge[0] and e[1] == edge[1]), None)
        if k is None:
            k = i - results      # (a saved input that needs no gradient: the slots follow the positions)
        if k < len(args):
            res.append((args[k], i))
    return res


class SavedTensor:
    """``grad_fn._raw_saved_<name>``: one saved tensor's handle, as torch's ``SavedTensor``."""

    __slots__ = ("_node", "_slot")

    def __init__(self, node, slot):
        self._node, self._slot = node, slot

    def register_hooks(self, pack_hook, unpack_hook):
        """Put this saved tensor through ``pack_hook`` now and ``unpack_hook`` at each access (as
        ``saved_tensors_hooks`` does for every tensor saved inside it)."""
        node, i = self._node, self._slot
        if node._saved is _FREED:
            raise RuntimeError(FREED_MSG)
        s = node._saved[i]
        if s.__class__ is PackedSaved:
            raise RuntimeError("SavedTensor hooks have already been set on this SavedTensor. Please remove existing "
                               "hooks before setting new ones.")
        t = node.saved_tensors[i]
        packed = PackedSaved(t, pack_hook, unpack_hook, s._output_nr if s.__class__ is _KeptOutput else -1)
        node._saved = node._saved[:i] + (packed,) + node._saved[i + 1:]
        node._saved_versions = node._saved_versions[:i] + (None,) + node._saved_versions[i + 1:]



def saved_attribute(node, name):
    """``node._saved_<x>`` / ``node._raw_saved_<x>`` (see the module's text)."""
    raw = name.startswith("_raw_saved_")
    key = name[len("_raw_saved_"):] if raw else name[len("_saved_"):]
    cls = node._forward_cls
    if cls is not None and isinstance(cls, type) and issubclass(cls, Primitive):
        if not raw and key in _NUMBERS and key in getattr(node, "__dict__", ()):
            return node.__dict__[key]
        for n, slot in _names(node):
            if n == key:
                if node._saved[slot] is None:
                    return None
                if raw:
                    return SavedTensor(node, slot)
                t = node.saved_tensors[slot]
                # (linear's nodes keep the weight as given; torch's mm/addmm keep weight.t() as mat2)
                return t.t() if n == "mat2" and cls.__name__ in ("_MmT", "_Addmm") else t
    raise AttributeError(f"'{type(node).__name__}' object has no attribute '{name}'")
