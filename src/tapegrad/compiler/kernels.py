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

__all__ = ["match", "NAMESPACE"]

def _one(dtype):
    """The eager formulas' cached read-only 0-d one of ``dtype`` (``elementwise.unary._one``)."""
    return _eager_one(dtype)


NAMESPACE = {"_neg": np.negative, "_exp": np.exp, "_tanh": np.tanh, "_rec": np.reciprocal, "_div": np.true_divide,
             "_log": np.log}


class Kernel:
    """``forward(out, args, one)`` -> source lines; ``saved(args, out, need)`` -> the names backward reads;
    ``grads(g, args, out, need, one)`` -> one expression (or None) per input."""

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


def match(rec, prog):
    """The kernel for this op call, or None (see the module's docstring for when one applies)."""
    k = KERNELS.get(rec.cls)
    if k is None or rec.kwargs or len(rec.outs) != 1 or rec.outs[0] is None:
        return None
    shape, dtype = prog.meta[rec.outs[0]]
    if dtype.kind != "f":
        return None
    for kind, v in rec.args:
        if kind != "v" or prog.meta[v][0] != shape or prog.meta[v][1] != dtype:
            return None
    return k
