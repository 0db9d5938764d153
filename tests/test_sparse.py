"""Sparse COO tensors (tapegrad/sparse.py) against torch: sparse_coo_tensor and to_sparse, their attributes and
printing, coalescing, sparse @ dense through every spelling (mm, spmm, sparse.mm, matmul, @) with gradients for the
dense operand and for the values, dense + sparse, and the graph examples' preprocessing (pytorch/examples gcn)."""

import warnings

import numpy as np
import pytest

import tapegrad


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # torch's "sparse invariant checks are implicitly disabled"
        yield


def _both(torch, fn):
    return fn(tapegrad), fn(torch)


def _same_repr(ours, theirs):
    # torch's text with tapegrad's names; "tapegrad." is 3 characters longer than "torch.", so a suffix that just
    # fits torch's line width can start the next line here (as for dense tensors): the spacing is not compared
    assert " ".join(repr(ours).split()) == " ".join(repr(theirs).replace("torch.", "tapegrad.").split()), \
        (repr(ours), repr(theirs))


MAKERS = [
    lambda m: m.sparse_coo_tensor(m.tensor([[0, 1, 1], [2, 0, 2]]), m.tensor([3., 4., 5.]), (2, 3)),
    lambda m: m.sparse_coo_tensor([[0, 1, 1], [2, 0, 2]], [3, 4, 5], (2, 3)),
    lambda m: m.sparse_coo_tensor(m.tensor([[0, 1, 1], [2, 0, 2]]), m.ones(3, 2)),
    lambda m: m.sparse_coo_tensor(np.array([[0, 1], [1, 0]], dtype=np.int32), m.ones(2), (2, 2), dtype=m.int64),
    lambda m: m.sparse_coo_tensor([[0, 0, 1], [1, 1, 0]], [1., 2., 3.], (2, 2)),
    lambda m: m.sparse_coo_tensor([[0, 1], [1, 0]], [1., 2.], (2, 2), requires_grad=True),
    lambda m: m.tensor([[0, 1.], [2, 0]]).to_sparse(),
    lambda m: m.tensor([[0, 1.], [2, 0]]).to_sparse(1),
    lambda m: m.tensor([[[0, 1.], [0, 0]], [[2, 0], [0, 3]]]).to_sparse(2),
    lambda m: m.zeros(2, 2).to_sparse(),
    lambda m: m.tensor(3.).to_sparse(),
    lambda m: m.tensor([[0, 1.], [2, 0]]).to_sparse().requires_grad_(),
]


@pytest.mark.parametrize("make", MAKERS, ids=range(len(MAKERS)))
def test_a_sparse_tensor_is_torch_s(torch, make):
    ours, theirs = _both(torch, make)
    _same_repr(ours, theirs)
    assert ours.is_sparse and ours.layout is tapegrad.sparse_coo and theirs.layout is torch.sparse_coo
    assert (ours._nnz(), ours.sparse_dim(), ours.dense_dim(), ours.is_coalesced(), tuple(ours.shape), str(ours.dtype)) \
        == (theirs._nnz(), theirs.sparse_dim(), theirs.dense_dim(), theirs.is_coalesced(), tuple(theirs.shape),
            str(theirs.dtype).replace("torch.", "tapegrad."))
    np.testing.assert_array_equal(ours.to_dense().detach().numpy(), theirs.to_dense().detach().numpy())
    np.testing.assert_array_equal(ours._indices().numpy(), theirs._indices().numpy())
    _same_repr(ours.coalesce(), theirs.coalesce())
    np.testing.assert_array_equal(ours.coalesce().values().detach().numpy(),
                                  theirs.coalesce().values().detach().numpy())
    assert ours.to("cpu").is_sparse and ours.to_sparse() is ours


def test_uncoalesced_indices_and_errors_as_torch(torch):
    def check(fn):
        with pytest.raises(RuntimeError) as theirs:
            fn(torch)
        with pytest.raises(RuntimeError) as ours:
            fn(tapegrad)
        assert str(ours.value) == str(theirs.value)
    dup = MAKERS[4]
    check(lambda m: dup(m).indices())
    check(lambda m: dup(m).values())
    check(lambda m: m.sparse_coo_tensor([[0, 1, 1], [2, 0, 2]], [3., 4.], (2, 3)))
    check(lambda m: m.tensor([[0, 1.], [2, 0]]).to_sparse(3))
    with pytest.raises(RuntimeError, match="size is inconsistent with indices: for dim 1, size is 2 but found index 2"):
        tapegrad.sparse_coo_tensor([[0, 1], [2, 0]], [1., 2.], (2, 2))     # (torch: only with check_invariants)
    with pytest.raises(RuntimeError, match="sparse_coo layout only"):
        tapegrad.ones(2, 2).to_sparse(layout=tapegrad.sparse_csr)

def test_saving_a_sparse_tensor_is_refused_clearly(tmp_path):
    with pytest.raises(RuntimeError, match="cannot save sparse tensors"):
        tapegrad.save({"adj": tapegrad.ones(2).to_sparse()}, tmp_path / "sparse.pt")
    assert not (tmp_path / "sparse.pt").exists()


PRODUCTS = [lambda m, s, d: m.mm(s, d), lambda m, s, d: m.spmm(s, d), lambda m, s, d: m.sparse.mm(s, d),
            lambda m, s, d: s @ d, lambda m, s, d: m.matmul(s, d), lambda m, s, d: (d.t() @ s.t().to_dense()).t()]


@pytest.mark.parametrize("product", PRODUCTS, ids=["mm", "spmm", "sparse.mm", "@", "matmul", "dense @ sparse"])
def test_sparse_times_dense_values_and_gradients(torch, product):
    rng = np.random.default_rng(0)
    dense = rng.standard_normal((3, 2))
    vals = rng.standard_normal(4)
    out = {}
    for m in (tapegrad, torch):
        v = m.tensor(vals, requires_grad=True)
        s = m.sparse_coo_tensor(m.tensor([[0, 1, 2, 0], [1, 0, 2, 1]]), v, (3, 3))
        d = m.tensor(dense, requires_grad=True)
        r = product(m, s, d)
        (r * r).sum().backward()
        out[m.__name__] = (r.detach().numpy(), d.grad.numpy(), v.grad.numpy(), r.layout is m.strided)
    for a, b in zip(out["tapegrad"], out["torch"]):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


def test_sparse_ops_gradcheck():
    idx = tapegrad.tensor([[0, 1, 2, 0], [1, 0, 2, 1]])
    dense = tapegrad.randn(3, 2, dtype=tapegrad.float64, requires_grad=True)
    vals = tapegrad.randn(4, dtype=tapegrad.float64, requires_grad=True)
    assert tapegrad.autograd.gradcheck(lambda v, d: tapegrad.sparse_coo_tensor(idx, v, (3, 3)) @ d, (vals, dense))
    x = tapegrad.randn(3, 3, dtype=tapegrad.float64, requires_grad=True)
    assert tapegrad.autograd.gradcheck(lambda x: x.to_sparse().to_dense() * 2, (x,))
    assert tapegrad.autograd.gradcheck(lambda x: tapegrad.spmm(x.to_sparse(), x), (x,))


def test_gcn_preprocessing_as_torch(torch):
    # pytorch/examples gcn's load_cora: sparse diagonals, a COO adjacency with self-loops, the renormalisation
    rng = np.random.default_rng(3)
    feats = (rng.random((6, 5)) < 0.4).astype(np.int32)
    edges = np.array([[0, 1], [1, 2], [2, 0], [3, 4], [4, 5], [5, 3], [0, 1]], dtype=np.int32)

    def load(m):
        features = m.FloatTensor(feats)
        scale = 1 / m.sum(features, dim=1)
        scale[scale == float("inf")] = 0
        features = m.diag(scale).to_sparse() @ features
        adj = m.sparse_coo_tensor(edges.T, m.ones(len(edges)), (6, 6), dtype=m.int64)
        adj = m.eye(6) + adj
        deg = m.sqrt(1 / m.sum(adj, dim=1))
        deg[deg == float("inf")] = 0
        deg = m.diag(deg).to_sparse()
        adj = deg @ adj @ deg
        return features.to_sparse(), adj.to_sparse()

    (f_ours, a_ours), (f_theirs, a_theirs) = load(tapegrad), load(torch)
    for ours, theirs in ((f_ours, f_theirs), (a_ours, a_theirs)):
        _same_repr(ours, theirs)
        np.testing.assert_allclose(ours.to_dense().numpy(), theirs.to_dense().numpy(), rtol=1e-6)


def test_a_sparse_tensor_too_large_to_hold_dense_is_refused_clearly():
    """tapegrad holds a COO tensor's dense values: a size past 1 GiB dense is refused before any allocation."""
    i, v = tapegrad.tensor([[0, 99999], [5, 99998]]), tapegrad.tensor([1.0, 2.0])
    with pytest.raises(RuntimeError, match=r"size \(100000, 100000\) of float32 would take 37.3 GiB"):
        tapegrad.sparse_coo_tensor(i, v, (100000, 100000))
    small = tapegrad.tensor([[0, 9999], [5, 99]])
    assert tapegrad.sparse_coo_tensor(small, v, (10000, 100)).to_dense().sum().item() == 3.0


LEGACY_SPARSE = [
    lambda m: m.sparse.FloatTensor(m.tensor([[0, 1], [1, 0]]), m.tensor([1., 2.]), m.Size([2, 2])),
    lambda m: m.sparse.FloatTensor(m.tensor([[0, 1], [1, 0]]), m.tensor([1., 2.])),
    lambda m: m.sparse.FloatTensor(m.tensor([[0, 1], [1, 0]]), m.tensor([1., 2.], dtype=m.float64), (3, 3)),
    lambda m: m.sparse.LongTensor(m.tensor([[0, 1], [1, 0]]), m.tensor([1., 2.]), [2, 2]),
    lambda m: m.sparse.DoubleTensor(m.tensor([[0, 2]]), m.ones(2, 3, dtype=m.float64), (4, 3)),
    lambda m: m.sparse.FloatTensor(2, 3),
    lambda m: m.sparse.LongTensor(m.Size([2, 3])),
    lambda m: m.sparse.DoubleTensor(),
]


@pytest.mark.parametrize("make", LEGACY_SPARSE, ids=range(len(LEGACY_SPARSE)))
def test_legacy_sparse_constructors_as_torch(torch, make):
    # torch.sparse.FloatTensor(indices, values, size) (pygcn's utils): the values keep their dtype, as torch's
    ours, theirs = _both(torch, make)
    _same_repr(ours, theirs)
    assert ours.is_sparse and ours.dtype.name == str(theirs.dtype).replace("torch.", "")
    assert ours.type() == theirs.type()
    np.testing.assert_array_equal(ours.to_dense().numpy(), theirs.to_dense().numpy())


def test_legacy_sparse_types_check_layout_and_dtype(torch):
    for m in (tapegrad, torch):
        s = m.tensor([[0, 1.]]).to_sparse()
        assert isinstance(s, m.sparse.FloatTensor) and not isinstance(s, m.sparse.DoubleTensor)
        assert not isinstance(s, m.FloatTensor) and not isinstance(m.zeros(1), m.sparse.FloatTensor)
        assert m.sparse.FloatTensor.is_sparse and m.sparse.FloatTensor.dtype is m.float32
        assert m.zeros(1).to_sparse().type() == "torch.sparse.FloatTensor"
        assert s.type(m.sparse.DoubleTensor).dtype is m.float64
    for args in ([[1., 2.]], [tapegrad.tensor([[0.]]), tapegrad.tensor([1.]), (1,)]):
        with pytest.raises((TypeError, RuntimeError)) as ours:
            tapegrad.sparse.FloatTensor(*args)
        with pytest.raises((TypeError, RuntimeError)) as theirs:
            torch.sparse.FloatTensor(*[torch.tensor(a.numpy()) if isinstance(a, tapegrad.Tensor) else a for a in args])
        assert type(ours.value) is type(theirs.value)
    with pytest.warns(UserWarning, match="torch.sparse.SparseTensor.indices, values, shape, .*deprecated"):
        tapegrad.sparse.FloatTensor(tapegrad.tensor([[0]]), tapegrad.tensor([1.]), (1,))
