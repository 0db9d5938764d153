"""Views and the reduction/shape ops' behaviour beyond the op table: in-place changes through views (gradients as
torch's), shared version counters, ops that return their input, error messages, printing, NaN gradients."""

import numpy as np
import pytest

import tapegrad

# (name, view op) — every op that torch documents as a view
VIEWS = [
    ("transpose", lambda x: x.transpose(0, 1)),
    ("t", lambda x: x.t()),
    ("T", lambda x: x.T),
    ("mT", lambda x: x.mT),
    ("permute", lambda x: x.permute(1, 0)),
    ("movedim", lambda x: x.movedim(0, 1)),
    ("view", lambda x: x.view(4, 3)),
    ("reshape", lambda x: x.reshape(2, 6)),
    ("flatten", lambda x: x.flatten()),
    ("unflatten", lambda x: x.unflatten(1, (2, 2))),
    ("unsqueeze", lambda x: x.unsqueeze(1)),
    ("squeeze", lambda x: x.unsqueeze(0).squeeze(0)),
    ("narrow", lambda x: x.narrow(1, 1, 2)),
    ("select", lambda x: x.select(0, 1)),
    ("diagonal", lambda x: x.diagonal()),
    ("diagonal_offset", lambda x: x.diagonal(1)),
    ("unbind", lambda x: x.unbind(1)[2]),
    ("split", lambda x: x.split(2)[1]),
    ("split_sizes", lambda x: x.split([1, 3], 1)[1]),
    ("chunk", lambda x: x.chunk(2, 1)[0]),
    ("tensor_split", lambda x: x.tensor_split(2)[0]),
    ("view_chain", lambda x: x.t().narrow(0, 1, 2).select(1, 0)),
    ("unfold", lambda x: x.unfold(1, 2, 2)),
    ("adjoint", lambda x: x.adjoint()),
    ("hsplit", lambda x: x.hsplit(2)[1]),
]


def _both(torch, fn, inplace):
    """Run ``y = x * 1; v = fn(y); inplace(v); (y * w).sum().backward()`` on both libraries."""
    rng = np.random.default_rng(0)
    a, w = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    res = []
    for m in (tapegrad, torch):
        x = m.tensor(a, requires_grad=True)
        y = x * 1.0
        v = fn(y)
        inplace(v)
        (y * m.tensor(w)).sum().backward()
        res.append((y.detach().numpy().copy(), x.grad.numpy().copy(), y.grad_fn.name() if m is tapegrad else
                    type(y.grad_fn).__name__))
    return res


@pytest.mark.parametrize("name,fn", VIEWS, ids=[v[0] for v in VIEWS])
def test_inplace_through_view_matches_torch(torch, name, fn):
    if name in ("unbind", "split", "split_sizes", "chunk"):   # torch forbids it for multi-output views: so do we
        errors = []
        for m in (tapegrad, torch):
            with pytest.raises(RuntimeError, match="This view is the output of a function that returns multiple "
                                                   "views") as e:
                fn(m.tensor(np.ones((3, 4)), requires_grad=True) * 1.0).mul_(2)
            errors.append(str(e.value))
        assert errors[0] == errors[1]
        return
    (yt, gt, nt), (yr, gr, nr) = _both(torch, fn, lambda v: v.mul_(2))
    np.testing.assert_allclose(yt, yr)
    np.testing.assert_allclose(gt, gr)
    assert nt == nr == "CopySlices"


@pytest.mark.parametrize("name,fn", VIEWS, ids=[v[0] for v in VIEWS])
def test_views_share_memory_and_version(name, fn):
    x = tapegrad.randn(3, 4)
    v = fn(x)
    assert np.shares_memory(v.numpy(), x.numpy()), f"{name} should be a view"
    before = x._version
    v.add_(1.0)
    assert x._version == v._version == before + 1
    x.mul_(2.0)
    assert v._version == x._version


def test_transpose_inplace_grad_example(torch):
    for m in (tapegrad, torch):
        x = m.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
        y = x.clone()
        v = y.transpose(0, 1)
        v.mul_(2)
        y.sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), np.full((2, 3), 2.0))
        assert v._version == y._version == 1


def test_inplace_through_view_with_grad_operand(torch):
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((3, 4)), rng.standard_normal(3)
    grads = []
    for m in (tapegrad, torch):
        x, z = m.tensor(a, requires_grad=True), m.tensor(b, requires_grad=True)
        y = x * 3.0
        y.diagonal().mul_(z)
        y.select(1, 3).add_(z * z)
        (y ** 2).sum().backward()
        grads.append((x.grad.numpy().copy(), z.grad.numpy().copy()))
    np.testing.assert_allclose(grads[0][0], grads[1][0])
    np.testing.assert_allclose(grads[0][1], grads[1][1])


def test_view_of_saved_tensor_invalidates_backward():
    x = tapegrad.randn(3, 3, requires_grad=True)
    y = x * 1.0
    z = y.exp()          # saves its result
    z.t().mul_(2)        # in-place through a view bumps the shared version
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward()


def test_copies_are_not_views():
    x = tapegrad.randn(3, 4)
    for out in (x.flip(0), x.roll(1), x.rot90(), x.repeat(1, 1), x.tril(), tapegrad.cat([x, x]), x.t().reshape(12),
                x.t().flatten(), x.t().contiguous(), tapegrad.diag(x)):
        assert not np.shares_memory(out.numpy(), x.numpy())


@pytest.mark.parametrize("expr", ["x.flatten(0, 0)", "x.contiguous()", "tapegrad.atleast_1d(x)",
                                  "tapegrad.atleast_2d(x)", "tapegrad.broadcast_tensors(x, x[0])[0]"])
def test_ops_returning_their_input(expr):
    x = tapegrad.randn(3, 4, requires_grad=True)   # noqa: F841 - used by eval
    assert eval(expr) is x


def test_grad_fn_names_of_reshapes(torch):
    for m in (tapegrad, torch):
        x = m.randn(3, 4, requires_grad=True)
        names = [x.reshape(12).grad_fn, x.t().reshape(12).grad_fn, x.t().flatten().grad_fn, x.t().ravel().grad_fn,
                 x.repeat_interleave(2).grad_fn, x.t().contiguous().grad_fn]
        names = [n.name() if m is tapegrad else type(n).__name__ for n in names]
        assert names == ["ViewBackward0", "UnsafeViewBackward0", "UnsafeViewBackward0", "ViewBackward0",
                         "ViewBackward0", "CloneBackward0"]


def test_multi_output_nodes_are_shared():
    x = tapegrad.randn(4, 3, requires_grad=True)
    for outs in (x.unbind(), x.split(2), x.chunk(2), tapegrad.var_mean(x, 0), tapegrad.aminmax(x, dim=1)):
        assert all(o.grad_fn is outs[0].grad_fn for o in outs)
    a, b = x.split([1, 3])
    assert (a._output_nr, b._output_nr) == (0, 1)
    (a.sum() * 2 + b.sum()).backward()
    np.testing.assert_allclose(x.grad.numpy(), np.array([[2.0] * 3] + [[1.0] * 3] * 3))


# --- printing -----------------------------------------------------------------------------------------------------
def test_return_types_print_like_torch(torch):
    a = np.array([[1.0, 5.0], [3.0, 2.0]])
    for op in ("max", "min", "median", "mode", "cummax", "cummin", "nanmedian"):
        ours = repr(getattr(tapegrad.tensor(a), op)(0))
        theirs = repr(getattr(torch.tensor(a), op)(0))
        assert ours == theirs.replace("torch.", "tapegrad."), (ours, theirs)
    ours = repr(tapegrad.aminmax(tapegrad.tensor(a)))
    assert ours == repr(torch.aminmax(torch.tensor(a))).replace("torch.", "tapegrad.")
    r = tapegrad.tensor(a).max(1)
    assert r.values is r[0] and r.indices is r[1] and len(r) == 2
    values, indices = r
    assert indices.dtype == tapegrad.int64
    assert type(r).__name__ == "max"


# --- dtype rules ----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("expr", [
    "m.tensor([1, 2]).sum()", "m.tensor([True, False]).sum()", "m.tensor([1, 2]).prod()",
    "m.tensor([1, 2], dtype=m.int8).cumsum(0)", "m.tensor([1, 2]).sum(dtype=m.float32)",
    "m.tensor([1, 2]).logsumexp(0)", "m.tensor([1, 2]).amax()", "m.tensor([1, 2], dtype=m.uint8).all()",
    "m.tensor([1., 2]).all(0)", "m.tensor([1, 2]).count_nonzero()", "m.tensor([1, 2]).nansum()",
    "m.tensor([1, 2]).median()", "m.tensor([3, 1]).argmax()", "m.cat([m.tensor([1]), m.tensor([1.5])])",
    "m.cat([m.zeros(0, dtype=m.int64), m.ones(2, 3)])", "m.stack([m.tensor([1]), m.tensor([True])])",
    "m.tensor([1, 2]).cumprod(0)", "m.tensor([[1, 2]]).max(1).values", "m.tensor(1.).var()",
])
def test_dtype_rules(torch, expr):
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours, theirs = eval(expr, {"m": tapegrad}), eval(expr, {"m": torch})
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6)


def test_var_degrees_of_freedom_warning(torch):
    with pytest.warns(UserWarning, match="degrees of freedom is <= 0"):
        out = tapegrad.tensor([[1.0, 2.0]]).var(0)
    with pytest.warns(UserWarning):
        ref = torch.tensor([[1.0, 2.0]]).var(0)
    np.testing.assert_array_equal(out.numpy(), ref.numpy())


def test_logsumexp_is_stable(torch):
    a = np.array([[1e4, 1e4 - 1, -1e4], [-1e4, -1e4, -1e4 + 2]])
    for dim in (0, 1, (0, 1)):
        np.testing.assert_allclose(tapegrad.tensor(a).logsumexp(dim).numpy(), torch.tensor(a).logsumexp(dim).numpy())
    inf = np.array([float("-inf"), float("-inf")])
    assert tapegrad.tensor(inf).logsumexp(0).item() == torch.tensor(inf).logsumexp(0).item()


# --- gradients the op table cannot check by finite differences ------------------------------------------------------
NAN = float("nan")


@pytest.mark.parametrize("expr", [
    "x.median()", "x.nanmedian()", "x.median(1).values", "x.nanmedian(1).values", "x.max()", "x.amax(1)",
    "x.max(1).values", "x.cummax(1).values", "x.cummin(1).values", "x.nansum()", "x.nanmean(1)",
    "x.amin(0)", "x.aminmax().max", "x.min()",
])
def test_nan_and_piecewise_grads_vs_torch(torch, expr):
    a = np.array([[1.0, NAN, 2.0, 1.0], [3.0, 1.0, 3.0, 0.0], [NAN, 4.0, NAN, 2.0]])
    res = []
    for m in (tapegrad, torch):
        x = m.tensor(a, requires_grad=True)
        y = eval(expr)
        w = m.tensor(np.arange(1.0, 1.0 + y.numel()).reshape(tuple(y.shape)))
        (y * w).sum().backward()
        res.append((np.asarray(y.detach().numpy()), x.grad.numpy().copy()))
    np.testing.assert_array_equal(res[0][0], res[1][0])
    np.testing.assert_allclose(res[0][1], res[1][1])


@pytest.mark.parametrize("expr", ["x.mode(1).values", "x.mode(0).values", "x.max(1).values", "x.median(0).values",
                                  "x.cummax(0).values", "x.amax()", "x.median()", "x.aminmax(dim=0).min"])
def test_tie_grads_vs_torch(torch, expr):
    a = np.array([[2.0, 1.0, 2.0, 1.0, 3.0], [5.0, 5.0, 4.0, 4.0, 4.0], [7.0, 6.0, 8.0, 9.0, 0.5]])
    res = []
    for m in (tapegrad, torch):
        x = m.tensor(a, requires_grad=True)
        y = eval(expr)
        w = m.tensor(np.arange(1.0, 1.0 + y.numel()).reshape(tuple(y.shape)))
        (y * w).sum().backward()
        res.append((np.asarray(y.detach().numpy()), x.grad.numpy().copy()))
    np.testing.assert_array_equal(res[0][0], res[1][0])
    np.testing.assert_allclose(res[0][1], res[1][1])


def test_prod_grads_with_zeros_vs_torch(torch):
    cases = [np.array([1.5, 0.0, 3.0, 0.0]), np.array([[2.0, 0.0, -1.0], [0.0, 0.0, 0.0], [1.0, 2.0, 3.0]]),
             np.array([0.0])]
    for a in cases:
        for args in ((), (0,), (-1, True)):
            res = []
            for m in (tapegrad, torch):
                x = m.tensor(a, requires_grad=True)
                y = x.prod(*args)
                g, = m.autograd.grad(y.sum(), x, create_graph=True)
                if g.requires_grad:
                    gg = m.autograd.grad((g * g).sum(), x)[0].numpy()
                else:
                    gg = np.zeros_like(a)
                res.append((g.detach().numpy(), gg))
            np.testing.assert_allclose(res[0][0], res[1][0])
            np.testing.assert_allclose(res[0][1], res[1][1], atol=1e-12)


def test_mode_picks_smallest_most_frequent_and_last_index(torch):
    a = np.array([[2.0, 1.0, 2.0, 1.0, 3.0], [5.0, 5.0, 4.0, 4.0, 4.0], [7.0, 6.0, 8.0, 9.0, 0.5]])
    ours, theirs = tapegrad.tensor(a).mode(1), torch.tensor(a).mode(1)
    np.testing.assert_array_equal(ours.values.numpy(), theirs.values.numpy())
    np.testing.assert_array_equal(ours.indices.numpy(), theirs.indices.numpy())


# --- errors --------------------------------------------------------------------------------------------------------
ERRORS = [
    ("m.tensor([1, 2]).mean()", RuntimeError, "mean\\(\\): could not infer output dtype"),
    ("m.randn(2, 3).max(5)", IndexError, "Dimension out of range \\(expected to be in range of \\[-2, 1\\], "
                                         "but got 5\\)"),
    ("m.randn(2, 3).sum(2)", IndexError, "Dimension out of range \\(expected to be in range of \\[-2, 1\\]"),
    ("m.randn(2, 3).transpose(0, 2)", IndexError, "but got 2\\)"),
    ("m.cat([m.randn(2, 2), m.randn(2)])", RuntimeError, "Tensors must have same number of dimensions: got 2 and 1"),
    ("m.cat([m.randn(2, 2), m.randn(3, 3)])", RuntimeError, "Sizes of tensors must match except in dimension 0. "
                                                            "Expected size 2 but got size 3 for tensor number 1"),
    ("m.cat([])", ValueError, "expected a non-empty list of Tensors"),
    ("m.cat([m.randn(2), m.tensor(1.)])", RuntimeError, "zero-dimensional tensor \\(at position 1\\) cannot be "
                                                        "concatenated"),
    ("m.stack([m.randn(2, 2), m.randn(2)])", RuntimeError, "stack expects each tensor to be equal size, but got "
                                                           "\\[2, 2\\] at entry 0 and \\[2\\] at entry 1"),
    ("m.randn(0, 3).max()", RuntimeError, "Expected reduction dim to be specified for input.numel\\(\\) == 0"),
    ("m.randn(0, 3).max(0)", IndexError, "max\\(\\): Expected reduction dim 0 to have non-zero size"),
    ("m.randn(0, 3).amax(0)", IndexError, "amax\\(\\): Expected reduction dim 0 to have non-zero size"),
    ("m.randn(0, 3).argmax()", IndexError, "argmax\\(\\): Expected reduction dim to be specified"),
    ("m.randn(0, 3).median(0)", IndexError, "median\\(\\): Expected reduction dim 0 to have non-zero size"),
    ("m.randn(0, 3).aminmax()", RuntimeError, "cannot compute aminmax over an empty dimension"),
    ("m.tensor([True]).argmax()", RuntimeError, "argmax\\(\\): does not support bool input"),
    ("m.tensor([1, 2]).std()", RuntimeError, "std and var only support floating point and complex dtypes"),
    ("m.tensor([1, 2]).nanmean()", RuntimeError, "nanmean\\(\\): expected input to have floating point"),
    ("m.randn(2, 3).split(0)", RuntimeError, "split_size can only be 0 if dimension size is 0"),
    ("m.randn(3, 4).split([1, 1])", RuntimeError, "split_with_sizes expects split_sizes to sum exactly to 3"),
    ("m.randn(2, 3).chunk(0)", RuntimeError, "chunk expects `chunks` to be greater than 0, got: 0"),
    ("m.randn(2, 3).narrow(0, 1, 5)", RuntimeError, "start \\(1\\) \\+ length \\(5\\) exceeds dimension size \\(2\\)"),
    ("m.randn(3, 4).narrow(0, 4, 0)", IndexError, "start out of range"),
    ("m.randn(2, 3).unflatten(1, (2, 2))", RuntimeError, "unflatten: Provided sizes \\[2, 2\\] don't multiply up"),
    ("m.randn(2, 3).movedim((0, 1), (1,))", RuntimeError, "movedim: Invalid source or destination dims"),
    ("m.randn(2, 3).movedim((0, 0), (1, 0))", RuntimeError, "movedim: repeated dim in `source`"),
    ("m.randn(2, 3).repeat(2)", RuntimeError, "Number of dimensions of repeat dims can not be smaller"),
    ("m.randn(2, 3).flip((0, 0))", RuntimeError, "dim 0 appears multiple times in the list of dims"),
    ("m.randn(2, 3).roll(1, (0, 1))", RuntimeError, "shifts and dimensions must align. shifts: 1, dims:2"),
    ("m.randn(2, 3).rot90(1, (0, 0))", RuntimeError, "expected rotation dims to be different"),
    ("m.tril(m.randn(3))", RuntimeError, "tril: input tensor must have at least 2 dimensions"),
    ("m.diag(m.randn(2, 2, 2))", RuntimeError, "diag\\(\\): Supports 1D or 2D tensors. Got 3D"),
    ("m.randn(2, 3).diagonal(0, 0, 0)", RuntimeError, "diagonal dimensions cannot be identical 0, 0"),
    ("m.fliplr(m.randn(3))", RuntimeError, "Input must be >= 2-d."),
    ("m.randn(2, 3).tensor_split(0)", RuntimeError, "number of sections must be larger than 0, got 0"),
    ("m.broadcast_shapes((2, 3), (2, 4))", RuntimeError, "Attempting to broadcast a dimension of length 4 at -1!"),
    ("m.randn(2, 3).t().view(6)", RuntimeError, "view size is not compatible with input tensor's size and stride"),
    ("m.randn(2, 3).reshape(4, -1)", RuntimeError, "shape '\\[4, -1\\]' is invalid for input of size 6"),
    ("m.randn(4, 6).hsplit(5)", RuntimeError, "torch.hsplit attempted to split along dimension 1, but the size of the "
                                              "dimension 6 is not divisible by the split_size 5!"),
    ("m.tensor(1.).hsplit(1)", RuntimeError, "hsplit requires a tensor with at least 1 dimension, but got a tensor "
                                             "with 0 dimensions!"),
    ("m.randn(4, 6).unfold(1, 7, 1)", RuntimeError, "maximum size for tensor at dimension 1 is 6 but size is 7"),
    ("m.randn(4, 6).unfold(1, 2, 0)", RuntimeError, "step is 0 but must be > 0"),
    ("m.randn(3).H", RuntimeError, "tensor.H is only supported on matrices \\(2-D tensors\\). Got 1-D tensor."),
]


@pytest.mark.parametrize("expr,exc,msg", ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_match_torch(torch, expr, exc, msg):
    with pytest.raises(exc, match=msg):
        eval(expr, {"m": tapegrad})
    with pytest.raises(exc, match=msg):
        eval(expr, {"m": torch})


# --- in-place view ops (the tensor itself changes shape) -------------------------------------------------------------
@pytest.mark.parametrize("expr", ["y.t_()", "y.transpose_(0, 1)", "y.swapaxes_(1, 0)", "y.swapdims_(0, -1)",
                                  "y.unsqueeze_(1)", "y.unsqueeze(0).squeeze_()", "y.unsqueeze(1).squeeze_(1)",
                                  "y.unsqueeze(1).squeeze_((1,))", "y.narrow(1, 1, 2).t_()"])
def test_inplace_view_ops_vs_torch(torch, expr):
    a = np.random.default_rng(3).standard_normal((2, 3))
    res = []
    for m in (tapegrad, torch):
        x = m.tensor(a, requires_grad=True)
        y = x * 2.0  # noqa: F841 - used by eval
        z = eval(expr)
        w = m.tensor(np.arange(1.0, 1.0 + z.numel()).reshape(tuple(z.shape)))
        (z * w).sum().backward()
        name = z.grad_fn.name() if m is tapegrad else type(z.grad_fn).__name__
        res.append((tuple(z.shape), z._version, name, x.grad.numpy().copy()))
    assert res[0][:3] == res[1][:3]
    np.testing.assert_allclose(res[0][3], res[1][3])


def test_inplace_view_op_on_leaf_is_an_error(torch):
    for m in (tapegrad, torch):
        with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place"):
            m.randn(2, 3, requires_grad=True).t_()
        x = m.randn(2, 3)
        assert x.t_() is x and tuple(x.shape) == (3, 2) and x._version == 1


def test_T_warns_like_torch(torch):
    torch.set_warn_always(True)         # (torch warns once per process: an earlier test's x.T would silence it)
    try:
        for m in (tapegrad, torch):
            with pytest.warns(UserWarning, match="The use of `x.T` on tensors of dimension other than 2"):
                m.randn(2, 3, 4).T
            with pytest.warns(UserWarning, match="Tensor.T is deprecated on 0-D tensors"):
                m.tensor(1.0).T
    finally:
        torch.set_warn_always(False)


def test_cumprod_grad_with_zeros_first_order_vs_torch(torch):
    rng = np.random.default_rng(5)
    for shape, d in [((4, 6), 1), ((6, 3), 0), ((3, 4, 5), -1), ((40, 50), 1)]:
        a, g = rng.standard_normal(shape), rng.standard_normal(shape)
        a[rng.random(shape) < 0.3] = 0.0
        grads = []
        for m in (tapegrad, torch):
            x = m.tensor(a, requires_grad=True)
            x.cumprod(d).backward(m.tensor(g))
            grads.append(x.grad.numpy())
        np.testing.assert_allclose(grads[0], grads[1], rtol=1e-10, atol=1e-12)


def test_return_types_namespace():
    r = tapegrad.randn(3, 4).max(0)
    assert isinstance(r, tapegrad.return_types.max) and isinstance(r, tuple)
    assert tapegrad.return_types.aminmax._fields == ("min", "max")


@pytest.mark.parametrize("expr,make_out", [
    ("m.sum(x, 1, out=o)", "m.empty(0)"), ("m.cumsum(x, 0, out=o)", "m.empty(2, 4)"),
    ("m.max(x, 1, out=o)", "(m.empty(0), m.empty(0, dtype=m.int64))"), ("m.argmax(x, 1, out=o)",
                                                                         "m.empty(0, dtype=m.int64)"),
    ("m.cat([x, x], out=o)", "m.empty(0)"), ("m.stack([x, x], out=o)", "m.empty(0)"), ("m.tril(x, out=o)",
                                                                                       "m.empty(0)"),
    ("m.cumsum(x, 0, out=o)", "m.empty(0, dtype=m.int64)"), ("m.logsumexp(x, 1, out=o)", "m.empty(0)"),
    ("m.aminmax(x, dim=0, out=o)", "(m.empty(0), m.empty(0))"), ("m.all(x, out=o)", "m.empty(0, dtype=m.bool)"),
])
def test_out_argument(torch, expr, make_out):
    import warnings
    a = np.random.default_rng(4).standard_normal((3, 4)).astype(np.float32)
    res = []
    for m in (tapegrad, torch):
        x, o = m.tensor(a), eval(make_out, {"m": m})
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = eval(expr, {"m": m, "x": x, "o": o})
        rs, os_ = (r, o) if isinstance(o, tuple) else ((r,), (o,))
        assert all(ri is oi for ri, oi in zip(rs, os_))
        res.append([(str(t.dtype).split(".")[-1], t.numpy().copy()) for t in os_])
    for (d0, v0), (d1, v1) in zip(*res):
        assert d0 == d1
        np.testing.assert_allclose(v0, v1, rtol=1e-6)


def test_out_argument_errors_like_torch(torch):
    for m in (tapegrad, torch):
        with pytest.raises(RuntimeError, match="sum\\(\\): functions with out=... arguments don't support automatic "
                                               "differentiation"):
            m.sum(m.randn(3, requires_grad=True), 0, out=m.empty(()))
        with pytest.warns(UserWarning, match="An output with one or more elements was resized"):
            m.cumsum(m.randn(3), 0, out=m.empty(2))
