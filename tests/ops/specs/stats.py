"""Specs of the ops issue 17 added: more elementwise math (logaddexp, deg2rad, gcd, frexp, shifts, rsub, fill...),
statistics and histograms (quantile, cov, corrcoef, histc, histogram, bincount, dist, renorm), differences and
integrals (diff, gradient, trapezoid, logcumsumexp), combining tensors (meshgrid, block_diag, cartesian_prod,
combinations, vander) and index reductions (index_reduce, isin, fill_diagonal_)."""

import numpy as np

from ops.op_db import OpSpec, S, noncontig, randn

_I = np.array([[12, -18, 0], [7, 9, -4]], dtype=np.int64)
_J = np.array([8, 12, 5], dtype=np.int64)


def _pair(r):
    return [S(randn(r, 2, 3), randn(r, 2, 3)), S(randn(r, 2, 3), randn(r, 3), name="broadcast"),
            S(np.asarray(randn(r)), randn(r, 3), name="0d_input"), S(randn(r, 0, 3), randn(r, 3), name="empty"),
            S(noncontig(randn(r, 3, 2)), noncontig(randn(r, 3, 2)), name="noncontig")]


def _fn(name):
    return lambda m, x, y, **kw: getattr(m, name)(x, y, **kw)


def _cov(m, x, *weights, names=(), **kw):
    """cov with its weight tensors given positionally (so that they become tensors) and named by ``names``."""
    return m.cov(x, **kw, **dict(zip(names, weights)))


SPECS = [
    # --- more elementwise math ------------------------------------------------------------------------------------
    OpSpec("logaddexp", _fn("logaddexp"), lambda r: _pair(r) + [
        S(np.array([40.0, 1e3, -1e3]), np.array([-40.0, 1e3 + 1, 2.0]), name="far_apart", smooth=False),
        S(randn(r, 3), _J.copy(), name="float_int")]),
    OpSpec("logaddexp2", _fn("logaddexp2"), lambda r: _pair(r) + [
        S(np.array([1e3, 60.0, -60.0]), np.array([2.0, 61.0, 0.5]), name="far_apart", smooth=False)]),
    OpSpec("deg2rad", lambda m, x: m.deg2rad(x), lambda r: [
        S(randn(r, 2, 3) * 90), S(_I.copy(), name="int"), S(np.asarray(randn(r)), name="0d")],
        inplace=lambda x: x.deg2rad_()),
    OpSpec("rad2deg", lambda m, x: x.rad2deg(), lambda r: [
        S(randn(r, 2, 3)), S(_I.copy(), name="int"), S(np.array([True, False]), name="bool")],
        inplace=lambda x: x.rad2deg_()),
    OpSpec("deg2rad_top_inplace", lambda m, x: m.deg2rad_(x.clone()), lambda r: [S(randn(r, 3))], grad=False,
           extra={"covers": "deg2rad_"}),
    OpSpec("gcd", _fn("gcd"), lambda r: [
        S(_I.copy(), _J.copy()), S(_I.astype(np.int32), _J.copy(), name="int32_int64"),
        S(np.array([0, 0, 5], np.uint8), np.array([0, 10, 0], np.uint8), name="uint8_zeros")], grad=False,
        notes="integer tensors only; no gradient", inplace=lambda x, y: x.gcd_(y)),
    OpSpec("lcm", _fn("lcm"), lambda r: [
        S(_I.copy(), _J.copy()), S(np.array([200], np.uint8), np.array([3], np.uint8), name="uint8_wraps"),
        S(np.array([0, 4, -6]), np.array([5, 0, 4]), name="zeros")], grad=False, notes="integer tensors only",
        inplace=lambda x, y: x.lcm_(y)),
    OpSpec("heaviside", _fn("heaviside"), lambda r: [
        S(np.array([-1.5, 0.0, 2.0, -0.0]), np.array([0.5]), name="float"),
        S(np.array([-3, 0, 2]), np.array([7, 8, 9]), name="int"),
        S(np.array([True, False]), np.array([True, True]), name="bool")], grad=False,
        notes="torch defines no derivative (grad_fn NotImplemented)", inplace=lambda x, y: x.heaviside_(y)),
    OpSpec("frexp", lambda m, x: m.frexp(x), lambda r: [
        S(randn(r, 2, 3) * 10), S(np.array([0.3, -0.7, 1.1, 3.0, -5.0, 1e-5, 1e5]), name="wide"),
        S(np.asarray(randn(r)), name="0d")], notes="(mantissa, int32 exponent); the mantissa's gradient is "
                                                   "grad / 2**exponent"),
    OpSpec("frexp_method", lambda m, x: x.frexp(), lambda r: [S(randn(r, 3, 2) * 100)]),
    OpSpec("ldexp", _fn("ldexp"), lambda r: [
        S(randn(r, 2, 3), np.array([1, 0, 3]), name="int_exponent"), S(randn(r, 2, 3), randn(r, 2, 3),
                                                                           name="float_exponent"),
        S(_I.copy(), _J.copy(), name="int_int")], inplace=lambda x, y: x.ldexp_(y)),
    OpSpec("nextafter", _fn("nextafter"), lambda r: [
        S(randn(r, 2, 3), randn(r, 2, 3)), S(randn(r, 3), randn(r, 2, 3), name="broadcast")],
        inplace=lambda x, y: x.nextafter_(y), float32=False,
        notes="gradient 1 for input (0 where input == other), 0 for other, as torch's"),
    OpSpec("bitwise_left_shift", _fn("bitwise_left_shift"), lambda r: [
        S(_I.copy(), np.array([1, 2, 3])), S(_I.copy(), np.array([-1, 64, 70]), name="out_of_range"),
        S(np.array([True, False]), 1, name="bool_number"), S(_I.astype(np.int32), np.array([1, 2, 3]),
                                                             name="int32_int64"),
        S(np.array([200], np.uint8), 1, name="uint8")], grad=False, inplace=lambda x, y: x.bitwise_left_shift_(y)),
    OpSpec("bitwise_right_shift", _fn("bitwise_right_shift"), lambda r: [
        S(-_I, np.array([1, 2, 3])), S(-_I, np.array([-1, 64, 1]), name="out_of_range"),
        S(np.array([200], np.uint8), 9, name="uint8_wide")], grad=False,
        inplace=lambda x, y: x.bitwise_right_shift_(y)),
    OpSpec("shift_operators", lambda m, x, y: (x << y, x >> y, 3 << y, 64 >> y, x << 1), lambda r: [
        S(_I.copy(), np.array([1, 2, 3]))], grad=False, extra={"covers": "__lshift__"}),
    OpSpec("positive", lambda m, x: m.positive(x), lambda r: [S(randn(r, 2, 3)), S(_I.copy(), name="int")],
           check_grad_fn=False, notes="the input itself, as torch's"),
    OpSpec("rsub", lambda m, x, y, **kw: m.rsub(x, y, **kw), lambda r: [
        S(randn(r, 2, 3), randn(r, 3)), S(randn(r, 2, 3), 2.5, name="number"),
        S(randn(r, 2, 3), randn(r, 2, 3), alpha=3, name="alpha"), S(_I.copy(), 2.5, name="int_float_number"),
        S(_I.copy(), _J.copy(), alpha=2, name="int_alpha")]),
    OpSpec("fill", lambda m, x, v: m.fill(x, v), lambda r: [
        S(randn(r, 2, 3), 2.5), S(randn(r, 2, 3), np.asarray(randn(r)), name="tensor_value"),
        S(_I.copy(), 2.5, name="int_truncates")]),
    OpSpec("fill_top_inplace", lambda m, x, v: m.fill_(x.clone(), v), lambda r: [
        S(randn(r, 2, 3), 2.5), S(randn(r, 3), np.asarray(randn(r)), name="tensor_value")],
        extra={"covers": "fill_"}),
    OpSpec("zero_top_inplace", lambda m, x: m.zero_(x.clone()), lambda r: [S(randn(r, 2, 3))],
           extra={"covers": "zero_"}),
    # --- combining tensors ------------------------------------------------------------------------------------------
    OpSpec("meshgrid", lambda m, *xs, **kw: m.meshgrid(*xs, **kw), lambda r: [
        S(randn(r, 3), randn(r, 2), indexing="ij"), S(randn(r, 3), randn(r, 2), randn(r, 4), indexing="xy",
                                                      name="xy3"),
        S(randn(r, 3), np.asarray(randn(r)), indexing="ij", name="0d"),
        S(np.array([1, 2, 3]), np.array([4, 5]), indexing="xy", name="int"), S(randn(r, 4), indexing="xy",
                                                                                name="one")],
        notes="without indexing= torch warns and uses 'ij' (test_new_ops_stats.py)"),
    OpSpec("meshgrid_list", lambda m, x, y: m.meshgrid([x, y], indexing="xy"), lambda r: [S(randn(r, 3), randn(r, 2))]),
    OpSpec("block_diag", lambda m, *xs: m.block_diag(*xs), lambda r: [
        S(randn(r, 2, 2), randn(r, 3), np.asarray(randn(r)), randn(r, 1, 2)),
        S(randn(r, 2, 3), np.array([[1, 2]]), name="promote_int"), S(randn(r, 0, 2), randn(r, 2, 0), name="empty"),
        S(noncontig(randn(r, 3, 2)), name="one"), S(name="none")]),
    OpSpec("cartesian_prod", lambda m, *xs: m.cartesian_prod(*xs), lambda r: [
        S(randn(r, 3), randn(r, 2)), S(randn(r, 2), randn(r, 2), randn(r, 3), name="three"),
        S(np.array([1, 2]), np.array([3, 4, 5]), name="int")]),
    OpSpec("combinations", lambda m, x, *a, **kw: m.combinations(x, *a, **kw), lambda r: [
        S(randn(r, 4)), S(randn(r, 4), 3, name="r3"), S(randn(r, 3), 2, with_replacement=True, name="replacement"),
        S(randn(r, 3), r=1, name="r1"), S(randn(r, 3), r=0, name="r0"), S(randn(r, 2), r=4, name="r_gt_n"),
        S(np.array([1, 2, 3]), name="int")]),
    OpSpec("vander", lambda m, x, *a, **kw: m.vander(x, *a, **kw), lambda r: [
        S(randn(r, 3)), S(randn(r, 4), 3, name="N"), S(randn(r, 3), N=4, increasing=True, name="increasing"),
        S(np.array([0.0, 1.5, -2.0]), name="zero"), S(np.array([1, 2, 3], np.int32), name="int32"),
        S(randn(r, 3), N=1, name="N1"), S(randn(r, 3), N=0, name="N0")], grad=False,
        notes="torch's own backward fails (it writes into a tensor it saved); tapegrad's is checked by gradcheck "
              "in test_new_ops_stats.py"),
    OpSpec("row_stack", lambda m, x, y: m.row_stack((x, y)), lambda r: [
        S(randn(r, 3), randn(r, 3)), S(randn(r, 2, 3), randn(r, 3), name="mixed")]),
    OpSpec("unravel_index", lambda m, i, shape: m.unravel_index(i, shape), lambda r: [
        S(np.array([4, 1, -1, 6]), (2, 3)), S(np.array([[1, 2], [3, 40]]), 5, name="int_shape"),
        S(np.array(7, np.int32), (2, 2, 2), name="0d_int32"), S(np.array(0), (), name="no_dims")], grad=False),
    # --- differences and integrals -------------------------------------------------------------------------------
    OpSpec("diff", lambda m, x, *a, **kw: m.diff(x, *a, **kw), lambda r: [
        S(randn(r, 3, 4)), S(randn(r, 3, 4), 2, 0, name="n2_dim0"), S(randn(r, 5), 7, name="n_gt_size"),
        S(randn(r, 3, 4), 1, -1, randn(r, 3, 2), randn(r, 3, 1), name="prepend_append"),
        S(randn(r, 3, 4), 0, 0, randn(r, 1, 4), name="n0_ignores_prepend"),
        S(randn(r, 4), 1, -1, None, np.array([1, 2]), name="int_append"), S(np.array([1, 4, 9, 16]), name="int"),
        S(np.array([True, False, False, True]), name="bool"), S(noncontig(randn(r, 4, 3)), dim=0, name="noncontig")]),
    OpSpec("diff_method", lambda m, x, **kw: x.diff(**kw), lambda r: [S(randn(r, 2, 5), n=3)]),
    OpSpec("gradient", lambda m, x, **kw: m.gradient(x, **kw), lambda r: [
        S(randn(r, 3, 4)), S(randn(r, 3, 4), spacing=2.0, name="spacing"), S(randn(r, 5), spacing=None, dim=None,
                                                                                name="none"),
        S(randn(r, 3, 4), spacing=[2.0, 0.5], edge_order=2, name="edge2"),
        S(randn(r, 4, 5), dim=1, edge_order=2, name="dim"),
        S(randn(r, 3, 4), dim=[1, 0], spacing=[1.5, 3.0], name="dim_list"),
        S(np.array([1, 4, 9, 16]), name="int")],
        notes="a composition of slices, arithmetic and cat, as torch's"),
    OpSpec("gradient_coordinates", lambda m, x, *c, **kw: m.gradient(x, spacing=c, **kw), lambda r: [
        S(randn(r, 5), np.array([0.0, 1.0, 3.0, 3.5, 6.0])),
        S(randn(r, 2, 5), np.array([0.0, 1.0, 3.0, 3.5, 6.0]), dim=1, edge_order=2, name="edge2"),
        S(randn(r, 4, 3), np.array([0.0, 0.5, 3.0, 3.5]), np.array([-1.0, 1.0, 1.5]), edge_order=2, name="2d"),
        S(np.array([1, 4, 9, 16]), np.array([0, 1, 3, 6]), name="int")],
        notes="one 1-d tensor of coordinates per dim (differentiable in them too)"),
    OpSpec("trapezoid", lambda m, y, *a, **kw: m.trapezoid(y, *a, **kw), lambda r: [
        S(randn(r, 3, 4)), S(randn(r, 3, 4), dx=2.5, name="dx"), S(randn(r, 3, 4), dim=0, name="dim0"),
        S(randn(r, 3, 4), np.array([0.0, 1.0, 3.0, 3.5]), name="x"),
        S(randn(r, 3, 4), randn(r, 3, 4), name="x_same_shape"), S(randn(r, 3, 0), name="empty"),
        S(np.array([1, 4, 9, 16]), dx=2, name="int"), S(np.array([1, 4, 9, 16]), np.array([1, 4, 9, 16]),
                                                        name="int_x")],
        check_grad_fn=False, notes="torch's ATen composition multiplies by a Scalar (MulBackward1); tapegrad's "
                                   "Python number product is MulBackward0, as torch's Python operators"),
    OpSpec("trapz", lambda m, y, *a, **kw: m.trapz(y, *a, **kw), lambda r: [
        S(randn(r, 3, 4), dx=3), S(randn(r, 3, 4), np.array([0.0, 1.0, 3.0, 3.5]), dim=1, name="x")],
        check_grad_fn=False),
    OpSpec("cumulative_trapezoid", lambda m, y, *a, **kw: m.cumulative_trapezoid(y, *a, **kw), lambda r: [
        S(randn(r, 3, 4)), S(randn(r, 3, 4), dx=0.5, dim=0, name="dx"),
        S(randn(r, 3, 4), np.array([0.0, 1.0, 3.0, 3.5]), name="x"), S(randn(r, 3, 0), name="empty"),
        S(np.array([1, 4, 9, 16]), name="int")], check_grad_fn=False),
    OpSpec("logcumsumexp", lambda m, x, *a, **kw: m.logcumsumexp(x, *a, **kw), lambda r: [
        S(randn(r, 2, 3), dim=0, name="dim_kw"),
        S(randn(r, 3, 4), 1), S(randn(r, 3, 4) * 6, 0, name="wide"), S(np.asarray(randn(r)), 0, name="0d"),
        S(noncontig(randn(r, 4, 3)), -1, name="noncontig")],
        aliases=("axis",)),
    OpSpec("logcumsumexp_method", lambda m, x, d: x.logcumsumexp(d), lambda r: [S(randn(r, 5), 0)]),
    # --- statistics ------------------------------------------------------------------------------------------------
    *[OpSpec(name, (lambda name: lambda m, x, q, *a, **kw: getattr(m, name)(x, q, *a, **kw))(name), lambda r: [
        S(randn(r, 3, 4), 0.3), S(randn(r, 3, 5), 0.5, 1, name="dim"), S(randn(r, 2, 5), 0.4, dim=1, name="dim_kw"), S(randn(r, 3, 4), 0.75, 0, True,
                                                                             name="keepdim"),
        S(randn(r, 3, 4), np.array([0.1, 0.25, 0.6, 0.95]), 1, name="q_tensor"),
        S(randn(r, 2, 3), np.array([0.1, 0.9]), keepdim=True, name="q_tensor_all_keepdim"),
        *[S(randn(r, 2, 5), np.array([0.1, 0.3, 0.45, 0.8]), 1, interpolation=m, name=m)
          for m in ("lower", "higher", "midpoint", "nearest")],
        S(np.asarray(randn(r)), 0.5, 0, name="0d"), S(noncontig(randn(r, 4, 3)), 0.2, 0, name="noncontig")],
        check_grad_fn=False, aliases=("axis", "keepdims"),
        notes="sort, gather and lerp, as torch's (its last node is a squeeze, here a reshape); a 1-d q adds a "
              "leading dim; quantile gives NaN for a row with a NaN, nanquantile ignores them (NaN rows: "
              "test_new_ops_stats.py, where finite differences do not apply)")
      for name in ("quantile", "nanquantile")],
    OpSpec("quantile_method", lambda m, x, q, **kw: x.quantile(q, **kw), lambda r: [
        S(randn(r, 3, 4), np.array([0.2, 0.7]), dim=0)], check_grad_fn=False),
    OpSpec("cov", _cov, lambda r: [
        S(randn(r, 3, 5)), S(randn(r, 5), name="1d"), S(randn(r, 2, 6), correction=0, name="correction0"),
        S(randn(r, 2, 4), np.array([1, 2, 0, 3]), names=("fweights",), name="fweights"),
        S(randn(r, 2, 4), randn(r, 4, positive=True), names=("aweights",), name="aweights"),
        S(randn(r, 3, 4), np.array([1, 2, 1, 3]), randn(r, 4, positive=True), correction=2,
          names=("fweights", "aweights"), name="both"),
        S(np.array([[1, 2, 4], [3, 1, 0]]), name="int"), S(noncontig(randn(r, 4, 3)), name="noncontig")],
        notes="torch's composition (mean, mm, divide, squeeze)"),
    OpSpec("corrcoef", lambda m, x: m.corrcoef(x), lambda r: [
        S(randn(r, 3, 5)), S(randn(r, 5), name="1d"), S(np.array([[1, 2, 4], [3, 1, 0]]), name="int"),
        S(noncontig(randn(r, 4, 3)), name="noncontig")]),
    OpSpec("corrcoef_method", lambda m, x: x.corrcoef(), lambda r: [S(randn(r, 2, 4))]),
    OpSpec("dist", lambda m, x, y, *a: m.dist(x, y, *a), lambda r: [
        S(randn(r, 3, 4), randn(r, 3, 4)), S(randn(r, 3, 4), randn(r, 4), 1, name="p1_broadcast"),
        S(randn(r, 3, 4), randn(r, 3, 4), 3.5, name="p3.5"), S(randn(r, 3), randn(r, 3), float("inf"), name="inf"),
        S(randn(r, 2, 3), randn(r, 2, 3), 0.5, name="p0.5")]),
    OpSpec("dist_method", lambda m, x, y: x.dist(y, 3), lambda r: [S(randn(r, 4), randn(r, 4))]),
    OpSpec("renorm", lambda m, x, *a: m.renorm(x, *a), lambda r: [
        S(randn(r, 3, 4), 2, 0, 1.0), S(randn(r, 3, 4), 1, 1, 1.5, name="p1_dim1"),
        S(randn(r, 2, 3, 2), 3, -1, 0.8, name="3d"), S(randn(r, 3, 4) * 0.1, 2, 0, 5.0, name="under"),
        S(randn(r, 3, 4), float("inf"), 0, 0.5, name="inf"), S(noncontig(randn(r, 4, 3)), 2, 1, 1.0,
                                                                 name="noncontig")],
        inplace=lambda x, *a: x.renorm_(*a)),
    # --- counting (no gradient) ----------------------------------------------------------------------------------
    OpSpec("histc", lambda m, x, *a, **kw: m.histc(x, *a, **kw), lambda r: [
        S(randn(r, 50)), S(randn(r, 5, 8), 7, name="bins"), S(randn(r, 40), 5, -1.0, 1.0, name="range"),
        S(np.array([1.0, 2.0, 1.0, 2.5, 4.0, 0.0]), 4, name="edges_hit"), S(np.ones(3), 4, name="constant"),
        S(np.zeros(0), 3, name="empty")], grad=False),
    OpSpec("histc_method", lambda m, x: x.histc(bins=6, min=-2, max=2), lambda r: [S(randn(r, 30))], grad=False),
    OpSpec("histogram", lambda m, x, *a, **kw: m.histogram(x, *a, **kw), lambda r: [
        S(randn(r, 50), 10), S(randn(r, 5, 8), 4, range=(-1.0, 1.5), name="range"),
        S(randn(r, 6), 3, weight=None, density=True, name="density"),
        S(randn(r, 20), np.array([-2.0, -0.5, 0.0, 0.3, 2.0]), name="edges"),
        S(np.array([1.0, 2.0, 1.0, 2.5, 4.0, 0.0]), np.array([0.0, 1.0, 2.5, 5.0]), density=True,
          name="edges_density"),
        S(np.ones(3), 3, name="constant"), S(np.zeros(0), 3, name="empty")], grad=False,
        notes="returns torch.return_types.histogram(hist, bin_edges); the edges as torch's linspace"),
    OpSpec("histogram_weight", lambda m, x, w, **kw: m.histogram(x, 3, weight=w, **kw), lambda r: [
        S(randn(r, 12), randn(r, 12, positive=True)), S(randn(r, 3, 4), randn(r, 3, 4, positive=True),
                                                         density=True, name="density_2d"),
        S(np.asarray(randn(r)), np.asarray(1.5), name="0d")], grad=False),
    OpSpec("histogram_method", lambda m, x: x.histogram(5), lambda r: [S(randn(r, 30))], grad=False),
    OpSpec("histogramdd", lambda m, x, *b, **kw: m.histogramdd(x, list(b) if b else kw.pop("bins"), **kw),
           lambda r: [
        S(randn(r, 30, 2), bins=[3, 4]), S(randn(r, 20, 3), bins=2, name="int_bins"),
        S(randn(r, 4, 5, 2), bins=[2, 3], range=[-1.0, 1.0, -2.0, 2.0], density=True, name="range_density"),
        S(randn(r, 10, 2), np.array([-2.0, 0.0, 2.0]), np.array([-1.0, 0.0, 0.5, 1.0]), name="edges"),
        S(randn(r, 10, 1), bins=[4], name="one_dim")], grad=False,
        output_process=lambda res: (res[0], *res[1]),
        notes="(hist, bin_edges) with a tuple of edge tensors"),
    OpSpec("bincount", lambda m, x, *a, **kw: m.bincount(x, *a, **kw), lambda r: [
        S(np.array([0, 1, 1, 3, 7, 3])), S(np.array([0, 1, 1, 3]), randn(r, 4), name="weights"),
        S(np.array([2, 0]), minlength=5, name="minlength"), S(np.array([0, 1, 1], np.uint8), name="uint8"),
        S(np.array([0, 2, 1]), np.array([1, 2, 3]), name="int_weights"), S(np.zeros(0, np.int64), name="empty")],
        grad=False, notes="weights: a float result (float64 unless they are float32); torch defines no derivative"),
    # --- index reductions, membership, diagonal fill, sum_to_size --------------------------------------------------
    *[OpSpec(f"index_reduce_{red}", (lambda red: lambda m, x, i, s, **kw: x.index_reduce(0, i, s, red, **kw))(red),
             (lambda red: lambda r: [
                 S(randn(r, 3, 2), np.array([0, 2, 0, 1]), randn(r, 4, 2)),
                 S(randn(r, 3, 2), np.array([0, 2, 0, 0]), randn(r, 4, 2), include_self=False, name="exclude_self"),
                 S(randn(r, 4, 2), np.array([3, 3]), randn(r, 2, 2), name="untouched_slots"),
                 S(np.asarray(randn(r)), np.array([0]), np.asarray(randn(r)), name="0d"),
                 *([S(np.array([[0.0, 2.0], [1.5, -1.0], [0.5, 3.0]]), np.array([0, 1, 0, 1]),
                      np.array([[2.0, 0.0], [0.0, 0.0], [-1.0, 0.5], [2.0, 1.5]]), name="zeros", smooth=False)]
                   if red == "prod" else []),
                 *([S(np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([0, 0, 1]),
                      np.array([[1.0, 0.5], [0.5, 2.0], [3.0, 4.0]]), name="ties", smooth=False)]
                   if red in ("amax", "amin") else []),
                 S(np.array([[1, 2], [3, 4]]), np.array([0, 0]), np.array([[3, 4], [4, 7]]), name="int")])(red),
             inplace=(lambda red: lambda x, i, s, **kw: x.index_reduce_(0, i, s, red, **kw))(red),
             warns="index_reduce\\(\\) is in beta", extra={"covers": "index_reduce"},
             notes="IndexReduceBackward0 with torch's formulas (a product's zeros handled exactly)")
      for red in ("prod", "mean", "amax", "amin")],
    OpSpec("index_reduce_dim1", lambda m, x, i, s: m.index_reduce(x, 1, i, s, "mean", include_self=False),
           lambda r: [S(randn(r, 2, 3), np.array([2, 2, 0]), randn(r, 2, 3))],
           warns="index_reduce\\(\\) is in beta"),
    OpSpec("isin", lambda m, e, t, **kw: m.isin(e, t, **kw), lambda r: [
        S(np.array([1, 2, 3, 4]), np.array([2, 4, 6])), S(np.array([[1, 2], [3, 4]]), np.array([2, 4]), invert=True,
                                                           name="invert"),
        S(np.array([1, 2, 3, 4]), np.array([4, 2]), assume_unique=True, name="unique"),
        S(np.array([1.0, np.nan, 2.0]), np.array([np.nan, 2.0]), name="nan"),
        S(np.array([1, 2, 3]), np.array([2.0, 3.5]), name="mixed"), S(2, np.array([1, 2]), name="number_element"),
        S(np.array([1, 2, 3]), 3, name="number_test")], grad=False),
    OpSpec("fill_diagonal_", lambda m, x, *a, **kw: x.clone().fill_diagonal_(*a, **kw), lambda r: [
        S(randn(r, 3, 4), 2.0), S(randn(r, 7, 3), 0.5, wrap=True, name="tall_wrap"),
        S(randn(r, 7, 3), -1.0, name="tall"), S(randn(r, 2, 2, 2), 1.0, name="3d"),
        S(np.array([[1, 2], [3, 4]]), 2.7, name="int_truncates")], check_grad_fn=False,
        notes="torch's node is CopySlices (a fill of the diagonal view); here FillDiagonalBackward0"),
    OpSpec("sum_to_size", lambda m, x, *size: x.sum_to_size(*size), lambda r: [
        S(randn(r, 2, 3), 1, 3), S(randn(r, 4, 2, 3), 2, 1, name="lead_and_keep"), S(randn(r, 2, 3), (3,),
                                                                                        name="tuple"),
        S(np.array([[1, 2], [3, 4]]), 2, name="int")]),
]
