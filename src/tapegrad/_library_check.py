"""``torch.library.opcheck``: check a custom operator's registrations on sample arguments, test by test, with
torch's test names and failure messages:

- ``test_schema``: an argument the schema does not declare mutable keeps its values;
- ``test_autograd_registration``: an operator whose outputs require grad has an autograd formula (or is
  CompositeImplicitAutograd, recording its own ops);
- ``test_faketensor``: the fake kernel exists and gives the real outputs' shapes and dtypes on meta tensors;
- ``test_aot_dispatch_static`` / ``_dynamic``: under ``tapegrad.compile`` the outputs and gradients are eager's.
"""

from __future__ import annotations

from .library import CustomOpDef, OpOverload, OpOverloadPacket, _tensors

DEFAULT_TEST_UTILS = ("test_schema", "test_autograd_registration", "test_faketensor", "test_aot_dispatch_dynamic")
ALL_TEST_UTILS = ("test_schema", "test_autograd_registration", "test_faketensor", "test_aot_dispatch_static",
                  "test_aot_dispatch_dynamic")


class OpCheckError(Exception):
    """A test of ``opcheck`` failed."""


class MetadataMismatchError(Exception):
    """The fake kernel's outputs differ from the real ones in shape or dtype."""

    def __init__(self, reason):
        super().__init__(reason)
        self.reason = reason

    def __repr__(self):
        return f"MetadataMismatchError(reason={self.reason!r})"


def _clone(value, device=None):
    from .tensor import Tensor
    if isinstance(value, Tensor):
        if device == "meta":
            return value.detach().to("meta").requires_grad_(value.requires_grad)
        return value.detach().clone().requires_grad_(value.requires_grad)
    if isinstance(value, (list, tuple)):
        return type(value)(_clone(v, device) for v in value)
    return value


def _outputs(result):
    return list(_tensors(result if isinstance(result, (tuple, list)) else (result,)))


def _test_schema(op, args, kwargs):
    from .library import bind
    before = [_clone(a) for a in args], {k: _clone(v) for k, v in kwargs.items()}
    pos, kw = _clone(args), {k: _clone(v) for k, v in kwargs.items()}
    op(*pos, **kw)
    bound, bound_kw = bind(op._schema, pos, kw)
    old, old_kw = bind(op._schema, before[0], before[1])
    for a, new, orig in zip(op._schema.arguments, (*bound, *bound_kw.values()), (*old, *old_kw.values())):
        if a.mutable:
            continue
        for n, o in zip(_tensors((new,)), _tensors((orig,))):
            if not n.detach().equal(o.detach()):
                raise AssertionError(f"Argument {a.name} is not defined as mutable but was mutated")


def _test_autograd_registration(op, args, kwargs):
    opaque = op._custom is not None or op._backward is not None
    if opaque or not any(t.requires_grad for t in _tensors(args)) or "CompositeImplicitAutograd" in op._kernels:
        return
    if any(o.requires_grad for o in _outputs(op(*_clone(args), **kwargs))):
        raise AssertionError(
            f"{op.name()}: at least one output of this operator has requires_grad=True but the operator does not "
            "have an autograd kernel defined at an autograd key (e.g. DispatchKey::Autograd). This could mean that "
            "you have incorrectly registered an autograd kernel to a non-Autograd DispatchKey, which may lead to "
            "silently incorrect results. If your operator consists of regular PyTorch operations, consider not "
            "using an operator at all or registering your operator as CompositeImplicitAutograd. If you have an "
            "autograd.Function registered to a backend (CPU/CUDA/XPU) key, the correct location for it is the "
            "Autograd key.")


def _test_faketensor(op, args, kwargs):
    if op._fake is None and "meta" not in op._kernels:
        if op._custom is not None:
            raise RuntimeError(f"There was no fake impl registered for {op._custom!r}. This is necessary for "
                               "torch.compile/export/fx tracing to work. Please use "
                               f"`{op._custom._name}.register_fake` to add an fake impl.")
        if "CompositeImplicitAutograd" not in op._kernels:
            raise RuntimeError(f"{op.name()}: no fake (meta) kernel: use torch.library.register_fake to add one")
    real = _outputs(op(*_clone(args), **{k: _clone(v) for k, v in kwargs.items()}))
    fake = _outputs(op(*_clone(args, "meta"), **{k: _clone(v, "meta") for k, v in kwargs.items()}))
    for r, f in zip(real, fake):
        what = ("Shapes", r.shape, f.shape) if r.shape != f.shape else \
            ("Dtypes", r.dtype, f.dtype) if r.dtype != f.dtype else None
        if what is not None:
            raise MetadataMismatchError(
                f"When comparing the output of {op} on FakeTensor and concrete Tensors, found mismatched tensor "
                f"metadata: {what[0]} {what[1]} and {what[2]} are not equal!")


def _test_aot_dispatch(op, args, kwargs, rtol, atol, dynamic):
    from . import compile as tg_compile
    from .testing import assert_close
    eager_args, compiled_args = _clone(args), _clone(args)
    expected = _outputs(op(*eager_args, **kwargs))
    got = _outputs(tg_compile(lambda *a: op(*a, **kwargs), dynamic=dynamic)(*compiled_args))
    try:
        for e, g in zip(expected, got):
            assert_close(g.detach(), e.detach(), rtol=rtol, atol=atol, equal_nan=True)
    except AssertionError:
        raise AssertionError("Outputs of the operator are different in eager-mode PyTorch vs AOTDispatcher. This "
                             "means the operator will have incorrect output underneath torch.compile.") from None
    diff = [o for o in expected if o.requires_grad]
    if not diff:
        return
    from .autograd import grad
    leaves_e = [t for t in _tensors(eager_args) if t.requires_grad]
    leaves_c = [t for t in _tensors(compiled_args) if t.requires_grad]
    gouts = [o.detach().clone().fill_(1) for o in diff]
    ge = grad(diff, leaves_e, gouts, allow_unused=True)
    gc = grad([o for o in got if o.requires_grad], leaves_c, gouts, allow_unused=True)
    try:
        for a, b in zip(ge, gc):
            if (a is None) != (b is None):
                raise AssertionError
            if a is not None:
                assert_close(b, a, rtol=rtol, atol=atol)
    except AssertionError:
        raise AssertionError("Gradients of the operator are different in eager-mode PyTorch vs AOTDispatcher. This "
                             "means the operator will have incorrect gradients underneath torch.compile. This could "
                             "be because the operator's backward is incorrectly registered or not traceable.") \
            from None


def opcheck(op, args, kwargs=None, *, test_utils=None, raise_exception=True, rtol=None, atol=None):
    """Run the tests (``test_utils``, default all but ``test_aot_dispatch_static``); a dict of test name to
    "SUCCESS" or the exception, or ``OpCheckError`` for the first failure when ``raise_exception``."""
    if (rtol is None) != (atol is None):
        raise ValueError("opcheck(op, ...): if you specify one of rtol/atol, you must specify both")
    if isinstance(op, (CustomOpDef, OpOverloadPacket)):
        from .library import _lookup
        op = _lookup(op)
    if not isinstance(op, OpOverload):
        raise ValueError(f"opcheck(op, ...): op must be instance of torch._ops.OpOverload, e.g. "
                         f"torch.ops.aten.sin.default, got {type(op)}")
    kwargs = dict(kwargs or {})
    tests = DEFAULT_TEST_UTILS if test_utils is None else (
        (test_utils,) if isinstance(test_utils, str) else tuple(test_utils))
    if not set(tests) <= set(ALL_TEST_UTILS):
        raise ValueError(f"opcheck(op, ..., test_utils={tests}), expected test_utils to be subset of "
                         f"{ALL_TEST_UTILS} but it was not")
    runners = {"test_schema": lambda: _test_schema(op, args, kwargs),
               "test_autograd_registration": lambda: _test_autograd_registration(op, args, kwargs),
               "test_faketensor": lambda: _test_faketensor(op, args, kwargs),
               "test_aot_dispatch_static": lambda: _test_aot_dispatch(op, args, kwargs, rtol, atol, False),
               "test_aot_dispatch_dynamic": lambda: _test_aot_dispatch(op, args, kwargs, rtol, atol, True)}
    results = {}
    for name in tests:
        try:
            runners[name]()
        except Exception as e:       # (each test's failure is reported, not raised through)
            if raise_exception:
                raise OpCheckError(f"opcheck(op, ...): {name} failed with {e} (scroll up for stack trace)") from e
            results[name] = e
        else:
            results[name] = "SUCCESS"
    return results
