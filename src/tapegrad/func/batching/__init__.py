"""Batching rules for ``vmap``, one module per op family.

A rule is ``rule(level, cls, args, kwargs, phys)``: ``args`` are the op's arguments as the function gave them
(logical tensors: one sample's shape), ``phys[i]`` the physical tensor (batch dim first) of each batched argument
(None for the others). It computes the physical result with ordinary ops (which go to the transforms below this
vmap, and to eager), every output batched along dim 0, or returns ``NotImplemented`` for a case it does not cover
(the op then runs once per sample). The modules register their rules with ``register(*classes)``; ``rule_for``
finds one by class (its own, or the nearest base class's).
"""

from __future__ import annotations

from ...tensor import Tensor

RULES = {}
BY_NAME = {}       # class name -> rule: for op classes made by factories, or in modules loaded later
_loaded = []


def register(*classes):
    def deco(fn):
        for c in classes:
            RULES[c] = fn
        return fn
    return deco


def register_names(names, rule):
    """Register ``rule`` for the op classes named in ``names`` ({module: "Class Class ..."}: the module where the
    public function lives, for the reader), found by their ``__name__`` when first used (built-in ops only)."""
    for ns in names.values():
        for n in ns.split():
            BY_NAME[n] = rule


def rule_for(cls):
    if not _loaded:
        _load()
    r = RULES.get(cls)
    if r is None and cls not in RULES:
        r = BY_NAME.get(cls.__name__) if cls.__module__.startswith("tapegrad.ops.") else None
        if r is not None:
            RULES[cls] = r
            return r
        for base in cls.__mro__[1:]:
            if base in RULES and RULES[base] is not None and getattr(RULES[base], "inherit", False):
                r = RULES[base]
                break
        RULES[cls] = r
    return r


def _load():
    from . import elementwise, linalg, nn, reductions, shape  # noqa: F401
    _loaded.append(True)


def has_rule(cls):
    """Whether ``vmap`` batches ``cls`` with a rule (docs/ops.md's column)."""
    return rule_for(cls) is not None


# --- helpers shared by the rules ---------------------------------------------------------------------------------
def ldim(t):
    """The logical rank of an argument (a logical tensor or an ndarray)."""
    return t._array.ndim if isinstance(t, Tensor) else t.ndim


def materialize(level, a, p):
    """The physical tensor of argument ``a``: ``p`` if batched, else ``a`` expanded along a new batch dim."""
    return p if p is not None else level.broadcast(a)


def reshaped(p, shape):
    """``p.reshape(shape)`` of a physical tensor, ``shape`` exact (no -1, ``p``'s size): where ``p``'s array is
    C-contiguous (the result is a view), ``View`` called as the public function calls it and marked as it marks
    it, without its argument parsing and its shape inference run twice; otherwise the public function."""
    if not p._array.flags.c_contiguous:
        return p.reshape(shape)
    if not _VIEW:
        from ...ops._util import mark_view
        from ...ops.shape.views import View
        _VIEW.extend((View, mark_view))
    View, mark_view = _VIEW
    return mark_view(View.apply(p, shape), p, lambda t, s=shape: t.reshape(s))


_VIEW = []


def pad_to(p, logical_rank, rank):
    """A physical tensor with its logical dims left-padded with 1s up to ``rank`` (after the batch dim)."""
    if logical_rank >= rank:
        return p
    shape = tuple(p.shape)
    return p.reshape((shape[0],) + (1,) * (rank - logical_rank) + shape[1:])


def wrap_dim(d, n):
    """A logical dim (negative counts from the end) in ``range(n)``; None if out of range."""
    if not isinstance(d, int) or isinstance(d, bool):
        return None
    m = max(n, 1)
    if not -m <= d < m:
        return None
    return d % m


def phys_dim(d, n):
    """The physical dim of logical dim ``d`` of a rank-``n`` tensor (None if it cannot be mapped)."""
    w = wrap_dim(d, n)
    if w is None or n == 0:
        return None
    return w + 1


def phys_dims(dims, n):
    """``dims`` (an int, a sequence, or None for all) as physical dims; None if they cannot be mapped."""
    if dims is None:
        return tuple(range(1, n + 1)) if n else None
    if isinstance(dims, int):
        d = phys_dim(dims, n)
        return None if d is None else d
    out = []
    for d in dims:
        p = phys_dim(d, n)
        if p is None:
            return None
        out.append(p)
    return tuple(out)


def only_first_batched(phys):
    if phys[0] is None:
        return False
    for p in phys[1:]:         # (a loop: cheaper than all() over a generator for the usual one or two)
        if p is not None:
            return False
    return True
