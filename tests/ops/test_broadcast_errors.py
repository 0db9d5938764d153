"""Shapes that do not broadcast, for every op of the table that takes two or more tensors: the same exception
class as torch's (a RuntimeError, which a user may catch), and torch's words when torch gives its broadcasting
message ("The size of tensor a (2) must match the size of tensor b (4) at non-singleton dimension 0"); plus the
operators and the functions outside the table."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tapegrad
from ops.op_db import OPS
from pairs import same

BROADCAST_MSG = "must match the size of tensor b"
# torch.binary_cross_entropy_with_logits (ATen's) broadcasts; tapegrad's is nn.functional's, which first checks
# that the sizes are equal (a ValueError, as F's): a documented difference of the top-level name only
SKIP = {"binary_cross_entropy_with_logits_top"}


def _cases():
    out, seen = [], set()
    for spec in OPS:
        for sample in spec.samples(np.random.default_rng(0))[:1]:
            n = 0
            while n < len(sample.args) and isinstance(sample.args[n], np.ndarray) and \
                    sample.args[n].dtype.kind == "f":
                n += 1
            if n >= 2 and spec.name not in seen and spec.name not in SKIP and not any(isinstance(a, np.ndarray) for a in sample.args[n:]):
                seen.add(spec.name)
                out.append(pytest.param(spec, sample, n, id=spec.name))
    return out


def _run(m, spec, sample, n):
    shapes = [(2, 3), (4, 3)] + [(2, 3)] * (n - 2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            spec.fn(m, *[m.ones(s, dtype=m.float64) for s in shapes], *sample.args[n:], **sample.kwargs)
        except Exception as e:  # noqa: BLE001 - compared with torch's
            return e
    return None


@pytest.mark.parametrize("spec,sample,n", _cases())
def test_mismatched_shapes_raise_torchs_error(torch, spec, sample, n):
    theirs, ours = _run(torch, spec, sample, n), _run(tapegrad, spec, sample, n)
    if theirs is None or BROADCAST_MSG not in str(theirs):
        return          # (torch accepts these shapes, or refuses them for another reason: covered elsewhere)
    assert isinstance(ours, RuntimeError), f"{spec.name}: torch RuntimeError({theirs}); tapegrad {ours!r}"
    assert str(ours) == str(theirs), f"{spec.name}: {ours} != torch's {theirs}"


EXPRS = ["a + b", "a - b", "a * b", "a / b", "a ** b", "a // b", "a % b", "a > b", "a == b", "a != b", "a <= b",
         "a.bool() & b.bool()", "a.long() | b.long()", "a.long() ^ b.long()", "torch.where(a > 0, b, 0.)",
         "torch.where(a > 0, a, b)", "torch.maximum(a, b)", "torch.atan2(a, b)", "torch.lerp(a, b, 0.5)",
         "torch.lerp(a, a, b)", "torch.addcmul(a, b, a)", "torch.addcdiv(a, b, a)", "torch.isclose(a, b)",
         "torch.allclose(a, b)", "torch.eq(a, b)", "torch.logical_and(a, b)", "torch.broadcast_tensors(a, b)",
         "a.add_(b)", "torch.ones(1, 3).add_(b)", "a.copy_(b)", "F.mse_loss(a, b)", "F.l1_loss(a, b)",
         "F.smooth_l1_loss(a, b)", "F.binary_cross_entropy(a.sigmoid(), b.sigmoid())", "torch.hypot(a, b)",
         "torch.fmod(a, b)", "torch.clamp(a, b)", "torch.masked_fill(a, b > 0, 0.)",
         "torch.matmul(torch.ones(2, 2, 3), torch.ones(3, 3, 4))", "torch.cdist(torch.ones(2, 2, 3), torch.ones(3, 3, 3))",
         "a.expand(4, 3)"]


@pytest.mark.parametrize("expr", EXPRS)
def test_broadcast_errors_outside_the_table(torch, expr):
    same(torch, "a = torch.ones(2, 3); b = torch.ones(4, 3)", expr)
