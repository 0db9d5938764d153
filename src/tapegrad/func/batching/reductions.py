"""Batching rules of the ops that take a dim (reductions, scans, softmax, sorting): the logical dims are shifted by
one past the batch dim; "all dims" (None) becomes every logical dim."""

from __future__ import annotations

from . import ldim, only_first_batched, phys_dim, phys_dims, register, register_names

# the position of the dim argument among the op's arguments (after x), and whether it may be a tuple/None
_DIMS = {  # class names -> (position, "dims" for an int/tuple/None, "dim" for one int)
    "tapegrad.ops.reduce.sums": {"Sum SumDim Mean MeanDim Nansum Logsumexp Std StdMean Var VarMean": (1, "dims"),
                                 "ProdDim": (1, "dim")},
    "tapegrad.ops.reduce.extrema": {"Amax Amin MaxAll MinAll": (1, "dims"),
                                    "Aminmax MaxDim MinDim MedianDim NanmedianDim Mode": (1, "dim")},
    "tapegrad.ops.linalg.norms": {"Amax Amin": (1, "dims"), "LinalgVectorNorm": (2, "dims")},
    "tapegrad.ops.nn_ops._common": {"_Norm": (2, "dims")},
    "tapegrad.ops.reduce.scans": {"Cummax Cummin Cumprod Cumsum": (1, "dim")},
    "tapegrad.ops.nn_ops.linear": {"Softmax LogSoftmax Glu": (1, "dim")},
    "tapegrad.ops.index.sorting": {"Sort SortStable": (1, "dim"), "Kthvalue": (2, "dim"), "Topk": (2, "dim")},
    "tapegrad.ops.shape.rearrange": {"Flip": (1, "dims"), "_IndexSelect": (1, "dim")},
    "tapegrad.ops.fft": {"FftC2C FftC2R FftR2C": (1, "dims")},
    "tapegrad.ops.index.gathers": {"IndexSelect": (1, "dim")},
}


def _dim_rule(pos, kind):
    def rule(level, cls, args, kwargs, phys):
        if not only_first_batched(phys):
            return NotImplemented
        x = args[0]
        n = ldim(x)
        if n == 0:
            return NotImplemented
        args = list(args)
        d = args[pos] if pos < len(args) else None
        if kind == "dim" and d is None:
            return NotImplemented
        if kind == "dims" and d is not None and not isinstance(d, int):
            d = tuple(d)
            if len(d) == 0:
                d = None
        pd = phys_dims(d, n) if kind == "dims" else phys_dim(d, n)
        if pd is None:
            return NotImplemented
        if pos < len(args):
            args[pos] = pd
        else:
            args.extend([None] * (pos - len(args)) + [pd])
        return cls.apply(phys[0], *args[1:], **kwargs)
    return rule


for _mod, _groups in _DIMS.items():
    for _names, (_pos, _kind) in _groups.items():
        register_names({_mod: _names}, _dim_rule(_pos, _kind))


def _all_to_one_dim(dim_cls):
    """An "over all elements" reduction: the sample's elements flattened into one dim, reduced by ``dim_cls``."""
    def rule(level, cls, args, kwargs, phys):
        if not only_first_batched(phys):
            return NotImplemented
        rest = list(args[1:])
        if rest and rest[0] is not None or (len(rest) > 1 and rest[1]):    # (a dim, or keepdim: not this case)
            return NotImplemented
        p = phys[0]
        flat = p.reshape((p.shape[0], -1))
        out = dim_cls.apply(flat, 1, False, *rest[2:], **kwargs)
        return out[0] if isinstance(out, tuple) else out
    return rule


def _register_all():
    import importlib
    sums = importlib.import_module("tapegrad.ops.reduce.sums")
    ext = importlib.import_module("tapegrad.ops.reduce.extrema")
    register(sums.Prod)(_all_to_one_dim(sums.ProdDim))
    for a, d in (("MedianAll", "MedianDim"), ("NanmedianAll", "NanmedianDim")):
        if hasattr(ext, a) and hasattr(ext, d):
            register(getattr(ext, a))(_all_to_one_dim(getattr(ext, d)))


_register_all()


def _with_index(pos_dim, pos_index):
    """Ops taking a dim and an index tensor of the input's rank (gather, take_along_dim): the index batched too
    (expanded along the batch when it is not)."""
    def rule(level, cls, args, kwargs, phys):
        if any(p is not None for i, p in enumerate(phys) if i not in (0, pos_index)):
            return NotImplemented
        x, n = args[0], ldim(args[0])
        d = phys_dim(args[pos_dim], n)
        idx = args[pos_index]
        if d is None or not hasattr(idx, "_array") or ldim(idx) != n:
            return NotImplemented
        args = list(args)
        args[0] = phys[0] if phys[0] is not None else level.broadcast(x)
        args[pos_index] = phys[pos_index] if phys[pos_index] is not None else level.broadcast(idx)
        args[pos_dim] = d
        return cls.apply(*args, **kwargs)
    return rule


register_names({"tapegrad.ops.index.gathers": "Gather"}, _with_index(1, 2))
register_names({"tapegrad.ops.reduce._common": "_TakeAlong"}, _with_index(2, 1))
