"""Finite-difference checks of gradients: ``gradcheck`` (first) and ``gradgradcheck`` (second derivatives).

Same signatures and meaning as PyTorch's: compare the Jacobian that backward computes with central
differences, in float64, element by element.
"""

from __future__ import annotations

import warnings

import numpy as np

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError"]


class GradcheckError(RuntimeError):
    """Raised by gradcheck when the analytical and numerical Jacobians differ."""


def _tensors(x):
    from ..tensor import Tensor
    if isinstance(x, Tensor):
        return [x]
    return [t for t in x if isinstance(t, Tensor)]


def _as_tuple(x):
    return x if isinstance(x, tuple) else tuple(x) if isinstance(x, list) else (x,)


def _outputs(func, inputs):
    return [o for o in _tensors(_as_tuple(func(*inputs))) if o.dtype.is_floating_point]


def _numerical(func, inputs, diff, eps):
    """J[k][i] (output k, input i) as arrays of shape (input numel, output numel)."""
    from .grad_mode import no_grad
    with no_grad():
        outs = _outputs(func, inputs)
        jac = [[np.zeros((x._array.size, o._array.size)) for x in diff] for o in outs]
        for i, x in enumerate(diff):
            flat = x._array.reshape(-1)   # a view: editing it edits x (inputs are contiguous copies)
            for j in range(flat.size):
                orig = flat[j].item()
                flat[j] = orig + eps
                plus = [o._array.astype(np.float64).reshape(-1).copy() for o in _outputs(func, inputs)]
                flat[j] = orig - eps
                minus = [o._array.astype(np.float64).reshape(-1).copy() for o in _outputs(func, inputs)]
                flat[j] = orig
                for k in range(len(outs)):
                    jac[k][i][j] = (plus[k] - minus[k]) / (2 * eps)
    return jac


def _analytical(func, inputs, diff):
    from .engine import grad
    from ..tensor import Tensor
    outs = _outputs(func, inputs)
    jac = [[np.zeros((x._array.size, o._array.size)) for x in diff] for o in outs]
    for k, o in enumerate(outs):
        if not o._rg:
            continue
        for m in range(o._array.size):
            g = np.zeros(o._array.size, o._array.dtype)
            g[m] = 1
            gs = grad([o], diff, [Tensor._make(g.reshape(o._array.shape))], retain_graph=True, allow_unused=True)
            for i, gi in enumerate(gs):
                if gi is not None:
                    if gi._array.shape != diff[i]._array.shape:
                        raise GradcheckError(f"Gradient has incorrect size: {gi.shape} vs {diff[i].shape}")
                    jac[k][i][:, m] = gi._array.reshape(-1)
    return jac


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True, nondet_tol=0.0,
              check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
              check_backward_ad=True, fast_mode=False, masked=None):
    """True when ``func``'s backward agrees with finite differences at ``inputs`` (use float64 inputs).

    >>> x = tapegrad.randn(3, dtype=tapegrad.float64, requires_grad=True)
    >>> tapegrad.autograd.gradcheck(tapegrad.tanh, (x,))
    True
    """
    inputs = _as_tuple(inputs)
    diff = [t for t in _tensors(inputs) if t._rg]
    for i, t in enumerate(diff):
        if t.dtype.name != "float64":
            warnings.warn(f"Input #{i} requires gradient and is not a double precision floating point. This check "
                          "will likely fail if all the inputs are not of double precision floating point. ",
                          UserWarning, stacklevel=2)
        if not t._array.flags.c_contiguous or not t._array.flags.writeable:
            t._array = np.ascontiguousarray(t._array).copy()
    if not diff:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but none of the them "
                         "have requires_grad=True.")
    num = _numerical(func, inputs, diff, eps)
    ana = _analytical(func, inputs, diff)
    if len(num) != len(ana):     # (both sides must see the same outputs, or the comparison below proves nothing)
        raise GradcheckError(f"the function gave {len(num)} floating outputs under no_grad (finite differences) "
                             f"and {len(ana)} with grad mode on")
    for k in range(len(num)):
        for i in range(len(diff)):
            n, a = num[k][i], ana[k][i]
            if not np.allclose(a, n, rtol=rtol, atol=atol, equal_nan=True):
                if raise_exception:
                    raise GradcheckError(f"Jacobian mismatch for output {k} with respect to input {i},\n"
                                         f"numerical:{n}\nanalytical:{a}\n")
                return False
    return True


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3, gen_non_contig_grad_outputs=False,
                  raise_exception=True, nondet_tol=0.0, check_undefined_grad=True, check_grad_dtypes=False,
                  check_batched_grad=False, check_fwd_over_rev=False, check_rev_over_rev=True, fast_mode=False,
                  masked=False):
    """True when the second derivatives of ``func`` (backward of backward) agree with finite differences."""
    from .engine import grad
    from .grad_mode import enable_grad
    from ..tensor import Tensor
    inputs = _as_tuple(inputs)
    if grad_outputs is None:
        rng = np.random.default_rng(0)
        outs = _outputs(func, inputs)
        grad_outputs = [Tensor._make(rng.standard_normal(o._array.shape).astype(o._array.dtype)) for o in outs]
        for g in grad_outputs:
            g.requires_grad_()
    grad_outputs = list(_as_tuple(grad_outputs))
    n_in = len(inputs)

    def first_grad(*args):
        ins, gos = args[:n_in], args[n_in:]
        with enable_grad():     # (the finite differences call this under no_grad: it needs its graph all the same)
            outs = [o for o in _outputs(func, ins) if o._rg]
            d = [t for t in _tensors(ins) if t._rg]
            gs = grad(outs, d, list(gos)[:len(outs)], create_graph=True, allow_unused=True)
        return tuple(g for g in gs if g is not None)

    return gradcheck(first_grad, tuple(inputs) + tuple(grad_outputs), eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception)
