"""Bad input gets torch's error: each case runs on torch and on tapegrad and must raise the same exception class
with torch's message (tapegrad may name the op first, ``op: <torch's message>``, as its op_error helper does).
The classes of ``tests/ops/test_torch_op_db_errors.py``'s differences, tested one by one beyond the op_db's own
samples."""

import warnings

import numpy as np
import pytest

import tapegrad

torch = pytest.importorskip("torch")


def _err(T, fn):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fn(T)
    except Exception as e:       # noqa: BLE001 -- the error is the answer
        return type(e), str(e)
    return None


def assert_same_error(fn):
    th, tg = _err(torch, fn), _err(tapegrad, fn)
    assert th is not None, "torch accepts this input: not a bad-input case"
    assert tg is not None, f"tapegrad accepts what torch refuses ({th[0].__name__}: {th[1]})"
    assert tg[0] is th[0] and (tg[1] == th[1] or tg[1].endswith(": " + th[1])), \
        f"\n torch:    {th[0].__name__}: {th[1]}\n tapegrad: {tg[0].__name__}: {tg[1]}"


def _cases(table):
    return pytest.mark.parametrize("fn", [f for _, f in table], ids=[i for i, _ in table])


# --- pooling: torch's checks and words (max/avg 1d/2d/3d, adaptive avg/max 1d/2d/3d) -----------------------------
POOL = []
for _name, _d in (("max_pool1d", 1), ("max_pool2d", 2), ("max_pool3d", 3), ("avg_pool1d", 1), ("avg_pool2d", 2),
                  ("avg_pool3d", 3)):
    _sh = (2, 1) + (8,) * _d
    for _lab, _kw in (("pad-1", dict(padding=-1)), ("padbig", dict(padding=2)), ("stride0", dict(stride=0)),
                      ("stride-1", dict(stride=-1)), ("kernel0", dict(kernel_size=0)),
                      ("kernel-1", dict(kernel_size=-1)), ("kernel0-stride1", dict(kernel_size=0, stride=1)),
                      ("dilation0", dict(dilation=0)), ("too-small", dict(kernel_size=20))):
        if _lab == "dilation0" and _name.startswith("avg"):
            continue
        POOL.append((f"{_name}-{_lab}", lambda T, n=_name, s=_sh, kw={"kernel_size": 2, **_kw}:
                     getattr(T.nn.functional, n)(T.ones(*s), **kw)))
    for _lab, _s in (("empty-channels", (2, 0) + (8,) * _d), ("empty-last", (2, 1) + (8,) * (_d - 1) + (0,)),
                     ("empty-unbatched", (0,) + (8,) * _d), ("wrong-ndim", (8,) * (_d if _d > 2 else 1))):
        POOL.append((f"{_name}-{_lab}", lambda T, n=_name, s=_s: getattr(T.nn.functional, n)(T.ones(*s), 2)))
for _lab, _kw in (("pad-1", dict(padding=-1)), ("padbig", dict(padding=2)), ("stride0", dict(stride=0)),
                  ("kernel-1", dict(kernel_size=-1)), ("dilation0", dict(dilation=0)), ("too-small", dict(kernel_size=20)),
                  ("pad-past-dilated-half", dict(padding=3, kernel_size=3, dilation=2))):
    POOL.append((f"max_pool1d-with-indices-{_lab}", lambda T, kw={"kernel_size": 2, **_kw}:   # (max_pool2d's checks)
                 T.nn.functional.max_pool1d(T.ones(2, 1, 8), return_indices=True, **kw)))
for _kind in ("avg", "max"):
    for _d in (1, 2, 3):
        _name, _sh = f"adaptive_{_kind}_pool{_d}d", (2, 1) + (8,) * _d
        for _lab, _o in (("empty-size", ()), ("too-many", (2,) * (_d + 1)), ("negative", (-1,) + (2,) * (_d - 1)),
                         ("negative-last", (2,) * (_d - 1) + (-1,))):
            POOL.append((f"{_name}-{_lab}", lambda T, n=_name, s=_sh, o=_o:
                         getattr(T.nn.functional, n)(T.ones(*s), o)))
        for _lab, _s, _o in (("wrong-ndim", (8,) * _d, 2), ("wrong-ndim-tuple", (8,) * _d, (2,) * _d),
                             ("empty-channels", (2, 0) + (8,) * _d, 2), ("empty-last", _sh[:-1] + (0,), 2)):
            if _lab == "empty-channels" and _name in ("adaptive_avg_pool1d", "adaptive_avg_pool2d"):
                continue  # (torch accepts zero channels there)
            POOL.append((f"{_name}-{_lab}", lambda T, n=_name, s=_s, o=_o:
                         getattr(T.nn.functional, n)(T.ones(*s), o)))
    POOL.append((f"adaptive_{_kind}_pool1d-none", lambda T, n=f"adaptive_{_kind}_pool1d":
                 getattr(T.nn.functional, n)(T.ones(2, 1, 8), (None,))))
# avg_pool2d reads size(-3) before its dim check: an IndexError below 3 dims (the pytorch-book's AvgPool2d on a 2-d
# image), its own words above 4; lp_pool2d and the module go through it; a global adaptive average is a mean
for _s in ((), (8,), (4, 8), (1, 2, 4, 4, 4), (1, 1, 2, 4, 4, 4)):
    POOL.append((f"avg_pool2d-{len(_s)}d", lambda T, s=_s: T.nn.functional.avg_pool2d(T.ones(s), 2)))
    POOL.append((f"AvgPool2d-{len(_s)}d", lambda T, s=_s: T.nn.AvgPool2d(2, 2)(T.ones(s))))
    POOL.append((f"lp_pool2d-{len(_s)}d", lambda T, s=_s: T.nn.functional.lp_pool2d(T.ones(s), 2, 2)))
for _f, _s, _o in (("adaptive_avg_pool2d", (8,), 1), ("adaptive_avg_pool2d", (), 1), ("adaptive_avg_pool3d", (4, 4), 1),
                   ("adaptive_avg_pool2d", (8,), (1, 1)), ("adaptive_avg_pool2d", (4, 8), (None, 1)),
                   ("adaptive_avg_pool3d", (2, 4, 4), (1, 1, 1))):
    POOL.append((f"{_f}-{len(_s)}d-{_o}", lambda T, f=_f, s=_s, o=_o: getattr(T.nn.functional, f)(T.ones(s), o)))


@_cases(POOL)
def test_pooling_errors(fn):
    assert_same_error(fn)


def test_pooling_accepts_what_torch_accepts():
    """The checks refuse nothing torch takes: zero output sizes, an empty batch, None sizes, ceil_mode edges."""
    F = tapegrad.nn.functional
    assert F.adaptive_avg_pool2d(tapegrad.ones(2, 1, 8, 8), 0).shape == (2, 1, 0, 0)
    assert F.adaptive_avg_pool2d(tapegrad.ones(2, 0, 8, 8), 2).shape == (2, 0, 2, 2)
    assert F.adaptive_max_pool2d(tapegrad.ones(2, 1, 8, 8), (None, 3)).shape == (2, 1, 8, 3)
    assert F.max_pool2d(tapegrad.ones(0, 1, 8, 8), 2).shape == (0, 1, 4, 4)
    assert F.max_pool1d(tapegrad.ones(1, 1, 5), 2, padding=1, dilation=2).shape == \
        torch.nn.functional.max_pool1d(torch.ones(1, 1, 5), 2, padding=1, dilation=2).shape
    # an output size of ones is a mean over the last dims, whatever the input's dims (torch's shortcut)
    for f, shape, o in (("adaptive_avg_pool2d", (2, 3), 1), ("adaptive_avg_pool2d", (2, 3, 4, 5, 6), (1, 1)),
                        ("adaptive_avg_pool3d", (2, 3, 4), 1), ("adaptive_avg_pool3d", (1, 2, 2, 3, 4, 5), 1)):
        x = np.arange(float(np.prod(shape))).reshape(shape) ** 1.5
        a = getattr(F, f)(tapegrad.tensor(x, requires_grad=True), o)
        b = getattr(torch.nn.functional, f)(torch.tensor(x, requires_grad=True), o)
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-12)
        assert a.grad_fn.name() == b.grad_fn.name() == "MeanBackward1"


# --- convolution: a bias of another dtype (was silently promoted), weight dims, groups ---------------------------
CONV = []
for _d in (1, 2, 3):
    _xs, _ws = (1, 2) + (5,) * _d, (2, 2) + (2,) * _d
    for _kind in ("conv", "conv_transpose"):
        _f = f"{_kind}{_d}d"
        for _dx, _db in (("int64", "float64"), ("float64", "complex128"), ("float32", "float64"),
                         ("float64", "float32"), ("int32", "int64"), ("float32", "float16"), ("float64", "int64")):
            if _kind == "conv_transpose" and _dx.startswith("float") and _db.startswith(("float", "int")) \
                    and _d < 3:
                continue  # (torch's transposed 1-d/2-d kernels add such a bias in place: no error)
            if _kind == "conv_transpose" and _dx == "int32":
                continue  # (torch has no int32 transposed convolution)
            CONV.append((f"{_f}-bias-{_dx}-{_db}", lambda T, f=_f, xs=_xs, ws=_ws, dx=_dx, db=_db: getattr(
                T.nn.functional, f)(T.ones(*xs, dtype=getattr(T, dx)), T.ones(*ws, dtype=getattr(T, dx)),
                                    T.ones(2, dtype=getattr(T, db)))))
        # a weight of another dtype too: torch names the bias first (non-transposed), the weight otherwise
        for _dx, _dw, _db in (("float32", "float64", "float64"), ("float64", "float32", "float32"),
                              ("float32", "float64", "float32"), ("float64", "float32", None)):
            CONV.append((f"{_f}-weight-{_dx}-{_dw}-bias-{_db}", lambda T, f=_f, xs=_xs, ws=_ws, dx=_dx, dw=_dw,
                         db=_db: getattr(T.nn.functional, f)(T.ones(*xs, dtype=getattr(T, dx)), T.ones(
                             *ws, dtype=getattr(T, dw)), None if db is None else T.ones(2, dtype=getattr(T, db)))))
        for _lab, _w, _kw in (("weight-2d", (2, 2), {}), ("weight-1d", (2,), {}), ("groups3", _ws, {"groups": 3}),
                              ("groups-1", _ws, {"groups": -1})):
            CONV.append((f"{_f}-{_lab}", lambda T, f=_f, xs=_xs, w=_w, kw=_kw: getattr(T.nn.functional, f)(
                T.ones(*xs), T.ones(*w), **kw)))
    CONV.append((f"conv{_d}d-groups3-same", lambda T, d=_d, xs=_xs, ws=_ws: getattr(T.nn.functional, f"conv{d}d")(
        T.ones(*xs), T.ones(*ws), T.ones(2), groups=3, padding="same")))
    CONV.append((f"conv{_d}d-groups-not-dividing", lambda T, d=_d: getattr(T.nn.functional, f"conv{d}d")(
        T.ones(*((1, 6) + (5,) * d)), T.ones(*((3, 2) + (2,) * d)), groups=2)))
    CONV.append((f"conv{_d}d-input-ndim", lambda T, d=_d, ws=_ws: getattr(T.nn.functional, f"conv{d}d")(
        T.ones(5), T.ones(*ws))))


@_cases(CONV)
def test_convolution_errors(fn):
    assert_same_error(fn)


def test_conv_transpose_bias_added_in_place_keeps_input_dtype():
    for T in (torch, tapegrad):
        r = T.nn.functional.conv_transpose1d(T.ones(1, 2, 5), T.ones(2, 2, 2), T.ones(2, dtype=T.float64))
        assert str(r.dtype).endswith("float32") and r.sum().item() == 52.0


# --- creation: eye's sizes, linspace/logspace's steps and ends, empty_permuted's layout, arange into integers ------
CREATION = [
    ("eye-n", lambda T: T.eye(-1)), ("eye-m", lambda T: T.eye(3, -2)), ("eye-both", lambda T: T.eye(-3, -2)),
    ("eye-float", lambda T: T.eye(2.5)), ("eye-out", lambda T: T.eye(-1, out=T.empty(0))),
    ("empty_permuted-duplicate", lambda T: T.empty_permuted((2, 3), (0, 0))),
    ("empty_permuted-out-of-range", lambda T: T.empty_permuted((2,), (3,))),
    ("empty_permuted-negative", lambda T: T.empty_permuted((2, 3), (-1, 0))),
    ("empty_permuted-length", lambda T: T.empty_permuted((2, 3), (0,))),
    ("arange-int64-step-truncated-to-0", lambda T: T.arange(0, 64, 0.5, out=T.empty(0, dtype=T.int64))),
    ("arange-step-sign", lambda T: T.arange(0, 6, -0.5, dtype=T.int64)),
]
for _op in ("linspace", "logspace"):
    CREATION += [
        (f"{_op}-negative-steps", lambda T, op=_op: getattr(T, op)(0, 1, -1)),
        (f"{_op}-float-steps", lambda T, op=_op: getattr(T, op)(0, 1, 2.0)),
        (f"{_op}-1d-ends", lambda T, op=_op: getattr(T, op)(T.ones(2), T.ones(2), 3)),
        (f"{_op}-1d-start", lambda T, op=_op: getattr(T, op)(T.ones(2), 1.0, 3)),
        (f"{_op}-1d-end", lambda T, op=_op: getattr(T, op)(0.0, T.ones(2, 1), 3)),
    ]


@_cases(CREATION)
def test_creation_errors(fn):
    assert_same_error(fn)


@pytest.mark.parametrize("dt", ["int64", "int32", "uint8", "int8"])
def test_arange_float_bounds_into_integers(dt):
    """torch truncates float start/step for an integer dtype (the count from the float bounds; int64's from the
    truncated ones): tapegrad computed the float range and truncated each value (a different answer)."""
    for a, b, st in ((0, 6, 1.5), (0.5, 6.7, 1.5), (-3.9, 7.9, 2.7), (9.9, -3.9, -2.7), (6.9, 5.2, -0.6), (0., 3.5, 1)):
        th = torch.arange(a, b, st, dtype=getattr(torch, dt)).tolist() if dt != "int64" or abs(st) >= 1 else None
        if th is not None:
            assert tapegrad.arange(a, b, st, dtype=getattr(tapegrad, dt)).tolist() == th, (a, b, st)


# --- binary ops given two Python numbers: torch has no number-number overload (tapegrad computed a tensor) --------
NUMBERS = [(f"{_op}-{type(_a).__name__}", lambda T, op=_op, a=_a: getattr(T, op)(a, 3))
           for _op in ("bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift", "bitwise_right_shift",
                       "remainder", "pow", "float_power", "xlogy")
           for _a in (2, 2.5)]


@_cases(NUMBERS)
def test_two_numbers_errors(fn):
    assert_same_error(fn)


def test_one_number_still_works():
    for op in ("bitwise_and", "remainder", "pow", "float_power", "xlogy", "bitwise_left_shift"):
        for args in ((tapegrad.tensor([3]), 2), (2, tapegrad.tensor([3]))):
            th = getattr(torch, op)(*[torch.tensor(a.tolist()) if isinstance(a, tapegrad.Tensor) else a
                                      for a in args])
            assert getattr(tapegrad, op)(*args).tolist() == th.tolist(), op


# --- shape and index ops: a tensor start, ambiguous -1, joins of a Tensor (not a list), split arguments ----------
SHAPE = [
    ("reshape-0-elements-ambiguous", lambda T: T.ones(0, 3).reshape(0, -1)),
    ("view-0-elements-ambiguous", lambda T: T.ones(0, 3).view(-1, 0)),
    ("view_copy-0-elements-ambiguous", lambda T: T.view_copy(T.ones(0), (2, -1, 0))),
    ("reshape-not-divisible", lambda T: T.ones(6).reshape(4, -1)),
    ("reshape-0-into-nonzero", lambda T: T.ones(6).reshape(0, -1)),
    ("narrow-1d-tensor-start", lambda T: T.narrow(T.ones(5), 0, T.tensor([1]), 2)),
    ("narrow-float-tensor-start", lambda T: T.narrow(T.ones(5), 0, T.tensor(1.), 2)),
    ("narrow-bool-tensor-start", lambda T: T.narrow(T.ones(5), 0, T.tensor(True), 2)),
    ("narrow_copy-dim", lambda T: T.narrow_copy(T.ones(2, 3, 4), 3, 0, 1)),
    ("narrow_copy-negative-dim", lambda T: T.narrow_copy(T.ones(2, 3), -3, 0, 1)),
    ("narrow_copy-negative-length", lambda T: T.narrow_copy(T.ones(10), 0, -3, -1)),
    ("narrow_copy-0d", lambda T: T.narrow_copy(T.tensor(1.), 0, 0, 1)),
    ("roll-no-shifts", lambda T: T.roll(T.ones(3), [])),
    ("roll-0d-dim", lambda T: T.roll(T.tensor(1.), 1, 0)),
    ("roll-misaligned", lambda T: T.roll(T.ones(3, 3), [1, 2], [0])),
    ("hsplit-str", lambda T: T.hsplit(T.ones(4), "abc")),
    ("vsplit-float", lambda T: T.vsplit(T.ones(4, 4), 2.5)),
    ("vsplit-1d", lambda T: T.vsplit(T.ones(4), 2)), ("dsplit-1d", lambda T: T.dsplit(T.ones(4), 2)),
    ("hsplit-0d", lambda T: T.hsplit(T.tensor(1.), 2)),
    ("unbind_copy-0d", lambda T: T.unbind_copy(T.tensor(1.))),
    ("unbind_copy-0d-dim-1", lambda T: T.unbind_copy(T.tensor(1.), -1)),
    ("scatter-src-rank", lambda T: T.scatter(T.zeros(3, 5), 0, T.tensor([[34, 1], [1, 2]]), T.ones(2, 5, 2))),
    ("scatter_add-src-rank", lambda T: T.scatter_add(T.zeros(3, 5), 0, T.tensor([[3, 1]]), T.ones(2, 5, 2))),
    ("scatter_reduce-src-rank", lambda T: T.scatter_reduce(T.zeros(3, 5), 0, T.tensor([[3, 1]]), T.ones(2, 5, 2),
                                                           "sum")),
    ("chunk_cat-negative-dim-mixed-ndims", lambda T: T._chunk_cat([T.ones(2, 3), T.ones(2)], -1, 2)),
    ("chunk_cat-dim-past-an-ndim", lambda T: T._chunk_cat([T.ones(2, 3), T.ones(2)], 1, 2)),
    ("chunk_cat-zero-chunks", lambda T: T._chunk_cat([T.ones(2, 3)], 0, 0)),
    ("chunk_cat-negative-chunks", lambda T: T._chunk_cat([T.ones(2), T.ones(3)], 0, -1)),
    ("chunk_cat-empty-tensor", lambda T: T._chunk_cat([T.ones(0), T.ones(3)], 0, 1)),
    ("chunk_cat-dtypes", lambda T: T._chunk_cat([T.ones(2, 3), T.ones(2, 3, dtype=T.float64)], 0, 2)),
    ("chunk_cat-leading-sizes", lambda T: T._chunk_cat([T.ones(2, 3, 4), T.ones(4, 3)], 1, 3)),
]
for _op in ("cat", "stack", "hstack", "vstack", "dstack", "column_stack"):
    SHAPE.append((f"{_op}-of-a-tensor", lambda T, op=_op: getattr(T, op)(T.ones(2, 2))))
    if _op not in ("cat", "stack"):
        SHAPE.append((f"{_op}-empty", lambda T, op=_op: getattr(T, op)([])))


@_cases(SHAPE)
def test_shape_errors(fn):
    assert_same_error(fn)


def test_narrow_takes_an_integral_0d_tensor_start():
    assert tapegrad.narrow(tapegrad.arange(5), 0, tapegrad.tensor(1), 2).tolist() == [1, 2]
    assert tapegrad.narrow_copy(tapegrad.arange(10), 0, -3, 2).tolist() == [7, 8]
    assert tapegrad.hsplit(tapegrad.arange(4), [1, 3])[1].tolist() == [1, 2]


# --- nn.functional: norms' shapes, embedding's weight, prelu, rrelu's bounds, softshrink's range, margin losses ----
def _F(T):
    return T.nn.functional


NN = [
    ("embedding-0d-weight", lambda T: _F(T).embedding(T.zeros(2, 2, dtype=T.long), T.tensor(1.))),
    ("embedding-1d-weight", lambda T: _F(T).embedding(T.zeros(2, 2, dtype=T.long), T.ones(3))),
    ("embedding-3d-weight", lambda T: _F(T).embedding(T.zeros(2, 2, dtype=T.long), T.ones(1, 1, 1))),
    ("native_layer_norm-empty-shape", lambda T: T.native_layer_norm(T.ones(1, 2, 3), (), None, None, 1e-5)),
    ("layer_norm-bias-shape", lambda T: _F(T).layer_norm(T.ones(1, 2, 3), (1, 2, 3), None, T.ones(1, 2))),
    ("prelu-0d-input", lambda T: _F(T).prelu(T.tensor(1.), T.ones(2))),
    ("prelu-channels", lambda T: _F(T).prelu(T.ones(2, 8, 3), T.ones(9))),
    ("prelu-2d-weight", lambda T: _F(T).prelu(T.ones(2, 8, 3), T.ones(2, 4))),
    ("prelu-2d-single-weight", lambda T: _F(T).prelu(T.ones(2, 3), T.ones(1, 1))),
    ("rrelu-bounds", lambda T: _F(T).rrelu(T.ones(5, 5), 0.3, 0.1)),
    ("rrelu-bounds-training", lambda T: _F(T).rrelu(T.ones(5, 5), 0.3, 0.1, training=True)),
    ("rrelu_-bounds", lambda T: _F(T).rrelu_(T.ones(5, 5), 0.3, 0.1)),
    ("softshrink-negative", lambda T: _F(T).softshrink(T.ones(1), -0.5)),
    ("softshrink-negative-float64", lambda T: _F(T).softshrink(T.ones(1, dtype=T.float64), -1)),
    ("softshrink-past-half-max", lambda T: _F(T).softshrink(T.ones(1, dtype=T.float16), 1e6)),
    ("softshrink-nan", lambda T: _F(T).softshrink(T.ones(1), float("nan"))),
    ("triplet_margin_loss-negative-margin", lambda T: _F(T).triplet_margin_loss(T.ones(3, 4), T.ones(3, 4),
                                                                                 T.ones(3, 4), margin=-1.0)),
    ("triplet_margin_loss-zero-margin", lambda T: _F(T).triplet_margin_loss(T.ones(3, 4), T.ones(3, 4), T.ones(3, 4),
                                                                             margin=0.0)),
    ("soft_margin_loss-shapes", lambda T: _F(T).soft_margin_loss(T.ones(5, 4), T.ones(5))),
    ("linear_cross_entropy-unbatched-K-dim", lambda T: _F(T).linear_cross_entropy(T.ones(3), T.ones(2, 4, 3),
                                                                                   T.ones(2, 4))),
]
for _op in ("layer_norm", "rms_norm"):
    NN += [(f"{_op}-empty-shape", lambda T, op=_op: getattr(_F(T), op)(T.ones(1, 2, 3), ())),
           (f"{_op}-weight-shape", lambda T, op=_op: getattr(_F(T), op)(T.ones(1, 2, 3), (1, 2, 3), T.ones(1, 2))),
           (f"{_op}-input-shape", lambda T, op=_op: getattr(_F(T), op)(T.ones(2, 2, 3), (2, 2))),
           (f"{_op}-input-ndim", lambda T, op=_op: getattr(_F(T), op)(T.ones(3), (2, 3)))]
NN += [
    ("multi_margin_loss-empty-classes", lambda T: _F(T).multi_margin_loss(T.ones(5, 0), T.zeros(5, dtype=T.long))),
    ("multi_margin_loss-empty-1d", lambda T: _F(T).multi_margin_loss(T.ones(0), T.zeros(5, dtype=T.long))),
    ("multi_margin_loss-3d", lambda T: _F(T).multi_margin_loss(T.ones(5, 4, 2), T.zeros(5, dtype=T.long))),
    ("multi_margin_loss-2d-target", lambda T: _F(T).multi_margin_loss(T.ones(5, 4), T.zeros(5, 4, dtype=T.long))),
    ("multi_margin_loss-target-size-1d", lambda T: _F(T).multi_margin_loss(T.ones(4), T.zeros(5, dtype=T.long))),
    ("multi_margin_loss-float-target", lambda T: _F(T).multi_margin_loss(T.ones(5, 4), T.zeros(5))),
    ("multi_margin_loss-int32-target", lambda T: _F(T).multi_margin_loss(T.ones(5, 4), T.zeros(5, dtype=T.int32))),
    ("multi_margin_loss-0d-weight", lambda T: _F(T).multi_margin_loss(T.ones(5, 4), T.zeros(5, dtype=T.long),
                                                                       weight=T.tensor(1.))),
    ("multi_margin_loss-2d-weight", lambda T: _F(T).multi_margin_loss(T.ones(5, 4), T.zeros(5, dtype=T.long),
                                                                       weight=T.ones(5, 4))),
    ("multi_margin_loss-weight-size", lambda T: _F(T).multi_margin_loss(T.ones(5, 4), T.zeros(5, dtype=T.long),
                                                                         weight=T.ones(5))),
    ("multi_margin_loss-p3", lambda T: _F(T).multi_margin_loss(T.ones(5, 4), T.zeros(5, dtype=T.long), p=3)),
    ("multi_margin_loss-target-range", lambda T: _F(T).multi_margin_loss(T.ones(5, 4), T.full((5,), 7))),
    ("multilabel_margin_loss-empty-classes", lambda T: _F(T).multilabel_margin_loss(T.ones(5, 0),
                                                                                     T.zeros(5, 4, dtype=T.long))),
    ("multilabel_margin_loss-empty-1d", lambda T: _F(T).multilabel_margin_loss(T.ones(0), T.zeros(0, dtype=T.long))),
    ("multilabel_margin_loss-target-size", lambda T: _F(T).multilabel_margin_loss(T.ones(5, 4),
                                                                                   T.zeros(4, dtype=T.long))),
    ("multilabel_margin_loss-float-target", lambda T: _F(T).multilabel_margin_loss(T.ones(5, 4), T.zeros(5, 4))),
]


@_cases(NN)
def test_nn_functional_errors(fn):
    assert_same_error(fn)


def test_nn_checks_accept_what_torch_accepts():
    F, t = tapegrad.nn.functional, tapegrad
    assert F.prelu(t.tensor(-2.), t.ones(1)).item() == -2.0
    assert F.multi_margin_loss(t.tensor(1.), t.zeros(1, dtype=t.long)).shape == ()
    assert F.softshrink(t.ones(1, dtype=t.float16), 0.5).dtype is t.float16
    assert F.rrelu(t.ones(2), 0.2, 0.2).tolist() == [1.0, 1.0]


# --- sampling, tolerances, fills, reductions, complex, cov, ormqr -------------------------------------------------
_NAN, _INF = float("nan"), float("inf")
MISC = [(f"multinomial-{v}-{'with' if rep else 'without'}-replacement",
         lambda T, v=v, rep=rep: T.multinomial(T.tensor(v), 2, rep))
        for rep in (False, True)
        for v in ([1., -1., 1.], [1., _INF, 1.], [1., -_INF, 1.], [1., 1., _NAN], [0., 0., 0.], [_NAN, -1., 1.],
                  [_INF, -1., 1.])]
MISC += [
    ("multinomial-float-out", lambda T: T.multinomial(T.ones(1, 2, dtype=T.float64), 2,
                                                      out=T.empty(1, 2, dtype=T.float64))),
    ("multinomial-too-many-categories", lambda T: T.multinomial(T.ones(2 ** 24 + 1, dtype=T.float64), 3)),
    ("multinomial-3d-int", lambda T: T.multinomial(T.ones(1, 2, 3, dtype=T.long), 2)),
    ("isclose-rtol", lambda T: T.isclose(T.tensor(1.), T.tensor(2.), rtol=-0.4)),
    ("isclose-atol", lambda T: T.isclose(T.tensor(1.), T.tensor(2.), atol=-0.4)),
    ("isclose-both", lambda T: T.isclose(T.tensor(1.), T.tensor(2.), rtol=-1, atol=-0.4)),
    ("allclose-rtol", lambda T: T.allclose(T.tensor(1.), T.tensor(2.), rtol=-0.4)),
    ("masked_fill-complex-into-float", lambda T: T.ones(2, 2).masked_fill(T.tensor(False), 1j)),
    ("masked_fill_-complex-into-float", lambda T: T.ones(2, 2).masked_fill_(T.tensor(False), 1j)),
    ("masked_fill-complex-tensor-into-int", lambda T: T.ones(2, dtype=T.long).masked_fill(T.tensor(False),
                                                                                          T.tensor(1j))),
    ("masked_fill-300-tensor-into-int8", lambda T: T.ones(2, dtype=T.int8).masked_fill(T.tensor(True),
                                                                                       T.tensor(300))),
    ("masked_fill-1e6-tensor-into-half", lambda T: T.ones(2, dtype=T.float16).masked_fill(T.tensor(True),
                                                                                          T.tensor(1e6))),
    ("fill_-complex-into-float", lambda T: T.ones(2, 2).fill_(1 + 1j)),
    ("full-complex-into-float", lambda T: T.full((2,), 1j, dtype=T.float32)),
    ("mean-int-dtype", lambda T: T.ones(3).mean(dtype=T.int64)),
    ("mean-dim-int-dtype", lambda T: T.ones(3, 4).mean(0, dtype=T.int64)),
    ("mean-empty-dims-int-dtype", lambda T: T.mean(T.ones(3, 4), [], dtype=T.int64)),
    ("nanmean-int-dtype", lambda T: T.nanmean(T.ones(3), dtype=T.long)),
    ("complex-int", lambda T: T.complex(T.ones(2), T.ones(2, dtype=T.int32))),
    ("complex-float-double", lambda T: T.complex(T.ones(2), T.ones(2, dtype=T.float64))),
    ("complex-narrower-out", lambda T: T.complex(T.ones(2, dtype=T.float64), T.ones(2, dtype=T.float64),
                                                 out=T.empty(2, dtype=T.complex64))),
    ("complex-wider-out", lambda T: T.complex(T.ones(2), T.ones(2), out=T.empty(2, dtype=T.complex128))),
    ("polar-narrower-out", lambda T: T.polar(T.ones(2, dtype=T.float64), T.ones(2, dtype=T.float64),
                                             out=T.empty(2, dtype=T.complex64))),
    ("polar-int", lambda T: T.polar(T.ones(2), T.ones(2, dtype=T.int32))),
    ("cov-int-aweights", lambda T: T.cov(T.ones(5), aweights=T.ones(2, dtype=T.long))),
    ("cov-float-fweights", lambda T: T.cov(T.ones(5), fweights=T.ones(2))),
    ("ormqr-1d-input", lambda T: T.ormqr(T.ones(3), T.ones(3), T.ones(3, 3))),
    ("ormqr-1d-other", lambda T: T.ormqr(T.ones(3, 3), T.ones(3), T.ones(3))),
    ("ormqr-tau-past-input-columns", lambda T: T.ormqr(T.ones(3, 2), T.ones(3), T.ones(3, 3))),
    ("ormqr-short-tau", lambda T: T.ormqr(T.ones(3, 3), T.ones(2), T.ones(3, 3))),
    ("ormqr-other-rows", lambda T: T.ormqr(T.ones(3, 3), T.ones(3), T.ones(4, 3))),
    ("ormqr-right-other-columns", lambda T: T.ormqr(T.ones(3, 3), T.ones(3), T.ones(3, 4), left=False)),
    ("ormqr-tau-ndim", lambda T: T.ormqr(T.ones(3, 3), T.ones(1, 3), T.ones(3, 3))),
    ("ormqr-tau-batch", lambda T: T.ormqr(T.ones(2, 3, 3), T.ones(3, 3), T.ones(2, 3, 3))),
    ("ormqr-other-batch", lambda T: T.ormqr(T.ones(2, 3, 3), T.ones(2, 3), T.ones(3, 3, 3))),
    ("ormqr-other-ndim", lambda T: T.ormqr(T.ones(2, 3, 3), T.ones(2, 3), T.ones(3, 3))),
    ("ormqr-tau-dtype", lambda T: T.ormqr(T.ones(3, 3), T.ones(3, dtype=T.float64), T.ones(3, 3))),
    ("ormqr-other-dtype", lambda T: T.ormqr(T.ones(3, 3), T.ones(3), T.ones(3, 3, dtype=T.float64))),
]


@_cases(MISC)
def test_misc_errors(fn):
    assert_same_error(fn)


def test_complex_values_with_zero_imaginary_part_fill_real_tensors():
    for T in (torch, tapegrad):
        assert T.ones(2).fill_(1 + 0j).tolist() == [1.0, 1.0]
        assert T.ones(2, dtype=T.long).masked_fill(T.tensor(True), T.tensor(2 + 0j)).tolist() == [2, 2]
        assert T.ones(2, dtype=T.int8).masked_fill(T.tensor(True), T.tensor(3.5)).tolist() == [3, 3]


# --- out= that overlaps: an expanded out (its elements repeat) or one sharing memory with an input ---------------
def _x(T):
    return T.arange(6.)


OVERLAP = [
    ("masked_select-expanded-out", lambda T: T.masked_select(_x(T), _x(T) > 2, out=T.zeros(1).expand(3))),
    ("masked_select-out-is-input", lambda T: (lambda x: T.masked_select(x, x > 2, out=x))(_x(T))),
    ("gather-expanded-out", lambda T: T.gather(_x(T), 0, T.tensor([2, 1, 0]), out=T.zeros(1).expand(3))),
    ("gather-out-is-input", lambda T: (lambda x: T.gather(x, 0, T.tensor([2, 1, 0]), out=x[:3]))(_x(T))),
    ("index_select-expanded-out", lambda T: T.index_select(T.ones(3, 6), 1, T.tensor([0, 1]),
                                                           out=T.zeros(1, 1).expand(3, 2))),
    ("index_select-out-overlaps-input", lambda T: (lambda x: T.index_select(x, 0, T.tensor([0, 1]),
                                                                            out=x[1:3]))(T.ones(3, 2))),
    ("cat-expanded-out", lambda T: T.cat([T.ones(5, 5), T.ones(5, 5)], out=T.zeros(1, 1).expand(10, 5))),
    ("cat-out-is-an-input", lambda T: (lambda x: T.cat([x, x], out=x))(T.ones(2, 3))),
    ("cat-empty-out-is-an-input", lambda T: (lambda x: T.cat([x, T.ones(4, 6)], out=x))(T.zeros(0))),
    ("bernoulli-expanded-out", lambda T: T.bernoulli(T.rand(6), out=T.zeros(1).expand(6))),
    ("multinomial-expanded-out", lambda T: T.multinomial(T.ones(3), 2, out=T.zeros(1, dtype=T.long).expand(2))),
    ("add-expanded-out", lambda T: T.add(_x(T), 1, out=T.zeros(1).expand(6))),
]


@_cases(OVERLAP)
def test_out_overlap_errors(fn):
    assert_same_error(fn)


@pytest.mark.parametrize("name", ["hann", "hamming", "nuttall", "bartlett", "kaiser", "gaussian", "general_hamming",
                                  "cosine", "exponential", "blackman"])
def test_signal_windows_refuse_a_sparse_layout(name):
    """torch's ValueError and words (its message names the layout torch.sparse_coo; tapegrad's prints its own
    name, tapegrad.sparse_coo: README "What is different"). The layout was ignored."""
    th = _err(torch, lambda T: getattr(T.signal.windows, name)(5, layout=T.sparse_coo))
    tg = _err(tapegrad, lambda T: getattr(T.signal.windows, name)(5, layout=T.sparse_coo))
    assert tg[0] is th[0] is ValueError and tg[1] == th[1].replace("torch.", "tapegrad.")
    assert getattr(tapegrad.signal.windows, name)(4, layout=tapegrad.strided).shape == (4,)


# --- operands of two dtypes: products, linear/bilinear, normalisation parameters, prelu (were silently promoted) --
MIXED = []
for _x, _y in (("float32", "float64"), ("float64", "float32"), ("float32", "float16")):
    for _a, _b in (((3,), (3,)), ((3,), (2, 3, 4)), ((2, 2, 3), (3,)), ((2, 3), (2, 3, 4)), ((2, 2, 3), (3, 4)),
                   ((2, 2, 3), (2, 3, 4)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4))):
        MIXED.append((f"matmul-{_a}-{_b}-{_x}-{_y}", lambda T, a=_a, b=_b, x=_x, y=_y: T.matmul(
            T.ones(a, dtype=getattr(T, x)), T.ones(b, dtype=getattr(T, y)))))
    MIXED.append((f"bmm-{_x}-{_y}", lambda T, x=_x, y=_y: T.bmm(T.ones(1, 2, 3, dtype=getattr(T, x)),
                                                               T.ones(1, 3, 4, dtype=getattr(T, y)))))
    MIXED.append((f"mv-{_x}-{_y}", lambda T, x=_x, y=_y: T.mv(T.ones(2, 3, dtype=getattr(T, x)),
                                                             T.ones(3, dtype=getattr(T, y)))))
    for _nd in (1, 2, 3):
        for _wd, _bd in ((_y, None), (_y, _x), (_y, _y), (_x, _y)):
            MIXED.append((f"linear-{_nd}d-{_x}-{_wd}-{_bd}", lambda T, nd=_nd, x=_x, w=_wd, b=_bd: T.nn.functional.linear(
                T.ones(*((2,) * (nd - 1) + (3,)), dtype=getattr(T, x)), T.ones(4, 3, dtype=getattr(T, w)),
                None if b is None else T.ones(4, dtype=getattr(T, b)))))
    for _i, _f in enumerate(((_x, _y, _x, None), (_x, _x, _y, None), (_x, _x, _x, _y), (_y, _y, _y, _x))):
        MIXED.append((f"bilinear-{_i}-{_x}-{_y}", lambda T, f=_f: T.nn.functional.bilinear(
            T.ones(2, 3, dtype=getattr(T, f[0])), T.ones(2, 3, dtype=getattr(T, f[1])),
            T.ones(4, 3, 3, dtype=getattr(T, f[2])), None if f[3] is None else T.ones(4, dtype=getattr(T, f[3])))))
    MIXED.append((f"prelu-{_x}-{_y}", lambda T, x=_x, y=_y: T.nn.functional.prelu(
        T.ones(2, 4, 3, dtype=getattr(T, x)), T.ones(4, dtype=getattr(T, y)))))


def _norm_cases(T, x, p):
    def o(n, d):
        return T.ones(n, dtype=getattr(T, d))
    F, inp = T.nn.functional, T.ones(2, 4, 3, dtype=getattr(T, x))
    return {"layer_norm-w": lambda: F.layer_norm(inp, (3,), o(3, p)),
            "layer_norm-b": lambda: F.layer_norm(inp, (3,), None, o(3, p)),
            "layer_norm-wb": lambda: F.layer_norm(inp, (3,), o(3, x), o(3, p)),
            "batch_norm-running": lambda: F.batch_norm(inp, o(4, p), o(4, p)),
            "batch_norm-w": lambda: F.batch_norm(inp, o(4, x), o(4, x), o(4, p), o(4, p)),
            "batch_norm-train": lambda: F.batch_norm(inp, None, None, o(4, p), o(4, p), training=True),
            "group_norm": lambda: F.group_norm(inp, 2, o(4, p), o(4, p)),
            "instance_norm": lambda: F.instance_norm(inp, weight=o(4, p), bias=o(4, p))}


for _x, _p in (("float32", "float64"), ("float64", "float32"), ("float32", "float16"), ("float64", "float16"),
               ("float16", "float64")):
    for _k in _norm_cases(tapegrad, _x, _p):
        MIXED.append((f"{_k}-{_x}-{_p}", lambda T, k=_k, x=_x, p=_p: _norm_cases(T, x, p)[k]()))


@_cases(MIXED)
def test_mixed_dtype_operands(fn):
    assert_same_error(fn)


@pytest.mark.parametrize("x, p", [("float16", "float32")])
def test_norms_accept_float32_parameters_of_a_half_input(x, p):
    for k in _norm_cases(tapegrad, x, p):
        if k in ("layer_norm-wb", "batch_norm-w"):
            continue     # (these mix the input's own dtype with float32: refused, tested above)
        a, b = _norm_cases(torch, x, p)[k](), _norm_cases(tapegrad, x, p)[k]()
        assert str(a.dtype).split(".")[1] == b.dtype.name, k
        np_a = a.float().numpy()
        assert abs(np_a - b.float().numpy()).max() < 1e-2, k
    # instance_norm's running statistics may have another dtype (torch accepts them)
    xs = {T: T.ones(2, 4, 3) for T in (torch, tapegrad)}
    for T in (torch, tapegrad):
        T.nn.functional.instance_norm(xs[T], T.zeros(4, dtype=T.float64), T.ones(4, dtype=T.float64),
                                      use_input_stats=False)
# --- tensor lists with an element that is no Tensor: torch's TypeError naming the element ----------------------
_LISTED = ("cat", "stack", "hstack", "vstack", "dstack", "column_stack", "row_stack")
_VARARGS = ("block_diag", "cartesian_prod", "broadcast_tensors", "meshgrid", "atleast_1d", "atleast_2d",
            "atleast_3d")
TENSOR_LISTS = [(f"{n}-{type(b).__name__}", (lambda n, b: lambda T: getattr(T, n)([T.ones(2), b]))(n, b))
                for n in _LISTED for b in (None, 3, [1.0])]
TENSOR_LISTS += [(f"{n}-{type(b).__name__}", (lambda n, b: lambda T: getattr(T, n)(T.ones(2), b))(n, b))
                 for n in _VARARGS for b in (None, 3)]


@_cases(TENSOR_LISTS)
def test_tensor_list_element_errors(fn):
    assert_same_error(fn)


# --- ops that need an order (or the real line) refuse complex tensors, with torch's words ------------------------
_Z = "T.tensor([1 + 1j, 2 - 1j])"
COMPLEX_ORDER = [(src, (lambda src: lambda T: eval(src.replace("Z", _Z), {"T": T}))(src)) for src in (
    "Z < 1", "Z >= Z", "T.gt(Z, T.tensor([1.0, 3.0]))", "T.maximum(Z, Z)", "T.fmin(Z, Z)", "T.max(Z, Z)",
    "Z.clamp(0, 1)", "Z.clamp_min(0)", "Z.clip(max=1)", "T.relu(Z)", "T.nn.functional.hardtanh(Z)",
    "Z.max()", "Z.min(0)", "Z.amax()", "Z.amin(0)", "Z.argmax()", "Z.argmin(0)", "T.aminmax(Z)",
    "Z.median()", "Z.median(0)", "Z.nanmedian()", "Z.mode()", "Z.cummax(0)", "Z.cummin(0)",
    "Z.sort()", "Z.argsort()", "T.msort(Z)", "Z.topk(1)", "Z.kthvalue(1)", "T.unique(Z)", "T.unique_consecutive(Z)",
    "T.searchsorted(Z, Z)", "T.bucketize(Z, Z)", "T.histc(Z)",
    "Z.sign()", "Z.floor()", "Z.ceil()", "Z.trunc()", "Z.round()", "Z.round(decimals=1)", "Z.frac()",
    "Z % 2", "T.fmod(Z, 2)", "Z // 2", "T.div(Z, 2, rounding_mode='trunc')",
    "Z.signbit()", "Z.isposinf()", "Z.isneginf()")]


@_cases(COMPLEX_ORDER)
def test_complex_refused_by_ordering_ops(fn):
    assert_same_error(fn)


# --- an index given as a Python list (L1aoXingyu/zhangxiann's tensor lessons): torch's parser refuses it ---------
LIST_INDEX = [
    ("index_select", lambda T: T.index_select(T.arange(6).view(2, 3), 1, [0, 2])),
    ("Tensor.index_select", lambda T: T.arange(6).view(2, 3).index_select(1, [0, 2])),
    ("gather", lambda T: T.gather(T.arange(6).view(2, 3), 1, [[0], [1]])),
    ("Tensor.gather", lambda T: T.arange(6).view(2, 3).gather(1, [[0], [1]])),
    ("Tensor.index_add", lambda T: T.arange(6).view(2, 3).index_add(1, [0], T.ones(2, 1).long())),
    ("Tensor.take", lambda T: T.arange(6).take([0, 5])),
]


@_cases(LIST_INDEX)
def test_list_index_is_refused(fn):
    assert_same_error(fn)


def test_number_index_is_a_type_error():
    with pytest.raises(TypeError, match="must be Tensor, not int"):
        tapegrad.arange(6).view(2, 3).index_select(1, 1)
    with pytest.raises(TypeError):
        torch.arange(6).view(2, 3).index_select(1, 1)
