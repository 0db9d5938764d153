"""Anomaly mode (torch's messages), errors that say where, graph_stats."""

import warnings

import numpy as np
import pytest

import tapegrad
from tapegrad.autograd import anomaly, function


@pytest.fixture(autouse=True)
def _anomaly_off():
    yield
    tapegrad.autograd.set_detect_anomaly(False)
    assert function._site_hook is None


def _nan_error(mod, ctx):
    x = mod.tensor([0.0, 1.0], requires_grad=True)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        with ctx(mod):
            y = x / x                        # the forward line the traceback must show
            with pytest.raises(RuntimeError) as e:
                y.sum().backward()
    return str(e.value), [str(m.message) for m in w]


def test_nan_error_matches_torch(torch):
    msg_t, warns_t = _nan_error(torch, lambda m: m.autograd.detect_anomaly())
    msg, warns = _nan_error(tapegrad, lambda m: m.autograd.detect_anomaly())
    assert msg.splitlines()[0] == msg_t == "Function 'DivBackward0' returned nan values in its 1th output."
    # the forward traceback: in the warning (as torch) and in the error itself
    assert "y = x / x" in msg and "test_anomaly.py" in msg
    assert any(w.startswith("Anomaly Detection has been enabled.") for w in warns)
    err = [w for w in warns if w.startswith("Error detected in DivBackward0. Traceback of forward call that caused "
                                             "the error:")]
    assert err and "y = x / x" in err[0]
    assert any(w.startswith("Error detected in DivBackward0.") for w in warns_t)


def test_set_detect_anomaly_function_and_context(torch):
    assert not tapegrad.autograd.is_anomaly_enabled()
    tapegrad.autograd.set_detect_anomaly(True)
    assert tapegrad.autograd.is_anomaly_enabled() and function._site_hook is not None
    tapegrad.autograd.set_detect_anomaly(False)
    assert not tapegrad.autograd.is_anomaly_enabled() and function._site_hook is None
    with tapegrad.autograd.set_detect_anomaly(True):
        assert tapegrad.autograd.is_anomaly_enabled()
        x = tapegrad.tensor([-1.0], requires_grad=True)
        # as torch: a warning with the forward call's traceback, then the error
        with pytest.warns(UserWarning, match="Error detected in SqrtBackward0. Traceback of forward call") as w:
            with pytest.raises(RuntimeError, match=r"Function 'SqrtBackward0' returned nan values in its 0th output"):
                x.sqrt().sum().backward()
        assert "x.sqrt().sum().backward()" in str(w[0].message)
    assert not tapegrad.autograd.is_anomaly_enabled()
    # off: the NaN flows through silently, as in torch
    x = tapegrad.tensor([-1.0], requires_grad=True)
    x.sqrt().sum().backward()
    xt = torch.tensor([-1.0], requires_grad=True)
    xt.sqrt().sum().backward()
    assert np.isnan(x.grad.numpy()).all() and torch.isnan(xt.grad).all()


def test_detect_anomaly_decorator_and_check_nan_false():
    with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"):    # torch's words, at decoration
        decorator = tapegrad.autograd.detect_anomaly()

    @decorator
    def f():
        assert tapegrad.autograd.is_anomaly_enabled()
        x = tapegrad.tensor([-1.0], requires_grad=True)
        x.sqrt().sum().backward()
        return x.grad

    with pytest.raises(RuntimeError, match="SqrtBackward0"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            f()
    assert not tapegrad.autograd.is_anomaly_enabled()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with tapegrad.autograd.detect_anomaly(check_nan=False):
            x = tapegrad.tensor([-1.0], requires_grad=True)
            x.sqrt().sum().backward()     # no NaN check: no error
    assert np.isnan(x.grad.numpy()).all()


def test_errors_keep_torchs_wording_when_off(torch):
    def second_backward(m):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        y = x.exp().sum()
        y.backward()
        with pytest.raises(RuntimeError) as e:
            y.backward()
        return str(e.value)
    assert second_backward(tapegrad) == second_backward(torch)


def test_errors_say_where_under_anomaly_mode():
    with tapegrad.autograd.set_detect_anomaly(True):
        x = tapegrad.tensor([1.0, 2.0], requires_grad=True)
        y = x * 1.0
        z = y.exp()                        # saves its result ...
        z.add_(1)                          # ... which is then modified in place
        # (torch warns with the forward's traceback first, then raises)
        with pytest.raises(RuntimeError, match="modified by an inplace operation") as e, \
                pytest.warns(UserWarning, match="Error detected in ExpBackward0"):
            z.sum().backward()
    msg = str(e.value)
    assert "ExpBackward0" in msg and "z = y.exp()" in msg and "test_anomaly.py" in msg


def test_graph_stats_counts_nodes_depth_and_bytes():
    x = tapegrad.ones(1000, requires_grad=True)
    w = tapegrad.ones(1000, requires_grad=True)
    y = (x * w).exp().sum()
    s = tapegrad.autograd.graph_stats(y)
    # SumBackward0, ExpBackward0, MulBackward0, AccumulateGrad x2
    assert s.nodes == 5 and s.leaves == 2 and s.depth == 4
    by_name = {p.name: p for p in s.per_node if p.name != "AccumulateGrad"}
    assert by_name["MulBackward0"].bytes == 8000          # x and w, float32
    assert by_name["ExpBackward0"].bytes == 4000          # its result
    assert s.saved_bytes == 12000
    assert "12000 bytes saved for backward" in str(s)
    y.backward(retain_graph=True)
    assert tapegrad.autograd.graph_stats(y).saved_bytes == 12000    # retain_graph keeps them
    y.backward()
    after = tapegrad.autograd.graph_stats(y)
    assert all(p.freed for p in after.per_node if p.name in ("MulBackward0", "ExpBackward0"))
    assert tapegrad.autograd.graph_stats(tapegrad.ones(2)).nodes == 0


def test_graph_stats_on_values():
    from tapegrad.scalar import Value
    a, b = Value(1.0), Value(2.0)
    s = tapegrad.autograd.graph_stats((a * b + a).tanh())
    assert (s.nodes, s.depth, s.leaves) == (5, 3, 2)


def test_peek_site_points_at_user_code():
    anomaly.want_sites(True)
    try:
        x = tapegrad.tensor([1.0], requires_grad=True)
        y = x * 2                                            # marker line
        site = y.grad_fn._site
    finally:
        anomaly.want_sites(False)
    assert site.filename == __file__ and site.line == "y = x * 2                                            # marker line"
    assert function._site_hook is None
