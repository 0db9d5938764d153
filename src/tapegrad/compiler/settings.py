"""The switches of ``tapegrad.compile``: torch's config modules and ``set_stance``.

**Config modules.** ``tapegrad._dynamo.config`` and ``tapegrad._inductor.config`` take exactly torch's keys
(``torch_config.json``, made from torch by ``tests/compiler/gen_torch_config.py``), with torch's defaults, torch's
aliases (``cache_size_limit`` is ``recompile_limit``) and torch's error for a key torch does not have. They are
modules (``import torch._inductor.config`` works) with torch's ``patch(...)`` (a context manager and a decorator)
and ``get_config_copy()``. tapegrad's replay reads few of them: ``recompile_limit`` (how many guard sets a function
is captured for), ``error_on_recompile``; the others (inductor's tuning, dynamo's tracing choices) are kept and read
back but change nothing: there is no code generator to tune.

**Stances** (torch's ``torch.compiler.set_stance``): ``"default"``; ``"force_eager"`` (compiled functions run
eagerly); ``"eager_on_recompile"`` (a call no cached program fits runs eagerly instead of capturing);
``"fail_on_recompile"`` (it raises instead); ``"eager_then_compile"`` (a function's first call runs eagerly, the
next one captures). ``set_stance(...)`` sets the stance at once; used as a context manager or a decorator it puts
the previous one back after the block or the call.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.machinery
import json
import os
import sys
import types

__all__ = ["ConfigModule", "set_stance", "current", "load"]

_TABLE = None


def _table():
    global _TABLE
    if _TABLE is None:
        with open(os.path.join(os.path.dirname(__file__), "torch_config.json"), encoding="utf-8") as fh:
            _TABLE = json.load(fh)
    return _TABLE


def _copy(v):
    return json.loads(json.dumps(v)) if isinstance(v, (list, dict)) else v


class _Sub:
    """A group of keys with a common prefix (``config.triton``): reads and writes go to the module."""

    def __init__(self, mod, prefix):
        object.__setattr__(self, "_mod", mod)
        object.__setattr__(self, "_prefix", prefix)

    def __getattr__(self, name):
        return self._mod.__getattr__(self._prefix + name)

    def __setattr__(self, name, value):
        self._mod.__setattr__(self._prefix + name, value)


class ConfigModule(types.ModuleType):
    """A config module with torch's keys: attribute reads and writes check the key (see the module's docstring)."""

    def __init__(self, name, section):
        super().__init__(name)
        t = _table()[section]
        object.__setattr__(self, "_defaults", t["keys"])
        object.__setattr__(self, "_aliases", t["aliases"])
        object.__setattr__(self, "_values", {})
        object.__setattr__(self, "_groups", {k.rsplit(".", 1)[0] for k in t["keys"] if "." in k})
        self.__doc__ = (f"tapegrad's {name}: torch's keys and defaults (see tapegrad.compiler.settings); "
                        "most change nothing in tapegrad's replay.")

    def _key(self, name):
        name = self._aliases.get(name, name)
        if name not in self._defaults:
            raise AttributeError(f"{self.__name__}.{name} does not exist")
        return name

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        if name in self._groups or any(g.startswith(name + ".") for g in self._groups):
            return _Sub(self, name + ".")
        key = self._key(name)
        values = self._values
        if key not in values:
            values[key] = _copy(self._defaults[key])
        return values[key]

    def __setattr__(self, name, value):
        if name.startswith("__"):
            return super().__setattr__(name, value)
        self._values[self._key(name)] = value

    def __dir__(self):
        return sorted({*super().__dir__(), *self._defaults, *self._aliases})

    def get_config_copy(self):
        """Every key and its value (a copy)."""
        return {k: _copy(self.__getattr__(k)) for k in self._defaults}

    def patch(self, arg1=None, arg2=None, **changes):
        """``with config.patch(key=value, ...):`` or ``config.patch("key", value)`` / ``config.patch({...})``,
        also as a decorator: the keys take the values inside, and their previous values after."""
        if isinstance(arg1, str):
            changes[arg1] = arg2
        elif isinstance(arg1, dict):
            changes.update(arg1)
        for k in changes:
            self._key(k)
        return _Patch(self, changes)


class _Patch(contextlib.ContextDecorator):
    def __init__(self, mod, changes):
        self.mod, self.changes, self.saved = mod, changes, []

    def __enter__(self):
        self.saved.append({k: getattr(self.mod, k) for k in self.changes})
        for k, v in self.changes.items():
            setattr(self.mod, k, v)
        return self

    def __exit__(self, *exc):
        for k, v in self.saved.pop().items():
            setattr(self.mod, k, v)
        return False


_MODULES = {}


def load(section):
    """The config module of ``section`` ("dynamo" or "inductor"), made once."""
    mod = _MODULES.get(section)
    if mod is None:
        mod = _MODULES[section] = ConfigModule(f"tapegrad._{section}.config", section)
        mod.__spec__ = importlib.machinery.ModuleSpec(mod.__name__, None)    # (import machinery looks for one)
        sys.modules[mod.__name__] = mod        # (``import torch._inductor.config`` finds it)
    return mod


# --- set_stance ---------------------------------------------------------------------------------------------------
STANCES = ("default", "force_eager", "eager_on_recompile", "fail_on_recompile", "eager_then_compile")
current = ["default"]


def _set(name):
    from .runtime import _disabled
    if current[0] == "force_eager":
        _disabled[0] -= 1
    if name == "force_eager":
        _disabled[0] += 1          # (the replay's fast path already checks this counter: nothing added per call)
    current[0] = name


class set_stance(contextlib.ContextDecorator):
    """Set how compiled functions behave (torch's ``torch.compiler.set_stance``; the stances are in the module's
    docstring). Takes effect at once; as a context manager or decorator, the previous stance comes back after."""

    def __init__(self, stance="default", *, skip_guard_eval_unsafe=False, force_backend=None):
        if stance not in STANCES:
            raise RuntimeError(f"invalid torch.compile stance {stance!r}: expected one of "
                               f"{', '.join(map(repr, STANCES))}")
        self.stance, self.prev = stance, current[0]
        _set(stance)
        self._outer = []

    def __enter__(self):
        self._outer.append(self.prev)
        _set(self.stance)
        return self

    def __exit__(self, *exc):
        _set(self._outer.pop())
        return False

    def __call__(self, fn):
        _set(self.prev)            # (as a decorator it changes nothing until the function runs)

        @functools.wraps(fn)
        def inner(*args, **kwargs):
            with set_stance(self.stance) as _:
                return fn(*args, **kwargs)

        return inner
