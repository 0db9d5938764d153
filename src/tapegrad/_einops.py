"""einops on tapegrad tensors, for programs that write ``import tapegrad as torch`` (optional: einops is not a
dependency, and nothing here imports it).

einops picks a backend by the tensor's type: it walks the subclasses of its ``AbstractBackend`` and tries each one
whose ``framework_name`` is a module in ``sys.modules``. Its torch backend serves tapegrad's tensors whenever
``torch`` is tapegrad (under ``tapegrad.parity``, or after ``sys.modules["torch"] = tapegrad``); a program that
imports tapegrad under its own name needs a backend named ``tapegrad``. ``_TapegradBackend`` is einops' torch
backend with ``self.torch`` bound to tapegrad (every method of that backend calls torch's API through it).

The class is defined as soon as both tapegrad and einops are imported, in either order: ``install()`` (run by
``import tapegrad``) defines it at once when einops is already loaded, and otherwise puts a finder on
``sys.meta_path`` that waits for ``einops._backends`` to be executed, defines it then, and removes itself.
Layers (``einops.layers.torch.Rearrange``...) subclass the ``torch.nn.Module`` that module imports: they serve
tapegrad models where ``torch`` is tapegrad.
"""

from __future__ import annotations

import importlib.abc
import sys

_TARGET = "einops._backends"
_registered = []


def register():
    """Define einops' backend for tapegrad (once); einops must be importable."""
    if _registered:
        return _registered[0]
    from einops._backends import TorchBackend

    class _TapegradBackend(TorchBackend):
        framework_name = "tapegrad"

        def __init__(self):       # (not TorchBackend's: it imports torch and registers ops with torch._dynamo)
            import tapegrad
            self.torch = tapegrad

    _registered.append(_TapegradBackend)
    return _TapegradBackend


class _Loader(importlib.abc.Loader):
    """Runs einops' own loader for ``einops._backends``, then registers the backend."""

    def __init__(self, loader):
        self.loader = loader

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module):
        self.loader.exec_module(module)
        register()


class _WaitForEinops(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path=None, target=None):
        if fullname != _TARGET:
            return None
        uninstall()                       # find the real spec with the other finders, and only once
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            spec = find(fullname, path, target) if find is not None else None
            if spec is not None:
                if spec.loader is not None:
                    spec.loader = _Loader(spec.loader)
                return spec
        return None


_finder = _WaitForEinops()


def install():
    if _TARGET in sys.modules:
        register()
    elif _finder not in sys.meta_path:
        sys.meta_path.insert(0, _finder)


def uninstall():
    if _finder in sys.meta_path:
        sys.meta_path.remove(_finder)
