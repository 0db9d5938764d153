# ruff: noqa: A001, A002 - torch's argument name (input)
"""Pooling: max pooling (with indices), average pooling, adaptive average and max pooling, max
unpooling, power-average (LP) pooling and fractional max pooling, in 1, 2 and 3 dimensions.
"""

from __future__ import annotations

import math

import numpy as np

from ... import _dtype
from .. import _util
from ...autograd.function import _active
from .._util import Primitive, Tensor, op_error, shape_str, vmap_per_sample
from ._common import (_AxisTaps, _GatherPlanes, _ScatterPlanes, _apply_taps, _int_list, _is_int, _ntuple, _pad_array,
                      _scalar, _taps, _windows)
from .._util import autocast_listed


# --- max pooling --------------------------------------------------------------------------------------------------
def _pool_out_size(size, k, s, p, d, ceil_mode):
    num = size + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)
    out = num // s + 1
    if ceil_mode and (out - 1) * s >= size + p:
        out -= 1
    return out


def _set_where_not(kidx, keep, t):
    """``kidx[~keep] = t`` in place, by arithmetic (``(kidx - t) * keep + t``): branch-free, ~10x faster than a
    masked copy on random data."""
    t = kidx.dtype.type(t)
    kidx -= t
    kidx *= keep
    kidx += t


def _max_pool_tiled(x, d, kernel, O):
    """The common case (windows that tile the input: stride == kernel, no padding, no dilation), fast: the K
    window offsets become a leading axis of one contiguous copy, so the max is K-1 contiguous passes."""
    S = x.shape[x.ndim - d:]
    lead = x.shape[:x.ndim - d]
    nl, K = len(lead), math.prod(kernel)
    crop = x[(Ellipsis,) + tuple(slice(0, O[i] * kernel[i]) for i in range(d))]
    xr = crop.reshape(lead + tuple(v for i in range(d) for v in (O[i], kernel[i])))
    order = [nl + 2 * i + 1 for i in range(d)] + list(range(nl)) + [nl + 2 * i for i in range(d)]
    w = np.ascontiguousarray(xr.transpose(order)).reshape((K,) + lead + tuple(O))
    vals = np.maximum.reduce(w, axis=0)          # a NaN propagates: a NaN wins, as in torch
    nan = x.dtype.kind == "f" and bool(np.isnan(vals).any())
    itype = np.int16 if K < 32768 else np.int64
    kidx = np.full(vals.shape, K - 1, itype)
    for t in range(K - 2, -1, -1):               # downwards, so the first maximum in the window wins
        _set_where_not(kidx, w[t] != vals, t)
    if nan:                                      # torch's kernel takes every NaN it meets: the last one wins
        for t in range(K):
            np.putmask(kidx, np.isnan(w[t]), t)
    # flat per-plane input index: sum_i (o_i * k_i + kc_i) * P_i, with P_i the plane strides
    P = [math.prod(S[i + 1:]) for i in range(d)]
    base = np.zeros(tuple(O), np.int64)
    for i in range(d):
        shape = [1] * d
        shape[i] = O[i]
        base = base + (np.arange(O[i], dtype=np.int64) * (kernel[i] * P[i])).reshape(shape)
    kc = np.unravel_index(np.arange(K), kernel)
    offs = sum(kc[i].astype(np.int64) * P[i] for i in range(d))
    flat = np.take(offs, kidx)                   # (take: faster than offs[kidx])
    flat += base
    return vals, flat


def _max_pool_forward(x, d, kernel, stride, padding, dilation, ceil_mode):
    S = x.shape[x.ndim - d:]
    lead = x.shape[:x.ndim - d]
    O = tuple(_pool_out_size(S[i], kernel[i], stride[i], padding[i], dilation[i], ceil_mode) for i in range(d))
    if (tuple(stride) == tuple(kernel) and not any(padding) and all(v == 1 for v in dilation) and x.size
            and all(O[i] * kernel[i] <= S[i] for i in range(d))):
        return _max_pool_tiled(x, d, kernel, O)
    need = [(O[i] - 1) * stride[i] + dilation[i] * (kernel[i] - 1) + 1 for i in range(d)]
    after = [max(need[i] - S[i] - padding[i], padding[i]) for i in range(d)]
    fill = -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min
    xp = _pad_array(x, padding, after, fill)
    win = _windows(xp, O, kernel, stride, dilation)
    # one vectorised pass per kernel offset (not per pixel); ``>`` keeps the first maximum and a NaN wins, as in torch
    padded = any(padding) or any(after)
    if padded:      # which window elements are real: a padding element never wins (torch looks at real ones only)
        real = _windows(_pad_array(np.ones(S, bool), padding, after, False), O, kernel, stride, dilation)
    vals = kidx = None
    itype = np.int16 if math.prod(kernel) < 32768 else np.int64
    for t, k in enumerate(np.ndindex(*kernel)):
        v = win[(Ellipsis,) + k]
        if vals is None:
            vals, kidx = v.copy(), np.zeros(v.shape, dtype=itype)
            if padded:
                chosen_real = np.broadcast_to(real[(Ellipsis,) + k], v.shape).copy()
            continue
        m = v > vals
        if x.dtype.kind == "f":
            m |= np.isnan(v)
        if padded:
            m |= real[(Ellipsis,) + k] & ~chosen_real     # a real element beats a padding one, whatever its value
            chosen_real |= m                              # (what wins is always real: padding cannot be > or NaN)
        np.copyto(vals, v, where=m)              # (exact: np.maximum may take +0.0 over an earlier -0.0)
        _set_where_not(kidx, ~m, t)
    # flat per-plane input index of the chosen element: coord_i = o_i * s_i - p_i + k_i * d_i
    kcoords = np.unravel_index(kidx, kernel)
    flat = np.zeros(kidx.shape, dtype=np.int64)
    for i in range(d):
        shape = [1] * (len(lead) + d)
        shape[len(lead) + i] = O[i]
        o = np.arange(O[i], dtype=np.int64).reshape(shape)
        coord = o * stride[i] - padding[i] + kcoords[i] * dilation[i]
        flat = flat * S[i] + coord
    return np.ascontiguousarray(vals), flat


def _max_pool_cls(d):
    class MaxPool(Primitive):
        node_name = f"MaxPool{d}DWithIndicesBackward0"
        array_backward = True

        @staticmethod
        def forward(ctx, x, kernel, stride, padding, dilation, ceil_mode):
            vals, idx = _max_pool_forward(x, d, kernel, stride, padding, dilation, ceil_mode)
            ctx.idx, ctx.in_shape = idx, x.shape
            ctx.save_inputs(0)      # (torch's backward takes it: create_graph's gradient stays connected)
            ctx.unique = all(s >= dl * (k - 1) + 1 for s, k, dl in zip(stride, kernel, dilation))
            ctx.mark_non_differentiable(idx)
            return vals, idx

        @staticmethod
        def backward(ctx, g, _gi=None):
            gx = _util.kernel(_ScatterPlanes, g, ctx.idx, ctx.in_shape, ctx.unique, d)
            return _util.zero_link(ctx, gx), None, None, None, None, None

    MaxPool.__name__ = MaxPool.__qualname__ = f"MaxPool{d}d"
    return MaxPool


_MaxPool = {d: _max_pool_cls(d) for d in (2, 3)}


def _pool_checks(op, d, input, kernel, stride, padding, dilation, empty_fn=None):
    """torch's checks of 2-d/3-d max and average pooling, in its order and words (``pooling_output_shape``: stride,
    then padding; ``pool2d/3d_shape_check``: kernel, stride and dilation sizes, then empty non-batch dims)."""
    for k, s, p, dl in zip(kernel, stride, padding, dilation):
        if s == 0:
            raise op_error(op, "stride should not be zero")
        if p < 0:
            raise op_error(op, f"pad must be non-negative, but got pad: {p}")
        if p > int(((k - 1) * dl + 1) / 2):          # (C's division: toward zero)
            raise op_error(op, f"pad should be at most half of effective kernel size, but got pad={p}, "
                               f"kernel_size={k} and dilation={dl}")
    axes = "THW"[3 - d:]
    for what, vals, name in (("kernel size", kernel, "k"), ("stride", stride, "d"), ("dilation", dilation,
                                                                                          "dilation")):
        if any(v <= 0 for v in vals):
            raise op_error(op, f"{what} should be greater than zero, but got "
                               + " ".join(f"{name}{a}: {v}" for a, v in zip(axes, vals)))
    nd = input.ndim
    if any(s == 0 for s in input.shape[nd - d - 1:]):        # the channel and spatial dims (the batch may be 0)
        if empty_fn is None:
            raise op_error(op, f"Expected {d + 1}D or {d + 2}D (batch mode) tensor with optional 0 dim batch size "
                               f"for input, but got:{shape_str(input.shape)}")
        raise RuntimeError(f"{empty_fn}(): Expected input's non-batch dimensions to have positive length, but input "
                           f"has a shape of {shape_str(input.shape)} and non-batch dimension 0 has length zero!")


def _max_pool(op, d, input, kernel_size, stride, padding, dilation, ceil_mode):
    nd = input.ndim
    if nd not in (d + 1, d + 2):
        raise op_error(op, f"non-empty {d + 1}D or {d + 2}D (batch mode) tensor expected for input")
    if input.dtype.is_complex:
        raise op_error(op, "max_pool does not support complex input")
    kernel = _ntuple(kernel_size, d, "kernel_size", op)
    stride = kernel if _no_stride(stride) else \
        _ntuple(stride, d, "stride", op)
    padding = _ntuple(padding, d, "padding", op)
    dilation = _ntuple(dilation, d, "dilation", op)
    _pool_checks(op, d, input, kernel, stride, padding, dilation,
                 "max_pool3d_with_indices_out_cpu_template" if d == 3 else None)
    S = input.shape[nd - d:]
    O = [_pool_out_size(S[i], kernel[i], stride[i], padding[i], dilation[i], ceil_mode) for i in range(d)]
    if any(o < 1 for o in O):
        lead = input.shape[1] if nd == d + 2 else input.shape[0]
        raise op_error(op, f"Given input size: ({'x'.join(map(str, (lead,) + tuple(S)))}). Calculated output size: "
                           f"({'x'.join(map(str, (lead,) + tuple(O)))}). Output size is too small")
    return _MaxPool[d].apply(input, kernel, stride, padding, dilation, bool(ceil_mode))


def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=True):
    """``max_pool1d`` returning ``(values, indices)``."""
    return max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def _check_max_pool1d(input, k, s, p, dl, ceil_mode):
    """torch's check_max_pool1d (the path without indices), in its order and words."""
    for name, v in (("kernel_size", k[0]), ("stride", s[0])):
        if v <= 0:
            raise RuntimeError(f"max_pool1d() {name} must be greater than zero, but got {v}")
    if p[0] < 0:
        raise RuntimeError(f"max_pool1d() padding must be non-negative, but got {p[0]}")
    if p[0] > k[0] // 2:
        raise RuntimeError(f"max_pool1d() padding should be at most half of kernel size, but got padding={p[0]} "
                           f"and kernel_size={k[0]}")
    if dl[0] <= 0:
        raise RuntimeError(f"max_pool1d() dilation must be greater than zero, but got {dl[0]}")
    out = _pool_out_size(input.shape[-1], k[0], s[0], p[0], dl[0], ceil_mode)
    if out <= 0:
        raise RuntimeError(f"max_pool1d() Invalid computed output size: {out}")


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """1-d max pooling over ``(N, C, L)`` or ``(C, L)``; ``stride`` defaults to ``kernel_size``.

    >>> F.max_pool1d(tapegrad.tensor([[[1., 3., 2., 0.]]]), 2).tolist()
    [[[3.0, 2.0]]]
    """
    if input.ndim not in (2, 3) or any(s == 0 for s in input.shape[input.ndim - 2:]):
        raise op_error("max_pool1d", "Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size for "
                                     f"input, but got:{shape_str(input.shape)}")
    k = _ntuple(kernel_size, 1, "kernel_size", "max_pool1d")
    s = k if _no_stride(stride) else \
        _ntuple(stride, 1, "stride", "max_pool1d")
    p = _ntuple(padding, 1, "padding", "max_pool1d")
    dl = _ntuple(dilation, 1, "dilation", "max_pool1d")
    if not return_indices:      # torch's check_max_pool1d, in its order and words (with indices: max_pool2d's)
        _check_max_pool1d(input, k, s, p, dl, ceil_mode)
    vals, idx = _max_pool("max_pool1d", 2, input.unsqueeze(-2), (1,) + k, (1,) + s, (0,) + p, (1,) + dl, ceil_mode)
    vals = vals.squeeze(-2)
    return (vals, idx.squeeze(-2)) if return_indices else vals


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """2-d max pooling over ``(N, C, H, W)`` or ``(C, H, W)``; with ``return_indices`` also the flat per-plane
    argmax indices (for ``max_unpool2d``).

    >>> F.max_pool2d(tapegrad.arange(16.).reshape(1, 1, 4, 4), 2).tolist()
    [[[[5.0, 7.0], [13.0, 15.0]]]]
    """
    vals, idx = _max_pool("max_pool2d", 2, input, kernel_size, stride, padding, dilation, ceil_mode)
    return (vals, idx) if return_indices else vals


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=True):
    """``max_pool2d`` returning ``(values, indices)``."""
    return _max_pool("max_pool2d", 2, input, kernel_size, stride, padding, dilation, ceil_mode)


@autocast_listed("fp32")
def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """3-d max pooling over ``(N, C, D, H, W)`` or ``(C, D, H, W)``.

    >>> F.max_pool3d(tapegrad.ones(1, 1, 2, 2, 2), 2).shape
    tapegrad.Size([1, 1, 1, 1, 1])
    """
    vals, idx = _max_pool("max_pool3d", 3, input, kernel_size, stride, padding, dilation, ceil_mode)
    return (vals, idx) if return_indices else vals


@autocast_listed("fp32")
def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=True):
    """``max_pool3d`` returning ``(values, indices)``."""
    return _max_pool("max_pool3d", 3, input, kernel_size, stride, padding, dilation, ceil_mode)


# --- average pooling ----------------------------------------------------------------------------------------------
def _avg_taps(size, k, s, p, ceil_mode, count_include_pad, scale=1.0):
    """Taps of one axis of average pooling (torch's window and divisor rules, the divisor split per axis)."""
    O = _pool_out_size(size, k, s, p, 1, ceil_mode)
    o = np.arange(O)
    start = o * s - p
    end = np.minimum(start + k, size + p)
    pool = end - start
    lo, hi = np.maximum(start, 0), np.minimum(end, size)
    t = np.arange(k)
    idx = lo[:, None] + t[None, :]
    valid = idx < hi[:, None]
    div = pool if count_include_pad else (hi - lo)
    w = np.where(valid, scale / np.maximum(div, 1)[:, None], 0.0)
    idx = np.where(valid, idx, size)
    return _AxisTaps(idx, w, size)


def _avg_pool(op, d, input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
    nd = input.ndim
    if d == 2 and nd not in (3, 4):
        # (torch's avg_pool2d reads the channel count, size(-3), before it checks the dims: a 2-d input is an
        # IndexError there, as in the pytorch-book's AvgPool2d on an image without its channel dim)
        if nd == 0:
            raise IndexError("Dimension specified as -3 but tensor has no dimensions")
        if nd < 3:
            _util.normalize_dim(-3, nd)
        raise RuntimeError("Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, but "
                           f"got:{shape_str(input.shape)}")
    if nd not in (d + 1, d + 2):
        raise op_error(op, f"non-empty {d + 1}D or {d + 2}D (batch mode) tensor expected for input")
    kernel = _ntuple(kernel_size, d, "kernel_size", op)
    stride = kernel if _no_stride(stride) else \
        _ntuple(stride, d, "stride", op)
    padding = _ntuple(padding, d, "padding", op)
    if divisor_override is not None and divisor_override == 0:
        raise op_error(op, "divisor must be not zero")
    _pool_checks(op, d, input, kernel, stride, padding, (1,) * d, "avg_pool3d" if d == 3 else None)
    S = input.shape[nd - d:]
    if d == 3 and any(s < k for s, k in zip(S, kernel)):
        raise op_error(op, f"input image (T: {S[0]} H: {S[1]} W: {S[2]}) smaller than kernel size (kT: {kernel[0]} "
                           f"kH: {kernel[1]} kW: {kernel[2]})")
    O = [_pool_out_size(S[i], kernel[i], stride[i], padding[i], 1, ceil_mode) for i in range(d)]
    if any(o < 1 for o in O):
        lead = input.shape[1] if nd == d + 2 else input.shape[0]
        raise op_error(op, f"Given input size: ({'x'.join(map(str, (lead,) + tuple(S)))}). Calculated output size: "
                           f"({'x'.join(map(str, (lead,) + tuple(O)))}). Output size is too small")
    taps = []
    for i in range(d):
        if divisor_override is not None:
            t = _avg_taps(S[i], kernel[i], stride[i], padding[i], ceil_mode, True)
            t.w = (t.idx < S[i]) * (1.0 / divisor_override if i == 0 else 1.0)
        else:
            t = _avg_taps(S[i], kernel[i], stride[i], padding[i], ceil_mode, count_include_pad)
        taps.append(t)
    if input._array.dtype.kind in "biu":
        return _int_avg_pool(d, input._array, taps, divisor_override)
    return _taps(f"AvgPool{max(d, 2)}DBackward0", input, taps)


def _int_avg_pool(d, a, taps, divisor_override):
    """torch's average pooling of integers: int64 only (other integer types are "not implemented" there), each
    window's exact sum divided by its divisor with C's division (toward zero), in int64."""
    if a.dtype != np.int64:
        kernel = "avg_pool3d_out_frame" if d == 3 else "avg_pool2d"
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_dtype.from_numpy_dtype(a.dtype)._legacy}'")
    sums = _apply_taps(a, [_AxisTaps(t.idx, None, t.size) for t in taps])      # (no weights: int64 sums)
    if divisor_override is not None:
        div = np.int64(divisor_override)
    else:                   # each axis's divisor, from its averaging weights (scale / divisor); their product
        div = np.ones((1,) * d, np.int64)
        for i, t in enumerate(taps):
            first = np.where(t.idx < t.size, t.w, 0.0).max(axis=1)
            shape = [1] * d
            shape[i] = -1
            div = div * np.rint(1.0 / np.where(first > 0, first, 1.0)).astype(np.int64).reshape(shape)
    q = (np.abs(sums) // np.abs(div)) * (np.sign(sums) * np.sign(div))
    return Tensor._make(np.ascontiguousarray(q.astype(np.int64)))


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    """1-d average pooling over ``(N, C, L)`` or ``(C, L)``.

    >>> F.avg_pool1d(tapegrad.tensor([[[1., 3., 2., 0.]]]), 2).tolist()
    [[[2.0, 1.0]]]
    """
    if input.ndim not in (2, 3):
        raise RuntimeError(_dims_error(input, "avg_pool1d"))
    k = _ntuple(kernel_size, 1, "kernel_size", "avg_pool1d")
    s = k if _no_stride(stride) else \
        _ntuple(stride, 1, "stride", "avg_pool1d")
    p = _ntuple(padding, 1, "padding", "avg_pool1d")
    out = _avg_pool("avg_pool1d", 2, input.unsqueeze(-2), (1,) + k, (1,) + s, (0,) + p, ceil_mode,
                    count_include_pad, None)
    return out.squeeze(-2)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    """2-d average pooling over ``(N, C, H, W)`` or ``(C, H, W)``.

    >>> F.avg_pool2d(tapegrad.arange(16.).reshape(1, 1, 4, 4), 2).tolist()
    [[[[2.5, 4.5], [10.5, 12.5]]]]
    """
    return _avg_pool("avg_pool2d", 2, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                     divisor_override)


@autocast_listed("fp32")
def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    """3-d average pooling over ``(N, C, D, H, W)`` or ``(C, D, H, W)``.

    >>> F.avg_pool3d(tapegrad.ones(1, 1, 2, 2, 2), 2).tolist()
    [[[[[1.0]]]]]
    """
    return _avg_pool("avg_pool3d", 3, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                     divisor_override)


# --- adaptive pooling ---------------------------------------------------------------------------------------------
def _adaptive_bounds(size, out):
    o = np.arange(out, dtype=np.int64)
    start = (o * size) // out
    end = ((o + 1) * size + out - 1) // out
    return start, end


def _adaptive_window_idx(size, out):
    """(idx, valid): per output position the window's input indices, padded with ``size`` past its end."""
    start, end = _adaptive_bounds(size, out)
    kmax = int((end - start).max()) if out else 1
    idx = start[:, None] + np.arange(kmax)[None, :]
    valid = idx < end[:, None]
    return np.where(valid, idx, size), valid, end - start


def _dims_error(input, op):
    """torch's checkDimRange message of the 1-d pooling ops (2 or 3 dims)."""
    return (f"Expected 2 to 3 dimensions, but got {input.ndim}-dimensional tensor for argument #1 'self' (while "
            f"checking arguments for {op})")


def _adaptive_sizes(op, d, input, output_size, one_d=False):
    """(input spatial sizes, output sizes), after torch's checks of adaptive pooling in its order and words (the
    average and max kernels word theirs apart; the 1-d ops run as 2-d on ``(.., 1, L)``: ``one_d``)."""
    nd, is_max = input.ndim, op.startswith("adaptive_max")
    # (F.adaptive_*_pool2d/3d take a Python int whole and fill None sizes from the input's; the 1-d ops take a
    # 0-d integer tensor as an int too)
    if output_size is None or (_is_int(output_size) if one_d else isinstance(output_size, (int, np.integer))):
        if output_size is not None and not _is_int(output_size):
            _adaptive_ints(op, output_size)                           # (a bool: torch's TypeError)
        output_size = (None if output_size is None else int(output_size),) * d
    elif not one_d and nd <= len(output_size):
        raise ValueError(f"Input dimension should be at least {len(output_size) + 1}")
    output_size = _adaptive_ints(op, output_size)
    if len(output_size) == 1 and d == 3 and not is_max:
        output_size *= 3
    if len(output_size) != d:
        raise RuntimeError(f"{op}(): internal error: output_size.size() must be {d}" if is_max
                           else f"{op}: output_size must be {d}")
    if not is_max and any(o is not None and o < 0 for o in output_size):
        shown = ", ".join(map(str, output_size)) if d == 2 else f"{output_size[0]}, {output_size[1]},{output_size[2]}"
        raise RuntimeError(f"adaptive_avg_pool{d}d: elements of output_size must be greater than or equal to 0 but "
                           f"received {{{shown}}}")
    if nd not in (d + 1, d + 2):
        raise RuntimeError(f"{op}(): Expected {d + 1}D or {d + 2}D tensor, but got{': ' if is_max else ' '}"
                           f"{shape_str(input.shape)}")
    for i in range(nd - d if op == "adaptive_avg_pool2d" else 1, nd):
        if input.shape[i] == 0:
            raise RuntimeError(f"{op}(): Expected input to have non-zero size for non-batch dimensions, but input "
                               f"has sizes {shape_str(input.shape)} with dimension {i} being empty")
    S = input.shape[nd - d:]
    O = tuple(S[i] if o is None else int(o) for i, o in enumerate(output_size))
    if is_max and any(o < 0 for o in O):
        shape = input.shape[:nd - d] + O
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(O)}: {shape_str(shape)}")
    return S, O


def _no_stride(stride):
    """The pooling ops' ``stride`` left out (None or an empty list): it is then the kernel size."""
    return stride is None or isinstance(stride, (list, tuple)) and len(stride) == 0


def _adaptive_ints(op, output_size):
    """An adaptive pool's ``output_size`` sequence as a tuple of ints and Nones (torch's TypeErrors otherwise)."""
    return _int_list(output_size, "output_size", op, allow_none=True)[0]


def _one_size(op, output_size):
    """The output length of a 1-d adaptive pool (torch's check that it is one int; a 0-d integer tensor is one)."""
    if _is_int(output_size):
        return int(output_size)
    output_size = _adaptive_ints(op, output_size)
    if len(output_size) != 1:
        raise RuntimeError(f"{op}() argument 'output_size' should contain one int (got {len(output_size)})")
    if output_size[0] is None:
        raise TypeError(f"{op}(): argument 'output_size' (position 2) must be tuple of ints, but found element of "
                        f"type NoneType at pos 0")
    return output_size[0]


def _adaptive_avg(op, d, input, output_size, one_d=False):
    if not one_d:
        if isinstance(output_size, (list, tuple)) and input.ndim <= len(output_size):
            raise ValueError(f"Input dimension should be at least {len(output_size) + 1}")   # (torch's Python check)
        ones = output_size if isinstance(output_size, (list, tuple)) else (output_size,) * d
        if len(ones) == d and all(_is_int(o) and o == 1 for o in ones):
            # torch computes a global average as a mean over the last d dims before any check of the input's
            # dims, so any input with d dims is pooled (a 2-d image without its channel dim included)
            return input.mean(tuple(range(-d, 0)), keepdim=True)
    S, O = _adaptive_sizes(op, d, input, output_size, one_d)
    if all(o == 1 for o in O):   # torch computes a global average as a mean (grad_fn MeanBackward1)
        return input.mean(tuple(range(-d, 0)), keepdim=True)
    taps = []
    for i in range(d):
        idx, valid, count = _adaptive_window_idx(S[i], O[i])
        taps.append(_AxisTaps(idx, np.where(valid, 1.0 / np.maximum(count, 1)[:, None], 0.0), S[i]))
    return _taps(f"AdaptiveAvgPool{max(d, 2)}DBackward0", input, taps)


def adaptive_avg_pool1d(input, output_size):
    """Average pooling to a fixed output length (torch's start/end index formula).

    >>> F.adaptive_avg_pool1d(tapegrad.tensor([[[1., 2., 3., 4.]]]), 2).tolist()
    [[[1.5, 3.5]]]
    """
    o = _one_size("adaptive_avg_pool1d", output_size)
    if input.ndim not in (2, 3):
        raise RuntimeError(_dims_error(input, "adaptive_avg_pool1d"))
    return _adaptive_avg("adaptive_avg_pool2d", 2, input.unsqueeze(-2), (1, o), True).squeeze(-2)


def adaptive_avg_pool2d(input, output_size):
    """Average pooling to a fixed output size ``(oH, oW)`` (None keeps that input size).

    >>> F.adaptive_avg_pool2d(tapegrad.ones(1, 1, 5, 5), 1).shape
    tapegrad.Size([1, 1, 1, 1])
    """
    return _adaptive_avg("adaptive_avg_pool2d", 2, input, output_size)


@autocast_listed("fp32")
def adaptive_avg_pool3d(input, output_size):
    """Average pooling to a fixed output size ``(oD, oH, oW)``.

    >>> F.adaptive_avg_pool3d(tapegrad.ones(1, 1, 4, 4, 4), 2).shape
    tapegrad.Size([1, 1, 2, 2, 2])
    """
    return _adaptive_avg("adaptive_avg_pool3d", 3, input, output_size)


def _adaptive_max_cls(d):
    class AdaptiveMaxPool(Primitive):
        node_name = f"AdaptiveMaxPool{d}DBackward0"

        @staticmethod
        def forward(ctx, x, out_sizes):
            S = x.shape[x.ndim - d:]
            lead = x.shape[:x.ndim - d]
            fill = -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min
            xp = _pad_array(x, (0,) * d, (1,) * d, fill)      # index ``size`` reads -inf
            idxs, sizes = [], []
            for i in range(d):
                idx, _, _ = _adaptive_window_idx(S[i], out_sizes[i])
                idxs.append(idx)
                sizes.append(idx.shape[1])
            # gather (*lead, O1, K1, O2, K2, ...) with broadcast index arrays, then move the K axes last
            key = []
            for i in range(d):
                shape = [1] * (2 * d)
                shape[2 * i], shape[2 * i + 1] = idxs[i].shape
                key.append(idxs[i].reshape(shape))
            win = xp[(Ellipsis,) + tuple(key)]
            nl = len(lead)
            perm = tuple(range(nl)) + tuple(nl + 2 * i for i in range(d)) + tuple(nl + 2 * i + 1 for i in range(d))
            win = win.transpose(perm).reshape(lead + tuple(out_sizes) + (math.prod(sizes),))
            kidx = np.argmax(win, axis=-1)
            vals = np.take_along_axis(win, kidx[..., None], axis=-1)[..., 0]
            kc = np.unravel_index(kidx, tuple(sizes))
            flat = np.zeros(kidx.shape, dtype=np.int64)
            for i in range(d):
                shape = [1] * (nl + d)
                shape[nl + i] = out_sizes[i]
                o = np.arange(out_sizes[i]).reshape(shape)
                coord = idxs[i][o, kc[i]]
                flat = flat * S[i] + coord
            ctx.idx, ctx.in_shape = flat, x.shape
            ctx.save_inputs(0)      # (torch's backward takes it: create_graph's gradient stays connected)
            ctx.mark_non_differentiable(flat)
            return np.ascontiguousarray(vals), flat

        @staticmethod
        def backward(ctx, g, _gi=None):
            return _util.zero_link(ctx, _ScatterPlanes.apply(g, ctx.idx, ctx.in_shape, False, d)), None

    AdaptiveMaxPool.__name__ = AdaptiveMaxPool.__qualname__ = f"AdaptiveMaxPool{d}d"
    return AdaptiveMaxPool


_AdaptiveMax = {d: _adaptive_max_cls(d) for d in (2, 3)}


def _adaptive_max(op, d, input, output_size, one_d=False):
    S, O = _adaptive_sizes(op, d, input, output_size, one_d)
    return _AdaptiveMax[d].apply(input, O)


def adaptive_max_pool1d(input, output_size, return_indices=False):
    """Max pooling to a fixed output length.

    >>> F.adaptive_max_pool1d(tapegrad.tensor([[[1., 4., 3., 2.]]]), 2).tolist()
    [[[4.0, 3.0]]]
    """
    o = _one_size("adaptive_max_pool1d", output_size)
    if input.ndim not in (2, 3):
        raise RuntimeError(_dims_error(input, "adaptive_max_pool1d"))
    for i in range(1, input.ndim):
        if input.shape[i] == 0:
            raise RuntimeError("adaptive_max_pool1d(): Expected input to have non-zero size for non-batch dimensions, "
                               f"but input has sizes {shape_str(input.shape)} with dimension {i} being empty")
    vals, idx = _adaptive_max("adaptive_max_pool2d", 2, input.unsqueeze(-2), (1, o), True)
    vals = vals.squeeze(-2)
    return (vals, idx.squeeze(-2)) if return_indices else vals


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=True):
    """``adaptive_max_pool1d`` returning ``(values, indices)``."""
    return adaptive_max_pool1d(input, output_size, True)


def adaptive_max_pool2d(input, output_size, return_indices=False):
    """Max pooling to a fixed output size; ``return_indices`` gives flat per-plane indices.

    >>> F.adaptive_max_pool2d(tapegrad.arange(16.).reshape(1, 1, 4, 4), 1).tolist()
    [[[[15.0]]]]
    """
    vals, idx = _adaptive_max("adaptive_max_pool2d", 2, input, output_size)
    return (vals, idx) if return_indices else vals


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=True):
    """``adaptive_max_pool2d`` returning ``(values, indices)``."""
    return _adaptive_max("adaptive_max_pool2d", 2, input, output_size)


@autocast_listed("fp32")
def adaptive_max_pool3d(input, output_size, return_indices=False):
    """3-d max pooling to a fixed output size.

    >>> F.adaptive_max_pool3d(tapegrad.ones(1, 1, 4, 4, 4), 2).shape
    tapegrad.Size([1, 1, 2, 2, 2])
    """
    vals, idx = _adaptive_max("adaptive_max_pool3d", 3, input, output_size)
    return (vals, idx) if return_indices else vals


def adaptive_max_pool3d_with_indices(input, output_size, return_indices=True):
    """``adaptive_max_pool3d`` returning ``(values, indices)``."""
    return _adaptive_max("adaptive_max_pool3d", 3, input, output_size)


# --- max unpooling ------------------------------------------------------------------------------------------------
def _max_unpool_cls(d):
    class MaxUnpool(Primitive):
        node_name = f"MaxUnpool{d}DBackward0"

        @staticmethod
        def forward(ctx, x, idx, out_sizes):
            lead = x.shape[:x.ndim - d]
            plane = math.prod(out_sizes)
            if idx.size and (idx.min() < 0 or idx.max() >= plane):
                bad = idx.max() if idx.max() >= plane else idx.min()
                raise op_error(f"max_unpool{d}d", f"Found an invalid max index: {bad} (output volumes are of size "
                                                  f"{'x'.join(map(str, out_sizes))})")
            ctx.idx = idx
            return _ScatterPlanes.forward(ctx, x, idx, lead + tuple(out_sizes), True, d)

        @staticmethod
        def backward(ctx, g):
            return _GatherPlanes.apply(g, ctx.idx, d), None, None

    MaxUnpool.__name__ = MaxUnpool.__qualname__ = f"MaxUnpool{d}d"
    return MaxUnpool


_MaxUnpool = {d: _max_unpool_cls(d) for d in (2, 3)}


def _max_unpool(op, d, input, indices, kernel_size, stride, padding, output_size):
    if _active[0]:       # (vmap with a batched indices: once per sample)
        r = vmap_per_sample(_max_unpool, (op, d, input, indices, kernel_size, stride, padding, output_size), None,
                            (indices,))
        if r is not NotImplemented:
            return r
    kernel = _ntuple(kernel_size, d, "kernel_size", op)
    stride = kernel if stride is None else _ntuple(stride, d, "stride", op)
    padding = _ntuple(padding, d, "padding", op)
    nd = input.ndim
    if nd not in (d + 1, d + 2):
        raise op_error(op, f"Expected {d + 1}D or {d + 2}D tensor for input, but got {shape_str(input.shape)}")
    if str(indices.dtype) != "tapegrad.int64":
        raise op_error(op, f"elements in indices should be type int64 but got: {_scalar(indices)}")
    if tuple(indices.shape) != tuple(input.shape):
        raise op_error(op, f"Expected shape of indices to be same as that of the input tensor "
                           f"({shape_str(input.shape)}) but got indices tensor with shape: "
                           f"{shape_str(indices.shape)}")
    S = input.shape[nd - d:]
    default = [(S[i] - 1) * stride[i] - 2 * padding[i] + kernel[i] for i in range(d)]
    if output_size is None:
        out = default
    else:
        out = [int(s) for s in output_size]
        if len(out) == d + 2 or len(out) == nd:
            out = out[len(out) - d:]
        if len(out) != d:
            raise ValueError(f"output_size should be a sequence containing {d} or {d + 2} elements, but it has a "
                             f"length of '{len(out)}'")
        for i in range(d):
            lo, hi = default[i] - stride[i], default[i] + stride[i]
            if not lo < out[i] < hi:
                raise ValueError(f'invalid output_size "{tuple(out)}" (dim {i} must be between {lo} and {hi})')
    return _MaxUnpool[d].apply(input, indices._array, tuple(out))


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of ``max_pool1d``: values written back at their indices, zeros elsewhere.

    >>> v, i = F.max_pool1d(tapegrad.tensor([[[1., 3., 2., 0.]]]), 2, return_indices=True)
    >>> F.max_unpool1d(v, i, 2).tolist()
    [[[0.0, 3.0, 2.0, 0.0]]]
    """
    k = _ntuple(kernel_size, 1, "kernel_size", "max_unpool1d")
    s = k if stride is None else _ntuple(stride, 1, "stride", "max_unpool1d")
    p = _ntuple(padding, 1, "padding", "max_unpool1d")
    if output_size is not None:
        output_size = list(output_size)[-1:] + [1]
    out = _max_unpool("max_unpool1d", 2, input.unsqueeze(-1), indices.unsqueeze(-1), k + (1,), s + (1,), p + (0,),
                      output_size)
    return out.squeeze(-1)


@autocast_listed("fp32")
def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of ``max_pool2d`` (``indices`` from ``return_indices=True``).

    >>> v, i = F.max_pool2d(tapegrad.arange(4.).reshape(1, 1, 2, 2), 2, return_indices=True)
    >>> F.max_unpool2d(v, i, 2).tolist()
    [[[[0.0, 0.0], [0.0, 3.0]]]]
    """
    return _max_unpool("max_unpool2d", 2, input, indices, kernel_size, stride, padding, output_size)


@autocast_listed("fp32")
def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of ``max_pool3d``.

    >>> v, i = F.max_pool3d(tapegrad.ones(1, 1, 2, 2, 2), 2, return_indices=True)
    >>> F.max_unpool3d(v, i, 2).shape
    tapegrad.Size([1, 1, 2, 2, 2])
    """
    return _max_unpool("max_unpool3d", 3, input, indices, kernel_size, stride, padding, output_size)


# --- power-average (LP) pooling -------------------------------------------------------------------------------------
def _lp_pool(op, d, input, norm_type, kernel_size, stride, ceil_mode):
    kernel = _ntuple(kernel_size, d, "kernel_size", op)
    if norm_type in (math.inf, -math.inf):      # the max (or min) of |x| over each window
        pool = {1: max_pool1d, 2: max_pool2d, 3: max_pool3d}[d]
        if norm_type > 0:
            return pool(input.abs(), kernel_size, stride, 0, 1, ceil_mode)
        return -pool(-input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    avg = {1: avg_pool1d, 2: avg_pool2d, 3: avg_pool3d}[d]
    out = avg(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return (out.sign() * out.abs().relu()).mul(math.prod(kernel)).pow(1.0 / norm_type)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """Power-average pooling of ``(N, C, L)``: ``(sum over each window of x ** p) ** (1 / p)`` (``p = inf`` is max
    pooling of ``|x|``); a window whose sum is zero gets a zero gradient.

    >>> F.lp_pool1d(tapegrad.tensor([[[3., 4., 1., 1.]]]), 2, 2)
    tensor([[[5.0000, 1.4142]]])
    """
    return _lp_pool("lp_pool1d", 1, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """Power-average pooling of ``(N, C, H, W)`` (see ``lp_pool1d``).

    >>> F.lp_pool2d(tapegrad.ones(1, 1, 2, 2), 1, 2)
    tensor([[[[4.]]]])
    """
    return _lp_pool("lp_pool2d", 2, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """Power-average pooling of ``(N, C, D, H, W)`` (see ``lp_pool1d``).

    >>> F.lp_pool3d(tapegrad.ones(1, 1, 2, 2, 2), 2, 2)
    tensor([[[[[2.8284]]]]])
    """
    return _lp_pool("lp_pool3d", 3, input, norm_type, kernel_size, stride, ceil_mode)


# --- fractional max pooling ---------------------------------------------------------------------------------------
def _fractional_starts(u, size, out, k):
    """Window starts along one axis for each plane's sample ``u`` (``(P,)``, in the input's dtype): Graham's
    pseudo-random sequence, ``floor((i + u) * alpha) - floor(u * alpha)`` with ``alpha = (size - k) / (out - 1)``,
    the last window ending at the last element."""
    starts = np.empty((u.shape[0], out), np.int64)
    if out > 1:
        alpha = u.dtype.type(size - k) / u.dtype.type(out - 1)
        i = np.arange(out - 1, dtype=u.dtype)
        starts[:, :-1] = ((i[None, :] + u[:, None]) * alpha).astype(np.int64) - (u * alpha).astype(np.int64)[:, None]
    if out > 0:
        starts[:, -1] = size - k
    return starts


def _fractional_cls(d):
    class FractionalMaxPool(Primitive):
        node_name = f"FractionalMaxPool{d}DBackward0"

        @staticmethod
        def forward(ctx, x, kernel, out_sizes, samples):
            S = x.shape[x.ndim - d:]
            lead = x.shape[:x.ndim - d]
            P = math.prod(lead)
            u = samples.reshape(P, d)
            # torch's sample order: (W, H) in 2-d, (T, H, W) in 3-d
            axis_of = [1, 0] if d == 2 else [0, 1, 2]
            flat = np.zeros((P,) + (1,) * (2 * d), np.int64)
            for i in range(d):
                starts = _fractional_starts(u[:, axis_of[i]], S[i], out_sizes[i], kernel[i])
                shape = [P] + [1] * (2 * d)
                shape[1 + i] = out_sizes[i]
                koff = np.arange(kernel[i]).reshape([1] * (1 + d + i) + [kernel[i]] + [1] * (d - i - 1))
                flat = flat * S[i] + (starts.reshape(shape) + koff)
            K = math.prod(kernel)
            win = np.take_along_axis(x.reshape(P, math.prod(S)), flat.reshape(P, math.prod(flat.shape[1:])), axis=1)
            win = win.reshape((P,) + tuple(out_sizes) + (K,))
            pick = np.argmax(win, axis=-1)
            nan = np.isnan(win)
            if nan.any():                   # torch keeps the last NaN of a window
                last = K - 1 - np.argmax(nan[..., ::-1], axis=-1)
                pick = np.where(nan.any(-1), last, pick)
            vals = np.take_along_axis(win, pick[..., None], axis=-1)[..., 0]
            idx = np.take_along_axis(flat.reshape((P,) + tuple(out_sizes) + (K,)), pick[..., None], -1)[..., 0]
            idx = idx.reshape(lead + tuple(out_sizes))
            ctx.idx, ctx.in_shape = idx, x.shape
            ctx.mark_non_differentiable(idx)
            return np.ascontiguousarray(vals.reshape(lead + tuple(out_sizes))), idx

        @staticmethod
        def backward(ctx, g, _gi=None):
            return _ScatterPlanes.apply(g, ctx.idx, ctx.in_shape, False, d), None, None, None

    FractionalMaxPool.__name__ = FractionalMaxPool.__qualname__ = f"FractionalMaxPool{d}d"
    return FractionalMaxPool


_FractionalMax = {d: _fractional_cls(d) for d in (2, 3)}


def _fractional_max_pool(op, d, input, kernel_size, output_size, output_ratio, _random_samples):
    if output_size is None and output_ratio is None:
        raise ValueError(f"{op} requires specifying either an output_size or an output_ratio")
    nd = input.ndim
    if nd not in (d + 1, d + 2) or any(s == 0 for s in input.shape[1:]):
        raise op_error(op, f"Expected {d + 1}D or {d + 2}D tensor with non-zero sizes, but got "
                           f"{shape_str(input.shape)}")
    kernel = _ntuple(kernel_size, d, "kernel_size", op)
    S = input.shape[nd - d:]
    if output_size is None:
        ratio = (output_ratio,) * d if isinstance(output_ratio, (int, float)) else tuple(output_ratio)
        out = tuple(int(S[i] * ratio[i]) for i in range(d))
    else:
        out = _ntuple(output_size, d, "output_size", op)
    names = ("height", "width") if d == 2 else ("time", "height", "width")
    where = op if d == 2 else f"{op}_out"
    for i in range(d):
        if out[i] + kernel[i] - 1 > S[i]:
            raise op_error(where, f"pool {names[i]} {kernel[i]} too large relative to input {names[i]} {S[i]}")
    n_batch = 1 if nd == d + 1 else input.shape[0]
    C = input.shape[nd - d - 1]
    if _random_samples is None:
        from ...creation import rand
        _random_samples = rand(n_batch, C, d, dtype=input.dtype)
        samples = _random_samples._array
    else:
        samples = _random_samples._array
        if samples.ndim != 3:
            raise op_error(op, f"Expect _random samples to be 3D tensor, got: {samples.ndim}D")
        if samples.shape[2] != d:
            raise op_error(op, f"Expect _random_samples.size(2) equals to {d}; got {samples.shape[2]}.")
        if samples.shape[0] < n_batch:
            raise RuntimeError("Expect _random_samples.size(0) no less then input batch size.")
        if samples.shape[1] != C:
            raise RuntimeError("Expect _random_samples.size(1) equals to input channel size.")
        if samples.dtype != input._array.dtype:
            raise op_error(op, "Expect _random_samples to have the same dtype as input")
        if samples.shape[0] > n_batch:       # (torch reads the first rows)
            _random_samples = _random_samples[:n_batch]
    return _FractionalMax[d].apply(input, kernel, out, _random_samples)     # (a tensor: vmap sees its batch)


@autocast_listed("fp32")
def fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                          _random_samples=None):
    """Fractional max pooling of ``(N, C, H, W)``: max over pseudo-random overlapping ``kernel_size`` windows
    placed so that the output has ``output_size`` (or ``output_ratio`` of the input's size). ``_random_samples``
    (``(N, C, 2)`` in [0, 1), the input's dtype) fixes the windows; otherwise they are drawn at random.

    >>> x = tapegrad.arange(16.).reshape(1, 1, 4, 4)
    >>> F.fractional_max_pool2d(x, 2, output_size=2, _random_samples=tapegrad.tensor([[[0.5, 0.5]]]))
    tensor([[[[ 5.,  7.],
              [13., 15.]]]])
    """
    out, idx = _fractional_max_pool("fractional_max_pool2d", 2, input, kernel_size, output_size, output_ratio,
                                    _random_samples)
    return (out, idx) if return_indices else out


def fractional_max_pool2d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices=False, _random_samples=None):
    """``fractional_max_pool2d`` returning ``(values, indices)``."""
    return _fractional_max_pool("fractional_max_pool2d", 2, input, kernel_size, output_size, output_ratio,
                                _random_samples)


@autocast_listed("fp32")
def fractional_max_pool3d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                          _random_samples=None):
    """Fractional max pooling of ``(N, C, D, H, W)`` (``_random_samples`` of shape ``(N, C, 3)``).

    >>> F.fractional_max_pool3d(tapegrad.ones(1, 1, 4, 4, 4), 2, output_size=3).shape
    tapegrad.Size([1, 1, 3, 3, 3])
    """
    out, idx = _fractional_max_pool("fractional_max_pool3d", 3, input, kernel_size, output_size, output_ratio,
                                    _random_samples)
    return (out, idx) if return_indices else out


def fractional_max_pool3d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices=False, _random_samples=None):
    """``fractional_max_pool3d`` returning ``(values, indices)``."""
    return _fractional_max_pool("fractional_max_pool3d", 3, input, kernel_size, output_size, output_ratio,
                                _random_samples)
