"""tapegrad.utils.benchmark against torch.utils.benchmark: Measurements built from fixed times print, summarize
and compare exactly as torch's; Timer runs statements as torch's Timer does (structure only, no speed asserted)."""

import pickle
import random
import re
import sys

import pytest
import torch.utils.benchmark as tb

import tapegrad
import tapegrad.utils.benchmark as B


def _pair(number, times, **spec):
    spec.setdefault("stmt", "x + y")
    spec.setdefault("setup", "pass")
    return (B.Measurement(number, list(times), B.TaskSpec(**spec)),
            tb.Measurement(number, list(times), tb.TaskSpec(**spec)))


def _text(m):
    return re.sub(r"0x[0-9a-f]+", "0x?", repr(m))


SPECS = [dict(), dict(label="add", sub_label="float", description="n=4"), dict(stmt="a = x\nb = a * 2"),
         dict(stmt="a = x\nb = a * 2", sub_label="twice", setup="x = 1\ny = 2", description="big"),
         dict(setup="x = torch.ones(3)", num_threads=4), dict(label="L", num_threads=2, env="env A")]
TIMES = [[2.5e-4], [1e-6, 1.2e-6], [3.1e-3, 2.9e-3, 3.0e-3], [5e-5, 5.1e-5, 4.9e-5, 5.05e-5],
         [1e-2 * (1 + 0.3 * ((i * 7) % 5 - 2) / 2) for i in range(9)],              # noisy: a gross warning
         [7e-8 * (1 + 0.08 * ((i * 3) % 4 - 1.5)) for i in range(12)], [42.0, 43.0, 41.0, 44.5]]


@pytest.mark.parametrize("spec", SPECS)
@pytest.mark.parametrize("times", TIMES)
def test_measurement_prints_and_summarizes_as_torch(spec, times):
    ours, theirs = _pair(100, times, **spec)
    assert _text(ours) == _text(theirs)
    assert _text(ours).startswith("<torch.utils.benchmark.utils.common.Measurement object at 0x")
    assert ours.median == theirs.median and ours.iqr == theirs.iqr
    assert ours.mean == pytest.approx(theirs.mean, rel=1e-14)
    assert ours.times == theirs.times and ours.raw_times == theirs.raw_times
    assert ours.significant_figures == theirs.significant_figures
    assert ours.has_warnings == theirs.has_warnings
    assert ours.meets_confidence(0.05) == theirs.meets_confidence(0.05)
    assert (ours.title, ours.env, ours.as_row_name, ours.num_threads, ours.label) == \
        (theirs.title, theirs.env, theirs.as_row_name, theirs.num_threads, theirs.label)


def test_measurement_printed_form():
    m, _ = _pair(100, [5.73e-4, 4.01e-4, 6.26e-4, 5.5e-4, 7.9e-4], label="Broadcasting add (4x8)")
    lines = _text(m).splitlines()
    assert lines == ["<torch.utils.benchmark.utils.common.Measurement object at 0x?>",
                     "Broadcasting add (4x8)",
                     "  Median: 5.73 us",
                     "  IQR:    0.76 us (5.50 to 6.26)",
                     "  5 measurements, 100 runs per measurement, 1 thread",
                     "  WARNING: Interquartile range is 13.3% of the median measurement.",
                     "           This could indicate system fluctuation."]


def test_units_and_trimming_agree_with_torch():
    values = [3.14159, 123.456, 1.23456e-4, 9.99e-7, 1e-6, 1e-3, 5.5, 0.999e-9, 1e-9, 2.5e-8, 1000.0, 0.5]
    for v in values:
        assert B.select_unit(v) == tb.select_unit(v), v
        for n in (1, 2, 3, 4):
            assert B.trim_sigfig(v, n) == tb.trim_sigfig(v, n), (v, n)
    assert B.unit_to_english("us") == "microsecond"
    with pytest.raises(AssertionError, match="Number of significant figures must be an integer"):
        B.trim_sigfig(1.0, 1.5)


def test_merge_pools_replicates():
    a, _ = _pair(10, [1e-3, 2e-3], label="x")
    b, _ = _pair(100, [1e-2], label="x")
    c, _ = _pair(10, [5e-3], label="y")
    merged = B.Measurement.merge([a, b, c])
    assert [m.label for m in merged] == ["x", "y"]
    assert merged[0].number_per_run == 1 and merged[0].raw_times == pytest.approx([1e-4, 2e-4, 1e-4])
    assert pickle.loads(pickle.dumps(a)).median == a.median


def _grid(seed, *, envs=(None,), threads=(1, 4), missing=True):
    """Pairs of measurements over labels x threads x envs x sub-labels x descriptions, from seeded times."""
    rng = random.Random(seed)
    ours, theirs = [], []
    for label in ("add", "matmul"):
        for num_threads in threads:
            for env in envs:
                for sub in ("float", "int", None):
                    for desc in ("n=1", "n=64", "n=1024"):
                        if missing and rng.random() < 0.15:
                            continue
                        base = 10 ** rng.uniform(-8, -1)
                        noise = rng.choice([0.001, 0.05, 0.2, 0.5])
                        times = [base * 100 * (1 + noise * rng.uniform(-1, 1)) for _ in range(rng.choice([1, 3, 8]))]
                        o, t = _pair(100, times, stmt="a @ b" if sub else "x + y", label=label, sub_label=sub,
                                     description=desc, num_threads=num_threads, env=env)
                        ours.append(o)
                        theirs.append(t)
    return ours, theirs


@pytest.mark.parametrize("options", [(), ("trim",), ("color",), ("rowwise",), ("warn",), ("trim", "warn", "color"),
                                     ("trim", "rowwise")])
@pytest.mark.parametrize("seed", [0, 1])
def test_compare_prints_torchs_tables(options, seed):
    ours, theirs = _grid(seed)
    tables = []
    for cls, ms in ((B.Compare, ours), (tb.Compare, theirs)):
        c = cls(ms)
        if "trim" in options:
            c.trim_significant_figures()
        if "color" in options:
            c.colorize()
        if "rowwise" in options:
            c.colorize(rowwise=True)
        if "warn" in options:
            c.highlight_warnings()
        tables.append(str(c))
    assert tables[0] == tables[1]
    assert "[" in tables[0] and "Times are in " in tables[0] and "1 threads: ---" in tables[0]


def test_compare_with_envs_and_replicates_as_torch():
    ours, theirs = _grid(3, envs=("A", "Bee"), threads=(1,), missing=False)
    more_ours, more_theirs = _grid(3, envs=("A", "Bee"), threads=(1,), missing=False)   # replicates: pooled
    assert str(B.Compare(ours + more_ours)) == str(tb.Compare(theirs + more_theirs))
    assert "(Bee)" in str(B.Compare(ours))


def test_compare_layout_by_hand(capsys):
    ms = [_pair(1, [t * 1e-6] * 3, label="relu", sub_label=s, description=d)[0]
          for s, d, t in [("float", "n=1", 1.5), ("float", "n=8", 12.25), ("int", "n=1", 2.0)]]
    B.Compare(ms).print()
    assert capsys.readouterr().out == ("[---------- relu ----------]\n"
                                       "             |  n=1  |  n=8 \n"
                                       "1 threads: -----------------\n"
                                       "      float  |  1.5  |  12.2\n"
                                       "      int    |  2.0  |      \n"
                                       "\n"
                                       "Times are in microseconds (us).\n\n")


def test_compare_errors_and_no_description():
    with pytest.raises(ValueError) as ours:
        B.Compare([1.0])
    with pytest.raises(ValueError) as theirs:
        tb.Compare([1.0])
    assert str(ours.value) == str(theirs.value)
    # torch fails on a measurement without a description (len(None)); tapegrad prints an unnamed column
    m, _ = _pair(10, [1e-3, 1.1e-3], label="nodesc")
    assert "nodesc" in str(B.Compare([m])) and "x + y" in str(B.Compare([m]))


# --- Timer -----------------------------------------------------------------------------------------------------
def test_timer_runs_the_statement_with_setup_and_globals():
    calls = []
    t = B.Timer("f(x); y.append(1)", setup="y = []", globals={"f": calls.append, "x": 7}, label="L",
                sub_label="s", description="d")
    m = t.timeit(50)
    assert isinstance(m, B.Measurement) and m.number_per_run == 50 and len(m.raw_times) == 1
    assert calls == [7] * (2 + 50)                                   # warm-up of max(50 // 100, 2), then 50
    assert (m.label, m.sub_label, m.description, m.stmt) == ("L", "s", "d", "f(x); y.append(1)")
    assert "50 runs ," in repr(m) and "1 measurement," in repr(m)


def test_timer_binds_torch_to_tapegrad_and_dedents():
    seen = []
    t = B.Timer("""
        seen.append(torch)
        z = x + 1
    """, setup="x = torch.ones(3)", globals={"seen": seen})
    t.timeit(3)
    assert seen[0] is tapegrad
    assert t._task_spec.stmt == "seen.append(torch)\nz = x + 1"


def test_blocked_and_adaptive_autorange():
    blocks = []
    m = B.Timer("sum(range(50))").blocked_autorange(callback=lambda n, s: blocks.append((n, s)), min_run_time=0.02)
    assert m.number_per_run in [10 ** k for k in range(10)]
    assert sum(m.raw_times) >= 0.02 and blocks == [(m.number_per_run, t) for t in m.raw_times]
    assert m.median > 0 and m.iqr >= 0
    m = B.Timer("sum(range(50))").adaptive_autorange(threshold=0.5, min_run_time=0.01, max_run_time=0.5)
    assert len(m.raw_times) > 3 or sum(m.raw_times) > 0.5
    print(B.Compare([m]))


def test_timer_errors_are_torchs():
    for call in (lambda T: T("pass").repeat(), lambda T: T("pass").autorange(),
                 lambda T: T("pass", global_setup="#include <x>"), lambda T: T(lambda: 1),
                 lambda T: T("pass", language="fortran")):
        with pytest.raises(Exception) as ours:
            call(B.Timer)
        with pytest.raises(Exception) as theirs:
            call(tb.Timer)
        assert (type(ours.value), str(ours.value)) == (type(theirs.value), str(theirs.value))
    with pytest.raises(NotImplementedError, match="no C\\+\\+ frontend"):
        B.Timer("x", language="cpp")


def test_num_threads_sets_blas_threads_while_measuring():
    threadpoolctl = pytest.importorskip("threadpoolctl")

    def blas_threads():
        return [i["num_threads"] for i in threadpoolctl.threadpool_info() if i["user_api"] == "blas"]
    if not blas_threads():
        pytest.skip("no BLAS library loaded")
    before = blas_threads()
    seen = []
    B.Timer("seen.append(count())", globals={"seen": seen, "count": blas_threads}, num_threads=2).timeit(2)
    assert seen and all(c == [2] * len(before) for c in seen)
    assert blas_threads() == before


def test_num_threads_without_threadpoolctl_says_it_cannot(monkeypatch):
    from tapegrad.utils.benchmark.utils import common
    monkeypatch.setitem(sys.modules, "threadpoolctl", None)
    monkeypatch.setattr(common.set_torch_threads, "_warned", False)
    with pytest.warns(RuntimeWarning, match="cannot set the number of threads to 2: that needs threadpoolctl"):
        m = B.Timer("pass", num_threads=2).timeit(10)
    assert "2 threads" in repr(m)


def test_benchmark_is_reachable_as_torch_utils_benchmark():
    assert tapegrad.utils.benchmark is B
    from tapegrad.utils.benchmark.utils.common import Measurement
    assert Measurement is B.Measurement
