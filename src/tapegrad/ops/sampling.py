# ruff: noqa: A002 - torch's argument names (input, from)
"""Random sampling: ``normal``, ``bernoulli``, ``poisson``, ``multinomial`` and the in-place fills ``uniform_``,
``normal_``, ``bernoulli_``, ``exponential_``, ``random_``, ``cauchy_``, ``log_normal_``, ``geometric_``.

Every one takes ``generator=`` (a ``tapegrad.Generator``; the global one by default). The numbers are torch's for
the same seed (``_random``'s rules), and so are the
dtypes, shapes, argument checks and error texts. Autograd as in torch: a
sample made from tensors that require grad (``normal(mean, std)``, ``bernoulli(p)``, a fill of a non-leaf)
has a node of torch's name whose gradient is zero; a fill of a leaf that requires grad is torch's in-place error.
"""

from __future__ import annotations

import math

import numpy as np

from .. import _dtype
from .. import _random as R
from .._random import _gen
from .._meta import skips_meta as _skips_meta
from ._util import Primitive, Tensor, apply_inplace, assert_no_overlap, bind, input_shape

__all__ = ["normal", "bernoulli", "poisson", "multinomial"]

# the C type names in torch's messages for random_'s bounds and the continuous distributions' dtype checks
def _g(v):
    """A number as torch's messages print it (C++: -1, 0.5, 1e+10)."""
    return f"{v:g}" if isinstance(v, float) else str(v)


_C_TYPE = {"int8": "signed char", "uint8": "unsigned char", "int16": "short int", "int32": "int",
           "int64": "long int", "bool": "bool", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
           "float32": "float", "float64": "double"}


# --- the autograd side: a sample's gradient is zero ---------------------------------------------------------
_NODES = {}


def _node(name):
    """The Primitive whose node is called ``name`` (``NormalBackward1``, ``UniformBackward0``...): forward returns
    the sample it is given (the last argument), backward gives zero to every tensor argument."""
    cls = _NODES.get(name)
    if cls is None:
        def forward(ctx, *args):
            return args[-1]

        def backward(ctx, grad):
            return tuple(Tensor._make(np.zeros(input_shape(ctx, i), grad._array.dtype)) if need else None
                         for i, need in enumerate(ctx.needs_input_grad))

        cls = _NODES[name] = type(name, (Primitive,), {"forward": staticmethod(forward),
                                                       "backward": staticmethod(backward), "node_name": name})
    return cls


class _NotDifferentiable(Primitive):
    """torch's ``NotImplemented`` node: ``bernoulli(input, p)`` requires grad but has no derivative."""

    node_name = "NotImplemented"

    @staticmethod
    def forward(ctx, x, sample):
        return sample

    @staticmethod
    def backward(ctx, grad):
        raise RuntimeError("the derivative for 'bernoulli' is not implemented.")


def _result(sample, name, *inputs):
    """The sample as a tensor: a node named ``name`` over ``inputs`` when one of them requires grad."""
    if any(isinstance(t, Tensor) and t._rg for t in inputs):
        return _node(name).apply(*inputs, sample)
    return Tensor._make(sample)


def _out(res, out):
    if out is None:
        return res
    assert_no_overlap(out, ())       # (an expanded out: its elements repeat)
    out._array = res._array.astype(out._array.dtype) if out._array.shape != res._array.shape else out._array
    if out._array is not res._array:
        np.copyto(out._array, res._array, casting="unsafe")
    out._vc[0] += 1
    return out


# --- sampling functions -------------------------------------------------------------------------------------
def _is_tensor(x):
    return isinstance(x, Tensor)


def _meta_normal(mean, std, size, dtype, requires_grad, out):
    """``normal`` on the meta device: the result's shape and dtype, nothing drawn."""
    from .._meta import meta_array
    from ..tensor import _size
    ts = [t for t in (mean, std) if _is_tensor(t)]
    if ts:
        d = _dtype.result_type(*ts)
        shape = np.broadcast_shapes(*(t.shape for t in ts))
    else:
        d = _dtype.to_dtype(dtype) if dtype is not None else _dtype.get_default_dtype()
        shape = _size((size,))
    res = Tensor._make(meta_array(shape, d.np))
    if requires_grad:
        res.requires_grad_()
    return _out(res, out)


def normal(mean=0.0, std=1.0, size=None, *, generator=None, out=None, dtype=None, layout=None, device=None,
           pin_memory=False, requires_grad=False):
    """Normal samples: ``normal(mean, std)`` with tensors (broadcast) or ``normal(0., 1., size=(2, 3))``.

    >>> tapegrad.normal(tapegrad.zeros(3), 1.0).shape
    tapegrad.Size([3])
    """
    from ..tensor import _check_device
    meta = _check_device(device, layout)
    tm, ts = _is_tensor(mean), _is_tensor(std)
    if (tm and mean.is_meta) or (ts and std.is_meta) or (meta and not (tm or ts) and size is not None):
        return _meta_normal(mean, std, size, dtype, requires_grad, out)
    if not (tm or ts) and size is None:
        raise TypeError("normal() received an invalid combination of arguments - got (float, float), but expected "
                        "one of: (Tensor mean, Tensor std), (Tensor mean, float std), (float mean, Tensor std), "
                        "(float mean, float std, tuple of ints size)")
    s = std._array if ts else std
    if ts:
        if s.size and np.any(s < 0):
            raise RuntimeError("normal expects all elements of std >= 0.0")
    elif std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {_g(std)}")
    m = mean._array if tm else mean
    if tm or ts:
        d = _dtype.result_type(*(t for t in (mean, std) if _is_tensor(t)))
        if not d.is_floating_point:
            raise NotImplementedError(f"\"normal_kernel_cpu\" not implemented for '{d._legacy}'")
        shape = np.broadcast_shapes(np.shape(m), np.shape(s)) if tm and ts else np.shape(m if tm else s)
        sample = _normal_of_tensors(_gen(generator), shape, d, m, s, tm, ts)
        name = "NormalBackward3" if tm and ts else "NormalBackward1" if tm else "NormalBackward2"
        return _out(_result(sample, name, *(t for t in (mean, std) if _is_tensor(t))), out)
    from ..tensor import _size
    d = _dtype.to_dtype(dtype) if dtype is not None else _dtype.get_default_dtype()
    shape = _size((size,))
    sample = R.normal(_gen(generator), math.prod(shape), float(mean), float(std), R.kind(d)).reshape(shape)
    res = Tensor._make(sample.astype(d.np, copy=False))
    if requires_grad:
        res.requires_grad_()
    return _out(res, out)


def _normal_of_tensors(g, shape, d, m, s, tm, ts):
    """torch's ``normal`` with a tensor mean or std: standard normals (or N(0, std) for a number std) in the
    result's dtype, then times std and plus mean in that dtype."""
    t = d.np.type
    n = math.prod(shape)
    if tm and not ts:
        z = R.normal(g, n, 0.0, float(s), R.kind(d)).reshape(shape)
        return (z + np.asarray(m, d.np)).astype(d.np)
    z = R.normal(g, n, 0.0, 1.0, R.kind(d)).reshape(shape)
    return (z * np.asarray(s, d.np) + (np.asarray(m, d.np) if tm else t(m))).astype(d.np)


_P_RANGE = ("Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could this error message be improved?  "
            "If so, please report an enhancement request to PyTorch.)")


def _probabilities(p):
    if p.size and not ((p >= 0) & (p <= 1)).all():
        raise RuntimeError(_P_RANGE)
    return p


def bernoulli(input, p=None, *, generator=None, out=None):
    """Samples 1 with probability ``input`` (or ``p``, the same for every element), else 0; input's dtype."""
    a = input._array
    if p is None:
        if a.dtype.kind not in "fc":
            raise NotImplementedError(f"\"bernoulli_tensor_cpu_p_\" not implemented for "
                                      f"'{_dtype.from_numpy_dtype(a.dtype)._legacy}'")
        probs = _probabilities(a)     # (a fresh contiguous result: draws in index order, whatever a's layout)
        u = R.uniform01(_gen(generator), a.size, np.float64 if a.dtype == np.float64 else np.float32)
        sample = (u.reshape(a.shape) < probs).astype(a.dtype)
        return _out(_result(sample, "BernoulliBackward0", input), out)
    _check_p(p)
    sample = (R.uniform01(_gen(generator), a.size, np.float64).reshape(a.shape) < p).astype(a.dtype)
    if input._rg:
        return _out(_NotDifferentiable.apply(input, sample), out)
    return _out(Tensor._make(sample), out)


def poisson(input, generator=None):
    """Poisson samples with rates ``input`` (input's dtype)."""
    a = input._array
    if a.dtype.kind != "f":
        raise NotImplementedError(f"\"poisson_cpu\" not implemented for '{_dtype.from_numpy_dtype(a.dtype)._legacy}'")
    if a.size and not (a >= 0).all():
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    sample = R.poisson(_gen(generator), a).reshape(a.shape).astype(a.dtype)
    return _result(sample, "PoissonBackward0", input)


def multinomial(input, num_samples, replacement=False, *, generator=None, out=None):
    """``num_samples`` category indices per row of ``input`` (1-D or 2-D, non-negative weights, not necessarily
    summing to 1), drawn with or without replacement.

    >>> tapegrad.multinomial(tapegrad.tensor([0., 1., 0.]), 2, replacement=True)
    tensor([1, 1])
    """
    a = input._array           # torch's checks, in its order and words
    if a.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if a.dtype.kind != "f":
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: "
                           f"{_dtype.from_numpy_dtype(a.dtype)._legacy}")
    if isinstance(out, Tensor) and out.dtype is not _dtype.int64:
        raise RuntimeError(f"multinomial expects Long tensor out, got: {out.dtype._legacy}")
    n = a.shape[-1]
    if not isinstance(num_samples, (int, np.integer)) or isinstance(num_samples, bool):
        raise TypeError(f"multinomial(): argument 'num_samples' (position 2) must be int, not "
                        f"{type(num_samples).__name__}")
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    if not replacement and num_samples > n:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    if n > 2 ** 24:
        raise RuntimeError("number of categories cannot exceed 2^24")
    shape = a.shape[:-1] + (num_samples,)
    if a.ndim == 2 and a.shape[0] == 0:
        return _out(Tensor._make(np.zeros(shape, np.int64)), out)
    if input.is_meta:             # (no data: nothing checked, nothing drawn)
        from .._meta import meta_array
        return _out(Tensor._make(meta_array(shape, np.int64)), out)
    rows = a.reshape(a.size // n if n else a.shape[0] if a.ndim == 2 else 1, n)
    g = _gen(generator)
    if not replacement or num_samples == 1:
        # torch's fast path: the k largest of w / E (E exponential(1) in the input's dtype, drawn in its memory
        # order), after checks on the whole tensor
        if n == 0:
            raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the operation has no "
                               "identity.")
        if not (np.isfinite(a).all() and (a >= 0).all()):
            raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
        if not (rows.sum(1) > 0).all():
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
        e = R.in_memory_order(a, R.exponential(g, a.size, 1.0)).astype(a.dtype).reshape(rows.shape)
        with np.errstate(divide="ignore", invalid="ignore"):
            keys = rows / e
        if num_samples == 1:
            idx = np.argmax(keys, axis=1)[:, None]
        else:
            idx = np.argsort(-keys, axis=1, kind="stable")[:, :num_samples]
    else:                  # inverse CDF: the first category whose cumulative weight reaches a float64 uniform
        acc = np.float64 if a.dtype == np.float64 else np.float32   # the kernel's accumulator (float for halves)
        rows = rows.astype(acc)
        # the kernel checks row by row: each entry (negative or NaN first, then infinite), then the row's sum
        bad = ~(np.isfinite(rows) & (rows >= 0))
        cum = np.cumsum(rows, axis=1)          # one running sum in the accumulator's precision, as the kernel's
        with np.errstate(invalid="ignore"):
            zero = ~(cum[:, -1] > 0) if n else np.ones(len(rows), bool)
        bad_row = bad.any(1)
        if (bad_row | zero).any():
            i = int(np.argmax(bad_row | zero))
            if bad_row[i]:
                first = rows[i, np.argmax(bad[i])]
                raise RuntimeError("invalid multinomial distribution (encountering probability entry "
                                   f"{'= infinity or NaN' if first >= 0 else '< 0'})")
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
        cdf = (cum / cum[:, -1:]).astype(np.float64)
        cdf[:, -1] = 1.0
        u = R.uniform01(g, rows.shape[0] * num_samples).reshape(rows.shape[0], num_samples)
        idx = np.stack([np.searchsorted(c, r, side="left") for c, r in zip(cdf, u)])
    return _out(Tensor._make(idx.reshape(shape).astype(np.int64)), out)


# --- in-place fills ---------------------------------------------------------------------------------------------
def _fill(x, sample, node, *tensors):
    """Write ``sample`` into ``x`` as torch's in-place random op does (version bump; a recorded node of torch's
    name, gradient zero, when x requires grad; torch's error for a leaf that requires grad)."""
    return apply_inplace(x, lambda old, *ts: _result(sample, node, old, *ts), *tensors)


def _continuous(x, kernel):
    if x._array.dtype.kind != "f":
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{x.dtype._legacy}'")


def _draw(x, generator, f):
    """``f(generator, n)``'s float64 values, one per element of x in its memory order, cast to x's dtype."""
    a = x._array
    with np.errstate(over="ignore", invalid="ignore"):
        return R.in_memory_order(a, f(_gen(generator), a.size)).astype(a.dtype)


def _uniforms(g, a, dtype):
    """Uniforms in [0, 1) of torch's rule for ``dtype``, one per element of array ``a`` in its memory order."""
    return R.in_memory_order(a, R.uniform01(g, a.size, dtype))


def _bernoulli_uniforms(g, a, dtype):
    """The uniforms of a Bernoulli with a tensor of probabilities: 24-bit ones unless the probabilities are
    float64 (53-bit)."""
    return _uniforms(g, a, np.float64 if dtype == np.float64 else np.float32)


def _as_real(a):
    """A complex array's (real, imag) pairs as a float view of shape ``a.shape + (2,)`` (torch's view_as_real),
    and the tapegrad dtype of its parts; a real array as it is."""
    if a.dtype.kind != "c":
        return a, None
    r = a.real
    return np.lib.stride_tricks.as_strided(r, a.shape + (2,), a.strides + (r.itemsize,)), \
        _dtype.from_numpy_dtype(r.dtype)


def _as_complex(vals, a):
    return vals if a.dtype.kind != "c" else (vals[..., 0] + 1j * vals[..., 1]).astype(a.dtype)


@_skips_meta
def uniform_(self, from_=0.0, to=1.0, *, generator=None, **kw):
    """Fill with samples of the uniform distribution on [from, to) (a complex tensor: both parts, as torch)."""
    from_ = kw.pop("from", from_)
    if self._array.dtype.kind != "c":
        _continuous(self, "check_uniform_bounds")
    if from_ > to:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found from={_g(from_)} > to={_g(to)}")
    a, part = _as_real(self._array)
    sample = R.in_memory_order(a, R.uniform(_gen(generator), a.size, from_, to, R.kind(part or self.dtype)))
    return _fill(self, _as_complex(sample.astype(a.dtype, copy=False), self._array), "UniformBackward0")


@_skips_meta
def normal_(self, mean=0.0, std=1.0, *, generator=None):
    """Fill with samples of the normal distribution N(mean, std**2) (a complex tensor: each part with the mean
    and std / sqrt(2), as torch)."""
    if self._array.dtype.kind != "c":
        _continuous(self, "normal_kernel_cpu")
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {_g(std)}")
    a, part = _as_real(self._array)
    if part is not None:
        std = std / math.sqrt(2)
    vals = R.normal(_gen(generator), a.size, float(mean), float(std), R.kind(part or self.dtype),
                    a.flags.c_contiguous)
    return _fill(self, _as_complex(R.in_memory_order(a, vals).astype(a.dtype, copy=False), self._array),
                 "NormalBackward0")


def _check_p(p):
    if not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={_g(p)}")


@_skips_meta
def bernoulli_(self, p=0.5, *, generator=None):
    """Fill with 1 (probability ``p``, a number or a tensor broadcast to self) or 0, in self's dtype."""
    shape = self._array.shape
    if isinstance(p, Tensor):
        probs = _probabilities(p._array)
        u = _bernoulli_uniforms(_gen(generator), self._array, probs.dtype)
        sample = (u < np.broadcast_to(probs, shape)).astype(self._array.dtype)
        return _fill(self, sample, "BernoulliBackward1", p)
    _check_p(p)
    sample = (_uniforms(_gen(generator), self._array, np.float64) < p).astype(self._array.dtype)
    return _fill(self, sample, "BernoulliBackward2")


def _real_only(x, what):
    if x._array.dtype.kind != "f":
        name = x.dtype._legacy if what == "Exponential" else _C_TYPE[x.dtype.name]    # (torch's two spellings)
        raise RuntimeError(f"{what} distribution is a continuous probability distribution. dtype must be a "
                           f"floating point but you specified {name}")


@_skips_meta
def exponential_(self, lambd=1.0, *, generator=None):
    """Fill with samples of the exponential distribution of rate ``lambd`` (mean 1 / lambd)."""
    _real_only(self, "Exponential")
    if not lambd > 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={_g(lambd)}")
    return _fill(self, _draw(self, generator, lambda g, n: R.exponential(g, n, float(lambd))), "ExponentialBackward0")


@_skips_meta
def cauchy_(self, median=0.0, sigma=1.0, *, generator=None):
    """Fill with samples of the Cauchy distribution around ``median`` with scale ``sigma``."""
    _real_only(self, "Cauchy")
    if not sigma > 0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={_g(sigma)}")
    return _fill(self, _draw(self, generator, lambda g, n: R.cauchy(g, n, float(median), float(sigma))),
                 "CauchyBackward0")


@_skips_meta
def log_normal_(self, mean=1.0, std=2.0, *, generator=None):
    """Fill with samples whose logarithm is N(mean, std**2)."""
    _continuous(self, "log_normal_cpu")
    if not std > 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={_g(std)}")
    return _fill(self, _draw(self, generator, lambda g, n: R.log_normal(g, n, float(mean), float(std))),
                 "LogNormalBackward0")


@_skips_meta
def geometric_(self, p, *, generator=None):
    """Fill with the number of Bernoulli(p) trials up to the first success (1, 2, ...)."""
    if self._array.dtype == np.bool_:
        raise NotImplementedError("\"geometric_cpu\" not implemented for 'Bool'")
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={_g(p)}")
    return _fill(self, _draw(self, generator, lambda g, n: R.geometric(g, n, float(p))), "GeometricBackward0")


def _random_range(x):
    """The largest value ``random_()`` draws for x's dtype (torch: the dtype's max for integers, 2**digits for
    floats, so that every integer up to it is exact)."""
    d = x.dtype
    if d is _dtype.bool:
        return 1
    if d.is_floating_point:
        return 2 ** {"float16": 11, "bfloat16": 8, "float32": 24, "float64": 53}[d.name]
    return int(np.iinfo(d.np).max)


@_skips_meta
def random_(self, *args, generator=None, **kw):
    """Fill with integers drawn uniformly: ``random_()`` in [0, the dtype's largest exact integer],
    ``random_(to)`` in [0, to), ``random_(from, to)`` in [from, to) (``to=None``: up to the dtype's largest)."""
    if len(args) > 2 or set(kw) - {"from", "to"}:
        raise TypeError("random_() takes random_(), random_(to) or random_(from, to) (keywords from, to, generator)")
    if "from" in kw or len(args) == 2 or (args and "to" in kw):      # random_(from, to): RandomBackward0
        from_ = kw["from"] if "from" in kw else args[0]
        to = kw.get("to", args[-1] if len(args) == 2 else (args[0] if "from" in kw and args else None))
        node = "RandomBackward0"
    elif args or "to" in kw:                                           # random_(to): RandomBackward1
        from_, to, node = 0, args[0] if args else kw["to"], "RandomBackward1"
    else:                                                              # random_(): RandomBackward2
        from_, to, node = 0, None, "RandomBackward2"
    d = self.dtype
    low, high = int(from_), (_random_range(self) + 1 if to is None else int(to))
    if high <= low:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    if not d.is_floating_point:
        lo, hi = (0, 1) if d is _dtype.bool else (int(np.iinfo(d.np).min), int(np.iinfo(d.np).max))
        if not lo <= low <= hi:
            raise RuntimeError(f"from is out of bounds for {_C_TYPE[d.name]}")
        if not lo <= high - 1 <= hi:
            raise RuntimeError(f"to - 1 is out of bounds for {_C_TYPE[d.name]}")
    a, g = self._array, _gen(generator)
    vals = R.full_range(g, a.size, R.kind(d)) if node == "RandomBackward2" else R.integers(g, a.size, low, high)
    return _fill(self, R.in_memory_order(a, vals).astype(a.dtype), node)


bind(uniform_=uniform_, normal_=normal_, bernoulli_=bernoulli_, exponential_=exponential_, random_=random_,
     cauchy_=cauchy_, log_normal_=log_normal_, geometric_=geometric_, bernoulli=bernoulli, multinomial=multinomial)
