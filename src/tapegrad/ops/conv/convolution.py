# ruff: noqa: A001, A002 - torch's argument name (input)
"""Convolution (torch's ``aten::convolution``, node ``ConvolutionBackward0``): conv1d/2d/3d and
conv_transpose1d/2d/3d, one GEMM per group over an ``as_strided`` im2col view; the weight gradient
(``ConvWeightGrad``); and unfold / fold (``Im2Col`` / ``Col2Im``, each the other's backward).
"""

from __future__ import annotations

import math

import numpy as np
from numpy.lib.stride_tricks import as_strided

from .. import _util
from ..._dtype import can_cast, promote_types
from .._util import Primitive, add_tangents, linear_jvp, op_error, shape_str
from ._common import _conv_out_size, _ntuple, _offsets, _pad_array, _scalar, _size_str, _strided_slices, _windows
from .resampling import pad
from .._util import autocast_listed


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


def _channels_last_layout(a):
    """Whether a 4-d (5-d) array's strides are ordered channels last (torch's ``suggest_memory_format``: channels
    densest, then the spatial dims from the last, then the batch; a slice of such a tensor counts): torch's
    convolutions then give a channels-last output (whether the input or the weight is so laid out)."""
    if a.ndim not in (4, 5) or a.flags.c_contiguous:
        return False
    sizes, strides = a.shape, a.strides
    if strides[1] == 0:
        return False
    least = 0
    for d in (1,) + tuple(range(a.ndim - 1, 1, -1)) + (0,):
        if sizes[d] == 0 or strides[d] < least or (d == 0 and least == strides[1]):
            return False
        least = strides[d] * (sizes[d] if sizes[d] > 1 else 1)
    return True


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
    # row-major as torch's (the first branch's product is a transposed view: with one input channel per group its
    # reshape stays one, and ``autograd.grad(...)[k].view(-1)`` would fail)
    return np.ascontiguousarray(gw.reshape((cout, C // groups) + tuple(kernel)))


def _transpose_out_padding(in_sizes, out_sizes, kernel, stride, padding, dilation):
    """The output_padding that makes a transposed convolution of ``out_sizes`` come back to ``in_sizes``."""
    return tuple(in_sizes[i] - ((out_sizes[i] - 1) * stride[i] - 2 * padding[i] + dilation[i] * (kernel[i] - 1) + 1)
                 for i in range(len(kernel)))


class Convolution(Primitive):
    """torch's ``aten::convolution``: (transposed) N-d convolution with stride, padding, dilation and groups."""

    node_name = "ConvolutionBackward0"
    array_backward = True

    @staticmethod
    def jvp(ctx, tx, tw, tb, *_):    # linear in x and in w (the product rule), plus the bias's tangent
        x, w, _b, *rest = ctx.inputs
        op, kw = ctx.op, ctx.kwargs
        t = add_tangents(None if tx is None else op.apply(tx, w, None, *rest, **kw),
                         None if tw is None else op.apply(x, tw, None, *rest, **kw))
        if tb is not None:
            tb = tb.reshape((-1,) + (1,) * (x.ndim - 2))
        return add_tangents(t, tb)

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
        # (torch: channels last dominates a convolution; its float64 3-d kernel is the slow one, always contiguous)
        if (out.ndim == 4 or (out.ndim == 5 and out.dtype != np.float64)) and \
                (_channels_last_layout(x) or _channels_last_layout(w)):
            perm = (0,) + tuple(range(2, out.ndim)) + (1,)
            out = np.ascontiguousarray(out.transpose(perm)).transpose(np.argsort(perm))
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


def _check_bias_type(op, d, x, b, transposed):
    """torch's refusal of a bias of another dtype than the input (the transposed 1-d/2-d kernels add it in place:
    refused only where the promoted type can't be cast back)."""
    if not transposed:
        raise op_error(op, f"Input type ({_util._CPP_NAMES[x.dtype.name]}) and bias type "
                           f"({_util._CPP_NAMES[b.dtype.name]}) should be the same")
    if d == 3:
        raise op_error(op, f"expected scalar type {_scalar(x)} but found {_scalar(b)}")
    res = promote_types(x.dtype, b.dtype)
    if not can_cast(res, x.dtype):
        raise op_error(op, f"result type {_scalar(res)} can't be cast to the desired output type "
                           f"{_scalar(x)}")


def _conv(op, d, input, weight, bias, stride, padding, dilation, groups, transposed=False, output_padding=0):
    """Validate as torch does, then run ``Convolution`` (unbatched input gets a batch dim of 1 and loses it)."""
    xs, ws = tuple(input.shape), tuple(weight.shape)
    if len(xs) not in (d + 1, d + 2):
        raise op_error(op, f"Expected {d + 1}D (unbatched) or {d + 2}D (batched) input to {op}, but got input of "
                           f"size: {shape_str(xs)}")
    if len(ws) < 3:
        raise op_error(op, "weight should have at least three dimensions")
    if len(ws) != d + 2:
        raise op_error(op, f"Expected {len(ws)}-dimensional input for {len(ws)}-dimensional weight "
                           f"{shape_str(ws)}, but got {len(xs)}-dimensional input of size {shape_str(xs)} instead")
    if not transposed and bias is not None and bias.dtype != input.dtype and weight.dtype != input.dtype:
        _check_bias_type(op, d, input, bias, transposed)  # torch names the bias before a weight of another dtype
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
    if ws[0] < groups:
        raise op_error(op, f"Given groups={groups}, expected weight to be at least {groups} at dimension 0, but got "
                           f"weight of size {shape_str(ws)} instead")
    if ws[0] % groups:
        raise op_error(op, f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, but "
                           f"got weight of size [{shape_str(ws)}] instead")   # (torch's doubled brackets)
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
    if bias is not None and bias.dtype != input.dtype:
        _check_bias_type(op, d, input, bias, transposed)
    args = (stride, padding, dilation, transposed, output_padding, groups)
    if input._array.dtype.kind == "c":
        out = _complex_convolution(input, weight, bias, args)
    else:
        out = Convolution.apply(input, weight, bias, *args)
    return out.squeeze(0) if unbatched else out


def _complex_convolution(input, weight, bias, args):
    """A complex convolution as torch computes it, from three real ones (Gauss's trick): with x = a + ib,
    w = c + id, r1 = conv(a, c) + Re(bias), r2 = conv(b, d), r3 = conv(a + b, c + d) + Re(bias) + Im(bias),
    the result is (r1 - r2) + i (r3 - r1 - r2). Its gradients come from the real convolutions'."""
    a, b, c, d = input.real, input.imag, weight.real, weight.imag
    br = bi = None
    if bias is not None:
        br, bi = (bias.real, bias.imag) if bias._array.dtype.kind == "c" else (bias, None)
    r1 = Convolution.apply(a, c, br, *args)
    r2 = Convolution.apply(b, d, None, *args)
    r3 = Convolution.apply(a + b, c + d, br if bi is None else br + bi, *args)
    return (r1 - r2) + (r3 - r1 - r2) * 1j


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """1-d convolution (cross-correlation) over ``(N, C, L)`` or ``(C, L)`` input.

    >>> F.conv1d(tapegrad.ones(1, 1, 4), tapegrad.ones(1, 1, 2)).tolist()
    [[[2.0, 2.0, 2.0]]]
    """
    return _conv("conv1d", 1, input, weight, bias, stride, padding, dilation, groups)



def conv_tbc(input, weight, bias, pad=0):
    """A 1-d convolution in time-batch-channel layout: ``input`` ``(T, N, C_in)``, ``weight`` ``(K, C_in, C_out)``,
    ``bias`` ``(C_out,)``, ``pad`` zeros at both ends of time; the result is ``(T_out, N, C_out)``.

    >>> F.conv_tbc(tapegrad.ones(4, 1, 1), tapegrad.ones(2, 1, 1), tapegrad.zeros(1)).flatten().tolist()
    [2.0, 2.0, 2.0]
    """
    if input.ndim != 3:
        raise RuntimeError("Input must have 3 dims: time, batch, in_channel")
    if weight.ndim != 3:
        raise RuntimeError("Weight tensor must have 3 dims: kernel_width, in_channels, out_channels.")
    if bias.ndim != 1:
        raise RuntimeError("Bias must be 1-D")
    if input.shape[2] != weight.shape[1]:
        raise RuntimeError("Input dim 2 (input channels) is not == dim 1 in the weight tensor")
    if weight.shape[2] != bias.shape[0]:
        raise RuntimeError("Bias size must equal dim 2 in the weight tensor (output channels).")
    return conv1d(input.permute(1, 2, 0), weight.permute(2, 1, 0), bias, padding=pad).permute(2, 0, 1)

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


@autocast_listed("lower")
def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """1-d transposed convolution; weight is ``(C_in, C_out / groups, K)``.

    >>> F.conv_transpose1d(tapegrad.ones(1, 1, 2), tapegrad.ones(1, 1, 2)).tolist()
    [[[1.0, 2.0, 1.0]]]
    """
    return _conv("conv_transpose1d", 1, input, weight, bias, stride, padding, dilation, groups, True, output_padding)


@autocast_listed("lower")
def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """2-d transposed convolution ("deconvolution"); weight is ``(C_in, C_out / groups, kH, kW)``.

    >>> F.conv_transpose2d(tapegrad.ones(1, 1, 2, 2), tapegrad.ones(1, 1, 2, 2), stride=2).shape
    tapegrad.Size([1, 1, 4, 4])
    """
    return _conv("conv_transpose2d", 2, input, weight, bias, stride, padding, dilation, groups, True, output_padding)


@autocast_listed("lower")
def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """3-d transposed convolution; weight is ``(C_in, C_out / groups, kD, kH, kW)``.

    >>> F.conv_transpose3d(tapegrad.ones(1, 1, 1, 1, 1), tapegrad.ones(1, 1, 2, 2, 2)).shape
    tapegrad.Size([1, 1, 2, 2, 2])
    """
    return _conv("conv_transpose3d", 3, input, weight, bias, stride, padding, dilation, groups, True, output_padding)


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

    jvp = staticmethod(linear_jvp)   # linear: the op itself applied to the tangents

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

    jvp = staticmethod(linear_jvp)   # linear: the op itself applied to the tangents

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
