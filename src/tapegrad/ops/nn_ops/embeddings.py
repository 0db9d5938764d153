# ruff: noqa: A001, A002 - torch's argument name is `input`
"""embedding and embedding_bag.
"""

from __future__ import annotations

import numpy as np

from ...autograd.grad_mode import no_grad
from ...autograd.function import _active
from .._util import Primitive, Tensor, capturing, kernel, linear_jvp, vmap_per_sample
from ._common import _RowGather, _RowScatter, _arr, _legacy_name


# --- embeddings -----------------------------------------------------------------------------------------------
def _check_indices(idx, op):
    if idx.dtype.kind not in "iu":
        raise RuntimeError(f"Expected tensor for argument #1 'indices' to have one of the following scalar types: "
                           f"Long, Int; but got tapegrad.{_legacy_name(idx)}Tensor instead (while checking arguments "
                           f"for {op})")


class Embedding(Primitive):
    """``weight[indices]``; the gradient is scattered back into the rows (never into ``padding_idx``)."""

    array_backward = True

    jvp = staticmethod(linear_jvp)   # linear: the op itself applied to the tangents

    @staticmethod
    def forward(ctx, w, idx, padding_idx, scale_grad_by_freq, acc=None):
        n = w.shape[0]
        if idx.size and (idx.min() < -n or idx.max() >= n or idx.min() < 0):
            raise IndexError("index out of range in self")
        scale = None
        if padding_idx is not None or scale_grad_by_freq:
            scale = np.ones(idx.shape, w.dtype)
            if scale_grad_by_freq:
                counts = np.bincount(idx.reshape(-1), minlength=n)
                scale = scale / counts[idx]
            if padding_idx is not None:
                scale[idx == padding_idx] = 0
        ctx.idx, ctx.n, ctx.scale, ctx.acc, ctx.by_freq = idx, n, scale, acc, scale_grad_by_freq
        return w[idx]

    @staticmethod
    def backward(ctx, grad):
        if ctx.acc is not None:
            if ctx.by_freq:
                raise RuntimeError("embedding_backward: scale_grad_by_freq not supported with sparse gradients")
            _sparse_rows(ctx.acc, ctx.idx if ctx.scale is None else ctx.idx[ctx.scale != 0])
        return kernel(_RowScatter, grad, ctx.idx, ctx.n, ctx.scale), None, None, None, None


def _sparse_rows(acc, idx):
    """A sparse=True lookup's backward: the rows read join those the weight's ``.grad`` will hold as a COO tensor
    (its AccumulateGrad node makes the gradient sparse once it has added it up)."""
    rows = np.unique(idx)
    acc._sparse_rows = rows if acc._sparse_rows is None else np.union1d(acc._sparse_rows, rows)


def _sparse_sink(weight, sparse):
    """The AccumulateGrad node of a leaf weight looked up with ``sparse=True`` (None otherwise)."""
    if sparse and weight._rg and weight.grad_fn is None:
        return weight._accumulator()
    return None


def _renorm_(weight, idx, max_norm, norm_type):
    """Rescale (in place, untracked) the rows of ``weight`` used by ``idx`` whose norm exceeds ``max_norm``."""
    rows = np.unique(idx)
    w = weight._array
    norms = np.linalg.norm(w[rows], ord=norm_type, axis=1) if norm_type != 2 else \
        np.sqrt((w[rows] * w[rows]).sum(1))
    big = norms > max_norm
    if big.any():
        w[rows[big]] *= (max_norm / (norms[big] + 1e-7))[:, None].astype(w.dtype)
    weight._vc[0] += 1


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
              sparse=False):
    """Rows of ``weight`` picked by the integer ``input``; ``padding_idx``'s row gets no gradient.

    >>> F.embedding(tapegrad.tensor([1]), tapegrad.tensor([[0., 0.], [1., 2.]]))
    tensor([[1., 2.]])
    """
    if _active[0]:       # (vmap with a batched input: once per sample)
        r = vmap_per_sample(embedding, (input, weight, padding_idx, max_norm, norm_type, scale_grad_by_freq, sparse),
                            None, (input,))
        if r is not NotImplemented:
            return r
    if weight.ndim != 2:
        raise RuntimeError("'weight' must be 2-D")
    idx = input._array if isinstance(input, Tensor) else np.asarray(input)
    _check_indices(idx, "embedding")
    n = weight._array.shape[0]
    if padding_idx is not None:
        if padding_idx > 0:
            if padding_idx >= n:
                raise AssertionError("Padding_idx must be within num_embeddings")
        elif padding_idx < 0:
            if padding_idx < -n:
                raise AssertionError("Padding_idx must be within num_embeddings")
            padding_idx = n + padding_idx
    if max_norm is not None:
        if idx.size and (idx.min() < 0 or idx.max() >= n):
            raise IndexError("index out of range in self")
        with no_grad():
            _renorm_(weight, idx, max_norm, norm_type)
    return Embedding.apply(weight, idx, padding_idx, bool(scale_grad_by_freq), _sparse_sink(weight, sparse))


class EmbeddingBag(Primitive):
    """Sum, mean or max of the embedding rows of each bag."""

    @staticmethod
    def forward(ctx, w, psw, idx, bag, nbags, mode, padding_idx, acc=None, layout=None):
        if layout is not None:       # (given input and offsets as they were: compile's capture, see _bags)
            idx, bag = _bags(idx, bag, layout)
        n, D = w.shape
        if idx.size and (idx.min() < 0 or idx.max() >= n):
            raise IndexError("index out of range in self")
        keep = idx != padding_idx if padding_idx is not None else np.ones(idx.shape, bool)
        rows = w[idx]
        if psw is not None:
            rows = rows * psw[:, None]
        counts = np.bincount(bag[keep], minlength=nbags).astype(w.dtype)
        ctx.idx, ctx.bag, ctx.n, ctx.mode, ctx.keep, ctx.acc = idx, bag, n, mode, keep, acc
        ctx.save_inputs(0, 1)
        if mode == "max":
            out = np.full((nbags, D), -np.inf, w.dtype)
            np.maximum.at(out, bag[keep], rows[keep])
            out[counts == 0] = 0
            # the row index that gives each (bag, column) maximum (the first one, as torch)
            match = (rows == out[bag]) & keep[:, None]
            arg = np.full((nbags, D), -1)
            for_pos = np.where(match)
            order = np.argsort(for_pos[0], kind="stable")[::-1]
            arg[bag[for_pos[0][order]], for_pos[1][order]] = for_pos[0][order]
            ctx.arg = arg
            return out
        out = np.zeros((nbags, D), w.dtype)
        np.add.at(out, bag[keep], rows[keep])
        scale = keep.astype(w.dtype)
        if mode == "mean":
            with np.errstate(invalid="ignore", divide="ignore"):
                out = out / np.maximum(counts, 1)[:, None]
            scale = scale / np.maximum(counts, 1)[bag]
        ctx.scale = scale
        return out

    @staticmethod
    def backward(ctx, grad):
        w, psw = ctx.saved_tensors
        need = ctx.needs_input_grad
        if ctx.acc is not None:          # (sparse=True: mode is not max)
            _sparse_rows(ctx.acc, ctx.idx[ctx.keep])
        if ctx.mode == "max":
            arg = ctx.arg
            valid = arg >= 0
            B, D = arg.shape
            flat = np.where(valid, ctx.idx[np.maximum(arg, 0)] * D + np.arange(D), 0).reshape(-1)
            gw = _RowScatter.apply(grad.reshape(-1, 1), flat, ctx.n * D, valid.reshape(-1).astype(grad._array.dtype))
            gw = gw.reshape(ctx.n, D)
            return gw, None, None, None, None, None, None, None
        g_rows = _RowGather.apply(grad, ctx.bag)                 # (len(idx), D)
        gw = gpsw = None
        if need[0]:
            rows = g_rows * ctx.scale[:, None]
            if psw is not None:
                rows = rows * psw.unsqueeze(1)
            gw = _RowScatter.apply(rows, ctx.idx, ctx.n, None)
        if need[1]:
            gpsw = (g_rows * _RowGather.apply(w, ctx.idx)).sum(1) * ctx.scale
        return gw, gpsw, None, None, None, None, None, None


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False, mode="mean",
                  sparse=False, per_sample_weights=None, include_last_offset=False, padding_idx=None):
    """Sum/mean/max of the embeddings of each bag: rows of a 2-d ``input``, or 1-d ``input`` cut at ``offsets``.

    >>> F.embedding_bag(tapegrad.tensor([[0, 1]]), tapegrad.tensor([[1., 1.], [3., 3.]]))
    tensor([[2., 2.]])
    """
    if _active[0]:       # (vmap with a batched input: once per sample)
        r = vmap_per_sample(embedding_bag, (input, weight, offsets, max_norm, norm_type, scale_grad_by_freq, mode,
                                            sparse, per_sample_weights, include_last_offset, padding_idx),
                            None, (input, offsets))
        if r is not NotImplemented:
            return r
    idx = input._array
    _check_indices(idx, "embedding_bag")
    if mode not in ("sum", "mean", "max"):
        raise ValueError(f"mode has to be one of sum, mean or max, but got {mode}")
    if mode == "max" and sparse:
        raise ValueError("max mode does not support sparse weights")
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(f"embedding_bag: per_sample_weights was not None. per_sample_weights is only "
                                  f"supported for mode='sum' (got mode='{mode}'). Please open a feature request on "
                                  "the Pytorch GitHub.")
    if idx.ndim == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated is a mini-batch of "
                             f"fixed length sequences. However, found offsets of type {type(offsets)}")
        layout, nbags = "2d", idx.shape[0]
        psw = per_sample_weights.reshape(-1) if per_sample_weights is not None else None
    elif idx.ndim == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        layout = "1d-last" if include_last_offset else "1d"
        nbags = max(len(_arr(offsets)) - bool(include_last_offset), 0)
        psw = per_sample_weights
        if nbags == 0 and psw is not None:     # (include_last_offset with one offset: no bag, nothing is read)
            psw = psw[:0]
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {idx.ndim}")
    n = weight._array.shape[0]
    if padding_idx is not None and padding_idx < 0:
        padding_idx += n
    if max_norm is None and _active[0] and capturing():
        # compile's capture: input and offsets are the op's arguments, the bags made (and checked) in its forward
        off = offsets if isinstance(offsets, Tensor) or offsets is None else _arr(offsets).tolist()
        _bags(idx, None if offsets is None else _arr(offsets), layout)     # (the eager errors at the capture)
        return EmbeddingBag.apply(weight, psw, input, off, nbags, mode, padding_idx, _sparse_sink(weight, sparse),
                                  layout=layout)
    idx, bag = _bags(idx, None if offsets is None else _arr(offsets), layout)
    if max_norm is not None:
        with no_grad():
            _renorm_(weight, idx, max_norm, norm_type)
    return EmbeddingBag.apply(weight, psw, idx, bag, nbags, mode, padding_idx, _sparse_sink(weight, sparse))


def _bags(idx, offsets, layout):
    """embedding_bag's flat indices and the bag of each: a 2-d input's rows, or a 1-d input cut at ``offsets``
    (checked: torch's errors)."""
    if layout == "2d":
        nbags, L = idx.shape
        return idx.reshape(-1), np.repeat(np.arange(nbags), L)
    off = np.asarray(offsets).astype(np.intp)
    if len(off) and off[0] != 0:
        raise RuntimeError(f"offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start "
                           f"from position 0. However, got {off[0]}")
    if len(off) and off[-1] > len(idx):
        raise RuntimeError(f"offsets[-1] can not be greater than input's length {len(idx)} but got offsets[-1] "
                           f"of {off[-1]}")
    if layout == "1d-last":
        off = off[:-1]
    # element i belongs to the last bag that starts at or before it (empty bags are skipped over)
    bag = np.searchsorted(off, np.arange(len(idx)), side="right") - 1
    if len(off) == 0:                # (include_last_offset with one offset: no bag, nothing is read)
        return idx[:0], bag[:0]
    return idx, bag
