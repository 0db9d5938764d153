"""What the compile tests of replayed forms share: a capture and two replays with new values must equal eager mode
bitwise (values and gradients), a bad input after the capture must raise eager's error from the replay
(``check``), and the helpers that make and compare the calls."""

from __future__ import annotations

import warnings

import numpy as np

import tapegrad
from tapegrad.compiler import explain


def t(a, rg=False):
    return tapegrad.tensor(np.asarray(a), requires_grad=rg)


def fresh(args):
    return [a.detach().clone().requires_grad_(a.requires_grad) if isinstance(a, tapegrad.Tensor) else a
            for a in args]


def result(fn, args):
    """The outputs' values and the arguments' gradients of a weighted sum of the outputs that require grad."""
    out = fn(*args)
    outs = out if isinstance(out, tuple) else (out,)
    vals = [o.detach().numpy().copy() for o in outs]
    loss = None
    for o in outs:
        if o.requires_grad:
            w = tapegrad.linspace(0.5, 1.5, o.numel(), dtype=o.dtype).reshape(o.shape)
            term = (o * w).sum()
            loss = term if loss is None else loss + term
    if loss is not None:
        loss.backward()
    grads = [a.grad.numpy().copy() if isinstance(a, tapegrad.Tensor) and a.grad is not None else None
             for a in args]
    return vals, grads


def same(got, ref):
    assert len(got[0]) == len(ref[0])
    for g, r in zip(got[0] + got[1], ref[0] + ref[1]):
        assert (g is None) == (r is None)
        if r is not None:
            assert g.dtype == r.dtype and g.shape == r.shape
            np.testing.assert_array_equal(g, r)


def error(fn, args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            fn(*args)
        except Exception as e:  # noqa: BLE001 - the error itself is compared
            return type(e), str(e)
    return None


def check(fn, make, bad=None, misses=0, fullgraphs=(False,)):
    """No graph break; capture + two replays with new values (``make(seed)``) equal eager bitwise (with each
    ``fullgraph`` of ``fullgraphs``); ``bad()``'s arguments raise eager's error from the replay."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        e = explain(fn, *fresh(make(0)))
        assert e.graph_break_count == 0, e.break_reasons
        for fullgraph in fullgraphs:
            cf = tapegrad.compile(fn, fullgraph=fullgraph)
            for seed in (0, 1, 2):
                args = make(seed)
                same(result(cf, fresh(args)), result(fn, fresh(args)))
            assert len(cf.entries) == 1
            entry = cf.entries[0]
            assert not entry.eager and entry.calls == 2 and entry.shape_misses == misses
        if bad is not None:
            args = bad()
            ref = error(fn, fresh(args))
            assert ref is not None
            assert error(cf, fresh(args)) == ref
            assert entry.calls == 3 and len(cf.entries) == 1        # (the replay raised it)
    return entry
