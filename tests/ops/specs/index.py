"""Specs of the indexing ops: ``x[key]``, ``x[key] = v``, gather/scatter, index_*, masked_*, take/put, sort/topk,
unique, searchsorted, one_hot. Samples cover repeated and negative indices, empty selections, 0-d and
non-contiguous inputs."""

import numpy as np

from ops.op_db import OpSpec, S, noncontig, randn


def perm_rows(r, n, cols, k):
    """A (k, cols) int64 index whose columns hold distinct values in [0, n) (deterministic scatter)."""
    return np.argsort(r.random((n, cols)), axis=0)[:k].astype(np.int64)


def ints(r, *shape, high=3):
    return r.integers(0, high, size=shape).astype(np.int64)


def I(*v):  # noqa: E743 - an int64 index array
    return np.array(v, dtype=np.int64)


def B(*v):
    return np.array(v, dtype=np.bool_)


def setitem(key_fn, base="mul"):
    """``y = x * 1; y[key] = v; return y`` — differentiable in x and v (torch: CopySlices / IndexPutBackward0)."""
    def fn(m, x, v):
        y = x * 1 if base == "mul" else x.clone()
        y[key_fn(m, y)] = v
        return y
    return fn


def one_hot(m, t, *args):
    if m.__name__ == "torch":
        return m.nn.functional.one_hot(t, *args)
    from tapegrad.ops.index import one_hot as oh
    return oh(t, *args)


NOT_DIFF = "integer output: not differentiable"
UNIQUE = "torch records Unique*Backward0 nodes whose backward raises 'not implemented': values only"

SPECS = [
    # --- x[key] ---------------------------------------------------------------------------------------------
    OpSpec("getitem_int_key", lambda m, x, k: x[k], lambda r: [
        S(randn(r, 3, 4), 1), S(randn(r, 3, 4), -1, name="neg"), S(randn(r, 3), 2, name="to0d"),
        S(noncontig(randn(r, 3, 4)), 0, name="noncontig")]),
    OpSpec("getitem_slice_key", lambda m, x, k: x[k], lambda r: [
        S(randn(r, 4, 3), slice(1, None)), S(randn(r, 5, 2), slice(None, None, 2), name="step"),
        S(randn(r, 3, 4), (slice(None), slice(1, 3)), name="dim1"), S(randn(r, 3), slice(None, 10), name="clamp"),
        S(randn(r, 3, 2), slice(2, 1), name="empty"), S(randn(r, 3, 4), slice(None), name="full"),
        S(randn(r, 3, 4), (slice(-2, None), slice(None, None, 3)), name="negstart"),
        S(noncontig(randn(r, 4, 3)), (slice(None), slice(None, None, 2)), name="noncontig")]),
    OpSpec("getitem_none_ellipsis", lambda m, x, k: x[k], lambda r: [
        S(randn(r, 3, 4), None), S(randn(r, 3, 4), (Ellipsis, None), name="trailing"),
        S(randn(r, 3, 4), (None, Ellipsis, 0), name="none_ell_int"), S(randn(r, 3, 4), Ellipsis, name="ellipsis"),
        S(randn(r, 3, 4), (), name="empty_tuple"), S(randn(r, 3, 4), (slice(None), None, 1), name="mid_none"),
        S(randn(r, 3, 4), (0, None), name="select_unsqueeze"), S(randn(r, 3, 4), (slice(None), slice(None)),
                                                                 name="alias"),
        S(randn(r), None, name="0d_none"), S(randn(r), Ellipsis, name="0d_ellipsis"),
        S(randn(r, 2, 3, 4), (1, Ellipsis, slice(1, None)), name="int_ell_slice")]),
    OpSpec("getitem_int_list", lambda m, x, k: x[k], lambda r: [
        S(randn(r, 3, 4), [0, 2, 0, -1], name="repeat_neg"), S(randn(r, 3, 4), [], name="empty"),
        S(randn(r, 3, 4), (slice(None), [1, 1, 3]), name="dim1"), S(randn(r, 3, 4), ([0, 1, 1], [1, 2, 2]),
                                                                    name="pairs"),
        S(noncontig(randn(r, 3, 4)), ([2, 0], slice(1, None)), name="noncontig")]),
    OpSpec("getitem_tensor_index", lambda m, x, i: x[i], lambda r: [
        S(randn(r, 3, 4), I(2, 0, 2)), S(randn(r, 3, 4), np.array([[0, 1], [2, 0]]), name="2d_index"),
        S(randn(r, 3, 4), I(-1, -3), name="neg"),
        S(randn(r, 3), np.array(1), name="0d_int_index")]),
    OpSpec("getitem_mask", lambda m, x, k: x[k], lambda r: [
        S(randn(r, 3, 4), B(True, False, True)), S(randn(r, 3, 4), r.random((3, 4)) > 0.5, name="full_mask"),
        S(randn(r, 3, 4), B(False, False, False), name="empty"), S(randn(r, 2, 3), [True, False], name="list"),
        S(randn(r, 3, 4), True, name="py_true"), S(randn(r, 3, 4), False, name="py_false"),
        S(randn(r), np.array(True), name="0d_true"), S(randn(r, 2, 3, 2), r.random((2, 3)) > 0.4, name="2d_mask"),
        S(noncontig(randn(r, 3, 4)), B(True, True, False), name="noncontig")]),
    OpSpec("getitem_mask_from_self", lambda m, x: x[x > 0], lambda r: [S(randn(r, 3, 4))]),
    OpSpec("getitem_mixed", lambda m, x, k: x[k], lambda r: [
        S(randn(r, 3, 4), (0, [1, 2, 1]), name="int_list"), S(randn(r, 3, 4), (slice(1, None), [0, 0]),
                                                                name="slice_list"),
        S(randn(r, 3, 4), (None, [0, 2]), name="none_list"),
        S(randn(r, 2, 3, 4), ([1, 0], 0, [1, 2]), name="separated_int"),
        S(randn(r, 2, 3, 4), (0, slice(None), [1, 2]), name="torch_not_numpy"),
        S(randn(r, 2, 3, 4), ([0], Ellipsis, [1, 3]), name="ellipsis_between"),
        S(randn(r, 2, 3, 4), ([[0, 1], [1, 0]], slice(None), [[1], [3]]), name="broadcast_2d"),
        S(randn(r, 2, 3, 4), (slice(None), B(True, False, True), 1), name="mask_then_int"),
        S(randn(r, 2, 3), (True, 1), name="true_int")]),
    # --- x[key] = v -------------------------------------------------------------------------------------------
    OpSpec("setitem_int", setitem(lambda m, y: 1), lambda r: [
        S(randn(r, 3, 4), randn(r, 4)), S(randn(r, 3, 4), randn(r), name="0d_value"),
        S(randn(r, 3, 4), randn(r, 1, 4), name="leading_one")]),
    OpSpec("setitem_slice", setitem(lambda m, y: (slice(None), slice(1, None, 2))), lambda r: [
        S(randn(r, 3, 4), randn(r, 3, 2)), S(randn(r, 3, 4), randn(r, 2), name="broadcast"),
        S(noncontig(randn(r, 3, 4)), randn(r, 3, 1), name="noncontig")]),
    OpSpec("setitem_full_slice", setitem(lambda m, y: slice(None)), lambda r: [S(randn(r, 3, 4), randn(r, 4))]),
    OpSpec("setitem_list", setitem(lambda m, y: [0, 2]), lambda r: [
        S(randn(r, 3, 4), randn(r, 2, 4)), S(randn(r, 3, 4), randn(r, 4), name="broadcast"),
        S(randn(r, 3, 4), randn(r), name="0d")]),
    OpSpec("setitem_tensor_index", setitem(lambda m, y: m.tensor([2, -3])), lambda r: [
        S(randn(r, 3, 4), randn(r, 2, 4))]),
    OpSpec("setitem_mask", setitem(lambda m, y: y > 0), lambda r: [
        S(randn(r, 3, 4), randn(r)), S(randn(r, 3, 4), randn(r, 1), name="1elem")]),
    OpSpec("setitem_mixed", setitem(lambda m, y: (0, [1, 3])), lambda r: [
        S(randn(r, 3, 4), randn(r, 2)), S(randn(r, 3, 4), randn(r), name="0d")]),
    OpSpec("setitem_adv_slice", setitem(lambda m, y: ([0, 1], slice(1, None))), lambda r: [
        S(randn(r, 3, 4), randn(r, 3))]),
    OpSpec("setitem_none", setitem(lambda m, y: (None, 1)), lambda r: [S(randn(r, 3, 4), randn(r, 4))]),
    # --- gather / scatter -----------------------------------------------------------------------------------
    OpSpec("gather", lambda m, x, d, i: m.gather(x, d, i), lambda r: [
        S(randn(r, 3, 4), 1, ints(r, 3, 5, high=4), name="repeat"), S(randn(r, 3, 4), 0, ints(r, 2, 4), name="dim0"),
        S(randn(r, 3, 4), -1, ints(r, 2, 2, high=4), name="smaller"), S(randn(r), 0, np.array(0), name="0d"),
        S(randn(r, 3, 4), 1, np.zeros((3, 0), np.int64), name="empty"),
        S(noncontig(randn(r, 4, 3)), 0, ints(r, 4, 3, high=4), name="noncontig")]),
    OpSpec("scatter", lambda m, x, d, i, s: m.scatter(x, d, i, s), lambda r: [
        S(randn(r, 3, 4), 0, perm_rows(r, 3, 4, 2), randn(r, 2, 4)),
        S(randn(r, 3, 4), 1, perm_rows(r, 4, 3, 2).T.copy(), randn(r, 3, 2), name="dim1"),
        S(randn(r), 0, np.array(0), randn(r), name="0d"),
        S(noncontig(randn(r, 4, 3)), 0, perm_rows(r, 4, 3, 4), noncontig(randn(r, 4, 3)), name="noncontig")],
        inplace=lambda x, d, i, s: x.scatter_(d, i, s)),
    OpSpec("scatter_value", lambda m, x, d, i, v: m.scatter(x, d, i, v), lambda r: [
        S(randn(r, 3, 4), 0, ints(r, 2, 4), 1.5), S(randn(r, 3, 4), -1, ints(r, 3, 2, high=4), -2.0, name="dim_neg")],
        inplace=lambda x, d, i, v: x.scatter_(d, i, v)),
    OpSpec("scatter_legacy_reduce", lambda m, x, d, i, s, red: m.scatter(x, d, i, s, reduce=red), lambda r: [
        S(randn(r, 3, 4), 0, ints(r, 2, 4), randn(r, 2, 4), "add"),
        S(randn(r, 3, 4), 1, ints(r, 3, 2, high=4), randn(r, 3, 2), "multiply", name="multiply")],
        grad=False, notes="torch defines no derivative (grad_fn NotImplemented); values only",
        inplace=lambda x, d, i, s, red: x.scatter_(d, i, s, reduce=red),
        warns=r"The reduce argument of (?:torch|tapegrad)\.scatter with Tensor src is deprecated"),
    OpSpec("scatter_add", lambda m, x, d, i, s: m.scatter_add(x, d, i, s), lambda r: [
        S(randn(r, 3, 4), 0, ints(r, 5, 4), randn(r, 5, 4), name="repeat"),
        S(randn(r, 3, 4), 1, ints(r, 3, 2, high=4), randn(r, 3, 2), name="dim1"),
        S(randn(r, 3), 0, np.zeros(0, np.int64), randn(r, 0), name="empty")],
        inplace=lambda x, d, i, s: x.scatter_add_(d, i, s)),
    *[OpSpec(f"scatter_reduce_{red}", lambda m, x, d, i, s, red=red, **kw: m.scatter_reduce(x, d, i, s, red, **kw),
             lambda r: [
                 S(randn(r, 3, 4, positive=True), 0, ints(r, 4, 4), randn(r, 4, 4, positive=True)),
                 S(randn(r, 3, 4, positive=True), 1, ints(r, 3, 5, high=4), randn(r, 3, 5, positive=True),
                   include_self=False, name="exclude_self"),
                 S(randn(r, 4, positive=True), 0, I(0, 0, 2), randn(r, 3, positive=True), name="1d")],
             inplace=lambda x, d, i, s, red=red, **kw: x.scatter_reduce_(d, i, s, red, **kw),
             extra={"fwd_torch": "torch 2.13's forward AD gives no tangent for scatter_reduce 'prod'"}
             if red == "prod" else {})
      for red in ("sum", "prod", "mean", "amax", "amin")],
    # --- index_* --------------------------------------------------------------------------------------------
    OpSpec("index_select", lambda m, x, d, i: m.index_select(x, d, i), lambda r: [
        S(randn(r, 3, 4), 0, I(2, 0, 2)), S(randn(r, 3, 4), -1, I(3, 1), name="dim_neg"),
        S(randn(r, 3, 4), 1, I(), name="empty"), S(randn(r), 0, I(0), name="0d"),
        S(randn(r, 3, 4), 0, np.array(1), name="0d_index"),
        S(noncontig(randn(r, 3, 4)), 1, I(0, 0, 3), name="noncontig")]),
    OpSpec("index_add", lambda m, x, d, i, s, **kw: m.index_add(x, d, i, s, **kw), lambda r: [
        S(randn(r, 3, 4), 0, I(0, 2, 0), randn(r, 3, 4), name="repeat"),
        S(randn(r, 3, 4), 1, I(3, 1), randn(r, 3, 2), alpha=2.5, name="alpha"),
        S(randn(r, 3), 0, I(), randn(r, 0), name="empty")],
        inplace=lambda x, d, i, s, **kw: x.index_add_(d, i, s, **kw)),
    OpSpec("index_copy", lambda m, x, d, i, s: m.index_copy(x, d, i, s), lambda r: [
        S(randn(r, 3, 4), 0, I(2, 0), randn(r, 2, 4)), S(randn(r, 3, 4), -1, I(1, 3, 0), randn(r, 3, 3),
                                                         name="dim_neg")],
        inplace=lambda x, d, i, s: x.index_copy_(d, i, s)),
    OpSpec("index_fill", lambda m, x, d, i, v: m.index_fill(x, d, i, v), lambda r: [
        S(randn(r, 3, 4), 0, I(2, 0, 2), 1.5), S(randn(r, 3, 4), 1, I(-1), -3.0, name="neg_index"),
        S(randn(r, 3, 4), 1, I(1, 2), randn(r), name="tensor_value")],
        inplace=lambda x, d, i, v: x.index_fill_(d, i, v)),
    OpSpec("index_put", lambda m, x, idx, v, **kw: m.index_put(x, idx, v, **kw), lambda r: [
        S(randn(r, 3, 4), (I(0, 2),), randn(r, 2, 4)), S(randn(r, 3, 4), (I(0, 0, 1), I(1, 1, 3)), randn(r, 3),
                                                         accumulate=True, name="accumulate_repeat"),
        S(randn(r, 3, 4), (I(2, 1),), randn(r, 4), name="broadcast"),
        S(randn(r, 3, 4), (r.random((3, 4)) > 0.5,), randn(r), name="mask")],
        inplace=lambda x, idx, v, **kw: x.index_put_(idx, v, **kw)),
    # --- masked ---------------------------------------------------------------------------------------------
    OpSpec("masked_fill", lambda m, x, k, v: m.masked_fill(x, k, v), lambda r: [
        S(randn(r, 3, 4), r.random((3, 4)) > 0.5, 2.0), S(randn(r, 3, 4), B(True, False, False, True), -1.0,
                                                          name="broadcast_mask"),
        S(randn(r, 3, 4), r.random((3, 4)) > 0.5, randn(r), name="tensor_value"),
        S(randn(r, 4), r.random((2, 4)) > 0.5, 0.5, name="broadcast_out"), S(randn(r), np.array(True), 3.0,
                                                                             name="0d"),
        S(noncontig(randn(r, 3, 4)), r.random((3, 4)) > 0.5, 1.0, name="noncontig")],
        inplace=lambda x, k, v: x.masked_fill_(k, v)),
    OpSpec("masked_scatter", lambda m, x, k, s: m.masked_scatter(x, k, s), lambda r: [
        S(randn(r, 3, 4), r.random((3, 4)) > 0.5, randn(r, 3, 4)),
        S(randn(r, 3, 4), B(True, False, False, True), randn(r, 10), name="broadcast_mask_bigger_src"),
        S(randn(r, 3), B(False, False, False), randn(r, 2), name="empty")],
        inplace=lambda x, k, s: x.masked_scatter_(k, s)),
    OpSpec("masked_select", lambda m, x, k: m.masked_select(x, k), lambda r: [
        S(randn(r, 3, 4), r.random((3, 4)) > 0.5), S(randn(r, 3, 4), B(True, False, True, True), name="broadcast"),
        S(randn(r, 4), r.random((3, 4)) > 0.5, name="broadcast_input"), S(randn(r, 2), B(False, False),
                                                                          name="empty")]),
    # --- take / put / take_along_dim --------------------------------------------------------------------------
    OpSpec("take", lambda m, x, i: m.take(x, i), lambda r: [
        S(randn(r, 3, 4), np.array([[0, 11], [5, 5]])), S(randn(r, 3, 4), I(-1, 0, -12), name="neg"),
        S(randn(r), np.array(0), name="0d"), S(noncontig(randn(r, 3, 4)), I(1, 4, 1), name="noncontig")]),
    OpSpec("put", lambda m, x, i, s, **kw: m.put(x, i, s, **kw), lambda r: [
        S(randn(r, 3, 4), I(0, 11, 5), randn(r, 3)), S(randn(r, 3, 4), I(0, 0, 7, -1), randn(r, 2, 2),
                                                       accumulate=True, name="accumulate")],
        inplace=lambda x, i, s, **kw: x.put_(i, s, **kw)),
    OpSpec("take_along_dim", lambda m, x, i, *d: m.take_along_dim(x, i, *d), lambda r: [
        S(randn(r, 3, 4), np.argsort(r.random((3, 4)), 1), 1), S(randn(r, 3, 4), ints(r, 1, 4), 0,
                                                                 name="broadcast_index"),
        S(randn(r, 3, 1), ints(r, 3, 2), 0, name="broadcast_input"), S(randn(r, 3, 4), I(0, 11, 11), name="flat")]),
    # --- nonzero / argwhere -----------------------------------------------------------------------------------
    OpSpec("nonzero", lambda m, x, **kw: m.nonzero(x, **kw), lambda r: [
        S(ints(r, 3, 4)), S(ints(r, 3, 4), as_tuple=True, name="tuple"), S(np.array(5), name="0d"),
        S(np.array(0), as_tuple=True, name="0d_tuple"), S(np.zeros((2, 0), np.int64), name="empty"),
        S(r.random((2, 3)) > 0.5, name="bool")], grad=False, notes=NOT_DIFF),
    OpSpec("argwhere", lambda m, x: m.argwhere(x), lambda r: [S(ints(r, 2, 3, 2)), S(np.array(1.5), name="0d")],
           grad=False, notes=NOT_DIFF),
    # --- sort / topk / kthvalue -------------------------------------------------------------------------------
    OpSpec("sort", lambda m, x, *a, **kw: m.sort(x, *a, **kw), lambda r: [
        S(randn(r, 3, 4)), S(randn(r, 3, 4), 0, True, name="dim0_desc"),
        S(randn(r, 3, 4), stable=False, name="stable_false"), S(randn(r), name="0d"), S(randn(r, 0, 3), name="empty"), S(ints(r, 5, high=9), name="int"),
        S(noncontig(randn(r, 3, 4)), -2, name="noncontig")]),
    OpSpec("sort_ties_nan", lambda m, x, **kw: m.sort(x, **kw), lambda r: [
        S(np.array([[2.0, 1.0, 2.0, 1.0], [0.0, 0.0, 3.0, 3.0]]), stable=True, name="stable_ties"),
        S(np.array([2.0, 1.0, 2.0, 1.0, 2.0]), descending=True, stable=True, name="stable_desc_ties"),
        S(np.array([1.0, np.nan, -1.0, np.nan]), name="nan"),
        S(np.array([1.0, np.nan, -1.0, np.nan]), descending=True, name="nan_desc")], grad=False,
        notes="values and indices only: at a tie or a NaN finite differences are undefined (the gradient through "
              "the stable order is checked against torch in test_indexing.py)"),
    OpSpec("argsort", lambda m, x, *a, **kw: m.argsort(x, *a, **kw), lambda r: [
        S(randn(r, 3, 4)), S(randn(r, 3, 4), 0, True, name="desc"), S(np.array([2.0, 1.0, 2.0, 1.0]), stable=True,
                                                                        name="stable_ties"),
        S(randn(r), name="0d")], grad=False, notes=NOT_DIFF),
    OpSpec("msort", lambda m, x: m.msort(x), lambda r: [S(randn(r, 3, 4)), S(randn(r, 4), name="1d")]),
    OpSpec("topk", lambda m, x, k, *a, **kw: m.topk(x, k, *a, **kw), lambda r: [
        S(randn(r, 3, 5), 2), S(randn(r, 3, 5), 2, 0, False, name="smallest_dim0"), S(randn(r, 4), 0, name="k0"),
        S(randn(r), 1, name="0d"), S(randn(r, 6), 6, name="all"),
        S(noncontig(randn(r, 4, 3)), 3, -2, name="noncontig")]),
    OpSpec("kthvalue", lambda m, x, k, *a, **kw: m.kthvalue(x, k, *a, **kw), lambda r: [
        S(randn(r, 3, 5), 2), S(randn(r, 3, 5), 3, 0, True, name="dim0_keepdim"), S(randn(r), 1, name="0d"),
        S(randn(r, 4), 4, name="max")]),
    # --- unique -----------------------------------------------------------------------------------------------
    OpSpec("unique", lambda m, x, **kw: m.unique(x, **kw), lambda r: [
        S(ints(r, 3, 4)), S(ints(r, 3, 4), return_inverse=True, return_counts=True, name="inverse_counts"),
        S(np.array([[1.0, 2.0], [1.0, 2.0], [0.0, 5.0]]), dim=0, return_inverse=True, return_counts=True,
          name="dim0"),
        S(ints(r, 2, 5), dim=1, return_counts=True, name="dim1"), S(np.zeros(0, np.int64), name="empty"),
        S(np.array([2.0, -1.0, 2.0]), name="float"),
        S(np.array([np.nan, 1.0, np.nan]), return_inverse=True, return_counts=True, name="nan")],
        grad=False, notes=UNIQUE),
    OpSpec("unique_consecutive", lambda m, x, **kw: m.unique_consecutive(x, **kw), lambda r: [
        S(I(1, 1, 2, 2, 3, 1, 1)), S(I(1, 1, 2, 2, 3, 1, 1), return_inverse=True, return_counts=True, name="all"),
        S(np.array([[1, 1, 2], [1, 1, 2], [0, 1, 2]]), dim=0, return_inverse=True, return_counts=True, name="dim0"),
        S(np.array([[1, 1, 2], [1, 1, 3]]), dim=1, return_counts=True, name="dim1"),
        S(np.array([[1.0, 1.0], [2.0, 2.0]]), return_inverse=True, name="2d_flat")], grad=False, notes=UNIQUE),
    # --- searchsorted / bucketize -----------------------------------------------------------------------------
    OpSpec("searchsorted", lambda m, s, v, **kw: m.searchsorted(s, v, **kw), lambda r: [
        S(I(1, 3, 5, 7), I(3, 6, 0, 9)), S(I(1, 3, 5, 7), I(3, 6, 0, 9), right=True, name="right"),
        S(np.array([1.0, 3.0, 5.0]), np.array([[3.0, 4.5], [5.0, -1.0]]), side="right", name="side"),
        S(np.array([[1, 3, 5], [2, 4, 6]]), np.array([[3, 6], [1, 4]]), name="nd"),
        S(np.array([[1, 3, 5], [2, 4, 6]]), np.array([[3, 6], [1, 4]]), right=True, out_int32=True, name="nd_right"),
        S(I(1, 3, 5), 3, name="scalar")], grad=False, notes=NOT_DIFF),
    OpSpec("searchsorted_sorter", lambda m, s, v, srt: m.searchsorted(s, v, sorter=srt), lambda r: [
        S(np.array([5, 1, 3]), I(3, 4, 0), I(1, 2, 0))], grad=False, notes=NOT_DIFF),
    OpSpec("bucketize", lambda m, x, b, **kw: m.bucketize(x, b, **kw), lambda r: [
        S(np.array([[1, 4, 9], [0, 8, 2]]), I(2, 4, 8)), S(I(1, 4, 9), I(2, 4, 8), right=True, name="right"),
        S(np.array([0.5, 4.0]), np.array([1.0, 4.0]), out_int32=True, name="float_int32")],
        grad=False, notes=NOT_DIFF),
    # --- one_hot, tril/triu_indices ---------------------------------------------------------------------------
    OpSpec("nn.functional.one_hot", one_hot, lambda r: [
        S(I(0, 2, 1)), S(np.array([[0, 3], [1, 1]]), 5, name="2d_classes"), S(np.array(2), 4, name="0d"),
        S(np.zeros(0, np.int64), 3, name="empty")], grad=False, notes=NOT_DIFF),
    OpSpec("tril_indices", lambda m, *a, **kw: m.tril_indices(*a, **kw), lambda r: [
        S(3, 4), S(3, 4, 1, name="offset"), S(4, 3, -2, name="neg_offset"), S(0, 3, name="empty"),
        S(3, 3, name="square")], grad=False, notes=NOT_DIFF),
    OpSpec("triu_indices", lambda m, *a, **kw: m.triu_indices(*a, **kw), lambda r: [
        S(3, 4), S(3, 4, 1, name="offset"), S(4, 3, -1, name="neg_offset")], grad=False, notes=NOT_DIFF),
]
