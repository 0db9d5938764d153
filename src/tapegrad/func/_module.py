"""``functional_call`` and ``stack_module_state``: a module called with other parameters and buffers.

``functional_call(module, tensors, args)`` swaps the given tensors into the module's ``_parameters`` /
``_buffers`` (or plain attributes) for the length of one call and swaps the originals back afterwards, as torch's
``_reparametrize_module`` does. ``tie_weights`` gives the tensors tied in the module (one tensor under two names)
the value given for any of the names; ``strict`` requires exactly the module's names.
"""

from __future__ import annotations

import contextlib

from ..tensor import Tensor

__all__ = ["functional_call", "stack_module_state"]

_MISSING = object()


def _owner(module, name):
    """The submodule holding ``name`` ("a.b.weight" -> module.a.b, "weight")."""
    *path, leaf = name.split(".")
    mod = module
    for p in path:
        mod = getattr(mod, p)
    return mod, leaf


def _swap(module, name, tensor):
    """Put ``tensor`` (or remove it: _MISSING) under ``name``; return what was there."""
    mod, leaf = _owner(module, name)
    if leaf in mod._parameters:
        orig = mod._parameters[leaf]
    elif leaf in mod._buffers:
        orig = mod._buffers[leaf]
    elif hasattr(mod, leaf):
        orig = getattr(mod, leaf)
    else:
        orig = _MISSING
    if orig is not _MISSING and orig is not None and not isinstance(orig, Tensor):
        raise TypeError(f"attribute `{leaf}`: {orig} is not an instance of tapegrad.Tensor")
    if tensor is _MISSING:
        if leaf in mod._parameters:
            del mod._parameters[leaf]
        elif leaf in mod._buffers:
            del mod._buffers[leaf]
        else:
            object.__delattr__(mod, leaf)
    elif leaf in mod._parameters:
        mod._parameters[leaf] = tensor
    elif leaf in mod._buffers:
        mod._buffers[leaf] = tensor
    else:
        object.__setattr__(mod, leaf, tensor)
    return orig


_MODULE = []      # nn.Module, imported on first use


def _named_tensors(module, prefix, out):
    """Every parameter and buffer under its dotted name, a shared one under each of its names (what
    ``named_parameters``/``named_buffers(remove_duplicate=False)`` give) in one walk, without their generators
    (``functional_call`` pays this on every call); a module that defines its own ``named_parameters`` or
    ``named_buffers`` is asked instead."""
    if not _MODULE:
        from ..nn.module import Module
        _MODULE.append(Module)
    base = _MODULE[0]
    if type(module).named_parameters is not base.named_parameters or \
            type(module).named_buffers is not base.named_buffers:
        out.update((prefix + k, v) for k, v in module.named_parameters(remove_duplicate=False))
        out.update((prefix + k, v) for k, v in module.named_buffers(remove_duplicate=False))
        return
    for k, v in module._parameters.items():
        if v is not None:
            out[prefix + k] = v
    for k, v in module._buffers.items():
        if v is not None:
            out[prefix + k] = v
    for name, sub in module._modules.items():
        if sub is not None:
            _named_tensors(sub, prefix + name + ".", out)


def _untie(module, given):
    """Each name of a tied tensor given a value: the same value under all its names (torch's error when two of
    the names were given different values)."""
    named = {}
    _named_tensors(module, "", named)
    if len({id(t) for t in named.values()}) == len(named):      # (nothing tied: the usual module)
        return given
    groups = {}
    for name, t in named.items():
        groups.setdefault(id(t), set()).add(name)
    tied = {n: g for g in groups.values() if len(g) > 1 for n in g}
    given_tied = [n for n in given if n in tied]
    for n in given_tied:
        names = tied[n]
        if len(names.intersection(given_tied)) > 1 and len({id(given[k]) for k in names if k in given}) != 1:
            raise ValueError(f"functional_call got multiple values for keys {sorted(names)}, which are tied. "
                             f"Consider using tie_weights=False")
    out = dict(given)
    for n in given_tied:
        for k in tied[n]:
            out[k] = given[n]
    return out


@contextlib.contextmanager
def _reparametrize(module, tensors, tie_weights=False, strict=False):
    if tie_weights:
        tensors = _untie(module, tensors)
    if strict:
        names = {n for n, _ in module.named_parameters(remove_duplicate=False)}
        names |= {n for n, _ in module.named_buffers(remove_duplicate=False)}
        unexpected = sorted(set(tensors) - names)
        missing = sorted(names - set(tensors))
        msgs = []
        if unexpected:
            msgs.append(f"Unexpected key(s): {', '.join(map(repr, unexpected))}.")
        if missing:
            msgs.append(f"Missing key(s): {', '.join(map(repr, missing))}.")
        if msgs:
            raise RuntimeError("Error(s) in reparametrizing for {}:\n\t{}".format(module._get_name(),
                                                                                 "\n\t".join(msgs)))
    orig = {}
    try:
        for name, t in tensors.items():
            orig[name] = _swap(module, name, t)
        yield
    finally:
        for name, t in reversed(list(orig.items())):
            _swap(module, name, t)


def _walk(module, prefix, named, owners):
    """``_named_tensors``'s walk that also notes, for each parameter, the ``_parameters`` dict that holds it
    (``owners``: name -> (dict, key)); False (the walk stopped) at a module that defines its own
    ``named_parameters`` or ``named_buffers``."""
    if not _MODULE:
        from ..nn.module import Module
        _MODULE.append(Module)
    base = _MODULE[0]
    if type(module).named_parameters is not base.named_parameters or \
            type(module).named_buffers is not base.named_buffers:
        return False
    params = module._parameters
    for k, v in params.items():
        if v is not None:
            named[prefix + k] = v
            owners[prefix + k] = (params, k)
    for k, v in module._buffers.items():
        if v is not None:
            named[prefix + k] = v
    for name, sub in module._modules.items():
        if sub is not None and not _walk(sub, prefix + name + ".", named, owners):
            return False
    return True


def _swap_parameters(module, tensors, tie_weights):
    """``_reparametrize``'s swap, in one walk of the module, where every name given is a parameter of its
    submodule and every value a tensor (the usual ``functional_call``): ``[(its _parameters dict, key,
    original)]`` to swap back, or None when anything else is asked (the general path then runs). Nothing is
    swapped until every name is known."""
    named, owners = {}, {}
    if not _walk(module, "", named, owners):
        return None
    if tie_weights and len({id(t) for t in named.values()}) != len(named):     # (tied tensors: see _untie)
        tensors = _untie(module, tensors)
    found = []
    for name, t in tensors.items():
        where = owners.get(name)
        if where is None or not isinstance(t, Tensor):
            return None
        found.append((where[0], where[1], t))
    swapped = []
    for params, key, t in found:
        swapped.append((params, key, params[key]))
        params[key] = t
    return swapped


def _functional_call(module, tensors, args=None, kwargs=None, *, tie_weights=True, strict=False):
    if kwargs is None:
        kwargs = {}
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    if not strict:              # (the usual call: parameters only; no context manager, each submodule found once)
        swapped = _swap_parameters(module, tensors, tie_weights)
        if swapped is not None:
            try:
                return module(*args, **kwargs)
            finally:
                for params, leaf, orig in reversed(swapped):
                    params[leaf] = orig
    with _reparametrize(module, tensors, tie_weights=tie_weights, strict=strict):
        return module(*args, **kwargs)


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *, tie_weights=True,
                    strict=False):
    """Call ``module(*args, **kwargs)`` with its parameters and buffers replaced by the tensors of
    ``parameter_and_buffer_dicts`` (a dict, or a tuple/list of dicts, keyed as ``state_dict``); the module is
    unchanged afterwards.

    >>> lin = tapegrad.nn.Linear(2, 1)
    >>> functional_call(lin, {"weight": tapegrad.ones(1, 2), "bias": tapegrad.zeros(1)}, tapegrad.ones(1, 2))
    tensor([[2.]])
    """
    if isinstance(parameter_and_buffer_dicts, dict):
        tensors = parameter_and_buffer_dicts
    elif isinstance(parameter_and_buffer_dicts, (list, tuple)):
        if not all(isinstance(d, dict) for d in parameter_and_buffer_dicts):
            raise ValueError("Expected all elements of parameter_and_buffer_dicts to be dictionaries")
        counts = {}
        for d in parameter_and_buffer_dicts:
            for k in d:
                counts[k] = counts.get(k, 0) + 1
        repeated = [k for k, n in counts.items() if n > 1]
        if repeated:
            raise ValueError(f"{repeated} appeared in multiple dictionaries; behavior of functional call is "
                             f"ambiguous")
        tensors = {k: v for d in parameter_and_buffer_dicts for k, v in d.items()}
    else:
        raise ValueError(f"Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of dicts, but got "
                         f"{type(parameter_and_buffer_dicts)}")
    return _functional_call(module, tensors, args, kwargs, tie_weights=tie_weights, strict=strict)


def stack_module_state(models):
    """``(params, buffers)``: each parameter and buffer of ``models`` (modules of one class) stacked along a new
    first dim, keyed by name — the state for ``vmap`` over an ensemble with ``functional_call``."""
    from ..ops.shape import stack
    if len(models) == 0:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or all(not m.training for m in models)):
        raise RuntimeError("stack_module_state: Expected all models to have the same training/eval mode.")
    typ = type(models[0])
    if not all(type(m) is typ for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")

    def stacked(ts, name):
        if not (all(t.requires_grad for t in ts) or not any(t.requires_grad for t in ts)):
            raise RuntimeError(f"Expected {name} from each model to have the same .requires_grad")
        res = stack(list(ts))
        return res.detach().requires_grad_() if ts[0].requires_grad else res

    all_params = [dict(m.named_parameters()) for m in models]
    params = {k: stacked(tuple(p[k] for p in all_params), k) for k in all_params[0]}
    all_bufs = [dict(m.named_buffers()) for m in models]
    buffers = {k: stacked(tuple(b[k] for b in all_bufs), k) for k in all_bufs[0]}
    return params, buffers
