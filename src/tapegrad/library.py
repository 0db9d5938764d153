"""``torch.library``: user-defined operators, called as ``torch.ops.<namespace>.<name>``.

An operator is an ``OpOverload`` (``torch.ops.mylib.f.default``) with a schema and kernels by device
(``"cpu"``, ``"meta"``, the catch-all ``CompositeExplicitAutograd``/``CompositeImplicitAutograd``). A call binds
its arguments to the schema (the dispatcher's errors), then runs the kernel for its tensors' device — the fake
kernel (``register_fake``) for meta tensors. ``custom_op`` operators are opaque to autograd as in torch: while an
input requires grad, the call is one ``autograd.Function`` (``GeneratedBackwardFor_<ns>_<name>_<overload>``),
whose forward runs the kernel without recording and calls ``setup_context``, and whose backward is the one
``register_autograd`` gave (or torch's error when none was given). Everything transforms see is therefore the one
Function: ``tapegrad.compile`` breaks the graph there (the kernel runs eagerly) when an input requires grad, and
records the kernel's ops otherwise. ``Library.impl`` kernels of a schema defined by ``Library.define`` run with
autograd on (as CompositeImplicitAutograd kernels do in torch), unless ``register_autograd`` was given.

>>> @custom_op("mylib::twice", mutates_args=())   # doctest: +SKIP
... def twice(x: Tensor) -> Tensor:
...     return x * 2
"""

from __future__ import annotations

import contextlib
import logging
import sys
import weakref

from ._library_schema import FunctionSchema, bind, infer_schema, parse_schema
from .autograd.function import _active, active_interpreters

__all__ = ["Library", "define", "impl", "custom_op", "CustomOpDef", "register_fake", "register_autograd",
           "register_kernel", "infer_schema", "opcheck", "OpOverload", "OpOverloadPacket", "get_ctx",
           "fallthrough_kernel", "impl_abstract", "register_vmap", "register_autocast"]

_log = logging.getLogger(__name__)
_PACKETS = {}        # "ns::name" -> OpOverloadPacket
_DEFINED_NS = {}     # namespace -> the DEF Library that holds it (weakly)
_DEVICE_KEYS = {"cpu": "cpu", "CPU": "cpu", "cuda": "cuda", "CUDA": "cuda", "meta": "meta", "Meta": "meta",
                "mps": "mps", "MPS": "mps", "xpu": "xpu", "XPU": "xpu"}
_CATCH_ALL = ("CompositeExplicitAutograd", "CompositeImplicitAutograd", "Autograd", "AutogradCPU", "")


def _split_qualname(qualname):
    ns, sep, name = qualname.partition("::")
    if not sep or not ns or not name:
        raise ValueError(f'Expected `qualname` to be of the form "namespace::name", but got {qualname}. The '
                         "qualname passed to the torch.library APIs must consist of a namespace and a name, e.g. "
                         "aten::sin")
    return ns, name


class OpOverload:
    """One overload of an operator (``torch.ops.mylib.f.default``): call it like the op."""

    def __init__(self, ns, name, overload, schema_text, site):
        pname, _, arguments, returns, text = parse_schema(schema_text, name)
        self._namespace, self._opname, self._overloadname = ns, name, overload or "default"
        self._schema = FunctionSchema(f"{ns}::{name}", overload, arguments, returns, text)
        self._kernels = {}            # device key or catch-all key -> kernel
        self._fake = None
        self._backward = self._setup_context = None
        self._custom = None           # the CustomOpDef that made it (opaque to autograd)
        self._site = site
        self._generated = None
        self._vmap = None             # register_vmap's rule
        self.tags = []                # torch.Tag members given at definition
        self._autocast = {}           # register_autocast: device type -> the dtype of floating inputs
        self.__name__ = f"{name}.{self._overloadname}"

    def __repr__(self):
        return f"<OpOverload(op='{self._namespace}.{self._opname}', overload='{self._overloadname}')>"

    def __str__(self):
        return f"{self._namespace}.{self._opname}.{self._overloadname}"

    def name(self):
        return f"{self._namespace}::{self._opname}" + (f".{self._schema.overload_name}"
                                                       if self._schema.overload_name else "")

    @property
    def namespace(self):
        return self._namespace

    def _kernel_for(self, device):
        if device == "meta":
            kernel = self._kernels.get("meta") or self._fake
            if kernel is not None:
                return kernel
        disabled = self._custom._disabled if self._custom is not None else ()
        for key in (device, *_CATCH_ALL):
            if key in self._kernels and key not in disabled:
                return self._kernels[key]
        if self._custom is not None and self._custom._default_kernel is not None and \
                (self._custom._device_types is None or device in self._custom._device_types):
            return self._custom._default_kernel
        backends = sorted({k.upper() if k in _DEVICE_KEYS.values() else k for k in self._kernels} |
                          {d.upper() for d in (self._custom._device_types or ()) if self._custom is not None})
        raise NotImplementedError(
            f"Could not run '{self._namespace}::{self._opname}' with arguments from the '{device.upper()}' "
            f"backend. This could be because the operator doesn't exist for this backend. "
            f"'{self._namespace}::{self._opname}' is only available for these backends: {backends}.")

    def __call__(self, *args, **kwargs):
        from .autograd.grad_mode import is_grad_enabled
        args, kwargs = bind(self._schema, args, kwargs)
        if self._autocast and _autocast_on(self._autocast, args):
            return _call_autocast(self, args, kwargs)
        if self._vmap is not None and _active[0]:
            level = _batching_level(args)
            if level is not None and not (is_grad_enabled() and _any_requires_grad(args)):
                return _call_vmap_rule(self, level, args, kwargs)
        kernel = self._kernel_for(_device_of(args, kwargs))
        opaque = self._custom is not None or self._backward is not None
        if opaque and is_grad_enabled() and _any_requires_grad(args):
            result = self._apply_function(args, kwargs)
        elif opaque:
            from .autograd.grad_mode import no_grad
            with no_grad():
                result = kernel(*args, **kwargs)
        else:
            result = kernel(*args, **kwargs)
        if self._custom is not None:
            _check_no_alias(self._custom, args, result)
        for a, v in zip(self._schema.arguments, (*args, *kwargs.values())):
            if a.mutable:          # (torch counts the op's write of a declared mutable argument once more)
                for t in _tensors((v,)):
                    t._bump()
        return result

    def _apply_function(self, args, kwargs):
        """Call the op as its autograd.Function: tensor-list arguments travel flattened (one Function input per
        tensor, so each gets its gradient) and are rebuilt for the kernel, ``setup_context`` and ``backward``; a
        list of tensors returned is the Function's outputs, given back as a list."""
        flat, spec = [], []
        for a, v in zip((a for a in self._schema.arguments if not a.kwarg_only), args):
            if a.type in ("Tensor[]", "Tensor?[]"):
                flat.extend(v)
                spec.append(len(v))
            else:
                flat.append(v)
                spec.append(None)
        call = _Call(kwargs, spec)
        result = self._function().apply(*flat, call)
        return list(result) if call.list_out else result

    def _function(self):
        """The autograd.Function the op is while an input requires grad (made once per overload)."""
        if self._generated is None:
            from .autograd.function import Function
            op = self

            def forward(ctx, *flat):
                call = flat[-1]
                args, kwargs = call.rebuild(flat[:-1]), call.kwargs
                result = op._kernel_for(_device_of(args, kwargs))(*args, **kwargs)
                if op._setup_context is not None:
                    if any(a.kwarg_only for a in op._schema.arguments):
                        op._setup_context(ctx=ctx, inputs=args, keyword_only_inputs=kwargs, output=result)
                    else:
                        op._setup_context(ctx=ctx, inputs=args, output=result)
                if isinstance(result, list):
                    call.list_out = True
                    return tuple(result)
                return result

            def backward(ctx, *grads):
                if op._backward is None:
                    raise RuntimeError(f"Trying to backward through {op} but no autograd formula was registered. "
                                       "Please use register_autograd to add one.")
                call = ctx._call
                needs = ctx.needs_input_grad
                ctx.needs_input_grad = tuple(call.rebuild(needs[:-1]))
                try:
                    result = op._backward(ctx, *((list(grads),) if call.list_out else grads))
                finally:
                    ctx.needs_input_grad = needs
                result = result if isinstance(result, tuple) else (result,)
                flat = []
                for n, g in zip(call.spec, result):
                    if n is None:
                        flat.append(g)
                    else:
                        flat.extend(g if g is not None else [None] * n)
                return (*flat, None)

            name = f"GeneratedBackwardFor_{self._namespace}_{self._opname}_{self._overloadname}"
            self._generated = type(name, (Function,), {"forward": staticmethod(_keeping_call(forward)),
                                                       "backward": staticmethod(backward),
                                                       "_vmap_per_sample": True})   # (tapegrad's own Function)
        return self._generated


def _keeping_call(forward):
    """Forward that also keeps the call's description on ctx (backward rebuilds the lists from it)."""
    def run(ctx, *flat):
        ctx._call = flat[-1]
        return forward(ctx, *flat)
    return run


class _Call:
    """The keyword-only arguments and the shape of the tensor-list arguments of one call, carried through
    ``Function.apply`` as one non-tensor argument."""

    __slots__ = ("kwargs", "spec", "list_out")

    def __init__(self, kwargs, spec):
        self.kwargs, self.spec, self.list_out = kwargs, spec, False

    def rebuild(self, flat):
        """The arguments from their flat form (a list where the schema has a tensor list)."""
        args, i = [], 0
        for n in self.spec:
            if n is None:
                args.append(flat[i])
                i += 1
            else:
                args.append(list(flat[i:i + n]))
                i += n
        return tuple(args)


def _autocast_on(table, args):
    from .amp.autocast_mode import is_autocast_enabled
    return any(device in table and is_autocast_enabled(device) for device in {t.device.type for t in _tensors(args)})


def _call_autocast(op, args, kwargs):
    """Under autocast: the floating inputs (float64 aside, as autocast leaves it) cast to the registered dtype, and
    the op run with autocast off."""
    from .amp.autocast_mode import autocast
    from .tensor import Tensor
    device = _device_of(args, kwargs)
    dtype = op._autocast[device]

    def cast(v):
        if isinstance(v, Tensor) and v.is_floating_point() and v.dtype != _float64():
            return v.to(dtype)
        if isinstance(v, list):
            return [cast(t) for t in v]
        return v
    with autocast(device, enabled=False):
        return op(*(cast(a) for a in args), **{k: cast(v) for k, v in kwargs.items()})


def _float64():
    from ._dtype import float64
    return float64


class VmapInfo:
    """What a vmap rule is told about the vmap call: ``batch_size`` and ``randomness``."""

    def __init__(self, batch_size, randomness):
        self.batch_size, self.randomness = batch_size, randomness


def _batching_level(args):
    """The innermost active vmap level that batches one of ``args``, or None."""
    for level in reversed(active_interpreters()):
        if getattr(level, "batching", False) and any(level.physical(t) is not None for t in _tensors(args)):
            return level
    return None


def _call_vmap_rule(op, level, args, kwargs):
    """Run ``register_vmap``'s rule on the batch (each batched argument's physical tensor, batch dim 0) and make
    its outputs the level's logical tensors again."""
    from .tensor import Tensor
    physical = [level.physical(a) if isinstance(a, Tensor) else None for a in args]
    in_dims = tuple(None if p is None else 0 for p in physical)
    batch = [a if p is None else p for a, p in zip(args, physical)]
    out, out_dims = op._vmap(VmapInfo(level.size, level.randomness), in_dims, *batch, **kwargs)
    single = not isinstance(out, tuple)
    outs, dims = (out,) if single else out, (out_dims,) if single or isinstance(out_dims, int) or \
        out_dims is None else out_dims
    if len(dims) == 1 and len(outs) > 1:
        dims = dims * len(outs)
    res = tuple(level.wrap(o.movedim(d, 0) if d else o) if isinstance(o, Tensor) and d is not None else o
                for o, d in zip(outs, dims))
    return res[0] if single else res


def _tensors(values):
    from .tensor import Tensor
    for v in values:
        if isinstance(v, Tensor):
            yield v
        elif isinstance(v, (list, tuple)):
            yield from (t for t in v if isinstance(t, Tensor))


def _device_of(args, kwargs):
    for t in _tensors((*args, *kwargs.values())):
        return t.device.type
    return "cpu"


def _any_requires_grad(args):
    return any(t.requires_grad for t in _tensors(args))


def _check_no_alias(opdef, args, result):
    outs = list(_tensors(result if isinstance(result, (tuple, list)) else (result,)))
    ins = list(_tensors(args))
    for o in outs:
        if any(o is i or o._base is not None and (o._base is i or o._base is i._base) for i in ins):
            fn = opdef._default_kernel
            raise RuntimeError(
                f"{getattr(fn, '__name__', opdef._name)} (with implementation in {sys.modules[__name__]}): The "
                "output of this custom operator (1) must not also be an input to this custom operator and (2) may "
                "not alias any inputs to this custom operator or other returns. The most common way to trigger "
                "this error is if we have y = custom_op(x) and y and x are the same Tensor. Please instead return a "
                "clone of the offending output tensor(s) (e.g. return x.clone()) or refactor the custom operator to "
                "not return y.")


class OpOverloadPacket:
    """All overloads of one operator name (``torch.ops.mylib.f``); calling it calls the one that fits."""

    def __init__(self, ns, name):
        self._namespace, self._opname = ns, name
        self._qualified_op_name = f"{ns}::{name}"
        self._overloads = {}
        self.__name__ = name

    def __repr__(self):
        return f"<OpOverloadPacket(op='{self._namespace}.{self._opname}')>"

    def __str__(self):
        return f"{self._namespace}.{self._opname}"

    def overloads(self):
        return list(self._overloads)

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        try:
            return self._overloads[name]
        except KeyError:
            raise AttributeError(f"The underlying op of '{self}' has no overload name '{name}'") from None

    def __call__(self, *args, **kwargs):
        last = None
        for op in self._overloads.values():
            try:
                bind(op._schema, args, kwargs)
            except RuntimeError as e:
                last = e
                continue
            return op(*args, **kwargs)
        if len(self._overloads) == 1 and last is not None:
            raise last
        raise RuntimeError(f"{self._qualified_op_name}() Expected one of the overloads "
                           f"{[str(op._schema) for op in self._overloads.values()]} to fit the arguments")


class _OpNamespace:
    """``torch.ops.<ns>``: the operators defined in a namespace."""

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"_OpNamespace({self.name!r})"

    def __getattr__(self, op_name):
        if op_name.startswith("__"):
            raise AttributeError(op_name)
        packet = _PACKETS.get(f"{self.name}::{op_name}")
        if packet is None:
            raise AttributeError(f"'_OpNamespace' '{self.name}' object has no attribute '{op_name}'")
        return packet


_PENDING = {}        # ("ns::name", overload) -> {key: kernel}: impl before define (torch allows either order)


def _define(qualname, schema_text, site, lib=None, tags=()):
    """Add one overload (``schema_text`` without the name, or with it); returns the OpOverload."""
    ns, name = _split_qualname(qualname)
    name, _, overload = name.partition(".")
    packet = _PACKETS.setdefault(f"{ns}::{name}", OpOverloadPacket(ns, name))
    key = overload or "default"
    if key in packet._overloads:
        old = packet._overloads[key]
        raise RuntimeError(f"Tried to register an operator ({old._schema}) with the same name and overload name "
                           "multiple times. Each overload's schema should only be registered with a single call to "
                           f"def(). Duplicate registration: registered at {site}. Original registration: registered "
                           f"at {old._site}")
    op = packet._overloads[key] = OpOverload(ns, name, overload, schema_text, site)
    op.tags = [tags] if not isinstance(tags, (list, tuple)) else list(tags)
    op._kernels.update(_PENDING.pop((f"{ns}::{name}", key), {}))
    if lib is not None:
        lib._ops.append(op)
    return op


def _remove(op):
    packet = _PACKETS.get(f"{op._namespace}::{op._opname}")
    if packet is not None and packet._overloads.get(op._overloadname) is op:
        del packet._overloads[op._overloadname]
        if not packet._overloads:
            del _PACKETS[f"{op._namespace}::{op._opname}"]


def _caller_site(depth=2):
    frame = sys._getframe(depth)
    return f"{frame.f_code.co_filename}:{frame.f_lineno}"


def _lookup(qualname_or_op):
    """An OpOverload from ``"ns::name[.overload]"``, an OpOverload, a packet or a CustomOpDef."""
    if isinstance(qualname_or_op, CustomOpDef):
        return qualname_or_op._opoverload
    if isinstance(qualname_or_op, OpOverload):
        return qualname_or_op
    if isinstance(qualname_or_op, OpOverloadPacket):
        return qualname_or_op._overloads["default"]
    if not isinstance(qualname_or_op, str):
        raise ValueError(f"register_*(op): got unexpected type for op: {type(qualname_or_op)}")
    ns, name = _split_qualname(qualname_or_op)
    name, _, overload = name.partition(".")
    packet = _PACKETS.get(f"{ns}::{name}")
    op = packet and packet._overloads.get(overload or "default")
    if op is None:
        raise ValueError(f"could not find the operator {qualname_or_op}")
    return op


class Library:
    """``torch.library.Library(ns, kind, dispatch_key="")``: ``kind`` "DEF" owns a namespace (one at a time),
    "FRAGMENT" adds to one, "IMPL" only registers kernels."""

    def __init__(self, ns, kind, dispatch_key=""):
        if kind not in ("IMPL", "DEF", "FRAGMENT"):
            raise ValueError(f"Unsupported kind: {kind}")
        if kind == "DEF":
            owner = _DEFINED_NS.get(ns)
            if owner is not None and owner() is not None and not owner()._destroyed:
                raise RuntimeError(
                    f"Only a single TORCH_LIBRARY can be used to register the namespace {ns}; please put all of "
                    "your definitions in a single TORCH_LIBRARY block.  If you were trying to specify "
                    "implementations, consider using TORCH_LIBRARY_IMPL (which can be duplicated).  If you really "
                    "intended to define operators for a single namespace in a distributed way, you can use "
                    "TORCH_LIBRARY_FRAGMENT to explicitly indicate this.")
            _DEFINED_NS[ns] = weakref.ref(self)
        self.ns, self.kind, self.dispatch_key = ns, kind, dispatch_key
        self._ops, self._kernels, self._destroyed = [], [], False

    def __repr__(self):
        return f"Library(kind={self.kind}, ns={self.ns}, dispatch_key={self.dispatch_key})>"

    def define(self, schema, alias_analysis="", *, tags=()):
        """Declare an operator from its schema text (``"f(Tensor x, float k=1.0) -> Tensor"``); returns its
        name."""
        name = schema[:schema.index("(")].strip()
        _define(f"{self.ns}::{name}", schema, _caller_site(), lib=self, tags=tags)
        return name.partition(".")[0]

    def impl(self, op_name, fn, dispatch_key="", *, with_keyset=False, allow_override=False):
        """Register ``fn`` as the kernel of ``op_name`` for ``dispatch_key`` ("CPU", "Meta",
        "CompositeExplicitAutograd", ...; default the library's)."""
        if not callable(fn):
            raise TypeError(f"Input function is required to be a callable but found type {type(fn)}")
        key = dispatch_key or self.dispatch_key
        key = _DEVICE_KEYS.get(key, key)
        if with_keyset:
            kernel = fn

            def fn(*args, **kwargs):
                return kernel(None, *args, **kwargs)
        if isinstance(op_name, (OpOverload, OpOverloadPacket)):
            op = _lookup(op_name)
        else:
            name, _, overload = op_name.partition(".")
            packet = _PACKETS.get(f"{self.ns}::{name}")
            op = packet and packet._overloads.get(overload or "default")
            if op is None:      # (defined later: the kernel waits for its schema)
                _PENDING.setdefault((f"{self.ns}::{name}", overload or "default"), {})[key] = fn
                return
        op._kernels[key] = fn
        self._kernels.append((op, key))

    def _destroy(self):
        for op, key in self._kernels:
            op._kernels.pop(key, None)
        for op in self._ops:
            _remove(op)
        self._ops, self._kernels, self._destroyed = [], [], True


def define(qualname, schema, *, lib=None, tags=()):
    """``torch.library.define("ns::name", "(Tensor x) -> Tensor")``."""
    ns, name = _split_qualname(qualname)
    _define(qualname, name + schema if schema.startswith("(") else schema, _caller_site(), tags=tags)


def impl(qualname, types, func=None, *, lib=None):
    """``torch.library.impl("ns::name", "cpu")`` as a decorator (or with ``func``); the older form
    ``impl(lib, "name", "CPU")`` too."""
    if isinstance(qualname, Library):
        lib, name, key = qualname, types, func or ""

        def register_on_lib(fn):
            lib.impl(name, fn, key)
            return fn
        return register_on_lib
    op = _lookup(qualname)

    def register(fn):
        for t in ([types] if isinstance(types, str) else types):
            op._kernels[_DEVICE_KEYS.get(t, t)] = fn
        return fn
    return register if func is None else register(func)


def fallthrough_kernel():
    """A kernel that only passes the call on (torch registers it to skip a dispatch key)."""
    raise NotImplementedError("fallthrough_kernel() should never be called.")


class CustomOpDef:
    """What ``@custom_op`` returns: call it like the function; register its fake kernel, its autograd formula and
    its kernels per device on it."""

    def __init__(self, namespace, name, schema, fn, device_types):
        self._namespace, self._name, self._schema = namespace, name, schema
        self._default_kernel, self._device_types = fn, device_types
        self._disabled = set()        # device types whose register_kernel kernel set_kernel_enabled turned off
        self._opoverload = _define(f"{namespace}::{name}", name + schema, _caller_site(3))
        self._opoverload._custom = self
        self.__name__ = name
        self.__doc__ = fn.__doc__ if fn is not None else None

    def __repr__(self):
        return f"<CustomOpDef({self._namespace}::{self._name})>"

    def __call__(self, *args, **kwargs):
        return self._opoverload(*args, **kwargs)

    def register_fake(self, fn, /):
        """The kernel for meta tensors (shapes and dtypes only)."""
        self._opoverload._fake = fn
        return fn

    def register_autograd(self, backward, /, *, setup_context=None):
        """``backward(ctx, *grads)`` gives one gradient per positional input; ``setup_context(ctx, inputs,
        output)`` saves what it needs."""
        if not callable(backward):
            raise TypeError(f"Expected backward to be a function, got {type(backward)}")
        self._opoverload._backward, self._opoverload._setup_context = backward, setup_context

    def register_kernel(self, device_types, fn=None, /):
        """The kernel for ``device_types`` ("cpu", "cuda"...; None: every device)."""
        def register(func):
            for d in ([device_types] if device_types is None or isinstance(device_types, str) else device_types):
                self._opoverload._kernels[d if d is not None else "CompositeExplicitAutograd"] = func
            return func
        return register if fn is None else register(fn)

    @contextlib.contextmanager
    def set_kernel_enabled(self, device_type, enabled=True):
        """Within the block, the kernel ``register_kernel`` gave ``device_type`` is off (``enabled=False``: the
        op's own function runs) or on; torch's log warnings for a change that changes nothing."""
        if device_type not in self._opoverload._kernels:
            _log.warning("Attempted to %s kernel for %s but no kernel was registered for this device type.",
                         "enable" if enabled else "disable", device_type)
            yield
            return
        was_enabled = device_type not in self._disabled
        if was_enabled == bool(enabled):
            if enabled:
                _log.warning("Attempted to enable kernel for  %s but it was already enabled.", device_type)
            else:
                _log.warning("Attempted to disable kernel for %s but it was already disabled.", device_type)
        (self._disabled.discard if enabled else self._disabled.add)(device_type)
        try:
            yield
        finally:
            (self._disabled.discard if was_enabled else self._disabled.add)(device_type)

    def register_vmap(self, func=None, /):
        """See ``tapegrad.library.register_vmap``."""
        return register_vmap(self._opoverload, func)

    def _destroy(self):
        _remove(self._opoverload)


def custom_op(name, fn=None, /, *, mutates_args, device_types=None, schema=None, tags=None):
    """``torch.library.custom_op("ns::name", mutates_args=())``: make ``fn`` an operator opaque to autograd and
    the compiler (see the module's docstring). Its schema comes from its type annotations unless ``schema`` is
    given."""
    def inner(func):
        ns, opname = _split_qualname(name)
        text = schema if schema is not None else infer_schema(func, mutates_args=mutates_args)
        existing = _PACKETS.get(f"{ns}::{opname}")
        if existing is not None and "default" in existing._overloads:
            _remove(existing._overloads["default"])      # (torch replaces a custom op defined again)
        types = None if device_types is None else (
            [device_types] if isinstance(device_types, str) else list(device_types))
        opdef = CustomOpDef(ns, opname, text, func, types)
        opdef._opoverload.tags = [] if tags is None else [tags] if not isinstance(tags, (list, tuple)) \
            else list(tags)
        return opdef
    return inner if fn is None else inner(fn)


def register_fake(op, func=None, /, *, lib=None, _stacklevel=1):
    """The fake (meta) kernel of ``op`` ("ns::name" or the op)."""
    overload = _lookup(op)

    def register(fn):
        overload._fake = fn
        return fn
    return register if func is None else register(func)


impl_abstract = register_fake


def register_autograd(op, backward, /, *, setup_context=None, lib=None):
    """The backward formula of ``op`` ("ns::name" or the op); see ``CustomOpDef.register_autograd``."""
    overload = _lookup(op)
    if not callable(backward):
        raise TypeError(f"Expected backward to be a function, got {type(backward)}")
    overload._backward, overload._setup_context = backward, setup_context


def register_kernel(op, device_types, func=None, /, *, lib=None):
    """The kernel of ``op`` for ``device_types``."""
    overload = _lookup(op)

    def register(fn):
        for d in ([device_types] if device_types is None or isinstance(device_types, str) else device_types):
            overload._kernels[_DEVICE_KEYS.get(d, d) if d is not None else "CompositeExplicitAutograd"] = fn
        return fn
    return register if func is None else register(func)


def register_vmap(op, func=None, /, *, lib=None):
    """The vmap rule of ``op``: ``func(info, in_dims, *args, **kwargs)`` gets the batched arguments (each
    batched tensor with its batch dim at ``in_dims[i]``, None for the others) and returns ``(output, out_dims)``.
    tapegrad uses it while no input requires grad (otherwise vmap runs the op once per sample)."""
    overload = _lookup(op)

    def register(fn):
        overload._vmap = fn
        return fn
    return register if func is None else register(func)


def register_autocast(op, device_type, cast_inputs, /, *, lib=None):
    """Under ``autocast`` on ``device_type``, call ``op`` with its floating inputs cast to ``cast_inputs`` (float64
    ones kept) and autocast off."""
    _lookup(op)._autocast[device_type] = cast_inputs


def get_ctx():
    """torch's context of a fake kernel for data-dependent output sizes; tapegrad's fake kernels run on meta
    tensors outside any tracer, so there is none."""
    raise RuntimeError("torch.library.get_ctx() called outside of a fake kernel (tapegrad runs fake kernels only "
                       "on meta tensors, with no tracing context)")


def opcheck(op, args, kwargs=None, *, test_utils=None, raise_exception=True, rtol=None, atol=None):
    """Check a custom operator's registrations (``library_check.py``)."""
    from ._library_check import opcheck as run
    return run(op, args, kwargs, test_utils=test_utils, raise_exception=raise_exception, rtol=rtol, atol=atol)

