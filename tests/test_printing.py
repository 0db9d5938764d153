"""Printing matches PyTorch's repr exactly (with ``tapegrad.`` where torch prints ``torch.``)."""

import numpy as np
import pytest

import tapegrad

CASES = [
    "-3.", "[2., 4., 6.]", "[1, 2]", "[True, False]", "2.5", "[0.1, 0.2, 0.3]", "[1e-5, 1.0]", "[1e10, 1.0]",
    "[123456789.0, 1.0]", "[[1.5, 2.25], [3.0, -4.125]]", "[float('nan'), 1.0, float('inf')]", "[0.0, -0.0]",
    "[[[1., 2.], [3., 4.]], [[5., 6.], [7., 8.]]]", "[1.23456789, 100.5]", "[-1e-7, 3.0]", "[[]]", "[]",
    "[1000.0, 1.0]", "[1001.0, 1.0]", "[12345.678]", "[0.00012, 0.5]",
]


def _both(torch, expr, **kw):
    data = eval(expr)
    return tapegrad.tensor(data, **{k: getattr(tapegrad, v) if k == "dtype" else v for k, v in kw.items()}), \
        torch.tensor(data, **{k: getattr(torch, v) if k == "dtype" else v for k, v in kw.items()})


@pytest.mark.parametrize("expr", CASES)
@pytest.mark.parametrize("kw", [{}, {"dtype": "float64"}, {"dtype": "float16"}, {"dtype": "int32"}])
def test_repr_matches_torch(torch, expr, kw):
    if kw.get("dtype") == "int32" and ("." in expr or "e" in expr or "nan" in expr):
        pytest.skip("float data into an int tensor")
    ours, theirs = _both(torch, expr, **kw)
    assert repr(ours) == repr(theirs).replace("torch.", "tapegrad.")


def test_requires_grad_and_grad_fn_suffixes(torch):
    for mk in (lambda m: m.tensor([1., 2., 3.], requires_grad=True),
               lambda m: m.tensor(2., requires_grad=True) * 2,
               lambda m: m.tensor([1., 2.], dtype=m.float64, requires_grad=True) + 1):
        assert repr(mk(tapegrad)) == repr(mk(torch)).replace("torch.", "tapegrad.")


def test_suffixes_break_lines_where_torch_breaks_them(torch):
    """``dtype=tapegrad.float64`` is three characters longer than torch's name: the suffixes still go on the line
    torch puts them on (a line-by-line reader sees the same lines)."""
    a = np.array([[1.5086, 1.2611, 1.1074], [1.0160, 1.0623, 1.1738]])
    ours = repr(tapegrad.tensor(a, requires_grad=True) * 2 + 1)
    theirs = repr(torch.tensor(a, requires_grad=True) * 2 + 1)
    assert ours == theirs.replace("torch.", "tapegrad.")
    assert ours.count("\n") == 1


@pytest.mark.parametrize("shape", [(2000,), (50, 50), (4, 300), (3, 4, 100), (1001,), (7, 7, 7, 7)])
def test_large_tensors_are_summarised_as_torch(torch, shape):
    a = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    assert repr(tapegrad.tensor(a)) == repr(torch.tensor(a))


def test_wide_rows_wrap_as_torch(torch):
    a = np.arange(40, dtype=np.float32) * 1.5
    assert repr(tapegrad.tensor(a)) == repr(torch.tensor(a))
    b = np.arange(30).reshape(3, 10) * 1000003
    assert repr(tapegrad.tensor(b)) == repr(torch.tensor(b))


def test_empty_shapes_and_dtype_suffix(torch):
    for shape in [(0,), (2, 0), (0, 3, 1)]:
        for dt in ("float32", "float64", "int64"):
            assert repr(tapegrad.zeros(shape, dtype=getattr(tapegrad, dt))) == \
                repr(torch.zeros(shape, dtype=getattr(torch, dt))).replace("torch.", "tapegrad.")


def test_set_printoptions(torch):
    try:
        tapegrad.set_printoptions(precision=2)
        torch.set_printoptions(precision=2)
        assert repr(tapegrad.tensor([1.23456, 2.5])) == repr(torch.tensor([1.23456, 2.5]))
    finally:
        tapegrad.set_printoptions(profile="default")
        torch.set_printoptions(profile="default")


def test_str_and_format():
    t = tapegrad.tensor(2.5)
    assert str(t) == "tensor(2.5000)"
    assert f"{t:.1f}" == "2.5" and f"{t}" == "2.5"
    assert repr(tapegrad.Size([2, 3])) == "tapegrad.Size([2, 3])"


def test_a_float_too_large_for_float16_is_inf_without_a_warning(torch):
    import warnings
    for data in ([1e10, 1.0], np.array([123456789.0, -1e6])):
        with warnings.catch_warnings():
            warnings.simplefilter("error")             # torch gives inf silently; NumPy's cast warned here
            ours = tapegrad.tensor(data, dtype=tapegrad.float16)
        assert repr(ours) == repr(torch.tensor(data, dtype=torch.float16)).replace("torch.", "tapegrad.")
