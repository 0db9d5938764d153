"""NumPy's ufuncs on tensors, as torch lets them run: ``np.log(t)``, ``np.sqrt(t)``, ``np.add(t, 1.5)`` and
``np.maximum.accumulate(t)`` compute on the tensor's values with NumPy (NumPy's result dtype) and come back as a
tensor (a boolean result as ``uint8``, as torch's ``__array_wrap__`` does); a tensor that requires grad is refused
with torch's error outside ``no_grad``. ``np.add.outer`` gives an ndarray, as in torch.

An ndarray or NumPy scalar on the left of a Python operator (``np.float64(2) * t``, ``arr < t``) reaches
``Tensor.__array_ufunc__`` as the ufunc of that operator: it is answered by the tensor's reflected operator, so the
result is tapegrad's (differentiable, torch's promotion of a scalar), as it was when ``Tensor.__array_ufunc__`` was
None and NumPy deferred to that operator.
"""

from __future__ import annotations

import numpy as np

# the ufunc behind `other <op> tensor` -> the tensor's method that answers it
_REFLECTED = {np.add: "__radd__", np.subtract: "__rsub__", np.multiply: "__rmul__", np.true_divide: "__rtruediv__",
              np.floor_divide: "__rfloordiv__", np.remainder: "__rmod__", np.power: "__rpow__",
              np.matmul: "__rmatmul__", np.bitwise_and: "__rand__", np.bitwise_or: "__ror__",
              np.bitwise_xor: "__rxor__", np.left_shift: "__rlshift__", np.right_shift: "__rrshift__",
              np.less: "__gt__", np.less_equal: "__ge__", np.greater: "__lt__", np.greater_equal: "__le__",
              np.equal: "__eq__", np.not_equal: "__ne__"}
_WRAPPED = ("__call__", "reduce", "accumulate", "reduceat")


def array_ufunc(ufunc, method, inputs, kwargs):
    if (method == "__call__" and not kwargs and len(inputs) == 2 and ufunc in _REFLECTED
            and inputs[0].__class__.__module__ in ("numpy", "builtins")):
        return getattr(inputs[1], _REFLECTED[ufunc])(inputs[0])
    from .creation import from_numpy
    from .tensor import Tensor
    if method == "at" and isinstance(inputs[0], Tensor):
        raise TypeError("first operand must be array")
    if any(isinstance(o, Tensor) for o in kwargs.get("out", ()) or ()):
        return NotImplemented
    arrays = []
    for x in inputs:
        if isinstance(x, Tensor):
            x = x.numpy()      # (torch's error for a tensor that requires grad, outside no_grad)
        arrays.append(x)
    result = getattr(ufunc, method)(*arrays, **kwargs)
    if method not in _WRAPPED or "out" in kwargs:
        return result

    def wrap(r):
        if isinstance(r, (np.ndarray, np.generic)):
            r = np.asarray(r)
            return from_numpy(r.astype(np.uint8) if r.dtype == np.bool_ else r)
        return r
    return tuple(wrap(r) for r in result) if isinstance(result, tuple) else wrap(result)
