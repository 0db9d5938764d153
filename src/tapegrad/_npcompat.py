"""Silencing NumPy's floating-point warnings cheaply (torch returns inf/nan without a word).

NumPy 2 keeps its error state in a context variable; setting it directly costs ~0.1 µs where
``with np.errstate(all="ignore")`` costs ~1 µs — and every built-in op runs under it.
"""

from __future__ import annotations

import numpy as np

try:
    from numpy._core.umath import _extobj_contextvar, _make_extobj

    _QUIET = _make_extobj(all="ignore")
    quiet_enter = _extobj_contextvar.set          # token = quiet_enter(QUIET) ... quiet_exit(token)
    quiet_exit = _extobj_contextvar.reset
    quiet_state = _extobj_contextvar.get          # `quiet_state() is QUIET`: already silenced (cheap test)
    QUIET = _QUIET
except ImportError:  # pragma: no cover - NumPy 1.x: the slower public way
    class _State:
        def __init__(self):
            self.stack = []

    _st = _State()
    QUIET = None

    def quiet_enter(_):
        e = np.errstate(all="ignore")
        e.__enter__()
        return e

    def quiet_exit(e):
        e.__exit__(None, None, None)

    def quiet_state():
        return None


def quiet(f, *args):
    """``f(*args)`` with NumPy's floating-point warnings off."""
    token = quiet_enter(QUIET)
    try:
        return f(*args)
    finally:
        quiet_exit(token)


def broadcast_error(e: ValueError):
    """NumPy's broadcasting ValueError as torch's RuntimeError ("The size of tensor a (2) must match the size of
    tensor b (4) at non-singleton dimension 0"), or None for any other ValueError. Applied where every op's
    forward runs (``Function.apply``), so each broadcasting op says what torch says."""
    import re
    msg = str(e)
    if "could not be broadcast" not in msg and "cannot be broadcast" not in msg:
        return None
    if "Mismatch is between" in msg:          # np.broadcast_arrays / broadcast_shapes
        shapes = [tuple(int(t) for t in m.split(",") if t.strip())
                  for m in re.findall(r"with shape \(([\d,\s]*)\)", msg)]
    elif "remapped shapes" in msg and not re.search(r"\)->\(", msg):    # np.broadcast_to: the array, then the
        shapes = [tuple(int(t) for t in m.split(",") if t.strip())       # requested shape
                  for m in re.findall(r"\(([\d,\s]*)\)", msg)]
    elif "remapped shapes" in msg:      # (NumPy's gufuncs, e.g. matmul: the trailing "core" dims are not broadcast)
        pairs = re.findall(r"\(([\d,\s]*)\)->\(([\w,\s]*)\)", msg.split("and requested shape")[0])
        shapes = []
        for orig, remapped in pairs:
            dims = [int(t) for t in orig.split(",") if t.strip()]
            core = sum(1 for t in remapped.split(",") if t.strip() == "newaxis")
            shapes.append(tuple(dims[:len(dims) - core]))
    else:
        shapes = [tuple(int(t) for t in m.split(",") if t.strip())
                  for m in re.findall(r"\(([\d,\s]*)\)", msg.split("with shapes", 1)[-1])]
    for i in range(len(shapes)):      # the first pair that does not broadcast, named as torch names them
        for j in range(i + 1, len(shapes)):
            a, b = shapes[i], shapes[j]
            n = max(len(a), len(b))
            pa, pb = (1,) * (n - len(a)) + a, (1,) * (n - len(b)) + b
            for k in range(n - 1, -1, -1):
                if pa[k] != pb[k] and 1 not in (pa[k], pb[k]):
                    return RuntimeError(f"The size of tensor a ({pa[k]}) must match the size of tensor b ({pb[k]}) "
                                        f"at non-singleton dimension {k}")
    return None
