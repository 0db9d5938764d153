"""Activations: relu and its kin (relu6, leaky_relu, elu, selu, celu, threshold, prelu, rrelu),
hardtanh, hardsigmoid, hardswish, softplus, logsigmoid, silu, mish, gelu, the shrinks, softsign.
"""

from __future__ import annotations

import math

import numpy as np

from ...autograd.function import OWN_GRAD
from .._util import _F16, ELEMENTWISE, Primitive, Tensor, apply_inplace, bind, kernel, refuse_complex, zero_link
from .._util import _ZeroLink
from ._common import _cast_all, _float_only, _no_bool, _quiet, _result, _w
from .unary import _erf_np, _sigmoid_np, abs, erf, exp, sigmoid, tanh


# --- activations --------------------------------------------------------------------------------------------
_ZERO_BLOCK = 1 << 14
_ZEROS = {}


def _max0(x):
    """max(x, 0), with 0 as an array. NumPy's ``maximum`` runs a scalar loop when an operand is broadcast (a
    scalar, stride 0) but SIMD when both are arrays: measured with NumPy 2.4, float32 (64, 16, 28, 28) 243 -> 80
    µs, (128, 256) 10 -> 2 µs. So 0 comes from a block of zeros for a C-contiguous ``x``: whole for a small one, row
    by row over a large one. Any other layout keeps the scalar, so the result has ``x``'s layout, as torch's."""
    z = _ZEROS.get(x.dtype)
    if z is None:
        z = _ZEROS[x.dtype] = np.zeros(_ZERO_BLOCK, x.dtype)
        z.flags.writeable = False
    n = x.size
    if not x.flags.c_contiguous:       # (a scalar zero: the result keeps x's layout, as torch's relu does)
        return np.maximum(x, z[0])
    if n <= _ZERO_BLOCK:
        return np.maximum(x, z[:n].reshape(x.shape))
    out = np.empty_like(x)
    q = n - n % _ZERO_BLOCK
    xf, of = x.reshape(-1), out.reshape(-1)
    np.maximum(xf[:q].reshape(-1, _ZERO_BLOCK), z, out=of[:q].reshape(-1, _ZERO_BLOCK))
    np.maximum(xf[q:], z[:n - q], out=of[q:])
    return out


class Relu(Primitive):
    """max(x, 0); the gradient at 0 is 0 and at NaN 1 (NaN passes through), as torch's."""

    array_backward = True

    @staticmethod
    def jvp(ctx, t):
        return kernel(_ReluGrad, t, ctx.result)

    @staticmethod
    def forward(ctx, x):
        if x.dtype.kind == "b":
            raise RuntimeError("Boolean inputs not supported for relu")
        ctx.save_result()
        return _max0(x)

    @staticmethod
    def backward(ctx, grad):
        result, = ctx.saved_tensors
        if ctx._arrays is OWN_GRAD:     # (the walk's own gradient array, held by nobody else: masked in place)
            grad *= result != 0         # (result >= 0 or NaN: torch's "not result <= 0" in one comparison)
            return grad
        return kernel(_ReluGrad, grad, result)


class _ReluGrad(Primitive):
    """``grad`` where relu's ``result`` is not 0 (positive or NaN), else 0: ReluBackward's formula as one NumPy
    pass (torch's threshold_backward, ``result <= 0 ? 0 : grad``); differentiable in ``grad`` for double
    backward, constant in ``result``."""

    node_name = "ThresholdBackwardBackward0"

    @staticmethod
    def compute(grad, result):
        return grad * (result != 0)

    @staticmethod
    def forward(ctx, grad, result):
        mask = result != 0
        ctx.mask = mask
        return grad * mask

    @staticmethod
    def backward(ctx, gg):
        # (torch's threshold_backward is also a function of relu's result, of zero derivative: the second-order
        # gradient stays connected to the input, and differentiating it again gives zeros)
        zero = Tensor._make(np.zeros(ctx.mask.shape, gg.dtype.np)) if ctx.needs_input_grad[1] else None
        return _ReluGrad.apply(gg, Tensor._make(ctx.mask)), zero

    @staticmethod
    def jvp(ctx, tg, _):             # linear in grad; the mask is constant
        return None if tg is None else _ReluGrad.apply(tg, ctx.inputs[1])


class Hardtanh(Primitive):
    """clip(x, min_val, max_val); gradient 1 strictly inside."""

    jvp = ELEMENTWISE      # a diagonal Jacobian: the tangent through the backward formula

    @staticmethod
    def forward(ctx, x, lo, hi):
        if x.dtype == np.bool_:
            raise RuntimeError("Bool inputs not supported for hardtanh")
        if x.dtype == np.uint8 and (lo < 0 or hi < 0):
            raise RuntimeError("cannot do hardtanh on an unsigned type with negative limits")
        # (gradient 0 at NaN: torch's vectorised kernel; its scalar tail, for tensors of a few elements, gives 1)
        ctx.mask = (x > lo) & (x < hi)
        ctx.save_inputs(0)      # (torch's hardtanh_backward takes it: create_graph's gradient stays connected)
        t = x.dtype.type
        return np.asarray(np.minimum(np.maximum(x, t(lo)), t(hi)))

    @staticmethod
    def backward(ctx, grad):
        return zero_link(ctx, _w(ctx.mask, grad, 0.0)), None, None


class LeakyRelu(Primitive):
    """x if x > 0 else slope * x."""

    jvp = ELEMENTWISE      # a diagonal Jacobian: the tangent through the backward formula

    @staticmethod
    @_quiet
    def forward(ctx, x, slope):
        _float_only("leaky_relu_cpu", x)
        ctx.mask, ctx.slope = x > 0, slope
        ctx.save_inputs(0)      # (torch's leaky_relu_backward takes it: create_graph's gradient stays connected)
        return np.asarray(np.where(ctx.mask, x, x * x.dtype.type(slope)))

    @staticmethod
    def backward(ctx, grad):
        return zero_link(ctx, _w(ctx.mask, grad, grad * ctx.slope)), None


class LeakyReluInplace(LeakyRelu):
    node_name = "LeakyReluBackward1"


class Elu(Primitive):
    """scale * (x if x > 0 else alpha * (exp(x * input_scale) - 1)): elu, selu (and celu, with its own name)."""

    jvp = ELEMENTWISE      # a diagonal Jacobian: the tangent through the backward formula

    @staticmethod
    @_quiet
    def forward(ctx, x, alpha, scale, input_scale):
        if x.dtype is _F16:     # (Half: computed in float32, rounded once, as torch)
            return Elu.forward(ctx, x.astype(np.float32), alpha, scale, input_scale).astype(_F16)
        _float_only("elu_cpu", x)
        ctx.save_inputs(0)
        ctx.p = (alpha, scale, input_scale)
        t = x.dtype.type
        with np.errstate(over="ignore"):
            neg = np.expm1(x * t(input_scale)) * t(alpha * scale)
        return np.asarray(np.where(x > 0, x * t(scale), neg))

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        alpha, scale, iscale = ctx.p
        neg = grad * (iscale * alpha * scale) * exp(x * iscale)
        return _w(x._array <= 0, neg, grad * scale), None, None, None


class EluInplace(Primitive):
    """The in-place elu/selu/celu: backward from the result, as torch's ``EluBackward1``."""

    node_name = "EluBackward1"

    @staticmethod
    def forward(ctx, x, alpha, scale, input_scale):
        out = Elu.forward(ctx, x, alpha, scale, input_scale)
        ctx.save_result()
        return out

    @staticmethod
    def backward(ctx, grad):
        r, = ctx.saved_tensors
        alpha, scale, iscale = ctx.p
        return _w(r._array <= 0, grad * iscale * (r + alpha * scale), grad * scale), None, None, None


def _celu_backward_scale(ctx):
    # torch's derivative of celu uses input_scale = 1.0 / alpha.toFloat(): alpha rounded to float32 (even for
    # float64 tensors), while its forward uses 1 / alpha exactly
    alpha, scale, _ = ctx.p
    ctx.p = (alpha, scale, 1.0 / float(np.float32(alpha)))


class Celu(Elu):
    node_name = "CeluBackward0"

    @staticmethod
    def forward(ctx, x, alpha, scale, input_scale):
        out = Elu.forward(ctx, x, alpha, scale, input_scale)
        _celu_backward_scale(ctx)
        return out


class CeluInplace(EluInplace):
    node_name = "CeluBackward1"

    @staticmethod
    def forward(ctx, x, alpha, scale, input_scale):
        out = EluInplace.forward(ctx, x, alpha, scale, input_scale)
        _celu_backward_scale(ctx)
        return out


class Threshold(Primitive):
    """x unless x <= threshold, then value (torch's test: NaN is kept, with gradient 1)."""

    jvp = ELEMENTWISE      # a diagonal Jacobian: the tangent through the backward formula

    @staticmethod
    def forward(ctx, x, th, value):
        _no_bool("threshold_cpu", x.dtype)
        ctx.mask = ~(x <= th)
        ctx.save_inputs(0)      # (torch's threshold_backward takes it: create_graph's gradient stays connected)
        return np.asarray(np.where(ctx.mask, x, np.asarray(value).astype(x.dtype)))

    @staticmethod
    def backward(ctx, grad):
        return zero_link(ctx, _w(ctx.mask, grad, 0.0)), None, None


class ThresholdInplace(Threshold):
    node_name = "ThresholdBackward1"


_ONE_SIXTH_F = float(np.float32(1.0) / np.float32(6.0))   # torch's backward uses the float literal 1.0f / 6


class Hardsigmoid(Primitive):
    """relu6(x + 3) / 6."""

    jvp = ELEMENTWISE      # a diagonal Jacobian: the tangent through the backward formula

    @staticmethod
    def forward(ctx, x):
        if x.dtype is _F16:     # (Half: computed in float32, rounded once, as torch)
            return Hardsigmoid.forward(ctx, x.astype(np.float32)).astype(_F16)
        _float_only("hardsigmoid_cpu", x)
        ctx.mask = (x > -3) & (x < 3)
        ctx.save_inputs(0)      # (torch's hardsigmoid_backward takes it: create_graph's gradient stays connected)
        t = x.dtype.type
        return np.asarray(np.minimum(np.maximum(x + t(3), t(0)), t(6)) / t(6))

    @staticmethod
    def backward(ctx, grad):
        return zero_link(ctx, _w(ctx.mask, grad * _ONE_SIXTH_F, 0.0), link=_HardsigmoidBackward)


class _HardsigmoidBackward(_ZeroLink):
    """hardsigmoid's gradient, connected to the input as torch's; torch has no derivative of it (its error)."""

    node_name = "HardsigmoidBackwardBackward0"

    @staticmethod
    def backward(ctx, gg):
        raise RuntimeError("derivative for aten::hardsigmoid_backward is not implemented")


class Hardswish(Primitive):
    """x * relu6(x + 3) / 6."""

    jvp = ELEMENTWISE      # a diagonal Jacobian: the tangent through the backward formula

    @staticmethod
    def forward(ctx, x):
        if x.dtype is _F16:     # (Half: computed in float32, rounded once, as torch)
            return Hardswish.forward(ctx, x.astype(np.float32)).astype(_F16)
        _float_only("hardswish_cpu", x)
        ctx.save_inputs(0)
        t = x.dtype.type
        return np.asarray(x * np.minimum(np.maximum(x + t(3), t(0)), t(6)) / t(6))

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        xa = x._array
        return _w(xa <= -3, 0.0, _w(xa < 3, grad * (x / 3 + 0.5), grad))


class Softplus(Primitive):
    """log(1 + exp(beta * x)) / beta, linear above ``threshold`` (stable for any x)."""

    jvp = ELEMENTWISE      # a diagonal Jacobian: the tangent through the backward formula

    @staticmethod
    @_quiet
    def forward(ctx, x, beta, threshold):
        if x.dtype is _F16:     # (Half: computed in float32, rounded once, as torch)
            return Softplus.forward(ctx, x.astype(np.float32), beta, threshold).astype(_F16)
        _float_only("softplus_cpu", x)
        ctx.save_inputs(0)
        ctx.beta, ctx.threshold = beta, threshold
        t = x.dtype.type
        bx = x * t(beta)
        with np.errstate(over="ignore"):
            soft = (np.maximum(bx, 0) + np.log1p(np.exp(-np.abs(bx)))) / t(beta)
        return np.asarray(np.where(bx > threshold, x, soft))

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        beta = ctx.beta
        return _w(x._array * beta > ctx.threshold, grad, grad * sigmoid(x * beta)), None, None


class LogSigmoid(Primitive):
    """log(sigmoid(x)) = min(x, 0) - log1p(exp(-|x|)), stable for any x."""

    node_name = "LogSigmoidBackward0"

    jvp = ELEMENTWISE      # a diagonal Jacobian: the tangent through the backward formula

    @staticmethod
    @_quiet
    def forward(ctx, x):
        if x.dtype is _F16:     # (Half: computed in float32, rounded once, as torch)
            return LogSigmoid.forward(ctx, x.astype(np.float32)).astype(_F16)
        _float_only("log_sigmoid_forward_cpu", x)
        ctx.save_inputs(0)
        return np.asarray(np.minimum(x, 0) - np.log1p(np.exp(-np.abs(x))))

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        return grad * sigmoid(-x)


class Silu(Primitive):
    """x * sigmoid(x)."""

    jvp = ELEMENTWISE      # a diagonal Jacobian: the tangent through the backward formula

    @staticmethod
    @_quiet
    def forward(ctx, x):
        if x.dtype is _F16:     # (Half: computed in float32, rounded once, as torch)
            return Silu.forward(ctx, x.astype(np.float32)).astype(_F16)
        _float_only("silu_cpu", x)
        ctx.save_inputs(0)
        return np.asarray(x * _sigmoid_np(x))

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        s = sigmoid(x)
        return grad * (s * (1 + x * (1 - s)))


class Mish(Primitive):
    """x * tanh(softplus(x))."""

    jvp = ELEMENTWISE      # a diagonal Jacobian: the tangent through the backward formula

    @staticmethod
    @_quiet
    def forward(ctx, x):
        if x.dtype is _F16:     # (Half: computed in float32, rounded once, as torch)
            return Mish.forward(ctx, x.astype(np.float32)).astype(_F16)
        _float_only("mish_cpu", x)
        ctx.save_inputs(0)
        sp = np.maximum(x, 0) + np.log1p(np.exp(-np.abs(x)))
        return np.asarray(x * np.tanh(sp))

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        t = tanh(Softplus.apply(x, 1.0, 20.0))
        return grad * (t + x * sigmoid(x) * (1 - t * t))


_SQRT1_2 = 1 / math.sqrt(2.0)
_INV_SQRT_2PI = 1 / math.sqrt(2 * math.pi)
_GELU_K = math.sqrt(2 / math.pi)


class Gelu(Primitive):
    """x * Phi(x) (``approximate="none"``) or its tanh approximation (``approximate="tanh"``)."""

    jvp = ELEMENTWISE      # a diagonal Jacobian: the tangent through the backward formula

    @staticmethod
    @_quiet
    def forward(ctx, x, approximate):
        if x.dtype is _F16:     # (Half: computed in float32, rounded once, as torch)
            return Gelu.forward(ctx, x.astype(np.float32), approximate).astype(_F16)
        if approximate not in ("none", "tanh"):
            raise RuntimeError(f"approximate argument must be either none or tanh. (got {approximate!r})")
        _float_only("GeluKernelImpl", x)
        ctx.save_inputs(0)
        ctx.approximate = approximate
        t = x.dtype.type
        if approximate == "tanh":
            inner = t(_GELU_K) * (x + t(0.044715) * x * x * x)
            return np.asarray(t(0.5) * x * (t(1) + np.tanh(inner)))
        return np.asarray(x * t(0.5) * (t(1) + _erf_np(x * t(_SQRT1_2))))

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        if ctx.approximate == "tanh":
            x2 = x * x
            th = tanh((x + 0.044715 * x2 * x) * _GELU_K)
            left = 0.5 * (1 + th)
            right = 0.5 * x * (1 - th * th) * (_GELU_K * (1 + 3 * 0.044715 * x2))
            return grad * (left + right), None
        cdf = 0.5 * (1 + erf(x * _SQRT1_2))
        pdf = exp(-0.5 * x * x) * _INV_SQRT_2PI
        return grad * (cdf + x * pdf), None


class Hardshrink(Primitive):
    """x unless -lambd <= x <= lambd, then 0: NaN is kept, with gradient 0 (torch's two tests)."""

    jvp = ELEMENTWISE      # a diagonal Jacobian: the tangent through the backward formula

    @staticmethod
    def forward(ctx, x, lambd):
        _float_only("hardshrink_cpu", x)
        ctx.mask = (x < -lambd) | (x > lambd)
        ctx.save_inputs(0)      # (torch's *shrink_backward takes it: create_graph's gradient stays connected)
        return np.asarray(np.where((x >= -lambd) & (x <= lambd), np.zeros((), x.dtype), x))

    @staticmethod
    def backward(ctx, grad):
        return zero_link(ctx, _w(ctx.mask, grad, 0.0)), None


class Softshrink(Primitive):
    """x - lambd above lambd, x + lambd below -lambd, else x * 0 (0, and NaN for NaN, as torch; the gradient at
    NaN is 0)."""

    jvp = ELEMENTWISE      # a diagonal Jacobian: the tangent through the backward formula

    @staticmethod
    def forward(ctx, x, lambd):
        _float_only("softshrink_cpu", x)
        t = x.dtype.type
        ctx.mask = (x < -lambd) | (x > lambd)
        ctx.save_inputs(0)      # (torch's *shrink_backward takes it: create_graph's gradient stays connected)
        return np.asarray(np.where(x > lambd, x - t(lambd), np.where(x < -lambd, x + t(lambd), x * t(0))))

    @staticmethod
    def backward(ctx, grad):
        return zero_link(ctx, _w(ctx.mask, grad, 0.0)), None


class Prelu(Primitive):
    """x if x > 0 else weight * x, one weight per channel (dim 1) or a single shared weight."""

    node_name = "PreluKernelBackward0"

    @staticmethod
    def forward(ctx, x, w):
        n = w.size
        if w.ndim > 1:
            raise RuntimeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = {w.ndim}")
        if n != 1:
            if x.ndim == 0:
                raise RuntimeError("Not allow zero-dim input tensor.")
            c = x.shape[1] if x.ndim >= 2 else 1
            if n != c:
                raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found parameter numbers "
                                   f"= {n} and channel size = {c}.")
            view = (1, n) + (1,) * (x.ndim - 2)
        else:
            view = (1,) * x.ndim
        ctx.view, ctx.wshape = view, w.shape
        ctx.save_inputs(0, 1)
        d = _result(x, w)
        x, w = _cast_all((x, w), d)
        return np.asarray(np.where(x > 0, x, x * w.reshape(view)))

    @staticmethod
    def backward(ctx, grad):
        x, w = ctx.saved_tensors
        need = ctx.needs_input_grad
        pos = x._array > 0
        gx = _w(pos, grad, grad * w.reshape(ctx.view)) if need[0] else None
        gw = None
        if need[1]:
            gw = _w(pos, 0.0, x * grad)
            dims = tuple(i for i, s in enumerate(ctx.view) if s == 1)
            if dims:
                gw = gw.sum(dims)
            gw = gw.reshape(ctx.wshape)
        return gx, gw


class Rrelu(Primitive):
    """Randomized leaky relu: negative inputs scaled by U(lower, upper) noise (training) or its mean (eval)."""

    node_name = "RreluWithNoiseBackward0"

    jvp = ELEMENTWISE      # a diagonal Jacobian: the tangent through the backward formula

    @staticmethod
    def forward(ctx, x, lower, upper, training):
        _float_only("rrelu_with_noise_cpu", x)
        if training:
            from ... import _random        # torch's: one float64 uniform per non-positive element, in order
            noise = np.ones(x.shape, x.dtype)          # (the bounds in x's dtype, the uniform a float64 one)
            neg = ~(x > 0)
            lo, hi = float(x.dtype.type(lower)), float(x.dtype.type(upper))
            u = _random.uniform01(_random.default_generator, int(neg.sum()))
            noise[neg] = u * (hi - lo) + lo                # (no fused multiply-add in this kernel of torch's)
        else:
            noise = np.asarray((lower + upper) / 2, x.dtype)
        ctx.factor = np.where(x > 0, np.ones((), x.dtype), noise)
        ctx.save_inputs(0)      # (torch's rrelu_with_noise_backward takes it: create_graph stays connected)
        return np.asarray(x * ctx.factor)

    @staticmethod
    def backward(ctx, grad):
        return zero_link(ctx, grad * ctx.factor), None, None, None


class RreluInplace(Rrelu):
    node_name = "RreluWithNoiseBackward1"


def _act(x, inplace, cls, inplace_cls, *args):
    if inplace:
        return apply_inplace(x, lambda t: inplace_cls.apply(t, *args))
    return cls.apply(x, *args)


def relu(input, inplace=False):  # noqa: A002
    """max(input, 0).

    >>> tapegrad.relu(tapegrad.tensor([-1., 2.]))
    tensor([0., 2.])
    """
    if input.__class__ is Tensor and input._array.dtype.kind == "c":      # (inline: relu is on the hot path)
        refuse_complex(input, message="clamp is not supported for complex types")
    return _act(input, inplace, Relu, Relu)


def relu_(input):  # noqa: A002
    """In-place relu."""
    return relu(input, inplace=True)


def relu6(input, inplace=False):  # noqa: A002
    """min(max(input, 0), 6).

    >>> F.relu6(tapegrad.tensor([-1., 7.]))
    tensor([0., 6.])
    """
    return hardtanh(input, 0.0, 6.0, inplace)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):  # noqa: A002
    """Clip to [min_val, max_val].

    >>> F.hardtanh(tapegrad.tensor([-2., 0.5]))
    tensor([-1.0000,  0.5000])
    """
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    refuse_complex(input, message="clamp is not supported for complex types")
    return _act(input, inplace, Hardtanh, Hardtanh, min_val, max_val)


def hardtanh_(input, min_val=-1.0, max_val=1.0):  # noqa: A002
    """In-place hardtanh."""
    return hardtanh(input, min_val, max_val, inplace=True)


def leaky_relu(input, negative_slope=0.01, inplace=False):  # noqa: A002
    """input if input > 0 else negative_slope * input.

    >>> F.leaky_relu(tapegrad.tensor([-1., 2.]), 0.1)
    tensor([-0.1000,  2.0000])
    """
    return _act(input, inplace, LeakyRelu, LeakyReluInplace, negative_slope)


def leaky_relu_(input, negative_slope=0.01):  # noqa: A002
    """In-place leaky_relu."""
    return leaky_relu(input, negative_slope, inplace=True)


def elu(input, alpha=1.0, inplace=False):  # noqa: A002
    """input if input > 0 else alpha * (exp(input) - 1).

    >>> F.elu(tapegrad.tensor([0., 1.]))
    tensor([0., 1.])
    """
    return _act(input, inplace, Elu, EluInplace, alpha, 1.0, 1.0)


def elu_(input, alpha=1.0):  # noqa: A002
    """In-place elu."""
    return elu(input, alpha, inplace=True)


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def selu(input, inplace=False):  # noqa: A002
    """scale * elu(input, alpha) with the self-normalising constants.

    >>> tapegrad.selu(tapegrad.tensor([0.]))
    tensor([0.])
    """
    return _act(input, inplace, Elu, EluInplace, _SELU_ALPHA, _SELU_SCALE, 1.0)


def selu_(input):  # noqa: A002
    """In-place selu."""
    return selu(input, inplace=True)


def celu(input, alpha=1.0, inplace=False):  # noqa: A002
    """max(0, input) + min(0, alpha * (exp(input / alpha) - 1)).

    >>> tapegrad.celu(tapegrad.tensor([0.]))
    tensor([0.])
    """
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError")
    return _act(input, inplace, Celu, CeluInplace, alpha, 1.0, 1.0 / alpha)


def celu_(input, alpha=1.0):  # noqa: A002
    """In-place celu."""
    return celu(input, alpha, inplace=True)


def threshold(input, threshold, value, inplace=False):  # noqa: A002
    """input where input > threshold, else value.

    >>> tapegrad.threshold(tapegrad.tensor([0.5, 2.]), 1.0, 0.0)
    tensor([0., 2.])
    """
    return _act(input, inplace, Threshold, ThresholdInplace, threshold, value)


def threshold_(input, threshold, value):  # noqa: A002
    """In-place threshold."""
    return _act(input, True, Threshold, ThresholdInplace, threshold, value)


def hardsigmoid(input, inplace=False):  # noqa: A002
    """relu6(input + 3) / 6.

    >>> F.hardsigmoid(tapegrad.tensor([0.]))
    tensor([0.5000])
    """
    return _act(input, inplace, Hardsigmoid, Hardsigmoid)


def hardswish(input, inplace=False):  # noqa: A002
    """input * relu6(input + 3) / 6.

    >>> F.hardswish(tapegrad.tensor([3.]))
    tensor([3.])
    """
    return _act(input, inplace, Hardswish, Hardswish)


def silu(input, inplace=False):  # noqa: A002
    """input * sigmoid(input).

    >>> F.silu(tapegrad.tensor([0.]))
    tensor([0.])
    """
    return _act(input, inplace, Silu, Silu)


def mish(input, inplace=False):  # noqa: A002
    """input * tanh(softplus(input)).

    >>> F.mish(tapegrad.tensor([0.]))
    tensor([0.])
    """
    return _act(input, inplace, Mish, Mish)


def gelu(input, approximate="none"):  # noqa: A002
    """input * Phi(input) (the Gaussian CDF), or its tanh approximation with ``approximate="tanh"``.

    >>> F.gelu(tapegrad.tensor([0.]))
    tensor([0.])
    """
    return Gelu.apply(input, approximate)


def softplus(input, beta=1.0, threshold=20.0):  # noqa: A002
    """log(1 + exp(beta * input)) / beta, linear where beta * input > threshold.

    >>> F.softplus(tapegrad.tensor([0.]))
    tensor([0.6931])
    """
    return Softplus.apply(input, beta, threshold)


def logsigmoid(input):  # noqa: A002
    """log(sigmoid(input)), stable for large |input|.

    >>> F.logsigmoid(tapegrad.tensor([0.]))
    tensor([-0.6931])
    """
    return LogSigmoid.apply(input)


def softsign(input):  # noqa: A002
    """input / (1 + |input|).

    >>> F.softsign(tapegrad.tensor([1.]))
    tensor([0.5000])
    """
    return input / (abs(input) + 1)


def tanhshrink(input):  # noqa: A002
    """input - tanh(input).

    >>> F.tanhshrink(tapegrad.tensor([0.]))
    tensor([0.])
    """
    return input - tanh(input)


def hardshrink(input, lambd=0.5):  # noqa: A002
    """input where |input| > lambd, else 0.

    >>> tapegrad.hardshrink(tapegrad.tensor([0.2, 1.]))
    tensor([0., 1.])
    """
    return Hardshrink.apply(input, lambd)


_FLOAT_MAX = {"float16": 65504.0, "bfloat16": 3.3895313892515355e+38, "float32": 3.4028234663852886e+38,
              "float64": 1.7976931348623157e+308}


def softshrink(input, lambd=0.5):  # noqa: A002
    """Shrink towards 0 by lambd (0 inside [-lambd, lambd]).

    >>> F.softshrink(tapegrad.tensor([0.2, 1.]))
    tensor([0.0000, 0.5000])
    """
    d = input.dtype
    if d.is_floating_point and not 0 <= lambd <= _FLOAT_MAX[d.name]:
        raise RuntimeError(f"lambda must be in range [0, {_FLOAT_MAX[d.name]:g}] for input dtype {d._legacy}, but "
                           f"found {lambd:g}")
    return Softshrink.apply(input, lambd)


def prelu(input, weight):  # noqa: A002
    """input if input > 0 else weight * input; ``weight`` has 1 element or one per channel (dim 1).

    >>> tapegrad.prelu(tapegrad.tensor([-2., 1.]), tapegrad.tensor([0.25]))
    tensor([-0.5000,  1.0000])
    """
    if isinstance(weight, Tensor) and isinstance(input, Tensor) and input.dtype != weight.dtype:
        raise RuntimeError(f"prelu: Type promoting not supported. Got {input.dtype._legacy} and "
                           f"{weight.dtype._legacy}")
    return Prelu.apply(input, weight)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):  # noqa: A002
    """Leaky relu with slope U(lower, upper) per element in training, (lower + upper) / 2 in eval.

    >>> tapegrad.rrelu(tapegrad.tensor([-3., 1.]), 0.25, 0.75)
    tensor([-1.5000,  1.0000])
    """
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
    return _act(input, inplace, Rrelu, RreluInplace, lower, upper, training)


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False):  # noqa: A002
    """In-place rrelu."""
    return rrelu(input, lower, upper, training, inplace=True)


bind(relu=relu, hardshrink=hardshrink, prelu=prelu, relu_=relu_)
