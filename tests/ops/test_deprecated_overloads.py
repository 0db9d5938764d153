"""torch's deprecated scalar-first overloads (old tutorials' ``p.data.add_(-lr, p.grad.data)``): ``add``/``sub``
(and in place) with ``alpha`` second, ``addcmul``/``addcdiv`` with ``value`` second — values and gradients as
torch's, warned once a process in torch's words; ``where`` with a uint8 condition (pytorch-crf's masks)."""

import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import tapegrad

CALLS = [
    ("add", lambda m, a, b, c: m.add(a, 2.5, b)), ("sub", lambda m, a, b, c: m.sub(a, -3, b)),
    ("method add", lambda m, a, b, c: a.add(0.5, b)), ("method sub", lambda m, a, b, c: a.sub(2, b)),
    ("add_", lambda m, a, b, c: a.clone().add_(-0.25, b)), ("sub_", lambda m, a, b, c: a.clone().sub_(4, b)),
    ("addcmul", lambda m, a, b, c: m.addcmul(a, 0.5, b, c)), ("addcdiv", lambda m, a, b, c: m.addcdiv(a, 3, b, c)),
    ("addcmul_", lambda m, a, b, c: a.clone().addcmul_(-2, b, c)),
    ("addcdiv_", lambda m, a, b, c: a.clone().addcdiv_(1.5, b, c)),
    ("number other", lambda m, a, b, c: m.add(a, 2, 3)),
]


@pytest.mark.parametrize("name,call", CALLS, ids=[c[0] for c in CALLS])
def test_scalar_first_overloads_match_torch(torch, name, call):
    rng = np.random.default_rng(1)
    arrays = [rng.standard_normal((2, 3)), rng.standard_normal(3), rng.uniform(1, 2, (2, 1))]
    got = []
    for m in (tapegrad, torch):
        ts = [m.tensor(a, requires_grad=True) for a in arrays]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = call(m, *ts)
        out.sum().backward()
        got.append([out.detach().numpy()] + [t.grad.numpy() if t.grad is not None else None for t in ts])
    for a, b in zip(*got):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(a, b, rtol=1e-12)


def test_warned_once_in_torchs_words(torch):
    code = ("import warnings, {m} as t\nwarnings.simplefilter('always')\na = t.ones(2)\n"
            "with warnings.catch_warnings(record=True) as w:\n    warnings.simplefilter('always')\n"
            "    t.add(a, 2, a); t.sub(a, 2, a); a.addcmul(2, a, a)\n"
            "print(len(w), str(w[0].message).split(' (Triggered')[0])")
    src = str(Path(tapegrad.__file__).parent.parent)
    outs = [subprocess.run([sys.executable, "-c", code.format(m=m)], capture_output=True, text=True,
                           env={**os.environ, "PYTHONPATH": src}).stdout for m in ("tapegrad", "torch")]
    assert outs[0] == outs[1] and outs[0].startswith("1 This overload of add is deprecated")


def test_a_tensor_in_the_scalars_place_is_refused():
    a = tapegrad.ones(2)
    with pytest.raises(TypeError, match="received an invalid combination of arguments"):
        tapegrad.add(a, a, a)


@pytest.mark.parametrize("form", ["function", "method"])
def test_where_takes_a_uint8_condition_as_torch(torch, form):
    rng = np.random.default_rng(2)
    cond = np.array([[1, 0, 3], [0, 1, 0]], dtype=np.uint8)      # any nonzero byte counts as true
    x, y = rng.standard_normal((2, 3)), rng.standard_normal(3)
    got = []
    for m in (tapegrad, torch):
        a, b = m.tensor(x, requires_grad=True), m.tensor(y, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            c = m.tensor(cond)
            out = m.where(c, a, b) if form == "function" else a.where(c, b)
        (out * m.arange(1.0, 7.0, dtype=m.float64).reshape(2, 3)).sum().backward()
        got.append((out.detach().numpy(), a.grad.numpy(), b.grad.numpy(), str(out.dtype).split(".")[1]))
    for u, v in zip(*got):
        assert (np.array_equal(u, v) if isinstance(u, np.ndarray) else u == v)


def test_where_uint8_condition_warned_once_at_the_caller(torch):
    code = ("import warnings, {m} as t\nc = t.tensor([1, 0], dtype=t.uint8)\n"
            "with warnings.catch_warnings(record=True) as w:\n    warnings.simplefilter('always')\n"
            "    t.where(c, 1.0, 0.0); t.ones(2).where(c, 0.0)\n"
            "print(len(w), w[0].filename, w[0].lineno, str(w[0].message).split(' (Triggered')[0])")
    src = str(Path(tapegrad.__file__).parent.parent)
    outs = [subprocess.run([sys.executable, "-c", code.format(m=m)], capture_output=True, text=True,
                           env={**os.environ, "PYTHONPATH": src}).stdout for m in ("tapegrad", "torch")]
    assert outs[0] == outs[1] and outs[0].startswith("1 <string> 5 where received a uint8 condition tensor.")


@pytest.mark.parametrize("dtype", ["float32", "int64", "int8"])
def test_where_other_non_bool_conditions_still_refused(torch, dtype):
    for m in (tapegrad, torch):
        with pytest.raises(RuntimeError, match="where expected condition to be a boolean tensor, but got a tensor"):
            m.where(m.ones(2, dtype=getattr(m, dtype)), 1.0, 0.0)
