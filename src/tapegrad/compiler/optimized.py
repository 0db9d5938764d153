"""``OptimizedModule``: what ``tapegrad.compile(module)`` returns (torch's ``torch._dynamo.eval_frame
.OptimizedModule``, which scripts test with ``isinstance`` before saving ``model._orig_mod``).

It holds the module as its one child ``_orig_mod`` (so its state_dict keys start with ``_orig_mod.``, as torch's
do); calls go through the compiled callable; attribute reads and writes it does not have itself go to the module,
and so does ``training``."""

from __future__ import annotations

from ..nn.module import Module
from .runtime import Compiled

__all__ = ["OptimizedModule"]


class OptimizedModule(Module):
    """A module compiled by ``tapegrad.compile(module)``; ``_orig_mod`` is the module itself."""

    _OWN = frozenset({"_orig_mod", "_compiled", "dynamo_ctx", "forward"})

    def __init__(self, mod, **kw):
        super().__init__()
        self._orig_mod = mod
        object.__setattr__(self, "_compile_kw", kw)
        object.__setattr__(self, "_compiled", Compiled(mod._call_impl_eager, module=mod, **kw))

    def __call__(self, *args, **kwargs):
        return self._compiled(*args, **kwargs)

    def forward(self, *args, **kwargs):
        return self._compiled(*args, **kwargs)

    @property
    def training(self):
        mod = self.__dict__.get("_modules", {}).get("_orig_mod")
        return True if mod is None else mod.training

    @training.setter
    def training(self, mode):
        mod = self.__dict__.get("_modules", {}).get("_orig_mod")
        if mod is not None:
            mod.training = mode

    def train(self, mode=True):
        self._orig_mod.train(mode)
        return self

    def get_compiler_config(self):
        """The arguments it was compiled with (torch returns its backend's config)."""
        return dict(self._compile_kw)

    def __getattr__(self, name):
        try:
            return super().__getattr__(name)
        except AttributeError:
            return getattr(self.__dict__["_modules"]["_orig_mod"], name)

    def __setattr__(self, name, value):
        if name in self._OWN or name.startswith("__") or "_modules" not in self.__dict__ \
                or "_orig_mod" not in self._modules:
            return super().__setattr__(name, value)
        setattr(self._orig_mod, name, value)      # (torch's OptimizedModule writes through to the module)

    def __deepcopy__(self, memo):
        import copy
        return OptimizedModule(copy.deepcopy(self._orig_mod, memo), **self._compile_kw)

    def __reduce__(self):
        return OptimizedModule, (self._orig_mod,), {"_compile_kw": self._compile_kw}

    def __setstate__(self, state):
        object.__setattr__(self, "_compile_kw", state["_compile_kw"])
        object.__setattr__(self, "_compiled", Compiled(self._orig_mod._call_impl_eager, module=self._orig_mod,
                                                       **state["_compile_kw"]))
