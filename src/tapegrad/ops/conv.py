# ruff: noqa: A001, A002 - torch's argument name (input)
"""Convolution, pooling and resampling primitives (``tapegrad.nn.functional``).

How they are computed (all vectorised NumPy, float32 stays float32):

- ``Convolution`` (torch's ``aten::convolution``, node ``ConvolutionBackward0``): the forward of a convolution is
  ONE GEMM (per group) over an ``as_strided`` im2col view of the zero-padded input; a transposed convolution is one
  GEMM followed by col2im, accumulated with one strided add per kernel offset (never per pixel, no ``np.add.at``).
  Its backward is again ``Convolution`` (the input gradient of a convolution is a transposed convolution and vice
  versa) plus ``ConvWeightGrad`` (one GEMM); ``ConvWeightGrad``'s own backward is two ``Convolution`` calls, so
  derivatives of every order exist.
- Max pooling: strided windows and ``argmax`` give values and torch's flat per-plane indices; the backward is a
  scatter (``_ScatterPlanes``) whose backward is a gather at the same indices (``_GatherPlanes``) and vice versa.
- Every other linear resampling op (average pooling, adaptive average pooling, linear/bilinear/bicubic/trilinear and
  nearest interpolation, reflect/replicate/circular padding) is *separable*: along each spatial axis every output is
  a weighted sum of a few inputs ("taps"). ``_Taps`` applies such per-axis taps; its backward applies the transposed
  taps (another ``_Taps``), whose backward is the original: exact derivatives of every order, O(taps) per output.
- ``unfold``/``fold`` are ``Im2Col``/``Col2Im``, each the other's backward; ``pixel_shuffle``/``pixel_unshuffle``
  likewise; constant padding's backward is constant padding with the negated widths (as in torch).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
from numpy.lib.stride_tricks import as_strided

from . import _util
from ._util import Primitive, op_error, shape_str

__all__ = [
    "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
    "max_pool1d", "max_pool2d", "max_pool3d", "max_pool1d_with_indices", "max_pool2d_with_indices",
    "max_pool3d_with_indices", "avg_pool1d", "avg_pool2d", "avg_pool3d",
    "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d",
    "adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool3d",
    "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices", "adaptive_max_pool3d_with_indices",
    "max_unpool1d", "max_unpool2d", "max_unpool3d", "unfold", "fold", "interpolate", "upsample",
    "upsample_nearest", "upsample_bilinear", "pad", "pixel_shuffle", "pixel_unshuffle",
]


# --- small helpers ------------------------------------------------------------------------------------------------
def _ntuple(value, n, name, op, conv=False):
    """An int or a sequence as an n-tuple of ints, with torch's error for a wrong length."""
    if isinstance(value, (int, np.integer)):
        return (int(value),) * n
    vals = tuple(int(v) for v in value)
    if len(vals) == 1 and n > 1:
        return vals * n
    if len(vals) != n:
        if conv:
            raise op_error(op, f"expected {name} to be a single integer value or a list of {n} values to match the "
                               f"convolution dimensions, but got {name}={list(vals)}")
        raise op_error(op, f"{name} must be either a single int, or a tuple of {n} ints, got {list(vals)}")
    return vals


def _size_str(sizes, sep=" x "):
    return "(" + sep.join(str(s) for s in sizes) + ")"


def _pad_array(x, before, after, value=0.0):
    """Pad the last len(before) dims of x with ``value`` (a copy only when some width is non-zero)."""
    if not any(before) and not any(after):
        return x
    d = len(before)
    lead = x.shape[:x.ndim - d]
    shape = lead + tuple(s + b + a for s, b, a in zip(x.shape[x.ndim - d:], before, after))
    out = np.full(shape, value, dtype=x.dtype)
    out[(Ellipsis,) + tuple(slice(b, b + s) for b, s in zip(before, x.shape[x.ndim - d:]))] = x
    return out


def _windows(xp, out_sizes, kernel, stride, dilation):
    """Read-only view ``(*lead, *out_sizes, *kernel)`` of the sliding windows over the last d dims of ``xp``."""
    d = len(kernel)
    nl = xp.ndim - d
    st = xp.strides
    shape = xp.shape[:nl] + tuple(out_sizes) + tuple(kernel)
    strides = st[:nl] + tuple(st[nl + i] * stride[i] for i in range(d)) + \
        tuple(st[nl + i] * dilation[i] for i in range(d))
    return as_strided(xp, shape, strides, writeable=False)


def _conv_out_size(size, k, s, p, d):
    return (size + 2 * p - d * (k - 1) - 1) // s + 1


def _offsets(kernel):
    return np.ndindex(*kernel)


def _strided_slices(k, dilation, stride, count):
    """The slices of a padded buffer that kernel offset k touches for ``count`` output positions per dim."""
    return tuple(slice(ki * di, ki * di + (c - 1) * si + 1, si) if c > 0 else slice(0, 0)
                 for ki, di, si, c in zip(k, dilation, stride, count))


# --- convolution --------------------------------------------------------------------------------------------------
def _im2col_t(x, kernel, out_sizes, stride, padding, dilation, groups):
    """Columns of the padded input, laid out ``(G, C/G * prod(K), N * prod(O))`` for one GEMM per group."""
    N, C = x.shape[:2]
    d = len(kernel)
    xp = _pad_array(x, padding, padding)
    win = _windows(xp, out_sizes, kernel, stride, dilation)            # (N, C, *O, *K)
    win = win.reshape((N, groups, C // groups) + win.shape[2:])         # a view: splits C only
    perm = (1, 2) + tuple(range(3 + d, 3 + 2 * d)) + (0,) + tuple(range(3, 3 + d))
    return win.transpose(perm).reshape(groups, (C // groups) * math.prod(kernel), N * math.prod(out_sizes))


def _channels_last(x, kernel, out_sizes, groups, dilation):
    """Whether columns from a channels-last copy (``_cols_cl``) beat ``_im2col_t``: the copy into columns runs
    over contiguous stretches of ``K_last * C`` elements there and of ``O_last`` here (measured on LeNet's second
    conv, C=6: 692 -> 458 µs; its first, C=1, keeps ``_im2col_t``)."""
    return (groups == 1 and all(v == 1 for v in dilation) and x.size > 0 and all(o > 0 for o in out_sizes)
            and kernel[-1] * x.shape[1] > out_sizes[-1])


def _cols_cl(x, kernel, out_sizes, stride, padding):
    """Columns ``(N * prod(O), prod(K) * C)`` of the padded input, channels last (no groups, no dilation)."""
    N, C = x.shape[:2]
    d = len(kernel)
    xc = np.ascontiguousarray(np.moveaxis(_pad_array(x, padding, padding), 1, -1))        # (N, *S, C)
    st = xc.strides
    win = as_strided(xc, (N,) + tuple(out_sizes) + tuple(kernel) + (C,),
                     (st[0],) + tuple(st[1 + i] * stride[i] for i in range(d)) + st[1:1 + d] + (st[-1],),
                     writeable=False)                                                      # (N, *O, *K, C)
    return win.reshape(N * math.prod(out_sizes), math.prod(kernel) * C)


def _conv_forward(x, w, stride, padding, dilation, groups, out_sizes=None):
    N = x.shape[0]
    d = x.ndim - 2
    kernel = w.shape[2:]
    if out_sizes is None:
        out_sizes = tuple(_conv_out_size(x.shape[2 + i], kernel[i], stride[i], padding[i], dilation[i])
                          for i in range(d))
    cout = w.shape[0]
    if _channels_last(x, kernel, out_sizes, groups, dilation):
        cols = _cols_cl(x, kernel, out_sizes, stride, padding)
        out = cols @ np.moveaxis(w, 1, -1).reshape(cout, -1).T                             # (N * prod(O), Cout)
        return np.ascontiguousarray(np.moveaxis(out.reshape((N,) + tuple(out_sizes) + (cout,)), -1, 1))
    cols = _im2col_t(x, kernel, out_sizes, stride, padding, dilation, groups)
    wm = w.reshape(groups, cout // groups, math.prod(w.shape[1:]))
    out = np.matmul(wm, cols)                                          # (G, Cout/G, N * prod(O))
    out = out.reshape((cout, N) + tuple(out_sizes))
    return np.ascontiguousarray(np.moveaxis(out, 1, 0))


def _conv_transpose_forward(x, w, stride, padding, dilation, groups, output_padding):
    N, cin = x.shape[:2]
    d = x.ndim - 2
    ins = x.shape[2:]
    kernel = w.shape[2:]
    og = w.shape[1]
    if groups == 1 and x.size and w.size:
        return _conv_transpose_g1(x, w, stride, padding, dilation, output_padding)
    cg = cin // groups
    kt, it = math.prod(kernel), math.prod(ins)
    wm = w.reshape(groups, cg, og * kt).transpose(0, 2, 1)                 # (G, Og*K, Cg)
    xm = x.reshape(N, groups, cg, it).transpose(1, 2, 0, 3).reshape(groups, cg, N * it)
    cols = np.matmul(wm, xm).reshape((groups, og) + tuple(kernel) + (N,) + tuple(ins))
    full = [(ins[i] - 1) * stride[i] + dilation[i] * (kernel[i] - 1) + 1 for i in range(d)]
    outs = [full[i] - 2 * padding[i] + output_padding[i] for i in range(d)]
    buf = np.zeros((groups, og, N) + tuple(max(full[i], padding[i] + outs[i]) for i in range(d)), dtype=cols.dtype)
    if it:
        for k in _offsets(kernel):
            buf[(Ellipsis,) + _strided_slices(k, dilation, stride, ins)] += cols[(slice(None), slice(None)) + k]
    buf = buf[(Ellipsis,) + tuple(slice(padding[i], padding[i] + outs[i]) for i in range(d))]
    buf = buf.reshape((groups * og, N) + tuple(outs))
    return np.ascontiguousarray(np.moveaxis(buf, 1, 0))


def _conv_transpose_g1(x, w, stride, padding, dilation, output_padding):
    """The transposed convolution (also conv's input gradient) without groups, laid out for fast col2im: one
    tensordot gives ``(K..., Cout, I..., N)``, so each kernel offset adds a block whose rows are long contiguous
    runs (spatial x batch) into ``(Cout, O..., N)``, instead of many short strided rows."""
    N = x.shape[0]
    d = x.ndim - 2
    ins, kernel, og = x.shape[2:], w.shape[2:], w.shape[1]
    wt = np.transpose(w, tuple(range(2, 2 + d)) + (1, 0))                    # (K..., Cout, Cin)
    xt = np.transpose(x, (1,) + tuple(range(2, 2 + d)) + (0,))               # (Cin, I..., N)
    cols = np.tensordot(wt, xt, axes=([d + 1], [0]))                           # (K..., Cout, I..., N)
    full = [(ins[i] - 1) * stride[i] + dilation[i] * (kernel[i] - 1) + 1 for i in range(d)]
    outs = [full[i] - 2 * padding[i] + output_padding[i] for i in range(d)]
    buf = np.zeros((og,) + tuple(max(full[i], padding[i] + outs[i]) for i in range(d)) + (N,), dtype=cols.dtype)
    for k in _offsets(kernel):
        buf[(slice(None),) + _strided_slices(k, dilation, stride, ins)] += cols[k]
    buf = buf[(slice(None),) + tuple(slice(padding[i], padding[i] + outs[i]) for i in range(d))]
    return np.ascontiguousarray(np.moveaxis(buf, -1, 0))                        # (N, Cout, O...)


def _weight_grad(x, g, kernel, stride, padding, dilation, groups):
    """d(conv(x, w))/dw contracted with g: ``(Cout, C/G, *K)``, one GEMM per group."""
    N, C = x.shape[:2]
    cout = g.shape[1]
    out_sizes = g.shape[2:]
    if _channels_last(x, kernel, out_sizes, groups, dilation):
        cols = _cols_cl(x, kernel, out_sizes, stride, padding)                          # (N*O, K*C)
        gw = np.moveaxis(g, 1, -1).reshape(-1, cout).T @ cols                           # (Cout, K*C)
        return np.ascontiguousarray(np.moveaxis(gw.reshape((cout,) + tuple(kernel) + (C,)), -1, 1))
    cols = _im2col_t(x, kernel, out_sizes, stride, padding, dilation, groups)   # (G, Cg*K, N*O)
    ot = math.prod(out_sizes)
    gm = g.reshape(N, groups, cout // groups, ot).transpose(1, 2, 0, 3).reshape(groups, cout // groups, N * ot)
    # Both factors are short and very wide (N * prod(O) columns). OpenBLAS computes such a product up to twice as
    # fast when the factor with more rows comes first, so the order follows the shapes (measured: LeNet's first
    # conv, 6 x 25 outputs, (cols @ gm^T)^T 400 µs vs gm @ cols^T 740 µs; the demo's, 16 x 9: the other way round)
    if cols.shape[1] > gm.shape[1]:
        gw = np.matmul(cols, gm.transpose(0, 2, 1)).transpose(0, 2, 1)
    else:
        gw = np.matmul(gm, cols.transpose(0, 2, 1))
    return gw.reshape((cout, C // groups) + tuple(kernel))


def _transpose_out_padding(in_sizes, out_sizes, kernel, stride, padding, dilation):
    """The output_padding that makes a transposed convolution of ``out_sizes`` come back to ``in_sizes``."""
    return tuple(in_sizes[i] - ((out_sizes[i] - 1) * stride[i] - 2 * padding[i] + dilation[i] * (kernel[i] - 1) + 1)
                 for i in range(len(kernel)))


class Convolution(Primitive):
    """torch's ``aten::convolution``: (transposed) N-d convolution with stride, padding, dilation and groups."""

    node_name = "ConvolutionBackward0"
    array_backward = True

    @staticmethod
    def forward(ctx, x, w, b, stride, padding, dilation, transposed, output_padding, groups, out_sizes=None):
        ctx.save_inputs(0, 1)
        ctx.params = (stride, padding, dilation, groups)
        ctx.transposed = transposed
        if transposed:
            out = _conv_transpose_forward(x, w, stride, padding, dilation, groups, output_padding)
        else:
            out = _conv_forward(x, w, stride, padding, dilation, groups, out_sizes)
        if b is not None:
            out += b.reshape((-1,) + (1,) * (x.ndim - 2)).astype(out.dtype, copy=False)
        return out

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        need = ctx.needs_input_grad
        stride, padding, dilation, groups = ctx.params
        kernel_size = tuple(w.shape[2:])
        d = len(kernel_size)
        gx = gw = gb = None
        if not ctx.transposed:
            if need[0]:
                op = _transpose_out_padding(tuple(x.shape[2:]), tuple(g.shape[2:]), kernel_size, stride, padding,
                                            dilation)
                gx = _util.kernel(_ConvolutionGrad, g, w, None, stride, padding, dilation, True, op, groups)
            if need[1]:
                gw = _util.kernel(ConvWeightGrad, x, g, kernel_size, stride, padding, dilation, groups)
        else:
            if need[0]:
                gx = _util.kernel(_ConvolutionGrad, g, w, None, stride, padding, dilation, False, (0,) * d, groups,
                                  tuple(x.shape[2:]))
            if need[1]:
                gw = _util.kernel(ConvWeightGrad, g, x, kernel_size, stride, padding, dilation, groups)
        if need[2]:
            gb = g.sum((0,) + tuple(range(2, 2 + d)))
        return gx, gw, gb, None, None, None, None, None, None, None


class _ConvolutionGrad(Convolution):
    """The input gradient of a convolution (a convolution itself; named as torch's double-backward node)."""

    node_name = "ConvolutionBackwardBackward0"
    array_backward = True


class ConvWeightGrad(Primitive):
    """The weight gradient of ``conv(x, w)`` for output gradient g; bilinear in (x, g), so its backward is two
    convolutions with the incoming weight-shaped gradient."""

    node_name = "ConvolutionBackwardBackward0"

    @staticmethod
    def forward(ctx, x, g, kernel, stride, padding, dilation, groups):
        ctx.save_inputs(0, 1)
        ctx.params = (kernel, stride, padding, dilation, groups)
        return _weight_grad(x, g, kernel, stride, padding, dilation, groups)

    @staticmethod
    def backward(ctx, ggw):
        x, g = ctx.saved_tensors
        kernel, stride, padding, dilation, groups = ctx.params
        need = ctx.needs_input_grad
        gx = gg = None
        if need[0]:
            op = _transpose_out_padding(x._array.shape[2:], g._array.shape[2:], kernel, stride, padding, dilation)
            gx = _ConvolutionGrad.apply(g, ggw, None, stride, padding, dilation, True, op, groups)
        if need[1]:
            gg = _ConvolutionGrad.apply(x, ggw, None, stride, padding, dilation, False, (0,) * len(kernel), groups,
                                        g._array.shape[2:])
        return gx, gg, None, None, None, None, None


def _check_float_pair(op, x, w):
    if x.dtype != w.dtype:
        raise op_error(op, f"expected scalar type {_scalar(x)} but found {_scalar(w)}")


def _scalar(t):
    return {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16", "int64": "Long",
            "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool",
            "complex64": "ComplexFloat", "complex128": "ComplexDouble"}.get(str(t.dtype).split(".")[-1],
                                                                          str(t.dtype))


def _conv(op, d, input, weight, bias, stride, padding, dilation, groups, transposed=False, output_padding=0):
    """Validate as torch does, then run ``Convolution`` (unbatched input gets a batch dim of 1 and loses it)."""
    xs, ws = tuple(input.shape), tuple(weight.shape)
    if len(ws) != d + 2:
        raise op_error(op, f"Expected {len(ws)}-dimensional input for {len(ws)}-dimensional weight "
                           f"{shape_str(ws)}, but got {len(xs)}-dimensional input of size {shape_str(xs)} instead")
    if len(xs) not in (d + 1, d + 2):
        raise op_error(op, f"Expected {d + 1}D (unbatched) or {d + 2}D (batched) input to {op}, but got input of "
                           f"size: {shape_str(xs)}")
    _check_float_pair(op, input, weight)
    unbatched = len(xs) == d + 1
    if unbatched:
        input = input.unsqueeze(0)
        xs = (1,) + xs
    stride = _ntuple(stride, d, "stride", op, conv=True)
    dilation = _ntuple(dilation, d, "dilation", op, conv=True)
    if isinstance(padding, str):
        if transposed:
            raise TypeError(f"{op}(): argument 'padding' must be tuple of ints, not str")
        if padding not in ("same", "valid"):
            raise op_error(op, f"Invalid padding string: '{padding}'")
        if padding == "valid":
            padding = (0,) * d
        else:
            if any(s != 1 for s in stride):
                raise op_error(op, "padding='same' is not supported for strided convolutions")
            total = [dl * (k - 1) for dl, k in zip(dilation, ws[2:])]
            padding = tuple(t // 2 for t in total)
            extra = [t - 2 * (t // 2) for t in total]
            if any(extra):   # asymmetric: torch pads the input explicitly on the right first
                widths = []
                for e in reversed(extra):
                    widths += [0, e]
                input = pad(input, tuple(widths))
                xs = tuple(input.shape)
    else:
        padding = _ntuple(padding, d, "padding", op, conv=True)
    output_padding = _ntuple(output_padding, d, "output_padding", op, conv=True)
    if any(s <= 0 for s in stride):
        raise op_error(op, "non-positive stride is not supported")
    if any(p < 0 for p in padding):
        raise op_error(op, "negative padding is not supported")
    if any(p < 0 for p in output_padding):
        raise op_error(op, "negative output_padding is not supported")
    if any(dl <= 0 for dl in dilation):
        raise op_error(op, f"dilation should be greater than zero, but got {list(dilation)}")
    if groups <= 0:
        raise op_error(op, "non-positive groups is not supported")
    if ws[0] < 1:
        raise op_error(op, f"Given groups={groups}, expected weight to be at least 1 at dimension 0, but got weight "
                           f"of size {shape_str(ws)} instead")
    if ws[0] % groups:
        raise op_error(op, f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, but "
                           f"got weight of size [{shape_str(ws)}] instead")
    if not transposed:
        if xs[1] != ws[1] * groups:
            raise op_error(op, f"Given groups={groups}, weight of size {shape_str(ws)}, expected input"
                               f"{shape_str(xs)} to have {ws[1] * groups} channels, but got {xs[1]} channels instead")
        out_ch = ws[0]
        padded = [xs[2 + i] + 2 * padding[i] for i in range(d)]
        eff = [dilation[i] * (ws[2 + i] - 1) + 1 for i in range(d)]
        if any(p < e for p, e in zip(padded, eff)):
            raise op_error(op, f"Calculated padded input size per channel: {_size_str(padded)}. Kernel size: "
                               f"{_size_str(eff)}. Kernel size can't be greater than actual input size")
    else:
        if xs[1] != ws[0]:
            raise op_error(op, f"Given transposed=1, weight of size {shape_str(ws)}, expected input{shape_str(xs)} "
                               f"to have {ws[0]} channels, but got {xs[1]} channels instead")
        if xs[1] % groups:
            raise op_error(op, f"Given groups={groups}, expected input channels {xs[1]} to be divisible by {groups}")
        for i in range(d):
            if output_padding[i] >= stride[i] and output_padding[i] >= dilation[i]:
                names = ["depth", "height", "width"][3 - d:] if d <= 3 else [str(j) for j in range(d)]
                msg = "output padding must be smaller than either stride or dilation, but got " + " ".join(
                    [f"output_padding_{n}: {v}" for n, v in zip(names, output_padding)]
                    + [f"stride_{n}: {v}" for n, v in zip(names, stride)]
                    + [f"dilation_{n}: {v}" for n, v in zip(names, dilation)])
                raise op_error(op, msg)
        out_ch = ws[1] * groups
        outs = [(xs[2 + i] - 1) * stride[i] - 2 * padding[i] + dilation[i] * (ws[2 + i] - 1) + output_padding[i] + 1
                for i in range(d)]
        if any(o < 1 for o in outs):
            raise op_error(op, f"Given input size per channel: {_size_str(xs[2:])}. Calculated output size per "
                               f"channel: {_size_str(outs)}. Output size is too small")
    if bias is not None and tuple(bias.shape) != (out_ch,):
        raise op_error(op, f"Given weight of size {shape_str(ws)}, expected bias to be 1-dimensional with {out_ch} "
                           f"elements, but got bias of size {shape_str(bias.shape)} instead")
    out = Convolution.apply(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups)
    return out.squeeze(0) if unbatched else out


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """1-d convolution (cross-correlation) over ``(N, C, L)`` or ``(C, L)`` input.

    >>> F.conv1d(tapegrad.ones(1, 1, 4), tapegrad.ones(1, 1, 2)).tolist()
    [[[2.0, 2.0, 2.0]]]
    """
    return _conv("conv1d", 1, input, weight, bias, stride, padding, dilation, groups)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """2-d convolution over ``(N, C, H, W)`` or ``(C, H, W)`` input; ``padding`` may be an int, a tuple,
    ``"same"`` or ``"valid"``.

    >>> F.conv2d(tapegrad.ones(1, 1, 3, 3), tapegrad.ones(2, 1, 2, 2)).shape
    tapegrad.Size([1, 2, 2, 2])
    """
    return _conv("conv2d", 2, input, weight, bias, stride, padding, dilation, groups)


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """3-d convolution over ``(N, C, D, H, W)`` or ``(C, D, H, W)`` input.

    >>> F.conv3d(tapegrad.ones(1, 1, 3, 3, 3), tapegrad.ones(1, 1, 2, 2, 2)).shape
    tapegrad.Size([1, 1, 2, 2, 2])
    """
    return _conv("conv3d", 3, input, weight, bias, stride, padding, dilation, groups)


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """1-d transposed convolution; weight is ``(C_in, C_out / groups, K)``.

    >>> F.conv_transpose1d(tapegrad.ones(1, 1, 2), tapegrad.ones(1, 1, 2)).tolist()
    [[[1.0, 2.0, 1.0]]]
    """
    return _conv("conv_transpose1d", 1, input, weight, bias, stride, padding, dilation, groups, True, output_padding)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """2-d transposed convolution ("deconvolution"); weight is ``(C_in, C_out / groups, kH, kW)``.

    >>> F.conv_transpose2d(tapegrad.ones(1, 1, 2, 2), tapegrad.ones(1, 1, 2, 2), stride=2).shape
    tapegrad.Size([1, 1, 4, 4])
    """
    return _conv("conv_transpose2d", 2, input, weight, bias, stride, padding, dilation, groups, True, output_padding)


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """3-d transposed convolution; weight is ``(C_in, C_out / groups, kD, kH, kW)``.

    >>> F.conv_transpose3d(tapegrad.ones(1, 1, 1, 1, 1), tapegrad.ones(1, 1, 2, 2, 2)).shape
    tapegrad.Size([1, 1, 2, 2, 2])
    """
    return _conv("conv_transpose3d", 3, input, weight, bias, stride, padding, dilation, groups, True, output_padding)


# --- gather / scatter over flattened planes (max pooling's backward, max_unpool) -----------------------------------
def _plane_flat(idx, plane):
    """Global flat positions of per-plane indices ``idx`` (shape ``(*lead, *O)``; ``plane`` elements per plane)."""
    P = idx.shape[0]
    idx2 = idx.reshape(P, math.prod(idx.shape[1:]))
    return (idx2 + (np.arange(P, dtype=np.int64) * plane)[:, None]).ravel()


class _GatherPlanes(Primitive):
    """``out[..., o] = x.flatten(spatial)[..., idx[..., o]]``: x ``(*lead, *S)``, idx ``(*lead, *O)``."""

    node_name = "GatherBackward0"

    @staticmethod
    def forward(ctx, x, idx, d):
        ctx.idx, ctx.in_shape, ctx.d = idx, x.shape, d
        lead = idx.shape[:idx.ndim - d]
        P = math.prod(lead)
        out = np.take_along_axis(x.reshape(P, math.prod(x.shape[x.ndim - d:])),
                                 idx.reshape(P, math.prod(idx.shape[idx.ndim - d:])), axis=1)
        return out.reshape(idx.shape)

    @staticmethod
    def backward(ctx, g):
        return _ScatterPlanes.apply(g, ctx.idx, ctx.in_shape, False, ctx.d), None, None


class _ScatterPlanes(Primitive):
    """The adjoint of ``_GatherPlanes``: zeros of ``shape`` with g added (or assigned) at the per-plane indices."""

    node_name = "ScatterAddBackward0"

    @staticmethod
    def forward(ctx, g, idx, shape, unique, d):
        ctx.idx, ctx.d = idx, d
        lead = idx.shape[:idx.ndim - d]
        P = math.prod(lead)
        plane = math.prod(shape[len(shape) - d:])
        flat = _plane_flat(idx.reshape((P,) + idx.shape[idx.ndim - d:]), plane)
        if unique:
            out = np.zeros(P * plane, dtype=g.dtype)
            out[flat] = g.ravel()
        else:
            out = np.bincount(flat, weights=g.ravel(), minlength=P * plane).astype(g.dtype, copy=False)
        return out.reshape(shape)

    @staticmethod
    def backward(ctx, gg):
        return _GatherPlanes.apply(gg, ctx.idx, ctx.d), None, None, None, None


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
            ctx.unique = all(s >= dl * (k - 1) + 1 for s, k, dl in zip(stride, kernel, dilation))
            ctx.mark_non_differentiable(idx)
            return vals, idx

        @staticmethod
        def backward(ctx, g, _gi=None):
            return _util.kernel(_ScatterPlanes, g, ctx.idx, ctx.in_shape, ctx.unique, d), None, None, None, None, None

    MaxPool.__name__ = MaxPool.__qualname__ = f"MaxPool{d}d"
    return MaxPool


_MaxPool = {d: _max_pool_cls(d) for d in (2, 3)}


def _max_pool(op, d, input, kernel_size, stride, padding, dilation, ceil_mode):
    nd = input.ndim
    if nd not in (d + 1, d + 2) or any(s == 0 for s in input.shape[1:]):
        if d == 1:
            raise op_error(op, "Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size for input, but "
                               f"got:{shape_str(input.shape)}")
        raise op_error(op, f"non-empty {d + 1}D or {d + 2}D (batch mode) tensor expected for input")
    if input.dtype.is_complex:
        raise op_error(op, "max_pool does not support complex input")
    kernel = _ntuple(kernel_size, d, "kernel_size", op)
    stride = kernel if stride is None or (not isinstance(stride, int) and len(stride) == 0) else \
        _ntuple(stride, d, "stride", op)
    padding = _ntuple(padding, d, "padding", op)
    dilation = _ntuple(dilation, d, "dilation", op)
    if any(k <= 0 for k in kernel):
        raise op_error(op, f"kernel size should be greater than zero, but got {list(kernel)}")
    if any(s <= 0 for s in stride):
        raise op_error(op, "stride should not be zero")
    if any(dl <= 0 for dl in dilation):
        raise op_error(op, f"dilation should be greater than zero, but got {list(dilation)}")
    for k, p, dl in zip(kernel, padding, dilation):
        if p < 0 or p > ((k - 1) * dl + 1) // 2:
            raise op_error(op, f"pad should be at most half of effective kernel size, but got pad={p}, "
                               f"kernel_size={k} and dilation={dl}")
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


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """1-d max pooling over ``(N, C, L)`` or ``(C, L)``; ``stride`` defaults to ``kernel_size``.

    >>> F.max_pool1d(tapegrad.tensor([[[1., 3., 2., 0.]]]), 2).tolist()
    [[[3.0, 2.0]]]
    """
    if input.ndim not in (2, 3) or any(s == 0 for s in input.shape[1:]):
        raise op_error("max_pool1d", "Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size for "
                                     f"input, but got:{shape_str(input.shape)}")
    k = _ntuple(kernel_size, 1, "kernel_size", "max_pool1d")
    s = k if stride is None or (not isinstance(stride, int) and len(stride) == 0) else \
        _ntuple(stride, 1, "stride", "max_pool1d")
    p = _ntuple(padding, 1, "padding", "max_pool1d")
    dl = _ntuple(dilation, 1, "dilation", "max_pool1d")
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


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """3-d max pooling over ``(N, C, D, H, W)`` or ``(C, D, H, W)``.

    >>> F.max_pool3d(tapegrad.ones(1, 1, 2, 2, 2), 2).shape
    tapegrad.Size([1, 1, 1, 1, 1])
    """
    vals, idx = _max_pool("max_pool3d", 3, input, kernel_size, stride, padding, dilation, ceil_mode)
    return (vals, idx) if return_indices else vals


def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=True):
    """``max_pool3d`` returning ``(values, indices)``."""
    return _max_pool("max_pool3d", 3, input, kernel_size, stride, padding, dilation, ceil_mode)


# --- separable per-axis taps (avg pooling, adaptive avg pooling, interpolation, reflect/replicate/circular pad) ----
class _AxisTaps:
    """Along one axis: ``out[o] = sum_t w[o, t] * in[idx[o, t]]`` (``idx == size`` reads an implicit zero)."""

    __slots__ = ("idx", "w", "size")

    def __init__(self, idx, w, size):
        self.idx = np.asarray(idx, dtype=np.int64).reshape(len(idx), -1) if len(idx) else \
            np.zeros((0, 1), np.int64)
        self.w = None if w is None else np.asarray(w, dtype=np.float64).reshape(self.idx.shape)
        self.size = size

    def transpose(self):
        """The adjoint taps: ``in_grad[i] = sum over (o, t) with idx[o, t] == i of w[o, t] * g[o]``."""
        O, T = self.idx.shape
        o = np.repeat(np.arange(O, dtype=np.int64), T)
        i = self.idx.ravel()
        w = np.ones(i.shape) if self.w is None else self.w.ravel()
        keep = i < self.size
        o, i, w = o[keep], i[keep], w[keep]
        order = np.argsort(i, kind="stable")
        o, i, w = o[order], i[order], w[order]
        counts = np.bincount(i, minlength=self.size)
        T2 = max(int(counts.max()) if counts.size else 0, 1)
        starts = np.cumsum(counts) - counts
        rank = np.arange(i.size) - starts[i]
        idx2 = np.full((self.size, T2), O, dtype=np.int64)
        w2 = np.zeros((self.size, T2))
        idx2[i, rank] = o
        w2[i, rank] = w
        return _AxisTaps(idx2, None if self.w is None else w2, O)

    def apply(self, x, axis):
        O, T = self.idx.shape
        if (self.idx >= self.size).any():
            zshape = list(x.shape)
            zshape[axis] = 1
            x = np.concatenate([x, np.zeros(zshape, x.dtype)], axis=axis)
        if T == 0 or O == 0:
            shape = list(x.shape)
            shape[axis] = O
            return np.zeros(shape, x.dtype)
        bshape = [1] * x.ndim
        bshape[axis] = O
        w = None if self.w is None else self.w.astype(x.dtype if x.dtype.kind == "f" else np.float64, copy=False)
        out = None
        for t in range(T):
            v = np.take(x, self.idx[:, t], axis=axis)
            if w is not None:
                v = v * w[:, t].reshape(bshape)
            out = v if out is None else out + v
        return out


def _apply_taps(x, taps):
    d = len(taps)
    for i in reversed(range(d)):   # last axis first: torch's (bilinear) summation order
        t = taps[i]
        if t is not None:
            x = t.apply(x, x.ndim - d + i)
    return np.ascontiguousarray(x)


def _taps_pair(name):
    """A Primitive applying per-axis taps, named ``name``; its backward applies the transposed taps."""

    class Taps(Primitive):
        node_name = name

        @staticmethod
        def forward(ctx, x, taps):
            ctx.taps = taps
            return _apply_taps(x, taps)

        @staticmethod
        def backward(ctx, g):
            return _TapsAdj.apply(g, [None if t is None else t.transpose() for t in ctx.taps]), None

    Taps.__name__ = Taps.__qualname__ = name[:-len("Backward0")]
    return Taps


class _TapsAdj(Primitive):
    """The transpose of a taps op (its backward is again a taps op)."""

    node_name = "UpsampleBackwardBackward0"

    @staticmethod
    def forward(ctx, x, taps):
        ctx.taps = taps
        return _apply_taps(x, taps)

    @staticmethod
    def backward(ctx, g):
        return _TapsAdj.apply(g, [None if t is None else t.transpose() for t in ctx.taps]), None


_taps_classes = {}


def _taps(name, x, taps):
    cls = _taps_classes.get(name)
    if cls is None:
        cls = _taps_classes[name] = _taps_pair(name)
    return cls.apply(x, taps)


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
    if nd not in (d + 1, d + 2):
        raise op_error(op, f"non-empty {d + 1}D or {d + 2}D (batch mode) tensor expected for input")
    kernel = _ntuple(kernel_size, d, "kernel_size", op)
    stride = kernel if stride is None or (not isinstance(stride, int) and len(stride) == 0) else \
        _ntuple(stride, d, "stride", op)
    padding = _ntuple(padding, d, "padding", op)
    if any(k <= 0 for k in kernel):
        raise op_error(op, f"kernel size should be greater than zero, but got {list(kernel)}")
    if any(s <= 0 for s in stride):
        raise op_error(op, "stride should not be zero")
    if divisor_override is not None and divisor_override == 0:
        raise op_error(op, "divisor must be not zero")
    for k, p in zip(kernel, padding):
        if p < 0 or p > k // 2:
            raise op_error(op, f"pad should be at most half of effective kernel size, but got pad={p}, "
                               f"kernel_size={k} and dilation=1")
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
    return _taps(f"AvgPool{max(d, 2)}DBackward0", input, taps)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    """1-d average pooling over ``(N, C, L)`` or ``(C, L)``.

    >>> F.avg_pool1d(tapegrad.tensor([[[1., 3., 2., 0.]]]), 2).tolist()
    [[[2.0, 1.0]]]
    """
    if input.ndim not in (2, 3):
        raise op_error("avg_pool1d", f"Expected 2D or 3D input, but got {shape_str(input.shape)}")
    k = _ntuple(kernel_size, 1, "kernel_size", "avg_pool1d")
    s = k if stride is None or (not isinstance(stride, int) and len(stride) == 0) else \
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


def _adaptive_sizes(op, d, input, output_size):
    nd = input.ndim
    if nd not in (d + 1, d + 2):
        got = ": " if op.startswith("adaptive_max") else " "
        raise op_error(op, f"Expected {d + 1}D or {d + 2}D tensor, but got{got}{shape_str(input.shape)}")
    S = input.shape[nd - d:]
    if isinstance(output_size, (int, np.integer)) or output_size is None:
        output_size = (output_size,) * d
    output_size = tuple(output_size)
    if len(output_size) != d:
        raise op_error(op, f"output_size must be {d}")
    return S, tuple(S[i] if o is None else int(o) for i, o in enumerate(output_size))


def _adaptive_avg(op, d, input, output_size):
    S, O = _adaptive_sizes(op, d, input, output_size)
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
    if input.ndim not in (2, 3):
        raise op_error("adaptive_avg_pool1d", f"Expected 2D or 3D tensor, but got {shape_str(input.shape)}")
    o = output_size if isinstance(output_size, (int, np.integer)) else output_size[0]
    return _adaptive_avg("adaptive_avg_pool1d", 2, input.unsqueeze(-2), (1, o)).squeeze(-2)


def adaptive_avg_pool2d(input, output_size):
    """Average pooling to a fixed output size ``(oH, oW)`` (None keeps that input size).

    >>> F.adaptive_avg_pool2d(tapegrad.ones(1, 1, 5, 5), 1).shape
    tapegrad.Size([1, 1, 1, 1])
    """
    return _adaptive_avg("adaptive_avg_pool2d", 2, input, output_size)


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
            ctx.mark_non_differentiable(flat)
            return np.ascontiguousarray(vals), flat

        @staticmethod
        def backward(ctx, g, _gi=None):
            return _ScatterPlanes.apply(g, ctx.idx, ctx.in_shape, False, d), None

    AdaptiveMaxPool.__name__ = AdaptiveMaxPool.__qualname__ = f"AdaptiveMaxPool{d}d"
    return AdaptiveMaxPool


_AdaptiveMax = {d: _adaptive_max_cls(d) for d in (2, 3)}


def _adaptive_max(op, d, input, output_size):
    S, O = _adaptive_sizes(op, d, input, output_size)
    if any(s == 0 for s in input.shape[1:]):
        raise op_error(op, f"Expected {d + 1}D or {d + 2}D tensor with non-zero sizes, but got "
                           f"{shape_str(input.shape)}")
    return _AdaptiveMax[d].apply(input, O)


def adaptive_max_pool1d(input, output_size, return_indices=False):
    """Max pooling to a fixed output length.

    >>> F.adaptive_max_pool1d(tapegrad.tensor([[[1., 4., 3., 2.]]]), 2).tolist()
    [[[4.0, 3.0]]]
    """
    if input.ndim not in (2, 3):
        raise op_error("adaptive_max_pool1d", f"Expected 2D or 3D tensor, but got: {shape_str(input.shape)}")
    o = output_size if isinstance(output_size, (int, np.integer)) else output_size[0]
    vals, idx = _adaptive_max("adaptive_max_pool1d", 2, input.unsqueeze(-2), (1, o))
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


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of ``max_pool2d`` (``indices`` from ``return_indices=True``).

    >>> v, i = F.max_pool2d(tapegrad.arange(4.).reshape(1, 1, 2, 2), 2, return_indices=True)
    >>> F.max_unpool2d(v, i, 2).tolist()
    [[[[0.0, 0.0], [0.0, 3.0]]]]
    """
    return _max_unpool("max_unpool2d", 2, input, indices, kernel_size, stride, padding, output_size)


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of ``max_pool3d``.

    >>> v, i = F.max_pool3d(tapegrad.ones(1, 1, 2, 2, 2), 2, return_indices=True)
    >>> F.max_unpool3d(v, i, 2).shape
    tapegrad.Size([1, 1, 2, 2, 2])
    """
    return _max_unpool("max_unpool3d", 3, input, indices, kernel_size, stride, padding, output_size)


# --- unfold / fold (im2col / col2im) ------------------------------------------------------------------------------
def _im2col(x, kernel, dilation, padding, stride):
    N, C = x.shape[:2]
    S = x.shape[2:]
    O = tuple(_conv_out_size(S[i], kernel[i], stride[i], padding[i], dilation[i]) for i in range(2))
    xp = _pad_array(x, padding, padding)
    win = _windows(xp, O, kernel, stride, dilation)          # (N, C, O1, O2, K1, K2)
    return win.transpose(0, 1, 4, 5, 2, 3).reshape(N, C * math.prod(kernel), math.prod(O))


def _col2im(cols, out_size, kernel, dilation, padding, stride):
    N = cols.shape[0]
    kt = math.prod(kernel)
    C = cols.shape[1] // kt
    O = tuple(_conv_out_size(out_size[i], kernel[i], stride[i], padding[i], dilation[i]) for i in range(2))
    cols = cols.reshape((N, C) + tuple(kernel) + O)
    buf = np.zeros((N, C) + tuple(out_size[i] + 2 * padding[i] for i in range(2)), dtype=cols.dtype)
    for k in _offsets(kernel):
        buf[(Ellipsis,) + _strided_slices(k, dilation, stride, O)] += cols[(slice(None), slice(None)) + k]
    return np.ascontiguousarray(buf[..., padding[0]:padding[0] + out_size[0], padding[1]:padding[1] + out_size[1]])


class Im2Col(Primitive):
    """``unfold``: sliding blocks ``(N, C * kH * kW, L)``; its backward is ``Col2Im``."""

    @staticmethod
    def forward(ctx, x, kernel, dilation, padding, stride):
        ctx.params = (kernel, dilation, padding, stride)
        ctx.size = x.shape[-2:]
        unbatched = x.ndim == 3
        out = _im2col(x[None] if unbatched else x, kernel, dilation, padding, stride)
        return out[0] if unbatched else out

    @staticmethod
    def backward(ctx, g):
        return (Col2Im.apply(g, ctx.size, *ctx.params),) + (None,) * 4


class Col2Im(Primitive):
    """``fold``: sums sliding blocks back into ``(N, C, *output_size)``; its backward is ``Im2Col``."""

    @staticmethod
    def forward(ctx, x, out_size, kernel, dilation, padding, stride):
        ctx.params = (kernel, dilation, padding, stride)
        unbatched = x.ndim == 2
        out = _col2im(x[None] if unbatched else x, out_size, kernel, dilation, padding, stride)
        return out[0] if unbatched else out

    @staticmethod
    def backward(ctx, g):
        return (Im2Col.apply(g, *ctx.params),) + (None,) * 5


def _fold_params(op, kernel_size, dilation, padding, stride):
    kernel = _ntuple(kernel_size, 2, "kernel_size", op)
    dilation = _ntuple(dilation, 2, "dilation", op)
    padding = _ntuple(padding, 2, "padding", op)
    stride = _ntuple(stride, 2, "stride", op)
    if any(k <= 0 for k in kernel):
        raise op_error(op, f"kernel size should be greater than zero, but got kernel_height: {kernel[0]} "
                           f"kernel_width: {kernel[1]}")
    if any(s <= 0 for s in stride):
        raise op_error(op, f"stride should be greater than zero, but got stride_height: {stride[0]} stride_width: "
                           f"{stride[1]}")
    if any(dl <= 0 for dl in dilation):
        raise op_error(op, f"dilation should be greater than zero, but got dilation_height: {dilation[0]} "
                           f"dilation_width: {dilation[1]}")
    if any(p < 0 for p in padding):
        raise op_error(op, f"padding should be non-negative, but got pad_height: {padding[0]} pad_width: "
                           f"{padding[1]}")
    return kernel, dilation, padding, stride


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """im2col: the sliding ``kernel_size`` blocks of a ``(N, C, H, W)`` (or ``(C, H, W)``) input as columns
    ``(N, C * prod(kernel_size), L)``.

    >>> F.unfold(tapegrad.arange(9.).reshape(1, 1, 3, 3), 2).shape
    tapegrad.Size([1, 4, 4])
    """
    kernel, dilation, padding, stride = _fold_params("unfold", kernel_size, dilation, padding, stride)
    if input.ndim not in (3, 4) or any(s == 0 for s in input.shape[-3:]):
        raise op_error("unfold", "Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other non-zero "
                                 f"dimensions for input, but got: {shape_str(input.shape)}")
    S = input.shape[-2:]
    O = [_conv_out_size(S[i], kernel[i], stride[i], padding[i], dilation[i]) for i in range(2)]
    if any(o < 1 for o in O):
        raise op_error("unfold", f"Given input with spatial size {tuple(S)}, kernel_size={kernel}, "
                                 f"dilation={dilation}, padding={padding}, calculated shape of the array of sliding "
                                 f"blocks as {tuple(O)}, but its components must be at least one.")
    return Im2Col.apply(input, kernel, dilation, padding, stride)


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """col2im: sums columns ``(N, C * prod(kernel_size), L)`` back into ``(N, C, *output_size)`` (overlaps add).

    >>> F.fold(tapegrad.ones(1, 4, 4), (3, 3), 2).tolist()[0][0][1]
    [2.0, 4.0, 2.0]
    """
    kernel, dilation, padding, stride = _fold_params("fold", kernel_size, dilation, padding, stride)
    out_size = _ntuple(output_size, 2, "output_size", "fold")
    if input.ndim not in (2, 3) or any(s == 0 for s in input.shape[-2:]):
        raise op_error("fold", "Expected 2D or 3D (batch mode) tensor with possibly 0 batch size and non-zero "
                               f"dimensions for input, but got: {shape_str(input.shape)}")
    c = input.shape[-2]
    kt = math.prod(kernel)
    if c % kt:
        raise op_error("fold", f"Expected size of input's dimension {input.ndim - 2} to be divisible by the product "
                               f"of kernel_size, but got input.size({input.ndim - 2})={c} and kernel_size={kernel}.")
    O = [_conv_out_size(out_size[i], kernel[i], stride[i], padding[i], dilation[i]) for i in range(2)]
    if any(o < 1 for o in O) or O[0] * O[1] != input.shape[-1]:
        raise op_error("fold", f"Given output_size={out_size}, kernel_size={kernel}, dilation={dilation}, "
                               f"padding={padding}, stride={stride}, expected size of input's dimension "
                               f"{input.ndim - 1} to match the calculated number of sliding blocks {O[0]} * {O[1]} = "
                               f"{O[0] * O[1]}, but got input.size({input.ndim - 1})={input.shape[-1]}.")
    return Col2Im.apply(input, out_size, kernel, dilation, padding, stride)


# --- padding ------------------------------------------------------------------------------------------------------
class ConstantPadNd(Primitive):
    """Constant padding (negative widths crop); its backward is constant padding with the negated widths."""

    @staticmethod
    def forward(ctx, x, widths, value):
        # widths: ((before, after), ...) for the last len(widths) dims, in dim order
        ctx.widths = widths
        d = len(widths)
        nl = x.ndim - d
        shape = x.shape[:nl] + tuple(x.shape[nl + i] + b + a for i, (b, a) in enumerate(widths))
        out = np.full(shape, value, dtype=x.dtype) if value != 0 else np.zeros(shape, dtype=x.dtype)
        src = tuple(slice(max(-b, 0), x.shape[nl + i] - max(-a, 0)) for i, (b, a) in enumerate(widths))
        dst = tuple(slice(max(b, 0), shape[nl + i] - max(a, 0)) for i, (b, a) in enumerate(widths))
        if all(s.stop > s.start for s in src):
            out[(Ellipsis,) + dst] = x[(Ellipsis,) + src]
        return out

    @staticmethod
    def backward(ctx, g):
        return ConstantPadNd.apply(g, tuple((-b, -a) for b, a in ctx.widths), 0), None, None


def _pad_index(mode, size, before, after):
    if mode == "circular":   # torch crops negative widths first, then wraps around the cropped signal
        lo, hi = max(-before, 0), size - max(-after, 0)
        j = np.arange(-max(before, 0), hi - lo + max(after, 0), dtype=np.int64)
        return lo + j % max(hi - lo, 1)
    j = np.arange(-before, size + after, dtype=np.int64)
    if mode == "reflect":
        j = np.abs(j)
        j = np.where(j >= size, 2 * (size - 1) - j, j)
    elif mode == "replicate":
        j = np.clip(j, 0, size - 1)
    else:
        j = j % size
    return j


_PAD_NAMES = {"reflect": "ReflectionPad{}DBackward0", "replicate": "ReplicationPad{}DBackward0",
              "circular": "CopySlices"}


def pad(input, pad, mode="constant", value=None):
    """Pad the last ``len(pad) // 2`` dims; ``pad`` lists (left, right) widths starting from the LAST dim:
    ``(left, right, top, bottom, ...)``. Modes: constant (with ``value``), reflect, replicate, circular.

    >>> F.pad(tapegrad.tensor([[1., 2., 3.]]), (1, 2), mode="reflect").tolist()
    [[2.0, 1.0, 2.0, 3.0, 2.0, 1.0]]
    """
    widths_in = [int(p) for p in pad]
    if len(widths_in) % 2:
        raise op_error("pad", "Padding length must be divisible by 2")
    d = len(widths_in) // 2
    nd = input.ndim
    if d > nd:
        raise op_error("pad", f"Padding length should be less than or equal to two times the input dimension but "
                              f"got padding length {len(widths_in)} and input of dimension {nd}")
    widths = tuple((widths_in[2 * (d - 1 - i)], widths_in[2 * (d - 1 - i) + 1]) for i in range(d))  # dim order
    if mode == "constant":
        for i, (b, a) in enumerate(widths):
            size = input.shape[nd - d + i]
            if size + b + a < 0:
                raise op_error("pad", f"The input size {size}, plus negative padding {b} and {a} resulted in a "
                                      f"negative output size, which is invalid. Check dimension {nd - d + i} of your "
                                      "input.")
        v = 0 if value is None else value
        if input.dtype.is_floating_point or input.dtype.is_complex:
            v = float(v) if not isinstance(v, complex) else v
        else:
            v = int(v)
        return ConstantPadNd.apply(input, widths, v)
    if mode not in _PAD_NAMES:
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if value is not None and value != 0:
        raise op_error("pad", f'Padding mode "{mode}" doesn\'t take in value argument')
    if d not in (1, 2, 3) or nd not in (d + 1, d + 2):
        raise NotImplementedError(
            f"Padding size {len(widths_in)} is not supported for {nd}D input tensor.\n"
            "Supported combinations for non-constant padding:\n"
            "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
            "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
            "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")
    S = input.shape[nd - d:]
    if any(s == 0 for s in input.shape[1:]):
        raise op_error("pad", f"Expected {d + 1}D or {d + 2}D (batch mode) tensor with possibly 0 batch size and "
                              f"other non-zero dimensions for input, but got: {shape_str(input.shape)}")
    taps = []
    for i, (b, a) in enumerate(widths):
        if mode == "reflect" and (b >= S[i] or a >= S[i]):
            raise op_error("pad", f"Argument #4: Padding size should be less than the corresponding input dimension, "
                                  f"but got: padding ({b}, {a}) at dimension {nd - d + i} of input "
                                  f"{shape_str(input.shape)}")
        # circular: negative widths crop first, then the rest wraps around the cropped signal (where torch's own
        # result is defined; when a width exceeds the cropped size torch reads uninitialised memory)
        if mode == "circular" and (b > S[i] or a > S[i]):
            raise op_error("pad", "Padding value causes wrapping around more than once.")
        if S[i] + b + a < 1 and ((d == 1 and mode != "circular") or S[i] + b + a < 0):
            raise op_error("pad", f"input (W: {S[i]}) is too small. Calculated output W: {S[i] + b + a}"
                           if d == 1 else f"input size {S[i]} with padding ({b}, {a}) gives a negative output size")
        taps.append(None if b == 0 and a == 0 else _AxisTaps(_pad_index(mode, S[i], b, a)[:, None], None, S[i]))
    return _taps(_PAD_NAMES[mode].format(d), input, taps)


# --- interpolation ------------------------------------------------------------------------------------------------
def _np_dtype_for(x):
    return x.dtype if x.dtype.kind == "f" else np.dtype(np.float32)


def _linear_taps(size, out, scale, align_corners, dt):
    """Linear interpolation taps (torch's ``area_pixel_compute_source_index``, in the input's float type)."""
    dt = np.dtype(dt).type
    if align_corners:
        ratio = dt(size - 1) / dt(out - 1) if out > 1 else dt(0)
    else:
        ratio = dt(1.0 / scale) if scale is not None and scale > 0 else dt(size) / dt(out)
    o = np.arange(out).astype(dt)
    if align_corners:
        real = ratio * o
    else:
        real = np.maximum(ratio * (o + dt(0.5)) - dt(0.5), dt(0))
    i0 = real.astype(np.int64)
    i0 = np.minimum(i0, size - 1)
    i1 = i0 + (i0 < size - 1)
    l1 = np.clip(real - i0.astype(dt), 0, 1).astype(dt)
    l0 = (dt(1) - l1).astype(dt)
    return _AxisTaps(np.stack([i0, i1], 1), np.stack([l0, l1], 1).astype(np.float64), size)


def _cubic_taps(size, out, scale, align_corners, dt):
    """Bicubic taps (A = -0.75, clamped borders), as torch's ``upsample_bicubic2d``."""
    dt = np.dtype(dt).type
    if align_corners:
        ratio = dt(size - 1) / dt(out - 1) if out > 1 else dt(0)
    else:
        ratio = dt(1.0 / scale) if scale is not None and scale > 0 else dt(size) / dt(out)
    o = np.arange(out).astype(dt)
    real = ratio * o if align_corners else ratio * (o + dt(0.5)) - dt(0.5)
    i = np.floor(real).astype(np.int64)
    t = (real - i.astype(dt)).astype(dt)
    A = dt(-0.75)

    def c1(x):   # |x| <= 1
        return ((A + 2) * x - (A + 3)) * x * x + 1

    def c2(x):   # 1 < |x| < 2
        return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A

    x2 = dt(1) - t
    w = np.stack([c2(t + dt(1)), c1(t), c1(x2), c2(x2 + dt(1))], 1).astype(dt)
    idx = np.clip(i[:, None] + np.arange(-1, 3)[None, :], 0, size - 1)
    return _AxisTaps(idx, w.astype(np.float64), size)


def _nearest_taps(size, out, scale, exact, shortcuts):
    if out == size and shortcuts:
        src = np.arange(out)
    elif out == 2 * size and shortcuts:
        src = np.arange(out) >> 1
    else:
        s = np.float32(1.0 / scale) if scale is not None and scale > 0 else np.float32(size) / np.float32(out)
        o = np.arange(out)
        if exact:
            src = np.floor(((o + 0.5) * np.float64(s)).astype(np.float32)).astype(np.int64)
        else:
            src = np.floor(o.astype(np.float32) * s).astype(np.int64)
        src = np.minimum(src, size - 1)
    return _AxisTaps(src[:, None], None, size)


_INTERP_DIMS = {"linear": 1, "bilinear": 2, "bicubic": 2, "trilinear": 3}
_INTERP_NAMES = {"nearest": "UpsampleNearest{}DBackward0", "nearest-exact": "UpsampleNearestExact{}DBackward0",
                 "linear": "UpsampleLinear1DBackward0", "bilinear": "UpsampleBilinear2DBackward0",
                 "bicubic": "UpsampleBicubic2DBackward0", "trilinear": "UpsampleTrilinear3DBackward0"}


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    """Resize the spatial dims of ``(N, C, ...)`` input to ``size`` or by ``scale_factor``. Modes: nearest,
    nearest-exact, linear (3-D input), bilinear / bicubic (4-D), trilinear (5-D), area (adaptive average pooling).

    >>> F.interpolate(tapegrad.tensor([[[1., 2.]]]), scale_factor=2, mode="linear", align_corners=True).tolist()
    [[[1.0, 1.3333332538604736, 1.6666667461395264, 2.0]]]
    """
    nd = input.ndim
    d = nd - 2
    modes = ("nearest", "linear", "bilinear", "bicubic", "trilinear", "area", "nearest-exact")
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating modes: "
                             "linear | bilinear | bicubic | trilinear")
    elif mode in _INTERP_DIMS:
        if align_corners is None:
            align_corners = False
    if antialias and mode not in ("bilinear", "bicubic"):
        raise ValueError("Anti-alias option is restricted to bilinear and bicubic modes and requires a 4-D tensor "
                         "as input")
    if antialias:
        raise NotImplementedError("interpolate: antialias=True is not implemented in tapegrad")
    if d < 1 or d > 3 or mode not in modes:
        raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {nd}D) for the "
                                  "modes: nearest | linear | bilinear | bicubic | trilinear | area | nearest-exact "
                                  f"(got {mode})")
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    S = tuple(input.shape[2:])
    scales = None
    if recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if size is not None:
        if isinstance(size, (list, tuple)):
            if len(size) != d:
                raise ValueError("Input and output must have the same number of spatial dimensions, but got input "
                                 f"with spatial dimensions of {list(S)} and output size of {size}. Please provide "
                                 "input tensor in (N, C, d1, d2, ...,dK) format and output size in (o1, o2, ...,oK) "
                                 "format.")
            out = tuple(int(s) for s in size)
        else:
            out = (int(size),) * d
    elif scale_factor is not None:
        if isinstance(scale_factor, (list, tuple)):
            if len(scale_factor) != d:
                raise ValueError("Input and scale_factor must have the same number of spatial dimensions, but got "
                                 f"input with spatial dimensions of {list(S)} and scale_factor of shape "
                                 f"{scale_factor}. Please provide input tensor in (N, C, d1, d2, ...,dK) format and "
                                 "scale_factor in (s1, s2, ...,sK) format.")
            sf = tuple(float(s) for s in scale_factor)
        else:
            sf = (float(scale_factor),) * d
        out = tuple(int(math.floor(float(S[i]) * sf[i])) for i in range(d))
        scales = None if recompute_scale_factor else sf
    else:
        raise ValueError("either size or scale_factor should be defined")
    if mode == "area":
        return {1: adaptive_avg_pool1d, 2: adaptive_avg_pool2d, 3: adaptive_avg_pool3d}[d](input, out)
    if mode in _INTERP_DIMS and _INTERP_DIMS[mode] != d:
        raise NotImplementedError(f"Got {nd}D input, but {mode} mode needs {_INTERP_DIMS[mode] + 2}D input")
    if any(o <= 0 for o in out) or any(s <= 0 for s in S):
        names = ["D", "H", "W"][3 - d:]
        raise op_error("interpolate", "Input and output sizes should be greater than 0, but got input (" +
                       ", ".join(f"{n}: {s}" for n, s in zip(names, S)) + ") output (" +
                       ", ".join(f"{n}: {o}" for n, o in zip(names, out)) + ")")
    dt = _np_dtype_for(input._array)
    taps = []
    for i in range(d):
        sc = None if scales is None else scales[i]
        if mode in ("nearest", "nearest-exact"):
            # torch's 2-d kernel keeps the legacy shortcuts (same size: copy, double size: index >> 1)
            taps.append(_nearest_taps(S[i], out[i], sc, mode == "nearest-exact", d == 2 and mode == "nearest"))
        elif mode == "bicubic":
            taps.append(_cubic_taps(S[i], out[i], sc, align_corners, dt))
        else:   # an axis whose size does not change is copied (whatever the scale factor), as in torch
            taps.append(_linear_taps(S[i], out[i], None if out[i] == S[i] else sc, align_corners, dt))
    return _taps(_INTERP_NAMES[mode].format(d), input, taps)


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    """Deprecated alias of ``interpolate`` (warns as torch does).

    >>> F.upsample(tapegrad.ones(1, 1, 2), scale_factor=2).shape
    tapegrad.Size([1, 1, 4])
    """
    warnings.warn("`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    """Deprecated: ``interpolate(..., mode='nearest')``."""
    warnings.warn("`nn.functional.upsample_nearest` is deprecated. Use `nn.functional.interpolate` instead.",
                  stacklevel=2)
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    """Deprecated: ``interpolate(..., mode='bilinear', align_corners=True)``."""
    warnings.warn("`nn.functional.upsample_bilinear` is deprecated. Use `nn.functional.interpolate` instead.",
                  stacklevel=2)
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


# --- pixel shuffle ------------------------------------------------------------------------------------------------
def _shuffle(x, r):
    lead = x.shape[:-3]
    c, h, w = x.shape[-3:]
    nl = len(lead)
    y = x.reshape(lead + (c // (r * r), r, r, h, w))
    y = y.transpose(tuple(range(nl)) + (nl, nl + 3, nl + 1, nl + 4, nl + 2))
    return np.ascontiguousarray(y).reshape(lead + (c // (r * r), h * r, w * r))


def _unshuffle(x, r):
    lead = x.shape[:-3]
    c, h, w = x.shape[-3:]
    nl = len(lead)
    y = x.reshape(lead + (c, h // r, r, w // r, r))
    y = y.transpose(tuple(range(nl)) + (nl, nl + 2, nl + 4, nl + 1, nl + 3))
    return np.ascontiguousarray(y).reshape(lead + (c * r * r, h // r, w // r))


class PixelShuffle(Primitive):
    """``(*, C r^2, H, W) -> (*, C, H r, W r)``; its backward is ``PixelUnshuffle``."""

    @staticmethod
    def forward(ctx, x, r):
        ctx.r = r
        return _shuffle(x, r)

    @staticmethod
    def backward(ctx, g):
        return PixelUnshuffle.apply(g, ctx.r), None


class PixelUnshuffle(Primitive):
    """``(*, C, H r, W r) -> (*, C r^2, H, W)``; its backward is ``PixelShuffle``."""

    @staticmethod
    def forward(ctx, x, r):
        ctx.r = r
        return _unshuffle(x, r)

    @staticmethod
    def backward(ctx, g):
        return PixelShuffle.apply(g, ctx.r), None


def pixel_shuffle(input, upscale_factor):
    """Rearrange ``(*, C * r^2, H, W)`` into ``(*, C, H * r, W * r)``.

    >>> F.pixel_shuffle(tapegrad.arange(4.).reshape(1, 4, 1, 1), 2).tolist()
    [[[[0.0, 1.0], [2.0, 3.0]]]]
    """
    r = int(upscale_factor)
    if input.ndim < 3:
        raise op_error("pixel_shuffle", f"pixel_shuffle expects input to have at least 3 dimensions, but got input "
                                        f"with {input.ndim} dimension(s)")
    if r <= 0:
        raise op_error("pixel_shuffle", f"pixel_shuffle expects a positive upscale_factor, but got {r}")
    c = input.shape[-3]
    if c % (r * r):
        raise op_error("pixel_shuffle", "pixel_shuffle expects its input's 'channel' dimension to be divisible by "
                                        f"the square of upscale_factor, but input.size(-3)={c} is not divisible by "
                                        f"{r * r}")
    return PixelShuffle.apply(input, r)


def pixel_unshuffle(input, downscale_factor):
    """Rearrange ``(*, C, H * r, W * r)`` into ``(*, C * r^2, H, W)`` (the inverse of ``pixel_shuffle``).

    >>> F.pixel_unshuffle(tapegrad.arange(4.).reshape(1, 1, 2, 2), 2).flatten().tolist()
    [0.0, 1.0, 2.0, 3.0]
    """
    r = int(downscale_factor)
    if input.ndim < 3:
        raise op_error("pixel_unshuffle", "pixel_unshuffle expects input to have at least 3 dimensions, but got "
                                          f"input with {input.ndim} dimension(s)")
    if r <= 0:
        raise op_error("pixel_unshuffle", f"pixel_unshuffle expects a positive downscale_factor, but got {r}")
    h, w = input.shape[-2:]
    if h % r:
        raise op_error("pixel_unshuffle", "pixel_unshuffle expects height to be divisible by downscale_factor, but "
                                          f"input.size(-2)={h} is not divisible by {r}")
    if w % r:
        raise op_error("pixel_unshuffle", "pixel_unshuffle expects width to be divisible by downscale_factor, but "
                                          f"input.size(-1)={w} is not divisible by {r}")
    return PixelUnshuffle.apply(input, r)

