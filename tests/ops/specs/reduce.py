"""Specs of the reductions: sums, products, moments, extrema, order statistics, scans, logical reductions."""

import numpy as np

from ops.op_db import OpSpec, S, noncontig, randn

NAN = float("nan")


def ties(r):
    """Two-way ties only: a central difference splits the gradient of a 2-way tie evenly, as torch does."""
    return np.array([[1.0, 3.0, 3.0, -1.0], [2.0, 0.5, 2.0, -4.0], [0.25, -2.0, 1.5, -2.0]])


def with_zeros(r, *shape, k=1):
    a = randn(r, *shape).reshape(-1)
    a[r.choice(a.size, k, replace=False)] = 0.0
    return a.reshape(shape)


def ints(r, *shape, low=-5, high=6):
    return r.integers(low, high, size=shape).astype(np.int64)


VALUES_INDICES = "returns (values, indices); indices are int64 and compared exactly"

SPECS = [
    # --- sums and means -------------------------------------------------------------------------------------
    OpSpec("sum_reduce", lambda m, x, **kw: m.sum(x, **_dt(m, kw)), lambda r: [
            S(randn(r, 2, 3, 4), dim=(0, -1), keepdim=True, name="tuple_keep"), S(randn(r, 3), dim=[0], name="list"),
            S(randn(r), dim=0, name="0d_dim"), S(noncontig(randn(r, 3, 4)), dim=1, name="noncontig"),
            S(ints(r, 2, 3), name="int_to_long"), S(ints(r, 2, 3), dim=1, dtype="float64", name="dtype"),
            S(np.array([True, False, True]), name="bool"), S(randn(r, 2, 0), dim=-1, name="empty")],
        aliases=("axis", "keepdims")),
    OpSpec("mean_reduce", lambda m, x, **kw: m.mean(x, **_dt(m, kw)), lambda r: [
        S(randn(r, 2, 3, 4), dim=(0, 2), name="tuple"), S(randn(r), name="0d"), S(randn(r, 3, 2), dim=-1,
                                                                                   keepdim=True, name="keep"),
        S(ints(r, 2, 3), dtype="float64", name="int_dtype"), S(noncontig(randn(r, 3, 4)), dim=0, name="noncontig")],
        aliases=("axis", "keepdims")),
    OpSpec("nansum", lambda m, x, **kw: m.nansum(x, **kw), lambda r: [
        S(np.array([[1.0, NAN, 2.0], [NAN, NAN, 0.5]]), name="nan"), S(randn(r, 2, 3), dim=1, name="dim"),
        S(np.array([[1.0, NAN, 2.0], [3.0, -1.0, NAN]]), dim=(0, 1), keepdim=True, name="tuple"),
        S(ints(r, 3), name="int"), S(randn(r), name="0d")], aliases=("axis", "keepdims")),
    OpSpec("nanmean", lambda m, x, **kw: m.nanmean(x, **kw), lambda r: [
        S(np.array([[1.0, NAN, 2.0], [NAN, 4.0, 0.5]]), name="nan"), S(randn(r, 2, 3), dim=1, name="dim"),
        S(np.array([[1.0, NAN, 2.0], [3.0, -1.0, NAN]]), dim=0, keepdim=True, name="keep")],
        aliases=("axis", "keepdims")),
    # --- products ---------------------------------------------------------------------------------------------
    OpSpec("prod", lambda m, x, *a, **kw: m.prod(x, *a, **kw), lambda r: [
        S(randn(r, 2, 3), name="all"), S(randn(r, 2, 3), 1, name="dim"), S(randn(r, 3, 2), -2, True, name="keep"),
        S(with_zeros(r, 2, 3), name="one_zero"), S(with_zeros(r, 3, 3, k=3), name="zeros"),
        S(with_zeros(r, 3, 4, k=2), 1, name="zero_dim"), S(np.array([[0.0, 0.0, 2.0], [1.5, 0.0, -1.0]]), 1,
                                                            name="two_zeros_line"),
        S(randn(r), name="0d"), S(randn(r), 0, name="0d_dim"), S(randn(r, 0, 3), 0, name="empty"),
        S(noncontig(randn(r, 3, 2)), 0, name="noncontig"), S(ints(r, 2, 3), name="int")],
        inplace=None),
    # --- moments ----------------------------------------------------------------------------------------------
    OpSpec("var", lambda m, x, *a, **kw: m.var(x, *a, **kw), lambda r: [
        S(randn(r, 3, 4), name="all"), S(randn(r, 3, 4), 1, name="dim"), S(randn(r, 3, 4), (0, 1), name="tuple"),
        S(randn(r, 3, 4), 0, keepdim=True, correction=0, name="correction0"),
        S(randn(r, 3, 4), -1, unbiased=False, name="unbiased_false"), S(randn(r, 2, 5), 1, correction=2,
                                                                       name="correction2"),
        S(randn(r, 4), False, name="positional_unbiased"), S(noncontig(randn(r, 3, 4)), 0, name="noncontig")],
        aliases=("keepdims",)),
    OpSpec("std", lambda m, x, *a, **kw: m.std(x, *a, **kw), lambda r: [
        S(randn(r, 3, 4), name="all"), S(randn(r, 3, 4), 1, name="dim"), S(randn(r, 2, 3, 2), (0, 2), name="tuple"),
        S(randn(r, 3, 4), 0, keepdim=True, correction=0, name="correction0"),
        S(randn(r, 3, 4), -1, unbiased=True, name="unbiased")], aliases=("keepdims",)),
    OpSpec("var_mean", lambda m, x, *a, **kw: m.var_mean(x, *a, **kw), lambda r: [
        S(randn(r, 3, 4), name="all"), S(randn(r, 3, 4), 1, name="dim"),
        S(randn(r, 2, 3, 2), (0, 2), keepdim=True, correction=0, name="tuple")], aliases=("keepdims",)),
    OpSpec("std_mean", lambda m, x, *a, **kw: m.std_mean(x, *a, **kw), lambda r: [
        S(randn(r, 3, 4), name="all"), S(randn(r, 3, 4), -1, name="dim"),
        S(randn(r, 2, 3, 2), (0, 2), keepdim=True, unbiased=False, name="tuple")], aliases=("keepdims",)),
    # --- extrema ------------------------------------------------------------------------------------------------
    OpSpec("max_all", lambda m, x: m.max(x), lambda r: [
        S(randn(r, 3, 4), name="plain"), S(ties(r), name="ties", smooth=False), S(randn(r), name="0d"),
        S(ints(r, 3, 2), name="int"), S(noncontig(randn(r, 3, 4)), name="noncontig")]),
    OpSpec("min_all", lambda m, x: x.min(), lambda r: [
        S(randn(r, 3, 4), name="plain"), S(-ties(r), name="ties", smooth=False), S(randn(r), name="0d")]),
    OpSpec("max_dim", lambda m, x, *a, **kw: m.max(x, *a, **kw), lambda r: [
        S(randn(r, 3, 4), 1, name="dim"), S(randn(r, 3, 4), -2, True, name="keep"), S(randn(r), 0, name="0d"),
        S(ints(r, 3, 4), 0, name="int"), S(randn(r, 0, 3), 1, name="empty_other"),
        S(noncontig(randn(r, 3, 4)), 0, name="noncontig")], notes=VALUES_INDICES),
    OpSpec("min_dim", lambda m, x, *a, **kw: x.min(*a, **kw), lambda r: [
        S(randn(r, 3, 4), 1, name="dim"), S(randn(r, 3, 4), dim=0, keepdim=True, name="keep")],
        notes=VALUES_INDICES, aliases=("axis", "keepdims")),
    OpSpec("max_binary", lambda m, x, y: m.max(x, y), lambda r: [S(randn(r, 2, 3), randn(r, 3))]),
    OpSpec("min_binary", lambda m, x, y: m.min(x, y), lambda r: [S(randn(r, 2, 3), randn(r, 3))]),
    OpSpec("amax", lambda m, x, *a, **kw: m.amax(x, *a, **kw), lambda r: [
        S(randn(r, 3, 4), name="all"), S(randn(r, 3, 4), 1, name="dim"), S(ties(r), 1, name="ties_dim", smooth=False),
        S(ties(r), (0, 1), name="ties_tuple", smooth=False), S(randn(r, 2, 3, 4), (0, -1), True, name="tuple_keep"),
        S(randn(r), 0, name="0d"), S(ints(r, 3, 4), 0, name="int"), S(noncontig(randn(r, 3, 4)), 0,
                                                                      name="noncontig")]),
    OpSpec("amin", lambda m, x, *a, **kw: x.amin(*a, **kw), lambda r: [
        S(randn(r, 3, 4), name="all"), S(-ties(r), 1, name="ties_dim", smooth=False), S(randn(r, 2, 3), (0, 1), True,
                                                                           name="tuple_keep")]),
    OpSpec("aminmax", lambda m, x, **kw: m.aminmax(x, **kw), lambda r: [
        S(randn(r, 3, 4), name="all"), S(randn(r, 3, 4), dim=1, name="dim"), S(ties(r), name="ties", smooth=False),
        S(randn(r, 3, 4), dim=-2, keepdim=True, name="keep"), S(randn(r), name="0d")], aliases=("axis", "keepdims")),
    OpSpec("argmax", lambda m, x, *a, **kw: m.argmax(x, *a, **kw), lambda r: [
        S(randn(r, 3, 4), name="all"), S(randn(r, 3, 4), 1, name="dim"), S(randn(r, 3, 4), 0, True, name="keep"),
        S(randn(r, 3, 4), keepdim=True, name="all_keep"), S(ints(r, 5), name="int"), S(randn(r), name="0d")],
        grad=False, notes="integer output: not differentiable", aliases=("keepdims",)),
    OpSpec("argmin", lambda m, x, *a, **kw: x.argmin(*a, **kw), lambda r: [
        S(randn(r, 3, 4), name="all"), S(randn(r, 3, 4), -1, name="dim")], grad=False,
        notes="integer output: not differentiable"),
    OpSpec("logsumexp", lambda m, x, *a, **kw: m.logsumexp(x, *a, **kw), lambda r: [
        S(randn(r, 3, 4), 1, name="dim"), S(randn(r, 3, 4), (0, 1), name="tuple"),
        S(randn(r, 2, 3), 0, True, name="keep"), S(randn(r, 3) + 1e4, 0, name="big"),
        S(randn(r, 3) - 1e4, 0, name="small"), S(randn(r), 0, name="0d"), S(ints(r, 3), 0, name="int"),
        S(noncontig(randn(r, 3, 4)), -1, name="noncontig")]),
    # --- order statistics ---------------------------------------------------------------------------------------------
    OpSpec("median_all", lambda m, x: m.median(x), lambda r: [
        S(randn(r, 3, 4), name="even"), S(randn(r, 5), name="odd"), S(np.array([1.0, 3.0, 1.0, 2.0]),
                                                                      name="ties", smooth=False),
        S(ints(r, 7), name="int"), S(randn(r), name="0d")]),
    OpSpec("median_dim", lambda m, x, *a, **kw: m.median(x, *a, **kw), lambda r: [
        S(randn(r, 3, 4), 1, name="dim"), S(randn(r, 5, 3), 0, True, name="keep"), S(randn(r), 0, name="0d"),
        S(noncontig(randn(r, 3, 4)), -1, name="noncontig")], notes=VALUES_INDICES),
    OpSpec("nanmedian_all", lambda m, x: m.nanmedian(x), lambda r: [S(randn(r, 3, 3), name="plain")]),
    OpSpec("nanmedian_dim", lambda m, x, *a, **kw: m.nanmedian(x, *a, **kw), lambda r: [
        S(randn(r, 3, 4), 1, name="dim"), S(randn(r, 3, 4), 0, True, name="keep")], notes=VALUES_INDICES),
    OpSpec("nan_order_stats", lambda m, x, op, *a: getattr(m, op)(x, *a), lambda r: [
        S(np.array([1.0, NAN, 2.0]), "median", name="median_all"),
        S(np.array([[1.0, NAN, 2.0, NAN], [3.0, 1.0, 2.0, 0.0]]), "median", 1, name="median_dim"),
        S(np.array([1.0, NAN, 2.0, 5.0]), "nanmedian", name="nanmedian_all"),
        S(np.array([[1.0, NAN, 2.0, NAN], [3.0, 1.0, 2.0, 0.0], [NAN, 4.0, NAN, NAN]]), "nanmedian", 1,
          name="nanmedian_dim"),
        S(np.array([[NAN, NAN]]), "nanmedian", 1, name="nanmedian_all_nan"),
        S(np.array([1.0, NAN, 5.0, 0.0]), "cummax", 0, name="cummax"),
        S(np.array([1.0, NAN, -5.0, NAN]), "cummin", 0, name="cummin"),
        S(np.array([[1.0, NAN], [3.0, 0.5]]), "amax", 1, name="amax"),
        S(np.array([[1.0, NAN], [3.0, 0.5]]), "max", 1, name="max_dim"),
        S(np.array([[1.0, NAN], [3.0, 0.5]]), "max", name="max_all")],
        grad=False, notes="NaN inputs: finite differences are NaN, so values only here; gradients vs torch are "
                          "compared in tests/test_views.py (test_nan_and_piecewise_grads_vs_torch)"),
    OpSpec("mode", lambda m, x, *a, **kw: m.mode(x, *a, **kw), lambda r: [
        S(np.array([[2.0, 1.0, 2.0, 1.0, 3.0], [5.0, 5.0, 4.0, 4.0, 4.0]]), name="last"),
        S(np.array([[2.0, 1.0], [2.0, 3.0], [0.5, 3.0]]), 0, name="dim0"),
        S(np.array([[2.0, 1.0], [2.0, 3.0], [0.5, 3.0]]), 0, True, name="keep"), S(randn(r), name="0d"),
        S(np.array([3, 1, 3, 2, 1, 1]), name="int")], grad=False,
        notes="mode is piecewise constant in which element it picks: perturbing one copy of the mode changes "
              "it, so finite differences are meaningless; its gradient vs torch is in tests/test_views.py"),
    # --- scans -------------------------------------------------------------------------------------------------------
    OpSpec("cumsum", lambda m, x, *a, **kw: m.cumsum(x, *a, **_dt(m, kw)), lambda r: [
        S(randn(r, 3, 4), 1, name="dim"), S(randn(r, 3, 4), -2, name="neg"), S(randn(r), 0, name="0d"),
        S(ints(r, 4), 0, name="int"), S(np.array([1, 2], np.int8), 0, name="int8"),
        S(ints(r, 3), 0, dtype="float64", name="dtype"), S(randn(r, 0, 2), 0, name="empty"),
        S(noncontig(randn(r, 3, 4)), 0, name="noncontig")],
        inplace=lambda x, *a, **kw: x.cumsum_(*a, **kw)),
    OpSpec("cumprod", lambda m, x, *a, **kw: m.cumprod(x, *a, **kw), lambda r: [
        S(randn(r, 3, 4), 1, name="dim"), S(with_zeros(r, 2, 5), 1, name="zero"),
        S(np.array([[0.5, 0.0, 2.0, 0.0, -1.5], [0.0, 1.5, 0.0, 0.0, 2.0]]), 1, name="zeros"),
        S(with_zeros(r, 4, 2, k=2), 0, name="zeros_dim0"), S(randn(r), 0, name="0d"),
        S(ints(r, 4), 0, name="int"), S(noncontig(randn(r, 3, 4)), -1, name="noncontig")],
        inplace=lambda x, *a, **kw: x.cumprod_(*a, **kw)),
    OpSpec("cummax", lambda m, x, *a: m.cummax(x, *a), lambda r: [
        S(randn(r, 3, 4), 1, name="dim"), S(randn(r, 4, 3), 0, name="dim0"), S(randn(r), 0, name="0d"),
        S(np.array([[1, 3, 3, 2], [0, 0, 1, 1]]), 1, name="int"),
        S(randn(r, 0, 3), 0, name="empty")], notes=VALUES_INDICES),
    OpSpec("cummin", lambda m, x, *a: x.cummin(*a), lambda r: [
        S(randn(r, 3, 4), 1, name="dim"), S(np.array([[1, 1, 2, 0, 0]]), -1, name="int_ties")],
        notes=VALUES_INDICES),
    # --- logical reductions and counts -------------------------------------------------------------------------------
    OpSpec("all", lambda m, x, *a, **kw: m.all(x, *a, **kw), lambda r: [
        S(np.array([[1.0, 0.0], [2.0, 3.0]]), name="float"), S(np.array([[True, False], [True, True]]), 1,
                                                               name="dim"),
        S(np.array([[1, 0], [2, 3]]), (0, 1), name="tuple"), S(np.array([1, 2], np.uint8), name="uint8"),
        S(np.zeros((2, 0)), 1, name="empty"), S(np.array([[1, 0], [2, 3]]), 0, True, name="keep")],
        grad=False, notes="bool output: not differentiable"),
    OpSpec("any", lambda m, x, *a, **kw: x.any(*a, **kw), lambda r: [
        S(np.array([[1.0, 0.0], [0.0, 0.0]]), name="float"), S(np.array([[True, False], [False, False]]), 1,
                                                               name="dim"),
        S(np.zeros((2, 0)), name="empty")], grad=False, notes="bool output: not differentiable"),
    OpSpec("count_nonzero", lambda m, x, *a, **kw: m.count_nonzero(x, *a, **kw), lambda r: [
        S(np.array([[1.0, 0.0], [2.0, 0.0]]), name="all"), S(np.array([[1, 0], [2, 0]]), 0, name="dim"),
        S(np.array([[1, 0, 3], [2, 0, 0]]), (0, 1), name="tuple"), S(np.array(0.0), name="0d")],
        grad=False, notes="integer output: not differentiable"),
    OpSpec("hash_tensor", lambda m, x, *a, **kw: m.hash_tensor(x, *a, **kw), lambda r: [
        S(r.standard_normal((3, 4)), name="all"), S(r.standard_normal((3, 4)), 1, name="dim"),
        S(np.array([[1, -2, 3], [4, 5, -6]]), 0, name="int"), S(np.array([True, False, True]), name="bool"),
        S(r.standard_normal((2, 3, 4)), (0, 2), name="tuple"), S(np.array(2.5), name="0d")],
        grad=False, notes="uint64 output: not differentiable"),
]


def _dt(m, kw):
    """Samples name a dtype by string (the same sample runs on tapegrad and on torch)."""
    if "dtype" in kw and isinstance(kw["dtype"], str):
        kw = dict(kw, dtype=getattr(m, kw["dtype"]))
    return kw
