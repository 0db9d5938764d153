"""Run a script with every top-level module call compiled (tapegrad.compile), as a user's model.compile()
would: ``python _run_compiled.py SCRIPT ARGS...``; reports the replays and graph breaks on stderr at exit."""
import runpy
import sys

import tapegrad
from tapegrad.nn import Module

_plain = Module._call_impl


def _call(self, *args, **kwargs):
    if self._compiled_call_impl is None and not tapegrad.compiler.is_compiling():
        self.compile()
    return _plain(self, *args, **kwargs)


Module.__call__ = _call


def _report():
    from tapegrad.compiler.runtime import _all
    replays = breaks = 0
    reasons = set()
    for ref in _all:
        c = ref()
        for e in (c.entries if c is not None else ()):
            if e.eager:
                breaks += 1
                reasons.add(e.reason)
            else:
                replays += e.calls
    sys.stderr.write(f"COMPILED replays={replays} eager_entries={breaks} {sorted(reasons)}\n")


import atexit  # noqa: E402
atexit.register(_report)
script = sys.argv[1]
sys.argv = sys.argv[1:]
runpy.run_path(script, run_name="__main__")
