"""``tapegrad.autograd.functional``: torch's higher-level autograd API — ``vjp``, ``jvp``, ``jacobian``,
``hessian``, ``vhp``, ``hvp`` — on top of ``autograd.grad`` and forward-mode AD (``autograd.forward_ad``).

Each takes a function of Tensors and its inputs (a Tensor or a tuple of Tensors) and returns what torch returns,
nested as torch nests it: a Tensor where the function takes (or returns) a Tensor, a tuple where it takes a tuple.

>>> from tapegrad.autograd.functional import jacobian
>>> jacobian(lambda x: x ** 2, tapegrad.tensor([1., 2.]))
tensor([[2., 0.],
        [0., 4.]])

How each is computed (as torch computes it, so that values, graphs and errors agree):
- ``vjp``: one backward from ``v``. ``vhp``: the gradient, then a backward of it from ``v``.
- ``jvp``: the double-backward trick (the vjp is linear in its cotangent ``u``: its backward from ``v`` with
  respect to ``u`` is ``J v``). ``hvp`` the same on the gradient — or, with the tapegrad extension
  ``strategy="forward-mode"``, forward-over-reverse: the gradient computed inside a dual level whose tangent is
  ``v``, whose tangent is then ``H v`` (one backward, no double backward of the double backward).
- ``jacobian``: reverse mode, one backward per output element (``vectorize=True``: all of them in one call of
  ``autograd.grad(..., is_grads_batched=True)``); ``strategy="forward-mode"``: one jvp per input element
  (torch requires ``vectorize=True`` for it; tapegrad runs the basis vectors one after another — the same
  numbers, without torch's vmap). ``hessian`` is the jacobian of the gradient, its outer jacobian by
  ``outer_jacobian_strategy`` (forward-mode: forward-over-reverse).
"""

from __future__ import annotations

import numpy as np

from ..tensor import Tensor
from . import forward_ad as fwAD
from .engine import grad as _grad
from .grad_mode import enable_grad, is_grad_enabled, set_grad_enabled

__all__ = ["vjp", "jvp", "jacobian", "hessian", "hvp", "vhp"]


# --- the shared pieces ---------------------------------------------------------------------------------------------
def _as_tuple(inp, arg_name=None, fn_name=None):
    """``(was it a tuple, as a tuple)``; with names, every element must be a Tensor (torch's TypeError)."""
    if arg_name is None and fn_name is None:
        return inp if isinstance(inp, tuple) else tuple(inp) if isinstance(inp, list) else (inp,)
    is_tuple = isinstance(inp, tuple)
    items = inp if is_tuple else (inp,)
    for i, el in enumerate(items):
        if not isinstance(el, Tensor):
            where = f"the value at index {i}" if is_tuple else f"the given {arg_name}"
            raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple of Tensors but "
                            f"{where} has type {type(el)}.")
    return is_tuple, items


def _tuple_postprocess(res, to_unpack):
    """Undo ``_as_tuple``: ``to_unpack`` is one flag, or (outer, inner) flags for a nested result."""
    if isinstance(to_unpack, tuple):
        outer, inner = to_unpack
        if not inner:
            res = tuple(el[0] for el in res)
        return res if outer else res[0]
    return res if to_unpack else res[0]


def _grad_preprocess(inputs, create_graph, need_graph):
    """Inputs to differentiate with respect to: a view (with ``create_graph``, so the result stays connected to
    the caller's graph) or a detached copy that requires grad (``need_graph``)."""
    res = []
    for inp in inputs:
        if create_graph and inp.requires_grad:
            res.append(inp.view_as(inp))
        else:
            res.append(inp.detach().requires_grad_(need_graph))
    return tuple(res)


def _grad_postprocess(inputs, create_graph):
    if isinstance(inputs[0], Tensor):
        return inputs if create_graph else tuple(inp.detach() for inp in inputs)
    return tuple(_grad_postprocess(inp, create_graph) for inp in inputs)


def _validate_v(v, other, is_other_tuple):
    if len(other) != len(v):
        if is_other_tuple:
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(other)} but got {len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for idx, (el_v, el_other) in enumerate(zip(v, other)):
        if el_v.size() != el_other.size():
            prepend = f"Entry {idx} in " if is_other_tuple else ""
            raise RuntimeError(f"{prepend}v has invalid size: should be {el_other.size()} but got {el_v.size()}.")


_STRICT = {
    "hessian": ("The hessian of the user-provided function with respect to input {i} is independent of the input. "
                "This is not allowed in strict mode. You should ensure that your function is thrice differentiable "
                "and that the hessian depends on the inputs."),
    "jacobian": ("While computing the hessian, found that the jacobian of the user-provided function with respect "
                 "to input {i} is independent of the input. This is not allowed in strict mode. You should ensure "
                 "that your function is twice differentiable and that the jacobian depends on the inputs (this "
                 "would be violated by a linear function for example)."),
    "grad_inputs": ("The gradient with respect to input {i} is independent of the inputs of the user-provided "
                    "function. This is not allowed in strict mode."),
    "outputs": ("Output {i} of the user-provided function does not require gradients. The outputs must be "
                "computed in a differentiable manner from the input when running in strict mode."),
}


def _check_requires_grad(inputs, input_type, strict):
    """strict mode: every entry must exist and require grad (torch's message for each kind of entry)."""
    if not strict:
        return
    for i, inp in enumerate(inputs):
        if inp is None:
            raise RuntimeError(f"The output of the user-provided function is independent of input {i}. This is not "
                               "allowed in strict mode.")
        if not inp.requires_grad:
            raise RuntimeError(_STRICT[input_type].format(i=i))


def _autograd_grad(outputs, inputs, grad_outputs=None, create_graph=False, retain_graph=None,
                   is_grads_batched=False):
    """``autograd.grad`` over the outputs that require grad (None for every input when none does)."""
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if o is not None and o.requires_grad]
    if not pairs:
        return (None,) * len(inputs)
    return _grad([o for o, _ in pairs], list(inputs), [g for _, g in pairs], allow_unused=True,
                 create_graph=create_graph, retain_graph=retain_graph, is_grads_batched=is_grads_batched)


_ZEROS = {
    "back": "The output of the user-provided function is independent of input {i}. This is not allowed in strict "
            "mode.",
    "back_trick": "The gradient with respect to the input is independent of entry {i} in the grad_outputs when "
                  "using the double backward trick to compute forward mode gradients. This is not allowed in strict "
                  "mode.",
    "double_back": "The jacobian of the user-provided function is independent of input {i}. This is not allowed in "
                   "strict mode.",
    "double_back_trick": "The hessian of the user-provided function is independent of entry {i} in the "
                         "grad_jacobian. This is not allowed in strict mode as it prevents from using the double "
                         "backward trick to replace forward mode AD.",
}


def _fill_in_zeros(grads, refs, strict, create_graph, stage):
    """Missing gradients become zeros shaped as ``refs`` (strict mode: an error, worded for the ``stage``)."""
    res = []
    for i, g in enumerate(grads):
        if g is None:
            if strict:
                raise RuntimeError(_ZEROS[stage].format(i=i))
            g = Tensor._make(np.zeros(refs[i]._array.shape, refs[i]._array.dtype))
        elif strict and create_graph and not g.requires_grad:
            what = "hessian" if "double" in stage else "jacobian"
            raise RuntimeError(f"The {what} of the user-provided function is independent of input {i}. This is not "
                               "allowed in strict mode when create_graph=True.")
        res.append(g)
    return tuple(res)


def _zeros_like(t, requires_grad=False):
    return Tensor._make(np.zeros(t._array.shape, t._array.dtype), requires_grad)


def _single_output(outputs, is_outputs_tuple, fn):
    if is_outputs_tuple or not isinstance(outputs[0], Tensor):
        raise RuntimeError(f"The function given to {fn} should return a single Tensor")
    if outputs[0].nelement() != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {fn} should contain a single element")


def _v_or_scalar(v, inputs, is_inputs_tuple, create_graph, fn, where):
    if v is not None:
        _, v = _as_tuple(v, "v", fn)
        v = _grad_preprocess(v, create_graph=create_graph, need_graph=False)
        _validate_v(v, inputs, is_inputs_tuple)
        return v
    if len(inputs) != 1 or inputs[0].nelement() != 1:
        raise RuntimeError(f"The vector v can only be None if {where} is a single Tensor with a single element.")
    return None


# --- vjp, jvp ------------------------------------------------------------------------------------------------------
def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), v^T J)``: the vector-Jacobian product at ``inputs``.

    >>> vjp(lambda x: x.exp().sum(), tapegrad.tensor([0., 1.]))
    (tensor(3.7183), tensor([1.0000, 2.7183]))
    """
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vjp")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function", "vjp")
        _check_requires_grad(outputs, "outputs", strict=strict)
        if v is not None:
            _, v = _as_tuple(v, "v", "vjp")
            v = _grad_preprocess(v, create_graph=create_graph, need_graph=False)
            _validate_v(v, outputs, is_outputs_tuple)
        elif len(outputs) != 1 or outputs[0].nelement() != 1:
            raise RuntimeError("The vector v can only be None if the user-provided function returns a single Tensor "
                               "with a single element.")
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        res = _fill_in_zeros(_autograd_grad(outputs, inputs, v, create_graph=create_graph), inputs, strict,
                             create_graph, "back")
    return (_tuple_postprocess(_grad_postprocess(outputs, create_graph), is_outputs_tuple),
            _tuple_postprocess(_grad_postprocess(res, create_graph), is_inputs_tuple))


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), J v)``: the Jacobian-vector product, by the double-backward trick (as torch's).

    >>> jvp(lambda x: x ** 2, tapegrad.tensor([1., 2.]), tapegrad.tensor([1., 1.]))
    (tensor([1., 4.]), tensor([2., 4.]))
    """
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jvp")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        v = _v_or_scalar(v, inputs, is_inputs_tuple, create_graph, "jvp", "the input to the user-provided function")
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function", "jvp")
        _check_requires_grad(outputs, "outputs", strict=strict)
        us = tuple(_zeros_like(o, True) for o in outputs)
        grad_inputs = _autograd_grad(outputs, inputs, us, create_graph=True)
        _check_requires_grad(grad_inputs, "grad_inputs", strict=strict)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        res = _fill_in_zeros(_autograd_grad(grad_inputs, us, v, create_graph=create_graph), outputs, strict,
                             create_graph, "back_trick")
    return (_tuple_postprocess(_grad_postprocess(outputs, create_graph), is_outputs_tuple),
            _tuple_postprocess(_grad_postprocess(res, create_graph), is_outputs_tuple))


# --- jacobian, hessian ---------------------------------------------------------------------------------------------
def _basis(tensors):
    """The standard basis of the concatenated, flattened ``tensors``: for each tensor, a ``(total, numel)`` block
    (row k is 1 at k's position within that tensor)."""
    numels = [t.nelement() for t in tensors]
    total, start, out = sum(numels), 0, []
    for t, n in zip(tensors, numels):
        block = np.zeros((total, n), t._array.dtype)
        block[np.arange(start, start + n), np.arange(n)] = 1
        out.append(Tensor._make(block))
        start += n
    return out, numels


def _construct_standard_basis_for(tensors, tensor_numels):
    """torch's private helper, which libraries import (pytorch-minimize's vectorized Jacobian): the standard basis
    of the concatenated, flattened ``tensors`` as one ``(total, numel)`` block per tensor, of its dtype."""
    if len(tensors) != len(tensor_numels):
        raise AssertionError(f"Expected tensors and tensor_numels to have the same length, but got {len(tensors)} "
                             f"and {len(tensor_numels)}")
    if len(tensors) == 0:
        raise AssertionError("Expected at least one tensor")
    total = sum(tensor_numels)
    chunks = tuple(t.new_zeros(total, n) for t, n in zip(tensors, tensor_numels))
    start = 0
    for chunk, n in zip(chunks, tensor_numels):
        chunk.diagonal(start).fill_(1)
        start -= n
    return chunks


def _as_tuple_nocheck(x):
    """torch's private helper: a tuple as is, a list as a tuple, anything else as a 1-tuple."""
    return x if isinstance(x, tuple) else tuple(x) if isinstance(x, list) else (x,)


def _jacfwd(func, inputs, strict=False, vectorize=False):
    """The jacobian by forward mode: one jvp per input element (each basis vector in turn; torch batches them with
    vmap: the same numbers)."""
    if strict:
        raise RuntimeError('torch.autograd.functional.jacobian: `strict=True` and `strategy="forward-mode"` are not '
                           'supported together (yet). Please either set `strict=False` or `strategy="reverse-mode"`.')
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
    if not vectorize:
        raise NotImplementedError("Computing Jacobian using forward-AD or forward-over-reverse Hessian isonly "
                                  "implemented for `vectorize=True`.")
    basis, numels = _basis(inputs)
    columns, primals, is_outputs_tuple = [], None, None
    for k in range(sum(numels)):
        with fwAD.dual_level():
            duals = tuple(fwAD.make_dual(x, b[k].view_as(x)) for x, b in zip(inputs, basis))
            is_outputs_tuple, outs = _as_tuple(func(*duals), "outputs")
            col = []
            primals = []
            for o in outs:
                p, t = fwAD.unpack_dual(o)
                primals.append(p)
                col.append(t if t is not None else _zeros_like(p))
            columns.append(col)
    from ..ops.shape import stack
    jac = []            # (lists, as torch's forward-mode jacobian returns them)
    for i, out in enumerate(primals):
        col = stack([c[i] for c in columns], -1)       # (*out.shape, total)
        row, start = [], 0
        for x, n in zip(inputs, numels):
            row.append(col[..., start:start + n].reshape(tuple(out.shape) + tuple(x.shape)))
            start += n
        jac.append(row)
    return _tuple_postprocess(jac, (is_outputs_tuple, is_inputs_tuple))


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False, strategy="reverse-mode"):
    """The Jacobian of ``func`` at ``inputs``: for output i and input j a tensor of shape
    ``out_i.shape + in_j.shape`` (nested as torch: a Tensor for one input and one output).

    >>> jacobian(lambda x, y: x * y, (tapegrad.tensor([1., 2.]), tapegrad.tensor([3., 4.])))
    (tensor([[3., 0.],
            [0., 4.]]), tensor([[1., 0.],
            [0., 2.]]))
    """
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your function '
                             'has more outputs than inputs, "forward-mode" tends to be more performant. Otherwise, '
                             'prefer to use "reverse-mode".')
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError('torch.autograd.functional.jacobian: `create_graph=True` and '
                                      '`strategy="forward-mode"` are not supported together (yet). Please either set '
                                      '`create_graph=False` or `strategy="reverse-mode"`.')
        return _jacfwd(func, inputs, strict, vectorize)
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function", "jacobian")
        _check_requires_grad(outputs, "outputs", strict=strict)
        if vectorize:
            jac = _jacrev_vectorized(outputs, inputs, create_graph, strict)
        else:
            jac = _jacrev_rows(outputs, inputs, create_graph, strict)
        return _tuple_postprocess(_grad_postprocess(jac, create_graph), (is_outputs_tuple, is_inputs_tuple))


def _jacrev_vectorized(outputs, inputs, create_graph, strict):
    """Every row in one call of ``autograd.grad(..., is_grads_batched=True)`` over the outputs' standard basis."""
    if strict:
        raise RuntimeError("torch.autograd.functional.jacobian: `strict=True` and `vectorized=True` are not "
                           "supported together. Please either set `strict=False` or `vectorize=False`.")
    basis, numels = _basis(outputs)
    flat = tuple(o.reshape(-1) for o in outputs)
    vj = list(_autograd_grad(flat, inputs, tuple(basis), create_graph=create_graph, is_grads_batched=True))
    for k, g in enumerate(vj):
        if g is None:
            vj[k] = _zeros_like(inputs[k]).expand((sum(numels),) + tuple(inputs[k].shape))
    per_input = []
    for g, x in zip(vj, inputs):
        row = []
        for part, o in zip(g.split(numels, dim=0), outputs):
            row.append(part.view(tuple(o.shape) + tuple(x.shape)))
        per_input.append(row)
    return tuple(zip(*per_input))


def _jacrev_rows(outputs, inputs, create_graph, strict):
    """One backward per output element, its gradients stacked into the rows."""
    from ..ops.shape import stack
    jac = []
    for i, out in enumerate(outputs):
        rows = [[] for _ in inputs]
        flat = out.reshape(-1)
        for j in range(out.nelement()):
            vj = _autograd_grad((flat[j],), inputs, retain_graph=True, create_graph=create_graph)
            for k, (g, x) in enumerate(zip(vj, inputs)):
                if g is not None:
                    if strict and create_graph and not g.requires_grad:
                        raise RuntimeError(f"The jacobian of the user-provided function is independent of input "
                                           f"{i}. This is not allowed in strict mode when create_graph=True.")
                    rows[k].append(g)
                else:
                    if strict:
                        raise RuntimeError(f"Output {i} of the user-provided function is independent of input "
                                           f"{k}. This is not allowed in strict mode.")
                    rows[k].append(_zeros_like(x))
        jac.append(tuple(
            (stack(r, 0) if r else _zeros_like(x).reshape((0,) + tuple(x.shape))).view(tuple(out.shape) +
                                                                                      tuple(x.shape))
            for r, x in zip(rows, inputs)))
    return tuple(jac)


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False, outer_jacobian_strategy="reverse-mode"):
    """The Hessian of the scalar function ``func`` at ``inputs`` (for inputs i and j a tensor of shape
    ``in_i.shape + in_j.shape``, nested as torch).

    >>> hessian(lambda x: (x ** 3).sum(), tapegrad.tensor([1., 2.]))
    tensor([[ 6.,  0.],
            [ 0., 12.]])
    """
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')

    def single_output(*inp):
        out = func(*inp)
        is_out_tuple, t_out = _as_tuple(out, "outputs of the user-provided function", "hessian")
        _check_requires_grad(t_out, "outputs", strict=strict)
        if is_out_tuple or not isinstance(out, Tensor):
            raise RuntimeError("The function given to hessian should return a single Tensor")
        if out.nelement() != 1:
            raise RuntimeError("The Tensor returned by the function given to hessian should contain a single element")
        return out.squeeze()

    def jac_func(*inp):
        if outer_jacobian_strategy == "forward-mode":
            inp = tuple(t.requires_grad_(True) for t in inp)      # (forward-over-reverse)
        jac = jacobian(single_output, inp, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict=strict)
        return jac

    res = jacobian(jac_func, inputs, create_graph=create_graph, strict=strict, vectorize=vectorize,
                   strategy=outer_jacobian_strategy)
    return _tuple_postprocess(res, (is_inputs_tuple, is_inputs_tuple))


# --- vhp, hvp ------------------------------------------------------------------------------------------------------
def _scalar_and_gradient(func, inputs, v, create_graph, strict, fn):
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", fn)
    inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
    v = _v_or_scalar(v, inputs, is_inputs_tuple, create_graph, fn, "the input to the user-provided function")
    outputs = func(*inputs)
    is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function", fn)
    _check_requires_grad(outputs, "outputs", strict=strict)
    _single_output(outputs, is_outputs_tuple, fn)
    jac = _autograd_grad(outputs, inputs, create_graph=True)
    _check_requires_grad(jac, "jacobian", strict=strict)
    return is_inputs_tuple, inputs, v, is_outputs_tuple, outputs, jac


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), v^T H)`` for a scalar ``func``.

    >>> vhp(lambda x: (x ** 3).sum(), tapegrad.tensor([1., 2.]), tapegrad.tensor([1., 1.]))
    (tensor(9.), tensor([ 6., 12.]))
    """
    with enable_grad():
        is_inputs_tuple, inputs, v, is_outputs_tuple, outputs, jac = _scalar_and_gradient(
            func, inputs, v, create_graph, strict, "vhp")
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        res = _fill_in_zeros(_autograd_grad(jac, inputs, v, create_graph=create_graph), inputs, strict, create_graph,
                             "double_back")
    return (_tuple_postprocess(_grad_postprocess(outputs, create_graph), is_outputs_tuple),
            _tuple_postprocess(_grad_postprocess(res, create_graph), is_inputs_tuple))


def hvp(func, inputs, v=None, create_graph=False, strict=False, *, strategy="reverse-mode"):
    """``(func(inputs), H v)`` for a scalar ``func``. As torch's by default (the double-backward trick on the
    gradient); ``strategy="forward-mode"`` (a tapegrad extension) computes it forward-over-reverse: the gradient
    inside a dual level whose tangent is ``v`` — one backward, and no double backward of it.

    >>> hvp(lambda x: (x ** 3).sum(), tapegrad.tensor([1., 2.]), tapegrad.tensor([1., 1.]))
    (tensor(9.), tensor([ 6., 12.]))
    """
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')
    if strategy == "forward-mode":
        return _hvp_forward_over_reverse(func, inputs, v, create_graph, strict)
    with enable_grad():
        is_inputs_tuple, inputs, v, is_outputs_tuple, outputs, jac = _scalar_and_gradient(
            func, inputs, v, create_graph, strict, "hvp")
        grad_jac = tuple(_zeros_like(x, True) for x in inputs)
        double_back = _autograd_grad(jac, inputs, grad_jac, create_graph=True)
        _check_requires_grad(jac, "hessian", strict=strict)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        res = _fill_in_zeros(_autograd_grad(double_back, grad_jac, v, create_graph=create_graph), inputs, strict,
                             create_graph, "double_back_trick")
    return (_tuple_postprocess(_grad_postprocess(outputs, create_graph), is_outputs_tuple),
            _tuple_postprocess(_grad_postprocess(res, create_graph), is_inputs_tuple))


def _hvp_forward_over_reverse(func, inputs, v, create_graph, strict):
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hvp")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        v = _v_or_scalar(v, inputs, is_inputs_tuple, create_graph, "hvp", "the input to the user-provided function")
        if v is None:
            v = (Tensor._make(np.ones(inputs[0]._array.shape, inputs[0]._array.dtype)),)
        level = fwAD.DualLevel()           # (its own level: usable inside a user's dual_level too)
        with level:
            duals = tuple(x.view_as(x) for x in inputs)
            for d, t in zip(duals, v):
                level.set_tangent(d, t)
            outputs = func(*duals)
            is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function", "hvp")
            _check_requires_grad(outputs, "outputs", strict=strict)
            _single_output(outputs, is_outputs_tuple, "hvp")
            jac = _autograd_grad(outputs, duals, create_graph=True)
            _check_requires_grad(jac, "jacobian", strict=strict)
            tangents = [None if g is None else level.tangent(g) for g in jac]
        res = _fill_in_zeros(tangents, inputs, strict, create_graph, "double_back")
        if not create_graph:
            outputs = tuple(o.detach() for o in outputs)
            res = tuple(r.detach() for r in res)
    return _tuple_postprocess(outputs, is_outputs_tuple), _tuple_postprocess(res, is_inputs_tuple)
