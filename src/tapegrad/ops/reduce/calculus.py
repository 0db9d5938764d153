# ruff: noqa: A002 - torch's argument name (input)
"""Differences, derivatives and integrals of sampled data: diff, gradient, trapezoid / trapz,
cumulative_trapezoid, and the scan logcumsumexp.

diff, gradient and the trapezoid rules are compositions of slicing, arithmetic, sums and cat, as torch's, so
their gradients (to any order) come from those ops; logcumsumexp has its own node with torch's stable
backward (itself written with logcumsumexp, so double backward works).
"""

from __future__ import annotations

import numpy as np

from ... import _dtype
from ...autograd.function import _active
from .._util import Primitive, Tensor, bind, capturing, cj, normalize_dim, normalize_dims
from ._common import _write_out


def _cat(tensors, dim):
    from ..shape.split_join import cat
    return cat(tensors, dim)


def _need_tensor(op, name, pos, v):
    if not isinstance(v, Tensor):
        raise TypeError(f"{op}(): argument '{name}' (position {pos}) must be Tensor, not {type(v).__name__}")


# --- diff ---------------------------------------------------------------------------------------------------------
def diff(input, n=1, dim=-1, prepend=None, append=None, *, out=None):
    """The ``n``-th forward difference along ``dim`` (``out[i] = input[i + 1] - input[i]``), after joining
    ``prepend`` and ``append`` to the input along that dim; bool inputs give their XOR.

    >>> tapegrad.diff(tapegrad.tensor([1, 4, 9, 16]))
    tensor([3, 5, 7])
    """
    _need_tensor("diff", "input", 1, input)
    nd = input._array.ndim
    if nd == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    d = normalize_dim(dim, nd)
    if n == 0:                     # a copy (CopyBackwards, as torch's); prepend and append are not even joined
        if _active[0] and capturing():    # (compile's capture: the copy as one op, its replay makes it)
            return _write_out("diff", input.clone(), out)
        return _write_out("diff", Tensor._make(np.empty_like(input._array)).copy_(input), out)
    parts = [input]
    for name, t in (("prepend", prepend), ("append", append)):
        if t is None:
            continue
        if not isinstance(t, Tensor):
            raise TypeError(f"diff(): argument '{name}' must be Tensor, not {type(t).__name__}")
        if t._array.ndim != nd:
            raise RuntimeError("diff expects prepend or append to be the same dimension as input")
        for k in range(nd):
            if k != d and t._array.shape[k] != input._array.shape[k]:
                raise RuntimeError(
                    "diff expects the shape of tensor to prepend or append to match that of input except along "
                    f"the differencing dimension; input.size({k}) = {input._array.shape[k]}, but got "
                    f"tensor.size({k}) = {t._array.shape[k]}")
        parts.insert(0 if name == "prepend" else len(parts), t)
    x = _cat(parts, d) if len(parts) > 1 else input
    for _ in range(n):
        size = x._array.shape[d]
        if size == 0:
            break
        hi, lo = x.narrow(d, 1, size - 1), x.narrow(d, 0, size - 1)
        x = hi.logical_xor(lo) if x.dtype is _dtype.bool else hi - lo
    return _write_out("diff", x, out)


# --- gradient -----------------------------------------------------------------------------------------------------
def _along(v, d, nd):
    """A 1-d tensor shaped to broadcast along dim ``d`` of an ``nd``-dim tensor."""
    shape = [1] * nd
    shape[d] = -1
    return v.reshape(shape)


def _uniform_gradient(x, d, h, edge_order):
    n = x._array.shape[d]
    interior = (x.narrow(d, 2, n - 2) - x.narrow(d, 0, n - 2)) / (2 * h)
    x0, x1, xl, xm = x.narrow(d, 0, 1), x.narrow(d, 1, 1), x.narrow(d, n - 1, 1), x.narrow(d, n - 2, 1)
    if edge_order == 1:
        first, last = (x1 - x0) / h, (xl - xm) / h
    else:
        x2, xk = x.narrow(d, 2, 1), x.narrow(d, n - 3, 1)
        first = (-1.5 * x0 + 2 * x1 - 0.5 * x2) / h
        last = (0.5 * xk - 2 * xm + 1.5 * xl) / h
    return _cat([first, interior, last], d)


def _coordinate_gradient(x, d, coords, edge_order):
    n, nd = x._array.shape[d], x._array.ndim
    dx = coords.diff()
    dx1, dx2 = dx.narrow(0, 0, n - 2), dx.narrow(0, 1, n - 2)
    a = -dx2 / (dx1 * (dx1 + dx2))
    b = (dx2 - dx1) / (dx1 * dx2)
    c = dx1 / (dx2 * (dx1 + dx2))
    interior = (_along(a, d, nd) * x.narrow(d, 0, n - 2) + _along(b, d, nd) * x.narrow(d, 1, n - 2)
                + _along(c, d, nd) * x.narrow(d, 2, n - 2))
    x0, x1, xl, xm = x.narrow(d, 0, 1), x.narrow(d, 1, 1), x.narrow(d, n - 1, 1), x.narrow(d, n - 2, 1)
    if edge_order == 1:
        first, last = (x1 - x0) / dx[0], (xl - xm) / dx[-1]
    else:
        h1, h2 = dx[0], dx[1]
        x2 = x.narrow(d, 2, 1)
        first = (-(2 * h1 + h2) / (h1 * (h1 + h2)) * x0 + (h1 + h2) / (h1 * h2) * x1
                 - h1 / (h2 * (h1 + h2)) * x2)
        h1, h2 = dx[-2], dx[-1]
        xk = x.narrow(d, n - 3, 1)
        last = (h2 / (h1 * (h1 + h2)) * xk - (h2 + h1) / (h1 * h2) * xm
                + (2 * h2 + h1) / (h2 * (h1 + h2)) * xl)
    return _cat([first, interior, last], d)


def gradient(input, *, spacing=1, dim=None, edge_order=1):
    """Estimates of the derivative of sampled data along each dim (or ``dim``), by central differences inside
    and one-sided differences of order ``edge_order`` (1 or 2) at the ends; ``spacing`` is a number, one
    number per dim, or one 1-d tensor of sample coordinates per dim. Returns a tuple of tensors.

    >>> tapegrad.gradient(tapegrad.tensor([1., 4., 9., 16.]))
    (tensor([3., 4., 6., 7.]),)
    """
    _need_tensor("gradient", "input", 1, input)
    spacing = 1 if spacing is None else spacing
    nd = input._array.ndim
    if dim is None:
        dims = list(range(nd))
    else:        # (in the order given: spacing[k] goes with dim[k])
        dims = [normalize_dim(int(k), nd) for k in ((dim,) if isinstance(dim, (int, np.integer)) else dim)]
        normalize_dims(dims, nd)         # (torch's error for a repeated dim)
    if isinstance(spacing, (list, tuple)):
        if dim is None and len(spacing) != nd:
            raise RuntimeError(
                "torch.gradient expected spacing to be unspecified, a scalar, or a list of length equal to "
                f"'self.dim() = {nd}', since dim argument was not given, but got a list of length {len(spacing)}")
        if dim is not None and len(spacing) != len(dims):
            raise RuntimeError(
                "torch.gradient expected spacing to be unspecified, a scalar or it's spacing and dim arguments to "
                f"have the same length, but got a spacing argument of length {len(spacing)} and a dim argument of "
                f"length {len(dims)}.")
        spacings = list(spacing)
    else:
        spacings = [spacing] * len(dims)
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    for s in spacings:
        if isinstance(s, Tensor) and s._array.ndim != 1:
            raise RuntimeError(f"torch.gradient expected each element of spacing to have one dimension, but got an "
                               f"element with {s._array.ndim} dimensions!")
    for d in dims:
        if input._array.shape[d] < edge_order + 1:
            raise RuntimeError("torch.gradient expected each dimension size to be at least edge_order+1")
    out = []
    for d, s in zip(dims, spacings):
        if isinstance(s, Tensor) and s._array.ndim == 1:
            out.append(_coordinate_gradient(input, d, s, edge_order))
        else:
            h = s.item() if isinstance(s, Tensor) else s
            out.append(_uniform_gradient(input, d, h, edge_order))
    return tuple(out)


# --- trapezoid rules ----------------------------------------------------------------------------------------------
def _trapezoid_args(op, y, x, dx, dim):
    _need_tensor(op, "y", 1, y)
    if x is not None and (dx is not None or not isinstance(x, Tensor)):
        got = ", ".join(["Tensor", type(x).__name__ if not isinstance(x, Tensor) else "Tensor"]
                        + ([f"dx={type(dx).__name__}"] if dx is not None else []))
        raise TypeError(f"{op}() received an invalid combination of arguments - got ({got}), but expected one of:\n"
                        f" * (Tensor y, Tensor x, *, int dim = -1)\n"
                        f" * (Tensor y, *, Number dx = 1, int dim = -1)\n")
    if y.dtype is _dtype.bool:
        raise RuntimeError(f"{op}: received a bool input for `y`, but bool is not supported")
    if x is not None and x.dtype is _dtype.bool:
        raise RuntimeError(f"{op}: received a bool input for `x`, but bool is not supported")
    if y._array.ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    d = normalize_dim(dim, y._array.ndim)
    if x is None:
        return d, None, (1 if dx is None else (dx.item() if isinstance(dx, Tensor) else dx))
    if x._array.ndim == 1:
        if x._array.shape[0] != y._array.shape[d]:
            raise RuntimeError(f"{op}: There must be one `x` value for each sample point")
        return d, _along(x.diff(), d, y._array.ndim), None
    return d, x.diff(dim=dim), None


def _pairs(y, d):
    """``y[1:] + y[:-1]`` along dim d."""
    n = y._array.shape[d]
    return y.narrow(d, 1, n - 1) + y.narrow(d, 0, n - 1)


def trapezoid(y, x=None, *, dx=None, dim=-1):
    """The integral of samples ``y`` along ``dim`` by the trapezoid rule: at coordinates ``x`` (a 1-d tensor, or
    one broadcastable to ``y``), or with spacing ``dx`` (default 1).

    >>> tapegrad.trapezoid(tapegrad.tensor([1., 2., 3.]))
    tensor(4.)
    """
    d, steps, h = _trapezoid_args("trapezoid", y, x, dx, dim)
    if y._array.shape[d] == 0:
        kept = tuple(s for k, s in enumerate(y._array.shape) if k != d)
        dt = _dtype.result_type(y._array, 1.0).np
        return Tensor._make(np.zeros(kept, dt))
    if steps is None:
        n = y._array.shape[d]
        return (y.sum(d) - (y.select(d, 0) + y.select(d, n - 1)) * 0.5) * h
    return (steps * _pairs(y, d)).sum(d) / 2.0


def trapz(y, x=None, *, dx=None, dim=-1):
    """``trapezoid`` (torch's older name).

    >>> tapegrad.trapz(tapegrad.tensor([1., 2., 3.]), dx=2)
    tensor(8.)
    """
    return trapezoid(y, x, dx=dx, dim=dim)


def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    """The running trapezoid-rule integral of ``y`` along ``dim`` (one element fewer than ``y`` there).

    >>> tapegrad.cumulative_trapezoid(tapegrad.tensor([1., 2., 3.]))
    tensor([1.5000, 4.0000])
    """
    d, steps, h = _trapezoid_args("cumulative_trapezoid", y, x, dx, dim)
    if y._array.shape[d] == 0:        # (empty, still connected to y, as torch's)
        return (y.narrow(d, 0, 0) * 0.5).cumsum(d)
    if steps is None:
        return (h / 2.0 * _pairs(y, d)).cumsum(d)
    return (steps * _pairs(y, d)).cumsum(d) / 2.0


# --- logcumsumexp -------------------------------------------------------------------------------------------------
def _logcumsumexp_np(x, d):
    if x.dtype.kind != "c":
        return np.asarray(np.logaddexp.accumulate(x, axis=d), x.dtype)
    from ..elementwise.extra import _logaddexp_np
    xm = np.moveaxis(x, d, -1)
    out = np.empty_like(xm)
    acc = None
    for k in range(xm.shape[-1]):
        acc = xm[..., k] if acc is None else _logaddexp_np(acc, xm[..., k], False)
        out[..., k] = acc
    return np.moveaxis(out, -1, d)


class Logcumsumexp(Primitive):
    """``log(cumsum(exp(x)))`` along a dim, without overflow."""

    @staticmethod
    def jvp(ctx, t, _):
        """``cumsum(exp(x - m) * t) / cumsum(exp(x - m))`` with ``m`` the max along d (a constant), 0 where the
        denominator underflows below 1e-13 (torch's rule)."""
        x, d = ctx.inputs
        if t is None or d is None or x._array.size == 0:
            return t
        m = (x.real if x.is_complex() else x).detach().amax(d, keepdim=True)    # (ops, not arrays: under a
        m = m.where(m.isfinite(), 0.0).to(x.dtype)                              #  vmap, each sample's own)
        w = (x - m).exp()
        den = w.cumsum(d)
        small = den.abs() < 1e-13
        return (w * t).cumsum(d).where(small.logical_not(), 0.0) / den

    @staticmethod
    def forward(ctx, x, d):
        if x.dtype.kind not in "fc":
            raise NotImplementedError(f'"logcumsumexp_out_cpu" not implemented for '
                                      f"'{_dtype.from_numpy_dtype(x.dtype)._legacy}'")
        ctx.d = d
        ctx.save_result(0)
        if x.dtype.kind == "c":
            ctx._cplx = True
        if d is None or x.size == 0:
            return x.copy()
        return _logcumsumexp_np(x, d)

    @staticmethod
    def backward(ctx, grad):
        result, x = ctx.saved_tensors
        d = ctx.d
        if d is None or x._array.size == 0:
            return grad, None
        if ctx._cplx:    # sum over j >= i of grad_j * conj(exp(x_i - out_j))
            w = (cj(x).unsqueeze(d + 1) - cj(result).unsqueeze(d)).exp()
            n = x._array.shape[d]
            upper = np.triu(np.ones((n, n), bool)).reshape((n, n) + (1,) * (x._array.ndim - d - 1))
            return (w * grad.unsqueeze(d) * Tensor._make(upper)).sum(d + 1), None
        # torch's stable form: the positive and negative parts of grad summed in log space, backwards along d; the
        # parts' empty places hold the lowest finite float (not -inf, whose differences would be NaN)
        lowest = float(np.finfo(grad._array.dtype).min)
        log_abs = grad.abs().log()
        log_pos = log_abs.where(grad > 0, lowest)     # (comparisons as ops: a batched grad's every sample)
        log_neg = log_abs.where(grad < 0, lowest)

        def rev_lcse(t):
            return logcumsumexp(t.flip(d), d).flip(d)

        return (rev_lcse(log_pos - result) + x).exp() - (rev_lcse(log_neg - result) + x).exp(), None


def logcumsumexp(input, dim, *, out=None):
    """``log(cumsum(exp(input), dim))``, computed stably.

    >>> tapegrad.logcumsumexp(tapegrad.tensor([0., 0.]), 0)
    tensor([0.0000, 0.6931])
    """
    _need_tensor("logcumsumexp", "input", 1, input)
    d = normalize_dim(dim, input._array.ndim)
    if input._array.ndim == 0:
        d = None
    return _write_out("logcumsumexp", Logcumsumexp.apply(input, d), out, dtype="same",
                      error="expected scalar_type {r} but found {o}")


bind(diff=diff, logcumsumexp=logcumsumexp)
