"""torch's unsigned "shell" dtypes (uint16, uint32, uint64) and hash_tensor, against torch.

torch stores, converts, compares and prints these types but computes little with them; tapegrad holds them as
NumPy's unsigned arrays (computing more than torch does, as the README says) and follows torch where torch defines
the behaviour: promotion refused against any other integer type, from_numpy keeping the type, -1 wrapping,
overflow errors, the checkpoint format."""

import numpy as np
import pytest

import tapegrad

U = ("uint16", "uint32", "uint64")
OTHERS = ("bool", "uint8", "int8", "int32", "int64", "float16", "float32", "float64", "complex64", "bfloat16",
          "uint16", "uint32", "uint64")


def _outcome(fn):
    try:
        r = fn()
    except Exception as e:  # noqa: BLE001 - the exception itself is compared
        return type(e).__name__, str(e)
    return r


@pytest.mark.parametrize("u", U)
def test_promotion_matches_torch(torch, u):
    for o in OTHERS:
        theirs = _outcome(lambda: str(torch.promote_types(getattr(torch, u), getattr(torch, o))).split(".")[-1])
        ours = _outcome(lambda: getattr(tapegrad.promote_types(getattr(tapegrad, u), getattr(tapegrad, o)), "name"))
        assert ours == theirs, (u, o)


@pytest.mark.parametrize("u", U)
def test_dtype_attributes_and_iinfo(torch, u):
    ours, theirs = getattr(tapegrad, u), getattr(torch, u)
    assert (ours.is_signed, ours.is_floating_point, ours.itemsize) == \
        (theirs.is_signed, theirs.is_floating_point, theirs.itemsize)
    oi, ti = tapegrad.iinfo(ours), torch.iinfo(theirs)
    assert (oi.min, oi.max, oi.bits) == (ti.min, ti.max, ti.bits)


def test_from_numpy_and_tensor_keep_the_type(torch):
    for npt in (np.uint16, np.uint32, np.uint64):
        arr = np.array([0, 1, np.iinfo(npt).max], npt)
        ours, theirs = tapegrad.from_numpy(arr), torch.from_numpy(arr.copy())
        assert ours.dtype.name == str(theirs.dtype).split(".")[-1]
        assert ours.tolist() == theirs.tolist()
        assert np.shares_memory(ours.numpy(), arr)
        assert tapegrad.tensor(arr).dtype is ours.dtype
    with pytest.raises(TypeError) as e:
        tapegrad.from_numpy(np.array(["a"]))
    with pytest.raises(TypeError) as t:
        torch.from_numpy(np.array(["a"]))
    assert str(e.value) == str(t.value)


@pytest.mark.parametrize("u", U)
@pytest.mark.parametrize("data", [[1, 2 ** 64 - 1], [[2 ** 63, 5]], [-1], [0], [2 ** 64], [2 ** 32], [-2 ** 63],
                                  [1.5], [-1.5], [True, 3], 2.5, 7, [[1, 2], [3, 4]]])
def test_python_data_into_unsigned_types(torch, u, data):
    ours = _outcome(lambda: tapegrad.tensor(data, dtype=getattr(tapegrad, u)).tolist())
    theirs = _outcome(lambda: torch.tensor(data, dtype=getattr(torch, u)).tolist())
    assert ours == theirs


@pytest.mark.parametrize("u", U)
@pytest.mark.parametrize("value", [-1, 7, 70000, 2 ** 40])
def test_full_checks_the_value(torch, u, value):
    ours = _outcome(lambda: tapegrad.full((2,), value, dtype=getattr(tapegrad, u)).tolist())
    theirs = _outcome(lambda: torch.full((2,), value, dtype=getattr(torch, u)).tolist())
    assert ours == theirs


def test_what_torch_computes_with_them(torch):
    arr = np.array([1, 2, 60000], np.uint16)
    a, ta = tapegrad.from_numpy(arr.copy()), torch.from_numpy(arr.copy())
    for name, fn in {"float": lambda t: t.float(), "sum": lambda t: t.sum(), "mul": lambda t: t * 2,
                     "eq": lambda t: t == 2, "cat": lambda t: t.__class__.__module__ and t[1:].clone(),
                     "and": lambda t: t & t, "xor": lambda t: t ^ t, "div": lambda t: t / 2,
                     "sort": lambda t: t.sort().values, "unique": lambda t: t.unique(),
                     "prod": lambda t: t.prod(), "cumsum": lambda t: t.cumsum(0)}.items():
        o, t = fn(a), fn(ta)
        assert o.tolist() == t.tolist(), name
        assert o.dtype.name == str(t.dtype).split(".")[-1], name
    assert a.type() == ta.type() and a.element_size() == ta.element_size() and a.is_signed() == ta.is_signed()


def test_checkpoints_round_trip_with_torch(torch, tmp_path):
    ours = {"a": tapegrad.from_numpy(np.array([1, 2, 60000], np.uint16)),
            "b": tapegrad.tensor([2 ** 64 - 1, 3], dtype=tapegrad.uint64)[1:],
            "c": tapegrad.zeros(2, 3, dtype=tapegrad.uint32).t()}
    tapegrad.save(ours, tmp_path / "o.pt")
    back = torch.load(tmp_path / "o.pt")
    for k, v in ours.items():
        assert str(back[k].dtype).split(".")[-1] == v.dtype.name and back[k].tolist() == v.tolist()
        assert back[k].stride() == v.stride()
    torch.save({"x": torch.tensor([5, 2 ** 64 - 1], dtype=torch.uint64),
                "y": torch.arange(6).to(torch.uint16).view(2, 3)[:, 1:]}, tmp_path / "t.pt")
    got = tapegrad.load(tmp_path / "t.pt")
    assert got["x"].dtype is tapegrad.uint64 and got["x"].tolist() == [5, 2 ** 64 - 1]
    assert got["y"].dtype is tapegrad.uint16 and got["y"].tolist() == [[1, 2], [4, 5]]


HASH_INPUTS = {
    "float32": lambda m: m.tensor([[1., 2., 3.], [4., 5., 6.]]),
    "float64": lambda m: m.tensor([[-0.0, 0.0, 1e300]], dtype=m.float64),
    "float16": lambda m: m.tensor([1., 2., float("nan")], dtype=m.float16),
    "int8": lambda m: m.tensor([-1, -2, 5], dtype=m.int8),
    "uint8": lambda m: m.tensor([1, 2, 255], dtype=m.uint8),
    "int64": lambda m: m.arange(24).reshape(2, 3, 4),
    "bool": lambda m: m.tensor([True, False, True]),
    "zero_d": lambda m: m.tensor(2.5),
}


@pytest.mark.parametrize("kind", sorted(HASH_INPUTS))
@pytest.mark.parametrize("args", [{}, {"dim": 0}, {"dim": -1, "keepdim": True}, {"dim": None, "keepdim": True},
                                  {"dim": []}, {"dim": (0,)}])
def test_hash_tensor_matches_torch(torch, kind, args):
    ours = tapegrad.hash_tensor(HASH_INPUTS[kind](tapegrad), **args)
    theirs = torch.hash_tensor(HASH_INPUTS[kind](torch), **args)
    assert ours.dtype is tapegrad.uint64 and str(theirs.dtype) == "torch.uint64"
    assert ours.shape == tuple(theirs.shape) and ours.tolist() == theirs.tolist()
    assert HASH_INPUTS[kind](tapegrad).hash_tensor(**args).tolist() == theirs.tolist()


@pytest.mark.parametrize("call", [
    lambda m: m.hash_tensor(m.ones(2), mode=1),
    lambda m: m.hash_tensor(m.ones(2, 3), 5),
    lambda m: m.hash_tensor(m.empty(0)),
    lambda m: m.hash_tensor(m.tensor([1 + 2j])),
])
def test_hash_tensor_errors_match_torch(torch, call):
    ours, theirs = _outcome(lambda: call(tapegrad)), _outcome(lambda: call(torch))
    assert isinstance(ours, tuple) and ours == theirs


def test_hash_tensor_of_an_empty_dim_and_out(torch):
    assert tapegrad.hash_tensor(tapegrad.empty(0, 3), 1).tolist() == torch.hash_tensor(torch.empty(0, 3), 1).tolist()
    for dim in (0, (1, 0), -2):
        assert _outcome(lambda: tapegrad.hash_tensor(tapegrad.empty(0, 3), dim)) == \
            _outcome(lambda: torch.hash_tensor(torch.empty(0, 3), dim))
    out = tapegrad.empty(0, dtype=tapegrad.uint64)
    r = tapegrad.hash_tensor(tapegrad.tensor([1., 2.]), out=out)
    assert r is out and out.tolist() == torch.hash_tensor(torch.tensor([1., 2.])).tolist()
    assert not tapegrad.hash_tensor(tapegrad.ones(2, requires_grad=True)).requires_grad


@pytest.mark.parametrize("dt", ["uint8", "int8", "int32", "int64", "uint16"])
@pytest.mark.parametrize("value", [-1.0, -0.5, -0.0, 127.5, -128.5, -1.5, 255.9, 2147483647.5, 9.3e18, 2.0 ** 63,
                                   -2.0 ** 63, -1, 255])
def test_floats_into_integer_types_are_checked_before_truncation(torch, dt, value):
    """torch checks a float against the integer type's range as it is: 127.5 is no int8 and -0.5 no uint8 (an
    integer -1 still wraps into an unsigned type)."""
    for make in (lambda m: m.tensor([value], dtype=getattr(m, dt)).tolist(),
                 lambda m: m.full((2,), value, dtype=getattr(m, dt)).tolist()):
        assert _outcome(lambda: make(tapegrad)) == _outcome(lambda: make(torch))


@pytest.mark.parametrize("call", [
    lambda m, v: (lambda t: (t.__setitem__(0, v), t)[1])(m.zeros(2, dtype=m.int8)),
    lambda m, v: m.zeros(2, dtype=m.uint8).fill_(v),
    lambda m, v: m.zeros(2, dtype=m.int8).masked_fill(m.tensor([True, False]), v),
    lambda m, v: m.zeros(2, dtype=m.uint8).index_fill(0, m.tensor([0]), v),
    lambda m, v: m.full_like(m.zeros(2, dtype=m.int8), v),
    lambda m, v: m.zeros(2, dtype=m.uint8).new_full((2,), v),
    lambda m, v: m.zeros(2, dtype=m.uint8).clamp(max=v),
    lambda m, v: m.tensor(v, dtype=m.int8),
    lambda m, v: m.scalar_tensor(v, dtype=m.uint8),
    lambda m, v: m.arange(0, v, dtype=m.int8),
])
@pytest.mark.parametrize("value", [127.5, -0.5, -1.0, 300, -1, 2.5])
def test_every_fill_like_path_checks_floats_as_torch(torch, call, value):
    def run(m):
        r = call(m, value)
        return str(r.dtype).split(".")[-1], r.tolist()
    assert _outcome(lambda: run(tapegrad)) == _outcome(lambda: run(torch))
