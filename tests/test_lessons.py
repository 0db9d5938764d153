"""Every lesson script and the scalar moons demo runs, and prints what the lesson is about."""

import os
import subprocess
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
LESSONS = os.path.join(ROOT, "examples", "lessons")


def run(script, *args, code=None, timeout=300):
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "src"), MPLBACKEND="Agg")
    cmd = [sys.executable, "-c", code, *args] if code else [sys.executable, os.path.join(LESSONS, script), *args]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env, cwd=ROOT, check=False)
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_01_relu_dead_zone():
    out = run("01_relu_dead_zone.py")
    assert "x=+3.0  y=6.0  x.grad=2.0  w.grad=3.0" in out
    assert "x=-3.0  y=0.0  x.grad=0.0  w.grad=0.0" in out
    assert "y [ReLU]" in out and "accumulates into" in out
    assert "layers.0      6     3   50.0%" in out


def test_02_backward_twice():
    out = run("02_backward_twice.py")
    assert "1st a.grad = -3.0" in out and "2nd a.grad = -6.0 (doubled!)" in out
    assert "after zeroing, a.grad = -3.0" in out
    assert "2nd w.grad = tensor([ 4.,  8., 12.])" in out
    assert "ZeroGradWarning" in out and "accumulated by 2 backward passes" in out


def test_03_x_times_x():
    out = run("03_x_times_x.py")
    assert "f = 25.0  x.grad = 10.0" in out and "-> one element" in out
    assert out.count("-> x      5") == 2
    assert "tensor: x.grad = tensor(10.)" in out


def test_04_add_pow():
    out = run("04_add_pow.py")
    assert "seed engine + __pow__: x**2 at 3 -> x.grad = 6.0" in out
    assert "tapegrad tensor      : x.grad = 6.0 | grad_fn: PowBackward0" in out
    assert "k=0.5: seed 0.353553  tapegrad 0.353553" in out


def test_05_inspect_graph(tmp_path):
    out = run("05_inspect_graph.py", str(tmp_path))
    assert "by hand: a.grad = -0.002682, b.grad = 0.002682" in out
    assert "a data=2.0000 grad=-0.0027" in out and "a data=2.0000 grad=0.0000" in out
    assert "(doubled)" in out and "y.detach().grad_fn = None" in out and "w.grad = None" in out
    assert (tmp_path / "lesson05_graph.svg").exists()


def test_06_loss_accumulation():
    out = run("06_loss_accumulation.py")
    sizes = [int(line.split("graph of ")[1].split()[0]) for line in out.splitlines() if "holds a graph of" in line]
    assert len(sizes) == 5 and all(b > a for a, b in zip(sizes, sizes[1:]))
    assert "(float, no graph)" in out
    assert out.count("GraphKeptAliveWarning") == 1 and "loss.item()" in out
    assert "the correct loop: 0 warnings" in out


def test_07_seed_operators():
    out = run("07_seed_operators.py")
    assert "g: 22026.465794806718" in out
    hand = [line for line in out.splitlines() if line.startswith("by hand")][0].split(":", 1)[1]
    auto = [line for line in out.splitlines() if line.startswith("autograd")][0].split(":", 1)[1]
    assert hand == auto


def test_08_draw_graph(tmp_path):
    out = run("08_draw_graph.py", str(tmp_path))
    assert "7 nodes, 6 edges" in out
    assert "before: ['L', 'data 4.0000', 'grad 0.0000']" in out
    assert "after : ['L', 'data 4.0000', 'grad 1.0000']" in out
    for name in ("graph_before.svg", "graph_after.svg", "graph_tensor.svg"):
        assert (tmp_path / name).read_text().startswith("<svg")


def test_scalar_moons_runs():
    out = run(os.path.join("..", "scalar_moons.py"), "--steps", "2")
    assert "number of parameters 337" in out
    assert out.splitlines()[-1].startswith("final training accuracy")


def test_scalar_moons_reaches_100_percent():
    # the demo's full loop until 100%; the cyclic GC is switched off to make it quick (the engine makes no cycles)
    code = ("import gc, runpy, sys; gc.disable(); sys.argv = ['scalar_moons.py', '--fast']; "
            "runpy.run_path('examples/scalar_moons.py', run_name='__main__')")
    out = run(None, code=code, timeout=600)
    assert out.splitlines()[-1] == "final training accuracy 100.0%"


def test_scalar_moons_without_scikit_learn_is_seeded_and_the_same():
    # the fallback data draws from NumPy's global generator, as make_moons does: every run alike, and alike with
    # and without scikit-learn (micrograd's notebook numbers)
    hide = ("import importlib.abc, sys\n"
            "class NoSklearn(importlib.abc.MetaPathFinder):\n"
            "    def find_spec(self, name, path=None, target=None):\n"
            "        if name.split('.')[0] == 'sklearn': raise ModuleNotFoundError(name)\n"
            "sys.meta_path.insert(0, NoSklearn())\n")
    main = ("import runpy; sys.argv = ['scalar_moons.py', '--steps', '2']; "
            "ns = runpy.run_path('examples/scalar_moons.py', run_name='__main__'); "
            "print('fallback' if ns['make_moons'] is ns['moons'] else 'sklearn')")
    first, second = run(None, code=hide + main), run(None, code=hide + main)
    assert first == second and first.splitlines()[-1] == "fallback"
    try:
        import sklearn  # noqa: F401
    except ImportError:
        return
    with_sklearn = run(None, code="import sys\n" + main)
    assert with_sklearn.splitlines()[-1] == "sklearn"
    assert with_sklearn.splitlines()[:-1] == first.splitlines()[:-1]


def test_09_forward_vs_reverse(tmp_path):
    out = run("09_forward_vs_reverse.py", str(tmp_path))
    assert "the same: True | and jacfwd agrees: True" in out
    assert "Tanh  [0]" in out and "natural" in out            # tangents traced forward
    assert "TanhBackward0" in out and "x.grad (via AccumulateGrad)" in out
    rows = [line for line in out.splitlines() if "jvp columns" in line]
    assert len(rows) == 8
    # forward mode's cost grows with n, reverse mode's with m (timings: compare only the ends of each sweep)
    t = [(float(r.split("jvp columns")[1].split()[0]), float(r.split("vjp rows")[1].split()[0])) for r in rows]
    assert t[3][0] > t[0][0] and t[7][1] > t[4][1]
    assert (tmp_path / "forward_vs_reverse.png").exists()
