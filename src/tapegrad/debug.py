"""tapegrad.debug: detectors for the classic autograd pitfalls. Opt-in, and free when off.

Turn on with ``tapegrad.debug.enable()`` (or the environment variable ``TAPEGRAD_DEBUG=1`` before this module
is imported). While on:

* **Graph kept alive across steps** — the seed's ``total_loss += loss``: when a new node is created from a graph
  that was built before the last ``optimizer.step()`` (so a tensor that requires grad drags earlier iterations'
  graphs along and grows every iteration), warn once, at your line, with how many nodes and bytes that graph holds,
  and the fix (``loss.item()`` or ``loss.detach()``).
* **Forgotten ``zero_grad``** — when ``optimizer.step()`` sees gradients that two or more backward passes added
  into since they were last zeroed, warn, unless you declared it (``expect_accumulation(n)``).
* **Errors that say where** — every node records the line of your code that created it, so an error raised in
  backward names that line (see ``tapegrad.autograd.anomaly``).

Always available: ``activation_report(model, batch)``, the fraction of ReLU units that are dead (zero for the
whole batch) in each layer, and ``mark_step()`` for hand-written training loops without an optimizer.

Cost. Off, nothing is installed: node creation checks one module global (``function._site_hook is None``) and the
engine one empty list (``_observers``). The measurement that decided "site peek off by default": on a chain of
200 small ops (``python -m tapegrad.debug --bench``; Python 3.11, a loaded 2-core machine) the peek costs about
2-12 us per node — walking ``f_back`` makes CPython materialise a frame object for every frame on the way —
so forward took 1.5 -> 4.0 ms (+160%) and forward+backward 5% to 45% longer: far above the 5% budget, so the
peek is only on in debug and anomaly mode.

Contract with the optimizer (``tapegrad.optim.Optimizer``)::

    from .. import debug as _debug            # cheap: this module imports nothing heavy
    def step(self, closure=None):
        if _debug.enabled:                    # one attribute check when off
            _debug.on_optimizer_step(self)    # BEFORE updating: it inspects the .grad of self.param_groups
        ...
    def zero_grad(self, set_to_none=True):
        if _debug.enabled:
            _debug.on_zero_grad(self)
        ...

``on_optimizer_step(opt)`` reads ``opt.param_groups`` (a list of dicts with ``"params"``), starts a new
"iteration" for the kept-alive detector, and checks accumulation. ``on_zero_grad(opt)`` forgets the counts of its
parameters. Counting itself needs no optimizer: an engine observer (installed only while debug is on) sees every
``AccumulateGrad`` and counts the passes that added into the same ``.grad`` tensor without it being changed in
between (zeroing by ``zero_grad()``, ``p.grad = None`` or ``p.grad.zero_()`` all restart the count).
"""

from __future__ import annotations

import os
import warnings

__all__ = ["enable", "disable", "is_enabled", "enabled", "expect_accumulation", "on_optimizer_step",
           "on_zero_grad", "mark_step", "activation_report", "ActivationReport", "GraphKeptAliveWarning",
           "ZeroGradWarning"]

enabled = False          # the flag the optimizer checks
_epoch = [0]             # iterations seen (optimizer steps / mark_step calls)
_expected = [1]          # backward passes per step the user declared as intended
_warned_sites = set()
_warned_optimizers = set()


class GraphKeptAliveWarning(UserWarning):
    """A tensor that requires grad keeps an earlier iteration's graph alive (``total_loss += loss``)."""


class ZeroGradWarning(UserWarning):
    """optimizer.step() saw gradients accumulated over several backward passes (a forgotten zero_grad)."""


# --- on / off -----------------------------------------------------------------------------------------------------
def enable():
    """Turn the detectors on (and the recording of where each node was created)."""
    global enabled
    if enabled:
        return
    from .autograd import anomaly, engine
    enabled = True
    anomaly._state["extra"] = _wrap_site
    anomaly.want_sites(True)
    engine._observers.append(_on_node)


def disable():
    """Turn the detectors off; afterwards they cost nothing."""
    global enabled
    if not enabled:
        return
    from .autograd import anomaly, engine
    enabled = False
    anomaly._state["extra"] = None
    anomaly.want_sites(False)
    try:
        engine._observers.remove(_on_node)
    except ValueError:
        pass


def is_enabled() -> bool:
    return enabled


class expect_accumulation:
    """Declare that up to ``n`` backward passes per optimizer step are intended (gradient accumulation).

    Works as a call (``expect_accumulation(4)``) or a ``with`` block that restores the previous setting.
    """

    def __init__(self, n: int):
        if int(n) < 1:
            raise ValueError(f"expect_accumulation: n must be >= 1, got {n}")
        self.prev = _expected[0]
        _expected[0] = int(n)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _expected[0] = self.prev
        return False


# --- detector 1: graph kept alive across steps ------------------------------------------------------------------------
def mark_step():
    """Tell the detectors an iteration ended (what ``optimizer.step()`` does), for loops without an optimizer."""
    _epoch[0] += 1


def _wrap_site(inner):
    """Wrap the site recorder: also stamp each node with its iteration and catch graphs that outlive theirs."""
    from .autograd.function import AccumulateGrad

    def record(ctx):
        site = inner(ctx)
        if site is None:
            return None
        now = _epoch[0]
        oldest = now
        old = None
        for nxt in ctx._next_fns:
            if nxt is None or nxt.__class__ is AccumulateGrad:
                continue
            s = getattr(nxt, "_site", None)
            if s is not None and s.epoch is not None and s.epoch < oldest:
                oldest, old = s.epoch, nxt
        site.epoch = oldest
        if old is not None and oldest < now:
            _warn_kept_alive(site, old, now - oldest)
        return site
    return record


def _warn_kept_alive(site, old, steps):
    key = (site.filename, site.lineno)
    if key in _warned_sites:
        return
    _warned_sites.add(key)
    from .autograd.stats import _human, graph_stats
    st = graph_stats(old)
    msg = (f"tapegrad.debug: this line builds on an autograd graph created {steps} optimizer step(s) ago, so the "
           f"result drags every earlier iteration's graph along (it now holds {st.nodes} nodes and "
           f"{_human(st.saved_bytes)} saved for backward, and grows each iteration). This is the "
           "`total_loss += loss` trap: to keep a running number, accumulate `loss.item()` (a Python float) or "
           "`loss.detach()` instead.")
    warnings.warn_explicit(msg, GraphKeptAliveWarning, site.filename, site.lineno)


# --- detector 2: forgotten zero_grad -------------------------------------------------------------------------------
def _on_node(node, grads_out, grads_in):
    if grads_in is not None:        # only AccumulateGrad steps are reported with grads_in=None
        return
    var = node.variable
    if var is None or var._grad is None:
        return
    g = var._grad
    st = getattr(node, "_dbg", None)
    # the same .grad tensor, changed only by our own last accumulation since we looked: one more pass
    if st is not None and st[0] == id(g) and st[1] == g._vc[0] - 1:
        count = st[2] + 1
    else:
        count = 1
    node._dbg = (id(g), g._vc[0], count)


def _params(optimizer):
    groups = getattr(optimizer, "param_groups", None)
    if groups is None:
        return list(optimizer)
    return [p for grp in groups for p in grp["params"]]


def on_optimizer_step(optimizer):
    """Called by ``Optimizer.step()`` (before the update) while debug is on; see the contract above."""
    worst, n_bad = 0, 0
    for p in _params(optimizer):
        acc, g = p._acc, p._grad
        if acc is None or g is None:
            continue
        st = getattr(acc, "_dbg", None)
        if st is None or st[0] != id(g) or st[1] != g._vc[0]:
            continue                    # changed since the last backward: not an accumulation we counted
        if st[2] > _expected[0]:
            n_bad += 1
            worst = max(worst, st[2])
    mark_step()
    if n_bad and id(optimizer) not in _warned_optimizers:   # once per optimizer: a reminder, not a flood
        _warned_optimizers.add(id(optimizer))
        from .autograd.anomaly import user_frame
        f = user_frame(2)
        msg = (f"tapegrad.debug: optimizer.step() uses gradients accumulated by {worst} backward passes since they "
               f"were last zeroed ({n_bad} parameter(s)). Gradients add up (+=) until zeroed: call "
               "optimizer.zero_grad() before each loss.backward(). If accumulating is intended, declare it with "
               f"tapegrad.debug.expect_accumulation({worst}).")
        if f is not None:
            warnings.warn_explicit(msg, ZeroGradWarning, f.f_code.co_filename, f.f_lineno)
        else:
            warnings.warn(msg, ZeroGradWarning, stacklevel=2)


def on_zero_grad(optimizer):
    """Called by ``Optimizer.zero_grad()`` while debug is on: forget the accumulation counts of its parameters."""
    for p in _params(optimizer):
        acc = p._acc
        if acc is not None and getattr(acc, "_dbg", None) is not None:
            acc._dbg = None


# --- dead ReLU units --------------------------------------------------------------------------------------------------
class ActivationReport:
    """Rows ``(layer name, units, dead units, fraction dead)``; ``report[name]`` gives the fraction."""

    def __init__(self, rows):
        self.rows = rows

    def __getitem__(self, name):
        for r in self.rows:
            if r[0] == name:
                return r[3]
        raise KeyError(name)

    def __iter__(self):
        return iter(self.rows)

    def __len__(self):
        return len(self.rows)

    def as_dict(self):
        return {r[0]: r[3] for r in self.rows}

    def __str__(self):
        w = max([len("layer")] + [len(r[0]) for r in self.rows])
        lines = [f"{'layer'.ljust(w)}  units  dead  fraction dead"]
        for name, units, dead, frac in self.rows:
            lines.append(f"{name.ljust(w)}  {units:5d}  {dead:4d}  {frac:6.1%}")
        return "\n".join(lines)

    __repr__ = __str__


def activation_report(model, batch):
    """Per ReLU layer, the fraction of units that output 0 for every sample of ``batch`` (dead units).

    ``model``: a ``tapegrad.nn.Module`` (every ``nn.ReLU`` submodule is watched through a forward hook; units are
    the features along dim 1) or a ``tapegrad.scalar.nn.MLP`` (``batch``: a list of input lists).

    >>> import tapegrad, tapegrad.nn as nn
    >>> model = nn.Sequential(nn.Linear(2, 4), nn.ReLU(), nn.Linear(4, 1))
    >>> print(activation_report(model, tapegrad.randn(16, 2)))             # doctest: +SKIP
    layer  units  dead  fraction dead
    1          4     1          25.0%
    """
    import numpy as np
    from .scalar import nn as snn
    if isinstance(model, snn.Module) and hasattr(model, "layers"):
        return _scalar_report(model, batch)
    from .nn.modules.activation import ReLU
    watched = [(name or type(m).__name__, m) for name, m in model.named_modules() if isinstance(m, ReLU)]
    if not watched:
        raise ValueError("activation_report: the model has no nn.ReLU modules to watch. It sees ReLUs through "
                         "forward hooks, so a relu called inside forward (F.relu, x.relu()) is invisible: use "
                         "nn.ReLU modules.")
    seen = {}
    handles = []
    for name, m in watched:
        def hook(mod, args, out, name=name):
            a = np.asarray(out._array)
            if a.ndim < 2:
                a = a.reshape(1, -1)
            axes = (0,) + tuple(range(2, a.ndim))
            alive = (a != 0).any(axis=axes)
            prev = seen.get(name)
            seen[name] = alive if prev is None else (prev | alive)
        handles.append(m.register_forward_hook(hook))
    from .autograd.grad_mode import no_grad
    try:
        with no_grad():
            model(batch)
    finally:
        for h in handles:
            h.remove()
    rows = []
    for name, _ in watched:
        alive = seen.get(name)
        if alive is None:
            continue
        units = int(alive.size)
        dead = int(units - alive.sum())
        rows.append((name, units, dead, dead / units if units else 0.0))
    return ActivationReport(rows)


def _scalar_report(model, batch):
    rows = []
    outs = [list(x) for x in batch]
    for i, layer in enumerate(model.layers):
        new = []
        for x in outs:
            y = layer(x)
            new.append(y if isinstance(y, list) else [y])
        outs = [[v.data for v in row] for row in new]
        if layer.neurons and layer.neurons[0].nonlin:
            units = len(layer.neurons)
            dead = sum(1 for j in range(units) if all(row[j] == 0 for row in outs))
            rows.append((f"layers.{i}", units, dead, dead / units if units else 0.0))
    return ActivationReport(rows)


# --- benchmark: what the debug layer costs --------------------------------------------------------------------------
def _bench(n_ops=200, reps=30):
    """Median seconds for a chain of ``n_ops`` small ops (forward, forward+backward): off / site peek / debug on."""
    import statistics
    import time

    import tapegrad
    from .autograd import anomaly
    x = tapegrad.tensor([1.0, 2.0], requires_grad=True)

    def run(backward):
        ts = []
        for _ in range(reps):
            t0 = time.perf_counter()
            y = x
            for _ in range(n_ops):
                y = y * 1.0001
            if backward:
                y.sum().backward()
            ts.append(time.perf_counter() - t0)
        return statistics.median(ts)

    res = {}
    for mode in ("off", "peek", "debug", "off2"):
        if mode == "peek":
            anomaly.want_sites(True)
        elif mode == "debug":
            anomaly.want_sites(False)
            enable()
        elif mode == "off2":
            disable()
        res[mode] = (run(False), run(True))
    off = tuple(min(a, b) for a, b in zip(res.pop("off"), res.pop("off2")))
    res["off"] = off
    return res


if os.environ.get("TAPEGRAD_DEBUG", "").strip() not in ("", "0", "false", "False"):
    enable()


if __name__ == "__main__":
    import sys
    if "--bench" in sys.argv:
        r = _bench()
        off = r["off"]
        print("chain of 200 small ops, median of 30 (forward | forward+backward):")
        for k in ("off", "peek", "debug"):
            f, b = r[k]
            print(f"  {k:6s} {f * 1e3:7.3f} ms | {b * 1e3:7.3f} ms   overhead {100 * (f / off[0] - 1):+6.1f}% | "
                  f"{100 * (b / off[1] - 1):+6.1f}%")
