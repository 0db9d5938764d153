"""Every index form torch takes, against torch, on a (2, 3, 4) tensor: reading (values, dtypes, shapes, torch's
errors), the gradient through the read, writing (``x[key] = number``, a broadcast tensor, a tensor that
requires grad: values, version bumps, both gradients).

Keys: ints, slices, None, ``...``, ranges, lists and nested lists, tuples of lists, NumPy arrays (every int
dtype, bool, float), bool lists, tensors of every integer dtype (uint8 as a mask, as torch), 0-d tensors and
NumPy scalars, mixes of all of those, negative indices, empty lists, out-of-range and wrong-type keys."""

import warnings

import numpy as np
import pytest

import tapegrad

KEYS = [
    # basic
    "0", "-1", "1", "(1, 2)", "(1, -1, 3)", "slice(None)", "slice(1, None)", "(slice(None), 1)", "(Ellipsis, 2)",
    "(None, 0)", "(0, None, slice(None), None)", "Ellipsis", "(Ellipsis,)", "None", "(1, Ellipsis, 1)",
    "(slice(None, None, 2), slice(1, 3))", "(0, slice(0, 0))", "np.int64(1)", "np.int8(1)", "np.uint8(1)",
    "(np.int32(0), np.int16(2))", "np.array(1)", "True", "False", "(True, 0)", "torch.tensor(1)",
    "torch.tensor(-1)", "torch.tensor(1, dtype=torch.int8)", "torch.tensor(1, dtype=torch.int32)",
    "(torch.tensor(0), torch.tensor(2))", "torch.tensor(True)", "torch.tensor(False)",
    # ranges
    "range(2)", "range(1, 3)", "range(0)", "(slice(None), range(3))", "(0, range(2))", "(range(2), range(2))",
    "(range(2), 0, range(-1, -3, -1))", "(Ellipsis, range(1, 4, 2))", "[range(2)]", "(range(2),)",
    # lists
    "[0]", "[1, 0]", "[-1, -2]", "[1, 1, 1]", "[[0, 1], [1, 0]]", "[[[1]]]", "[]", "[[]]", "([], [])",
    "([0, 1], [2, 0])", "([0, 1], [[0], [2]])", "([0, 1], slice(None), [3, 0])", "(slice(None), [0, 2])",
    "(slice(None), slice(None), [-1, 0])", "(0, [0, 2], [1, 3])", "([1], Ellipsis, [1])", "([0, 1], None)",
    "(None, [0, 1])", "(slice(None), None, [2, 1])", "([0, 1], None, [0, 1])", "(slice(1, None), [0, 2])",
    "([0, 1], 1)", "(1, slice(None), [0, 0, 3])", "[0.5]", "[0, 1.0]", "[1, True]", "[[0, 1], range(2)]",
    "[[0, 1], [1, 2]]", "[torch.tensor(0), 1]", "[np.int64(0), np.int64(1)]",
    # bool lists and masks
    "[True, False]", "[[True, False, True]]", "(slice(None), [True, False, True])", "[True]",
    "(0, [True, False, True], slice(None))", "(slice(None), slice(None), [True, False, True, True])",
    "([0, 1], [True, False, True])", "[False, False]",
    # NumPy arrays
    "np.array([0, 1])", "np.array([1, 0], dtype=np.int8)", "np.array([1, 0], dtype=np.int16)",
    "np.array([1, 0], dtype=np.int32)", "np.array([1, 0], dtype=np.uint16)", "np.array([1, 0], dtype=np.uint64)",
    "np.array([1, 0, 1], dtype=np.uint8)", "np.array([True, False])", "np.array([[True, False, True], "
    "[False, False, True]])", "np.array([0.0, 1.0])", "np.array([], dtype=np.int64)", "(slice(None), np.array([2]))",
    "(np.array([[0], [1]]), np.array([0, 2]))",
    # tensors
    "torch.tensor([0, 1])", "torch.tensor([1, 0], dtype=torch.int32)", "torch.tensor([1, 0], dtype=torch.int8)",
    "torch.tensor([1, 0], dtype=torch.int16)", "torch.tensor([1, 0], dtype=torch.uint8)",
    "torch.tensor([1, 0, 1], dtype=torch.uint8)", "(slice(None), torch.tensor([1, 0, 1], dtype=torch.uint8))",
    "torch.tensor([True, False])", "(0, torch.tensor([True, False, True]))",
    "torch.tensor([[True, False, True], [True, True, False]])", "torch.tensor([[[True] * 4] * 3] * 2)",
    "torch.tensor([], dtype=torch.long)", "torch.tensor([], dtype=torch.uint8)", "torch.tensor([[0]])",
    "(torch.tensor([[0], [1]]), slice(None), torch.tensor([0, 3]))", "torch.tensor([0.0, 1.0])",
    "torch.tensor([1, 0]).numpy()", "(torch.tensor([0, 1]), [1, 2])", "torch.tensor([-2, -1])",
    # out of range and wrong types
    "2", "-3", "(0, 3)", "(0, 0, 4)", "(0, 0, 0, 0)", "[2]", "[-3]", "(slice(None), [3])", "([0, 1], [0, 5])",
    "torch.tensor([2])", "np.array([5])", "(0, 0, [4])", "1.5", "'a'", "[True, False, True]",
    "torch.tensor([True, False, True])", "([0, 1], [0, 1, 2])", "(Ellipsis, Ellipsis)", "[[0, 1], [1]]",
    "object()", "{0: 1}", "torch.tensor(1.5)",
]


def _env(m):
    return {"torch": m, "np": np}


def _key(m, text):
    return eval(text, _env(m))


def _do(f):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return f()
        except Exception as e:  # noqa: BLE001 - compared with torch's
            return e


def _check(ours, theirs, what):
    if isinstance(theirs, Exception):
        assert isinstance(ours, Exception), f"{what}: torch raises {type(theirs).__name__}: {theirs}; tapegrad " \
                                            f"gives a result"
        assert type(ours).__name__ == type(theirs).__name__, f"{what}: torch {type(theirs).__name__}: {theirs}, " \
                                                            f"tapegrad {type(ours).__name__}: {ours}"
        assert str(ours).replace("tapegrad.", "torch.") == str(theirs), f"{what}: {ours} != torch's {theirs}"
        return False
    assert not isinstance(ours, Exception), f"{what}: torch gives a result; tapegrad {type(ours).__name__}: {ours}"
    for a, b in zip(ours if isinstance(ours, tuple) else (ours,), theirs if isinstance(theirs, tuple) else (theirs,)):
        if isinstance(b, (int, float, bool)) or b is None:
            assert a == b, f"{what}: {a} != torch's {b}"
            continue
        assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1], f"{what}: dtype {a.dtype} vs {b.dtype}"
        assert tuple(a.shape) == tuple(b.shape), f"{what}: shape {tuple(a.shape)} vs torch {tuple(b.shape)}"
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy(), err_msg=what)
    return True


def _base(m, grad=False):
    x = m.arange(24.0, dtype=m.float64).reshape(2, 3, 4)
    return x.requires_grad_() if grad else x


@pytest.mark.parametrize("key", KEYS)
def test_getitem_and_its_gradient(torch, key):
    results = {}
    for m in (tapegrad, torch):
        def read(m=m):
            x = _base(m, grad=True)
            y = x[_key(m, key)]
            w = m.arange(1.0, y.numel() + 1, dtype=m.float64).reshape(y.shape)
            (y * w).sum().backward()
            return y, x.grad
        results[m] = _do(read)
    _check(results[tapegrad], results[torch], f"x[{key}] (value, x.grad)")


@pytest.mark.parametrize("key", KEYS)
def test_setitem_forms(torch, key):
    results = {}
    for m in (tapegrad, torch):
        def write(m=m):
            x = m.zeros(2, 3, 4, dtype=m.float64)
            v0 = x._version
            x[_key(m, key)] = 7.0
            return x, x._version - v0
        results[m] = _do(write)
    if not _check(results[tapegrad], results[torch], f"x[{key}] = 7."):
        return
    shape = tuple(_do(lambda: torch.zeros(2, 3, 4)[_key(torch, key)].shape))
    for vshape in {shape, shape[-1:], (1,) + shape}:       # the full shape, a broadcast row, a leading 1
        for m in (tapegrad, torch):
            def write_tensor(m=m):
                base = m.zeros(2, 3, 4, dtype=m.float64, requires_grad=True)
                x = base * 1
                v = m.arange(1.0, int(np.prod(vshape)) + 1, dtype=m.float64).reshape(vshape).requires_grad_()
                x[_key(m, key)] = v
                (x * m.arange(24.0, dtype=m.float64).reshape(2, 3, 4)).sum().backward()
                return x, base.grad, v.grad if v.grad is not None else m.zeros(vshape, dtype=m.float64)
            results[m] = _do(write_tensor)
        _check(results[tapegrad], results[torch], f"x[{key}] = tensor{vshape} (x, both grads)")


@pytest.mark.parametrize("key", ["[0, 0]", "([0, 0], [1, 1])", "torch.tensor([1, 1])", "[[0, 0], [0, 0]]"])
def test_repeated_indices_accumulate_in_the_gradient_and_last_write_wins(torch, key):
    for m in (tapegrad, torch):
        pass
    test_getitem_and_its_gradient(torch, key)
    res = {}
    for m in (tapegrad, torch):
        def put(m=m):
            x = m.zeros(2, 3, 4, dtype=m.float64)
            x.index_put_((_key(m, key),) if not key.startswith("(") else _key(m, key),
                         m.tensor(5.0, dtype=m.float64), accumulate=True)
            return x
        res[m] = _do(put)
    _check(res[tapegrad], res[torch], f"index_put_({key}, accumulate=True)")


def test_setitem_value_errors(torch):
    for value in ("'a'", "[1.0, 2.0]", "None", "torch.ones(5)", "torch.ones(2, 2, 4)"):
        res = {}
        for m in (tapegrad, torch):
            def write(m=m):
                x = m.zeros(2, 3, 4)
                x[0] = eval(value, _env(m))
                return x
            res[m] = _do(write)
        if isinstance(res[torch], Exception):
            assert isinstance(res[tapegrad], Exception) and type(res[tapegrad]).__name__ == \
                type(res[torch]).__name__, (value, res)
        else:
            _check(res[tapegrad], res[torch], f"x[0] = {value}")


@pytest.mark.parametrize("key", KEYS)
def test_setitem_source_of_another_dtype(torch, key):
    """An advanced-index write takes a tensor source only in the destination's dtype (torch's index_put_ check),
    but a one-element source under a single bool mask (masked_fill_) and any basic-index write cast it."""
    shape = _do(lambda: tuple(torch.zeros(2, 3, 4)[_key(torch, key)].shape))
    if isinstance(shape, Exception):
        return
    for dtype, vshape in (("float32", shape), ("float32", (1,)), ("float32", ()), ("int64", shape)):
        res = {}
        for m in (tapegrad, torch):
            def write(m=m):
                x = m.zeros(2, 3, 4, dtype=m.float64)
                x[_key(m, key)] = m.arange(1, int(np.prod(vshape)) + 1).to(getattr(m, dtype)).reshape(vshape)
                return x
            res[m] = _do(write)
        _check(res[tapegrad], res[torch], f"x[{key}] = {dtype} tensor{vshape}")
