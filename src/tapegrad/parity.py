"""The PyTorch parity runner: does tapegrad behave like PyTorch on *my* script?

``python -m tapegrad.parity SCRIPT.py [ARGS...]`` runs a script twice, at the same time, each in a fresh
subprocess:

* with real PyTorch (when it is installed), and
* with tapegrad standing in for ``torch``: every ``import torch``, ``import torch.nn as nn``,
  ``from torch.utils.data import DataLoader``, ``import torch.nn.functional as F`` ... resolves to tapegrad's module
  of the same name (an import hook in the child process; nothing leaks into the caller).

Scripts written the other way round (``import tapegrad as torch``, as tapegrad's examples are) work too: in the
torch run ``tapegrad`` resolves to ``torch``, except tapegrad-only helper modules (``tapegrad.demo`` ...), which
load from tapegrad's sources as they are.

Then it extracts every number both runs printed (line by line; ``0x...`` addresses and digits glued to names such
as ``float32`` or ``AddBackward0`` are not numbers) and compares them with ``|a - b| <= atol + rtol * |b|``, b
being torch's, or one unit of the last printed digit when both print to the same digit, whichever is larger (two
values 1e-9 apart can print as 0.035613 and 0.035614). The report names the first line, value or exception where
the runs diverge, with both lines shown.

Both runs work in the caller's directory. A script that writes a file and reads it back (a checkpoint saved then
loaded) would see the other run's file: ``--sequential`` runs torch first, then tapegrad.

Each run is its own process group (session): ``--timeout`` is one deadline for both runs together, and when it
passes, or when a run ends, whatever the run started and left behind (a child process, a data-loader worker) is
killed with it. Output goes to temporary files, so a process that keeps the output open cannot stall the runner.

Outcomes (``ParityResult.outcome``) and exit statuses:

==================  ====  ===========================================================================================
outcome             exit  when
==================  ====  ===========================================================================================
``agree``           0     both runs finished (exit status 0) and printed the same numbers, at least one of them
``diverge``         1     a number, the count of numbers on a line, the count of lines with numbers (or, with
                          ``--text``, the text) differs; or one run failed and the other finished; or both failed
                          in different ways
(usage error)       2     a bad command line (an unknown option, a missing script, ``--timeout 0`` ...)
``nothing``         3     both runs finished but printed no number to compare (after ``--ignore``): nothing shows
                          that they agree
``same-error``      4     both runs failed the same way (the same exception and message, tapegrad's perhaps naming
                          its op first, ``conv2d: ...``; or the same non-zero exit status), their numbers agreeing
                          up to there: the script did not run to completion
                          (a SyntaxError, a missing file, or an error tapegrad reproduces faithfully)
``timeout``         5     a run, or both, ran past ``--timeout`` and was stopped, with no divergence in what the two
                          printed before
``tapegrad-only``   6     torch is not installed: only the tapegrad run happened, and it finished; nothing compared
``tapegrad-failed`` 7     torch is not installed, and the tapegrad run failed (or ran past ``--timeout``)
==================  ====  ===========================================================================================

From Python: ``result = tapegrad.parity.run("train.py", ["--epochs", "1"])``; ``result.outcome``,
``result.agree``, ``result.divergence``, ``print(result.report())``.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field

__all__ = ["run", "main", "ParityResult", "RunOutput", "Divergence", "extract_numbers", "EXIT_STATUS"]

# outcome -> exit status of `python -m tapegrad.parity` (2 is argparse's usage error); the table in the docstring
EXIT_STATUS = {"agree": 0, "diverge": 1, "nothing": 3, "same-error": 4, "timeout": 5, "tapegrad-only": 6,
               "tapegrad-failed": 7}

_SRC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))   # the folder that holds the tapegrad package

# The child's bootstrap: argv = [mode, tapegrad_src, result_file, script, *args].
_BOOT = r'''
import json, os, runpy, sys, traceback
mode, src, result_file, script = sys.argv[1:5]
sys.argv = [script] + sys.argv[5:]
sys.path[0] = os.path.dirname(os.path.abspath(script))
if src not in sys.path:
    sys.path.insert(1, src)


hook = runpy.run_path(os.path.join(src, "tapegrad", "_parity_alias.py"))
hook["install"](mode, src)
hook["propagate"](mode, src)
'''

# The script's run and the exit (shared with the warm starts of tapegrad/_parity_warm.py).
_BOOT_RUN = r'''
info = {"exception": None}
try:
    runpy.run_path(script, run_name="__main__")
except SystemExit as e:
    code = e.code
    info["exit"] = code if isinstance(code, int) or code is None else 1
    if code not in (None, 0) and not isinstance(code, int):
        print(code, file=sys.stderr)
except BaseException as e:
    tb = traceback.extract_tb(e.__traceback__)
    where = [f for f in tb if os.path.abspath(f.filename) == os.path.abspath(script)]
    frame = where[-1] if where else (tb[-1] if tb else None)
    info["exception"] = {"type": type(e).__name__, "message": str(e),
                         "line": frame.lineno if frame else None, "code": (frame.line or "") if frame else ""}
    traceback.print_exc()
finally:
    sys.stdout.flush()
    with open(result_file, "w") as f:
        json.dump(info, f)
if info["exception"] is not None:
    sys.exit(1)
sys.exit(info.get("exit") or 0)
'''
_BOOT = _BOOT + _BOOT_RUN

_THREAD_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "VECLIB_MAXIMUM_THREADS",
                "NUMEXPR_NUM_THREADS")
_NUMBER = re.compile(r"(?<![\w.])[-+]?(?:(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?|nan|inf)(?![\w])", re.IGNORECASE)
_ADDRESS = re.compile(r"0x[0-9a-fA-F]+")


def extract_numbers(line):
    """The numbers printed on one line, as floats: ``extract_numbers("loss: 0.25 [64/100]")`` -> [0.25, 64.0, 100.0].

    Hex addresses (``0x7f...``) and digits inside names (``float32``, ``AddBackward0``) are not numbers.
    """
    return [float(m) for m in _NUMBER.findall(_ADDRESS.sub("0x?", line))]


def _printed_numbers(line):
    """(value, resolution) pairs: the resolution is one unit of the last printed digit of a number printed with a
    decimal point or an exponent ("0.0356" -> 1e-4, "3.2e-05" -> 1e-6), 0 for integers ("64", and "2." as torch
    prints integer-valued floats)."""
    out = []
    for m in _NUMBER.findall(_ADDRESS.sub("0x?", line)):
        mant, _, exp = m.lower().partition("e")
        if mant.lstrip("+-") in ("nan", "inf") or ("." not in mant and not exp):
            out.append((float(m), 0.0))
            continue
        decimals = len(mant.partition(".")[2])
        if decimals == 0 and not exp:       # "2." as torch prints an integer-valued float: exact
            out.append((float(m), 0.0))
            continue
        out.append((float(m), 10.0 ** (int(exp or 0) - decimals)))
    return out


def _normalise_text(line):
    line = _ADDRESS.sub("0x?", line)
    return line.replace("torch::autograd::", "").replace("tapegrad", "torch")


def _same_message(torch_message, tapegrad_message):
    """The same error text, where tapegrad's may name its op first (``conv2d: <torch's message>``, the form of
    ``ops._util.op_error``)."""
    a, b = _normalise_text(torch_message), _normalise_text(tapegrad_message)
    return a == b or (bool(a) and b.endswith(": " + a) and " " not in b[:len(b) - len(a) - 2])


@dataclass
class RunOutput:
    """One run of the script: which framework, its stdout/stderr, exit status and the exception it raised."""
    framework: str
    stdout: str
    stderr: str
    returncode: int
    exception: dict | None = None     # {"type", "message", "line", "code"} of an uncaught exception
    timed_out: bool = False           # stopped at the deadline (``exception`` is then a TimeoutError)

    @property
    def ok(self):
        """Ran to completion: exit status 0, no uncaught exception, not stopped at the deadline."""
        return self.returncode == 0 and self.exception is None and not self.timed_out

    def describe_exception(self):
        e = self.exception
        if e is None:
            return f"exit status {self.returncode}" + (f": {self.stderr.strip().splitlines()[-1]}"
                                                        if self.stderr.strip() else "")
        where = f" at script line {e['line']}: {e['code']}" if e.get("line") else ""
        return f"{e['type']}: {e['message']}{where}"


@dataclass
class Divergence:
    """Where the runs first differ. ``kind``: "value", "count" (numbers on a line), "lines" (one run printed
    more), "text" (only with ``compare_text``) or "exception"."""
    kind: str
    message: str
    torch_line: str | None = None
    tapegrad_line: str | None = None
    torch_lineno: int | None = None
    tapegrad_lineno: int | None = None
    torch_value: float | None = None
    tapegrad_value: float | None = None


@dataclass
class ParityResult:
    script: str
    args: list
    rtol: float
    atol: float
    tapegrad: RunOutput
    torch: RunOutput | None = None     # None when torch is not installed
    divergence: Divergence | None = None
    numbers_compared: int = 0
    lines_compared: int = 0
    text_differences: list = field(default_factory=list)   # (lineno, torch line, tapegrad line), informational

    @property
    def torch_available(self):
        return self.torch is not None

    @property
    def outcome(self):
        """One of ``EXIT_STATUS``'s keys (the table in the module's docstring)."""
        if self.torch is None:
            return "tapegrad-only" if self.tapegrad.ok else "tapegrad-failed"
        d = self.divergence
        if d is not None and d.kind in ("value", "count", "text"):
            return "diverge"            # what both printed already differs: a verdict, even if a run was stopped
        if self.torch.timed_out or self.tapegrad.timed_out:
            return "timeout"
        if d is not None:
            return "diverge"
        if not self.torch.ok:           # both failed, and alike (compare found no difference)
            return "same-error"
        return "agree" if self.numbers_compared else "nothing"

    @property
    def agree(self):
        """True only when both runs ran to completion and printed the same numbers (within tolerance), at least
        one."""
        return self.outcome == "agree"

    @property
    def exit_code(self):
        return EXIT_STATUS[self.outcome]

    def report(self, verbose=False):
        """A human-readable report (what ``python -m tapegrad.parity`` prints)."""
        out = []
        name = os.path.basename(self.script)
        outcome = self.outcome
        if self.torch is None:
            out.append(f"parity: TAPEGRAD ONLY - torch is not installed (pip install torch), so {name} ran with "
                       "tapegrad only; nothing compared. Its output:")
            out.append(_indent(self.tapegrad.stdout))
            if not self.tapegrad.ok:
                out.append(f"the tapegrad run failed: {self.tapegrad.describe_exception()}")
                out.append(_indent(self.tapegrad.stderr))
            return "\n".join(out)
        if verbose:
            for run in (self.torch, self.tapegrad):
                out.append(f"--- {run.framework} stdout ---")
                out.append(_indent(run.stdout))
        tol = f"rtol={self.rtol:g}, atol={self.atol:g}"
        agreed = f"{self.numbers_compared} numbers on {self.lines_compared} lines"
        if outcome in ("agree", "nothing"):
            if outcome == "agree":
                out.append(f"parity: AGREE - {name}: {agreed} match ({tol}); both finished.")
            else:
                out.append(f"parity: NOTHING COMPARED - {name}: both runs finished but printed no numbers"
                           f"{' (after --ignore)' if self.lines_compared == 0 else ''}: nothing shows that they "
                           "agree; print the values you want compared.")
            if self.text_differences:
                lineno, a, b = self.text_differences[0]
                out.append(f"  (the text differs on {len(self.text_differences)} line(s), numbers aside; first, "
                           f"line {lineno}:\n    torch   : {a}\n    tapegrad: {b})")
            return "\n".join(out)
        if outcome == "same-error":
            out.append(f"parity: SAME ERROR - {name}: both runs failed the same way, "
                       f"{self.tapegrad.describe_exception()}; {agreed} agreed before it ({tol}). Not an "
                       "agreement: the script did not run to completion.")
        elif outcome == "timeout":
            stopped = [r.framework for r in (self.torch, self.tapegrad) if r.timed_out]
            out.append(f"parity: TIMEOUT - {name}: the {' and the '.join(stopped)} run{'s' if len(stopped) > 1 else ''}"
                       f" ran past --timeout and {'were' if len(stopped) > 1 else 'was'} stopped; {agreed} agreed "
                       f"before that ({tol}).")
        else:
            d = self.divergence
            out.append(f"parity: DIVERGE - {name}: {d.message}")
            if d.torch_line is not None or d.tapegrad_line is not None:
                out.append(f"  torch    (stdout line {d.torch_lineno}): "
                           f"{d.torch_line if d.torch_line is not None else '-'}")
                out.append(f"  tapegrad (stdout line {d.tapegrad_lineno}): "
                           f"{d.tapegrad_line if d.tapegrad_line is not None else '-'}")
            out.append(f"  ({agreed} agreed before this; {tol})")
        for run in (self.torch, self.tapegrad):
            if not run.ok and run.stderr.strip():
                out.append(f"--- {run.framework} stderr (last lines) ---")
                out.append(_indent("\n".join(run.stderr.strip().splitlines()[-12:])))
        return "\n".join(out)


def _indent(text, pad="  | "):
    return "\n".join(pad + line for line in text.rstrip("\n").splitlines()) if text.strip() else pad + "(nothing)"


def _close(a, b, rtol, atol, resolution=0.0):
    """|a - b| <= atol + rtol * |b|, or at most one unit of the coarser printed digit: values 1e-9 apart can print
    one digit apart ("0.035613" and "0.035614")."""
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    if math.isinf(a) or math.isinf(b):
        return a == b
    return abs(a - b) <= max(atol + rtol * abs(b), resolution * (1 + 1e-9))


def _numbered_lines(text, ignore):
    rows = []
    for i, line in enumerate(text.splitlines(), 1):
        if any(p.search(line) for p in ignore):
            continue
        rows.append((i, line))
    return rows


def compare(torch_run, tapegrad_run, rtol=1e-5, atol=0.0, ignore=(), compare_text=False):
    """Compare two runs; returns (divergence or None, numbers compared, lines compared, text differences)."""
    ignore = [re.compile(p) if isinstance(p, str) else p for p in ignore]
    a_rows = [(i, line) for i, line in _numbered_lines(torch_run.stdout, ignore)
              if compare_text or extract_numbers(line)]
    b_rows = [(i, line) for i, line in _numbered_lines(tapegrad_run.stdout, ignore)
              if compare_text or extract_numbers(line)]
    n_numbers = n_lines = 0
    text_diffs = []
    for (ia, la), (ib, lb) in zip(a_rows, b_rows):
        na, nb = _printed_numbers(la), _printed_numbers(lb)
        if len(na) != len(nb):
            return (Divergence("count", f"the lines print {len(na)} numbers (torch) vs {len(nb)} (tapegrad)",
                               la, lb, ia, ib), n_numbers, n_lines, text_diffs)
        for k, ((x, rx), (y, ry)) in enumerate(zip(na, nb)):
            # one unit of the last digit when both print in the same format ("%.6f"); numbers printed to different
            # lengths are shortest-repr floats ("1.5" vs "1.501"), exact as printed
            if not _close(y, x, rtol, atol, rx if rx == ry else 0.0):
                rel = abs(x - y) / abs(x) if x not in (0.0,) and math.isfinite(x) and math.isfinite(y) else math.inf
                return (Divergence("value", f"value #{k + 1} on the line differs: torch {x!r} vs tapegrad {y!r} "
                                   f"(relative difference {rel:.3g})", la, lb, ia, ib, x, y),
                        n_numbers, n_lines, text_diffs)
        ta, tb = _NUMBER.sub("#", _normalise_text(la)), _NUMBER.sub("#", _normalise_text(lb))
        if ta != tb:
            if compare_text:
                return (Divergence("text", "the lines differ (numbers aside)", la, lb, ia, ib),
                        n_numbers, n_lines, text_diffs)
            text_diffs.append((ia, la, lb))
        n_numbers += len(na)
        n_lines += 1
    if len(a_rows) != len(b_rows):
        longer, who = (a_rows, "torch") if len(a_rows) > len(b_rows) else (b_rows, "tapegrad")
        i, line = longer[min(len(a_rows), len(b_rows))]
        failed = tapegrad_run if who == "torch" else torch_run
        why = f" ({failed.framework} stopped: {failed.describe_exception()})" if not failed.ok else ""
        msg = f"only the {who} run printed more numbered lines ({len(a_rows)} vs {len(b_rows)}){why}"
        div = (Divergence("lines", msg, line, None, i, None) if who == "torch"
               else Divergence("lines", msg, None, line, None, i))
        return div, n_numbers, n_lines, text_diffs
    if torch_run.ok != tapegrad_run.ok:
        bad = tapegrad_run if not tapegrad_run.ok else torch_run
        good = torch_run if bad is tapegrad_run else tapegrad_run
        return (Divergence("exception", f"the {bad.framework} run raised {bad.describe_exception()}, "
                           f"the {good.framework} run finished"), n_numbers, n_lines, text_diffs)
    if not torch_run.ok:
        ea, eb = torch_run.exception, tapegrad_run.exception
        if ((ea or {}).get("type") != (eb or {}).get("type")
                or (ea and eb and not _same_message(ea["message"], eb["message"]))
                or (not ea and not eb and torch_run.returncode != tapegrad_run.returncode)):
            return (Divergence("exception", f"both runs failed, differently: torch: "
                               f"{torch_run.describe_exception()}; tapegrad: "
                               f"{tapegrad_run.describe_exception()}"), n_numbers, n_lines, text_diffs)
    return None, n_numbers, n_lines, text_diffs


def torch_installed(python=None):
    """Whether ``import torch`` can work (in this interpreter, or in ``python``); does not import it."""
    if python is None or os.path.abspath(python) == os.path.abspath(sys.executable):
        try:
            return importlib.util.find_spec("torch") is not None
        except (ImportError, ValueError):
            return False
    probe = subprocess.run([python, "-c", "import importlib.util,sys; sys.exit(importlib.util.find_spec('torch') "
                            "is None)"], capture_output=True)
    return probe.returncode == 0


# each run is a session of its own (POSIX) / a process group of its own (Windows): the deadline kills it whole
_OWN_GROUP = ({"start_new_session": True} if os.name == "posix"
              else {"creationflags": getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0)})


class _Child:
    """One run of the bootstrap: stdout and stderr go to temporary files (a pipe would stall the runner while any
    process the script left behind keeps it open), in a process group of its own."""

    def __init__(self, mode, script, args, python, env):
        self.mode, self.timed_out = mode, False
        self._files()
        try:
            self.proc = subprocess.Popen([python, "-c", _BOOT, mode, _SRC, self.result_file, script, *args],
                                         stdin=subprocess.DEVNULL, stdout=self.stdout, stderr=self.stderr, env=env,
                                         **_OWN_GROUP)
        except BaseException:
            self._remove_files()
            raise

    def _files(self):
        self.dir = tempfile.mkdtemp(prefix=f"tapegrad-parity-{self.mode}-")
        self.result_file = os.path.join(self.dir, "result.json")
        self.stdout = open(os.path.join(self.dir, "stdout"), "w+b")
        self.stderr = open(os.path.join(self.dir, "stderr"), "w+b")

    def _remove_files(self):
        self.stdout.close()
        self.stderr.close()
        shutil.rmtree(self.dir, ignore_errors=True)

    def exited(self):
        """Whether the run's main process has ended, without reaping it: while it is a zombie its pid, the group's
        id, cannot be taken by another process, so killing the group afterwards is safe."""
        if hasattr(os, "waitid") and hasattr(os, "WNOWAIT"):
            try:
                return os.waitid(os.P_PID, self.proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
            except ChildProcessError:
                return True
        return self.proc.poll() is not None

    def stop(self):
        """Kill the run's whole process group (what the script started too), then reap the main process."""
        if hasattr(os, "killpg"):
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        elif self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()

    def output(self, timeout):
        """The finished run as a RunOutput; removes the temporary files."""
        try:
            streams = []
            for f in (self.stdout, self.stderr):
                f.seek(0)
                streams.append(f.read().decode("utf-8", errors="replace"))
                f.close()
            stdout, stderr = streams
            if self.timed_out:
                stderr += f"\nparity: the {self.mode} run was stopped after {timeout:g} s (--timeout)"
                return RunOutput(self.mode, stdout, stderr, self.proc.returncode,
                                 {"type": "TimeoutError", "message": f"ran past {timeout:g} s", "line": None,
                                  "code": ""}, timed_out=True)
            exception = None
            try:
                with open(self.result_file) as f:
                    exception = json.load(f).get("exception")
            except (OSError, ValueError):
                pass
            return RunOutput(self.mode, stdout, stderr, self.proc.returncode, exception)
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)


def _wait(children, timeout):
    """Wait for every run, with one deadline for all of them (``timeout`` seconds from now; None: no limit). A run
    that ends has its group killed at once (nothing it started outlives it); at the deadline the runs still going
    are killed and marked ``timed_out``. An interrupt (Ctrl-C) kills them all too."""
    deadline = None if timeout is None or math.isinf(timeout) else time.monotonic() + timeout
    pending, pause = list(children), 0.002
    try:
        while pending:
            for child in [c for c in pending if c.exited()]:
                child.stop()
                pending.remove(child)
            if not pending:
                break
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                for child in pending:
                    child.timed_out = True
                    child.stop()
                break
            time.sleep(pause if left is None else min(pause, left))
            pause = min(pause * 1.5, 0.05)
    finally:
        for child in children:
            if child.proc.returncode is None:
                child.stop()


def run(path, args=(), rtol=1e-5, atol=0.0, *, ignore=(), compare_text=False, timeout=600, python=None,
        with_torch=None, threads=1, env_extra=None, sequential=False, warm=False):
    """Run ``path`` under torch and under tapegrad and compare what they print.

    ``rtol``/``atol``: tolerance for each printed number (torch's is the reference); ``ignore``: regular expressions
    of stdout lines to skip (timings ...); ``compare_text``: also require the text around the numbers to match;
    ``timeout``: seconds for both runs together (one deadline; ``None``: no limit), after which a run still going
    is killed with everything it started;
    ``python``: the interpreter for both runs (default: this one); ``with_torch``: force the torch run on/off
    (default: when torch is installed); ``threads``: BLAS/OpenMP threads of both runs (default 1: a multithreaded
    reduction sums in another order, and float32 training then drifts apart by more than 1e-5 within a hundred
    steps; 0 leaves the environment as it is); ``env_extra``: extra environment variables for both runs;
    ``sequential``: run torch first and tapegrad after it (for scripts that write files they read back; the
    deadline is still one for both); ``warm``: fork each run from a process that has already imported its
    framework, kept for this process's later runs (``tapegrad/_parity_warm.py``: it saves the interpreter's start
    and ``import torch``, about 2 s of CPU a run, for a suite of many scripts; the framework is then imported
    before the script runs, so what the script sets before ``import torch`` does not reach that import).
    Returns a :class:`ParityResult`::

        >>> r = run("examples/pytorch_tutorial_mlp.py", ["--fast"])
        >>> r.agree, r.numbers_compared
        (True, 42)
    """
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"tapegrad.parity: no such script: {path!r}")
    if timeout is not None and not (isinstance(timeout, (int, float)) and timeout > 0):
        raise ValueError(f"tapegrad.parity.run: timeout must be a positive number of seconds (None: no limit), "
                         f"got {timeout!r}")
    python = python or sys.executable
    args = [str(a) for a in args]
    if with_torch is None:
        with_torch = torch_installed(python)
    env = dict(os.environ, PYTHONHASHSEED="0", PYTHONUNBUFFERED="1", PYTHONIOENCODING="utf-8")
    if threads:
        env.update({k: str(int(threads)) for k in _THREAD_VARS})
    env.update(env_extra or {})
    start = _warm_start if warm else _Child
    if sequential and with_torch:
        began = time.monotonic()
        children = [start("torch", path, args, python, env)]
        _wait(children, timeout)
        left = None if timeout is None else max(timeout - (time.monotonic() - began), 0.0)
        try:
            children.append(start("tapegrad", path, args, python, env))
        except BaseException:
            children[0].output(timeout)
            raise
        _wait(children[1:], left)
        runs = {child.mode: child.output(timeout) for child in children}
        return _result(path, args, rtol, atol, ignore, compare_text, runs)
    children = [start("tapegrad", path, args, python, env)]
    if with_torch:
        try:
            children.append(start("torch", path, args, python, env))   # both run at once, under one deadline
        except BaseException:
            children[0].stop()
            children[0].output(timeout)
            raise
    _wait(children, timeout)
    return _result(path, args, rtol, atol, ignore, compare_text,
                   {child.mode: child.output(timeout) for child in children})


def _warm_start(mode, path, args, python, env):
    """A run forked by a warm server (see ``_parity_warm``), or a cold one where no server can start."""
    from . import _parity_warm
    try:
        return _parity_warm.WarmChild(mode, path, args, python, env)
    except _parity_warm.ServerGone:
        return _Child(mode, path, args, python, env)


def _result(path, args, rtol, atol, ignore, compare_text, runs):
    result = ParityResult(path, args, rtol, atol, runs["tapegrad"], runs.get("torch"))
    if result.torch is not None:
        (result.divergence, result.numbers_compared, result.lines_compared,
         result.text_differences) = compare(result.torch, result.tapegrad, rtol, atol, ignore, compare_text)
    return result


def _seconds(text):
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not value > 0:           # also rejects nan
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds, got {text!r}")
    return value


def _threads(text):
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a thread count >= 0 (0: leave the environment's), got {text!r}")
    return value


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m tapegrad.parity",
        description="Run a PyTorch script with real torch and with tapegrad standing in for torch, both at once; "
                    "report whether the printed numbers agree, or the first line, value or exception where they "
                    "diverge.",
        epilog="Exit status: 0 agree (both runs finished, at least one number compared, all within tolerance); "
               "1 diverge; 2 usage error; 3 nothing compared (both finished, no numbers printed); 4 same error "
               "(both failed the same way); 5 timeout (a run was stopped at --timeout); 6 tapegrad only (torch is "
               "not installed; the tapegrad run finished); 7 tapegrad only, and that run failed.")
    parser.add_argument("--rtol", type=float, default=1e-5, help="relative tolerance per number (default 1e-5)")
    parser.add_argument("--atol", type=float, default=0.0, help="absolute tolerance per number (default 0)")
    parser.add_argument("--ignore", action="append", default=[], metavar="REGEX",
                        help="skip stdout lines matching REGEX in both runs (repeatable), e.g. timings")
    parser.add_argument("--text", action="store_true", help="also require the text around the numbers to match")
    parser.add_argument("--timeout", type=_seconds, default=600,
                        help="seconds for both runs together (default 600); a run still going then is killed with "
                             "every process it started")
    parser.add_argument("--threads", type=_threads, default=1,
                        help="BLAS/OpenMP threads per run (default 1, for the same summation order in every run; "
                             "0: leave the environment's setting)")
    parser.add_argument("--python", default=None, help="interpreter for both runs (default: this one)")
    parser.add_argument("--sequential", action="store_true",
                        help="run torch first, then tapegrad (for scripts that write files they read back, such "
                             "as checkpoints: at the same time, the runs would share them)")
    parser.add_argument("-v", "--verbose", action="store_true", help="show both runs' stdout")
    parser.add_argument("script", help="the PyTorch script (written with `import torch` or `import tapegrad as "
                                       "torch`)")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="arguments passed to the script")
    ns = parser.parse_args(argv)
    if not os.path.isfile(ns.script):
        parser.print_usage(sys.stderr)
        print(f"{parser.prog}: error: no such script: {ns.script!r}", file=sys.stderr)
        return 2
    if ns.rtol < 0 or ns.atol < 0:
        parser.error("--rtol and --atol must be >= 0")
    for p in ns.ignore:
        try:
            re.compile(p)
        except re.error as e:
            parser.error(f"--ignore {p!r} is not a regular expression: {e}")
    result = run(ns.script, ns.args, ns.rtol, ns.atol, ignore=ns.ignore, compare_text=ns.text, timeout=ns.timeout,
                 python=ns.python, threads=ns.threads, sequential=ns.sequential)
    print(result.report(verbose=ns.verbose))
    return result.exit_code


if __name__ == "__main__":
    sys.exit(main())
