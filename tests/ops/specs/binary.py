"""Specs of the two-or-more-input elementwise ops: arithmetic with Python numbers on either side, math, where,
lerp, addcmul/addcdiv, comparisons and logic (no gradient)."""

import numpy as np

from ops.op_db import OpSpec, S, noncontig, randn

_I = np.array([[7, -7, 0], [5, -3, 9]], dtype=np.int64)
_J = np.array([2, -3, 4], dtype=np.int64)
_B = np.array([True, False, True])
_B2 = np.array([[True], [False]])


def _pair(r, positive_b=False, **kw):
    """Tensor pairs: same shape, broadcast, 0-d on either side, empty, non-contiguous."""
    b = lambda *s: randn(r, *s, positive=positive_b)
    return [S(randn(r, 2, 3), b(2, 3)), S(randn(r, 2, 3), b(3), name="broadcast"),
            S(randn(r, 2, 1), b(1, 3), name="outer"), S(np.asarray(randn(r)), np.asarray(b()), name="0d"),
            S(randn(r, 2, 3), np.asarray(b()), name="0d_other"), S(np.asarray(randn(r)), b(3), name="0d_input"),
            S(randn(r, 0, 3), b(3), name="empty"), S(noncontig(randn(r, 3, 2)), noncontig(b(3, 2)), name="noncontig")]


def _with_ints(samples):
    return lambda r: samples(r) + [S(_I.copy(), _J.copy(), name="int"), S(_I.copy(), randn(r, 3), name="int_float")]


def _fn(name):
    return lambda m, x, y, **kw: getattr(m, name)(x, y, **kw)


def _away(r, *shape, step=1.0):
    """Values at least 0.1 away from multiples of ``step`` (for floor/trunc/mod, whose jumps break gradcheck)."""
    a = randn(r, *shape) * 3
    k = np.floor(a / step)
    return (k + 0.2 + 0.6 * r.uniform(size=np.shape(a))) * step


SPECS = [
    # --- arithmetic ---------------------------------------------------------------------------------------------
    OpSpec("add", _fn("add"), lambda r: _pair(r) + [
        S(randn(r, 2, 3), randn(r, 3), alpha=-1.5, name="alpha"), S(randn(r, 3), 2, name="int_scalar"),
        S(_I.copy(), 2.5, name="int_tensor_float"), S(_I.copy(), _J.copy(), alpha=2, name="int_alpha"),
        S(_B.copy(), _B.copy(), name="bool")],
        inplace=lambda x, y, **kw: x.add_(y, **kw)),
    OpSpec("sub", _fn("sub"), lambda r: _pair(r) + [
        S(randn(r, 2, 3), randn(r, 3), alpha=0.5, name="alpha"), S(_I.copy(), _J.copy(), name="int")],
        inplace=lambda x, y, **kw: x.sub_(y, **kw)),
    OpSpec("mul", _fn("mul"), _with_ints(_pair), inplace=lambda x, y: x.mul_(y)),
    OpSpec("div", _fn("div"), lambda r: _pair(r, positive_b=True) + [
        S(_I.copy(), _J.copy(), name="int_true"), S(randn(r, 3), 4, name="int_scalar")],
        inplace=lambda x, y: x.div_(y)),
    OpSpec("div_floor", lambda m, x, y: m.div(x, y, rounding_mode="floor"), lambda r: [
        S(_away(r, 2, 3), np.full(3, 1.0)), S(_away(r, 4, step=0.5), 0.5, name="scalar"),
        S(_I.copy(), _J.copy(), name="int"), S(_I.copy(), -2, name="int_scalar")],
        inplace=lambda x, y: x.div_(y, rounding_mode="floor")),
    OpSpec("div_trunc", lambda m, x, y: m.div(x, y, rounding_mode="trunc"), lambda r: [
        S(_away(r, 2, 3), np.full(3, -1.0)), S(_I.copy(), _J.copy(), name="int"),
        S(np.array([-7, 7, -1]), 2, name="int_scalar")],
        inplace=lambda x, y: x.div_(y, rounding_mode="trunc")),
    OpSpec("true_divide", _fn("true_divide"), lambda r: [
        S(randn(r, 2, 3), randn(r, 3, positive=True)), S(_I.copy(), _J.copy(), name="int")],
        inplace=lambda x, y: x.true_divide_(y)),
    OpSpec("floor_divide", _fn("floor_divide"), lambda r: [
        S(randn(r, 2, 3) * 5, randn(r, 3, positive=True)), S(_I.copy(), _J.copy(), name="int"),
        S(_I.copy(), 2, name="int_scalar"), S(np.array([5.0, -5.0, 0.0]), np.array([0.0, 0.0, 0.0]), name="by_zero"),
        S(randn(r, 3), -0.7, name="scalar")], grad=False,
        notes="torch defines no derivative (grad_fn NotImplemented); tests/test_dtypes.py checks the node and error",
        inplace=lambda x, y: x.floor_divide_(y)),
    OpSpec("floordiv_operator", lambda m, x, y: x // y, lambda r: [
        S(randn(r, 2, 3) * 4, 1.5), S(_I.copy(), _J.copy(), name="int")], grad=False,
        notes="no derivative in torch"),
    OpSpec("rfloordiv_operator", lambda m, x: 7 // x, lambda r: [
        S(randn(r, 3, positive=True)), S(_J.copy(), name="int")], grad=False, notes="no derivative in torch"),
    OpSpec("pow", _fn("pow"), lambda r: [
        S(randn(r, 2, 3, positive=True), randn(r, 3)), S(randn(r, 2, 3, positive=True), 2.5, name="scalar"),
        S(randn(r, 2, 3), 3, name="int_scalar"), S(randn(r, 3), 0, name="zero_exp"),
        S(randn(r, 3, positive=True), np.asarray(randn(r)), name="0d_exp"),
        S(_I.copy(), _J.copy(), name="int"), S(_I.copy(), np.array([-1, 0, 2]), name="int_neg_exp"),
        S(_I.copy(), 2, name="int_scalar_int"), S(_I.copy(), 0.5, name="int_float_exp")],
        inplace=lambda x, y: x.pow_(y)),
    OpSpec("rpow", lambda m, base, x: m.pow(base, x), lambda r: [
        S(2.5, randn(r, 2, 3)), S(0.5, np.asarray(randn(r)), name="0d"), S(3, _J.copy(), name="int"),
        S(2, np.array([-1, 0, 3]), name="int_neg")]),
    OpSpec("pow_operator", lambda m, x, y: x ** y, lambda r: [
        S(randn(r, 2, 3, positive=True), randn(r, 2, 3)), S(randn(r, 3), 2, name="scalar")]),
    OpSpec("rpow_operator", lambda m, x: 3.0 ** x, lambda r: [S(randn(r, 2, 3)), S(_J.copy(), name="int")]),
    # (its second derivative is nan, as torch's: not smooth for gradgradcheck)
    OpSpec("rpow_zero_base", lambda m, x: 0.0 ** x, lambda r: [S(np.array([0.5, 2.0, 1.0]), smooth=False)]),
    OpSpec("square_operator", lambda m, x: x ** 2, lambda r: [S(randn(r, 2, 3))]),
    OpSpec("float_power", _fn("float_power"), lambda r: [
        S(randn(r, 2, 3, positive=True), randn(r, 3)), S(randn(r, 3, positive=True), 2, name="scalar"),
        S(_I.copy(), 2, name="int"), S(_I.copy(), _J.copy(), name="int_tensor")],
        inplace=lambda x, y: x.float_power_(y)),
    OpSpec("float_power_rscalar", lambda m, x: m.float_power(2, x), lambda r: [S(randn(r, 3)), S(_J.copy(),
                                                                                            name="int")]),
    OpSpec("atan2", _fn("atan2"), _with_ints(_pair), inplace=lambda x, y: x.atan2_(y)),
    OpSpec("arctan2", _fn("arctan2"), lambda r: [S(randn(r, 3), randn(r, 3))]),
    OpSpec("hypot", _fn("hypot"), _pair, inplace=lambda x, y: x.hypot_(y)),
    OpSpec("maximum", _fn("maximum"), lambda r: _with_ints(_pair)(r) + [
        S(np.array([1.0, 2.0, 3.0]), np.array([1.0, 3.0, 2.0]), name="ties", smooth=False),
        S(_B.copy(), _B2.copy(), name="bool")]),
    OpSpec("minimum", _fn("minimum"), lambda r: _with_ints(_pair)(r) + [
        S(np.array([1.0, 2.0, 3.0]), np.array([1.0, 3.0, 2.0]), name="ties", smooth=False)]),
    OpSpec("fmax", _fn("fmax"), _with_ints(_pair)),
    OpSpec("fmin", _fn("fmin"), _with_ints(_pair)),
    OpSpec("fmod", _fn("fmod"), lambda r: [
        S(_away(r, 2, 3), np.full(3, 1.0)), S(_away(r, 2, 3, step=0.75), 0.75, name="scalar"),
        S(_away(r, 3), -1.0, name="neg_scalar"), S(_I.copy(), _J.copy(), name="int"),
        S(_I.copy(), 2.5, name="int_float")],
        inplace=lambda x, y: x.fmod_(y)),
    OpSpec("remainder", _fn("remainder"), lambda r: [
        S(_away(r, 2, 3), np.full(3, 1.0)), S(_away(r, 2, 3, step=0.75), 0.75, name="scalar"),
        S(_away(r, 3), -1.0, name="neg_scalar"), S(_I.copy(), _J.copy(), name="int"),
        S(_I.copy(), -4, name="int_scalar")],
        inplace=lambda x, y: x.remainder_(y)),
    OpSpec("mod_operator", lambda m, x, y: x % y, lambda r: [
        S(_away(r, 2, 3, step=1.5), 1.5), S(_I.copy(), 4, name="int")]),
    OpSpec("rmod_operator", lambda m, x: 3 % x, lambda r: [S(randn(r, 3, positive=True)), S(_J.copy(), name="int")],
           grad=False, notes="torch defines no derivative for Scalar % Tensor (grad_fn NotImplemented)"),
    OpSpec("lerp", lambda m, x, y, w: m.lerp(x, y, w), lambda r: [
        S(randn(r, 2, 3), randn(r, 3), 0.3), S(randn(r, 2, 3), randn(r, 2, 3), 0.8, name="high_weight"),
        S(randn(r, 2, 3), randn(r, 3), randn(r, 2, 1), name="tensor_weight"),
        S(np.asarray(randn(r)), np.asarray(randn(r)), np.asarray(randn(r)), name="0d"),
        S(randn(r, 0, 3), randn(r, 3), 0.5, name="empty")],
        inplace=lambda x, y, w: x.lerp_(y, w)),
    OpSpec("where", lambda m, c, x, y: m.where(c, x, y), lambda r: [
        S(np.array([[True, False, True], [False, False, True]]), randn(r, 2, 3), randn(r, 3)),
        S(_B.copy(), randn(r, 3), 0.5, name="scalar_other"), S(_B.copy(), -1.0, randn(r, 3), name="scalar_input"),
        S(_B2.copy(), randn(r, 3), randn(r, 2, 1), name="broadcast"),
        S(np.asarray(True), np.asarray(randn(r)), randn(r, 2), name="0d"),
        S(_B.copy(), _J.copy(), 2.5, name="int_float"), S(_B.copy(), 1, 2.0, name="numbers")]),
    OpSpec("where_method", lambda m, x, c, y: x.where(c, y), lambda r: [S(randn(r, 2, 3), _B.copy(), randn(r, 3))]),
    OpSpec("where_nonzero", lambda m, c: m.where(c), lambda r: [S(np.array([[True, False], [True, True]]))],
           grad=False, notes="where(condition) is nonzero(condition, as_tuple=True): integer indices"),
    OpSpec("addcmul", lambda m, x, a, b, **kw: m.addcmul(x, a, b, **kw), lambda r: [
        S(randn(r, 2, 3), randn(r, 3), randn(r, 2, 1)), S(randn(r, 3), randn(r, 3), randn(r, 3), value=-0.5,
                                                          name="value"),
        S(np.asarray(randn(r)), randn(r, 2), np.asarray(randn(r)), name="0d"),
        S(_J.copy(), _J.copy(), _J.copy(), value=2, name="int")],
        inplace=lambda x, a, b, **kw: x.addcmul_(a, b, **kw)),
    OpSpec("addcdiv", lambda m, x, a, b, **kw: m.addcdiv(x, a, b, **kw), lambda r: [
        S(randn(r, 2, 3), randn(r, 3), randn(r, 2, 1, positive=True)),
        S(randn(r, 3), randn(r, 3), randn(r, 3, positive=True), value=2.0, name="value"),
        S(_J.copy(), randn(r, 3), randn(r, 3, positive=True), name="int_input")],
        inplace=lambda x, a, b, **kw: x.addcdiv_(a, b, **kw)),
    OpSpec("copysign", _fn("copysign"), lambda r: _pair(r) + [
        S(randn(r, 2, 3), -1.0, name="scalar"), S(randn(r, 3), 2, name="int_scalar"),
        S(_I.copy(), _J.copy(), name="int")],
        inplace=lambda x, y: x.copysign_(y)),
    OpSpec("xlogy", _fn("xlogy"), lambda r: _pair(r, positive_b=True) + [
        S(randn(r, 3), 2.5, name="scalar_other"), S(2.0, randn(r, 3, positive=True), name="scalar_input"),
        S(_J.copy(), np.abs(_J).copy(), name="int")],
        inplace=lambda x, y: x.xlogy_(y)),
    # --- operators with Python numbers on either side -----------------------------------------------------------
    OpSpec("radd_operator", lambda m, x: 2 + x, lambda r: [S(randn(r, 2, 3)), S(_J.copy(), name="int")]),
    OpSpec("rsub_int_operator", lambda m, x: 2 - x, lambda r: [S(randn(r, 2, 3)), S(_J.copy(), name="int"),
                                                               S(np.asarray(randn(r)), name="0d")]),
    OpSpec("rsub_float_operator", lambda m, x: 2.5 - x, lambda r: [S(randn(r, 2, 3)), S(_J.copy(), name="int")]),
    OpSpec("rmul_operator", lambda m, x: 3 * x, lambda r: [S(randn(r, 2, 3)), S(_J.copy(), name="int")]),
    OpSpec("rtruediv_operator", lambda m, x: 2 / x, lambda r: [
        S(randn(r, 2, 3, positive=True)), S(np.array([1, 2, 4]), name="int"), S(np.array([0, 1]), name="int_zero")]),
    OpSpec("truediv_operator", lambda m, x, y: x / y, lambda r: [
        S(randn(r, 2, 3), 4), S(_I.copy(), _J.copy(), name="int"), S(_I.copy(), 0, name="int_zero")]),
    OpSpec("sub_operator", lambda m, x, y: x - y, lambda r: [S(randn(r, 2, 3), 2), S(_I.copy(), 1.5, name="int")]),
    # --- comparisons and logic (no gradient) --------------------------------------------------------------------
    *[OpSpec(n, (lambda n: lambda m, x, y: getattr(m, n)(x, y))(n), lambda r: [
        S(randn(r, 2, 3), randn(r, 3)), S(randn(r, 3), 0.0, name="scalar"), S(_I.copy(), _J.copy(), name="int"),
        S(_I.copy(), 2.5, name="int_float"), S(np.array([1.0, np.nan, 2.0]), np.array([1.0, np.nan, 3.0]),
                                                 name="nan"),
        S(np.asarray(randn(r)), randn(r, 2), name="0d")], grad=False, notes="bool result")
      for n in ("eq", "ne", "lt", "le", "gt", "ge", "greater", "greater_equal", "less", "less_equal", "not_equal")],
    OpSpec("compare_operators", lambda m, x, y: (x < y, x <= y, x > y, x >= y, x == y, x != y, 0 < x, 1 == y),
           lambda r: [S(randn(r, 2, 3), randn(r, 3)), S(_I.copy(), _J.copy(), name="int")], grad=False,
           notes="bool results"),
    *[OpSpec(n, (lambda n: lambda m, x, y: getattr(m, n)(x, y))(n), lambda r: [
        S(_B.copy(), _B2.copy()), S(randn(r, 2, 3), _I.copy(), name="mixed"),
        S(np.array([0.0, 1.0, 0.0]), np.array([0, 0, 3]), name="float_int")], grad=False, notes="bool result")
      for n in ("logical_and", "logical_or", "logical_xor")],
    OpSpec("logical_not", lambda m, x: m.logical_not(x), lambda r: [
        S(_B.copy()), S(np.array([0.0, 1.5, -0.0])), S(_I.copy(), name="int")], grad=False, notes="bool result"),
    *[OpSpec(n, (lambda n: lambda m, x, y: getattr(m, n)(x, y))(n), lambda r: [
        S(_I.copy(), _J.copy()), S(_B.copy(), _B2.copy(), name="bool"), S(_I.copy(), 6, name="scalar"),
        S(_B.copy(), 3, name="bool_int")], grad=False, notes="integer/bool result")
      for n in ("bitwise_and", "bitwise_or", "bitwise_xor")],
    OpSpec("bitwise_not", lambda m, x: m.bitwise_not(x), lambda r: [S(_I.copy()), S(_B.copy(), name="bool")],
           grad=False, notes="integer/bool result"),
    OpSpec("bitwise_operators", lambda m, x, y: (x & y, x | y, x ^ y, ~x, 3 & x, 5 | x, 6 ^ x), lambda r: [
        S(_I.copy(), _J.copy()), S(_B.copy(), _B2.copy(), name="bool")], grad=False, notes="integer/bool results"),
    *[OpSpec(n, (lambda n: lambda m, x: getattr(m, n)(x))(n), lambda r: [
        S(np.array([[1.0, np.nan, np.inf], [-np.inf, -0.0, 0.0]])), S(_I.copy(), name="int"),
        S(np.asarray(np.nan), name="0d")], grad=False, notes="bool result")
      for n in ("isnan", "isinf", "isposinf", "isneginf", "isfinite", "isreal", "signbit")],
    OpSpec("isclose", lambda m, x, y, **kw: m.isclose(x, y, **kw), lambda r: [
        S(np.array([1.0, 2.0, np.nan, np.inf]), np.array([1.0 + 1e-9, 2.1, np.nan, np.inf])),
        S(np.array([1.0, np.nan]), np.array([1.0, np.nan]), equal_nan=True, name="equal_nan"),
        S(np.array([1.0, 2.0]), np.array([1.05, 2.5]), rtol=0.1, atol=0.0, name="rtol"),
        S(_I.copy(), _I.copy() + 1, atol=1, name="int")], grad=False, notes="bool result"),
    OpSpec("allclose", lambda m, x, y, **kw: m.tensor(m.allclose(x, y, **kw)), lambda r: [
        S(np.array([1.0, 2.0]), np.array([1.0, 2.0 + 1e-9])), S(np.array([1.0, 2.0]), np.array([1.0, 2.1]), name="no"),
        S(np.array([np.nan]), np.array([np.nan]), equal_nan=True, name="nan")], grad=False,
        notes="Python bool result (wrapped in a tensor to compare)"),
    OpSpec("equal", lambda m, x, y: m.tensor(m.equal(x, y)), lambda r: [
        S(np.array([1.0, 2.0]), np.array([1.0, 2.0])), S(np.array([1.0, 2.0]), np.array([1.0, 3.0]), name="no"),
        S(np.array([1.0, 2.0]), np.array([[1.0, 2.0]]), name="shape"), S(_J.copy(), _J.astype(np.float64) * 1,
                                                                          name="dtypes")],
        grad=False, notes="Python bool result (wrapped in a tensor to compare)"),
]
