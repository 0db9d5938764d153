"""``torch.Stream`` and ``torch.Event`` as torch's CPU build has them: the CPU runs everything in order on one
stream, so a stream is always done (``query()`` is True, ``synchronize()`` returns at once) and the CPU backend
records no events (torch's RuntimeError); timing needs two recorded events, which the CPU never has."""

from __future__ import annotations

__all__ = ["Stream", "Event"]

_DEVICE_TYPE_NUMBERS = {"cpu": 0, "cuda": 1, "mps": 13, "meta": 14, "xpu": 12}
_NO_EVENTS = "cpu backend doesn't support events."


def _device_of(device):
    from .tensor import device as device_cls
    if device is None:
        return device_cls("cpu")
    if isinstance(device, int) and not isinstance(device, bool):
        raise RuntimeError("Cannot access accelerator device when none is available.")
    d = device if isinstance(device, device_cls) else device_cls(device)
    if d.type not in ("cpu", "meta"):
        raise RuntimeError(f"PyTorch is not linked with support for {d.type} devices")
    return d


class Stream:
    """An in-order queue of work on a device; on the CPU, work is done when it is issued."""

    def __init__(self, device=None, *, priority=0):
        self.device = _device_of(device)
        self.device_index = -1
        self.stream_id = 0

    @property
    def device_type(self):
        return _DEVICE_TYPE_NUMBERS.get(self.device.type, 0)

    def query(self):
        """Whether all work on the stream is done: always, on the CPU."""
        return True

    def synchronize(self):
        """Wait for the stream's work: none is pending on the CPU."""

    def wait_stream(self, stream):
        """Make later work wait for ``stream``'s: that records an event on it, which the CPU backend cannot."""
        raise RuntimeError(_NO_EVENTS)

    def wait_event(self, event):
        if not isinstance(event, Event):
            raise TypeError(f"wait_event(): argument 'event' must be Event, not {type(event).__name__}")
        event.wait(self)

    def record_event(self, event=None):
        raise RuntimeError(_NO_EVENTS)

    def is_capturing(self):
        return False

    @property
    def native_handle(self):
        raise RuntimeError("Backend doesn't support getting stream native handle.")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def __eq__(self, other):
        return isinstance(other, Stream) and (self.device, self.stream_id) == (other.device, other.stream_id)

    def __hash__(self):
        return hash((self.device.type, self.device_index, self.stream_id))

    def __repr__(self):
        return (f"torch.Stream device_type={self.device.type}, device_index={self.device_index}, "
                f"stream_id={self.stream_id}")


class Event:
    """A marker in a stream's work; the CPU backend records none."""

    def __init__(self, device=None, *, enable_timing=False, blocking=False, interprocess=False):
        self.device = _device_of(device)
        self.event_id = 0
        self._flag = 1 if enable_timing else 0
        self._recorded = False

    def record(self, stream=None):
        raise RuntimeError(_NO_EVENTS)

    def query(self):
        """Whether the work before the event is done: always, on the CPU."""
        return True

    def synchronize(self):
        """Wait for the event: nothing is pending on the CPU."""

    def wait(self, stream=None):
        """Make ``stream`` wait for the event: nothing is pending on the CPU."""

    def elapsed_time(self, end_event):
        if not (self._flag and getattr(end_event, "_flag", 0)):
            raise ValueError("Both events must be created with argument 'enable_timing=True'.")
        raise ValueError("Both events must be recorded before calculating elapsed time.")

    def ipc_handle(self):
        raise NotImplementedError("torch.Event ipc is not supported yet, please open an issue if you need this!")

    @classmethod
    def from_ipc_handle(cls, device, ipc_handle):
        raise NotImplementedError("torch.Event ipc is not supported yet, please open an issue if you need this!")

    def __repr__(self):
        return (f"torch.Event device_type={self.device.type}, device_index=-1, event_flag={self._flag}, "
                f"event_id={self.event_id}")
