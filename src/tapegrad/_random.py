"""The random number generators: one seeded global ``Generator`` (``manual_seed``) and ``tapegrad.Generator``.

Values are NumPy's (PCG64), not PyTorch's streams: the same seed gives the same numbers in tapegrad, run after
run, but not the numbers torch would give. A generator's state (``get_state``, ``get_rng_state``) is a uint8
tensor, as torch's, holding NumPy's bit-generator state.
"""

from __future__ import annotations

import numpy as np

__all__ = ["Generator", "manual_seed", "seed", "initial_seed", "get_rng_state", "set_rng_state", "default_generator"]


class Generator:
    """A random number generator: ``g = tapegrad.Generator().manual_seed(0)``; pass it as ``generator=g`` to any
    random op (creation, in-place fills, ``multinomial``, samplers, ``random_split``)."""

    def __init__(self, device="cpu"):
        from .tensor import device as _device
        self.device = _device(device)          # the CPU only (another device is a clear error)
        self._seed = 67280421310721   # torch's default initial seed
        self.np = np.random.Generator(np.random.PCG64(self._seed))

    def manual_seed(self, seed):
        """Seeds are 64-bit, as torch's: any integer in [-2**63, 2**64); a negative one wraps around as torch's
        does (-1 is 2**64 - 1). Returns the generator."""
        seed = int(seed)
        if not -2 ** 63 <= seed < 2 ** 64:
            raise ValueError("Overflow when unpacking long long")    # torch's words
        self._seed = seed % 2 ** 64
        self.np = np.random.Generator(np.random.PCG64(self._seed))
        return self

    def seed(self):
        """Seed from the operating system's entropy; returns the new seed."""
        s = int(np.random.SeedSequence().entropy % (2 ** 63))
        self.manual_seed(s)
        return s

    def initial_seed(self):
        return self._seed

    def get_state(self):
        """The state as a uint8 tensor (``set_state`` takes it back; ``tapegrad.save`` writes it)."""
        import json
        from .tensor import Tensor
        state = json.dumps({"seed": self._seed, "bit_generator": self.np.bit_generator.state}).encode()
        return Tensor._make(np.frombuffer(state, np.uint8).copy())

    def set_state(self, new_state):
        import json
        from .tensor import Tensor
        if not isinstance(new_state, Tensor) or new_state._array.dtype != np.uint8:
            raise TypeError("RNG state must be a tapegrad.ByteTensor")
        try:
            state = json.loads(bytes(new_state._array.ravel()).decode())
            if "bit_generator" not in state:        # (the format before the seed was kept with the state)
                state = {"seed": self._seed, "bit_generator": state}
            bit = np.random.PCG64()
            bit.state = state["bit_generator"]
        except (ValueError, KeyError, TypeError) as e:
            raise RuntimeError(f"Expected a state made by Generator.get_state() or get_rng_state(), got "
                               f"{new_state._array.size} bytes that are not one ({e})") from None
        self.np = np.random.Generator(bit)
        self._seed = int(state["seed"])
        return self

    def __repr__(self):
        return f"<tapegrad._random.Generator object at {hex(id(self))}>"


default_generator = Generator()


def _gen(generator):
    """The NumPy generator behind ``generator=`` (the global one for None), with torch's TypeError for anything
    that is not a ``tapegrad.Generator``."""
    if generator is None:
        return default_generator.np
    if not isinstance(generator, Generator):
        raise TypeError(f"argument 'generator' must be tapegrad.Generator, not {type(generator).__name__}")
    return generator.np


def manual_seed(seed):
    """Seed the global generator (all of tapegrad's random ops draw from it); returns it."""
    return default_generator.manual_seed(seed)


def seed():
    """Seed the global generator from the operating system's entropy; returns the seed."""
    return default_generator.seed()


def initial_seed():
    return default_generator.initial_seed()


_vmap_hook = None   # set by func.vmap while a level with randomness="different" is active (see draw_shape)


def draw_shape(shape):
    """``(shape, wrap)`` for a random draw of ``shape``: under ``vmap(..., randomness="different")`` (the level that
    sees the call), one draw per sample — the shape with the batch size in front, and ``wrap`` turning the drawn
    tensor into the batched tensor the function sees; otherwise ``(shape, None)``."""
    if _vmap_hook is None:
        return shape, None
    return _vmap_hook(tuple(shape))


def get_rng_state():
    """The global generator's state, a uint8 tensor (``set_rng_state`` restores it)."""
    return default_generator.get_state()


def set_rng_state(new_state):
    default_generator.set_state(new_state)
