"""The Tensor: a NumPy array plus the autograd state PyTorch keeps beside it.

State only: ``_array`` (the ndarray), ``requires_grad``, ``grad``, ``grad_fn``, the version counter shared with
views. The ops (``x.exp()``, ``x + y``, ``x[0]``, ``x.add_(1)``) are attached by the modules of ``tapegrad.ops``,
next to the Function that implements each.
"""

from __future__ import annotations

import builtins
import copy

import math
import warnings
import weakref

import numpy as np

from . import _aliases, _dtype, _meta
from ._ufunc import array_ufunc as _array_ufunc
from . import autograd as _autograd
from .autograd import function as _function
from .autograd import grad_mode as _grad_mode
from .autograd.function import AccumulateGrad, RemovableHandle
from .autograd.grad_mode import INFERENCE_VERSION, _state

_batched_data = None   # func.vmap's check: reading a batched tensor's data (item, bool, numpy) raises

__all__ = ["Tensor", "Size", "device", "layout", "strided"]

_FROM_NP = _dtype._FROM_NP
_MetaArray = _meta.MetaArray

NONLEAF_GRAD_WARNING = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad attribute won't be "
    "populated during autograd.backward(). If you indeed want the .grad field to be populated for a non-leaf "
    "Tensor, use .retain_grad() on the non-leaf Tensor. If you access the non-leaf Tensor by mistake, make sure "
    "you access the leaf Tensor instead. See github.com/pytorch/pytorch/pull/30531 for more informations.")


class Size(tuple):
    """A tensor's shape: a tuple that prints as ``tapegrad.Size([2, 3])``."""

    def __repr__(self):
        return f"tapegrad.Size([{', '.join(map(str, self))}])"

    __str__ = __repr__

    def numel(self) -> int:
        return math.prod(self)

    def __getitem__(self, i):
        r = tuple.__getitem__(self, i)
        return Size(r) if isinstance(i, slice) else r

    def __add__(self, other):
        return Size(tuple(self) + tuple(other))


# The device types torch's ``torch.device`` knows, in the order its error lists them.
_DEVICE_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve", "fpga", "maia",
                 "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia", "privateuseone")


class device:
    """``tapegrad.device("cpu")``, as ``torch.device``: a description of a device. Any device type torch knows
    can be described (``torch.device("cuda")`` is how scripts ask which device to use), but tapegrad computes on
    the CPU only: putting a tensor, a module or a generator on another device is refused clearly
    (``_require_cpu``; a tensor or module put on an accelerator gets a CPU-only torch build's own error,
    ``_check_device``)."""

    __slots__ = ("type", "index")

    def __init__(self, type="cpu", index=None):  # noqa: A002 - torch's name
        if isinstance(type, device):
            type, index = type.type, type.index
        elif isinstance(type, int) and not isinstance(type, bool):
            raise RuntimeError("Cannot access accelerator device when none is available.")
        elif not isinstance(type, str):
            got = builtins.type(type).__name__                      # (torch's words, which name torch.device)
            raise TypeError(f"device() received an invalid combination of arguments - got ({got}), but expected "
                            f"one of:\n * (torch.device device)\n      didn't match because some of the arguments "
                            f"have invalid types: (!{got}!)\n * (str type, int index = -1)\n")
        name = type
        if ":" in name:
            name, idx = name.split(":", 1)
            if not idx.isdigit() or (len(idx) > 1 and idx[0] == "0"):
                raise RuntimeError(f"Invalid device string: '{type}'")
            if index is not None:
                raise RuntimeError(f"type (string) must not include an index because index was passed explicitly: "
                                   f"{type}")
            index = int(idx)
        if name not in _DEVICE_TYPES:
            raise RuntimeError(f"Expected one of {', '.join(_DEVICE_TYPES)} device type at start of device string: "
                               f"{type}")
        if index is not None and index < 0:
            raise RuntimeError("Device index must not be negative")
        self.type, self.index = name, index

    def __repr__(self):
        return f"device(type='{self.type}')" if self.index is None else f"device(type='{self.type}', " \
                                                                         f"index={self.index})"

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other):
        """As torch's: equal devices have the same type and index (``device("cuda") != device("cuda:0")``); a
        device is never equal to a string (compare ``d.type == "cpu"``)."""
        return isinstance(other, device) and other.type == self.type and other.index == self.index

    def __hash__(self):
        return hash((self.type, self.index))

    def __enter__(self):
        """``with tapegrad.device("meta"):`` makes factories inside create on this device when they are given none
        (the CPU or the meta device; another device is refused)."""
        if self.type != "meta":
            _require_cpu(self)
        _default_device.append(self if self.type == "meta" else None)
        _default_changed()
        return self

    def __exit__(self, *exc):
        _default_device.pop()
        _default_changed()
        return None


def _require_cpu(d):
    """``d`` (a device, its name, or a device index) as a device, which must be the CPU: the check wherever a
    tensor, module, generator or storage is put on a device."""
    dev = d if isinstance(d, device) else device(d)
    if dev.type != "cpu":
        raise RuntimeError(f"tapegrad runs on the CPU only; device {str(d)!r} is not available "
                           "(use device='cpu', or real PyTorch for accelerators)")
    return dev


_CPU = device("cpu")
_META = device("meta")
# The device factories create on when given none: the last entry (None: the CPU). ``set_default_device`` sets the
# first, ``with device(...)`` pushes one.
_default_device = [None]
_default_now = None         # (its last entry, read by every factory call: a global is the cheapest read)


def _default_changed():
    global _default_now
    _default_now = _default_device[-1]


class _NamedConstant:
    """A constant torch names at top level (``tapegrad.strided``, ``tapegrad.channels_last``): printed by its name,
    pickled as a look-up of it (each subclass's ``__reduce__``)."""

    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"tapegrad.{self.name}"


class layout(_NamedConstant):
    """A tensor's memory layout, as ``torch.layout``: tapegrad tensors are ``tapegrad.strided`` (dense), but for
    the ``sparse_coo`` tensors of ``sparse_coo_tensor()``/``to_sparse()`` (``tapegrad/sparse.py``); the other
    sparse layouts exist so that code naming them gets a clear error."""

    __slots__ = ()

    def __reduce__(self):
        return (_layout_by_name, (self.name,))


layout.__module__ = "tapegrad"


strided = layout("strided")
_LAYOUTS = {n: layout(n) for n in ("sparse_coo", "sparse_csr", "sparse_csc", "sparse_bsr", "sparse_bsc", "jagged")}
_LAYOUTS["strided"] = strided
sparse_coo, sparse_csr, sparse_csc, sparse_bsr, sparse_bsc, jagged = (_LAYOUTS[n] for n in (
    "sparse_coo", "sparse_csr", "sparse_csc", "sparse_bsr", "sparse_bsc", "jagged"))


def _layout_by_name(name):
    return _LAYOUTS[name]


class memory_format(_NamedConstant):
    """How a tensor's dims are ordered in memory, as ``torch.memory_format``: ``contiguous_format`` (row-major),
    ``channels_last`` (NHWC for a 4-d tensor), ``channels_last_3d`` (NDHWC for 5-d) and ``preserve_format`` (keep
    the input's order: what ``clone``, ``*_like`` and ``to`` do by default)."""

    __slots__ = ()

    def __reduce__(self):
        return (_memory_format_by_name, (self.name,))


memory_format.__module__ = "tapegrad"
_FORMATS = {n: memory_format(n) for n in ("contiguous_format", "channels_last", "channels_last_3d",
                                          "preserve_format")}
contiguous_format, channels_last, channels_last_3d, preserve_format = (_FORMATS[n] for n in (
    "contiguous_format", "channels_last", "channels_last_3d", "preserve_format"))
_CHANNELS_LAST = {"channels_last": (4, (0, 2, 3, 1)), "channels_last_3d": (5, (0, 2, 3, 4, 1))}


def _memory_format_by_name(name):
    return _FORMATS[name]


def _format_perm(fmt, ndim, strict=True):
    """The memory order of the dims ``fmt`` asks for (None: row-major); torch's error for a channels-last format
    of the wrong rank (``strict``), else None."""
    if fmt is None or fmt is contiguous_format or fmt is preserve_format:
        return None
    if not isinstance(fmt, memory_format):
        raise TypeError(f"memory_format must be tapegrad.memory_format, not {type(fmt).__name__}")
    rank, perm = _CHANNELS_LAST[fmt.name]
    if ndim != rank:
        if strict:
            raise RuntimeError(f"required rank {rank} tensor to use {fmt.name} format")
        return None
    return perm


def _in_format(a: np.ndarray, fmt) -> np.ndarray:
    """A copy of ``a`` laid out as ``fmt`` asks (``preserve_format``/None: the input's own dim order, NumPy's
    order 'K', as torch preserves a dense layout)."""
    if fmt is None or fmt is preserve_format:
        return a.copy(order="K")
    perm = _format_perm(fmt, a.ndim)
    if perm is None:
        return np.array(a, order="C", copy=True)
    inv = tuple(int(i) for i in np.argsort(perm))
    return np.ascontiguousarray(a.transpose(perm)).transpose(inv)


def _is_in_format(a: np.ndarray, fmt) -> bool:
    perm = _format_perm(fmt, a.ndim, strict=False)
    if perm is None:
        return a.flags.c_contiguous if fmt in (None, contiguous_format, preserve_format) else False
    return a.transpose(perm).flags.c_contiguous


# The error a CPU-only torch build raises when a tensor or module is put on a device it was not built for: what
# a script written for a GPU meets on a machine without one (``model.cuda()``, ``x.to("cuda")``, ``device="cuda"``).
_MTIA_MESSAGE = ("Torch not compiled with MTIA enabled. Ensure you have `import mtia.host_runtime.torch_mtia."
                 "dynamic_library` in your python src file and include `//mtia/host_runtime/torch_mtia:torch_mtia` "
                 "as your target dependency!")
_NOT_BUILT = {"cuda": (AssertionError, "Torch not compiled with CUDA enabled"),
              "xpu": (AssertionError, "Torch not compiled with XPU enabled"),
              "mtia": (AssertionError, _MTIA_MESSAGE),
              "mps": (RuntimeError, "PyTorch is not linked with support for mps devices"),
              "ipu": (RuntimeError, "PyTorch is not linked with support for ipu devices")}


def _not_built(kind):
    """torch's exception for putting data on a ``kind`` device in a CPU-only build."""
    cls, message = _NOT_BUILT[kind]
    return cls(message)


def _move_error(kind, where=None):
    """torch's exception for ``x.cuda(where)`` (``xpu``, ...) in a CPU-only build: a device index asks the
    accelerator API first (its error), a device of another type is refused, else the not-built error."""
    if isinstance(where, (int, np.integer)) and not isinstance(where, bool):
        if where < 0:
            return RuntimeError("Device index must not be negative")
        return RuntimeError("Cannot access accelerator device when none is available.")
    if kind == "cuda" and where is not None and (where if isinstance(where, device) else device(where)).type != "cuda":
        return RuntimeError("Invalid device, must be cuda device")
    return _not_built(kind)


def _check_device(d, lay=None, default=True):
    """The checks every creation function (and ``Tensor.to``, ``Module.to``) makes of its ``device=`` and
    ``layout=`` (CPU or meta, dense only); True for the meta device (``d``, or the default device when ``d`` is
    None and ``default``). An accelerator torch knows raises a CPU-only torch build's own error."""
    if d is None:
        d = _default_now if default else None
        if d is None and lay is None:          # (the usual call: nothing to check)
            return False
    meta = False
    if d is not None and d is not _CPU:
        dev = d if isinstance(d, device) else device(d)
        if dev.type == "meta":
            meta = True
        elif dev.type in _NOT_BUILT:
            raise _not_built(dev.type)
        else:
            _require_cpu(dev)
    if lay is not None and lay is not strided and getattr(lay, "name", None) != "strided":
        raise RuntimeError(f"tapegrad's creation functions make dense tensors only: layout={lay!r} is not "
                           "available (use layout=tapegrad.strided, the default; sparse_coo_tensor() and "
                           "to_sparse() make COO tensors)")
    return meta


class Tensor:
    """An n-dimensional array that can record the operations applied to it.

    >>> a = tapegrad.tensor(2.0, requires_grad=True)
    >>> L = a * 3
    >>> L
    tensor(6., grad_fn=<MulBackward0>)
    """

    # (``__dict__``: a user's own attributes, ``t.tag = ...``, as torch allows; made only when one is set)
    __slots__ = ("_array", "_rg", "grad_fn", "_grad", "_output_nr", "_vcl", "_acc", "_view", "__weakref__",
                 "__dict__")
    __array_priority__ = 1000
    __hash__ = object.__hash__

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        """``np.log(t)`` computes with NumPy and returns a tensor, as in torch; ``ndarray (op) Tensor`` is answered
        by the Tensor's reflected operator (``_ufunc.py``)."""
        return _array_ufunc(ufunc, method, inputs, kwargs)

    def __init__(self, *args, device=None):
        """Legacy constructor, as ``torch.Tensor``: ``Tensor([1, 2])`` (data, the default dtype), ``Tensor(2, 3)``
        (a shape, uninitialised), ``Tensor()`` (empty); see ``_legacy.py``."""
        from ._legacy import legacy_new
        if len(args) == 1 and isinstance(args[0], Tensor):     # Tensor(t): t's data and dtype, as torch
            t = args[0]
        else:
            t = legacy_new(_dtype.get_default_dtype(), args, device)
        self._array = t._array
        self._rg = False
        self.grad_fn = self._grad = self._acc = self._view = None
        self._output_nr = 0
        self._vcl = t._vc if t is (args[0] if args else None) else t._vcl

    @staticmethod
    def _make(array, rg=False):
        """Wrap an ndarray (no copy, no checks): the one fast constructor every op uses."""
        t = _new(Tensor)
        if array.__class__ is not np.ndarray and array.__class__ is not _MetaArray:
            array = np.asarray(array)
        t._array = array
        t._rg = rg
        t.grad_fn = t._grad = t._acc = t._view = None
        t._output_nr = 0
        t._vcl = None      # the version counter is made on first use (most tensors never need one)
        return t

    @staticmethod
    def _make_marking(array, rg=False):
        """``_make`` while some thread is in inference mode: the same, and what it makes in this thread's
        inference mode is an inference tensor (``_inference_marking`` swaps it in and out)."""
        t = _new(Tensor)
        if array.__class__ is not np.ndarray and array.__class__ is not _MetaArray:
            array = np.asarray(array)
        t._array = array
        t._rg = rg
        t.grad_fn = t._grad = t._acc = t._view = None
        t._output_nr = 0
        t._vcl = INFERENCE_VERSION if _state.inference else None
        return t

    @staticmethod
    def _dtype_of(np_dtype):
        return _FROM_NP[np_dtype]

    # --- basic properties ---------------------------------------------------------------------------------
    @property
    def dtype(self):
        return _FROM_NP[self._array.dtype]

    @property
    def shape(self) -> Size:
        return Size(self._array.shape)

    def size(self, dim=None):
        """The shape, or its length along ``dim``."""
        if dim is None:
            return Size(self._array.shape)
        from .ops._util import normalize_dim
        return self._array.shape[normalize_dim(dim, self._array.ndim)]

    @property
    def ndim(self) -> int:
        return self._array.ndim

    def dim(self) -> int:
        return self._array.ndim

    ndimension = dim

    def numel(self) -> int:
        return self._array.size

    nelement = numel

    def element_size(self) -> int:
        return self._array.itemsize

    @property
    def itemsize(self) -> int:
        return self._array.itemsize

    @property
    def nbytes(self) -> int:
        return self._array.nbytes

    @property
    def device(self):
        return _META if self._array.__class__ is _MetaArray else _CPU

    @property
    def is_meta(self) -> bool:
        return self._array.__class__ is _MetaArray

    @property
    def layout(self):
        return strided

    is_cuda = False
    is_sparse = False
    is_quantized = False

    def is_floating_point(self) -> bool:
        return self._array.dtype.kind == "f"

    def is_complex(self) -> bool:
        return self._array.dtype.kind == "c"

    def is_contiguous(self, memory_format=None) -> bool:
        if self._array.__class__ is _MetaArray:          # (its strides: those a view op gave it, else row-major)
            if memory_format in (None, contiguous_format, preserve_format):
                return _meta.is_row_major(self._array)
            return self.dim() not in (4, 5)
        if memory_format is None:
            return self._array.flags.c_contiguous
        return _is_in_format(self._array, memory_format)

    def stride(self, dim=None):
        """Strides in elements, as torch reports them (a meta tensor's: those its view op gave it, else row-major)."""
        if self._array.__class__ is _MetaArray:
            st = _meta.strides_of(self._array)
        else:
            st = tuple(s // self._array.itemsize for s in self._array.strides)
        return st if dim is None else st[dim]

    def data_ptr(self) -> int:
        if self._array.__class__ is _MetaArray:
            return 0
        return self._array.__array_interface__["data"][0]

    def cpu(self):
        if self._array.__class__ is _MetaArray:
            raise NotImplementedError(_meta.NO_DATA)
        return self

    def cuda(self, device=None, non_blocking=False, memory_format=None):
        raise _move_error("cuda", device)

    def xpu(self, device=None, non_blocking=False, memory_format=None):
        raise _move_error("xpu", device)

    def ipu(self, *args, **kwargs):
        raise _not_built("ipu")

    def mtia(self, *args, **kwargs):
        raise _not_built("mtia")

    # --- autograd state -----------------------------------------------------------------------------------
    @property
    def requires_grad(self) -> bool:
        return self._rg

    @requires_grad.setter
    def requires_grad(self, value):
        value = bool(value)
        if self.grad_fn is not None:
            if not value:
                raise RuntimeError(
                    "you can only change requires_grad flags of leaf variables. If you want to use a computed "
                    "variable in a subgraph that doesn't require differentiation use var_no_grad = var.detach().")
            return
        if value and self._vcl is INFERENCE_VERSION and not _state.inference:
            raise RuntimeError("Setting requires_grad=True on inference tensor outside InferenceMode is not allowed.")
        if value and self._array.dtype.kind not in "fc":
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        if value and not self._rg and _function._active[0]:      # (a vmap's batched tensor: torch's refusal)
            from .func._vmap import refuse_requires_grad
            refuse_requires_grad(self)
        self._rg = value
        vcl = self._vcl
        if vcl is not None and vcl is not INFERENCE_VERSION and len(vcl) > 1 and self._view is None:
            # (views taken before: torch's view asks its base, so they require grad as it does, with no node
            #  behind them: see ``_accumulator``)
            for ref in list(vcl[1].values()):
                v = ref()
                if v is not None and v.grad_fn is None and v._view[0] is self:
                    v._rg = value

    def requires_grad_(self, requires_grad=True):
        """Set ``requires_grad`` in place (freezing: ``p.requires_grad_(False)``); returns self."""
        self.requires_grad = requires_grad
        return self

    @property
    def is_leaf(self) -> bool:
        return self.grad_fn is None

    @property
    def grad(self):
        if self.grad_fn is not None and not self.retains_grad and self._grad is None:
            warnings.warn(NONLEAF_GRAD_WARNING, UserWarning, stacklevel=2)
        return self._grad

    @grad.setter
    def grad(self, value):
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got grad of type "
                                f"{type(value).__name__}")
            if value._array.shape != self._array.shape:
                raise RuntimeError("assigned grad has data of a different size")
            if value._array.dtype != self._array.dtype:
                raise RuntimeError("assigned grad has data of a different type")
        self._grad = value

    @grad.deleter
    def grad(self):
        self._grad = None

    @property
    def retains_grad(self) -> bool:
        fn = self.grad_fn
        return fn is not None and bool(fn._retained) and self._output_nr in fn._retained and \
            fn._retained[self._output_nr]() is self

    def retain_grad(self):
        """Ask backward to fill ``.grad`` of this non-leaf tensor too."""
        if not self._rg:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        fn = self.grad_fn
        if fn is None:
            return
        if fn._retained is None:
            fn._retained = {}
            fn._hooked = True
        fn._retained[self._output_nr] = weakref.ref(self)

    def register_hook(self, hook):
        """Call ``hook(grad)`` when this tensor's gradient is computed; a returned tensor replaces it.

        Returns a handle whose ``remove()`` takes the hook out.
        """
        if not self._rg:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        node = self.grad_fn if self.grad_fn is not None else self._accumulator()
        if node is None:          # a view made under no_grad: no gradient ever reaches it, the hook never runs
            return RemovableHandle([hook], hook)
        return node._add_tensor_prehook(self._output_nr if self.grad_fn is not None else 0, hook)

    def register_post_accumulate_grad_hook(self, hook):
        """Call ``hook(self)`` after backward has accumulated this leaf's gradient into ``.grad`` (e.g. to step an
        optimizer per parameter as soon as its gradient is ready). Returns a handle whose ``remove()`` takes it out.
        """
        if not self._rg:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self.grad_fn is not None:
            raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
        acc = self._accumulator()
        if acc is None:           # a view made under no_grad: nothing is ever accumulated into it
            return RemovableHandle([hook], hook)
        if acc._post_hooks is None:
            acc._post_hooks = []
        acc._hooked = True
        acc._post_hooks.append(hook)
        return RemovableHandle(acc._post_hooks, hook)

    def _accumulator(self):
        """This leaf's AccumulateGrad node (one per leaf, made on first use); None for a view with no node of a
        tensor that requires grad (made under ``no_grad``, or before its base was set to require grad: torch's
        requires grad, but no gradient reaches anything).
        A no_grad view of a tensor that needs no gradient is an ordinary leaf once ``requires_grad_()`` is called."""
        acc = self._acc
        if acc is None:
            base = self._view
            if base is not None and base[0]._rg:
                return None
            acc = self._acc = AccumulateGrad(self)
        return acc

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        """Compute the gradient of this tensor with respect to the graph's leaves, into their ``.grad``.

        >>> x = tapegrad.tensor([1., 2., 3.], requires_grad=True)
        >>> (x ** 2).sum().backward()
        >>> x.grad
        tensor([2., 4., 6.])
        """
        # (through the module's attribute, as torch calls torch.autograd.backward: a program that patches or
        # wraps it, as unittest.mock does, sees every Tensor.backward)
        _autograd.backward(self, gradient, retain_graph, create_graph, inputs=inputs)

    def detach(self):
        """A tensor sharing this one's data (and version counter) but cut from the graph."""
        if _function._active[0]:      # (a transform sees it: vmap keeps the batch, a dual level drops the tangent)
            from .ops._util import Detach
            return Detach.apply(self)
        t = Tensor._make(self._array)
        t._vc = self._vc
        return t

    def detach_(self):
        """Cut this tensor from the graph in place (a view can't be: torch's error)."""
        if self._view is not None:
            raise RuntimeError(
                "Can't detach views in-place. Use detach() instead. If you are using DistributedDataParallel (DDP) "
                "for training, and gradient_as_bucket_view is set as True, gradients are views of DDP buckets, and "
                "hence detach_() cannot be called on these gradients. To fix this error, please refer to the "
                "Optimizer.zero_grad() function in torch/optim/optimizer.py as the solution.")
        self.grad_fn = None
        self._rg = False
        return self

    @property
    def data(self):
        """The same data as a tensor outside autograd (changes through it are not tracked); an inference
        tensor's is one too."""
        t = Tensor._make(self._array)
        t._vcl = INFERENCE_VERSION if self._vcl is INFERENCE_VERSION else None
        return t

    @data.setter
    def data(self, value):
        self._array = value._array if isinstance(value, Tensor) else np.asarray(value)

    def _detached_copy(self):
        return Tensor._make(self._array.copy())

    def _alias(self):
        """A new tensor object over the same data and version counter (no autograd history)."""
        t = Tensor._make(self._array)
        t._vc = self._vc
        return t

    @property
    def _vc(self):
        """The version counter: a list ``[version, {live views}]`` shared with views and ``detach()``."""
        vc = self._vcl
        if vc is None:
            vc = self._vcl = [0]
        return vc

    @_vc.setter
    def _vc(self, value):
        self._vcl = value

    def _bump(self):
        self._vc[0] += 1

    @property
    def _base(self):
        """The tensor this one is a view of (the root: a view of a view names the first base), else None, as
        torch's ``x[0]._base is x``; ``detach()`` is no view here either. (``_view`` keeps how to remake it.)"""
        view = self._view
        return None if view is None else view[0]

    def _is_view(self) -> bool:
        return self._view is not None

    @property
    def _version(self) -> int:
        vc = self._vc
        if vc is INFERENCE_VERSION:
            raise RuntimeError("Inference tensors do not track version counter.")
        return vc[0]

    def is_inference(self) -> bool:
        """True for an inference tensor: one made inside ``inference_mode()``, or a view of one (it shares the
        version counter ``INFERENCE_VERSION``, which every inference tensor has; see ``autograd/grad_mode.py``)."""
        return self._vcl is INFERENCE_VERSION

    # --- conversions out --------------------------------------------------------------------------------
    def item(self):
        """The value of a one-element tensor as a Python number."""
        if _function._active[0] and _batched_data is not None:
            _batched_data(self, "item")
        if self._array.size != 1:
            raise RuntimeError(f"a Tensor with {self._array.size} elements cannot be converted to Scalar")
        return self._array.item() if self._array.ndim == 0 else self._array.reshape(()).item()

    def tolist(self):
        if _function._active[0] and _batched_data is not None:
            _batched_data(self, "data")
        return self._array.tolist()

    def numpy(self, *, force=False):
        """The ndarray behind this tensor (shared memory). A tensor that requires grad needs ``detach()`` first,
        except under ``no_grad`` (as in torch)."""
        if self._rg and not force and _grad_enabled():
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() "
                               "instead.")
        if _function._active[0] and _batched_data is not None:
            _batched_data(self, "data")
        if self._array.__class__ is _MetaArray:
            raise TypeError("can't convert meta device type tensor to numpy. Use Tensor.cpu() to copy the tensor to "
                            "host memory first.")
        return self._array

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        """DLPack export (``np.from_dlpack(t)``, ``torch.from_dlpack(t)``): the array's memory, shared."""
        if self._rg:
            raise BufferError("Can't export tensors that require gradient, use tensor.detach()")
        kw = {k: v for k, v in (("max_version", max_version), ("dl_device", dl_device), ("copy", copy))
              if v is not None}
        return self._array.__dlpack__(stream=stream, **kw)

    def __dlpack_device__(self):
        return (1, 0)      # (kDLCPU, device 0)

    def __array__(self, dtype=None):
        """``np.asarray(t)``: ``t.numpy()`` (its checks too: a tensor that requires grad is refused), cast to
        ``dtype``. No ``copy`` keyword, as torch's: NumPy 2 then copies where asked to and refuses ``copy=False``."""
        a = self.numpy()
        return a if dtype is None else a.astype(dtype, copy=False)

    def _scalar(self, kind):
        if self._array.size != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        return kind(self._array.reshape(()).item())

    def __float__(self):
        return self._scalar(float)

    def __int__(self):
        return self._scalar(int)

    def __complex__(self):
        return self._scalar(complex)

    def __index__(self):
        if self._array.dtype.kind not in "iub" or self._array.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self._array.reshape(()).item())

    def __bool__(self):
        if _function._active[0] and _batched_data is not None:
            _batched_data(self, "bool")
        n = self._array.size
        if n == 0:
            raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
        if n > 1:
            raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
        return bool(self._array.reshape(()).item())

    def __len__(self):
        if self._array.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._array.shape[0]

    def __iter__(self):
        if self._array.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self._array.shape[0]))

    def __repr__(self):
        from ._tensor_str import tensor_repr
        return tensor_repr(self)

    def __format__(self, spec):
        # as torch: a 0-d tensor formats as its Python number (f"{w.grad}" -> "-8.0")
        if self._array.ndim == 0 and self._array.__class__ is not _MetaArray:
            return format(self._array.item(), spec)
        return object.__format__(self, spec)

    def __deepcopy__(self, memo):
        if self.grad_fn is not None:
            raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) support the deepcopy "
                               "protocol at the moment.  If you were attempting to deepcopy a module, this may be "
                               "because of a torch.nn.utils.weight_norm usage, see "
                               "https://github.com/pytorch/pytorch/pull/103001")
        if id(self) in memo:
            return memo[id(self)]
        new = type(self).__new__(type(self))
        Tensor.__init__(new)
        new._array = self._array.copy()
        new._rg = self._rg
        if self._grad is not None:
            new._grad = self._grad._detached_copy()
        memo[id(self)] = new
        if self.__dict__:                  # (a user's attributes are copied too, as torch does)
            new.__dict__.update(copy.deepcopy(self.__dict__, memo))
        return new

    def __reduce_ex__(self, proto):
        if self.__dict__:                  # (a user's attributes travel with it, as in torch)
            return (_rebuild, (self._array, self._rg), dict(self.__dict__))
        return (_rebuild, (self._array, self._rg))

    # --- new tensors like this one ----------------------------------------------------------------------
    def _new(self, array, dtype, requires_grad, meta=False):
        d = _dtype.to_dtype(dtype) if dtype is not None else self.dtype
        meta = meta or array.__class__ is _MetaArray
        t = Tensor._make(_meta.meta_array(np.shape(array), d.np) if meta else np.asarray(array, dtype=d.np))
        if requires_grad:
            t.requires_grad = True
        return t

    def _new_on(self, device, layout):
        """Whether a ``new_*`` result is a meta tensor: on ``device``, else on this tensor's device."""
        meta = _check_device(device, layout, default=False)
        return self._array.__class__ is _MetaArray if device is None else meta

    def new_tensor(self, data, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False):
        meta = self._new_on(device, layout)
        from .creation import _copy_construct_warning, _from_data      # (creation imports this module)
        if isinstance(data, Tensor):
            _copy_construct_warning("tensor.new_tensor")
        t = Tensor._make(_from_data(data, dtype if dtype is not None else self.dtype))   # no inference: self's dtype
        if meta:
            t._array = _meta.meta_array(t._array.shape, t._array.dtype)
        if requires_grad:
            t.requires_grad = True
        return t

    def new_zeros(self, *size, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False, **kw):
        meta = self._new_on(device, layout)
        if kw:
            size = _varargs_keyword(size, kw, "new_zeros", "size")
        return self._new((np.zeros if not meta else _meta.meta_array)(
            _size(size), _dtype.to_dtype(dtype).np if dtype is not None else self._array.dtype), dtype, requires_grad)

    def new_ones(self, *size, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False, **kw):
        meta = self._new_on(device, layout)
        if kw:
            size = _varargs_keyword(size, kw, "new_ones", "size")
        return self._new((np.ones if not meta else _meta.meta_array)(
            _size(size), _dtype.to_dtype(dtype).np if dtype is not None else self._array.dtype), dtype, requires_grad)

    def new_empty(self, *size, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False, **kw):
        meta = self._new_on(device, layout)
        if kw:
            size = _varargs_keyword(size, kw, "new_empty", "size")
        return self._new((np.empty if not meta else _meta.meta_array)(
            _size(size), _dtype.to_dtype(dtype).np if dtype is not None else self._array.dtype), dtype, requires_grad)

    def new_full(self, size, fill_value, dtype=None, device=None, requires_grad=False, layout=None,
                 pin_memory=False):
        meta = self._new_on(device, layout)
        d = _dtype.to_dtype(dtype) if dtype is not None else self.dtype
        if meta:
            return self._new(_meta.meta_array(_size((size,)), d.np), d, requires_grad)
        return self._new(np.full(_size((size,)), _dtype.fill_scalar(fill_value, d, halves=False), d.np), d,
                         requires_grad)


_new = object.__new__


_swapped = []    # the ``_make`` that was in place when marking began, and what marking put there


def _inference_marking(on):
    """Swap ``Tensor._make`` for its marking copy (``on``) while some thread is in inference mode, and back.
    Another swap in place (compile's capture wraps ``_make``) is kept: marking then wraps it in turn."""
    if on:
        prev = Tensor.__dict__["_make"]
        if prev.__func__ is _plain_make:
            new = Tensor.__dict__["_make_marking"]
        else:
            inner = prev.__func__

            def _make(array, rg=False):
                t = inner(array, rg)
                if _state.inference and t._vcl is None:
                    t._vcl = INFERENCE_VERSION
                return t
            new = staticmethod(_make)
        _swapped[:] = [prev, new]
        Tensor._make = new
    elif _swapped:
        prev, new = _swapped
        if Tensor.__dict__["_make"] is new:
            Tensor._make = prev
        _swapped.clear()


_plain_make = Tensor.__dict__["_make"].__func__
_grad_mode._marking[1] = _inference_marking


def _grad_enabled():
    from .autograd.grad_mode import _state
    return _state.enabled


def _rebuild(array, rg):
    t = Tensor._make(array)
    t._rg = rg
    return t


def _size(size):
    """Accept ``f(2, 3)``, ``f((2, 3))``, ``f([2, 3])`` and ``f(Size([2, 3]))``."""
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = size[0]
    out = []
    for s in size:
        if isinstance(s, Tensor):
            s = int(s)
        if not isinstance(s, (int, np.integer)) or isinstance(s, bool):
            from ._argtypes import from_stack      # (torch's words for the public call's argument, where it has any)
            raise from_stack() or TypeError(f"size must be a sequence of ints, but got {type(s).__name__}")
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {list(size)}")
        out.append(int(s))
    return tuple(out)


_NO_KEYWORD = object()


def _varargs_keyword(args, kw, op, name):
    """The ``args`` of ``op(*args)`` called as ``op(name=(2, 3))``: torch's parser takes a sequence argument
    (``size``, ``shape``, ``dims``, ``repeats``) by its name too. torch's TypeErrors for both forms at once, for
    an int in its place and for any other keyword."""
    value = kw.pop(name, _NO_KEYWORD)
    if kw:
        raise TypeError(f"{op}() got an unexpected keyword argument '{next(iter(kw))}'")
    if value is _NO_KEYWORD:
        return args
    if args:
        raise TypeError(f"{op}() got multiple values for argument '{name}'")
    if not isinstance(value, (tuple, list)):
        raise TypeError(f"{op}(): argument '{name}' must be tuple of ints, not {type(value).__name__}")
    return (value,)


def int_arg(v):
    """``v`` for an ``int`` parameter of torch's: a one-element integer (or bool) tensor, which torch's parser
    takes for an int (``torch.eye(torch.tensor(3))``), as a Python int; anything else as it is."""
    if isinstance(v, Tensor) and v._array.size == 1 and v._array.dtype.kind in "iub":
        return int(v._array.reshape(()).item())
    return v


def invalid_arguments(op, args, signatures):
    """torch's TypeError for arguments that match none of ``op``'s signatures (given as torch prints them; a
    signature given as ``(signature, True)`` is followed by torch's note on which arguments did not match)."""
    names = ["Tensor" if isinstance(a, Tensor) else type(a).__name__ for a in args]
    note = "      didn't match because some of the arguments have invalid types: (" \
        + ", ".join(n if n == "Tensor" else f"!{n}!" for n in names) + ")\n"
    return TypeError(f"{op}() received an invalid combination of arguments - got ({', '.join(names)}), but expected "
                     "one of:\n" + "".join(f" * ({sig[0]})\n{note}" if isinstance(sig, tuple) else f" * ({sig})\n"
                                          for sig in signatures))


for _name, _fn in list(vars(Tensor).items()):     # x.size(axis=0): torch's NumPy-style names (_aliases.py)
    if _fn.__class__.__name__ == "function":
        setattr(Tensor, _name, _aliases.method(_name, _fn))
del _name, _fn

_function.bind_tensor(Tensor)
Tensor.__module__ = "tapegrad"      # type(x) prints <class 'tapegrad.Tensor'>, as torch's prints <class 'torch.Tensor'>
