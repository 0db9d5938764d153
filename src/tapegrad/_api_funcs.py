"""torch's remaining top-level functions that are other spellings of what tapegrad has: ATen's forms of the nn
ops (``convolution``, ``constant_pad_nd``, ``grid_sampler``, ``native_dropout``, the RNN cells and layers...),
buffers and files as tensors, ``cond`` / ``while_loop``, and the functions torch removed that still answer with
torch's error."""

from __future__ import annotations

import builtins
import math
import warnings

import numpy as np

from . import _dtype
from ._tensor_api import _REMOVED_EIG, _REMOVED_SYMEIG
from .autograd.function import _active
from .ops._util import Primitive, before_write, transform_visible, vmap_per_sample
from .tensor import Tensor

__all__ = ["range", "thread_safe_generator", "frombuffer", "from_file", "from_dlpack", "to_dlpack", "addmv_",
           "alias_copy", "binomial", "embedding_renorm_", "resize_as_", "cond", "while_loop", "eig", "symeig",
           "nonzero_static", "segment_reduce", "max_pool1d_with_indices", "native_dropout", "native_group_norm",
           "constant_pad_nd", "convolution",
           "grid_sampler", "grid_sampler_2d", "grid_sampler_3d", "affine_grid_generator", "rnn_tanh_cell",
           "rnn_relu_cell", "lstm_cell", "gru_cell", "rnn_tanh", "rnn_relu", "lstm", "gru", "_unsafe_masked_index",
           "_unsafe_masked_index_put_accumulate", "_chunk_cat", "_native_batch_norm_legit", "result_type", "_assert",
           "_assert_async", "embedding_bag"]


def _tg():
    import tapegrad
    return tapegrad


def range(start=0, end=None, step=1, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """Deprecated in torch (its warning): ``[start, end]`` with the end included; use ``arange``."""
    warnings.warn("torch.range is deprecated and will be removed in a future release because its behavior is "
                  "inconsistent with Python's range builtin. Instead, use torch.arange, which produces values in "
                  "[start, end).", UserWarning, stacklevel=2)
    if end is None:
        raise TypeError('range() missing 1 required positional arguments: "end"')
    if step == 0:
        raise RuntimeError("step must be nonzero")
    d = _dtype.to_dtype(dtype) if dtype is not None else _dtype.get_default_dtype()
    n = int(np.floor((end - start) / step)) + 1
    if n < 0:
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    vals = np.asarray(start + step * np.arange(n, dtype=np.float64), dtype=d.np)
    t = Tensor._make(vals)
    if out is not None:
        if tuple(out.shape) != tuple(t.shape):
            out.resize_(tuple(t.shape))
        out._array[...] = vals
        return out
    return t.requires_grad_(requires_grad) if requires_grad else t


def frombuffer(buffer, *, dtype, count=-1, offset=0, requires_grad=False):
    """A 1-d tensor over a Python buffer's memory (shared, not copied), as torch's."""
    d = _dtype.to_dtype(dtype)
    mv = memoryview(buffer)
    nbytes = mv.nbytes
    item = np.dtype(d.np).itemsize
    if offset < 0 or offset >= nbytes and nbytes:
        raise ValueError(f"offset ({offset} bytes) must be non-negative and no greater than buffer length "
                         f"({nbytes} bytes) minus 1")
    if count < 0 and (nbytes - offset) % item:
        raise ValueError(f"buffer length ({nbytes - offset} bytes) after offset ({offset} bytes) must be a multiple "
                         f"of element size ({item})")
    if count == 0 or (count < 0 and nbytes - offset == 0):
        raise ValueError(f"both buffer length ({nbytes}) and count ({count}) must not be 0")
    arr = np.frombuffer(buffer, dtype=d.np, count=count, offset=offset)
    t = Tensor._make(arr)
    return t.requires_grad_(requires_grad) if requires_grad else t


def from_file(filename, shared=None, size=0, *, dtype=None, layout=None, device=None, pin_memory=False):
    """A tensor of ``size`` elements mapped from a file (``shared``: changes are written to the file; else
    private copy-on-write)."""
    d = _dtype.to_dtype(dtype) if dtype is not None else _dtype.get_default_dtype()
    if shared:
        import os
        need = size * np.dtype(d.np).itemsize
        if not os.path.exists(filename) or os.path.getsize(filename) < need:
            with open(filename, "ab") as f:
                f.truncate(need)
        arr = np.memmap(filename, dtype=d.np, mode="r+", shape=(size,)) if size else np.empty(0, d.np)
    else:
        arr = np.memmap(filename, dtype=d.np, mode="c", shape=(size,)) if size else np.empty(0, d.np)
    return Tensor._make(np.asarray(arr) if not size else arr.view(np.ndarray))


class _Capsule:
    """A bare DLPack capsule (what ``to_dlpack`` returns) as the object NumPy's ``from_dlpack`` asks for."""

    def __init__(self, capsule):
        self.capsule = capsule

    def __dlpack__(self, **kwargs):
        return self.capsule

    def __dlpack_device__(self):
        return (1, 0)


def from_dlpack(ext_tensor):
    """A tensor sharing the memory of any object with ``__dlpack__`` (a torch tensor, a NumPy array...), or of a
    DLPack capsule (``to_dlpack``'s)."""
    if type(ext_tensor).__name__ == "PyCapsule":
        ext_tensor = _Capsule(ext_tensor)
    return Tensor._make(np.from_dlpack(ext_tensor))


def to_dlpack(tensor):
    """A DLPack capsule over this tensor's memory."""
    return tensor._array.__dlpack__()


_RESULT_TYPE_FORMS = ("\n * (Tensor tensor, Tensor other)\n * (Number scalar, Tensor tensor)\n"
                      " * (Tensor tensor, Number other)\n * (Number scalar1, Number scalar2)\n")


def result_type(*args, **kwargs):
    """``torch.result_type``: the dtype an op over two operands (tensors or numbers) gives, by torch's promotion.
    torch's four forms (``tensor, other``; ``scalar, tensor``; ``scalar1, scalar2``), their keywords included.

    >>> tapegrad.result_type(tapegrad.tensor([1, 2]), 1.0)
    tapegrad.float32
    """
    from ._dtype import result_type as promote
    tg = _tg()
    ops = list(args)
    order = ("scalar", "scalar1", "tensor", "scalar2", "other")
    if not set(kwargs) - set(order):
        ops += [kwargs[k] for k in order if k in kwargs]
    ok = len(ops) == 2 and set(kwargs) in ({"scalar", "tensor"}, {"tensor", "other"}, {"scalar1", "scalar2"},
                                           {"tensor"} if len(args) == 1 else {"other"}, {"scalar2"}, set())
    ok = ok and all(isinstance(o, (tg.Tensor, bool, int, float, complex, np.number, np.bool_)) for o in ops)
    if not ok:
        got = ", ".join([type(a).__name__ if not isinstance(a, tg.Tensor) else "Tensor" for a in args]
                        + [f"{k}={'Tensor' if isinstance(v, tg.Tensor) else type(v).__name__}"
                           for k, v in kwargs.items()])
        got = got + ", " if kwargs else got
        raise TypeError(f"result_type() received an invalid combination of arguments - got ({got}), but expected "
                        f"one of:{_RESULT_TYPE_FORMS}")
    return promote(*ops)


def thread_safe_generator():
    """The generator of the DataLoader thread worker this runs in, else None (the global generator). tapegrad's
    DataLoader loads in the main process, so this is None, as torch's is there."""
    from .utils.data import get_worker_info
    info = get_worker_info()
    return getattr(getattr(info, "rng", None), "torch_generator", None) if info is not None else None


def addmv_(input, mat, vec, *, beta=1, alpha=1):
    return input.addmv_(mat, vec, beta=beta, alpha=alpha)


class _AliasCopy(Primitive):
    """The copying form of an alias view: a copy whose gradient passes through."""

    node_name = "AliasBackward0_copy"
    array_backward = True

    @staticmethod
    def forward(ctx, x):
        return x.copy()

    @staticmethod
    def backward(ctx, grad):
        return grad

    @staticmethod
    def jvp(ctx, tx):
        return tx


def alias_copy(input, *, out=None):
    """A copy (torch's ``alias_copy``: the copying form of an alias view)."""
    r = _AliasCopy.apply(input)
    if out is not None:
        out.copy_(r)
        return out
    return r


@transform_visible()
def binomial(count, prob, generator=None):
    """Samples of Binomial(count, prob), elementwise, torch's draws (dtype of ``count``)."""
    from . import _random
    c, p = np.broadcast_arrays(count._array, prob._array)
    vals = _random.binomial(_random._gen(generator), c, p, c.dtype).reshape(c.shape).astype(c.dtype)
    return Tensor._make(vals)


def embedding_renorm_(input, indices, max_norm, norm_type):
    """Rescale in place the rows of ``input`` that ``indices`` names whose ``norm_type``-norm exceeds
    ``max_norm`` to that norm (each row once), as ``nn.functional.embedding(max_norm=...)`` does."""
    from .autograd import no_grad
    w = input._array
    rows = np.unique(indices._array.reshape(-1))
    norms = np.linalg.norm(w[rows], ord=norm_type, axis=1) if rows.size else np.zeros(0)
    big = norms > max_norm
    if big.any():
        before_write(input)
    with no_grad():
        w[rows[big]] *= (max_norm / (norms[big] + 1e-7))[:, None].astype(w.dtype)
    input._bump()
    return input


def embedding_bag(weight, indices, offsets, scale_grad_by_freq=False, mode=0, sparse=False, per_sample_weights=None,
                  include_last_offset=False, padding_idx=None):
    """``torch.embedding_bag``, ATen's form: ``(output, offset2bag, bag_size, max_indices)`` for ``mode`` 0 (sum),
    1 (mean) or 2 (max); ``output`` is ``nn.functional.embedding_bag``'s (and carries the gradient). The other
    three are what torch's CPU kernel gives: each index's bag (empty for a sum without ``padding_idx``), each
    bag's count of non-padding indices, and for max the row each maximum came from (for mean the counts again;
    for sum zeros, one per offset)."""
    from .nn.functional import embedding_bag as bags
    if mode not in (0, 1, 2):
        raise RuntimeError("`mode` must be sum, mean, or max.")
    if per_sample_weights is not None and mode != 0:
        raise RuntimeError("embedding_bag: per_sample_weights only supported with mode='sum'")
    flat = indices.reshape(-1)
    output = bags(flat, weight, offsets, scale_grad_by_freq=scale_grad_by_freq, mode=("sum", "mean", "max")[mode],
                  sparse=sparse, per_sample_weights=per_sample_weights, include_last_offset=include_last_offset,
                  padding_idx=padding_idx)
    idx, offs = flat._array.astype(np.int64), offsets._array.astype(np.int64)
    n, tg = idx.size, _tg()
    starts = np.zeros(n + 1, np.int64)
    np.add.at(starts, offs[offs <= n], 1)
    starts[0] -= 1
    offset2bag = np.cumsum(starts)[:n]
    num_bags = offs.size - (1 if include_last_offset else 0)
    if mode == 0:      # (torch's kernel with autograd sizes them per bag, the one without per offset)
        zeros = np.zeros(num_bags if weight.requires_grad and tg.is_grad_enabled() else offs.size, np.int64)
        o2b = offset2bag if padding_idx is not None else np.zeros(0, np.int64)
        return output, tg.tensor(o2b), tg.tensor(zeros), tg.tensor(zeros.copy())
    keep = idx != padding_idx if padding_idx is not None else np.ones(n, bool)
    bag_size = np.bincount(offset2bag[keep], minlength=num_bags)[:num_bags].astype(np.int64)
    if mode == 1:
        return output, tg.tensor(offset2bag), tg.tensor(bag_size), tg.tensor(bag_size.copy())
    w = weight._array
    max_indices = np.zeros((num_bags, w.shape[1]), np.int64)
    best = np.full((num_bags, w.shape[1]), -np.inf)
    for i in np.flatnonzero(keep):          # (the first row holding each maximum, as torch's loop keeps it)
        b = offset2bag[i]
        if b >= num_bags:
            continue
        better = w[idx[i]] > best[b]
        best[b][better] = w[idx[i]][better]
        max_indices[b][better] = idx[i]
    return output, tg.tensor(offset2bag), tg.tensor(bag_size), tg.tensor(max_indices)


def resize_as_(input, the_template, *, memory_format=None):
    return input.resize_as_(the_template)


def cond(pred, true_fn, false_fn, operands=()):
    """``true_fn(*operands)`` if ``pred`` else ``false_fn(*operands)`` (eager: the branch runs as Python)."""
    if isinstance(pred, Tensor):
        if pred._array.size != 1:
            raise RuntimeError(f"Expected pred to be bool or single-element tensor, but got {pred}.")
        pred = bool(pred._array.reshape(()))
    if not callable(true_fn) or not callable(false_fn):
        raise RuntimeError("Expect both branches to be callable.")
    if not isinstance(operands, (tuple, list)):
        raise RuntimeError(f"Expect operands to be a tuple of possibly nested dict/list/tuple that only consists "
                           f"of tensor leaves, but got {operands}.")
    return true_fn(*operands) if pred else false_fn(*operands)


def while_loop(cond_fn, body_fn, carried_inputs):
    """Run ``body_fn(*carried)`` while ``cond_fn(*carried)`` is true; returns the final carried values."""
    if not isinstance(carried_inputs, (tuple, list)):
        raise RuntimeError(f"carried_inputs must be a tuple or list, got {type(carried_inputs)}")
    carried = tuple(carried_inputs)
    while True:
        c = cond_fn(*carried)
        if isinstance(c, Tensor):
            c = bool(c._array.reshape(()))
        if not c:
            return carried
        out = body_fn(*carried)
        carried = tuple(out) if isinstance(out, (tuple, list)) else (out,)


def eig(input, eigenvectors=False, *, e=None, v=None):
    raise RuntimeError(_REMOVED_EIG)


def symeig(input, eigenvectors=False, upper=True, *, out=None):
    raise RuntimeError(_REMOVED_SYMEIG)


@transform_visible()
def nonzero_static(input, *, size, fill_value=-1):
    """The first ``size`` indices of non-zero elements, padded with ``fill_value`` rows (a fixed shape)."""
    if size < 0:
        raise RuntimeError(f"nonzero_static: 'size' must be an non-negative integer, but got size = {size}")
    if input.is_meta:                  # (its shape is the arguments': a meta result, as torch's)
        from ._meta import meta_array
        return Tensor._make(meta_array((size, input._array.ndim), np.int64))
    idx = np.argwhere(input._array).astype(np.int64)[:size]
    out = np.full((size, input._array.ndim), fill_value, np.int64)
    out[:idx.shape[0]] = idx
    return Tensor._make(out)


def segment_reduce(data, reduce, *, lengths=None, indices=None, offsets=None, axis=0, unsafe=False, initial=None):
    """Reduce consecutive segments of ``data`` along ``axis`` (``lengths``, or ``offsets`` of their starts and
    end; batched over the dims before ``axis``): sum, prod, mean, max/amax, min/amin, with ``initial`` as a
    value every segment includes (an empty segment gives ``initial``; without it 0, 1, NaN, -inf or inf).
    Composed of slices and reductions, so gradients are theirs."""
    if _active[0]:       # (vmap with batched lengths: once per sample)
        r = vmap_per_sample(segment_reduce, (data, reduce), {"lengths": lengths, "indices": indices, "offsets": offsets,
                                                             "axis": axis, "unsafe": unsafe, "initial": initial},
                            (lengths, offsets))
        if r is not NotImplemented:
            return r
    tg = _tg()
    from .ops._util import normalize_dim
    kind = {"amax": "max", "amin": "min"}.get(reduce, reduce)
    if kind not in ("sum", "prod", "mean", "max", "min"):
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    if indices is not None:
        raise RuntimeError("segment_reduce(): indices based reduction is not supported yet.")
    if lengths is None and offsets is None:
        raise RuntimeError("segment_reduce(): Either lengths or offsets must be defined.")
    axis = normalize_dim(axis, data.dim())
    if lengths is not None:
        L = np.asarray(lengths, np.int64)     # (__array__: compile breaks the graph here)
    else:
        o = np.asarray(offsets, np.int64)
        L = o[..., 1:] - o[..., :-1]
    lead, n, trail = tuple(data.shape[:axis]), data.shape[axis], tuple(data.shape[axis + 1:])
    if L.ndim != axis + 1 or tuple(L.shape[:-1]) != lead:
        raise RuntimeError("segment_reduce(): Expected data and lengths to be of the same shape up to axis")
    if not unsafe and (L.sum(-1) != n).any():
        raise RuntimeError("segment_reduce(): Expected all rows of lengths along axis to sum to "
                           "data.size(lengths.dim()-1) when !unsafe.")
    empty = {"sum": 0.0, "prod": 1.0, "mean": math.nan, "max": -math.inf, "min": math.inf}[kind]
    rows = []
    for idx in np.ndindex(*lead):
        row = data[idx] if idx else data
        starts = np.concatenate([[0], np.cumsum(L[idx])[:-1]])
        segs = []
        for st, ln in zip(starts.tolist(), L[idx].tolist()):
            if ln == 0:
                segs.append(tg.full(trail, empty if initial is None else initial, dtype=data.dtype))
                continue
            seg = row[st:st + ln]
            if kind == "sum":
                r = seg.sum(0) if initial is None else seg.sum(0) + initial
            elif kind == "prod":
                r = seg.prod(0) if initial is None else seg.prod(0) * initial
            elif kind == "mean":
                r = seg.mean(0) if initial is None else (seg.sum(0) + initial) / ln
            elif kind == "max":
                r = seg.amax(0) if initial is None else tg.clamp(seg.amax(0), min=initial)
            else:
                r = seg.amin(0) if initial is None else tg.clamp(seg.amin(0), max=initial)
            segs.append(r)
        rows.append(tg.stack(segs) if segs else data.new_zeros((0,) + trail))
    out = tg.stack(rows) if lead else rows[0]
    return out.reshape(lead + (L.shape[-1],) + trail)


# --- ATen's forms of the nn ops --------------------------------------------------------------------------

def max_pool1d_with_indices(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    F = _tg().nn.functional
    return F.max_pool1d(input, kernel_size, stride or None, padding, dilation, ceil_mode, return_indices=True)


def native_dropout(input, p, train):
    """(output, mask): in training each element is kept with probability ``1 - p`` and scaled by ``1/(1-p)``."""
    tg = _tg()
    if not train:
        return input.clone(), tg.ones_like(input, dtype=tg.bool)
    mask = tg.empty_like(input).bernoulli_(1 - p).bool()
    scale = 0.0 if p == 1 else 1.0 / (1 - p)
    return input * mask * scale, mask


def native_group_norm(input, weight, bias, N, C, HxW, group, eps):
    """(output, mean, rstd), mean and rstd of shape (N, group)."""
    tg = _tg()
    out = tg.nn.functional.group_norm(input, group, weight, bias, eps)
    x = input.reshape(N, group, (C // group) * HxW if group else 0)     # (no -1: N may be 0)
    mean = x.mean(-1)
    rstd = (x.var(-1, unbiased=False) + eps).rsqrt()
    return out, mean, rstd


def constant_pad_nd(input, pad, value=0):
    return _tg().nn.functional.pad(input, tuple(pad), "constant", value)


def convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups):
    """ATen's one convolution: ``conv{1,2,3}d`` or, when ``transposed``, ``conv_transpose{1,2,3}d``."""
    F = _tg().nn.functional
    d = weight.dim() - 2
    if d not in (1, 2, 3):
        raise RuntimeError(f"convolution: expected a 3-d, 4-d or 5-d weight, got {weight.dim()}-d")
    if transposed:
        fn = (F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d)[d - 1]
        return fn(input, weight, bias, tuple(stride), tuple(padding), tuple(output_padding), groups, tuple(dilation))
    fn = (F.conv1d, F.conv2d, F.conv3d)[d - 1]
    return fn(input, weight, bias, tuple(stride), tuple(padding), tuple(dilation), groups)


_INTERP = {0: "bilinear", 1: "nearest", 2: "bicubic"}
_PADDING = {0: "zeros", 1: "border", 2: "reflection"}


def grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners):
    """``nn.functional.grid_sample`` with ATen's integer modes (0 bilinear, 1 nearest, 2 bicubic; padding 0 zeros,
    1 border, 2 reflection)."""
    return _tg().nn.functional.grid_sample(input, grid, _INTERP[interpolation_mode], _PADDING[padding_mode],
                                           align_corners)


def grid_sampler_2d(input, grid, interpolation_mode, padding_mode, align_corners):
    if input.dim() != 4:
        raise RuntimeError(f"grid_sampler(): expected 4D input and grid with same number of dimensions, but got "
                           f"input with sizes {list(input.shape)}")
    return grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners)


def grid_sampler_3d(input, grid, interpolation_mode, padding_mode, align_corners):
    if input.dim() != 5:
        raise RuntimeError(f"grid_sampler(): expected 5D input and grid with same number of dimensions, but got "
                           f"input with sizes {list(input.shape)}")
    return grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners)


def affine_grid_generator(theta, size, align_corners):
    return _tg().nn.functional.affine_grid(theta, list(size), align_corners)


# --- RNN cells and layers in ATen's form -----------------------------------------------------------------

def _linear(x, w, b):
    F = _tg().nn.functional
    return F.linear(x, w, b)


def rnn_tanh_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    return (_linear(input, w_ih, b_ih) + _linear(hx, w_hh, b_hh)).tanh()


def rnn_relu_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    return (_linear(input, w_ih, b_ih) + _linear(hx, w_hh, b_hh)).relu()


def lstm_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """(h, c) of one LSTM step; ``hx`` is (h, c); gates in torch's order i, f, g, o."""
    h, c = hx
    gates = _linear(input, w_ih, b_ih) + _linear(h, w_hh, b_hh)
    i, f, g, o = gates.chunk(4, -1)
    c2 = f.sigmoid() * c + i.sigmoid() * g.tanh()
    return o.sigmoid() * c2.tanh(), c2


def gru_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """One GRU step; gates in torch's order r, z, n."""
    gi = _linear(input, w_ih, b_ih).chunk(3, -1)
    gh = _linear(hx, w_hh, b_hh).chunk(3, -1)
    r = (gi[0] + gh[0]).sigmoid()
    z = (gi[1] + gh[1]).sigmoid()
    n = (gi[2] + r * gh[2]).tanh()
    return (1 - z) * n + z * hx


def _layers(cell, input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first,
            state_size):
    """A stacked (bi)directional RNN over the sequence, ATen's flat parameter list (w_ih, w_hh[, b_ih, b_hh]) per
    layer and direction; ``hx`` is a tuple of ``state_size`` tensors (num_layers * dirs, batch, hidden)."""
    tg = _tg()
    F = tg.nn.functional
    unbatched = input.dim() == 2
    x = input.unsqueeze(1 if not batch_first else 0) if unbatched else input
    if batch_first:
        x = x.transpose(0, 1)
    hx = tuple(h.unsqueeze(1) if unbatched else h for h in hx)
    dirs = 2 if bidirectional else 1
    per = 4 if has_biases else 2
    finals = [[] for _ in hx]
    for layer in builtins.range(num_layers):
        outs = []
        for d in builtins.range(dirs):
            k = (layer * dirs + d) * per
            w = params[k:k + per] if has_biases else list(params[k:k + per]) + [None, None]
            state = tuple(h[layer * dirs + d] for h in hx)
            steps = builtins.range(x.shape[0] - 1, -1, -1) if d == 1 else builtins.range(x.shape[0])
            seq = [None] * x.shape[0]
            for t in steps:
                out = cell(x[t], state if state_size == 2 else state[0], *w)
                state = tuple(out) if state_size == 2 else (out,)
                seq[t] = state[0]
            outs.append(tg.stack(seq) if seq else x.new_zeros((0,) + tuple(state[0].shape)))
            for j, s in enumerate(state):
                finals[j].append(s)
        x = outs[0] if dirs == 1 else tg.cat(outs, -1)
        if dropout and train and layer < num_layers - 1:
            x = F.dropout(x, dropout, True)
    if batch_first:
        x = x.transpose(0, 1)
    if unbatched:
        x = x.squeeze(1 if not batch_first else 0)
    states = tuple(tg.stack(f).squeeze(1) if unbatched else tg.stack(f) for f in finals)
    return (x,) + states


def rnn_tanh(input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first):
    """(output, h_n) of ``nn.RNN``'s tanh form with flat parameters."""
    return _layers(rnn_tanh_cell, input, (hx,), params, has_biases, num_layers, dropout, train, bidirectional,
                   batch_first, 1)


def rnn_relu(input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first):
    return _layers(rnn_relu_cell, input, (hx,), params, has_biases, num_layers, dropout, train, bidirectional,
                   batch_first, 1)


def gru(input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first):
    return _layers(gru_cell, input, (hx,), params, has_biases, num_layers, dropout, train, bidirectional,
                   batch_first, 1)


def lstm(input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first):
    """(output, h_n, c_n); ``hx`` is (h_0, c_0)."""
    return _layers(lstm_cell, input, tuple(hx), params, has_biases, num_layers, dropout, train, bidirectional,
                   batch_first, 2)


Tensor.nonzero_static = lambda self, *, size, fill_value=-1: nonzero_static(self, size=size, fill_value=fill_value)


# --- private ATen ops that torch's op database tests (used by torch's compiler and FSDP) ---------------------

def _clamped(indices, shape):
    """Index tensors clamped into range: the "unsafe" ops read/write only where the mask is True, so an
    out-of-range index elsewhere must not fail."""
    out = []
    for k, ix in enumerate(indices):
        out.append(None if ix is None else ix.clamp(-shape[k], shape[k] - 1))
    return out


def _unsafe_masked_index(input, mask, indices, fill):
    """``input[indices]`` where ``mask`` is True, ``fill`` elsewhere."""
    tg = _tg()
    vals = input[tuple(_clamped(indices, input.shape))]
    return tg.where(mask, vals, tg.tensor(fill, dtype=input.dtype))


def _unsafe_masked_index_put_accumulate(input, mask, indices, values):
    """``input.index_put(indices, values, accumulate=True)`` taking only the values where ``mask`` is True."""
    tg = _tg()
    vals = tg.where(mask, values, tg.zeros((), dtype=values.dtype))
    return input.index_put(tuple(_clamped(indices, input.shape)), vals, accumulate=True)


def _chunk_cat(tensors, dim, num_chunks, *, out=None):
    """Each tensor padded with zeros along ``dim`` to a multiple of ``num_chunks``, viewed as
    ``(*lead, num_chunks, -1)`` and concatenated along ``dim + 1`` (torch's FSDP helper)."""
    tg = _tg()
    if not tensors:
        raise RuntimeError("_chunk_cat expects a non-empty input tensor list")
    for t in tensors:
        if t.numel() == 0:
            raise RuntimeError("_chunk_cat expects non-empty tensor")
        if t.dtype != tensors[0].dtype:
            raise RuntimeError("_chunk_cat expects all input tensors with the same dtype")
    if num_chunks < 1:
        raise RuntimeError("_chunk_cat expects positive num_chunks")
    from .ops._util import normalize_dim
    if any(t.dim() != tensors[0].dim() for t in tensors):
        if dim < 0:
            raise RuntimeError("_chunk_cat expects non-negative dim when input tensors have different ndims")
        if any(dim >= t.dim() for t in tensors):
            raise RuntimeError("_chunk_cat expects dim < ndim for all input tensors")
    d = normalize_dim(dim, tensors[0].dim())
    lead = tuple(tensors[0].shape[:d])
    parts = []
    for t in tensors:
        if tuple(t.shape[:d]) != lead:
            raise RuntimeError("_chunk_cat expects same sizes of 0,...,dim-1 dimensions for all tensors")
        size = t.shape[d]
        chunk = -(-size // num_chunks)
        if chunk * num_chunks != size:
            pad_shape = tuple(t.shape[:d]) + (chunk * num_chunks - size,) + tuple(t.shape[d + 1:])
            t = tg.cat([t, t.new_zeros(pad_shape)], d)
        parts.append(t.reshape(lead + (num_chunks, -1)))
    r = tg.cat(parts, d + 1)
    if out is not None:
        out.copy_(r)
        return out
    return r


def _native_batch_norm_legit(input, weight, bias, running_mean, running_var=None, training=None, momentum=None,
                             eps=None):
    """``native_batch_norm``'s (output, save_mean, save_invstd); the overload without running statistics is
    ``(input, weight, bias, training, momentum, eps)``."""
    tg = _tg()
    if isinstance(running_mean, bool):          # the no-stats overload
        running_mean, running_var, training, momentum, eps = None, None, running_mean, running_var, training
    return tg.native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps)


def _assert(condition, message):
    """``torch._assert``: Python's ``assert`` as a function (torch.fx can trace it; libraries call it directly)."""
    assert condition, message


def _assert_async(input, assert_msg=None):
    """``torch._assert_async(cond[, msg])``: RuntimeError unless the one-element tensor is nonzero (on the CPU the
    check is immediate; kornia's value checks call it). Reads the tensor's data."""
    if not isinstance(input, Tensor):
        raise TypeError(f"_assert_async(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    if not builtins.bool(input):
        raise RuntimeError("Expected Tensor with single nonzero value, but got zero" if assert_msg is None
                           else assert_msg)
