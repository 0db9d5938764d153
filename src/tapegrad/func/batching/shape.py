"""Batching rules of the shape and view ops and of indexing: dims shift by one past the batch dim, shapes gain the
batch size in front, index keys gain a leading full slice."""

from __future__ import annotations

import numpy as np

from ...ops import shape as _shape_mod  # noqa: F401  (loads the op classes)
from ...ops.index import subscript as _sub
from ...ops.shape import rearrange as _re
from ...ops.shape import split_join as _sj
from ...ops.shape import views as _v
from ...ops._util import mark_view
from ...ops._util import shape_str as _shape_str
from ...tensor import Tensor
from . import ldim, materialize, only_first_batched, pad_to, phys_dim, register, register_names, wrap_dim


def _view(cls, p, *args, **kwargs):
    """``cls.apply(p, *args)`` for a view op, marked as a view of ``p`` (as the public function marks it), so that
    an in-place write into it under ``vmap(grad)`` reaches ``p``'s graph."""
    out = cls.apply(p, *args, **kwargs)
    if isinstance(out, tuple):
        return tuple(mark_view(o, p, lambda t, i=i: cls.apply(t, *args, **kwargs)[i], multi=True)
                     for i, o in enumerate(out))
    return mark_view(out, p, lambda t: cls.apply(t, *args, **kwargs))


def _first_only(fn):
    def rule(level, cls, args, kwargs, phys):
        if not only_first_batched(phys):
            return NotImplemented
        return fn(cls, phys[0], ldim(args[0]), args[1:], kwargs)
    return rule


def _shifted(*positions):
    """A rule for ops whose arguments at ``positions`` (counted after x) are dims of x."""
    def fn(cls, p, n, rest, kwargs):
        if n == 0:
            return NotImplemented
        rest = list(rest)
        for i in positions:
            d = phys_dim(rest[i], n)
            if d is None:
                return NotImplemented
            rest[i] = d
        return _view(cls, p, *rest, **kwargs)
    return _first_only(fn)


register(_sub.Select, _sub.Slice, _sj.Unfold)(_shifted(0))
register(_v.Transpose, _v.TransposeInplace)(_shifted(0, 1))
register(_re.Diagonal, _re.DiagonalCopy)(_shifted(1, 2))


@register(_re.DiagEmbed)
@_first_only
def _diag_embed(cls, p, n, rest, kwargs):
    offset, d1, d2 = rest
    d1, d2 = wrap_dim(d1, n + 1), wrap_dim(d2, n + 1)
    if d1 is None or d2 is None:
        return NotImplemented
    return cls.apply(p, offset, d1 + 1, d2 + 1)


@register(_v.Permute)
@_first_only
def _permute(cls, p, n, rest, kwargs):
    dims = rest[0]
    return _view(cls, p, (0,) + tuple(wrap_dim(d, n) + 1 for d in dims))


@register(_v.T, _v.TInplace)
@_first_only
def _t(cls, p, n, rest, kwargs):
    return _view(_v.Transpose, p, 1, 2) if n == 2 else p.view_as(p)


@register(_v.Squeeze0, _v.Squeeze1, _v.Squeeze2, _v.Squeeze3, _v.Squeeze4, _v.Squeeze5)
@_first_only
def _squeeze(cls, p, n, rest, kwargs):
    return _view(cls, p, tuple(d + 1 for d in rest[0]))


@register(_v.Unsqueeze, _v.UnsqueezeInplace)
@_first_only
def _unsqueeze(cls, p, n, rest, kwargs):
    d = wrap_dim(rest[0], n + 1)
    return _view(cls, p, d + 1)


def _reshape(cls, p, n, rest, kwargs):
    shape = rest[0]
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    return _view(cls, p, (p.shape[0],) + shape, *rest[1:], **kwargs)


def _linear_views():
    import importlib
    _lin = importlib.import_module("tapegrad.ops.nn_ops.linear")
    return _lin._View, _lin._UnsafeView, _lin._Squeeze4


register(_v.View, _v.UnsafeView, *_linear_views())(_first_only(_reshape))


@register(_v.Expand)
@_first_only
def _expand(cls, p, n, rest, kwargs):
    shape = tuple(rest[0])
    q = pad_to(p, n, len(shape))
    out = cls.apply(q, (q.shape[0],) + shape)
    return mark_view(out, p, lambda t: cls.apply(pad_to(t, n, len(shape)), (q.shape[0],) + shape))


@register(_re.Repeat)
@_first_only
def _repeat(cls, p, n, rest, kwargs):
    reps = tuple(rest[0])
    if len(reps) < n:
        return NotImplemented
    return cls.apply(pad_to(p, n, len(reps)), (1,) + reps)


@register(_re.Roll)
@_first_only
def _roll(cls, p, n, rest, kwargs):
    shifts, dims = rest
    if dims is None or n == 0:
        return NotImplemented
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    return cls.apply(p, shifts, tuple(phys_dim(d, n) for d in dims))


@register(_re.Rot90)
@_first_only
def _rot90(cls, p, n, rest, kwargs):
    k, dims = rest
    if n < 2:
        return NotImplemented
    return cls.apply(p, k, tuple(phys_dim(d, n) for d in dims))


@register(_re.Tril, _re.Triu)
@_first_only
def _tri(cls, p, n, rest, kwargs):
    if n < 2:
        return NotImplemented
    return cls.apply(p, *rest, **kwargs)


# --- joining -------------------------------------------------------------------------------------------------------
def _cats():
    from ...ops.nn_ops import _common
    return _sj.Cat, _common._Cat


@register(*_cats())
def _cat(level, cls, args, kwargs, phys):
    dim, xs = args[0], args[1:]
    ref = next((x for x in xs if ldim(x) > 0 or x._array.size), xs[0])
    n = ldim(ref)
    d = phys_dim(dim, n)
    if d is None or any(ldim(x) != n for x in xs):
        return NotImplemented
    return cls.apply(d, *(materialize(level, x, p) for x, p in zip(xs, phys[1:])), **kwargs)


@register(_sj.Stack)
def _stack(level, cls, args, kwargs, phys):
    dim, xs = args[0], args[1:]
    n = ldim(xs[0])
    d = wrap_dim(dim, n + 1)
    if d is None:
        return NotImplemented
    return cls.apply(d + 1, *(materialize(level, x, p) for x, p in zip(xs, phys[1:])), **kwargs)


@register(_sj.SplitViews, _sj.UnbindViews)
@_first_only
def _split(cls, p, n, rest, kwargs):
    keys, d, stack_back = rest
    if n == 0:
        return NotImplemented
    return _view(cls, p, [_key(k) for k in keys], d + 1, stack_back)


# --- indexing ------------------------------------------------------------------------------------------------------
def _key(key):
    return (slice(None),) + (key if isinstance(key, tuple) else (key,))


def _advanced_adjacent(key):
    """Whether the key's advanced parts (arrays, and ints beside them) are next to each other (NumPy then keeps
    their result dims in place, after the batch dim)."""
    key = key if isinstance(key, tuple) else (key,)
    if not any(isinstance(k, (np.ndarray, Tensor, list)) for k in key):
        return True
    adv = [i for i, k in enumerate(key) if isinstance(k, (np.ndarray, Tensor, list, int, np.integer))
           and not isinstance(k, bool)]
    return adv[-1] - adv[0] + 1 == len(adv)


@register(_sj._Basic, _sj.Select, _sj.Slice, _sj.NarrowCopy)
@_first_only
def _basic(cls, p, n, rest, kwargs):
    if cls is _sj.NarrowCopy:
        return cls.apply(p, _key(rest[0]), *rest[1:], **kwargs)
    return _view(cls, p, _key(rest[0]), *rest[1:], **kwargs)


@register(_sub.Index)
@_first_only
def _index(cls, p, n, rest, kwargs):
    key = rest[0]
    if not _advanced_adjacent(key):
        return NotImplemented
    if any(isinstance(k, np.ndarray) and k.dtype == np.bool_ for k in (key if isinstance(key, tuple) else (key,))):
        return NotImplemented
    return cls.apply(p, _key(key), *rest[1:], **kwargs)


# --- strided views: each sample's own block of the storage --------------------------------------------------------
def _reach(sizes, strides, offset):
    """``[first, end)`` of the storage positions a geometry reads (None when it reads nothing)."""
    if 0 in sizes:
        return None
    return offset, offset + sum((n - 1) * s for n, s in zip(sizes, strides)) + 1


def _batch_stride(p):
    a = p._array
    return a.strides[0] // a.itemsize


def _as_strided(level, cls, args, kwargs, phys):
    """torch's semantics: sample ``i`` reads the storage as if its own block began where sample 0's does (the
    offset moves by the batch dim's stride), so the batch dim is prepended with that stride. The region asked for
    must lie within the sample's own memory (torch's error otherwise: it would read other samples)."""
    from ...ops.shape.strided import _check_geometry, _storage_offset_of
    if not only_first_batched(phys) or cls.__module__ != "tapegrad.ops.shape.strided":   # (not _util's AsStrided,
        return NotImplemented                                                               #  a regenerated view)
    x, size, stride, off = args[:4]
    batch = args[4] if len(args) > 4 else 0      # (the batch dims of the vmaps inside this one)
    a = x._array
    _check_geometry(a, size, stride, off)        # (the errors in the sample's terms)
    want = _reach(size, stride, off)
    have = _reach(a.shape, tuple(s // a.itemsize for s in a.strides), _storage_offset_of(x))
    if want is not None and (have is None or want[0] < have[0] or want[1] > have[1]):
        have = have or (0, 0)
        raise RuntimeError(f"result = tensor.as_strided({_shape_str(size)}, {_shape_str(stride)}, {off}) can access "
                           f"memory outside of `tensor`. `result` can access some memory in range [{want[0]}, "
                           f"{want[1]}], but `tensor` can only access some memory in range [{have[0]}, {have[1]}]. "
                           "This is not supported inside of vmap, please try to rewrite the `as_strided` call as a "
                           "sequence of PyTorch view operations")
    p = phys[0]
    geometry = ((p.shape[0],) + tuple(size), (_batch_stride(p),) + tuple(stride), off, batch + 1)
    out = cls.apply(p, *geometry)         # (batch + 1: the gradient per sample, see AsStrided)
    if cls.__name__ == "AsStridedCopy":
        return out
    return mark_view(out, p, lambda t: cls.apply(t, *geometry))


def _slice_inverse(level, cls, args, kwargs, phys):
    """``input``'s storage read with ``src``'s geometry, per sample: the batch dim prepended with ``input``'s batch
    stride (0 when ``input`` is not batched: every sample reads the same memory)."""
    x, src, key, (size, stride, off) = args
    px = materialize(level, x, phys[0])
    geometry = ((px.shape[0],) + tuple(size), (_batch_stride(px),) + tuple(stride), off)
    out = cls.apply(px, materialize(level, src, phys[1]), _key(key), geometry)
    from ...ops.shape.strided import as_strided
    return mark_view(out, px, lambda t: as_strided(t, *geometry))


def _laid_out(level, cls, args, kwargs, phys):
    """``as_strided``'s tangent laid out as the physical input is (an input not batched here: a block per
    sample)."""
    t, x = args[:2]
    batch = args[2] if len(args) > 2 else 0
    return cls.apply(materialize(level, t, phys[0]), materialize(level, x, phys[1]), batch + 1)


def _storage_map(level, cls, args, kwargs, phys):
    """``as_strided``'s gradient (and its adjoint) for a batched gradient: each sample scatters into and gathers
    from a storage of its own (the positions moved by ``sample * size``)."""
    if not only_first_batched(phys):
        return NotImplemented
    g, src, dst, size, src_w, dst_w = args
    p = phys[0]
    n = p.shape[0]
    shift = np.arange(n, dtype=np.int64) * size

    def moved(pos):
        return pos[None] + shift.reshape((n,) + (1,) * pos.ndim)

    def weights(w):
        return None if w is None else np.broadcast_to(w, (n,) + np.shape(w))
    return cls.apply(p, moved(src), moved(dst), n * size, weights(src_w), weights(dst_w))


register_names({"tapegrad.ops.shape.strided": "AsStrided AsStridedCopy"}, _as_strided)
register_names({"tapegrad.ops.shape.strided": "_StorageMap"}, _storage_map)
register_names({"tapegrad.ops.shape.strided": "_LaidOut"}, _laid_out)
register_names({"tapegrad.ops.shape.strided": "SliceInverse"}, _slice_inverse)
