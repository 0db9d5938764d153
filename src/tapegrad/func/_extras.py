"""``functionalize`` and ``replace_all_batch_norm_modules_``: the two torch.func helpers outside the transforms."""

from __future__ import annotations

import functools

from ._forward import Layer

__all__ = ["functionalize", "replace_all_batch_norm_modules_", "debug_unwrap"]


def functionalize(func, *, remove="mutations"):
    """torch.func.functionalize: ``func`` with its in-place ops replaced by out-of-place ones, mutations of its
    inputs copied back at the end. tapegrad records no program that could be rewritten (there is nothing to hand
    to a compiler), so the result runs ``func`` itself: the same values, the same input mutations."""
    if remove not in ("mutations", "mutations_and_views"):
        raise RuntimeError(f"functionalize(f, remove='mutations'): received invalid argument for remove={remove}. "
                           "Valid options are:\n     remove='mutations': all inplace and out= operators will be "
                           "removed from the program, and replaced with their out-of-place equivalents.\n     "
                           "remove='mutations_and_views': In addition to the above, all aliasing operators {view} "
                           "will be replaced with their non-aliasing counterparts, {view}_copy.\n")

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        with Layer():
            return func(*args, **kwargs)
    return wrapped


def replace_all_batch_norm_modules_(root):
    """Make every batch-norm module in ``root`` stop tracking running statistics (for ``vmap`` over a model whose
    batch norm would otherwise update one buffer from every sample): ``running_mean``, ``running_var`` and
    ``num_batches_tracked`` become None and ``track_running_stats`` False. Returns ``root``."""
    from ..nn.modules.batchnorm import _BatchNorm
    for m in root.modules():
        if isinstance(m, _BatchNorm):
            m.running_mean = None
            m.running_var = None
            m.num_batches_tracked = None
            m.track_running_stats = False
    return root


def debug_unwrap(tensor, *, recurse=True):
    """``torch.func.debug_unwrap``: inside ``vmap``, the batched tensor behind ``tensor`` (batch dim first), one
    level (``recurse=False``) or all the way out; any other tensor as it is."""
    from ..autograd.function import active_interpreters
    for level in reversed(active_interpreters()):
        physical = getattr(level, "physical", None)
        found = physical(tensor) if physical is not None else None
        if found is not None:
            tensor = found
            if not recurse:
                break
    return tensor
