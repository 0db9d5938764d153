"""Run the same nn module on tapegrad and on torch (same parameters, same inputs) and compare everything."""

from __future__ import annotations

import numpy as np

import tapegrad


def flat(out):
    """Tensors of a (nested) module output, in order, skipping None."""
    if out is None:
        return []
    if isinstance(out, (tuple, list)):
        res = []
        for o in out:
            res.extend(flat(o))
        return res
    return [out]


class Const:
    """An input array that must not require grad (a target torch refuses to differentiate)."""

    def __init__(self, array):
        self.array = array


def to_lib(lib, arrays, requires_grad=True):
    res = []
    for a in arrays:
        if isinstance(a, Const):
            res.append(lib.tensor(a.array.copy()))
        elif isinstance(a, np.ndarray) and a.dtype.kind == "f":
            res.append(lib.tensor(a.copy(), requires_grad=requires_grad))
        elif isinstance(a, np.ndarray):
            res.append(lib.tensor(a.copy()))
        else:
            res.append(a)
    return res


def np_of(t):
    return np.asarray(t.detach().numpy()) if hasattr(t, "detach") else np.asarray(t)


def torch_repr_as_tapegrad(s: str) -> str:
    return s.replace("torch.", "tapegrad.")


def check_module(torch, make, inputs, call=None, modes=("train",), rtol=1e-8, atol=1e-10, seed=0,
                 compare_repr=True, steps=1):
    """Build ``make(nn)`` in both libraries, copy torch's state into tapegrad's, and compare state_dict keys,
    repr, outputs, gradients w.r.t. inputs and every parameter, and buffers after forward (in each mode)."""
    call = call or (lambda m, lib, *xs: m(*xs))
    torch.manual_seed(seed)
    tm = make(torch.nn).double()
    tapegrad.manual_seed(seed)
    gm = make(tapegrad.nn).double()
    # the same keys, in the same order
    assert list(gm.state_dict().keys()) == list(tm.state_dict().keys())
    assert [n for n, _ in gm.named_parameters()] == [n for n, _ in tm.named_parameters()]
    assert [n for n, _ in gm.named_buffers()] == [n for n, _ in tm.named_buffers()]
    if compare_repr:
        assert repr(gm) == torch_repr_as_tapegrad(repr(tm))
    # same shapes at init, then torch's values copied in (as numpy arrays)
    for (n, p), (_, q) in zip(gm.state_dict().items(), tm.state_dict().items()):
        assert tuple(p.shape) == tuple(q.shape), n
    res = gm.load_state_dict({k: v.detach().numpy().copy() for k, v in tm.state_dict().items()})
    assert res.missing_keys == [] and res.unexpected_keys == []
    rng = np.random.default_rng(seed + 1)
    for mode in modes:
        tm.train(mode == "train")
        gm.train(mode == "train")
        for _ in range(steps):
            tx = to_lib(torch, inputs)
            gx = to_lib(tapegrad, inputs)
            tout = flat(call(tm, torch, *tx))
            gout = flat(call(gm, tapegrad, *gx))
            assert len(tout) == len(gout)
            for a, b in zip(gout, tout):
                assert tuple(a.shape) == tuple(b.shape)
                assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1]
                np.testing.assert_allclose(np_of(a), np_of(b), rtol=rtol, atol=atol)
            # (zeros against zeros proves nothing: a case whose outputs are all zero needs other inputs)
            assert any(np.any(np_of(b) != 0) for b in tout), "every output is zero: pick inputs that reach the layer"
            # backward with the same random upstream gradients
            weights = [rng.standard_normal(tuple(b.shape)) for b in tout]
            diff = [(a, b, w) for a, b, w in zip(gout, tout, weights) if b.requires_grad]
            if diff:
                tl = sum((b * torch.tensor(w)).sum() for _, b, w in diff)
                gl = sum((a * tapegrad.tensor(w)).sum() for a, _, w in diff)
                tm.zero_grad()
                gm.zero_grad()
                tl.backward()
                gl.backward()
                for a, b in zip(gx, tx):
                    if hasattr(b, "requires_grad") and b.requires_grad:
                        assert (a.grad is None) == (b.grad is None)
                        if b.grad is not None:
                            np.testing.assert_allclose(np_of(a.grad), np_of(b.grad), rtol=rtol, atol=atol)
                tparams = dict(tm.named_parameters())
                for n, p in gm.named_parameters():
                    q = tparams[n]
                    assert (p.grad is None) == (q.grad is None), n
                    if q.grad is not None:
                        np.testing.assert_allclose(np_of(p.grad), np_of(q.grad), rtol=rtol, atol=atol, err_msg=n)
                grads = [b.grad for b in tx if hasattr(b, "grad")] + [q.grad for q in tparams.values()]
                assert any(g is not None and np.any(np_of(g) != 0) for g in grads), \
                    "every gradient is zero: pick inputs that reach the layer"
            tbufs = dict(tm.named_buffers())
            for n, b in gm.named_buffers():
                np.testing.assert_allclose(np_of(b), np_of(tbufs[n]), rtol=rtol, atol=atol, err_msg=n)
    return gm, tm
