"""Batching rules of the elementwise ops (and the other broadcasting ones): each batched argument's logical dims are
left-padded with 1s to the largest logical rank among the arguments, with the batch dim kept first; unbatched
arguments broadcast against the trailing dims as they are. The op then runs once on the physical arrays."""

from __future__ import annotations

import numpy as np

from ...tensor import Tensor
from . import ldim, pad_to, phys_dim, register, register_names

_NAMES = {
    "tapegrad.ops.elementwise.unary": "Acos Acosh Asin Asinh Atan Atanh Ceil Cos Cosh Erf Erfc Erfinv Exp Exp2 "
                                      "Expm1 Floor Frac Log Log10 Log1P Log2 Reciprocal Round Rsqrt Sigmoid Sin "
                                      "Sinh Sqrt Tan Tanh Trunc Abs Clamp ClampMax ClampMaxTensor ClampMin "
                                      "ClampMinTensor ClampTensor Logit NanToNum RoundDecimals Sign _SigmoidGrad "
                                      "_TanhGrad",
    "tapegrad.ops.elementwise._common": "Where",
    "tapegrad.ops.elementwise.activations": "Celu Elu Gelu Hardshrink Hardsigmoid Hardswish Hardtanh LeakyRelu "
                                            "LogSigmoid Mish Relu Silu Softplus Softshrink Threshold _ReluGrad "
                                            "_HardsigmoidBackward",
    "tapegrad.ops.elementwise.arith": "Add AddAlpha Div DivRounded FloorDivide Mul Neg Pow PowTensor RPow Rsub Sub "
                                      "SubAlpha",
    "tapegrad.ops.elementwise.binary": "Addcdiv Addcmul Atan2 Copysign CopysignScalar Fmax Fmin Fmod FmodScalar "
                                       "Hypot Lerp LerpTensor Maximum Minimum RRemainder Remainder RemainderScalar "
                                       "Xlogy XlogyScalarX XlogyScalarY",
    "tapegrad.ops.elementwise.complex": "Angle Complex Conj ConjPhysical ImagView Polar RealView Sgn _Embed",
    "tapegrad.ops.elementwise.copies": "Clone FillScalar FillTensor ToCopy Zero",
    "tapegrad.ops.index.subscript": "Alias Copy",
    "tapegrad.ops.index.masked": "MaskedFill MaskedFillTensor",
    "tapegrad.ops.nn_ops._common": "_ClampMin _DivScalar _LogSigmoid _MaskedFill _Where _Xlogy",
    "tapegrad.ops.special._common": "AiryAi BesselJ0 BesselJ1 BesselY0 BesselY1 Digamma Entr Erfcx I0 I0e I1 I1e "
                                    "Lgamma LogNdtr ModifiedBesselI0 ModifiedBesselI1 ModifiedBesselK0 "
                                    "ModifiedBesselK1 Ndtr Ndtri ScaledModifiedBesselK0 ScaledModifiedBesselK1 "
                                    "SphericalBesselJ0",
    "tapegrad.ops.special.gamma": "Mvlgamma Polygamma Zeta ZetaScalarQ ZetaScalarX",
    "tapegrad.ops.special.incomplete": "Igamma Igammac",
    "tapegrad.ops.special.misc": "Sinc Xlog1py Xlog1pyScalarX Xlog1pyScalarY",
    "tapegrad.ops.special.polynomials": "Polynomial",
    "tapegrad.ops.fft": "_ToComplex _Conj _ConjPhysical",
    "tapegrad.ops._util": "_ZeroLink",
}


def broadcast_args(args, phys):
    """The arguments with each batched one padded to the largest logical rank (batch dim first)."""
    rank, ranks = 0, []
    for a in args:
        n = a._array.ndim if isinstance(a, Tensor) else a.ndim if isinstance(a, np.ndarray) else -1
        ranks.append(n)
        if n > rank:
            rank = n
    return tuple(a if p is None else p if n == rank else pad_to(p, n, rank) for a, p, n in zip(args, phys, ranks))


def elementwise(level, cls, args, kwargs, phys):
    if len(args) == 1:          # (a one-input op: nothing to pad)
        return cls.apply(phys[0], **kwargs)
    return cls.apply(*broadcast_args(args, phys), **kwargs)


register_names(_NAMES, elementwise)


_MODES = {"tapegrad.ops.elementwise.complex": "ViewAsReal ViewAsComplex", "tapegrad.ops.fft": "_ViewAsReal"}


def last_dim(level, cls, args, kwargs, phys):
    """``view_as_real``/``view_as_complex``: they work on the last dim, which the batch dim never is."""
    if (ldim(args[0]) == 0 and cls.__name__ == "ViewAsComplex") or any(p is not None for p in phys[1:]):
        return NotImplemented
    return cls.apply(phys[0], *args[1:], **kwargs)


register_names(_MODES, last_dim)


def _array_op_rule(level, cls, args, kwargs, phys):
    """A function computed on arrays (``ops._util.ArrayOp``): broadcast when elementwise; argmax/argmin with the
    dim moved past the batch dim (over all elements: each sample flattened); else once per sample."""
    if not args[1]:
        return _arg_extreme_rule(args, phys)
    return cls.apply(*args[:3], *broadcast_args(args[3:], phys[3:]), **kwargs)


def _arg_extreme_rule(args, phys):
    from ...ops.reduce import extrema
    fn = args[0]
    if (fn is not extrema.argmax and fn is not extrema.argmin) or len(args) != 6 or phys[3] is None \
            or any(p is not None for p in phys[4:]):
        return NotImplemented
    x, dim, keepdim = args[3], args[4], args[5]
    n, p = ldim(x), phys[3]
    if dim is None:
        if p.shape[1:].numel() == 0:
            return NotImplemented             # (the sample's own error, from the loop)
        out = fn(p.reshape((p.shape[0], -1)), 1)
        return out.reshape((p.shape[0],) + (1,) * n) if keepdim else out
    if n == 0 or isinstance(dim, (tuple, list)):
        return NotImplemented
    d = phys_dim(dim, n)
    return NotImplemented if d is None else fn(p, d, keepdim)


def _register_array_op():
    from ...ops._util import ArrayOp, Detach
    register(ArrayOp)(_array_op_rule)
    register(Detach)(elementwise)


_register_array_op()
