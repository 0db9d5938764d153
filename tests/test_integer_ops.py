"""Ops on integer tensors, against torch: the result's dtype and wrap-around (found by running torch's op_db
samples in int32/int64/uint8)."""

import pytest

import tapegrad


def _both(torch, fn):
    return fn(tapegrad), fn(torch)


@pytest.mark.parametrize("dt", ["int32", "int16", "uint8", "int64"])
def test_addbmm_keeps_the_integer_dtype(torch, dt):
    def run(m):
        d = getattr(m, dt)
        return m.addbmm(m.ones(2, 2, dtype=d), m.ones(3, 2, 2, dtype=d) * 2, m.ones(3, 2, 2, dtype=d), beta=2)
    ours, theirs = _both(torch, run)
    assert ours.dtype.name == str(theirs.dtype).split(".")[-1] and ours.tolist() == theirs.tolist()


@pytest.mark.parametrize("alpha", [-1, 3, 300])
def test_index_add_converts_alpha_to_the_dtype_as_torch(torch, alpha):
    def run(m):
        return m.zeros(3, dtype=m.uint8).index_add(0, m.tensor([0, 1]), m.tensor([1, 7], dtype=m.uint8),
                                                   alpha=alpha)
    def outcome(m):
        try:
            return run(m).tolist()
        except RuntimeError as e:
            return str(e)
    assert outcome(tapegrad) == outcome(torch)


@pytest.mark.parametrize("dt", ["int32", "int16", "float32"])
def test_tensordot_summing_a_size_one_dim_keeps_the_dtype(torch, dt):
    def run(m):
        d = getattr(m, dt)
        return m.tensordot(m.ones(1, 1, 1, dtype=d) * 2, m.arange(4).reshape(2, 1, 2).to(d), dims=([0, 1], [2, 0]))
    ours, theirs = _both(torch, run)
    assert ours.dtype.name == str(theirs.dtype).split(".")[-1] and ours.tolist() == theirs.tolist()


AVG_POOLS = [
    lambda m, x, y, z: m.nn.functional.avg_pool1d(x, 2),
    lambda m, x, y, z: m.nn.functional.avg_pool1d(x, 3, padding=1),
    lambda m, x, y, z: m.nn.functional.avg_pool1d(x, 3, padding=1, count_include_pad=False),
    lambda m, x, y, z: m.nn.functional.avg_pool1d(x, 3, stride=2, padding=1, ceil_mode=True, count_include_pad=False),
    lambda m, x, y, z: m.nn.functional.avg_pool2d(y, 3, padding=1),
    lambda m, x, y, z: m.nn.functional.avg_pool2d(y, 3, padding=1, count_include_pad=False),
    lambda m, x, y, z: m.nn.functional.avg_pool2d(y, (2, 3), divisor_override=4),
    lambda m, x, y, z: m.nn.functional.avg_pool2d(y, 3, divisor_override=-5),
    lambda m, x, y, z: m.nn.functional.avg_pool2d(y[0], 2),
    lambda m, x, y, z: m.nn.functional.avg_pool3d(z, 2),
    lambda m, x, y, z: m.nn.functional.avg_pool3d(z, 3, padding=1, count_include_pad=False),
    lambda m, x, y, z: m.nn.AvgPool2d(2)(y),
    lambda m, x, y, z: m.nn.functional.avg_pool1d(x.to(m.int32), 2),
    lambda m, x, y, z: m.nn.functional.avg_pool3d(z.to(m.uint8), 2),
    lambda m, x, y, z: m.nn.functional.avg_pool2d(y.bool(), 2),
]


@pytest.mark.parametrize("k", range(len(AVG_POOLS)))
def test_average_pooling_of_integers_as_torch(torch, k):
    """int64 average pooling is int64 in torch (each window's sum divided toward zero); other integer types are
    'not implemented' there."""
    def run(m):
        x = m.tensor([[[-5, -2, 3, -7, 1, 0, 9, -4]]])
        y = m.arange(-30, 34).reshape(1, 1, 8, 8) * 7
        z = m.arange(-60, 68).reshape(2, 1, 4, 4, 4)
        try:
            r = AVG_POOLS[k](m, x, y, z)
        except NotImplementedError as e:
            return str(e)
        return str(r.dtype).split(".")[-1], r.tolist()
    assert run(tapegrad) == run(torch)
