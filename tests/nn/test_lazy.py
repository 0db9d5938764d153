"""Lazy modules (nn.LazyLinear...) vs torch 2.13: placeholders before the first forward, then the eager module."""

import copy
import sys

import numpy as np
import pytest

import tapegrad
from nn._oracle import check_module, torch_repr_as_tapegrad

R = np.random.default_rng(7)

# (id, constructor over a module namespace, input shape)
LAZY = [
    ("LazyLinear", lambda nn: nn.LazyLinear(3), (2, 4)),
    ("LazyLinear-nobias-3d", lambda nn: nn.LazyLinear(3, bias=False), (2, 5, 4)),
    ("LazyLinear-1d", lambda nn: nn.LazyLinear(2), (4,)),
    ("LazyConv1d", lambda nn: nn.LazyConv1d(3, 2, stride=2), (2, 4, 7)),
    ("LazyConv2d-groups", lambda nn: nn.LazyConv2d(4, 3, padding=1, groups=2), (1, 2, 5, 5)),
    ("LazyConv2d-unbatched-reflect", lambda nn: nn.LazyConv2d(3, 3, padding=1, padding_mode="reflect"), (2, 5, 5)),
    ("LazyConv3d", lambda nn: nn.LazyConv3d(2, 2, bias=False), (1, 2, 3, 3, 3)),
    ("LazyConvTranspose1d", lambda nn: nn.LazyConvTranspose1d(3, 3, stride=2), (2, 2, 4)),
    ("LazyConvTranspose2d", lambda nn: nn.LazyConvTranspose2d(3, 3, stride=2, padding=1, output_padding=1),
     (2, 2, 3, 3)),
    ("LazyConvTranspose3d", lambda nn: nn.LazyConvTranspose3d(2, 2, groups=2), (1, 2, 2, 2, 2)),
    ("LazyBatchNorm1d", lambda nn: nn.LazyBatchNorm1d(), (4, 3)),
    ("LazyBatchNorm2d-noaffine", lambda nn: nn.LazyBatchNorm2d(affine=False, momentum=0.3), (2, 3, 2, 2)),
    ("LazyBatchNorm3d-notrack", lambda nn: nn.LazyBatchNorm3d(track_running_stats=False), (2, 2, 2, 2, 2)),
    ("LazyInstanceNorm1d", lambda nn: nn.LazyInstanceNorm1d(), (2, 3, 4)),
    ("LazyInstanceNorm2d-notrack", lambda nn: nn.LazyInstanceNorm2d(track_running_stats=False), (2, 3, 4, 4)),
    ("LazyInstanceNorm3d-nobias", lambda nn: nn.LazyInstanceNorm3d(bias=False), (1, 2, 2, 2, 2)),
]


def lib_of(nn):
    return sys.modules[nn.__name__.split(".")[0]]


def entries(module):
    return [(k, torch_repr_as_tapegrad(repr(v)) if "Uninitialized" in repr(v) else tuple(v.shape))
            for k, v in module.state_dict().items()]


@pytest.mark.parametrize("name,make,shape", LAZY, ids=[c[0] for c in LAZY])
def test_lazy_module_matches_torch(torch, name, make, shape):
    tm, gm = make(torch.nn), make(tapegrad.nn)
    # before the first forward: the same repr and state_dict of placeholders
    assert repr(gm) == repr(tm)
    assert entries(gm) == entries(tm)
    assert gm.has_uninitialized_params() and tm.has_uninitialized_params()
    x = R.standard_normal(shape).astype(np.float32)
    tm(torch.tensor(x))
    gm(tapegrad.tensor(x))
    # after it: the eager class, its repr and the materialized shapes
    assert type(gm).__name__ == type(tm).__name__ == name.split("-")[0].replace("Lazy", "")
    assert repr(gm) == repr(tm)
    assert entries(gm) == entries(tm)
    assert not hasattr(gm, "_initialize_hook") and not gm._forward_pre_hooks      # the hook removed itself
    for (k, p), (_, q) in zip(gm.named_parameters(), tm.named_parameters()):
        assert type(p).__name__ == type(q).__name__ == "Parameter", k
    # and it computes as torch's, given torch's values (outputs and every gradient)
    x64 = x.astype(np.float64)

    def materialized(nn):
        m = make(nn)
        m(lib_of(nn).tensor(x))
        return m

    check_module(torch, materialized, [x64], modes=("train", "eval"))


def test_lazy_initialization_runs_reset_parameters():
    lin = tapegrad.nn.LazyLinear(5)
    lin(tapegrad.randn(3, 16))
    w = lin.weight.detach().numpy()
    assert 0.2 < np.abs(w).max() <= 0.25 and np.isfinite(w).all()      # kaiming-uniform: bound 1/sqrt(16)
    bn = tapegrad.nn.LazyBatchNorm2d()
    bn.eval()(tapegrad.randn(2, 3, 2, 2))
    np.testing.assert_array_equal(bn.weight.detach().numpy(), [1, 1, 1])
    np.testing.assert_array_equal(bn.bias.detach().numpy(), [0, 0, 0])
    np.testing.assert_array_equal(bn.running_mean.numpy(), [0, 0, 0])
    np.testing.assert_array_equal(bn.running_var.numpy(), [1, 1, 1])


def test_an_optimizer_built_before_the_first_forward_updates_the_weights():
    model = tapegrad.nn.Sequential(tapegrad.nn.LazyLinear(4), tapegrad.nn.ReLU(), tapegrad.nn.LazyLinear(1))
    params = list(model.parameters())
    opt = tapegrad.optim.SGD(model.parameters(), lr=0.1)
    model(tapegrad.randn(8, 3)).sum().backward()
    assert [p is q for p, q in zip(params, model.parameters())] == [True] * 4
    before = [p.detach().numpy().copy() for p in params]
    grads = [p.grad.numpy().copy() for p in params]
    opt.step()
    for p, b, g in zip(params, before, grads):
        np.testing.assert_allclose(p.detach().numpy(), b - 0.1 * g, rtol=1e-6)


def test_load_state_dict_materializes_and_the_first_forward_checks_the_size(torch):
    for lib in (torch, tapegrad):
        m = lib.nn.LazyLinear(3)
        m.load_state_dict(lib.nn.Linear(5, 3).state_dict())
        assert type(m).__name__ == "LazyLinear" and m.in_features == 0 and tuple(m.weight.shape) == (3, 5)
        m(lib.randn(2, 5))
        assert type(m).__name__ == "Linear" and m.in_features == 5
    errors = []
    for lib in (torch, tapegrad):
        m = lib.nn.LazyLinear(3)
        m.load_state_dict(lib.nn.Linear(5, 3).state_dict())
        with pytest.raises(AssertionError) as e:
            m(lib.randn(2, 4))
        errors.append(str(e.value))
    assert errors[0] == errors[1]


def test_using_a_placeholder_fails_loudly(torch):
    msgs = []
    for lib in (torch, tapegrad):
        m = lib.nn.LazyLinear(3)
        with pytest.raises(RuntimeError) as e:
            m.weight.shape
        msgs.append(str(e.value))
        with pytest.raises((ValueError, RuntimeError)):
            m.weight.sum()
        with pytest.raises((ValueError, RuntimeError)):
            m.weight * 2
        assert tuple(m.weight.size()) == (0,) and m.weight.requires_grad and m.weight.is_leaf
    assert msgs[0] == msgs[1]
    with pytest.raises(RuntimeError) as te:
        torch.nn.LazyConv2d(4, 3)(torch.randn(5, 5))
    with pytest.raises(RuntimeError) as ge:
        tapegrad.nn.LazyConv2d(4, 3)(tapegrad.randn(5, 5))
    assert str(ge.value) == torch_repr_as_tapegrad(str(te.value))


def test_copies_and_casts_keep_placeholders(torch):
    m = copy.deepcopy(tapegrad.nn.LazyBatchNorm1d())
    assert type(m.weight).__name__ == "UninitializedParameter"
    assert type(m.running_mean).__name__ == "UninitializedBuffer"
    m = tapegrad.nn.LazyBatchNorm1d().double()           # the dtype carries over to the materialized tensors
    assert type(m.running_mean).__name__ == "UninitializedBuffer"
    m(tapegrad.randn(4, 3, dtype=tapegrad.float64))
    assert m.weight.dtype == m.running_mean.dtype == tapegrad.float64
    assert tapegrad.nn.LazyLinear(2, dtype=tapegrad.float64)(tapegrad.randn(1, 3, dtype=tapegrad.float64)).dtype \
        == tapegrad.float64


def test_a_user_defined_lazy_module():
    nn = tapegrad.nn

    class LazyScale(nn.modules.lazy.LazyModuleMixin, nn.Module):
        cls_to_become = None

        def __init__(self):
            super().__init__()
            self.scale = nn.UninitializedParameter()

        def initialize_parameters(self, x):
            self.scale.materialize(x.shape[-1:])
            nn.init.ones_(self.scale)

        def forward(self, x):
            return x * self.scale

    m = LazyScale()
    out = m(tapegrad.ones(2, 3))
    assert type(m) is LazyScale and not m.has_uninitialized_params()
    np.testing.assert_array_equal(out.detach().numpy(), np.ones((2, 3)))

    class Incomplete(LazyScale):
        def initialize_parameters(self, x):
            pass

    with pytest.raises(RuntimeError, match="module Incomplete has not been fully initialized"):
        Incomplete()(tapegrad.ones(2))
