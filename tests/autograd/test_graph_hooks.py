"""``tapegrad.autograd.graph`` against torch's ``torch.autograd.graph`` on the same programs: saved-tensor hooks,
save_on_cpu, disable_saved_tensors_hooks, allow_mutation_on_saved_tensors, register_multi_grad_hook, Node,
GradientEdge / get_gradient_edge, increment_version and Tensor.register_post_accumulate_grad_hook."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

import tapegrad

X = np.array([0.3, -1.2, 2.0])


def _both(torch, arr=X, dtype="float64"):
    return (tapegrad.tensor(arr, dtype=getattr(tapegrad, dtype), requires_grad=True),
            torch.tensor(arr, dtype=getattr(torch, dtype), requires_grad=True))


def _close(a, b):
    np.testing.assert_allclose(np.asarray(a.detach()), b.detach().numpy(), rtol=1e-12, atol=1e-12)


# --- saved_tensors_hooks -----------------------------------------------------------------------------------------
def _hooked_program(m, a, log):
    def pack(x):
        log.append(("pack", tuple(x.shape), x.requires_grad, x.grad_fn is not None))
        return x.detach().clone()

    def unpack(x):
        log.append(("unpack", tuple(x.shape)))
        return x
    with m.autograd.graph.saved_tensors_hooks(pack, unpack):
        y = a.exp()          # saves its result (an output, with its grad_fn)
        z = (y * a).sum()    # saves both operands
    return z


def test_pack_at_save_unpack_at_each_access(torch):
    a, ta = _both(torch)
    log, tlog = [], []
    z, tz = _hooked_program(tapegrad, a, log), _hooked_program(torch, ta, tlog)
    assert sorted(log) == sorted(tlog)          # the same tensors packed (torch's order of mul's operands differs)
    assert len(log) == 3 and all(e[0] == "pack" for e in log)
    log.clear()
    tlog.clear()
    z.backward(retain_graph=True)
    tz.backward(retain_graph=True)
    _close(a.grad, ta.grad)
    assert log and all(e[0] == "unpack" for e in log)
    n = len(log)
    z.backward()          # unpacked again on the second backward
    tz.backward()
    assert len(log) == 2 * n
    _close(a.grad, ta.grad)


def test_innermost_pair_is_used_and_hooks_active_at_save_time_unpack(torch):
    for m in (tapegrad, torch):
        a = m.tensor(X, requires_grad=True)
        log = []
        with m.autograd.graph.saved_tensors_hooks(lambda x: log.append("p1") or x, lambda x: log.append("u1") or x):
            with m.autograd.graph.saved_tensors_hooks(lambda x: log.append("p2") or x,
                                                      lambda x: log.append("u2") or x):
                y = a.sin()
        with m.autograd.graph.saved_tensors_hooks(lambda x: log.append("p3") or x, lambda x: log.append("u3") or x):
            y.sum().backward()     # hooks set during backward do not matter for what was saved before
        assert log == ["p2", "u2"], m.__name__


def test_double_backward_through_detached_packs(torch):
    results = []
    for m in (tapegrad, torch):
        a = m.tensor(X, dtype=m.float64, requires_grad=True)
        b = a * 1
        with m.autograd.graph.saved_tensors_hooks(lambda x: x.detach(), lambda x: x):
            y = b.sin()
        g, = m.autograd.grad(y.sum(), b, create_graph=True)
        assert g.requires_grad
        gg, = m.autograd.grad(g.sum(), a)
        results.append(np.asarray(gg.detach()))
    np.testing.assert_allclose(*results, rtol=1e-12)
    np.testing.assert_allclose(results[0], -np.sin(X), rtol=1e-12)


def test_hooks_own_the_data_no_version_check(torch):
    # with hooks, a saved tensor changed in place afterwards is no error: the unpack hook's tensor is used
    for m in (tapegrad, torch):
        a = m.tensor(X, dtype=m.float64, requires_grad=True)
        c = a * 1
        with m.autograd.graph.saved_tensors_hooks(lambda x: x.clone(), lambda x: x):
            y = c.sin()
        c.mul_(2)
        y.sum().backward()
        np.testing.assert_allclose(np.asarray(a.grad), np.cos(X), rtol=1e-12)


def test_custom_function_saves_go_through_hooks(torch):
    def run(m):
        class F(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x, x * 2)
                return x * 3

            @staticmethod
            def backward(ctx, g):
                x, x2 = ctx.saved_tensors
                return g * x2
        a = m.tensor(X, dtype=m.float64, requires_grad=True)
        log = []
        with m.autograd.graph.saved_tensors_hooks(lambda x: log.append(("p", x.requires_grad)) or x.detach(),
                                                  lambda x: log.append("u") or x):
            out = F.apply(a)
        out.sum().backward()
        return log, np.asarray(a.grad)
    (log, g), (tlog, tg) = run(tapegrad), run(torch)
    assert log[:2] == tlog[:2] == [("p", True), ("p", False)]
    assert "u" in log
    np.testing.assert_allclose(g, tg)


def test_hook_errors_match_torch(torch):
    for m in (tapegrad, torch):
        a = m.tensor(X, requires_grad=True)
        with m.autograd.graph.saved_tensors_hooks(lambda x: 1, lambda t: 5):
            s = a.sin().sum()
        with pytest.raises(TypeError, match="Output of saved tensor unpack_hook expected to be a Tensor but got "
                                            "result of type int"):
            s.backward()

        def bad(x):
            x.mul_(2)
            return x
        with m.autograd.graph.saved_tensors_hooks(bad, lambda x: x):
            with pytest.raises(RuntimeError, match="A saved tensor pack hook is modifying its input in place"):
                (a * 1).sin()


def test_packed_object_need_not_be_a_tensor(torch):
    res = []
    for m in (tapegrad, torch):
        a = m.tensor(X, dtype=m.float64, requires_grad=True)
        with m.autograd.graph.saved_tensors_hooks(lambda x: ("tok", x.detach()), lambda t: t[1]):
            s = (a.sin() * a).sum()
        s.backward()
        res.append(np.asarray(a.grad))
    np.testing.assert_allclose(*res, rtol=1e-12)


def test_array_path_with_hooks_gives_the_same_gradients():
    # an MLP step (array_backward nodes) under identity-copy hooks: gradients bit for bit those without hooks
    tapegrad.manual_seed(0)
    net = tapegrad.nn.Sequential(tapegrad.nn.Linear(5, 7), tapegrad.nn.ReLU(), tapegrad.nn.Linear(7, 3))
    x, t = tapegrad.randn(4, 5), tapegrad.tensor([0, 2, 1, 1])

    def step(hooked):
        net.zero_grad()
        ctx = tapegrad.autograd.graph.save_on_cpu() if hooked else tapegrad.autograd.graph.disable_saved_tensors_hooks("")
        with ctx:
            loss = tapegrad.nn.functional.cross_entropy(net(x), t)
        loss.backward()
        return [p.grad.numpy().copy() for p in net.parameters()]
    for a, b in zip(step(False), step(True)):
        assert np.array_equal(a, b)


def test_save_on_cpu_keeps_a_copy(torch):
    for m in (tapegrad, torch):
        a = m.tensor(X, dtype=m.float64, requires_grad=True)
        b = a * 1
        with m.autograd.graph.save_on_cpu(pin_memory=False):
            y = b.exp()
        b.mul_(3)               # the copy made at save time is what backward uses
        y.sum().backward()
        np.testing.assert_allclose(np.asarray(a.grad), np.exp(X), rtol=1e-12)


def test_disable_saved_tensors_hooks(torch):
    for m in (tapegrad, torch):
        g = m.autograd.graph
        with g.disable_saved_tensors_hooks("no hooks here"):
            with pytest.raises(RuntimeError, match="no hooks here"):
                with g.saved_tensors_hooks(lambda x: x, lambda x: x):
                    pass
            with pytest.raises(RuntimeError, match="no hooks here"):
                with g.save_on_cpu():
                    pass
        with g.saved_tensors_hooks(lambda x: x, lambda x: x):
            with pytest.raises(RuntimeError, match="msg1"):
                with g.disable_saved_tensors_hooks("msg1"):
                    pass
        with g.saved_tensors_hooks(lambda x: x, lambda x: x):     # usable again after both
            pass


# --- allow_mutation_on_saved_tensors -----------------------------------------------------------------------------
def test_allow_mutation_on_saved_tensors(torch):
    res = []
    for m in (tapegrad, torch):
        with m.autograd.graph.allow_mutation_on_saved_tensors() as ctx:
            a = m.tensor(np.arange(6.0).reshape(2, 3), dtype=m.float64, requires_grad=True)
            b = a.clone()
            out = (b ** 2).sum()
            b.sin_()
            b[0, 0] = 7.0
            out.sum().backward()
            res.append(np.asarray(a.grad))
        assert ctx is not None
    np.testing.assert_array_equal(*res)
    np.testing.assert_array_equal(res[0], 2 * np.arange(6.0).reshape(2, 3))


def test_allow_mutation_errors(torch):
    for m in (tapegrad, torch):
        g = m.autograd.graph
        with g.allow_mutation_on_saved_tensors():
            with pytest.raises(RuntimeError, match="allow_mutation_on_saved_tensors contexts cannot be nested"):
                with g.allow_mutation_on_saved_tensors():
                    pass
        with g.allow_mutation_on_saved_tensors():
            a = m.tensor(X, requires_grad=True)
            s = (a.clone() ** 2).sum()
        with pytest.raises(AssertionError, match="Trying to backward outside of the 'allow_mutation_on_saved_"
                                                 "tensors' context"):
            s.backward()


def test_without_allow_mutation_the_change_is_an_error(torch):
    for m in (tapegrad, torch):
        a = m.tensor(X, requires_grad=True)
        b = a.clone()
        out = (b ** 2).sum()
        b.sin_()
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            out.backward()


# --- register_multi_grad_hook ------------------------------------------------------------------------------------
def _multi(m, calls, mode="all"):
    a = m.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    b = m.tensor(np.ones((2, 3)), requires_grad=True)
    c, d = a * b, a * b
    fn = (lambda gs: calls.append([g is not None for g in gs])) if mode == "all" else \
        (lambda g: calls.append(tuple(g.shape)))
    h = m.autograd.graph.register_multi_grad_hook((a, b, c, d), fn, mode=mode)
    return a, b, c, d, h


def test_multi_grad_hook_all(torch):
    got = []
    for m in (tapegrad, torch):
        calls = []
        a, b, c, d, h = _multi(m, calls)
        c.sum().backward(retain_graph=True)
        c.sum().backward(inputs=(a,), retain_graph=True)
        (c + d).sum().backward(retain_graph=True)
        h.remove()
        c.sum().backward(retain_graph=True)
        got.append(calls)
    assert got[0] == got[1] == [[True, True, True, False], [True, False, True, False], [True, True, True, True]]


def test_multi_grad_hook_any_and_errors(torch):
    got = []
    for m in (tapegrad, torch):
        calls = []
        a, b, c, d, h = _multi(m, calls, mode="any")
        c.sum().backward(retain_graph=True)
        (c + d).sum().backward()
        got.append(calls)
        with pytest.raises(ValueError, match=r"Expects mode to be one of \('all', 'any'\) but got x"):
            m.autograd.graph.register_multi_grad_hook((a,), print, mode="x")
    assert got[0] == got[1] == [(2, 3), (2, 3)]


# --- Node, GradientEdge ------------------------------------------------------------------------------------------
def test_node_api(torch):
    for m in (tapegrad, torch):
        a = m.tensor([0.0, 0.0, 0.0], requires_grad=True)
        b = a.clone()
        assert isinstance(b.grad_fn, m.autograd.graph.Node)
        assert b.grad_fn.name() == "CloneBackward0"
        assert b.grad_fn.metadata == {}
        b.grad_fn.metadata["k"] = 1
        assert b.grad_fn.metadata == {"k": 1}
        acc = b.grad_fn.next_functions[0][0]
        assert isinstance(acc, m.autograd.graph.Node) and acc.metadata == {}
        h = b.grad_fn.register_hook(lambda gi, go: (go[0] * 2,))
        b.sum().backward(retain_graph=True)
        assert a.grad.tolist() == [2.0, 2.0, 2.0]
        h.remove()
        a.grad = None
        h2 = b.grad_fn.register_prehook(lambda go: (go[0] * 3,))
        b.sum().backward(retain_graph=True)
        assert a.grad.tolist() == [3.0, 3.0, 3.0]
        h2.remove()


def test_gradient_edge_as_input_and_output(torch):
    res = []
    for m in (tapegrad, torch):
        a = m.tensor(X, dtype=m.float64, requires_grad=True)
        b = a.exp()
        c = b.sin().sum()
        e = m.autograd.graph.get_gradient_edge(b)
        assert e.output_nr == 0 and e.node is b.grad_fn and e.ownership_token is None
        assert e._fields == ("node", "output_nr", "ownership_token")
        ea = m.autograd.graph.get_gradient_edge(a)
        assert ea.node.variable is a
        r = [m.autograd.grad(c, e, retain_graph=True)[0], m.autograd.grad(c, b, retain_graph=True)[0],
             m.autograd.grad(c, ea, retain_graph=True)[0],
             m.autograd.grad(m.autograd.graph.get_gradient_edge(b), a, grad_outputs=m.ones(3, dtype=m.float64),
                             retain_graph=True)[0]]
        with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar outputs"):
            m.autograd.grad(m.autograd.graph.get_gradient_edge(b), a, retain_graph=True)
        with pytest.raises(RuntimeError, match="It is not possible to get the gradient edge for a Tensor that does "
                                               "not require gradients"):
            m.autograd.graph.get_gradient_edge(m.ones(2))
        u = m.unbind(a * 1)
        assert m.autograd.graph.get_gradient_edge(u[1]).output_nr == 1
        res.append([np.asarray(t) for t in r])
    for x, y in zip(*res):
        np.testing.assert_allclose(x, y, rtol=1e-12)


def test_increment_version(torch):
    for m in (tapegrad, torch):
        x, y = m.ones(2, requires_grad=True), m.ones(2)
        m.autograd.graph.increment_version(x)
        m.autograd.graph.increment_version([x, y])
        assert (x._version, y._version) == (2, 1)
        z = x * 1
        s = z.sin().sum()
        m.autograd.graph.increment_version(z)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            s.backward()


# --- post-accumulate-grad hooks ----------------------------------------------------------------------------------
def test_post_accumulate_grad_hook(torch):
    for m in (tapegrad, torch):
        a = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
        log = []
        h = a.register_post_accumulate_grad_hook(lambda t: log.append((t is a, t.grad.tolist())))
        (a * 2).sum().backward()
        assert log == [(True, [2.0, 2.0, 2.0])]
        m.autograd.grad((a * 2).sum(), a)          # autograd.grad accumulates nothing: no call
        assert len(log) == 1
        (a * 3).sum().backward(inputs=[a])
        assert log[-1] == (True, [5.0, 5.0, 5.0])
        h.remove()
        (a * 2).sum().backward()
        assert len(log) == 2
        c = m.ones(2, requires_grad=True)
        c.register_hook(lambda g: log.append("pre"))
        c.register_post_accumulate_grad_hook(lambda t: log.append("post"))
        c.sum().backward()
        assert log[-2:] == ["pre", "post"]
        with pytest.raises(RuntimeError, match="post accumulate grad hooks cannot be registered on non-leaf "
                                               "tensors"):
            (a * 2).register_post_accumulate_grad_hook(lambda t: None)
        with pytest.raises(RuntimeError, match="cannot register a hook on a tensor that doesn't require gradient"):
            m.ones(2).register_post_accumulate_grad_hook(lambda t: None)
        a.register_post_accumulate_grad_hook(lambda t: 5)
        with pytest.raises(TypeError, match="expected Variable, but hook returned 'int'"):
            (a * 2).sum().backward()


def test_optimizer_step_in_post_accumulate_hook():
    # the use torch documents: each parameter is updated as soon as its gradient is ready
    tapegrad.manual_seed(0)
    net = tapegrad.nn.Linear(3, 2)
    ref = tapegrad.nn.Linear(3, 2)
    ref.load_state_dict(net.state_dict())
    x = tapegrad.randn(4, 3)
    opts = {p: tapegrad.optim.SGD([p], lr=0.1) for p in net.parameters()}

    def step(p):
        opts[p].step()
        opts[p].zero_grad()
    for p in net.parameters():
        p.register_post_accumulate_grad_hook(step)
    net(x).pow(2).sum().backward()
    opt = tapegrad.optim.SGD(ref.parameters(), lr=0.1)
    ref(x).pow(2).sum().backward()
    opt.step()
    for p, q in zip(net.parameters(), ref.parameters()):
        assert np.array_equal(p.detach().numpy(), q.detach().numpy())
        assert p.grad is None


def test_graph_stats_still_importable():
    from tapegrad.autograd.graph import graph_stats
    from tapegrad.autograd.stats import graph_stats as gs2
    assert graph_stats is gs2 is tapegrad.autograd.graph_stats
    x = tapegrad.ones(1000, requires_grad=True)
    assert graph_stats((x.exp() * 2).sum()).saved_bytes == 4000
    importlib.import_module("tapegrad.autograd.stats")     # (importing the module does not shadow the function)
    assert callable(tapegrad.autograd.graph_stats)


def test_saved_tensors_hooks_are_per_thread():
    import threading
    log = []

    def work():
        a = tapegrad.ones(3, requires_grad=True)
        a.exp().sum().backward()
        log.append(a.grad.tolist())
    with tapegrad.autograd.graph.saved_tensors_hooks(lambda x: log.append("pack") or x.detach(), lambda x: x):
        t = threading.Thread(target=work)
        t.start()
        t.join()
    assert log == [[np.e] * 3] or (len(log) == 1 and np.allclose(log[0], np.e))   # the other thread packed nothing


def test_accumulate_grad_node_hooks_run_as_torchs(torch):
    """A prehook registered on a leaf's AccumulateGrad node sees (and may replace) the gradient before it is
    accumulated; a hook registered on it sees the gradient after; removed hooks stop."""
    def run(T):
        w = T.ones(3, requires_grad=True)
        acc = w.view_as(w).grad_fn.next_functions[0][0]
        seen = []
        h = acc.register_prehook(lambda g: (seen.append(g[0].tolist()), (g[0] * 10,))[1])
        h2 = acc.register_hook(lambda gi, go: seen.append(("post", len(gi), [x.tolist() for x in go])))
        (w * 2).sum().backward()
        first = w.grad.tolist()
        h.remove()
        h2.remove()
        (w * 2).sum().backward()
        return seen, first, w.grad.tolist(), T.autograd.grad((w * 3).sum(), w)[0].tolist()
    assert run(tapegrad) == run(torch)


def test_allow_mutation_on_saved_tensors_resize_and_set(torch):
    """resize_ and set_ of a saved tensor inside allow_mutation_on_saved_tensors: the backward reads the value
    saved before the change, as torch's."""
    res = []
    for m in (tapegrad, torch):
        w = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
        row = []
        for how in ("resize_", "set_"):
            with m.autograd.graph.allow_mutation_on_saved_tensors():
                a = m.tensor([4.0, 5.0, 6.0])
                y = (a * w).sum()
                a.resize_(2) if how == "resize_" else a.set_(m.tensor([7.0, 8.0, 9.0]))
                y.backward()
            row += [w.grad.tolist(), a.tolist()]
            w.grad = None
        res.append(row)
    assert res[0] == res[1]
