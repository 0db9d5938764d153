"""What a node keeps for backward, as torch keeps it: an operand of a product is saved only for the *other*
operand's gradient (and fmod/remainder keep theirs only for the divisor's). So an operand that no gradient needs may be changed in place between forward and backward
(no error in torch, none here), while changing one that is needed raises torch's in-place error.

(kron is not in the table: torch's kron keeps contiguous copies of its operands, so no change after forward is
an error there; tapegrad's keeps the operands themselves, crossed.)"""

import numpy as np
import pytest

import tapegrad

# op name -> (function of (T, a, b) giving the output, shape of a, shape of b)
OPS = {
    "mul": (lambda T, a, b: a * b, (3, 4), (3, 4)),
    "mul_broadcast": (lambda T, a, b: a * b, (3, 4), (4,)),
    "div": (lambda T, a, b: a / b, (3, 4), (3, 4)),
    "mm": (lambda T, a, b: T.mm(a, b), (3, 4), (4, 5)),
    "matmul_2d": (lambda T, a, b: a @ b, (3, 4), (4, 5)),
    "matmul_batched": (lambda T, a, b: a @ b, (2, 3, 4), (4, 5)),
    "matmul_vec": (lambda T, a, b: a @ b, (4,), (4, 5)),
    "matmul_mat_vec": (lambda T, a, b: T.matmul(a, b), (3, 4), (4,)),
    "dot": (lambda T, a, b: T.dot(a, b), (4,), (4,)),
    "bmm": (lambda T, a, b: T.bmm(a, b), (2, 3, 4), (2, 4, 5)),
    "linear_2d": (lambda T, a, b: T.nn.functional.linear(a, b, T.ones(5)), (3, 4), (5, 4)),
    "linear_3d": (lambda T, a, b: T.nn.functional.linear(a, b, T.ones(5)), (2, 3, 4), (5, 4)),
    "linear_no_bias": (lambda T, a, b: T.nn.functional.linear(a, b), (3, 4), (5, 4)),
    "addmm": (lambda T, a, b: T.addmm(T.ones(3, 5), a, b, alpha=2.0), (3, 4), (4, 5)),
    "addmv": (lambda T, a, b: T.addmv(T.ones(3), a, b), (3, 4), (4,)),
    "addr": (lambda T, a, b: T.addr(T.ones(3, 4), a, b), (3,), (4,)),
    "baddbmm": (lambda T, a, b: T.baddbmm(T.ones(2, 3, 5), a, b), (2, 3, 4), (2, 4, 5)),
    "addbmm": (lambda T, a, b: T.addbmm(T.ones(3, 5), a, b), (2, 3, 4), (2, 4, 5)),
    "addcmul": (lambda T, a, b: T.addcmul(T.ones(3, 4), a, b, value=0.5), (3, 4), (3, 4)),
    "addcdiv": (lambda T, a, b: T.addcdiv(T.ones(3, 4), a, b, value=0.5), (3, 4), (3, 4)),
    "cross": (lambda T, a, b: T.linalg.cross(a, b), (4, 3), (4, 3)),
    "outer": (lambda T, a, b: T.outer(a, b), (3,), (4,)),
    "inner": (lambda T, a, b: T.inner(a, b), (3, 4), (2, 4)),
    "einsum": (lambda T, a, b: T.einsum("ij,jk->ik", a, b), (3, 4), (4, 5)),
    "tensordot": (lambda T, a, b: T.tensordot(a, b, dims=1), (3, 4), (4, 5)),
    # not products, the same rule: only the divisor's gradient needs the operands
    "fmod": (lambda T, a, b: T.fmod(a, b), (3, 4), (3, 4)),
    "remainder": (lambda T, a, b: T.remainder(a, b), (3, 4), (4,)),
}


def _run(T, op, needs, changed, data):
    """Forward ``op`` on a and b (non-leaf where they need a gradient), change operand ``changed`` in place,
    then backward: returns ("ok", gradients) or ("error", first words of the message)."""
    fn, _, _ = OPS[op]
    leaves, operands = [], []
    for arr, need in zip(data, needs):
        leaf = T.tensor(arr, requires_grad=need)
        leaves.append(leaf)
        operands.append(leaf * 1.0 if need else leaf.clone())
    out = fn(T, *operands)
    with T.no_grad():
        operands[changed].add_(1.0)
    try:
        out.sum().backward()
    except RuntimeError as e:
        return "error", str(e).split(":")[0]
    return "ok", [None if leaf.grad is None else leaf.grad.numpy().copy() for leaf in leaves]


@pytest.mark.parametrize("changed", [0, 1])
@pytest.mark.parametrize("needs", [(True, False), (False, True), (True, True)])
@pytest.mark.parametrize("op", sorted(OPS))
def test_in_place_change_after_forward_as_torch(torch, op, needs, changed):
    _, sa, sb = OPS[op]
    r = np.random.default_rng(7)
    data = (r.uniform(0.5, 1.5, sa).astype(np.float32), r.uniform(0.5, 1.5, sb).astype(np.float32))  # (div)
    got = _run(tapegrad, op, needs, changed, data)
    want = _run(torch, op, needs, changed, data)
    assert got[0] == want[0], (got, want)
    if want[0] == "error":
        assert got[1] == want[1]
    else:
        for g, w in zip(got[1], want[1]):
            assert (g is None) == (w is None)
            if w is not None:
                np.testing.assert_allclose(g, w, rtol=1e-5)


def test_first_layer_weight_is_not_kept_when_its_input_needs_no_gradient():
    # linear on an input without grad: only x is kept (for the weight's gradient), not the weight
    x, w = tapegrad.ones(2, 3), tapegrad.ones(4, 3, requires_grad=True)
    out = tapegrad.nn.functional.linear(x, w, tapegrad.zeros(4))
    kept = [s for s in out.grad_fn._saved if s is not None]
    assert len(kept) == 1 and kept[0] is x
