"""The house stays clean: the scalar engine stands alone, the engine never imports the teaching tools, and no op
module grows past what a reader can hold in mind."""

import ast
import os
import pathlib
import shutil
import subprocess
import sys
import textwrap

SRC = pathlib.Path(__file__).resolve().parent.parent / "src" / "tapegrad"


def _imports(path, package, module_level_only):
    """(line, absolute module name) of every import in ``path`` (a module of ``package``); with
    ``module_level_only``, only the statements that run at import (not those inside a def)."""
    tree = ast.parse(path.read_text())
    nodes = []
    if module_level_only:
        todo = list(tree.body)
        while todo:
            n = todo.pop()
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                continue
            nodes.append(n)
            todo.extend(ast.iter_child_nodes(n))
    else:
        nodes = list(ast.walk(tree))
    out = []
    for n in nodes:
        if isinstance(n, ast.Import):
            out += [(n.lineno, a.name) for a in n.names]
        elif isinstance(n, ast.ImportFrom):
            if n.level:
                base = package.split(".")[:len(package.split(".")) - n.level + 1]
                mod = ".".join(base + ([n.module] if n.module else []))
            else:
                mod = n.module
            out += [(n.lineno, f"{mod}.{a.name}") for a in n.names] if not n.module or n.level else [(n.lineno, mod)]
    return out


def test_scalar_engine_imports_only_the_standard_library():
    for path in sorted((SRC / "scalar").glob("*.py")):
        for line, mod in _imports(path, "tapegrad.scalar", module_level_only=False):
            top = mod.split(".")[0]
            inside = mod.startswith("tapegrad.scalar.") or mod == "tapegrad.scalar"
            assert inside or (top != "tapegrad" and top in sys.stdlib_module_names), \
                f"scalar/{path.name}:{line} imports {mod}: the scalar engine imports only itself and the stdlib"


def test_scalar_engine_runs_as_a_top_level_package(tmp_path):
    """scalar/ copied on its own (no tapegrad anywhere on the path) imports, trains and differentiates."""
    shutil.copytree(SRC / "scalar", tmp_path / "scalar", ignore=shutil.ignore_patterns("__pycache__"))
    code = textwrap.dedent("""
        import sys
        from scalar import Value, nn, ops
        from scalar import value
        a, b = Value(2.0), Value(-3.0)
        L = (a * b + a).tanh() + b ** 2
        seen = []
        value._observers.append(lambda node, g, steps: seen.append(len(steps)))
        L.backward()
        assert seen and all(k in (1, 2) for k in seen)   # each step reported to the observer, with its inputs
        try:
            L.backward(trace=True)
        except RuntimeError as e:
            assert "no tracer" in str(e)
        else:
            raise AssertionError("trace=True without a tracer must say so")
        mlp = nn.MLP(2, [3, 1])
        out = mlp([Value(1.0), Value(-1.0)])
        out.backward()
        assert all(isinstance(p.grad, float) for p in mlp.parameters())
        assert ops.add()(1, 2) == 3
        assert not [m for m in sys.modules if m.split(".")[0] == "tapegrad"], "tapegrad was imported"
        print(round(a.grad, 6), round(b.grad, 6))
    """)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    r = subprocess.run([sys.executable, "-I", "-c", f"import sys; sys.path.insert(0, {str(tmp_path)!r})\n" + code],
                       cwd=tmp_path, capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    # the same numbers as the engine inside tapegrad
    from tapegrad.scalar import Value
    a, b = Value(2.0), Value(-3.0)
    L = (a * b + a).tanh() + b ** 2
    L.backward()
    assert r.stdout.split() == [str(round(a.grad, 6)), str(round(b.grad, 6))]


# lazy hook-ins: a tool that plugs into the engine from its side, imported inside the function that needs it
HOOK_INS = {
    ("autograd/trace.py", "tapegrad.scalar.value"): "Trace.__enter__/__exit__ add/remove the scalar observer",
    ("autograd/stats.py", "tapegrad.scalar.value.Value"): "graph_stats also counts a scalar Value's graph",
}
TOOLS = ("tapegrad.viz", "tapegrad.debug", "tapegrad.scalar", "tapegrad.autograd.trace")


def test_engine_does_not_import_the_teaching_tools():
    files = [SRC / "tensor.py", *sorted((SRC / "autograd").glob("*.py")), *sorted((SRC / "ops").rglob("*.py"))]
    for path in files:
        rel = path.relative_to(SRC).as_posix()
        package = ".".join(("tapegrad", *path.relative_to(SRC).parent.parts))   # relative imports start here
        module_level = set(_imports(path, package, module_level_only=True))
        for line, mod in _imports(path, package, module_level_only=False):
            if not mod.startswith(TOOLS) or mod == "tapegrad.autograd.trace" and rel == "autograd/trace.py":
                continue
            assert (line, mod) not in module_level, f"{rel}:{line} imports {mod} at module level"
            assert (rel, mod) in HOOK_INS, f"{rel}:{line} imports {mod}: not a documented lazy hook-in"


def test_scalar_value_trace_flag_uses_the_tracer_tapegrad_hooks_in():
    from tapegrad.autograd.trace import Trace
    from tapegrad.scalar import Value, value
    assert value._tracers, "tapegrad hooks its tracer into the scalar engine"
    x = Value(3.0)
    t = (x * x).backward(trace=True)
    assert isinstance(t, Trace) and len(t.steps) == 1 and x.grad == 6.0


def test_op_modules_stay_small():
    """A reader looking for one op's derivative opens a file they can hold in mind (split past ~1,000 lines)."""
    big = {p.relative_to(SRC).as_posix(): n for p in (SRC / "ops").rglob("*.py")
           if (n := len(p.read_text().splitlines())) > 1100}
    assert not big, f"split these by sub-family: {big}"
