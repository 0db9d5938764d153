"""torch's TypeError for an argument of the wrong type, worked out only after a call has failed.

torch's argument parser checks every argument's type before an op runs (``torch.exp(None)``: ``exp(): argument
'input' (position 1) must be Tensor, not NoneType``). tapegrad checks nothing on the way in, so an eager op pays
nothing; a call with a wrong type fails somewhere inside (``'NoneType' object has no attribute 'dtype'``), and
the ``except`` clauses on paths that exist anyway ask this module for torch's words instead:

- ``explain(name, fn, args, kwargs, method, exc)``: the wrapper ``_aliases.with_aliases`` (on every function of
  torch's parser with a ``dim``/``keepdim``/``input``/``other`` parameter) knows the call exactly;
- ``from_stack(exc)``: the ``out=`` and autocast decorators' wrappers, ``Function.apply`` (a forward that failed)
  and the helpers that inspect an argument anyway (``normalize_dim``, view sizes, ``to_dtype``, ``_size``) find
  the outermost public tapegrad function among the frames of the stack and of ``exc``'s traceback (``entries``:
  the functions of ``tapegrad``, ``nn.functional``, ``linalg``, ``special``, ``fft`` and the Tensor methods, by
  code object; ``_aliases.method`` gives each Tensor method a code object of its own) and read its arguments from
  its frame (which were keywords: from the caller's call instruction, or a wrapper's ``kwargs``).

Both judge the arguments by their parameters' names (torch's names, which tapegrad's functions take): a tensor
parameter (``input``, ``other``, ``weight``...) given None (unless optional), text or a container is torch's
"must be Tensor"; a number, an ndarray or another object only where the op failed on it ("'bool' object has no
attribute 'dtype'": many ops take a number there); ``dim``-like ones want an int, ``keepdim``-like ones a bool,
``dtype`` a dtype, ``size``/``shape``/``kernel_size``... a tuple of ints. The first argument that does not fit
gives torch's TypeError; where every argument fits, they return None and the original error stands (an op's own
check in torch's words keeps them, its position recounted for a method). Operators (``x + None``) keep Python's.
"""

from __future__ import annotations

import dis
import re
import sys
import types

import numpy as np

TENSOR = frozenset({
    "input", "other", "self", "mat", "mat1", "mat2", "vec", "vec1", "vec2", "batch1", "batch2", "tensor1",
    "tensor2", "weight", "bias", "target", "index", "src", "mask", "condition", "exponent", "input1", "input2",
    "anchor", "positive", "negative", "running_mean", "running_var", "boundaries", "sorted_sequence", "values",
    "log_probs", "targets", "grid", "theta", "var", "A", "B", "LU", "pivots", "tau", "elements", "test_elements",
    "query", "key", "value", "attn_mask", "x1", "x2", "y", "x", "tensor", "source", "real", "imag", "abs", "angle",
    "LU_data", "LU_pivots", "lengths", "offsets", "per_sample_weights", "the_template"})
TENSORS = frozenset({"tensors"})
INT = frozenset({"dim", "dim0", "dim1", "dim2", "k", "chunks", "diagonal", "offset", "start_dim", "end_dim",
                 "num_groups", "groups", "n", "upscale_factor", "downscale_factor", "divisor_override",
                 "num_classes", "padding_idx", "row", "col", "dimension", "num_chunks"})
BOOL = frozenset({"keepdim", "largest", "sorted", "descending", "stable", "unbiased", "return_inverse",
                  "return_counts", "right"})
# torch's Tensor? even where tapegrad's signature has no default: None is blamed only where the op failed on it
OPTIONAL = frozenset({"weight", "bias"})
_NOT_TENSORS = (str, bytes, list, tuple, dict, set)
SIZE = frozenset({"size", "shape", "dims", "sizes", "shifts", "kernel_size", "stride", "padding", "dilation",
                  "output_size", "output_padding"})

_Tensor = None


def _tensor_cls():
    global _Tensor
    if _Tensor is None:
        from .tensor import Tensor
        _Tensor = Tensor
    return _Tensor


def _is_int(v):
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def _problem(p, v, default, where, fname=""):
    """What torch says of parameter ``p`` given ``v`` (None: it fits): ``where`` is `` (position n)`` or ''."""
    T = _tensor_cls()
    what = type(v).__name__
    if p in TENSOR:
        # clearly not a tensor: None (unless optional), text, containers. A number, an ndarray or another object
        # is blamed only where the op failed on it (``_check``'s second pass): many ops take a number there.
        if v is None and default is not None and p not in OPTIONAL or isinstance(v, _NOT_TENSORS) and not (
                p == "source" and all(map(_is_int, v if isinstance(v, (list, tuple)) else (v,)))):
            return f"argument '{p}'{where} must be Tensor, not {what}"     # (movedim's source: dims)
        return None
    if p in TENSORS:
        if not isinstance(v, (list, tuple)):
            return f"argument '{p}'{where} must be tuple of Tensors, not {what}"
        return None
    if p in INT:
        if _is_int(v) or (v is None and default is None) or isinstance(v, T):   # (min(x, other) takes its
            return None                                                           # Tensor in dim's place)
        if p == "dim" and isinstance(v, (list, tuple)) and all(_is_int(d) for d in v):
            return None
        # an IntArrayRef dim (torch's fftn/fft2 family: ``fft_fftn()``): "tuple of ints"
        many = p == "dim" and (isinstance(default, tuple) or fname.startswith("fft_") and fname.endswith(("n", "2")))
        return f"argument '{p}'{where} must be {'tuple of ints' if many else 'int'}, not {what}"
    if p in BOOL:
        if isinstance(v, (bool, np.bool_)) or (v is None and default is None):
            return None
        return f"argument '{p}'{where} must be bool, not {what}"
    if p == "dtype":
        from ._dtype import dtype
        if v is None or isinstance(v, dtype) or v in (float, int, bool, complex):
            return None
        return f"argument '{p}'{where} must be torch.dtype, not {what}"
    if p in SIZE:
        if _is_int(v) or (v is None and default is None) or (p == "padding" and isinstance(v, str)):
            return None     # (conv's padding="same")
        if not isinstance(v, (list, tuple)):
            return f"argument '{p}'{where} must be tuple of ints, not {what}"
        for j, e in enumerate(v):
            if not _is_int(e) and not (isinstance(e, T) and e.ndim == 0) and not (p == "dims" and isinstance(
                    e, (list, tuple))) and not (e is None and p == "output_size"):
                return f"argument '{p}'{where} must be tuple of ints, but found element of type " \
                       f"{type(e).__name__} at pos {j}"
    return None


def _innermost(fn):
    while getattr(fn, "__wrapped__", None) is not None:
        fn = fn.__wrapped__
    return fn


_PARSER_ERROR = re.compile(r"^(\w+)\(\)(: argument | received an invalid combination of arguments)")
_PARSER_WORDS = re.compile(r"^(\w+)\(\): argument '(\w+)'( \(position \d+\))? (must be .*)$", re.S)


def _reposition(exc, name, names, positional, method):
    """An op's own check that raised the parser's words (``argument 'other' (position 2) must be Tensor``),
    with the position as this call passed it (a method counts without self; a keyword has none), or None."""
    m = _PARSER_WORDS.match(str(exc)) if isinstance(exc, TypeError) else None
    if m is None or m.group(2) not in names or m.group(1) != name:
        return None
    i = names.index(m.group(2))
    where = f" (position {i + 1 - (1 if method else 0)})" if i < len(positional) else ""
    text = f"{m.group(1)}(): argument '{m.group(2)}'{where} {m.group(4)}"
    return None if text == str(exc) else TypeError(text)


def _check(name, fn, positional, keywords, method, exc=None):
    """torch's TypeError for the first argument that does not fit, or None. ``positional``: the values passed by
    position (a method's self first), ``keywords``: those passed by name; ``exc``: the error the call raised."""
    fn = _innermost(fn)
    code = getattr(fn, "__code__", None)
    if code is None:
        return None
    npos, nkw = code.co_argcount, code.co_kwonlyargcount
    names = code.co_varnames[:npos + nkw]
    m = _PARSER_ERROR.match(str(exc)) if isinstance(exc, TypeError) else None
    if m and m.group(1) == name:          # the function's own check said it in torch's words already
        return _reposition(exc, name, names, positional, method)
    defaults = dict(zip(names[npos - len(fn.__defaults__ or ()):npos], fn.__defaults__ or ()))
    defaults.update(fn.__kwdefaults__ or {})
    first = 1 if method else 0
    missing = object()
    star = code.co_varnames[npos + nkw] if code.co_flags & 0x04 else None    # the *args parameter
    for i, p in enumerate(names[:npos]):
        if i < first:
            continue
        if i < len(positional):
            msg = _problem(p, positional[i], defaults.get(p, missing), f" (position {i + 1 - first})", name)
        elif p in keywords:
            msg = _problem(p, keywords[p], defaults.get(p, missing), "", name)
        else:
            continue
        if msg:
            return TypeError(f"{name}(): {msg}")
    if star is not None and len(positional) > npos:
        rest = tuple(positional[npos:])
        p = star
        v = rest[0] if len(rest) == 1 and not _is_int(rest[0]) else rest     # f(*size) given one sequence
        msg = _problem(p, v, missing, f" (position {npos + 1 - first})")
        if msg:
            return TypeError(f"{name}(): {msg}")
    for p in names[npos:]:
        if p in keywords:
            msg = _problem(p, keywords[p], defaults.get(p, missing), "", name)
            if msg:
                return TypeError(f"{name}(): {msg}")
    # a number (or another object) where many ops take a number, but this op failed on it: "'bool' object has no
    # attribute 'dtype'" (exp(2.0), relu(True), allclose(x, True) have no Scalar overload)
    if isinstance(exc, AttributeError):
        given = [(i, p, positional[i]) for i, p in enumerate(names[:npos]) if first <= i < len(positional)]
        given += [(None, p, keywords[p]) for p in names if p in keywords]
        for i, p, v in given:
            if p in TENSOR and not isinstance(v, _tensor_cls()) and (v is not None or p in OPTIONAL) \
                    and str(exc).startswith(f"'{type(v).__name__}' object has no attribute"):
                where = "" if i is None else f" (position {i + 1 - first})"
                return TypeError(f"{name}(): argument '{p}'{where} must be Tensor, not {type(v).__name__}")
    return _reposition(exc, name, names, positional, method)


def explain(name, fn, args, kwargs, method=False, exc=None):
    """torch's TypeError for the call ``fn(*args, **kwargs)`` (public name ``name``; ``method``: args[0] is the
    Tensor it was called on) if one of its arguments has a wrong type, else None. Only for a call that failed
    (with ``exc``)."""
    try:
        return _check(name, fn, args, kwargs, method, exc)
    except Exception:       # noqa: BLE001 -- never hide the original error behind one of this check's own
        return None


# --- the public functions, by code object (built on the first failure) -----------------------------------------
_entries: dict | None = None
_sizes = None
WRAPPER_CODES: set = set()     # the code of the decorators' generic wrappers (out=, autocast, NumPy names)
METHOD_COPIES: dict = {}       # id(code) -> name: the Tensor methods' own copies (``_aliases.method``)


def entries():
    """``{id(code): (public name, function, is a Tensor method)}`` of tapegrad's public functions."""
    global _entries, _sizes
    import tapegrad
    from ._aliases import BUILTIN          # (the namespaces' parser functions: _aliases.builtin)
    spaces = [(tapegrad, ""), (tapegrad.nn.functional, ""), (tapegrad.linalg, "linalg_"),
              (tapegrad.special, "special_"), (tapegrad.fft, "fft_")]
    sizes = tuple(len(vars(ns)) for ns, _ in spaces) + (len(vars(_tensor_cls())),)
    if _entries is not None and sizes == _sizes:     # (rebuilt when a lazily loaded function has arrived)
        return _entries
    found = {}

    def add(name, obj, method):
        fn = _innermost(obj)
        code = getattr(fn, "__code__", None)
        if code is None or not (getattr(fn, "__module__", None) or "").startswith("tapegrad"):
            return
        if method and id(getattr(obj, "__code__", None)) in METHOD_COPIES:
            found[id(obj.__code__)] = (name, fn, True)       # (for a decorated method: its wrapper's copy)
            if fn is not obj:
                return
        old = found.get(id(code))
        if old is None or (old[0] != code.co_name and name == code.co_name):   # (an alias: its original's name)
            found[id(code)] = (name, fn, method)

    for ns, prefix in spaces:
        for name, obj in list(vars(ns).items()):
            if not name.startswith("_") and isinstance(obj, (types.FunctionType, BUILTIN)):
                add(prefix + name, obj, False)
    for name, obj in vars(_tensor_cls()).items():
        if isinstance(obj, types.FunctionType) and (not name.startswith("_") or name.startswith("__")):
            add(name, obj, True)
            if name.startswith("__"):     # an operator (x + None): not the parser's; its error stays Python's
                found[id(_innermost(obj).__code__)] = found[id(obj.__code__)] = (None, obj, True)
    _entries, _sizes = found, sizes
    return found


def _keywords(frame):
    """The keyword names of the call ``frame`` is making: a generic wrapper's ``kwargs``, else read from its call
    instruction (CPython 3.11-3.13); () where unknown."""
    if frame.f_code in WRAPPER_CODES or id(frame.f_code) in METHOD_COPIES:
        kw = frame.f_locals.get("kwargs")
        return tuple(kw) if isinstance(kw, dict) else ()
    code, last = frame.f_code, frame.f_lasti
    seen = [ins for ins in dis.get_instructions(code) if ins.offset <= last and ins.opname not in ("CACHE", "PRECALL")]
    if len(seen) < 2:
        return ()
    call, before = seen[-1], seen[-2]
    if call.opname == "CALL_KW" and isinstance(before.argval, tuple):     # (3.13)
        return before.argval
    if call.opname == "CALL" and before.opname == "KW_NAMES":             # (3.11, 3.12)
        return code.co_consts[before.arg]
    return ()


def from_stack(exc=None):
    """torch's TypeError for the outermost public tapegrad call on the stack (and in ``exc``'s traceback: the
    frames a failure has left), if one of its arguments has a wrong type, else None (also when a
    ``with_aliases`` wrapper called it: that wrapper explains the call itself)."""
    try:
        table = entries()
        frames, f = [], sys._getframe(1)
        while f is not None:
            frames.append(f)
            f = f.f_back
        frames.reverse()
        tb = exc.__traceback__.tb_next if exc is not None and exc.__traceback__ is not None else None
        while tb is not None:
            frames.append(tb.tb_frame)
            tb = tb.tb_next
        i = next((k for k, fr in enumerate(frames) if id(fr.f_code) in table), None)
        if i is None:
            return None
        frame = frames[i]
        name, fn, method = table[id(frame.f_code)]
        if name is None:
            return None
        j = i - 1
        while j >= 0 and frames[j].f_code in WRAPPER_CODES:      # the decorators around it
            if frames[j].f_code is _WRAPPER_CODE:
                return None
            j -= 1
        caller = frames[i - 1] if i > 0 else None
        if frame.f_code is not fn.__code__:      # a decorated method's wrapper: the arguments are in fn's frame
            inner = [fr for fr in frames[i + 1:] if fr.f_code is fn.__code__]
            if not inner:
                return None
            caller, frame = frame, inner[0]
        code = frame.f_code
        npos, nkw = code.co_argcount, code.co_kwonlyargcount
        loc = frame.f_locals
        names = code.co_varnames[:npos + nkw]
        kw = set(_keywords(caller)) if caller is not None else set()
        positional = []
        for p in names[:npos]:
            if p in kw:
                break
            positional.append(loc.get(p))
        if code.co_flags & 0x04 and len(positional) == npos:
            positional += list(loc.get(code.co_varnames[npos + nkw], ()))
        keywords = {p: loc.get(p) for p in names[len(positional):] if p in kw or names.index(p) >= npos}
        return _check(name, fn, positional, keywords, method, exc)
    except Exception:       # noqa: BLE001 -- never hide the original error behind one of this check's own
        return None


_WRAPPER_CODE = None     # the code of _aliases.with_aliases's wrapper (set by _aliases)
