# ruff: noqa: A002 - torch's argument names (input, ord)
"""einsum (NumPy's einsum forward; each operand's gradient is again an einsum), tensordot, inner,
kron, cross, trace, multi_dot, chain_matmul.
"""

from __future__ import annotations


import numpy as np

from .._util import Primitive, Tensor, bind, broadcast_or_error, cj, input_shape, linear_jvp, multilinear_jvp, promote
from .._util import writes_out
from ._common import _const, _dtname, _eye_like
from .products import mm

_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"   # string.ascii_letters (einsum's subscripts)


class Einsum(Primitive):
    """``np.einsum`` on an explicit equation (no ellipsis, every output letter named)."""

    node_name = "ViewBackward0"

    jvp = staticmethod(multilinear_jvp)     # linear in each operand: the product rule

    @staticmethod
    def forward(ctx, eq, *ops):
        ctx.eq = eq
        ctx.shapes = [o.shape for o in ops]
        need = ctx.needs_input_grad      # an operand is kept only for the other operands' gradients (as torch)
        pos = range(1, len(ops) + 1)
        ctx.save_inputs(*[i if any(need[k] for k in pos if k != i) else None for i in pos])
        dt = ops[0].dtype
        for o in ops[1:]:
            if o.dtype != dt:
                if len(ops) == 2 and _pair_contraction_order(eq, ctx.shapes) is None:
                    ops = promote(*ops)[:2]     # nothing summed over both: torch multiplies, with type promotion
                    dt = ops[0].dtype
                    break
                raise RuntimeError(f"expected scalar type {_dtname(ops[0])} but found {_dtname(o)}")
        if dt.kind == "c":
            ctx._cplx = True     # each operand's gradient contracts the conjugates of the others
        if dt == np.float16:        # torch contracts Half with float32 sums (its bmm) and rounds the result
            ops = [o.astype(np.float32) for o in ops]
        out = np.asarray(np.einsum(eq, *ops, optimize=len(ops) > 2), dt)
        order = _pair_contraction_order(eq, [o.shape for o in ops]) if len(ops) == 2 else None
        if order is not None and out.ndim > 1:
            out = np.ascontiguousarray(out.transpose(order)).transpose(np.argsort(order))
        return out

    @staticmethod
    def backward(ctx, grad):
        ops = ctx.saved_tensors
        dt = grad._array.dtype
        ops = [o if o is None or o._array.dtype == dt else o.to(grad.dtype) for o in ops]   # (promoted operands)
        if ctx._cplx:
            ops = [None if o is None else cj(o) for o in ops]
        ins, out = ctx.eq.split("->")
        subs = ins.split(",")
        sizes = {}
        for s, shp in zip(subs, ctx.shapes):
            for ch, n in zip(s, shp):
                sizes[ch] = max(sizes.get(ch, 1), n)
        free = iter(c for c in _LETTERS if c not in sizes)
        res = [None]
        for k, sk in enumerate(subs):
            if not ctx.needs_input_grad[k + 1]:
                res.append(None)
                continue
            terms, operands = [out], [grad]
            for j, sj in enumerate(subs):
                if j != k:
                    terms.append(sj)
                    operands.append(ops[j])
            have = set("".join(terms))
            dt = grad._array.dtype
            target, seen = [], set()
            for ch in sk:
                if ch not in have and ch not in seen:
                    terms.append(ch)        # summed only over this operand: its gradient is constant along ch
                    operands.append(_const(np.ones(ctx.shapes[k][sk.index(ch)], dt)))
                if ch in seen:              # repeated letter (a diagonal): place the gradient on it
                    f = next(free)
                    terms.append(ch + f)
                    operands.append(_eye_like(sizes[ch], dt))
                    target.append(f)
                else:
                    target.append(ch)
                    seen.add(ch)
            eq = ",".join(terms) + "->" + "".join(target)
            res.append(_einsum_apply(eq, operands))
        return tuple(res)


def _pair_contraction_order(eq, shapes):
    """The memory order (outermost first) of torch's result for a contraction of two operands, or None where
    nothing is summed over both (torch multiplies elementwise then). Torch lines the operands up on the output
    letters then the summed ones, and does one ``bmm`` whose batch is the output dims both operands have (size
    > 1), its rows the left-only dims, its columns the rest (right-only, size 1 in both, and summed dims only one
    operand has): the result is row-major in that order, rows and columns swapped when all of the rest come
    before the left-only dims. (A dropout after an einsum draws its mask in this memory order.)"""
    ins, out = eq.split("->")
    subs = ins.split(",")
    size = [{c: n for c, n in zip(sub, shp)} for sub, shp in zip(subs, shapes)]
    summed = sorted({c for c in ins if c not in out and c != ","}, key=lambda c: (c.islower(), c))
    big = [[size[k].get(c, 1) != 1 for c in out + "".join(summed)] for k in (0, 1)]
    both, left, rest = [], [], []
    for i, (a, b) in enumerate(zip(*big)):
        if i >= len(out):
            if not (a and b):
                rest.append(i)          # summed in one operand beforehand: size 1 in both
        elif a and b:
            both.append(i)
        else:
            (left if a else rest).append(i)
    if not any(a and b for a, b in zip(big[0][len(out):], big[1][len(out):])):
        return None                     # nothing summed over both operands: an elementwise product
    if left and rest and rest[-1] < left[0]:
        left, rest = rest, left
    return [i for i in both + left + rest if i < len(out)]


class EinsumMul(Einsum):
    node_name = "MulBackward0"


class EinsumSum(Einsum):
    node_name = "SumBackward1"


class EinsumPermute(Einsum):
    node_name = "PermuteBackward0"


def _einsum_apply(eq, operands, cls=None):
    """Pick the node class torch's einsum ends with (its last internal op) and apply."""
    if cls is None:
        ins, out = eq.split("->")
        letters = set(ins.replace(",", ""))
        contracted = bool(letters - set(out))
        if "," in ins:
            cls = Einsum if contracted else EinsumMul
        else:
            cls = EinsumSum if contracted else EinsumPermute
    return cls.apply(eq, *operands)


def _parse_einsum(equation, shapes):
    """Turn a torch einsum equation into an explicit one: ellipses expanded to letters, implicit output spelled."""
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) < len(shapes):
        raise RuntimeError("einsum(): more operands were provided than specified in the equation")
    if len(terms) > len(shapes):
        raise RuntimeError("einsum(): fewer operands were provided than specified in the equation")
    for t in terms + [rhs]:
        bad = [c for c in t.replace("...", "") if c not in _LETTERS]
        if bad or t.replace("...", "").count(".") or t.count("...") > 1:
            raise RuntimeError(f"einsum(): invalid subscript given at index {eq.index(bad[0]) if bad else 0} in "
                               f"the equation string, subscripts must be in [a-zA-Z]")
    used = set(eq) & set(_LETTERS)
    pool = [c for c in _LETTERS if c not in used]
    ell = 0
    for k, (t, shp) in enumerate(zip(terms, shapes)):
        n = len(t.replace("...", ""))
        if "..." in t:
            if n > len(shp):
                raise RuntimeError(f"einsum(): the number of subscripts in the equation ({n}) is more than the "
                                   f"number of dimensions ({len(shp)}) for operand {k}")
            ell = max(ell, len(shp) - n)
        elif n != len(shp):
            raise RuntimeError(f"einsum(): the number of subscripts in the equation ({n}) does not match the number "
                               f"of dimensions ({len(shp)}) for operand {k} and no ellipsis was given")
    if ell > len(pool):
        raise RuntimeError("einsum(): too many dimensions")
    ell_letters = "".join(pool[:ell])
    new_terms = []
    for t, shp in zip(terms, shapes):
        if "..." in t:
            e = len(shp) - len(t.replace("...", ""))
            t = t.replace("...", ell_letters[ell - e:] if e else "")
        new_terms.append(t)
    if arrow:
        if "..." in rhs:
            rhs = rhs.replace("...", ell_letters)
        for c in rhs:
            if rhs.count(c) > 1:
                raise RuntimeError(f"einsum(): output subscript {c} appears more than once in the output")
            if not any(c in t for t in new_terms):
                raise RuntimeError(f"einsum(): output subscript {c} does not appear in the equation for any input "
                                   "operand")
    else:
        joined = "".join(t for t in terms)
        once = sorted(c for c in set(joined) if c in _LETTERS and joined.count(c) == 1)
        rhs = ell_letters + "".join(once)
    sizes = {}
    for k, (t, shp) in enumerate(zip(new_terms, shapes)):
        for c, n in zip(t, shp):
            if c in sizes and n != sizes[c] and n != 1 and sizes[c] != 1:
                raise RuntimeError(f"einsum(): subscript {c} has size {n} for operand {k} which does not broadcast "
                                   f"with previously seen size {sizes[c]}")
            sizes[c] = n if c not in sizes or sizes[c] == 1 else sizes[c]
    return ",".join(new_terms) + "->" + rhs


def _sublist_equation(args):
    """torch.einsum(op1, [0, 1], op2, [1, 2], [0, 2]) -> ('ab,bc->ac', [op1, op2])."""
    def lab(sub):
        return "".join("..." if s is Ellipsis else _LETTERS[s] for s in sub)
    ops, terms = list(args[0::2]), [lab(s) for s in args[1::2]]
    if len(args) % 2 == 1:
        ops = ops[:-1] if not isinstance(args[-1], Tensor) else ops
        return ",".join(terms[:len(ops)]) + "->" + lab(args[-1]), ops
    return ",".join(terms), ops


def einsum(equation, *operands):
    """Sum of products over the indices named by ``equation`` (NumPy/torch Einstein notation, with ``...``).

    >>> a = tapegrad.ones(2, 3); b = tapegrad.ones(3, 4)
    >>> tapegrad.einsum("ij,jk->ik", a, b).shape
    tapegrad.Size([2, 4])
    """
    if isinstance(equation, Tensor):
        equation, operands = _sublist_equation((equation,) + operands)
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    for o in operands:
        if not isinstance(o, Tensor):
            raise TypeError(f"einsum(): operands must be Tensors, not {type(o).__name__}")
    if not operands:
        raise RuntimeError("einsum(): must provide at least one operand")
    eq = _parse_einsum(equation, [o._array.shape for o in operands])
    return _einsum_apply(eq, operands)


@writes_out(error="tensordot: Expected the output tensor to have dtype {r}, but got an output tensor with dtype {o}")
def tensordot(a, b, dims=2, out=None):
    """Contract ``dims`` dims of ``a`` with ``b``: an int (last dims of a with first of b) or a pair of lists.

    >>> tapegrad.tensordot(tapegrad.ones(2, 3, 4), tapegrad.ones(3, 4, 5), dims=2).shape
    tapegrad.Size([2, 5])
    """
    na, nb = a._array.ndim, b._array.ndim
    if isinstance(dims, Tensor):
        dims = dims.tolist()
    if isinstance(dims, (int, np.integer)):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > min(na, nb):
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        given_a, given_b = list(range(-int(dims), 0)), list(range(int(dims)))   # (as torch names them in errors)
    else:
        given_a, given_b = dims
        given_a = [given_a] if isinstance(given_a, int) else list(given_a)
        given_b = [given_b] if isinstance(given_b, int) else list(given_b)
        if len(given_a) != len(given_b):
            raise RuntimeError("both dimension lists should have same length")
    from .._util import normalize_dims
    normalize_dims(given_a, na)          # torch's IndexError / "appears multiple times" errors
    normalize_dims(given_b, nb)
    da = [d % na if na else 0 for d in given_a]
    db = [d % nb if nb else 0 for d in given_b]
    if a._array.dtype != b._array.dtype:
        raise RuntimeError("both inputs should have same dtype")
    # a contracted dim of size 1 broadcasts against the other's (torch sums the other over it first)
    sum_a = [i for i, j in zip(da, db) if b._array.shape[j] == 1 and a._array.shape[i] != 1]
    sum_b = [j for i, j in zip(da, db) if a._array.shape[i] == 1 and b._array.shape[j] != 1]
    for i, j, gi, gj in zip(da, db, given_a, given_b):
        sa_, sb_ = a._array.shape[i], b._array.shape[j]
        if sa_ != sb_ and 1 not in (sa_, sb_):
            raise RuntimeError(f"contracted dimensions need to match, but first has size {sa_} in dim {gi} and "
                               f"second has size {sb_} in dim {gj}")
    if sum_a:          # (in the operands' dtype: a sum of ints would be int64)
        a = a.sum(tuple(sum_a), keepdim=True, dtype=a.dtype)
    if sum_b:
        b = b.sum(tuple(sum_b), keepdim=True, dtype=b.dtype)
    letters = iter(_LETTERS)
    sa = [next(letters) for _ in range(na)]
    sb = [next(letters) for _ in range(nb)]
    for i, j in zip(da, db):
        sb[j] = sa[i]
    out_s = [c for i, c in enumerate(sa) if i not in da] + [c for j, c in enumerate(sb) if j not in db]
    return _einsum_apply("".join(sa) + "," + "".join(sb) + "->" + "".join(out_s), (a, b), Einsum)


@writes_out(error="tensordot: Expected the output tensor to have dtype {r}, but got an output tensor with dtype {o}")
def inner(input, other, *, out=None):
    """Inner product over the last dim (a 0-d operand multiplies).

    >>> tapegrad.inner(tapegrad.ones(2, 3), tapegrad.ones(4, 3)).shape
    tapegrad.Size([2, 4])
    """
    if input._array.ndim == 0 or other._array.ndim == 0:
        return input * other
    if input._array.shape[-1] != other._array.shape[-1]:
        raise RuntimeError(f"inner() the last dimension must match on both input tensors but got shapes "
                           f"[{', '.join(map(str, input._array.shape))}] and "
                           f"[{', '.join(map(str, other._array.shape))}]")
    return tensordot(input, other, ([-1], [-1]))


class Kron(Primitive):
    """Kronecker product (the lower-dimensional operand gets leading 1s)."""

    node_name = "UnsafeViewBackward0"

    jvp = staticmethod(multilinear_jvp)

    @staticmethod
    def forward(ctx, a, b):
        a, b, _ = promote(a, b)
        n = max(a.ndim, b.ndim)
        a2 = a.reshape((1,) * (n - a.ndim) + a.shape)
        b2 = b.reshape((1,) * (n - b.ndim) + b.shape)
        ctx.shapes = (a2.shape, b2.shape)
        if a.dtype.kind == "c":
            ctx._cplx = True
        ctx.save_crossed(0, 1)
        out = np.multiply.outer(a2, b2)     # (a0..an, b0..bn) -> interleave
        perm = [i for k in range(n) for i in (k, n + k)]
        return out.transpose(perm).reshape(tuple(x * y for x, y in zip(a2.shape, b2.shape)))

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        if ctx._cplx:
            a, b = (None if a is None else cj(a)), (None if b is None else cj(b))
        sa, sb = ctx.shapes
        n = len(sa)
        g = grad.reshape(tuple(d for pair in zip(sa, sb) for d in pair))
        la, lb = _LETTERS[:26][:n], _LETTERS[26:][:n]
        gs = "".join(x + y for x, y in zip(la, lb))
        need = ctx.needs_input_grad
        ga = einsum(f"{gs},{lb}->{la}", g, b.reshape(sb)).reshape(input_shape(ctx, 0)) if need[0] else None
        gb = einsum(f"{gs},{la}->{lb}", g, a.reshape(sa)).reshape(input_shape(ctx, 1)) if need[1] else None
        return ga, gb


@writes_out(dtype="cast")
def kron(input, other, *, out=None):
    """Kronecker product.

    >>> tapegrad.kron(tapegrad.eye(2), tapegrad.ones(2, 2)).shape
    tapegrad.Size([4, 4])
    """
    return Kron.apply(input, other)


class LinalgCross(Primitive):
    """3-vector cross product along ``dim`` (inputs broadcast)."""

    jvp = staticmethod(multilinear_jvp)

    @staticmethod
    def forward(ctx, a, b, dim):
        if a.dtype != b.dtype:
            raise RuntimeError(f"expected scalar type {_dtname(a)} but found {_dtname(b)}")
        ctx.dim = dim
        if a.dtype.kind == "c":
            ctx._cplx = True
        ctx.save_crossed(0, 1)
        shape = np.broadcast_shapes(a.shape, b.shape)
        return np.cross(np.broadcast_to(a, shape), np.broadcast_to(b, shape), axis=dim)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        need = ctx.needs_input_grad
        if ctx._cplx:
            a, b = (None if a is None else cj(a)), (None if b is None else cj(b))
        return (LinalgCross.apply(b, grad, ctx.dim) if need[0] else None,
                LinalgCross.apply(grad, a, ctx.dim) if need[1] else None, None)


def _cross(input, other, dim, op):
    a, b = input._array, other._array
    if a.ndim != b.ndim:
        raise RuntimeError(f"{op}: inputs must have the same number of dimensions.")
    shape = broadcast_or_error(a.shape, b.shape)
    d = dim % len(shape) if -len(shape) <= dim < len(shape) else None
    if d is None:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-len(shape)}, {len(shape) - 1}], but "
                         f"got {dim})")
    if a.shape[d] != 3 or b.shape[d] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got {a.shape[d]} and "
                           f"{b.shape[d]}")
    return LinalgCross.apply(input, other, d)


@writes_out
def cross(input, other, dim=None, *, out=None):
    """Cross product of 3-vectors along ``dim`` (default: the first dim of size 3, as torch.cross).

    >>> tapegrad.cross(tapegrad.tensor([1., 0., 0.]), tapegrad.tensor([0., 1., 0.]), dim=0)
    tensor([0., 0., 1.])
    """
    if dim is None:
        import warnings
        warnings.warn("Using torch.cross without specifying the dim arg is deprecated.\nPlease either pass the dim "
                      "explicitly or simply use torch.linalg.cross.\nThe default value of dim will change to agree "
                      "with that of linalg.cross in a future release.", UserWarning, stacklevel=2)
        shape = np.broadcast_shapes(input._array.shape, other._array.shape)
        dims = [i for i, s in enumerate(shape) if s == 3]
        if not dims:
            raise RuntimeError("no dimension of size 3 in input")
        dim = dims[0]
    return _cross(input, other, dim, "linalg.cross")


@writes_out
def linalg_cross(input, other, *, dim=-1, out=None):
    """Cross product of 3-vectors along ``dim`` (default -1), broadcasting.

    >>> tapegrad.linalg.cross(tapegrad.tensor([1., 0., 0.]), tapegrad.tensor([0., 1., 0.]))
    tensor([0., 0., 1.])
    """
    return _cross(input, other, dim, "linalg.cross")


class Trace(Primitive):
    """Sum of the main diagonal of a matrix."""

    jvp = staticmethod(linear_jvp)   # linear: the op itself applied to the tangents

    @staticmethod
    def forward(ctx, x):
        if x.ndim != 2:
            raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {x.ndim}")
        ctx.shape = x.shape
        out = np.trace(x)
        return np.asarray(out, np.int64 if x.dtype.kind in "biu" else x.dtype)

    @staticmethod
    def backward(ctx, grad):
        return grad * _const(np.eye(*ctx.shape, dtype=grad._array.dtype))


def trace(input):
    """Sum of the diagonal of a 2-d tensor.

    >>> tapegrad.trace(tapegrad.eye(3))
    tensor(3.)
    """
    return Trace.apply(input)


@writes_out(error="multi_dot(): expected out tensor to have dtype {rc} but got {oc}")
def multi_dot(tensors, *, out=None):
    """Product of a chain of matrices (the first may be a row vector, the last a column vector).

    >>> tapegrad.linalg.multi_dot([tapegrad.ones(2, 3), tapegrad.ones(3, 4), tapegrad.ones(4)]).shape
    tapegrad.Size([2])
    """
    tensors = list(tensors)
    if len(tensors) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(tensors)}")
    first, last = tensors[0], tensors[-1]
    out_shape = ()
    if first._array.ndim == 1:
        first = first.unsqueeze(0)
    elif first._array.ndim == 2:
        out_shape += (first._array.shape[0],)
    else:
        raise RuntimeError(f"multi_dot(): the first tensor must be 1D or 2D but got {first._array.ndim}D")
    if last._array.ndim == 1:
        last = last.unsqueeze(-1)
    elif last._array.ndim == 2:
        out_shape += (last._array.shape[1],)
    else:
        raise RuntimeError(f"multi_dot(): the last tensor must be 1D or 2D but got {last._array.ndim}D")
    mats = [first] + tensors[1:-1] + [last]
    for i, m in enumerate(mats[1:-1], 1):
        if m._array.ndim != 2:
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {m._array.ndim}D")
    for i in range(len(mats) - 1):
        if mats[i]._array.shape[1] != mats[i + 1]._array.shape[0]:
            a, b = mats[i]._array.shape, mats[i + 1]._array.shape
            raise RuntimeError(f"multi_dot(): tensors {i} and {i + 1} with shapes [{a[0]}, {a[1]}] and [{b[0]}, "
                               f"{b[1]}] cannot be multiplied")
    res = mats[0]
    for m in mats[1:]:
        res = mm(res, m)
    return res.view(out_shape)


@writes_out(error="multi_dot(): expected out tensor to have dtype {rc} but got {oc}")
def chain_matmul(*matrices, out=None):
    """Product of 2-d matrices (deprecated in torch: use ``linalg.multi_dot``).

    >>> tapegrad.chain_matmul(tapegrad.ones(2, 3), tapegrad.ones(3, 4)).shape
    tapegrad.Size([2, 4])
    """
    if len(matrices) == 1 and isinstance(matrices[0], (list, tuple)):
        matrices = tuple(matrices[0])
    if len(matrices) == 1:
        return matrices[0].clone()
    for m in matrices:
        if m._array.ndim != 2:
            raise RuntimeError(f"Tensor dimension is {m._array.ndim}, expected 2 instead.")
    return multi_dot(list(matrices))


bind(inner=inner, kron=kron, cross=cross, trace=trace)
