"""Codegen: a captured program as straight-line Python source, compiled once with ``compile()``.

Two functions per program (three with ``backend="print"``'s readable listing, ``listing``):

- ``forward(_in)``: the region's input arrays in, ``(outputs, ctxs)`` out. Each op is one line: its ``forward``
  called on arrays with a small context object (an instance of a per-op subclass of the op's node class whose
  class attributes hold what the eager node knew: ``needs_input_grad``, input and output shapes), or, for the hot
  elementwise ops on same-shaped float arrays, the NumPy expression itself (``kernels``). No Tensor and no graph
  node is made per op. Only the contexts of ops a gradient can reach are returned (what backward needs: the
  others, and what their forward saved, are dropped at once).
- ``backward(_cs, _g)``: the region outputs' gradient arrays in, the inputs' gradients out. The recorded ops in
  reverse order, each running its own backward formula on arrays (the engine's array path, ``_run_arrays``) or,
  for an op without ``array_backward``, on Tensors wrapping its arrays; each gradient conformed to its input's
  shape and dtype as the engine does, gradients meeting at a value summed in the engine's order. So the values
  are bitwise the eager ones.

Constants (non-tensor arguments, keyword arguments, node classes, shapes) are hoisted into the functions'
globals: the body only names them.
"""

from __future__ import annotations

import numpy as np

from ..autograd import engine as _engine
from ..autograd import function as _f
from ..tensor import Tensor
from . import kernels as _k
from .dynamic import Sym, has_sym

__all__ = ["generate", "listing", "ShapeChanged"]


class ShapeChanged(Exception):
    """Raised by a replayed forward when an op whose output shape depends on data (a boolean mask's count)
    gives another shape than at capture: the program's later shapes would be stale, so the call runs eagerly
    (``runtime.Entry.run``)."""


def _saved_of(ctx, outs):
    """After a forward on a replay context: what it asked to keep (``_to_save``), as arrays in ``_saved``."""
    ts = ctx._to_save
    ctx._inputs = None
    if ts is None:
        ctx._saved = None
        return
    res = []
    for s in ts:
        if s is _f._RESULT:
            s = outs[0]
        elif s.__class__ is Tensor:
            s = s._array
        res.append(s)
    ctx._saved = tuple(res)
    ctx._saved_versions = (None,) * len(res)


def _run_wrapped(ctx, grads):
    """An op whose backward takes Tensors: its saved arrays wrapped (constants: no graph), then the engine's
    wrapped call."""
    saved = ctx._saved
    if saved is not None and saved is not _f._FREED:
        ctx._saved = tuple(Tensor._make(s) if s.__class__ is np.ndarray else s for s in saved)
    return _engine._run_wrapped(ctx, grads)


def _as_array(o):
    if o.__class__ is Tensor:
        return o._array
    return np.asarray(o)


class _Ctx:
    """Marker base so that listings can tell replay contexts."""


def _ctx_class(rec, generic=False):
    node_cls = rec.cls._backward_cls
    n_in = len(rec.input_meta)
    # (a generic program's contexts get their input and output shapes per call, from the arrays)
    metas = {} if generic else {"_input_meta": rec.input_meta, "_out_meta": rec.out_meta}
    attrs = {"needs_input_grad": rec.nig, **metas,
             "_next_fns": (None,) * n_in, "_next_nrs": (0,) * n_in, "sequence_nr": -1, "_to_save": None,
             "_saved": None, "_saved_versions": (), "_arrays": False, "__module__": node_cls.__module__}
    return type(node_cls.__name__, (node_cls,), attrs)


def live_ops(prog, out_values):
    """The ops a gradient reaches (recorded, with an output that is a region output needing a gradient or an
    argument of a later live op at a position that needs one), and the values that receive a gradient."""
    needs = set(v for v in out_values if prog.rg[v])
    live = [False] * len(prog.ops)
    for i in range(len(prog.ops) - 1, -1, -1):
        rec = prog.ops[i]
        if not rec.recorded or not any(o is not None and o in needs for o in rec.outs):
            continue
        live[i] = True
        for (kind, v), need in zip(rec.args, rec.nig):
            if kind == "v" and need:
                needs.add(v)
    return live, needs


def generate(prog, out_values, with_grad, extra=()):
    """Compile the program's forward (and, ``with_grad``, backward) functions; returns (forward, backward,
    sources). ``extra``: more values the forward returns (inputs' new values, see ``runtime``)."""
    ns = {"_nd": np.ndarray, "_S": _saved_of, "_A": _as_array, "_RA": _engine._run_arrays, "_RW": _run_wrapped,
          "_CF": _engine._conformed, "_X": _f._Scratch(), "np": np,
          "_DS": ShapeChanged}
    ns.update(_k.NAMESPACE)
    counter = [0]

    def const(v, prefix="K"):
        name = f"{prefix}{counter[0]}"
        counter[0] += 1
        ns[name] = v
        return name

    live, needs = live_ops(prog, out_values) if with_grad else ([False] * len(prog.ops), set())
    generic = prog.dyn is not None
    n_in = len(prog.inputs)
    slot_vals = [inp[2] for inp in prog.inputs]
    fwd = ["def forward(_in):"]
    if n_in:
        fwd.append(f"    {', '.join(f'v{v}' for v in slot_vals)}{',' if n_in == 1 else ''} = _in")
    for v, (shape, pattern) in prog.fills.items():     # (made per call, at this call's sizes: dynamic.py)
        if pattern[0] == "full":
            fwd.append(f"    v{v} = np.full({_src(shape, const)}, {const(pattern[2], 'FV')}, {const(pattern[1], 'D')})")
        else:
            _, dtype, start, step = pattern
            fwd.append(f"    v{v} = np.arange({start}, {start} + {step} * {_src(shape[0], const)}, {step}, "
                       f"dtype={const(dtype, 'D')})")
    keep = []            # the names backward reads: replay contexts, and values the inline kernels read
    kept = set()
    kerns = {}           # op index -> (kernel, its one constant)
    scalars = set()      # values an inline kernel made on 0-d operands: NumPy scalars until they leave the code

    def arr(v):
        return f"_A(v{v})" if v in scalars else f"v{v}"

    # how often each value is read (by ops, as a result): an inline kernel may write into an operand read once,
    # that an inline kernel made (a fresh array: no view of anything) and that its backward does not keep
    uses = {}
    for rec in prog.ops:
        for kind, a in rec.args:
            if kind == "v":
                uses[a] = uses.get(a, 0) + 1
    for v in (*out_values, *extra):
        uses[v] = uses.get(v, 0) + 2
    fresh = set()
    for i, rec in enumerate(prog.ops):
        args = [arr(a) if kind == "v" else _src(a, const) for kind, a in rec.args]
        outs = [f"v{o}" if o is not None else "_" for o in rec.outs]
        kern = _k.match(rec, prog)
        if kern is not None:
            one = const(_k._one(prog.meta[rec.outs[0]][1]), "ONE")
            kerns[i] = (kern, one)
            if kern.consts:
                ns.update(kern.consts)
            args = [f"v{a}" for _, a in rec.args]
            saved = kern.saved(args, outs[0], rec.nig) if live[i] else []
            lines = None
            if not prog.meta[rec.outs[0]][0]:
                scalars.add(rec.outs[0])
                lines = _k.SCALAR_FORWARD.get(rec.cls, kern.forward)(outs[0], args, one)
            else:
                for pos, (_, a) in enumerate(rec.args if rec.cls in _k.INPLACE else ()):
                    if a in fresh and uses.get(a) == 1 and f"v{a}" not in saved and f"v{a}" not in kept:
                        lines = (kern.forward_inplace or _k.forward_inplace)(rec.cls, outs[0], args, one, pos)
                        break
                fresh.add(rec.outs[0])
            fwd.extend("    " + line for line in (lines or kern.forward(outs[0], args, one)))
            for name in saved:
                if name not in kept:
                    kept.add(name)
                    keep.append(name)
            continue
        kw = ""
        if rec.kwargs:
            kw = ", " + ", ".join(f"{k}={_src(v, const)}" for k, v in rec.kwargs.items())
        F = const(rec.cls.forward, "F")
        if live[i]:
            c = f"c{i}"
            K = const(_ctx_class(rec, generic), "N")
            fwd.append(f"    {c} = {K}(); {c}._inputs = ({', '.join(args)}{',' if len(args) == 1 else ''})")
            if generic:
                metas = "".join(_meta_src(m, a, const) + ", " for m, a in zip(rec.input_meta, args))
                fwd.append(f"    {c}._input_meta = ({metas})")
            keep.append(c)
        else:
            c = "_X"
        call = f"{F}({c}, {', '.join(args)}{kw})" if args else f"{F}({c}{kw})"
        if len(rec.outs) == 1 and not rec.site and not rec.multi:
            o = outs[0]
            fwd.append(f"    {o} = {call}")
            fwd.append(f"    if {o}.__class__ is not _nd: {o} = _A({o})")
        else:
            fwd.append(f"    _o = {call}")
            for j, o in enumerate(outs):
                if o != "_":
                    fwd.append(f"    {o} = _A(_o[{j}])")
        if rec.dd:        # the guard of a data-dependent shape (a generic one: the shapes it knows)
            for o in rec.outs:
                if o is None:
                    continue
                if prog.dd_known is not None:
                    fwd.append(f"    if v{o}.shape not in {const(prog.dd_known[o], 'DK')}: raise _DS")
                else:
                    fwd.append(f"    if v{o}.shape != {const(prog.meta[o][0], 'SH')}: raise _DS")
        if live[i]:
            fwd.append(f"    _S({c}, ({', '.join(outs)},))")
            if generic:
                metas = "".join(_meta_src(m, o, const) + ", " for m, o in zip(rec.out_meta, outs))
                fwd.append(f"    {c}._out_meta = ({metas})")
    ret_outs = ", ".join(arr(v) for v in (*out_values, *extra))
    tuple_comma = "," if len(out_values) + len(extra) == 1 else ""
    kc = "," if len(keep) == 1 else ""
    if with_grad:
        fwd.append(f"    return ({ret_outs}{tuple_comma}), ({', '.join(keep)}{kc})")
    else:
        fwd.append(f"    return ({ret_outs}{tuple_comma})")
    fsrc = "\n".join(fwd) + "\n"
    exec(compile(fsrc, "<tapegrad.compile forward>", "exec"), ns)
    forward = ns["forward"]
    if not with_grad or not out_values:
        return forward, None, (fsrc, None)

    # --- backward: the ops in reverse. state[v]: 0 no gradient yet, 1 maybe (None or an array), 2 an array ---
    bwd = ["def backward(_cs, _g):"]
    if keep:
        bwd.append(f"    {', '.join(keep)}{kc} = _cs")
    bwd.append(f"    {', '.join(f'g{v}' for v in out_values)}{',' if len(out_values) == 1 else ''} = _g")
    state = {v: 0 for v in needs}
    for v in out_values:
        state[v] = 2 if prog.rg[v] else 0
    head = len(bwd)      # (the gradients that may be read before they are set start as None: inserted here)
    maybe = []

    owned = set()        # gradients whose array only this code holds (made here, never handed to another name)

    def accumulate(lines, ind, v, x, definite, transfer=False, owns=True):
        """Add gradient expression ``x`` into g{v}, in the engine's order (earlier sum + new term). ``transfer``:
        ``x`` is a dead owned gradient whose array g{v} may take over."""
        st = state[v]
        bare = _simple(x)
        if bare and not transfer:
            owned.discard(int(x[1:]) if x.startswith("g") and x[1:].isdigit() else None)
        if st == 0 and definite:
            lines.append(f"{ind}g{v} = {x}")
            state[v] = 2
            if ((not bare and owns) or transfer) and prog.meta[v][0]:
                owned.add(v)
            else:
                owned.discard(v)
        elif st == 2:
            lines.append(f"{ind}g{v} = g{v} + {x}")
            if prog.meta[v][0]:
                owned.add(v)
        else:
            if not bare:
                lines.append(f"{ind}_x = {x}")
                x = "_x"
            if st == 0:
                maybe.append(v)
            lines.append(f"{ind}g{v} = {x} if g{v} is None else g{v} + {x}")
            state[v] = 2 if definite else max(st, 1)
            owned.discard(v)

    for i in range(len(prog.ops) - 1, -1, -1):
        if not live[i]:
            continue
        rec = prog.ops[i]
        gouts = [f"g{o}" if o is not None and o in needs and state[o] else "None" for o in rec.outs]
        present = [g for g, o in zip(gouts, rec.outs) if g != "None"]
        if not present:
            continue
        if i in kerns:
            kern, one = kerns[i]
            o = rec.outs[0]
            args = [f"v{a}" for _, a in rec.args]
            exprs = kern.grads(f"g{o}", args, f"v{o}", rec.nig, one)
            definite = state[o] == 2
            targets = [k for k, ((_, v), need) in enumerate(zip(rec.args, rec.nig)) if need and v in needs]
            if definite and o in owned and len(targets) == 1:
                lines = (kern.grad_inplace(f"g{o}", args, f"v{o}", targets[0], one) if kern.grad_inplace
                         else _k.grad_inplace(rec.cls, f"g{o}", args, f"v{o}", targets[0], one))
                if lines is not None:        # the formula written into the output's own gradient array
                    bwd.extend("    " + line for line in lines)
                    owned.discard(o)
                    accumulate(bwd, "    ", rec.args[targets[0]][1], f"g{o}", True, transfer=True)
                    continue
            ind = "    "
            if not definite:
                bwd.append(f"    if g{o} is not None:")
                ind = "        "
            for (_, v), need, x in zip(rec.args, rec.nig, exprs):
                if need and v in needs:
                    accumulate(bwd, ind, v, x, definite, owns=kern.fresh_grads)
            continue
        all_there = all(state[o] == 2 for o in rec.outs if o is not None and o in needs)
        ind = "    "
        if not all_there:
            bwd.append(f"    if {' or '.join(g + ' is not None' for g in present)}:")
            ind = "        "
        runner = "_RA" if rec.cls._array_backward else "_RW"
        gouts = [f"_A({g})" if g != "None" and not prog.meta[o][0] else g for g, o in zip(gouts, rec.outs)]
        bwd.append(f"{ind}_r = {runner}(c{i}, [{', '.join(gouts)}])")
        for j, ((kind, v), need) in enumerate(zip(rec.args, rec.nig)):
            if kind != "v" or not need or v not in needs:
                continue
            shape, dtype = rec.input_meta[j]
            D = const(dtype, "D")
            bwd.append(f"{ind}_y = _r[{j}]")
            bwd.append(f"{ind}if _y is not None:")
            if generic:
                bwd.append(f"{ind}    _m = c{i}._input_meta[{j}]")
                bwd.append(f"{ind}    if _y.__class__ is not _nd or _y.shape != _m[0] or _y.dtype != {D}: "
                           f"_y = _CF(_y, c{i}, _m)")
            else:
                M = const(rec.input_meta[j], "M")
                bwd.append(f"{ind}    if _y.__class__ is not _nd or _y.shape != {shape!r} or _y.dtype != {D}: "
                           f"_y = _CF(_y, c{i}, {M})")
            accumulate(bwd, ind + "    ", v, "_y", False)
    bwd[head:head] = ["    " + " = ".join(f"g{v}" for v in maybe[k:k + 32]) + " = None"
                      for k in range(0, len(maybe), 32)]
    rets = [f"g{v}" if v in needs and state[v] else "None" for v in slot_vals]
    bwd.append(f"    return ({', '.join(rets)}{',' if len(rets) == 1 else ''})")
    bsrc = "\n".join(bwd) + "\n"
    exec(compile(bsrc, "<tapegrad.compile backward>", "exec"), ns)
    return forward, ns["backward"], (fsrc, bsrc)


def _simple(x):
    return x.isidentifier()


def _meta_src(m, a, const):
    """A context's metadata entry for a generic program: (shape, dtype) from the array named ``a``."""
    if m is None or m is False:
        return repr(m)
    return f"({a}.shape, {const(m[1], 'D')})"


def _src(v, const):
    """A constant as source; in a generic program, ``Sym``\\ s inside it computed from the replay's arrays."""
    t = type(v)
    if t is Sym:
        return v.source()
    if (t is tuple or t is list or t is slice or t is dict) and has_sym(v):
        if t is slice:
            return f"slice({_src(v.start, const)}, {_src(v.stop, const)}, {_src(v.step, const)})"
        if t is dict:
            return "{" + ", ".join(f"{k!r}: {_src(x, const)}" for k, x in v.items()) + "}"
        items = ", ".join(_src(x, const) for x in v)
        return f"[{items}]" if t is list else f"({items}{',' if len(v) == 1 else ''})"
    return _literal(v, const)


def _literal(v, const):
    """A constant as source: small Python values inline, anything else hoisted to a global name."""
    if v is None or v is True or v is False or (type(v) in (int, str) and len(repr(v)) < 40):
        return repr(v)
    if type(v) is float and v == v and v not in (float("inf"), float("-inf")):
        return repr(v)
    if type(v) is tuple and all(type(x) in (int, bool) or x is None for x in v) and len(v) < 16:
        return repr(v)
    return const(v)


def listing(prog, out_values, name="f"):
    """The program as readable Python: the forward one line per op (in tapegrad calls) and the backward one
    line per op's chain-rule step, for ``backend="print"`` and ``explain``."""
    live, needs = live_ops(prog, out_values)
    ins = []
    for inp in prog.inputs:
        v = inp[2]
        shape, dtype = prog.meta[v]
        ins.append(f"v{v}")
    lines = [f"def {name}_forward({', '.join(ins)}):"]
    for inp in prog.inputs:
        v = inp[2]
        shape, dtype = prog.meta[v]
        src = _path_text(inp[1]) if inp[0] == "arg" else "free tensor (parameter, buffer, global or constant)"
        lines.append(f"    # v{v}: {dtype.name}{list(shape)}{' requires_grad' if prog.rg[v] else ''}  <- {src}")
    for rec in prog.ops:
        args = [f"v{a}" if kind == "v" else _short_repr(a) for kind, a in rec.args]
        args += [f"{k}={_short_repr(v)}" for k, v in rec.kwargs.items()]
        outs = [f"v{o}" if o is not None else "_" for o in rec.outs]
        metas = [f"{prog.meta[o][1].name}{list(prog.meta[o][0])}" for o in rec.outs if o is not None]
        lines.append(f"    {', '.join(outs)} = {rec.name}({', '.join(args)})    # {', '.join(metas)}")
    lines.append(f"    return {', '.join(f'v{v}' for v in out_values)}")
    lines.append("")
    lines.append(f"def {name}_backward({', '.join(f'g{v}' for v in out_values)}):")
    lines.append("    # the chain rule in reverse, one line per op (inline kernels written out); paths meeting add up")
    have = set(out_values)
    for i in range(len(prog.ops) - 1, -1, -1):
        if not live[i]:
            continue
        rec = prog.ops[i]
        gouts = [f"g{o}" if o is not None and o in needs else "None" for o in rec.outs]
        targets = [v if kind == "v" and need and v in needs else None for (kind, v), need in zip(rec.args, rec.nig)]
        if all(t is None for t in targets):
            continue
        node = rec.cls._backward_cls.__name__
        kern = _k.match(rec, prog)
        if kern is not None:
            exprs = [x and _readable(x)
                     for x in kern.grads(gouts[0], [f"v{a}" for _, a in rec.args], f"v{rec.outs[0]}", rec.nig, "1")]
            parts = []
            for v, x in zip(targets, exprs):
                if v is not None:
                    parts.append(f"g{v} {'+=' if v in have else '='} {x}")
                    have.add(v)
            lines.append(f"    {'; '.join(parts)}    # {node}")
            continue
        names = [f"g{v}" if v is not None else "_" for v in targets]
        op = "+=" if any(v in have for v in targets if v is not None) else "="
        have.update(v for v in targets if v is not None)
        lines.append(f"    {', '.join(names)} {op} {node}({', '.join(gouts)})")
    grads = [f"g{inp[2]}" if inp[2] in needs else "None" for inp in prog.inputs]
    lines.append(f"    return {', '.join(grads)}")
    return "\n".join(lines)


_READABLE = (("_bcast(", "broadcast_to("), ("_addr(", "sum("), ("_exp(", "exp("), ("_div(", "divide("))


def _readable(x):
    """A kernel's gradient expression as the listing shows it (NumPy's names, not the generated code's)."""
    for a, b in _READABLE:
        x = x.replace(a, b)
    return x


def _path_text(path):
    head = "args" if path[0] == "a" else "kwargs"
    return head + "".join(f"[{p!r}]" for p in path[1:])


def _short_repr(v):
    r = repr(v)
    return r if len(r) <= 40 else r[:37] + "..."
