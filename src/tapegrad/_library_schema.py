"""Operator schemas for ``torch.library`` (``library.py``): ``infer_schema`` (a schema from a function's type
annotations, in torch's text: ``(Tensor x, SymInt k=2) -> Tensor``), the parser of schema text that
``Library.define`` takes, and the binding of a call's arguments to a schema with the dispatcher's errors."""

from __future__ import annotations

import collections.abc
import enum
import inspect
import typing

from . import _dtype

__all__ = ["infer_schema", "FunctionSchema", "Argument", "parse_schema", "Tag"]

# torch.Tag: the tags an operator's definition may carry (torch's names and numbers)
Tag = enum.Enum("Tag", [(name, i) for i, name in enumerate(
    "core cudagraph_unsafe data_dependent_output dynamic_output_shape flexible_layout generated inplace inplace_view "
    "maybe_aliasing_or_mutating needs_contiguous_strides needs_exact_strides needs_fixed_stride_order "
    "nondeterministic_bitwise nondeterministic_seeded out out_variant pointwise pt2_compliant_tag reduction "
    "view_copy".split())], module="tapegrad")


class Argument:
    """One parameter of a schema: its name, schema type (``Tensor``, ``SymInt[]``, ``float?``...), whether it has a
    default (and which), whether it is keyword-only, and whether the op writes it (``Tensor(a0!)``)."""

    __slots__ = ("name", "type", "default", "has_default", "kwarg_only", "mutable")

    def __init__(self, name, type, default=None, has_default=False, kwarg_only=False, mutable=False):
        self.name, self.type, self.default, self.has_default = name, type, default, has_default
        self.kwarg_only, self.mutable = kwarg_only, mutable

    def __repr__(self):
        return f"Argument(name={self.name!r}, type={self.type!r})"


class FunctionSchema:
    """A parsed schema; ``str`` gives torch's text (``mylib::f(Tensor x, *, SymInt k=2) -> Tensor``)."""

    def __init__(self, name, overload_name, arguments, returns, text):
        self.name, self.overload_name = name, overload_name
        self.arguments, self.returns, self._text = arguments, returns, text

    def __str__(self):
        full = self.name + (f".{self.overload_name}" if self.overload_name else "")
        return full + self._text

    __repr__ = __str__


# ---- from annotations -------------------------------------------------------------------------------------

def _tensor_type():
    from .tensor import Tensor
    return Tensor


_SEQUENCES = (list, collections.abc.Sequence)    # (get_origin of typing.List / typing.Sequence too)


def _is_optional(ann):
    args = typing.get_args(ann)
    return typing.get_origin(ann) in (typing.Union, _union_type()) and type(None) in args


def _union_type():
    import types
    return types.UnionType


def _is_scalar_union(ann):
    return (typing.get_origin(ann) in (typing.Union, _union_type())
            and set(typing.get_args(ann)) == {int, float, bool})


def _base_type(ann):
    """The schema type of a non-optional, non-list annotation, or None."""
    if ann is _tensor_type():
        return "Tensor"
    if _is_scalar_union(ann):
        return "Scalar"
    return {int: "SymInt", float: "float", bool: "bool", str: "str", _dtype.dtype: "ScalarType"}.get(ann) or (
        "Device" if _is_device(ann) else None)


def _is_device(ann):
    from .tensor import device
    return ann is device


def _param_type(ann):
    """The schema type of a parameter annotation (None where torch's infer_schema refuses it)."""
    optional = _is_optional(ann)
    if optional:
        rest = [a for a in typing.get_args(ann) if a is not type(None)]
        ann = rest[0] if len(rest) == 1 else typing.Union[tuple(rest)]  # noqa: UP007
        if _is_scalar_union(ann):
            return "Scalar?"
    base = _base_type(ann)
    if base is not None:
        return base + "?" if optional else base
    origin, args = typing.get_origin(ann), typing.get_args(ann)
    if origin in _SEQUENCES and len(args) == 1:
        inner = args[0]
        if _is_optional(inner) and [a for a in typing.get_args(inner) if a is not type(None)] == [_tensor_type()]:
            return None if optional else "Tensor?[]"
        elem = _base_type(inner)
        if elem in ("Tensor", "SymInt", "float", "bool", "Scalar"):
            if elem == "Tensor":
                return None if optional else "Tensor[]"
            return elem + "[]" + ("?" if optional else "")
    return None


def _return_type(ann):
    if ann is _tensor_type():
        return "Tensor"
    if typing.get_origin(ann) is list and typing.get_args(ann) == (_tensor_type(),):
        return "Tensor[]"
    if _is_scalar_union(ann):
        return "Scalar"
    return {int: "SymInt", float: "float", bool: "bool"}.get(ann)


def _default_text(value):
    """A default as infer_schema writes it, or None for a value it cannot (a list, a tuple...)."""
    from .tensor import device
    if value is None or isinstance(value, (bool, int, float)):
        return str(value)
    if isinstance(value, (str, device)):
        return f'"{value}"'
    if isinstance(value, _dtype.dtype):
        return str(value).split(".")[-1]
    return None


def infer_schema(prototype_function, /, *, mutates_args, op_name=None):
    """``torch.library.infer_schema``: the schema of a function from its type annotations.

    >>> infer_schema(lambda: None, mutates_args=())   # doctest: +SKIP
    """
    sig = inspect.signature(prototype_function, eval_str=True)

    def error(what):
        raise ValueError(f"infer_schema(func): {what} Got func with signature {sig})")

    if mutates_args != "unknown":
        if isinstance(mutates_args, str) or not isinstance(mutates_args, collections.abc.Iterable):
            if isinstance(mutates_args, str):
                raise ValueError("mutates_args must either be a sequence of the names of the arguments that are "
                                 "mutated or the string 'unknown'. ")
            iter(mutates_args)     # (torch's TypeError: 'int' object is not iterable)
    params, seen_kwonly = [], False
    for i, (name, p) in enumerate(sig.parameters.items()):
        if p.kind not in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY):
            error("We do not support positional-only args, varargs, or varkwargs.")
        if p.annotation is p.empty:
            error(f"Parameter {name} must have a type annotation.")
        kind = _param_type(p.annotation)
        if kind is None:
            error(f"Parameter {name} has unsupported type {_ann_text(p.annotation)}. The valid types are: Tensor, "
                  "Tensor?, Tensor[] and Tensor?[]; int, float, bool and their lists and optionals; str, str?; "
                  "Union[int, float, bool] (Scalar); dtype and device and their optionals.")
        if mutates_args == "unknown" and kind.startswith("Tensor") or \
                mutates_args != "unknown" and name in mutates_args:
            if not kind.startswith("Tensor"):
                error(f"Parameter {name} is in mutable_args but only Tensors or collections of Tensors can be "
                      "mutated")
            kind = f"Tensor(a{i}!)" + kind[len("Tensor"):]
        text = f"{kind} {name}"
        if p.default is not p.empty:
            shown = _default_text(p.default)
            if shown is None:
                error(f"Parameter {name} has an unsupported default value type {type(p.default)}. Please file an "
                      "issue on GitHub so we can prioritize this.")
            text += "=" + shown
        if p.kind is p.KEYWORD_ONLY and not seen_kwonly:
            params.append("*")
            seen_kwonly = True
        params.append(text)
    if mutates_args != "unknown":
        unknown = set(mutates_args) - set(sig.parameters)
        if unknown:
            error(f"{unknown} in mutates_args were not found in the custom op's signature. mutates_args should "
                  "contain the names of all args that the custom op mutates, or just the string 'unknown' if you "
                  "don't know.")
    ret = sig.return_annotation
    if ret is sig.empty:
        error("No return type annotation was provided. Please add one.")
    if ret is None or ret is type(None):
        returns = "()"
    elif typing.get_origin(ret) is tuple:
        kinds = [_return_type(a) for a in typing.get_args(ret)]
        if None in kinds:
            error(f"Return has unsupported type {_ann_text(ret)}.")
        returns = "(" + ", ".join(kinds) + ")"
    else:
        returns = _return_type(ret)
        if returns is None:
            error(f"Return has unsupported type {_ann_text(ret)}. The valid types are: Tensor, Tensor[], int, "
                  "float, bool, Union[int, float, bool].")
    return (op_name or "") + "(" + ", ".join(params) + ") -> " + returns


def _ann_text(ann):
    return repr(ann) if not isinstance(ann, type) else f"<class '{ann.__module__}.{ann.__qualname__}'>".replace(
        "builtins.", "")


# ---- from text --------------------------------------------------------------------------------------------

def _split_top(text):
    """Split at the commas outside brackets."""
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur.strip())
    return parts


def _parse_default(text, kind):
    text = text.strip()
    if text == "None":
        return None
    if text in ("True", "False"):
        return text == "True"
    if text.startswith('"') or text.startswith("'"):
        return text[1:-1]
    if text.startswith("["):
        return [_parse_default(t, kind.rstrip("[]?")) for t in _split_top(text[1:-1])]
    if kind.startswith("ScalarType"):
        return getattr(_dtype, text)
    try:
        return int(text)
    except ValueError:
        return float(text)


def parse_schema(text, qualname_default=""):
    """Parse ``name.overload(Tensor x, *, float k=1.0) -> Tensor`` (the name may be missing: ``qualname_default``).
    Returns (name, overload, arguments, returns, text of the part after the name)."""
    text = text.strip()
    open_at = text.index("(")
    head, rest = text[:open_at].strip(), text[open_at:]
    depth, close_at = 0, None
    for i, ch in enumerate(rest):
        depth += ch == "("
        depth -= ch == ")"
        if depth == 0:
            close_at = i
            break
    arg_text, ret_text = rest[1:close_at], rest[close_at + 1:].strip()
    if not ret_text.startswith("->"):
        raise RuntimeError(f"Expected '->' in schema, got: {text}")
    name, _, overload = (head or qualname_default).partition(".")
    arguments, kwarg_only, texts = [], False, []
    for part in _split_top(arg_text):
        if part == "*":
            kwarg_only = True
            texts.append("*")
            continue
        decl, eq, default = part.partition("=")
        kind, _, pname = decl.strip().rpartition(" ")
        mutable = "!" in kind
        if "(" in kind:        # Tensor(a0!)? -> Tensor?
            kind = kind[:kind.index("(")] + kind[kind.index(")") + 1:]
        arguments.append(Argument(pname, kind, _parse_default(default, kind) if eq else None, bool(eq),
                                  kwarg_only, mutable))
        shown = decl.strip()
        if eq:
            value = arguments[-1].default
            shown += "=" + (_float_text(value) if isinstance(value, float) else default.strip())
        texts.append(shown)
    ret_text = ret_text[2:].strip()
    if ret_text.startswith("("):
        returns = [r.rpartition(" ")[0] or r for r in _split_top(ret_text[1:-1])]
    else:
        returns = [ret_text]
    return name, overload, arguments, returns, "(" + ", ".join(texts) + ") -> " + ret_text


def _float_text(value):
    """A float default as the C++ schema printer writes it (``2.``, ``1.5``)."""
    text = repr(value)
    return text[:-1] if text.endswith(".0") else text


# ---- binding a call ---------------------------------------------------------------------------------------

_PY_TYPES = {"SymInt": "int", "int": "int", "float": "float", "bool": "bool", "str": "str"}


def _fits(kind, value):
    kind = kind.rstrip("?") if value is None else kind
    if value is None:
        return False
    if kind.startswith("Tensor"):
        if kind.endswith("[]"):
            return isinstance(value, (list, tuple))
        return isinstance(value, _tensor_type())
    if kind in ("SymInt", "int"):
        return isinstance(value, int) and not isinstance(value, bool) or _is_int_tensor(value)
    if kind == "float":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind == "bool":
        return isinstance(value, bool)
    if kind == "str":
        return isinstance(value, str)
    return True


def _is_int_tensor(value):
    return isinstance(value, _tensor_type()) and value.dim() == 0 and not value.is_floating_point()


def bind(schema, args, kwargs):
    """The call's positional arguments (every parameter before ``*``, defaults filled in) and its keyword-only
    ones, with the dispatcher's errors for a call that does not fit the schema."""
    positional = [a for a in schema.arguments if not a.kwarg_only]
    if len(args) > len(positional):
        if len(positional) < len(schema.arguments):
            raise RuntimeError(f"{schema.name}() takes {len(positional)} positional argument(s) but {len(args)} "
                               f"was/were given.  Declaration: {schema}")
        raise RuntimeError(f"{schema.name}() expected at most {len(positional)} argument(s) but received "
                           f"{len(args)} argument(s). Declaration: {schema}")
    names = {a.name for a in schema.arguments}
    for k in kwargs:
        if k not in names:
            raise RuntimeError(f"Unknown keyword argument '{k}' for operator '{schema.name}'. Schema: {schema}")
    values = {}
    for i, a in enumerate(schema.arguments):
        if i < len(args) and not a.kwarg_only:
            v = args[i]
        elif a.name in kwargs:
            v = kwargs[a.name]
        elif a.has_default:
            v = a.default
        else:
            raise RuntimeError(f"{schema.name}() is missing value for argument '{a.name}'. Declaration: {schema}")
        if not (v is None and (a.type.endswith("?") or a.has_default and a.default is None)) and \
                not _fits(a.type, v):
            want = "Tensor" if a.type.startswith("Tensor") else _PY_TYPES.get(a.type.rstrip("?"), a.type)
            raise RuntimeError(
                f"{schema.name}() Expected a value of type '{want}' for argument '{a.name}' but instead found type "
                f"'{type(v).__name__}'.\nPosition: {i}\nValue: {v}\nDeclaration: {schema}\nCast error details: "
                f"Unable to cast {v} to {want}")
        values[a.name] = v
    pos = tuple(values[a.name] for a in positional)
    kw = {a.name: values[a.name] for a in schema.arguments if a.kwarg_only}
    return pos, kw
