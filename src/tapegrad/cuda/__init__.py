"""``tapegrad.cuda``: there is no accelerator in tapegrad; this answers PyTorch's usual questions as PyTorch's CPU
build answers them.

``is_available()`` is False and ``device_count()`` 0, so ``device = "cuda" if torch.cuda.is_available() else "cpu"``
picks the CPU. The calls a CPU-only script still makes run as on torch's CPU build: seeding, ``empty_cache()``,
the memory counters (0), ``is_bf16_supported()`` (False). What needs a GPU raises torch's ``AssertionError``
("Torch not compiled with CUDA enabled"). ``torch.cuda.amp`` is the deprecated home of ``autocast`` and
``GradScaler``: both disable themselves with torch's warning.
"""

from __future__ import annotations

__all__ = ["is_available", "device_count", "is_initialized", "init", "manual_seed", "manual_seed_all", "seed",
           "seed_all", "empty_cache", "synchronize", "current_device", "set_device", "get_device_name",
           "get_device_capability", "get_device_properties", "mem_get_info", "memory_allocated",
           "max_memory_allocated", "memory_reserved", "max_memory_reserved", "reset_peak_memory_stats",
           "reset_max_memory_allocated", "memory_summary", "is_bf16_supported", "get_rng_state", "set_rng_state",
           "get_rng_state_all", "set_rng_state_all", "initial_seed", "ipc_collect", "device", "stream",
           "current_stream", "default_stream", "Stream", "StreamContext", "Event", "OutOfMemoryError", "amp",
           "random"]

_NOT_COMPILED = "Torch not compiled with CUDA enabled"


def _no_cuda(what):
    def call(*args, **kwargs):
        raise AssertionError(f"{_NOT_COMPILED} (tapegrad runs on the CPU only: torch.cuda.{what}() needs a GPU)")
    call.__name__ = what
    call.__doc__ = f"Needs a GPU: raises torch's CPU-build error ({_NOT_COMPILED!r})."
    return call


def is_available() -> bool:
    """Always False: tapegrad runs on the CPU (``device = "cuda" if cuda.is_available() else "cpu"`` works)."""
    return False


def device_count() -> int:
    return 0


def is_initialized() -> bool:
    return False


_initialized = False      # the flag behind is_initialized() that code reads directly (``torch.cuda._initialized``)


def is_bf16_supported(including_emulation: bool = True) -> bool:
    return False


def _nothing(*args, **kwargs):
    """Nothing to do without a GPU (as on torch's CPU build)."""
    return None


manual_seed = manual_seed_all = seed = seed_all = empty_cache = set_rng_state = set_rng_state_all = _nothing


def _zero(device=None) -> int:
    """No GPU memory is in use: 0, as on torch's CPU build."""
    return 0


memory_allocated = max_memory_allocated = memory_reserved = max_memory_reserved = _zero

init = _no_cuda("init")
synchronize = _no_cuda("synchronize")
current_device = _no_cuda("current_device")
set_device = _no_cuda("set_device")
get_device_name = _no_cuda("get_device_name")
get_device_capability = _no_cuda("get_device_capability")
get_device_properties = _no_cuda("get_device_properties")
mem_get_info = _no_cuda("mem_get_info")
reset_peak_memory_stats = _no_cuda("reset_peak_memory_stats")
reset_max_memory_allocated = _no_cuda("reset_max_memory_allocated")
memory_summary = _no_cuda("memory_summary")
get_rng_state = _no_cuda("get_rng_state")
initial_seed = _no_cuda("initial_seed")


def get_rng_state_all() -> list:
    """One state per GPU: none, so ``[]`` (as torch's CPU build answers)."""
    return []


ipc_collect = _no_cuda("ipc_collect")
current_stream = _no_cuda("current_stream")
default_stream = _no_cuda("default_stream")


class device:
    """``torch.cuda.device(i)``: made as torch makes it. A negative index (``args.gpu_index = -1``, a CPU run) is a
    no-op, as torch's docs promise; entering any other device needs a GPU."""

    def __init__(self, device):
        if isinstance(device, str):
            from ..tensor import device as _device
            device = _device(device)
        if isinstance(device, type(self)):
            device = device.idx
        elif not isinstance(device, int) and device is not None:
            if device.type != "cuda":
                raise ValueError(f"Expected a cuda device, but got: {device}")
            device = device.index
        self.idx = device

    def __enter__(self):
        if self.idx < 0:  # None (the current device, which a CPU build has none of) fails here as in torch
            return None
        raise RuntimeError("PyTorch was compiled without CUDA support (tapegrad runs on the CPU only)")

    def __exit__(self, *exc):
        return False


class StreamContext:
    """``torch.cuda.stream(s)``: with ``None`` (no stream) a block that changes nothing, as torch's."""

    def __init__(self, stream):
        if stream is not None:
            raise RuntimeError("torch.cuda.Stream requires CUDA support (tapegrad runs on the CPU only)")
        self.stream = None

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False


def stream(stream):
    return StreamContext(stream)


class Stream:
    def __init__(self, *args, **kwargs):
        raise RuntimeError("torch.cuda.Stream requires CUDA support (tapegrad runs on the CPU only)")


class Event:
    def __init__(self, *args, **kwargs):
        raise RuntimeError("Tried to instantiate dummy base class Event (tapegrad runs on the CPU only: there are no "
                           "CUDA events)")


class OutOfMemoryError(RuntimeError):
    """torch.cuda.OutOfMemoryError (``except torch.cuda.OutOfMemoryError:`` works; tapegrad never raises it)."""


def __getattr__(name):
    if name in ("amp", "random"):
        import importlib
        return importlib.import_module(f"{__name__}.{name}")
    # torch.cuda.FloatTensor and friends: isinstance is always False; making one is the CPU-only error
    from .._legacy import CUDA_TYPES
    if name in CUDA_TYPES:
        return CUDA_TYPES[name]
    raise AttributeError(f"module 'tapegrad.cuda' has no attribute {name!r}")
