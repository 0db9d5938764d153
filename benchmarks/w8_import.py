"""W8 start-up: ``python -c "import tapegrad"`` vs ``python -c "import torch"``, the whole process, best of N.

Rounds are interleaved (bare interpreter, numpy, tapegrad, torch, in random order). tapegrad is found through
PYTHONPATH=src (as a fresh clone would run it), with its bytecode compiled first — as pip compiles torch's at
install, and as Python itself caches it on a clone's first import (where PYTHONDONTWRITEBYTECODE is set, every
import would otherwise recompile tapegrad's sources and the comparison would be unequal).
The check: the tapegrad process must not have imported torch,
and ``tapegrad.tensor([1., 2.]).sum()`` must work in the process (a broken import cannot be fast).

    python benchmarks/w8_import.py [--quick] [--json]
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

import _common as C

PROGRAMS = {"python": "pass", "numpy": "import numpy", "tapegrad": "import tapegrad", "torch": "import torch"}


def spawn(code):
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", code], env=C.sub_env(), capture_output=True, text=True)
    dt = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(f"W8: `python -c {code!r}` failed:\n{proc.stderr[-2000:]}")
    return C.Elapsed(dt)


def run(quick=False, threads=1):
    progs = dict(PROGRAMS)
    if C.import_torch() is None:
        del progs["torch"]
    check = subprocess.run([sys.executable, "-c", "import sys, tapegrad; print('torch' in sys.modules, "
                            "float(tapegrad.tensor([1., 2.]).sum()))"], env=C.sub_env(), capture_output=True,
                           text=True)
    if check.returncode != 0 or check.stdout.split() != ["False", "3.0"]:
        raise C.CheckFailed(f"W8: importing tapegrad pulls in torch or fails: {check.stdout!r} {check.stderr[-500:]}")
    # compile tapegrad's bytecode into src/tapegrad/**/__pycache__ (git-ignored): what an install or a first import
    # does; an already compiled tree is left as it is
    subprocess.run([sys.executable, "-m", "compileall", "-q", os.path.join(C.SRC, "tapegrad")], check=True,
                   capture_output=True)
    repeats = 1 if quick else 10
    times = C.interleaved({name: (lambda c=code: spawn(c)) for name, code in progs.items()}, repeats,
                          warmup=0 if quick else 1)
    engines = {name: C.stats(times.get(name), 1e3) for name in ("tapegrad", "torch", "numpy", "python")}
    best = {name: min(ts) for name, ts in times.items()}
    ratios = {"tapegrad/torch": best["tapegrad"] / best["torch"] if "torch" in best else None,
              "tapegrad/numpy": best["tapegrad"] / best["numpy"]}
    extra = {f"{name} best (ms)": v * 1e3 for name, v in best.items()}
    return C.result("W8", "python -c 'import X', whole process, best of N (ratios use the best)", "ms", 1, engines,
                    ratios, ["tapegrad's import does not load torch; a tensor sum works after it"], extra=extra,
                    notes=[f"{repeats} interleaved rounds", "tapegrad's bytecode compiled first (compileall), as an "
                           "install or a first import does; torch's was compiled by pip"])


def main(argv=None):
    return C.script_main(run, __doc__, argv, has_threads=False)


if __name__ == "__main__":
    main()
