"""Specs of the one-input elementwise ops: math functions, rounding, clamp, activations (torch.nn.functional)."""

import numpy as np

from ops.op_db import OpSpec, S, noncontig, randn


def F(m, name):
    """``m.nn.functional.<name>``; for tapegrad, the op module's function if nn.functional lacks it."""
    try:
        f = getattr(m.nn.functional, name, None)
    except Exception:  # pragma: no cover - nn being rebuilt
        f = None
    if f is None and m.__name__ == "tapegrad":
        from tapegrad.ops import elementwise
        f = getattr(elementwise, name)
    return f


def _std(r, **kw):
    """Float samples covering the usual layouts: 2-d, 0-d, empty, non-contiguous, broadcast-free 3-d."""
    return [S(randn(r, 2, 3, **kw)), S(np.asarray(randn(r, **kw)), name="0d"), S(randn(r, 0, 3, **kw), name="empty"),
            S(noncontig(randn(r, 3, 2, **kw)), name="noncontig")]


def _unit(r, lo=-0.9, hi=0.9):
    return [S(randn(r, 2, 3, low=lo, high=hi)), S(np.asarray(randn(r, low=lo, high=hi)), name="0d"),
            S(noncontig(randn(r, 3, 2, low=lo, high=hi)), name="noncontig")]


_INT = np.array([[-2, 0, 3], [1, 5, -7]], dtype=np.int64)
_BOOL = np.array([True, False, True])


def _unary(name, samples, int_sample=True, **kw):
    """A spec for ``tapegrad.<name>(x)`` with its in-place ``x.<name>_()`` (int samples check dtype rules)."""
    def smp(r):
        s = samples(r)
        if int_sample:
            s.append(S(_INT.copy(), name="int"))
        return s
    return OpSpec(name, lambda m, x: getattr(m, name)(x), smp,
                  inplace=kw.pop("inplace", lambda x, n=name: getattr(x, n + "_")()), **kw)


def _rounding_samples(r):
    # keep away from the jumps (|x - k| > 0.05 for integers k, and half-integers for round)
    a = randn(r, 2, 3) * 3
    a = np.floor(a) + 0.1 + 0.3 * (np.abs(a - np.floor(a)) > 0.5)
    return [S(a), S(np.asarray(1.3), name="0d"), S(randn(r, 0, 2), name="empty"), S(noncontig(a.T.copy()),
                                                                                 name="noncontig")]


SPECS = [
    _unary("neg", _std),
    _unary("abs", _std),
    _unary("sign", _std),
    _unary("exp", _std),
    _unary("exp2", _std),
    _unary("expm1", _std),
    _unary("log", lambda r: _std(r, positive=True)),
    _unary("log2", lambda r: _std(r, positive=True)),
    _unary("log10", lambda r: _std(r, positive=True)),
    _unary("log1p", lambda r: _std(r, positive=True)),
    _unary("sqrt", lambda r: _std(r, positive=True)),
    _unary("rsqrt", lambda r: _std(r, positive=True)),
    _unary("square", lambda r: _std(r) + [S(_BOOL.copy(), name="bool")]),
    _unary("reciprocal", lambda r: _std(r, positive=True)),
    _unary("sin", _std), _unary("cos", _std), _unary("tan", _std), _unary("atan", _std),
    _unary("asin", _unit), _unary("acos", _unit), _unary("atanh", _unit),
    _unary("sinh", _std), _unary("cosh", _std), _unary("tanh", _std), _unary("asinh", _std),
    _unary("acosh", lambda r: _unit(r, 1.2, 3.0)),
    _unary("arcsin", _unit), _unary("arctan", _std), _unary("arccosh", lambda r: _unit(r, 1.2, 3.0)),
    _unary("sigmoid", lambda r: _std(r) + [S(randn(r, 4, low=-30, high=30), name="wide"),
                                           S(np.array([-1e4, -50.0, 50.0, 1e4]), name="huge")]),
    _unary("erf", lambda r: _std(r) + [S(randn(r, 6, low=-6, high=6), name="wide")]),
    _unary("erfc", lambda r: _std(r) + [S(randn(r, 6, low=-6, high=6), name="wide")]),
    _unary("erfinv", lambda r: _unit(r, -0.99, 0.99) + [S(np.array([-0.99, -0.5, 0.0, 0.3, 0.995]),
                                                          name="tails")]),
    _unary("floor", _rounding_samples), _unary("ceil", _rounding_samples), _unary("trunc", _rounding_samples),
    _unary("fix", _rounding_samples), _unary("round", _rounding_samples),
    _unary("frac", _rounding_samples, int_sample=False),
    OpSpec("round_decimals", lambda m, x, d: m.round(x, decimals=d), lambda r: [
        S(np.array([1234.5678, -2.2512, 0.1261, 7.0]), 2), S(np.array([1234.5678, -1267.0, 51.0]), -2, name="neg"),
        S(np.asarray(3.14159), 3, name="0d")],
        inplace=lambda x, d: x.round_(decimals=d)),
    OpSpec("round_decimals_ties", lambda m, x, d: m.round(x, decimals=d), lambda r: [
        S(np.array([0.125, 0.375, -2.5, 2.5, 0.5]), 2), S(np.array([-1250.0, 150.0, 250.0]), -2, name="neg"),
        S(np.array([0.5, 1.5, 2.5, -0.5]), 0, name="int_places")], grad=False,
        notes="values only: at a tie (half to even, as torch) the function jumps, so numerical gradients can't "
              "apply"),
    OpSpec("logit", lambda m, x, **kw: m.logit(x, **kw), lambda r: [
        S(randn(r, 2, 3, low=0.05, high=0.95)), S(np.asarray(0.3), name="0d"),
        S(np.array([0.01, 0.3, 0.6, 0.995]), eps=0.05, name="eps"), S(_INT[:1].copy(), name="int")],
        inplace=lambda x, **kw: x.logit_(**kw)),
    OpSpec("nan_to_num", lambda m, x, **kw: m.nan_to_num(x, **kw), lambda r: [
        S(np.array([[1.0, np.nan, -2.0], [np.inf, -np.inf, 0.5]])),
        S(np.array([np.nan, np.inf, -np.inf, 3.0]), nan=1.5, posinf=100.0, neginf=-100.0, name="values"),
        S(np.asarray(np.nan), name="0d"), S(_INT.copy(), name="int")],
        inplace=lambda x, **kw: x.nan_to_num_(**kw)),
    # clamp: number bounds (ClampBackward1), tensor bounds (ClampBackward0), one-sided, and their aliases
    OpSpec("clamp", lambda m, x, *b, **kw: m.clamp(x, *b, **kw), lambda r: [
        S(randn(r, 2, 3), -0.5, 0.5), S(randn(r, 2, 3), min=-0.3, name="min"), S(randn(r, 2, 3), max=0.2, name="max"),
        S(randn(r), -0.5, 0.5, name="0d"), S(randn(r, 0, 2), -1.0, 1.0, name="empty"),
        S(noncontig(randn(r, 3, 2)), 0.1, 0.4, name="noncontig"), S(_INT.copy(), -1, 2, name="int"),
        S(_INT.copy(), 0.5, name="int_float_bound"), S(randn(r, 3), 0.5, -0.5, name="min_gt_max")],
        inplace=lambda x, *b, **kw: x.clamp_(*b, **kw)),
    OpSpec("clamp_tensor", lambda m, x, lo, hi: m.clamp(x, lo, hi), lambda r: [
        S(randn(r, 2, 3), randn(r, 3) - 0.5, randn(r, 2, 1) + 0.5),
        S(randn(r, 3), randn(r, 3) + 0.5, randn(r, 3) - 0.5, name="min_gt_max"),
        S(randn(r, 2, 3), randn(r), randn(r, 3) + 1.0, name="0d_bound"),
        S(randn(r, 2, 3), np.zeros((2, 3), dtype=np.int64), np.ones((2, 3), dtype=np.int64), name="int_bounds")],
        inplace=lambda x, lo, hi: x.clamp_(lo, hi)),
    OpSpec("clamp_tensor_min", lambda m, x, lo: m.clamp(x, min=lo), lambda r: [S(randn(r, 2, 3), randn(r, 3))],
           inplace=lambda x, lo: x.clamp_(min=lo)),
    OpSpec("clamp_tensor_max", lambda m, x, hi: x.clamp(max=hi), lambda r: [S(randn(r, 2, 3), randn(r, 2, 1))]),
    OpSpec("clip", lambda m, x, lo, hi: m.clip(x, lo, hi), lambda r: [S(randn(r, 2, 3), -0.5, 0.5)],
           inplace=lambda x, lo, hi: x.clip_(lo, hi)),
    OpSpec("clamp_min", lambda m, x, v: m.clamp_min(x, v), lambda r: [
        S(randn(r, 2, 3), 0.1), S(randn(r, 2, 3), randn(r, 3), name="tensor")],
        inplace=lambda x, v: x.clamp_min_(v)),
    OpSpec("clamp_max", lambda m, x, v: m.clamp_max(x, v), lambda r: [
        S(randn(r, 2, 3), 0.1), S(randn(r, 2, 3), randn(r, 3), name="tensor")],
        inplace=lambda x, v: x.clamp_max_(v)),
]


# --- activations (torch.nn.functional) -----------------------------------------------------------------------
def _act_samples(r, lo=None):
    s = _std(r) + [S(randn(r, 2, 3, 4), name="3d"), S(randn(r, 6, low=-8, high=8), name="wide")]
    return s


def _huge(r):
    return [S(np.array([-1e4, -60.0, -3.5, 2.5, 60.0, 1e4]), name="huge")]


def _act(name, samples=_act_samples, inplace=None, kwargs=None, **kw):
    kwargs = kwargs or {}
    return OpSpec(f"nn.functional.{name}", lambda m, x, **k: F(m, name)(x, **k),
                  lambda r: [S(*s.args, **{**kwargs, **s.kwargs}, name=s.name) for s in samples(r)],
                  inplace=inplace, **kw)


def _ip(name, **fixed):
    return lambda x, **k: F(__import__("tapegrad"), name)(x, inplace=True, **{**fixed, **k})


SPECS += [
    _act("relu", inplace=_ip("relu")),
    _act("relu6", lambda r: _act_samples(r) + [S(_INT.copy() * 2, name="int")], inplace=_ip("relu6")),
    _act("leaky_relu", inplace=_ip("leaky_relu")),
    _act("leaky_relu", kwargs={"negative_slope": 0.2}),
    _act("elu", inplace=_ip("elu")),
    _act("elu", lambda r: [S(randn(r, 4), alpha=2.5, name="alpha"), S(np.array([-1.0, -0.2, 2.0]), alpha=0.5)],
         inplace=_ip("elu")),
    _act("selu", inplace=_ip("selu")),
    _act("celu", lambda r: _act_samples(r) + [S(randn(r, 4), alpha=0.7, name="alpha")], inplace=_ip("celu")),
    _act("gelu", lambda r: _act_samples(r) + [S(randn(r, 4), approximate="tanh", name="tanh")]),
    _act("gelu", kwargs={"approximate": "tanh"}),
    _act("silu", lambda r: _act_samples(r) + _huge(r), inplace=_ip("silu")),
    _act("mish", inplace=_ip("mish")),
    _act("softplus", lambda r: _act_samples(r) + _huge(r) + [
        S(randn(r, 6, low=-5, high=5), beta=2.0, threshold=3.0, name="beta")]),
    _act("softsign"),
    _act("hardtanh", lambda r: _act_samples(r) + [S(randn(r, 5) * 2, min_val=-0.5, max_val=1.5, name="range"),
                                                  S(_INT.copy(), name="int")], inplace=_ip("hardtanh")),
    _act("hardsigmoid", lambda r: _act_samples(r) + [S(np.array([-4.0, -2.0, 0.5, 2.9, 3.5]), name="edges")],
         inplace=_ip("hardsigmoid"), gradgrad=False,
         notes="torch defines no derivative of hardsigmoid_backward (its second derivative is 0 a.e. here)"),
    _act("hardswish", lambda r: _act_samples(r) + [S(np.array([-4.0, -2.0, 0.5, 2.9, 3.5]), name="edges")],
         inplace=_ip("hardswish")),
    _act("logsigmoid", lambda r: _act_samples(r) + _huge(r)),
    _act("hardshrink", lambda r: _act_samples(r) + [S(randn(r, 6), lambd=0.2, name="lambd")]),
    _act("softshrink", lambda r: _act_samples(r) + [S(randn(r, 6), lambd=0.2, name="lambd")]),
    _act("tanhshrink"),
    _act("rrelu", inplace=_ip("rrelu")),
    _act("rrelu", kwargs={"lower": 0.2, "upper": 0.4}),
    OpSpec("nn.functional.threshold", lambda m, x, t, v: F(m, "threshold")(x, t, v), lambda r: [
        S(randn(r, 2, 3), 0.1, 20.0), S(randn(r), -0.2, 0.5, name="0d"), S(randn(r, 0, 2), 0.0, 1.0, name="empty"),
        S(_INT.copy(), 1, 10, name="int")],
        inplace=lambda x, t, v: F(__import__("tapegrad"), "threshold")(x, t, v, inplace=True)),
    OpSpec("nn.functional.prelu", lambda m, x, w: F(m, "prelu")(x, w), lambda r: [
        S(randn(r, 2, 3, 4), randn(r, 3) * 0.3, name="channels"), S(randn(r, 2, 3), np.array([0.25]), name="shared"),
        S(randn(r, 4), np.array([0.1]), name="1d"), S(randn(r), np.array([0.3]), name="0d"),
        S(noncontig(randn(r, 3, 2)), randn(r, 2), name="noncontig")]),
    OpSpec("hardshrink", lambda m, x: m.hardshrink(x), lambda r: [S(randn(r, 2, 3))]),
    OpSpec("prelu", lambda m, x, w: m.prelu(x, w), lambda r: [S(randn(r, 2, 3), randn(r, 3))]),
    OpSpec("selu", lambda m, x: m.selu(x), lambda r: [S(randn(r, 2, 3))], inplace=lambda x: __import__(
        "tapegrad").selu_(x)),
    OpSpec("celu", lambda m, x: m.celu(x, alpha=1.5), lambda r: [S(randn(r, 2, 3))]),
    OpSpec("rrelu", lambda m, x: m.rrelu(x, 0.1, 0.3), lambda r: [S(randn(r, 2, 3))]),
]
