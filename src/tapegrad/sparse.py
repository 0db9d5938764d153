"""Sparse COO tensors (layout ``sparse_coo``) as graph code uses them, and ``tapegrad.sparse`` (torch.sparse).

``sparse_coo_tensor(indices, values, size)``, ``torch.sparse.FloatTensor(indices, values, size)`` and
``dense.to_sparse()`` make a ``SparseTensor``: a Tensor that keeps the indices and values it was made from
(``_indices()``, ``_values()``, ``_nnz()``, ``coalesce()``, ``indices()``/``values()`` once coalesced, torch's
printing) and holds its *dense* values as its array. Every op computes with that array, so ``sparse @ dense``,
``torch.mm``/``spmm``/``sparse.mm``/``sparse.addmm``, ``dense + sparse`` and ``to_dense()`` give torch's values and
torch's dense results, with gradients for the dense operand and for the values. The methods whose result torch
keeps sparse (``sparse * 2``, ``/``, ``-``, ``.t()``, ``.double()``, ``clone``, ``abs``/``sqrt``/``pow``,
``sparse + sparse``) and ``sparse.sum``/``softmax``/``log_softmax`` return a SparseTensor with torch's entries;
``Embedding(sparse=True)`` gives its weight a sparse gradient (``sparse_grad``). What differs from torch
(documented in docs/design.md): the memory is the dense tensor's; the same ops called as ``torch.*`` functions
(``torch.mul(sparse, 2)``) and ops torch has no sparse kernel for (``exp``, ``>``) compute on the dense values
and return a dense tensor.
"""

from __future__ import annotations

import numpy as np

from . import _dtype
from .autograd.function import Primitive
from .tensor import Tensor, _check_device, sparse_coo

__all__ = ["SparseTensor", "sparse_coo_tensor", "mm", "spmm", "sum", "softmax", "log_softmax", "addmm",
           "to_sparse", "legacy_sparse_new", "FloatTensor",
           "DoubleTensor", "HalfTensor", "BFloat16Tensor", "ByteTensor", "CharTensor", "ShortTensor", "IntTensor",
           "LongTensor", "spdiags"]


class SparseCooTensorWithDimsAndTensors(Primitive):
    """The dense array of a COO tensor: ``values`` summed into zeros of ``shape`` at ``indices`` (repeated
    indices add up, as ``to_dense()`` of an uncoalesced tensor)."""

    @staticmethod
    def forward(ctx, values, indices, shape):
        ctx.indices = indices
        out = np.zeros(shape, dtype=values.dtype)
        np.add.at(out, tuple(indices), values)
        return out

    @staticmethod
    def backward(ctx, grad):
        return grad[tuple(Tensor._make(i) for i in ctx.indices)], None, None


class ToSparse(Primitive):
    """dense -> sparse: the same values (the gradient passes through)."""
    node_name = "ToSparseBackward1"

    @staticmethod
    def forward(ctx, a):
        return a.copy()

    @staticmethod
    def backward(ctx, grad):
        return grad


class ToDense(ToSparse):
    """sparse -> dense: the same values."""
    node_name = "ToDenseBackward0"


class Coalesce(ToSparse):
    """uncoalesced -> coalesced: the same dense values."""
    node_name = "CoalesceBackward0"


class SparseTensor(Tensor):
    """A ``sparse_coo`` tensor: its COO indices and values, over the dense array ops compute with."""

    __slots__ = ("_coo_indices", "_coo_values", "_coalesced")
    is_sparse = True

    @property
    def layout(self):
        return sparse_coo

    def _nnz(self) -> int:
        return int(self._coo_indices.shape[1])

    def sparse_dim(self) -> int:
        return int(self._coo_indices.shape[0])

    def dense_dim(self) -> int:
        return self._array.ndim - self.sparse_dim()

    def is_coalesced(self) -> bool:
        return self._coalesced

    def _indices(self):
        return Tensor._make(self._coo_indices)

    def _values(self):
        return self._coo_values

    def indices(self):
        if not self._coalesced:
            raise RuntimeError("Cannot get indices on an uncoalesced tensor, please call .coalesce() first")
        return self._indices()

    def values(self):
        if not self._coalesced:
            raise RuntimeError("Cannot get values on an uncoalesced tensor, please call .coalesce() first")
        return self._values()

    def coalesce(self):
        """Sorted, unique indices (the values of repeated ones summed)."""
        if self._coalesced:
            return self
        return _from_dense(self, self.sparse_dim(), keep=self._coo_indices, node=Coalesce)

    def to_dense(self, dtype=None, *, masked_grad=None):
        out = ToDense.apply(self)
        return out if dtype is None else out.to(dtype)

    def to_sparse(self, sparseDims=None, *, layout=None, blocksize=None, dense_dim=None):  # noqa: N803
        _coo_only(layout)
        return self

    @property
    def data(self):
        """The same COO tensor outside autograd (``p.grad.data.is_sparse`` stays true, as torch's)."""
        return _wrap(Tensor.data.fget(self), self._coo_indices, self._coo_values.detach(), self._coalesced)

    @data.setter
    def data(self, value):
        Tensor.data.fset(self, value)

    def new(self, *args, device=None):
        """``grad.new(indices, values, size)``: the legacy constructor of a sparse tensor makes a sparse one."""
        return legacy_sparse_new(self.dtype, args, device)

    def __repr__(self):
        from ._tensor_str import _add_suffixes, _array_str
        ind, val = self._coo_indices, self._coo_values._array
        body = "tensor(indices=tensor(" + _body(ind, 22, _array_str) + "),\n       values=tensor(" + \
            _body(val, 21, _array_str) + ")"
        suffixes = [f"size={tuple(self._array.shape)}", f"nnz={self._nnz()}"]
        if self.dtype not in (_dtype.get_default_dtype(), _dtype.int64, _dtype.bool):
            suffixes.append(f"dtype={self.dtype}")
        suffixes.append(f"layout={sparse_coo}")
        if self.grad_fn is not None:
            suffixes.append(f"grad_fn=<{self.grad_fn.name()}>")
        elif self._rg:
            suffixes.append("requires_grad=True")
        return _add_suffixes(body, suffixes, 7, force_newline=True)

    def __reduce_ex__(self, proto):
        return (_rebuild_coo, (self._coo_indices, self._coo_values.detach()._array, tuple(self._array.shape),
                               self._coalesced, self._rg))

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        new = Tensor.__deepcopy__(self, memo)
        new._coo_indices = self._coo_indices.copy()
        new._coo_values = Tensor._make(self._coo_values._array.copy())
        new._coalesced = self._coalesced
        return new


def _rebuild_coo(indices, values, size, coalesced, requires_grad):
    """Unpickle a COO tensor (pickle, deepcopy through pickling, DataLoader workers)."""
    out = sparse_coo_tensor(indices, Tensor._make(values), size, is_coalesced=coalesced)
    return out.requires_grad_() if requires_grad else out


def _body(a, indent, array_str):
    return array_str(a, indent) if a.size else f"[], size={tuple(a.shape)}"


def _wrap(dense, indices, values, coalesced):
    """The SparseTensor over ``dense`` (an op's output: its array and its place in the graph)."""
    s = SparseTensor.__new__(SparseTensor)
    for slot in ("_array", "_rg", "grad_fn", "_grad", "_output_nr", "_vcl", "_acc", "_view"):
        setattr(s, slot, getattr(dense, slot))
    s._coo_indices, s._coo_values, s._coalesced = indices, values, coalesced
    return s


# --- ops whose result torch keeps sparse: the dense result, with the COO entries torch's has ----------------------
def _entries(out, ind):
    """``out``'s values at the COO indices ``ind`` (differentiable: a gather from the dense result)."""
    return out[tuple(Tensor._make(i) for i in ind)]


def _pattern_kept(name):
    """A method whose result keeps the input's entries (a cast, a copy, a negation): the op applied to the dense
    values and to the COO values, torch's entries exactly (uncoalesced ones too)."""
    base = getattr(Tensor, name)

    def method(self, *args, **kwargs):
        out = base(self, *args, **kwargs)
        if out is self or not isinstance(out, Tensor) or out.shape != self.shape:
            return out
        return _wrap(out, self._coo_indices, base(self._coo_values, *args, **kwargs), self._coalesced)
    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"``sparse.{name}(...)``: a COO tensor with the same entries, as torch's."
    return method


def _is_scalar(other):
    return not isinstance(other, Tensor) or other.ndim == 0


def _scaled(name, divide=False):
    """``sparse * c``, ``sparse / c`` (a number or a 0-d tensor: the values scaled, torch's entries);
    ``sparse * dense`` (the entries of the product at the sparse tensor's indices)."""
    base = getattr(Tensor, name)

    def method(self, other):
        if divide and not _is_scalar(other):
            raise RuntimeError(f"Sparse division requires a scalar or zero-dim dense tensor divisor (got shape "
                               f"{list(other.shape)} for divisor)")
        if isinstance(other, SparseTensor) and not divide:
            return _elementwise_pair(self, other, base)
        out = base(self, other)
        if not isinstance(out, Tensor) or out.shape != self.shape:
            return out
        values = base(self._coo_values, other) if _is_scalar(other) else _entries(out, self._coo_indices)
        return _wrap(out, self._coo_indices, values, self._coalesced)
    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"``sparse.{name}(other)``: a COO tensor, as torch's."
    return method


def _elementwise_pair(a, b, op):
    """sparse (op) sparse of one shape, with torch's entries: equal indices give the values combined entry by
    entry; two coalesced inputs give the coalesced union of their entries (their intersection for a product);
    otherwise the entries are concatenated, uncoalesced."""
    if tuple(a.shape) != tuple(b.shape) or a.sparse_dim() != b.sparse_dim():
        return op(a, b)
    out = op(a, b)
    product = op.__name__ in ("__mul__", "mul", "__rmul__")
    ia, ib = a._coo_indices, b._coo_indices
    if not product and ia.shape == ib.shape and np.array_equal(ia, ib):
        return _wrap(out, ia, op(a._coo_values, b._coo_values), a._coalesced and b._coalesced)
    if product or (a._coalesced and b._coalesced):
        shape = a.shape[:a.sparse_dim()]
        fa, fb = np.ravel_multi_index(tuple(ia), shape), np.ravel_multi_index(tuple(ib), shape)
        flat = np.intersect1d(fa, fb) if product else np.union1d(fa, fb)
        ind = np.stack(np.unravel_index(flat, shape)).astype(np.int64).reshape(len(shape), -1)
        return _wrap(out, ind, _entries(out, ind), True)
    from .ops.shape import cat
    vb = b._coo_values if op.__name__ in ("__add__", "add") else -b._coo_values
    return _wrap(out, np.concatenate([ia, ib], axis=1), cat([a._coo_values, vb]), False)


def _summed(name):
    base = getattr(Tensor, name)

    def method(self, other, *args, **kwargs):
        if isinstance(other, SparseTensor) and not args and not kwargs:
            return _elementwise_pair(self, other, base)
        return base(self, other, *args, **kwargs)
    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"``sparse.{name}(other)``: sparse with a sparse ``other`` (as torch), else dense."
    return method


def _transposed(self, dim0, dim1):
    """``sparse.transpose(d0, d1)`` of two sparse dims: the index rows swapped (uncoalesced, as torch's)."""
    out = Tensor.transpose(self, dim0, dim1)
    n = self._array.ndim
    d0, d1 = dim0 % n if n else 0, dim1 % n if n else 0
    if max(d0, d1) >= self.sparse_dim():
        return out
    ind = self._coo_indices.copy()
    ind[[d0, d1]] = ind[[d1, d0]]
    return _wrap(out, ind, self._coo_values, self._coalesced and self._nnz() <= 1)


def _zero_kept(name):
    """A unary op that maps 0 to 0 (``abs``, ``sqrt``, ``pow(2)``, ...): torch keeps the result sparse, on the
    coalesced entries."""
    base = getattr(Tensor, name)

    def method(self, *args, **kwargs):
        out = base(self, *args, **kwargs)
        if not isinstance(out, Tensor) or out.shape != self.shape:
            return out
        c = self if self._coalesced else self.coalesce()
        return _wrap(out, c._coo_indices, base(c._coo_values, *args, **kwargs), True)
    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"``sparse.{name}(...)``: a COO tensor of the coalesced entries, as torch's."
    return method


for _name in ("to", "type", "double", "float", "half", "bfloat16", "clone", "detach", "neg", "__neg__"):
    setattr(SparseTensor, _name, _pattern_kept(_name))
for _name in ("abs", "sqrt", "square", "sin", "tan", "tanh", "sinh", "asin", "atan", "asinh", "atanh", "expm1",
              "log1p", "relu", "sign", "sgn", "floor", "ceil", "round", "trunc", "frac", "neg_", "__abs__"):
    if _name != "neg_":
        setattr(SparseTensor, _name, _zero_kept(_name))
SparseTensor.pow = SparseTensor.__pow__ = _zero_kept("pow")
for _name, _div in (("__mul__", False), ("__rmul__", False), ("mul", False), ("__truediv__", True),
                    ("div", True)):
    setattr(SparseTensor, _name, _scaled(_name, _div))
for _name in ("__add__", "add", "__sub__", "sub"):
    setattr(SparseTensor, _name, _summed(_name))
SparseTensor.transpose = _transposed
SparseTensor.t = lambda self: _transposed(self, 0, 1) if self._array.ndim == 2 else Tensor.t(self)


def _selected(self, dim, index):
    """``sparse.select(dim, i)`` / ``sparse[i]`` / ``sparse[:, i]`` of a sparse dim: the entries in that slice, that
    index row dropped (torch's; a spiking network's ``inputs[t]`` of a sparse raster stays sparse)."""
    out = Tensor.select(self, dim, index)
    n = self._array.ndim
    d = dim % n if n else 0
    if d >= self.sparse_dim():
        return out
    i = index % self._array.shape[d] if isinstance(index, int) else index
    keep = self._coo_indices[d] == i
    ind = np.delete(self._coo_indices[:, keep], d, axis=0)
    return _wrap(out, ind, self._coo_values[Tensor._make(keep)], self._coalesced and d != 0)


def _getitem(self, key):
    """An int (and full slices before it) selects, keeping the result sparse; other keys index the dense values."""
    if isinstance(key, int) and not isinstance(key, bool):
        return _selected(self, 0, key)
    if isinstance(key, tuple) and key and isinstance(key[-1], int) and not isinstance(key[-1], bool) and \
            all(isinstance(k, slice) and k == slice(None) for k in key[:-1]):
        return _selected(self, len(key) - 1, key[-1])
    return Tensor.__getitem__(self, key)


def _joined(kind, tensors, d, out):
    """``torch.cat``/``torch.stack`` of COO tensors along a sparse dim: a COO tensor of every input's entries, in
    order (uncoalesced, as torch's); the dense ``out`` carries the values and the graph."""
    if not all(isinstance(t, SparseTensor) for t in tensors) or \
            d > tensors[0].sparse_dim() - (kind == "cat") or any(t.dense_dim() for t in tensors):
        return out
    parts, offset = [], 0
    for k, t in enumerate(tensors):
        ind = t._coo_indices
        if kind == "stack":
            ind = np.insert(ind, d, k, axis=0)
        else:
            ind = ind.copy()
            ind[d] += offset
            offset += t._array.shape[d]
        parts.append(ind)
    from .ops.shape import cat as _cat
    values = _cat([t._coo_values for t in tensors])
    return _wrap(out, np.concatenate(parts, axis=1).astype(np.int64), values, False)


def _unsqueezed(self, dim):
    """``sparse.unsqueeze(d)`` at or before the last sparse dim: a zero index row inserted (uncoalesced, as torch's)."""
    out = Tensor.unsqueeze(self, dim)
    d = dim % out.ndim
    if d > self.sparse_dim():
        return out
    return _wrap(out, np.insert(self._coo_indices, d, 0, axis=0), self._coo_values, False)


SparseTensor.select = _selected
SparseTensor.unsqueeze = _unsqueezed
SparseTensor.__getitem__ = _getitem
SparseTensor.unbind = lambda self, dim=0: tuple(_selected(self, dim, i) for i in range(self._array.shape[dim]))


def _install_join():
    from .ops.shape import split_join
    split_join.SPARSE_JOIN[:] = [SparseTensor, _joined]


_install_join()


def _coo_only(layout):
    if layout is not None and layout is not sparse_coo:
        raise RuntimeError(f"tapegrad has the sparse_coo layout only, not {layout!r} (to_sparse() makes a COO "
                           "tensor)")


def _from_dense(t, sparse_dim, keep=None, node=ToSparse):
    """``t`` as a coalesced COO tensor: the indices (among the first ``sparse_dim`` dims) whose value is not all
    zero, in row-major order (``keep``: indices that stay even where their values sum to zero, as coalesce)."""
    a = t._array
    if not 0 <= sparse_dim <= a.ndim:
        raise RuntimeError(f"dense_to_sparse: sparse_dim argument must be in [0,{a.ndim}] range, but {sparse_dim} "
                           "is given")
    dense = node.apply(t)
    if sparse_dim == 0:                  # one "entry": the whole tensor
        return _wrap(dense, np.zeros((0, 1), dtype=np.int64), dense.reshape((1,) + a.shape), True)
    if keep is not None:
        present = np.zeros(a.shape[:sparse_dim], dtype=bool)
        present[tuple(keep)] = True
    else:
        present = a.reshape(a.shape[:sparse_dim] + (-1,)).any(axis=-1)
    indices = np.stack(np.nonzero(present)).astype(np.int64)
    return _wrap(dense, indices, dense[tuple(Tensor._make(i) for i in indices)], True)


def sparse_grad(var, rows):
    """Make ``var.grad`` (already added up) the COO gradient of a ``sparse=True`` embedding: entries at ``rows``,
    the rows its lookups read. torch's holds one entry per lookup, uncoalesced; this one holds each row once (its
    coalesced form, still marked uncoalesced, as torch's). A gradient with values outside those rows (the weight
    was also used densely) stays dense, as torch's sparse + dense sum."""
    g = var._grad
    if g.__class__ is SparseTensor:
        rows = np.union1d(g._coo_indices[0], rows)
    a = g._array
    outside = np.ones(a.shape[0], bool)
    outside[rows] = False
    if a[outside].any():
        return
    var._grad = _wrap(g, rows.astype(np.int64)[None], Tensor._make(a[rows]), False)


def sparse_mask(self, mask):
    """``dense.sparse_mask(mask)``: a COO tensor of ``self``'s values at ``mask``'s entries (its indices, coalesced
    or not, as they are)."""
    if not getattr(mask, "is_sparse", False):
        raise RuntimeError("Could not run 'aten::sparse_mask' with arguments from the 'CPU' backend: the mask must "
                           "be a sparse COO tensor")
    if tuple(self.shape) != tuple(mask.shape):
        raise RuntimeError("sparse_mask(): operands have incompatible sizes; self has size "
                           f"{list(self.shape)} but mask has size {list(mask.shape)}")
    ind = mask._coo_indices
    values = self[tuple(Tensor._make(i) for i in ind)]
    return sparse_coo_tensor(ind, values, tuple(self.shape), is_coalesced=mask.is_coalesced())


def to_sparse(self, sparseDims=None, *, layout=None, blocksize=None, dense_dim=None):  # noqa: N803
    """``t.to_sparse()``: a COO tensor of ``t``'s nonzero entries (``sparseDims``: how many leading dims are
    sparse; the rest stay dense in each value)."""
    _coo_only(layout)
    sparse_dim = self._array.ndim if sparseDims is None else int(sparseDims)
    if dense_dim is not None:
        sparse_dim = self._array.ndim - int(dense_dim)
    return _from_dense(self, sparse_dim)


def sparse_coo_tensor(indices, values, size=None, *, dtype=None, device=None, pin_memory=False,
                      requires_grad=False, check_invariants=None, is_coalesced=None):
    """A COO tensor: ``values[k]`` at ``indices[:, k]`` (repeated indices add up when it is used).

    >>> tapegrad.sparse_coo_tensor([[0, 1], [1, 0]], [3., 4.], (2, 2)).to_dense()
    tensor([[0., 3.],
            [4., 0.]])
    """
    from .creation import tensor as _tensor
    if _check_device(device):
        raise RuntimeError("tapegrad's sparse tensors are CPU only: a sparse tensor cannot be made on the meta device")
    ind = indices._array if isinstance(indices, Tensor) else np.asarray(indices)
    if ind.ndim != 2:
        raise RuntimeError(f"indices must be sparse_dim x nnz, but got: {list(ind.shape)}")
    ind = ind.astype(np.int64)
    if not isinstance(values, Tensor):
        values = _tensor(values, dtype=dtype)
    elif dtype is not None:
        values = values.to(dtype)
    if values._array.ndim == 0 or values._array.shape[0] != ind.shape[1]:
        nnz = values._array.shape[0] if values._array.ndim else 0
        raise RuntimeError(f"indices and values must have same nnz, but got nnz from indices: {ind.shape[1]}, "
                           f"nnz from values: {nnz}")
    dense_shape = tuple(values._array.shape[1:])
    if size is None:
        size = tuple(int(m) + 1 for m in ind.max(axis=1)) if ind.shape[1] else (0,) * ind.shape[0]
        size += dense_shape
    size = tuple(int(s) for s in size)
    for d in range(ind.shape[0]):
        if ind.shape[1] and (ind[d].max() >= size[d] or ind[d].min() < 0):
            bad = ind[d].max() if ind[d].max() >= size[d] else ind[d].min()
            raise RuntimeError(f"size is inconsistent with indices: for dim {d}, size is {size[d]} but found "
                               f"index {bad}")
    _check_dense_size(size, values._array.dtype)
    if requires_grad:               # the tensor is a leaf that requires grad (not its values), as torch's
        values = values.detach()
    dense = SparseCooTensorWithDimsAndTensors.apply(values, ind, size)
    coalesced = bool(is_coalesced) if is_coalesced is not None else ind.shape[1] <= 1
    out = _wrap(dense, ind, values, coalesced)
    if requires_grad:
        out.requires_grad_()
    return out


DENSE_LIMIT = 1 << 30        # bytes: a COO tensor's dense values past this are refused (see _check_dense_size)


def spdiags(diagonals, offsets, shape, layout=None):
    """A sparse ``shape`` matrix with the rows of ``diagonals`` on the diagonals ``offsets`` (0 the main one,
    positive above it); entry ``(i, i + offsets[k])`` is ``diagonals[k, i + offsets[k]]``, as SciPy's spdiags.

    >>> spdiags(tapegrad.tensor([[1., 2.]]), tapegrad.tensor([0]), (2, 2)).to_dense()
    tensor([[1., 0.],
            [0., 2.]])
    """
    from .creation import tensor
    _coo_only(layout)
    if offsets.dtype != _dtype.int64:
        raise RuntimeError(f"Offset Tensor must have dtype Long but got {offsets.dtype._legacy}")
    if offsets.dim() > 1:
        raise RuntimeError("Offsets must be scalar or vector")
    if len(shape) != 2:
        raise RuntimeError("Output shape must be 2d")
    offs = offsets._array.reshape(-1)
    diags = diagonals if diagonals.dim() == 2 else diagonals.reshape(1, -1)
    if diags.shape[0] != offs.size:
        raise RuntimeError(f"Number of diagonals ({diags.shape[0]}) does not match the number of offsets "
                           f"({offs.size})")
    if np.unique(offs).size != offs.size:
        raise RuntimeError("Offset tensor contains duplicate values")
    n_rows, n_cols = int(shape[0]), int(shape[1])
    rows, cols, which = [], [], []
    for k, off in enumerate(offs.tolist()):
        i = np.arange(max(0, -off), max(0, min(n_rows, n_cols - off, diags.shape[1] - off)))
        rows.append(i)
        cols.append(i + off)
        which.append(np.full(i.size, k))
    rows, cols, which = (np.concatenate(a).astype(np.int64) for a in (rows, cols, which))
    values = diags[tensor(which), tensor(cols)]
    return sparse_coo_tensor(tensor(np.stack([rows, cols])), values, (n_rows, n_cols))


def _check_dense_size(size, dtype):
    """tapegrad's COO tensors hold their dense values: one whose dense size passes ``DENSE_LIMIT`` (1 GiB) is
    refused with a clear error, not allocated (a graph of 100,000 nodes would need 40 GB where torch needs its
    nonzeros)."""
    n = 1
    for s in size:
        n *= s
    nbytes = n * np.dtype(dtype).itemsize
    if nbytes > DENSE_LIMIT:
        raise RuntimeError(f"sparse_coo_tensor: tapegrad's sparse tensors hold their dense values, and size "
                           f"{tuple(size)} of {np.dtype(dtype).name} would take {nbytes / 2**30:.1f} GiB (the limit "
                           f"is {DENSE_LIMIT / 2**30:.0f} GiB): tapegrad has no sparse storage; use a dense "
                           "formulation (index_add / scatter over the edges) for graphs this large")


def sum(input, dim=None, dtype=None):  # noqa: A001, A002 - torch's names
    """torch.sparse.sum: over every dim, a 0-d dense tensor; over some sparse dims, a coalesced COO tensor of the
    remaining index tuples (over every sparse dim, the dense sum)."""
    from .ops.reduce.sums import sum as _sum
    if not getattr(input, "is_sparse", False):
        raise RuntimeError("_sparse_sum: expected input to be a sparse COO tensor, but got a strided tensor")
    if dim is None:
        return _sum(input) if dtype is None else _sum(input, dtype=dtype)
    dims = [dim] if isinstance(dim, int) else list(dim)
    n = input._array.ndim
    dims = sorted({d % n for d in dims})
    out = _sum(input, dims) if dtype is None else _sum(input, dims, dtype=dtype)
    keep = [d for d in range(input.sparse_dim()) if d not in dims]
    if not keep:
        return out
    c = input.coalesce()
    shape = tuple(input.shape[d] for d in keep)
    flat = np.unique(np.ravel_multi_index(tuple(c._coo_indices[keep]), shape))
    ind = np.stack(np.unravel_index(flat, shape)).astype(np.int64).reshape(len(keep), -1)
    return _wrap(out, ind, _entries(out, ind), True)


def _masked_softmax(input, dim, log):
    from .nn.functional import log_softmax as _log_softmax, softmax as _softmax
    from .ops.elementwise._common import where
    if not getattr(input, "is_sparse", False):
        raise RuntimeError("softmax: expected input to be a sparse COO tensor")
    c = input.coalesce()
    present = np.zeros(input.shape, bool)
    present[tuple(c._coo_indices)] = True
    mask = Tensor._make(present)
    anywhere = Tensor._make(present.any(axis=dim, keepdims=True) | np.zeros_like(present))
    x = where(mask, ToDense.apply(c), Tensor._make(np.array(-np.inf, c._array.dtype)))
    x = where(anywhere, x, Tensor._make(np.zeros((), c._array.dtype)))      # (a row with no entry: all zero)
    out = (_log_softmax if log else _softmax)(x, dim)
    out = where(mask, out, Tensor._make(np.zeros((), c._array.dtype)))
    return _wrap(out, c._coo_indices, _entries(out, c._coo_indices), True)


def softmax(input, dim, dtype=None):  # noqa: A002
    """torch.sparse.softmax: the softmax over each slice's *entries* (a missing entry is -inf, not 0); the result
    has the coalesced input's entries."""
    out = _masked_softmax(input, dim, log=False)
    return out if dtype is None else out.to(dtype)


def log_softmax(input, dim, dtype=None):  # noqa: A002
    """torch.sparse.log_softmax: ``log(sparse.softmax(input, dim))`` on the entries."""
    out = _masked_softmax(input, dim, log=True)
    return out if dtype is None else out.to(dtype)


def addmm(mat, mat1, mat2, *, beta=1, alpha=1):
    """torch.sparse.addmm: ``beta * mat + alpha * (mat1 @ mat2)`` with a sparse ``mat1`` (a dense result)."""
    from .ops.linalg.products import addmm as _addmm
    return _addmm(mat, mat1, mat2, beta=beta, alpha=alpha)


def _product(mat1, mat2):
    """``mat1 @ mat2`` of matrices; sparse @ sparse is a coalesced COO tensor of the structural entries (the
    pairs some product reaches, as torch's), anything else dense."""
    from .ops.linalg.products import mm as _mm
    out = _mm(mat1, mat2)
    if getattr(mat1, "is_sparse", False) and getattr(mat2, "is_sparse", False):
        reach = _presence(mat1).astype(np.float64) @ _presence(mat2).astype(np.float64) > 0
        ind = np.stack(np.nonzero(reach)).astype(np.int64).reshape(2, -1)
        return _wrap(out, ind, _entries(out, ind), True)
    return out


def _presence(s):
    present = np.zeros(s.shape, bool)
    present[tuple(s._coo_indices)] = True
    return present


def mm(mat1, mat2, reduce="sum"):
    """torch.sparse.mm: ``mat1 @ mat2`` where either may be sparse; sparse @ dense is dense, sparse @ sparse
    sparse."""
    if reduce != "sum":
        raise RuntimeError(f"tapegrad.sparse.mm: reduce={reduce!r} is not available (only 'sum')")
    return _product(mat1, mat2)


def spmm(input, mat2):  # noqa: A002
    """torch.spmm: ``input @ mat2`` (``input`` sparse or dense)."""
    return _product(input, mat2)


def _matmul(self, other):
    if isinstance(other, SparseTensor) and self._array.ndim == 2 and other._array.ndim == 2:
        return _product(self, other)
    return Tensor.matmul(self, other)


SparseTensor.mm = _product
SparseTensor.matmul = SparseTensor.__matmul__ = _matmul


def legacy_sparse_new(d, args, device=None):
    """torch's legacy sparse constructors (``torch.sparse.FloatTensor(indices, values, size)``, as pre-1.0 graph
    code builds its adjacency matrix; ``torch.sparse.FloatTensor(2, 3)``, an empty one): deprecated in torch, with
    its warning. As torch's, the ``(indices, values)`` form keeps the values' dtype (``d`` is not applied) and
    wants int64 indices."""
    import warnings

    from ._legacy import _sizes_only
    if _check_device(device):
        raise RuntimeError("tapegrad's sparse tensors are CPU only: a sparse tensor cannot be made on the meta device")
    shape = _sizes_only(args)
    if not args or shape is not None:
        if args:
            warnings.warn("torch.sparse.SparseTensor(shape, *, device=) is deprecated.  Please use "
                          "torch.sparse_coo_tensor(shape, dtype=, device=).", UserWarning, stacklevel=3)
        shape = shape or (0,)
        return sparse_coo_tensor(np.zeros((len(shape), 0), np.int64), Tensor._make(np.zeros((0,), d.np)), shape)
    if len(args) in (2, 3) and isinstance(args[0], Tensor) and isinstance(args[1], Tensor):
        form = "indices, values, shape" if len(args) == 3 else "indices, values"
        warnings.warn(f"torch.sparse.SparseTensor({form}, *, device=) is deprecated.  Please use "
                      f"torch.sparse_coo_tensor({form}, dtype=, device=).", UserWarning, stacklevel=3)
        if args[0].dtype is not _dtype.int64:
            raise RuntimeError("indices must be an int64 tensor")
        return sparse_coo_tensor(*args)
    raise TypeError(f"new() received an invalid combination of arguments - got "
                    f"({', '.join(type(a).__name__ for a in args)}), but expected one of: (*, device), "
                    "(Tensor indices, Tensor values, *, device), (Tensor indices, Tensor values, tuple of ints size, "
                    "*, device), (tuple of ints size, *, device)")


def _legacy_types():
    from ._legacy import sparse_typed
    return tuple(sparse_typed(d) for d in (_dtype.float32, _dtype.float64, _dtype.float16, _dtype.bfloat16,
                                           _dtype.uint8, _dtype.int8, _dtype.int16, _dtype.int32, _dtype.int64))


(FloatTensor, DoubleTensor, HalfTensor, BFloat16Tensor, ByteTensor, CharTensor, ShortTensor, IntTensor,
 LongTensor) = _legacy_types()

Tensor.to_sparse = to_sparse
Tensor.sparse_mask = sparse_mask
Tensor.to_sparse_coo = lambda self: to_sparse(self)
