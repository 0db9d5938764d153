"""NumPy-style argument names on every op of the table: each sample's ``dim``/``keepdim``/``input``/``other``
keyword renamed to each of torch's aliases (``axis``, ``keepdims``, ``x``/``a``/``x1``, ``x2``) gives torch's
value where torch takes the alias and torch's TypeError where it doesn't; an op's declared ``aliases`` are
exercised and taken by torch."""

from __future__ import annotations

import numpy as np
import pytest

import tapegrad
from ops.op_db import OPS
from ops.oracle import as_np, outputs, to_tg, to_torch
from tapegrad._aliases import ALIASES

CASES = []
for spec in OPS:
    for k, sample in enumerate(spec.samples(np.random.default_rng(0))):
        for key in sample.kwargs:
            for alias in ALIASES.get(key, ()):
                CASES.append(pytest.param(spec, sample, key, alias, id=f"{spec.name}-{sample.name or k}-{alias}"))


def _call(m, spec, sample, kwargs):
    conv = to_tg if m is tapegrad else (lambda a, d, g: to_torch(m, a, d, g))
    args = [conv(a, np.float64, False) for a in sample.args]
    try:
        return outputs(spec, spec.fn(m, *args, **kwargs))
    except TypeError as e:
        return e


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("spec,sample,key,alias", CASES)
def test_alias_vs_torch(torch, spec, sample, key, alias):
    kwargs = dict(sample.kwargs)
    kwargs[alias] = kwargs.pop(key)
    ours, theirs = _call(tapegrad, spec, sample, kwargs), _call(torch, spec, sample, kwargs)
    if isinstance(theirs, TypeError):
        assert isinstance(ours, TypeError), f"{spec.name}: torch refuses {alias}= ({theirs}); tapegrad takes it"
        assert alias not in spec.aliases, f"{spec.name}: declares {alias!r}, which torch refuses"
        return
    assert not isinstance(ours, TypeError), f"{spec.name}: torch takes {alias}=, tapegrad: {ours}"
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(as_np(a), as_np(b), rtol=1e-6, atol=1e-7, equal_nan=True)


@pytest.mark.parametrize("spec", [s for s in OPS if s.aliases], ids=lambda s: s.name)
def test_declared_aliases_are_exercised(spec):
    used = {alias for sample in spec.samples(np.random.default_rng(0)) for key in sample.kwargs
            for alias in ALIASES.get(key, ())}
    assert set(spec.aliases) <= used, f"{spec.name}: no sample has a keyword for {set(spec.aliases) - used}"
