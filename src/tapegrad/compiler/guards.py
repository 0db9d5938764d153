"""Guards: the conditions under which a captured program may be replayed, as one generated Python function.

``build(...)`` writes a function ``check(a, k)`` (the call's positional and keyword arguments) that returns the
region's input tensors in slot order when every guard holds, else None. It checks, in straight-line code:
- the arguments' structure (tuples, lists, dicts and their lengths/keys) and their non-tensor values (numbers,
  strings, None by value; anything else by identity);
- each tensor argument: a Tensor, with the captured shape (or rank, for a dim made dynamic), dtype and
  ``requires_grad``; the same object where the capture saw one tensor passed twice;
- each free tensor (parameters, buffers, tensors from globals or closures): shape, dtype, ``requires_grad``;
- each module reached: its ``training`` flag, the identity of every parameter, buffer and submodule, its plain
  Python attributes (numbers, strings, None), and how many hooks it has;
- the Python globals and closure cells the function's code names (by value for numbers and strings, else by
  identity), also for the Python functions found in them;
- grad mode, inference mode and the default dtype.
"""

from __future__ import annotations

import types

from .. import _dtype
from ..autograd.grad_mode import _state
from ..tensor import Tensor

__all__ = ["flatten_args", "build", "SIMPLE"]

SIMPLE = (int, float, bool, str, type(None), complex, bytes)
_HOOK_DICTS = ("_forward_hooks", "_forward_pre_hooks", "_backward_hooks", "_backward_pre_hooks")
_MISSING = object()


def flatten_args(args, kwargs):
    """The leaves of the call's arguments: ``[(path, value)]`` with paths such as ``("a", 0, 1)`` (args[0][1])
    or ``("k", "x")``, and the container checks ``[(path, type, len or keys)]``."""
    leaves, containers = [], []

    def walk(obj, path, depth):
        t = type(obj)
        if depth < 8 and (t is tuple or t is list):
            containers.append((path, t, len(obj)))
            for i, o in enumerate(obj):
                walk(o, path + (i,), depth + 1)
        elif depth < 8 and t is dict and all(type(key) in (str, int) for key in obj):
            containers.append((path, t, tuple(obj)))
            for key, o in obj.items():
                walk(o, path + (key,), depth + 1)
        else:
            leaves.append((path, obj))

    containers.append((("a",), tuple, len(args)))
    for i, o in enumerate(args):
        walk(o, ("a", i), 1)
    containers.append((("k",), dict, tuple(kwargs)))
    for key, o in kwargs.items():
        walk(o, ("k", key), 1)
    return leaves, containers


def expr(path):
    return path[0] + "".join(f"[{p!r}]" for p in path[1:])


class _Writer:
    def __init__(self):
        self.lines = []
        self.ns = {"T": Tensor, "_st": _state, "_dd": _dtype.get_default_dtype, "_MISSING": _MISSING}
        self.n = 0

    def const(self, value, prefix="C"):
        name = f"{prefix}{self.n}"
        self.n += 1
        self.ns[name] = value
        return name

    def fail_if(self, cond):
        self.lines.append(f"    if {cond}: return None")

    def fail_any(self, conds):
        """One line for several conditions (``or`` tests them in order, as the lines would: fewer lines run)."""
        if conds:
            self.fail_if(" or ".join(conds))

    def value(self, e, v):
        """Guard that expression ``e`` still gives the Python value ``v``."""
        if v is None or v is True or v is False:
            self.fail_if(f"{e} is not {v!r}")
        elif type(v) in SIMPLE:
            c = self.const(v)
            self.fail_if(f"{e}.__class__ is not {self.const(type(v), 'K')} or {e} != {c}")
        else:
            self.fail_if(f"{e} is not {self.const(v, 'O')}")

    def tensor(self, e, t, dyn=(), const=False):
        """Guard that ``e`` is a Tensor with t's shape, dtype and requires_grad. ``dyn``: {dim: group} of dims
        that may take any size >= 2 (group None: any size at all, for the relaxed check). ``const``: ``e`` names
        the captured tensor object itself (a free tensor): it is a Tensor, only its data and flag may change."""
        name = f"t{self.n}"
        self.n += 1
        self.lines.append(f"    {name} = {e}")
        if not const:
            self.fail_if(f"{name}.__class__ is not T and not isinstance({name}, T)")
        arr = t._array
        conds = []
        if dyn:
            self.lines.append(f"    {name}s = {name}._array.shape")
            self.fail_if(f"len({name}s) != {arr.ndim}")
            for d in range(arr.ndim):
                if d not in dyn:
                    conds.append(f"{name}s[{d}] != {arr.shape[d]}")
                elif dyn[d] is not None:
                    conds.append(f"{name}s[{d}] < 2")
        else:
            conds.append(f"{name}._array.shape != {arr.shape!r}")
        conds.append(f"{name}._array.dtype != {self.const(arr.dtype, 'D')}")
        conds.append(f"{name}._rg is not {bool(t._rg)!r}")
        self.fail_any(conds)
        return name


def _code_names(code, out):
    out.update(code.co_names)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            _code_names(c, out)
    return out


def _is_user_function(f):
    return isinstance(f, types.FunctionType) and not (f.__module__ or "").startswith("tapegrad")


def python_reads(fns, modules_out):
    """The globals and closure cells the functions' code names: ``[(kind, holder, key, value)]``; modules found
    in them are added to ``modules_out``. Python functions found there are followed (two levels)."""
    from ..nn.module import Module
    seen, reads = set(), []
    todo = [(f, 0) for f in fns]

    def note(v, depth):
        if isinstance(v, Module):
            modules_out.append(v)
        elif _is_user_function(v) and depth < 2:
            todo.append((v, depth + 1))
        elif type(v) in (tuple, list) and len(v) < 64:
            for o in v:
                if _is_user_function(o) and depth < 2:
                    todo.append((o, depth + 1))
                elif isinstance(o, Module):
                    modules_out.append(o)

    while todo:
        f, depth = todo.pop()
        if isinstance(f, types.MethodType):
            f = f.__func__
        if not isinstance(f, types.FunctionType) or id(f) in seen:
            continue
        seen.add(id(f))
        g = f.__globals__
        for name in sorted(_code_names(f.__code__, set())):
            if name in g:
                v = g[name]
                reads.append(("global", g, name, v))
                note(v, depth)
        for name, cell in zip(f.__code__.co_freevars, f.__closure__ or ()):
            try:
                v = cell.cell_contents
            except ValueError:
                continue
            reads.append(("cell", cell, name, v))
            note(v, depth)
    return reads


def build(prog, leaves, containers, modules, reads, dynamic_dims=None, relations=()):
    """The guard function of a program (see the module's docstring). ``dynamic_dims``: {slot: {dim: group}}
    whose sizes may change (dims of one group stay equal to each other); ``relations``: (lhs, op, rhs, result)
    over dims of arguments (``dynamic.render``), each checked to give its recorded result."""
    w = _Writer()
    dynamic_dims = dynamic_dims or {}
    for path, typ, n in containers:
        e = expr(path)
        if typ is dict:
            w.fail_if(f"{e}.__class__ is not dict or tuple({e}) != {n!r}")
        else:
            w.fail_if(f"{e}.__class__ is not {typ.__name__} or len({e}) != {n}")
    slots = {}
    arg_at = {inp[1]: (k, inp[2]) for k, inp in enumerate(prog.inputs) if inp[0] == "arg"}
    for path, v in leaves:
        e = expr(path)
        if path in arg_at:
            k, _ = arg_at[path]
            slots[k] = w.tensor(e, v, dynamic_dims.get(k, ()))
        elif isinstance(v, Tensor):
            # a tensor argument no op used (or one passed twice): only its identity pattern matters
            first = next((p for p, q in prog.duplicates if p == path), None)
            if first is None:
                w.fail_if(f"{e}.__class__ is not T and not isinstance({e}, T)")
        else:
            w.value(e, v)
    for path, first in prog.duplicates:
        w.fail_if(f"{expr(path)} is not {expr(first)}")
    for k, inp in enumerate(prog.inputs):
        if inp[0] == "free":
            slots[k] = w.tensor(w.const(inp[1], "F"), inp[1], dynamic_dims.get(k, ()), const=True)
    groups = {}
    for k, dims in sorted(dynamic_dims.items()):
        for d, grp in sorted(dims.items()):
            if grp is None or k not in slots:
                continue
            first = groups.setdefault(grp, (slots[k], d))
            if first != (slots[k], d):
                w.fail_if(f"{slots[k]}s[{d}] != {first[0]}s[{first[1]}]")
    if relations:
        from .dynamic import render
        name_of = {inp[2]: slots[k] for k, inp in enumerate(prog.inputs) if k in slots}
        for lhs, op, rhs, res in relations:
            def atom(v, d):
                return f"{name_of[v]}._array.shape[{d}]"
            w.fail_if(f"({render(lhs, atom)} {op} {render(rhs, atom)}) is not {bool(res)!r}")
    seen = set()
    for m in modules:
        if id(m) in seen:
            continue
        seen.add(id(m))
        mn = w.const(m, "M")
        d = m.__dict__
        conds = [f"{mn}.training is not {bool(m.training)!r}"]
        for attr in ("_parameters", "_buffers", "_modules"):
            sub = d.get(attr)
            if sub is None:
                continue
            conds.append(f"len({mn}.{attr}) != {len(sub)}")
            for key, v in sub.items():
                conds.append(f"{mn}.{attr}.get({key!r}, _MISSING) is not {w.const(v, 'P')}")
        # hooks: how many each dict holds (an empty one, the usual case, tested by its truth value)
        conds += [(f"{mn}.{attr}" if not d[attr] else f"len({mn}.{attr}) != {len(d[attr])}")
                  for attr in _HOOK_DICTS if attr in d]
        w.fail_any(conds)
        for key, v in d.items():
            if not key.startswith("_") and key != "training" and type(v) in SIMPLE:
                w.value(f"{mn}.__dict__.get({key!r}, _MISSING)", v)
    for kind, holder, key, v in reads:
        h = w.const(holder, "G" if kind == "global" else "Z")
        if kind == "global":
            w.value(f"{h}.get({key!r}, _MISSING)", v)
        else:
            w.value(f"{h}.cell_contents", v)
    w.fail_if(f"_st.enabled is not {bool(_state.enabled)!r} or _st.inference is not {bool(_state.inference)!r}")
    w.fail_if(f"_dd() is not {w.const(_dtype.get_default_dtype(), 'DD')}")
    ret = ", ".join(slots[k] for k in range(len(prog.inputs)))
    src = "def check(a, k):\n" + "\n".join(w.lines) + f"\n    return ({ret}{',' if len(prog.inputs) == 1 else ''})\n"
    code = compile(src, "<tapegrad.compile guards>", "exec")
    ns = dict(w.ns)
    exec(code, ns)
    fn = ns["check"]
    fn.source = src
    return fn
