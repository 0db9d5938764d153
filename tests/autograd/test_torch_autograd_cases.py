"""Cases found by running PyTorch's own autograd test suite (test/test_autograd.py, its facts, not its code)
against tapegrad: each program runs on tapegrad and on real torch, and what it observes must agree."""

from __future__ import annotations

import numpy as np
import pytest

import tapegrad


def _val(t):
    return None if t is None else np.asarray(t.detach()).tolist()


# --- hooks: which run, in which order, on backward / backward(inputs=) / autograd.grad -------------------------
def _hook_order(m):
    log = []

    def tensor_hook(g):
        log.append("tensor")
        return g * 3

    def node_prehook(gs):
        log.append("node-pre")
        return tuple(g * 2 for g in gs)

    a = m.tensor(1.0, requires_grad=True)
    b = a.clone()
    b.grad_fn.register_prehook(node_prehook)
    b.register_hook(tensor_hook)
    acc = b.grad_fn.next_functions[0][0]
    a.register_hook(tensor_hook)
    acc.register_prehook(node_prehook)
    b.sum().backward(retain_graph=True)
    out = [list(log), _val(a.grad)]
    log.clear()
    m.autograd.grad(b.sum(), inputs=(a,), retain_graph=True)    # acc's tensor hooks run, its node hooks don't
    out.append(list(log))
    log.clear()
    b.sum().backward(inputs=(b,))    # the node of a non-leaf input runs (its pre-hooks too); b now retains grad
    out += [list(log), _val(b.grad), b.retains_grad, _val(a.grad)]
    return out


def test_hook_order_backward_grad_and_inputs(torch):
    assert _hook_order(tapegrad) == _hook_order(torch)


def _hook_counts(m):
    a = m.tensor(1.0, requires_grad=True)
    b = a * 2
    c = b * 2
    n = {"tensor": 0, "pre": 0, "post": 0}

    def count(key):
        def hook(*args):
            n[key] += 1
        return hook

    a.register_hook(count("tensor"))
    b.register_hook(count("tensor"))
    acc = b.grad_fn.next_functions[0][0]
    for node in (acc, b.grad_fn):
        node.register_hook(count("post"))
        node.register_prehook(count("pre"))
    seen = []
    for run in (lambda: m.autograd.grad(c, inputs=(b,), retain_graph=True),
                lambda: m.autograd.grad(c, inputs=(a, b), retain_graph=True),
                lambda: c.backward(retain_graph=True),
                lambda: c.backward(inputs=(a, b), retain_graph=True),
                lambda: c.backward(inputs=(a,), retain_graph=True)):
        n.update(tensor=0, pre=0, post=0)
        run()
        seen.append(dict(n))
    return seen, _val(a.grad), _val(b.grad)


def test_node_hooks_run_only_where_the_node_runs(torch):
    assert _hook_counts(tapegrad) == _hook_counts(torch)


def _accumulate_hook_order(m):
    t = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
    acc = t.view_as(t).grad_fn.next_functions[0][0]
    t.register_hook(lambda g: g.sub(2.0))
    acc.register_prehook(lambda gs: (gs[0].div(5.0),))

    def post_accumulate(leaf):
        leaf.grad.add_(0.5)
    t.register_post_accumulate_grad_hook(post_accumulate)

    def post(grad_inputs, grad_outputs):
        t.grad = grad_outputs[0].mul(10)     # grad_outputs[0] is the .grad the leaf kept (torch "steals" it)
    acc.register_hook(post)
    t.sum().backward()
    return _val(t.grad)


def test_accumulate_grad_hooks_order_and_kept_gradient(torch):
    assert _accumulate_hook_order(tapegrad) == _accumulate_hook_order(torch) == [3.0, 3.0, 3.0]


@pytest.mark.parametrize("custom", [False, True])
def test_hook_removed_during_backward_still_runs_this_time(torch, custom):
    def program(m):
        class Mul2(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g * 2
        a = m.ones(3, requires_grad=True)
        b = Mul2.apply(a) if custom else a * 2
        calls = []

        def first(gs):
            handles[0].remove()
            handles[1].remove()     # (removing twice is fine)

        b.grad_fn.register_prehook(first)
        handles = [b.grad_fn.register_prehook(lambda gs: calls.append("second"))]
        handles.append(b.grad_fn.register_prehook(lambda gs: calls.append("third")))
        handles[1].remove()
        b.sum().backward()
        first_run = list(calls)
        b = a * 2
        b.grad_fn.register_prehook(lambda gs: calls.append("again"))
        b.sum().backward()
        return first_run, calls, _val(a.grad)
    assert program(tapegrad) == program(torch)


def test_post_accumulate_grad_hook_return_value_errors(torch):
    def program(m, ret):
        a = m.rand(2, requires_grad=True)
        a.register_post_accumulate_grad_hook(lambda t: t.grad if ret == "tensor" else ret)
        with pytest.raises(Exception) as info:
            (a * 2).sum().backward()
        return type(info.value).__name__, str(info.value)
    for ret in ("tensor", 5):
        assert program(tapegrad, ret) == program(torch, ret)


# --- autograd.grad argument checks and materialize_grads ---------------------------------------------------------
def _error(fn):
    try:
        fn()
    except Exception as e:        # (the type and text are what is compared)
        return type(e).__name__, str(e).replace("tapegrad", "torch")
    return None


def test_grad_materialize_grads_rules(torch):
    def program(m):
        x = m.tensor(0.5, requires_grad=True)
        z = m.ones(2, requires_grad=True)
        y = x * 2
        out = []
        for create_graph in (False, True):
            g = m.autograd.grad(y, (x, z), allow_unused=True, materialize_grads=True, create_graph=create_graph,
                                retain_graph=True)
            out.append([(t.requires_grad, t.is_leaf, _val(t)) for t in g])
        dydx = m.autograd.grad(x * m.tensor(1.0, requires_grad=True), x, create_graph=True)
        d2 = m.autograd.grad(dydx, x, create_graph=True, allow_unused=True, materialize_grads=True)
        out.append(_val(m.autograd.grad(d2, x, materialize_grads=True)[0]))    # (d2 is a materialized zero)
        out.append(_error(lambda: m.autograd.grad(y, x, allow_unused=False, materialize_grads=True)))
        c = z.clone()
        edge = m.autograd.graph.get_gradient_edge(c)
        out.append(_val(m.autograd.grad((c * 3).sum(), (edge, x), allow_unused=True, materialize_grads=True,
                                        retain_graph=True)[0]))
        out.append(_error(lambda: m.autograd.grad((x * 3), (x, edge), allow_unused=True, materialize_grads=True)))
        return out
    assert program(tapegrad) == program(torch)


def test_is_grads_batched_shape_mismatch_message(torch):
    def program(m):
        x = m.ones(2, 2, requires_grad=True)
        out = x.clone()
        res = [_error(lambda: m.autograd.grad(out, (x,), (g,), is_grads_batched=True, retain_graph=True))
               for g in (m.ones(2, 2), m.ones(3, 4, 4))]
        s = x.sum()
        res.append(_error(lambda: m.autograd.grad(s, (x,), (m.ones(2, 1),), is_grads_batched=True)))
        res.append(_val(m.autograd.grad(out, (x,), (m.arange(3.0).expand(2, 2, 3).transpose(0, 2),),
                                        is_grads_batched=True)[0]))
        return res
    assert program(tapegrad) == program(torch)


def test_calling_a_node_checks_its_argument_count(torch):
    def program(m):
        x = m.ones(1, requires_grad=True)
        y = x ** 2
        var, _ = m.var_mean(m.ones(3, requires_grad=True))
        return [_error(lambda: y.grad_fn(x.detach(), x.detach())), _error(lambda: y.grad_fn()),
                _error(lambda: var.grad_fn(m.ones(()))), _val(y.grad_fn(x.detach()))]
    assert program(tapegrad) == program(torch)


@pytest.mark.parametrize("mode", ["no_grad", "enable_grad", "inference_mode"])
def test_grad_mode_decorating_a_class_warns_and_constructs_under_the_mode(torch, mode):
    import warnings

    def program(m):
        seen = []
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")

            @getattr(m, mode)()
            class Foo:
                def __init__(self, a):
                    seen.append((a, m.is_grad_enabled()))

                def method(self):
                    seen.append(m.is_grad_enabled())
        with m.set_grad_enabled(mode == "no_grad"):
            Foo(1).method()
        return seen, [(c.category.__name__, str(c.message)) for c in w]
    assert program(tapegrad) == program(torch)


# --- grad-mode decorators on generators: the caller's code between yields runs under the caller's mode --------
@pytest.mark.parametrize("mode", ["no_grad", "enable_grad", "inference_mode"])
def test_grad_mode_decorated_generator_switches_only_inside(torch, mode):
    def program(m):
        log = []

        class Recoverable(Exception):
            pass

        @getattr(m, mode)()
        def gen(n):
            raised = False
            try:
                for i in range(n):
                    try:
                        log.append(("gen", m.is_grad_enabled()))
                        got = yield (-i if raised else i)
                        log.append(("sent", got, m.is_grad_enabled()))
                    except Recoverable:
                        log.append(("thrown", m.is_grad_enabled()))
                        raised = True
            except GeneratorExit:
                log.append(("exit", m.is_grad_enabled()))
                raise
            return "done"

        with m.set_grad_enabled(mode == "no_grad"):
            g = gen(6)
            r = next(g)
            log.append(("caller", r, m.is_grad_enabled()))
            r = g.send("a")
            log.append(("caller", r, m.is_grad_enabled()))
            r = g.throw(Recoverable)
            log.append(("caller", r, m.is_grad_enabled()))
            g.close()
            log.append(("caller", m.is_grad_enabled()))
            with pytest.raises(StopIteration) as stop:
                g2 = gen(1)
                next(g2)
                g2.send(None)
            log.append(stop.value.value)
        return log
    assert program(tapegrad) == program(torch)


# --- detach_ of a view, backward(create_graph=True)'s warning, InplaceFunction ------------------------------------
def test_detach_inplace_of_a_view_is_refused(torch):
    def program(m):
        x = m.randn(10, 10, requires_grad=True)
        out = [_error(lambda: x.narrow(0, 1, 4).detach_()), _error(lambda: m.randn(4)[1:].detach_())]
        a = x * 2
        a.detach_()
        view = x.narrow(0, 1, 4)
        x.detach_()          # (detaching the base leaves its views as they were)
        out += [a.requires_grad, a.grad_fn is None, x.requires_grad, view.requires_grad, view.grad_fn is not None]
        return out
    assert program(tapegrad) == program(torch)


def test_backward_create_graph_warns_and_grad_does_not(torch):
    import warnings

    def program(m):
        seen = []
        prev = m.is_warn_always_enabled()
        m.set_warn_always(True)
        try:
            b = m.randn(3, requires_grad=True, dtype=m.double)
            for run in (lambda: (b * b).sum().backward(create_graph=True),
                        lambda: m.autograd.grad((b * b).sum(), b, create_graph=True),
                        lambda: (b * 2).sum().backward()):
                with warnings.catch_warnings(record=True) as ws:
                    warnings.simplefilter("always")
                    run()
                seen.append([(w.category.__name__, str(w.message).split(" (Triggered")[0]) for w in ws])
                b.grad = None
        finally:
            m.set_warn_always(prev)
        return seen
    assert program(tapegrad) == program(torch)


def test_grad_kept_under_create_graph_is_not_a_view(torch):
    def program(m):
        x = m.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
        w = m.tensor(np.linspace(-1, 1, 6), requires_grad=True)
        (x.view(-1) * w).sum().backward(create_graph=True)
        g = x.grad
        out = [g.requires_grad, g._base is None, _val(g)]
        lin = m.nn.Linear(2, 1).double()
        lin.weight.grad = g[:1, :2].clone()
        lin.zero_grad(set_to_none=False)
        return out + [_val(lin.weight.grad)]
    assert program(tapegrad) == program(torch)


def test_inplace_function_is_a_function_without_forward(torch):
    def program(m):
        from importlib import import_module
        fn = import_module(m.__name__ + ".autograd.function").InplaceFunction
        x = m.randn(3, requires_grad=True)
        return [issubclass(fn, m.autograd.Function), _error(lambda: fn.apply(x)),
                _error(lambda: fn.apply(x.clone()[0]))]
    assert program(tapegrad) == program(torch)


# --- a second backward through indexing: torch's nodes that saved index tensors refuse it -------------------------
def test_second_backward_through_indexing(torch):
    def program(m):
        res = []
        keys = [lambda: [1, 1], lambda: m.tensor([0, 2]), lambda: m.tensor([True, False, True]),
                lambda: slice(1, 3), lambda: (Ellipsis, [0, 2]), lambda: 1]
        for key in keys:
            b = m.tensor([1.0, 2.0, 3.0], dtype=m.double, requires_grad=True)
            y = b[key()].sum()       # (sum saves no tensor: only the indexing node can refuse)
            y.backward()
            res.append(_error(lambda: y.backward()))
            c = m.zeros(3, dtype=m.double)
            c[[1, 2]] = b[:2]
            c.sum().backward()
            res.append(_error(lambda: c.sum().backward()))
        return res
    assert program(tapegrad) == program(torch)


def test_increment_version_of_an_inference_tensor_is_a_no_op(torch):
    def program(m):
        a = m.zeros(5, dtype=m.int32)
        v = a._version
        m.autograd.graph.increment_version(a)
        out = [a._version - v]
        with m.inference_mode():
            b = m.rand(5, requires_grad=True)
            m.autograd.graph.increment_version(b)
        m.autograd.graph.increment_version(b)
        m.autograd.graph.increment_version([a, a])
        return out + [a._version - v, b.is_inference()]
    assert program(tapegrad) == program(torch)


# --- anomaly mode: an error in any backward warns where the node's forward ran ------------------------------------
@pytest.mark.parametrize("forward_in_anomaly", [True, False])
def test_anomaly_mode_warns_for_any_backward_error(torch, forward_in_anomaly):
    import contextlib
    import warnings

    def program(m):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            with m.autograd.detect_anomaly() if forward_in_anomaly else contextlib.nullcontext():
                a = m.randn(5, requires_grad=True)
                d1 = a + 1
                d2 = d1 ** 2
                d1 += 1
            with pytest.raises(RuntimeError) as info:
                with m.autograd.detect_anomaly():
                    m.autograd.grad(d2.sum(), a)
        first = [str(x.message).split(" (Triggered")[0].split("\n")[0] for x in w]
        return str(info.value).split("\n")[0][:80], [x.category.__name__ for x in w], first
    assert program(tapegrad) == program(torch)


def test_tensor_hook_of_an_unreached_output_of_a_running_node_gets_none(torch):
    def program(m):
        calls = []
        x = m.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
        xs = x.unbind()
        xs[0].register_hook(lambda g: calls.append(_val(g)))
        xs[0].backward()
        xs[1].backward()
        a, b = x.chunk(2)
        a.register_hook(lambda g: calls.append(_val(g)))
        (b * 2).sum().backward()
        v, mean = m.var_mean(x)
        v.register_hook(lambda g: calls.append(_val(g)))
        mean.backward()
        c = x * 2           # (a single-output node no gradient reaches does not run: its hooks neither)
        c.register_hook(lambda g: calls.append("never"))
        (x * 3).sum().backward()
        return calls, _val(x.grad)
    assert program(tapegrad) == program(torch)


def test_grad_outputs_checked_against_tensor_and_gradient_edge_outputs(torch):
    def program(m):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        edge = m.autograd.graph.get_gradient_edge(x.sin().cos().sum())
        y = x * 2
        res = []
        for out in (edge, y):
            for g in (m.tensor([1.0, 2.0, 3.0, 4.0]), m.ones((), dtype=m.complex64),
                      m.ones(2, dtype=m.complex64), m.tensor(2.0, dtype=m.float64), m.ones(2, dtype=m.float64)):
                res.append(_error(lambda: m.autograd.grad(out, (x,), grad_outputs=g, retain_graph=True)))
        res.append(_error(lambda: m.autograd.backward(edge, inputs=(x,), grad_tensors=m.ones(3))))
        return res
    assert program(tapegrad) == program(torch)


# --- gradcheck: a stride-0 input is refused; backward must be reentrant (to nondet_tol) ---------------------------
def test_gradcheck_refuses_stride_zero_inputs(torch):
    def program(m):
        x = m.ones(1, dtype=m.float64, requires_grad=True).expand((2, 2))
        y = m.ones(1, 1, dtype=m.float64).expand(1, 1).requires_grad_()   # (size-1 dims may have any stride)
        return [_error(lambda: m.autograd.gradcheck(lambda t: t, (x,), raise_exception=False)),
                m.autograd.gradcheck(lambda t: t * 2, (y,))]
    assert program(tapegrad) == program(torch)


@pytest.mark.parametrize("fast_mode", [False, True])
def test_gradcheck_backward_not_reentrant(torch, fast_mode):
    def program(m):
        class NonDet(m.autograd.Function):
            @staticmethod
            def forward(ctx, x, jitter):
                ctx.jitter = jitter
                return x.clone()

            @staticmethod
            def backward(ctx, g):
                return NonDet.apply(g, ctx.jitter) * (1 + m.rand_like(g) * ctx.jitter), None
        x = m.tensor(np.linspace(-1.0, 1.0, 6).reshape(2, 3), requires_grad=True)
        check = m.autograd.gradcheck
        return [check(lambda t: NonDet.apply(t, 0.0), (x,), fast_mode=fast_mode),
                _error(lambda: check(lambda t: NonDet.apply(t, 1e-6), (x,), fast_mode=fast_mode)),
                check(lambda t: NonDet.apply(t, 1e-6), (x,), fast_mode=fast_mode, raise_exception=False),
                check(lambda t: NonDet.apply(t, 1e-6), (x,), nondet_tol=1e-5, fast_mode=fast_mode),
                _error(lambda: m.autograd.gradgradcheck(lambda t: NonDet.apply(t, 1e-12), (x,), fast_mode=fast_mode)),
                m.autograd.gradgradcheck(lambda t: NonDet.apply(t, 1e-12), (x,), nondet_tol=1e-5,
                                         fast_mode=fast_mode)]
    assert program(tapegrad) == program(torch)
