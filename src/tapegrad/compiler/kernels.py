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

from ..ops.elementwise.arith import Add, Div, Mul, Neg, Sub
from ..ops.elementwise.unary import Exp, Log, Sigmoid, Tanh
from ..ops.elementwise.unary import _one as _eager_one
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
INPLACE = (*UFUNC, Sigmoid)


def forward_inplace(cls, out, a, one, pos):
    """The forward writing into operand ``pos`` (a fresh array nothing else reads): the same ufuncs, so the same
    values."""
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
