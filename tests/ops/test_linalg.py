"""Linear algebra beyond the spec table: error wording vs torch, named tuples, grad_fn names hidden by the
specs' sign normalisation, and a few API forms (sublists, Tensor methods, the tapegrad.linalg namespace)."""

import math
import warnings

import numpy as np
import pytest

import tapegrad

SING = [[1.0, 2.0], [2.0, 4.0]]
NOT_PD = [[1.0, 2.0], [2.0, 1.0]]

ERRORS = [
    ("inv_singular", lambda m: m.linalg.inv(m.tensor(SING))),
    ("inv_singular_batch", lambda m: m.linalg.inv(m.stack([m.eye(2), m.tensor(SING)]))),
    ("inv_zero", lambda m: m.linalg.inv(m.zeros(3, 3))),
    ("inv_nonsquare", lambda m: m.linalg.inv(m.zeros(2, 3))),
    ("inv_1d", lambda m: m.linalg.inv(m.zeros(3))),
    ("inv_int", lambda m: m.linalg.inv(m.zeros(3, 3, dtype=m.long))),
    ("det_nonsquare", lambda m: m.linalg.det(m.zeros(2, 3))),
    ("solve_singular", lambda m: m.linalg.solve(m.tensor(SING), m.ones(2))),
    ("solve_shapes", lambda m: m.linalg.solve(m.eye(3), m.ones(4, 2))),
    ("solve_shapes_vec", lambda m: m.linalg.solve(m.eye(3), m.ones(4))),
    ("cholesky_not_pd", lambda m: m.linalg.cholesky(m.tensor(NOT_PD))),
    ("cholesky_not_pd_batch", lambda m: m.linalg.cholesky(m.stack([m.eye(2), m.tensor(NOT_PD)]))),
    ("mm_shapes", lambda m: m.mm(m.zeros(2, 3), m.zeros(4, 5))),
    ("mm_1d", lambda m: m.mm(m.zeros(3), m.zeros(3, 5))),
    ("mm_dtype", lambda m: m.mm(m.zeros(3, 3), m.zeros(3, 3, dtype=m.float64))),
    ("matmul_dtype", lambda m: m.matmul(m.zeros(3, 3), m.zeros(3, 3, dtype=m.float64))),
    ("bmm_dtype", lambda m: m.bmm(m.zeros(2, 3, 3), m.zeros(2, 3, 3, dtype=m.float64))),
    ("matmul_3d_3d_dtype", lambda m: m.zeros(2, 3, 3, dtype=m.float64) @ m.zeros(2, 3, 3)),
    ("matmul_2d_3d_dtype", lambda m: m.zeros(3, 3) @ m.zeros(2, 3, 3, dtype=m.float64)),
    ("matmul_1d_3d_dtype", lambda m: m.zeros(3) @ m.zeros(2, 3, 3, dtype=m.float64)),
    ("matmul_4d_2d_dtype", lambda m: m.zeros(2, 2, 3, 3) @ m.zeros(3, 3, dtype=m.float64)),
    ("mv_dtype", lambda m: m.mv(m.zeros(3, 3, dtype=m.float64), m.zeros(3))),
    ("matmul_2d_1d_dtype", lambda m: m.zeros(3, 3) @ m.zeros(3, dtype=m.float64)),
    ("matmul_3d_1d_dtype", lambda m: m.zeros(2, 3, 3, dtype=m.float64) @ m.zeros(3)),
    ("matmul_1d_1d_dtype", lambda m: m.zeros(3) @ m.zeros(3, dtype=m.float64)),
    ("matmul_1d_2d_dtype", lambda m: m.zeros(3) @ m.zeros(3, 3, dtype=m.float64)),
    ("matmul_shapes", lambda m: m.matmul(m.zeros(3, 4), m.zeros(5, 6))),
    ("matmul_shapes_batched", lambda m: m.matmul(m.zeros(2, 3, 4), m.zeros(5, 6))),
    ("bmm_2d", lambda m: m.bmm(m.zeros(3, 4), m.zeros(4, 6))),
    ("bmm_shapes", lambda m: m.bmm(m.zeros(2, 3, 4), m.zeros(2, 5, 6))),
    ("mv_size", lambda m: m.mv(m.zeros(2, 3), m.zeros(4))),
    ("mv_dims", lambda m: m.mv(m.zeros(2, 3), m.zeros(3, 1))),
    ("dot_dims", lambda m: m.dot(m.zeros(2, 3), m.zeros(4))),
    ("dot_size", lambda m: m.dot(m.zeros(3), m.zeros(4))),
    ("dot_dtype", lambda m: m.dot(m.zeros(3), m.zeros(3, dtype=m.float64))),
    ("outer_dims", lambda m: m.outer(m.zeros(2, 3), m.zeros(4))),
    ("cross_len", lambda m: m.linalg.cross(m.zeros(2, 4), m.zeros(2, 4))),
    ("trace_3d", lambda m: m.trace(m.zeros(2, 3, 4))),
    ("einsum_size", lambda m: m.einsum("ij,jk", m.zeros(2, 3), m.zeros(4, 5))),
    ("einsum_fewer", lambda m: m.einsum("ij,jk", m.zeros(2, 3))),
    ("einsum_more", lambda m: m.einsum("ij", m.zeros(2, 3), m.zeros(2, 3))),
    ("einsum_ndim", lambda m: m.einsum("ijk", m.zeros(2, 3))),
    ("einsum_out", lambda m: m.einsum("ij->k", m.zeros(2, 3))),
    ("cdist_1d", lambda m: m.cdist(m.zeros(3), m.zeros(3))),
    ("cdist_cols", lambda m: m.cdist(m.zeros(3, 2), m.zeros(3, 4))),
    ("eigh_uplo", lambda m: m.linalg.eigh(m.eye(2), UPLO="X")),
    ("qr_mode", lambda m: m.linalg.qr(m.eye(2), mode="x")),
    ("matrix_power_nonsquare", lambda m: m.linalg.matrix_power(m.zeros(2, 3), 2)),
    ("norm_str_vector", lambda m: m.linalg.norm(m.zeros(3), "fro")),
    ("norm_3d_ord", lambda m: m.linalg.norm(m.zeros(2, 2, 2), 2)),
    ("vector_norm_int", lambda m: m.linalg.vector_norm(m.zeros(3, dtype=m.long))),
    ("norm_int", lambda m: m.norm(m.zeros(3, dtype=m.long))),
    ("matrix_norm_ord", lambda m: m.linalg.matrix_norm(m.zeros(3, 3), 3)),
    ("solve_triangular_int", lambda m: m.linalg.solve_triangular(m.eye(2, dtype=m.long), m.ones(2, 1), upper=False)),
    ("cholesky_solve_dtypes", lambda m: m.cholesky_solve(m.ones(2, 1, dtype=m.float64), m.eye(2))),
    ("triangular_solve_dtypes", lambda m: m.triangular_solve(m.ones(2, 1, dtype=m.float64), m.eye(2))),
    ("matmul_mv_dtypes", lambda m: m.ones(3, 2, 2) @ m.ones(2, dtype=m.float64)),
    ("mv_dtypes", lambda m: m.mv(m.ones(2, 2, dtype=m.long), m.ones(2))),
    ("matmul_dot_dtypes", lambda m: m.ones(2, dtype=m.float16) @ m.ones(2)),
    ("matmul_mm_dtypes", lambda m: m.ones(2) @ m.ones(2, 2, dtype=m.int64)),
    ("matmul_bmm_dtypes", lambda m: m.ones(2, 2) @ m.ones(3, 2, 2, dtype=m.float64)),
]


@pytest.mark.parametrize("name,fn", ERRORS, ids=[e[0] for e in ERRORS])
@pytest.mark.filterwarnings("ignore:torch.triangular_solve is deprecated")
def test_error_wording_matches_torch(torch, name, fn):
    with pytest.raises(Exception) as th:
        fn(torch)
    with pytest.raises(Exception) as tg:
        fn(tapegrad)
    want = str(th.value).split("\n")[0]
    assert want in str(tg.value), f"{name}: {tg.value!s} does not contain torch's {want!r}"
    assert isinstance(tg.value, RuntimeError) == isinstance(th.value, RuntimeError)
    if isinstance(th.value, torch.linalg.LinAlgError):
        assert isinstance(tg.value, tapegrad.linalg.LinAlgError)


def _spd(n, batch=()):
    a = np.random.default_rng(3).standard_normal(batch + (n, n))
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


def _both(torch, arr):
    return (tapegrad.tensor(arr, requires_grad=True), torch.tensor(arr, requires_grad=True))


NAMED = [
    ("linalg.slogdet", lambda m, x: m.linalg.slogdet(x)), ("slogdet", lambda m, x: m.slogdet(x)),
    ("linalg.inv_ex", lambda m, x: m.linalg.inv_ex(x)), ("linalg.cholesky_ex", lambda m, x: m.linalg.cholesky_ex(x)),
    ("linalg.qr", lambda m, x: m.linalg.qr(x)), ("qr", lambda m, x: m.qr(x)),
    ("linalg.eigh", lambda m, x: m.linalg.eigh(x)), ("linalg.svd", lambda m, x: m.linalg.svd(x)),
    ("svd", lambda m, x: m.svd(x)), ("linalg.lstsq", lambda m, x: m.linalg.lstsq(x, x)),
    ("linalg.eigvalsh", lambda m, x: (m.linalg.eigvalsh(x),)), ("linalg.svdvals", lambda m, x: (m.linalg.svdvals(x),)),
    ("linalg.matrix_power0", lambda m, x: (m.linalg.matrix_power(x, 0),)),
    ("linalg.matrix_power1", lambda m, x: (m.linalg.matrix_power(x, 1),)),
    ("linalg.matrix_power-1_batched", lambda m, x: (m.linalg.matrix_power(x.expand(2, 3, 3), -1),)),
    ("logdet", lambda m, x: (m.logdet(x),)), ("cholesky", lambda m, x: (m.cholesky(x),)),
]


@pytest.mark.parametrize("name,fn", NAMED, ids=[n[0] for n in NAMED])
def test_named_tuples_and_grad_fn_names(torch, name, fn):
    x_tg, x_th = _both(torch, _spd(3))
    with warnings.catch_warnings():      # torch's deprecation of torch.qr / torch.cholesky (tapegrad gives none)
        warnings.filterwarnings("ignore", r"torch\.(qr|cholesky) is deprecated", UserWarning)
        r_tg, r_th = fn(tapegrad, x_tg), fn(torch, x_th)
    assert len(r_tg) == len(r_th)
    if hasattr(r_th, "_fields"):
        assert r_tg._fields == r_th._fields
        assert type(r_tg).__name__ == type(r_th).__name__
    for a, b in zip(r_tg, r_th):
        assert tuple(a.shape) == tuple(b.shape)
        assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1]
        assert a.requires_grad == b.requires_grad
        if b.grad_fn is not None:
            assert a.grad_fn.name() == type(b.grad_fn).__name__


def test_qr_backward_errors(torch):
    x = tapegrad.randn(4, 3, dtype=tapegrad.float64, requires_grad=True)
    with pytest.raises(RuntimeError, match="not differentiable when mode='complete' and nrows > ncols"):
        tapegrad.linalg.qr(x, mode="complete").Q.sum().backward()
    with pytest.raises(RuntimeError, match="which is not computed when mode='r'"):
        tapegrad.linalg.qr(x, mode="r").R.sum().backward()


def test_inv_ex_reports_singular_without_raising(torch):
    a = np.array([np.eye(2), SING])
    res = tapegrad.linalg.inv_ex(tapegrad.tensor(a))
    want = torch.linalg.inv_ex(torch.tensor(a))
    np.testing.assert_array_equal(res.info.numpy(), want.info.numpy())
    np.testing.assert_allclose(res.inverse.numpy()[0], np.eye(2))
    ch = tapegrad.linalg.cholesky_ex(tapegrad.tensor(np.array([np.eye(2), NOT_PD])))
    np.testing.assert_array_equal(ch.info.numpy(), torch.linalg.cholesky_ex(torch.tensor(np.array(
        [np.eye(2), NOT_PD]))).info.numpy())
    with pytest.raises(tapegrad.linalg.LinAlgError):
        tapegrad.linalg.inv_ex(tapegrad.tensor(a), check_errors=True)


def test_methods_and_aliases(torch):
    a = np.random.default_rng(0).standard_normal((3, 3)) + 3 * np.eye(3)
    t, th = tapegrad.tensor(a), torch.tensor(a)
    for name, call in [("mm", lambda x: x.mm(x)), ("matmul", lambda x: x.matmul(x)), ("matmul_op", lambda x: x @ x),
                       ("inverse", lambda x: x.inverse()), ("det", lambda x: x.det()), ("trace", lambda x: x.trace()),
                       ("norm", lambda x: x.norm(p=1)), ("kron", lambda x: x.kron(x)),
                       ("matrix_power", lambda x: x.matrix_power(-2)), ("pinverse", lambda x: x.pinverse()),
                       ("logdet", lambda x: x.logdet()), ("outer", lambda x: x[0].outer(x[1])),
                       ("addmm_", lambda x: x.clone().addmm_(x, x, beta=2)),
                       ("diagonal", lambda x: (tapegrad if isinstance(x, tapegrad.Tensor) else torch).linalg.diagonal(x)),
                       ("multi_dot", lambda x: (tapegrad if isinstance(x, tapegrad.Tensor) else torch).linalg.multi_dot(
                           [x, x, x]))]:
        np.testing.assert_allclose(np.asarray(call(t)), call(th).numpy(), rtol=1e-10, atol=1e-12, err_msg=name)


def test_second_derivative_of_inv_uses_tapegrad_ops(torch):
    a = np.random.default_rng(1).standard_normal((3, 3)) + 3 * np.eye(3)
    res = []
    for m in (tapegrad, torch):
        x = m.tensor(a, requires_grad=True)
        g, = m.autograd.grad(m.linalg.inv(x).sum() + m.linalg.det(x), x, create_graph=True)
        gg, = m.autograd.grad((g * g).sum(), x)
        res.append(np.asarray(gg.detach().numpy()))
    np.testing.assert_allclose(res[0], res[1], rtol=1e-9)


def test_norm_variants_values(torch):
    a = np.random.default_rng(2).standard_normal((2, 3, 4))
    for kw in [dict(), dict(p=1), dict(p=math.inf, dim=1), dict(p="fro", dim=(1, 2), keepdim=True),
               dict(p="nuc", dim=(1, 2)), dict(p=0.5, dim=-1)]:
        got = tapegrad.norm(tapegrad.tensor(a), **kw).numpy()
        np.testing.assert_allclose(got, torch.norm(torch.tensor(a), **kw).numpy(), rtol=1e-10, err_msg=str(kw))


def test_solve_triangular_singular_gives_inf_nan_as_torch(torch):
    a, b = np.zeros((3, 3)), np.ones((3, 1))
    got = tapegrad.linalg.solve_triangular(tapegrad.tensor(a), tapegrad.tensor(b), upper=True).numpy()
    want = torch.linalg.solve_triangular(torch.tensor(a), torch.tensor(b), upper=True).numpy()
    np.testing.assert_array_equal(got, want)


def test_linalg_namespace_lists_torch_names(torch):
    for name in tapegrad.linalg.__all__:
        assert hasattr(torch.linalg, name), name


def test_matrix_exp_float32_is_as_accurate_as_float32_allows(torch):
    """exp(A) is computed in float64 (scaling and squaring, degree-13 Padé) and cast: the float32 result is within
    float32 rounding of the float64 one for norms from 1e-3 to 100 (torch's own float32 error is ~1e-5 relative)."""
    import tapegrad
    rng = np.random.default_rng(0)
    for _ in range(100):
        n = int(rng.integers(1, 6))
        a = (rng.standard_normal((n, n)) * 10 ** rng.uniform(-3, 2)).astype(np.float32)
        ref = torch.matrix_exp(torch.tensor(a, dtype=torch.float64)).numpy()
        ours = tapegrad.linalg.matrix_exp(tapegrad.tensor(a)).numpy()
        assert ours.dtype == np.float32
        if not 1e-30 < np.abs(ref).max() < 1e37:          # beyond float32: inf or 0 in both
            continue
        assert np.abs(ours - ref).max() <= 1e-6 * np.abs(ref).max()
    b = rng.standard_normal((3, 2, 4, 4))
    np.testing.assert_allclose(tapegrad.matrix_exp(tapegrad.tensor(b)).numpy(),
                               torch.matrix_exp(torch.tensor(b)).numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("src,dst", [("float64", "float32"), ("float32", "float16"), ("float32", "float64"),
                                     ("int64", "float32"), ("complex128", "complex64"), ("complex64", "float32"),
                                     ("float32", "complex64"), ("float16", "bfloat16"), ("complex64", "complex128"),
                                     ("float16", "float32")])
def test_vector_norm_dtype_checks_match_torch(torch, src, dst):
    """``dtype=`` is refused when it narrows the input, changes real/complex, or the input is not floating
    (torch._foreach_norm(..., dtype=) reaches the same checks)."""
    import tapegrad

    def run(T):
        x = T.tensor([3.0, 4.0]).to(getattr(T, src))
        try:
            r = T.linalg.vector_norm(x, dtype=getattr(T, dst))
        except RuntimeError as e:
            return str(e)
        return str(r.dtype).split(".")[-1], r.real.item() if r.is_complex() else r.item()
    assert run(tapegrad) == run(torch)


@pytest.mark.parametrize("a_dtype,b_dtype", [("float32", "float64"), ("float64", "float32"), ("float32", "int64")])
@pytest.mark.parametrize("left", [True, False])
def test_solve_triangular_takes_b_in_as_dtype(torch, a_dtype, b_dtype, left):
    """torch solves in A's dtype: B of another dtype is converted (a float64 value scored by a float32
    MultivariateNormal); B's gradient comes back in B's dtype."""
    a = np.array([[1.0, 0.0], [0.5, 2.0]])
    b = np.array([[0.3, -1.0], [2.0, 0.5]])
    res = []
    for m in (torch, tapegrad):
        A = m.tensor(a, dtype=getattr(m, a_dtype), requires_grad=True)
        B = m.tensor(b, dtype=getattr(m, b_dtype), requires_grad=b_dtype != "int64")
        x = m.linalg.solve_triangular(A, B, upper=False, left=left)
        x.sum().backward()
        res.append((str(x.dtype).split(".")[-1], x.detach().double().numpy(), A.grad.double().numpy(),
                    None if B.grad is None else (str(B.grad.dtype).split(".")[-1], B.grad.double().numpy())))
    assert res[0][0] == res[1][0]
    np.testing.assert_allclose(res[1][1], res[0][1], rtol=1e-6)
    np.testing.assert_allclose(res[1][2], res[0][2], rtol=1e-6)
    assert (res[0][3] is None) == (res[1][3] is None)
    if res[0][3] is not None:
        assert res[0][3][0] == res[1][3][0]
        np.testing.assert_allclose(res[1][3][1], res[0][3][1], rtol=1e-6)
    mvn = [m.distributions.MultivariateNormal(m.zeros(2), scale_tril=m.tensor(a, dtype=m.float32))
           for m in (torch, tapegrad)]
    lp = [d.log_prob(m.tensor([[0.3, -0.2]], dtype=m.float64)) for d, m in zip(mvn, (torch, tapegrad))]
    assert str(lp[0].dtype).split(".")[-1] == str(lp[1].dtype).split(".")[-1]
    np.testing.assert_allclose(lp[1].numpy(), lp[0].numpy(), rtol=1e-6)
EINSUM_LAYOUTS = [    # (equation, operand shapes, permutation applied to each operand first or None)
    ("bhid,bhjd->bhij", [(2, 17, 2, 8), (2, 17, 2, 8)], [(0, 2, 1, 3), (0, 2, 1, 3)]),
    ("bhij,hg->bgij", [(2, 2, 5, 5), (2, 3)], None),
    ("bhij,bhjd->bhid", [(2, 2, 5, 5), (2, 2, 5, 4)], None),
    ("ij,jk->ik", [(3, 4), (4, 5)], None),
    ("ij,kj->ik", [(3, 4), (5, 4)], None),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)], None),
    ("bnd,nd->bn", [(2, 3, 4), (3, 4)], None),
    ("ij,j->i", [(3, 4), (4,)], None),
    ("i,i->", [(4,), (4,)], None),
    ("bhnd,bhne->bhde", [(2, 3, 5, 4), (2, 3, 5, 6)], None),
    ("bhdn,bhde->bhen", [(2, 3, 4, 5), (2, 3, 4, 6)], None),
    ("bhnd,bhde->bhne", [(2, 3, 5, 4), (2, 3, 4, 6)], None),
    ("...id,...jd->...ij", [(2, 3, 5, 4), (2, 3, 6, 4)], None),
    ("bid,bjd->bij", [(2, 5, 4), (2, 6, 4)], [(1, 0, 2), (0, 1, 2)]),
    ("ijk,kl->lji", [(2, 3, 4), (4, 5)], None),
    ("bxyd,rd->bxyr", [(2, 3, 4, 5), (6, 5)], None),
    ("nb,bm->mn", [(3, 4), (4, 5)], None),
    ("Ab,bA->A", [(3, 4), (4, 3)], None),
]


def _einsum_layout(m, eq, shapes, perms):
    ops = []
    for k, shp in enumerate(shapes):
        t = m.arange(float(np.prod(shp))).reshape(shp) / 7
        if perms is not None:
            inv = np.argsort(perms[k])
            t = t.permute(*[int(i) for i in inv]).contiguous().permute(*perms[k])
        ops.append(t)
    r = m.einsum(eq, *ops)
    return r.shape, r.stride(), r.is_contiguous()


@pytest.mark.parametrize("eq,shapes,perms", EINSUM_LAYOUTS, ids=[e[0] for e in EINSUM_LAYOUTS])
def test_einsum_result_layout_matches_torch(torch, eq, shapes, perms):
    """einsum's result lies in memory as torch's (a contraction of two operands is one bmm whose rows are the
    batch dims, then the left-only, then the right-only dims): what a following dropout draws, in memory order,
    and whether ``view`` works depend on it."""
    assert _einsum_layout(tapegrad, eq, shapes, perms) == _einsum_layout(torch, eq, shapes, perms)


def test_dropout_after_einsum_draws_torch_mask(torch):
    def run(m):
        m.manual_seed(0)
        q, k = m.randn(2, 5, 2, 4).transpose(1, 2), m.randn(2, 5, 2, 4).transpose(1, 2)
        return m.nn.functional.dropout(m.einsum("bhid,bhjd->bhij", q, k), 0.5).numpy()
    np.testing.assert_allclose(run(tapegrad), run(torch), rtol=1e-6)


EINSUM_MIXED = [("i,j->ij", "long", "float32"), ("ij,ij->ij", "float64", "float32"), ("ij,j->i", "long", "float32"),
                ("ij,jk->ijk", "float32", "float16"), ("ij,j->ij", "int32", "int64"), ("ij,jk->i", "float32", "float64"),
                ("i,i->i", "bool", "float32"), ("ij,jk->ik", "float32", "float64")]


def _einsum_mixed(m, eq, da, db):
    shapes = {"i": 2, "j": 3, "k": 4}
    ins = eq.split("->")[0].split(",")
    a = m.ones(*[shapes[c] for c in ins[0]]).to(getattr(m, da))
    b = m.linspace(0.5, 2.0, int(np.prod([shapes[c] for c in ins[1]]))).reshape(*[shapes[c] for c in ins[1]]) \
        .to(getattr(m, db))
    try:
        r = m.einsum(eq, a, b)
    except RuntimeError as e:
        return str(e)
    return str(r.dtype).split(".")[-1], r.double().numpy().round(6).tolist()


@pytest.mark.parametrize("eq,da,db", EINSUM_MIXED, ids=[f"{e}-{a}-{b}" for e, a, b in EINSUM_MIXED])
def test_einsum_mixed_dtypes_as_torch(torch, eq, da, db):
    """Two dtypes: promoted when nothing is summed over both operands (torch multiplies elementwise, with type
    promotion), torch's bmm error when something is (RoPE's ``einsum('i,j->ij', arange(n), inv_freq)``)."""
    assert _einsum_mixed(tapegrad, eq, da, db) == _einsum_mixed(torch, eq, da, db)


def test_einsum_promoted_operand_gradient(torch):
    def run(m):
        t = m.arange(4)
        f = m.tensor([0.5, 1.5, -2.0], dtype=m.float64, requires_grad=True)
        m.einsum("i,j->ij", t, f).sin().sum().backward()
        return f.grad.numpy()
    np.testing.assert_allclose(run(tapegrad), run(torch), rtol=1e-12)
    f = tapegrad.tensor([0.5, 1.5, -2.0], dtype=tapegrad.float64, requires_grad=True)
    assert tapegrad.autograd.gradcheck(lambda v: tapegrad.einsum("i,j->ij", tapegrad.arange(3), v), (f,))
