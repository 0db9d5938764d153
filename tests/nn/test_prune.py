"""nn.utils.prune against torch: the masks, the reparametrisation (weight_orig, weight_mask, the hook), iterative
pruning, global pruning, remove, is_pruned, the values and gradients of pruned modules, and the errors."""

import importlib

import numpy as np
import pytest

import tapegrad
import tapegrad.nn.utils.prune  # noqa: F401   (as in torch, the submodule is imported explicitly)


@pytest.fixture(autouse=True)
def _torch_prune(torch):
    importlib.import_module("torch.nn.utils.prune")


def _modules(torch):
    rng = np.random.default_rng(0)
    out = []
    for T in (torch, tapegrad):
        lin = T.nn.Linear(6, 4)
        conv = T.nn.Conv2d(3, 5, 2)
        with T.no_grad():
            for m in (lin, conv):
                for p in m.parameters():
                    p.copy_(T.tensor(np.random.default_rng(abs(hash(tuple(p.shape))) % 1000)
                                     .standard_normal(tuple(p.shape)), dtype=T.float32))
        out.append((T, lin, conv))
    _ = rng
    return out


def _np(t):
    return t.detach().numpy()


def _compare(torch, steps):
    results = []
    for T, lin, conv in _modules(torch):
        prune = T.nn.utils.prune
        log = []
        for step in steps:
            step(T, prune, lin, conv)
            log.append((sorted(k for k, _ in lin.named_parameters()), sorted(k for k, _ in lin.named_buffers()),
                        _np(lin.weight).copy(), _np(conv.weight).copy(), prune.is_pruned(lin), prune.is_pruned(conv)))
        x = T.tensor(np.random.default_rng(5).standard_normal((3, 6)), dtype=T.float32)
        lin(x).sum().backward()
        g = {k: _np(p.grad).copy() for k, p in lin.named_parameters()}
        results.append((log, g, sorted(lin.state_dict().keys())))
    (lt, gt, st), (lo, go, so) = results
    assert st == so
    for a, b in zip(lt, lo):
        assert a[0] == b[0] and a[1] == b[1] and a[4:] == b[4:]
        np.testing.assert_array_equal(a[2], b[2])
        np.testing.assert_array_equal(a[3], b[3])
    assert gt.keys() == go.keys()
    for k in gt:
        np.testing.assert_allclose(go[k], gt[k], rtol=1e-6, atol=1e-6)


def test_l1_unstructured_then_again(torch):
    _compare(torch, [lambda T, P, lin, conv: P.l1_unstructured(lin, "weight", amount=0.3),
                     lambda T, P, lin, conv: P.l1_unstructured(lin, "weight", amount=5),
                     lambda T, P, lin, conv: P.l1_unstructured(lin, "bias", amount=1)])


def test_ln_structured_and_custom_mask(torch):
    _compare(torch, [lambda T, P, lin, conv: P.ln_structured(conv, "weight", amount=0.4, n=2, dim=0),
                     lambda T, P, lin, conv: P.ln_structured(conv, "weight", amount=1, n=1, dim=1),
                     lambda T, P, lin, conv: P.custom_from_mask(lin, "weight", T.tensor(
                         np.random.default_rng(1).integers(0, 2, (4, 6)), dtype=T.float32)),
                     lambda T, P, lin, conv: P.l1_unstructured(lin, "weight", amount=0.25)])


def test_pruning_again_scores_the_pruned_tensor(torch):
    """A second method on a pruned tensor ranks what is left (the pruned weight), not weight_orig: the channels
    ln_structured keeps after an unstructured mask are torch's (the pruning tutorial's conv1)."""
    mask = np.ones((5, 3, 2, 2))
    mask[[0, 2, 3], :, :, 1] = 0
    mask[[0, 3], 1:] = 0
    _compare(torch, [lambda T, P, lin, conv: P.custom_from_mask(conv, "weight", T.tensor(mask, dtype=T.float32)),
                     lambda T, P, lin, conv: P.ln_structured(conv, "weight", amount=0.4, n=2, dim=0),
                     lambda T, P, lin, conv: P.l1_unstructured(lin, "weight", amount=6),
                     lambda T, P, lin, conv: P.l1_unstructured(lin, "weight", amount=0.5)])


def test_global_unstructured_and_remove(torch):
    _compare(torch, [lambda T, P, lin, conv: P.global_unstructured([(lin, "weight"), (conv, "weight")],
                                                                   pruning_method=P.L1Unstructured, amount=20),
                     lambda T, P, lin, conv: P.remove(conv, "weight"),
                     lambda T, P, lin, conv: P.identity(lin, "bias")])


def test_random_methods_prune_the_right_amount():
    P = tapegrad.nn.utils.prune
    lin = tapegrad.nn.Linear(10, 8)
    P.random_unstructured(lin, "weight", amount=0.25)
    assert int((lin.weight_mask == 0).sum()) == 20
    P.random_structured(lin, "weight", amount=3, dim=0)
    rows = (lin.weight_mask.sum(1) == 0).sum()
    assert int(rows) >= 3
    P.remove(lin, "weight")
    assert isinstance(lin.weight, tapegrad.nn.Parameter) and not P.is_pruned(lin)


def test_pruning_keeps_the_parameter_object_for_optimizers():
    P = tapegrad.nn.utils.prune
    lin = tapegrad.nn.Linear(4, 3)
    w = lin.weight
    opt = tapegrad.optim.SGD(lin.parameters(), lr=0.1)
    P.l1_unstructured(lin, "weight", amount=0.5)
    assert lin.weight_orig is w
    lin(tapegrad.ones(2, 4)).sum().backward()
    opt.step()
    assert bool((w.grad * (1 - lin.weight_mask) == 0).all())      # no gradient where pruned
    P.remove(lin, "weight")
    assert lin.weight is w and bool(((w == 0) == (lin.weight == 0)).all())


ERRORS = """
P.l1_unstructured(lin, "weight", amount=1.5)
P.l1_unstructured(lin, "weight", amount=-1)
P.l1_unstructured(lin, "weight", amount=100)
P.l1_unstructured(lin, "weight", amount="a")
P.remove(lin, "weight")
P.ln_structured(lin, "bias", amount=1, n=2, dim=0)
P.ln_structured(lin, "weight", amount=1, n=2, dim=3)
P.global_unstructured([(lin, "weight")], pruning_method=P.LnStructured, amount=1, n=2, dim=0)
P.l1_unstructured(lin, "weight", amount=1, importance_scores=torch.ones(3))
"""


@pytest.mark.parametrize("call", [c for c in ERRORS.strip().splitlines()])
def test_errors_vs_torch(torch, call):
    got = []
    for T in (torch, tapegrad):
        lin = T.nn.Linear(6, 4)
        try:
            exec(call, {"P": T.nn.utils.prune, "lin": lin, "torch": T})
            got.append(None)
        except Exception as e:  # noqa: BLE001 - the exception is what is compared
            got.append((type(e).__name__, str(e).split(" of module")[0].split("Found method")[0]))
    assert got[1] == got[0] or (got[0] is not None and got[1] is not None and got[0][0] == got[1][0]), got
