"""The benchmark suite (benchmarks/, issue 6) must never rot: its quick smoke mode runs here.

Only that the scripts run, that every workload's cross-engine correctness check passes, and that RESULTS.md gets
written; no timing is asserted anywhere (the machine running the tests may be busy).
"""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCH = os.path.join(ROOT, "benchmarks")
WORKLOADS = [f"W{i}" for i in range(1, 12)] + ["CK"]


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    pytest.importorskip("torch", reason="the suite compares against torch")
    out = tmp_path_factory.mktemp("bench") / "RESULTS.md"
    proc = subprocess.run([sys.executable, os.path.join(BENCH, "run.py"), "--quick", "--write", "--out", str(out)],
                          capture_output=True, text=True, timeout=600, cwd=ROOT)
    return proc, out


def test_quick_suite_runs_every_workload_and_checks_pass(quick_run):
    proc, _ = quick_run
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    for w in WORKLOADS:
        assert f"--- {w} (1 thread) ---" in proc.stdout
    assert f"all {len(WORKLOADS)} runs passed their correctness checks" in proc.stdout
    assert "FAILED" not in proc.stdout + proc.stderr


def test_quick_suite_writes_results(quick_run):
    _, out = quick_run
    text = out.read_text()
    assert "## Machine" in text and "numpy BLAS (threadpoolctl)" in text and "Quick smoke mode" in text
    for w in WORKLOADS:
        assert f"| {w} | 1 |" in text
    data = json.loads((out.parent / "results.json").read_text())
    assert [r["workload"] for r in data["results"]] == WORKLOADS
    for r in data["results"]:
        assert r["checks_passed"], r
        assert r["checks"], f"{r['workload']} ran no correctness check"
        assert r["engines"]["tapegrad"]["n"] >= 1
    # the engines the issue compares were all there
    by_id = {r["workload"]: r for r in data["results"]}
    for w in ("W2", "W3", "W4", "W5", "W6"):
        assert by_id[w]["engines"]["torch"] is not None and by_id[w]["engines"]["numpy"] is not None, w
    # W3's two floors ran and were checked against tapegrad like every engine
    for floor in ("semantic floor", "model-code floor"):
        assert by_id["W3"]["engines"][floor]["n"] >= 1
        assert any(f"tapegrad == {floor}" in c for c in by_id["W3"]["checks"]), by_id["W3"]["checks"]
    # W3 times its matrix products alone and bounds the torch half by hand NumPy's ratio
    assert by_id["W3"]["engines"]["matmuls only"]["n"] >= 1
    assert by_id["W3"]["ratios"]["numpy/torch"] is not None
    # tapegrad.compile's engine (issue 18) ran and was checked in the workloads it is timed in
    for w in ("W2", "W3", "W4", "W6", "W9"):
        assert by_id[w]["engines"]["tapegrad compiled"]["n"] >= 1, w
        assert any("tapegrad compiled" in c for c in by_id[w]["checks"]), by_id[w]["checks"]
    assert "### tapegrad.compile (issue 18)" in text


def test_rounds_run_the_engines_in_a_seeded_random_order():
    """Each engine must meet varied predecessors (a fixed rotation biased the ratios), and every run the same."""
    sys.path.insert(0, BENCH)
    import _common as C

    def orders():
        seen = []
        fns = {name: (lambda n=name: seen.append(n)) for name in "abcde"}
        C.interleaved(fns, 40, warmup=0, collect=False)
        return [seen[i:i + 5] for i in range(0, len(seen), 5)]

    first = orders()
    assert first == orders()                                        # seeded: reproducible
    assert all(sorted(r) == list("abcde") for r in first)           # every engine once per round
    before_a = {r[r.index("a") - 1] for r in first if r.index("a") > 0}
    assert len(before_a) == 4                                       # "a" follows each of the others


def test_runs_time_each_engines_steps_back_to_back():
    """W3/W4 are scored over runs: within a round each engine makes all its steps before the next engine starts."""
    sys.path.insert(0, BENCH)
    import _common as C

    seen = []
    steps = {name: (lambda n=name: seen.append(n)) for name in "abc"}
    times = C.interleaved(C.runs(steps, 4), 3, warmup=0, collect=False)
    assert all(len(ts) == 3 for ts in times.values())
    assert len(seen) == 3 * 3 * 4
    for i in range(0, len(seen), 4):                    # each block of 4 calls is one engine's run
        assert len(set(seen[i:i + 4])) == 1


def test_summary_says_when_a_measured_floor_misses_the_target():
    sys.path.insert(0, BENCH)
    import run

    res = {"workload": "W3", "ratios": {"tapegrad/torch": 0.88, "tapegrad/numpy": 1.08, "numpy/torch": 0.8}}
    score, met, floors = run.evaluate(res)
    assert met is False and floors == ["numpy/torch 0.8"]
    assert "tapegrad/torch 0.88" in score and "tapegrad/numpy 1.08" in score
    res["ratios"]["numpy/torch"] = 0.6                 # a floor within reach: the miss is tapegrad's own
    assert run.evaluate(res)[2] == []
    res["ratios"].update({"tapegrad/torch": 0.69})     # met: no floor is reported
    assert run.evaluate(res)[1:] == (True, [])


def test_quick_mode_writes_nothing_by_default(tmp_path, torch):
    out = tmp_path / "RESULTS.md"
    proc = subprocess.run([sys.executable, os.path.join(BENCH, "run.py"), "--quick", "--only", "W2",
                           "--out", str(out)], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "--- W2 (1 thread) ---" in proc.stdout and "--- W3" not in proc.stdout
    assert not out.exists()


def test_a_wrong_engine_fails_the_check(torch):
    """A fast wrong result cannot pass: a hand-NumPy MLP with another learning rate is caught."""
    sys.path.insert(0, BENCH)
    try:
        import _common as C
        import w3_mlp
    finally:
        sys.path.remove(BENCH)
    sizes = (20, 8, 10)
    state = w3_mlp.init_state(sizes)
    batches = w3_mlp.make_batches(2, 4, sizes[0])
    good = w3_mlp.trainers(state, batches, sizes=sizes)
    lines, _ = C.check_training("W3", good, 3, rtol=1e-4)
    assert len(lines) == len(good) - 1       # every engine compared with tapegrad (peers when installed)
    bad = w3_mlp.trainers(state, batches, sizes=sizes)
    bad["numpy"].params["0.weight"] *= np.float32(1.01)
    with pytest.raises(C.CheckFailed, match="tapegrad vs numpy"):
        C.check_training("W3", bad, 3, rtol=1e-4)
    with pytest.raises(C.CheckFailed, match="engines disagree"):
        C.assert_close("x", np.array([1e-30, 2e-30]), np.array([1e-30, 3e-30]), rtol=1e-4)


def test_breakdown_runs():
    """benchmarks/breakdown.py (the per-op cost table) still runs."""
    proc = subprocess.run([sys.executable, os.path.join(BENCH, "breakdown.py"), "--quick"], capture_output=True,
                          text=True, timeout=300, cwd=ROOT, env={**os.environ, "PYTHONPATH": os.path.join(ROOT, "src")})
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "| add |" in proc.stdout and "tapegrad backward/node" in proc.stdout


def test_scripts_run_alone():
    """Each workload script is runnable on its own (W2 as the example: --quick --json)."""
    proc = subprocess.run([sys.executable, os.path.join(BENCH, "w2_small_ops.py"), "--quick", "--json"],
                          capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    res = json.loads(proc.stdout)
    assert res["workload"] == "W2" and res["checks_passed"] and res["checks"]


def test_merge_keeps_other_rows_and_rerender(tmp_path, torch):
    out = tmp_path / "RESULTS.md"
    run = lambda *a: subprocess.run([sys.executable, os.path.join(BENCH, "run.py"), "--quick", "--write", "--out",
                                     str(out), *a], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert run("--only", "W2").returncode == 0
    proc = run("--only", "W7", "--merge")
    assert proc.returncode == 0, proc.stderr[-3000:]
    data = json.loads((tmp_path / "results.json").read_text())
    assert [r["workload"] for r in data["results"]] == ["W2", "W7"]
    assert "rows W7@1 rerun" in data["machine"]["merged"]
    out.unlink()
    proc = subprocess.run([sys.executable, os.path.join(BENCH, "run.py"), "--rerender", "--out", str(out)],
                          capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    text = out.read_text()
    assert "| W2 | 1 |" in text and "| W7 | 1 |" in text and "--only W7 --merge" in text
