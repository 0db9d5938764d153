"""tapegrad.profiler against torch.profiler: what is recorded (op names, backward nodes, record_function ranges,
counts), the schedule's actions, the summary table's columns, the chrome trace, the older autograd.profiler."""

import json
import warnings

import pytest

import tapegrad
import tapegrad.nn as nn
from tapegrad.profiler import ProfilerAction, profile, record_function, schedule


def _step(model, x):
    loss = model(x).sum()
    loss.backward()
    return loss


def _model():
    tapegrad.manual_seed(0)
    return nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))


def test_ops_backward_nodes_and_ranges_are_recorded():
    m, x = _model(), tapegrad.randn(5, 8)
    with profile(record_shapes=True) as prof:
        with record_function("my_step"):
            _step(m, x)
    names = {e.key: e.count for e in prof.key_averages()}
    assert names["my_step"] == 1
    assert names["aten::addmm"] == 2 and names["aten::relu"] == 1 and names["aten::sum"] >= 1
    assert names["autograd::engine::evaluate_function: AddmmBackward0"] == 2
    assert names["autograd::engine::evaluate_function: AccumulateGrad"] == 4
    step = next(e for e in prof.events() if e.name == "my_step")
    assert step.cpu_time_total >= sum(c.cpu_time_total for c in step.cpu_children) >= 0
    assert {c.name for c in step.cpu_children} >= {"aten::addmm", "aten::relu"}
    addmm = next(e for e in prof.events() if e.name == "aten::addmm")
    assert addmm.input_shapes == [[16], [5, 8], [16, 8]]
    # the gradients are the ones an unprofiled step gives
    g = [p.grad.clone() for p in m.parameters()]
    m.zero_grad()
    _step(m, x)
    assert all(bool((a == p.grad).all()) for a, p in zip(g, m.parameters()))


def test_nothing_is_recorded_outside_and_the_hooks_come_off():
    from tapegrad.autograd import engine
    from tapegrad.autograd.function import active_interpreters
    m, x = _model(), tapegrad.randn(2, 8)
    with profile() as prof:
        pass
    assert len(prof.events()) == 0
    assert not engine._observers and not active_interpreters()
    with record_function("outside"):          # no profile: nothing happens
        _step(m, x)


def test_table_has_torchs_columns_and_sorts():
    m, x = _model(), tapegrad.randn(5, 8)
    with profile() as prof:
        _step(m, x)
    table = prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=3)
    lines = table.splitlines()
    assert lines[1].split() == ["Name", "Self", "CPU", "%", "Self", "CPU", "CPU", "total", "%", "CPU", "total",
                                "CPU", "time", "avg", "#", "of", "Calls"]
    assert len(lines) == 3 + 3 + 1 + 1 and lines[-1].startswith("Self CPU time total: ")
    rows = list(prof.key_averages())
    top = sorted(rows, key=lambda r: r.self_cpu_time_total, reverse=True)[0]
    assert lines[3].split()[0] == top.key.split()[0]
    with pytest.raises(AttributeError):
        prof.key_averages().table(sort_by="no_such_column")
    prof.key_averages().table(sort_by="cuda_time_total")      # (nothing measured: kept in order)


def test_schedule_actions_match_torch(torch):
    for kw in (dict(wait=1, warmup=1, active=2), dict(wait=0, warmup=0, active=1, repeat=2),
               dict(wait=2, warmup=1, active=3, repeat=1, skip_first=2)):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            ours = [schedule(**kw)(i).name for i in range(14)]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            theirs = [torch.profiler.schedule(**kw)(i).name for i in range(14)]
        assert ours == theirs, kw
        assert bool(w) == (kw["warmup"] == 0)          # (torch's warning: no warm-up step)


def test_schedule_saves_each_active_cycle():
    traces = []
    m, x = _model(), tapegrad.randn(2, 8)
    with profile(schedule=schedule(wait=1, warmup=1, active=2, repeat=2),
                 on_trace_ready=lambda p: traces.append(len(p.events()))) as prof:
        for _ in range(9):
            _step(m, x)
            prof.step()
    assert len(traces) == 2 and all(n > 0 for n in traces)
    assert prof.schedule(3) is ProfilerAction.RECORD_AND_SAVE


@pytest.mark.filterwarnings("ignore:Warning. Profiler clears events at the end of each cycle")     # (torch's)
@pytest.mark.parametrize("n_steps", range(2, 9))
def test_trace_ready_on_exit_only_while_recording(torch, n_steps):
    # leaving the profiler during a wait or warm-up step calls no on_trace_ready; during an active step it does
    def ready_steps(lib):
        got = []
        net, x = lib.nn.Linear(3, 2), lib.ones(1, 3)
        with lib.profiler.profile(schedule=lib.profiler.schedule(wait=1, warmup=1, active=2),
                                  on_trace_ready=lambda p: got.append(p.step_num)) as prof:
            for _ in range(n_steps):
                net(x)
                prof.step()
        return got
    assert ready_steps(tapegrad) == ready_steps(torch)


def test_chrome_trace_and_tensorboard_handler(tmp_path):
    m, x = _model(), tapegrad.randn(2, 8)
    with profile() as prof:
        _step(m, x)
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    data = json.loads(path.read_text())
    assert {e["name"] for e in data["traceEvents"]} >= {"aten::addmm", "aten::relu"}
    assert all(e["ph"] == "X" and e["dur"] >= 0 for e in data["traceEvents"])
    handler = tapegrad.profiler.tensorboard_trace_handler(str(tmp_path / "tb"), worker_name="w")
    handler(prof)
    files = list((tmp_path / "tb").iterdir())
    assert len(files) == 1 and files[0].name.startswith("w.") and files[0].name.endswith(".pt.trace.json")


def test_autograd_profiler_spelling():
    m, x = _model(), tapegrad.randn(2, 8)
    with tapegrad.autograd.profiler.profile() as prof:
        with tapegrad.autograd.profiler.record_function("r"):
            _step(m, x)
    assert "aten::addmm" in prof.table()
    with tapegrad.autograd.profiler.profile(enabled=False) as off:
        _step(m, x)
    assert len(off.events()) == 0


def test_op_names_follow_torch(torch):
    from tapegrad.profiler._profile import op_name
    from tapegrad.ops.elementwise.activations import Relu
    from tapegrad.ops.nn_ops.linear import _Addmm
    assert op_name(_Addmm) == "aten::addmm" and op_name(Relu) == "aten::relu"
    with torch.profiler.profile() as tp:
        torch.relu(torch.ones(2)).sum()
    theirs = {e.key for e in tp.key_averages()}
    with profile() as p:
        tapegrad.relu(tapegrad.ones(2)).sum()
    ours = {e.key for e in p.key_averages()}
    assert {"aten::relu", "aten::sum"} <= ours & theirs


def _masked(table):
    import re
    return re.sub(r" +\d+\.\d+(%|us|ms|s)", " T", table).splitlines()   # (times: their width varies)


@pytest.mark.parametrize("kw", [dict(sort_by="count", row_limit=2), dict(row_limit=0, header="HEAD", time_unit="ms"),
                                dict(max_name_column_width=10, top_level_events_only=True), dict(row_limit=-1)])
def test_table_layout_is_torchs(torch, kw):
    # the autogradyt tutorial prints this table: the same widths, header and row rules as torch's
    # (the ops themselves differ: torch also records its internal calls, so only ops both record are profiled)
    tables = []
    for mod in (torch, tapegrad):
        x, y = mod.randn(2, 3, requires_grad=True), mod.rand(2, 3, requires_grad=True)
        with mod.autograd.profiler.profile() as prf:
            for _ in range(3):
                (x / y) * y
        tables.append(_masked(prf.key_averages().table(**kw)))
    assert tables[1] == tables[0]
