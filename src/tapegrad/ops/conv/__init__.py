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

The sub-family modules: ``_common`` (argument helpers, the plane gather / scatter, the per-axis taps),
``pooling`` (max / average / adaptive / LP / fractional pooling, max unpooling), ``resampling`` (padding,
interpolation, pixel shuffle), ``convolution`` (convolutions, unfold / fold) and ``grid`` (affine_grid,
grid_sample).
"""

from ._common import *  # noqa: F403
from .pooling import *  # noqa: F403
from .resampling import *  # noqa: F403
from .convolution import *  # noqa: F403
from .grid import *  # noqa: F403

__all__ = [
    "conv1d", "conv2d", "conv3d", "conv_tbc", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
    "max_pool1d", "max_pool2d", "max_pool3d", "max_pool1d_with_indices", "max_pool2d_with_indices",
    "max_pool3d_with_indices", "avg_pool1d", "avg_pool2d", "avg_pool3d",
    "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d",
    "adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool3d",
    "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices", "adaptive_max_pool3d_with_indices",
    "max_unpool1d", "max_unpool2d", "max_unpool3d", "lp_pool1d", "lp_pool2d", "lp_pool3d", "fractional_max_pool2d",
    "fractional_max_pool2d_with_indices", "fractional_max_pool3d", "fractional_max_pool3d_with_indices", "unfold",
    "fold", "interpolate", "upsample",
    "upsample_nearest", "upsample_bilinear", "pad", "pixel_shuffle", "pixel_unshuffle", "affine_grid", "grid_sample",
]

