"""ContinuousBernoulli, GeneralizedPareto, LKJCholesky and Wishart beyond the shared table of
test_distributions.py: ContinuousBernoulli's Taylor region around probs = 1/2 (and custom ``lims``), its clamping
of probs; GeneralizedPareto's three regimes of concentration against its closed forms and against torch in
float32; LKJCholesky over dimensions, the normalizer, and the onion draws' marginals; Wishart's three
parametrisations, its reparameterized Bartlett draws, the redrawing of singular draws, and its Bregman KL;
finite-difference gradchecks of every log_prob in its parameters (float64)."""

import math
import warnings

import numpy as np
import pytest

import tapegrad

# (torch's Wishart warns "Singular sample detected." on every draw; the low-df warning is asserted where wanted)
pytestmark = [pytest.mark.filterwarnings("ignore:Singular sample detected:UserWarning"),
              pytest.mark.filterwarnings("ignore:Low df values detected:UserWarning")]
D = tapegrad.distributions
R = np.random.default_rng(7)
F64 = tapegrad.float64


def _t(a, grad=False):
    return tapegrad.tensor(np.asarray(a, np.float64), dtype=F64, requires_grad=grad)


def _np(x):
    return np.asarray(x.detach().numpy())


def _close(a, b, rtol=1e-9, atol=1e-11, what=""):
    np.testing.assert_allclose(_np(a), np.asarray(b.detach().numpy()), rtol=rtol, atol=atol, err_msg=what)


# --- ContinuousBernoulli ---------------------------------------------------------------------------------------
def _cb_quantities(d, x, u):
    return {"log_prob": d.log_prob(x), "mean": d.mean, "variance": d.variance, "stddev": d.stddev,
            "entropy": d.entropy(), "cdf": d.cdf(x), "icdf": d.icdf(u), "log_norm": d._cont_bern_log_norm()}


@pytest.mark.parametrize("lims", [(0.499, 0.501), (0.45, 0.55)])
def test_continuous_bernoulli_taylor_region_values_and_gradients_vs_torch(torch, lims):
    """probs across the unstable region and its edges: both branches, values and gradients, as torch's."""
    probs = np.r_[np.linspace(0.44, 0.56, 13), lims[0], lims[1], 0.4989999, 0.5010001, 0.5, 0.02, 0.97]
    x = R.uniform(0.01, 0.99, probs.shape)
    u = R.uniform(0.01, 0.99, probs.shape)
    pt, pr = _t(probs, True), torch.tensor(probs, requires_grad=True)
    qt = _cb_quantities(D.ContinuousBernoulli(pt, lims=lims), _t(x), _t(u))
    qr = _cb_quantities(torch.distributions.ContinuousBernoulli(pr, lims=lims), torch.tensor(x), torch.tensor(u))
    w = R.standard_normal(probs.shape)
    for k in qt:
        _close(qt[k], qr[k], what=k)
        g, = tapegrad.autograd.grad((qt[k] * _t(w)).sum(), [pt], retain_graph=True)
        h, = torch.autograd.grad((qr[k] * torch.tensor(w)).sum(), [pr], retain_graph=True)
        _close(g, h, rtol=1e-7, atol=1e-9, what=f"d {k} / d probs")


def test_continuous_bernoulli_branches_join_smoothly_at_the_lims():
    """Each Taylor expansion and its closed form agree at the edge of the region (to the series' error)."""
    eps = 1e-9
    for edge in (0.499, 0.501):
        inside = D.ContinuousBernoulli(_t([edge - eps if edge > 0.5 else edge + eps]))
        outside = D.ContinuousBernoulli(_t([edge + eps if edge > 0.5 else edge - eps]))
        for k in ("mean", "variance"):
            np.testing.assert_allclose(_np(getattr(inside, k)), _np(getattr(outside, k)), rtol=1e-6)
        np.testing.assert_allclose(_np(inside._cont_bern_log_norm()), _np(outside._cont_bern_log_norm()), rtol=1e-6)


def test_continuous_bernoulli_logits_and_log_normalizer_vs_torch(torch):
    logits = np.r_[-30.0, -3.0, -0.004, 0.0, 0.001, 0.5, 4.0, 40.0]
    dt = D.ContinuousBernoulli(logits=_t(logits, True))
    dr = torch.distributions.ContinuousBernoulli(logits=torch.tensor(logits, requires_grad=True))
    _close(dt.probs, dr.probs)
    x = R.uniform(0.0, 1.0, logits.shape)
    _close(dt.log_prob(_t(x)), dr.log_prob(torch.tensor(x)))
    nat = np.r_[-3.0, -0.0015, 0.0, 0.0009, 2.0]
    _close(dt._log_normalizer(_t(nat)), dr._log_normalizer(torch.tensor(nat)))
    assert dt.param_shape == tuple(dr.param_shape)


def test_continuous_bernoulli_probs_are_checked_only_when_asked_then_clamped(torch):
    for m in (tapegrad, torch):
        d = m.distributions.ContinuousBernoulli(m.tensor([0.0, 1.5]))      # (no error: clamped to (0, 1))
        eps = m.finfo(m.float32).eps
        np.testing.assert_allclose(np.asarray(d.probs.numpy()), [eps, 1 - eps], rtol=1e-6)
        with pytest.raises(ValueError, match="The parameter probs has invalid values"):
            m.distributions.ContinuousBernoulli(m.tensor([0.5, 1.5]), validate_args=False)


def test_continuous_bernoulli_rsample_is_the_inverse_cdf_and_its_gradient_the_mean_s():
    tapegrad.manual_seed(0)
    p = _t([0.1, 0.3, 0.5, 0.8], True)
    d = D.ContinuousBernoulli(p)
    x = d.rsample((50000,))
    assert x.shape == (50000, 4) and bool(((x >= 0) & (x <= 1)).all())
    # the draws' cdf values are uniform
    c = _np(d.cdf(x.detach()))
    np.testing.assert_allclose(np.quantile(c, [0.1, 0.5, 0.9], axis=0), np.tile([[0.1], [0.5], [0.9]], 4), atol=0.01)
    g, = tapegrad.autograd.grad(x.mean(0).sum(), [p], retain_graph=True)
    want, = tapegrad.autograd.grad(d.mean.sum(), [p])
    # (inside the lims the icdf is the identity, as torch's: no gradient reaches probs = 0.5 through a draw)
    np.testing.assert_allclose(_np(g)[[0, 1, 3]], _np(want)[[0, 1, 3]], rtol=0.03)
    assert _np(g)[2] == 0


def test_continuous_bernoulli_gradcheck():
    p = _t([0.15, 0.4, 0.7], True)
    x = _t([0.2, 0.9, 0.5])
    assert tapegrad.autograd.gradcheck(lambda q: D.ContinuousBernoulli(q).log_prob(x), (p,))
    assert tapegrad.autograd.gradcheck(lambda q: D.ContinuousBernoulli(logits=q).log_prob(x), (_t([-2.0, 0.7, 3], True),))
    assert tapegrad.autograd.gradcheck(lambda q: D.ContinuousBernoulli(q).entropy(), (p,))


# --- GeneralizedPareto ---------------------------------------------------------------------------------------
def _gpd_reference(loc, scale, c, x):
    """log density, cdf and log survival from the GPD's defining formulas (NumPy, float64)."""
    z = (x - loc) / scale
    with np.errstate(divide="ignore", invalid="ignore"):
        log_sf = np.where(c == 0, -z, -np.log1p(c * z) / np.where(c == 0, 1, c))
        log_pdf = -np.log(scale) + np.where(c == 0, -z, -(1 / np.where(c == 0, 1, c) + 1) * np.log1p(c * z))
    return log_pdf, -np.expm1(log_sf), log_sf


def test_generalized_pareto_closed_forms():
    loc, scale = np.array([0.5, -1.0, 2.0, 0.0]), np.array([1.5, 0.7, 2.0, 1.0])
    c = np.array([0.4, -0.5, 0.0, -1.0])               # Pareto-like, bounded, exponential, uniform
    d = D.GeneralizedPareto(_t(loc), _t(scale), _t(c))
    u = R.uniform(0.02, 0.98, (5, 4))
    x = _np(d.icdf(_t(u)))
    log_pdf, cdf, log_sf = _gpd_reference(loc, scale, c, x)
    np.testing.assert_allclose(_np(d.log_prob(_t(x))), log_pdf, rtol=1e-12)
    np.testing.assert_allclose(_np(d.cdf(_t(x))), u, rtol=1e-12)
    np.testing.assert_allclose(cdf, u, rtol=1e-12)
    np.testing.assert_allclose(_np(d.log_survival_function(_t(x))), log_sf, rtol=1e-12)
    np.testing.assert_allclose(_np(d.log_cdf(_t(x))), np.log(u), rtol=1e-12)
    np.testing.assert_allclose(_np(d.log_prob(_t(x)))[:, 3], 0.0, atol=1e-12)   # Uniform(0, 1)
    sup = d.support
    np.testing.assert_allclose(_np(sup.upper_bound), [math.inf, -1.0 + 0.7 / 0.5, math.inf, 1.0])
    assert bool(sup.check(_t(x)).all()) and not bool(sup.check(_t([0.4, 0.5, 1.0, 1.5])).any())
    np.testing.assert_allclose(_np(d.mean), loc + scale / (1 - c))
    np.testing.assert_allclose(_np(d.variance), scale ** 2 / ((1 - c) ** 2 * (1 - 2 * c)))
    np.testing.assert_allclose(_np(d.entropy()), np.log(scale) + c + 1)
    heavy = D.GeneralizedPareto(0.0, 1.0, _t([0.5, 1.0, 2.0]))
    assert np.isnan(_np(heavy.variance)).all() and np.isnan(_np(heavy.mean)[1:]).all()


def test_generalized_pareto_float32_and_scalars_vs_torch(torch):
    """(In float32, where torch's own log_prob runs: tapegrad also runs it in float64, see the shared table.)"""
    loc, scale, c = R.standard_normal(4), R.uniform(0.5, 2, 4), np.array([-0.3, 0.0, 1e-9, 0.6])
    pt = [tapegrad.tensor(a, dtype=tapegrad.float32) for a in (loc, scale, c)]
    pr = [torch.tensor(a, dtype=torch.float32) for a in (loc, scale, c)]
    for dt, dr in ((D.GeneralizedPareto(*pt), torch.distributions.GeneralizedPareto(*pr)),
                   (D.GeneralizedPareto(0.5, 2.0, 0.2), torch.distributions.GeneralizedPareto(0.5, 2.0, 0.2))):
        assert dt.batch_shape == tuple(dr.batch_shape) and repr(dt).replace("tapegrad", "torch") == repr(dr)
        torch.manual_seed(0)
        v = dr.sample((6,))
        vt = tapegrad.tensor(v.numpy())
        for k in ("log_prob", "cdf", "log_cdf", "log_survival_function"):
            # (cdf = 1 - exp(log survival) cancels for values near loc: float32 rounding of ~eps / cdf)
            rtol = 1e-4 if k in ("cdf", "log_cdf") else 2e-6
            _close(getattr(dt, k)(vt), getattr(dr, k)(v), rtol=rtol, atol=1e-6, what=k)
        q = torch.rand(dr.batch_shape)
        _close(dt.icdf(tapegrad.tensor(q.numpy())), dr.icdf(q), rtol=2e-6, atol=1e-6)
        for k in ("mean", "mode", "variance", "stddev"):
            _close(getattr(dt, k), getattr(dr, k), rtol=2e-6, what=k)
        _close(dt.entropy(), dr.entropy(), rtol=2e-6)


def test_generalized_pareto_gradcheck_and_rsample_gradients():
    x = _t([0.3, 1.1, 0.4])
    params = (_t([0.1, 0.2, -0.3], True), _t([1.2, 0.8, 2.0], True), _t([0.3, -0.2, 0.5], True))
    assert tapegrad.autograd.gradcheck(lambda a, b, c: D.GeneralizedPareto(a, b, c).log_prob(x), params)
    assert tapegrad.autograd.gradcheck(lambda a, b, c: D.GeneralizedPareto(a, b, c).cdf(x), params)
    tapegrad.manual_seed(0)
    loc, scale, c = _t([0.5, 0.0], True), _t([1.0, 2.0], True), _t([0.2, -0.4], True)
    s = D.GeneralizedPareto(loc, scale, c).rsample((200000,))
    gl, gs = tapegrad.autograd.grad(s.mean(0).sum(), [loc, scale])
    np.testing.assert_allclose(_np(gl), [1.0, 1.0])
    np.testing.assert_allclose(_np(gs), 1 / (1 - _np(c)), rtol=0.02)      # d E[x] / d scale = 1 / (1 - c)


# --- LKJCholesky ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dim", [2, 3, 4, 6])
def test_lkj_log_prob_and_concentration_gradient_vs_torch(torch, dim):
    conc = np.array([0.3, 1.0, 2.5, 7.0])
    ct, cr = _t(conc, True), torch.tensor(conc, requires_grad=True)
    dt, dr = D.LKJCholesky(dim, ct), torch.distributions.LKJCholesky(dim, cr)
    torch.manual_seed(0)
    v = dr.sample((3,))
    lt, lr = dt.log_prob(tapegrad.tensor(v.numpy())), dr.log_prob(v)
    _close(lt, lr)
    _close(tapegrad.autograd.grad(lt.sum(), [ct])[0], torch.autograd.grad(lr.sum(), [cr])[0], rtol=1e-8)
    assert tapegrad.autograd.gradcheck(lambda c: D.LKJCholesky(dim, c).log_prob(tapegrad.tensor(v.numpy())), (ct,))


@pytest.mark.parametrize("eta", [0.5, 1.0, 4.0])
def test_lkj_density_integrates_to_one_in_two_dimensions(eta):
    """For dim 2, L = [[1, 0], [r, sqrt(1 - r^2)]]: the density in r over (-1, 1) integrates to 1."""
    r = np.cos(np.linspace(math.pi, 0, 20001))[1:-1]          # (Chebyshev points: the ends are singular for eta < 1)
    L = np.zeros(r.shape + (2, 2))
    L[:, 0, 0], L[:, 1, 0], L[:, 1, 1] = 1.0, r, np.sqrt(1 - r * r)
    dens = np.exp(_np(D.LKJCholesky(2, _t(eta)).log_prob(_t(L))))
    theta = np.linspace(math.pi, 0, 20001)[1:-1]               # (r = cos theta: integrate in theta)
    total = np.trapezoid(dens * np.sin(theta), -theta)
    np.testing.assert_allclose(total, 1.0, rtol=2e-3)


@pytest.mark.parametrize("dim,eta", [(2, 0.7), (3, 1.0), (5, 2.5)])
def test_lkj_onion_draws_have_the_lkj_marginal_correlations(dim, eta):
    """Every correlation (L L^T)_ij has (r + 1)/2 ~ Beta(b, b), b = eta - 1 + dim/2: mean 0, variance
    1/(2 eta + dim - 1), kurtosis 3 - 6/(2b + 3). (torch 2.13's draws fail this from dim 3 on: their variance
    is 0.30 for dim 3, eta 1, against 1/4.)"""
    tapegrad.manual_seed(0)
    d = D.LKJCholesky(dim, _t(eta))
    L = d.sample((40000,))
    assert L.shape == (40000, dim, dim) and bool(d.support.check(L).all())
    C = _np(L @ L.mT)
    np.testing.assert_allclose(np.diagonal(C, axis1=-2, axis2=-1), 1.0, atol=1e-12)
    i, j = np.tril_indices(dim, -1)
    r = C[:, i, j]
    b = eta - 1 + dim / 2
    var = 1 / (2 * eta + dim - 1)
    np.testing.assert_allclose(r.mean(0), 0.0, atol=5 * math.sqrt(var / 40000))
    np.testing.assert_allclose(r.var(0), var, rtol=0.04)
    np.testing.assert_allclose((r ** 4).mean(0) / var ** 2, 3 - 6 / (2 * b + 3), rtol=0.05)


def test_lkj_bad_concentration_is_reported_as_its_own(torch):
    """torch raises the same ValueError from its internal Beta of the onion method (naming that Beta's
    concentrations); tapegrad names LKJCholesky's concentration."""
    with pytest.raises(ValueError, match="Expected parameter concentration"):
        torch.distributions.LKJCholesky(3, torch.tensor([1.0, -0.5]))
    with pytest.raises(ValueError) as e:
        D.LKJCholesky(3, tapegrad.tensor([1.0, -0.5]))
    assert str(e.value) == ("Expected parameter concentration (Tensor of shape (2,)) of distribution "
                            "LKJCholesky(concentration: tapegrad.Size([2])) to satisfy the constraint "
                            "GreaterThan(lower_bound=0.0), but found invalid values:\ntensor([ 1.0000, -0.5000])")
    D.LKJCholesky(3, tapegrad.tensor([1.0, -0.5]), validate_args=False)


def test_lkj_shapes_expand_and_no_rsample(torch):
    d = D.LKJCholesky(3, _t([[0.5, 1.0], [2.0, 3.0]]))
    assert d.batch_shape == (2, 2) and d.event_shape == (3, 3) and not d.has_rsample
    assert d.sample().shape == (2, 2, 3, 3) and d.sample((4, 1)).shape == (4, 1, 2, 2, 3, 3)
    e = d.expand((5, 2, 2))
    s = e.sample()
    assert s.shape == (5, 2, 2, 3, 3) and e.dim == 3 and e._beta.batch_shape == (5, 2, 2, 3)
    er = torch.distributions.LKJCholesky(3, torch.tensor([[0.5, 1.0], [2.0, 3.0]], dtype=torch.float64))
    _close(e.log_prob(s), er.expand((5, 2, 2)).log_prob(torch.tensor(s.numpy())))
    for name in ("mean", "variance"):
        with pytest.raises(NotImplementedError):
            getattr(d, name)
    with pytest.raises(NotImplementedError):
        d.entropy()
    with pytest.raises(NotImplementedError):
        d.rsample()


# --- Wishart --------------------------------------------------------------------------------------------------
def _spd(n, batch=()):
    a = R.standard_normal(batch + (n, n))
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


def test_wishart_parametrisations_agree_and_match_torch(torch):
    cov = _spd(3, (2,))
    prec, tril = np.linalg.inv(cov), np.linalg.cholesky(cov)
    df = np.array([3.5, 7.0])
    kinds = {"covariance_matrix": cov, "precision_matrix": prec, "scale_tril": tril}
    torch.manual_seed(0)
    v = torch.distributions.Wishart(torch.tensor(df), covariance_matrix=torch.tensor(cov)).sample((4,))
    for kind, mat in kinds.items():
        dt = D.Wishart(_t(df), **{kind: _t(mat)})
        dr = torch.distributions.Wishart(torch.tensor(df), **{kind: torch.tensor(mat)})
        assert repr(dt).replace("tapegrad", "torch") == repr(dr)
        for other in kinds:
            _close(getattr(dt, other), getattr(dr, other), what=other)
        _close(dt.log_prob(tapegrad.tensor(v.numpy())), dr.log_prob(v))
        _close(dt.entropy(), dr.entropy())
        for k in ("mean", "mode", "variance"):
            _close(getattr(dt, k), getattr(dr, k), what=k)
        nt, nr = dt._natural_params, dr._natural_params
        _close(dt._log_normalizer(*nt), dr._log_normalizer(*nr))


def test_wishart_df_broadcasts_and_number_df(torch):
    cov = _spd(2, (3,))
    for df in (4.0, np.array([2.5, 3.0, 8.0])):
        dfs = (df, df) if isinstance(df, float) else (_t(df), torch.tensor(df))
        dt = D.Wishart(dfs[0], covariance_matrix=_t(cov))
        dr = torch.distributions.Wishart(dfs[1], covariance_matrix=torch.tensor(cov))
        assert dt.batch_shape == tuple(dr.batch_shape) and dt.df.dtype == F64
        assert repr(dt).replace("tapegrad", "torch") == repr(dr)
        v = dr.sample() if isinstance(df, np.ndarray) else torch.tensor(_np(dt.sample()))
        _close(dt.log_prob(tapegrad.tensor(v.numpy())), dr.log_prob(v))
        # (torch's mean/mode/variance fail for a number df with a batch of matrices: view of a 0-dim df)
        want = (torch.as_tensor(df).reshape(-1, 1, 1) * torch.tensor(cov)).numpy()
        np.testing.assert_allclose(_np(dt.mean), want, rtol=1e-12)
        assert dt.variance.shape == dt.mode.shape == (3, 2, 2)
    one = D.Wishart(_t(np.array([[3.0], [5.0]])), covariance_matrix=_t(cov))       # df (2, 1) x cov (3,)
    assert one.batch_shape == (2, 3) and one.rsample((2,)).shape == (2, 2, 3, 2, 2)


def test_wishart_low_df_warns_and_mode_is_nan_below_p_plus_one(torch):
    with pytest.warns(UserWarning, match="Low df values detected"):
        d = D.Wishart(_t([2.5, 3.5, 5.0]), covariance_matrix=_t(np.eye(3)))
    dr = torch.distributions.Wishart(torch.tensor([2.5, 3.5, 5.0], dtype=torch.float64),
                                     covariance_matrix=torch.eye(3, dtype=torch.float64))
    _close(d.mode, dr.mode)
    assert np.isnan(_np(d.mode)[:2]).all() and not np.isnan(_np(d.mode)[2]).any()


def test_wishart_singular_draws_are_redrawn_up_to_max_try_correction():
    """For df just above p - 1 about half the Bartlett draws are singular in floating point (a chi-square with
    0.02 degrees of freedom is below eps): they are drawn again, up to max_try_correction times, with a warning.
    (torch 2.13's rsample tests the wrong mask -- it redraws the non-singular draws -- and leaves them singular.)"""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        d = D.Wishart(_t(2.02), covariance_matrix=_t(np.eye(3)))
    tapegrad.manual_seed(0)
    with pytest.warns(UserWarning, match="Singular sample detected."):
        raw = d.rsample((4000,), max_try_correction=0)
    n_raw = int((~d.support.check(raw)).sum())
    assert 1000 < n_raw < 3000
    with pytest.warns(UserWarning, match="Singular sample detected."):
        fixed = d.rsample((4000,))
    assert int((~d.support.check(fixed)).sum()) < 30
    one = d.rsample(max_try_correction=40)       # (sample_shape () as well)
    assert one.shape == (3, 3) and bool(d.support.check(one))
    batched = D.Wishart(_t([2.02, 9.0]), covariance_matrix=_t(np.eye(3)))
    with pytest.warns(UserWarning, match="Singular sample detected."):
        s = batched.rsample((500,), max_try_correction=40)
    assert bool(batched.support.check(s).all())
    with warnings.catch_warnings():
        warnings.simplefilter("error")           # a well-conditioned Wishart warns nothing
        D.Wishart(_t(8.0), covariance_matrix=_t(np.eye(3))).rsample((200,))


def test_wishart_log_prob_gradients_vs_torch_and_gradcheck(torch):
    cov, df = _spd(3), np.array([4.0, 6.5])
    tapegrad.manual_seed(1)
    v = _np(D.Wishart(_t(df), covariance_matrix=_t(cov)).sample((3,)))
    ts = [_t(df, True), _t(cov, True)]
    rs = [torch.tensor(df, requires_grad=True), torch.tensor(cov, requires_grad=True)]
    lt = D.Wishart(ts[0], covariance_matrix=ts[1]).log_prob(_t(v))
    lr = torch.distributions.Wishart(rs[0], covariance_matrix=rs[1]).log_prob(torch.tensor(v))
    _close(lt, lr)
    for a, b in zip(tapegrad.autograd.grad(lt.sum(), ts), torch.autograd.grad(lr.sum(), rs)):
        _close(a, b, rtol=1e-8)
    tril = _t(np.linalg.cholesky(cov), True)
    assert tapegrad.autograd.gradcheck(lambda n, L: D.Wishart(n, scale_tril=L.tril()).log_prob(_t(v)),
                                       (_t(df, True), tril))
    assert tapegrad.autograd.gradcheck(lambda n, L: D.Wishart(n, scale_tril=L.tril()).entropy(), (_t(df, True), tril))


def test_wishart_rsample_is_reparameterized():
    """E[S] = df L L^T: the gradients of the draws' mean estimate those of the analytic mean, in df and in L."""
    tapegrad.manual_seed(0)
    df = _t([3.0, 5.5], True)
    L = _t(np.linalg.cholesky(_spd(2)), True)
    s = D.Wishart(df, scale_tril=L).rsample((40000,))
    assert s.shape == (40000, 2, 2, 2)
    w = _t(R.standard_normal((2, 2, 2)))
    g = tapegrad.autograd.grad((s.mean(0) * w).sum(), [df, L])
    want = tapegrad.autograd.grad((D.Wishart(df, scale_tril=L).mean * w).sum(), [df, L])
    for a, b in zip(g, want):
        np.testing.assert_allclose(_np(a), _np(b), rtol=0.06, atol=0.06 * np.abs(_np(b)).max())


def test_wishart_kl_is_the_exponential_family_bregman_divergence_as_torch(torch):
    """(The Bregman form differentiates p's natural parameters detached, as torch's: the gradient reaches q's.)"""
    args = [(np.array([4.0, 6.0]), _spd(2)), (np.array([5.0, 3.5]), _spd(2))]
    lt = [(_t(a, True), _t(c, True)) for a, c in args]
    lr = [(torch.tensor(a, requires_grad=True), torch.tensor(c, requires_grad=True)) for a, c in args]
    pt = [D.Wishart(a, covariance_matrix=c) for a, c in lt]
    pr = [torch.distributions.Wishart(a, covariance_matrix=c) for a, c in lr]
    kt, kr = D.kl_divergence(*pt), torch.distributions.kl_divergence(*pr)
    _close(kt, kr, rtol=1e-8)
    gt = tapegrad.autograd.grad(kt.sum(), [x for p in lt for x in p], allow_unused=True)
    gr = torch.autograd.grad(kr.sum(), [x for p in lr for x in p], allow_unused=True)
    for a, b in zip(gt, gr):
        if b is None:
            assert a is None or np.allclose(_np(a), 0)
        else:
            _close(a, b, rtol=1e-7, atol=1e-10)
    np.testing.assert_allclose(_np(D.kl_divergence(pt[0], pt[0])), 0.0, atol=1e-10)


def test_wishart_expand_keeps_the_parametrisation_and_draws(torch):
    d = D.Wishart(_t(4.0), precision_matrix=_t(_spd(2)))
    e = d.expand((3,))
    assert e.batch_shape == (3,) and "precision_matrix" in e.__dict__ and e._batch_dims == [-1]
    assert e.rsample((2,)).shape == (2, 3, 2, 2) and e._dist_chi2.batch_shape == (3, 2)
    dr = torch.distributions.Wishart(torch.tensor(4.0, dtype=torch.float64),
                                      precision_matrix=torch.tensor(_np(d.precision_matrix)))
    v = _np(e.sample())
    _close(e.log_prob(_t(v)), dr.expand((3,)).log_prob(torch.tensor(v)))


@pytest.mark.parametrize("name", ["ContinuousBernoulli", "GeneralizedPareto", "LKJCholesky", "Wishart"])
def test_constructor_and_rsample_arguments_are_torch_s(torch, name):
    import inspect

    def params(f):
        return [(p.name, p.default) for p in inspect.signature(f).parameters.values()]
    ours, theirs = getattr(D, name), getattr(torch.distributions, name)
    assert params(ours) == params(theirs)
    assert [p for p, _ in params(ours.rsample)] == [p for p, _ in params(theirs.rsample)]
    assert ours.has_rsample == theirs.has_rsample and ours.__module__.split(".")[-1] == theirs.__module__.split(".")[-1]
