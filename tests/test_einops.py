"""einops on tapegrad tensors (src/tapegrad/_einops.py): with `import tapegrad as torch`, einops' functions pick the
backend named ``tapegrad``; values and gradients against einops on torch; either import order; tapegrad never
imports einops itself; einops' torch layers serve tapegrad where ``torch`` is tapegrad."""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import tapegrad

einops = pytest.importorskip("einops")   # in the `test` extra; tapegrad does not depend on it

SRC = str(Path(tapegrad.__file__).parent.parent)

CALLS = [
    lambda e, x: e.rearrange(x, "b c (h w) -> b (c h) w", h=2),
    lambda e, x: e.rearrange(x, "b ... w -> b (...) w"),
    lambda e, x: e.reduce(x, "b c (h w) -> b h", "max", h=2),
    lambda e, x: e.reduce(x, "b c w -> c", "mean"),
    lambda e, x: e.reduce(x, "b c w -> b", "sum"),
    lambda e, x: e.repeat(x, "b c w -> b c r w", r=3),
    lambda e, x: e.einsum(x, x, "b c w, b d w -> b c d"),
    lambda e, x: e.unpack(*e.pack([x, x[:, 0]], "b *"), "b *")[1] * 2,
]


@pytest.mark.parametrize("i", range(len(CALLS)))
def test_einops_functions_on_tapegrad_match_torch(torch, i):
    data = np.random.default_rng(i).standard_normal((2, 3, 4)).astype(np.float32)
    outs = []
    for m in (torch, tapegrad):
        x = m.tensor(data, requires_grad=True)
        y = CALLS[i](einops, x)
        (y * m.arange(float(y.numel())).reshape(y.shape)).sum().backward()
        outs.append((tuple(y.shape), y.detach().numpy(), x.grad.numpy()))
    assert outs[0][0] == outs[1][0]
    np.testing.assert_allclose(outs[1][1], outs[0][1], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(outs[1][2], outs[0][2], rtol=1e-5, atol=1e-6)


def test_einops_errors_are_einops_own():
    with pytest.raises(einops.EinopsError, match="Shape mismatch"):
        einops.rearrange(tapegrad.ones(2, 3), "a (b c) -> a b c", b=2)


def _run(code):
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         env={"PYTHONPATH": SRC, "PATH": "/usr/bin:/bin"})
    assert out.returncode == 0, out.stderr
    return out.stdout.split()


@pytest.mark.parametrize("first", ["tapegrad", "einops"])
def test_either_import_order_works_and_tapegrad_alone_does_not_import_einops(first):
    code = (f"import sys, {first}\n"
            "import tapegrad, einops\n"
            "print(einops.rearrange(tapegrad.ones(2, 3), 'a b -> b a').shape == (3, 2))\n")
    assert _run(code) == ["True"]
    assert _run("import sys, tapegrad; print('einops' in sys.modules, 'torch' in sys.modules)") == ["False", "False"]


def test_einops_torch_layers_serve_tapegrad_when_torch_is_tapegrad():
    code = ("import sys, tapegrad; sys.modules['torch'] = tapegrad\n"
            "from einops.layers.torch import Rearrange, Reduce\n"
            "m = tapegrad.nn.Sequential(Rearrange('b c h w -> b h w c'), Reduce('b h w c -> b c', 'mean'))\n"
            "x = tapegrad.ones(2, 3, 4, 4, requires_grad=True); m(x).sum().backward()\n"
            "print(tuple(m(x).shape), float(x.grad.sum()))\n")
    assert _run(code) == ["(2,", "3)", "6.0"]
