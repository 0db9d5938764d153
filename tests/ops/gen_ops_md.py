"""Write docs/ops.md from the op table: every required op, its source file, the specs that test it and the checks.

    python tests/ops/gen_ops_md.py          # rewrite docs/ops.md
    python tests/ops/gen_ops_md.py --check  # exit 1 if docs/ops.md is out of date (the test suite runs this)
"""

from __future__ import annotations

import inspect
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(HERE, "..", "..", "src"), os.path.join(HERE, "..")]

from ops.op_db import OPS  # noqa: E402
from ops.required_ops import REQUIRED, covering_specs  # noqa: E402

PATH = os.path.join(HERE, "..", "..", "docs", "ops.md")
SRC = os.path.realpath(os.path.join(HERE, "..", "..", "src", "tapegrad"))


def _lookup(name, nn_first):
    """The tapegrad object of a table name: ``exp`` (tapegrad, then Tensor), ``linalg.inv``, ``nn.functional.relu``;
    ``getitem`` / ``setitem`` are ``x[key]`` / ``x[key] = v``. nn.functional's version first for its family (a few
    names, such as batch_norm, have another signature at top level)."""
    import tapegrad
    import tapegrad.nn.functional as F
    name = name.removeprefix("nn.functional.")
    if name in ("getitem", "setitem"):
        return getattr(tapegrad.Tensor, f"__{name}__")
    for ns in ("linalg", "fft", "special", "signal"):
        if name.startswith(ns + "."):
            obj = tapegrad
            for part in name.split("."):       # (signal.windows.hann: two namespaces deep)
                obj = getattr(obj, part, None)
            return obj
    for ns in ((F, tapegrad, tapegrad.Tensor) if nn_first else (tapegrad, tapegrad.Tensor, F)):
        obj = getattr(ns, name, None)
        if obj is not None:
            return obj
    return None


def source_file(name, nn_first=False):
    """The file (relative to src/tapegrad) that defines op ``name``: the function's own module (through
    ``functools.wraps``, and a property's getter), else the module of the Primitive it applies."""
    obj = _lookup(name, nn_first)
    if obj is None:
        return None
    obj = inspect.unwrap(obj.fget if isinstance(obj, property) else obj)
    try:
        path = inspect.getsourcefile(obj)
    except TypeError:                       # not a Python function (a class attribute, a builtin)
        path = None
    if path is None:
        prim = next((v for v in getattr(obj, "__globals__", {}).values() if isinstance(v, type)
                     and getattr(v, "__name__", "").lower() == name.lower()), None)
        path = prim and inspect.getsourcefile(prim)
    return path and os.path.relpath(os.path.realpath(path), SRC).replace(os.sep, "/")


def _link(rel):
    return f"[{rel}](../src/tapegrad/{rel})" if rel else ""


def _extra_source(spec_name):
    """A table entry beyond the required list names an op, or a variant of one (``nanmedian_all``)."""
    parts = spec_name.split("_")
    for k in range(len(parts), 0, -1):
        rel = source_file("_".join(parts[:k]), spec_name.startswith("nn.functional."))
        if rel:
            return rel
    return None


def _checks(spec):
    c = ["values, dtypes vs torch"]
    if spec.float32:
        c.append("float32")
    if spec.grad:
        c += ["grad_fn name" if spec.check_grad_fn else None, "grads vs torch", "gradcheck"]
        if spec.gradgrad:
            smooth = all(s.smooth for s in spec.samples(np.random.default_rng(0)))
            c += ["2nd derivatives vs torch", "gradgradcheck" if smooth else "gradgradcheck (not at kinks)"]
    if spec.inplace is not None:
        c.append("in-place + version bump")
    if spec.complex:
        c.append("complex samples (values, grads, gradcheck)")
    return [x for x in c if x]


def _forward_rules(spec):
    """The tangent rules forward-mode AD uses for an op (every sample run under a dual level): {op class name:
    "natural" | "derived"} of the Primitives that saw a tangent."""
    import tapegrad
    import tapegrad.autograd.forward_ad as fw
    from ops.oracle import to_tg
    seen = {}
    if not spec.grad:
        return seen
    import warnings
    for sample in spec.samples(np.random.default_rng(0)):
        level = fw.DualLevel()
        level.log = []
        with warnings.catch_warnings(), level:
            warnings.simplefilter("ignore")
            args = [_dual(level, to_tg(a, np.float64, False)) for a in sample.args]
            tapegrad.manual_seed(0)
            spec.fn(tapegrad, *args, **sample.kwargs)
        for cls, kind in level.log:
            seen.setdefault(cls.__name__, kind)
    return seen


def _dual(level, a):
    import tapegrad
    if isinstance(a, (list, tuple)):
        return type(a)(_dual(level, e) for e in a)
    if isinstance(a, tapegrad.Tensor) and a.dtype.is_floating_point:
        level.set_tangent(a, tapegrad.ones_like(a))
    return a


def _forward_cell(specs):
    """docs/ops.md's forward-mode column: "natural" (rules written next to the op), "derived" (from its
    backward, by transposition), or both, naming the ops whose rule is derived."""
    rules = {}
    for s in specs:
        rules.update(_forward_rules(s))
    if not rules:
        return "none (not differentiable)"
    derived = sorted(n for n, k in rules.items() if k == "derived")
    if not derived:
        return "natural"
    if len(derived) == len(rules):
        return "derived"
    return "natural + derived (" + ", ".join(derived) + ")"


def _vmap_kinds(spec):
    """How ``vmap`` batches an op (its first sample, floating arrays mapped over a batch of 2): {op name: "rule" |
    "loop"} of the ops that saw a batched argument."""
    import warnings

    import tapegrad
    import tapegrad.func
    from tapegrad.func import _vmap
    sample = spec.samples(np.random.default_rng(0))[0]

    def conv(a, batched):
        if isinstance(a, np.ndarray):
            return tapegrad.tensor(np.stack([a, a]) if batched and a.dtype.kind in "fc" else a)
        if isinstance(a, (list, tuple)) and a and all(isinstance(e, np.ndarray) for e in a):
            return type(a)(conv(e, batched) for e in a)
        return a

    def dims(a):
        if isinstance(a, np.ndarray):
            return 0 if a.dtype.kind in "fc" else None
        if isinstance(a, (list, tuple)) and a and all(isinstance(e, np.ndarray) for e in a):
            return type(a)(dims(e) for e in a)
        return None
    in_dims = tuple(dims(a) for a in sample.args)
    if all(d is None or (isinstance(d, (list, tuple)) and all(e is None for e in d)) for d in in_dims):
        return {}
    _vmap.log = []
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tapegrad.manual_seed(0)
            tapegrad.func.vmap(lambda *a: spec.fn(tapegrad, *a, **sample.kwargs), in_dims=in_dims,
                               randomness="different")(*[conv(a, True) for a in sample.args])
    except Exception:  # noqa: BLE001 - an op vmap refuses (non-tensor output...) has no cell to fill
        pass
    seen = {}
    for name, kind in _vmap.log:
        seen[name] = "loop" if seen.get(name) == "loop" or kind == "loop" else kind
    _vmap.log = None
    return seen


def _vmap_cell(specs):
    """docs/ops.md's vmap column: "rule" (batched in one call by the op family's batching rule), "loop" (the
    per-sample fallback), or both, naming the ops that loop."""
    kinds = {}
    for s in specs:
        for k, v in _vmap_kinds(s).items():
            kinds[k] = "loop" if kinds.get(k) == "loop" or v == "loop" else v
    if not kinds:
        return "—"
    loops = sorted(k.rsplit(".", 1)[-1] for k, v in kinds.items() if v == "loop")
    if not loops:
        return "rule"
    if len(loops) == len(kinds):
        return "loop (" + ", ".join(loops) + ")"
    return "rule + loop (" + ", ".join(loops) + ")"


def render() -> str:
    lines = ["# The op library and its checks", "",
             "Generated by `python tests/ops/gen_ops_md.py` from the op table (`tests/ops/specs/*.py`); the test "
             "suite fails when this file is out of date. Every check listed runs in CI "
             "(`tests/ops/test_op_db.py`): values and dtypes against torch 2.13 (float64, and float32 where "
             "listed), `grad_fn` names, first and second derivatives against torch in float64, and "
             "finite-difference `gradcheck` / `gradgradcheck`; with complex samples (`tests/ops/test_complex_ops.py`, "
             "the ops torch supports with complex input): the same against torch in complex128 and complex64, and "
             "gradcheck the way torch checks complex functions. A check that cannot apply is switched off with the "
             "reason in the notes column. The source column links each op to the file that defines it.", "",
             "Forward mode (`autograd.forward_ad`, `func.jvp`/`jacfwd`) covers every differentiable op; the "
             "forward-mode column says how each op's tangent is computed: *natural* (a `jvp` rule next to the "
             "op's forward and backward: linear ops apply themselves to the tangent, the product rule, an "
             "elementwise rule) or *derived* (from the op's differentiable backward, by transposition: exact, "
             "two small backward walks). `tests/ops/test_op_forward_ad.py` checks every sample's tangent against "
             "torch's forward AD and central finite differences.", "",
             "The vmap column says how `func.vmap` batches each op: *rule* (the op runs once on the batched arrays, "
             "by its family's batching rule in `func/batching/`) or *loop* (the per-sample fallback: the op once per "
             "sample, results stacked, with a warning naming the op), naming the ops that loop; *—* where the "
             "samples have no floating input to map over. `tests/func/test_vmap_ops.py` checks every op's batched "
             "values against a per-sample loop and against torch.vmap.", "",
             f"{len(OPS)} op-table entries in all.", ""]
    for family, names in REQUIRED.items():
        lines += [f"## {family}", "", "| op | source | specs (samples) | checks | forward mode | vmap | notes |",
                  "|---|---|---|---|---|---|---|"]
        for name in names.split():
            rel = source_file(name, nn_first=family == "nn.functional")
            if rel is None:
                raise SystemExit(f"gen_ops_md: no tapegrad source found for the required op {name!r}")
            specs = covering_specs(name, OPS, family)
            if not specs:
                lines.append(f"| `{name}` | {_link(rel)} | **missing** | | | | |")
                continue
            counts = ", ".join(f"`{s.name}` ({len(s.samples(np.random.default_rng(0)))})" for s in specs[:4])
            if len(specs) > 4:
                counts += f", +{len(specs) - 4} more"
            every = set.intersection(*(set(_checks(s)) for s in specs))
            some = set.union(*(set(_checks(s)) for s in specs)) - every
            checks = sorted(every) + [f"{c} (some samples)" for c in sorted(some)]
            notes = "; ".join(sorted({s.notes.replace("|", "/").replace("\n", " ") for s in specs if s.notes}))
            lines.append(f"| `{name}` | {_link(rel)} | {counts} | {', '.join(checks)} | {_forward_cell(specs)} | "
                         f"{_vmap_cell(specs)} | {notes} |")
        lines.append("")
    extra = sorted({s.name for s in OPS} - {s.name for fam, names in REQUIRED.items() for n in names.split()
                                           for s in covering_specs(n, OPS, fam)})
    lines += ["## Beyond the required list", "",
              ", ".join(f"`{n}` ({_link(rel)})" if (rel := _extra_source(n)) else f"`{n}`" for n in extra), ""]
    return "\n".join(lines)


if __name__ == "__main__":
    text = render()
    if "--check" in sys.argv:
        with open(PATH) as f:
            sys.exit(0 if f.read() == text else 1)
    with open(PATH, "w") as f:
        f.write(text)
    print(f"wrote {PATH}")
