"""The random number generators: one seeded global ``Generator`` (``manual_seed``) and ``tapegrad.Generator``.

Each generator is a 32-bit Mersenne Twister (mt19937, NumPy's ``MT19937`` bit generator) seeded as torch seeds
its CPU generator (the standard ``init_genrand`` of the seed's low 32 bits), and the draws turn its 32-bit outputs
into numbers by torch's CPU rules, so that ``manual_seed(s)`` followed by the same random ops gives torch's
numbers, bitwise (docs/design.md, "Randomness", lists the rules and the few samplers that are not torch's):

- a 64-bit draw is two 32-bit outputs, the first the high word;
- a uniform in [0, 1) of a floating dtype with ``d`` mantissa digits is the low ``d`` bits of one draw (64-bit for
  float64, 32-bit otherwise) times ``2**-d``;
- a double normal of the element-by-element path is Box-Muller on two such float64 uniforms (one normal cached
  on the generator for the next call), the fast path of ``normal_`` works on blocks of 16 uniforms (float32 with
  torch's vectorised single-precision log, sin and cos).

A generator's state (``get_state``, ``get_rng_state``) is a uint8 tensor of torch's layout (5056 bytes: the seed,
the twister's position and 624 words, the cached normal), so states move between tapegrad and torch.
"""

from __future__ import annotations

import math
import struct
import weakref

import numpy as np

__all__ = ["Generator", "manual_seed", "seed", "initial_seed", "get_rng_state", "set_rng_state", "default_generator"]

_DEFAULT_SEED = 67280421310721    # the seed of a new torch.Generator()
_N = 624                          # the twister's words
_STATE_BYTES = 5056               # torch's CPU generator state
_HEAD = struct.Struct("<QiiQ")    # seed, left, seeded, next
_TAIL = struct.Struct("<dddi4xf?3x")  # normal_x, normal_y (the cached double normal), normal_rho, its flag,
#                                        the cached float normal and its flag


def _seeded_key(seed):
    """The twister's 624 words after the standard initialisation with the low 32 bits of ``seed``."""
    x = seed & 0xFFFFFFFF
    key = [x]
    for i in range(1, _N):
        x = (1812433253 * (x ^ (x >> 30)) + i) & 0xFFFFFFFF
        key.append(x)
    return np.array(key, np.uint32)


class _Mark:
    __slots__ = ("version", "state", "__weakref__")

    def __init__(self, version):
        self.version, self.state = version, None


class Generator:
    """A random number generator: ``g = tapegrad.Generator().manual_seed(0)``; pass it as ``generator=g`` to any
    random op (creation, in-place fills, ``multinomial``, samplers, ``random_split``)."""

    def __init__(self, device="cpu"):
        from .tensor import _require_cpu
        self.device = _require_cpu(device)     # the CPU only (another device is a clear error)
        self._mt = np.random.MT19937()
        self._numpy = np.random.Generator(self._mt)   # (its full-range integers are the raw words)
        self._version = 0
        self._marks = weakref.WeakSet()        # lazy snapshots waiting for the state to change (``_mark``)
        self.manual_seed(_DEFAULT_SEED)

    def manual_seed(self, seed):
        """Seeds are 64-bit, as torch's: any integer in [-2**63, 2**64); a negative one wraps around as torch's
        does (-1 is 2**64 - 1). Returns the generator."""
        seed = int(seed)
        if not -2 ** 63 <= seed < 2 ** 64:
            raise ValueError("Overflow when unpacking long long")    # torch's words
        if self._marks:
            self._changing()
        self._seed = seed % 2 ** 64
        self._mt.state = {"bit_generator": "MT19937", "state": {"key": _seeded_key(self._seed), "pos": _N}}
        self._normal = None          # the second normal of the last Box-Muller pair, not yet used
        self._version += 1
        return self

    def seed(self):
        """Seed from the operating system's entropy; returns the new seed."""
        s = int(np.random.SeedSequence().entropy % (2 ** 63))
        self.manual_seed(s)
        return s

    def initial_seed(self):
        return self._seed

    # --- the raw stream -------------------------------------------------------------------------------------
    def _u32(self, n):
        """``n`` 32-bit draws (uint32; NumPy's full-range integers are the raw outputs)."""
        if self._marks:
            self._changing()
        self._version += 1
        return self._numpy.integers(0, 2 ** 32, size=n, dtype=np.uint32)

    def _u64(self, n):
        """``n`` 64-bit draws, each two 32-bit ones, the first the high word (NumPy's full-range uint64 integers
        of MT19937 are made so)."""
        if self._marks:
            self._changing()
        self._version += 1
        return self._numpy.integers(0, 2 ** 64, size=n, dtype=np.uint64)

    def _take_normal(self):
        """The cached normal, used (a change of state, as a draw)."""
        if self._marks:
            self._changing()
        self._version += 1
        normal, self._normal = self._normal, None
        return normal

    # --- states ---------------------------------------------------------------------------------------------
    def _snapshot(self):
        """The whole state, cheap to take and compare (``_restore`` puts it back)."""
        st = self._mt.state["state"]
        return self._seed, st["pos"], st["key"], self._normal

    def _restore(self, snap):
        if self._marks:
            self._changing()
        seed, pos, key, normal = snap
        self._mt.state = {"bit_generator": "MT19937", "state": {"key": key, "pos": pos}}
        self._seed, self._normal = seed, normal
        self._version += 1

    def _mark(self):
        """A snapshot taken lazily (for vmap's randomness="error", which costs nothing when nothing is drawn): the
        state is copied into it only when the generator is about to change. ``_moved(mark)`` tells."""
        mark = _Mark(self._version)
        self._marks.add(mark)
        return mark

    def _changing(self):
        snap = self._snapshot()
        for mark in list(self._marks):
            mark.state = snap
        self._marks.clear()

    def _moved(self, mark):
        """Whether the generator changed since ``_mark()``; if it did, it is put back as it was."""
        self._marks.discard(mark)
        if mark.version == self._version:
            return False
        self._restore(mark.state)
        return True

    @staticmethod
    def _same(a, b):
        return a[0] == b[0] and a[1] == b[1] and a[3] == b[3] and np.array_equal(a[2], b[2])

    def get_state(self):
        """The state as a uint8 tensor of torch's layout (``set_state`` takes it back, torch's too)."""
        from .tensor import Tensor
        seed, pos, key, normal = self._snapshot()
        head = _HEAD.pack(seed, _N + 1 - pos, 1, pos if pos < _N else 0)
        tail = _TAIL.pack(0.0, normal or 0.0, 0.0, normal is not None, 0.0, False)
        data = head + key.astype("<u8").tobytes() + tail
        return Tensor._make(np.frombuffer(data, np.uint8).copy())

    def set_state(self, new_state):
        from .tensor import Tensor
        if not isinstance(new_state, Tensor) or new_state._array.dtype != np.uint8:
            raise TypeError("RNG state must be a tapegrad.ByteTensor")
        data = bytes(new_state._array.ravel())
        if len(data) != _STATE_BYTES:
            raise RuntimeError(f"Expected a CPUGeneratorImplState of size {_STATE_BYTES} but found the input RNG state "
                               f"size to be {len(data)}")           # torch's words
        seed, left, _, _ = _HEAD.unpack_from(data, 0)
        if not 1 <= left <= _N:
            raise RuntimeError("Invalid mt19937 state")
        key = np.frombuffer(data, "<u8", _N, _HEAD.size)
        _, normal, _, valid, _, _ = _TAIL.unpack_from(data, _HEAD.size + 8 * _N)
        self._restore((seed, _N + 1 - left, key.astype(np.uint32), normal if valid else None))
        return self

    def __repr__(self):
        return f"<tapegrad._random.Generator object at {hex(id(self))}>"


default_generator = Generator()


def _gen(generator):
    """The ``tapegrad.Generator`` behind ``generator=`` (the global one for None), with torch's TypeError for
    anything else."""
    if generator is None:
        return default_generator
    if not isinstance(generator, Generator):
        raise TypeError(f"argument 'generator' must be tapegrad.Generator, not {type(generator).__name__}")
    return generator


def manual_seed(seed):
    """Seed the global generator (all of tapegrad's random ops draw from it); returns it."""
    return default_generator.manual_seed(seed)


def seed():
    """Seed the global generator from the operating system's entropy; returns the seed."""
    return default_generator.seed()


def initial_seed():
    return default_generator.initial_seed()


_vmap_hook = None   # set by func.vmap while a level with randomness="different" is active (see draw_shape)


def draw_shape(shape):
    """``(shape, wrap)`` for a random draw of ``shape``: under ``vmap(..., randomness="different")`` (the level that
    sees the call), one draw per sample — the shape with the batch size in front, and ``wrap`` turning the drawn
    tensor into the batched tensor the function sees; otherwise ``(shape, None)``."""
    if _vmap_hook is None:
        return shape, None
    return _vmap_hook(tuple(shape))


def get_rng_state():
    """The global generator's state, a uint8 tensor (``set_rng_state`` restores it)."""
    return default_generator.get_state()


def set_rng_state(new_state):
    default_generator.set_state(new_state)


# --- torch's rules for turning the stream into numbers -------------------------------------------------------
_DIGITS = {np.dtype(np.float64): 53, np.dtype(np.float32): 24, np.dtype(np.float16): 11}


def _digits(dtype):
    """Mantissa digits of torch's dtype (bfloat16, stored as float32, is passed as the string "bfloat16")."""
    return 8 if dtype == "bfloat16" else _DIGITS[np.dtype(dtype)]


def uniform01(g, n, dtype=np.float64):
    """``n`` uniforms in [0, 1) as torch's ``uniform_real_distribution`` of ``dtype`` draws them (float64 values,
    exact in ``dtype``)."""
    d = _digits(dtype)
    if d == 53:
        return (g._u64(n) & np.uint64((1 << 53) - 1)).astype(np.float64) * (2.0 ** -53)
    return (g._u32(n) & np.uint32((1 << d) - 1)).astype(np.float32) * np.float32(2.0 ** -d)   # (exact)


def _split(v):
    t = v * 134217729.0
    hi = t - (t - v)
    return hi, v - hi


def fma(a, b, c):
    """``a * b + c`` rounded once (float64), as the fused multiply-add torch's compiled kernels use."""
    a, b, c = np.asarray(a, np.float64), np.asarray(b, np.float64), np.asarray(c, np.float64)
    p = a * b
    ah, al = _split(a)
    bh, bl = _split(b)
    e = ((ah * bh - p) + ah * bl + al * bh) + al * bl          # a*b = p + e exactly
    s = p + c
    bb = s - p
    t = (p - (s - bb)) + (c - bb)                              # p + c = s + t exactly
    with np.errstate(invalid="ignore", over="ignore"):
        out = s + (t + e)
    return np.where(np.isfinite(out), out, p + c)


def _round(v, dtype):
    """Round float64 values to ``dtype`` (bfloat16's values are kept as float32)."""
    return v.astype(np.float32 if dtype == "bfloat16" else dtype)


def _reduced(dtype):
    """float16 and bfloat16 draw as float32 does and round the results (bfloat16 stays float32 in tapegrad)."""
    return dtype == "bfloat16" or dtype == np.float16


def uniform(g, n, low, high, dtype):
    """``n`` samples of torch's ``uniform_(low, high)`` in ``dtype``: ``x * (high - low) + low`` with the bounds and
    their difference in ``dtype``, a result that rounds up to ``high`` becoming ``low``."""
    if _reduced(dtype):       # float32's numbers, rounded; one that rounds to the upper bound becomes the lower
        out = _round(uniform(g, n, low, high, np.dtype(np.float32)), dtype)
        hi = _round(np.float64(high), dtype)
        return np.where(out == hi, _round(np.float64(low), dtype), out) if n else out
    x = uniform01(g, n, dtype)
    if (low, high) == (0.0, 1.0) or (low, high) == (0, 1):
        return x.astype(dtype, copy=False)
    if dtype == np.float64:
        lo, hi = float(low), float(high)
        out = x if (lo, hi) == (0.0, 1.0) else fma(x, hi - lo, lo)
    else:
        t = np.dtype(dtype).type
        lo, hi = t(low), t(high)
        out = _round(x.astype(np.float64) * float(hi - lo) + float(lo), dtype)    # (the product exact in float64)
        hi = float(hi)
    return np.where(out == hi, _round(np.float64(lo), dtype), out) if n else out


_EXTENDED = np.finfo(np.longdouble).nmant >= 63      # an x87 80-bit (or wider) long double


def _log(v):
    """glibc's ``log`` of positive values, -inf at 0 (NumPy's vectorised float64 log differs from it in the last
    bit now and then). glibc's log is within 0.52 ulp, so it is the correctly rounded value unless that value lies
    within 0.02 ulp of halfway between two doubles: the log in long double (64-bit mantissa) gives the correctly
    rounded value and says where that is not sure; only those few are passed to glibc one by one."""
    v = np.asarray(v, np.float64)
    if not v.size:
        return v
    pos = v > 0
    w = np.where(pos, v, 1.0)
    if _EXTENDED:
        wide = np.log(w.astype(np.longdouble))
        out = wide.astype(np.float64)
        frac = np.abs((wide - out).astype(np.float64) / np.spacing(np.abs(out)))    # (the difference is exact)
        unsure = np.nonzero(np.abs(frac - 0.5) < 0.03)
        out[unsure] = _LOG(w[unsure]).astype(np.float64)
    else:
        out = _LOG(w).astype(np.float64)
    return out if pos.all() else np.where(pos, out, -np.inf)


_LOG = np.frompyfunc(math.log, 1, 1)
_LOG1P = np.frompyfunc(math.log1p, 1, 1)


def normal_pairs(g, n):
    """``n`` standard normals (float64) of torch's element-by-element path: Box-Muller on two float64 uniforms
    (u1 the angle, u2 the radius), the cosine first; the sine waits on the generator for the next draw."""
    out = np.empty(n)
    i = 0
    if n and g._normal is not None:
        out[0], i = g._take_normal(), 1
    m = n - i
    if m:
        pairs = (m + 1) // 2
        u = uniform01(g, 2 * pairs).reshape(pairs, 2)
        r = np.sqrt(-2.0 * _LOG1P(-u[:, 1]).astype(np.float64))
        theta = 2.0 * math.pi * u[:, 0]
        both = np.stack([r * np.cos(theta), r * np.sin(theta)], 1).ravel()
        out[i:] = both[:m]
        if m % 2:
            g._normal = float(both[-1])
    return out


# torch's float32 kernel takes its log, sin and cos from the Cephes-style single-precision approximations it
# vectorises (a polynomial in the mantissa for log; a reduction to [-pi/4, pi/4] by multiples of pi/4 in three
# parts and two polynomials for sin and cos); its compiler fuses each multiply with the add that follows it where
# the multiply's result is used only there. Reproduced step by step in float32 (``_fma32``), they give its values.
_F = np.float32
_LOG_POLY = (7.0376836292e-2, -1.1514610310e-1, 1.1676998740e-1, -1.2420140846e-1, 1.4249322787e-1,
             -1.6668057665e-1, 2.0000714765e-1, -2.4999993993e-1, 3.3333331174e-1)
_COS_POLY = (2.443315711809948e-5, -1.388731625493765e-3, 4.166664568298827e-2)
_SIN_POLY = (-1.9515295891e-4, 8.3321608736e-3, -1.6666654611e-1)
_PI4_PARTS = (-0.78515625, -2.4187564849853515625e-4, -3.77489497744594108e-8)    # -pi/4 in three parts


def _fma32(a, b, c):
    """``a * b + c`` of float32 values rounded once (the product is exact in float64)."""
    r = np.multiply(a, b, dtype=np.float64)
    r += c
    return r.astype(_F)


def _logf(x):
    """Natural log of positive float32 values, as torch's vectorised kernel computes it."""
    bits = np.maximum(x, _F(1.17549435e-38)).view(np.uint32)
    e = ((bits >> 23).astype(np.int32) - 126).astype(_F)
    m = ((bits & np.uint32(0x807FFFFF)) | np.uint32(0x3F000000)).view(_F)      # the mantissa in [0.5, 1)
    small = m < _F(0.707106781186547524)
    e = e - small.astype(_F)
    m = (m - _F(1)) + np.where(small, m, _F(0))                                # in [sqrt(1/2) - 1, sqrt(2) - 1)
    z = m * m
    y = np.full_like(m, _F(_LOG_POLY[0]))
    for c in _LOG_POLY[1:]:
        y = _fma32(y, m, _F(c))
    y = _fma32(y * m, z, e * _F(-2.12194440e-4))
    y = _fma32(z, _F(-0.5), y)
    return _fma32(e, _F(0.693359375), m + y)


def _sincosf(x):
    """(sin, cos) of float32 values, as torch's vectorised kernel computes them."""
    sign_sin = x.view(np.uint32) & np.uint32(0x80000000)
    x = np.abs(x)
    j = (x * _F(1.27323954473516)).astype(np.int32)                             # the octant, made even
    j = (j + 1) & ~1
    y = j.astype(_F)
    for part in _PI4_PARTS:
        x = _fma32(y, _F(part), x)
    sign_sin = sign_sin ^ ((j & 4).astype(np.uint32) << np.uint32(29))
    sign_cos = ((~(j - 2)) & 4).astype(np.uint32) << np.uint32(29)
    z = x * x
    c = _fma32(_fma32(_F(_COS_POLY[0]), z, _F(_COS_POLY[1])), z, _F(_COS_POLY[2]))
    c = _fma32(c * z, z, -(z * _F(0.5))) + _F(1)
    s = _fma32(_fma32(_F(_SIN_POLY[0]), z, _F(_SIN_POLY[1])), z, _F(_SIN_POLY[2]))
    s = _fma32(s * z, x, x)
    first = (j & 2) == 0                                                        # the polynomials swap roles
    sin, cos = np.where(first, s, c), np.where(first, c, s)
    return (sin.view(np.uint32) ^ sign_sin).view(_F), (cos.view(np.uint32) ^ sign_cos).view(_F)


def _box_muller16(u, dtype):
    """torch's ``normal_fill_16`` on rows of 16 uniforms of ``dtype``: u1 = 1 - u[j] for the radius, u2 = u[j + 8]
    for the angle; cosines to the first 8, sines to the last 8. float64 is computed as torch does (glibc's log, sin
    and cos); float32 as its vectorised kernel does (``_logf``, ``_sincosf``, in float32 steps)."""
    u = u.reshape(-1, 16)
    if u.shape[0] > _ROWS:         # (in blocks of rows: the many temporaries stay in the cache; elementwise, so
        out = np.empty(u.shape, dtype)      # the same values)
        for i in range(0, u.shape[0], _ROWS):
            out[i:i + _ROWS] = _box_muller16(u[i:i + _ROWS], dtype)
        return out
    if dtype == np.float64:
        r = np.sqrt(-2.0 * _log(1.0 - u[:, :8]))
        theta = 2.0 * math.pi * u[:, 8:]
        return np.concatenate([r * np.cos(theta), r * np.sin(theta)], 1)
    r = np.sqrt(_F(-2.0) * _logf(_F(1.0) - u[:, :8]))
    sin, cos = _sincosf(_F(2.0 * math.pi) * u[:, 8:])
    return np.concatenate([r * cos, r * sin], 1)


_ROWS = 4096                       # rows of 16 per block in _box_muller16


def normal(g, n, mean, std, dtype, contiguous=True):
    """``n`` samples of torch's ``normal_(mean, std)`` in ``dtype`` (values rounded to ``dtype``), in the order
    torch writes them: a contiguous float tensor of 16 elements or more is filled with uniforms and turned into
    normals 16 at a time (when 16 does not divide n, the last 16 are drawn again and redone); otherwise element by
    element (``normal_pairs``)."""
    if _reduced(dtype):        # (torch's float16/bfloat16 differ from this in the last 16 when 16 does not divide n)
        return _round(normal(g, n, mean, std, np.dtype(np.float32), contiguous), dtype)
    if n >= 16 and contiguous:
        dtype = np.dtype(dtype)
        u = uniform01(g, n, dtype)
        out = np.empty(n, dtype)
        m = n - n % 16
        out[:m] = _box_muller16(u[:m], dtype).ravel()
        if m < n:
            out[n - 16:] = _box_muller16(uniform01(g, 16, dtype), dtype).ravel()
        if (mean, std) == (0.0, 1.0):
            return out
        if dtype == np.float64:
            return fma(out, float(std), float(mean))
        t = dtype.type                                     # (a float32 fused multiply-add: exact product)
        return (out.astype(np.float64) * float(t(std)) + float(t(mean))).astype(dtype)
    out = normal_pairs(g, n)
    return _round(out if (mean, std) == (0.0, 1.0) else fma(out, float(std), float(mean)), dtype)


_TAN = np.frompyfunc(math.tan, 1, 1)
_EXP = np.frompyfunc(math.exp, 1, 1)


def _libm(f, v):
    return f(v).astype(np.float64) if v.size else v


def exponential(g, n, lambd):
    """torch's ``exponential_(lambd)``: ``-1/lambd * log1p(-u)``, u a float64 uniform (float64 values)."""
    return -1.0 / lambd * _libm(_LOG1P, -uniform01(g, n))


def cauchy(g, n, median, sigma):
    """torch's ``cauchy_``: ``median + sigma * tan(pi * (u - 0.5))``, u a float64 uniform."""
    return fma(sigma, _libm(_TAN, math.pi * (uniform01(g, n) - 0.5)), median)


def log_normal(g, n, mean, std):
    """torch's ``log_normal_``: ``exp`` of element-by-element normals (``normal_pairs``) times std plus mean."""
    x = fma(normal_pairs(g, n), std, mean)
    big = x > 709.0               # (math.exp raises where the result overflows)
    out = _libm(_EXP, np.where(big, 0.0, x))
    return np.where(big, np.exp(x), out) if big.any() else out


def geometric(g, n, p):
    """torch's ``geometric_(p)``: ``ceil(log(u) / log1p(-p))``, u a float64 uniform."""
    with np.errstate(divide="ignore"):
        return np.ceil(_log(uniform01(g, n)) / math.log1p(-p))


class _Serial:
    """Draws one after another, for samplers that take a varying number per element (gamma): float64 uniforms and
    the element path's normals (with the generator's cached one), from raw words read in blocks; ``close()``
    leaves the generator just after the words used."""

    def __init__(self, g):
        if g._marks:
            g._changing()
        g._version += 1
        self.g, self.start, self.words, self.pos, self.used = g, g._mt.state, [], 0, 0

    def _pair(self):
        if self.pos + 2 > len(self.words):
            self.words = self.words[self.pos:] + self.g._mt.random_raw(4096).tolist()
            self.pos = 0
        hi, lo = self.words[self.pos], self.words[self.pos + 1]
        self.pos += 2
        self.used += 2
        return hi, lo

    def uniform(self):
        hi, lo = self._pair()
        return (((hi << 32) | lo) & ((1 << 53) - 1)) * (2.0 ** -53)

    def normal(self):
        g = self.g
        if g._normal is not None:
            out, g._normal = g._normal, None
            return out
        u1 = self.uniform()
        r = math.sqrt(-2.0 * math.log1p(-self.uniform()))
        theta = 2.0 * math.pi * u1
        g._normal = r * math.sin(theta)
        return r * math.cos(theta)

    def close(self):
        self.g._mt.state = self.start
        if self.used:
            self.g._mt.random_raw(self.used)


_THIRD32 = float(np.float32(1) / np.float32(3))     # torch's float constants, in its double arithmetic
_SQUEEZE32 = float(np.float32(0.0331))


def gamma(g, alphas, single=False):
    """torch's Gamma(alpha, 1) sampler, element by element (float64 results): Marsaglia and Tsang's method, alpha
    < 1 boosted by one with the factor (1 - u)**(1 / alpha); uniforms and normals as torch draws them.
    ``single``: alpha is float32, and so is torch's arithmetic on it before the double-precision loop."""
    s = _Serial(g)
    f = np.float32
    out = []
    try:
        for alpha in np.asarray(alphas, np.float64).ravel().tolist():
            scale = 1.0
            if alpha < 1.0:
                if alpha == 0.0:
                    out.append(0.0)
                    continue
                power = float(f(1) / f(alpha)) if single else 1.0 / alpha
                alpha = float(f(alpha) + f(1)) if single else alpha + 1.0
                scale *= (1.0 - s.uniform()) ** power
            d = float(f(alpha) - f(_THIRD32)) if single else alpha - _THIRD32
            c = 1.0 / math.sqrt(9.0 * d)
            while True:
                x = s.normal()
                y = 1.0 + c * x
                if y <= 0:
                    continue
                v = y * y * y
                u = 1.0 - s.uniform()
                xx = x * x
                if u < 1.0 - _SQUEEZE32 * xx * xx or math.log(u) < 0.5 * xx + d * (1.0 - v + math.log(v)):
                    out.append(scale * d * v)
                    break
    finally:
        s.close()
    return np.array(out, np.float64)


def poisson(g, rates):
    """torch's Poisson sampler, element by element (float64 results): for a rate of 10 or more Hoermann's
    transformed rejection (PTRS), below it the count of uniforms whose running product stays above exp(-rate)."""
    s = _Serial(g)
    out = []
    try:
        for lam in np.asarray(rates, np.float64).ravel().tolist():
            if lam >= 10:
                slam, loglam = math.sqrt(lam), math.log(lam)
                b = 0.931 + 2.53 * slam
                a = -0.059 + 0.02483 * b
                log_inv_alpha = math.log(1.1239 + 1.1328 / (b - 3.4))
                vr = 0.9277 - 3.6224 / (b - 2)
                while True:
                    u = s.uniform() - 0.5
                    v = s.uniform()
                    us = 0.5 - abs(u)
                    k = math.floor((2 * a / us + b) * u + lam + 0.43)
                    if us >= 0.07 and v <= vr:
                        break
                    if k < 0 or (us < 0.013 and v > us):
                        continue
                    accept = -lam + k * loglam - math.lgamma(k + 1.0)
                    if math.log(v) + log_inv_alpha - math.log(a / (us * us) + b) <= accept:
                        break
                out.append(k)
            elif lam == 0:
                out.append(0)
            else:
                limit, k, prod = math.exp(-lam), 0, 1.0
                while True:
                    prod *= s.uniform()
                    if prod <= limit:
                        break
                    k += 1
                out.append(k)
    finally:
        s.close()
    return np.array(out, np.float64)


_STIRLING_TAIL = (0.08106146679532726, 0.04134069595540929, 0.02767792568499834, 0.02079067210376509,
                  0.01664469118982119, 0.01387612882307075, 0.01189670994589177, 0.01041126526197209,
                  0.009255462182712733, 0.008330563433362871)


def _stirling_tail(k):
    """log(k!) minus its Stirling approximation (a table below 10, the series above)."""
    if k <= 9:
        return _STIRLING_TAIL[int(k)]
    kp1sq = (k + 1) * (k + 1)
    return (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1)


def _binomial_inversion(s, count, prob):
    """Successes counted as geometric waiting times (ceil(log u / log1p(-p))) that fit in ``count`` trials."""
    total, k, log_q = 0.0, 0, math.log1p(-prob)
    while True:
        u = s.uniform()
        total += math.ceil(math.log(u) / log_q) if u > 0 else math.inf
        if total > count:
            return k
        k += 1


def _btrs(s, count, prob, t):
    """Hoermann's BTRS rejection sampler as torch writes it (its bound test takes the log of V's scaled value)."""
    stddev = math.sqrt(float(t(t(count * prob) * t(1 - prob))))
    b = 1.15 + 2.53 * stddev
    a = -0.0873 + 0.0248 * b + 0.01 * prob
    c = count * prob + 0.5
    v_r = 0.92 - 4.2 / b
    r = prob / (1 - prob)
    alpha = (2.83 + 5.1 / b) * stddev
    m = math.floor((count + 1) * prob)
    while True:
        u = s.uniform() - 0.5
        v = s.uniform()
        us = 0.5 - abs(u)
        k = math.floor((2 * a / us + b) * u + c)
        if k < 0 or k > count:
            continue
        if us >= 0.07 and v <= v_r:
            return k
        v = math.log(v * alpha / (a / (us * us) + b))
        bound = ((m + 0.5) * math.log((m + 1) / (r * (count - m + 1)))
                 + (count + 1) * math.log((count - m + 1) / (count - k + 1))
                 + (k + 0.5) * math.log(r * (count - k + 1) / (k + 1))
                 + _stirling_tail(m) + _stirling_tail(count - m) - _stirling_tail(k) - _stirling_tail(count - k))
        if v <= bound:
            return k


def binomial(g, counts, probs, dtype):
    """torch's binomial sampler, element by element (float64 results): with the smaller of p and 1 - p, BTRS when
    count times it is 10 or more, else geometric inversion; the tests on count and p in ``dtype``, as torch's."""
    t = np.dtype(dtype).type
    s = _Serial(g)
    out = []
    try:
        for count, prob in zip(np.asarray(counts, np.float64).ravel().tolist(),
                               np.asarray(probs, np.float64).ravel().tolist()):
            if count <= 0 or prob <= 0:
                out.append(0.0)
            elif prob >= 1:
                out.append(count)
            elif prob <= 0.5:
                out.append(_btrs(s, count, prob, t) if t(count * prob) >= 10 else _binomial_inversion(s, count, prob))
            elif prob > 0.5:
                q = float(t(1.0 - prob))
                out.append(count - (_btrs(s, count, q, t) if t(count * q) >= 10 else _binomial_inversion(s, count, q)))
            else:
                out.append(math.nan)
    finally:
        s.close()
    return np.array(out, np.float64)


def integers(g, n, low, high):
    """``n`` integers in [low, high) as torch's ``random_(from, to)``/``randint``: a 32-bit draw modulo the range
    (a 64-bit one when the range is 2**32 or more) plus ``low``; int64 values (wrapping as torch's do)."""
    span = high - low
    bits = g._u64(n) if span >= 2 ** 32 else g._u32(n).astype(np.uint64)
    return ((bits % np.uint64(span)) + np.uint64(low % 2 ** 64)).view(np.int64)


def full_range(g, n, dtype):
    """``n`` values of torch's ``random_()`` for ``dtype``: a draw modulo (the dtype's largest value + 1), a
    floating dtype's largest exact integer (2**digits) counted as its largest value; 64-bit draws for int64 and
    float64."""
    dt = np.dtype(np.float32 if dtype == "bfloat16" else dtype)
    if dt == np.bool_:
        top = 1
    elif dt.kind == "f":
        top = 2 ** _digits(dtype)
    else:
        top = int(np.iinfo(dt).max)
    bits = g._u64(n) if dt in (np.int64, np.uint64, np.float64) else g._u32(n).astype(np.uint64)
    return bits % np.uint64(top + 1)


def randperm(g, n):
    """torch's ``randperm(n)``: the Fisher-Yates shuffle going forward, position i swapped with i + (a 32-bit draw
    modulo n - i)."""
    r = list(range(n))
    if n > 1:
        z = (g._u32(n - 1) % np.arange(n, 1, -1, dtype=np.uint64)).tolist()
        for i, k in enumerate(z):
            r[i], r[i + k] = r[i + k], r[i]
    return r


def in_memory_order(a, vals):
    """The flat ``vals`` laid out with array ``a``'s shape so that they follow ``a``'s elements in memory (the order
    torch's kernels write a non-contiguous tensor in: axes by decreasing stride)."""
    if a.flags.c_contiguous or a.ndim < 2:
        return vals.reshape(a.shape)
    order = sorted(range(a.ndim), key=lambda i: -abs(a.strides[i]))
    return vals.reshape([a.shape[i] for i in order]).transpose(np.argsort(order))


def kind(dtype):
    """The dtype the rules above take for a tapegrad dtype: its NumPy dtype, "bfloat16" for bfloat16."""
    return "bfloat16" if dtype.name == "bfloat16" else dtype.np
