"""``tapegrad.utils.checkpoint`` against ``torch.utils.checkpoint`` on the same programs: values, gradients,
recomputation, warnings and errors (torch's texts, with ``torch.`` read as ``tapegrad.``)."""

from __future__ import annotations

import itertools
import re
import warnings

import numpy as np
import pytest

import tapegrad

W1 = np.random.default_rng(0).standard_normal((6, 5))
W2 = np.random.default_rng(1).standard_normal((5, 4))
XS = np.random.default_rng(2).standard_normal((3, 6))


def _cp(m):
    import importlib
    return importlib.import_module(f"{m.__name__}.utils.checkpoint")


def _params(m):
    return [m.tensor(w, dtype=m.float64, requires_grad=True) for w in (W1, W2)]


def _region(m, w1, w2):
    def f(x, scale=1.0):
        return ((x @ w1).tanh() @ w2).relu().sin() * scale
    return f


def _grads(m, use_cp, reentrant=False, kw=None):
    w1, w2 = _params(m)
    x = m.tensor(XS, dtype=m.float64, requires_grad=True)
    f = _region(m, w1, w2)
    kw = kw or {}
    y = _cp(m).checkpoint(f, x, use_reentrant=reentrant, **kw) if use_cp else f(x, **kw)
    y.pow(2).sum().backward()
    return [np.asarray(t.detach()) for t in (y, x.grad, w1.grad, w2.grad)]


@pytest.mark.parametrize("reentrant", [False, True])
def test_same_values_and_gradients_as_without_and_as_torch(torch, reentrant):
    plain = _grads(tapegrad, False)
    ours = _grads(tapegrad, True, reentrant)
    theirs = _grads(torch, True, reentrant)
    for a, b, c in zip(plain, ours, theirs):
        assert np.array_equal(a, b)               # bit for bit: the recomputation is the same arithmetic
        np.testing.assert_allclose(b, c, rtol=1e-12, atol=1e-12)


def test_kwargs_non_reentrant(torch):
    ours = _grads(tapegrad, True, kw={"scale": 3.0})
    theirs = _grads(torch, True, kw={"scale": 3.0})
    for b, c in zip(ours, theirs):
        np.testing.assert_allclose(b, c, rtol=1e-12, atol=1e-12)


def test_nothing_of_the_region_is_kept():
    w1, w2 = _params(tapegrad)
    x = tapegrad.tensor(XS, requires_grad=True)
    f = _region(tapegrad, w1, w2)
    assert tapegrad.autograd.graph_stats(f(x)).saved_bytes > 0
    y = tapegrad.utils.checkpoint.checkpoint(f, x, use_reentrant=False)
    assert tapegrad.autograd.graph_stats(y).saved_bytes == 0


def _counting(m, log):
    def f(x):
        log.append("start")
        a = x.sin()            # saves x: the last tensor the region saves
        log.append("after sin")
        return a + 1           # saves nothing
    return f


def test_recomputation_runs_once_per_backward_and_stops_early(torch):
    for m in (tapegrad, torch):
        cp = _cp(m)
        log = []
        x = m.tensor(X3, requires_grad=True)
        y = cp.checkpoint(_counting(m, log), x, use_reentrant=False)
        assert log == ["start", "after sin"]
        y.sum().backward(retain_graph=True)
        assert log == ["start", "after sin", "start"], m.__name__     # stopped once sin had saved x
        y.sum().backward()                                           # a second backward recomputes again
        assert log.count("start") == 3
        np.testing.assert_allclose(np.asarray(x.grad), 2 * np.cos(X3), rtol=1e-6)
        log.clear()
        with cp.set_checkpoint_early_stop(False):
            y = cp.checkpoint(_counting(m, log), x, use_reentrant=False)
        y.sum().backward()
        assert log == ["start", "after sin", "start", "after sin"]
        log.clear()
        y = cp.checkpoint(_counting(m, log), x, use_reentrant=False, early_stop=False)
        y.sum().backward()
        assert log == ["start", "after sin", "start", "after sin"]


X3 = np.array([0.5, -1.0, 2.0])


def test_autograd_grad_nested_and_inputs_without_grad(torch):
    res = []
    for m in (tapegrad, torch):
        cp = _cp(m)
        x = m.tensor(X3, dtype=m.float64, requires_grad=True)
        c = m.tensor([1.0, 2.0, 3.0], dtype=m.float64)       # an input that needs no gradient

        def inner(t, k):
            return (t.sin() * k).exp()

        def outer(t):
            return cp.checkpoint(inner, t * 2, c, use_reentrant=False).cos().sum()
        g, = m.autograd.grad(cp.checkpoint(outer, x, use_reentrant=False), x)
        g2, = m.autograd.grad(outer(x), x)
        np.testing.assert_allclose(np.asarray(g), np.asarray(g2), rtol=1e-12)
        res.append(np.asarray(g))
    np.testing.assert_allclose(*res, rtol=1e-12)


def test_non_tensor_outputs_and_tuples(torch):
    res = []
    for m in (tapegrad, torch):
        x = m.tensor(X3, dtype=m.float64, requires_grad=True)
        out = _cp(m).checkpoint(lambda t: (t.exp(), 7, None, t.sin()), x, use_reentrant=False)
        assert out[1] == 7 and out[2] is None
        (out[0].sum() + out[3].sum()).backward()
        res.append(np.asarray(x.grad))
    np.testing.assert_allclose(*res, rtol=1e-12)


def test_dropout_recomputes_the_same_mask():
    def run(use_cp, preserve=True):
        tapegrad.manual_seed(3)
        x = tapegrad.tensor(XS, requires_grad=True)
        w = tapegrad.tensor(W1, requires_grad=True)

        def f(t):
            return tapegrad.nn.functional.dropout((t @ w).tanh(), 0.5).exp()
        y = tapegrad.utils.checkpoint.checkpoint(f, x, use_reentrant=False, preserve_rng_state=preserve) \
            if use_cp else f(x)
        tapegrad.randn(10)          # the global stream moves on between forward and backward
        after = tapegrad.randn(3)
        y.sum().backward()
        return x.grad.numpy(), w.grad.numpy(), after.numpy(), tapegrad.randn(3).numpy()
    plain, cp = run(False), run(True)
    for a, b in zip(plain, cp):
        assert np.array_equal(a, b)            # same gradients, and the stream after backward is untouched
    unpreserved = run(True, preserve=False)
    assert not np.array_equal(plain[0], unpreserved[0])   # without preserving, the mask is drawn anew


def test_reentrant_dropout_preserved():
    def run(use_cp):
        tapegrad.manual_seed(4)
        x = tapegrad.tensor(XS, requires_grad=True)
        f = lambda t: tapegrad.nn.functional.dropout(t.tanh(), 0.5).exp()   # noqa: E731
        y = tapegrad.utils.checkpoint.checkpoint(f, x, use_reentrant=True) if use_cp else f(x)
        y.sum().backward()
        return x.grad.numpy()
    assert np.array_equal(run(False), run(True))


def _torch_text(msg):
    return msg.replace("torch.", "tapegrad.")


def test_warning_when_use_reentrant_is_not_passed(torch):
    msgs = []
    for m in (tapegrad, torch):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            out = _cp(m).checkpoint(lambda x: x * 2, m.ones(2))
            seq = _cp(m).checkpoint_sequential([lambda x: x * 2, lambda x: x + 1], 2, m.ones(2, requires_grad=True))
        msgs.append([str(x.message) for x in w])
        assert not out.requires_grad and seq.tolist() == [3.0, 3.0]
    assert msgs[0] == [_torch_text(t) for t in msgs[1]]
    assert "use_reentrant parameter should be passed explicitly" in msgs[0][0]
    assert msgs[0][1] == "None of the inputs have requires_grad=True. Gradients will be None"


def _errors(m):
    cp = _cp(m)
    x = m.tensor(X3, requires_grad=True)
    out = []

    def catch(fn):
        try:
            fn()
        except Exception as e:      # noqa: BLE001 - the class and text are what is compared
            out.append((type(e).__name__, _torch_text(str(e))))
        else:
            out.append(None)
    catch(lambda: cp.checkpoint(lambda t, a=1: t * 2, x, a=2, use_reentrant=True))
    catch(lambda: cp.checkpoint(lambda t: t * 2, x, use_reentrant=True, debug=True))
    catch(lambda: cp.checkpoint(lambda t: t * 2, x, use_reentrant=True, context_fn=lambda: (None, None)))
    catch(lambda: cp.checkpoint(lambda t: t * 2, x, use_reentrant=False, determinism_check="x"))
    catch(lambda: cp.checkpoint_sequential([lambda t: t], 1, x, use_reentrant=False, foo=1))
    y = cp.checkpoint(lambda t: t.sin() * 2, x, use_reentrant=True)
    catch(lambda: m.autograd.grad(y.sum(), x))
    catch(lambda: cp.checkpoint(lambda t: t * 2, x, use_reentrant=True).sum().backward(inputs=[x]))
    catch(lambda: cp.checkpoint(lambda t: t.detach() * 2, x, use_reentrant=True).sum().backward())

    def varying(kind):
        cnt = itertools.count()

        def f(t):
            n = next(cnt)
            if kind == "shape":
                return t[:2 + n].sin().sum()
            return t.sin().sin().sum() if n == 0 else t.sin().sum()
        return f
    for kind in ("shape", "count"):
        catch(lambda: cp.checkpoint(varying(kind), m.tensor(np.arange(5.0), requires_grad=True),
                                    use_reentrant=False).backward())
    # determinism_check="none": no CheckpointError; the backward formula then meets the wrong shapes
    y = cp.checkpoint(varying("shape"), m.tensor(np.arange(5.0), requires_grad=True), use_reentrant=False,
                      determinism_check="none")
    with pytest.raises(Exception) as e:
        y.backward()
    assert not isinstance(e.value, cp.CheckpointError)
    return out


def test_errors_match_torch(torch):
    ours, theirs = _errors(tapegrad), _errors(torch)
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        if a is None or b is None:
            assert a == b
            continue
        assert a[0] == b[0]
        # torch's tip ends with advice about torch.compile, which tapegrad does not have
        assert a[1].strip() == b[1].split("\nIf this error occurs under ")[0] \
            .replace("checkpoint\u2011debug", "checkpoint-debug").strip() or a[1] == b[1], (a, b)


def test_debug_mode_lists_the_ops():
    cnt = itertools.count()

    def f(t):
        return t[:2 + next(cnt)].exp().sum()
    y = tapegrad.utils.checkpoint.checkpoint(f, tapegrad.ones(4, requires_grad=True), use_reentrant=False,
                                             debug=True)
    with pytest.raises(tapegrad.utils.checkpoint.CheckpointError) as e:
        y.backward()
    text = str(e.value)
    assert "Operations executed during the original forward" in text and "Exp" in text
    assert "Recomputed values for the following tensors have different metadata" in text
    assert re.search(r"test_checkpoint\.py:\d+:f", text)


def test_retain_graph_and_in_place_change_of_an_input(torch):
    for m in (tapegrad, torch):
        x = m.tensor(X3, requires_grad=True)
        b = x * 1
        y = _cp(m).checkpoint(lambda t: t.exp(), b, use_reentrant=False)
        b.mul_(2)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.sum().backward()


def test_checkpoint_sequential_matches_torch(torch):
    res = []
    for m in (tapegrad, torch):
        m.manual_seed(0)
        layers = [m.nn.Linear(4, 4).double() for _ in range(5)]
        for i, lin in enumerate(layers):
            with m.no_grad():
                lin.weight.copy_(m.tensor(np.random.default_rng(i).standard_normal((4, 4)) * 0.5))
                lin.bias.fill_(0.1 * i)
        model = m.nn.Sequential(*[mod for lin in layers for mod in (lin, m.nn.Tanh())])
        x = m.tensor(XS[:, :4], dtype=m.float64, requires_grad=True)
        out = _cp(m).checkpoint_sequential(model, 3, x, use_reentrant=False)
        out.sum().backward()
        res.append([np.asarray(out.detach()), np.asarray(x.grad)] + [np.asarray(p.grad) for p in model.parameters()])
    for a, b in zip(*res):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


def test_context_fn_runs_around_forward_and_recompute():
    log = []

    class Ctx:
        def __init__(self, name):
            self.name = name

        def __enter__(self):
            log.append(self.name)

        def __exit__(self, *exc):
            return False
    x = tapegrad.ones(3, requires_grad=True)
    y = tapegrad.utils.checkpoint.checkpoint(lambda t: t.exp().sum(), x, use_reentrant=False,
                                             context_fn=lambda: (Ctx("fwd"), Ctx("recompute")))
    y.backward()
    assert log == ["fwd", "recompute"]


def test_under_no_grad_it_just_runs():
    x = tapegrad.ones(3, requires_grad=True)
    with tapegrad.no_grad():
        y = tapegrad.utils.checkpoint.checkpoint(lambda t: t.exp(), x, use_reentrant=False)
    assert not y.requires_grad


def _device_state_calls(m):
    cp = _cp(m)
    out = [cp.get_device_states(m.randn(2), [m.randn(1), (m.ones(3),)], {"a": 1}, 3), cp.get_device_states(),
           cp.set_device_states([], []), cp.set_device_states([0], [m.zeros(3, dtype=m.uint8)], device_type="meta"),
           m.cuda._initialized]
    dt = cp.DefaultDeviceType
    out.append(dt.get_device_type())
    dt.set_device_type("cpu")
    out.append(dt.get_device_type())
    dt.set_device_type()
    out.append(dt.get_device_type())
    try:
        cp.set_device_states([0], [m.zeros(3, dtype=m.uint8)])      # the default type is cuda now: needs a GPU
    except RuntimeError as e:
        out.append(("RuntimeError", str(e).split(" (")[0]))
    dt._default_device_type = None
    out.append(dt.get_device_type())                                  # no accelerator: back to "cpu"
    return out


def test_device_state_helpers_match_torch(torch):
    """``get_device_states``/``set_device_states`` (reversible layers save the RNG state of every device their
    inputs live on): on the CPU there is none to save or set; ``DefaultDeviceType`` as torch keeps it."""
    assert _device_state_calls(tapegrad) == _device_state_calls(torch)


def test_reversible_block_replays_dropout_with_saved_states():
    """The pattern of reversible-network code: record ``get_rng_state()`` and the device states in forward, rerun
    under ``fork_rng`` with both restored in backward: the rerun draws the same dropout mask."""
    cp = tapegrad.utils.checkpoint
    x = tapegrad.randn(4, 6)
    state = tapegrad.get_rng_state()
    devices, states = cp.get_device_states(x)
    first = tapegrad.nn.functional.dropout(x, 0.5)
    tapegrad.randn(5)
    with tapegrad.random.fork_rng(devices=devices, enabled=True):
        tapegrad.set_rng_state(state)
        cp.set_device_states(devices, states)
        again = tapegrad.nn.functional.dropout(x, 0.5)
    assert np.array_equal(first.numpy(), again.numpy())
