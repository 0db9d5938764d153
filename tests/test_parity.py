"""The PyTorch parity runner (``python -m tapegrad.parity``): it agrees on the official-tutorial MLP script, finds
the first diverging line/value, reports exceptions, resolves every ``torch.*`` import to tapegrad (and the reverse
for scripts written with ``import tapegrad as torch``), and exits 0/1/2."""

import os
import subprocess
import sys
import textwrap

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


def test_the_same_exception_in_both_runs_agrees(tmp_path, torch):
    path = script(tmp_path, "both.py", """
        import torch
        print(torch.tensor([1.0, 2.0]).sum().item())
        assert torch.ones(2).sum().item() == 3, "two, not three"
    """)
    r = parity.run(path)
    assert r.agree, r.report()
    assert r.torch.exception["type"] == r.tapegrad.exception["type"] == "AssertionError"
    assert "both raised AssertionError" in r.report()

    path = script(tmp_path, "both_differently.py", """
        import torch
        if type(torch.ones(1)).__module__.startswith("tapegrad"):
            raise ValueError("tapegrad's error")
        raise KeyError("torch's error")
    """)
    r = parity.run(path)
    assert r.divergence.kind == "exception" and "both runs failed, differently" in r.divergence.message
    assert "KeyError" in r.divergence.message and "ValueError: tapegrad's error" in r.divergence.message


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
    assert r.torch is None and not r.agree and r.exit_code == 0
    report = r.report()
    assert "torch is not installed" in report and "value 3.5" in report
    # the command line, with torch hidden from this interpreter
    hide = ("import importlib.abc, sys\n"
            "class _NoTorch(importlib.abc.MetaPathFinder):\n"
            "    def find_spec(self, name, path=None, target=None):\n"
            "        if name == 'torch' or name.startswith('torch.'): raise ModuleNotFoundError(name)\n"
            "sys.meta_path.insert(0, _NoTorch())\n")
    out = cli(path, pre=hide)
    assert out.returncode == 0 and "torch is not installed" in out.stdout and "value 3.5" in out.stdout


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


def test_timeout_is_reported(tmp_path):
    path = script(tmp_path, "slow.py", "import time\nprint(1)\ntime.sleep(30)\n")
    r = parity.run(path, with_torch=False, timeout=3)
    assert not r.tapegrad.ok and r.tapegrad.exception["type"] == "TimeoutError" and r.exit_code == 1
