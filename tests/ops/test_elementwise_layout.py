"""The memory layout of arithmetic's result when the operands are laid out differently (a channels-last-like
attention output added to a contiguous residual, a transposed operand, broadcasting): torch's TensorIterator
orders the result's dims by the operands' strides, the first operand deciding first. What a following dropout
draws, in memory order, depends on it. tapegrad follows it for results of 3 or more dims (a 1-d or 2-d result keeps
NumPy's layout: the check would cost every small op; see docs/design.md)."""

import numpy as np
import pytest

import tapegrad


def _operands(m):
    base = m.arange(2 * 3 * 4 * 5, dtype=m.float32).reshape(2, 3, 4, 5) / 9
    cl = base.contiguous(memory_format=m.channels_last)
    tr = base.permute(0, 2, 3, 1).contiguous().permute(0, 3, 1, 2)        # same as cl, built another way
    return {
        "contig": base,
        "cl": cl,
        "tr": tr,
        "t2": m.arange(12.).reshape(3, 4).t(),
        "c2": m.arange(12.).reshape(4, 3),
        "row": m.arange(3.),
        "col": m.arange(4.).reshape(4, 1),
        "bc": m.arange(5.).reshape(1, 1, 1, 5),
        "perm3": m.arange(24.).reshape(2, 3, 4).permute(2, 0, 1),
        "c3": m.arange(24.).reshape(4, 2, 3),
    }


PAIRS = [("cl", "contig"), ("contig", "cl"), ("tr", "contig"), ("cl", "bc"), ("bc", "cl"), ("perm3", "c3"),
         ("c3", "perm3"), ("perm3", "perm3"), ("cl", "cl")]
OPS = ["add", "sub", "mul", "div"]


def _layout(m, a, b, op):
    ops = _operands(m)
    r = getattr(m, op)(ops[a], ops[b])
    return tuple(r.shape), tuple(s for s, n in zip(r.stride(), r.shape) if n > 1)


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("a,b", PAIRS, ids=[f"{a}-{b}" for a, b in PAIRS])
def test_binary_result_layout_matches_torch(torch, a, b, op):
    assert _layout(tapegrad, a, b, op) == _layout(torch, a, b, op)


def test_residual_then_dropout_draws_torch_mask(torch):
    def run(m):
        m.manual_seed(0)
        attn_out = m.randn(2, 5, 3, 3).permute(0, 3, 1, 2)        # channels-last-like, as a conv on a rearrange
        x = m.randn(2, 3, 5, 3)
        y = m.nn.functional.dropout(attn_out + x, 0.5)
        return y.numpy(), y.stride()
    (a, sa), (b, sb) = run(tapegrad), run(torch)
    assert sa == sb
    np.testing.assert_allclose(a, b, rtol=1e-6)


OTHER_OPS = {
    "where": lambda m, a, b: m.where(a > 0, a, b),
    "where_b_first": lambda m, a, b: m.where(b > 0, a, b),
    "gt": lambda m, a, b: a > b,
    "maximum": lambda m, a, b: m.maximum(a, b),
    "pow": lambda m, a, b: a.abs() ** b,
    "lerp": lambda m, a, b: m.lerp(a, b, 0.3),
    "lerp_tensor": lambda m, a, b: m.lerp(a, b, b.sigmoid()),
    "addcmul": lambda m, a, b: m.addcmul(a, a, b),
}


@pytest.mark.parametrize("op", sorted(OTHER_OPS))
@pytest.mark.parametrize("a,b", [("cl", "contig"), ("contig", "cl"), ("perm3", "c3")],
                         ids=["cl-contig", "contig-cl", "perm3-c3"])
def test_other_elementwise_result_layout_matches_torch(torch, op, a, b):
    def layout(m):
        ops = _operands(m)
        r = OTHER_OPS[op](m, ops[a], ops[b])
        return tuple(r.shape), tuple(s for s, n in zip(r.stride(), r.shape) if n > 1)
    assert layout(tapegrad) == layout(torch)


LAYOUT_OPS = {
    "cat1": lambda m, a: m.cat([a, a], 1),
    "cat0": lambda m, a: m.cat([a, a], 0),
    "stack0": lambda m, a: m.stack([a, a], 0),
    "masked_fill": lambda m, a: a.masked_fill(a > 0.5, 0.),
    "cumsum": lambda m, a: a.cumsum(1),
    "roll": lambda m, a: a.roll(1, 1),
    "flip": lambda m, a: a.flip(1),
    "sort": lambda m, a: a.sort(1).values,
    "sort_indices": lambda m, a: a.sort(1).indices,
}


@pytest.mark.parametrize("op", sorted(LAYOUT_OPS))
@pytest.mark.parametrize("a", ["cl", "tr", "t2", "perm3", "contig"])
def test_copying_ops_result_layout_matches_torch(torch, op, a):
    """Row-major results (masked_fill, the scans, roll, cat and stack on a new dim 0 unless every input is
    channels-last), the
    input's own layout (flip, sort), as torch's kernels allocate them."""
    def layout(m):
        r = LAYOUT_OPS[op](m, _operands(m)[a])
        return tuple(r.shape), tuple(s for s, n in zip(r.stride(), r.shape) if n > 1)
    assert layout(tapegrad) == layout(torch)
