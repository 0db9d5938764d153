"""The rest of torch's Tensor surface on a CPU: device predicates, storage offsets and minimal storages,
resizing and ``set_``, Python callables applied elementwise (``apply_``, ``map_``, ``map2_``), complex casts, and
the methods torch removed long ago that still answer with torch's error (``reinforce``, ``eig``, ``symeig``)."""

from __future__ import annotations

import math
import warnings

import numpy as np

from . import _dtype
from .autograd import function as _function
from .autograd.grad_mode import _state as _grad_state
from .ops._util import before_write, bind
from .tensor import (Tensor, _format_perm, _is_in_format, _varargs_keyword, channels_last, channels_last_3d,
                     preserve_format)

_REMOVED_EIG = (
    "This function was deprecated since version 1.9 and is now removed. `torch.linalg.eig` returns complex tensors "
    "of dtype `cfloat` or `cdouble` rather than real tensors mimicking complex tensors.\n\nL, _ = torch.eig(A) "
    "should be replaced with:\nL_complex = torch.linalg.eigvals(A)\n\nand\n\nL, V = torch.eig(A, "
    "eigenvectors=True) should be replaced with:\nL_complex, V_complex = torch.linalg.eig(A)")
_REMOVED_SYMEIG = (
    "This function was deprecated since version 1.9 and is now removed. The default behavior has changed from "
    "using the upper triangular portion of the matrix by default to using the lower triangular portion.\n\nL, _ = "
    "torch.symeig(A, upper=upper) should be replaced with:\nL = torch.linalg.eigvalsh(A, UPLO='U' if upper else "
    "'L')\n\nand\n\nL, V = torch.symeig(A, eigenvectors=True) should be replaced with:\nL, V = "
    "torch.linalg.eigh(A, UPLO='U' if upper else 'L')")
_REMOVED_REINFORCE = (
    "reinforce() was removed.\nUse torch.distributions instead.\nSee "
    "https://pytorch.org/docs/main/distributions.html\n\nInstead of:\n\nprobs = policy_network(state)\naction = "
    "probs.multinomial()\nnext_state, reward = env.step(action)\naction.reinforce(reward)\naction.backward()\n\n"
    "Use:\n\nprobs = policy_network(state)\n# NOTE: categorical is equivalent to what used to be called "
    "multinomial\nm = torch.distributions.Categorical(probs)\naction = m.sample()\nnext_state, reward = "
    "env.step(action)\nloss = -m.log_prob(action) * reward\nloss.backward()\n")


def eig(self, eigenvectors=False):
    raise RuntimeError(_REMOVED_EIG)


def symeig(self, eigenvectors=False, upper=True):
    raise RuntimeError(_REMOVED_SYMEIG)


def _reinforce(self, reward):
    raise RuntimeError(_REMOVED_REINFORCE)


# --- memory ------------------------------------------------------------------------------------------------

def _root(a: np.ndarray) -> np.ndarray:
    """The ndarray that owns the memory ``a`` views (the tensor's storage; also through the holder NumPy's
    ``as_strided`` puts in between, so an ``as_strided`` view's storage is its input's)."""
    from .ops.shape.strided import _storage
    return _storage(a)


def storage_offset(self) -> int:
    """Where this tensor starts in its storage, in elements."""
    a = self._array
    root = _root(a)
    start = a.__array_interface__["data"][0]
    return (start - root.__array_interface__["data"][0]) // a.itemsize if a.size else 0


def _new_bytes(data):
    """The bytes of ``torch.UntypedStorage(n)`` (zeros) or ``UntypedStorage([1, 2, 3])``."""
    if isinstance(data, int) and not isinstance(data, bool):
        return np.zeros(data, np.uint8)
    if isinstance(data, (list, tuple, str)):
        for v in data:
            if not isinstance(v, int):
                raise RuntimeError(f"torch.UntypedStorage(): tried to construct a storage from a sequence "
                                   f"({type(data).__name__}), but one of the items was of type "
                                   f"{type(v).__name__} instead of int")
        return np.array([v % 256 for v in data], np.uint8)
    raise RuntimeError(f"torch.UntypedStorage(): Expected a sequence type, but got {type(data).__name__}")


class UntypedStorage:
    """The bytes under a tensor (``x.untyped_storage()``), sharing its memory: writes show in the tensor."""

    def __init__(self, array=0):
        if not isinstance(array, np.ndarray):      # torch.UntypedStorage(nbytes) or (sequence of byte values)
            array = _new_bytes(array)
        self._bytes = _root(array).reshape(-1).view(np.uint8)

    device = property(lambda self: _cpu())

    def nbytes(self) -> int:
        return self._bytes.size

    def size(self) -> int:
        return self._bytes.size

    __len__ = size

    def data_ptr(self) -> int:
        return self._bytes.__array_interface__["data"][0]

    def element_size(self) -> int:
        return 1

    def __getitem__(self, i):
        return self._bytes[i].tolist()

    def __setitem__(self, i, v):
        self._bytes[i] = v

    def tolist(self):
        return self._bytes.tolist()

    def is_shared(self) -> bool:
        from . import _shared
        return _shared.segment_of(self._bytes) is not None

    def __repr__(self):
        body = "\n".join(f" {v}" for v in self._bytes.tolist())
        return f"{body}\n[tapegrad.storage.UntypedStorage(device=cpu) of size {self._bytes.size}]"


class TypedStorage:
    """``x.storage()``: the elements of a tensor's storage in its dtype (deprecated in torch, with its warning)."""

    def __init__(self, array, dtype):
        self._array = _root(array).reshape(-1).view(array.dtype)
        self.dtype = dtype

    device = property(lambda self: _cpu())

    def size(self) -> int:
        return self._array.size

    __len__ = size

    def nbytes(self) -> int:
        return self._array.nbytes

    def element_size(self) -> int:
        return self._array.itemsize

    def data_ptr(self) -> int:
        return self._array.__array_interface__["data"][0]

    def untyped(self):
        return UntypedStorage(self._array)

    def __getitem__(self, i):
        return self._array[i].tolist()

    def __setitem__(self, i, v):
        self._array[i] = v

    def tolist(self):
        return self._array.tolist()

    def is_shared(self) -> bool:
        from . import _shared
        return _shared.segment_of(self._array) is not None

    def __repr__(self):
        body = "\n".join(f" {v}" for v in self._array.tolist())
        return f"{body}\n[tapegrad.storage.TypedStorage(dtype={self.dtype}, device=cpu) of size {self._array.size}]"


def _cpu():
    from .tensor import device
    return device("cpu")


def untyped_storage(self):
    return UntypedStorage(self._array)


def storage(self):
    warnings.warn("TypedStorage is deprecated. It will be removed in the future and UntypedStorage will be the only "
                  "storage class. This should only matter to you if you are using storages directly.  To access "
                  "UntypedStorage directly, use tensor.untyped_storage() instead of tensor.storage()", UserWarning,
                  stacklevel=2)
    return TypedStorage(self._array, self.dtype)


def share_memory_(self):
    """Move the storage into shared memory (once), as torch does: ``tapegrad.multiprocessing`` then hands this
    tensor to other processes by reference, so they all read and write the same numbers (``_shared.py``)."""
    from . import _shared
    if _shared.segment_of(self._array) is None:
        _shared.share([self])
    return self


def is_shared(self) -> bool:
    from . import _shared
    return _shared.segment_of(self._array) is not None


def pin_memory(self, device=None):
    raise RuntimeError("Cannot access accelerator device when none is available.")


def is_set_to(self, tensor) -> bool:
    """True when both tensors are the same memory, shape and strides."""
    a, b = self._array, tensor._array
    return (a.__array_interface__["data"][0] == b.__array_interface__["data"][0] and a.shape == b.shape
            and a.strides == b.strides and _root(a) is _root(b))


def dim_order(self, *, ambiguity_check=False):
    """The dims from outermost to innermost in memory (torch's order: a contiguous tensor is 0..n-1, then by
    decreasing stride, ties and zero strides keeping their order: TensorIterator's sort, ``_iterator_order``)."""
    a = self._array
    if a.flags.c_contiguous:
        return tuple(range(a.ndim))
    from .ops.elementwise._common import _iterator_order
    return tuple(reversed(_iterator_order(a.shape, [a])))


def _size_arg(size):
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    return tuple(int(s) for s in size)


def _storage_order(a):
    """The elements of ``a`` in the order of its memory (a dense layout: C order, or a channels-last one), as the
    1-d view or copy that ``resize_`` refills from; logical order for any other layout."""
    for fmt in (channels_last, channels_last_3d):
        if a.ndim in (4, 5) and not a.flags.c_contiguous and _is_in_format(a, fmt):
            return a.transpose(_format_perm(fmt, a.ndim)).reshape(-1)
    return a.reshape(-1)


def _memory_from(a):
    """The memory from ``a``'s first element to the end of its storage, as a 1-d array of its dtype; None when
    the storage is not one dense buffer (or ``a`` is empty or has a negative stride)."""
    root = _root(a)
    if not a.size or not root.flags.c_contiguous or any(st < 0 for st in a.strides):
        return None
    raw = root.reshape(-1).view(np.uint8)[a.__array_interface__["data"][0] - root.__array_interface__["data"][0]:]
    return raw[:raw.size - raw.size % a.itemsize].view(a.dtype)


def resize_(self, *size, memory_format=None, **kw):
    """Give this tensor the shape ``size`` in place, as torch does: the storage's elements from this tensor's
    start on, in memory order (so shrinking and growing back gives the old elements again), and new ones (zeros
    here; uninitialised memory in torch) where it grows past the storage's end."""
    if kw:
        size = _varargs_keyword(size, kw, "resize_", "size")
    if self._rg:
        raise RuntimeError("cannot resize variables that require grad")
    size = _size_arg(size)
    if any(s < 0 for s in size):
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(size)}: {list(size)}")
    n = math.prod(size)
    fmt = memory_format if memory_format is not preserve_format else None
    if size == self._array.shape and (fmt is None or _is_in_format(self._array, fmt)):
        return self          # (the same size and layout: nothing moves and, as in torch, the version stays)
    before_write(self)       # (a compile capture breaks; saved copies are kept under allow_mutation_on_saved_tensors)
    flat = _memory_from(self._array) if fmt is None else None
    if flat is None:
        flat = _storage_order(self._array)
    if n <= flat.size:
        new = flat[:n].reshape(size)
        if not np.shares_memory(new, self._array) and n:
            new = new.copy()
    else:
        new = np.zeros(n, self._array.dtype)
        new[:flat.size] = flat
        new = new.reshape(size)
    if fmt is not None:                  # (torch restrides the same memory: the elements in memory order)
        perm = _format_perm(fmt, len(size))
        if perm is not None:
            inv = tuple(int(i) for i in np.argsort(perm))
            new = np.ascontiguousarray(new.reshape(-1)).reshape(tuple(size[p] for p in perm)).transpose(inv)
    self._array = new
    self._bump()
    return self


def resize_as_(self, the_template, memory_format=None):
    return resize_(self, tuple(the_template.shape))


def resize(self, *size):
    warnings.warn("non-inplace resize is deprecated", UserWarning, stacklevel=2)
    from .autograd import no_grad
    with no_grad():
        return resize_(self.detach().clone(), *size)


def resize_as(self, tensor):
    warnings.warn("non-inplace resize_as is deprecated", UserWarning, stacklevel=2)
    from .autograd import no_grad
    with no_grad():
        return resize_(self.detach().clone(), tuple(tensor.shape))


def set_(self, source=None, storage_offset=0, size=None, stride=None):
    """Make this tensor view ``source``'s memory (a tensor; None: become empty)."""
    if _grad_state.enabled and self._rg and self.grad_fn is None:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
    before_write(self)
    if source is None:
        self._array = np.empty(0, self._array.dtype)
    elif isinstance(source, Tensor):
        if source.dtype is not self.dtype:
            raise RuntimeError(f"Could not set tensor of type {source.dtype._legacy} to a tensor of type "
                               f"{self.dtype._legacy}")
        arr = source._array
        if size is not None:
            item = arr.itemsize
            root = _root(arr).reshape(-1).view(arr.dtype)
            if stride is None:
                from ._meta import row_major
                stride = row_major(tuple(size))
            arr = np.lib.stride_tricks.as_strided(root[storage_offset:], tuple(size),
                                                  tuple(s * item for s in stride))
        self._array = arr
    else:
        raise TypeError(f"set_(): source must be a Tensor or None, not {type(source).__name__}")
    self._bump()
    return self




def new_empty_strided(self, size, stride, *, dtype=None, layout=None, device=None, requires_grad=False,
                      pin_memory=False):
    """A new tensor with the given shape and strides (in elements), values uninitialised."""
    d = _dtype.to_dtype(dtype) if dtype is not None else self.dtype
    size, stride = tuple(size), tuple(stride)
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    if self._new_on(device, layout):     # (on meta: those strides, no memory)
        from ._meta import meta_array
        out = Tensor._make(meta_array(size, d.np, stride))
        return out.requires_grad_(requires_grad) if requires_grad else out
    n = 1 + sum((s - 1) * st for s, st in zip(size, stride)) if all(size) else 0
    buf = np.empty(n, d.np)
    arr = np.lib.stride_tricks.as_strided(buf, size, tuple(st * buf.itemsize for st in stride))
    out = Tensor._make(arr)
    return out.requires_grad_(requires_grad) if requires_grad else out


# --- elementwise Python callables ------------------------------------------------------------------------

def _no_grad_target(self, name):
    if self._rg:
        raise RuntimeError(f"Can't call {name}() on Variable that requires grad. Use var.detach().{name}() instead.")


def _same_type(name, self, other, what):
    if other.dtype is not self.dtype:
        raise TypeError(f"{name}: expected {self.type()} {what} (got {other.type()})")


def apply_(self, callable):
    """Replace each element ``v`` by ``callable(v)`` (a Python loop, as torch's; CPU tensors only)."""
    _no_grad_target(self, "apply_")
    a = self._array
    out = np.array([callable(v) for v in a.reshape(-1).tolist()], dtype=object) if a.size else a.reshape(-1)
    a[...] = out.reshape(a.shape).astype(a.dtype)
    return self          # (torch's apply_/map_/map2_ write the data directly: the version stays)


def map_(self, tensor, callable):
    """``self[i] = callable(self[i], tensor[i])``, ``tensor`` broadcast to this shape."""
    _no_grad_target(self, "map_")
    _same_type("map_", self, tensor, "for 'other'")
    a = self._array
    b = np.broadcast_to(tensor._array, a.shape)
    vals = [callable(x, y) for x, y in zip(a.reshape(-1).tolist(), b.reshape(-1).tolist())]
    a[...] = np.array(vals, dtype=object).reshape(a.shape).astype(a.dtype) if a.size else a
    return self


def map2_(self, x, y, callable):
    """``self[i] = callable(self[i], x[i], y[i])``, ``x`` and ``y`` broadcast to this shape."""
    _no_grad_target(self, "map2_")
    _same_type("map2_", self, x, "for argument 'x'")
    _same_type("map2_", self, y, "for argument 'y'")
    a = self._array
    b, c = np.broadcast_to(x._array, a.shape), np.broadcast_to(y._array, a.shape)
    vals = [callable(p, q, r) for p, q, r in zip(a.reshape(-1).tolist(), b.reshape(-1).tolist(),
                                                 c.reshape(-1).tolist())]
    a[...] = np.array(vals, dtype=object).reshape(a.shape).astype(a.dtype) if a.size else a
    return self


# --- small predicates and conversions -----------------------------------------------------------------------

def is_signed(self) -> bool:
    return self._array.dtype.kind in "ifc"


def is_nonzero(self) -> bool:
    n = self._array.size
    if n == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    if n > 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    if _function._active[0]:      # (through bool(tensor): vmap's error for a batched tensor, compile's graph break)
        return bool(self.ne(0))
    return bool(self._array.reshape(()) != 0)


def is_same_size(self, other) -> bool:
    return self._array.shape == other._array.shape


def module_load(self, other, assign=False):
    """How ``load_state_dict`` turns ``other`` into this parameter's new value (torch's default)."""
    if assign:
        return other.detach()
    from .autograd import no_grad
    with no_grad():
        return self.copy_(other).detach()


def as_subclass(self, cls):
    """This tensor's data and autograd history as an instance of ``cls`` (a Tensor subclass)."""
    if not (isinstance(cls, type) and issubclass(cls, Tensor)):
        raise TypeError(f"as_subclass(): expected a Tensor subclass, got {cls!r}")
    src = self.view_as(self) if self._rg else self._alias()
    out = object.__new__(cls)
    for slot in ("_array", "_rg", "grad_fn", "_grad", "_output_nr", "_vcl", "_acc", "_view"):
        setattr(out, slot, getattr(src, slot))
    return out


VOLATILE_REMOVED = "volatile was removed and now has no effect. Use `with torch.no_grad():` instead."


def _volatile(self):
    warnings.warn("volatile was removed (Variable.volatile is always False)", UserWarning, stacklevel=2)
    return False


def _set_volatile(self, value):
    warnings.warn(VOLATILE_REMOVED, UserWarning, stacklevel=2)


def _false(self):
    return False


for _name in ("is_distributed",):
    setattr(Tensor, _name, _false)
for _name in ("is_xpu", "is_ipu", "is_maia", "is_mkldnn", "is_mps", "is_mtia", "is_nested", "is_vulkan", "is_xla",
              "is_sparse_csr"):
    setattr(Tensor, _name, property(_false))

Tensor.is_cpu = property(lambda self: True)
Tensor.output_nr = property(lambda self: self._output_nr)
Tensor.name = property(lambda self: None)        # named tensors: tapegrad's tensors have no names
Tensor.volatile = property(_volatile, _set_volatile)
Tensor.grad_dtype = property(lambda self: self.dtype)

bind(
    eig=eig, symeig=symeig, reinforce=_reinforce, storage_offset=storage_offset, untyped_storage=untyped_storage,
    storage=storage, share_memory_=share_memory_, is_shared=is_shared, pin_memory=pin_memory,
    is_pinned=lambda self, device=None: False, get_device=lambda self: -1, is_set_to=is_set_to,
    dim_order=dim_order, resize_=resize_, resize_as_=resize_as_, resize=resize, resize_as=resize_as, set_=set_,
    new_empty_strided=new_empty_strided, apply_=apply_, map_=map_, map2_=map2_, is_signed=is_signed,
    is_nonzero=is_nonzero, is_same_size=is_same_size, module_load=module_load, as_subclass=as_subclass,
    to_dense=lambda self, dtype=None, *, masked_grad=None: self if dtype is None else self.to(dtype),
    const_data_ptr=lambda self: self.data_ptr(), cdouble=lambda self, memory_format=None: self.to(_dtype.complex128),
    cfloat=lambda self, memory_format=None: self.to(_dtype.complex64))


def _needs_layout(name, wanted, error=RuntimeError):
    """A sparse tensor's accessor on a strided tensor: torch's error, naming the layout it wanted (``x.values``
    without a call is still a bound method, as in torch: code may take it and never call it); ``SparseTensor``
    (sparse.py) has its own."""
    def method(self):
        got = "Sparse" if self.is_sparse else "Strided"
        if error is NotImplementedError:
            raise NotImplementedError(f"Could not run 'aten::{name}' with arguments from the 'CPU' backend. This "
                                      "could be because the operator doesn't exist for this backend")
        raise RuntimeError(f"{name} expected {wanted} tensor layout but got {got}")
    method.__name__ = name
    return method


Tensor.values = _needs_layout("values", "sparse")
for _name in ("indices", "coalesce", "is_coalesced"):
    setattr(Tensor, _name, _needs_layout(_name, "sparse coordinate"))
for _name in ("_values", "_indices", "_nnz"):
    setattr(Tensor, _name, _needs_layout(_name, None, NotImplementedError))
for _name in ("crow_indices", "col_indices"):
    setattr(Tensor, _name, _needs_layout(_name, "sparse row compressed"))
for _name in ("ccol_indices", "row_indices"):
    setattr(Tensor, _name, _needs_layout(_name, "sparse column compressed"))
Tensor.sparse_dim = lambda self: 0
Tensor.dense_dim = lambda self: self._array.ndim
