"""``tapegrad.futures``: torch.futures' ``Future``, a value that some call will set once, and its two helpers.

tapegrad runs everything in the calling thread, so a future is usually complete when a caller first sees it
(``distributed.rpc.rpc_async`` returns one already set); a program can still make one with ``Future()`` and set it
later, and the callbacks of ``then``/``add_done_callback`` run when it is set, as torch runs them.
"""

from __future__ import annotations

import traceback

__all__ = ["Future", "collect_all", "wait_all"]

_UNSET = object()


class _Future:
    """A value set once by ``set_result`` (or an error by ``set_exception``); ``wait`` returns or raises it.

    This is the base torch has in C (``torch.Future``, ``torch.jit.Future``: what ``jit.fork`` returns);
    ``torch.futures.Future`` is its subclass."""

    def __init__(self, *, devices=None):
        self._value = _UNSET
        self._error = None
        self._callbacks = []

    def done(self) -> bool:
        return self._value is not _UNSET or self._error is not None

    def wait(self):
        if not self.done():
            # (torch blocks until another thread sets it; here no other thread will)
            raise RuntimeError("Future.wait(): this Future is not complete and nothing running can complete it "
                               "(tapegrad runs every call in the calling thread)")
        return self.value()

    def value(self):
        if self._error is not None:
            raise self._error
        if self._value is _UNSET:
            raise RuntimeError("Future.value(): the Future is not complete yet (call wait(), or check done() first)")
        return self._value

    def set_result(self, result) -> None:
        self._complete()
        self._value = result
        self._run_callbacks()

    def set_exception(self, result) -> None:
        if not isinstance(result, BaseException):
            raise TypeError(f"set_exception's argument must be an exception, got {type(result).__name__}")
        self._complete()
        self._error = result
        self._run_callbacks()

    def then(self, callback) -> _Future:
        """A new Future set to ``callback(self)`` once this one completes (an error the callback raises becomes
        the new Future's RuntimeError, in torch's words)."""
        out = _Future()

        def chain(fut):
            try:
                result = callback(fut)
            except Exception as e:
                out.set_exception(RuntimeError(f"Got the following error when running the callback: "
                                               f"{type(e).__name__}: {e}\n\nAt:\n"
                                               + "".join(traceback.format_tb(e.__traceback__))))
            else:
                out.set_result(result)

        self.add_done_callback(chain)
        return out

    def add_done_callback(self, callback) -> None:
        """Run ``callback(self)`` when this Future completes (at once when it already has)."""
        if self.done():
            callback(self)
        else:
            self._callbacks.append(callback)

    def _complete(self):
        if self.done():
            raise RuntimeError("Attempting to mark a completed Future as complete again. Note that a Future can "
                               "only be marked completed once.")

    def _run_callbacks(self):
        callbacks, self._callbacks = self._callbacks, []
        for cb in callbacks:
            cb(self)

    def __repr__(self):
        return f"<{type(self).__module__}.{type(self).__name__} object at {hex(id(self))}>"


_Future.__name__ = _Future.__qualname__ = "Future"
_Future.__module__ = "tapegrad"


class Future(_Future):
    """``torch.futures.Future``."""


def _finished(result, cls=_Future):
    """A future already set to ``result`` (``jit.fork``'s: the call ran at once)."""
    f = cls()
    f.set_result(result)
    return f


def collect_all(futures) -> Future:
    """A Future that completes with the list of ``futures`` once all of them have completed."""
    futures = list(futures)
    out = _Future()
    left = [len(futures)]
    if not futures:
        out.set_result([])

    def one_done(_):
        left[0] -= 1
        if left[0] == 0:
            out.set_result(futures)

    for f in futures:
        f.add_done_callback(one_done)
    return out


def wait_all(futures) -> list:
    """The values of ``futures`` in order (the first error among them is raised)."""
    return [f.wait() for f in futures]
