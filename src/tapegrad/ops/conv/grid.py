# ruff: noqa: A001, A002 - torch's argument name (input)
"""Sampling an input at arbitrary points: ``affine_grid`` (the sampling grid of an affine map) and
``grid_sample`` (bilinear / nearest / bicubic sampling at a grid, 4-D and 5-D, zeros / border / reflection
padding) — spatial transformer networks, optical-flow warping.

How ``grid_sample`` is computed: every output point reads a few input positions ("taps": 2 per axis for linear,
1 for nearest, 4 for cubic) with weights that are products of per-axis 1-D weights of the point's fractional
coordinate. The forward gathers the taps (NumPy). The backward is written in tapegrad ops of the output gradient,
the input and the grid (a scatter of ``g * weight`` into the input's positions; for the grid, the gathered values
times the derivative of the weights), so derivatives of every order exist, as in torch.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from .._util import Primitive, Tensor, mT, op_error, shape_str
from ._common import _GatherPlanes, _ScatterPlanes
from .._util import autocast_listed

_CUBIC_A = -0.75          # the cubic convolution kernel's parameter torch uses (as in bicubic interpolate)


# --- affine_grid -------------------------------------------------------------------------------------------------
def _linspace_from_neg_one(n, align_corners, dtype):
    """torch's base coordinates along one axis: ``linspace(-1, 1, n)`` (scaled by ``(n - 1) / n`` unless
    ``align_corners``), computed in ``dtype`` with torch's symmetric linspace formula; 0 for a single step."""
    if n <= 1:
        return np.zeros(max(n, 1), dtype)[:n] if n == 0 else np.zeros(1, dtype)
    one = dtype.type(1)
    step = (one + one) / dtype.type(n - 1)
    i = np.arange(n)
    half = n // 2
    r = np.where(i < half, -one + step * i.astype(dtype), one - step * (n - 1 - i).astype(dtype)).astype(dtype)
    if not align_corners:
        r = (r * dtype.type(n - 1)) / dtype.type(n)
    return r


class AffineGridGenerator(Primitive):
    """``grid[n, ...] = theta[n] @ [x, y(, z), 1]`` over the base coordinates; its backward is the transposed
    product (linear in the gradient)."""

    array_backward = True

    @staticmethod
    def forward(ctx, theta, base, spatial):
        ctx.base = base                                             # (P, d + 1), a constant
        N, d = theta.shape[0], theta.shape[1]
        out = np.matmul(base[None], np.swapaxes(theta, 1, 2))       # (N, P, d)
        return out.reshape((N,) + tuple(spatial) + (d,))

    @staticmethod
    def backward(ctx, grad):
        N, d = grad.shape[0], grad.shape[-1]
        base = ctx.base if grad.__class__ is not Tensor else Tensor._make(ctx.base)
        g = grad.reshape((N, math.prod(grad.shape[1:-1]), d))
        return mT(g) @ base, None, None


def affine_grid(theta, size, align_corners=None):
    """The sampling grid of a batch of affine maps, for ``grid_sample``: ``theta`` ``(N, 2, 3)`` and ``size``
    ``(N, C, H, W)`` give ``(N, H, W, 2)``; ``(N, 3, 4)`` and ``(N, C, D, H, W)`` give ``(N, D, H, W, 3)``. The
    last coordinate is x (the width axis), in [-1, 1].

    >>> F.affine_grid(tapegrad.tensor([[[1., 0., 0.], [0., 1., 0.]]]), (1, 1, 2, 2), align_corners=True)[0]
    tensor([[[-1., -1.],
             [ 1., -1.]],
    <BLANKLINE>
            [[-1.,  1.],
             [ 1.,  1.]]])
    """
    if align_corners is None:
        warnings.warn("Default grid_sample and affine_grid behavior has changed to align_corners=False since "
                      "1.3.0. Please specify align_corners=True if the old behavior is desired. See the "
                      "documentation of grid_sample for details.", stacklevel=2)
        align_corners = False
    if not theta.is_floating_point():
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    size = tuple(int(s) for s in size)
    if len(size) == 4:
        if theta.ndim != 3 or tuple(theta.shape[-2:]) != (2, 3):
            raise ValueError(f"Expected a batch of 2D affine matrices of shape Nx2x3 for size {size}. Got "
                             f"{theta.shape}.")
        spatial = size[-2:]
    elif len(size) == 5:
        if theta.ndim != 3 or tuple(theta.shape[-2:]) != (3, 4):
            raise ValueError(f"Expected a batch of 3D affine matrices of shape Nx3x4 for size {size}. Got "
                             f"{theta.shape}.")
        spatial = size[-3:]
    else:
        raise NotImplementedError(f"affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, "
                                  f"respectively. Got size {size}.")
    if align_corners and min(spatial) == 1:
        warnings.warn("Since version 1.3.0, affine_grid behavior has changed for unit-size grids when "
                      "align_corners=True. This is not an intended use case of affine_grid. See the documentation "
                      "of affine_grid for details.", stacklevel=2)
    elif min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    if theta.shape[0] != size[0]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{size[0]}, "
                           f"{theta.shape[2]}] but got: [{theta.shape[0]}, {theta.shape[2]}].")
    dt = theta._array.dtype
    axes = [_linspace_from_neg_one(n, align_corners, dt) for n in reversed(spatial)]     # x (width) first
    mesh = np.meshgrid(*reversed(axes), indexing="ij")                                  # (D,) H, W order
    coords = [m.reshape(-1) for m in reversed(mesh)] + [np.ones(math.prod(spatial), dt)]
    base = np.stack(coords, axis=1)                                                       # (P, d + 1)
    return AffineGridGenerator.apply(theta, base, spatial)


# --- grid_sample: the per-axis taps ------------------------------------------------------------------------------
def _unnormalize(coord, size, align_corners):
    """Grid coordinates in [-1, 1] to input positions (arrays or Tensors alike, torch's arithmetic)."""
    if align_corners:
        return ((coord + 1) / 2) * (size - 1)
    return ((coord + 1) * size - 1) / 2


def _reflect(x, twice_low, twice_high):
    """Reflect ``x`` into ``[twice_low / 2, twice_high / 2]``; also the derivative's sign (torch's formula)."""
    if twice_low == twice_high:
        return np.zeros_like(x), np.zeros_like(x)
    lo = twice_low / 2
    span = (twice_high - twice_low) / 2
    d = x - lo
    sign = np.where(d < 0, -1, 1).astype(x.dtype)
    d = np.abs(d)
    extra = np.fmod(d, span)
    even = np.floor(d / span) % 2 == 0
    return np.where(even, extra + lo, span - extra + lo).astype(x.dtype), np.where(even, sign, -sign)


def _pad_coord(x, size, padding, align_corners):
    """The padded source position of ``x`` and its derivative factor (0 where clipped), torch's rules."""
    if padding == "zeros":
        return x, np.ones_like(x)
    slope = np.ones_like(x)
    if padding == "reflection":
        x, slope = _reflect(x, 0, 2 * (size - 1)) if align_corners else _reflect(x, -1, 2 * size - 1)
    clipped = (x <= 0) | (x >= size - 1)
    x = np.minimum(np.maximum(x, x.dtype.type(0)), x.dtype.type(size - 1))
    return x, np.where(clipped, 0, slope).astype(x.dtype)


def _linear_w(c, c0):
    """The two linear weights of position ``c`` between ``c0`` and ``c0 + 1`` (torch's forms), their slopes."""
    return [(c0 + 1) - c, c - c0], [-1.0, 1.0]


def _cubic_w(c, c0):
    """The four cubic-convolution weights of ``t = c - c0`` for taps ``c0 - 1 .. c0 + 2``, and their slopes."""
    A = _CUBIC_A
    t = c - c0

    def near(x):
        return ((A + 2) * x - (A + 3)) * x * x + 1

    def far(x):
        return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A

    def d_near(x):
        return (3 * (A + 2) * x - 2 * (A + 3)) * x

    def d_far(x):
        return (3 * A * x - 10 * A) * x + 8 * A
    w = [far(t + 1), near(t), near(1 - t), far(2 - t)]
    dw = [d_far(t + 1), d_near(t), -d_near(1 - t), -d_far(2 - t)]
    return w, dw


def _nearest_w(c, c0):
    return [1.0], [0.0]


class _Axis:
    """One spatial axis of a sampling: the taps' positions (``idx``, ``valid``), the coordinate's floor ``c0``,
    the derivative factor ``slope`` of the padded coordinate, and the weight rule."""

    def __init__(self, raw, size, mode, padding, align_corners):
        self.size = size
        if mode == "bicubic":       # cubic taps: each tap's integer position is padded, not the coordinate
            self.c = raw
            self.slope = np.ones_like(raw)
            self.c0 = np.floor(raw)
            self.rule = _cubic_w
            taps = []
            for i in range(4):
                p, _ = _pad_coord(self.c0 + (i - 1), size, padding, align_corners)
                taps.append(p)
        else:
            self.c, self.slope = _pad_coord(raw, size, padding, align_corners)
            if mode == "nearest":
                self.c0 = np.rint(self.c)
                self.rule = _nearest_w
                taps = [self.c0]
            else:
                self.c0 = np.floor(self.c)
                self.rule = _linear_w
                taps = [self.c0, self.c0 + 1]
        idx = np.stack(taps, -1)                         # (N, P, k)
        ok = np.isfinite(idx)
        idx = np.where(ok, idx, -1).astype(np.int64)
        self.valid = ok & (idx >= 0) & (idx < size)
        self.idx = np.where(self.valid, idx, 0)


def _outer(per_axis):
    """Combine per-axis tap arrays ``(N, P, k_i)`` (x first) into ``(N, P, prod k)`` (z-major, as the input)."""
    out = None
    for a in reversed(per_axis):                       # z (or y) first: the slowest-varying axis
        out = a if out is None else (out[..., :, None] * a[..., None, :]).reshape(
            tuple(out.shape[:-1]) + (out.shape[-1] * a.shape[-1],))
    return out


def _flat_taps(axes):
    """The taps' flat positions in the input's spatial plane and their validity, ``(N, P, K)``."""
    flat = valid = None
    for a in reversed(axes):                           # row-major: slowest axis (z or y) first
        if flat is None:
            flat, valid = a.idx, a.valid
        else:
            shape = flat.shape[:-1] + (flat.shape[-1] * a.idx.shape[-1],)
            flat = (flat[..., :, None] * a.size + a.idx[..., None, :]).reshape(shape)
            valid = (valid[..., :, None] & a.valid[..., None, :]).reshape(shape)
    return flat, valid


def _weights(axes, cs, c0s):
    """Per-axis lists of 1-D tap weights and of their slopes (arrays, or Tensors when ``cs`` are Tensors)."""
    ws, dws = [], []
    for a, c, c0 in zip(axes, cs, c0s):
        w, dw = a.rule(c, c0)
        ws.append(w)
        dws.append(dw)
    return ws, dws


def _stack(parts, like):
    """Stack 1-D tap weights (arrays, Tensors or numbers) along a new last axis, shaped like ``like``."""
    if like.__class__ is Tensor:
        from ..shape import stack
        parts = [p if p.__class__ is Tensor else Tensor._make(np.full(like.shape, p, like._array.dtype))
                 for p in parts]
        return stack(parts, -1)
    return np.stack([np.broadcast_to(np.asarray(p, like.dtype), like.shape) for p in parts], -1)


class _GridSampler(Primitive):
    """``out[n, c, p] = sum_k W[n, p, k] * input[n, c, tap_k(n, p)]`` (the taps and weights of each grid point)."""

    @staticmethod
    def forward(ctx, x, grid, mode, padding, align_corners):
        N, C = x.shape[:2]
        S = x.shape[2:]
        d = len(S)
        O = grid.shape[1:-1]
        P = math.prod(O)
        g = grid.reshape(N, P, d)
        axes = [_Axis(_unnormalize(g[..., i], S[d - 1 - i], align_corners), S[d - 1 - i], mode, padding,
                      align_corners) for i in range(d)]                  # x (width) first
        flat, valid = _flat_taps(axes)
        ws, _ = _weights(axes, [a.c for a in axes], [a.c0 for a in axes])
        W = _outer([_stack(w, a.c) for w, a in zip(ws, axes)]) * valid
        K = W.shape[-1]
        xs = x.reshape(N, C, math.prod(S))
        taps = np.take_along_axis(xs, np.broadcast_to(flat.reshape(N, 1, P * K), (N, C, P * K)), axis=2)
        out = np.einsum("ncpk,npk->ncp", taps.reshape(N, C, P, K), W.astype(x.dtype, copy=False))
        ctx.axes, ctx.flat, ctx.valid, ctx.align, ctx.S = axes, flat, valid, align_corners, S
        ctx.save_inputs(0, 1)
        return out.reshape((N, C) + tuple(O)).astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        x, grid = ctx.saved_tensors
        axes, flat, valid, S = ctx.axes, ctx.flat, ctx.valid, ctx.S
        N, C = x.shape[:2]
        d = len(S)
        P, K = flat.shape[1], flat.shape[2]
        dt = x._array.dtype
        # the padded coordinates as tapegrad functions of the grid: c = slope * raw + (c - slope * raw), a
        # constant offset, so that values are the forward's and derivatives torch's (0 where clipped)
        g = grid.reshape(N, P, d)
        cs = []
        for i, a in enumerate(axes):
            raw = _unnormalize(g[..., i], a.size, ctx.align)
            slope = Tensor._make(a.slope.astype(dt, copy=False))
            cs.append(raw * slope + Tensor._make((a.c - a.slope * raw._array).astype(dt, copy=False)))
        ws, dws = _weights(axes, cs, [Tensor._make(a.c0.astype(dt, copy=False)) for a in axes])
        w_axes = [_stack(w, c) for w, c in zip(ws, cs)]
        mask = Tensor._make(valid.astype(dt))
        idx = np.broadcast_to(flat.reshape(N, 1, P * K), (N, C, P * K))
        g4 = grad.reshape(N, C, P, 1)
        need = ctx.needs_input_grad
        gx = ggrid = None
        if need[0]:
            W = _outer(w_axes) * mask
            contrib = (g4 * W.reshape(N, 1, P, K)).reshape(N, C, P * K)
            gx = _ScatterPlanes.apply(contrib, idx, (N, C, math.prod(S)), False, 1).reshape(x.shape)
        if need[1]:
            taps = _GatherPlanes.apply(x.reshape(N, C, math.prod(S)), idx, 1).reshape(N, C, P, K)
            s = (taps * g4).sum(1) * mask                                  # (N, P, K)
            parts = []
            for i, (a, c) in enumerate(zip(axes, cs)):
                factors = [_stack(dws[i], c) if j == i else w_axes[j] for j in range(d)]
                scale = (a.size - 1) / 2 if ctx.align else a.size / 2
                slope = Tensor._make((a.slope * scale).astype(dt, copy=False))
                parts.append((s * _outer(factors)).sum(-1) * slope)
            from ..shape import stack
            ggrid = stack(parts, -1).reshape(grid.shape)
        return gx, ggrid, None, None, None


def _sampler_cls(d):
    cls = type(f"GridSampler{d}D", (_GridSampler,), {"node_name": f"GridSampler{d}DBackward0",
                                                     "__doc__": _GridSampler.__doc__})
    return cls


_Sampler = {2: _sampler_cls(2), 3: _sampler_cls(3)}


@autocast_listed("fp32")
def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    """Sample ``input`` ``(N, C, H, W)`` at the points of ``grid`` ``(N, H_out, W_out, 2)`` (x, y in [-1, 1]:
    -1 is the left/top edge) — or ``(N, C, D, H, W)`` at ``(N, D_out, H_out, W_out, 3)``. ``mode``: "bilinear"
    (trilinear in 3-D), "nearest" or "bicubic" (4-D only); ``padding_mode`` for points outside: "zeros",
    "border" or "reflection". Differentiable in both ``input`` and ``grid``.

    >>> img = tapegrad.arange(4.).reshape(1, 1, 2, 2)
    >>> F.grid_sample(img, tapegrad.zeros(1, 1, 1, 2), align_corners=True)     # the centre: the mean
    tensor([[[[1.5000]]]])
    """
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or 'bicubic', "
                         f"but got: '{mode}'")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError(f"nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
                         f"'reflection', but got: '{padding_mode}'")
    if align_corners is None:
        warnings.warn("Default grid_sample and affine_grid behavior has changed to align_corners=False since "
                      "1.3.0. Please specify align_corners=True if the old behavior is desired. See the "
                      "documentation of grid_sample for details.", stacklevel=2)
        align_corners = False
    op = "grid_sampler()"
    xs, gs = shape_str(input.shape), shape_str(grid.shape)
    if input.dtype is not grid.dtype:
        raise RuntimeError(f"expected scalar type {_scalar_name(input)} but found {_scalar_name(grid)}")
    if input.ndim != grid.ndim or input.ndim not in (4, 5):
        if input.ndim in (4, 5) and grid.ndim >= 1 and input.shape[0] != grid.shape[0]:
            raise RuntimeError(f"{op}: expected grid and input to have same batch size, but got input with sizes "
                               f"{xs} and grid with sizes {gs}")
        if input.ndim < 1 or grid.ndim < 1 or input.shape[0] != grid.shape[0]:
            raise RuntimeError(f"{op}: expected grid and input to have same batch size, but got input with sizes "
                               f"{xs} and grid with sizes {gs}")
        raise RuntimeError(f"{op}: expected 4D or 5D input and grid with same number of dimensions, but got input "
                           f"with sizes {xs} and grid with sizes {gs}")
    if input.shape[0] != grid.shape[0]:
        raise RuntimeError(f"{op}: expected grid and input to have same batch size, but got input with sizes {xs} "
                           f"and grid with sizes {gs}")
    d = input.ndim - 2
    if grid.shape[-1] != d:
        raise RuntimeError(f"{op}: expected grid to have size {d} in last dimension, but got grid with sizes {gs}")
    for i in range(2, input.ndim):
        if input.shape[i] == 0:
            raise RuntimeError(f"{op}: expected input to have non-empty spatial dimensions, but input has sizes {xs} "
                               f"with dimension {i} being empty")
    if mode == "bicubic" and d != 2:
        raise RuntimeError(f"{op}: bicubic interpolation only supports 4D input")
    if not input.is_floating_point():
        raise op_error("grid_sample", f"not implemented for '{_scalar_name(input)}'", NotImplementedError)
    return _Sampler[d].apply(input, grid, mode, padding_mode, bool(align_corners))


def _scalar_name(t):
    from ._common import _scalar
    return _scalar(t)


__all__ = ["affine_grid", "grid_sample"]
