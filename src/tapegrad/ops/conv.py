"""Convolution, pooling and resampling primitives (conv as one GEMM over an as_strided im2col view)."""

from __future__ import annotations

__all__ = []
