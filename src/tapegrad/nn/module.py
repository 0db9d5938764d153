# ruff: noqa: A001, A002 - torch's argument name (input)
"""``Module``: the base of every layer, with PyTorch's registration, traversal, state-dict and hook semantics.

Its state-dict methods are defined in ``_module_state.py`` and its hook registration and backward-hook machinery
in ``_module_hooks.py``; the class body imports those methods, so they are Module's own attributes (named
``Module.state_dict``...). Calling a module (``__call__``: forward and its hooks) stays here.

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
from collections import OrderedDict

from .. import _dtype
from ..autograd.grad_mode import no_grad
from ..tensor import Tensor, _check_device, _move_error
from ._module_hooks import (RemovableHandle, _BackwardHook, _global_forward_hooks, _global_forward_pre_hooks,
                            register_module_forward_hook, register_module_forward_pre_hook)
from .parameter import Buffer, Parameter, is_lazy

# (defined here before _module_hooks.py and _module_state.py were split off: their import paths stay)
from ._module_hooks import _HOOK_MISSES, _MIXED_HOOKS, BackwardHookFunction, _warn_old_style_hook  # noqa: F401
from ._module_state import _IncompatibleKeys  # noqa: F401

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
            # a CPU-only torch build's own error, met at the first parameter or buffer (none: nothing to move)
            if next(itertools.chain(self.parameters(), self.buffers()), None) is not None:
                raise _move_error(name, device)
            return self
        move.__name__ = name
        return move

    cuda = _no_device("cuda")

    xpu, ipu, mtia = _no_device("xpu"), _no_device("ipu"), _no_device("mtia")
    del _no_device

    def to_empty(self, *, device, recurse=True):
        """Parameters and buffers replaced by uninitialised ones of the same shapes (on ``device``: the CPU)."""
        from .. import empty_like
        return self._apply(lambda t: empty_like(t, device=device), recurse=recurse)

    # --- state dict (defined in _module_state.py) ----------------------------------------------------------
    from ._module_state import (_load_from_state_dict, _register_load_state_dict_pre_hook,
                                _register_state_dict_hook, _save_to_state_dict, get_extra_state, load_state_dict,
                                register_load_state_dict_post_hook, register_load_state_dict_pre_hook,
                                register_state_dict_post_hook, register_state_dict_pre_hook, set_extra_state,
                                state_dict)

    # --- hooks (defined in _module_hooks.py) ---------------------------------------------------------------
    from ._module_hooks import (_old_style_backward_hooks, register_backward_hook, register_forward_hook,
                                register_forward_pre_hook, register_full_backward_hook,
                                register_full_backward_pre_hook)

    _is_full_backward_hook = None    # True/False once a full/an old-style backward hook was registered

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
        full = self._backward_hooks if self._is_full_backward_hook else {}
        if full or self._backward_pre_hooks:
            bw_hook = _BackwardHook(self, list(full.values()), list(self._backward_pre_hooks.values()))
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
        if self._is_full_backward_hook is False and self._backward_hooks:
            self._old_style_backward_hooks(args, result)
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
