"""The random number generators: one seeded global ``Generator`` (``manual_seed``) and ``tapegrad.Generator``.

Values are NumPy's (PCG64), not PyTorch's streams: the same seed gives the same numbers in tapegrad, run after
run, but not the numbers torch would give.
"""

from __future__ import annotations

import numpy as np

__all__ = ["Generator", "manual_seed", "seed", "initial_seed", "get_rng_state", "set_rng_state", "default_generator"]


class Generator:
    """A random number generator: ``g = tapegrad.Generator().manual_seed(0)``; pass as ``generator=g``."""

    def __init__(self, device="cpu"):
        self._seed = 67280421310721   # torch's default initial seed
        self.np = np.random.Generator(np.random.PCG64(self._seed))

    def manual_seed(self, seed):
        """Seeds are 64-bit, as torch's: any integer in [-2**63, 2**64); a negative one wraps around as torch's
        does (-1 is 2**64 - 1)."""
        seed = int(seed)
        if not -2 ** 63 <= seed < 2 ** 64:
            raise ValueError("Overflow when unpacking long long")    # torch's words
        self._seed = seed % 2 ** 64
        self.np = np.random.Generator(np.random.PCG64(self._seed))
        return self

    def seed(self):
        s = int(np.random.SeedSequence().entropy % (2 ** 63))
        self.manual_seed(s)
        return s

    def initial_seed(self):
        return self._seed

    def get_state(self):
        """The state as a uint8 tensor (serialisable with ``tapegrad.save``)."""
        from .tensor import Tensor
        import json
        state = json.dumps(self.np.bit_generator.state).encode()
        return Tensor._make(np.frombuffer(state, np.uint8).copy())

    def set_state(self, state):
        import json
        arr = state._array if hasattr(state, "_array") else np.asarray(state)
        self.np.bit_generator.state = json.loads(bytes(arr.astype(np.uint8)).decode())
        return self


default_generator = Generator()


def _gen(generator):
    return (generator or default_generator).np


def manual_seed(seed):
    """Seed the global generator (all of tapegrad's random ops draw from it)."""
    return default_generator.manual_seed(seed)


def seed():
    return default_generator.seed()


def initial_seed():
    return default_generator.initial_seed()


def get_rng_state():
    return default_generator.get_state()


def set_rng_state(state):
    default_generator.set_state(state)
