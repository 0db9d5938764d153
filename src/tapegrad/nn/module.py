# ruff: noqa: A001, A002 - torch's argument name (input)
"""``Module``: the base of every layer, with PyTorch's registration, traversal, state-dict and hook semantics.

>>> class Net(tapegrad.nn.Module):
...     def __init__(self):
...         super().__init__()
...         self.fc = tapegrad.nn.Linear(2, 1)
...     def forward(self, x):
...         return self.fc(x)
>>> [n for n, _ in Net().named_parameters()]
['fc.weight', 'fc.bias']
"""

from __future__ import annotations

import functools
import itertools
import warnings
from collections import OrderedDict, namedtuple

from .. import _dtype
from ..autograd.function import Function
from ..autograd.grad_mode import no_grad
from ..tensor import Tensor, _check_device, _not_built
from .parameter import Buffer, Parameter, is_lazy

__all__ = ["Module", "RemovableHandle", "register_module_forward_hook", "register_module_forward_pre_hook"]


def _typename(obj):
    if isinstance(obj, Tensor):
        return f"tapegrad.{obj.dtype._legacy}Tensor"
    return type(obj).__name__


def _addindent(s_, num_spaces):
    s = s_.split("\n")
    if len(s) == 1:
        return s_
    first = s.pop(0)
    s = [(num_spaces * " ") + line if line.strip() else "" for line in s]  # blank lines stay empty, as torch
    return first + "\n" + "\n".join(s)


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    __slots__ = ()

    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


class RemovableHandle:
    """What ``register_*_hook`` returns: ``handle.remove()`` takes the hook out (also a context manager)."""

    _next_id = itertools.count()

    def __init__(self, *hooks_dicts):
        self.hooks_dicts = hooks_dicts
        self.id = next(RemovableHandle._next_id)

    def remove(self):
        for d in self.hooks_dicts:
            d.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


_global_forward_hooks: OrderedDict = OrderedDict()
_global_forward_pre_hooks: OrderedDict = OrderedDict()


def register_module_forward_pre_hook(hook):
    """A forward pre-hook run for every module (``hook(module, args)``)."""
    h = RemovableHandle(_global_forward_pre_hooks)
    _global_forward_pre_hooks[h.id] = hook
    return h


def register_module_forward_hook(hook):
    """A forward hook run for every module (``hook(module, args, output)``)."""
    h = RemovableHandle(_global_forward_hooks)
    _global_forward_hooks[h.id] = hook
    return h


class BackwardHookFunction(Function):
    """Identity on the tensors it is given; its backward runs a module's full backward (pre-)hooks."""

    @staticmethod
    def forward(ctx, *args):
        return args

    @staticmethod
    def backward(ctx, *grads):
        return ctx.hook_fn(grads)


class _BackwardHook:
    """Runs ``register_full_backward_pre_hook`` / ``register_full_backward_hook`` hooks for one module call."""

    def __init__(self, module, user_hooks, user_pre_hooks):
        self.module = module
        self.user_hooks = user_hooks
        self.user_pre_hooks = user_pre_hooks
        self.grad_outputs = None
        self.n_inputs = 0
        self.inputs_need_grad = False

    @staticmethod
    def _pack(values, hook_fn):
        """Route the tensors of ``values`` that require grad through one BackwardHookFunction.

        ``hook_fn`` gets a tuple with one gradient per tensor of ``values`` (None where none flows) and returns
        the same.
        """
        idx = [i for i, a in enumerate(values) if isinstance(a, Tensor)]
        live = [i for i in idx if values[i].requires_grad]
        if not live:
            return values, idx
        pos = {i: k for k, i in enumerate(idx)}

        def node_fn(grads):
            full = [None] * len(idx)
            for i, g in zip(live, grads):
                full[pos[i]] = g
            new = hook_fn(tuple(full))
            return tuple(new[pos[i]] for i in live)

        out = BackwardHookFunction.apply(*[values[i] for i in live])
        out[0].grad_fn.hook_fn = node_fn
        values = list(values)
        for i, t in zip(live, out):
            values[i] = t
        return tuple(values), idx

    @staticmethod
    def _run(hooks, call, res, what):
        for hook in hooks:
            out = call(hook, res)
            if out is not None:
                out = tuple(out) if isinstance(out, (tuple, list)) else (out,)
                if len(out) != len(res):
                    raise RuntimeError(f"Backward {what} returned an invalid number of grad_"
                                       f"{'input' if what == 'hook' else 'output'}, got {len(out)}, but expected "
                                       f"{len(res)}")
                res = out
        return res

    def setup_input_hook(self, args):
        self.inputs_need_grad = any(isinstance(a, Tensor) and a.requires_grad for a in args)
        self.n_inputs = sum(isinstance(a, Tensor) for a in args)
        if not self.user_hooks:
            return args

        def fn(grad_inputs):
            res = self._run(self.user_hooks, lambda h, r: h(self.module, r, self.grad_outputs), grad_inputs,
                            "hook")
            self.grad_outputs = None
            return res
        return self._pack(args, fn)[0]

    def setup_output_hook(self, output):
        def fn(grad_outputs):
            res = self._run(self.user_pre_hooks, lambda h, r: h(self.module, r), grad_outputs, "pre hook")
            self.grad_outputs = res
            if self.user_hooks and not self.inputs_need_grad:
                warnings.warn("Full backward hook is firing when gradients are computed with respect to module "
                              "outputs since no inputs require gradients. See https://docs.pytorch.org/docs/main/"
                              "generated/torch.nn.Module.html#torch.nn.Module.register_full_backward_hook for more "
                              "details.", stacklevel=2)
                grad_inputs = (None,) * self.n_inputs
                for hook in self.user_hooks:
                    r = hook(self.module, grad_inputs, res)
                    if r is not None and not all(g is None for g in (r if isinstance(r, tuple) else (r,))):
                        raise RuntimeError("Backward hook for Modules where no input requires gradient should "
                                           "always return None or None for all gradients.")
                self.grad_outputs = None
            return res
        single = isinstance(output, Tensor)
        outs = (output,) if single else output
        if not isinstance(outs, tuple):
            return output
        new = self._pack(outs, fn)[0]
        return new[0] if single else new


def _placing(init):
    """``init`` run under ``with tapegrad.device("meta"):`` when it is given ``device="meta"``."""
    def __init__(self, *args, **kwargs):
        d = kwargs.get("device")
        if d is None or getattr(d, "type", d) != "meta":
            return init(self, *args, **kwargs)
        from ..tensor import device
        with device("meta"):
            return init(self, *args, **kwargs)
    functools.update_wrapper(__init__, init)
    return __init__


class Module:
    """Base class for all neural network modules; subclasses set layers as attributes and define ``forward``.

    >>> m = tapegrad.nn.Sequential(tapegrad.nn.Linear(4, 2), tapegrad.nn.ReLU())
    >>> m(tapegrad.ones(1, 4)).shape
    tapegrad.Size([1, 2])
    """

    training: bool
    _version = 1
    dump_patches = False
    call_super_init = False

    def __init_subclass__(cls, **kwargs):
        """A module whose ``__init__`` takes torch's ``device=`` builds on the meta device when given it (its
        parameters and buffers made there, as torch's ``factory_kwargs`` do)."""
        super().__init_subclass__(**kwargs)
        init = cls.__dict__.get("__init__")
        code = getattr(init, "__code__", None)
        if code is not None and "device" in code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]:
            cls.__init__ = _placing(init)

    def __init__(self, *args, **kwargs):
        if kwargs:
            raise TypeError(f"{type(self).__name__}.__init__() got an unexpected keyword argument "
                            f"'{next(iter(kwargs))}'")
        if args:
            raise TypeError(f"{type(self).__name__}.__init__() takes 1 positional argument but {len(args) + 1} "
                            "were given")
        d = self.__dict__
        d["training"] = True
        d["_parameters"] = {}
        d["_buffers"] = {}
        d["_non_persistent_buffers_set"] = set()
        d["_modules"] = {}
        d["_forward_hooks"] = OrderedDict()
        d["_forward_hooks_with_kwargs"] = {}
        d["_forward_hooks_always_called"] = {}
        d["_forward_pre_hooks"] = OrderedDict()
        d["_forward_pre_hooks_with_kwargs"] = {}
        d["_backward_hooks"] = OrderedDict()
        d["_backward_pre_hooks"] = OrderedDict()
        d["_state_dict_hooks"] = OrderedDict()
        d["_state_dict_pre_hooks"] = OrderedDict()
        d["_load_state_dict_pre_hooks"] = OrderedDict()
        d["_load_state_dict_post_hooks"] = OrderedDict()

    def forward(self, *input):
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required "forward" function')

    # --- registration ------------------------------------------------------------------------------------
    def register_buffer(self, name: str, tensor, persistent: bool = True) -> None:
        """Add a tensor that is state but not a parameter (running statistics); in ``state_dict`` if persistent."""
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"buffer name should be a string. Got {type(name).__name__}")
        if "." in name:
            raise KeyError('buffer name can\'t contain "."')
        if name == "":
            raise KeyError('buffer name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{_typename(tensor)}' object to buffer '{name}' (tapegrad Tensor or None "
                            "required)")
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def register_parameter(self, name: str, param) -> None:
        """Add a parameter (``None`` registers the name with no value, as ``bias=False`` does)."""
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"parameter name should be a string. Got {type(name).__name__}")
        if "." in name:
            raise KeyError('parameter name can\'t contain "."')
        if name == "":
            raise KeyError('parameter name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute '{name}' already exists")
        if param is None:
            self._parameters[name] = None
        elif not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{_typename(param)}' object to parameter '{name}' (tapegrad.nn.Parameter "
                            "or None required)")
        elif param.grad_fn is not None:
            raise ValueError(f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters must be "
                             "created explicitly. To express '" + name + "' as a function of another Tensor, "
                             "compute the value in the forward() method.")
        else:
            self._parameters[name] = param

    def add_module(self, name: str, module) -> None:
        """Add a child module, reachable as an attribute ``name``."""
        if not isinstance(module, Module) and module is not None:
            raise TypeError(f"{_typename(module)} is not a Module subclass")
        if not isinstance(name, str):
            raise TypeError(f"module name should be a string. Got {type(name).__name__}")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        if "." in name:
            raise KeyError(f'module name can\'t contain ".", got: {name}')
        if name == "":
            raise KeyError('module name can\'t be empty string ""')
        self._modules[name] = module

    register_module = add_module

    def get_submodule(self, target: str) -> Module:
        """The submodule at dotted path ``target`` (``"encoder.layers.0"``)."""
        if target == "":
            return self
        mod = self
        for item in target.split("."):
            if not hasattr(mod, item):
                raise AttributeError(mod._get_name() + " has no attribute `" + item + "`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError("`" + item + "` is not an nn.Module")
        return mod

    def set_submodule(self, target: str, module, strict: bool = False) -> None:
        """Put ``module`` at dotted path ``target`` (its parent must exist; with ``strict``, the name too)."""
        if target == "":
            raise ValueError("Cannot set the submodule without a target name!")
        atoms = target.split(".")
        if not isinstance(module, Module):
            raise ValueError("`module` is not an nn.Module, found " + str(type(module)))
        parent = self if len(atoms) == 1 else self.get_submodule(".".join(atoms[:-1]))
        if strict and not hasattr(parent, atoms[-1]):
            raise AttributeError(parent._get_name() + " has no attribute `" + atoms[-1] + "`")
        if hasattr(parent, atoms[-1]) and not isinstance(getattr(parent, atoms[-1]), Module):
            raise AttributeError("`" + atoms[-1] + "` is not an nn.Module")
        setattr(parent, atoms[-1], module)

    def get_parameter(self, target: str) -> Parameter:
        """The parameter at dotted path ``target`` (``"fc.weight"``)."""
        module_path, _, param_name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, param_name):
            raise AttributeError(mod._get_name() + " has no attribute `" + param_name + "`")
        param = getattr(mod, param_name)
        if not isinstance(param, Parameter):
            raise AttributeError("`" + param_name + "` is not an nn.Parameter")
        return param

    def get_buffer(self, target: str) -> Tensor:
        """The buffer at dotted path ``target``."""
        module_path, _, buffer_name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, buffer_name):
            raise AttributeError(mod._get_name() + " has no attribute `" + buffer_name + "`")
        if buffer_name not in mod._buffers:
            raise AttributeError("`" + buffer_name + "` is not a buffer")
        return getattr(mod, buffer_name)

    # --- attribute protocol ------------------------------------------------------------------------------
    def __getattr__(self, name: str):
        d = self.__dict__
        if "_parameters" in d:
            p = d["_parameters"]
            if name in p:
                return p[name]
        if "_buffers" in d:
            b = d["_buffers"]
            if name in b:
                return b[name]
        if "_modules" in d:
            m = d["_modules"]
            if name in m:
                return m[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name: str, value) -> None:
        def remove_from(*dicts_or_sets):
            for d in dicts_or_sets:
                if name in d:
                    if isinstance(d, dict):
                        del d[name]
                    else:
                        d.discard(name)

        params = self.__dict__.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            remove_from(self.__dict__, self._buffers, self._modules, self._non_persistent_buffers_set)
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as parameter '{name}' (tapegrad.nn.Parameter or "
                                "None expected)")
            self.register_parameter(name, value)
        else:
            modules = self.__dict__.get("_modules")
            if isinstance(value, Module):
                if modules is None:
                    raise AttributeError("cannot assign module before Module.__init__() call")
                remove_from(self.__dict__, self._parameters, self._buffers, self._non_persistent_buffers_set)
                modules[name] = value
            elif modules is not None and name in modules:
                if value is not None:
                    raise TypeError(f"cannot assign '{_typename(value)}' as child module '{name}' (tapegrad.nn.Module "
                                    "or None expected)")
                modules[name] = value
            else:
                buffers = self.__dict__.get("_buffers")
                if isinstance(value, Buffer) or (buffers is not None and name in buffers):
                    if buffers is None:
                        raise AttributeError("cannot assign buffer before Module.__init__() call")
                    if isinstance(value, Buffer):
                        persistent, value = value.persistent, value.data
                    else:
                        persistent = name not in self._non_persistent_buffers_set
                    if value is not None and not isinstance(value, Tensor):
                        raise TypeError(f"cannot assign '{_typename(value)}' as buffer '{name}' (tapegrad.nn.Buffer, "
                                        "tapegrad.Tensor or None expected)")
                    remove_from(self.__dict__, self._parameters, self._modules)
                    buffers[name] = value
                    if persistent:
                        self._non_persistent_buffers_set.discard(name)
                    else:
                        self._non_persistent_buffers_set.add(name)
                else:
                    object.__setattr__(self, name, value)

    def __delattr__(self, name):
        if name in self._parameters:
            del self._parameters[name]
        elif name in self._buffers:
            del self._buffers[name]
            self._non_persistent_buffers_set.discard(name)
        elif name in self._modules:
            del self._modules[name]
        else:
            object.__delattr__(self, name)

    def __dir__(self):
        module_attrs = dir(self.__class__)
        attrs = list(self.__dict__.keys())
        parameters = list(self._parameters.keys())
        modules = list(self._modules.keys())
        buffers = list(self._buffers.keys())
        keys = module_attrs + attrs + parameters + modules + buffers
        keys = [key for key in keys if not key[0].isdigit()]
        return sorted(keys)

    def __setstate__(self, state):
        self.__dict__.update(state)

    # --- traversal -----------------------------------------------------------------------------------------
    def _named_members(self, get_members_fn, prefix="", recurse=True, remove_duplicate=True):
        memo = set()
        modules = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) if recurse else \
            [(prefix, self)]
        for module_prefix, module in modules:
            for k, v in get_members_fn(module):
                if v is None or v in memo:
                    continue
                if remove_duplicate:
                    memo.add(v)
                yield module_prefix + ("." if module_prefix else "") + k, v

    def parameters(self, recurse: bool = True):
        """Iterate over the parameters (each shared parameter once)."""
        for _, param in self.named_parameters(recurse=recurse):
            yield param

    def named_parameters(self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True):
        """Iterate over ``(name, parameter)`` pairs: ``("fc.weight", Parameter)``."""
        yield from self._named_members(lambda m: m._parameters.items(), prefix=prefix, recurse=recurse,
                                       remove_duplicate=remove_duplicate)

    def buffers(self, recurse: bool = True):
        """Iterate over the buffers."""
        for _, buf in self.named_buffers(recurse=recurse):
            yield buf

    def named_buffers(self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True):
        """Iterate over ``(name, buffer)`` pairs."""
        yield from self._named_members(lambda m: m._buffers.items(), prefix=prefix, recurse=recurse,
                                       remove_duplicate=remove_duplicate)

    def children(self):
        """Iterate over the immediate child modules."""
        for _, module in self.named_children():
            yield module

    def named_children(self):
        """Iterate over ``(name, module)`` for the immediate children."""
        memo = set()
        for name, module in self._modules.items():
            if module is not None and module not in memo:
                memo.add(module)
                yield name, module

    def modules(self):
        """Iterate over all modules of the tree, this one first."""
        for _, module in self.named_modules():
            yield module

    def named_modules(self, memo=None, prefix: str = "", remove_duplicate: bool = True):
        """Iterate over ``(dotted name, module)`` for the whole tree, this one first (named ``""``)."""
        if memo is None:
            memo = set()
        if self not in memo:
            if remove_duplicate:
                memo.add(self)
            yield prefix, self
            for name, module in self._modules.items():
                if module is None:
                    continue
                yield from module.named_modules(memo, prefix + ("." if prefix else "") + name, remove_duplicate)

    # --- modes, freezing, gradients --------------------------------------------------------------------
    def train(self, mode: bool = True):
        """Set training mode (Dropout active, BatchNorm uses batch statistics) here and in all children."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self):
        """Set evaluation mode (``train(False)``)."""
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True):
        """Set ``requires_grad`` of every parameter (``requires_grad_(False)`` freezes the module)."""
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of all parameters (to None by default, or to zeros)."""
        for p in self.parameters():
            if p.grad is not None:
                if set_to_none:
                    p.grad = None
                else:
                    g = p.grad
                    if g.grad_fn is not None:
                        g.detach_()
                    else:
                        g.requires_grad_(False)
                    g.zero_()

    def share_memory(self):
        """Move every parameter and buffer (and gradient) into shared memory (``Tensor.share_memory_``): processes
        this module is sent to through ``tapegrad.multiprocessing`` then train the same numbers (Hogwild)."""
        from .._shared import share
        for t in [*self.parameters(), *self.buffers()]:
            if is_lazy(t):
                t.share_memory_()         # (torch's error for an uninitialized parameter or buffer)
        grads = [p.grad for p in self.parameters() if p.grad is not None]
        share([*self.parameters(), *self.buffers(), *grads])     # (one walk over the tensors for all of them)
        return self

    # --- conversions ---------------------------------------------------------------------------------------
    def _apply(self, fn, recurse=True):
        if recurse:
            for module in self.children():
                module._apply(fn)
        for param in self._parameters.values():
            if param is None:
                continue
            with no_grad():
                param_applied = fn(param)
            if param_applied is not param:
                param._array = param_applied._array
                param._vc[0] += 1
            if param.grad is not None:
                with no_grad():
                    grad_applied = fn(param.grad)
                if grad_applied is not param.grad:
                    param._grad = grad_applied
        for key, buf in self._buffers.items():
            if is_lazy(buf):            # (a lazy module's placeholder stays one: it takes the new array, as a param)
                buf._array = fn(buf)._array
            elif buf is not None:
                self._buffers[key] = fn(buf)
        return self

    def apply(self, fn):
        """Call ``fn(module)`` on every child (recursively) and then on this module; returns self.

        >>> net.apply(lambda m: tapegrad.nn.init.zeros_(m.bias) if isinstance(m, tapegrad.nn.Linear) else None)
        """
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    def to(self, *args, **kwargs):
        """Cast floating-point parameters and buffers: ``m.to(tapegrad.float64)``, ``m.to("cpu")``."""
        given = dict(kwargs)
        dtype = kwargs.pop("dtype", None)
        device = kwargs.pop("device", None)
        kwargs.pop("non_blocking", None)
        memory_format = kwargs.pop("memory_format", None)
        if "copy" in kwargs:
            raise RuntimeError(".to() does not accept copy argument")
        if kwargs:
            from ..ops.elementwise.copies import to_arguments_error
            raise to_arguments_error(args, given)
        for a in args:
            if isinstance(a, Tensor):
                dtype = a.dtype
            elif isinstance(a, _dtype.dtype):
                dtype = a
            elif isinstance(a, bool):
                continue
            else:
                device = a
        if device is not None and _check_device(device, default=False) is not self._on_meta():
            if self._on_meta():
                from .._meta import NO_DATA
                raise NotImplementedError(f"{NO_DATA} Please use torch.nn.Module.to_empty() instead of "
                                          "torch.nn.Module.to() when moving module from meta to a different device.")
            self._apply(lambda t: t.to(device))        # (to the meta device: shapes and dtypes kept)
        if memory_format is not None:     # (as torch: 4-d and 5-d parameters and buffers take the layout)
            self._apply(lambda t: t.contiguous(memory_format=memory_format) if t.dim() in (4, 5) else t)
        if dtype is None:
            return self
        dtype = _dtype.to_dtype(dtype)
        if not (dtype.is_floating_point or dtype.is_complex):
            raise TypeError(f"nn.Module.to only accepts floating point or complex dtypes, but got desired dtype="
                            f"{dtype}")

        def convert(t):
            if t.is_floating_point() or t.is_complex():
                return t.to(dtype)
            return t
        return self._apply(convert)

    def _on_meta(self):
        """Whether the first parameter or buffer is on the meta device (False for a module without any)."""
        for t in self._apply_targets():
            return t.is_meta
        return False

    def _apply_targets(self):
        for m in self.modules():
            yield from (p for p in m._parameters.values() if p is not None)
            yield from (b for b in m._buffers.values() if b is not None and not is_lazy(b))

    def _cast_float(self, dt):
        return self._apply(lambda t: t.to(dt) if t.is_floating_point() else t)

    def float(self):
        """Cast floating-point parameters and buffers to float32."""
        return self._cast_float(_dtype.float32)

    def double(self):
        """Cast floating-point parameters and buffers to float64."""
        return self._cast_float(_dtype.float64)

    def half(self):
        """Cast floating-point parameters and buffers to float16."""
        return self._cast_float(_dtype.float16)

    def bfloat16(self):
        return self._cast_float(_dtype.bfloat16)

    def type(self, dst_type):
        return self._apply(lambda t: t.type(dst_type))

    def cpu(self):
        return self

    def _no_device(name):
        def move(self, device=None):
            raise _not_built(name)           # a CPU-only torch build's own error
        move.__name__ = name
        return move

    cuda = _no_device("cuda")

    xpu, ipu, mtia = _no_device("xpu"), _no_device("ipu"), _no_device("mtia")
    del _no_device

    def to_empty(self, *, device, recurse=True):
        """Parameters and buffers replaced by uninitialised ones of the same shapes (on ``device``: the CPU)."""
        from .. import empty_like
        return self._apply(lambda t: empty_like(t, device=device), recurse=recurse)

    # --- state dict ----------------------------------------------------------------------------------------
    def get_extra_state(self):
        """Override (with ``set_extra_state``) to save non-tensor state: it goes in the state dict as
        ``<prefix>_extra_state``."""
        raise RuntimeError("Reached a code path in Module.get_extra_state() that should never be called. Please file "
                           "an issue at https://github.com/pytorch/pytorch/issues/new?template=bug-report.yml to "
                           "report this bug.")

    def set_extra_state(self, state):
        """Restore what ``get_extra_state`` returned (called by ``load_state_dict``)."""
        raise RuntimeError("Reached a code path in Module.set_extra_state() that should never be called. Please file "
                           "an issue at https://github.com/pytorch/pytorch/issues/new?template=bug-report.yml to "
                           "report this bug.")

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if keep_vars else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if keep_vars else buf.detach()
        if type(self).get_extra_state is not Module.get_extra_state:
            destination[prefix + "_extra_state"] = self.get_extra_state()

    def state_dict(self, *args, destination=None, prefix="", keep_vars=False):
        """An ``OrderedDict`` of parameters and persistent buffers by dotted name (detached unless keep_vars)."""
        if args:
            destination = args[0] if len(args) > 0 else destination
            prefix = args[1] if len(args) > 1 else prefix
            keep_vars = args[2] if len(args) > 2 else keep_vars
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()
        local_metadata = {"version": self._version}     # (the dict hooks see is the one saved, as torch's)
        if hasattr(destination, "_metadata"):
            destination._metadata[prefix[:-1]] = local_metadata
        for hook in self._state_dict_pre_hooks.values():
            hook(self, prefix, keep_vars)
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination=destination, prefix=prefix + name + ".", keep_vars=keep_vars)
        for hook in self._state_dict_hooks.values():
            r = hook(self, destination, prefix, local_metadata)
            if r is not None:
                destination = r
        return destination

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        for hook in self._load_state_dict_pre_hooks.values():
            hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs)
        persistent = {k: v for k, v in self._buffers.items() if k not in self._non_persistent_buffers_set}
        local_state = {k: v for k, v in itertools.chain(self._parameters.items(), persistent.items())
                       if v is not None}
        assign = local_metadata.get("assign_to_params_buffers", False)
        for name, param in local_state.items():
            key = prefix + name
            if key not in state_dict:
                if strict:
                    missing_keys.append(key)
                continue
            input_param = state_dict[key]
            if not isinstance(input_param, Tensor):
                if hasattr(input_param, "__array__") and not isinstance(input_param, (str, bytes)):
                    import numpy as np
                    input_param = Tensor._make(np.asarray(input_param))
                else:
                    error_msgs.append(f'While copying the parameter named "{key}", expected tapegrad.Tensor or '
                                      f"Tensor-like object from checkpoint but received {type(input_param)}")
                    continue
            if param.ndim == 0 and input_param.ndim == 1 and input_param.shape[0] == 1:
                input_param = input_param[0]
            if input_param.shape != param.shape:
                error_msgs.append(f"size mismatch for {key}: copying a param with shape {input_param.shape} from "
                                  f"checkpoint, the shape in current model is {param.shape}.")
                continue
            if param.is_meta and not input_param.is_meta and not assign:
                warnings.warn(f"for {key}: copying from a non-meta parameter in the checkpoint to a meta parameter in "
                              "the current model, which is a no-op. (Did you mean to pass `assign=True` to assign "
                              "items in the state dictionary to their corresponding key in the module instead of "
                              "copying them in place?)", stacklevel=2)
            try:
                with no_grad():
                    if assign:
                        if isinstance(param, Parameter):
                            new = Parameter(input_param.detach(), requires_grad=param.requires_grad)
                            self._parameters[name] = new
                        else:
                            self._buffers[name] = input_param.detach()
                    else:
                        param.copy_(input_param)
            except Exception as ex:
                error_msgs.append(f'While copying the parameter named "{key}", whose dimensions in the model are '
                                  f"{param.shape} and whose dimensions in the checkpoint are {input_param.shape}, "
                                  f"an exception occurred : {ex.args}.")
        extra_key = prefix + "_extra_state"
        if type(self).set_extra_state is not Module.set_extra_state:
            if extra_key in state_dict:
                self.set_extra_state(state_dict[extra_key])
            elif strict:
                missing_keys.append(extra_key)
        elif strict and extra_key in state_dict:
            unexpected_keys.append(extra_key)
        if strict:
            for key in state_dict.keys():
                if key.startswith(prefix) and key != extra_key:
                    input_name = key[len(prefix):].split(".", 1)
                    if len(input_name) > 1:
                        if input_name[0] not in self._modules:
                            unexpected_keys.append(key)
                    elif input_name[0] not in local_state:
                        unexpected_keys.append(key)

    def load_state_dict(self, state_dict, strict: bool = True, assign: bool = False):
        """Copy parameters and buffers from ``state_dict`` (tensors or arrays) into this module and its children.

        Returns ``_IncompatibleKeys(missing_keys, unexpected_keys)``; with ``strict`` a mismatch raises.
        """
        from collections.abc import Mapping
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing_keys, unexpected_keys, error_msgs = [], [], []
        metadata = getattr(state_dict, "_metadata", None)
        state_dict = OrderedDict(state_dict)

        def load(module, local_state_dict, prefix=""):
            local_metadata = {} if metadata is None else dict(metadata.get(prefix[:-1], {}))
            if assign:
                local_metadata["assign_to_params_buffers"] = assign
            module._load_from_state_dict(local_state_dict, prefix, local_metadata, True, missing_keys,
                                         unexpected_keys, error_msgs)
            for name, child in module._modules.items():
                if child is not None:
                    child_prefix = prefix + name + "."
                    child_sd = {k: v for k, v in local_state_dict.items() if k.startswith(child_prefix)}
                    load(child, child_sd, child_prefix)
            incompatible = _IncompatibleKeys(missing_keys, unexpected_keys)
            for hook in module._load_state_dict_post_hooks.values():
                if hook(module, incompatible) is not None:
                    raise AssertionError("Hooks registered with ``register_load_state_dict_post_hook`` are not "
                                         "expected to return new values, if incompatible_keys need to be "
                                         "modified, it should be done inplace.")

        load(self, state_dict)
        if strict:
            if unexpected_keys:
                error_msgs.insert(0, "Unexpected key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in unexpected_keys)))
            if missing_keys:
                error_msgs.insert(0, "Missing key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in missing_keys)))
        if error_msgs:
            raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(
                self.__class__.__name__, "\n\t".join(error_msgs)))
        return _IncompatibleKeys(missing_keys, unexpected_keys)

    def register_state_dict_pre_hook(self, hook):
        h = RemovableHandle(self._state_dict_pre_hooks)
        self._state_dict_pre_hooks[h.id] = hook
        return h

    def register_state_dict_post_hook(self, hook):
        h = RemovableHandle(self._state_dict_hooks)
        self._state_dict_hooks[h.id] = hook
        return h

    _register_state_dict_hook = register_state_dict_post_hook

    def register_load_state_dict_pre_hook(self, hook):
        h = RemovableHandle(self._load_state_dict_pre_hooks)
        self._load_state_dict_pre_hooks[h.id] = functools.partial(hook, self)
        return h

    def _register_load_state_dict_pre_hook(self, hook, with_module=False):
        """torch's private form: ``hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
        error_msgs)``, the module passed first only ``with_module``."""
        h = RemovableHandle(self._load_state_dict_pre_hooks)
        self._load_state_dict_pre_hooks[h.id] = functools.partial(hook, self) if with_module else hook
        return h

    def register_load_state_dict_post_hook(self, hook):
        h = RemovableHandle(self._load_state_dict_post_hooks)
        self._load_state_dict_post_hooks[h.id] = hook
        return h

    # --- hooks -------------------------------------------------------------------------------------------
    def register_forward_pre_hook(self, hook, *, prepend=False, with_kwargs=False):
        """``hook(module, args)`` (or ``hook(module, args, kwargs)``) before forward; may return new args."""
        h = RemovableHandle(self._forward_pre_hooks, self._forward_pre_hooks_with_kwargs)
        self._forward_pre_hooks[h.id] = hook
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs[h.id] = True
        if prepend:
            self._forward_pre_hooks.move_to_end(h.id, last=False)
        return h

    def register_forward_hook(self, hook, *, prepend=False, with_kwargs=False, always_call=False):
        """``hook(module, args, output)`` after forward; a returned value replaces the output."""
        h = RemovableHandle(self._forward_hooks, self._forward_hooks_with_kwargs, self._forward_hooks_always_called)
        self._forward_hooks[h.id] = hook
        if with_kwargs:
            self._forward_hooks_with_kwargs[h.id] = True
        if always_call:
            self._forward_hooks_always_called[h.id] = True
        if prepend:
            self._forward_hooks.move_to_end(h.id, last=False)
        return h

    def register_full_backward_hook(self, hook, prepend=False):
        """``hook(module, grad_input, grad_output)`` when the gradients w.r.t. the module's inputs are computed."""
        h = RemovableHandle(self._backward_hooks)
        self._backward_hooks[h.id] = hook
        if prepend:
            self._backward_hooks.move_to_end(h.id, last=False)
        return h

    def register_full_backward_pre_hook(self, hook, prepend=False):
        """``hook(module, grad_output)`` when the gradients w.r.t. the outputs are computed; may replace them."""
        h = RemovableHandle(self._backward_pre_hooks)
        self._backward_pre_hooks[h.id] = hook
        if prepend:
            self._backward_pre_hooks.move_to_end(h.id, last=False)
        return h

    def register_backward_hook(self, hook):
        """Deprecated in torch; behaves as ``register_full_backward_hook`` here."""
        return self.register_full_backward_hook(hook)

    _compiled_call_impl = None   # Module.compile(): the compiled callable that calls go through

    def compile(self, *args, **kwargs):
        """Compile this module's calls in place (torch's ``Module.compile``): ``tapegrad.compile``'s arguments;
        the module itself stays what it is (same class, parameters and state_dict keys)."""
        from ..compiler.runtime import Compiled
        from ..compiler import compile as _compile
        _compile(lambda: None, *args, **kwargs)     # (checks the arguments as tapegrad.compile does)
        kw = {k: kwargs[k] for k in ("fullgraph", "dynamic", "backend", "mode", "options", "disable") if k in kwargs}
        object.__setattr__(self, "_compiled_call_impl", Compiled(self._call_impl_eager, module=self, **kw))

    def _call_impl(self, *args, **kwargs):
        if self._compiled_call_impl is not None:
            return self._compiled_call_impl(*args, **kwargs)
        if not (self._forward_hooks or self._forward_pre_hooks or self._backward_hooks or self._backward_pre_hooks
                or _global_forward_hooks or _global_forward_pre_hooks):
            return self.forward(*args, **kwargs)
        return self._call_impl_eager(*args, **kwargs)

    def _call_impl_eager(self, *args, **kwargs):
        """A call without the compiled path: forward with the hooks."""
        if not (self._forward_hooks or self._forward_pre_hooks or self._backward_hooks or self._backward_pre_hooks
                or _global_forward_hooks or _global_forward_pre_hooks):
            return self.forward(*args, **kwargs)
        for hook_id, hook in itertools.chain(_global_forward_pre_hooks.items(), self._forward_pre_hooks.items()):
            if hook_id in self._forward_pre_hooks_with_kwargs:
                res = hook(self, args, kwargs)
                if res is not None:
                    if not (isinstance(res, tuple) and len(res) == 2):
                        raise RuntimeError("forward pre-hook must return None or a tuple of (new_args, new_kwargs), "
                                           f"but got {res}.")
                    args, kwargs = res
            else:
                res = hook(self, args)
                if res is not None:
                    args = res if isinstance(res, tuple) else (res,)
        bw_hook = None
        if self._backward_hooks or self._backward_pre_hooks:
            bw_hook = _BackwardHook(self, list(self._backward_hooks.values()), list(self._backward_pre_hooks.values()))
            args = bw_hook.setup_input_hook(args)
        result = self.forward(*args, **kwargs)
        for hook_id, hook in itertools.chain(_global_forward_hooks.items(), self._forward_hooks.items()):
            if hook_id in self._forward_hooks_with_kwargs:
                res = hook(self, args, kwargs, result)
            else:
                res = hook(self, args, result)
            if res is not None:
                result = res
        if bw_hook is not None:
            result = bw_hook.setup_output_hook(result)
        return result

    __call__ = _call_impl

    # --- printing ------------------------------------------------------------------------------------------
    def _get_name(self):
        return self.__class__.__name__

    def extra_repr(self) -> str:
        """Extra text inside this module's repr parentheses (``in_features=2, out_features=3, bias=True``)."""
        return ""

    def __repr__(self):
        extra_lines = []
        extra_repr = self.extra_repr()
        if extra_repr:
            extra_lines = extra_repr.split("\n")
        child_lines = []
        for key, module in self._modules.items():
            mod_str = _addindent(repr(module), 2)
            child_lines.append("(" + key + "): " + mod_str)
        lines = extra_lines + child_lines
        main_str = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                main_str += extra_lines[0]
            else:
                main_str += "\n  " + "\n  ".join(lines) + "\n"
        return main_str + ")"
