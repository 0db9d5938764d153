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

@pytest.mark.parametrize("coalesced", [True, False])
def test_sparse_tensors_save_and_load_in_torch_s_format(torch, tmp_path, coalesced):
    # a GCN checkpoint holding its adjacency: files either library wrote load in the other, weights_only too
    def make(m):
        a = m.sparse_coo_tensor([[1, 0, 1], [2, 1, 0]], [1., 2., 3.], (3, 3))
        return {"adj": a.coalesce() if coalesced else a, "w": m.ones(2), "ints": m.tensor([[0, 1]]).to_sparse()}
    ours, theirs = _both(torch, make)
    tapegrad.save(ours, tmp_path / "ours.pt")
    torch.save(theirs, tmp_path / "theirs.pt")
    for loaded, reference in ((torch.load(tmp_path / "ours.pt"), theirs), (tapegrad.load(tmp_path / "theirs.pt"), ours),
                              (tapegrad.load(tmp_path / "ours.pt"), ours)):
        for key in ("adj", "ints"):
            assert str(loaded[key].dtype).split(".")[1] == str(reference[key].dtype).split(".")[1]
            assert loaded[key].is_sparse and loaded[key].is_coalesced() == reference[key].is_coalesced()
            np.testing.assert_array_equal(loaded[key]._indices().numpy(), reference[key]._indices().numpy())
            np.testing.assert_array_equal(loaded[key]._values().numpy(), reference[key]._values().numpy())


def test_sparse_tensors_pickle_and_deepcopy():
    import copy
    import pickle
    a = tapegrad.sparse_coo_tensor([[1, 0, 1], [2, 1, 0]], [1., 2., 3.], (3, 3), requires_grad=True)
    for b in (copy.deepcopy(a), pickle.loads(pickle.dumps(a))):
        assert b.is_sparse and b.requires_grad and not b.is_coalesced() and b is not a
        _same_repr(b.detach(), a.detach())
        np.testing.assert_array_equal(b.to_dense().detach().numpy(), a.to_dense().detach().numpy())


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


def _sparse_lookups(m, module, kind):
    # two backwards without zero_grad (the gradient adds up, sparse + sparse) over repeated and padding indices
    m.manual_seed(0)
    if kind == "embedding":
        e = m.nn.Embedding(7, 3, padding_idx=6, sparse=True)
        first, second = e(m.tensor([[1, 2, 1], [6, 0, 2]])), e(m.tensor([4]))
    else:
        e = m.nn.EmbeddingBag(7, 3, mode=kind, sparse=True)
        first, second = e(m.tensor([0, 3, 3, 1, 5]), m.tensor([0, 2, 4])), e(m.tensor([[4, 4]]))
    (first ** 2).sum().backward()
    (second * 3).sum().backward()
    return e.weight.grad


@pytest.mark.parametrize("kind", ["embedding", "sum", "mean"])
def test_sparse_embedding_gradients_are_sparse_as_torch(torch, kind):
    # word2vec's and DLRM's sparse=True tables: .grad is a COO tensor (its coalesced form equals torch's)
    ours, theirs = _both(torch, lambda m: _sparse_lookups(m, m.nn, kind))
    assert ours.is_sparse and theirs.is_sparse and ours.data.is_sparse and not ours.is_coalesced()
    assert ours.grad_fn is None and not ours.requires_grad
    assert ours.type() == theirs.type() == "torch.sparse.FloatTensor"
    np.testing.assert_array_equal(ours.coalesce().indices().numpy(), theirs.coalesce().indices().numpy())
    np.testing.assert_allclose(ours.coalesce().values().numpy(), theirs.coalesce().values().numpy(), rtol=1e-6)
    np.testing.assert_allclose(ours.to_dense().numpy(), theirs.to_dense().numpy(), rtol=1e-6)


def test_a_table_also_used_densely_gets_a_dense_gradient(torch):
    for m in (tapegrad, torch):
        with pytest.raises(ValueError, match="max mode does not support sparse weights"):
            m.nn.EmbeddingBag(3, 2, mode="max", sparse=True)(m.tensor([[0, 1]]))
        e = m.nn.Embedding(4, 2, sparse=True)
        (e(m.tensor([1])).sum() + e.weight.sum()).backward()
        assert not e.weight.grad.is_sparse
        e2 = m.nn.Embedding(4, 2, sparse=False)
        e2(m.tensor([1])).sum().backward()
        assert not e2.weight.grad.is_sparse


def test_sparse_mask_and_new_as_torch(torch):
    def run(m):
        d = m.arange(8.).reshape(4, 2).requires_grad_()
        mask = m.sparse_coo_tensor([[2, 0, 2], [0, 1, 0]], [1., 1., 1.], (4, 2))
        s = d.sparse_mask(mask)
        s.to_dense().sum().backward()
        rows = s.new(m.tensor([[0, 3]]), m.tensor([5., 6.]), [4])
        return s, d.grad, rows
    (s, g, rows), (ts, tg, trows) = _both(torch, run)
    assert s.is_sparse and s.is_coalesced() == ts.is_coalesced()
    np.testing.assert_array_equal(s._indices().numpy(), ts._indices().numpy())
    np.testing.assert_array_equal(s._values().detach().numpy(), ts._values().detach().numpy())
    _same_repr(rows, trows)
    np.testing.assert_array_equal(g.numpy(), tg.numpy())
    for m in (tapegrad, torch):
        with pytest.raises(RuntimeError, match="Could not run 'aten::sparse_mask' with arguments from the 'CPU'"):
            m.ones(2).sparse_mask(m.ones(2))


def _row_wise_adagrad_step(m, p, state, lr=0.1, eps=1e-10):
    # DLRM's row-wise sparse Adagrad (optim/rwsadagrad.py): one accumulator per row, the mean squared gradient
    grad = p.grad.data.coalesce()
    ind, val = grad._indices(), grad._values()
    upd = grad.new(ind, val.pow(2).mean(dim=1), [grad.size()[0]])
    state.add_(upd)
    std = state.sparse_mask(upd.coalesce())._values().sqrt_().add_(eps)
    p.data.add_(grad.new(ind, val / std.view(std.size()[0], 1), grad.size()), alpha=-lr)


@pytest.mark.parametrize("opt", ["SGD", "Adagrad", "SparseAdam", "row-wise"])
def test_optimizers_step_on_sparse_gradients_as_torch(torch, opt):
    def run(m):
        m.manual_seed(3)
        e = m.nn.EmbeddingBag(10, 4, mode="sum", sparse=True)
        state = m.zeros(10)
        o = None if opt == "row-wise" else getattr(m.optim, opt)(e.parameters(), lr=0.1)
        for step in range(4):
            e.zero_grad()
            idx = m.randint(0, 10, (6,))
            (e(idx, m.tensor([0, 3])) ** 2).sum().backward()
            if o is None:
                _row_wise_adagrad_step(m, e.weight, state)
            else:
                o.step()
        return e.weight.detach().numpy()
    ours, theirs = _both(torch, run)
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)


def _coo(m, coalesced=True):
    ind = [[0, 1, 1, 2], [1, 0, 2, 1]] if coalesced else [[1, 0, 1, 1], [2, 1, 2, 0]]
    return m.sparse_coo_tensor(m.tensor(ind), m.tensor([1., -2., 3., 4.]), (3, 3))


KEPT_SPARSE = [
    lambda m, a: a * 2, lambda m, a: 2 * a, lambda m, a: a.mul(m.tensor(0.5)), lambda m, a: a / 4,
    lambda m, a: a.div(2), lambda m, a: -a, lambda m, a: a.neg(), lambda m, a: a.double(), lambda m, a: a.float(),
    lambda m, a: a.to(m.float64), lambda m, a: a.type(m.float64), lambda m, a: a.clone(), lambda m, a: a.detach(),
    lambda m, a: a.t(), lambda m, a: a.transpose(0, 1), lambda m, a: a.transpose(1, 1), lambda m, a: a + a,
    lambda m, a: a - a.coalesce(), lambda m, a: a.add(a), lambda m, a: a * a, lambda m, a: a * a.coalesce(),
    lambda m, a: a * m.ones(3, 3), lambda m, a: a.sub(a * 2),
    lambda m, a: a.abs(), lambda m, a: a.sqrt(), lambda m, a: a.pow(2), lambda m, a: a ** 2, lambda m, a: a.tanh(),
    lambda m, a: m.sparse.sum(a, 1), lambda m, a: m.sparse.sum(a, (0,)), lambda m, a: m.sparse.softmax(a, 1),
    lambda m, a: m.sparse.log_softmax(a, 0), lambda m, a: m.sparse.softmax(a, -1, dtype=m.float64),
    lambda m, a: m.sparse.mm(a, a.t()), lambda m, a: a @ a, lambda m, a: a.mm(a), lambda m, a: m.spmm(a, a),
    lambda m, a: a.matmul(a.coalesce()),
]


@pytest.mark.parametrize("coalesced", [True, False])
@pytest.mark.parametrize("op", KEPT_SPARSE, ids=range(len(KEPT_SPARSE)))
def test_ops_torch_keeps_sparse_stay_sparse(torch, op, coalesced):
    # NGCF's sparse dropout (A * scale), GCN normalisations (sparse.sum), sparse attention (sparse.softmax)
    if not coalesced and op in (KEPT_SPARSE[19], KEPT_SPARSE[20]):
        pytest.skip("sparse * sparse of uncoalesced inputs: torch's entries follow its kernel's order (ours are "
                    "the coalesced product)")
    ours, theirs = _both(torch, lambda m: op(m, _coo(m, coalesced)))
    assert ours.is_sparse and theirs.is_sparse and str(ours.dtype)[9:] == str(theirs.dtype)[6:]
    assert ours.is_coalesced() == theirs.is_coalesced()
    np.testing.assert_allclose(ours.to_dense().numpy(), theirs.to_dense().numpy(), rtol=1e-6)
    oc, tc = ours.coalesce(), theirs.coalesce()
    np.testing.assert_array_equal(oc.indices().numpy(), tc.indices().numpy())
    np.testing.assert_allclose(oc.values().numpy(), tc.values().numpy(), rtol=1e-6)
    if coalesced:        # (uncoalesced: torch's values are per entry, ours come from the summed dense values)
        np.testing.assert_array_equal(ours._indices().numpy(), theirs._indices().numpy())
        np.testing.assert_allclose(ours._values().detach().numpy(), theirs._values().detach().numpy(), rtol=1e-6)


def test_sparse_reductions_and_products_as_torch(torch):
    for m in (tapegrad, torch):
        a = _coo(m)
        assert float(m.sparse.sum(a)) == 6.0 and m.sparse.sum(a, (0, 1)).shape == ()
        np.testing.assert_array_equal(m.sparse.addmm(m.ones(3, 2), a, m.ones(3, 2), beta=2).numpy(),
                                      (2 + a.to_dense() @ m.ones(3, 2)).numpy())
        with pytest.raises(RuntimeError, match="Sparse division requires a scalar or zero-dim dense tensor"):
            a / m.ones(3, 3)


@pytest.mark.parametrize("fn", [lambda m, a: m.sparse.softmax(a, 1), lambda m, a: m.sparse.log_softmax(a, 0),
                                lambda m, a: m.sparse.sum(a, 1), lambda m, a: (a * 3).t() + a,
                                lambda m, a: m.sparse.mm(a, a * 2)])
def test_gradients_reach_the_values_as_torch(torch, fn):
    def run(m):
        v = m.tensor([1., -2., 3., 4.], dtype=m.float64, requires_grad=True)
        a = m.sparse_coo_tensor(m.tensor([[0, 1, 1, 2], [1, 0, 2, 1]]), v, (3, 3))
        (fn(m, a).to_dense() * m.arange(1., 1 + 3 ** fn(m, a).to_dense().ndim, dtype=m.float64)
         .reshape(fn(m, a).shape)).sum().backward()
        return v.grad.numpy()
    ours, theirs = _both(torch, run)
    np.testing.assert_allclose(ours, theirs, rtol=1e-12)
    v = tapegrad.tensor([1., -2., 3., 4.], dtype=tapegrad.float64, requires_grad=True)
    ind = tapegrad.tensor([[0, 1, 1, 2], [1, 0, 2, 1]])
    assert tapegrad.autograd.gradcheck(
        lambda v: fn(tapegrad, tapegrad.sparse_coo_tensor(ind, v, (3, 3))).to_dense(), (v,))


OPTIMIZERS = [("SGD", {}), ("SGD", {"momentum": 0.9}), ("Adam", {}), ("AdamW", {}), ("Adamax", {}), ("NAdam", {}),
              ("RAdam", {}), ("RMSprop", {}), ("Rprop", {}), ("Adadelta", {}), ("Adagrad", {}),
              ("Adagrad", {"weight_decay": 0.1}), ("ASGD", {}), ("SparseAdam", {}), ("Adafactor", {}), ("Muon", {})]


@pytest.mark.parametrize("name,kw", OPTIMIZERS, ids=[f"{n}{'-' + next(iter(k)) if k else ''}" for n, k in OPTIMIZERS])
def test_optimizers_take_or_refuse_sparse_gradients_as_torch(torch, name, kw):
    def run(m):
        m.manual_seed(0)
        e = m.nn.Embedding(5, 2, sparse=True)
        opt = getattr(m.optim, name)(e.parameters(), lr=0.1, **kw)
        for _ in range(2):
            opt.zero_grad()
            (e(m.tensor([1, 3, 1])) ** 2).sum().backward()
            try:
                opt.step()
            except RuntimeError as err:
                return str(err)
        return e.weight.detach().numpy()
    ours, theirs = _both(torch, run)
    if isinstance(theirs, str):
        assert ours == theirs
    else:       # (SGD with momentum cancels a row to ~1e-7: float32 rounding, not the update rule)
        np.testing.assert_allclose(ours, theirs, rtol=1e-6, atol=1e-6)


def test_what_torch_refuses_with_sparse_gradients_is_refused(torch):
    for m in (tapegrad, torch):
        e = m.nn.Embedding(4, 2, sparse=True)
        e(m.tensor([1, 2])).sum().backward()
        with pytest.raises(RuntimeError, match=r"add\(sparse, dense\) is not supported"):
            m.optim.SGD(e.parameters(), lr=0.1, weight_decay=0.1).step()
        with pytest.raises(NotImplementedError, match="Could not run 'aten::linalg_vector_norm' with arguments from "
                                                      "the 'SparseCPU' backend"):
            m.nn.utils.clip_grad_norm_(e.parameters(), 1.0)
        by_freq = m.nn.Embedding(4, 2, sparse=True, scale_grad_by_freq=True)
        with pytest.raises(RuntimeError, match="scale_grad_by_freq not supported with sparse gradients"):
            by_freq(m.tensor([1, 1])).sum().backward()


@pytest.mark.parametrize("expr", ["x[1]", "x[-1]", "x[:, 2]", "x.select(1, 0)", "x.unbind(0)[1]", "u[1]",
                                  "torch.stack([x, y])", "torch.stack([x, y], 1)", "torch.stack([x, y], 2)",
                                  "torch.cat([x, y])", "torch.cat([x, y], 1)", "torch.stack([x[0], y[1]])",
                                  "x.unsqueeze(0)", "x.unsqueeze(1)", "x.unsqueeze(-1)", "u.unsqueeze(1)[1]"])
def test_select_stack_and_cat_keep_sparse_as_torch(torch, expr):
    # a spiking network steps through a sparse raster by inputs[t] and stacks the sparse outputs (norse's LIF)
    def run(m):
        x = m.tensor([[0., 2, 0], [3, 0, 4]]).to_sparse()
        y = m.tensor([[1., 0, 0], [0, 5, 0]]).to_sparse()
        u = m.sparse_coo_tensor([[1, 0, 1], [2, 1, 2]], [1., 2, 3], (2, 3))
        r = eval(expr, {"torch": m, "x": x, "y": y, "u": u})
        return (r.is_sparse, r.is_coalesced(), r._indices().tolist(), r._values().tolist(), tuple(r.shape),
                r.to_dense().tolist())

    ours, theirs = _both(torch, run)
    assert ours == theirs


def test_selected_rows_pass_gradients_to_the_dense_values():
    v = tapegrad.tensor([[0., 2, 0], [3, 0, 4]]).to_sparse().requires_grad_()
    (tapegrad.stack([v[1], v[0]]).to_dense() * tapegrad.tensor([[1.], [2.]])).sum().backward()
    assert v.grad.to_dense().tolist() == [[2.0, 2.0, 2.0], [1.0, 1.0, 1.0]]
