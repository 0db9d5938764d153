"""``tapegrad.random``: torch.random's functions for the global generator, and ``fork_rng``.

>>> import tapegrad
>>> with tapegrad.random.fork_rng():
...     _ = tapegrad.rand(3)          # draws here leave the global generator where it was
"""

from __future__ import annotations

import contextlib

from ._random import Generator, default_generator, get_rng_state, initial_seed, manual_seed, seed, set_rng_state

__all__ = ["Generator", "default_generator", "fork_rng", "get_rng_state", "initial_seed", "manual_seed", "seed",
           "set_rng_state"]


@contextlib.contextmanager
def fork_rng(devices=None, enabled=True, _caller="fork_rng", _devices_kw="devices", device_type=None):
    """Restore the global generator's state on exit (``enabled=False``: do nothing). ``devices`` names
    accelerators in torch; tapegrad has none, so only the CPU generator is forked."""
    if not enabled:
        yield
        return
    state = get_rng_state()
    try:
        yield
    finally:
        set_rng_state(state)
