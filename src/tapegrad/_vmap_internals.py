"""``torch._vmap_internals``: torch's first vmap, which libraries still import for batched vector-Jacobian
products (pytorch-minimize builds its Hessians and Jacobians as ``_vmap(hvp)(I)`` and ``_vmap(vjp)(I)``, the
products being ``autograd.grad`` calls with batched ``grad_outputs``). It is ``tapegrad.func.vmap`` under the old
API's rules: ``out_dims`` an int or a tuple of ints, the function's outputs only Tensors (``allow_none_pass_through``
lets a None output through, as an unused input's gradient), and torch's errors for the rest. ``vmap`` is the
deprecated public name (torch's FutureWarning)."""

from __future__ import annotations

import functools
import warnings

from .tensor import Tensor

__all__ = ["vmap"]


def _get_name(func):
    return getattr(func, "__name__", repr(func))


def _check_out_dims_is_int_or_int_tuple(out_dims, func):
    if isinstance(out_dims, int):
        return
    if not isinstance(out_dims, tuple) or not all(isinstance(d, int) for d in out_dims):
        raise ValueError(f"vmap({_get_name(func)}, ..., out_dims={out_dims}): `out_dims` must be an int or a tuple "
                         f"of int representing where in the outputs the vmapped dimension should appear.")


def _validate_outputs(outputs, func):
    if isinstance(outputs, Tensor):
        return
    if not isinstance(outputs, tuple):
        raise ValueError(f"vmap({_get_name(func)}, ...): `{_get_name(func)}` must only return Tensors, got type "
                         f"{type(outputs)} as the return.")
    for idx, output in enumerate(outputs):
        if not isinstance(output, Tensor):
            raise ValueError(f"vmap({_get_name(func)}, ...): `{_get_name(func)}` must only return Tensors, got "
                             f"type {type(output)} for return {idx}.")


def _vmap(func, in_dims=0, out_dims=0, allow_none_pass_through=False):
    """``func`` mapped over dim ``in_dims`` of its tensor arguments (torch's ``_vmap``)."""
    from .func import vmap as func_vmap

    @functools.wraps(func)
    def wrapped(*args):
        _check_out_dims_is_int_or_int_tuple(out_dims, func)
        if not isinstance(in_dims, (int, tuple)):
            raise ValueError(f"vmap({_get_name(func)}, in_dims={in_dims}, ...)(<inputs>): expected `in_dims` to be "
                             f"int or a (potentially nested) tuple matching the structure of inputs, got: "
                             f"{type(in_dims)}.")
        if not args:
            raise ValueError(f"vmap({_get_name(func)})(<inputs>): got no inputs. Maybe you forgot to add inputs, or "
                             f"you are trying to vmap over a function with no inputs. The latter is unsupported.")
        seen = {}

        def tensors_only(*a):
            out = func(*a)
            if not allow_none_pass_through:
                _validate_outputs(out, func)
            seen["single"] = isinstance(out, Tensor)
            outs = (out,) if seen["single"] else tuple(out)
            seen["none"] = [o is None for o in outs]
            return tuple(o for o in outs if o is not None)

        mapped = func_vmap(tensors_only, in_dims=in_dims, out_dims=0)(*args)
        n = len(seen["none"])
        if isinstance(out_dims, tuple) and len(out_dims) != n:
            raise ValueError(f"vmap({_get_name(func)}, ..., out_dims={out_dims}): `out_dims` must have one dim per "
                             f"output (got {n} outputs) of {_get_name(func)}.")
        dims = out_dims if isinstance(out_dims, tuple) else (out_dims,) * n
        it = iter(mapped)
        res = tuple(None if none else _moved(next(it), d) for none, d in zip(seen["none"], dims))
        return res[0] if seen["single"] else res
    return wrapped


def _moved(t, dim):
    return t if dim == 0 else t.movedim(0, dim)


def vmap(func, in_dims=0, out_dims=0):
    """The deprecated public name of ``_vmap`` (use ``torch.vmap``)."""
    warnings.warn("Please use `torch.vmap` instead of `torch._vmap_internals.vmap`.", FutureWarning, stacklevel=2)
    return _vmap(func, in_dims, out_dims)
