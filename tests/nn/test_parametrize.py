"""nn.utils.parametrize, nn.utils.parametrizations and the older weight_norm / spectral_norm hooks vs torch 2.13:
state_dict keys, reprs, outputs, gradients (float64, through check_module), and the registration semantics."""

import copy
import pickle
import re
import warnings

import numpy as np
import pytest

import tapegrad
from nn._oracle import check_module

R = np.random.default_rng(11)
W0 = R.standard_normal((3, 3))


def rn(*shape):
    return R.standard_normal(shape)


def P(nn):
    return nn.utils.parametrizations


def old(fn):
    """The deprecated hooks warn (FutureWarning) in both libraries: checked here, kept out of the output."""
    def build(nn):
        with pytest.warns(FutureWarning, match="weight_norm` is deprecated"):
            return fn(nn)
    return build


CASES = [
    ("weight_norm", lambda nn: P(nn).weight_norm(nn.Linear(3, 4)), [rn(2, 3)]),
    ("weight_norm-dimNone", lambda nn: P(nn).weight_norm(nn.Linear(3, 4), dim=None), [rn(2, 3)]),
    ("weight_norm-conv-dim1", lambda nn: P(nn).weight_norm(nn.Conv2d(2, 3, 2), dim=1), [rn(1, 2, 4, 4)]),
    ("weight_norm-bias", lambda nn: P(nn).weight_norm(nn.Linear(3, 4), name="bias"), [rn(2, 3)]),
    ("spectral_norm", lambda nn: P(nn).spectral_norm(nn.Linear(3, 4)), [rn(2, 3)]),
    ("spectral_norm-2iter", lambda nn: P(nn).spectral_norm(nn.Linear(5, 3), n_power_iterations=2, eps=1e-8),
     [rn(2, 5)]),
    ("spectral_norm-convT", lambda nn: P(nn).spectral_norm(nn.ConvTranspose2d(2, 3, 2)), [rn(1, 2, 3, 3)]),
    ("spectral_norm-1d", lambda nn: P(nn).spectral_norm(nn.Linear(3, 4), name="bias"), [rn(2, 3)]),
    ("orthogonal", lambda nn: P(nn).orthogonal(nn.Linear(3, 3)), [rn(2, 3)]),
    ("orthogonal-wide", lambda nn: P(nn).orthogonal(nn.Linear(5, 3)), [rn(2, 5)]),
    ("orthogonal-tall-exp", lambda nn: P(nn).orthogonal(nn.Linear(2, 4), orthogonal_map="matrix_exp"), [rn(2, 2)]),
    ("orthogonal-cayley", lambda nn: P(nn).orthogonal(nn.Linear(3, 3), orthogonal_map="cayley"), [rn(2, 3)]),
    ("orthogonal-cayley-tall", lambda nn: P(nn).orthogonal(nn.Linear(2, 3), orthogonal_map="cayley"), [rn(2, 2)]),
    ("orthogonal-householder", lambda nn: P(nn).orthogonal(nn.Linear(3, 3), orthogonal_map="householder"),
     [rn(2, 3)]),
    ("orthogonal-householder-notriv", lambda nn: P(nn).orthogonal(nn.Linear(4, 3), orthogonal_map="householder",
                                                                  use_trivialization=False), [rn(2, 4)]),
    ("orthogonal-exp-notriv", lambda nn: P(nn).orthogonal(nn.Linear(3, 3), use_trivialization=False), [rn(2, 3)]),
    ("orthogonal-cayley-notriv", lambda nn: P(nn).orthogonal(nn.Linear(3, 2), orthogonal_map="cayley",
                                                             use_trivialization=False), [rn(2, 3)]),
    ("orthogonal-rnn", lambda nn: P(nn).orthogonal(nn.RNN(3, 3), "weight_hh_l0"), [rn(4, 2, 3)]),
    ("old-weight_norm", old(lambda nn: nn.utils.weight_norm(nn.Linear(3, 4))), [rn(2, 3)]),
    ("old-weight_norm-dimNone", old(lambda nn: nn.utils.weight_norm(nn.Conv1d(2, 3, 2), dim=None)), [rn(1, 2, 5)]),
    ("old-spectral_norm", lambda nn: nn.utils.spectral_norm(nn.Linear(3, 4)), [rn(2, 3)]),
    ("old-spectral_norm-convT", lambda nn: nn.utils.spectral_norm(nn.ConvTranspose1d(2, 3, 2), n_power_iterations=3),
     [rn(1, 2, 4)]),
]


@pytest.mark.parametrize("name,make,inputs", CASES, ids=[c[0] for c in CASES])
def test_parametrized_layer_matches_torch(torch, name, make, inputs):
    # (eval too: spectral norm runs its power iteration only in training mode; several steps: the buffers move)
    check_module(torch, make, inputs, modes=("train", "eval"), steps=2)


class Symmetric:
    @staticmethod
    def make(nn):
        class Sym(nn.Module):
            def forward(self, X):
                return X.triu() + X.triu(1).mT

            def right_inverse(self, A):
                return A.triu()
        return Sym()


class Scale:
    @staticmethod
    def make(nn, s=2.0):
        class Mul(nn.Module):
            def forward(self, X):
                return X * s
        return Mul()


def _both(torch):
    return [(tapegrad, tapegrad.nn.utils.parametrize), (torch, torch.nn.utils.parametrize)]


def test_register_chain_right_inverse_and_remove(torch):
    results = []
    for m, pz in _both(torch):
        lin = m.nn.Linear(3, 3).double()
        w0 = m.tensor(W0)
        pz.register_parametrization(lin, "weight", Symmetric.make(m.nn))
        pz.register_parametrization(lin, "weight", Scale.make(m.nn, 3.0))
        keys = list(lin.state_dict())
        r = repr(lin)
        assert pz.is_parametrized(lin) and pz.is_parametrized(lin, "weight") and not pz.is_parametrized(lin, "bias")
        assert pz.type_before_parametrizations(lin) is m.nn.Linear
        target = m.tensor(np.arange(9.0).reshape(3, 3))
        with pytest.raises(RuntimeError, match="parametrization Mul does not implement right_inverse."):
            lin.weight = target
        with m.no_grad():
            lin.parametrizations.weight.original.copy_(w0)
        v1 = lin.weight.detach().numpy().copy()
        with pz.cached():
            a, b = lin.weight, lin.weight
            same = a is b
        fresh = lin.weight is lin.weight
        pz.remove_parametrizations(lin, "weight", leave_parametrized=True)
        results.append((keys, r.replace("torch.", "tapegrad."), v1, same, fresh, type(lin).__name__,
                        list(lin.state_dict()), lin.weight.detach().numpy()))
    for a, b in zip(*results):
        if isinstance(a, np.ndarray):
            np.testing.assert_allclose(a, b, rtol=1e-13)
        else:
            assert a == b


def test_assignment_runs_right_inverse(torch):
    out = []
    for m, pz in _both(torch):
        lin = m.nn.Linear(3, 3).double()
        pz.register_parametrization(lin, "weight", Symmetric.make(m.nn))
        original = lin.parametrizations.weight.original
        lin.weight = m.tensor(np.arange(9.0).reshape(3, 3))
        assert lin.parametrizations.weight.original is original          # the same Parameter object
        out.append((lin.weight.detach().numpy(), original.detach().numpy()))
        with pytest.raises(KeyError, match="attribute 'weight' already exists"):
            lin.weight = m.nn.Parameter(m.zeros(3, 3, dtype=m.float64))
    np.testing.assert_array_equal(out[0][0], out[1][0])
    np.testing.assert_array_equal(out[0][1], out[1][1])


def test_remove_leave_original_and_optimizer_identity(torch):
    for m, pz in _both(torch):
        lin = m.nn.Linear(2, 2)
        w = lin.weight
        opt = m.optim.SGD(lin.parameters(), lr=0.1)
        pz.register_parametrization(lin, "weight", Symmetric.make(m.nn))
        assert lin.parametrizations.weight.original is w and opt.param_groups[0]["params"][0] is w
        pz.remove_parametrizations(lin, "weight", leave_parametrized=False)
        assert lin.weight is w and type(lin) is m.nn.Linear and not hasattr(lin, "parametrizations")


def test_errors_as_torch(torch):
    for m, pz in _both(torch):
        lin = m.nn.Linear(2, 3)

        class Shape(m.nn.Module):
            def forward(self, X):
                return X.T

        class Dtype(m.nn.Module):
            def forward(self, X):
                return X.double()

        class NotTensor(m.nn.Module):
            def forward(self, X):
                return 1.0
        with pytest.raises(ValueError, match=r"Registering a parametrization may not change the shape of the tensor, "
                                             r"unless `unsafe` flag is enabled.\nunparametrized shape: "):
            pz.register_parametrization(lin, "weight", Shape())
        with pytest.raises(ValueError, match=r"may not change the dtype of the tensor, unless `unsafe` flag is "
                                             r"enabled.\nunparametrized dtype: (torch|tapegrad).float32"):
            pz.register_parametrization(lin, "weight", Dtype())
        with pytest.raises(ValueError, match="A parametrization must return a tensor. Got float."):
            pz.register_parametrization(lin, "weight", NotTensor())
        with pytest.raises(ValueError, match="does not have a parameter, a buffer, or a parametrized element with "
                                             "name 'foo'"):
            pz.register_parametrization(lin, "foo", Shape())
        with pytest.raises(ValueError, match="does not have a parametrization on weight"):
            pz.remove_parametrizations(lin, "weight")
        with pytest.raises(ValueError, match="ParametrizationList requires one or more modules."):
            pz.ParametrizationList([], m.zeros(2))
        pz.register_parametrization(lin, "weight", Shape(), unsafe=True)          # unsafe: the shape may change
        assert tuple(lin.weight.shape) == (2, 3)
        pz.register_parametrization(lin, "weight", Dtype(), unsafe=True)
        assert lin.weight.dtype == m.float64
        with pytest.raises(RuntimeError, match="Serialization of parametrized modules is only supported through "
                                               "state_dict()"):
            pickle.dumps(lin)
        twin = copy.deepcopy(lin)
        assert type(twin).__name__ == "ParametrizedLinear" and twin.weight.shape == lin.weight.shape
        with pytest.raises(ValueError, match=re.escape('orthogonal_map has to be one of "matrix_exp", "cayley", '
                                                       '"householder". Got: foo')):
            m.nn.utils.parametrizations.orthogonal(m.nn.Linear(2, 2), orthogonal_map="foo")
        with pytest.raises(ValueError, match="Expected a matrix or batch of matrices. Got a tensor of 1 dimensions."):
            m.nn.utils.parametrizations.orthogonal(m.nn.Linear(2, 2), "bias")
        with pytest.raises(NotImplementedError, match="It is not possible to assign to the matrix exponential or the "
                                                      "Cayley parametrizations when use_trivialization=False."):
            o = m.nn.utils.parametrizations.orthogonal(m.nn.Linear(2, 2), use_trivialization=False)
            o.weight = m.eye(2)
        with pytest.raises(ValueError, match="Expected n_power_iterations to be positive, but got "
                                             "n_power_iterations=0"):
            m.nn.utils.parametrizations.spectral_norm(m.nn.Linear(2, 2), n_power_iterations=0)
        with pytest.raises(ValueError, match="weight_norm of 'weight' not found in"):
            m.nn.utils.remove_weight_norm(m.nn.Linear(2, 2))
        with pytest.raises(ValueError, match="spectral_norm of 'weight' not found in"):
            m.nn.utils.remove_spectral_norm(m.nn.Linear(2, 2))
        s = m.nn.utils.spectral_norm(m.nn.Linear(2, 2))
        with pytest.raises(RuntimeError, match="Cannot register two spectral_norm hooks on the same parameter weight"):
            m.nn.utils.spectral_norm(s)


def test_orthogonal_weights_are_orthogonal_and_assignable(torch):
    for orth_map in ("matrix_exp", "cayley", "householder"):
        lin = tapegrad.nn.utils.parametrizations.orthogonal(tapegrad.nn.Linear(4, 4).double(), orthogonal_map=orth_map)
        w = lin.weight.detach().numpy()
        np.testing.assert_allclose(w @ w.T, np.eye(4), atol=1e-12)
        q = np.linalg.qr(R.standard_normal((4, 4)))[0]
        lin.weight = tapegrad.tensor(q)
        np.testing.assert_allclose(lin.weight.detach().numpy(), q, atol=1e-12)


def test_old_hooks_remove_and_state_dict_compat(torch):
    for m in (tapegrad, torch):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            lin = m.nn.utils.weight_norm(m.nn.Linear(3, 2).double())
        w = lin.weight.detach().clone()
        m.nn.utils.remove_weight_norm(lin)
        assert [n for n, _ in lin.named_parameters()] == ["bias", "weight"]
        np.testing.assert_allclose(lin.weight.detach().numpy(), w.numpy(), rtol=1e-14)
        sn = m.nn.utils.spectral_norm(m.nn.Linear(3, 2).double())
        sd = sn.state_dict()
        assert sd._metadata[""]["spectral_norm"] == {"weight.version": 1}
        m.nn.utils.remove_spectral_norm(sn)
        assert list(sn.state_dict()) == ["bias", "weight"]
    # a state dict of the old weight_norm (weight_g, weight_v) loads into the parametrization
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        src = tapegrad.nn.utils.weight_norm(tapegrad.nn.Linear(3, 2))
    dst = tapegrad.nn.utils.parametrizations.weight_norm(tapegrad.nn.Linear(3, 2))
    dst.load_state_dict(src.state_dict())
    np.testing.assert_allclose(dst.weight.detach().numpy(), src.weight.detach().numpy(), rtol=1e-6)


def test_transfer_parametrizations_and_params(torch):
    a = tapegrad.nn.utils.parametrizations.weight_norm(tapegrad.nn.Linear(3, 2))
    b = tapegrad.nn.Linear(3, 2)
    tapegrad.nn.utils.parametrize.transfer_parametrizations_and_params(a, b)
    assert b.parametrizations.weight.original0 is a.parametrizations.weight.original0
    np.testing.assert_array_equal(b.weight.detach().numpy(), a.weight.detach().numpy())


def test_module_paths(torch):
    for mod in ("parametrize", "parametrizations"):
        theirs = getattr(torch.nn.utils, mod).__all__
        assert all(hasattr(getattr(tapegrad.nn.utils, mod), n) for n in theirs), mod
    for n in ("weight_norm", "remove_weight_norm", "spectral_norm", "remove_spectral_norm"):
        assert callable(getattr(tapegrad.nn.utils, n))


def test_weight_norm_second_derivative_is_exact(torch):
    """tapegrad's _weight_norm is a composition, exact to any order: it passes gradgradcheck, where torch's fused
    WeightNormInterfaceBackward0 does not (a documented difference: second derivatives through weight norm differ
    from torch's, and are the correct ones)."""
    v = tapegrad.tensor(R.standard_normal((3, 4)), requires_grad=True)
    g = tapegrad.tensor(R.uniform(0.5, 1.5, (3, 1)), requires_grad=True)
    assert tapegrad.autograd.gradgradcheck(lambda v, g: tapegrad._weight_norm(v, g, 0), (v, g))
    tv = torch.tensor(v.detach().numpy(), requires_grad=True)
    tgr = torch.tensor(g.detach().numpy(), requires_grad=True)
    assert not torch.autograd.gradgradcheck(lambda v, g: torch._weight_norm(v, g, 0), (tv, tgr), raise_exception=False)
