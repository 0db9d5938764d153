"""The fast path of max pooling (windows that tile the input) gives torch's values and indices, ties and NaN
included (torch keeps the first maximum, and the last NaN it meets)."""

import numpy as np
import pytest

import tapegrad


@pytest.mark.parametrize("seed", range(4))
def test_tiled_max_pool_matches_torch(torch, seed):
    rng = np.random.default_rng(seed)
    fns = {1: "max_pool1d", 2: "max_pool2d", 3: "max_pool3d"}
    for _ in range(40):
        d = int(rng.integers(1, 4))
        k = tuple(int(v) for v in rng.integers(1, 4, d))
        size = tuple(int(v) for v in rng.integers(1, 8, d))
        if any(size[i] < k[i] for i in range(d)):
            continue
        x = rng.integers(-2, 2, (2, 3) + size).astype(np.float64)      # many ties
        if rng.random() < 0.5:
            x[rng.random(x.shape) < 0.2] = np.nan
        ours = getattr(tapegrad.nn.functional, fns[d])(tapegrad.tensor(x), k, return_indices=True)
        theirs = getattr(torch.nn.functional, fns[d])(torch.tensor(x), k, return_indices=True)
        np.testing.assert_array_equal(ours[0].numpy(), theirs[0].numpy())
        np.testing.assert_array_equal(ours[1].numpy(), theirs[1].numpy())
