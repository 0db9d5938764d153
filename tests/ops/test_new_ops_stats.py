"""The statistics / counting / more-math ops of issue 17 where the op table cannot look: their errors (type and
torch's words), the cases whose gradients finite differences cannot check (NaN rows, ties, torch's own
conventions), warnings, in-place operators, and the few places where torch itself fails (vander's backward)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tapegrad


def _both(torch, fn):
    """fn(module) on tapegrad and on torch: (ours, theirs), each a result or the exception raised."""
    out = []
    for m in (tapegrad, torch):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                out.append(fn(m))
            except Exception as e:  # noqa: BLE001 - compared with torch's
                out.append(e)
    return out


# (name, call, compare the message exactly)
ERRORS = [
    ("logaddexp_int", lambda m: m.logaddexp(m.tensor([1]), m.tensor([2])), True),
    ("logaddexp_number", lambda m: m.logaddexp(m.tensor([1.0]), 2), True),
    ("logaddexp2_complex", lambda m: m.logaddexp2(m.tensor([1j]), m.tensor([2j])), True),
    ("deg2rad_complex", lambda m: m.deg2rad(m.tensor([1j])), True),
    ("deg2rad_int_inplace", lambda m: m.tensor([1, 2]).deg2rad_(), True),
    ("gcd_float", lambda m: m.gcd(m.tensor([1.0]), m.tensor([2.0])), True),
    ("gcd_bool", lambda m: m.gcd(m.tensor([True]), m.tensor([False])), True),
    ("heaviside_dtypes", lambda m: m.heaviside(m.tensor([1.0]), m.tensor([1])), True),
    ("heaviside_complex", lambda m: m.heaviside(m.tensor([1j]), m.tensor([1j])), True),
    ("frexp_int", lambda m: m.frexp(m.tensor([1])), True),
    ("nextafter_int", lambda m: m.nextafter(m.tensor([1]), m.tensor([2])), True),
    ("lshift_float", lambda m: m.tensor([1.0]) << 1, True),
    ("rshift_float", lambda m: m.bitwise_right_shift(m.tensor([1.0]), 1), True),
    ("positive_bool", lambda m: m.positive(m.tensor([True])), True),
    ("rsub_bool", lambda m: m.rsub(m.tensor([True]), m.tensor([False])), True),
    ("rsub_int_float_alpha", lambda m: m.rsub(m.tensor([1]), m.tensor([2]), alpha=1.5), True),
    ("fill_1d_value", lambda m: m.fill(m.zeros(2), m.tensor([1.0, 2.0])), True),
    ("meshgrid_empty", lambda m: m.meshgrid(indexing="ij"), True),
    ("meshgrid_dtypes", lambda m: m.meshgrid(m.zeros(2), m.zeros(2, dtype=m.float64), indexing="ij"), True),
    ("meshgrid_indexing", lambda m: m.meshgrid(m.zeros(2), indexing="foo"), True),
    ("meshgrid_2d", lambda m: m.meshgrid(m.zeros(2, 2), indexing="ij"), False),
    ("block_diag_3d", lambda m: m.block_diag(m.zeros(2, 2, 2)), True),
    ("cartesian_prod_2d", lambda m: m.cartesian_prod(m.zeros(2, 2), m.zeros(2)), True),
    ("combinations_negative", lambda m: m.combinations(m.zeros(3), -1), True),
    ("combinations_2d", lambda m: m.combinations(m.zeros(2, 2)), True),
    ("vander_2d", lambda m: m.vander(m.zeros(2, 2)), True),
    ("vander_negative_N", lambda m: m.vander(m.zeros(2), -1), True),
    ("unravel_float", lambda m: m.unravel_index(m.tensor([1.0]), (2, 3)), True),
    ("unravel_negative_shape", lambda m: m.unravel_index(m.tensor([1]), (2, -3)), True),
    ("unravel_zero_size", lambda m: m.unravel_index(m.tensor([0]), (2, 0)), True),
    ("diff_0d", lambda m: m.diff(m.tensor(1.0)), True),
    ("diff_negative_n", lambda m: m.diff(m.zeros(3), n=-1), True),
    ("diff_prepend_dims", lambda m: m.diff(m.zeros(3, 4), prepend=m.zeros(4)), True),
    ("diff_prepend_shape", lambda m: m.diff(m.zeros(3, 4), prepend=m.zeros(2, 2)), True),
    ("diff_prepend_number", lambda m: m.diff(m.zeros(3), prepend=1.0), True),
    ("gradient_edge_order", lambda m: m.gradient(m.zeros(4), edge_order=3), True),
    ("gradient_too_small", lambda m: m.gradient(m.zeros(2), edge_order=2), True),
    ("gradient_spacing_length", lambda m: m.gradient(m.zeros(3, 4), spacing=[1.0, 2.0, 3.0]), True),
    ("gradient_spacing_dim_length", lambda m: m.gradient(m.zeros(3, 4), spacing=[1.0, 2.0, 3.0], dim=[0, 1]), True),
    ("gradient_2d_coordinates", lambda m: m.gradient(m.zeros(3, 4), spacing=[m.zeros(2, 2)], dim=1), True),
    ("gradient_repeated_dim", lambda m: m.gradient(m.zeros(3, 4), dim=(0, 0)), True),
    ("gradient_bool", lambda m: m.gradient(m.tensor([True, False, True])), True),
    ("trapezoid_bool", lambda m: m.trapezoid(m.tensor([True, False])), True),
    ("trapezoid_0d", lambda m: m.trapezoid(m.tensor(1.0)), True),
    ("trapezoid_x_length", lambda m: m.trapezoid(m.zeros(3, 4), m.zeros(3)), True),
    ("trapezoid_x_and_dx", lambda m: m.trapezoid(m.zeros(4), m.zeros(4), dx=2), False),
    ("logcumsumexp_int", lambda m: m.logcumsumexp(m.tensor([1, 2]), 0), True),
    ("quantile_int", lambda m: m.quantile(m.tensor([1, 2]), 0.5), True),
    ("quantile_q_range", lambda m: m.quantile(m.zeros(3), 1.5), True),
    ("quantile_q_tensor_range", lambda m: m.quantile(m.zeros(3), m.tensor([1.5])), True),
    ("quantile_q_2d", lambda m: m.quantile(m.zeros(3), m.full((2, 2), 0.5)), True),
    ("quantile_q_dtype", lambda m: m.quantile(m.zeros(3), m.tensor([0.5], dtype=m.float64)), True),
    ("quantile_empty", lambda m: m.quantile(m.zeros(0), 0.5), True),
    ("quantile_interpolation", lambda m: m.quantile(m.zeros(3), 0.5, interpolation="foo"), True),
    ("nanquantile_empty", lambda m: m.nanquantile(m.zeros(0, 2), 0.5, dim=0), True),
    ("cov_3d", lambda m: m.cov(m.zeros(2, 2, 2)), True),
    ("cov_fweights_float", lambda m: m.cov(m.zeros(2, 4), fweights=m.ones(4)), True),
    ("cov_fweights_negative", lambda m: m.cov(m.zeros(2, 4), fweights=m.tensor([1, -1, 1, 1])), True),
    ("cov_fweights_2d", lambda m: m.cov(m.zeros(2, 4), fweights=m.ones(2, 2, dtype=m.int64)), True),
    ("cov_fweights_numel", lambda m: m.cov(m.zeros(2, 4), fweights=m.ones(3, dtype=m.int64)), True),
    ("cov_aweights_int", lambda m: m.cov(m.zeros(2, 4), aweights=m.ones(4, dtype=m.int64)), True),
    ("cov_aweights_negative", lambda m: m.cov(m.zeros(2, 4), aweights=m.tensor([1.0, -1.0, 1.0, 1.0])), True),
    ("corrcoef_3d", lambda m: m.corrcoef(m.zeros(2, 2, 2)), True),
    ("dist_int", lambda m: m.dist(m.tensor([1]), m.tensor([2])), True),
    ("renorm_p", lambda m: m.renorm(m.zeros(2, 2), 0, 0, 1.0), True),
    ("renorm_maxnorm", lambda m: m.renorm(m.zeros(2, 2), 2, 0, -1.0), True),
    ("renorm_1d", lambda m: m.renorm(m.zeros(2), 2, 0, 1.0), True),
    ("renorm_int", lambda m: m.renorm(m.zeros(2, 2, dtype=m.int64), 2, 0, 1.0), True),
    ("histc_int", lambda m: m.histc(m.tensor([1, 2])), True),
    ("histc_bins", lambda m: m.histc(m.zeros(3), 0), True),
    ("histc_max_min", lambda m: m.histc(m.zeros(3), 3, min=2, max=1), True),
    ("histc_inf", lambda m: m.histc(m.tensor([1.0, float("inf")]), 3), True),
    ("histc_nan", lambda m: m.histc(m.tensor([1.0, float("nan")]), 3), True),
    ("histogram_int", lambda m: m.histogram(m.tensor([1, 2]), 3), True),
    ("histogram_nan", lambda m: m.histogram(m.tensor([1.0, float("nan")]), 3), True),
    ("histogram_range", lambda m: m.histogram(m.zeros(3), 3, range=(2.0, 1.0)), True),
    ("histogram_weight_shape", lambda m: m.histogram(m.zeros(6), 3, weight=m.ones(2)), True),
    ("histogram_weight_dtype", lambda m: m.histogram(m.zeros(6), 3, weight=m.ones(6, dtype=m.float64)), True),
    ("histogram_edges_dtype", lambda m: m.histogram(m.zeros(6), m.tensor([0.0, 1.0], dtype=m.float64)), True),
    ("histogram_edges_2d", lambda m: m.histogram(m.zeros(6), m.ones(2, 2)), True),
    ("histogramdd_1d", lambda m: m.histogramdd(m.zeros(3), bins=2), True),
    ("histogramdd_bins_length", lambda m: m.histogramdd(m.zeros(3, 2), bins=[2, 2, 2]), True),
    ("bincount_negative", lambda m: m.bincount(m.tensor([0, -1])), True),
    ("bincount_float", lambda m: m.bincount(m.tensor([0.0, 1.0])), True),
    ("bincount_bool", lambda m: m.bincount(m.tensor([True])), True),
    ("bincount_2d", lambda m: m.bincount(m.tensor([[0, 1]])), True),
    ("bincount_minlength", lambda m: m.bincount(m.tensor([0]), minlength=-1), True),
    ("bincount_weights", lambda m: m.bincount(m.tensor([0, 1]), m.tensor([1.0])), True),
    ("index_reduce_reduce", lambda m: m.zeros(3, 2).index_reduce(0, m.tensor([0]), m.ones(1, 2), "sum"), True),
    ("index_reduce_dtype", lambda m: m.zeros(3, 2).index_reduce(0, m.tensor([0]), m.ones(1, 2, dtype=m.float64),
                                                                "prod"), True),
    ("index_reduce_index_dtype", lambda m: m.zeros(3, 2).index_reduce(0, m.tensor([0.0]), m.ones(1, 2), "prod"),
     True),
    ("index_reduce_index_2d", lambda m: m.zeros(3, 2).index_reduce(0, m.tensor([[0]]), m.ones(1, 2), "prod"), True),
    ("index_reduce_index_length", lambda m: m.zeros(3, 2).index_reduce(0, m.tensor([0, 1]), m.ones(1, 2), "prod"),
     True),
    ("index_reduce_shape", lambda m: m.zeros(3, 2).index_reduce(0, m.tensor([0]), m.ones(1, 3), "prod"), True),
    ("index_reduce_out_of_range", lambda m: m.zeros(3, 2).index_reduce(0, m.tensor([3]), m.ones(1, 2), "prod"),
     True),
    ("index_reduce_negative", lambda m: m.zeros(3, 2).index_reduce(0, m.tensor([-1]), m.ones(1, 2), "prod"), True),
    ("isin_numbers", lambda m: m.isin(2, 2), True),
    ("isin_bool", lambda m: m.isin(m.tensor([True]), m.tensor([True])), True),
    ("fill_diagonal_1d", lambda m: m.zeros(3).fill_diagonal_(1.0), True),
    ("fill_diagonal_unequal", lambda m: m.zeros(2, 3, 2).fill_diagonal_(1.0), True),
    ("sum_to_size_bad", lambda m: m.ones(2, 3).sum_to_size(2, 2), True),
    ("sum_to_size_bigger", lambda m: m.ones(2, 3).sum_to_size(1, 2, 3), True),
]


@pytest.mark.parametrize("call,exact", [pytest.param(c, e, id=n) for n, c, e in ERRORS])
def test_errors_vs_torch(torch, call, exact):
    ours, theirs = _both(torch, call)
    assert isinstance(theirs, Exception), f"torch accepts this call: {theirs}"
    assert isinstance(ours, Exception), f"tapegrad accepts what torch refuses ({theirs})"
    assert type(ours).__name__ == type(theirs).__name__, (ours, theirs)
    if exact:
        assert str(ours).replace("tapegrad.", "torch.") == str(theirs).split("\n(Triggered internally")[0]


def _close(a, b):
    np.testing.assert_allclose(np.asarray(a.detach().numpy()), b.detach().numpy(), rtol=1e-7, atol=1e-9,
                               equal_nan=True)


def _value_and_grads(m, fn, arrays):
    xs = [m.tensor(a, requires_grad=True) for a in arrays]
    out = fn(m, *xs)
    out = out[0] if isinstance(out, tuple) else out
    gs = m.autograd.grad(out, xs, m.ones_like(out) * 0.75 + m.arange(out.numel(), dtype=out.dtype)
                         .reshape(out.shape) * 0.125, allow_unused=True)
    return out, gs


# values and gradients vs torch where finite differences do not apply (NaN, ties, torch's own conventions)
POINTS = [
    ("quantile_nan_row", lambda m, x: m.quantile(x, m.tensor([0.2, 0.7], dtype=m.float64), dim=1),
     [np.array([[1.0, np.nan, 3.0, 0.5], [2.0, 1.0, -1.0, 4.0]])]),
    ("nanquantile_nan_row", lambda m, x: m.nanquantile(x, 0.4, dim=1, keepdim=True),
     [np.array([[1.0, np.nan, 3.0, 0.5], [2.0, 1.0, -1.0, 4.0], [np.nan, 2.0, np.nan, np.nan]])]),
    ("quantile_ties", lambda m, x: m.quantile(x, 0.5), [np.array([1.0, 2.0, 2.0, 3.0, 2.0])]),
    ("nextafter_equal", lambda m, x, y: m.nextafter(x, y), [np.array([1.0, 2.0, 0.0]), np.array([0.0, 2.0, -1.0])]),
    ("ldexp_negative_int_exponent", lambda m, x: m.ldexp(x, m.tensor([-1, 0, -3, 2])),
     [np.array([1.0, 2.0, 0.5, 3.0])]),
    ("frexp_extremes", lambda m, x: m.frexp(x), [np.array([0.0, -0.0, 1e-310, 1e300, -5.0])]),
    ("logaddexp_infinities", lambda m, x, y: m.logaddexp(x, y),
     [np.array([np.inf, -np.inf, 1.0, -np.inf]), np.array([np.inf, -np.inf, -np.inf, 2.0])]),
    ("logcumsumexp_neg_inf", lambda m, x: m.logcumsumexp(x, 0), [np.array([-np.inf, 1.0, -np.inf, 2.0])]),
    ("logcumsumexp_empty", lambda m, x: m.logcumsumexp(x, 0), [np.zeros((0, 2))]),
    ("dist_zero_distance", lambda m, x, y: m.dist(x, y), [np.ones(3), np.ones(3)]),
    ("renorm_ties_inf", lambda m, x: m.renorm(x, float("inf"), 0, 0.5), [np.array([[1.0, -1.0], [0.2, 0.1]])]),
    ("index_reduce_amax_ties_exclude", lambda m, x, s: x.index_reduce(0, m.tensor([0, 0, 1]), s, "amax",
                                                                       include_self=False),
     [np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([[5.0, 2.0], [5.0, 1.0], [3.0, 4.0]])]),
    ("index_reduce_prod_self_zero", lambda m, x, s: x.index_reduce(0, m.tensor([0, 1, 0]), s, "prod"),
     [np.array([[0.0, 2.0], [3.0, 0.0]]), np.array([[5.0, 0.0], [2.0, 1.0], [0.0, 4.0]])]),
    ("cov_single_observation", lambda m, x: m.cov(x), [np.array([[1.0], [2.0]])]),
]


@pytest.mark.parametrize("fn,arrays", [pytest.param(f, a, id=n) for n, f, a in POINTS])
def test_values_and_grads_at_points_vs_torch(torch, fn, arrays):
    (ours, og), (theirs, tg) = _both(torch, lambda m: _value_and_grads(m, fn, arrays))
    _close(ours, theirs)
    for a, b in zip(og, tg):
        if b is None:
            assert a is None or not np.any(a.numpy())
        else:
            _close(a, b)


def test_dist_p0_value(torch):
    """(torch's own backward of the 0-"norm" fails; its value is the count of differing elements)"""
    a, b = [1.0, 2.0, 3.0], [1.0, 0.0, 4.0]
    ours = tapegrad.dist(tapegrad.tensor(a), tapegrad.tensor(b), 0)
    assert ours.item() == torch.dist(torch.tensor(a), torch.tensor(b), 0).item() == 2.0


def test_vander_gradients_by_finite_differences():
    """torch's own vander backward fails (it saves a tensor it then writes into); tapegrad's is checked here."""
    x = tapegrad.tensor([0.5, -1.5, 2.0, 0.0], dtype=tapegrad.float64, requires_grad=True)
    for kw in ({}, {"N": 3}, {"N": 5, "increasing": True}):
        assert tapegrad.autograd.gradcheck(lambda t: tapegrad.vander(t, **kw), (x,))
        assert tapegrad.autograd.gradgradcheck(lambda t: tapegrad.vander(t, **kw), (x,))


def test_meshgrid_without_indexing_warns_and_is_ij(torch):
    a, b = tapegrad.tensor([1, 2, 3]), tapegrad.tensor([4, 5])
    with pytest.warns(UserWarning, match="it will be required to pass the indexing argument"):
        grids = tapegrad.meshgrid(a, b)
    assert [tuple(g.shape) for g in grids] == [(3, 2), (3, 2)]
    expected = torch.meshgrid(torch.tensor([1, 2, 3]), torch.tensor([4, 5]), indexing="ij")
    for g, e in zip(grids, expected):
        assert g.tolist() == e.tolist()


def test_index_reduce_warns_beta():
    with pytest.warns(UserWarning, match=r"index_reduce\(\) is in beta"):
        tapegrad.zeros(2).index_reduce(0, tapegrad.tensor([0]), tapegrad.ones(1), "amax")


def test_cov_warns_degrees_of_freedom(torch):
    with pytest.warns(UserWarning, match="degrees of freedom is <= 0"):
        c = tapegrad.cov(tapegrad.ones(3, 1))
    assert np.isnan(c.numpy()).all() and c.shape == (3, 3)


def test_identities_and_copies():
    x = tapegrad.randn(4, requires_grad=True)
    assert tapegrad.positive(x) is x
    assert tapegrad.cartesian_prod(x) is x                 # one tensor: itself, as torch's
    d = tapegrad.diff(x, n=0)                              # n=0: a copy, still connected
    assert d is not x and d.tolist() == x.tolist() and d.requires_grad
    assert tapegrad.gradient(tapegrad.tensor(1.0)) == ()
    y = tapegrad.ones(2, 3)
    assert y.sum_to_size(2, 3) is y


def test_shift_operators_in_place_and_reflected(torch):
    a = tapegrad.tensor([1, 2, 3])
    v = a._version
    a <<= 2
    assert a.tolist() == [4, 8, 12] and a._version > v
    a >>= tapegrad.tensor([1, 2, 3])
    assert a.tolist() == [2, 2, 1]
    assert (16 >> tapegrad.tensor([1, 2])).tolist() == (16 >> torch.tensor([1, 2])).tolist()
    assert (1 << tapegrad.tensor([3, 65])).tolist() == (1 << torch.tensor([3, 65])).tolist()


def test_out_arguments(torch):
    h = tapegrad.empty(0)
    e = tapegrad.empty(0)
    res = tapegrad.histogram(tapegrad.tensor([1.0, 2.0, 1.0]), 2, out=(h, e))
    assert res.hist is h and res.bin_edges is e
    assert h.tolist() == torch.histogram(torch.tensor([1.0, 2.0, 1.0]), 2).hist.tolist()
    o = tapegrad.empty(0)
    tapegrad.quantile(tapegrad.tensor([1.0, 2.0, 4.0]), 0.25, out=o)
    assert o.item() == pytest.approx(1.5)
    m, ex = tapegrad.empty(0), tapegrad.empty(0, dtype=tapegrad.int32)
    tapegrad.frexp(tapegrad.tensor([8.0]), out=(m, ex))
    assert (m.tolist(), ex.tolist()) == ([0.5], [4])


def test_return_types_print_as_torch(torch):
    ours = repr(tapegrad.histogram(tapegrad.tensor([1.0, 2.0, 1.0]), 2))
    theirs = repr(torch.histogram(torch.tensor([1.0, 2.0, 1.0]), 2))
    assert ours == theirs.replace("torch.", "tapegrad.")
    ours = repr(tapegrad.frexp(tapegrad.tensor([8.0, 0.5])))
    theirs = repr(torch.frexp(torch.tensor([8.0, 0.5])))
    assert ours == theirs.replace("torch.", "tapegrad.")


def test_tensor_methods_exist(torch):
    names = ["diff", "quantile", "nanquantile", "bincount", "histc", "histogram", "cov", "corrcoef", "logaddexp",
             "logaddexp2", "logcumsumexp", "deg2rad", "deg2rad_", "rad2deg", "rad2deg_", "dist", "renorm",
             "renorm_", "gcd", "gcd_", "lcm", "lcm_", "heaviside", "heaviside_", "frexp", "ldexp", "ldexp_",
             "nextafter", "nextafter_", "bitwise_left_shift", "bitwise_left_shift_", "bitwise_right_shift",
             "bitwise_right_shift_", "positive", "index_reduce", "index_reduce_", "sum_to_size", "fill_diagonal_",
             "__lshift__", "__rshift__", "__ilshift__", "__irshift__", "__rlshift__", "__rrshift__"]
    for n in names:
        assert hasattr(torch.Tensor, n), n                       # (the list is torch's)
        assert hasattr(tapegrad.Tensor, n), n
    for n in ["deg2rad_", "rad2deg_", "gcd_", "lcm_", "ldexp_", "fill", "fill_", "zero_", "rsub", "row_stack",
              "histogramdd", "isin", "meshgrid", "vander", "unravel_index", "trapz", "cumulative_trapezoid"]:
        assert hasattr(torch, n) and hasattr(tapegrad, n), n


@pytest.mark.parametrize("module", ["elementwise.extra", "shape.combine", "reduce.calculus", "reduce.stats",
                                    "index.reductions"])
def test_docstring_examples_run(module):
    import doctest
    import importlib
    mod = importlib.import_module(f"tapegrad.ops.{module}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = doctest.testmod(mod, extraglobs={"tapegrad": tapegrad}, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert res.attempted and not res.failed


@pytest.mark.parametrize("call", ["m.histogram(x, density=True)", "x.histogram(density=True)",
                                  "m.histogram(x, range=(-1.0, 1.0))", "x.histogram(weight=x.abs())"])
def test_histogram_bins_default_to_100(torch, call):
    """torch.histogram's bins default to 100 (makemore's activation plots call ``torch.histogram(t, density=True)``)."""
    rng = np.random.default_rng(0)
    data = rng.standard_normal(500).astype(np.float32)
    ours = eval(call, {"m": tapegrad, "x": tapegrad.tensor(data)})
    theirs = eval(call, {"m": torch, "x": torch.tensor(data)})
    assert ours.hist.shape == theirs.hist.shape == (100,)
    np.testing.assert_allclose(ours.hist.numpy(), theirs.hist.numpy(), rtol=1e-6)
    np.testing.assert_allclose(ours.bin_edges.numpy(), theirs.bin_edges.numpy(), rtol=1e-6)
