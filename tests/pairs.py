"""Run one snippet on torch and on tapegrad and compare what comes out: values (dtype, shape, numbers), Python
results, or the exception (its class, and torch's words where asked).

    same(torch, "x = torch.ones(2)", "x.sum(axis=0)")     # setup ; expression

Tensors compare by dtype name, shape and values (to float32 rounding; NaN equal to NaN; the sign of a zero counts
unless ``signed_zeros=False``);
tuples and lists element by element; anything else with ``==`` after ``torch.``/``tapegrad.`` names are unified.
"""

from __future__ import annotations

import re
import warnings

import numpy as np

import tapegrad


def _norm(r, m):
    if isinstance(r, m.Tensor):
        return ("tensor", str(r.dtype).split(".")[-1], tuple(r.shape), r.detach().numpy().copy())
    if isinstance(r, (tuple, list)):
        return (type(r).__name__, [_norm(e, m) for e in r])
    if isinstance(r, (m.dtype, m.Size)) or type(r).__name__ in ("Size", "dtype", "device", "layout"):
        return repr(r).replace("torch.", "").replace("tapegrad.", "")
    if isinstance(r, str):
        return r.replace("tapegrad.", "torch.")
    return r


def run(m, setup, expr):
    env = {"torch": m, "np": np, "F": m.nn.functional}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            if setup:
                exec(setup, env)
            return _norm(eval(expr, env), m)
        except Exception as e:  # noqa: BLE001 - the exception is the result being compared
            return e


def _equal(a, b, signed_zeros):
    if isinstance(a, tuple) and a and a[0] == "tensor":
        if not (isinstance(b, tuple) and b and b[0] == "tensor" and a[1:3] == b[1:3]):
            return False
        x, y = a[3], b[3]
        if x.dtype.kind in "fc":       # (to float32 rounding; a zero's sign must match, a NaN's need not)
            zeros = (x == 0) & (y == 0)
            same_zeros = not signed_zeros or np.array_equal(np.signbit(x.real[zeros]), np.signbit(y.real[zeros]))
            return bool(np.allclose(x, y, rtol=2e-6, atol=1e-7, equal_nan=True) and same_zeros)
        return bool(np.array_equal(x, y))
    if isinstance(a, tuple) and len(a) == 2 and isinstance(a[1], list):
        return isinstance(b, tuple) and a[0] == b[0] and len(a[1]) == len(b[1]) and all(
            _equal(p, q, signed_zeros) for p, q in zip(a[1], b[1]))
    return a == b


def same(torch, setup, expr, words=True, signed_zeros=True):
    """Assert that tapegrad gives what torch gives: the same value, or the same exception class (and, with
    ``words``, the same message with torch's names as tapegrad's)."""
    try:
        theirs = run(torch, setup, expr)
        ours = run(tapegrad, setup, expr)
    finally:
        torch.set_default_dtype(torch.float32)
        tapegrad.set_default_dtype(tapegrad.float32)
    where = f"{setup + ' ;; ' if setup else ''}{expr}"
    if isinstance(theirs, Exception):
        assert isinstance(ours, Exception), f"{where}: torch raises {type(theirs).__name__}: {theirs}; tapegrad " \
                                            f"gives {ours!r}"
        assert type(ours).__name__ == type(theirs).__name__ or isinstance(ours, type(theirs)), \
            f"{where}: torch raises {type(theirs).__name__}: {theirs}; tapegrad {type(ours).__name__}: {ours}"
        if words:
            raw = re.sub(r"\s+", " ", str(theirs)).strip()
            t = raw.replace("torch.", "tapegrad.")
            o = re.sub(r"\s+", " ", str(ours)).strip()
            assert o in (t, raw), f"{where}: torch says {t!r}, tapegrad {o!r}"
        return
    assert not isinstance(ours, Exception), f"{where}: torch gives {theirs!r}; tapegrad raises " \
                                            f"{type(ours).__name__}: {ours}"
    assert _equal(ours, theirs, signed_zeros), f"{where}: torch {theirs!r} != tapegrad {ours!r}"


def cases(text):
    """Parse ``setup ;; expr`` lines (``#`` comments, blank lines skipped) into (setup, expr) pairs."""
    out = []
    for line in text.strip().splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        setup, _, expr = line.rpartition(" ;; ")
        out.append((setup, expr))
    return out
