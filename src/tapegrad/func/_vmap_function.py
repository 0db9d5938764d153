"""A user ``autograd.Function`` under ``vmap``, as torch's: its own ``vmap`` staticmethod, or (with
``generate_vmap_rule = True``) its forward run under the vmap; with neither, torch's error.

``BatchedLevel.process`` hands every call of a Python ``Function`` here (built-in Primitives never come).
tapegrad's own Functions that are correct run once per sample (module backward hooks, reentrant checkpoint,
``CrossMapLRN2d``) opt in with ``_vmap_per_sample = True`` and keep the per-sample fallback.
"""

from __future__ import annotations

from typing import NamedTuple

from ..tensor import Tensor

_DOCS = "For more details, please see https://pytorch.org/docs/main/notes/extending.func.html"


class VmapInfo(NamedTuple):
    """What a Function's ``vmap`` staticmethod gets first: the size of the mapped dimension, vmap's randomness."""

    batch_size: int
    randomness: str


def overrides_vmap(cls):
    from ..autograd.function import Function
    return getattr(cls, "vmap", None) is not Function.__dict__["vmap"].__func__


def check(cls):
    """torch's refusals, in its order: the old ctx-first style, both rules, no rule. Returns the rule to use:
    "user" (the vmap staticmethod), "generate" or "loop" (internal Functions that opted in)."""
    if getattr(cls, "_vmap_per_sample", False):
        return "loop"
    from ..autograd.function import _is_ctxless
    if cls.setup_context is None or not _is_ctxless(cls):
        raise RuntimeError("In order to use an autograd.Function with functorch transforms (vmap, grad, jvp, jacrev, "
                           "...), it must override the setup_context staticmethod. " + _DOCS)
    user = overrides_vmap(cls)
    if cls.generate_vmap_rule:
        if user:
            raise RuntimeError(f"You tried to vmap over {cls.__name__}, but it has both generate_vmap_rule=True and an "
                               "overridden vmap staticmethod. Please set generate_vmap_rule=False or delete the "
                               "overridden vmap staticmethod to avoid ambiguity. " + _DOCS)
        return "generate"
    if not user:
        raise RuntimeError(f"You tried to vmap over {cls.__name__}, but it does not have vmap support. Please override "
                           "and implement the vmap staticmethod or set generate_vmap_rule=True. " + _DOCS)
    return "user"


def call_user_rule(level, cls, args, kwargs, phys):
    """``cls.vmap(info, in_dims, *args)`` on the physical tensors (batch dim 0, ``in_dims`` None for an argument
    not batched here); its ``(output, out_dims)`` made logical again (an output whose out_dim is None is the
    same for every sample)."""
    in_dims = tuple(None if phys is None or phys[i] is None else 0 for i in range(len(args)))
    pargs = tuple(a if d is None else phys[i] for i, (a, d) in enumerate(zip(args, in_dims)))
    res = cls.vmap(VmapInfo(level.size, level.randomness), in_dims, *pargs, **kwargs)
    if not isinstance(res, tuple) or len(res) != 2:
        raise RuntimeError("Expected the vmap staticmethod to have two returns, an output and out_dims with pytree "
                           f"structure compatible with the output. Got a {type(res)} instead")
    out, out_dims = res
    single = not isinstance(out, tuple)
    outs = (out,) if single else out
    if out_dims is None or isinstance(out_dims, int):
        dims = (out_dims,) * len(outs)
    elif isinstance(out_dims, tuple) and not single and len(out_dims) == len(outs):
        dims = out_dims
    else:
        raise RuntimeError("The autograd.Function's vmap staticmethod returned an incompatible (output, out_dims) "
                           f"tuple. Expected out_dims={out_dims!r} to be compatible with the structure of `output`. "
                           f"out_dims has {_structure(out_dims)} but output has {_structure(out)}. " + _DOCS)
    result = []
    for o, d in zip(outs, dims):
        if not isinstance(o, Tensor):
            result.append(o)
            continue
        p = level.broadcast(o) if d is None else o.movedim(d, 0)
        result.append(level.wrap(p))
    return result[0] if single else tuple(result)


def _structure(x):
    if isinstance(x, tuple):
        return f"structure tuple of {len(x)}"
    return "structure leaf"


def call_generated(level, cls, args, kwargs):
    """``generate_vmap_rule = True`` and nothing requires grad: the Function's forward on the logical tensors
    with this level seeing its ops (batched by their rules), as torch runs it under vmap."""
    from ..autograd.function import _apply_function
    from ..autograd.grad_mode import _state
    prev = _state.top
    _state.top = level.level
    try:
        return _apply_function(cls, args, kwargs, False)
    finally:
        _state.top = prev


def needs_grad(level, args, phys):
    """Whether an argument requires grad (the physical tensor of a batched one, the argument itself otherwise)."""
    for i, a in enumerate(args):
        if isinstance(a, Tensor):
            p = None if phys is None else phys[i]
            if (p if p is not None else a)._rg:
                return True
    return False
