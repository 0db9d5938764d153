"""Comparisons and logic (no gradient): eq/ne/lt/le/gt/ge and their operators, logical and bitwise ops,
isnan and the other tests, isclose, allclose, equal.
"""

from __future__ import annotations

import numpy as np

from ...autograd.function import _active
from .._util import Tensor, _inside, array_op, bind, broadcast_or_error, promote, refuse_complex
from ._common import (SAME_AS_INPUT, _inplace, _iop, _need_tensor, _not_implemented, _two_numbers, _with_out,
                      laid_out_as_torch)


# --- comparisons and logic (no gradient) --------------------------------------------------------------------
def _operand(x):
    if isinstance(x, Tensor):
        return x._array
    if isinstance(x, (list, tuple)):
        return np.asarray(x)
    return x


_ORDERING = ("lt", "le", "gt", "ge")


def _compare(np_fn, name):
    def cmp(input, other):  # noqa: A002
        _need_tensor(name, "input", 1, input)
        if _active[0] and not _inside[0]:      # (a transform sees it as an op)
            return array_op(cmp, True, (input, other))
        a, b, d = promote(_operand(input), _operand(other))
        if d.kind == "c" and name in _ORDERING:
            raise _not_implemented(f"{name}_cpu", d)       # (complex numbers have no order)
        r = np.asarray(np_fn(a, b))
        return Tensor._make(r if r.ndim < 3 else laid_out_as_torch(r, a, b))
    cmp.__name__ = cmp.__qualname__ = name
    cmp.__doc__ = (f"Elementwise ``{np_fn.__name__}`` as a bool tensor (no gradient).\n\n"
                   f"    >>> tapegrad.{name}(tapegrad.tensor([1, 2]), 2)\n"
                   f"    {Tensor._make(np.asarray(np_fn(np.array([1, 2]), 2)))!r}\n    ")
    return _with_out(cmp)


eq, ne, lt, le, gt, ge = (_compare(f, n) for f, n in (
    (np.equal, "eq"), (np.not_equal, "ne"), (np.less, "lt"), (np.less_equal, "le"), (np.greater, "gt"),
    (np.greater_equal, "ge")))
greater, greater_equal, less, less_equal, not_equal = gt, ge, lt, le, ne


def _logical(np_fn, name):
    def fn(input, other):  # noqa: A002
        _need_tensor(name, "input", 1, input)
        _need_tensor(name, "other", 2, other)
        if _active[0] and not _inside[0]:      # (a transform sees it as an op)
            return array_op(fn, True, (input, other))
        return Tensor._make(np.asarray(np_fn(input._array, other._array)))
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"Elementwise logical {name[8:]} of the truth values (bool result).\n\n"
                  f"    >>> tapegrad.{name}(tapegrad.tensor([True, False]), tapegrad.tensor([True, True]))\n"
                  f"    {Tensor._make(np.asarray(np_fn(np.array([True, False]), True)))!r}\n    ")
    return _with_out(fn)


logical_and = _logical(np.logical_and, "logical_and")
logical_or = _logical(np.logical_or, "logical_or")
logical_xor = _logical(np.logical_xor, "logical_xor")


@_with_out
def logical_not(input):  # noqa: A002
    """Elementwise logical not (bool result).

    >>> tapegrad.logical_not(tapegrad.tensor([0, 1]))
    tensor([ True, False])
    """
    if _active[0] and not _inside[0]:      # (a transform sees it as an op)
        return array_op(logical_not, True, (input,))
    return Tensor._make(np.logical_not(input._array))


def _bitwise(np_fn, name):
    def fn(input, other):  # noqa: A002
        if _active[0] and not _inside[0]:      # (a transform sees it as an op)
            return array_op(fn, True, (input, other))
        if not isinstance(input, Tensor) and not isinstance(other, Tensor):
            raise _two_numbers(name, input, other)
        a, b, d = promote(_operand(input), _operand(other))
        if d.kind not in "iub":
            raise _not_implemented(f"{name}_cpu", d)
        return Tensor._make(np.asarray(np_fn(a, b)))
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"Elementwise {name[8:]} of the bits of integer or bool tensors.\n\n"
                  f"    >>> tapegrad.{name}(tapegrad.tensor([12]), 10)\n"
                  f"    {Tensor._make(np.asarray(np_fn(np.array([12]), 10)))!r}\n    ")
    return _with_out(fn)


bitwise_and = _bitwise(np.bitwise_and, "bitwise_and")
bitwise_or = _bitwise(np.bitwise_or, "bitwise_or")
bitwise_xor = _bitwise(np.bitwise_xor, "bitwise_xor")


@_with_out(**SAME_AS_INPUT)
def bitwise_not(input):  # noqa: A002
    """Bitwise not of an integer tensor (logical not of a bool tensor).

    >>> tapegrad.bitwise_not(tapegrad.tensor([0, 5]))
    tensor([-1, -6])
    """
    if input.dtype.np.kind not in "iub":
        raise _not_implemented("bitwise_not_cpu", input.dtype.np)
    if _active[0] and not _inside[0]:      # (a transform sees it as an op)
        return array_op(bitwise_not, True, (input,))
    return Tensor._make(np.invert(input._array))


def _invert(self):
    if self.dtype.np.kind not in "iub":
        raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type tensors")
    if _active[0] and not _inside[0]:      # (a transform sees it as an op)
        return array_op(_invert, True, (self,))
    return Tensor._make(np.invert(self._array))


_REAL_TESTS = {"isposinf": ("isposinf does not support complex inputs.", RuntimeError),
               "isneginf": ("isneginf does not support complex inputs.", RuntimeError),
               "signbit": ("signbit is not implemented for complex tensors.", NotImplementedError)}


def _test(name, np_fn, doc, example):
    def fn(input):  # noqa: A002
        if _active[0] and not _inside[0]:      # (a transform sees it as an op)
            return array_op(fn, True, (input,))
        a = input._array
        if name in _REAL_TESTS:
            refuse_complex(a, message=_REAL_TESTS[name][0], error=_REAL_TESTS[name][1])
        return Tensor._make(np.asarray(np_fn(a)))
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"{doc}\n\n    >>> tapegrad.{name}(tapegrad.tensor([1., float('inf'), float('nan')]))\n    {example}\n"
    return fn


def _for_float(f, default):
    return lambda a: f(a) if a.dtype.kind in "fc" else np.full(a.shape, default)


isnan = _test("isnan", _for_float(np.isnan, False), "True where input is NaN.", "tensor([False, False,  True])")
isinf = _test("isinf", _for_float(np.isinf, False), "True where input is +-inf.", "tensor([False,  True, False])")
isposinf = _test("isposinf", _for_float(np.isposinf, False), "True where input is +inf.",
                 "tensor([False,  True, False])")
isneginf = _test("isneginf", _for_float(np.isneginf, False), "True where input is -inf.",
                 "tensor([False, False, False])")
isfinite = _test("isfinite", _for_float(np.isfinite, True), "True where input is finite.",
                 "tensor([ True, False, False])")
isreal = _test("isreal", lambda a: np.imag(a) == 0 if a.dtype.kind == "c" else np.full(a.shape, True),
               "True where input has no imaginary part (everywhere for real dtypes).", "tensor([True, True, True])")
signbit = _test("signbit", lambda a: np.signbit(a) if a.dtype != np.bool_ else np.zeros(a.shape, bool),
                "True where the sign bit is set (also for -0.0).", "tensor([False, False, False])")


def _batched(*tensors):
    """Whether a vmap active in this thread batches one of ``tensors`` (their data is one sample's only)."""
    from ...autograd.grad_mode import _state
    return any(getattr(lv, "batching", False) and any(lv.physical(t) is not None for t in tensors
                                                      if isinstance(t, Tensor)) for lv in _state.interpreters)


def _same_dtype(a, b):
    if a.dtype is not b.dtype:
        raise RuntimeError(f"{a.dtype._legacy} did not match {b.dtype._legacy}")


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):  # noqa: A002
    """``|input - other| <= atol + rtol * |other|`` elementwise (bool tensor).

    >>> tapegrad.isclose(tapegrad.tensor([1., 2.]), tapegrad.tensor([1., 2.1]))
    tensor([ True, False])
    """
    _same_dtype(input, other)
    for name, tol in (("rtol", rtol), ("atol", atol)):
        if tol < 0:
            raise RuntimeError(f"{name} must be greater than or equal to zero, but got {tol:g}")
    if _active[0] and not _inside[0]:      # (a transform sees it as an op)
        return array_op(isclose, True, (input, other), {"rtol": rtol, "atol": atol, "equal_nan": equal_nan})
    a, b = input._array, other._array
    broadcast_or_error(a.shape, b.shape)
    if a.dtype.kind in "fc":
        return Tensor._make(np.asarray(np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)))
    diff = np.abs(a.astype(np.float64) - b.astype(np.float64))
    return Tensor._make(np.asarray((a == b) | (diff <= atol + rtol * np.abs(b.astype(np.float64)))))


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):  # noqa: A002
    """True if ``isclose`` holds everywhere.

    >>> tapegrad.allclose(tapegrad.tensor([1., 2.]), tapegrad.tensor([1., 2.]))
    True
    """
    if _active[0] and _batched(input, other):
        raise RuntimeError("vmap over torch.allclose isn't supported yet. Please file an issue at "
                           "https://github.com/pytorch/pytorch/issues if you need this feature.")
    return bool(isclose(input, other, rtol, atol, equal_nan)._array.all())


def equal(input, other):  # noqa: A002
    """True if both tensors have the same shape and elements.

    >>> tapegrad.equal(tapegrad.tensor([1, 2]), tapegrad.tensor([1, 2]))
    True
    """
    if _active[0] and _batched(input, other):
        raise RuntimeError("Batching rule not implemented for aten::equal. We could not generate a fallback.")
    a, b = input._array, other._array
    return a.shape == b.shape and bool(np.all(a == b))


def _dunder_cmp(fn):
    """``x == other``: anything that is not a tensor or a number (``None``, a string) compares by identity."""
    def cmp(self, other):
        if not isinstance(other, (Tensor, bool, int, float, complex, list, tuple, np.ndarray, np.generic)):
            return NotImplemented
        return fn(self, other)
    cmp.__name__ = fn.__name__
    return cmp


eq_, ne_, lt_, le_, gt_, ge_ = (_inplace(f) for f in (eq, ne, lt, le, gt, ge))
logical_and_, logical_or_, logical_xor_, logical_not_ = (_inplace(f) for f in (
    logical_and, logical_or, logical_xor, logical_not))
bitwise_and_, bitwise_or_, bitwise_xor_, bitwise_not_ = (_inplace(f) for f in (
    bitwise_and, bitwise_or, bitwise_xor, bitwise_not))

bind(
    __eq__=_dunder_cmp(eq), __ne__=_dunder_cmp(ne), __lt__=lt, __le__=le, __gt__=gt, __ge__=ge,
    __and__=bitwise_and, __or__=bitwise_or, __xor__=bitwise_xor, __invert__=_invert,
    __rand__=lambda self, other: bitwise_and(other, self), __ror__=lambda self, other: bitwise_or(other, self),
    __rxor__=lambda self, other: bitwise_xor(other, self),
    __iand__=_iop(bitwise_and), __ior__=_iop(bitwise_or), __ixor__=_iop(bitwise_xor),
    eq=eq, ne=ne, lt=lt, le=le, gt=gt, ge=ge, greater=gt, greater_equal=ge, less=lt, less_equal=le, not_equal=ne,
    logical_and=logical_and, logical_or=logical_or, logical_xor=logical_xor, logical_not=logical_not,
    bitwise_and=bitwise_and, bitwise_or=bitwise_or, bitwise_xor=bitwise_xor, bitwise_not=bitwise_not,
    isnan=isnan, isinf=isinf, isposinf=isposinf, isneginf=isneginf, isfinite=isfinite, isreal=isreal,
    allclose=allclose, isclose=isclose, equal=equal, signbit=signbit,
    eq_=eq_, ne_=ne_, lt_=lt_, le_=le_, gt_=gt_, ge_=ge_, greater_=gt_, greater_equal_=ge_,
    less_=lt_, less_equal_=le_, not_equal_=ne_, logical_and_=logical_and_,
    logical_or_=logical_or_, logical_xor_=logical_xor_, logical_not_=logical_not_, bitwise_and_=bitwise_and_,
    bitwise_or_=bitwise_or_, bitwise_xor_=bitwise_xor_, bitwise_not_=bitwise_not_,
)
