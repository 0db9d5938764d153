"""Specs of tapegrad.nn.functional (ops/nn_ops/): linear, softmax family, losses, dropout, normalisation,
embedding, distances and attention. Stability at ±1e4, error messages and dropout statistics are in
tests/test_nn_functional.py."""

import numpy as np

import tapegrad.nn.functional  # noqa: F401 - makes ``m.nn.functional`` resolvable for tapegrad
from ops.op_db import OpSpec, S, noncontig, randn


def F(m):
    return m.nn.functional


def idx(*values):
    return np.array(values, dtype=np.int64)


def labels(r, n, c, *rest):
    return r.integers(0, c, size=(n,) + rest).astype(np.int64)


def probs(r, *shape, axis=1):
    e = np.exp(r.standard_normal(shape))
    return e / e.sum(axis=axis, keepdims=True)


def const(m, a, like):
    """A sample array as a constant (no-grad) tensor of ``like``'s dtype: torch refuses a grad on these."""
    return m.tensor(a, dtype=like.dtype)


def pm1(r, *shape):
    return np.where(r.random(shape) < 0.5, -1.0, 1.0)


def away(r, *shape, gap=0.2):
    """Values kept away from 0 (for kinks at 0: |x|, clamp, hinge)."""
    a = r.standard_normal(shape)
    return np.where(np.abs(a) < gap, np.sign(a + 1e-12) * gap + a, a)


_RED = ("mean", "sum", "none")
# the forward-AD test gives input 1 (±1 labels the loss compares exactly) no tangent: finite differences across
# the comparison mean nothing
_LABELS = {"fwd_constant": (1,)}
# torch 2.13's forward AD of norm_except_dim over the whole tensor (dim=-1) fails: it makes a [1, 1] tangent for
# the 0-d norm; the forward-AD test checks these against finite differences only
_NO_FWD_WHOLE = {"fwd_torch": "torch 2.13's forward AD of norm_except_dim(dim=-1) fails (a [1, 1] tangent for a "
                              "0-d result)"}

SPECS = [
    # --- linear ------------------------------------------------------------------------------------------------
    OpSpec("nn.functional.linear", lambda m, x, w, *b: F(m).linear(x, w, *b), lambda r: [
        S(randn(r, 3, 4), randn(r, 5, 4), randn(r, 5), name="2d"),
        S(randn(r, 3, 4), randn(r, 5, 4), name="2d_nobias"),
        S(randn(r, 2, 3, 4), randn(r, 5, 4), randn(r, 5), name="3d"),
        S(randn(r, 2, 3, 4), randn(r, 5, 4), name="3d_nobias"),
        S(randn(r, 4), randn(r, 5, 4), randn(r, 5), name="1d"),
        S(randn(r, 4), randn(r, 5, 4), name="1d_nobias"),
        S(randn(r, 0, 4), randn(r, 5, 4), randn(r, 5), name="empty"),
        S(noncontig(randn(r, 3, 4)), noncontig(randn(r, 5, 4)), randn(r, 5), name="noncontig"),
        S(randn(r, 3, 4), randn(r, 5, 4), randn(r, 1, 5), name="bias_2d")]),
    OpSpec("nn.functional.bilinear", lambda m, a, b, w, *bias: F(m).bilinear(a, b, w, *bias), lambda r: [
        S(randn(r, 3, 2), randn(r, 3, 4), randn(r, 5, 2, 4), randn(r, 5), name="bias"),
        S(randn(r, 3, 2), randn(r, 3, 4), randn(r, 5, 2, 4), name="nobias"),
        S(randn(r, 2, 3, 2), randn(r, 2, 3, 4), randn(r, 5, 2, 4), randn(r, 5), name="3d")]),
    # --- softmax family ------------------------------------------------------------------------------------------
    *[OpSpec(f"nn.functional.{fn}", lambda m, x, fn=fn, **kw: getattr(F(m), fn)(x, **kw), lambda r: [
        S(randn(r, 3, 4), dim=1, name="dim1"), S(randn(r, 3, 4), dim=0, name="dim0"),
        S(randn(r, 2, 3, 4), dim=-1, name="neg"), S(randn(r), dim=0, name="0d"),
        S(randn(r, 0, 3), dim=1, name="empty"), S(noncontig(randn(r, 4, 3)), dim=1, name="noncontig"),
        S(randn(r, 3, 4) * 30, dim=1, name="wide")]) for fn in ("softmax", "log_softmax", "softmin")],
    OpSpec("softmax_dtype", lambda m, x: F(m).softmax(x, 1, dtype=m.float64), lambda r: [S(randn(r, 3, 4))]),
    OpSpec("log_softmax_dtype", lambda m, x: m.log_softmax(x, 1, dtype=m.float64), lambda r: [S(randn(r, 3, 4))]),
    OpSpec("softmax_top", lambda m, x: m.softmax(x, -1), lambda r: [S(randn(r, 3, 4))]),
    OpSpec("tensor.softmax", lambda m, x: x.softmax(-1), lambda r: [S(randn(r, 3, 4))]),
    OpSpec("tensor.log_softmax", lambda m, x: x.log_softmax(0), lambda r: [S(randn(r, 3, 4))]),
    OpSpec("nn.functional.glu", lambda m, x, **kw: F(m).glu(x, **kw), lambda r: [
        S(randn(r, 3, 4), name="last"), S(randn(r, 4, 3), dim=0, name="dim0"), S(randn(r, 2, 4, 2), dim=1)]),
    # --- classification losses -----------------------------------------------------------------------------------
    OpSpec("nn.functional.cross_entropy", lambda m, x, t, **kw: F(m).cross_entropy(x, t, **kw), lambda r: [
        *[S(randn(r, 4, 5), labels(r, 4, 5), reduction=red, name=red) for red in _RED],
        S(randn(r, 5), np.array(2), name="unbatched"),
        S(randn(r, 4, 5), idx(0, -100, 3, 4), name="ignore_index_default"),
        S(randn(r, 4, 5), idx(0, 1, 3, 1), ignore_index=1, name="ignore_index"),
        S(randn(r, 4, 5), idx(0, 1, 3, 1), ignore_index=1, reduction="none", name="ignore_none"),
        *[S(randn(r, 4, 5), labels(r, 4, 5), label_smoothing=0.2, reduction=red, name=f"smooth_{red}")
          for red in _RED],
        S(randn(r, 4, 5), idx(0, 1, 3, 1), ignore_index=1, label_smoothing=0.1, name="smooth_ignore"),
        S(randn(r, 2, 3, 4), labels(r, 2, 3, 4), name="k1"),
        S(randn(r, 2, 3, 2, 2), labels(r, 2, 3, 2, 2), name="k2"),
        S(randn(r, 2, 3, 2, 2), labels(r, 2, 3, 2, 2), reduction="none", name="k2_none"),
        S(randn(r, 2, 3, 4), labels(r, 2, 3, 4), reduction="none", name="k1_none"),
        S(randn(r, 2, 3, 2, 1, 2), labels(r, 2, 3, 2, 1, 2), reduction="none", name="k3_none"),
        *[S(randn(r, 4, 5), probs(r, 4, 5), reduction=red, name=f"probs_{red}") for red in _RED],
        S(randn(r, 4, 5), probs(r, 4, 5), label_smoothing=0.3, name="probs_smooth"),
        S(randn(r, 2, 3, 4), probs(r, 2, 3, 4), name="probs_k1"),
        S(randn(r, 4, 5) * 1e3, labels(r, 4, 5), name="large")]),
    OpSpec("nn.functional.cross_entropy_weight", lambda m, x, t, *wg, w=None, **kw:
           F(m).cross_entropy(x, t, weight=const(m, w, x) if w is not None else wg[0], **kw), lambda r: [
        S(randn(r, 4, 5), labels(r, 4, 5), w=randn(r, 5, positive=True), name="mean"),
        S(randn(r, 4, 5), labels(r, 4, 5), w=randn(r, 5, positive=True), reduction="none", name="none"),
        S(randn(r, 4, 5), idx(0, 1, 3, 1), w=randn(r, 5, positive=True), ignore_index=3, label_smoothing=0.1,
          name="smooth_ignore"),
        S(randn(r, 4, 5), probs(r, 4, 5), w=randn(r, 5, positive=True), name="probs"),
        S(randn(r, 4, 5), probs(r, 4, 5), randn(r, 5, positive=True), name="probs_weight_grad")]),
    OpSpec("nn.functional.nll_loss", lambda m, x, t, **kw: F(m).nll_loss(x, t, **kw), lambda r: [
        *[S(randn(r, 4, 5), labels(r, 4, 5), reduction=red, name=red) for red in _RED],
        S(randn(r, 5), np.array(1), name="unbatched"),
        S(randn(r, 5), np.array(1), reduction="none", name="unbatched_none"),
        S(randn(r, 4, 5), idx(0, 2, 2, 4), ignore_index=2, name="ignore"),
        S(randn(r, 2, 3, 2, 2), labels(r, 2, 3, 2, 2), name="2d"),
        S(randn(r, 2, 3, 4), labels(r, 2, 3, 4), reduction="sum", name="1d_spatial"),
        S(randn(r, 0, 5), idx(), reduction="sum", name="empty")]),
    OpSpec("nn.functional.nll_loss_weight", lambda m, x, t, w, **kw: F(m).nll_loss(x, t, weight=const(m, w, x), **kw),
           lambda r: [S(randn(r, 4, 5), labels(r, 4, 5), w=randn(r, 5, positive=True)),
                      S(randn(r, 4, 5), labels(r, 4, 5), w=randn(r, 5, positive=True), reduction="none", name="none")]),
    # --- regression losses ---------------------------------------------------------------------------------------
    *[OpSpec(f"nn.functional.{fn}", lambda m, x, y, fn=fn, **kw: getattr(F(m), fn)(x, y, **kw), lambda r, extra=extra: [
        *[S(away(r, 3, 4), randn(r, 3, 4), reduction=red, name=red) for red in _RED],
        S(randn(r), randn(r), name="0d"), S(randn(r, 0, 3), randn(r, 0, 3), reduction="sum", name="empty"),
        S(noncontig(randn(r, 4, 3)), randn(r, 4, 3), name="noncontig"),
        *[S(randn(r, 3, 4) * 2, randn(r, 3, 4), name=f"param{i}", **kw) for i, kw in enumerate(extra)]])
      for fn, extra in (("mse_loss", []), ("l1_loss", []), ("smooth_l1_loss", [{"beta": 0.5}, {"beta": 2.0}]),
                        ("huber_loss", [{"delta": 0.5}, {"delta": 2.0}]))],
    OpSpec("nn.functional.l1_loss_beta0", lambda m, x, y: F(m).smooth_l1_loss(x, y, beta=0.0),
           lambda r: [S(randn(r, 3, 4), randn(r, 3, 4) + 5)]),
    OpSpec("nn.functional.mse_loss_weight", lambda m, x, y, w, **kw: F(m).mse_loss(x, y, weight=w, **kw),
           lambda r: [S(randn(r, 3, 4), randn(r, 3, 4), randn(r, 3, 4, positive=True), reduction=red, name=red)
                      for red in _RED]),
    OpSpec("nn.functional.huber_loss_weight", lambda m, x, y, w: F(m).huber_loss(x, y, weight=w),
           lambda r: [S(randn(r, 3, 4) * 2, randn(r, 3, 4), randn(r, 3, 4, positive=True))]),
    OpSpec("nn.functional.binary_cross_entropy", lambda m, x, t, **kw: F(m).binary_cross_entropy(x, t, **kw),
           lambda r: [*[S(randn(r, 3, 4, low=0.05, high=0.95), randn(r, 3, 4, low=0, high=1), reduction=red,
                          name=red) for red in _RED],
                      S(randn(r, low=0.1, high=0.9), randn(r, low=0, high=1), name="0d")]),
    OpSpec("nn.functional.binary_cross_entropy_weight", lambda m, x, t, w:
           F(m).binary_cross_entropy(x, t, weight=const(m, w, x)),
           lambda r: [S(randn(r, 3, 4, low=0.05, high=0.95), randn(r, 3, 4, low=0, high=1),
                        w=randn(r, 4, positive=True))]),
    OpSpec("nn.functional.binary_cross_entropy_with_logits", lambda m, x, t, **kw:
           F(m).binary_cross_entropy_with_logits(x, t, **kw), lambda r: [
        *[S(randn(r, 3, 4), randn(r, 3, 4, low=0, high=1), reduction=red, name=red) for red in _RED],
        S(randn(r, 3, 4) * 30, randn(r, 3, 4, low=0, high=1), name="wide"), S(randn(r), randn(r), name="0d")]),
    OpSpec("nn.functional.binary_cross_entropy_with_logits_weights", lambda m, x, t, w, pw, **kw:
           F(m).binary_cross_entropy_with_logits(x, t, weight=const(m, w, x), pos_weight=const(m, pw, x), **kw),
           lambda r: [
        S(randn(r, 3, 4), randn(r, 3, 4, low=0, high=1), w=randn(r, 4, positive=True), pw=randn(r, 4, positive=True)),
        S(randn(r, 3, 4), randn(r, 3, 4, low=0, high=1), w=randn(r, 3, 1, positive=True),
          pw=randn(r, 4, positive=True), reduction="none", name="none")]),
    OpSpec("nn.functional.kl_div", lambda m, x, t, **kw: F(m).kl_div(x, t, **kw), lambda r: [
        *[S(np.log(probs(r, 3, 4)), probs(r, 3, 4), reduction=red, name=red) for red in _RED + ("batchmean",)],
        S(np.log(probs(r, 3, 4)), np.log(probs(r, 3, 4)), log_target=True, reduction="batchmean", name="log_target"),
        S(np.log(probs(r, 3, 4)), np.log(probs(r, 3, 4)), log_target=True, reduction="none", name="log_none")],
        warns="reduction: 'mean' divides the total loss by both the batch size and the support size"),
    OpSpec("nn.functional.poisson_nll_loss", lambda m, x, t, **kw: F(m).poisson_nll_loss(x, t, **kw), lambda r: [
        *[S(randn(r, 3, 4), randn(r, 3, 4, positive=True) * 2, reduction=red, name=red) for red in _RED],
        S(randn(r, 3, 4, positive=True), randn(r, 3, 4, positive=True), log_input=False, name="linear"),
        S(randn(r, 3, 4), randn(r, 3, 4, low=0.2, high=4), full=True, name="full")]),
    OpSpec("nn.functional.gaussian_nll_loss", lambda m, x, t, v, **kw: F(m).gaussian_nll_loss(x, t, v, **kw),
           lambda r: [
        *[S(randn(r, 3, 4), randn(r, 3, 4), randn(r, 3, 4, positive=True), reduction=red, name=red) for red in _RED],
        S(randn(r, 3, 4), randn(r, 3, 4), randn(r, 3, positive=True), name="per_row"),
        S(randn(r, 3, 4), randn(r, 3, 4), randn(r, 3, 1, positive=True), full=True, name="hetero_full")]),
    OpSpec("nn.functional.gaussian_nll_loss_float_var", lambda m, x, t: F(m).gaussian_nll_loss(x, t, 0.7),
           lambda r: [S(randn(r, 3, 4), randn(r, 3, 4))]),
    # --- margin losses -------------------------------------------------------------------------------------------
    OpSpec("nn.functional.margin_ranking_loss", lambda m, a, b, t, **kw: F(m).margin_ranking_loss(a, b, t, **kw),
           lambda r: [*[S(randn(r, 5), randn(r, 5) + 0.3, pm1(r, 5), reduction=red, name=red) for red in _RED],
                      S(randn(r, 5), randn(r, 5), pm1(r, 5), margin=0.5, name="margin")]),
    OpSpec("nn.functional.hinge_embedding_loss", lambda m, x, t, **kw: F(m).hinge_embedding_loss(x, t, **kw),
           lambda r: [*[S(away(r, 3, 4) + 1, pm1(r, 3, 4), reduction=red, name=red) for red in _RED],
                      S(away(r, 3, 4), pm1(r, 3, 4), margin=0.5, name="margin")],
           extra=_LABELS),
    OpSpec("nn.functional.soft_margin_loss", lambda m, x, t, **kw: F(m).soft_margin_loss(x, const(m, t, x), **kw),
           lambda r: [*[S(randn(r, 3, 4), t=pm1(r, 3, 4), reduction=red, name=red) for red in _RED],
                      S(randn(r, 3, 4) * 50, t=pm1(r, 3, 4), name="wide")]),
    OpSpec("nn.functional.multilabel_soft_margin_loss", lambda m, x, t, *w, **kw:
           F(m).multilabel_soft_margin_loss(x, t, *w, **kw), lambda r: [
        *[S(randn(r, 3, 4), (r.random((3, 4)) < 0.5).astype(float), reduction=red, name=red) for red in _RED],
        S(randn(r, 3, 4), (r.random((3, 4)) < 0.5).astype(float), randn(r, 4, positive=True), name="weight")]),
    OpSpec("nn.functional.triplet_margin_loss", lambda m, a, pos, neg, **kw: F(m).triplet_margin_loss(a, pos, neg, **kw),
           lambda r: [*[S(randn(r, 4, 3), randn(r, 4, 3), randn(r, 4, 3), reduction=red, name=red) for red in _RED],
                      S(randn(r, 4, 3), randn(r, 4, 3), randn(r, 4, 3), p=1, margin=2.0, name="p1"),
                      S(randn(r, 4, 3), randn(r, 4, 3), randn(r, 4, 3), swap=True, margin=3.0, name="swap"),
                      S(randn(r, 3), randn(r, 3), randn(r, 3), margin=5.0, name="1d")]),
    OpSpec("nn.functional.cosine_embedding_loss", lambda m, a, b, t, **kw: F(m).cosine_embedding_loss(a, b, t, **kw),
           lambda r: [*[S(randn(r, 4, 3), randn(r, 4, 3), idx(1, -1, 1, -1), reduction=red, name=red)
                        for red in _RED],
                      S(randn(r, 4, 3), randn(r, 4, 3), idx(1, -1, -1, -1), margin=-0.9, name="margin"),
                      S(randn(r, 3), randn(r, 3), np.array(-1), margin=-0.99, name="0d_target")]),
    OpSpec("nn.functional.multi_margin_loss", lambda m, x, t, **kw: F(m).multi_margin_loss(x, t, **kw), lambda r: [
        *[S(randn(r, 4, 5) * 0.3, labels(r, 4, 5), reduction=red, name=red) for red in _RED],
        S(randn(r, 4, 5) * 0.3, labels(r, 4, 5), p=2, margin=0.7, name="p2"),
        S(randn(r, 5) * 0.3, idx(2), name="1d")], gradgrad=False,
        notes="torch has no double backward for multi_margin_loss (derivative of multi_margin_loss_backward)"),
    OpSpec("nn.functional.multi_margin_loss_weight", lambda m, x, t, w: F(m).multi_margin_loss(
        x, t, weight=const(m, w, x)), lambda r: [S(randn(r, 4, 5) * 0.3, labels(r, 4, 5), w=randn(r, 5, positive=True))],
        gradgrad=False, notes="torch has no double backward for multi_margin_loss"),
    # --- dropout (eval mode / p=0 are the identity, torch returns the input itself; p=1 zeroes deterministically;
    #     training statistics are tested in tests/test_nn_functional.py) -----------------------------------------
    *[OpSpec(f"nn.functional.{fn}_eval", lambda m, x, fn=fn, **kw: getattr(F(m), fn)(x, **kw) * 1.0, lambda r: [
        S(randn(r, 2, 3, 2, 2, 2), p=0.3, training=False, name="eval"), S(randn(r, 2, 3, 2, 2, 2), p=0.0, name="p0")])
      for fn in ("dropout", "dropout3d", "alpha_dropout", "feature_alpha_dropout")],
    OpSpec("nn.functional.dropout1d_eval", lambda m, x: F(m).dropout1d(x, 0.4, training=False),
           lambda r: [S(randn(r, 3, 4), name="unbatched")], notes="unbatched input: unsqueeze/squeeze as torch"),
    OpSpec("nn.functional.dropout_p1", lambda m, x, **kw: F(m).dropout(x, 1.0, **kw), lambda r: [S(randn(r, 3, 4))],
           inplace=lambda x: tapegrad_dropout_inplace(x)),
    OpSpec("nn.functional.alpha_dropout_p1", lambda m, x: F(m).alpha_dropout(x, 1.0, True), lambda r: [S(randn(r, 3))]),
    OpSpec("nn.functional.dropout2d_p1", lambda m, x: F(m).dropout2d(x, 1.0), lambda r: [S(randn(r, 2, 3, 2, 2))]),
    OpSpec("dropout_top", lambda m, x: m.dropout(x, 1.0, True), lambda r: [S(randn(r, 3))]),
    # --- normalisation -------------------------------------------------------------------------------------------
    OpSpec("nn.functional.layer_norm", lambda m, x, *wb, shape, **kw: F(m).layer_norm(x, shape, *wb, **kw), lambda r: [
        S(randn(r, 3, 4), shape=(4,), name="plain"),
        S(randn(r, 3, 4), randn(r, 4), randn(r, 4), shape=(4,), name="affine"),
        S(randn(r, 2, 3, 4), randn(r, 3, 4), randn(r, 3, 4), shape=(3, 4), name="2dims"),
        S(randn(r, 2, 3, 4), randn(r, 4), shape=(4,), eps=1e-3, name="weight_only"),
        S(randn(r, 5), randn(r, 5), randn(r, 5), shape=(5,), name="1d"),
        S(randn(r, 0, 4), randn(r, 4), randn(r, 4), shape=(4,), name="empty"),
        S(noncontig(randn(r, 4, 3)), randn(r, 3), randn(r, 3), shape=(3,), name="noncontig")]),
    OpSpec("layer_norm_top", lambda m, x, w, b: m.layer_norm(x, (4,), w, b), lambda r: [
        S(randn(r, 3, 4), randn(r, 4), randn(r, 4))]),
    OpSpec("nn.functional.batch_norm_train", lambda m, x, *wb, **kw: F(m).batch_norm(
        x, m.zeros(x.shape[1], dtype=x.dtype), m.ones(x.shape[1], dtype=x.dtype), *wb, training=True, **kw),
        lambda r: [S(randn(r, 4, 3), name="2d"), S(randn(r, 4, 3), randn(r, 3), randn(r, 3), name="affine"),
                   S(randn(r, 2, 3, 4), randn(r, 3), randn(r, 3), momentum=0.3, name="3d"),
                   S(randn(r, 2, 3, 2, 2), randn(r, 3), randn(r, 3), eps=1e-2, name="4d")]),
    OpSpec("nn.functional.batch_norm_no_running", lambda m, x, w, b: F(m).batch_norm(x, None, None, w, b, True),
           lambda r: [S(randn(r, 4, 3), randn(r, 3), randn(r, 3))]),
    OpSpec("nn.functional.batch_norm_eval", lambda m, x, *wb: F(m).batch_norm(
        x, m.arange(x.shape[1], dtype=x.dtype) * 0.1, m.arange(x.shape[1], dtype=x.dtype) + 0.5, *wb),
        lambda r: [S(randn(r, 4, 3), name="2d"), S(randn(r, 2, 3, 4), randn(r, 3), randn(r, 3), name="affine")]),
    OpSpec("batch_norm_top", lambda m, x, w, b: m.batch_norm(x, w, b, None, None, True, 0.1, 1e-5, False),
           lambda r: [S(randn(r, 4, 3), randn(r, 3), randn(r, 3))]),
    OpSpec("nn.functional.group_norm", lambda m, x, *wb, g, **kw: F(m).group_norm(x, g, *wb, **kw), lambda r: [
        S(randn(r, 2, 4, 3), g=2, name="plain"), S(randn(r, 2, 4, 3), randn(r, 4), randn(r, 4), g=2, name="affine"),
        S(randn(r, 2, 6, 2, 2), randn(r, 6), randn(r, 6), g=3, eps=1e-3, name="4d"),
        S(randn(r, 3, 4), randn(r, 4), randn(r, 4), g=1, name="2d")]),
    OpSpec("nn.functional.instance_norm", lambda m, x, *wb, **kw: F(m).instance_norm(x, None, None, *wb, **kw),
           lambda r: [S(randn(r, 2, 3, 4), name="plain"), S(randn(r, 2, 3, 4), randn(r, 3), randn(r, 3), name="affine"),
                      S(randn(r, 2, 3, 2, 2), randn(r, 3), randn(r, 3), name="4d")]),
    OpSpec("nn.functional.instance_norm_running", lambda m, x: F(m).instance_norm(
        x, m.zeros(3, dtype=x.dtype), m.ones(3, dtype=x.dtype), use_input_stats=False),
        lambda r: [S(randn(r, 2, 3, 4))]),
    OpSpec("nn.functional.rms_norm", lambda m, x, *w, shape, **kw: F(m).rms_norm(x, shape, *w, **kw), lambda r: [
        S(randn(r, 3, 4), shape=(4,), name="plain"), S(randn(r, 3, 4), randn(r, 4), shape=(4,), name="weight"),
        S(randn(r, 2, 3, 4), randn(r, 3, 4), shape=(3, 4), eps=1e-3, name="2dims")]),
    OpSpec("nn.functional.local_response_norm", lambda m, x, **kw: F(m).local_response_norm(x, **kw), lambda r: [
        S(randn(r, 2, 5, 3), size=3, name="3d"), S(randn(r, 2, 5, 2, 2), size=2, alpha=0.1, beta=0.5, k=2.0,
                                                  name="4d"),
        S(randn(r, 1, 4, 3), size=4, alpha=0.5, name="even")]),
    # --- embeddings ----------------------------------------------------------------------------------------------
    OpSpec("nn.functional.embedding", lambda m, w, i, **kw: F(m).embedding(i, w, **kw), lambda r: [
        S(randn(r, 5, 3), idx(0, 2, 2, 4), name="1d"), S(randn(r, 5, 3), np.array([[0, 1], [4, 1]]), name="2d"),
        S(randn(r, 5, 3), np.array(3), name="0d_index"), S(randn(r, 5, 3), idx(), name="empty")]),
    OpSpec("nn.functional.embedding_padding_freq", lambda m, w, i, **kw: F(m).embedding(i, w, **kw), lambda r: [
        S(randn(r, 5, 3), idx(0, 2, 2, 4), padding_idx=2, name="padding"),
        S(randn(r, 5, 3), idx(0, 2, 2, 4), padding_idx=-1, name="padding_neg"),
        S(randn(r, 5, 3), idx(0, 2, 2, 4, 2), scale_grad_by_freq=True, name="freq")], grad=False,
        notes="the padding row's zero gradient and the 1/count scaling differ from the numerical derivative by "
              "design (as torch), so gradcheck cannot apply; gradients vs torch: tests/test_nn_functional.py"),
    OpSpec("embedding_top", lambda m, w, i: m.embedding(w, i), lambda r: [S(randn(r, 5, 3), idx(4, 0))]),
    OpSpec("nn.functional.embedding_bag", lambda m, w, i, *o, **kw: F(m).embedding_bag(i, w, *o, **kw), lambda r: [
        S(randn(r, 6, 3), np.array([[0, 1, 5], [2, 2, 3]]), name="2d_mean"),
        S(randn(r, 6, 3), np.array([[0, 1, 5], [2, 2, 3]]), mode="sum", name="2d_sum"),
        S(randn(r, 6, 3), idx(0, 1, 5, 2, 2, 3), idx(0, 2, 2), mode="sum", name="offsets_empty_bag"),
        S(randn(r, 6, 3), idx(0, 1, 5, 2, 4, 3), idx(0, 2), mode="max", name="max"),
        S(randn(r, 6, 3), idx(0, 1, 5, 2, 2, 3), idx(0, 2, 6), include_last_offset=True, name="last_offset"),
        S(randn(r, 6, 3), idx(0, 1, 5, 2, 2, 3), idx(0, 3), padding_idx=2, name="padding")]),
    OpSpec("nn.functional.embedding_bag_weights", lambda m, w, i, o, psw: F(m).embedding_bag(
        i, w, o, mode="sum", per_sample_weights=psw), lambda r: [
        S(randn(r, 6, 3), idx(0, 1, 5, 2, 2, 3), idx(0, 4), randn(r, 6))], gradgrad=False,
        notes="torch has no double backward for per_sample_weights (_embedding_bag_per_sample_weights_backward)"),
    # --- distances and similarity --------------------------------------------------------------------------------
    OpSpec("nn.functional.normalize", lambda m, x, **kw: F(m).normalize(x, **kw), lambda r: [
        S(randn(r, 3, 4), name="default"), S(randn(r, 3, 4), dim=0, p=1.0, name="p1"),
        S(randn(r, 2, 3, 4), dim=-1, p=3.0, name="p3"), S(randn(r, 4), dim=0, name="1d")]),
    OpSpec("nn.functional.cosine_similarity", lambda m, a, b, **kw: F(m).cosine_similarity(a, b, **kw), lambda r: [
        S(randn(r, 3, 4), randn(r, 3, 4), name="default"), S(randn(r, 3, 4), randn(r, 4), dim=-1, name="broadcast"),
        S(randn(r, 2, 3, 4), randn(r, 2, 3, 4), dim=0, name="dim0")], aliases=("axis",)),
    OpSpec("cosine_similarity_top", lambda m, a, b: m.cosine_similarity(a, b), lambda r: [
        S(randn(r, 3, 4), randn(r, 3, 4))]),
    OpSpec("nn.functional.pairwise_distance", lambda m, a, b, **kw: F(m).pairwise_distance(a, b, **kw), lambda r: [
        S(randn(r, 3, 4), randn(r, 3, 4), name="p2"), S(randn(r, 3, 4), randn(r, 3, 4), p=1.0, name="p1"),
        S(randn(r, 3, 4), randn(r, 3, 4), p=3.0, keepdim=True, name="p3"),
        S(randn(r, 3, 4), randn(r, 4), name="broadcast"), S(randn(r, 4), randn(r, 4), name="1d")],
        aliases=("keepdims",)),
    OpSpec("nn.functional.pdist", lambda m, x, **kw: F(m).pdist(x, **kw), lambda r: [
        S(randn(r, 4, 3), name="p2"), S(randn(r, 4, 3), p=1, name="p1"), S(randn(r, 4, 3), p=3, name="p3")],
        gradgrad=False, notes="torch has no double backward for pdist (_pdist_backward)"),
    # --- attention -----------------------------------------------------------------------------------------------
    OpSpec("nn.functional.scaled_dot_product_attention", lambda m, q, k, v, *mask_, mask=None, **kw:
           F(m).scaled_dot_product_attention(q, k, v, *mask_, **kw, **({} if mask is None else {
               "attn_mask": const(m, mask, q)})), lambda r: [
        S(randn(r, 2, 2, 3, 4), randn(r, 2, 2, 5, 4), randn(r, 2, 2, 5, 4), name="4d"),
        S(randn(r, 1, 2, 3, 4), randn(r, 1, 2, 3, 4), randn(r, 1, 2, 3, 4), is_causal=True, name="causal"),
        S(randn(r, 1, 2, 3, 4), randn(r, 1, 2, 5, 4), randn(r, 1, 2, 5, 4), is_causal=True, name="causal_rect"),
        S(randn(r, 1, 2, 3, 4), randn(r, 1, 2, 5, 4), randn(r, 1, 2, 5, 4), mask=randn(r, 3, 5), name="float_mask"),
        S(randn(r, 1, 2, 3, 4), randn(r, 1, 2, 3, 4), randn(r, 1, 2, 3, 4), (np.eye(3) + np.tri(3, k=-1)) > 0,
          name="bool_mask"),
        S(randn(r, 1, 2, 3, 4), randn(r, 1, 2, 3, 4), randn(r, 1, 2, 3, 4), scale=0.3, name="scale"),
        S(randn(r, 1, 4, 3, 2), randn(r, 1, 2, 3, 2), randn(r, 1, 2, 3, 2), enable_gqa=True, name="gqa")],
        gradgrad=False, notes="torch's fused CPU kernel (4-d, no dropout, equal head dims, constant mask) has no "
                              "double backward; ours has one, checked against torch's math path below"),
    OpSpec("nn.functional.scaled_dot_product_attention_math", lambda m, q, k, v, *mask, **kw:
           F(m).scaled_dot_product_attention(q, k, v, *mask, **kw), lambda r: [
        S(randn(r, 2, 2, 3, 4), randn(r, 2, 2, 5, 4), randn(r, 2, 2, 5, 3), name="4d_value_dim"),
        S(randn(r, 2, 3, 4), randn(r, 2, 5, 4), randn(r, 2, 5, 2), name="3d"),
        S(randn(r, 2, 3, 4), randn(r, 2, 3, 4), randn(r, 2, 3, 4), is_causal=True, scale=0.5, name="3d_causal"),
        S(randn(r, 1, 2, 3, 4), randn(r, 1, 2, 5, 4), randn(r, 1, 2, 5, 4), randn(r, 3, 5), name="grad_mask"),
        S(randn(r, 2, 3, 4), randn(r, 2, 3, 4), randn(r, 2, 3, 4), (np.eye(3) + np.tri(3, k=-1)) > 0,
          name="3d_bool_mask")]),
    # --- more of nn.functional ----------------------------------------------------------------------------------
    OpSpec("nn.functional.gumbel_softmax_tau_inf", lambda m, x: (m.manual_seed(0), F(m).gumbel_softmax(
        x * 1e-3, tau=1e6))[1],
           lambda r: [S(randn(r, 3, 4))], float32=False, atol=1e-5, rtol=1e-5, gc_atol=1e-4,
           notes="random (tapegrad's stream, not torch's): with tau huge the noise vanishes, the result is uniform; "
                 "reseeded in the call so that gradcheck sees one function; the distribution itself is tested in "
                 "tests/test_nn_functional.py"),
    OpSpec("nn.functional.linear_cross_entropy", lambda m, x, w, t, **kw: F(m).linear_cross_entropy(x, w, t, **kw),
           lambda r: [S(randn(r, 4, 3), randn(r, 5, 3), labels(r, 4, 5), name="plain"),
                      S(randn(r, 4, 3), randn(r, 5, 3), labels(r, 4, 5), linear_bias=None, reduction="sum",
                        label_smoothing=0.1, name="smooth"),
                      S(randn(r, 3), randn(r, 5, 3), np.array(2), name="unbatched"),
                      S(randn(r, 4, 3), randn(r, 5, 2, 3), labels(r, 4, 5, 2), reduction="none", name="kdim")]),
    OpSpec("nn.functional.triplet_margin_with_distance_loss", lambda m, a, pos, neg, **kw:
           F(m).triplet_margin_with_distance_loss(a, pos, neg, **kw), lambda r: [
        S(randn(r, 4, 3), randn(r, 4, 3), randn(r, 4, 3), name="default"),
        S(randn(r, 4, 3), randn(r, 4, 3), randn(r, 4, 3), swap=True, margin=2.0, reduction="none", name="swap")]),
    OpSpec("nn.functional.triplet_margin_with_distance_loss_cosine", lambda m, a, pos, neg:
           F(m).triplet_margin_with_distance_loss(
               a, pos, neg, distance_function=lambda x, y: 1.0 - F(m).cosine_similarity(x, y), margin=1.5),
           lambda r: [S(randn(r, 4, 3), randn(r, 4, 3), randn(r, 4, 3))]),
    OpSpec("nn.functional.multilabel_margin_loss", lambda m, x, t, **kw: F(m).multilabel_margin_loss(x, t, **kw),
           lambda r: [*[S(randn(r, 3, 5), np.array([[0, 3, -1, 1, 1], [4, -1, 0, 0, 0], [1, 2, 0, 3, 4]]),
                          reduction=red, name=red) for red in _RED],
                      S(randn(r, 5), idx(2, 2, 0, -1, 4), name="1d")], gradgrad=False,
           notes="torch has no double backward for multilabel_margin_loss"),
    OpSpec("nn.functional.channel_shuffle", lambda m, x, g: F(m).channel_shuffle(x, g), lambda r: [
        S(randn(r, 2, 6, 2), 3, name="3d"), S(randn(r, 1, 4, 2, 2), 2, name="4d")]),
    # --- torch.xxx spellings (ATen's argument order and integer reductions where they differ) --------------------
    OpSpec("kl_div_top", lambda m, x, t: m.kl_div(x, t, 2), lambda r: [S(np.log(probs(r, 3, 4)), probs(r, 3, 4))]),
    OpSpec("binary_cross_entropy_with_logits_top", lambda m, x, t, pw: m.binary_cross_entropy_with_logits(
        x, t, None, const(m, pw, x), 0), lambda r: [S(randn(r, 3, 4), randn(r, 3, 4, low=0, high=1),
                                                      pw=randn(r, 4, positive=True))]),
    OpSpec("poisson_nll_loss_top", lambda m, x, t: m.poisson_nll_loss(x, t, True, False, 1e-8, 2),
           lambda r: [S(randn(r, 3, 4), randn(r, 3, 4, positive=True))]),
    OpSpec("margin_ranking_loss_top", lambda m, a, b, t: m.margin_ranking_loss(a, b, t, 0.1, 0),
           lambda r: [S(randn(r, 5), randn(r, 5) + 0.3, pm1(r, 5))]),
    OpSpec("hinge_embedding_loss_top", lambda m, x, t: m.hinge_embedding_loss(x, t, 0.5, 2),
           lambda r: [S(away(r, 3, 4), pm1(r, 3, 4))], extra=_LABELS),
    OpSpec("triplet_margin_loss_top", lambda m, a, pos, neg: m.triplet_margin_loss(a, pos, neg, 1.0, 2, 1e-6, True, 0),
           lambda r: [S(randn(r, 4, 3), randn(r, 4, 3), randn(r, 4, 3))]),
    OpSpec("cosine_embedding_loss_top", lambda m, a, b, t: m.cosine_embedding_loss(a, b, t, 0.0, 2),
           lambda r: [S(randn(r, 4, 3), randn(r, 4, 3), idx(1, -1, 1, -1))]),
    OpSpec("instance_norm_top", lambda m, x, w, b: m.instance_norm(x, w, b, None, None, True, 0.1, 1e-5, False),
           lambda r: [S(randn(r, 2, 3, 4), randn(r, 3), randn(r, 3))]),
    OpSpec("group_norm_top", lambda m, x, w, b: m.group_norm(x, 2, w, b), lambda r: [
        S(randn(r, 2, 4, 3), randn(r, 4), randn(r, 4))]),
    OpSpec("rms_norm_top", lambda m, x, w: m.rms_norm(x, (4,), w), lambda r: [S(randn(r, 3, 4), randn(r, 4))]),
    OpSpec("bilinear_top", lambda m, a, b, w: m.bilinear(a, b, w), lambda r: [
        S(randn(r, 3, 2), randn(r, 3, 4), randn(r, 5, 2, 4))]),
    OpSpec("pairwise_distance_top", lambda m, a, b: m.pairwise_distance(a, b, 1.0), lambda r: [
        S(randn(r, 3, 4), randn(r, 3, 4))]),
    OpSpec("pdist_top", lambda m, x: m.pdist(x), lambda r: [S(randn(r, 4, 3))], gradgrad=False,
           notes="torch has no double backward for pdist"),
    OpSpec("softmax_top_positional_dtype", lambda m, x: m.softmax(x, 0, m.float64), lambda r: [S(randn(r, 3, 4))]),
    OpSpec("feature_alpha_dropout_top", lambda m, x: m.feature_alpha_dropout(x, 1.0, True), lambda r: [
        S(randn(r, 2, 3, 2))]),
    # ctc_loss: through log_softmax, where torch's gradient (exp(log_probs) - posterior) is the exact one
    OpSpec("nn.functional.ctc_loss", lambda m, x, *a, **kw: F(m).ctc_loss(x.log_softmax(2), *a, **kw), lambda r: [
        S(randn(r, 6, 2, 4), idx(1, 2, 2, 3, 1, 0).reshape(2, 3), idx(6, 5), idx(3, 2), name="padded_mean"),
        S(randn(r, 5, 3, 3), idx(1, 2, 2, 1, 1), idx(5, 4, 5), idx(2, 3, 0), reduction="sum", name="concat_sum"),
        S(randn(r, 4, 2, 3), idx(1, 1, 2, 2).reshape(2, 2), idx(4, 2), idx(2, 2), reduction="none",
          zero_infinity=True, name="impossible_zero_infinity"),
        S(randn(r, 5, 2, 4), idx(0, 1, 3, 0).reshape(2, 2), idx(5, 5), idx(2, 1), blank=2, reduction="none",
          name="blank2_none")],
           gradgrad=False, notes="torch has no double backward for ctc_loss (_ctc_loss_backward)"),
    OpSpec("ctc_loss_unbatched", lambda m, x, *a, **kw: F(m).ctc_loss(x.log_softmax(1), *a, **kw), lambda r: [
        S(randn(r, 6, 4), idx(1, 3, 3), np.array(6), np.array(3), reduction="none")], gradgrad=False),
    OpSpec("norm_except_dim", lambda m, v, *a: m.norm_except_dim(v, *a), lambda r: [
        S(randn(r, 3, 4, 2), 2, 0, name="dim0"), S(randn(r, 3, 4, 2), 2, 1, name="dim1"),
        S(randn(r, 3, 4), 3, -1, name="whole"), S(randn(r, 2, 5), 2, 1, name="last")],
           check_grad_fn=False, notes="the whole-tensor norm's node is LinalgVectorNormBackward0 (torch: NormBackward0)",
           extra=_NO_FWD_WHOLE),
    OpSpec("_weight_norm", lambda m, v, g, *a: m._weight_norm(v, g, *a), lambda r: [
        S(randn(r, 3, 4), randn(r, 3, 1, positive=True), 0, name="dim0"),
        S(randn(r, 2, 3, 2), randn(r, 1, 1, 2, positive=True), 2, name="last"),
        S(randn(r, 3, 4), np.array(1.3), -1, name="whole")],
           check_grad_fn=False, gradgrad=False,
           notes="a composition (torch: WeightNormInterfaceBackward0, whose second derivative fails torch's own "
                 "gradgradcheck; tapegrad's passes it: tests/nn/test_parametrize.py)", extra=_NO_FWD_WHOLE),
    OpSpec("nn.functional.native_channel_shuffle", lambda m, x, g: F(m).native_channel_shuffle(x, g), lambda r: [
        S(randn(r, 2, 6, 2), 3)], grad=False,
           notes="torch has no derivative for native_channel_shuffle (tapegrad's is channel_shuffle's)"),
]


def tapegrad_dropout_inplace(x):
    import tapegrad.nn.functional as TF
    return TF.dropout(x, 1.0, True, inplace=True)
