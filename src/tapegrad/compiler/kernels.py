"""Kernels: the hot elementwise ops written inline by codegen, as NumPy expressions.

An op call of the program is written inline when its tensor operands and its output all have one shape (at least
one dimension) and one float dtype, and it has no other arguments: then the op's forward is exactly the NumPy
expression below (no promotion, broadcasting or casting happens) and its backward is exactly its formula on
arrays (``Add``: the gradient to both; ``Mul``: ``g * b`` and ``g * a``; ``Tanh``: ``g * (1 - r * r)`` with the
same cached 0-d one, ...): the same kernels in the same order as eager, so the values are bitwise eager's.
On 0-d operands NumPy's results are scalars (``np.float32``): the same arithmetic, and codegen turns them back
into 0-d arrays wherever a value leaves the inline code. Anything else (broadcasting, a Python number operand,
complex) goes through the op's own forward and
backward (``codegen``'s general line).

Each kernel gives its forward lines, which values its backward reads (kept from the forward: what the eager
node saves), and one gradient expression per input.
"""

from __future__ import annotations

import numpy as np

from ..ops.elementwise.activations import _ZERO_BLOCK, _ZEROS, Relu, _max0
from ..ops.elementwise.arith import Add, Div, Mul, Neg, Sub
from ..ops.elementwise.unary import Exp, Log, Sigmoid, Tanh
from ..ops.elementwise.unary import _one as _eager_one
from ..ops.nn_ops.linear import LogSoftmax, _Addmm, _log_softmax_np, _MmT
from ..ops.nn_ops.losses import NllLoss
from ..ops.reduce.sums import Sum

__all__ = ["match", "NAMESPACE"]

def _one(dtype):
    """The eager formulas' cached read-only 0-d one of ``dtype`` (``elementwise.unary._one``)."""
    return _eager_one(dtype)


NAMESPACE = {"_neg": np.negative, "_exp": np.exp, "_tanh": np.tanh, "_rec": np.reciprocal, "_div": np.true_divide,
             "_log": np.log, "_add": np.add, "_sub": np.subtract, "_mul": np.multiply,
             "_sum": np.sum, "_asarray": np.asarray, "_bcast": np.broadcast_to}
# the ufunc of each kernel's forward, for the in-place form (``out=`` an operand nothing else reads)
UFUNC = {Add: "_add", Sub: "_sub", Mul: "_mul", Div: "_div", Neg: "_neg", Exp: "_exp", Log: "_log", Tanh: "_tanh"}
INPLACE = (*UFUNC, Sigmoid, Relu)


def forward_inplace(cls, out, a, one, pos):
    """The forward writing into operand ``pos`` (a fresh array nothing else reads): the same ufuncs, so the same
    values."""
    if cls is Relu:
        return [f"{out} = _relu_({a[0]})"]
    if cls is Sigmoid:
        x = a[0]
        return [f"_neg({x}, out={x})", f"_exp({x}, out={x})", f"{x} += {one}", f"_rec({x}, out={x})", f"{out} = {x}"]
    return [f"{out} = {UFUNC[cls]}({', '.join(a)}, out={a[pos]})"]


def grad_inplace(cls, g, a, o, target, one):
    """The backward of a kernel with one input needing a gradient (``target``), written into ``g`` (the output's
    gradient: a fresh array only this code holds, dead after this op): lines, or None to use the plain form.
    Each is the eager formula's operations in the eager order, so the values are the same."""
    if cls is Add:
        return []
    if cls is Sub:
        return [] if target == 0 else [f"_neg({g}, out={g})"]
    if cls is Mul:
        return [f"_mul({g}, {a[1 - target]}, out={g})"]
    if cls is Div:
        if target == 0:
            return [f"_div({g}, {a[1]}, out={g})"]
        return [f"_t = _div({a[0]}, {a[1]})", f"_div(_t, {a[1]}, out=_t)", f"_neg({g}, out={g})",
                f"_mul({g}, _t, out={g})"]
    if cls is Neg:
        return [f"_neg({g}, out={g})"]
    if cls is Exp:
        return [f"_mul({g}, {o}, out={g})"]
    if cls is Log:
        return [f"_div({g}, {a[0]}, out={g})"]
    if cls is Tanh:
        return [f"_t = _mul({o}, {o})", f"_sub({one}, _t, out=_t)", f"_mul({g}, _t, out={g})"]
    if cls is Sigmoid:
        return [f"_t = _sub({one}, {o})", f"_mul({o}, _t, out=_t)", f"_mul({g}, _t, out={g})"]
    return None


class Kernel:
    """``forward(out, args, one)`` -> source lines; ``saved(args, out, need)`` -> the names backward reads;
    ``grads(g, args, out, need, one)`` -> one expression (or None) per input."""

    fresh_grads = True     # the gradient expressions make new arrays (False: views, never written into)
    grad_inplace = None    # its own in-place backward (else the module's ``grad_inplace`` by op class)
    forward_inplace = None  # its own in-place forward (else the module's ``forward_inplace``)
    consts = None          # {name: value} its lines read, added to the generated code's globals

    def __init__(self, forward, saved, grads):
        self.forward, self.saved, self.grads = forward, saved, grads


def _binary(sym):
    return lambda out, a, one: [f"{out} = {a[0]} {sym} {a[1]}"]


KERNELS = {
    Add: Kernel(_binary("+"), lambda a, o, need: [],
                      lambda g, a, o, need, one: [g, g]),
    Sub: Kernel(_binary("-"), lambda a, o, need: [],
                      lambda g, a, o, need, one: [g, f"-{g}"]),
    Mul: Kernel(_binary("*"), lambda a, o, need: [a[1]] * need[0] + [a[0]] * need[1],
                      lambda g, a, o, need, one: [f"{g} * {a[1]}", f"{g} * {a[0]}"]),
    Div: Kernel(lambda out, a, one: [f"{out} = _div({a[0]}, {a[1]})"],
                      lambda a, o, need: [a[1]] + [a[0]] * need[1],
                      lambda g, a, o, need, one: [f"{g} / {a[1]}", f"-{g} * (({a[0]} / {a[1]}) / {a[1]})"]),
    Neg: Kernel(lambda out, a, one: [f"{out} = _neg({a[0]})"], lambda a, o, need: [],
                      lambda g, a, o, need, one: [f"-{g}"]),
    Exp: Kernel(lambda out, a, one: [f"{out} = _exp({a[0]})"], lambda a, o, need: [o],
                      lambda g, a, o, need, one: [f"{g} * {o}"]),
    Tanh: Kernel(lambda out, a, one: [f"{out} = _tanh({a[0]})"], lambda a, o, need: [o],
                       lambda g, a, o, need, one: [f"{g} * ({one} - {o} * {o})"]),
    Sigmoid: Kernel(lambda out, a, one: [f"{out} = _exp(_neg({a[0]}))", f"{out} += {one}",
                                         f"_rec({out}, out={out})"],
                          lambda a, o, need: [o],
                          lambda g, a, o, need, one: [f"{g} * ({o} * ({one} - {o}))"]),
    Log: Kernel(lambda out, a, one: [f"{out} = _log({a[0]})"], lambda a, o, need: [a[0]],
                lambda g, a, o, need, one: [f"{g} / {a[0]}"]),
}
# 0-d operands: NumPy gives scalars (np.float32), whose arithmetic is the same; only the in-place steps differ
SCALAR_FORWARD = {Sigmoid: lambda out, a, one: [f"{out} = _rec(_exp(_neg({a[0]})) + {one})"]}


_FULL_SUM = (("c", None), ("c", False), ("c", None))


def _sum_kernel(shape, dtype_name):
    """``x.sum()`` of a float tensor: Sum's forward (``np.sum`` then a 0-d array of x's dtype) and its backward
    (the gradient broadcast back: a view)."""
    k = Kernel(lambda out, a, one: [f"{out} = _asarray(_sum({a[0]}, axis=None, keepdims=False), {a[0]}.dtype)"],
               lambda a, o, need: [],
               lambda g, a, o, need, one: [f"_bcast({g}, {shape!r})"])
    k.fresh_grads = False
    return k


def match(rec, prog):
    """The kernel for this op call, or None (see the module's docstring for when one applies)."""
    if rec.cls is Sum and prog.dyn is not None:
        return None          # (its backward bakes the input's shape: a generic program runs Sum's own)
    if rec.cls is Sum and rec.args[1:] == _FULL_SUM and not rec.kwargs and rec.args[0][0] == "v":
        shape, dtype = prog.meta[rec.args[0][1]]
        if dtype.kind == "f" and shape:
            return _sum_kernel(shape, dtype.name)
        return None
    if rec.cls in _NN:
        return _match_nn(rec, prog)
    k = KERNELS.get(rec.cls)
    if k is None or rec.kwargs or len(rec.outs) != 1 or rec.outs[0] is None:
        return None
    shape, dtype = prog.meta[rec.outs[0]]
    if dtype.kind != "f":
        return None
    for kind, v in rec.args:
        if kind != "v" or prog.meta[v][0] != shape or prog.meta[v][1] != dtype:
            return None
    alt = prog.meta_alt          # a generic program: the operands had one shape in both captures
    if alt is not None and any(alt[v][0] != alt[rec.outs[0]][0] for _, v in rec.args):
        return None
    return k


# --- the hot ops of a training step: linear (addmm / mm), relu, log_softmax, nll_loss -----------------------------
# Each calls the eager op's own NumPy code (or repeats its few lines), on arrays of the shapes and dtypes the eager
# op checked at capture (the guards hold them), so the values are bitwise eager's; their backward formulas are the
# eager ones, written inline (no context object, no ``_run_arrays``), and, where the output's gradient array is
# owned by the generated code, written into it as eager's array path does when it owns it (ReluBackward).

def _relu_(x):
    """``_max0`` (relu's forward) written into ``x`` (a fresh array nothing else reads): the same ``maximum``
    against the same zeros, so the same values."""
    z = _ZEROS.get(x.dtype)
    if z is None:
        _max0(x[:0].reshape(0))           # (makes the zeros block of this dtype)
        z = _ZEROS[x.dtype]
    n = x.size
    if n <= _ZERO_BLOCK:
        return np.maximum(x, z[:n].reshape(x.shape), out=x)
    if not x.flags.c_contiguous:
        return np.maximum(x, z[0], out=x)
    q = n - n % _ZERO_BLOCK
    xf = x.reshape(-1)
    np.maximum(xf[:q].reshape(-1, _ZERO_BLOCK), z, out=xf[:q].reshape(-1, _ZERO_BLOCK))
    np.maximum(xf[q:], z[:n - q], out=xf[q:])
    return x


def _log_softmax(x, dim):
    """LogSoftmax's forward on a float array of at least one dimension (``_softmax_forward``'s branches)."""
    if x.size == 0:
        return x.copy()
    return _log_softmax_np(x, dim)


class _NllCtx:
    """What NllLoss's forward reads and writes on its context (for the general case, see ``_nll``)."""

    needs_input_grad = (True, False, False, False, False)


def _nll(x, t, reduction, ignore_index):
    """NllLoss's forward for a 2-d float ``x``, an integer target and no class weights: ``(loss, m)`` with ``m``
    the gradient's coefficients (the node's ``ctx.m``). Every target in range (then none can be ``ignore_index``,
    which ``match`` checked is not a class): NllLoss's lines for that case; else NllLoss's forward itself (ignored
    targets, or its IndexError)."""
    C = x.shape[1]
    tt = t.astype(np.intp, copy=False)
    if tt.size and tt.shape[0] == x.shape[0] and np.maximum.reduce(tt.view(np.uintp), axis=None) < C:
        rows = np.arange(tt.shape[0])
        s = x.dtype.type(0) - np.add.reduce(x[rows, tt], axis=None)
        coef = -1
        if reduction == "sum":
            out = s
        else:
            total = x.dtype.type(tt.size)
            out = s / total
            coef = coef / total
        m = np.zeros(x.shape, x.dtype)
        m[rows, tt] = coef
        return out, m
    ctx = _NllCtx()
    out = NllLoss.forward(ctx, x, t, None, reduction, ignore_index)
    return out, ctx.m


def _inplace_relu(g, a, o, target, one):
    return [f"_mul({g}, {o} != 0, out={g})"]        # (ReluBackward on an owned gradient: ``grad *= result != 0``)


def _nn_kernels():
    addmm = Kernel(lambda out, a, one: [f"{out} = {a[1]} @ {a[2]}.T", f"{out} += {a[0]}"],
                   lambda a, o, need: [a[2]] * need[1] + [a[1]] * need[2],
                   lambda g, a, o, need, one: [f"_addr({g}, axis=0)", f"{g} @ {a[2]}", f"{g}.T @ {a[1]}"])
    mmt = Kernel(lambda out, a, one: [f"{out} = {a[0]} @ {a[1]}.T"],
                 lambda a, o, need: [a[1]] * need[0] + [a[0]] * need[1],
                 lambda g, a, o, need, one: [f"{g} @ {a[1]}", f"{g}.T @ {a[0]}"])
    relu = Kernel(lambda out, a, one: [f"{out} = _max0({a[0]})"], lambda a, o, need: [o],
                  lambda g, a, o, need, one: [f"{g} * ({o} != 0)"])
    relu.grad_inplace = _inplace_relu
    return {_Addmm: addmm, _MmT: mmt, Relu: relu}


_RELU_ZEROS_MAX = 1 << 18     # (elements: a static relu keeps zeros of its shape up to 1 MiB of float32)


def _relu_static(shape, dtype):
    """Relu in a static program: ``maximum`` against zeros of its own shape (a read-only constant of the program),
    one ufunc call where ``_max0`` reshapes into blocks; the same ufunc against zeros, so the same values. A
    non-contiguous operand takes ``_max0`` itself (a scalar zero, so the result keeps its layout, as eager's)."""
    name = f"_Z{'_'.join(map(str, shape))}_{dtype.name}"
    z = np.zeros(shape, dtype)
    z.flags.writeable = False
    small = z.size <= _ZERO_BLOCK

    def fwd(out, a, one, into=False):
        x = a[0]
        call = f"_maximum({x}, {name}, out={x})" if into else f"_maximum({x}, {name})"
        if small and into:          # (written into x: the result has x's layout whatever it is)
            return [f"{out} = {call}"]
        return [f"{out} = {call} if {x}.flags.c_contiguous else {'_relu_' if into else '_max0'}({x})"]

    k = Kernel(fwd, lambda a, o, need: [o], NN_KERNELS[Relu].grads)
    k.grad_inplace = _inplace_relu
    k.forward_inplace = lambda cls, out, a, one, pos: fwd(out, a, one, into=True)
    k.consts = {name: z}
    return k


def _log_softmax_kernel(dim):
    """LogSoftmax along ``dim``: forward ``_log_softmax``; backward ``g - exp(y) * sum(g, dim)``, in place into an
    owned ``g`` as the same three operations."""
    k = Kernel(lambda out, a, one: [f"{out} = _lsm({a[0]}, {dim})"], lambda a, o, need: [o],
               lambda g, a, o, need, one: [f"{g} - _exp({o}) * _addr({g}, axis={dim}, keepdims=True)", None])
    k.grad_inplace = lambda g, a, o, target, one: [
        f"_t = _exp({o})", f"_mul(_t, _addr({g}, axis={dim}, keepdims=True), out=_t)", f"_sub({g}, _t, out={g})"]
    return k


def _nll_kernel(reduction, ignore_index):
    """NllLoss (2-d input, integer target, no weights): forward ``_nll`` keeps ``m`` (named after the output);
    backward ``g * m``."""
    return Kernel(lambda out, a, one: [f"{out}, {out}m = _nll({a[0]}, {a[1]}, {reduction!r}, {ignore_index!r})"],
                  lambda a, o, need: [f"{o}m"],
                  lambda g, a, o, need, one: [f"{g} * {o}m", None, None, None, None])


NN_KERNELS = _nn_kernels()
NAMESPACE.update({"_maximum": np.maximum, "_max0": _max0,
                  "_relu_": _relu_, "_lsm": _log_softmax, "_nll": _nll, "_addr": np.add.reduce})


def _all_metas(prog, vals):
    """The (shape, dtype) of each value in every capture a (generic) program stands for."""
    yield [prog.meta[v] for v in vals]
    if prog.meta_alt is not None:
        yield [prog.meta_alt[v] for v in vals]


def _match_nn(rec, prog):
    """The kernel for a linear / relu / log_softmax / nll_loss call whose operands are the plain case, or None."""
    cls = rec.cls
    if rec.kwargs or len(rec.outs) != 1 or rec.outs[0] is None:
        return None
    vals = [v for kind, v in rec.args if kind == "v"]
    if cls is _Addmm or cls is _MmT:
        if len(vals) != len(rec.args):
            return None
        for metas in _all_metas(prog, vals):
            dts = {d for _, d in metas}
            if len(dts) != 1 or dts.pop().kind != "f":
                return None
            if cls is _Addmm:
                (bs, _), (xs, _), (ws, _) = metas
                if len(bs) != 1 or len(ws) != 2 or bs[0] != ws[0] or len(xs) != 2 or xs[1] != ws[1]:
                    return None
            else:
                (xs, _), (ws, _) = metas
                if len(ws) != 2 or len(xs) != 2 or xs[1] != ws[1]:
                    return None
        return NN_KERNELS[cls]
    if cls is Relu:
        if len(vals) != 1 or len(rec.args) != 1:
            return None
        for (shape, dtype), in _all_metas(prog, vals):
            if dtype.kind != "f" or not shape:
                return None
        if prog.dyn is None and 0 < np.prod(shape) <= _RELU_ZEROS_MAX:
            return _relu_static(shape, dtype)
        return NN_KERNELS[cls]
    if cls is LogSoftmax:
        if len(vals) != 1 or rec.args[0][0] != "v" or rec.args[1][0] != "c" or type(rec.args[1][1]) is not int:
            return None
        for (shape, dtype), in _all_metas(prog, vals):
            if dtype.kind != "f" or not shape:
                return None
        return _log_softmax_kernel(rec.args[1][1])
    if cls is NllLoss and prog.dyn is None:
        if [k for k, _ in rec.args] != ["v", "v", "c", "c", "c"]:
            return None
        (xs, xd), (ts, td) = [prog.meta[v] for v in vals]
        _, _, weight, reduction, ignore_index = [a for _, a in rec.args]
        if (xd.kind != "f" or len(xs) != 2 or td.kind not in "iu" or len(ts) != 1 or ts[0] != xs[0]
                or weight is not None or reduction not in ("mean", "sum") or type(ignore_index) is not int
                or 0 <= ignore_index < xs[1]):
            return None
        return _nll_kernel(reduction, ignore_index)
    return None


_NN = (_Addmm, _MmT, Relu, LogSoftmax, NllLoss)
