"""The PyTorch parity runner (``python -m tapegrad.parity``): it agrees on the official-tutorial MLP script, finds
the first diverging line/value, reports exceptions, resolves every ``torch.*`` import to tapegrad (and the reverse
for scripts written with ``import tapegrad as torch``), and exits 0/1/2."""

import os
import subprocess
import sys
import textwrap
import time

import pytest

from tapegrad import parity

ROOT = os.path.join(os.path.dirname(__file__), "..")
SRC = os.path.join(ROOT, "src")
TUTORIAL = os.path.join(ROOT, "examples", "pytorch_tutorial_mlp.py")


def script(tmp_path, name, body):
    path = tmp_path / name
    path.write_text(textwrap.dedent(body))
    return str(path)


def cli(*args, env_extra=None, pre=""):
    """Run `python -m tapegrad.parity ARGS` (optionally after `pre` code, e.g. hiding torch)."""
    code = pre + "import sys; from tapegrad.parity import main; sys.exit(main(sys.argv[1:]))"
    env = {**os.environ, "PYTHONPATH": os.path.abspath(SRC), **(env_extra or {})}
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=env, timeout=300)


# --- the number comparison -----------------------------------------------------------------------------------
def test_extract_numbers_skips_names_and_addresses():
    line = "loss: 0.035613  [ 3264/ 6000] tensor([1., -2.5e-03]) torch.float32 <AddBackward0 object at 0x7fab12>"
    assert parity.extract_numbers(line) == [0.035613, 3264.0, 6000.0, 1.0, -2.5e-3]
    assert parity.extract_numbers("nan inf -inf information") == pytest.approx([float("nan"), float("inf"),
                                                                               float("-inf")], nan_ok=True)


def test_printed_resolution_allows_one_unit_in_the_last_digit():
    nums = parity._printed_numbers("0.035613 64 2. 3.2e-05 1e-5")
    assert nums == [(0.035613, 1e-6), (64.0, 0.0), (2.0, 0.0), (3.2e-05, pytest.approx(1e-6)), (1e-5, 1e-5)]
    assert parity._close(0.035614, 0.035613, 1e-5, 0.0, 1e-6)       # values 1e-9 apart can print one digit apart
    assert not parity._close(0.035615, 0.035613, 1e-5, 0.0, 1e-6)
    assert not parity._close(65.0, 64.0, 1e-5, 0.0, 0.0)             # integers are exact
    assert parity._close(float("nan"), float("nan"), 1e-5, 0.0)
    assert not parity._close(float("inf"), float("-inf"), 1e-5, 0.0)


def test_compare_finds_the_first_diverging_value_and_line():
    a = parity.RunOutput("torch", "header\nloss 1.000000\nloss 0.500000 acc 10\nloss 0.25\n", "", 0)
    b = parity.RunOutput("tapegrad", "header (tapegrad)\nloss 1.000001\nloss 0.500000 acc 11\nloss 0.25\n", "", 0)
    div, n, lines, text = parity.compare(a, b, rtol=1e-5)
    assert div.kind == "value" and div.torch_lineno == 3 and div.tapegrad_lineno == 3
    assert (div.torch_value, div.tapegrad_value) == (10.0, 11.0) and "value #2" in div.message
    assert n == 1 and lines == 1
    div, *_ = parity.compare(a, b, rtol=1e-5, ignore=["acc"])
    assert div is None
    # the text around the numbers only matters with compare_text
    c = parity.RunOutput("tapegrad", "header\nLOSS 1.0\nloss 0.5 acc 10\nloss 0.25\n", "", 0)
    div, n, lines, text = parity.compare(a, c)
    assert div is None and n == 4 and text and text[0][0] == 2
    div, *_ = parity.compare(a, c, compare_text=True)
    assert div.kind == "text" and div.torch_lineno == 2


# --- whole runs ----------------------------------------------------------------------------------------------
def test_tutorial_mlp_gives_torchs_loss_curve(torch):
    r = parity.run(TUTORIAL, ["--fast"])
    assert r.torch_available and r.agree, r.report()
    assert r.exit_code == 0 and r.divergence is None
    losses = [line for line in r.tapegrad.stdout.splitlines() if line.startswith("loss:")]
    assert len(losses) == 4 and r.numbers_compared > 50
    # the same model printout (torch's repr) and the same loss curve to 1e-5
    assert "(linear_relu_stack): Sequential(" in r.tapegrad.stdout
    ours = [parity.extract_numbers(line)[0] for line in losses]
    theirs = [parity.extract_numbers(line)[0] for line in r.torch.stdout.splitlines() if line.startswith("loss:")]
    assert ours == pytest.approx(theirs, rel=1e-5)
    assert "AGREE" in r.report() and "pytorch_tutorial_mlp.py" in r.report()


def test_detects_a_divergence(tmp_path, torch):
    path = script(tmp_path, "diverge.py", """
        import torch
        x = torch.arange(4.0)
        print("sum", x.sum().item())
        drift = 1e-3 if type(x).__module__.startswith("tapegrad") else 0.0
        print("mean", x.mean().item() + drift, "max", x.max().item())
        print("done")
    """)
    r = parity.run(path)
    assert not r.agree and r.exit_code == 1
    d = r.divergence
    assert d.kind == "value" and d.torch_lineno == 2 and d.tapegrad_lineno == 2
    assert d.torch_value == 1.5 and d.tapegrad_value == pytest.approx(1.501)
    report = r.report()
    assert "DIVERGE" in report and "mean 1.5 max 3.0" in report and "mean 1.501 max 3.0" in report
    assert r.numbers_compared == 1      # "sum 6.0" agreed before
    # a looser tolerance accepts it
    assert parity.run(path, rtol=1e-2).agree


def test_reports_an_exception(tmp_path, torch):
    path = script(tmp_path, "raises.py", """
        import torch
        print("a", torch.ones(2).sum().item())
        if type(torch.ones(1)).__module__.startswith("tapegrad"):
            raise ValueError("only in tapegrad")
        print("b", 2.5)
    """)
    r = parity.run(path)
    assert not r.agree and r.exit_code == 1
    assert r.tapegrad.exception["type"] == "ValueError" and r.tapegrad.exception["line"] == 5
    assert r.torch.ok
    d = r.divergence
    assert d.kind == "lines" and d.torch_line == "b 2.5" and d.tapegrad_line is None
    report = r.report()
    assert "ValueError: only in tapegrad at script line 5" in report
    assert "Traceback" in report            # the tapegrad run's stderr is shown

    # an exception after the last number is still a divergence
    path = script(tmp_path, "raises_late.py", """
        import torch
        print(torch.ones(2).sum().item())
        if type(torch.ones(1)).__module__.startswith("tapegrad"):
            torch.ones(2) @ torch.ones(3)
    """)
    r = parity.run(path)
    assert r.divergence.kind == "exception" and "the tapegrad run raised RuntimeError" in r.divergence.message


def test_the_same_exception_in_both_runs_is_not_agreement(tmp_path, torch):
    path = script(tmp_path, "both.py", """
        import torch
        print(torch.tensor([1.0, 2.0]).sum().item())
        assert torch.ones(2).sum().item() == 3, "two, not three"
    """)
    r = parity.run(path)
    assert not r.agree and r.outcome == "same-error" and r.exit_code == 4, r.report()
    assert r.torch.exception["type"] == r.tapegrad.exception["type"] == "AssertionError"
    report = r.report()
    assert "SAME ERROR" in report and "AssertionError: two, not three" in report and "1 numbers" in report

    path = script(tmp_path, "both_differently.py", """
        import torch
        if type(torch.ones(1)).__module__.startswith("tapegrad"):
            raise ValueError("tapegrad's error")
        raise KeyError("torch's error")
    """)
    r = parity.run(path)
    assert r.divergence.kind == "exception" and "both runs failed, differently" in r.divergence.message
    assert "KeyError" in r.divergence.message and "ValueError: tapegrad's error" in r.divergence.message


def test_an_error_that_names_its_op_first_is_the_same_error(tmp_path, torch):
    # tapegrad's op errors may say "conv2d: <torch's message>" (ops._util.op_error): still the same failure
    path = script(tmp_path, "op_named.py", """
        import torch
        print(torch.ones(2).sum().item())
        torch.nn.functional.conv2d(torch.ones(1, 1, 3, 3, dtype=torch.float64), torch.ones(1, 1, 2, 2))
    """)
    r = parity.run(path)
    assert r.outcome == "same-error" and not r.agree, r.report()
    path = script(tmp_path, "op_named_other.py", """
        import torch
        if type(torch.ones(1)).__module__.startswith("tapegrad"):
            raise RuntimeError("conv2d: expected scalar type Double but found Float")
        raise RuntimeError("expected scalar type Float but found Double")
    """)
    assert parity.run(path).divergence.kind == "exception"


def test_every_torch_import_form_resolves_to_tapegrad(tmp_path):
    path = script(tmp_path, "imports.py", """
        import torch
        import torch.nn as nn
        import torch.nn.functional as F
        from torch import optim
        from torch.utils.data import DataLoader, TensorDataset
        from torch.optim.lr_scheduler import StepLR
        import torch.autograd
        print(torch.__name__, nn.__name__, F.__name__, optim.__name__, DataLoader.__module__, StepLR.__module__)
        print(torch.nn is nn, torch.optim is optim, torch.autograd.grad.__module__)
        ds = TensorDataset(torch.arange(6.0).reshape(3, 2))
        print([b[0].sum().item() for b in DataLoader(ds, batch_size=2)])
        import sys
        print(sys.argv[1:])
    """)
    r = parity.run(path, ["--flag", "x"], with_torch=False)
    out = r.tapegrad.stdout.splitlines()
    assert r.tapegrad.ok, r.tapegrad.stderr
    assert out[0] == ("tapegrad tapegrad.nn tapegrad.nn.functional tapegrad.optim tapegrad.utils.data.dataloader "
                      "tapegrad.optim.lr_scheduler")
    assert out[1].startswith("True True tapegrad.autograd")
    assert out[2] == "[6.0, 9.0]" and out[3] == "['--flag', 'x']"


def test_processes_the_run_spawns_get_the_same_torch(tmp_path):
    # multiprocessing's spawn method starts a fresh interpreter: the stand-in must hold there too (mnist_hogwild's
    # training processes, DataLoader workers under spawn), before it unpickles the arguments or imports the script
    path = script(tmp_path, "spawned.py", """
        import torch
        import torch.multiprocessing as mp

        def child(q, t):
            q.put((torch.__name__, type(t).__module__, (t * 2).sum().item()))

        if __name__ == "__main__":
            ctx = mp.get_context("spawn")
            q = ctx.Queue()
            p = ctx.Process(target=child, args=(q, torch.ones(3)))
            p.start()
            print(q.get(timeout=60))
            p.join()
    """)
    r = parity.run(path, with_torch=False, timeout=120)
    assert r.tapegrad.ok, r.tapegrad.stderr
    assert r.tapegrad.stdout.strip() == "('tapegrad', 'tapegrad', 6.0)"      # (torch.Tensor's module is torch)


def test_a_torch_module_tapegrad_lacks_is_named(tmp_path):
    path = script(tmp_path, "lacks.py", "import torch\nprint(1.0)\nimport torch.no_such_module\n")
    r = parity.run(path, with_torch=False)
    e = r.tapegrad.exception
    assert e["type"] == "ModuleNotFoundError" and e["line"] == 3
    assert "tapegrad stands in for torch in this run and has no 'tapegrad.no_such_module'" in e["message"]


def test_scripts_written_for_tapegrad_run_on_real_torch(tmp_path, torch):
    # `import tapegrad as torch` (the examples' style) resolves to real torch in the torch run; tapegrad-only
    # helpers (tapegrad.demo) still load from tapegrad's sources
    path = script(tmp_path, "tg_style.py", """
        import tapegrad as torch
        from tapegrad import nn
        from tapegrad.demo import load_data
        print(torch.__name__, nn.__name__, callable(load_data), torch.ones(3).sum().item())
    """)
    r = parity.run(path)
    assert r.agree, r.report()
    assert r.torch.stdout.split()[:3] == ["torch", "torch.nn", "True"]
    assert r.tapegrad.stdout.split()[:3] == ["tapegrad", "tapegrad.nn", "True"]


def test_nothing_leaks_into_the_caller(tmp_path):
    before_meta, had_torch = list(sys.meta_path), "torch" in sys.modules
    path = script(tmp_path, "ok.py", "import torch\nprint(torch.ones(1).item())\n")
    r = parity.run(path, with_torch=False)
    assert r.tapegrad.stdout == "1.0\n"
    assert sys.meta_path == before_meta and ("torch" in sys.modules) == had_torch
    if had_torch:
        assert not sys.modules["torch"].__name__.startswith("tapegrad")


def test_without_torch_only_the_tapegrad_run_happens(tmp_path):
    path = script(tmp_path, "solo.py", "import torch\nprint('value', torch.tensor([1.5, 2.0]).sum().item())\n")
    r = parity.run(path, with_torch=False)
    assert r.torch is None and not r.agree and r.outcome == "tapegrad-only" and r.exit_code == 6
    report = r.report()
    assert "TAPEGRAD ONLY" in report and "torch is not installed" in report and "value 3.5" in report
    # the command line, with torch hidden from this interpreter
    hide = ("import importlib.abc, sys\n"
            "class _NoTorch(importlib.abc.MetaPathFinder):\n"
            "    def find_spec(self, name, path=None, target=None):\n"
            "        if name == 'torch' or name.startswith('torch.'): raise ModuleNotFoundError(name)\n"
            "sys.meta_path.insert(0, _NoTorch())\n")
    out = cli(path, pre=hide)
    assert out.returncode == 6 and "torch is not installed" in out.stdout and "value 3.5" in out.stdout
    # a failing tapegrad-only run is its own outcome
    failing = script(tmp_path, "solo_fails.py", "print(1.5)\nraise KeyError('no')\n")
    r = parity.run(failing, with_torch=False)
    assert r.outcome == "tapegrad-failed" and r.exit_code == 7 and "the tapegrad run failed: KeyError" in r.report()


def test_command_line_exit_codes(tmp_path, torch):
    same = script(tmp_path, "same.py", "import torch\nprint(torch.linspace(0, 1, 5))\n")
    differ = script(tmp_path, "differ.py", "import torch\nprint(torch.__name__.startswith('tapegrad') + 0.5)\n")
    out = cli(same)
    assert out.returncode == 0 and "AGREE" in out.stdout, out.stdout + out.stderr
    out = cli("--rtol", "0.1", differ)
    assert out.returncode == 1 and "DIVERGE" in out.stdout and "torch 0.5 vs tapegrad 1.5" in out.stdout
    out = cli(str(tmp_path / "missing.py"))
    assert out.returncode == 2 and "no such script" in out.stderr
    out = cli()
    assert out.returncode == 2 and "usage:" in out.stderr
    out = cli("--rtol", "-1", same)
    assert out.returncode == 2


def test_script_arguments_and_verbose_output(tmp_path, torch):
    path = script(tmp_path, "args.py", """
        import argparse, torch
        ap = argparse.ArgumentParser(); ap.add_argument("--n", type=int)
        print(torch.arange(ap.parse_args().n).sum().item())
    """)
    out = cli("-v", path, "--n", "5")     # options after the script belong to the script
    assert out.returncode == 0 and "--- torch stdout ---" in out.stdout and "  | 10" in out.stdout


def test_sequential_runs_each_read_back_their_own_file(tmp_path, torch):
    # a checkpoint written then read back: with sequential=True torch has finished before tapegrad starts
    path = script(tmp_path, "ckpt.py", """
        import os, time, torch
        start, mine = time.time(), f"{torch.__name__} {os.getpid()}"
        with open("shared.txt", "w") as f:
            f.write(mine)
        time.sleep(0.5)
        with open("shared.txt") as f:
            print("read back my own:", int(f.read() == mine))
        with open("log.txt", "a") as f:
            f.write(f"{torch.__name__} {start} {time.time()}\\n")
    """)
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        r = parity.run(path, timeout=120, sequential=True)
    finally:
        os.chdir(cwd)
    assert r.agree and r.torch.stdout == r.tapegrad.stdout == "read back my own: 1\n"
    (first, _, torch_end), (second, tapegrad_start, _) = [line.split() for line in
                                                          (tmp_path / "log.txt").read_text().splitlines()]
    assert (first, second) == ("torch", "tapegrad") and float(torch_end) <= float(tapegrad_start)
    out = cli("--sequential", str(tmp_path / "ckpt.py"), pre=f"import os; os.chdir({str(tmp_path)!r}); ")
    assert out.returncode == 0 and "AGREE" in out.stdout


def test_timeout_is_reported(tmp_path):
    path = script(tmp_path, "slow.py", "import time\nprint(1)\ntime.sleep(30)\n")
    r = parity.run(path, with_torch=False, timeout=3)
    assert not r.tapegrad.ok and r.tapegrad.timed_out and r.tapegrad.exception["type"] == "TimeoutError"
    assert r.outcome == "tapegrad-failed" and r.exit_code == 7
    assert "stopped after 3 s (--timeout)" in r.tapegrad.stderr


# --- never hang, never say "agree" falsely -----------------------------------------------------------------
# Scripts that import nothing of torch's run in the torch mode too (it only aliases `tapegrad` to `torch`), so
# these tests force both runs without needing torch. TAPEGRAD tells a script which run it is in.
WHICH = "import sys\nTAPEGRAD = any(getattr(f, 'src', None) == 'torch' for f in sys.meta_path)\n"


def _alive(pid):
    """Whether process `pid` runs (a zombie, dead but not yet reaped by its new parent, does not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return True


def _gone(pid, wait=5.0):
    end = time.monotonic() + wait
    while _alive(pid) and time.monotonic() < end:
        time.sleep(0.05)
    return not _alive(pid)


def leaves_a_child(tmp_path, name, then):
    """A script that starts a child process holding its stdout open (for 60 s), writes the child's pid, then runs
    `then`."""
    pids = tmp_path / f"{name}.pids"
    return script(tmp_path, name, f"""
        import subprocess, sys, time
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        with open({str(pids)!r}, "a") as f:
            print(child.pid, file=f)
        print("started", 1.5, flush=True)
        {then}
    """), pids


def warm_up(tmp_path, with_torch):
    """Start the warm servers of ``parity.run(..., warm=True)`` outside a test's clock (each imports its framework
    once, then forks the runs)."""
    assert parity.run(script(tmp_path, "warm_up.py", "print(1)\n"), with_torch=with_torch, warm=True).tapegrad.ok


@pytest.mark.skipif(os.name != "posix", reason="process groups are POSIX")
@pytest.mark.parametrize("warm", [False, True], ids=["cold", "warm"])
def test_a_child_left_running_does_not_stall_the_runner(tmp_path, warm):
    path, pids = leaves_a_child(tmp_path, "leaves.py", "print('done', 2.5)")
    if warm:
        warm_up(tmp_path, with_torch=False)
    start = time.monotonic()
    r = parity.run(path, with_torch=False, timeout=120, warm=warm)
    assert time.monotonic() - start < 20          # not the child's 60 s: its open stdout does not hold the runner
    assert r.tapegrad.ok and r.tapegrad.stdout == "started 1.5\ndone 2.5\n"
    assert all(_gone(int(p)) for p in pids.read_text().split()), "a child the script left running outlived the run"


@pytest.mark.skipif(os.name != "posix", reason="process groups are POSIX")
@pytest.mark.parametrize("warm", [False, True], ids=["cold", "warm"])
def test_timeout_holds_when_the_script_leaves_a_child_running(tmp_path, warm):
    path, pids = leaves_a_child(tmp_path, "hangs.py", "time.sleep(60)")
    if warm:
        warm_up(tmp_path, with_torch=False)
    start = time.monotonic()
    r = parity.run(path, with_torch=False, timeout=2, warm=warm)
    assert time.monotonic() - start < 12
    assert r.tapegrad.timed_out and r.outcome == "tapegrad-failed" and r.tapegrad.stdout == "started 1.5\n"
    (pid,) = map(int, pids.read_text().split())
    assert _gone(pid)


@pytest.mark.parametrize("warm", [False, True], ids=["cold", "warm"])
def test_two_hanging_runs_share_one_deadline(tmp_path, warm):
    path = script(tmp_path, "both_hang.py", "import time\nprint(0.5, flush=True)\ntime.sleep(60)\n")
    if warm:
        warm_up(tmp_path, with_torch=True)
    start = time.monotonic()
    r = parity.run(path, with_torch=True, timeout=4, warm=warm)
    elapsed = time.monotonic() - start
    assert elapsed < 7, elapsed                   # one deadline for both runs, not 4 s each in turn
    assert r.torch.timed_out and r.tapegrad.timed_out
    assert not r.agree and r.outcome == "timeout" and r.exit_code == 5
    report = r.report()
    assert "TIMEOUT" in report and "the torch and the tapegrad runs ran past --timeout" in report
    assert "1 numbers on 1 lines agreed before that" in report


@pytest.mark.parametrize("body,outcome,status,words", [
    ("print('x', 1.5)\n", "agree", 0, "AGREE"),
    ("print('x', 2.5 if TAPEGRAD else 1.5)\n", "diverge", 1, "value #1 on the line differs"),
    ("print('hello, no numbers here')\n", "nothing", 3, "NOTHING COMPARED"),
    ("print(1.5)\ndef broken(:\n", "same-error", 4, "SyntaxError"),
    ("print(1.5)\nraise ValueError('boom')\n", "same-error", 4, "ValueError: boom"),
    ("print(1.5)\nsys.exit(3)\n", "same-error", 4, "exit status 3"),
    ("print(1.5)\nsys.exit(4 if TAPEGRAD else 3)\n", "diverge", 1, "both runs failed, differently"),
    ("import time\nprint(1.5, flush=True)\nif TAPEGRAD: time.sleep(60)\n", "timeout", 5,
     "the tapegrad run ran past --timeout"),
    ("import time\nprint(2.5 if TAPEGRAD else 1.5, flush=True)\nif TAPEGRAD: time.sleep(60)\n", "diverge", 1,
     "value #1"),        # what both printed before the deadline already differs: a verdict
], ids=["agree", "value", "no-numbers", "syntax-error", "same-exception", "same-exit-status",
        "different-exit-status", "one-timed-out", "diverged-before-timeout"])
@pytest.mark.parametrize("warm", [False, True], ids=["cold", "warm"])
def test_each_outcome_has_its_own_exit_status(tmp_path, body, outcome, status, words, warm):
    path = script(tmp_path, "case.py", WHICH + body)
    r = parity.run(path, with_torch=True, timeout=4, warm=warm)
    assert r.outcome == outcome and r.exit_code == status == parity.EXIT_STATUS[outcome], r.report()
    assert r.agree == (outcome == "agree")
    assert words in r.report()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="warm runs are forked")
def test_warm_runs_are_forked_by_one_server_and_end_as_a_fresh_interpreter_does(tmp_path, monkeypatch):
    path = script(tmp_path, "probe.py", """
        import atexit, os, sys, threading, time
        print("run", sys.argv[1], os.environ["PYTEST_CURRENT_TEST"][-1], "parent", os.getppid())
        print("own group", int(os.getpgid(0) == os.getpid()), "stdin", len(sys.stdin.read()),
              "cwd", int(os.getcwd() == sys.argv[2]), "path", int(sys.path[0] == os.path.dirname(__file__)))
        threading.Thread(target=lambda: (time.sleep(0.2), print("thread", 1))).start()
        atexit.register(print, "atexit", 2)
    """)
    outs = []
    for k in (1, 2):
        monkeypatch.setenv("PYTEST_CURRENT_TEST", f"probe {k}")    # changes between tests: keeps the server
        r = parity.run(path, [k, os.getcwd()], with_torch=False, warm=True)
        assert r.tapegrad.ok, r.tapegrad.stderr
        outs.append(r.tapegrad.stdout.splitlines())
    (one, *rest1), (two, *rest2) = [[line.split() for line in out] for out in outs]
    assert one[:3] == ["run", "1", "1"] and two[:3] == ["run", "2", "2"]
    assert one[4] == two[4] != str(os.getpid())            # forked by the same server, not by this process
    assert rest1 == rest2 == [["own", "group", "1", "stdin", "0", "cwd", "1", "path", "1"], ["thread", "1"],
                              ["atexit", "2"]]
    monkeypatch.delattr(os, "fork")                         # no fork: a cold start, the same output
    r = parity.run(path, [3, os.getcwd()], with_torch=False, warm=True)
    cold = [line.split() for line in r.tapegrad.stdout.splitlines()]
    assert cold[0][4] == str(os.getpid()) and cold[1:] == rest1


def test_command_line_reports_the_outcome_as_exit_status(tmp_path, torch):
    path = script(tmp_path, "same_error.py", "import torch\nprint(torch.ones(2).sum().item())\nraise ValueError('x')\n")
    out = cli(path)
    assert out.returncode == 4 and "SAME ERROR" in out.stdout, out.stdout + out.stderr
    path = script(tmp_path, "quiet.py", "import torch\ntorch.ones(2)\n")
    out = cli(path)
    assert out.returncode == 3 and "NOTHING COMPARED" in out.stdout


@pytest.mark.parametrize("value", ["0", "-1", "nan", "soon"])
def test_a_timeout_that_is_not_positive_is_a_usage_error(tmp_path, value):
    path = script(tmp_path, "ok.py", "print(1.5)\n")
    out = cli("--timeout", value, path)
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert out.stderr.strip().splitlines()[-1] == (f"python -m tapegrad.parity: error: argument --timeout: expected a "
                                                   f"positive number of seconds, got {value!r}")
    with pytest.raises(ValueError, match="timeout must be a positive number of seconds"):
        parity.run(path, with_torch=False, timeout=float(value) if value != "soon" else value)


def test_aliased_modules_keep_their_own_spec(tmp_path, torch):
    """In the tapegrad run, ``torch.autograd`` is tapegrad's module: it keeps tapegrad's spec, so a lazy attribute
    (``torch.autograd.Variable``, imported on first use) raises no ImportWarning under ``simplefilter("always")``
    (a tutorial's warning setting printed two of them, which torch's run did not)."""
    path = script(tmp_path, "spec.py", """
        import warnings
        warnings.simplefilter("always")
        import torch
        import torch.autograd
        with warnings.catch_warnings(record=True) as caught:
            v = torch.autograd.Variable(torch.ones(2))
            print(v.sum().item(), torch.autograd.functional.jacobian(lambda x: x * 2, torch.ones(1)).item())
        print("import warnings", len([w for w in caught if w.category is ImportWarning]))
        print("parent agrees", int(torch.autograd.__spec__.parent == torch.autograd.__package__))
    """)
    r = parity.run(path)
    assert r.agree and r.numbers_compared == 4, r.report()
