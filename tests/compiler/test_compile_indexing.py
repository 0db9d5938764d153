"""tapegrad.compile replays indexing and the index ops: the index tensors (and masks) are the ops' arguments and
the key is made and checked in the forward, so a replay indexes with the call's own values (``ops._util.
capturing``); Python lists in a key are constants of the program. For each form: ``explain`` finds no graph
break, a capture and two replays with *new* index values equal eager mode bitwise (values and gradients), and a
bad index given after the capture raises eager's exact error from the replay. A boolean mask's count is a
data-dependent shape: a replay with the capture's count runs the program; another count is captured, and the
program made generic in it (verified at a third count), or, where it cannot be, runs the call eagerly
(``Entry.shape_misses``): never with stale shapes."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tapegrad
import tapegrad.nn.functional as F
from tapegrad.compiler import explain
from _replay_check import check as _check, fresh as _fresh, result as _result, same as _same, t as _t


def _x(seed, shape=(5, 3), rg=True, nan=False):
    a = np.random.default_rng(seed).standard_normal(shape)
    if nan:
        a.reshape(-1)[np.random.default_rng(seed + 100).permutation(a.size)[:4]] = np.nan
    return _t(a, rg)


def _ints(seed, lo, hi, shape):
    return _t(np.random.default_rng(seed + 7).integers(lo, hi, shape))


def _mask(seed, shape, count):
    """A bool mask with ``count`` True, placed by ``seed``."""
    m = np.zeros(int(np.prod(shape)), bool)
    m[np.random.default_rng(seed + 3).permutation(m.size)[:count]] = True
    return _t(m.reshape(shape))


def _check_counts(fn, make, generic=True, n=6):
    """Each call with another data-dependent shape (a mask's count): every result and gradient equals eager's.
    ``generic``: the first replay's miss is captured and the two programs become one generic in that shape, the
    next new shape is captured to verify it, and every later call replays (``dynamic.generalize(dd=True)``);
    else each miss runs eagerly (``Entry.shape_misses``). With ``dynamic=False`` every miss runs eagerly."""
    cf = tapegrad.compile(fn)
    for seed in range(n):
        args = make(seed)
        _same(_result(cf, _fresh(args)), _result(fn, _fresh(args)))
    assert len(cf.entries) == 1
    entry = cf.entries[0]
    assert not entry.eager
    if generic:       # (at most one capture per new shape, and none once verified)
        assert cf.captures <= 3 and entry.prog.dd_known is not None and entry.dd_failed is None
        assert entry.shape_misses <= 1 and all(k.all for k in entry.prog.dd_known.values()) == (cf.captures == 3)
    else:
        assert cf.captures == 2 and entry.dd_failed is not None and entry.calls == n - 1
    static = tapegrad.compile(fn, dynamic=False)
    for seed in range(3):
        args = make(seed)
        _same(_result(static, _fresh(args)), _result(fn, _fresh(args)))
    assert static.captures == 1 and static.entries[0].shape_misses == 2
    return entry


# --- x[key] ----------------------------------------------------------------------------------------------------
def test_index_tensor():
    _check(lambda x, i: x[i] * 2, lambda s: (_x(s), _ints(s, -5, 5, (4,))),
           bad=lambda: (_x(0), _t([0, 5, 1, 2])))


def test_index_tensor_negative_out_of_bounds():
    _check(lambda x, i: x[i], lambda s: (_x(s), _ints(s, -5, 5, (2, 2))), bad=lambda: (_x(0), _t([[0, 1], [-6, 0]])))


def test_index_two_tensors_broadcast():
    _check(lambda x, i, j: x[i[:, None], j], lambda s: (_x(s), _ints(s, 0, 5, (3,)), _ints(s + 1, 0, 3, (2,))),
           bad=lambda: (_x(0), _t([0, 1, 2]), _t([0, 3])))


def test_index_two_tensors():
    _check(lambda x, i, j: x[i, j].exp(), lambda s: (_x(s), _ints(s, 0, 5, (4,)), _ints(s + 1, 0, 3, (4,))),
           bad=lambda: (_x(0), _t([0, 1, 2, 3]), _t([0, 1, 2, 3])))


def test_index_slice_then_tensor():
    _check(lambda x, i: x[:, i] + x[1:, i].sum(), lambda s: (_x(s), _ints(s, 0, 3, (2,))),
           bad=lambda: (_x(0), _t([0, 4])))


def test_index_with_none_ellipsis_int():
    _check(lambda x, i: x[None, ..., i][0, 1:], lambda s: (_x(s, (4, 5, 3)), _ints(s, 0, 3, (2,))),
           bad=lambda: (_x(0, (4, 5, 3)), _t([0, 3])))


def test_index_computed_in_region():
    _check(lambda x: x[x.argmax(0)] * x[x.argmin(1), [0]].sum(), lambda s: (_x(s),))


def test_index_python_list_is_a_constant():
    _check(lambda x: x[[0, 2]] + x[[1, 4], [2, 2]].sum() + x[1:, [0, 2]].sum() + x[range(1, 3)].sum(),
           lambda s: (_x(s),))


def test_index_without_grad():
    _check(lambda x, i: x[i] * 2, lambda s: (_x(s, rg=False), _ints(s, 0, 5, (3,))),
           bad=lambda: (_x(0, rg=False), _t([9, 0, 0])))


def test_index_int32_and_byte_indices():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _check(lambda x, i: x[i.to(tapegrad.int32)], lambda s: (_x(s), _ints(s, 0, 5, (3,))))
        _check(lambda x, m: x[m.to(tapegrad.uint8)], lambda s: (_x(s), _mask(s, (5, 3), 6)))


def test_zero_dim_tensor_index_replays():
    """``x[t]`` with a 0-d integer tensor is a select at t's value (a view, as in torch): the capture records it
    as ``SelectIndex``, which reads t in the op, so each replay selects with its own t (never a baked constant;
    more forms in test_compile_breaks.py)."""
    _check(lambda x, i: x[i] * 2, lambda s: (_x(s), _t(s + 1)), bad=lambda: (_x(0), _t(5)))


# --- masks: a data-dependent shape ------------------------------------------------------------------------------
def test_mask_same_count_replays():
    _check(lambda x, m: x[m] * 3, lambda s: (_x(s), _mask(s, (5, 3), 6)))
    _check(lambda x, m, n: x[m] + x[:, 1:][n].sum(), lambda s: (_x(s), _mask(s, (5, 3), 7), _mask(s, (5, 2), 2)))


def test_mask_row_mask_and_tensor():
    _check(lambda x, m, i: x[m][:, i], lambda s: (_x(s), _mask(s, (5,), 3), _ints(s, 0, 3, (2,))),
           bad=lambda: (_x(0), _mask(0, (5,), 3), _t([3, 0])))


def test_mask_count_changes():
    """x[x > 0]: another count of positives each call: the static program's shapes would be stale; the program
    becomes generic in the count (captured at two counts, verified at a third), and every result and gradient is
    eager's."""
    entry = _check_counts(lambda x: x[x > 0].sum() * 2 + x[x > 0].exp().mean(), lambda s: (_x(s * 17),))
    assert "raise _DS" in entry.sources[0]
    _check_counts(lambda x: x[x > 0] * 2, lambda s: (_x(s * 17, rg=False),))     # (the forward-only program)

    def g(x, m):          # the count in later shapes and a constant (numel, view)
        y = x[m]
        return (y.view(-1, 1) * y.view(1, -1)).sum(0) + y.numel()
    _check_counts(g, lambda s: (_x(s), _mask(s, (5, 3), 2 + s)))


def test_mask_count_in_python_control_flow_stays_static():
    """A branch on the count in user code: the program cannot be generic in it (the relation is on an
    intermediate's size), so a miss runs eagerly."""
    def f(x):
        y = x[x > 0]
        return y * 2 if y.shape[0] > 100 else y * 3
    _check_counts(f, lambda s: (_x(s * 17),), generic=False)


def test_mask_after_an_input_written_in_forward_breaks():
    """A data-dependent shape after an op that changed an input's array in its forward (BatchNorm's running
    statistics): a replay meeting another count could not rerun the call eagerly without updating them twice,
    so the capture breaks instead."""
    bn = tapegrad.nn.BatchNorm1d(3).double()
    e = explain(lambda x: bn(x)[x > 0].sum(), _x(0))
    assert e.graph_break_count >= 1 and "depends on data" in e.break_reasons[0]


def test_masked_select_count_changes():
    _check_counts(lambda x: tapegrad.masked_select(x, x > 0).pow(2).mean() + x.masked_select(x < 0).sum(),
                  lambda s: (_x(s * 17),))
    _check(lambda x, m: x.masked_select(m).pow(2), lambda s: (_x(s), _mask(s, (5, 3), 4)))


def test_masked_fill_tensor_mask():
    _check(lambda x, m: x.masked_fill(m, 0.5) * x.masked_fill(x > 0, tapegrad.tensor(2.0)),
           lambda s: (_x(s), _mask(s, (5, 3), 6)))


# --- x[key] = value ----------------------------------------------------------------------------------------------
def _set_index(x, i, v):
    y = x * 1
    y[i] = v
    return y


def _set_mask(x, m):
    y = x * 2
    y[m] = 0.0
    y[y > 1] = 1.0
    return y


def _set_2d(x, i, j, v):
    y = x + 0
    y[i, j] = v
    y[[0, 1], [2, 2]] = 7.0
    return y


def test_setitem_tensor_index():
    _check(_set_index, lambda s: (_x(s), _ints(s, 0, 5, (2,)), _x(s + 9, (2, 3))),
           bad=lambda: (_x(0), _t([1, 5]), _x(1, (2, 3))))


def test_setitem_number_and_two_indices():
    _check(_set_2d, lambda s: (_x(s), _ints(s, 0, 5, (3,)), _ints(s + 1, 0, 3, (3,)), _x(s + 2, (3,))),
           bad=lambda: (_x(0), _t([0, 1, 2]), _t([0, 1, 3]), _x(2, (3,))))


def test_setitem_mask():
    _check(_set_mask, lambda s: (_x(s * 11), _mask(s, (5, 3), 5)))


def test_setitem_mask_value_count_checked_on_replay():
    """``y[m] = v`` with a value of the mask's count: a replay whose mask has another count raises eager's
    shape-mismatch error."""
    def f(x, m, v):
        y = x * 1
        y[m] = v
        return y
    _check(f, lambda s: (_x(s), _mask(s, (5, 3), 4), _x(s, (4,))), bad=lambda: (_x(0), _mask(0, (5, 3), 5),
                                                                                  _x(0, (4,))))


def test_index_put():
    def f(x, i, v):
        y = x * 1
        y.index_put_((i,), v, accumulate=True)
        return y.index_put((i, i % 3), v[:, 0] * 2)
    _check(f, lambda s: (_x(s), _ints(s, 0, 5, (4,)), _x(s + 1, (4, 3))), bad=lambda: (_x(0), _t([0, 1, 2, 6]),
                                                                                      _x(1, (4, 3))))


# --- the index ops ---------------------------------------------------------------------------------------------
def test_index_select():
    _check(lambda x, i: tapegrad.index_select(x, 0, i) * 2, lambda s: (_x(s), _ints(s, 0, 5, (3,))),
           bad=lambda: (_x(0), _t([0, 5, 1])))
    _check(lambda x, i: x.index_select(1, i), lambda s: (_x(s), _ints(s, 0, 3, (4,))),
           bad=lambda: (_x(0), _t([0, -1, 1, 1])))


def test_index_add():
    _check(lambda x, i, src: x.index_add(0, i, src, alpha=2), lambda s: (_x(s), _ints(s, 0, 5, (3,)), _x(s, (3, 3))),
           bad=lambda: (_x(0), _t([0, 5, 1]), _x(0, (3, 3))))


def test_index_copy():
    _check(lambda x, i, src: x.index_copy(1, i, src), lambda s: (_x(s), _t(np.random.default_rng(s).permutation(3)[:2]),
                                                                 _x(s, (5, 2))),
           bad=lambda: (_x(0), _t([0, 3]), _x(0, (5, 2))))


def test_index_fill():
    _check(lambda x, i: x.clone().index_fill_(0, i, 0.0) * x, lambda s: (_x(s), _ints(s, -5, 5, (3,))),
           bad=lambda: (_x(0), _t([0, -6, 1])))
    _check(lambda x, i, v: x.index_fill(1, i, v), lambda s: (_x(s), _ints(s, 0, 3, (2,)), _x(s, ())),
           bad=lambda: (_x(0), _t([0, 3]), _x(0, ())))


def test_setitem_through_a_view():
    """``y[[0, 1], 0] = v`` selects column 0 first (a view) and writes into it: recorded functionally (the root's
    new value is ``ViewWrite``; see test_compile_breaks.py), and replayed."""
    def f(x, i):
        y = x + 0
        y[i, 0] = 7.0
        return y
    _check(f, lambda s: (_x(s), _ints(s, 0, 5, (2,))), bad=lambda: (_x(0), _t([0, 5])))


def test_take_and_take_along_dim():
    _check(lambda x, i: torch_take(x, i), lambda s: (_x(s), _ints(s, -15, 15, (2, 3))),
           bad=lambda: (_x(0), _t([[0, 1, 15], [0, 0, 0]])))
    _check(lambda x, i: tapegrad.take_along_dim(x, i, 0), lambda s: (_x(s), _ints(s, -5, 5, (2, 3))))
    _check(lambda x, i: x.take_along_dim(i, 1) + x.take_along_dim(i[:2, :1].reshape(-1)).sum(),
           lambda s: (_x(s), _ints(s, 0, 3, (5, 2))))


def torch_take(x, i):
    return tapegrad.take(x, i) * 3


def test_gather_bad_index_after_capture():
    _check(lambda x, i: x.gather(1, i), lambda s: (_x(s), _ints(s, 0, 3, (5, 2))),
           bad=lambda: (_x(0), _t([[0, 1]] * 4 + [[0, 3]])))


def test_embedding_bag():
    _check(lambda w, i: F.embedding_bag(i, w), lambda s: (_x(s, (6, 3)), _ints(s, 0, 6, (2, 4))),
           bad=lambda: (_x(0, (6, 3)), _t([[0, 1, 2, 6], [0, 0, 0, 0]])))
    _check(lambda w, i, o: F.embedding_bag(i, w, o, mode="sum"),
           lambda s: (_x(s, (6, 3)), _ints(s, 0, 6, (7,)), _t([0, 2 + s % 2, 5])),
           bad=lambda: (_x(0, (6, 3)), _ints(0, 0, 6, (7,)), _t([1, 2, 5])))
    _check(lambda w, i, o: F.embedding_bag(i, w, o, mode="max", include_last_offset=True),
           lambda s: (_x(s, (6, 3)), _ints(s, 0, 6, (7,)), _t([0, 3 - s % 2, 7])),
           bad=lambda: (_x(0, (6, 3)), _ints(0, 0, 6, (7,)), _t([0, 3, 8])))


def test_embedding_and_cross_entropy_still_replay():
    _check(lambda w, i, t: F.cross_entropy(F.embedding(i, w), t),
           lambda s: (_x(s, (6, 3)), _ints(s, 0, 6, (4,)), _ints(s, 0, 3, (4,))),
           bad=lambda: (_x(0, (6, 3)), _t([0, 1, 2, 6]), _t([0, 0, 0, 0])))


def test_nanmean_nansum():
    _check(lambda x: x.nanmean() + x.nansum(0).sum() + x.nanmean(1, keepdim=True).sum(),
           lambda s: (_x(s, nan=True),))


def test_diff():
    _check(lambda x: x.diff(n=0) * 2 + tapegrad.diff(x, dim=0, prepend=x[:1]).sum(), lambda s: (_x(s),))


def test_cosine_embedding_loss():
    loss = tapegrad.nn.CosineEmbeddingLoss(margin=0.1)
    _check(lambda a, b, t: loss(a, b, t), lambda s: (_x(s), _x(s + 5), _t(np.where(
        np.random.default_rng(s).random(5) < 0.5, 1, -1))))


@pytest.mark.parametrize("fullgraph", [True])
def test_fullgraph_accepts_the_index_forms(fullgraph):
    def f(x, i, m):
        y = x[i] + tapegrad.index_select(x, 0, i) + x.index_add(0, i, x[i])[i]
        z = x * 1
        z[i] = 0.0
        return y.sum() + x[m].sum() + z.sum() + x.nanmean()
    cf = tapegrad.compile(f, fullgraph=fullgraph)
    x, i, m = _x(0), _t([0, 2, 4]), _mask(0, (5, 3), 4)
    np.testing.assert_array_equal(cf(x, i, m).detach().numpy(), f(x, i, m).detach().numpy())
    x, i, m = _x(1), _t([1, 1, 3]), _mask(1, (5, 3), 4)
    np.testing.assert_array_equal(cf(x, i, m).detach().numpy(), f(x, i, m).detach().numpy())
    assert cf.entries[0].calls == 1 and not cf.entries[0].eager


def test_nonzero_unique_guarded():
    """nonzero, argwhere and unique give data-dependent shapes too: the replay checks them (another count runs
    eagerly); indexing with nonzero's tuple replays."""
    def f(x):
        return x[x.nonzero(as_tuple=True)].sum() * 2 + tapegrad.unique(x.round()).sum()
    entry = _check_counts(f, lambda s: (_t(np.round(np.random.default_rng(s).standard_normal(8))),))
    assert entry.sources[0].count("raise _DS") >= 2
    # (argwhere's op is given a function made per call: a constant that differs between the captures, so the
    #  program stays static and another count runs eagerly)
    _check_counts(lambda x: x.argwhere().sum() + x.sum(),
                  lambda s: (_t(np.round(np.random.default_rng(s).standard_normal(8))),), generic=False)
    e = _check(lambda x: x[x.nonzero(as_tuple=True)] * 3,
               lambda s: (_t(np.random.default_rng(s).permutation([0.0] * 3 + [1.5, 2.0, -1.0, 4.0, 2.5])),))
    assert e.shape_misses == 0
