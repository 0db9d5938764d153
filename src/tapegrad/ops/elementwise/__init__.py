"""Elementwise ops: arithmetic, math functions, activations, comparisons, logic.

Each op is declared once: its Primitive (forward on arrays, backward in tapegrad ops, so double backward works),
its public function, its Tensor method and operator, and its in-place variant, in one sub-family module:

- ``_common``: the helpers they share, and ``where``;
- ``copies``: clone, to, casts, zero_ / fill_ / copy_;
- ``unary``: exp, log, trig, sigmoid, erf, rounding, sign, abs, logit, nan_to_num, clamp;
- ``arith``: add, sub, mul, div, floor_divide, neg, pow, float_power, square, and their operators;
- ``binary``: atan2, hypot, maximum/minimum, fmod/remainder, lerp, addcmul/addcdiv, copysign, xlogy;
- ``activations``: relu and the nn.functional activations;
- ``compare``: comparisons, logic, bitwise ops, isnan and the other tests;
- ``complex``: conj, real/imag and view_as_real/view_as_complex (views), complex, polar, angle, sgn;
- ``extra``: logaddexp(2), deg2rad / rad2deg, gcd / lcm, heaviside, frexp / ldexp, nextafter, bit shifts,
  positive, rsub, and the top-level fill / fill_ / zero_.

dtypes follow torch's promotion (``promote`` / ``_dtype.result_type``): integer inputs of float ops give the
default float dtype, Python numbers are weak, 0-d tensors only win with a higher category.
"""

from ._common import *  # noqa: F403
from .copies import *  # noqa: F403
from .unary import *  # noqa: F403
from .arith import *  # noqa: F403
from .binary import *  # noqa: F403
from .activations import *  # noqa: F403
from .compare import *  # noqa: F403
from .complex import *  # noqa: F403
from .extra import *  # noqa: F403

__all__ = [
    # arithmetic
    "add", "sub", "subtract", "mul", "multiply", "div", "divide", "true_divide", "floor_divide", "neg", "negative",
    "pow", "float_power", "atan2", "arctan2", "hypot", "maximum", "minimum", "fmax", "fmin", "fmod", "remainder",
    "lerp", "where", "addcmul", "addcdiv", "copysign", "xlogy", "xlogy_",
    # one input
    "abs", "absolute", "sign", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "square",
    "reciprocal", "sin", "cos", "tan", "asin", "acos", "atan", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh",
    "asinh", "acosh", "atanh", "arcsinh", "arccosh", "arctanh", "sigmoid", "logit", "erf", "erfc", "erfinv", "floor",
    "ceil", "round", "trunc", "fix", "frac", "clamp", "clip", "clamp_min", "clamp_max", "nan_to_num",
    # top-level in-place variants (torch.exp_ ...)
    "neg_", "negative_", "abs_", "exp_", "exp2_", "expm1_", "log_", "log2_", "log10_", "log1p_", "sqrt_", "rsqrt_",
    "square_", "reciprocal_", "sin_", "cos_", "tan_", "asin_", "acos_", "atan_", "arcsin_", "arccos_", "arctan_",
    "sinh_", "cosh_", "tanh_", "asinh_", "acosh_", "atanh_", "arcsinh_", "arccosh_", "arctanh_", "sigmoid_",
    "logit_", "erf_", "erfc_", "floor_", "ceil_", "round_", "trunc_", "fix_", "frac_", "clamp_", "clip_",
    "clamp_min_", "clamp_max_", "nan_to_num_",
    # activations that torch also has at top level
    "relu", "relu_", "selu", "selu_", "celu", "celu_", "threshold", "threshold_", "hardshrink", "prelu", "rrelu",
    "rrelu_",
    # comparisons and logic (no gradient)
    "eq", "ne", "lt", "le", "gt", "ge", "greater", "greater_equal", "less", "less_equal", "not_equal",
    "logical_and", "logical_or", "logical_not", "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor",
    "bitwise_not", "isnan", "isinf", "isposinf", "isneginf", "isfinite", "isreal", "allclose", "isclose", "equal",
    "signbit",
    "clone", "to",
    # complex numbers
    "conj", "conj_physical", "conj_physical_", "resolve_conj", "resolve_neg", "is_conj", "is_neg", "real", "imag",
    "view_as_real", "view_as_complex", "complex", "polar", "angle", "sgn",
    # more math (extra)
    "logaddexp", "logaddexp2", "deg2rad", "deg2rad_", "rad2deg", "rad2deg_", "gcd", "gcd_", "lcm", "lcm_",
    "heaviside", "frexp", "ldexp", "ldexp_", "nextafter", "bitwise_left_shift", "bitwise_right_shift", "positive",
    "rsub", "fill", "fill_", "zero_",
]

# Names torch.nn.functional has (tapegrad/nn/functional.py re-exports them): the activations that live only in
# torch.nn.functional, plus those that torch has both at top level and in torch.nn.functional.
FUNCTIONAL = [
    "relu6", "leaky_relu", "leaky_relu_", "elu", "elu_", "gelu", "silu", "mish", "softplus", "softsign", "hardtanh",
    "hardtanh_", "hardsigmoid", "hardswish", "logsigmoid", "softshrink", "tanhshrink",
    "relu", "relu_", "selu", "selu_", "celu", "celu_", "threshold", "threshold_", "hardshrink", "prelu", "rrelu",
    "rrelu_", "sigmoid", "tanh",
]
