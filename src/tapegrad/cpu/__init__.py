"""``tapegrad.cpu``: the one device tapegrad runs on, as ``torch.cpu`` describes it."""

from __future__ import annotations

__all__ = ["is_available", "device_count", "current_device", "synchronize", "set_device", "amp",
           "current_stream", "stream", "Stream", "StreamContext", "Event"]


def is_available() -> bool:
    return True


def device_count() -> int:
    return 1


def current_device() -> str:
    return "cpu"


def synchronize(device=None) -> None:
    """Nothing to wait for: every op has finished when it returns."""


def set_device(device) -> None:
    """(There is one CPU device; torch's is a no-op too.)"""


class Stream:
    """torch.cpu.Stream: ops run in order on the CPU; a stream is a name for that."""

    def __init__(self, priority: int = -1):
        self.priority = priority

    def wait_stream(self, stream) -> None:
        pass

    def synchronize(self) -> None:
        pass


_default = Stream()


def current_stream(device=None):
    return _default


class StreamContext:
    def __init__(self, stream):
        self.stream = stream

    def __enter__(self):
        return self.stream

    def __exit__(self, *exc):
        return False


def stream(stream):
    return StreamContext(stream)


class Event:
    def record(self, stream=None) -> None:
        pass

    def wait(self, stream=None) -> None:
        pass

    def query(self) -> bool:
        return True

    def synchronize(self) -> None:
        pass


def __getattr__(name):
    if name == "amp":
        import importlib
        return importlib.import_module(f"{__name__}.amp")
    raise AttributeError(f"module 'tapegrad.cpu' has no attribute {name!r}")
