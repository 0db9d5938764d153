# ruff: noqa: A001, A002 - torch's argument name (input)
"""Padding (constant, reflect, replicate, circular), interpolation (nearest, nearest-exact, linear,
bilinear, bicubic, trilinear; upsample*) and pixel_shuffle / pixel_unshuffle.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from .._util import Primitive, Tensor, linear_jvp, op_error, shape_str
from ._common import _AxisTaps, _is_int, _taps
from .._util import AUTOCAST
from .pooling import adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d


# --- padding ------------------------------------------------------------------------------------------------------
class ConstantPadNd(Primitive):
    """Constant padding (negative widths crop); its backward is constant padding with the negated widths."""

    @staticmethod
    def jvp(ctx, t, *_):             # the tangent padded with zeros
        return ConstantPadNd.apply(t, ctx.inputs[1], 0)

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
    if mode in ("reflect", "replicate") and AUTOCAST[0] is not None:     # (on PyTorch's float32 autocast list)
        (input,), _ = AUTOCAST[0].cast((input,), {}, "fp32")
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
    """The type torch computes source indices and weights in: the input's, float32 for Half (its opmath type)
    and for integers."""
    return x.dtype if x.dtype.kind == "f" and x.dtype != np.float16 else np.dtype(np.float32)


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


def _aa_taps(size, out, scale, align_corners, cubic):
    """Anti-aliased taps (``antialias=True``): each output averages the inputs under a filter stretched by the
    downscaling factor (a triangle for bilinear, Keys' cubic with a = -0.5 for bicubic), weights normalised to
    sum to 1 at the borders. torch's (and PIL's) separable scheme, computed in float64."""
    if align_corners:
        ratio = (size - 1) / (out - 1) if out > 1 else 0.0
    else:
        ratio = 1.0 / scale if scale is not None and scale > 0 else size / out
    half = 2.0 if cubic else 1.0                      # half the filter's width (interp_size / 2)
    support = half * ratio if ratio >= 1.0 else half
    invscale = 1.0 / ratio if ratio >= 1.0 else 1.0

    def filt(x):
        x = np.abs(x)
        if not cubic:
            return np.where(x < 1.0, 1.0 - x, 0.0)
        a = -0.5
        return np.where(x < 1.0, ((a + 2) * x - (a + 3)) * x * x + 1,
                        np.where(x < 2.0, (((x - 5) * x + 8) * x - 4) * a, 0.0))

    o = np.arange(out, dtype=np.float64)
    center = ratio * (o + 0.5)          # (align_corners changes only the ratio, as in torch)
    xmin = np.maximum((center - support + 0.5).astype(np.int64), 0)
    xmax = np.minimum((center + support + 0.5).astype(np.int64), size)
    width = max(int((xmax - xmin).max()), 1)
    j = np.arange(width)[None, :]
    idx = xmin[:, None] + j
    w = filt((idx - center[:, None] + 0.5) * invscale) * (j < (xmax - xmin)[:, None])
    total = w.sum(1, keepdims=True)
    w = np.divide(w, total, out=np.zeros_like(w), where=total != 0)
    return _AxisTaps(np.minimum(idx, size - 1), w, size)


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


def _upsample_size_error(mode, d, size):
    """torch's parser message when the upsampling kernel gets a non-integer size (a float, a bool, a float tensor)
    spread over the ``d`` spatial dims."""
    op = f"_upsample_nearest_exact{d}d" if mode == "nearest-exact" else f"upsample_{mode}{d}d"
    corners = "bool, " if mode in _INTERP_DIMS else ""
    named = "bool align_corners, " if mode in _INTERP_DIMS else ""
    scales = ", ".join(f"float scales{'_' + n if d > 1 else ''} = None" for n in "dhw"[3 - d:])
    kinds = ", ".join(["Tensor" if isinstance(size, Tensor) else type(size).__name__] * d)
    return (f"{op}() received an invalid combination of arguments - got (Tensor, list, {corners}NoneType), but "
            f"expected one of:\n * (Tensor input, tuple of ints output_size, {named}tuple of floats scale_factors)\n"
            f"      didn't match because some of the arguments have invalid types: (Tensor, !list of [{kinds}]!, "
            f"{corners}!NoneType!)\n * (Tensor input, tuple of ints output_size, {named}{scales}, *, Tensor out = "
            "None)\n")


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
            if not all(isinstance(s, (int, np.integer)) or isinstance(s, Tensor) and not s.is_floating_point()
                       for s in size):
                raise TypeError("expected size to be one of int or Tuple[int] or Tuple[int, int] or Tuple[int, int, "
                                f"int], but got size with types {[type(s) for s in size]}")
            out = tuple(int(s) for s in size)
        else:
            if mode == "area":                         # (the adaptive pool checks it, in its words)
                out = (size,) * d
            elif not (_is_int(size) or isinstance(size, Tensor) and size.numel() == 1 and
                      size._array.dtype.kind in "iu"):      # (a one-element integer tensor reads as an int too)
                raise TypeError(_upsample_size_error(mode, d, size))
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
        elif antialias:
            taps.append(_aa_taps(S[i], out[i], sc, align_corners, mode == "bicubic"))
        elif mode == "bicubic":
            taps.append(_cubic_taps(S[i], out[i], sc, align_corners, dt))
        else:   # an axis whose size does not change is copied (whatever the scale factor), as in torch
            taps.append(_linear_taps(S[i], out[i], None if out[i] == S[i] else sc, align_corners, dt))
    name = _INTERP_NAMES[mode].format(d)
    if antialias:           # (torch's nodes: _UpsampleBilinear2DAaBackward0, _UpsampleBicubic2DAaBackward0)
        name = name.replace("2DBackward0", "2DAaBackward0")
    return _taps(name, input, taps)


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

    jvp = staticmethod(linear_jvp)   # linear: the op itself applied to the tangents

    @staticmethod
    def forward(ctx, x, r):
        ctx.r = r
        return _shuffle(x, r)

    @staticmethod
    def backward(ctx, g):
        return PixelUnshuffle.apply(g, ctx.r), None


class PixelUnshuffle(Primitive):
    """``(*, C, H r, W r) -> (*, C r^2, H, W)``; its backward is ``PixelShuffle``."""

    jvp = staticmethod(linear_jvp)   # linear: the op itself applied to the tangents

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
