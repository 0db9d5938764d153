"""torch.library against torch: custom_op with register_fake / register_autograd / register_kernel, Library's
define and impl, torch.ops.<ns>.<name>, infer_schema, opcheck — values, gradients, node names, errors."""

import itertools
from typing import Optional, Sequence, Union  # noqa: UP035  (the spellings programs use)

import numpy as np
import pytest
import torch

import tapegrad as tg

_count = itertools.count()


def _ns():
    return f"tglib{next(_count)}"


def _both(make):
    """Build the same operator in torch and in tapegrad (``make(m, ns)``), each in a fresh namespace."""
    return make(torch, _ns()), make(tg, _ns())


def _err(fn):
    with pytest.raises(Exception) as info:
        fn()
    return info.type.__name__, str(info.value)


def _sin_op(m, ns):
    @m.library.custom_op(f"{ns}::mysin", mutates_args=())
    def mysin(x: m.Tensor) -> m.Tensor:
        return x.sin()

    @mysin.register_fake
    def _(x):
        return m.empty_like(x)

    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])

    def backward(ctx, grad):
        x, = ctx.saved_tensors
        return grad * x.cos()
    mysin.register_autograd(backward, setup_context=setup_context)
    return mysin


def test_custom_op_values_grads_and_node_names():
    ops = _both(_sin_op)
    data = np.random.default_rng(0).standard_normal(4)
    out = []
    for m, op in zip((torch, tg), ops):
        x = m.tensor(data, requires_grad=True)
        y = op(x)
        name = type(y.grad_fn).__name__
        g, = m.autograd.grad(y.sum(), x, create_graph=True)
        gg, = m.autograd.grad(g.sum(), x)
        out.append((y.detach().numpy(), name.replace(op._namespace, "NS"), g.detach().numpy(), gg.numpy(),
                    type(g.grad_fn).__name__, repr(op).replace(op._namespace, "NS")))
    t, o = out
    np.testing.assert_allclose(o[0], t[0])
    np.testing.assert_allclose(o[2], t[2])
    np.testing.assert_allclose(o[3], t[3])
    assert o[1] == t[1] == "GeneratedBackwardFor_NS_mysin_defaultBackward"
    assert o[4] == t[4] == "MulBackward0"
    assert o[5] == t[5] == "<CustomOpDef(NS::mysin)>"


def test_custom_op_gradcheck_and_gradgradcheck():
    op = _sin_op(tg, _ns())
    x = tg.randn(5, dtype=tg.float64, requires_grad=True)
    assert tg.autograd.gradcheck(op, (x,))
    assert tg.autograd.gradgradcheck(op, (x,))


def test_torch_ops_namespace_and_overloads():
    for m, op in zip((torch, tg), _both(_sin_op)):
        ns = op._namespace
        packet = getattr(getattr(m.ops, ns), "mysin")
        x = m.tensor([0.5, 1.0])
        assert packet(x).tolist() == pytest.approx(np.sin([0.5, 1.0]).tolist())
        assert packet.default(x).tolist() == packet(x).tolist()
        assert packet.overloads() == ["default"]
        assert str(packet) == f"{ns}.mysin" and str(packet.default) == f"{ns}.mysin.default"
        assert repr(packet.default) == f"<OpOverload(op='{ns}.mysin', overload='default')>"
        assert str(packet.default._schema) == f"{ns}::mysin(Tensor x) -> Tensor"
        assert type(packet(m.tensor([1.0], requires_grad=True)).grad_fn).__name__.startswith("GeneratedBackward")
        assert _err(lambda: getattr(m.ops, ns).nothere) == (
            "AttributeError", f"'_OpNamespace' '{ns}' object has no attribute 'nothere'")
        assert _err(lambda: packet.Tensor) == (
            "AttributeError", f"The underlying op of '{ns}.mysin' has no overload name 'Tensor'")


def test_no_autograd_formula_error():
    def make(m, ns):
        @m.library.custom_op(f"{ns}::noag", mutates_args=())
        def noag(x: m.Tensor) -> m.Tensor:
            return x * 2
        return noag
    msgs = []
    for m, op in zip((torch, tg), _both(make)):
        y = op(m.ones(2, requires_grad=True))
        assert type(y.grad_fn).__name__ == f"GeneratedBackwardFor_{op._namespace}_noag_defaultBackward"
        msgs.append(_err(lambda: y.sum().backward())[1].replace(op._namespace, "NS"))
        assert op(m.ones(2)).grad_fn is None
    assert msgs[0] == msgs[1]


def test_keyword_only_args_setup_context_and_several_outputs():
    def make(m, ns):
        @m.library.custom_op(f"{ns}::scaled", mutates_args=())
        def scaled(x: m.Tensor, y: m.Tensor, *, k: float = 2.0) -> tuple[m.Tensor, m.Tensor]:
            return x * k, x * y

        def setup_context(ctx, inputs, keyword_only_inputs, output):
            ctx.save_for_backward(*inputs)
            ctx.k = keyword_only_inputs["k"]

        def backward(ctx, ga, gb):
            x, y = ctx.saved_tensors
            return ga * ctx.k + gb * y, gb * x
        scaled.register_autograd(backward, setup_context=setup_context)
        return scaled
    res = []
    for m, op in zip((torch, tg), _both(make)):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        y = m.tensor([3.0, -1.0], requires_grad=True)
        a, b = op(x, y, k=3.0)
        (a.sum() + (b * b).sum()).backward()
        res.append((a.tolist(), b.tolist(), x.grad.tolist(), y.grad.tolist(),
                    str(getattr(m.ops, op._namespace).scaled.default._schema).split("::")[1]))
    assert res[0] == res[1]


def test_register_kernel_and_device_types():
    def make(m, ns):
        @m.library.custom_op(f"{ns}::f", mutates_args=())
        def f(x: m.Tensor, k: int = 2) -> m.Tensor:
            return x * k
        return f
    for m, op in zip((torch, tg), _both(make)):
        assert op(m.ones(2), 3).tolist() == [3.0, 3.0]

        @op.register_kernel("cpu")
        def _(x, k=2):
            return x * k + 100
        assert op(m.ones(2)).tolist() == [102.0, 102.0]

    def cuda_only(m, ns):
        @m.library.custom_op(f"{ns}::g", mutates_args=(), device_types="cuda")
        def g(x: m.Tensor) -> m.Tensor:
            return x + 1
        return g
    for m, op in zip((torch, tg), _both(cuda_only)):
        kind, msg = _err(lambda: op(m.ones(2)))
        assert kind == "NotImplementedError"
        assert msg.startswith(f"Could not run '{op._namespace}::g' with arguments from the 'CPU' backend.")


def test_fake_kernel_runs_on_meta_tensors():
    for m, op in zip((torch, tg), _both(_sin_op)):
        y = op(m.ones(2, 3, device="meta"))
        assert y.device.type == "meta" and tuple(y.shape) == (2, 3)


def test_mutated_argument_bumps_version_and_alias_error():
    def make(m, ns):
        @m.library.custom_op(f"{ns}::inc", mutates_args={"x"})
        def inc(x: m.Tensor) -> None:
            x.add_(1)

        @m.library.custom_op(f"{ns}::same", mutates_args=())
        def same(x: m.Tensor) -> m.Tensor:
            return x
        return inc, same
    msgs = []
    for m, (inc, same) in zip((torch, tg), _both(make)):
        z = m.zeros(2)
        inc(z)
        assert z.tolist() == [1.0, 1.0] and z._version == 2
        assert str(getattr(m.ops, inc._namespace).inc.default._schema).endswith("inc(Tensor(a0!) x) -> ()")
        kind, msg = _err(lambda: same(m.ones(2)))
        msgs.append((kind, msg.split(": ", 1)[1]))
    assert msgs[0] == msgs[1]


def test_call_errors_match_torch():
    def make(m, ns):
        @m.library.custom_op(f"{ns}::f", mutates_args=())
        def f(x: m.Tensor, *, k: int = 2) -> m.Tensor:
            return x * k

        @m.library.custom_op(f"{ns}::p", mutates_args=())
        def p(x: m.Tensor, k: int = 2) -> m.Tensor:
            return x * k
        return f, p
    got = []
    for m, (f, p) in zip((torch, tg), _both(make)):
        calls = [lambda: f(), lambda: f(m.ones(2), z=3), lambda: f(m.ones(2), 3), lambda: p(m.ones(2), 2, 3),
                 lambda: p(5)]
        got.append([_err(c)[0] + ":" + _err(c)[1].replace(f._namespace, "NS").split("\nCast error")[0]
                    for c in calls])
    assert got[0] == got[1]


def test_custom_op_definition_errors():
    def defs(m):
        ns = _ns()
        return [
            lambda: m.library.custom_op(f"{ns}::a", mutates_args=())(lambda x: x),
            lambda: m.library.custom_op(f"{ns}::b")(lambda x: x),
        ]
    t, o = [[_err(d) for d in defs(m)] for m in (torch, tg)]
    assert t == o


def _annotated(m):
    def f1(x: m.Tensor, y: Optional[m.Tensor], n: int, a: float, b: bool, s: str, l: Sequence[int],  # noqa: UP007, UP045
           tl: list[m.Tensor], d: m.dtype, dev: m.device, sc: Union[int, float, bool], lo: list[Optional[m.Tensor]],  # noqa: UP007, UP045
           lf: list[float], k: int = 3, *, kw: float = 1.5) -> tuple[m.Tensor, m.Tensor]:
        pass

    def f2(x: m.Tensor) -> None:
        pass

    def f3(x: m.Tensor, o: Optional[int] = None, d: Optional[float] = None) -> int:  # noqa: UP007, UP045
        pass

    def f7(x: m.Tensor, s: Optional[str] = "a", b: bool = True, n: Optional[Sequence[int]] = None,  # noqa: UP007, UP045
           dt: m.dtype = m.float32) -> m.Tensor:
        pass

    def f8(x: m.Tensor, *, dev: m.device = m.device("cpu"), v: float = -1e-3) -> list[m.Tensor]:
        pass

    def f9(x: m.Tensor) -> tuple[m.Tensor, int, float, bool]:
        pass

    def f11(x: m.Tensor, y: m.Tensor | None, n: int | None = None, s: int | float | bool = 2) -> m.Tensor:
        pass
    return f1, f2, f3, f7, f8, f9, f11


def test_infer_schema_matches_torch():
    for ft, fo in zip(_annotated(torch), _annotated(tg)):
        for mut in ((), "unknown"):
            assert torch.library.infer_schema(ft, mutates_args=mut) == tg.library.infer_schema(fo, mutates_args=mut)
    ft, fo = _annotated(torch)[0], _annotated(tg)[0]
    assert torch.library.infer_schema(ft, mutates_args={"x", "tl", "y"}, op_name="foo") == \
        tg.library.infer_schema(fo, mutates_args={"x", "tl", "y"}, op_name="foo")


def test_infer_schema_errors_match_torch():
    def bad(m):
        def f4(x: m.Tensor, o: dict) -> m.Tensor:
            pass

        def f5(x: m.Tensor, *args) -> m.Tensor:
            pass

        def f6(x: m.Tensor):
            pass

        def f10(x: m.Tensor) -> dict:
            pass

        def f12(x: m.Tensor, dims: list[int] = (0,)) -> m.Tensor:
            pass
        f1 = _annotated(m)[0]
        return [(f4, ()), (f5, ()), (f6, ()), (f10, ()), (f1, {"n"}), (f1, {"zz"}), (f1, "x"), (f6, 5), (f12, ())]
    for (ft, mt), (fo, mo) in zip(bad(torch), bad(tg)):
        kt, et = _err(lambda: torch.library.infer_schema(ft, mutates_args=mt))
        ko, eo = _err(lambda: tg.library.infer_schema(fo, mutates_args=mo))
        assert kt == ko
        cut = min([i for i in (et.find(" The valid types"), et.find(" Got func")) if i > 0] or [len(et)])
        assert eo.startswith(et[:cut]), (et, eo)


def test_library_define_impl():
    got = []
    for m in (torch, tg):
        ns = _ns()
        lib = m.library.Library(ns, "DEF")
        assert repr(lib) == f"Library(kind=DEF, ns={ns}, dispatch_key=)>"
        assert lib.define("twice(Tensor x) -> Tensor") == "twice"
        lib.impl("twice", lambda x: x * 2, "CPU")
        lib.define("addk.Scalar(Tensor x, float k=1.0) -> Tensor")

        @m.library.impl(lib, "addk.Scalar", "CompositeExplicitAutograd")
        def addk(x, k=1.0):
            return x + k
        m.library.define(f"{ns}::neg", "(Tensor x) -> Tensor")

        @m.library.impl(f"{ns}::neg", "cpu")
        def neg(x):
            return -x
        ops = getattr(m.ops, ns)
        x = m.ones(2)
        got.append((ops.twice(x).tolist(), ops.twice.default(x).tolist(), ops.addk.Scalar(x, k=2).tolist(),
                    ops.addk(x).tolist(), ops.neg(x).tolist(),
                    _err(lambda: lib.define("twice(Tensor x) -> Tensor"))[1].split(" Duplicate")[0]
                    .replace(ns, "NS"),
                    _err(lambda: m.library.Library(ns, "DEF"))[1].replace(ns, "NS")[:200],
                    _err(lambda: m.library.Library(ns, "BAD")),
                    _err(lambda: m.library.define("nocolon", "(Tensor x) -> Tensor"))))
        lib._destroy()
    assert got[0] == got[1]


def test_register_fake_and_autograd_by_name():
    got = []
    for m in (torch, tg):
        ns = _ns()
        lib = m.library.Library(ns, "FRAGMENT")
        lib.define("cube(Tensor x) -> Tensor")
        lib.impl("cube", lambda x: x * x * x, "CompositeExplicitAutograd")
        m.library.register_fake(f"{ns}::cube", lambda x: m.empty_like(x))

        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0])
        m.library.register_autograd(f"{ns}::cube", lambda ctx, g: 3 * g * ctx.saved_tensors[0] ** 2,
                                    setup_context=setup_context)
        x = m.tensor([1.0, 2.0], requires_grad=True)
        y = getattr(m.ops, ns).cube(x)
        y.sum().backward()
        got.append((y.tolist(), x.grad.tolist(), type(y.grad_fn).__name__.replace(ns, "NS"),
                    tuple(getattr(m.ops, ns).cube(m.ones(3, device="meta")).shape)))
        lib._destroy()
    assert got[0] == got[1]


def test_opcheck_matches_torch():
    def make(m, ns):
        @m.library.custom_op(f"{ns}::bad", mutates_args=())
        def bad(x: m.Tensor) -> m.Tensor:
            x.add_(1)
            return x.clone()
        bad.register_fake(lambda x: m.empty_like(x))

        @m.library.custom_op(f"{ns}::wrongfake", mutates_args=())
        def wf(x: m.Tensor) -> m.Tensor:
            return x.sin()
        wf.register_fake(lambda x: m.empty_like(x, dtype=m.float64))

        @m.library.custom_op(f"{ns}::nofake", mutates_args=())
        def nofake(x: m.Tensor) -> m.Tensor:
            return x.sin()
        return _sin_op(m, ns), bad, wf, nofake

    def summary(res):
        return {k: v if v == "SUCCESS" else type(v).__name__ for k, v in res.items()}
    got = []
    for m, (good, bad, wf, nofake) in zip((torch, tg), _both(make)):
        x = m.zeros(2, requires_grad=True)
        ns = good._namespace
        got.append((summary(m.library.opcheck(good, (x,))),
                    _err(lambda: m.library.opcheck(bad, (m.zeros(2),)))[1],
                    summary(m.library.opcheck(wf, (m.zeros(2),), raise_exception=False)),
                    str(m.library.opcheck(wf, (m.zeros(2),), raise_exception=False)["test_faketensor"])
                    .replace("torch.", "").replace("tapegrad.", "").replace(ns, "NS"),
                    _err(lambda: m.library.opcheck(nofake, (m.zeros(2),)))[1].replace(ns, "NS"),
                    _err(lambda: m.library.opcheck(good, (x,), test_utils="bogus")),
                    m.library.opcheck(good, (x,), test_utils=("test_schema",))))
    assert got[0] == got[1]


def test_compile_breaks_at_custom_op_with_grad_and_replays_without():
    op = _sin_op(tg, _ns())
    fn = tg.compile(lambda x: op(x) * 2)
    x = tg.tensor([0.3, 0.7], requires_grad=True)
    for _ in range(2):
        y = fn(x)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.cos([0.3, 0.7]), rtol=1e-6)
    reasons = tg.compiler.explain(lambda x: op(x) * 2)(x)
    assert reasons.graph_break_count >= 1
    assert "GeneratedBackwardFor_" in str(reasons)
    assert tg.compiler.explain(lambda x: op(x) * 2)(tg.ones(2)).graph_break_count == 0
    got = tg.compile(lambda x: op(x) * 2)
    for _ in range(3):
        np.testing.assert_allclose(got(tg.tensor([0.1, 0.2])).numpy(), 2 * np.sin([0.1, 0.2]), rtol=1e-6)


def test_tensor_list_inputs_and_outputs():
    def make(m, ns):
        @m.library.custom_op(f"{ns}::lsum", mutates_args=())
        def lsum(x: m.Tensor, ys: list[m.Tensor]) -> m.Tensor:
            return x.sin() + sum(ys)

        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0])
            ctx.n = len(inputs[1])

        def backward(ctx, g):
            x, = ctx.saved_tensors
            ctx.seen = ctx.needs_input_grad
            return g * x.cos(), [g * (i + 1) for i in range(ctx.n)]
        lsum.register_autograd(backward, setup_context=setup_context)

        @m.library.custom_op(f"{ns}::two", mutates_args=())
        def two(x: m.Tensor) -> list[m.Tensor]:
            return [x * 1, x * 2]
        two.register_autograd(lambda ctx, grads: grads[0] + 2 * grads[1])
        return lsum, two
    got = []
    for m, (lsum, two) in zip((torch, tg), _both(make)):
        x = m.tensor([0.5, 1.0], requires_grad=True)
        y1, y2 = m.ones(2, requires_grad=True), m.ones(2)
        out = lsum(x, [y1, y2])
        out.sum().backward()
        a = two(x)
        (a[0] * 3 + a[1]).sum().backward()
        got.append((out.tolist(), x.grad.tolist(), y1.grad.tolist(), y2.grad, type(a).__name__,
                    [t.tolist() for t in a], tuple(map(tuple, (n if isinstance(n, list) else [n]
                                                           for n in out.grad_fn.seen)))))
    assert got[0] == got[1]


def test_register_vmap():
    def make(m, ns):
        @m.library.custom_op(f"{ns}::npsin", mutates_args=())
        def npsin(x: m.Tensor, k: float) -> m.Tensor:
            return m.from_numpy(np.sin(x.numpy()) * k)       # (a NumPy kernel: vmap cannot batch it by itself)
        seen = []

        @npsin.register_vmap
        def _(info, in_dims, x, k):
            seen.append((info.batch_size, info.randomness, in_dims[1]))
            return npsin(x.movedim(in_dims[0], 0) if in_dims[0] else x, k), 0

        @m.library.custom_op(f"{ns}::pair", mutates_args=())
        def pair(x: m.Tensor) -> tuple[m.Tensor, m.Tensor]:
            return m.from_numpy(x.numpy() * 2), m.from_numpy(x.numpy().sum(keepdims=True))

        @pair.register_vmap
        def _(info, in_dims, x):
            x = x.movedim(in_dims[0], 0)
            a, b = pair(x.reshape(-1))
            return (a.reshape(x.shape), x.sum(1)), (0, 0)
        return npsin, pair, seen
    got = []
    for m, (npsin, pair, seen) in zip((torch, tg), _both(make)):
        X = m.tensor([[0.5, 1.0, 1.5], [2.0, 3.0, 4.0]])
        a = m.func.vmap(npsin, in_dims=(1, None))(X, 2.0)
        b = m.func.vmap(m.func.vmap(npsin, in_dims=(0, None)), in_dims=(0, None))(X[None], 2.0)
        c, d = m.func.vmap(pair)(X)
        got.append((a.tolist(), b.tolist(), c.tolist(), d.tolist(), seen))
    assert got[0] == got[1]


def test_tags_and_impl_before_define():
    got = []
    for m in (torch, tg):
        ns = _ns()
        lib = m.library.Library(ns, "FRAGMENT")
        lib.impl("later", lambda x: x * 3, "CPU")
        lib.define("later(Tensor x) -> Tensor", tags=(m.Tag.pointwise,))

        @m.library.custom_op(f"{ns}::t", mutates_args=(), tags=m.Tag.pt2_compliant_tag)
        def t(x: m.Tensor) -> m.Tensor:
            return x.clone()
        ops = getattr(m.ops, ns)
        got.append((ops.later(m.ones(2)).tolist(), [repr(g) for g in ops.t.default.tags],
                    [repr(g) for g in ops.later.default.tags], list(m.Tag.__members__),
                    [g.value for g in m.Tag.__members__.values()]))
        lib._destroy()
    assert got[0] == got[1]


def test_register_autocast():
    def make(m, ns):
        seen = []

        @m.library.custom_op(f"{ns}::mm", mutates_args=())
        def mm(x: m.Tensor, y: m.Tensor) -> m.Tensor:
            seen.append((str(x.dtype).split(".")[1], str(y.dtype).split(".")[1], m.is_autocast_enabled("cpu")))
            return (x.float() @ y.float()).to(x.dtype)
        m.library.register_autocast(f"{ns}::mm", "cpu", m.float16)
        return mm, seen
    got = []
    for m, (mm, seen) in zip((torch, tg), _both(make)):
        with m.autocast("cpu", dtype=m.float16):
            a = mm(m.ones(2, 2), m.ones(2, 2, dtype=m.float64))
            b = mm(m.ones(2, 2, requires_grad=True), m.ones(2, 2))
        c = mm(m.ones(2, 2), m.ones(2, 2))
        got.append(([str(t.dtype).split(".")[1] for t in (a, b, c)], b.requires_grad, seen))
    assert got[0] == got[1]


def test_set_kernel_enabled(caplog):
    def make(m, ns):
        @m.library.custom_op(f"{ns}::f", mutates_args=())
        def f(x: m.Tensor) -> m.Tensor:
            return x * 2
        return f
    got = []
    for m, f in zip((torch, tg), _both(make)):
        caplog.clear()
        row = [f(m.ones(1)).item()]
        f.register_kernel("cpu")(lambda x: x * 3)
        row.append(f(m.ones(1)).item())
        with f.set_kernel_enabled("cpu", False):
            row.append(f(m.ones(1)).item())
            with f.set_kernel_enabled("cpu", False):
                row.append(f(m.ones(1)).item())
            row.append(f(m.ones(1)).item())
        row.append(f(m.ones(1)).item())
        with f.set_kernel_enabled("cuda", False):
            row.append(f(m.ones(1)).item())
        with f.set_kernel_enabled("cpu", True):
            row.append(f(m.ones(1)).item())
        row.append([r.getMessage() for r in caplog.records if "Attempted" in r.getMessage()])
        got.append(row)
    assert got[0] == got[1]
