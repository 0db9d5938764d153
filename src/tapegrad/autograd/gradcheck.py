"""Finite-difference checks of gradients: ``gradcheck`` (first) and ``gradgradcheck`` (second derivatives).

Same signatures and meaning as PyTorch's: compare the Jacobian that backward computes with central
differences, in float64, element by element. Complex functions are checked as torch checks them: each complex
output is two real ones (its real and its imaginary part), and for a complex input the numerical entry is
d/dx + i d/dy, the gradient torch's convention gives.
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
    return [o for o in _tensors(_as_tuple(func(*inputs))) if o.dtype.is_floating_point or o.dtype.is_complex]


def _parts(outs):
    """The real-valued pieces gradcheck compares: (output index, part) with part 0 for a real output, and 0 (the
    real part) and 1 (the imaginary part) for a complex one."""
    return [(k, p) for k, o in enumerate(outs) for p in _pieces(o)]


def _pieces(o):
    return (0, 1) if o._array.dtype.kind == "c" else (0,)


def _flat_part(o, p):
    a = o._array.reshape(-1)
    if a.dtype.kind == "c":
        a = a.imag if p else a.real
    return a.astype(np.float64)      # (a copy)


def _numerical(func, inputs, diff, eps):
    """J[c][i] (real piece c of the outputs, input i) as arrays of shape (input numel, output numel): central
    differences. For a complex input the entry is d/dx + i d/dy (perturbing the real, then the imaginary part):
    what torch's convention makes backward return for a real-valued piece."""
    from .grad_mode import no_grad
    with no_grad():
        outs = _outputs(func, inputs)
        parts = _parts(outs)
        jac = [[np.zeros((x._array.size, outs[k]._array.size), x._array.dtype if x._array.dtype.kind == "c"
                         else np.float64) for x in diff] for k, _ in parts]
        for i, x in enumerate(diff):
            flat = x._array.reshape(-1)   # a view: editing it edits x (inputs are contiguous copies)
            steps = (eps, eps * 1j) if flat.dtype.kind == "c" else (eps,)
            for j in range(flat.size):
                orig = flat[j].item()
                for h in steps:
                    flat[j] = orig + h     # (each piece copied at once: an output may be a view of the input)
                    plus = [_flat_part(o, p) for o in _outputs(func, inputs) for p in _pieces(o)]
                    flat[j] = orig - h
                    minus = [_flat_part(o, p) for o in _outputs(func, inputs) for p in _pieces(o)]
                    flat[j] = orig
                    for c in range(len(parts)):
                        d = (plus[c] - minus[c]) / (2 * eps)
                        jac[c][i][j] += d if h == eps else 1j * d
    return jac, parts


def _analytical(func, inputs, diff):
    """The same pieces from backward: the gradient of output element m's real part is backward with a seed 1 at m,
    of its imaginary part backward with a seed 1j (torch's convention: Im(y) = Re(-i y) takes the conjugate, i)."""
    from .engine import grad
    from ..tensor import Tensor
    outs = _outputs(func, inputs)
    parts = _parts(outs)
    jac = [[np.zeros((x._array.size, outs[k]._array.size), x._array.dtype if x._array.dtype.kind == "c"
                     else np.float64) for x in diff] for k, _ in parts]
    for c, (k, p) in enumerate(parts):
        o = outs[k]
        if not o._rg:
            continue
        for m in range(o._array.size):
            g = np.zeros(o._array.size, o._array.dtype)
            g[m] = 1j if p else 1
            gs = grad([o], diff, [Tensor._make(g.reshape(o._array.shape))], retain_graph=True, allow_unused=True)
            for i, gi in enumerate(gs):
                if gi is not None:
                    if gi._array.shape != diff[i]._array.shape:
                        raise GradcheckError(f"Gradient has incorrect size: {gi.shape} vs {diff[i].shape}")
                    jac[c][i][:, m] = gi._array.reshape(-1)
    return jac


def _forward(func, inputs, diff, parts):
    """The same pieces by forward mode: input ``i``'s element ``j`` given tangent 1 (and ``1j`` for a complex input,
    the entry then d/dx + i d/dy as the numerical one), every other input tangent zero; the column is the outputs'
    tangents."""
    from . import forward_ad as fw
    from ..tensor import Tensor
    jac = None
    for i, x in enumerate(diff):
        steps = (1, 1j) if x._array.dtype.kind == "c" else (1,)
        for j in range(x._array.size):
            for h in steps:
                with fw.dual_level():
                    duals = {}
                    for k, y in enumerate(diff):
                        t = np.zeros(y._array.size, y._array.dtype)
                        if k == i:
                            t[j] = h
                        duals[id(y)] = fw.make_dual(y, Tensor._make(t.reshape(y._array.shape)))
                    args = tuple(duals.get(id(a), a) if isinstance(a, Tensor) else a for a in inputs)
                    outs = _outputs(func, args)
                    tans = [fw.unpack_dual(o).tangent for o in outs]
                    tans = [np.zeros(o._array.shape, o._array.dtype) if t is None else t._array
                            for o, t in zip(outs, tans)]
                if jac is None:
                    jac = [[np.zeros((y._array.size, outs[k]._array.size), y._array.dtype if y._array.dtype.kind
                                     == "c" else np.float64) for y in diff] for k, _ in parts]
                for c, (k, p) in enumerate(parts):
                    col = _flat_part(Tensor._make(np.asarray(tans[k])), p)
                    jac[c][i][j] += col if h == 1 else 1j * col
    return jac


_NOT_REENTRANT = (
    "Backward is not reentrant, i.e., running backward with same input and grad_output multiple times gives "
    "different values, although analytical gradient matches numerical gradient.The tolerance for nondeterminism "
    "was {}.\n\nNOTE: If your op relies on non-deterministic operations i.e., it is listed here:\n"
    "https://pytorch.org/docs/stable/generated/torch.use_deterministic_algorithms.html\nthis failure might be "
    "expected.\n\nIf you are adding a new operator, please file an issue and then use one of the\nworkarounds. The "
    "workaround depends on how your test invokes gradcheck/gradgradcheck.\nIf the test\n- manually invokes "
    "gradcheck/gradgradcheck, then call gradcheck/gradgradcheck\n  with `nondet_tol=<tol>` as a keyword argument.\n"
    "- is OpInfo-based (e.g., in test_ops_gradients.py), then modify the OpInfo for the test\n  to have "
    "`gradcheck_nondet_tol=<tol>`.\n- is a Module test (e.g., in common_nn.py), then modify the corresponding\n  "
    "module_test entry to have `gradcheck_nondet_tol=<tol>`\n")


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True, nondet_tol=0.0,
              check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
              check_batched_forward_grad=False, check_forward_ad=False, check_backward_ad=True, fast_mode=False,
              masked=None):
    """True when ``func``'s backward agrees with finite differences at ``inputs`` (use float64 inputs).

    >>> x = tapegrad.randn(3, dtype=tapegrad.float64, requires_grad=True)
    >>> tapegrad.autograd.gradcheck(tapegrad.tanh, (x,))
    True
    """
    inputs = _as_tuple(inputs)
    diff = [t for t in _tensors(inputs) if t._rg]
    for i, t in enumerate(_tensors(inputs)):    # (raised whatever raise_exception says, as torch)
        if t._rg and t._array.size and any(st == 0 and n > 1 for st, n in zip(t._array.strides, t._array.shape)):
            raise RuntimeError(f"The {i}th input has a dimension with stride 0. gradcheck only supports inputs that "
                               "are non-overlapping to be able to compute the numerical gradients correctly. You "
                               "should call .contiguous on the input before passing it to gradcheck.")
    for i, t in enumerate(diff):
        if t.dtype.name not in ("float64", "complex128"):
            warnings.warn(f"Input #{i} requires gradient and is not a double precision floating point or complex. "
                          "This check will likely fail if all the inputs are not of double precision floating "
                          "point or complex. ", UserWarning, stacklevel=2)
        if not t._array.flags.c_contiguous or not t._array.flags.writeable:
            t._array = np.ascontiguousarray(t._array).copy()
    if not diff:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but none of the them "
                         "have requires_grad=True.")
    num, parts = _numerical(func, inputs, diff, eps)
    # as torch, only the outputs that require grad are checked, numbered among themselves; with none, every finite
    # difference must be zero (an output computed through .item() or .detach() has no gradient to compare)
    rg = [o._rg for o in _outputs(func, inputs)]
    if len(rg) != len(num_outs := {k for k, _ in parts}):
        raise GradcheckError(f"the function gave {len(num_outs)} floating outputs under no_grad (finite "
                             f"differences) and {len(rg)} with grad mode on")
    if not any(rg):
        if any(np.any(j != 0) for per_input in num for j in per_input):
            if raise_exception:
                raise GradcheckError("Numerical gradient for function expected to be zero")
            return False
        return True
    checks = []
    if check_backward_ad:
        ana = _analytical(func, inputs, diff)
        # backward run twice must agree (to nondet_tol): torch's reentrancy check
        if not all(np.allclose(a, b, rtol=0, atol=nondet_tol) for per_a, per_b in
                   zip(ana, _analytical(func, inputs, diff)) for a, b in zip(per_a, per_b)):
            if raise_exception:
                raise GradcheckError(_NOT_REENTRANT.format(nondet_tol))
            return False
        checks.append(("", ana))
    if check_forward_ad:
        checks.append(("computed with forward mode ", _forward(func, inputs, diff, parts) or []))
    complex_out = any(p for _, p in parts)
    for mode, ana in checks:
        if len(num) != len(ana):     # (both sides must see the same outputs, or the comparison proves nothing)
            raise GradcheckError(f"the function gave {len(num)} floating outputs under no_grad (finite "
                                 f"differences) and {len(ana)} {'by forward mode' if mode else 'with grad mode on'}")
        kept = [(c, sum(rg[:k]), p) for c, (k, p) in enumerate(parts) if rg[k]]   # (k: among those checked)
        for c, k, p in kept:
            for i in range(len(diff)):
                n, a = num[c][i], ana[c][i]
                if not np.allclose(a, n, rtol=rtol, atol=atol, equal_nan=True):
                    if raise_exception:
                        which = ("While considering the imaginary part of complex outputs only, " if p else
                                 "While considering the real part of complex outputs only, " if complex_out else "")
                        raise GradcheckError(f"{which}Jacobian {mode}mismatch for output {k} with respect to input {i},"
                                             f"\nnumerical:{n}\nanalytical:{a}\n")
                    return False
    return True


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3, gen_non_contig_grad_outputs=False,
                  raise_exception=True, nondet_tol=0.0, check_undefined_grad=True, check_grad_dtypes=False,
                  check_batched_grad=False, check_fwd_over_rev=False, check_rev_over_rev=True, fast_mode=False,
                  masked=False):
    """True when the second derivatives of ``func`` (backward of backward) agree with finite differences."""
    from .engine import grad
    from .grad_mode import enable_grad
    inputs = _as_tuple(inputs)
    if grad_outputs is None:     # (drawn as torch draws them: from the global generator, uniform in [-1, 1))
        from ..testing import make_tensor
        grad_outputs = [make_tensor(tuple(o.shape), dtype=o.dtype, device="cpu", low=-1, high=1, requires_grad=True,
                                    noncontiguous=gen_non_contig_grad_outputs) for o in _outputs(func, inputs)]
    grad_outputs = list(_as_tuple(grad_outputs))
    n_in = len(inputs)

    def first_grad(*args):
        ins, gos = args[:n_in], args[n_in:]
        with enable_grad():     # (the finite differences call this under no_grad: it needs its graph all the same)
            pairs = [(o, g) for o, g in zip(_outputs(func, ins), gos) if o._rg]   # (a grad_output per output)
            d = [t for t in _tensors(ins) if t._rg]
            gs = grad([o for o, _ in pairs], d, [g for _, g in pairs], create_graph=True, allow_unused=True)
        return tuple(g for g in gs if g is not None)

    return gradcheck(first_grad, tuple(inputs) + tuple(grad_outputs), eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, nondet_tol=nondet_tol, check_forward_ad=check_fwd_over_rev,
                     check_backward_ad=check_rev_over_rev)
