"""The import hook of ``tapegrad.parity``'s runs (loaded by path, not as part of the package: it imports nothing of
tapegrad's, so that the torch run can map ``tapegrad`` to ``torch`` before anything is imported).

``install(mode, src)`` makes ``torch`` (and ``torch.*``) resolve to tapegrad's modules in the tapegrad run (and
``functorch`` to ``tapegrad.functorch``), and
``tapegrad`` to torch's in the torch run; ``propagate`` does the same for the processes the run starts through
``multiprocessing``'s spawn method (``mp.Process``, ``mp.spawn``, DataLoader workers under spawn): their command
line installs the hook before the child unpickles anything or imports the script as ``__mp_main__``.
"""

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys


class _AliasLoader(importlib.abc.Loader):
    def __init__(self, target):
        self.target = target

    def create_module(self, spec):
        module = importlib.import_module(self.target)
        self.own_spec = module.__spec__
        return module

    def exec_module(self, module):
        # the import system gave the module the alias's spec (named as the alias) after create_module: give it
        # back its own, or its __package__ and __spec__.parent disagree and every relative import it does later
        # (a lazy attribute) raises an ImportWarning, shown under warnings.simplefilter("always")
        module.__spec__ = self.own_spec


class _Alias(importlib.abc.MetaPathFinder):
    """Resolve `src_name` and `src_name.*` to the already importable `dst_name` modules."""

    def __init__(self, src_name, dst_name, fallback_dir=None):
        self.src, self.dst, self.fallback_dir = src_name, dst_name, fallback_dir

    def find_spec(self, fullname, path=None, target=None):
        if fullname != self.src and not fullname.startswith(self.src + "."):
            return None
        target_name = self.dst + fullname[len(self.src):]
        try:
            found = importlib.util.find_spec(target_name)
        except ModuleNotFoundError:
            found = None
        if found is None and self.fallback_dir is not None:
            # a module only the source library has (tapegrad.demo): load its own file under its own name
            base = os.path.join(self.fallback_dir, *fullname.split("."))
            for cand, pkg in ((os.path.join(base, "__init__.py"), True), (base + ".py", False)):
                if os.path.exists(cand):
                    return importlib.util.spec_from_file_location(
                        fullname, cand, submodule_search_locations=[base] if pkg else None)
            return None
        if found is None:
            raise ModuleNotFoundError(f"No module named {fullname!r}: {self.dst} stands in for {self.src} in this "
                                      f"run and has no {target_name!r}", name=fullname)
        return importlib.machinery.ModuleSpec(fullname, _AliasLoader(target_name),
                                              is_package=found.submodule_search_locations is not None)


def install(mode, src):
    if mode == "tapegrad":
        sys.meta_path.insert(0, _Alias("functorch", "tapegrad.functorch"))   # (real functorch imports real torch)
        sys.meta_path.insert(0, _Alias("torch", "tapegrad"))
    else:
        sys.meta_path.insert(0, _Alias("tapegrad", "torch", fallback_dir=src))


def propagate(mode, src):
    import multiprocessing.spawn as spawn
    original = spawn.get_command_line
    prelude = (f"import runpy; runpy.run_path({__file__!r})['install']({mode!r}, {src!r}); ")

    def get_command_line(**kwds):
        cmd = list(original(**kwds))
        i = cmd.index("-c")
        cmd[i + 1] = prelude + cmd[i + 1]
        return cmd

    spawn.get_command_line = get_command_line
