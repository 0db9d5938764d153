"""``out=``: the one place that decides what an ``out=`` tensor may be and writes results into it; and the writes
NumPy refuses (read-only views of ``expand``): torch's rules for them. Re-exported by ``ops._util``."""

from __future__ import annotations

import functools
import warnings

import numpy as np

from .. import _argtypes, _dtype
from ..autograd.grad_mode import _state
from ..tensor import Tensor
from ._util import _INTERNAL_OVERLAP, assert_no_overlap, before_write


# --- out= ---------------------------------------------------------------------------------------------------------
# The one place that decides what an ``out=`` tensor may be. Each function names torch's rule for its out dtype:
#   "cast"  the result must be castable to out's dtype (``can_cast``: TensorIterator ops, elementwise, reductions);
#   "same"  out's dtype must be the result's (structured kernels: matmul, linalg, sort, gather, argmax...);
#   "kind"  out must be floating / complex as the result is (fft's real outputs take any floating dtype);
#   "any"   any dtype (comparisons and logical ops: their bool result casts to whatever out is).
# ``error`` is torch's wording where it differs from the rule's usual one: a format string (RuntimeError), or an
# (exception class, format string) pair, with ``{op}``, ``{r}``/``{o}`` (the result's and out's dtypes as torch's
# "Float"/"Long") and ``{rc}``/``{oc}`` (as its C++ type names "float"/"long int"), or a function of the two
# dtypes that returns the exception (where the words depend on more than the names). A function with several
# outputs may give a tuple of rules and of errors, one per output. Functions that compute *in* out's dtype (sum,
# prod, cumsum, cumprod) take their dtype from ``out`` before computing, and then write with "cast".
_CPP_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
              "int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char",
              "uint8": "unsigned char", "uint16": "short unsigned int", "uint32": "unsigned int",
              "uint64": "long unsigned int", "bool": "bool", "complex64": "c10::complex<float>",
              "complex128": "c10::complex<double>", "complex32": "c10::complex<c10::Half>"}
_OUT_ERRORS = {"cast": "result type {r} can't be cast to the desired output type {o}",
               "same": "Expected out tensor to have dtype {rc}, but got {oc} instead",
               "kind": "{op}: expected out tensor of the result's kind ({r}), but got {o}"}


def castable(op, *what):
    """torch's words for linalg's "cast" rule: ``castable("linalg.pinv")``; with several outputs, one error per
    named output: ``castable("torch.linalg.eig", "eigenvalues", "eigenvectors")``."""
    texts = [f"{op}: Expected {w} to be safely castable from {{r}} dtype, but got {w} with dtype {{o}}"
             for w in what or ("result",)]
    return texts if what else texts[0]


def _out_dtype_ok(rule, rd, od):
    if rule == "cast":
        return rd is od or _dtype.can_cast(rd, od)
    if rule == "same":
        return rd is od
    if rule == "kind":
        return rd.is_complex == od.is_complex and rd.is_floating_point == od.is_floating_point
    if rule == "any":
        return True
    raise ValueError(f"unknown out= dtype rule {rule!r}")


def check_out_dtype(op, result, out, rule="cast", error=None):
    """torch's error when ``out``'s dtype breaks ``rule`` for ``result`` (see above); nothing otherwise."""
    rd, od = result.dtype, out.dtype
    if _out_dtype_ok(rule, rd, od):
        return
    if callable(error):
        raise error(rd, od)
    cls, text = error if isinstance(error, tuple) else (RuntimeError, error or _OUT_ERRORS[rule])
    raise cls(text.format(op=op, r=rd._legacy, o=od._legacy, rc=_CPP_NAMES.get(rd.name, rd.name),
                          oc=_CPP_NAMES.get(od.name, od.name)))


def _per_output(x, n):
    return x if isinstance(x, list) else [x] * n


def write_out(op, result, out, dtype="cast", error=None):
    """torch's ``out=``: ``out``'s dtype checked by the rule ``dtype`` (above), then the result copied into
    ``out`` (resized with torch's warning when it has elements, silently when empty), which is returned.

    ``out=`` does not record a graph, so an input that requires grad is torch's error. For several outputs
    ``out`` is a tuple and ``dtype``/``error`` may be lists, one per output; all are checked before any is written.
    """
    if out is None:
        return result
    if isinstance(result, tuple):
        n = len(result)
        if not isinstance(out, (tuple, list)) or len(out) != n:
            raise TypeError(f"{op}(): argument 'out' must be tuple of {n} Tensors")
        for r, o, rule, err in zip(result, out, _per_output(dtype, n), _per_output(error, n)):
            _check_out(op, r, o, rule, err)
        outs = tuple(_copy_into(r, o) for r, o in zip(result, out))
        return type(result)(*outs) if hasattr(result, "_fields") else outs
    _check_out(op, result, out, dtype, error)
    return _copy_into(result, out)


def _check_out(op, result, out, rule, error):
    if not isinstance(out, Tensor):
        raise TypeError(f"{op}(): argument 'out' must be Tensor, not {type(out).__name__}")
    if _state.enabled and (result._rg or out._rg):
        raise RuntimeError(f"{op}(): functions with out=... arguments don't support automatic differentiation, "
                           "but one of the arguments requires grad.")
    check_out_dtype(op, result, out, rule, error)


def _copy_into(result, out):
    arr = result._array
    before_write(out)
    if out._array.shape != arr.shape:
        if out._array.size:
            warnings.warn(f"An output with one or more elements was resized since it had shape "
                          f"[{', '.join(map(str, out._array.shape))}], which does not match the required output "
                          f"shape [{', '.join(map(str, arr.shape))}]. This behavior is deprecated, and in a future "
                          "PyTorch release outputs will not be resized unless they have zero elements. You can "
                          "explicitly reuse an out tensor t by resizing it, inplace, to zero elements with "
                          "t.resize_(0).", UserWarning, stacklevel=4)
        out._array = np.empty(arr.shape, out._array.dtype)
    try:
        np.copyto(out._array, arr, casting="unsafe")
    except ValueError:
        _unwritable(out._array)
    out._vc[0] += 1
    return out


_READ_ONLY = ("tapegrad cannot write into this tensor: its memory is a read-only NumPy view (an expand()ed "
              "tensor's, or a read-only array's); clone() it first")


def _repeats(xa) -> bool:
    """Whether elements of ``xa`` share memory (a stride 0 over more than one element: ``expand``'s)."""
    return any(s == 0 and n > 1 for s, n in zip(xa.strides, xa.shape))


def _unwritable(xa):
    """The error for a write NumPy refused: torch's for a tensor whose elements repeat (expanded), else ours."""
    if xa.flags.writeable:
        raise
    raise RuntimeError(_INTERNAL_OVERLAP if _repeats(xa) else _READ_ONLY) from None


class _Alias:
    def __init__(self, interface, base):
        self.__array_interface__, self.base = interface, base


def writable(xa, repeats=False):
    """``xa``, or where it is a read-only NumPy view (``expand``'s, ``np.broadcast_to``'s) of memory that can be
    written, an alias of it that can: torch writes through an expanded tensor, ``t.expand(3, 4)[0, 0] = 1``. Where
    its elements repeat (a stride 0), torch refuses the write (``_INTERNAL_OVERLAP``) unless ``repeats`` (fill_ and
    zero_ write one value: torch allows them). Only called once NumPy refused a write: writes cost nothing more."""
    if xa.flags.writeable:
        return xa
    if not repeats and _repeats(xa):
        raise RuntimeError(_INTERNAL_OVERLAP)
    owner = xa
    while isinstance(owner.base, np.ndarray):
        owner = owner.base
    if owner is xa or not owner.flags.writeable:
        raise RuntimeError(_READ_ONLY)
    iface = dict(xa.__array_interface__)
    iface["data"] = (iface["data"][0], False)
    return np.asarray(_Alias(iface, owner))


def writes_out(fn=None, *, dtype="same", error=None, no_overlap=False):
    """torch's ``out=`` for a function computed without it: the result is written into ``out`` by ``write_out``
    under the rule ``dtype`` ("same" unless said: most such functions are torch's structured kernels), with
    ``error`` as torch words it (a tuple of tensors for a function with several outputs); ``no_overlap``: an
    input sharing memory with ``out`` is torch's error (``assert_no_overlap``). Used bare (``@writes_out``) or with
    arguments (``@writes_out(dtype="cast", error="...")``)."""
    if fn is None:
        return functools.partial(writes_out, dtype=dtype, error=error, no_overlap=no_overlap)
    name = fn.__name__

    @functools.wraps(fn)
    def wrapper(*args, out=None, **kwargs):
        if no_overlap and isinstance(out, Tensor):
            assert_no_overlap(out, (*args, *kwargs.values()))
        try:
            res = fn(*args, **kwargs)
        except Exception as e:      # a wrong-typed argument: torch's TypeError (free when nothing fails)
            err = _argtypes.from_stack(e)
            if err is None:
                raise
            raise err from None
        return res if out is None else write_out(name, res, out, dtype, error)
    _argtypes.WRAPPER_CODES.add(wrapper.__code__)
    return wrapper
