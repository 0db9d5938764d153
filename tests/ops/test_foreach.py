"""``torch._foreach_*`` against torch: every name torch has (but the rare ``mm``/``powsum``), each argument form
(number, list of numbers, list of tensors, one tensor), in-place forms returning the list they changed, gradients
and the list-length errors."""

import numpy as np
import pytest

import tapegrad
from tapegrad.ops import foreach

SKIP = {"_foreach_mm", "_foreach_powsum"}


def _lists(T, positive=False):
    rng = np.random.default_rng(0)
    shapes = [(3,), (2, 2), ()]

    def one(k, s):
        a = rng.uniform(0.2, 0.9, s) if positive else rng.uniform(-0.9, 0.9, s)
        return T.tensor(np.asarray(a, dtype=np.float64) + k)
    return [[one(k, s) for s in shapes] for k in (0.0, 0.1, 0.05)], shapes


def _call(T, name):
    (a, b, c), _ = _lists(T, positive=name.rstrip("_").split("_foreach_")[1] in
                          ("log", "log10", "log2", "sqrt", "rsqrt", "lgamma", "acos", "asin", "pow", "reciprocal",
                           "div", "addcdiv"))
    fn = getattr(T, name)
    base = name.rstrip("_")[len("_foreach_"):]
    if base in foreach._UNARY or base in ("zero", "max", "norm", "clone"):
        outs = [fn(a)]
        if base == "norm":
            outs += [fn(a, 1), fn(a, float("inf")), fn(a, 2, dtype=T.float64), fn([t.float() for t in a], 2, dtype=T.float64)]
    elif base in foreach._BINARY:
        forms = [0.5, [0.5, 2.0, -1.0], b, T.tensor(1.5)]
        outs = [fn([t.clone() for t in a], f) for f in forms]
        if base in ("add", "sub"):
            outs.append(fn([t.clone() for t in a], b, alpha=2))
        if base == "pow" and not name.endswith("_"):
            outs.append(fn(2.0, a))
    elif base in ("addcmul", "addcdiv"):
        outs = [fn([t.clone() for t in a], b, c), fn([t.clone() for t in a], b, c, 0.5),
                fn([t.clone() for t in a], b, c, [0.5, 2.0, 3.0]), fn([t.clone() for t in a], b, c,
                                                                        T.tensor([0.5, 2.0, 3.0]))]
    elif base == "lerp":
        outs = [fn([t.clone() for t in a], b, 0.3), fn([t.clone() for t in a], b, c)]
    elif base == "copy":
        outs = [fn(a, b)]
    else:
        raise AssertionError(name)
    return [[np.asarray(t.tolist(), dtype=float) for t in o] for o in outs], [type(o).__name__ for o in outs]


def _names(torch_mod=None):
    import torch
    return sorted(n for n in dir(torch) if n.startswith("_foreach_") and n not in SKIP)


@pytest.mark.parametrize("name", _names())
def test_foreach_matches_torch(torch, name):
    ours, our_types = _call(tapegrad, name)
    theirs, their_types = _call(torch, name)
    assert our_types == their_types
    for o, t in zip(ours, theirs):
        for x, y in zip(o, t):
            np.testing.assert_allclose(x, y, rtol=1e-12, atol=1e-12, equal_nan=True)


def test_every_torch_foreach_name_exists():
    assert [n for n in _names() if not hasattr(tapegrad, n)] == []


def test_in_place_returns_the_given_list_and_out_of_place_a_tuple():
    a = [tapegrad.ones(2), tapegrad.ones(3)]
    r = tapegrad._foreach_lerp_(a, [tapegrad.zeros(2), tapegrad.zeros(3)], 0.25)
    assert r is a and a[0].tolist() == [0.75, 0.75]
    assert isinstance(tapegrad._foreach_mul(a, 2.0), tuple)


def test_gradients_match_torch(torch):
    def run(T):
        xs = [T.tensor([0.5, -1.0, 2.0], requires_grad=True), T.tensor([[1.5, 0.25]], requires_grad=True)]
        ys = [T.tensor([1.0, 2.0, 3.0], requires_grad=True), T.tensor([[0.5, -0.5]], requires_grad=True)]
        out = T._foreach_addcmul(T._foreach_lerp(xs, ys, 0.3), xs, ys, 0.5)
        out = T._foreach_add(T._foreach_exp(out), T._foreach_norm(ys))
        sum(o.sum() for o in out).backward()
        return [t.grad.tolist() for t in xs + ys]
    assert np.allclose(np.concatenate([np.ravel(g) for g in run(tapegrad)]),
                       np.concatenate([np.ravel(g) for g in run(torch)]), rtol=1e-6)


@pytest.mark.parametrize("call", [
    "T._foreach_add([T.ones(2), T.ones(2)], [T.ones(2)])",
    "T._foreach_add([T.ones(2), T.ones(2)], [1.0])",
    "T._foreach_add([], 1)",
    "T._foreach_mul_([T.ones(2, dtype=T.int64)], 2.5)",
    "T._foreach_exp([])",
    "T._foreach_norm([T.ones(2, dtype=T.float64)], 2, dtype=T.float32)",
])
def test_errors_match_torch(torch, call):
    def run(T):
        try:
            eval(call)
        except Exception as e:      # noqa: BLE001 - the class and message are what is compared
            return type(e).__name__, str(e).split("\n")[0]
        return None
    assert run(tapegrad) == run(torch)


@pytest.mark.parametrize("call", [
    lambda L, a, b: L._foreach_mul_(a, scalar=0.5),
    lambda L, a, b: L._foreach_mul_(a, scalars=[0.5, 2.0]),
    lambda L, a, b: L._foreach_add_(a, b, alpha=0.3),
    lambda L, a, b: L._foreach_add_(a, other=b, alpha=0.3),
    lambda L, a, b: L._foreach_div_(a, scalar=4.0),
    lambda L, a, b: L._foreach_pow_(a, exponent=2.0),
    lambda L, a, b: L._foreach_lerp_(a, b, weight=0.25),
    lambda L, a, b: L._foreach_lerp_(a, b, weights=[L.tensor(0.25), L.tensor(0.75)]),
    lambda L, a, b: L._foreach_addcmul_(a, b, b, scalars=[0.5, 2.0]),
    lambda L, a, b: L._foreach_addcdiv_(a, b, b, value=0.5),
])
def test_foreach_overload_keywords(call):
    # torch's overloads name the second operand scalar / scalars / other / exponent / weight(s) (timm's EMA
    # calls _foreach_mul_(params, scalar=1 - w))
    import torch
    out = []
    for L in (torch, tapegrad):
        a = [L.tensor([1.0, 2.0, 3.0]), L.tensor([[0.5, -1.0]])]
        b = [L.tensor([2.0, 1.0, 0.5]), L.tensor([[1.5, 2.0]])]
        call(L, a, b)
        out.append([t.tolist() for t in a])
    assert out[0] == out[1]
