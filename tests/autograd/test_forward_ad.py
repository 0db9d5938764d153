"""autograd.forward_ad against torch 2.13: the API (levels, make_dual, unpack_dual), its errors word for word,
tangents through functions, in-place ops and views, under no_grad, reverse-over-forward and forward-over-reverse,
custom Functions' jvp protocol, complex tangents, printing."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import tapegrad
import tapegrad.autograd.forward_ad as fwAD
import tapegrad.nn.functional  # noqa: F401 - makes m.nn.functional resolvable


def _err(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the class and message are what is compared
        return type(e).__name__, str(e).replace("tapegrad.", "torch.")
    return None


def _both(torch, fn):
    """``fn(m)`` on tapegrad and on torch; their exceptions' class and message, which must be equal."""
    a, b = _err(lambda: fn(tapegrad)), _err(lambda: fn(torch))
    assert a == b, f"tapegrad {a} != torch {b}"
    return a


def _np(t):
    return np.asarray(t.detach().numpy())


# --- the API and its errors --------------------------------------------------------------------------------------
def test_api_names_match_torch(torch):
    assert set(fwAD.__all__) == {n for n in torch.autograd.forward_ad.__all__}
    assert tapegrad.autograd.forward_ad is fwAD
    assert fwAD.UnpackedDualTensor._fields == ("primal", "tangent")
    assert issubclass(fwAD.UnpackedDualTensor, tuple)


def test_errors_outside_and_nesting(torch):
    x = lambda m: m.ones(3)
    assert _both(torch, lambda m: m.autograd.forward_ad.make_dual(x(m), x(m)))[0] == "RuntimeError"
    assert _both(torch, lambda m: m.autograd.forward_ad.exit_dual_level()) is not None
    assert _both(torch, lambda m: m.autograd.forward_ad.exit_dual_level(level=0)) is not None

    def nested(m):
        with m.autograd.forward_ad.dual_level():
            m.autograd.forward_ad.enter_dual_level()
    assert _both(torch, nested) == ("RuntimeError", "Nested forward mode AD is not supported at the moment")
    assert fwAD._public == []


@pytest.mark.parametrize("case", ["shape", "int_primal", "int_tangent", "twice", "level", "unpack_level",
                                  "exit_other", "float64_tangent", "not_a_tensor"])
def test_make_dual_checks_as_torch(torch, case):
    def run(m):
        fw = m.autograd.forward_ad
        with fw.dual_level() as lvl:
            x = m.tensor([1.0, 2.0, 3.0])
            if case == "shape":
                fw.make_dual(x, m.ones(2, 1))
            elif case == "int_primal":
                fw.make_dual(m.ones(3, dtype=m.int64), m.ones(3))
            elif case == "int_tangent":
                fw.make_dual(x, m.ones(3, dtype=m.int64))
            elif case == "twice":
                fw.make_dual(fw.make_dual(x, m.ones(3)), m.ones(3))
            elif case == "level":
                fw.make_dual(x, m.ones(3), level=5)
            elif case == "unpack_level":
                fw.unpack_dual(x, level=5)
            elif case == "exit_other":
                fw.exit_dual_level(level=lvl + 1)
            elif case == "float64_tangent":
                d = fw.make_dual(x, m.ones(3, dtype=m.float64))
                assert fw.unpack_dual(d * 2).tangent.tolist() == [2.0, 2.0, 2.0]
            elif case == "not_a_tensor":
                fw.unpack_dual(3.0)
    res = _err(lambda: run(tapegrad))
    ref = _err(lambda: run(torch))
    if case == "not_a_tensor":     # (torch names its internal _unpack_dual and its argument 'dual')
        assert res[0] == ref[0] == "TypeError" and "must be Tensor, not float" in res[1]
    else:
        assert res == ref
    while fwAD._public:           # (a failed exit leaves the level: leave the next test a clean slate)
        fwAD.exit_dual_level()


def test_levels_are_numbered_and_exit_drops_tangents(torch):
    for m in (tapegrad, torch):
        fw = m.autograd.forward_ad
        assert fw.enter_dual_level() == 0
        d = fw.make_dual(m.tensor([1.0]), m.tensor([2.0]))
        assert fw.exit_dual_level() is None
        assert fw.unpack_dual(d).tangent is None
        with fw.dual_level() as lvl:
            assert lvl == 0
            assert fw.unpack_dual(d).tangent is None


def test_make_dual_is_a_view_and_unpack_dual(torch):
    for m in (tapegrad, torch):
        fw = m.autograd.forward_ad
        x, t = m.tensor([1.0, 2.0]), m.tensor([3.0, 4.0])
        with fw.dual_level():
            d = fw.make_dual(x, t)
            u = fw.unpack_dual(d)
            assert isinstance(u, fw.UnpackedDualTensor) and isinstance(u, tuple)
            assert u.tangent is t and u.primal is not d
            assert fw.unpack_dual(u.primal).tangent is None
            x.add_(1)                               # d is a view of x: it sees the change
            assert d.tolist() == [2.0, 3.0] and u.primal.tolist() == [2.0, 3.0]
            assert fw.unpack_dual(x).tangent is None and fw.unpack_dual(x).primal.tolist() == x.tolist()
            r = fw.make_dual(m.tensor([1.0], requires_grad=True), m.tensor([1.0]))
            assert r.requires_grad
            assert (type(r.grad_fn).__name__ if m is torch else r.grad_fn.name()) == "ViewBackward0"


def test_printing_as_torch(torch):
    outs = []
    for m in (tapegrad, torch):
        fw = m.autograd.forward_ad
        with fw.dual_level():
            d = fw.make_dual(m.tensor([1.0, 2.0, 3.0]), m.tensor([1.0, 0.0, 0.0]))
            outs.append((repr(d), repr(d * 2), repr(fw.unpack_dual(d).primal)))
        outs.append(repr(d))
    assert outs[0] == outs[2] and outs[1] == outs[3]


# --- tangents through functions ----------------------------------------------------------------------------------
def _mlp(m, x, w1, b1, w2):
    F = m.nn.functional
    h = F.linear(x, w1, b1).tanh()
    return F.log_softmax(h @ w2, dim=-1).sum() + (h[:, 1:] ** 2).mean()


def _params(rng):
    return [rng.standard_normal(s) for s in [(4, 3), (5, 3), (5,), (5, 2)]]


def test_tangent_of_an_mlp_vs_torch(torch):
    rng = np.random.default_rng(0)
    vals, tans = _params(rng), _params(rng)
    res = []
    for m in (tapegrad, torch):
        fw = m.autograd.forward_ad
        with fw.dual_level():
            duals = [fw.make_dual(m.tensor(v), m.tensor(t)) for v, t in zip(vals, tans)]
            res.append(_np(fw.unpack_dual(_mlp(m, *duals)).tangent))
    np.testing.assert_allclose(res[0], res[1], rtol=1e-10)


def test_no_grad_still_propagates_tangents(torch):
    for m in (tapegrad, torch):
        fw = m.autograd.forward_ad
        x = m.tensor([1.0, 2.0], requires_grad=True)
        with fw.dual_level(), m.no_grad():
            d = fw.make_dual(x, m.tensor([1.0, 1.0]))
            y = (d * d).exp()
            assert not y.requires_grad and y.grad_fn is None
            np.testing.assert_allclose(_np(fw.unpack_dual(y).tangent), 2 * np.array([1.0, 2.0]) * np.exp([1.0, 4.0]))


def test_reverse_over_forward_vs_torch(torch):
    """The tangent is differentiable: its gradient with respect to the primal and the tangent, as torch's."""
    res = []
    for m in (tapegrad, torch):
        fw = m.autograd.forward_ad
        x = m.tensor([0.5, -1.0, 2.0], dtype=m.float64, requires_grad=True)
        v = m.tensor([1.0, 0.5, -0.25], dtype=m.float64, requires_grad=True)
        with fw.dual_level():
            d = fw.make_dual(x, v)
            out = (d.sin() * d).sum() + (d @ d) * d[0]
            t = fw.unpack_dual(out).tangent
        gx, gv = m.autograd.grad(t, (x, v))
        res.append((_np(t), _np(gx), _np(gv)))
    for a, b in zip(*res):
        np.testing.assert_allclose(a, b, rtol=1e-12)


@pytest.mark.parametrize("f", [lambda d: (d.exp() * d.sin()).sum() + (d * d).prod(),
                               lambda d: (d.tanh() ** 2).sum() + (d.sigmoid() ** 3).sum()],
                         ids=["exp_sin_prod", "tanh2_sigmoid3"])
def test_forward_over_reverse_is_hvp(torch, f):
    res = []
    for m in (tapegrad, torch):
        fw = m.autograd.forward_ad
        x = m.tensor([0.5, -1.0, 2.0], dtype=m.float64, requires_grad=True)
        v = m.tensor([1.0, 0.5, -0.25], dtype=m.float64)
        with fw.dual_level():
            d = fw.make_dual(x, v)
            g, = m.autograd.grad(f(d), d, create_graph=True)
            res.append(_np(fw.unpack_dual(g).tangent))
    np.testing.assert_allclose(res[0], res[1], rtol=1e-12)


def test_derived_rule_takes_partial_derivatives(torch):
    """An op (derived rule) whose second argument is computed from its first: the tangent is the sum of the
    partials times the tangents, not the total derivatives (which a gradient over the whole graph would give)."""
    res = []
    for m in (tapegrad, torch):
        fw = m.autograd.forward_ad
        x = m.tensor([0.5, -1.0], dtype=m.float64, requires_grad=True)
        with fw.dual_level():
            d = fw.make_dual(x, m.tensor([1.0, 2.0], dtype=m.float64))
            y = m.atan2(d, d.exp()) + m.hypot(d, d * d)
            res.append(_np(fw.unpack_dual(y).tangent))
    np.testing.assert_allclose(res[0], res[1], rtol=1e-12)


def test_inplace_and_views_as_torch(torch):
    res = []
    for m in (tapegrad, torch):
        fw = m.autograd.forward_ad
        out = []
        with fw.dual_level():
            d = fw.make_dual(m.tensor([1.0, 2.0, 3.0]), m.tensor([1.0, 0.5, 0.0]))
            y = d.clone()
            y.mul_(3)
            out.append(fw.unpack_dual(y).tangent)
            z = m.zeros(3)                      # a plain tensor becomes dual through a view's in-place copy
            z[1:].copy_(d[:2])
            out.append(fw.unpack_dual(z).tangent)
            a = m.zeros(2, 3)
            row0, row1 = a[0], a[1]
            row1.add_(d)                        # the base and its other live views see the change
            out += [fw.unpack_dual(a).tangent, fw.unpack_dual(row1).tangent, fw.unpack_dual(row0).tangent]
            w = m.ones(3)
            w[0] = d[2] * 2                     # setitem
            out.append(fw.unpack_dual(w).tangent)
            e = d.clone()
            e.exp_()
            out.append(fw.unpack_dual(e).tangent)
            f = d.clone()
            f[1:] = 7.0                         # overwritten by a constant: its tangent is zero there
            out.append(fw.unpack_dual(f).tangent)
        res.append([None if t is None else _np(t) for t in out])
    for a, b in zip(*res):
        np.testing.assert_allclose(a, b)


def test_integer_outputs_have_no_tangent(torch):
    for m in (tapegrad, torch):
        fw = m.autograd.forward_ad
        with fw.dual_level():
            d = fw.make_dual(m.tensor([1.0, -2.0]), m.tensor([1.0, 1.0]))
            assert fw.unpack_dual(d.argmax()).tangent is None
            assert fw.unpack_dual(d > 0).tangent is None
            assert fw.unpack_dual(m.zeros_like(d)).tangent is None
            assert fw.unpack_dual(d.detach()).tangent is None
            s = fw.unpack_dual(d.sign()).tangent
            assert s is None or not s.any()


def test_other_threads_do_not_see_the_level():
    seen = []
    with fwAD.dual_level():
        d = fwAD.make_dual(tapegrad.tensor([1.0]), tapegrad.tensor([1.0]))
        th = threading.Thread(target=lambda: seen.append(d * 2))
        th.start()
        th.join()
        assert fwAD.unpack_dual(seen[0]).tangent is None
        assert fwAD.unpack_dual(d * 2).tangent is not None


def test_complex_tangents_vs_torch(torch):
    """Holomorphic ops (natural and derived rules) on complex duals, as torch's."""
    res = []
    for m in (tapegrad, torch):
        fw = m.autograd.forward_ad
        z, w = m.tensor([1 + 2j, 3 - 1j]), m.tensor([0.3 + 0.1j, -1 + 2j])
        with fw.dual_level():
            d = fw.make_dual(z, m.tensor([0.5 - 1j, 2 + 0.25j]))
            outs = [d * w, d.exp(), d.sin(), w / d, (d * d).sum(), d @ w, d.reshape(2, 1).expand(2, 2)]
            res.append([_np(fw.unpack_dual(o).tangent) for o in outs])
    for a, b in zip(*res):
        np.testing.assert_allclose(a, b, rtol=1e-6)


# --- custom Functions ------------------------------------------------------------------------------------------
def _functions(m):
    class NoJvp(m.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    class WithJvp(m.autograd.Function):
        seen = []

        @staticmethod
        def forward(ctx, x, y, k):
            ctx.save_for_forward(x, y)
            ctx.save_for_backward(y)
            ctx.k = k
            return x * y * k, x + 1

        @staticmethod
        def backward(ctx, g, h):
            return None, None, None

        @staticmethod
        def jvp(ctx, tx, ty, tk):
            WithJvp.seen.append((tx.tolist(), ty.tolist(), tk, len(ctx.saved_tensors)))
            x, y = ctx.saved_tensors
            return (tx * y + x * ty) * ctx.k, tx

    class Ctxless(m.autograd.Function):
        @staticmethod
        def forward(x):
            return x.exp()

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_forward(output)

        @staticmethod
        def jvp(ctx, t):
            r, = ctx.saved_tensors
            return t * r

    class TooFew(m.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2, x * 3

        @staticmethod
        def jvp(ctx, t):
            return t

    class BadShape(m.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def jvp(ctx, t):
            return t[:1]

    class Dirty(m.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def jvp(ctx, t):
            t.mul_(2)
            return t
    return NoJvp, WithJvp, Ctxless, TooFew, BadShape, Dirty


def test_custom_function_jvp_protocol(torch):
    res = []
    for m in (tapegrad, torch):
        fw = m.autograd.forward_ad
        NoJvp, WithJvp, Ctxless, TooFew, BadShape, Dirty = _functions(m)
        out = {}
        with fw.dual_level():
            d = fw.make_dual(m.tensor([1.0, 2.0]), m.tensor([1.0, 1.0]))
            out["nojvp"] = _err(lambda: NoJvp.apply(d))
            out["plain"] = NoJvp.apply(m.tensor([1.0])).tolist()        # no dual input: no jvp needed
            a, b = WithJvp.apply(d, m.tensor([3.0, 4.0]), 3.0)
            out["with"] = (fw.unpack_dual(a).tangent.tolist(), fw.unpack_dual(b).tangent.tolist(), WithJvp.seen)
            out["ctxless"] = fw.unpack_dual(Ctxless.apply(d)).tangent.tolist()
            out["toofew"] = _err(lambda: TooFew.apply(d))
            out["shape"] = _err(lambda: BadShape.apply(d))
            e = d.clone()
            r = Dirty.apply(e)
            out["dirty"] = (r is e, e.tolist(), fw.unpack_dual(e).tangent.tolist())
        res.append(out)
    for k in res[0]:
        a, b = res[0][k], res[1][k]
        if k == "with":
            np.testing.assert_allclose(a[0], b[0], rtol=1e-6)
            assert a[1:] == b[1:]
        elif k == "ctxless":
            np.testing.assert_allclose(a, b, rtol=1e-6)
        else:
            assert a == b, (k, a, b)


def test_custom_function_jvp_reads_and_deletes_ctx_attributes(torch):
    """A Function's ``jvp`` reads what ``forward`` put on ctx and may ``del`` it (freeing it), as torch's ctx."""
    res = []
    for m in (tapegrad, torch):
        class Exp(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.result = x.exp()
                return ctx.result

            @staticmethod
            def jvp(ctx, t):
                out = t * ctx.result
                del ctx.result
                return out

        fw = m.autograd.forward_ad
        with fw.dual_level():
            y = Exp.apply(fw.make_dual(m.tensor([0.5, -1.0], dtype=m.float64), m.tensor([2.0, 3.0], dtype=m.float64)))
            res.append(fw.unpack_dual(y).tangent.tolist())
    np.testing.assert_allclose(res[0], res[1], rtol=1e-15)


def test_custom_function_saved_for_forward_attribute(torch):
    """``ctx.save_for_forward`` keeps its tensors as torch's public ``ctx.saved_for_forward`` (roma's Procrustes
    jvp reads it), readable in setup_context and jvp, None once jvp has run; non-tensors are refused."""
    res = []
    for m in (tapegrad, torch):
        seen = []

        class Twice(m.autograd.Function):
            @staticmethod
            def forward(x):
                return x * 2, x.sum()

            @staticmethod
            def setup_context(ctx, inputs, output):
                ctx.save_for_forward(inputs[0], output[0])
                ctx.save_for_backward(inputs[0])
                seen.append(("setup", type(ctx.saved_for_forward).__name__, len(ctx.saved_for_forward)))

            @staticmethod
            def jvp(ctx, t):
                x, y = ctx.saved_for_forward
                seen.append(("jvp", ctx.saved_tensors[1] is y, y.tolist()))
                return t * 2, (t * x).sum()

            @staticmethod
            def backward(ctx, g, g2):
                seen.append(("backward", ctx.saved_for_forward is None, len(ctx.saved_tensors)))
                return g * 2 + g2

        class NotTensor(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_forward(x, 3)
                return x

        fw = m.autograd.forward_ad
        x = m.tensor([1.0, -2.0], dtype=m.float64, requires_grad=True)
        with fw.dual_level():
            y, s = Twice.apply(fw.make_dual(x, m.tensor([0.5, 1.0], dtype=m.float64)))
            tangents = fw.unpack_dual(y).tangent.tolist(), fw.unpack_dual(s).tangent.item()
        y.sum().backward()
        res.append((seen, tangents, x.grad.tolist(), hasattr(y.grad_fn, "saved_for_forward"),
                    _err(lambda: NotTensor.apply(m.ones(1)))))
    assert res[0] == res[1]


def test_sub_with_alpha_has_its_own_tangent_rule():
    """sub(a, b, alpha=) defines its natural rule (it once sat after a return, unreachable): ta - alpha * tb."""
    from tapegrad.ops.elementwise.arith import SubAlpha
    assert "jvp" in SubAlpha.__dict__
    with fwAD.dual_level():
        a = fwAD.make_dual(tapegrad.tensor([1.0, 2.0]), tapegrad.tensor([0.5, -1.0]))
        b = fwAD.make_dual(tapegrad.tensor([3.0, 4.0]), tapegrad.tensor([2.0, 1.0]))
        t = fwAD.unpack_dual(tapegrad.sub(a, b, alpha=3)).tangent
    assert t.tolist() == [0.5 - 6.0, -1.0 - 3.0]


@pytest.mark.parametrize("op", ["t_", "transpose_", "squeeze_", "unsqueeze_"])
def test_inplace_view_ops_reshape_the_tangent(torch, op):
    """``y.transpose_(0, 1)`` and the other in-place view ops: the tangent takes the view's shape, as torch's."""
    args = {"t_": (), "transpose_": (0, 1), "squeeze_": (0,), "unsqueeze_": (1,)}[op]
    shape = (3, 2) if op != "squeeze_" else (1, 6)

    def run(m):
        p = m.tensor(np.arange(6.0).reshape(shape) + 1)
        with fwAD.dual_level() if m is tapegrad else m.autograd.forward_ad.dual_level():
            ad = fwAD if m is tapegrad else m.autograd.forward_ad
            x = ad.make_dual(p, m.ones_like(p) * 0.5)
            y = x * x
            getattr(y, op)(*args)
            z = y.exp() * m.arange(1.0, y.shape[-1] + 1, dtype=y.dtype)
            return _np(ad.unpack_dual(z).tangent), tuple(y.shape)
    (a, sa), (b, sb) = run(tapegrad), run(torch)
    assert sa == sb
    np.testing.assert_allclose(a, b, rtol=1e-12)
