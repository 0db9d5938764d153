"""Dynamic shapes: one captured program for many sizes of the inputs' dims.

How a program becomes shape-generic (``runtime`` drives it; ``dynamic=None``, torch's "automatic dynamic", and
``dynamic=True``):

1. While a capture runs (not with ``dynamic=False``), user code that reads a tensor's sizes (``x.shape``,
   ``x.size(d)``, ``x.numel()``) gets ``SymInt``\\ s: ints that remember which value's dim they are. Comparing one
   (``if x.shape[0] > 4:``, ``bool``) records a *relation*, guarded on later calls; turning one into a plain
   Python number in user code (``int(n)``, ``float(n)``, ``range(n)``, ``len(x)``) records that the size must
   stay what it was (a specialisation). tapegrad's own code gets plain ints, as in eager mode.
2. When a later call fails the guards only because the sizes of some argument dims changed, that call is
   captured too, and ``generalize`` compares the two programs: the same ops on the same values, and every
   constant equal in both, except integers (and floats) that changed with the sizes. Each of those must equal,
   in both programs, the size of a dim (or the product of a run of dims) of a tensor the program computed
   before that op: ``x.view(x.size(0), -1)`` records ``(6, -1)`` and ``(9, -1)``, fitted as ``(v0.shape[0],
   -1)``. The generated code then computes it from the replay's own arrays. A constant that cannot be fitted, a
   tensor made by a factory whose shape changed, or any other difference: no generalisation (each size keeps
   its own static program: correct, just not shared).
3. The generalised program's guards: the changed dims may take any size >= 2 (sizes 0 and 1 are specialised, as
   torch does), dims that were equal to each other in both captures must stay equal (torch's duck sizing), every
   other dim keeps its size, plus the recorded relations.

The same comparison makes a program generic in its data-dependent shapes (a boolean mask's count: ``generalize``
with ``dd=True``, driven by ``runtime.Entry.run`` when a replay meets another count): same argument sizes, the
changed constants fitted to earlier values' dims, no free argument dim; ``Known`` holds the shapes its check
accepts until a third one is verified.

What the generated code takes from shapes is computed from the arrays at replay in a generic program (the
contexts' input/output shapes for the backward formulas and the gradient conforming); inline kernels are used
only where their operands had one shape in both captures.
"""

from __future__ import annotations

import math
import sys

import numpy as np

from ..tensor import Size, Tensor

__all__ = ["SymInt", "Sym", "generalize", "install", "uninstall"]

_current = [None]          # the capture whose user code gets SymInts (set by install)
_OPS = {"+": int.__add__, "-": int.__sub__, "*": int.__mul__, "//": int.__floordiv__, "%": int.__mod__}
_CMP = {"==": int.__eq__, "!=": int.__ne__, "<": int.__lt__, "<=": int.__le__, ">": int.__gt__,
        ">=": int.__ge__}
_NAMES = {"+": "add", "-": "sub", "*": "mul", "//": "floordiv", "%": "mod"}
_CMPNAMES = {"==": "eq", "!=": "ne", "<": "lt", "<=": "le", ">": "gt", ">=": "ge"}


def _user(depth):
    """Whether the frame ``depth`` levels up is user code (not tapegrad's own)."""
    try:
        name = sys._getframe(depth + 1).f_globals.get("__name__", "")
    except ValueError:
        return True
    return not (name == "tapegrad" or name.startswith("tapegrad."))


def _expr(x):
    return x.expr if isinstance(x, SymInt) else ("k", int(x))


class SymInt(int):
    """A size read by user code during a capture: an int that remembers its expression over dims of program
    values (``("a", value, dim)`` atoms). Arithmetic with ints gives SymInts; comparisons record relations."""

    def __new__(cls, value, expr):
        o = int.__new__(cls, value)
        o.expr = expr
        return o

    def _arith(self, other, op, swap=False):
        if not isinstance(other, int) or isinstance(other, bool):
            _note(self.expr, "==", ("k", int(self)), True)       # a float or other operand: the size is baked
            return getattr(int(self), ("__r" if swap else "__") + _NAMES[op] + "__")(other)
        a, b = (other, self) if swap else (self, other)
        return SymInt(_OPS[op](int(a), int(b)), (op, _expr(a), _expr(b)))

    def __add__(self, o):
        return self._arith(o, "+")

    def __radd__(self, o):
        return self._arith(o, "+", True)

    def __sub__(self, o):
        return self._arith(o, "-")

    def __rsub__(self, o):
        return self._arith(o, "-", True)

    def __mul__(self, o):
        return self._arith(o, "*")

    def __rmul__(self, o):
        return self._arith(o, "*", True)

    def __floordiv__(self, o):
        return self._arith(o, "//")

    def __rfloordiv__(self, o):
        return self._arith(o, "//", True)

    def __mod__(self, o):
        return self._arith(o, "%")

    def __rmod__(self, o):
        return self._arith(o, "%", True)

    def __neg__(self):
        return SymInt(-int(self), ("-", ("k", 0), self.expr))

    def __pos__(self):
        return self

    def _cmp(self, other, op):
        if isinstance(other, int) and not isinstance(other, bool):
            res = _CMP[op](int(self), int(other))
            _note(self.expr, op, _expr(other), res)
            return res
        if isinstance(other, float):
            _note(self.expr, "==", ("k", int(self)), True)       # compared with a float: the size is baked
        return getattr(int(self), "__" + _CMPNAMES[op] + "__")(other)

    def __eq__(self, o):
        return self._cmp(o, "==")

    def __ne__(self, o):
        return self._cmp(o, "!=")

    def __lt__(self, o):
        return self._cmp(o, "<")

    def __le__(self, o):
        return self._cmp(o, "<=")

    def __gt__(self, o):
        return self._cmp(o, ">")

    def __ge__(self, o):
        return self._cmp(o, ">=")

    __hash__ = int.__hash__

    def __bool__(self):
        res = int(self) != 0
        _note(self.expr, "!=", ("k", 0), res)
        return res

    def _special(self):
        if _user(2):
            _note(self.expr, "==", ("k", int(self)), True)

    def __int__(self):
        self._special()
        return int.__int__(self)

    def __index__(self):
        self._special()
        return int.__index__(self)

    def __float__(self):
        self._special()
        return int.__float__(self)

    def __repr__(self):
        return repr(int(self))

    __str__ = __repr__

    def __reduce__(self):
        return (int, (int(self),))


def _note(lhs, op, rhs, result):
    cap = _current[0]
    if cap is not None and not cap.inside and cap.mine():
        cap.prog.relations.append((lhs, op, rhs, bool(result)))


def render(expr, atom):
    """An expression as Python source; ``atom(value, dim)`` gives an atom's source."""
    kind = expr[0]
    if kind == "a":
        return atom(expr[1], expr[2])
    if kind == "k":
        return repr(expr[1])
    return f"({render(expr[1], atom)} {kind} {render(expr[2], atom)})"


def atoms(expr, out):
    if expr[0] == "a":
        out.add((expr[1], expr[2]))
    elif expr[0] != "k":
        atoms(expr[1], out)
        atoms(expr[2], out)
    return out


# --- the Tensor methods user code reads sizes with, while a capture runs -----------------------------------
_SIZE_METHODS = ("shape", "size", "numel", "nelement", "__len__")


def _sym_shape(cap, t):
    shape = t._array.shape
    v = cap.vals.get(id(t))
    if v is None or v in cap.free_values:
        return shape
    return tuple(SymInt(n, ("a", v, d)) for d, n in enumerate(shape))


def install(cap):
    """Wrap Tensor's size readers (only while this capture runs): user code gets SymInts."""
    saved = {name: Tensor.__dict__[name] for name in _SIZE_METHODS}
    _current[0] = cap
    shape_prop, size_fn, numel_fn, len_fn = (saved["shape"], saved["size"], saved["numel"], saved["__len__"])

    def active():
        return not cap.inside and cap.mine() and not cap.broken

    def shape(self):
        if active() and _user(1):
            return Size(_sym_shape(cap, self))
        return shape_prop.fget(self)

    def size(self, dim=None):
        if active() and _user(1):
            s = _sym_shape(cap, self)
            if dim is None:
                return Size(s)
            from ..ops._util import normalize_dim
            return s[normalize_dim(dim, len(s))]
        return size_fn(self, dim)

    def numel(self):
        if active() and _user(1):
            return math.prod(_sym_shape(cap, self), start=1)
        return numel_fn(self)

    def length(self):
        n = len_fn(self)
        if active() and _user(1):
            s = _sym_shape(cap, self)
            if isinstance(s[0], SymInt):
                _note(s[0].expr, "==", ("k", n), True)     # len() gives a plain int: the size is baked
        return n

    Tensor.shape = property(shape)
    Tensor.size = size
    Tensor.numel = numel
    Tensor.nelement = numel
    Tensor.__len__ = length
    return saved


def uninstall(saved):
    _current[0] = None
    for name, m in saved.items():
        setattr(Tensor, name, m)


# --- generalising two captures ---------------------------------------------------------------------------------
class Sym:
    """A constant of a generic program computed at replay from a value's shape: ``mul`` times the product of
    dims ``i:j`` of value ``v``, plus ``add`` (``kind``: "int", "float", or "recip": 1 / that)."""

    __slots__ = ("v", "i", "j", "kind", "mul", "add")

    def __init__(self, v, i, j, kind="int", mul=1, add=0):
        self.v, self.i, self.j, self.kind, self.mul, self.add = v, i, j, kind, mul, add

    def source(self):
        parts = [f"v{self.v}.shape[{d}]" for d in range(self.i, self.j)]
        if self.mul != 1:
            parts.append(repr(self.mul))
        p = parts[0] if len(parts) == 1 else "(" + " * ".join(parts) + ")"
        if self.add:
            p = f"({p} {'+' if self.add > 0 else '-'} {abs(self.add)})"
        if self.kind == "float":
            return f"float({p})"
        if self.kind == "recip":
            return f"(1 / {p})"
        return p

    def value(self, meta):
        """What it gives on a capture's shapes ``meta``."""
        n = math.prod(meta[self.v][0][self.i:self.j]) * self.mul + self.add
        return float(n) if self.kind == "float" else (1 / n if self.kind == "recip" else n)

    def __repr__(self):
        return self.source()


class _Fail(Exception):
    pass


def _runs(shape):
    for i in range(len(shape)):
        for j in range(i + 1, len(shape) + 1):
            yield i, j, math.prod(shape[i:j])


class _Fitter:
    """Finds, for a constant that changed between the captures, a dim run of an earlier value equal to it in
    both."""

    def __init__(self, p1, p2):
        self.m1, self.m2 = p1.meta, p2.meta
        self.inputs = [inp[2] for inp in p2.inputs]

    def candidates(self, rec, defined):
        order = [a for kind, a in rec.args if kind == "v"]
        if not isinstance(rec, _ArgsOnly):
            order += self.inputs + sorted(defined, reverse=True)
        seen = set()
        for v in order:
            if v in seen:
                continue
            seen.add(v)
            s1, s2 = self.m1[v][0], self.m2[v][0]
            for (i, j, a), (_, _, b) in zip(_runs(s1), _runs(s2)):
                yield v, i, j, a, b

    def fit(self, c1, c2, rec, defined):
        """The first of: a dim run equal to the constant in both captures; that times an integer (heads * batch);
        that plus or minus one (an unbiased variance's n - 1). A wrong choice shows at the third size."""
        kinds = {int: ("int",), float: ("float", "recip")}.get(type(c1), ()) if type(c1) is type(c2) else ()
        found = {}
        for v, i, j, a, b in self.candidates(rec, defined):
            for kind in kinds:
                for rank, (mul, add) in enumerate(_FORMS):
                    if rank in found:
                        continue
                    if mul is None:
                        if kind != "int" or not (a and b and c1 % a == 0 and c2 % b == 0 and c1 // a == c2 // b > 1):
                            continue
                        found[rank] = Sym(v, i, j, mul=c1 // a)
                        continue
                    x, y = a * mul + add, b * mul + add
                    if kind == "int" and (x, y) == (c1, c2):
                        found[rank] = Sym(v, i, j, mul=mul, add=add)
                    elif kind == "float" and (float(x), float(y)) == (c1, c2):
                        found[rank] = Sym(v, i, j, "float", mul, add)
                    elif kind == "recip" and x and y and (1 / x, 1 / y) == (c1, c2):
                        found[rank] = Sym(v, i, j, "recip", mul, add)
            if 0 in found:
                return found[0]
        if found:
            return found[min(found)]
        raise _Fail(f"a constant changed with the sizes ({c1!r} -> {c2!r}) and is no tensor's size")


_FORMS = ((1, 0), (None, 0), (1, -1), (1, 1))     # (mul, add); None: an integer factor found from the constant


def _same_const(a, b, fit):
    """b (the second capture's constant) with the changed numbers fitted; _Fail where it cannot be."""
    ta, tb = type(a), type(b)
    if ta is not tb:
        if isinstance(a, SymInt) or isinstance(b, SymInt):
            return _same_const(int(a), int(b), fit)
        raise _Fail("a constant changed type")
    if ta in (int, float):
        return b if a == b or (a != a and b != b) else fit(a, b)
    if ta in (tuple, list):
        if len(a) != len(b):
            raise _Fail("a constant's length changed")
        out = [_same_const(x, y, fit) for x, y in zip(a, b)]
        return out if ta is list else tuple(out)
    if ta is slice:
        return slice(*(_same_const(x, y, fit) for x, y in ((a.start, b.start), (a.stop, b.stop),
                                                           (a.step, b.step))))
    if ta is dict:
        if tuple(a) != tuple(b):
            raise _Fail("a constant's keys changed")
        return {k: _same_const(a[k], b[k], fit) for k in a}
    if ta is np.ndarray:
        if a.shape == b.shape and a.dtype == b.dtype and np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"):
            return b
        raise _Fail("an array constant changed")
    if a is b:
        return b
    try:
        if bool(a == b):
            return b
    except Exception:
        pass
    raise _Fail(f"a constant changed ({type(a).__name__})")


def plain(obj, depth=0):
    """A constant with its SymInts as plain ints (what the program records)."""
    t = type(obj)
    if t is SymInt:
        return int.__int__(obj)
    if depth < 6 and (t is tuple or t is list):
        out = [plain(o, depth + 1) for o in obj]
        return out if t is list else tuple(out)
    if t is slice:
        return slice(plain(obj.start, depth + 1), plain(obj.stop, depth + 1), plain(obj.step, depth + 1))
    if depth < 6 and t is dict:
        return {k: plain(v, depth + 1) for k, v in obj.items()}
    return obj


def has_sym(obj, depth=0):
    if isinstance(obj, Sym):
        return True
    if depth < 6 and isinstance(obj, (tuple, list)):
        return any(has_sym(o, depth + 1) for o in obj)
    if depth < 6 and isinstance(obj, dict):
        return any(has_sym(o, depth + 1) for o in obj.values())
    if isinstance(obj, slice):
        return any(has_sym(o, depth + 1) for o in (obj.start, obj.stop, obj.step))
    return False


class Known:
    """The output shapes a data-dependent op (a mask's count) may have in a program generic in them: the two
    captures' until a third shape is verified (``all``)."""

    __slots__ = ("shapes", "all")

    def __init__(self, shapes):
        self.shapes, self.all = shapes, False

    def __contains__(self, shape):
        return self.all or shape in self.shapes


def generalize(p1, p2, outs1, outs2, consts1, consts2, dd=False):
    """Make ``p2`` (captured after ``p1`` with other sizes of some argument dims) generic, or return the reason
    it cannot be. On success ``p2``'s constants hold ``Sym``\\ s, ``p2.dyn`` the argument dims that may change
    ({slot: {dim: group}}), ``p2.dyn_relations`` the relations the guards check, ``p2.meta_alt`` p1's shapes.
    ``dd``: the captures have the same argument sizes and differ in the output shapes of data-dependent ops
    (a mask's count): the constants are fitted alike, to those ops' (and later values') dims; no argument dim
    becomes free."""
    if not dd and any(rec.dd for rec in p2.ops):
        return "an op's output shape depends on data (a boolean mask): the program keeps its static shapes"
    try:
        fill_values = _check_same(p1, p2, outs1, outs2, consts1, consts2)
        if dd:
            if not any(p1.meta[v][0] != p2.meta[v][0] for rec in p2.ops if rec.dd for v in rec.outs
                       if v is not None):
                raise _Fail("no data-dependent shape changed")
            if any(p1.meta[inp[2]][0] != p2.meta[inp[2]][0] for inp in p2.inputs):
                raise _Fail("an input's size changed")
        dyn = {} if dd else _dynamic_dims(p1, p2)
        fitter = _Fitter(p1, p2)
        fills = {}
        for v in fill_values:           # the shape of a filled tensor: from the arguments' sizes
            s1, s2 = p1.meta[v][0], p2.meta[v][0]
            arg_rec = _ArgsOnly(p2)
            shape = tuple(y if x == y else fitter.fit(x, y, arg_rec, ()) for x, y in zip(s1, s2))
            fills[v] = (shape, _fill(p2.inputs[[inp[2] for inp in p2.inputs].index(v)][1]._array))
        new_args = []
        defined = set()
        for r1, r2 in zip(p1.ops, p2.ops):
            def fit(a, b, rec=r2):
                return fitter.fit(a, b, rec, defined)
            args = tuple(s2 if s2[0] == "v" else ("c", _same_const(s1[1], s2[1], fit))
                         for s1, s2 in zip(r1.args, r2.args))
            kwargs = {k: _same_const(r1.kwargs[k], r2.kwargs[k], fit) for k in r2.kwargs}
            new_args.append((args, kwargs))
            defined.update(o for o in r2.outs if o is not None)
        relations = _relations(p1, p2, dyn)
    except _Fail as e:
        return str(e)
    for rec, (args, kwargs) in zip(p2.ops, new_args):
        rec.args, rec.kwargs = args, kwargs
    p2.dyn, p2.dyn_relations, p2.meta_alt, p2.fills = dyn, relations, p1.meta, fills
    return None


class _ArgsOnly:
    """An op record stand-in whose tensor arguments are the program's argument inputs (what a filled tensor's
    shape may be computed from: it is made before any op)."""

    def __init__(self, prog):
        self.args = [("v", inp[2]) for inp in prog.inputs if inp[0] == "arg"]


def verify(g, p3, outs_g, outs3, consts_g, consts3, dd=False):
    """Whether a capture at a third size (``p3``) is what the generic program ``g`` predicts: the same ops, and
    each constant equal to ``g``'s with its ``Sym``\\ s evaluated on ``p3``'s shapes. None if so, else the reason.
    (Two captures can agree on a constant that still depends on the sizes: ``n - n // 2`` is 3 at 5 and at 6.)"""
    try:
        changed = _check_same(g, p3, outs_g, outs3, consts_g, consts3)
        for v in changed:
            if v not in g.fills:
                raise _Fail("a tensor made in the region (a factory such as zeros) changed with the sizes")
        for v, (shape, pattern) in g.fills.items():
            arr = p3.inputs[[inp[2] for inp in p3.inputs].index(v)][1]._array
            want = tuple(d.value(p3.meta) if type(d) is Sym else d for d in shape)
            if arr.shape != want or _fill(arr) != pattern:
                raise _Fail("a filled tensor made in the region is not what the generic program makes")
        for rg, r3 in zip(g.ops, p3.ops):
            for s1, s3 in zip(rg.args, r3.args):
                if s1[0] == "c":
                    _predicted(s1[1], s3[1], p3.meta)
            for k in rg.kwargs:
                _predicted(rg.kwargs[k], r3.kwargs[k], p3.meta)
        if not dd:
            _dynamic_dims(g, p3)
    except _Fail as e:
        return str(e)
    return None


def _predicted(c, c3, meta):
    if type(c) is Sym:
        want = c.value(meta)
        if type(want) is not type(c3) or want != c3:
            raise _Fail(f"a constant the program computes from sizes ({c}) differs at a third size")
    elif has_sym(c):
        if type(c) is slice:
            c, c3 = (c.start, c.stop, c.step), (c3.start, c3.stop, c3.step)
        elif type(c) is dict:
            c, c3 = [c[k] for k in c], [c3.get(k) for k in c]
        if len(c) != len(c3):
            raise _Fail("a constant's length changed")
        for x, y in zip(c, c3):
            _predicted(x, y, meta)
    else:
        def no_fit(a, b):
            raise _Fail(f"a constant changed at a third size ({a!r} -> {b!r}): it depends on the sizes")
        _same_const(c, c3, no_fit)


def _check_same(p1, p2, outs1, outs2, consts1, consts2):
    if p1.breaks or p2.breaks:
        raise _Fail("a graph break")
    if len(p1.inputs) != len(p2.inputs) or len(p1.ops) != len(p2.ops) or len(p1.meta) != len(p2.meta):
        raise _Fail("the captures recorded different programs")
    fills = []
    for a, b in zip(p1.inputs, p2.inputs):
        if a[0] != b[0] or a[2] != b[2]:
            raise _Fail("the captures have different inputs")
        if a[0] == "arg" and a[1] != b[1]:
            raise _Fail("the captures have different inputs")
        if a[0] == "free" and a[1] is not b[1]:
            x, y = a[1]._array, b[1]._array
            if not (a[2] in p1.made and b[2] in p2.made):
                raise _Fail("the captures have different inputs")
            if x.shape != y.shape and _fill(x) is not None and _fill(x) == _fill(y):
                fills.append(b[2])        # zeros(batch, n), arange(n): a pattern, a shape that changed with sizes
            elif not (x.shape == y.shape and x.dtype == y.dtype
                      and np.array_equal(x, y, equal_nan=x.dtype.kind in "fc")):
                raise _Fail("a tensor made in the region (a factory such as zeros) changed with the sizes")
    for (s1, d1), (s2, d2) in zip(p1.meta, p2.meta):
        if d1 != d2 or len(s1) != len(s2):
            raise _Fail("a value's dtype or rank changed")
    if p1.rg != p2.rg or outs1 != outs2 or p1.duplicates != p2.duplicates or p1.writebacks != p2.writebacks:
        raise _Fail("the captures differ (outputs, requires_grad or in-place writes)")
    for r1, r2 in zip(p1.ops, p2.ops):
        if (r1.cls is not r2.cls or r1.outs != r2.outs or r1.nig != r2.nig or r1.recorded != r2.recorded
                or r1.out_rg != r2.out_rg or r1.saved != r2.saved or len(r1.args) != len(r2.args)
                or tuple(r1.kwargs) != tuple(r2.kwargs)):
            raise _Fail("the captures recorded different ops")
        for s1, s2 in zip(r1.args, r2.args):
            if s1[0] != s2[0] or (s1[0] == "v" and s1[1] != s2[1]):
                raise _Fail("the captures recorded different ops")
    for k in set(consts1) | set(consts2):
        if k not in consts1 or k not in consts2:
            raise _Fail("the results differ")
        c1, c2 = consts1[k], consts2[k]
        if not (c1 is c2 or (type(c1) is type(c2) and _eq(c1, c2))):
            raise _Fail("a returned constant changed with the sizes")
    return fills


def _fill(a):
    """What a factory made, as a pattern that can be made again at another size: ``("full", dtype, value)`` for
    one value everywhere (zeros, ones, full), ``("arange", dtype, start, step)`` for integers start, start + step,
    ... (arange of a size); else None."""
    if a.size == 0 or a.dtype.kind not in "biufc":
        return None
    first = a.reshape(-1)[0]
    if first == first and (a == first).all():
        return "full", a.dtype, first.item()
    if a.ndim == 1 and a.size > 1 and a.dtype.kind in "iu":
        start, step = int(a[0]), int(a[1]) - int(a[0])
        if step and np.array_equal(a, start + step * np.arange(a.size)):
            return "arange", a.dtype, start, step
    return None


def _eq(a, b):
    try:
        return bool(a == b)
    except Exception:
        return False


def _dynamic_dims(p1, p2):
    """{slot: {dim: group}}: the argument dims whose size changed (both >= 2), grouped by (old, new) size."""
    groups, dyn = {}, {}
    for k, (a, b) in enumerate(zip(p1.inputs, p2.inputs)):
        if a[0] != "arg":
            continue
        s1, s2 = p1.meta[a[2]][0], p2.meta[b[2]][0]
        for d, (x, y) in enumerate(zip(s1, s2)):
            if x != y:
                if min(x, y) < 2:
                    raise _Fail("a size changed to or from 0 or 1 (those are specialised)")
                dyn.setdefault(k, {})[d] = groups.setdefault((x, y), len(groups))
    if not dyn:
        raise _Fail("no argument size changed")
    return dyn


def _relations(p1, p2, dyn):
    """p2's recorded relations, each atom resolved: a dynamic argument dim stays an atom, a dim that kept its
    size becomes that number, an intermediate's changed dim becomes an argument dim that changed alike."""
    slot_of = {inp[2]: k for k, inp in enumerate(p2.inputs)}
    arg_dims = {}
    for k, dims in dyn.items():
        v = p2.inputs[k][2]
        for d in dims:
            arg_dims.setdefault((p1.meta[v][0][d], p2.meta[v][0][d]), (v, d))

    def resolve(e):
        if e[0] == "a":
            v, d = e[1], e[2]
            x, y = p1.meta[v][0][d], p2.meta[v][0][d]
            if v in slot_of and d in dyn.get(slot_of[v], ()):
                return e
            if x == y:
                return ("k", y)
            if (x, y) in arg_dims:
                w, c = arg_dims[(x, y)]
                return ("a", w, c)
            raise _Fail("a Python comparison read the size of an intermediate tensor that changed")
        if e[0] == "k":
            return e
        return (e[0], resolve(e[1]), resolve(e[2]))

    out = []
    for lhs, op, rhs, res in p2.relations:
        lhs, rhs = resolve(lhs), resolve(rhs)
        if lhs[0] == "k" and rhs[0] == "k":
            continue
        out.append((lhs, op, rhs, res))
    return out
