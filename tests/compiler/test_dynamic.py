"""Dynamic shapes in tapegrad.compile: one captured program for many sizes of the arguments' dims.

Each case runs a model (or function) compiled and eagerly on twin copies, over several batch sizes, and compares
the outputs, the gradients of the parameters and inputs, and the buffers, bitwise (the same NumPy kernels run);
and counts the captures (``Compiled.captures``): ``dynamic=None`` (automatic dynamic) captures the first size,
captures the second and makes the two one generic program, checks it against a capture at a third size, and
replays it for every later size."""

from __future__ import annotations

import copy

import numpy as np
import pytest

import tapegrad
import tapegrad.nn.functional as F
from tapegrad import nn


def _eq(a, b, what):
    a = a.detach().numpy() if isinstance(a, tapegrad.Tensor) else a
    b = b.detach().numpy() if isinstance(b, tapegrad.Tensor) else b
    assert a.shape == b.shape and a.dtype == b.dtype, what
    np.testing.assert_array_equal(a, b, err_msg=what)


def _step(fn, params, inputs):
    """Run fn, backprop a weighted sum of its outputs; return outputs, gradients (params then inputs)."""
    for p in params + inputs:
        p.grad = None
    out = fn(*inputs)
    outs = out if isinstance(out, tuple) else (out,)
    loss = sum((o * (k + 1.5)).sum() for k, o in enumerate(outs) if o.requires_grad)
    loss.backward()
    return [o.detach().clone() for o in outs], [None if p.grad is None else p.grad.clone() for p in params + inputs]


def _compare(make_model, make_inputs, sizes, dynamic=None, expect_captures=None):
    """Twin models, one compiled: equal outputs, gradients and buffers at every size; returns the compiled."""
    tapegrad.manual_seed(0)
    eager = make_model()
    twin = copy.deepcopy(eager)
    compiled = tapegrad.compile(twin, dynamic=dynamic) if isinstance(twin, nn.Module) else \
        tapegrad.compile(twin, dynamic=dynamic)
    cf = compiled._compiled if isinstance(twin, nn.Module) else compiled
    pe = list(eager.parameters()) if isinstance(eager, nn.Module) else []
    pc = list(twin.parameters()) if isinstance(twin, nn.Module) else []
    rng = np.random.default_rng(0)
    for step, b in enumerate(sizes):
        arrays = make_inputs(b, rng)
        xe = [_tensor(a) for a in arrays]
        xc = [_tensor(a) for a in arrays]
        oe, ge = _step(eager, pe, xe)
        oc, gc = _step(compiled, pc, xc)
        what = f"size {b} (call {step})"
        assert len(oe) == len(oc)
        for a, c in zip(oe, oc):
            _eq(c, a, what + ": output")
        for k, (a, c) in enumerate(zip(ge, gc)):
            assert (a is None) == (c is None), what
            if a is not None:
                _eq(c, a, f"{what}: gradient {k}")
        if isinstance(eager, nn.Module):
            for (n, a), (_, c) in zip(eager.named_buffers(), twin.named_buffers()):
                _eq(c, a, f"{what}: buffer {n}")
    if expect_captures is not None:
        assert cf.captures == expect_captures, [e.dynamic_reason for e in cf.entries]
    return cf


def _tensor(a):
    t = tapegrad.tensor(a)
    if t.dtype.is_floating_point:
        t.requires_grad_(True)
    return t


def _x(*rest):
    return lambda b, rng: [rng.standard_normal((b, *rest)).astype(np.float32)]


def _generic(cf):
    return [e for e in cf.entries if e.prog.dyn is not None]


SIZES = (4, 6, 9, 5, 13)


def test_mlp_one_generic_program():
    cf = _compare(lambda: nn.Sequential(nn.Linear(7, 16), nn.Tanh(), nn.Linear(16, 3)), _x(7), SIZES + (4, 6),
                  expect_captures=3)
    g = _generic(cf)
    assert len(g) == 1 and g[0].calls == 3 and g[0].pending is None    # 5, 13 and 6 replayed (4: the first)


class CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.fc = nn.Linear(4 * 4 * 4, 5)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn(self.conv(x))), 2)
        return self.fc(x.view(x.size(0), -1))


def test_cnn_view_size0_and_batchnorm_train():
    cf = _compare(CNN, _x(1, 8, 8), SIZES, expect_captures=3)
    assert len(_generic(cf)) == 1


def test_dynamic_true_replaces_the_first_program():
    cf = _compare(CNN, _x(1, 8, 8), SIZES + (4,), dynamic=True, expect_captures=3)
    assert len(cf.entries) == 1 and cf.entries[0].prog.dyn is not None and cf.entries[0].calls == 3


def test_dynamic_false_is_static():
    cf = _compare(lambda: nn.Linear(3, 2), _x(3), (4, 6, 9), dynamic=False, expect_captures=3)
    assert not _generic(cf)


def test_reductions_broadcast_bias_reshape():
    bias = tapegrad.randn(5)

    def f(x):
        h = (x * 2.0 + bias).reshape(-1)
        return h.mean() + x.sum() * 0.5, x.mean(0), h.reshape(x.shape[0], -1).sum(1)
    _compare(lambda: f, _x(5), SIZES, expect_captures=3)


def test_cross_entropy_and_mse_inside():
    lin = nn.Linear(4, 3)

    def f(x, t):
        out = lin(x)
        return F.cross_entropy(out, t.argmax(1)) + F.mse_loss(out, t)
    cf = _compare(lambda: f, lambda b, rng: [rng.standard_normal((b, 4)).astype(np.float32),
                                              rng.standard_normal((b, 3)).astype(np.float32)], SIZES,
                  expect_captures=3)
    assert len(_generic(cf)) == 1


def test_inference_under_no_grad():
    m = CNN().eval()
    cm = tapegrad.compile(m)
    rng = np.random.default_rng(0)
    with tapegrad.no_grad():
        for b in SIZES:
            x = tapegrad.tensor(rng.standard_normal((b, 1, 8, 8)).astype(np.float32))
            _eq(cm(x), m(x), f"size {b}")
    assert cm._compiled.captures == 3 and len(_generic(cm._compiled)) == 1


def test_sizes_zero_and_one_are_specialised():
    def f(x):
        return (x * 3.0).sum(0)
    cf = _compare(lambda: f, _x(3), (4, 6, 1, 8, 1, 9), expect_captures=4)
    one = [e for e in cf.entries if e.prog.dyn is None and e.prog.meta[0][0][0] == 1]
    assert len(one) == 1 and one[0].calls == 1     # (captured at the first size 1, replayed at the second)


def test_shape_branch_is_guarded():
    def f(x):
        if x.shape[0] > 6:
            return (x * 2.0).sum(1)
        return x.exp().sum(1)
    cf = _compare(lambda: f, _x(3), (3, 4, 5, 6, 2, 8, 9, 12, 10, 5), expect_captures=6)
    g = _generic(cf)
    assert len(g) == 2 and [e.calls for e in g] == [3, 1]       # (2, 6, 5: the small side; 10: the large one)


def test_len_and_int_specialise():
    def f(x):
        n = int(x.size(0))
        return x.sum() / n + len(x)
    cf = _compare(lambda: f, _x(2), (3, 4, 5), expect_captures=3)
    assert all(e.prog.dyn is None or e.calls <= 1 for e in cf.entries)


def test_lstm_zeros_state_made_per_call():
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm = nn.LSTM(3, 5, batch_first=True)
            self.fc = nn.Linear(5, 2)

        def forward(self, x):
            out, _ = self.lstm(x)           # (its zero state is made with the batch size: made per call)
            return self.fc(out[:, -1])
    cf = _compare(M, _x(4, 3), (3, 5, 6, 8, 2), expect_captures=3)
    g = _generic(cf)
    assert len(g) == 1 and g[0].prog.fills and g[0].calls == 2


def test_flatten_module_and_transformer_layer():
    cf = _compare(lambda: nn.Sequential(nn.Conv2d(1, 2, 3), nn.Flatten(), nn.Linear(2 * 6 * 6, 3)), _x(1, 8, 8),
                  SIZES, expect_captures=3)
    assert len(_generic(cf)) == 1
    cf = _compare(lambda: nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True), _x(5, 8), SIZES,
                  expect_captures=3)
    assert len(_generic(cf)) == 1


def test_size_dependent_constant_found_at_the_third_size():
    """ifftshift rolls by n - n // 2: 3 at n = 5 and at n = 6, so the first two captures agree on it; the third
    size shows that it changes, and the program is not trusted."""
    def f(x):
        return tapegrad.fft.ifftshift(x * 2.0)
    cf = _compare(lambda: f, lambda b, rng: [rng.standard_normal(b)], (5, 6, 8, 9, 11, 7))
    assert all(e.prog.dyn is None or e.pending is not None for e in cf.entries)


def test_fullgraph_and_explain_still_work():
    f = tapegrad.compile(lambda x: (x.view(x.size(0), -1) * 2).sum(), fullgraph=True)
    for b in (3, 4, 6):
        x = tapegrad.ones(b, 2, 2)
        assert f(x).item() == b * 8
    assert f.captures == 3 and len(_generic(f)) == 1
    assert f(tapegrad.ones(9, 2, 2)).item() == 72 and f.captures == 3
    ex = tapegrad.compiler.explain(lambda x: x.view(x.size(0), -1).sum(), tapegrad.ones(3, 2))
    assert ex.graph_count == 1 and ex.graph_break_count == 0


def test_guard_relations_keep_batches_equal():
    def f(x, y):
        return ((x - y) ** 2).sum()
    cf = _compare(lambda: f, lambda b, rng: [rng.standard_normal((b, 2)).astype(np.float32),
                                              rng.standard_normal((b, 2)).astype(np.float32)], (3, 4, 6, 8),
                  expect_captures=3)
    x, y = tapegrad.ones(5, 2), tapegrad.ones(7, 2)
    with pytest.raises(RuntimeError):
        cf(x, y)


# --- the op table at other leading sizes ------------------------------------------------------------------------
def _resized(args, n, new):
    """The sample's arrays whose leading dim is n, with new rows (taken cyclically): the same op at batch new."""
    out = []
    for a in args:
        if isinstance(a, np.ndarray) and a.ndim and a.shape[0] == n:
            a = a[np.arange(new) % n]
        elif isinstance(a, (list, tuple)):
            a = type(a)(_resized(a, n, new))
        out.append(a)
    return out


def _lead(args):
    for a in args:
        if isinstance(a, np.ndarray) and a.ndim and a.shape[0] >= 2:
            return a.shape[0]
    return None


from compiler.test_compile_ops import CASES, _run, _same  # noqa: E402
from ops.oracle import outputs, to_tg  # noqa: E402


@pytest.mark.parametrize("spec,sample", [c for c in CASES if _lead(c.values[1].args)])
def test_op_table_at_other_leading_sizes(spec, sample):
    """Each op of the table called compiled at four leading sizes (capture, capture and generalise, check,
    replay): values and gradients equal eager's bitwise at each, whether or not the captures became one
    program."""
    n = _lead(sample.args)
    calls = []
    for new in (n, n + 1, n + 3, 2 * n + 5):
        args = [to_tg(a, np.float64, spec.grad) for a in _resized(sample.args, n, new)]

        def f(*a, **k):
            return spec.fn(tapegrad, *a, **k)
        try:
            rng = np.random.default_rng(1)
            probe = outputs(spec, f(*args, **sample.kwargs))
            weights = [tapegrad.tensor(rng.standard_normal(tuple(r.shape)).astype(
                r.detach().numpy().dtype if r.dtype.is_floating_point else np.float64))
                for r in probe if isinstance(r, tapegrad.Tensor) and r.requires_grad]
            expect = _run(f, spec, args, sample.kwargs, weights)
        except Exception as e:
            if new == n:
                pytest.skip(f"eager raises: {type(e).__name__}")
            break
        calls.append((args, weights, expect))
    cf = tapegrad.compile(lambda *a, **k: spec.fn(tapegrad, *a, **k))
    for call, (args, weights, (eager_vals, eager_grads)) in enumerate(calls):
        vals, grads = _run(cf, spec, args, sample.kwargs, weights)
        for k, (a, b) in enumerate(zip(vals, eager_vals)):
            _same(a, b, f"{spec.name}: output {k}, size call {call}")
        if eager_grads is not None:
            for k, (a, b) in enumerate(zip(grads, eager_grads)):
                assert (a is None) == (b is None), f"{spec.name}: gradient {k} presence, size call {call}"
                if a is not None:
                    _same(a, b, f"{spec.name}: gradient {k}, size call {call}")


# --- sizes read in user code ------------------------------------------------------------------------------------
PATTERNS = {     # name: (function of x (b, 4, 3, 2), whether one generic program serves every size)
    "view_product": (lambda x: x.view(-1, x.shape[1] * x.shape[2]).sum(1), True),
    "reshape_star": (lambda x: x.reshape(x.shape[0], *x.shape[1:]).exp(), True),
    "zeros_of_shape": (lambda x: x + tapegrad.zeros(x.shape), True),
    "expand": (lambda x: x[:, :1].expand(x.size(0), 3, x.size(2), x.size(3)) * 1.5, True),
    "split_half": (lambda x: x.split(x.size(1) // 2, dim=1)[0] * 3, True),
    "slice_half": (lambda x: x[:, :x.size(1) // 2] - 1, True),
    "narrow": (lambda x: x.narrow(2, 0, x.size(2) - 1).sum(), True),
    "divide_by_size": (lambda x: x.sum() / x.size()[0], True),
    "numel": (lambda x: x.mean() * x.numel(), True),
    "symint_arith": (lambda x: x.view(x.size(0) * x.size(1), -1).sum(0), True),
    "unflatten": (lambda x: x.flatten(0, 1).unflatten(0, (x.size(0), x.size(1))), True),
    "std_unbiased": (lambda x: (x - x.mean(0, keepdim=True)) / x.std(0, keepdim=True), True),
    "matmul_t": (lambda x: x.flatten(1) @ x.flatten(1).T, True),
    "cross_entropy": (lambda x: F.cross_entropy(x.flatten(1), tapegrad.zeros(x.size(0), dtype=tapegrad.int64)),
                      True),
    "arange_of_size": (lambda x: x.sum((1, 2, 3)) * tapegrad.arange(x.size(0)), True),
    "arange_float": (lambda x: x.sum((1, 2, 3)) * tapegrad.arange(float(x.size(0))), False),
    "python_loop": (lambda x: sum(x[i].sum() for i in range(x.size(0))), False),
    "float_of_size": (lambda x: x.sum() / float(x.size(0)), False),
    "len_branch": (lambda x: x * 2 if len(x) > 5 else x * 3, False),
    "min_of_size": (lambda x: x[:min(x.size(0), 6)].sum(0), False),
}


@pytest.mark.parametrize("dynamic", [None, True])
@pytest.mark.parametrize("name", list(PATTERNS))
def test_user_size_patterns(name, dynamic):
    """Bitwise eager values and gradients at eight sizes; the patterns marked generic replay one program from the
    third capture on; the others (arange of a size, a loop over it, int/float/len of it, min) stay correct."""
    fn, generic = PATTERNS[name]
    cf = _compare(lambda: fn, _x(4, 3, 2), (4, 5, 7, 9, 6, 12, 3, 8), dynamic=dynamic)
    trusted = [e for e in cf.entries if e.prog.dyn is not None and e.pending is None]
    if generic:
        assert cf.captures == 3 and len(trusted) == 1 and trusted[0].calls == 5
    else:
        assert cf.captures > 3
