"""``torch._foreach_*``: an op applied to every tensor of a list (EMA libraries and hand-written optimizers call
them: ``_foreach_lerp_(ema_params, params, 1 - decay)``, ``_foreach_mul_``, ``_foreach_addcmul_``...).

torch fuses the list into one kernel; here each tensor runs the ordinary op (so autograd, dtypes, broadcasting
and errors are the op's own). The out-of-place forms return a tuple of results, the in-place forms (``_``) change
the tensors and return the list they were given, as torch's. The second argument of the binary ops may be a
number, a list of numbers (one per tensor), a list of tensors, or one tensor for every element."""

from __future__ import annotations

import numbers

from ..tensor import Tensor

_UNARY = ("abs", "acos", "asin", "atan", "ceil", "cos", "cosh", "erf", "erfc", "exp", "expm1", "floor", "frac",
          "lgamma", "log", "log10", "log1p", "log2", "neg", "reciprocal", "round", "rsqrt", "sigmoid", "sign", "sin",
          "sinh", "sqrt", "tan", "tanh", "trunc")
_BINARY = ("add", "sub", "mul", "div", "pow", "maximum", "minimum", "clamp_min", "clamp_max")


def _check(tensors, *others):
    if not isinstance(tensors, (list, tuple)) or not tensors:
        raise RuntimeError("Tensor list must have at least one tensor.")
    for other in others:
        if isinstance(other, (list, tuple)) and len(other) != len(tensors):
            if other and not isinstance(other[0], Tensor):
                raise RuntimeError("Tensor list must have same number of elements as scalar list.")
            raise RuntimeError(f"Tensor lists must have the same number of tensors, got {len(tensors)} and "
                               f"{len(other)}")


def _per_tensor(other, n):
    """The second argument spread over the list: a list is one value per tensor; a number or a tensor is shared."""
    if isinstance(other, (list, tuple)):
        return list(other)
    return [other] * n


_NO = object()


def _second(other, kwargs, names):
    """The second operand, given positionally or by one of torch's overload keywords (``scalar=``, ``scalars=``,
    ``other=``, ``exponent=``...)."""
    for key in names:
        if key in kwargs:
            if other is not _NO:
                raise TypeError(f"got multiple values for argument '{key}'")
            other = kwargs.pop(key)
    if kwargs:
        raise TypeError(f"got an unexpected keyword argument '{next(iter(kwargs))}'")
    if other is _NO:
        raise TypeError(f"missing required argument '{names[0]}'")
    return other


_KEYS = ("other", "scalar", "scalars", "exponent")


def _unary(name):
    def out_of_place(self):
        _check(self)
        return tuple(getattr(t, name)() for t in self)

    def in_place(self):
        _check(self)
        for t in self:
            getattr(t, name + "_")()
        return self
    return out_of_place, in_place


def _binary(name):
    def call(t, o, alpha):
        if name in ("maximum", "minimum"):       # (torch's foreach forms take a number here too)
            if not isinstance(o, Tensor):
                return t.clamp_min(o) if name == "maximum" else t.clamp_max(o)
            from .. import maximum, minimum
            return (maximum if name == "maximum" else minimum)(t, o)
        if alpha is not None:
            return getattr(t, name)(o, alpha=alpha)
        return getattr(t, name)(o)

    def out_of_place(self, other=_NO, *, alpha=None, **kwargs):
        other = _second(other, kwargs, _KEYS)
        if name == "pow" and isinstance(self, numbers.Number):      # _foreach_pow(scalar, tensors)
            _check(other)
            from .. import pow as _pow
            return tuple(_pow(self, t) for t in other)
        _check(self, other)
        return tuple(call(t, o, alpha) for t, o in zip(self, _per_tensor(other, len(self))))

    def in_place(self, other=_NO, *, alpha=None, **kwargs):
        other = _second(other, kwargs, _KEYS)
        _check(self, other)
        for t, o in zip(self, _per_tensor(other, len(self))):
            if name in ("maximum", "minimum"):
                t.copy_(call(t, o, None))
            elif alpha is not None:
                getattr(t, name + "_")(o, alpha=alpha)
            else:
                getattr(t, name + "_")(o)
        return self
    return out_of_place, in_place


def _values(value, n):
    """addcmul/addcdiv's ``value``: a number, one number per tensor, or a 1-d tensor of them."""
    if isinstance(value, Tensor):
        return [v.item() for v in value.reshape(-1)]
    return _per_tensor(value, n)


def _addc(name):
    def out_of_place(self, tensor1, tensor2, value=_NO, **kwargs):
        value = 1 if value is _NO and not kwargs else _second(value, kwargs, ("value", "scalars"))
        _check(self, tensor1, tensor2, value)
        return tuple(getattr(t, name)(a, b, value=v)
                     for t, a, b, v in zip(self, tensor1, tensor2, _values(value, len(self))))

    def in_place(self, tensor1, tensor2, value=_NO, **kwargs):
        value = 1 if value is _NO and not kwargs else _second(value, kwargs, ("value", "scalars"))
        _check(self, tensor1, tensor2, value)
        for t, a, b, v in zip(self, tensor1, tensor2, _values(value, len(self))):
            getattr(t, name + "_")(a, b, value=v)
        return self
    return out_of_place, in_place


def _foreach_lerp(self, tensors1, weight=_NO, **kwargs):
    weight = _second(weight, kwargs, ("weight", "weights"))
    _check(self, tensors1, weight)
    return tuple(t.lerp(e, w) for t, e, w in zip(self, tensors1, _per_tensor(weight, len(self))))


def _foreach_lerp_(self, tensors1, weight=_NO, **kwargs):
    weight = _second(weight, kwargs, ("weight", "weights"))
    _check(self, tensors1, weight)
    for t, e, w in zip(self, tensors1, _per_tensor(weight, len(self))):
        t.lerp_(e, w)
    return self


def _foreach_norm(self, ord=2, dtype=None):
    from ..linalg import vector_norm
    _check(self)
    return tuple(vector_norm(t, ord, dtype=dtype) for t in self)


def _foreach_max(self):
    _check(self)
    return tuple(t.max() for t in self)


def _foreach_clone(self):
    _check(self)
    return tuple(t.clone() for t in self)


def _foreach_copy_(self, src, non_blocking=False):
    _check(self, src)
    for t, s in zip(self, src):
        t.copy_(s, non_blocking)
    return self


def _foreach_zero_(self):
    _check(self)
    for t in self:
        t.zero_()
    return self


def _install():
    g = globals()
    for name in _UNARY:
        g[f"_foreach_{name}"], g[f"_foreach_{name}_"] = _unary(name)
    for name in _BINARY:
        g[f"_foreach_{name}"], g[f"_foreach_{name}_"] = _binary(name)
    for name in ("addcmul", "addcdiv"):
        g[f"_foreach_{name}"], g[f"_foreach_{name}_"] = _addc(name)
    for key in [k for k in g if k.startswith("_foreach_")]:
        g[key].__name__ = g[key].__qualname__ = key


_install()
NAMES = sorted(k for k in globals() if k.startswith("_foreach_"))
