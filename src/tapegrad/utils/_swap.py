"""``swap_tensors(t1, t2)``: two tensors exchange their contents while each keeps its identity (``id``)."""

from __future__ import annotations

import copyreg
import weakref

__all__ = ["swap_tensors"]

_POISONED = ("Trying to execute AccumulateGrad node that was poisoned by swap_tensors this can happen when you try "
             "to run backward on a tensor that was swapped. For a module m with "
             "`torch.__future__.set_swap_module_params_on_conversion(True)` you should not change the device or "
             "dtype of the module (e.g. `m.cpu()` or `m.half()`) between running forward and backward. To resolve "
             "this, please only change the device/dtype before running forward (or after both forward and "
             "backward).")


def _poisoned_variable():
    raise RuntimeError(_POISONED)


def swap_tensors(t1, t2):
    """Swap what ``t1`` and ``t2`` hold (class, data, autograd state, Python attributes), as torch's
    ``torch.utils.swap_tensors``: afterwards ``t1`` is what ``t2`` was and the reverse, while every outside
    reference to either object (an optimizer's parameter list) still points at the same object.

    As torch: a tensor that something holds a weak reference to cannot be swapped, nor two tensors whose classes
    have different ``__slots__``; a graph recorded before the swap that accumulates into a swapped leaf raises if
    run backward afterwards.
    """
    from ..tensor import Tensor
    for name, t in (("t1", t1), ("t2", t2)):
        if not isinstance(t, Tensor):
            raise TypeError(f"swap_tensors(): {name} must be a Tensor, not {type(t).__name__}")
        acc = t._acc              # the leaf's own AccumulateGrad node holds a weak reference to it: not the user's
        mine = acc._variable if acc is not None else None
        if any(r is not mine for r in weakref.getweakrefs(t)):
            raise RuntimeError(f"Cannot swap {name} because it has weakref associated with it")
    slots = set(copyreg._slotnames(type(t1)))
    if slots != set(copyreg._slotnames(type(t2))):
        raise RuntimeError("Cannot swap t1 and t2 if they have different slots")
    for t in (t1, t2):            # a graph recorded before the swap must not accumulate into the other tensor:
        if t._acc is not None:    # its node raises torch's error when it runs (reading its leaf); later graphs
            t._acc._variable = _poisoned_variable     # get a new node
            t._acc = None
    t1.__class__, t2.__class__ = t2.__class__, t1.__class__
    for name in slots - {"__weakref__", "__dict__"}:
        a, b = getattr(t1, name, _MISSING), getattr(t2, name, _MISSING)
        _put(t1, name, b)
        _put(t2, name, a)
    d1, d2 = dict(t1.__dict__), dict(t2.__dict__)
    t1.__dict__.clear()
    t1.__dict__.update(d2)
    t2.__dict__.clear()
    t2.__dict__.update(d1)


_MISSING = object()


def _put(t, name, value):
    if value is _MISSING:
        if hasattr(t, name):
            delattr(t, name)
    else:
        setattr(t, name, value)
