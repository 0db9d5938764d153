"""Variable-length sequences for the recurrent layers: ``pad_sequence``, ``PackedSequence``,
``pack_padded_sequence``, ``pad_packed_sequence``, ``pack_sequence``, ``unpad_sequence``, ``unpack_sequence``,
``invert_permutation``.

>>> from tapegrad.nn.utils.rnn import pad_sequence, pack_padded_sequence
>>> x = pad_sequence([tapegrad.ones(3, 2), tapegrad.ones(1, 2)])            # (T=3, B=2, 2)
>>> packed = pack_padded_sequence(x, [3, 1])
>>> out, h = tapegrad.nn.GRU(2, 4)(packed)                                   # out is a PackedSequence
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from ...tensor import Tensor

__all__ = ["PackedSequence", "pack_padded_sequence", "pad_packed_sequence", "pad_sequence", "pack_sequence",
           "unpad_sequence", "unpack_sequence", "invert_permutation"]


def _cat(tensors, dim=0):
    from ... import cat
    return cat(tensors, dim)


def _stack(tensors, dim=0):
    from ... import stack
    return stack(tensors, dim)


def _index(x, dim, idx):
    from ... import index_select
    return index_select(x, dim, Tensor._make(np.asarray(idx, np.int64)))


def _pad_dim0(x, before, after, value):
    """Pad ``x`` along dim 0 (differentiable)."""
    from .. import functional as F
    if before == 0 and after == 0:
        return x
    return F.pad(x, [0, 0] * (x.dim() - 1) + [before, after], value=value)


class PackedSequence(namedtuple("PackedSequence", ["data", "batch_sizes", "sorted_indices", "unsorted_indices"])):
    """A batch of variable-length sequences, stored time step by time step (``data`` has the active rows of
    every step; ``batch_sizes[t]`` says how many). Made by ``pack_padded_sequence`` / ``pack_sequence``."""

    __slots__ = ()

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is None:                 # (also built as PackedSequence((data, batch_sizes)), as torch's)
            if not (isinstance(data, (list, tuple)) and len(data) == 2):
                raise AssertionError("Expected data to be a list or tuple of length 2")
            data, batch_sizes = data
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args, **kwargs):
        """Convert ``data`` (dtype and/or device); the indices follow its device; ``self`` when nothing changes."""
        data = self.data.to(*args, **kwargs)
        return self if data is self.data else type(self)(data, self.batch_sizes, self.sorted_indices,
                                                         self.unsorted_indices)

    def cuda(self, *args, **kwargs):
        return self.to(*args, **{**kwargs, "device": "cuda"})

    def cpu(self, *args, **kwargs):
        return self.to(*args, **{**kwargs, "device": "cpu"})

    def pin_memory(self):
        def pin(t):
            return None if t is None else t.pin_memory()
        return type(self)(self.data.pin_memory(), self.batch_sizes, pin(self.sorted_indices),
                          pin(self.unsorted_indices))

    def double(self):
        return self.to(dtype=_dt("float64"))

    def float(self):
        return self.to(dtype=_dt("float32"))

    def half(self):
        return self.to(dtype=_dt("float16"))

    def long(self):
        return self.to(dtype=_dt("int64"))

    def int(self):
        return self.to(dtype=_dt("int32"))

    def short(self):
        return self.to(dtype=_dt("int16"))

    def char(self):
        return self.to(dtype=_dt("int8"))

    def byte(self):
        return self.to(dtype=_dt("uint8"))

    @property
    def is_cuda(self):
        return self.data.is_cuda

    def is_pinned(self):
        return self.data.is_pinned()


def invert_permutation(permutation):
    """The inverse of a 1-D permutation tensor (``None`` stays ``None``): ``out[permutation[i]] = i``, the
    ``unsorted_indices`` of a PackedSequence from its ``sorted_indices``.

    >>> invert_permutation(tapegrad.tensor([2, 0, 1]))
    tensor([1, 2, 0])
    """
    if permutation is None:
        return None
    from ...autograd.function import _active
    a = permutation._array if isinstance(permutation, Tensor) else None
    if (a is not None and a.ndim == 1 and a.dtype == np.int64 and not _active[0] and a.size
            and 0 <= a.min() and a.max() < a.size):      # (the common case, in NumPy: packing runs it per batch)
        out = np.empty_like(a)
        out[a] = np.arange(a.size)
        return Tensor._make(out)
    from ... import arange, empty_like
    out = empty_like(permutation)
    return out.scatter_(0, permutation, arange(0, permutation.numel(), device=permutation.device))


def _dt(name):
    from ... import _dtype
    return getattr(_dtype, name)


def _lengths_array(lengths):
    if isinstance(lengths, Tensor):
        return lengths._array.astype(np.int64).ravel()
    return np.asarray(lengths, dtype=np.int64).ravel()


def _pack_time_major(x, lengths_sorted):
    """``x``: (T, B, *) with batch sorted by decreasing length -> (data, batch_sizes)."""
    T = int(lengths_sorted[0]) if lengths_sorted.size else 0
    batch_sizes = np.array([(lengths_sorted > t).sum() for t in range(T)], np.int64)
    data = _cat([x[t, :int(b)] for t, b in enumerate(batch_sizes)], 0)
    return data, batch_sizes


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):  # noqa: A002
    """Pack a padded batch ``(T, B, *)`` (or ``(B, T, *)``) of sequences with the given ``lengths``.

    >>> pack_padded_sequence(tapegrad.zeros(3, 2, 4), [3, 2]).batch_sizes
    tensor([2, 2, 1])
    """
    lengths = _lengths_array(lengths)
    if enforce_sorted:
        if np.any(np.diff(lengths) > 0):
            raise RuntimeError("`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. "
                               "You can pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence "
                               "to sidestep this requirement if you do not need ONNX exportability.")
        sorted_indices = None
    else:
        order = np.argsort(-lengths, kind="stable")
        lengths = lengths[order]
        sorted_indices = Tensor._make(order.astype(np.int64))
        input = _index(input, 0 if batch_first else 1, order)
    if lengths.size and lengths[-1] <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element in 'lengths' that "
                           "is <= 0")
    if batch_first:
        input = input.transpose(0, 1)
    if lengths.size and lengths[0] > input.shape[0]:
        raise RuntimeError(f"Expected sequence length to be larger than or equal to all lengths, but got "
                           f"{input.shape[0]} < {lengths[0]}")
    data, batch_sizes = _pack_time_major(input, lengths)
    return PackedSequence(data, Tensor._make(batch_sizes), sorted_indices, None)


def _unpack_time_major(sequence, padding_value, total_length=None):
    """PackedSequence -> padded (T, B, *) in sorted batch order, and the sorted lengths."""
    bs = sequence.batch_sizes._array
    data = sequence.data
    B = int(bs[0]) if bs.size else 0
    T = bs.size if total_length is None else total_length
    steps, start = [], 0
    for b in bs:
        b = int(b)
        steps.append(_pad_dim0(data[start:start + b], 0, B - b, padding_value))
        start += b
    for _ in range(T - bs.size):
        steps.append(_pad_dim0(data[0:0], 0, B, padding_value))
    padded = _stack(steps, 0)
    lengths = np.array([(bs > i).sum() for i in range(B)], np.int64)
    return padded, lengths


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """Undo ``pack_padded_sequence``: returns ``(padded, lengths)`` in the original batch order."""
    max_seq_length = sequence.batch_sizes.shape[0]
    if total_length is not None:
        if total_length < max_seq_length:
            raise ValueError("Expected total_length to be at least the length of the longest sequence in input, "
                             f"but got total_length={total_length} and max sequence length being {max_seq_length}")
    padded, lengths = _unpack_time_major(sequence, padding_value, total_length)
    if sequence.unsorted_indices is not None:
        un = sequence.unsorted_indices._array
        padded = _index(padded, 1, un)
        lengths = lengths[un]
    if batch_first:
        padded = padded.transpose(0, 1)
    return padded, Tensor._make(lengths)


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """Stack tensors of shape ``(L_i, *)`` into ``(max L, B, *)`` (or ``(B, max L, *)``), padding with
    ``padding_value`` (differentiable).

    >>> pad_sequence([tapegrad.ones(2), tapegrad.ones(1)], batch_first=True)
    tensor([[1., 1.],
            [1., 0.]])
    """
    if isinstance(sequences, Tensor):
        sequences = list(sequences.unbind(0)) if hasattr(sequences, "unbind") else list(sequences)
    if not hasattr(sequences, "__iter__"):
        raise RuntimeError(f"pad_sequence: Expected iterable for input sequences, but got arg of type: "
                           f"{type(sequences)}")
    sequences = list(sequences)
    if padding_side not in ("left", "right"):
        raise ValueError(f"Expected padding_side to be one of left or right, but got {padding_side}.")
    max_len = max(s.shape[0] for s in sequences)
    padded = [_pad_dim0(s, max_len - s.shape[0] if padding_side == "left" else 0,
                        max_len - s.shape[0] if padding_side == "right" else 0, padding_value) for s in sequences]
    return _stack(padded, 0 if batch_first else 1)


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    """Split a padded batch back into a list of its sequences."""
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    return [padded_sequences[i, :int(n)] for i, n in enumerate(_lengths_array(lengths))]


def pack_sequence(sequences, enforce_sorted=True):
    """Pack a list of tensors ``(L_i, *)`` (pad, then ``pack_padded_sequence``)."""
    lengths = [s.shape[0] for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences):
    """The list of sequences of a PackedSequence (undo ``pack_sequence``)."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
