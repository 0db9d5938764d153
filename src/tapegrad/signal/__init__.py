"""``tapegrad.signal``: torch.signal (loaded on first use); its one submodule is ``windows``."""

from . import windows

__all__ = ["windows"]
