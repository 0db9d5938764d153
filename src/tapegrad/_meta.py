"""The meta device: tensors with a shape, a dtype and autograd state, but no data (``device='meta'``).

A meta tensor is an ordinary ``Tensor`` whose ``_array`` is a ``MetaArray``: a zero-strided view of one zero of
the dtype (no memory however large the shape), of a marker ndarray subclass. So every op runs its normal code:
NumPy calls on a ``MetaArray`` answer with another ``MetaArray`` of the result's shape and dtype
(``__array_ufunc__`` works the shape out and the dtype from one-element stand-ins, without computing;
``__array_function__`` computes on zero-strided zeros, then drops the data), writes into one do nothing (copying
into a meta tensor is allowed, as in torch), and reading its data raises torch's errors. An op whose code leaves
NumPy's dispatch (``np.asarray`` and friends) still gives a meta result: while meta arrays exist, ``apply_meta``
is the last step of ``Function.apply`` before eager (``autograd/function.py``, ``_meta_step``); it checks devices,
refuses the data-dependent ops as torch does, and makes every output of an op with a meta input a meta tensor.
A meta array reports the strides torch's would have: views compute them with NumPy's view code on a one-element
"layout probe" (``_layout_probe``). See docs/design.md, "The meta device".
"""

from __future__ import annotations

import functools
import threading

import numpy as np

from .autograd import function as _function

__all__ = ["MetaArray", "meta_array", "as_meta_tensor", "skips_meta", "apply_meta", "NO_DATA"]

NO_DATA = "Cannot copy out of meta tensor; no data!"
ITEM = "Tensor.item() cannot be called on meta tensors"
_NO_KERNEL = ("aten::{}: attempted to run this operator with Meta tensors, but there was no fake impl or Meta kernel "
              "registered. You may have run into this message while using an operator with PT2 compilation APIs "
              "(torch.compile/torch.export); in order to use this operator with those APIs you'll need to add a fake "
              "impl. Please see the following for next steps:  "
              "https://pytorch.org/tutorials/advanced/custom_ops_landing_page.html")
NONZERO = ("The register_meta function for torch.nonzero() raises unimplemented by default, as a correct "
           "data-independent implementation does not exist. This implementation returns a fake value, assuming all "
           "elements of the tensor are non-zero. To enable this registration, please set "
           "'torch.fx.experimental._config.meta_nonzero_assume_all_nonzero' to True.")


def meta_array(shape, dtype, strides=None) -> MetaArray:
    """A meta array of ``shape`` and ``dtype``: no memory but one element. ``strides`` (in elements) are the ones
    ``Tensor.stride()`` reports (None: row-major)."""
    if _function._meta_step[0] is None:
        _switch(True)
    shape = tuple(shape)        # (writable, zero-strided: op code that writes into a stripped view writes one zero)
    a = np.lib.stride_tricks.as_strided(np.zeros((), dtype), shape, (0,) * len(shape)).view(MetaArray)
    if strides is not None:
        a._st = tuple(strides)
    return a


def row_major(shape):
    st, n = [], 1
    for k in reversed(shape):
        st.append(n)
        n *= max(k, 1)
    return tuple(reversed(st))


def strides_of(a) -> tuple:
    """The strides (in elements) a meta array reports: those its view op gave it, else row-major."""
    st = a._st
    return row_major(a.shape) if st is None else st


def is_row_major(a) -> bool:
    """torch's ``is_contiguous()`` of a meta array: its strides are row-major wherever a dim has more than one
    element (an empty tensor is contiguous)."""
    if a._st is None or 0 in a.shape:
        return True
    return all(n == 1 or s == r for n, s, r in zip(a.shape, a._st, row_major(a.shape)))


def storage_extent(a) -> int:
    """How many elements a meta tensor's storage holds, as far as its strides reach (a fresh one: its numel)."""
    return 0 if 0 in a.shape else sum((n - 1) * s for n, s in zip(a.shape, strides_of(a))) + 1


def _layout_probe(a):
    """An array of ``a``'s shape and dtype whose NumPy strides are the ones ``a`` reports, over ONE element: only
    pure view operations (which read nothing) may be applied to it, to see the strides their result has."""
    it = a.itemsize
    return np.lib.stride_tricks.as_strided(np.zeros(1, a.dtype), a.shape, tuple(s * it for s in strides_of(a)),
                                           writeable=False)


def _viewed(a, view):
    """The meta array ``view(a)`` gives, with the strides NumPy gives that view of ``a``'s layout."""
    r = view(_layout_probe(a))
    return meta_array(r.shape, r.dtype, tuple(s // r.itemsize for s in r.strides))


def _basic_key(key) -> bool:
    keys = key if isinstance(key, tuple) else (key,)
    return all(k is None or k is Ellipsis or isinstance(k, (int, np.integer, slice)) and not isinstance(k, bool)
               for k in keys)


# NumPy functions that return a view and read nothing: on a meta array, computed on its layout probe
_VIEWS = {np.swapaxes, np.transpose, np.moveaxis, np.expand_dims, np.squeeze, np.broadcast_to, np.diagonal,
          np.atleast_1d, np.atleast_2d, np.atleast_3d}


# --- the meta step of Function.apply: on while meta arrays exist ------------------------------------------------
# MetaArrays alive (each view counts): one entry each. ``list.append``/``pop`` are single, atomic steps, where
# ``n[0] += 1`` reads and writes in two (threads, or a ``__del__`` run in between, could lose an update); no lock
# either, which ``__del__`` could meet held by its own thread.
_live = []
_lock = threading.Lock()
_op_depth = threading.local()   # per thread: the depth of op calls with a meta input in progress (data checks pass)


def live_count() -> int:
    """How many meta arrays are alive (the meta step switches itself off at 0)."""
    return len(_live)


def _in_op() -> bool:
    return getattr(_op_depth, "n", 0) > 0


def _switch(on):
    """Turn the meta step on (the first meta array made) or off (no meta array left: cpu ops run eager again)."""
    with _lock:
        if (_function._meta_step[0] is not None) is on:
            return
        _function._meta_step[0] = apply_meta if on else None
        _function._count_active(1 if on else -1)


def _tensors(args, kwargs):
    T = _function._Tensor
    for a in args:
        if isinstance(a, T):
            yield a
        elif a.__class__ in (list, tuple):
            for b in a:
                if isinstance(b, T):
                    yield b
    for a in kwargs.values():
        if isinstance(a, T):
            yield a


def _device_name(is_meta):
    return "meta" if is_meta else "cpu"


_COPIES = {"Copy", "_CopyFrom"}      # (copy_: a CPU tensor may be copied into a meta one, not out of it)

# Ops whose result's shape depends on the data: torch has no meta kernel for them.
_NO_META = {"Nonzero": NONZERO, "MaskedSelect": _NO_KERNEL.format("masked_select"),
            "Unique": _NO_KERNEL.format("_unique2"), "UniqueConsecutive": _NO_KERNEL.format("unique_consecutive"),
            "Bincount": _NO_KERNEL.format("bincount")}


def apply_meta(cls, args, kwargs):
    """An op call while meta tensors exist (after the transforms, before eager): with no meta input, eager; else
    torch's device check (a 0-d CPU tensor is a number), torch's error for a data-dependent op, then eager on
    the meta arrays with every output made meta (an op whose code left NumPy's dispatch computed on zeros)."""
    meta = False
    first = None          # the device of the first tensor of 1 or more dims: every such tensor must be on it
    copy = cls.__name__ in _COPIES
    for t in _tensors(args, kwargs):
        m = t._array.__class__ is MetaArray
        meta = meta or m
        if t._array.ndim:
            if first is None:
                first = m
            elif m is not first and not (copy and first):     # (copying data into a meta tensor: a no-op)
                if copy:
                    raise NotImplementedError(NO_DATA)
                raise RuntimeError(f"Tensor on device {_device_name(m)} is not on the expected device "
                                   f"{_device_name(first)}!")
    if not meta:
        if not _live:
            _switch(False)
        return _function._apply_eager(cls, *args, **kwargs)
    if first is False:                       # (a 0-d meta tensor among CPU tensors: no data to compute with)
        if copy:
            raise NotImplementedError(NO_DATA)
        raise RuntimeError("Tensor on device meta is not on the expected device cpu!")
    if cls.__name__ in _NO_META:
        raise NotImplementedError(_NO_META[cls.__name__])
    depth = getattr(_op_depth, "n", 0)
    _op_depth.n = depth + 1
    try:
        out = _function._apply_eager(cls, *args, **kwargs)
    finally:
        _op_depth.n = depth
    for o in (out if out.__class__ is tuple else (out,)):
        if isinstance(o, _function._Tensor) and o._array.__class__ is not MetaArray:
            o._array = meta_array(o._array.shape, o._array.dtype)
    if cls.__module__.startswith("tapegrad.ops.elementwise.") and out.__class__ is not tuple:
        _keep_layout(args, out)
    return out


def _keep_layout(args, out):
    """An elementwise op of one tensor laid out otherwise than row-major (``x.t() + 1``, ``x.t().clone()``) gives
    an output laid out as its input's dims are ordered, densely, as torch's TensorIterator (and NumPy's order
    'K' on the CPU) do."""
    T = _function._Tensor
    ts = [a for a in args if isinstance(a, T)]
    if len(ts) != 1 or not isinstance(out, T) or any(type(a).__name__ == "memory_format" for a in args):
        return                              # (a layout asked for: ``contiguous()``, ``clone(memory_format=)``)
    a, o = ts[0]._array, out._array
    if a._st is None or o._st is not None or a.shape != o.shape or o.__class__ is not MetaArray:
        return
    order = sorted(range(a.ndim), key=lambda d: (-a._st[d], d))      # outermost dim first
    st, n = [0] * a.ndim, 1
    for d in reversed(order):
        st[d] = n
        n *= max(a.shape[d], 1)
    o._st = tuple(st)


def skips_meta(fill):
    """An in-place random fill (``x.uniform_()``, ``nn.init.normal_``): a meta tensor is returned as it is,
    nothing drawn (torch's random stream does not move)."""
    def skipping(tensor, *args, **kwargs):
        if tensor._array.__class__ is MetaArray:
            return tensor
        return fill(tensor, *args, **kwargs)
    functools.update_wrapper(skipping, fill)
    return skipping


def as_meta_tensor(t):
    """``t`` with a meta array (the same tensor when it has one already)."""
    if t._array.__class__ is not MetaArray:
        t._array = meta_array(t._array.shape, t._array.dtype)
    return t


def _stand_in(x):
    """What NumPy computes with in place of a meta array: zeros of its shape and dtype, zero-strided (a fresh
    view, so a meta array's own strides are never read)."""
    if x.__class__ is MetaArray:
        return np.broadcast_to(np.zeros((), x.dtype), x.shape)
    if x.__class__ in (list, tuple):
        return x.__class__(_stand_in(v) for v in x)
    return x


def _probe(x):
    """A one-element stand-in with ``x``'s dtype (Python numbers stay as they are: NumPy types them weakly)."""
    return np.zeros((), x.dtype) if isinstance(x, np.ndarray) else x


def _as_meta(r):
    """A result of NumPy's computed on stand-ins, as meta arrays (a number computed from no data is refused)."""
    if isinstance(r, np.ndarray) or isinstance(r, np.generic):
        return meta_array(np.shape(r), r.dtype)
    if r.__class__ in (list, tuple):
        return r.__class__(_as_meta(v) for v in r)
    if isinstance(r, tuple) and hasattr(r, "_fields"):     # (NumPy's named results: eigh, svd, qr, slogdet...)
        return r.__class__(*(_as_meta(v) for v in r))
    if r is None or isinstance(r, (str, np.dtype, type)):
        return r
    raise NotImplementedError(NO_DATA)


def _axes(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    axis = axis if isinstance(axis, tuple) else (axis,)
    return tuple(int(a) % ndim if ndim else 0 for a in axis)


# NumPy functions whose answer is not data: computed on stand-ins and returned as they are.
_SHAPE_ONLY = {np.shape, np.ndim, np.size, np.iscomplexobj, np.isrealobj, np.result_type, np.may_share_memory,
               np.shares_memory, np.can_cast, np.min_scalar_type}
_DATA_DEPENDENT = {np.nonzero: NONZERO, np.flatnonzero: NONZERO, np.argwhere: NONZERO,
                   np.unique: _NO_KERNEL.format("_unique2"), np.extract: _NO_KERNEL.format("masked_select"),
                   np.array_equal: _NO_KERNEL.format("equal"), np.array_equiv: _NO_KERNEL.format("equal"),
                   np.allclose: ITEM, np.bincount: _NO_KERNEL.format("bincount")}


class MetaArray(np.ndarray):
    """The ``_array`` of a meta tensor: shape and dtype, no data (see the module's docstring)."""

    _st = None       # the strides it reports (``strides_of``), when a view op gave it other than row-major ones

    def __array_finalize__(self, obj):
        _live.append(None)

    def __del__(self):
        _live.pop()

    def __array_ufunc__(self, ufunc, method, *inputs, out=None, **kwargs):
        if method == "at":                    # in place, into a meta array: nothing to write
            return None
        if out is not None and not all(o.__class__ is MetaArray for o in out):
            if not _in_op():                # (data out of a meta array into a real one)
                raise NotImplementedError(NO_DATA)
            return out[0] if len(out) == 1 else out    # (an op's own scratch: its result is made meta)
        with np.errstate(all="ignore"):
            if method == "__call__" and ufunc.signature is None:
                where = kwargs.pop("where", True)
                shapes = [np.shape(x) for x in inputs if isinstance(x, np.ndarray)]
                if isinstance(where, np.ndarray):
                    shapes.append(where.shape)
                try:
                    shape = np.broadcast_shapes(*shapes)
                except ValueError:            # NumPy's own words for the mismatch (it checks before computing)
                    ufunc(*_stand_in(inputs), **kwargs)
                    raise
                r = ufunc(*(_probe(x) for x in inputs), **kwargs)
                results = tuple(meta_array(shape, v.dtype) for v in r) if ufunc.nout > 1 else \
                    (meta_array(shape, np.result_type(r)),)
            elif method == "reduce" or method == "accumulate":
                a = inputs[0]
                small = np.broadcast_to(np.zeros((), a.dtype), tuple(min(n, 1) for n in a.shape))
                r = getattr(ufunc, method)(small, **kwargs)     # (its errors: an axis out of range, no identity)
                if method == "accumulate":
                    shape = a.shape
                else:
                    axes = _axes(kwargs.get("axis", 0), a.ndim)
                    keep = kwargs.get("keepdims", False)
                    shape = tuple(1 if i in axes else n for i, n in enumerate(a.shape) if keep or i not in axes)
                results = (meta_array(shape, np.result_type(r)),)
            else:                             # gufuncs (matmul), outer, reduceat: computed on zeros
                results = (_as_meta(getattr(ufunc, method)(*_stand_in(inputs), **kwargs)),)
                results = results[0] if isinstance(results[0], tuple) else results
        if out is not None:
            return out[0] if len(out) == 1 else out
        return results[0] if len(results) == 1 else results

    def __array_function__(self, func, types, args, kwargs):
        if func in _DATA_DEPENDENT:
            cls = RuntimeError if _DATA_DEPENDENT[func] is ITEM else NotImplementedError
            raise cls(_DATA_DEPENDENT[func])
        out = kwargs.pop("out", None)
        if func is np.copyto:               # a copy into a meta array: nothing to write
            if args[0].__class__ is not MetaArray and not _in_op():
                raise NotImplementedError(NO_DATA)
            return None
        if func in _VIEWS and out is None and args and args[0].__class__ is MetaArray and \
                not any(isinstance(v, np.ndarray) for v in (*args[1:], *kwargs.values())):
            return _viewed(args[0], lambda p: func(p, *args[1:], **kwargs))
        kwargs = {k: _stand_in(v) for k, v in kwargs.items()}
        with np.errstate(all="ignore"):
            r = func(*_stand_in(args), **kwargs)
        if func in _SHAPE_ONLY:
            return r
        if func is np.count_nonzero:         # (a count per the dims left: its shape is the arguments')
            return meta_array(np.shape(r), np.intp)
        if out is not None:
            if out.__class__ is not MetaArray and not _in_op():
                raise NotImplementedError(NO_DATA)
            return out
        return _as_meta(r)

    # --- writes do nothing; reads of the data raise ------------------------------------------------------
    def __setitem__(self, key, value):
        return None

    def fill(self, value):
        return None

    def __getitem__(self, key):
        if _basic_key(key):                  # (ints, slices, None, ...: a view, with its strides)
            return _viewed(self, lambda p: p[key])
        keys = key if isinstance(key, tuple) else (key,)
        for k in keys:
            if k.__class__ is MetaArray and k.dtype == np.bool_:     # (a meta index array: its shape decides)
                raise NotImplementedError(NONZERO)
        r = np.ndarray.__getitem__(_stand_in(self), _stand_in(key))
        return meta_array(r.shape, r.dtype)

    def item(self, *args):
        raise RuntimeError(ITEM)

    def tolist(self):
        raise NotImplementedError(NO_DATA)

    def tobytes(self, order="C"):
        raise NotImplementedError(NO_DATA)

    def __bool__(self):
        """Inside an op, its own check of its input's values (``if np.any(index < 0): raise ...``) passes: a meta
        kernel checks shapes and dtypes only. Anywhere else a truth value would be data: torch's error."""
        if _in_op():
            return False
        raise RuntimeError(ITEM)

    def __float__(self):
        raise RuntimeError(ITEM)

    def __int__(self):
        raise RuntimeError(ITEM)

    def __complex__(self):
        raise RuntimeError(ITEM)

    def __index__(self):
        raise RuntimeError(ITEM)

    def __repr__(self):
        return f"MetaArray(shape={self.shape}, dtype={self.dtype})"

    __str__ = __repr__

    def __reduce__(self):
        """Pickled as what it is: shape, dtype and strides (a meta tensor pickles, as torch's does)."""
        return meta_array, (self.shape, self.dtype, self._st)

    def __reduce_ex__(self, protocol):
        return self.__reduce__()

    # --- methods that would copy the (absent) data: a new meta array instead ---------------------------------
    def copy(self, order="K"):
        return meta_array(self.shape, self.dtype)

    def __copy__(self):
        return meta_array(self.shape, self.dtype)

    def __deepcopy__(self, memo):
        return meta_array(self.shape, self.dtype)

    def astype(self, dtype, order="K", casting="unsafe", subok=True, copy=True):
        return meta_array(self.shape, np.dtype(dtype))

    def ravel(self, order="C"):
        return meta_array((self.size,), self.dtype)

    flatten = ravel

    def reshape(self, *shape, order="C"):
        r = np.ndarray.reshape(_stand_in(self), *shape, order=order)
        p = _layout_probe(self)
        try:
            np.ndarray.shape.__set__(p, r.shape)     # (a view where NumPy can make one: its strides)
        except AttributeError:
            return meta_array(r.shape, r.dtype)      # (else a copy: row-major)
        return meta_array(r.shape, r.dtype, tuple(st // r.itemsize for st in p.strides))

    @property
    def shape(self):
        return np.ndarray.shape.__get__(self)

    @shape.setter
    def shape(self, new):
        """``a.shape = s`` (NumPy's reshape without a copy, which ``view`` uses): refused as NumPy refuses it for
        the strides this array reports, else they change with the shape."""
        p = _layout_probe(self)
        p.shape = new
        np.ndarray.shape.__set__(self, p.shape)
        self._st = tuple(st // self.itemsize for st in p.strides)

    @property
    def T(self):
        return _viewed(self, lambda p: p.T)

    def transpose(self, *axes):
        return _viewed(self, lambda p: p.transpose(*axes))

    def swapaxes(self, a, b):
        return _viewed(self, lambda p: p.swapaxes(a, b))

    def squeeze(self, axis=None):
        return _viewed(self, lambda p: p.squeeze(axis))

    def diagonal(self, offset=0, axis1=0, axis2=1):
        return _viewed(self, lambda p: p.diagonal(offset, axis1, axis2))

    def view(self, *args, **kwargs):
        if not args and not kwargs:
            return meta_array(self.shape, self.dtype, self._st)
        dtype = kwargs.get("dtype", args[0] if args else None)
        if isinstance(dtype, type) and issubclass(dtype, np.ndarray):
            return np.ndarray.view(self, dtype)     # (the class change of meta_array itself)
        itemsize = np.dtype(dtype).itemsize
        shape = self.shape if not self.ndim else \
            self.shape[:-1] + (self.shape[-1] * self.itemsize // itemsize,)
        return meta_array(shape, dtype)
