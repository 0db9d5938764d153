"""nn.functional beyond the op table: stability at ±1e4, reductions, ignore_index, label smoothing, running
statistics, dropout in training mode, the gradients gradcheck cannot judge (padding_idx), and torch's errors."""

import warnings

import numpy as np
import pytest

import tapegrad
import tapegrad.nn.functional as F


def tg(a, grad=False, dtype=np.float64):
    a = np.asarray(a)
    return tapegrad.tensor(a.astype(dtype) if a.dtype.kind == "f" else a, requires_grad=grad)


def th(torch, a, grad=False, dtype=np.float64):
    a = np.asarray(a)
    return torch.tensor(a.astype(dtype) if a.dtype.kind == "f" else a, requires_grad=grad)


def close(a, b, rtol=1e-7, atol=1e-9):
    np.testing.assert_allclose(np.asarray(a.detach().numpy()), b.detach().numpy(), rtol=rtol, atol=atol)


def both(torch, fn_name, arrays, grad_mask, **kw):
    """Run F.<fn_name> on tapegrad and torch; return (tg_out, th_out, tg_inputs, th_inputs)."""
    a = [tg(x, g) for x, g in zip(arrays, grad_mask)]
    b = [th(torch, x, g) for x, g in zip(arrays, grad_mask)]
    return getattr(F, fn_name)(*a, **kw), getattr(torch.nn.functional, fn_name)(*b, **kw), a, b


def grads_match(out_a, out_b, ins_a, ins_b, rtol=1e-7, atol=1e-9):
    out_a.sum().backward()
    out_b.sum().backward()
    for x, y in zip(ins_a, ins_b):
        if y.requires_grad:
            assert np.all(np.isfinite(x.grad.numpy()))
            close(x.grad, y.grad, rtol, atol)


# --- stability at ±1e4 --------------------------------------------------------------------------------------------
LOGITS = np.array([[1e4, -1e4, 0.0], [-1e4, -1e4, 1e4], [5.0, 1e4, -3.0]])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("fn", ["log_softmax", "softmax"])
def test_softmax_family_stable(torch, fn, dtype):
    a, b = tg(LOGITS, True, dtype), th(torch, LOGITS, True, dtype)
    out_a, out_b = getattr(F, fn)(a, dim=1), getattr(torch.nn.functional, fn)(b, dim=1)
    assert np.all(np.isfinite(out_a.detach().numpy()))
    close(out_a, out_b)
    w = np.arange(9.0).reshape(3, 3)
    (out_a * tg(w, dtype=dtype)).sum().backward()
    (out_b * th(torch, w, dtype=dtype)).sum().backward()
    close(a.grad, b.grad)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("kw", [{}, {"label_smoothing": 0.2}, {"reduction": "none"}])
def test_cross_entropy_stable(torch, dtype, kw):
    t = np.array([1, 2, 0])
    a, b = tg(LOGITS, True, dtype), th(torch, LOGITS, True, dtype)
    out_a = F.cross_entropy(a, tg(t), **kw)
    out_b = torch.nn.functional.cross_entropy(b, th(torch, t), **kw)
    assert np.all(np.isfinite(out_a.detach().numpy()))
    close(out_a, out_b, rtol=1e-6)
    grads_match(out_a, out_b, [a], [b], rtol=1e-6)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_cross_entropy_probs_stable(torch, dtype):
    p = np.array([[0.2, 0.3, 0.5], [0.0, 0.5, 0.5], [1.0, 0.0, 0.0]])
    out_a, out_b, a, b = both(torch, "cross_entropy", [LOGITS.astype(dtype), p.astype(dtype)], [True, False])
    close(out_a, out_b, rtol=1e-6)
    grads_match(out_a, out_b, a, b, rtol=1e-6)


@pytest.mark.parametrize("kw", [{}, {"pos_weight": np.array([0.5, 2.0, 3.0])}, {"weight": np.array([1.0, 0.0, 2.0])}])
def test_bce_with_logits_stable(torch, kw):
    t = np.array([[1.0, 0.0, 0.5], [0.0, 1.0, 1.0], [0.3, 0.0, 1.0]])
    a, b = tg(LOGITS, True), th(torch, LOGITS, True)
    out_a = F.binary_cross_entropy_with_logits(a, tg(t), **{k: tg(v) for k, v in kw.items()})
    out_b = torch.nn.functional.binary_cross_entropy_with_logits(b, th(torch, t), **{k: th(torch, v)
                                                                                     for k, v in kw.items()})
    assert np.isfinite(out_a.item())
    close(out_a, out_b)
    grads_match(out_a, out_b, [a], [b])


def test_bce_clamps_log_at_minus_100(torch):
    x, t = np.array([0.0, 1.0, 0.5]), np.array([1.0, 0.0, 1.0])
    out_a, out_b, _, _ = both(torch, "binary_cross_entropy", [x, t], [False, False], reduction="none")
    close(out_a, out_b)
    assert out_a[0].item() == 100.0


def test_log_softmax_inf_row(torch):
    x = np.array([[-np.inf, 0.0, 1.0], [-np.inf, -np.inf, 2.0]])
    close(F.log_softmax(tg(x), 1), torch.log_softmax(th(torch, x), 1))
    close(F.softmax(tg(x), 1), torch.softmax(th(torch, x), 1))


def test_softmax_result_is_contiguous_as_torch(torch):
    """Torch's softmax kernels write a contiguous result whatever the input's layout (a permuted einsum result,
    channels-last): what a following dropout draws, in memory order, depends on it."""
    def layouts(m):
        x = m.arange(120.).reshape(2, 3, 4, 5).permute(0, 2, 3, 1) / 50
        cl = m.arange(96.).reshape(2, 3, 4, 4).contiguous(memory_format=m.channels_last)
        m.manual_seed(0)
        drop = m.nn.functional.dropout(m.softmax(x, 1), 0.5)
        return [r.stride() for r in (m.softmax(x, -1), m.log_softmax(x, 1), m.softmax(cl, 1),
                                       m.nn.functional.softmin(x, 2), m.softmax(x.transpose(0, 1), 0))], drop.numpy()
    (ours, a), (theirs, b) = layouts(tapegrad), layouts(torch)
    assert ours == theirs
    np.testing.assert_allclose(a, b, rtol=1e-6)


def test_softmax_rows_without_a_finite_max_are_nan_as_torch(torch):
    inf, nan = np.inf, np.nan
    x = np.array([[inf, 1.0], [-inf, -inf], [nan, 1.0], [inf, inf], [-inf, inf], [1e38, 3e38], [-3e38, 3e38]],
                 np.float32)
    for fn in ("log_softmax", "softmax"):
        a = getattr(F, fn)(tg(x), 1).numpy()
        b = getattr(torch, fn)(th(torch, x), 1).numpy()
        np.testing.assert_array_equal(a, b)     # (nan where torch gives nan, equal elsewhere)


# --- reductions, ignore_index, label smoothing ----------------------------------------------------------------
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("kw", [{}, {"ignore_index": 2}, {"label_smoothing": 0.3}, {"ignore_index": 0,
                                                                                  "label_smoothing": 0.1}])
@pytest.mark.parametrize("weighted", [False, True])
def test_cross_entropy_options(torch, reduction, kw, weighted):
    r = np.random.default_rng(3)
    x, t = r.standard_normal((6, 4, 2)), np.array([[0, 2], [2, 2], [1, 3], [3, 0], [2, 1], [0, 0]])
    w = r.random(4) + 0.5
    a, b = tg(x, True), th(torch, x, True)
    extra_a = {"weight": tg(w)} if weighted else {}
    extra_b = {"weight": th(torch, w)} if weighted else {}
    out_a = F.cross_entropy(a, tg(t), reduction=reduction, **kw, **extra_a)
    out_b = torch.nn.functional.cross_entropy(b, th(torch, t), reduction=reduction, **kw, **extra_b)
    close(out_a, out_b)
    assert out_a.grad_fn.name() == type(out_b.grad_fn).__name__
    grads_match(out_a, out_b, [a], [b])


def test_cross_entropy_graph_is_nll_over_log_softmax(torch):
    out = F.cross_entropy(tg(np.ones((2, 3)), True), tg(np.array([0, 1])))
    assert out.grad_fn.name() == "NllLossBackward0"
    assert out.grad_fn.next_functions[0][0].name() == "LogSoftmaxBackward0"


@pytest.mark.parametrize("target, ignore_index", [([0, 7, 2], 7), ([0, -5, 2], -5), ([0, -100, 2], -100),
                                                  ([0, 1, 2], 7), ([1, 1, 2], 1)])
def test_nll_ignore_index_in_and_out_of_the_class_range(torch, target, ignore_index):
    # an ignore_index outside [0, C) matches only targets that are out of range too (then skipped, not an error)
    x = np.random.default_rng(5).standard_normal((3, 4))
    a, b = tg(x, True), th(torch, x, True)
    out_a = F.nll_loss(a, tg(np.array(target)), ignore_index=ignore_index)
    out_b = torch.nn.functional.nll_loss(b, th(torch, np.array(target)), ignore_index=ignore_index)
    close(out_a, out_b)
    grads_match(out_a, out_b, [a], [b])


def test_nll_out_of_range_target_with_an_in_range_ignore_index_raises(torch):
    x = np.zeros((3, 4))
    for mod, f in ((tg, F), (lambda v: th(torch, v), torch.nn.functional)):
        with pytest.raises(IndexError, match="Target 9 is out of bounds"):
            f.nll_loss(mod(x), mod(np.array([0, 9, 1])), ignore_index=1)


def test_all_ignored_mean_is_nan(torch):
    out_a, out_b, _, _ = both(torch, "nll_loss", [np.ones((2, 3)), np.array([1, 1])], [True, False], ignore_index=1)
    assert np.isnan(out_a.item()) and np.isnan(out_b.item())


def test_legacy_size_average_reduce(torch):
    x, y = np.arange(6.0).reshape(2, 3), np.ones((2, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for kw in ({"size_average": False}, {"reduce": False}, {"size_average": True, "reduce": True}):
            a, b, _, _ = both(torch, "mse_loss", [x, y], [False, False], **kw)
            close(a, b)


def test_kl_div_mean_warns_and_batchmean(torch):
    x, t = np.log(np.full((2, 4), 0.25)), np.array([[0.1, 0.2, 0.3, 0.4]] * 2)
    with pytest.warns(UserWarning, match="batchmean"):
        F.kl_div(tg(x), tg(t))
    a, b, _, _ = both(torch, "kl_div", [x, t], [False, False], reduction="batchmean")
    close(a, b)


def test_softmax_implicit_dim_warns(torch):
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmax"):
        out = F.softmax(tg(np.zeros((2, 3))))
    np.testing.assert_allclose(out.numpy(), np.full((2, 3), 1 / 3))
    with pytest.warns(UserWarning, match="Implicit dimension choice for log_softmax"):
        F.log_softmax(tg(np.zeros(3)))


def test_mse_broadcast_warns():
    with pytest.warns(UserWarning, match="Using a target size"):
        F.mse_loss(tg(np.zeros((2, 3))), tg(np.zeros(3)))


# --- normalisation state ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("momentum", [0.1, 0.5])
def test_batch_norm_running_stats(torch, momentum):
    x = np.random.default_rng(0).standard_normal((5, 3, 2))
    rm_a, rv_a = tapegrad.zeros(3, dtype=tapegrad.float64), tapegrad.ones(3, dtype=tapegrad.float64)
    rm_b, rv_b = torch.zeros(3, dtype=torch.float64), torch.ones(3, dtype=torch.float64)
    v0 = rm_a._version
    out_a = F.batch_norm(tg(x, True), rm_a, rv_a, training=True, momentum=momentum)
    out_b = torch.nn.functional.batch_norm(th(torch, x, True), rm_b, rv_b, training=True, momentum=momentum)
    close(out_a, out_b)
    close(rm_a, rm_b)
    close(rv_a, rv_b)
    assert rm_a._version > v0 and not rm_a.requires_grad
    assert out_a.grad_fn.name() == "NativeBatchNormBackward0"
    ev_a = F.batch_norm(tg(x), rm_a, rv_a, training=False)
    ev_b = torch.nn.functional.batch_norm(th(torch, x), rm_b, rv_b, training=False)
    close(ev_a, ev_b)


def test_instance_norm_running_stats(torch):
    x = np.random.default_rng(1).standard_normal((2, 3, 4))
    rm_a, rv_a = tapegrad.zeros(3, dtype=tapegrad.float64), tapegrad.ones(3, dtype=tapegrad.float64)
    rm_b, rv_b = torch.zeros(3, dtype=torch.float64), torch.ones(3, dtype=torch.float64)
    close(F.instance_norm(tg(x), rm_a, rv_a), torch.nn.functional.instance_norm(th(torch, x), rm_b, rv_b))
    close(rm_a, rm_b)
    close(rv_a, rv_b)


@pytest.mark.parametrize("kw", ["weight=T.ones(6)", "bias=T.ones(3)", "running_mean=T.zeros(5), running_var=T.ones(5)",
                                "running_mean=T.zeros(4), running_var=T.ones(5)", "weight=T.ones(4, 1)"])
def test_instance_norm_parameter_size_errors_as_torch(torch, kw):
    """torch repeats the per-channel tensors over the batch and batch_norm checks them: its words and counts."""
    def run(T):
        try:
            eval(f"T.nn.functional.instance_norm(T.ones(2, 4, 6), {kw})")
        except RuntimeError as e:
            return str(e)
    assert run(tapegrad) == run(torch) is not None


def test_layer_norm_first_order_fast_path_matches_graph_path(torch):
    """The NumPy backward (no create_graph) and the tapegrad-ops backward (create_graph) agree with torch."""
    r = np.random.default_rng(2)
    x, w, b = r.standard_normal((4, 5)), r.standard_normal(5), r.standard_normal(5)
    for create in (False, True):
        a = [tg(v, True) for v in (x, w, b)]
        out = F.layer_norm(a[0], (5,), a[1], a[2])
        g = tapegrad.autograd.grad(out.pow(2).sum(), a, create_graph=create)
        c = [th(torch, v, True) for v in (x, w, b)]
        gb = torch.autograd.grad(torch.nn.functional.layer_norm(c[0], (5,), c[1], c[2]).pow(2).sum(), c)
        for u, v in zip(g, gb):
            close(u, v)


# --- dropout in training mode ---------------------------------------------------------------------------------
@pytest.mark.parametrize("p", [0.2, 0.5, 0.8])
def test_dropout_training_statistics(p):
    tapegrad.manual_seed(0)
    x = tapegrad.ones(200, 200, dtype=tapegrad.float64, requires_grad=True)
    out = F.dropout(x, p)
    kept = out.detach().numpy() != 0
    assert abs(kept.mean() - (1 - p)) < 0.01
    np.testing.assert_allclose(out.detach().numpy()[kept], 1 / (1 - p))
    assert out.grad_fn.name() == "MulBackward0"
    out.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), out.detach().numpy())    # gradient = the same mask


def test_dropout_seeded_and_identity():
    x = tapegrad.ones(50)
    tapegrad.manual_seed(7)
    a = F.dropout(x, 0.5).numpy()
    tapegrad.manual_seed(7)
    np.testing.assert_array_equal(a, F.dropout(x, 0.5).numpy())
    assert F.dropout(x, 0.5, training=False) is x and F.dropout(x, 0.0) is x
    assert F.alpha_dropout(x, 0.5) is x      # training=False by default, as torch


def test_feature_dropout_zeroes_whole_channels():
    tapegrad.manual_seed(1)
    out = F.dropout2d(tapegrad.ones(8, 16, 3, 3), 0.5).numpy()
    per_channel = out.reshape(8, 16, 9)
    assert np.all((per_channel == 0).all(-1) | (per_channel == 2).all(-1))
    assert 0.3 < (per_channel[..., 0] == 0).mean() < 0.7
    out1 = F.dropout1d(tapegrad.ones(16, 5), 0.5).numpy()     # unbatched (C, L)
    assert np.all((out1 == 0).all(-1) | (out1 == 2).all(-1))


def test_alpha_dropout_keeps_mean_and_variance():
    tapegrad.manual_seed(0)
    x = tapegrad.randn(400, 400, dtype=tapegrad.float64)
    out = F.alpha_dropout(x, 0.3, training=True).numpy()
    assert abs(out.mean()) < 0.02 and abs(out.std() - 1) < 0.03


def test_dropout_inplace_bumps_version():
    x = tapegrad.ones(10, 10)
    v = x._version
    assert F.dropout(x, 0.5, inplace=True) is x and x._version > v
    assert set(np.unique(x.numpy())) <= {0.0, 2.0}


def test_gumbel_softmax_samples_the_softmax():
    tapegrad.manual_seed(0)
    logits = tapegrad.tensor([[0.0, 1.0, 2.0]], dtype=tapegrad.float64).expand(20000, 3)
    hard = F.gumbel_softmax(logits, hard=True).numpy()
    assert set(np.unique(hard)) == {0.0, 1.0} and np.all(hard.sum(1) == 1)
    p = np.exp([0.0, 1.0, 2.0]) / np.exp([0.0, 1.0, 2.0]).sum()
    np.testing.assert_allclose(hard.mean(0), p, atol=0.015)
    x = tapegrad.zeros(4, 3, dtype=tapegrad.float64, requires_grad=True)
    out = F.gumbel_softmax(x, tau=0.5, hard=True)
    assert out.grad_fn.name() == "AddBackward0"
    (out * tapegrad.arange(3.0, dtype=tapegrad.float64)).sum().backward()
    assert np.all(np.isfinite(x.grad.numpy())) and np.abs(x.grad.numpy()).sum() > 0


# --- embedding gradients gradcheck cannot judge ---------------------------------------------------------------
@pytest.mark.parametrize("kw", [{"padding_idx": 2}, {"padding_idx": -1}, {"scale_grad_by_freq": True},
                                {"padding_idx": 0, "scale_grad_by_freq": True}])
def test_embedding_padding_and_freq_grads(torch, kw):
    w = np.random.default_rng(0).standard_normal((5, 3))
    i = np.array([[0, 2, 2], [4, 1, 2]])
    a, b = tg(w, True), th(torch, w, True)
    out_a, out_b = F.embedding(tg(i), a, **kw), torch.nn.functional.embedding(th(torch, i), b, **kw)
    close(out_a, out_b)
    g = np.random.default_rng(1).standard_normal(out_b.shape)
    (out_a * tg(g)).sum().backward()
    (out_b * th(torch, g)).sum().backward()
    close(a.grad, b.grad)


def test_embedding_max_norm(torch):
    w = np.random.default_rng(0).standard_normal((5, 3)) * 3
    i = np.array([0, 3, 3])
    a, b = tg(w, True), th(torch, w, True)
    close(F.embedding(tg(i), a, max_norm=1.0), torch.nn.functional.embedding(th(torch, i), b, max_norm=1.0))
    close(a, b)                       # the used rows were renormalised in place


def test_torch_level_signatures(torch):
    x, w, b = np.random.default_rng(0).standard_normal((4, 3)), np.ones(3), np.zeros(3)
    close(tapegrad.batch_norm(tg(x), tg(w), tg(b), None, None, True, 0.1, 1e-5, False),
          torch.batch_norm(th(torch, x), th(torch, w), th(torch, b), None, None, True, 0.1, 1e-5, False))
    i = np.array([1, 0])
    close(tapegrad.embedding(tg(x), tg(i)), torch.embedding(th(torch, x), th(torch, i)))
    close(tapegrad.dropout(tg(x), 0.5, False), torch.dropout(th(torch, x), 0.5, False))


# --- errors, with torch's messages ------------------------------------------------------------------------------
def _same_error(torch, fn, exc):
    with pytest.raises(exc) as ea:
        fn(tapegrad, F, lambda a: tg(a))
    with pytest.raises(exc) as eb:
        fn(torch, torch.nn.functional, lambda a: th(torch, a))
    assert str(ea.value) == str(eb.value).replace("torch.", "tapegrad.")


X = np.zeros((3, 4))
ERRORS = [
    ("target_oob", lambda m, f, t: f.cross_entropy(t(X), t(np.array([0, 1, 10]))), IndexError),
    ("target_neg", lambda m, f, t: f.nll_loss(t(X), t(np.array([0, -3, 1]))), IndexError),
    ("batch", lambda m, f, t: f.cross_entropy(t(X), t(np.array([0, 1]))), ValueError),
    ("multi_target", lambda m, f, t: f.cross_entropy(t(X), t(np.zeros((3, 5)))), RuntimeError),
    ("long_probs", lambda m, f, t: f.cross_entropy(t(X), t(np.ones((3, 4), np.int64))), RuntimeError),
    ("float_target", lambda m, f, t: f.nll_loss(t(X), t(np.array([0.0, 1.0, 2.0]))), RuntimeError),
    ("weight_size", lambda m, f, t: f.nll_loss(t(X), t(np.array([0, 1, 2])), weight=t(np.ones(3))), RuntimeError),
    ("target_size_3d", lambda m, f, t: f.nll_loss(t(np.zeros((2, 3, 4))), t(np.zeros((2, 5), np.int64))),
     RuntimeError),
    ("target_size_4d", lambda m, f, t: f.nll_loss(t(np.zeros((2, 3, 4, 4))), t(np.zeros((2, 5, 4), np.int64))),
     RuntimeError),
    ("0d_input", lambda m, f, t: f.nll_loss(t(np.zeros(())), t(np.array(0))), ValueError),
    ("smoothing", lambda m, f, t: f.cross_entropy(t(X), t(np.array([0, 1, 2])), label_smoothing=1.5), RuntimeError),
    ("reduction", lambda m, f, t: f.mse_loss(t(X), t(X), reduction="foo"), ValueError),
    ("softmax_int", lambda m, f, t: m.softmax(t(np.array([1, 2])), 0), NotImplementedError),
    ("softmax_dim", lambda m, f, t: m.softmax(t(X), 2), IndexError),
    ("linear", lambda m, f, t: f.linear(t(X), t(np.zeros((5, 5)))), RuntimeError),
    ("linear_3d", lambda m, f, t: f.linear(t(np.zeros((1, 3, 4))), t(np.zeros((5, 5)))), RuntimeError),
    ("bce_range", lambda m, f, t: f.binary_cross_entropy(t(X + 2), t(X)), RuntimeError),
    ("layer_norm", lambda m, f, t: f.layer_norm(t(X), (5,)), RuntimeError),
    ("bn_one_value", lambda m, f, t: f.batch_norm(t(np.zeros((1, 4))), None, None, training=True), ValueError),
    ("bn_eval", lambda m, f, t: f.batch_norm(t(X), None, None), RuntimeError),
    ("bn_shape", lambda m, f, t: f.batch_norm(t(X), t(np.zeros(3)), t(np.ones(3))), RuntimeError),
    ("group_norm", lambda m, f, t: f.group_norm(t(np.zeros((2, 4, 3))), 3), RuntimeError),
    ("emb_oob", lambda m, f, t: f.embedding(t(np.array([5])), t(np.zeros((3, 2)))), IndexError),
    ("dropout_p", lambda m, f, t: f.dropout(t(X), 1.5), ValueError),
    ("dropout1d", lambda m, f, t: f.dropout1d(t(np.zeros((2, 3, 4, 5))), 0.5), RuntimeError),
    ("glu_odd", lambda m, f, t: f.glu(t(np.zeros((3, 3)))), RuntimeError),
    ("glu_0d", lambda m, f, t: f.glu(t(np.zeros(()))), RuntimeError),
    ("multi_margin_p", lambda m, f, t: f.multi_margin_loss(t(X), t(np.array([0, 1, 2])), p=3), ValueError),
    ("mse_int", lambda m, f, t: f.mse_loss(t(np.array([1, 2])), t(np.array([1, 2]))), NotImplementedError),
    ("gnll_size", lambda m, f, t: f.gaussian_nll_loss(t(X), t(X), t(np.ones(2))), ValueError),
    ("gnll_neg", lambda m, f, t: f.gaussian_nll_loss(t(X), t(X), t(-np.ones((3, 4)))), ValueError),
    ("cos_emb", lambda m, f, t: f.cosine_embedding_loss(t(X), t(X), t(np.ones((3, 1)))), RuntimeError),
]


@pytest.mark.parametrize("fn,exc", [pytest.param(fn, exc, id=name) for name, fn, exc in ERRORS])
def test_errors_as_torch(torch, fn, exc):
    _same_error(torch, fn, exc)


def test_size_errors_name_the_sizes(torch):
    with pytest.raises(ValueError, match=r"Target size \(tapegrad.Size\(\[3, 1\]\)\) must be the same as input size"):
        F.binary_cross_entropy_with_logits(tg(X), tg(np.zeros((3, 1))))
    with pytest.raises(ValueError, match="Expected more than 1 value per channel when training"):
        F.batch_norm(tg(np.zeros((1, 4))), None, None, training=True)


def test_no_grad_for_weight(torch):
    w = tg(np.ones(4), True)
    with pytest.raises(RuntimeError, match="not differentiable with respect to argument 'weight'"):
        F.nll_loss(tg(X, True), tg(np.array([0, 1, 2])), weight=w)
    with tapegrad.no_grad():
        F.nll_loss(tg(X), tg(np.array([0, 1, 2])), weight=w)


def test_training_step_gradients_match_numpy_in_float32():
    """linear + cross_entropy + backward gives the gradients of the NumPy formulas, in float32, with no graph of
    the backward (its speed is measured in benchmarks/, never asserted here)."""
    r = np.random.default_rng(0)
    x = tg(r.standard_normal((256, 512)), dtype=np.float32)
    w, b = tg(r.standard_normal((10, 512)) * 0.01, True, np.float32), tg(np.zeros(10), True, np.float32)
    t = tg(r.integers(0, 10, 256))
    xa, wa = x.numpy(), w.detach().numpy()
    z = xa @ wa.T
    e = np.exp(z - z.max(1, keepdims=True))
    g = e / e.sum(1, keepdims=True)
    g[np.arange(256), t.numpy()] -= 1
    g /= 256
    F.cross_entropy(F.linear(x, w, b), t).backward()
    assert w.grad.dtype == tapegrad.float32 and w.grad.grad_fn is None and not w.grad.requires_grad
    np.testing.assert_allclose(w.grad.numpy(), g.T @ xa, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(b.grad.numpy(), g.sum(0), rtol=1e-4, atol=1e-6)


def test_docstring_examples():
    import doctest

    import importlib
    import pkgutil

    from tapegrad.ops import nn_ops
    attempted = 0
    for info in pkgutil.iter_modules(nn_ops.__path__):     # the family's sub-modules (doctest does not recurse)
        mod = importlib.import_module(f"{nn_ops.__name__}.{info.name}")
        res = doctest.testmod(mod, extraglobs={"F": F, "tapegrad": tapegrad}, optionflags=doctest.NORMALIZE_WHITESPACE)
        assert res.failed == 0, info.name
        attempted += res.attempted
    assert attempted > 30


@pytest.mark.parametrize("inplace", [False, True])
def test_celu_backward_uses_torchs_float32_alpha(torch, inplace):
    """torch's celu derivative uses 1 / float32(alpha), even in float64: the gradients agree to the last bits."""
    x = np.random.default_rng(0).standard_normal(8)
    grads = []
    for m in (tapegrad, torch):
        a = m.tensor(x, requires_grad=True)
        m.nn.functional.celu(a * 1, alpha=1.3, inplace=inplace).sum().backward()
        grads.append(a.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-15, atol=0)


def test_max_pool_indices_and_gradients_match_torch_on_ties_nan_and_padding(torch):
    """Random windows full of ties, NaN, -0.0 and -inf (with padding, dilation, ceil_mode): torch's indices and
    gradients — the first maximum wins, a NaN wins, and padding never wins over a real element, even -inf."""
    rng = np.random.default_rng(3)
    checked = 0
    for trial in range(120):
        x = rng.integers(-3, 3, (2, 2, int(rng.integers(5, 10)), int(rng.integers(5, 10)))).astype(np.float64)
        x[rng.random(x.shape) < 0.3] = -np.inf
        if trial % 2:
            x[rng.random(x.shape) < 0.1] = np.nan
        k, s = int(rng.integers(2, 4)), int(rng.integers(1, 3))
        p, dil, ceil = int(rng.integers(0, k // 2 + 1)), int(rng.integers(1, 3)), bool(trial % 3 == 0)
        try:
            want, want_idx = torch.nn.functional.max_pool2d(torch.tensor(x), k, s, p, dil, ceil, return_indices=True)
        except RuntimeError:
            continue
        xt = tg(x, True)
        got, idx = F.max_pool2d(xt, k, s, p, dil, ceil, return_indices=True)
        np.testing.assert_array_equal(idx.numpy(), want_idx.numpy())
        np.testing.assert_array_equal(got.detach().numpy(), want.numpy())
        xr = torch.tensor(x, requires_grad=True)
        g = rng.standard_normal(tuple(want.shape))
        torch.nn.functional.max_pool2d(xr, k, s, p, dil, ceil).backward(torch.tensor(g))
        F.max_pool2d(xt, k, s, p, dil, ceil).backward(tg(g))
        np.testing.assert_array_equal(xt.grad.numpy(), xr.grad.numpy())
        checked += 1
    assert checked > 50


@pytest.mark.parametrize("target", [[0, -3, 1], [0, 4, 1], [-1, 0, 0]])
def test_nll_target_out_of_range_either_side_raises_as_torch(torch, target):
    # (the range check is one reduction over the targets seen as unsigned: a negative one must still be caught)
    x = np.zeros((3, 4))
    msgs = []
    for mod, f in ((tg, F), (lambda v: th(torch, v), torch.nn.functional)):
        with pytest.raises(IndexError) as e:
            f.nll_loss(mod(x), mod(np.array(target)))
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]
    with pytest.raises(IndexError, match=f"Target {min(target) if min(target) < 0 else max(target)} is out"):
        F.nll_loss(tg(x), tapegrad.tensor(np.array(target, np.int32)))     # (an int32 target, cast first)


@pytest.mark.parametrize("training", [True, False])
def test_native_batch_norm_matches_torch(torch, training):
    """torch.native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps): (out,
    save_mean, save_invstd), the running stats updated in training. (It raised a TypeError while one module
    replaced the name batch_norm with torch.batch_norm's signature under its feet.)"""
    rng = np.random.default_rng(0)
    x, w, b = rng.standard_normal((4, 3, 2)), np.array([1.0, 2.0, 3.0]), np.array([0.1, 0.2, 0.3])
    outs, stats = [], []
    for m in (tapegrad, torch):
        rm, rv = m.tensor(np.zeros(3)), m.tensor(np.ones(3))
        outs.append([t.numpy() for t in m.native_batch_norm(m.tensor(x), m.tensor(w), m.tensor(b), rm, rv, training,
                                                            0.1, 1e-5)])
        stats.append((rm.numpy(), rv.numpy()))
    for a, e in zip(outs[0] + list(stats[0]), outs[1] + list(stats[1])):
        assert a.shape == e.shape
        np.testing.assert_allclose(a, e, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("p", [float("-inf"), float("inf"), 0.5, 1, 2, 3, -1])
def test_normalize_every_p_as_torch(torch, p):
    """normalize's norm is linalg.vector_norm's (one kernel, one gradient formula): the -inf norm is the smallest
    magnitude (it gave 1 with a NaN gradient)."""
    def run(m):
        x = m.tensor([[3., -4., 0.5], [1., 2., -2.]], requires_grad=True)
        y = m.nn.functional.normalize(x, p=p, dim=1)
        (y * m.tensor([[1., 2., 3.], [4., 5., 6.]])).sum().backward()
        return y.detach().numpy(), x.grad.numpy()
    for a, b in zip(run(tapegrad), run(torch)):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def _linear_dtype_errors(m):
    F_ = m.nn.functional
    x32, w64, b64, b32 = m.ones(2, 3), m.ones(4, 3, dtype=m.float64), m.ones(4, dtype=m.float64), m.ones(4)
    calls = [lambda: F_.linear(x32, w64), lambda: F_.linear(x32, w64, b64), lambda: F_.linear(x32[0], w64),
             lambda: F_.linear(x32[None], w64), lambda: F_.linear(x32, w64.float(), b64),
             lambda: F_.linear(x32[None], w64, b64), lambda: F_.linear(x32[0], w64, b64),
             lambda: F_.linear(x32[None], w64.float(), b64), lambda: F_.linear(x32, w64, b32),
             lambda: F_.linear(x32.double(), w64, b32), lambda: m.nn.Linear(3, 4).double()(x32),
             lambda: F_.linear(x32.long(), w64.long()).dtype]
    out = []
    for c in calls:
        try:
            out.append(str(c()))
        except RuntimeError as e:
            out.append(str(e))
    return out


def test_linear_refuses_mixed_dtypes_as_torch(torch):
    """A float32 input through a float64 layer (or a bias of another dtype) is torch's error, not a promotion:
    ``mm``'s wording without a bias, ``addmm``'s with one (the bias checked against the weight first)."""
    assert _linear_dtype_errors(tapegrad) == [s.replace("torch.", "tapegrad.") for s in _linear_dtype_errors(torch)]


def test_parser_functions_take_torchs_parameter_names(torch):
    # nn.functional's built-ins (torch's C++ parser) take their schema's names as keywords: hflayers' latch data
    # calls F.one_hot(input=..., num_classes=...)
    import inspect

    from tapegrad._aliases import PARSER_FUNCTIONS
    for name in sorted(PARSER_FUNCTIONS["nn.functional"]):
        fn = getattr(tapegrad.nn.functional, name)
        while getattr(fn, "__wrapped__", None) is not None:
            fn = fn.__wrapped__
        ours = list(inspect.signature(fn).parameters)
        schemas = torch._C._jit_get_schemas_for_operator("aten::" + name)
        theirs = [[a.name.replace("self", "input") for a in s.arguments] for s in schemas]
        assert not schemas or any(t[:len(ours)] == ours[:len(t)] for t in theirs), (name, ours, theirs)
    x = tapegrad.tensor([0, 2])
    assert tapegrad.nn.functional.one_hot(input=x, num_classes=3).tolist() == \
        torch.nn.functional.one_hot(input=torch.tensor([0, 2]), num_classes=3).tolist()


@pytest.mark.parametrize("tdt", ["long", "bool", "float16", "float32", "float64"])
@pytest.mark.parametrize("form", ["bce", "logits", "logits_pos_weight", "logits_weight"])
def test_binary_cross_entropy_mixed_dtypes(torch, tdt, form):
    """A float64 input against a target of another dtype (a CTR model's ``target.float()`` under float64):
    binary_cross_entropy refuses it in torch's words, the logits form returns the target's float dtype."""
    def run(m, F_):
        x = m.tensor([0.2, 0.7, 0.4], dtype=m.float64, requires_grad=True)
        t = m.tensor([1, 0, 1], dtype=getattr(m, tdt))
        kw = {"logits_pos_weight": dict(pos_weight=m.ones(3)), "logits_weight": dict(weight=m.ones(3) * 2)}
        fn = F_.binary_cross_entropy if form == "bce" else F_.binary_cross_entropy_with_logits
        try:
            loss = fn(x, t, **kw.get(form, {}))
        except RuntimeError as e:
            return str(e)
        loss.backward()
        return str(loss.dtype).split(".")[1], loss.item(), x.grad.dtype == m.float64, x.grad.tolist()
    got, want = run(tapegrad, F), run(torch, torch.nn.functional)
    if isinstance(want, str):
        assert got == want
    else:
        assert got[:1] == want[:1] and got[2] == want[2]
        np.testing.assert_allclose(got[1], want[1], rtol=1e-3 if tdt == "float16" else 1e-7)
        np.testing.assert_allclose(got[3], want[3], rtol=1e-3 if tdt == "float16" else 1e-7)
