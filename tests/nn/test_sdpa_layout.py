"""scaled_dot_product_attention's output is laid out as torch's fused CPU kernel lays it out (like the query):
heads split from a (B, L, H*E) projection give an output whose ``transpose(1, 2).view(B, L, H*E)`` works, eagerly
and compiled, as nanoGPT-style attention blocks (the SDPA tutorial's CausalSelfAttention) rely on."""

import numpy as np
import pytest

import tapegrad


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("causal", [False, True])
def test_output_strides_follow_the_query(torch, dtype, causal):
    x = np.random.default_rng(0).standard_normal((2, 6, 24))
    got = []
    for m in (tapegrad, torch):
        q, k, v = m.tensor(x, dtype=getattr(m, dtype)).chunk(3, -1)
        q, k, v = [t.view(2, -1, 2, 4).transpose(1, 2) for t in (q, k, v)]
        y = m.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)
        got.append((y.stride(), y.transpose(1, 2).view(2, -1, 8).float().numpy()))
        c = m.nn.functional.scaled_dot_product_attention(q.contiguous(), k, v, is_causal=causal)
        got.append((c.stride(), c.float().numpy()))
    (sa, a), (ca, c), (sb, b), (cb, d) = got
    assert sa == sb and ca == cb
    np.testing.assert_allclose(a, b, rtol=2e-3 if dtype == "float16" else 1e-6, atol=1e-6)
    np.testing.assert_allclose(c, d, rtol=2e-3 if dtype == "float16" else 1e-6, atol=1e-6)


def test_compiled_attention_block_views_its_output():
    def block(x):
        q, k, v = x.chunk(3, -1)
        q, k, v = [t.view(2, -1, 2, 4).transpose(1, 2) for t in (q, k, v)]
        y = tapegrad.nn.functional.scaled_dot_product_attention(q, k, v)
        return y.transpose(1, 2).view(2, -1, 8)

    x = tapegrad.randn(2, 5, 24)
    np.testing.assert_array_equal(tapegrad.compile(block)(x).numpy(), block(x).numpy())


def test_math_kernel_only_gives_a_contiguous_output(torch):
    """With the fused kernel switched off (sdpa_kernel(MATH)), torch runs the math path, whose output is
    contiguous: the heads' transpose(1, 2).view(...) then fails in both."""
    got = []
    for m in (tapegrad, torch):
        from importlib import import_module
        att = import_module(m.__name__ + ".nn.attention")
        q = m.ones(2, 6, 8).view(2, 6, 2, 4).transpose(1, 2)
        with att.sdpa_kernel(att.SDPBackend.MATH):
            y = m.nn.functional.scaled_dot_product_attention(q, q, q)
        got.append(y.stride())
        with pytest.raises(RuntimeError, match="view size is not compatible"):
            y.transpose(1, 2).view(2, 6, 8)
    assert got[0] == got[1]
