"""Forms that used to break tapegrad.compile's graph and are now replayed: for each, ``explain`` finds no break,
a capture and two replays with *new* values equal eager mode bitwise (values and gradients), a bad input given
after the capture raises eager's exact error from the replay, and ``fullgraph=True`` does not raise. The forms:
gather/scatter/index_reduce with an int32 or empty index, repeat_interleave with a tensor of counts, ``x[t]``
with a 0-d integer tensor ``t`` (and ``x[t] = v``), writes through a view of a tensor made in the region, and
functions that record no op (a factory's result, an input returned)."""

from __future__ import annotations


import numpy as np
import pytest

import tapegrad
from tapegrad.compiler import explain
from _replay_check import fresh as _fresh, result as _result, same as _same, t as _t
from _replay_check import check as _check_one


def _check(fn, make, bad=None, misses=0):
    return _check_one(fn, make, bad, misses, fullgraphs=(False, True))


def _x(seed, shape=(5, 3), rg=True):
    return _t(np.random.default_rng(seed).standard_normal(shape), rg)


def _ints(seed, lo, hi, shape, dtype=tapegrad.int64):
    return _t(np.random.default_rng(seed + 7).integers(lo, hi, shape)).to(dtype)


# --- index dtypes: int32 and empty indices ----------------------------------------------------------------------
def test_gather_scatter_int32_index():
    i32 = tapegrad.int32
    _check(lambda x, i: x.gather(0, i) * 2, lambda s: (_x(s), _ints(s, 0, 5, (2, 3), i32)),
           bad=lambda: (_x(0), _t([[0, 5, 1], [0, 0, 0]]).int()))
    _check(lambda x, i, v: x.scatter(1, i, v) + x.scatter(0, i, 0.5).sum(),
           lambda s: (_x(s), _ints(s, 0, 3, (2, 2), i32), _x(s + 1, (2, 2))),
           bad=lambda: (_x(0), _t([[0, 3], [0, 0]]).int(), _x(1, (2, 2))))
    _check(lambda x, i, v: x.scatter_add(1, i, v) * x.scatter_reduce(1, i, v, "amax"),
           lambda s: (_x(s), _ints(s, 0, 3, (5, 2), i32), _x(s + 1, (5, 2))),
           bad=lambda: (_x(0), _t([[0, -1]] * 5).int(), _x(1, (5, 2))))


def test_gather_scatter_empty_index():
    _check(lambda x, i: x.gather(0, i), lambda s: (_x(s), _t(np.zeros((0, 3), np.int64))))
    _check(lambda x, i: x.scatter(0, i, 2.0) * x, lambda s: (_x(s), _t(np.zeros((0,), np.int64))))
    _check(lambda x, i, v: x.scatter_add(0, i, v) * 2, lambda s: (_x(s), _t(np.zeros((0, 3), np.int32)),
                                                                  _x(s, (2, 3), rg=False)))


@pytest.mark.parametrize("reduce", ["prod", "mean", "amax", "amin"])
def test_index_reduce(reduce):
    _check(lambda x, i, v: x.index_reduce(0, i, v, reduce) * 2,
           lambda s: (_x(s), _ints(s, 0, 5, (4,)), _x(s + 1, (4, 3))),
           bad=lambda: (_x(0), _t([0, 5, 1, 1]), _x(1, (4, 3))))
    _check(lambda x, i, v: x.index_reduce(1, i, v, reduce, include_self=False),
           lambda s: (_x(s), _ints(s, 0, 3, (2,), tapegrad.int32), _x(s + 1, (5, 2))),
           bad=lambda: (_x(0), _t([-1, 0]).int(), _x(1, (5, 2))))


def test_repeat_interleave_tensor_repeats():
    def counts(s, total=6):
        c = np.zeros(5, np.int64)
        np.add.at(c, np.random.default_rng(s).integers(0, 5, total), 1)
        return _t(c)
    _check(lambda x, r: x.repeat_interleave(r, dim=0) * 2, lambda s: (_x(s), counts(s)),
           bad=lambda: (_x(0), _t([1, 2, -1, 0, 1])))
    _check(lambda x, r: tapegrad.repeat_interleave(x, r).exp(), lambda s: (_x(s, (5,)), counts(s)),
           bad=lambda: (_x(0, (5,)), _t([1, 2, 3, -3, 0])))
    _check(lambda x, r: x[tapegrad.repeat_interleave(r)], lambda s: (_x(s), counts(s)))
    _check(lambda x: x.repeat_interleave([1, 0, 2], dim=1), lambda s: (_x(s),))
    # another total each call: a data-dependent shape, the program made generic in it (test_compile_indexing)
    fn = tapegrad.compile(lambda x, r: x.repeat_interleave(r, dim=0) * 2)
    for s in range(6):
        args = (_x(s), counts(s, 6 + s))
        _same(_result(fn, _fresh(args)), _result(fn._fn, _fresh(args)))
    assert fn.captures == 3 and len(fn.entries) == 1 and fn.entries[0].calls == 4


# --- writes through views of tensors made in the region (functionalized: ViewWrite + views made again) ----------
def _add_col(x):
    y = x * 2
    y[:, 0] += 1
    return y


def _zero_strided(x):
    y = x * 2
    y.view(-1)[::2].zero_()
    return y.sin()


def _fill_diagonal(x):
    y = x[:3] * 2
    y.diagonal().fill_(0)
    return y


def _mul_transposed(x):
    y = x * 2
    y.t().mul_(x[0][:, None])
    return y * x


def _view_read_after_root_write(x):
    y = x * 2
    v = y[1]           # a view of y, written through y below: it reads y's new values
    w = y[:, 1:]
    y.add_(x)
    w.mul_(3)
    return v * 2, y, w.exp()


def _setitem_chain(x, v):
    y = x.exp()
    y = y + 0          # (exp saves its result: write into a copy)
    y[1:3, 0] = v[0]
    y[0] = v
    y[:, 2].copy_(x[:, 0])
    return y.sum(0)


@pytest.mark.parametrize("fn", [_add_col, _zero_strided, _fill_diagonal, _mul_transposed, _view_read_after_root_write],
                         ids=lambda f: f.__name__)
@pytest.mark.parametrize("rg", [True, False])
def test_write_through_a_view(fn, rg):
    _check(fn, lambda s: (_x(s, (5, 3), rg=rg),))


def test_setitem_through_views():
    _check(_setitem_chain, lambda s: (_x(s), _x(s + 1, (3,))))
    _check(_setitem_chain, lambda s: (_x(s, rg=False), _x(s + 1, (3,))))


def test_write_into_a_factory_tensor():
    """``out = zeros(...); out[:, 0] = x``: the program keeps the zeros as made (the capture's eager write changes
    the captured tensor itself), and each replay writes into a copy."""
    def f(x, i):
        z = tapegrad.zeros(5, 4, dtype=x.dtype)
        z[:, 0] = x[:, 1]
        z[1] += x[0].sum()
        z[:, 2:][i] = x[i, :2]
        o = tapegrad.ones(3, dtype=x.dtype)
        o.mul_(x[2])
        return z * 2, o
    _check(f, lambda s: (_x(s), _ints(s, 0, 5, (2,))), bad=lambda: (_x(0), _t([0, 7])))


def _write_exp_view(x):
    y = x.exp()
    y[:, 0] += 1
    return y


def _write_exp(x):
    y = x.exp()
    y.add_(1)
    return y


def _write_mul_input(x):
    y = x + 1
    z = y * x             # (mul saves y)
    y.mul_(2)
    return z


@pytest.mark.parametrize("fn", [_write_exp_view, _write_exp, _write_mul_input], ids=lambda f: f.__name__)
def test_write_into_a_saved_tensor_breaks(fn):
    """An op saved a tensor for backward (exp its result, mul its inputs): writing into it (or through a view of
    it) makes eager's backward raise, so the capture breaks (the replay would compute a gradient from the old
    values) and each call runs eagerly, raising eager's error."""
    e = explain(fn, _x(0))
    assert e.graph_break_count >= 1 and "saved for backward" in e.break_reasons[0]
    cf = tapegrad.compile(fn)
    for _ in range(3):
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            cf(_x(0)).sum().backward()


def test_write_through_a_view_of_an_input_breaks():
    """A view of an argument written: the caller's tensor changes, which the replay (a new value) would not do."""
    def f(x):
        x[:, 0] += 1
        return x * 2
    e = explain(f, _x(0, rg=False))
    assert e.graph_break_count >= 1 and "view of an input" in e.break_reasons[0]


# --- x[t], t a 0-d integer tensor: a select at t's value, read in the op (SelectIndex) ---------------------------
def test_zero_dim_tensor_index():
    _check(lambda x, t: x[t] * 2, lambda s: (_x(s), _ints(s, -5, 5, ())), bad=lambda: (_x(0), _t(5)))
    _check(lambda x, t: x[:, t].exp() + x[1:, t].sum(), lambda s: (_x(s), _ints(s, -3, 3, (), tapegrad.int32)),
           bad=lambda: (_x(0), _t(-4).int()))
    _check(lambda x, t, u: x[t, u] * x[..., u][t], lambda s: (_x(s), _ints(s, 0, 5, ()), _ints(s + 1, 0, 3, ())),
           bad=lambda: (_x(0), _t(1), _t(3)))
    _check(lambda x, t: x[t] * 2, lambda s: (_x(s, rg=False), _ints(s, 0, 5, ())))


def test_zero_dim_tensor_setitem():
    def f(x, t, v):
        y = x * 1
        y[t] = v
        y[:, t] = 0.5
        return y
    _check(f, lambda s: (_x(s), _ints(s, 0, 3, ()), _x(s + 1, (3,))), bad=lambda: (_x(0), _t(-6), _x(1, (3,))))
    _check(f, lambda s: (_x(s, rg=False), _ints(s, 0, 3, ()), _x(s + 1, (3,), rg=False)))


def test_zero_dim_tensor_index_view_written_breaks():
    """``x[t]`` is a view (as in torch): a write through it would need t's value in the view's function, which
    the capture keeps as a constant, so it breaks there (and the call runs eagerly, correct)."""
    def f(x, t):
        y = x * 2
        y[t].mul_(3)
        return y
    e = explain(f, _x(0), _t(1))
    assert e.graph_break_count >= 1 and "x[t]" in e.break_reasons[0]
    cf = tapegrad.compile(f)
    for k in (1, 3):
        x = _x(k)
        _same(_result(cf, [x.detach().clone().requires_grad_(), _t(k)]), _result(f, [x, _t(k)]))


# --- calls that record no op, and factories' tensors returned ---------------------------------------------------
def test_no_op_calls_replay():
    """A call that records no op replays when it returns a tensor: an input as it is (the same object, as eager
    returns it), a factory's tensor copied per call (each eager call made its own)."""
    from tapegrad import arange, zeros            # (references taken before any capture wraps the names)
    from tapegrad.signal.windows import hann
    for fn in (lambda x: x.contiguous(), lambda x: tapegrad.ones(3, dtype=x.dtype), lambda x: x.new_zeros(2, 3),
               lambda x: (zeros(2), arange(4), hann(5), x), lambda x: x * arange(3.0, dtype=x.dtype)):
        entry = _check(fn, lambda s: (_x(s, (3,)),))
        cf = tapegrad.compile(fn)
        x = _x(0, (3,))
        a, b = cf(x), cf(x)
        for u, w in zip(*((a, b) if isinstance(a, tuple) else ((a,), (b,)))):
            assert (u is w) == (u is x)          # (only the input itself comes back twice)
        assert not entry.eager


def test_no_op_and_no_tensor_breaks():
    """No op recorded and no tensor returned (an optimizer's step writes arrays directly): nothing to replay."""
    p = tapegrad.nn.Parameter(tapegrad.ones(3))
    p.grad = tapegrad.ones(3)
    step = tapegrad.compile(tapegrad.optim.SGD([p], lr=0.5).step)
    for _ in range(3):
        step()
    np.testing.assert_array_equal(p.detach().numpy(), np.full(3, -0.5, np.float32))
    assert all(e.eager for e in step.entries)


def test_factory_given_a_computed_tensor_breaks():
    e = explain(lambda x: tapegrad.full((3,), x.sum()), _x(0, (3,)))
    assert e.graph_break_count >= 1


def test_view_writes_at_other_sizes():
    """A view's function is a constant of the program that differs between captures: a program with a write
    through a view stays static per size (automatic dynamic does not generalise it); every call equals eager."""
    cf = tapegrad.compile(_add_col)
    for n in (3, 4, 5, 4, 6):
        x = _x(n, (n, 3))
        _same(_result(cf, _fresh([x])), _result(_add_col, _fresh([x])))
    assert all(not e.eager for e in cf.entries)


def test_view_write_in_a_training_step():
    """A module whose forward writes into a slice of an intermediate: the compiled steps' losses and parameters
    equal eager's bit for bit."""
    class Net(tapegrad.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = tapegrad.nn.Linear(4, 6).double()

        def forward(self, x):
            h = self.lin(x).tanh() * 1
            h[:, :2] *= 0.5
            h.narrow(1, 4, 2).add_(x[:, :2])
            return h.pow(2).mean()

    def run(compiled):
        tapegrad.manual_seed(0)
        net = Net()
        step = tapegrad.compile(net) if compiled else net
        opt = tapegrad.optim.SGD(net.parameters(), lr=0.1)
        losses = []
        for s in range(4):
            opt.zero_grad()
            loss = step(_x(s, (8, 4), rg=False))
            loss.backward()
            opt.step()
            losses.append(loss.item())
        return losses, [p.detach().numpy().copy() for p in net.parameters()], step
    (l1, p1, step), (l2, p2, _) = run(True), run(False)
    assert l1 == l2
    for a, b in zip(p1, p2):
        np.testing.assert_array_equal(a, b)
    entries = step._compiled.entries
    assert len(entries) == 1 and not entries[0].eager and entries[0].calls == 3


def _write_real_part(x):
    y = x * 1
    y.real.mul_(2)
    return y.abs()


def _write_nested_view(x):
    y = x * 1
    y[1:][:, ::2].add_(1)
    y.view(3, 5)[1].exp_()
    return y


def _write_number_into_slice(x):
    y = x * 1
    y[:, 0] = 0
    y[1] = 2.5
    return y.double() * x


def _write_other_dtype(x):
    y = x.double() * 1
    y.view(-1)[1::2] = x.view(-1)[:-1:2]
    return y


def _nograd_write_view(x):
    y = x * 1
    with tapegrad.no_grad():
        a, *_ = y.unbind(0)
        a.add_(1)
        y[:, 0] = 0
    return y * 2


def _nograd_write(x):
    y = x * 1
    with tapegrad.no_grad():
        y.add_(1)
    return y * 2


def _write_grad_value_into_detached(x):
    y = x.detach() * 1
    y[0] = x[1]
    return y


@pytest.mark.parametrize("fn", [_write_nested_view, _write_number_into_slice, _write_other_dtype, _nograd_write_view,
                                _nograd_write, _write_grad_value_into_detached], ids=lambda f: f.__name__)
def test_write_through_a_view_forms(fn):
    """More writes: nested views, numbers, another dtype, and writes under no_grad into a tensor that requires
    grad (the data changes, the graph does not: DetachedWrite passes the root's gradient to its old history)."""
    _check(fn, lambda s: (_x(s, (3, 5)),))


def test_write_through_a_complex_view():
    _check(_write_real_part, lambda s: (_x(s, (3, 2)).detach().to(tapegrad.complex128).requires_grad_(),))
