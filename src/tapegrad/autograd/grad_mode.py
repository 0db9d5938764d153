"""Grad mode: one thread-local flag that says whether ops record a graph.

``no_grad``, ``enable_grad``, ``set_grad_enabled`` and ``inference_mode`` save the flag, set it and restore it;
each works as a context manager and as a decorator. The flag is per thread, as in PyTorch: a ``no_grad`` in
one thread does not switch off recording in another.
"""

from __future__ import annotations

import functools
import inspect
import threading

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "inference_mode", "is_grad_enabled",
           "is_inference_mode_enabled", "is_multithreading_enabled", "set_multithreading_enabled"]


class _State(threading.local):
    enabled = True      # class attributes are the defaults every new thread starts from
    inference = False
    interpreters = ()   # the active function transforms of this thread, outermost first (autograd/function.py)
    top = -1            # the index of the one that sees the next op call (-1: none, eager)
    saved_hooks = ()    # the saved-tensor hook pairs (pack, unpack) of this thread, innermost last (function.py)
    hooks_disabled = None   # disable_saved_tensors_hooks's error message while it is active
    tasks = ()          # the backward walks this thread is running, innermost last (engine.current_task)


_state = _State()


def is_grad_enabled() -> bool:
    """True when ops record a graph (the default)."""
    return _state.enabled


def is_inference_mode_enabled() -> bool:
    return _state.inference


class _Mode:
    """Base of the grad-mode context managers; subclasses define ``_mode``."""

    _mode = True

    def __enter__(self):
        self._prev = (_state.enabled, _state.inference)
        _state.enabled = self._mode
        return self

    def __exit__(self, *exc):
        _state.enabled, _state.inference = self._prev
        return False

    def __call__(self, fn):
        """Use as a decorator: ``@no_grad()`` (or ``@no_grad``) wraps each call, generators included."""
        make = self.clone
        if inspect.isgeneratorfunction(fn):
            @functools.wraps(fn)
            def gen_wrapper(*args, **kwargs):
                gen = fn(*args, **kwargs)
                with make():
                    value = next(gen)
                while True:
                    try:
                        with make():
                            sent = yield value
                        with make():
                            value = gen.send(sent)
                    except StopIteration as stop:
                        return stop.value
            return gen_wrapper

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with make():
                return fn(*args, **kwargs)
        return wrapper

    def clone(self):
        return self.__class__()


class no_grad(_Mode):
    """Context manager / decorator: no graph is recorded inside.

    >>> x = tapegrad.ones(2, requires_grad=True)
    >>> with tapegrad.no_grad():
    ...     y = x * 2
    >>> y.requires_grad
    False
    """

    _mode = False

    def __new__(cls, fn=None):
        self = super().__new__(cls)
        if callable(fn):  # used as a bare decorator: @no_grad
            return self(fn)
        return self

    def __init__(self, fn=None):
        pass


class enable_grad(_Mode):
    """Context manager / decorator: recording on, even inside ``no_grad``."""

    _mode = True

    def __new__(cls, fn=None):
        self = super().__new__(cls)
        if callable(fn):
            return self(fn)
        return self

    def __init__(self, fn=None):
        pass


_multithreading = [True]


def is_multithreading_enabled() -> bool:
    """torch's switch for running backward on several device threads. tapegrad's engine has one thread (the
    caller's): the switch is kept and read back, and changes nothing."""
    return _multithreading[0]


class set_multithreading_enabled:
    """``set_multithreading_enabled(mode)``: as a call, a context manager (restoring the old value) or a decorator;
    see ``is_multithreading_enabled``."""

    def __init__(self, mode: bool):
        self._prev = _multithreading[0]
        self.mode = bool(mode)
        _multithreading[0] = self.mode

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _multithreading[0] = self._prev
        return False

    def clone(self):
        return set_multithreading_enabled(self.mode)


class set_grad_enabled(_Mode):
    """Switch recording on or off: ``set_grad_enabled(False)`` as a call, a context manager or a decorator."""

    def __init__(self, mode: bool):
        self._mode = bool(mode)
        self._prev = (_state.enabled, _state.inference)
        _state.enabled = self._mode  # like torch, calling it (without ``with``) sets the mode at once

    def __enter__(self):
        return self

    def __call__(self, fn):
        _state.enabled, _state.inference = self._prev  # as a decorator, undo the immediate switch
        return super().__call__(fn)

    def clone(self):
        return set_grad_enabled(self._mode)


class inference_mode(_Mode):
    """Like ``no_grad`` (tapegrad builds no graph either way); ``inference_mode(False)`` is a no-op."""

    def __init__(self, mode: bool = True):
        if callable(mode):  # bare decorator
            raise TypeError("use @inference_mode() with parentheses")
        self._on = bool(mode)

    def __enter__(self):
        self._prev = (_state.enabled, _state.inference)
        if self._on:
            _state.enabled, _state.inference = False, True
        return self

    def clone(self):
        return inference_mode(self._on)
