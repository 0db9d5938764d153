"""Anomaly mode and "errors that say where".

``detect_anomaly()`` / ``set_detect_anomaly(True)``, as in PyTorch: while on, every node records the stack of
the forward call that created it, and every gradient a node returns is checked for NaN. A NaN raises
``RuntimeError: Function 'DivBackward0' returned nan values in its 0th output.`` after a warning that shows the
forward traceback (torch's wording), which is also appended to the error.

>>> import tapegrad
>>> x = tapegrad.tensor([0., 1.], requires_grad=True)
>>> with tapegrad.autograd.detect_anomaly():                              # doctest: +SKIP
...     (x / x).sum().backward()
RuntimeError: Function 'DivBackward0' returned nan values in its 1th output.
...

Errors that say where: an error raised while a node runs its backward (a saved tensor modified in place, a second
backward through a freed graph, a NaN, a gradient of the wrong shape) is re-raised with the node's name and the
line of *your* code that created it, when the node recorded it (otherwise the message stays torch's, unchanged).
Recording that line is a peek at the calling frames when the node is created; it is on under anomaly mode and
under ``tapegrad.debug`` (see ``tapegrad.debug`` for the measured cost that decided it is not on by default).
"""

from __future__ import annotations

import linecache
import os
import sys
import traceback
import warnings

from . import engine as _engine
from . import function as _function

__all__ = ["detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled", "is_anomaly_check_nan_enabled"]

_PKG = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_state = {"enabled": False, "check_nan": True, "sites": 0}   # sites: how many users want the site peek
_internal = {}    # code object -> True when it belongs to tapegrad (cached: the peek stays cheap)


# --- where a node was created ---------------------------------------------------------------------------------
class Site:
    """Where a node was created: the user's ``filename``, ``lineno``, ``name`` and, in anomaly mode, the stack."""

    __slots__ = ("code", "lineno", "stack", "epoch")

    def __init__(self, code, lineno, stack=None, epoch=None):
        self.code, self.lineno, self.stack, self.epoch = code, lineno, stack, epoch

    @property
    def filename(self):
        return self.code.co_filename

    @property
    def name(self):
        return self.code.co_name

    @property
    def line(self):
        return linecache.getline(self.filename, self.lineno).strip()

    def __str__(self):
        src = self.line
        return f'File "{self.filename}", line {self.lineno}, in {self.name}' + (f"\n    {src}" if src else "")

    def __repr__(self):
        return f"<Site {os.path.basename(self.filename)}:{self.lineno}>"


def user_frame(depth=2):
    """The innermost frame outside the tapegrad package (the user's code), or None."""
    f = sys._getframe(depth)
    internal = _internal
    while f is not None:
        co = f.f_code
        inside = internal.get(co)
        if inside is None:
            inside = internal[co] = os.path.abspath(co.co_filename).startswith(_PKG)
        if not inside:
            return f
        f = f.f_back
    return None


def peek_site(ctx=None):
    """The cheap peek: the user's code object and line (no traceback objects, nothing kept alive)."""
    f = user_frame(3)
    return None if f is None else Site(f.f_code, f.f_lineno)


def _full_site(ctx=None):
    f = user_frame(3)
    if f is None:
        return None
    return Site(f.f_code, f.f_lineno, traceback.extract_stack(f))


def _install():
    """Point ``function._site_hook`` at the right recorder (or None: then creating a node records nothing)."""
    if _state["enabled"]:
        hook = _full_site
    elif _state["sites"]:
        hook = peek_site
    else:
        hook = None
    extra = _state.get("extra")
    if extra is not None:        # tapegrad.debug wraps the recorder to add its own bookkeeping
        hook = extra(hook or peek_site)
    _function._site_hook = hook


def want_sites(on: bool):
    """Ask for (or release) the cheap site peek at node creation (used by tapegrad.debug)."""
    _state["sites"] += 1 if on else -1
    _install()


def describe(node):
    """``DivBackward0, created at File "x.py", line 5 ...`` — the where part of an autograd error."""
    site = getattr(node, "_site", None)
    if site is None:
        return (f"(raised by the backward of {node.name()}; turn on tapegrad.autograd.set_detect_anomaly(True) "
                "or tapegrad.debug.enable() to see the line of your code that created it)")
    if site.stack is not None:
        tb = "".join(traceback.format_list(site.stack)).rstrip()
        return f"(raised by the backward of {node.name()}; traceback of the forward call that created it:\n{tb})"
    return f"(raised by the backward of {node.name()}, created at {site})"


def annotate(exc, node):
    """Add the node's name and creation site to an error raised by its backward (once).

    Only when the node recorded its site (debug or anomaly mode): by default errors keep torch's exact wording.
    """
    if _state["enabled"] and not getattr(exc, "_anomaly_warned", False):
        _warn_forward_trace(node)     # (anomaly mode: any error of a backward says where its node was made)
        try:
            exc._anomaly_warned = True
        except AttributeError:
            pass
    if getattr(node, "_site", None) is None:
        return
    if getattr(exc, "_tapegrad_where", False) or not exc.args or not isinstance(exc.args[0], str):
        return
    exc.args = (exc.args[0] + "\n" + describe(node),) + exc.args[1:]
    try:
        exc._tapegrad_where = True
    except AttributeError:
        pass


# --- anomaly mode -----------------------------------------------------------------------------------------------
def _check_nan(node, grads_out, grads_in):
    if not _state["check_nan"] or grads_in is None:
        return
    for i, g in enumerate(grads_in):
        if g is None:
            continue
        a = g._array
        if a.dtype.kind in "fc" and a.size and (a != a).any():
            _warn_forward_trace(node)
            e = RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th output.")
            e._anomaly_warned = True
            raise e


def _warn_forward_trace(node):
    """Anomaly mode's warning when a node's backward failed: where its forward ran, as torch's words say it."""
    name = node.name()
    site = getattr(node, "_site", None)
    if site is not None and site.stack is not None:
        tb = "".join(traceback.format_list(site.stack))
        warnings.warn(f"Error detected in {name}. Traceback of forward call that caused the error:\n{tb}",
                      UserWarning, stacklevel=3)
    else:
        warnings.warn(f"Error detected in {name}. No forward pass information available. Enable detect anomaly "
                      "during forward pass for more information.", UserWarning, stacklevel=3)


def _set(mode, check_nan):
    mode = bool(mode)
    _state["check_nan"] = bool(check_nan)
    if mode != _state["enabled"]:
        _state["enabled"] = mode
        if mode:
            _engine._observers.append(_check_nan)
        else:
            try:
                _engine._observers.remove(_check_nan)
            except ValueError:
                pass
        _install()


def is_anomaly_enabled() -> bool:
    """True while anomaly mode is on."""
    return _state["enabled"]


def is_anomaly_check_nan_enabled() -> bool:
    return _state["check_nan"]


class detect_anomaly:
    """Context manager (and decorator) turning anomaly mode on: NaN checks and forward tracebacks in errors.

    >>> with tapegrad.autograd.detect_anomaly():                              # doctest: +SKIP
    ...     loss.backward()
    """

    def __init__(self, check_nan=True):
        self.prev = _state["enabled"]
        self.check_nan = check_nan
        self.prev_check_nan = _state["check_nan"]
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime and should only be "
                      "enabled for debugging.", UserWarning, stacklevel=2)

    def __enter__(self):
        _set(True, self.check_nan)
        return self

    def __exit__(self, *exc):
        _set(self.prev, self.prev_check_nan)
        return False

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.__class__(self.check_nan):
                return fn(*args, **kwargs)
        return wrapper


class set_detect_anomaly:
    """Turn anomaly mode on or off: ``set_detect_anomaly(True)``, or ``with set_detect_anomaly(False):``."""

    def __init__(self, mode: bool, check_nan: bool = True):
        self.prev = _state["enabled"]
        self.prev_check_nan = _state["check_nan"]
        _set(mode, check_nan)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _set(self.prev, self.prev_check_nan)
        return False
