"""Grad mode: one thread-local flag that says whether ops record a graph.

``no_grad``, ``enable_grad``, ``set_grad_enabled`` and ``inference_mode`` save the flag, set it and restore it;
each works as a context manager and as a decorator. The flag is per thread, as in PyTorch: a ``no_grad`` in
one thread does not switch off recording in another.

Inference mode is grad mode off plus one thing: every tensor made in it is an *inference tensor* (its version
counter is the shared ``INFERENCE_VERSION``, inherited by its views). Outside inference mode such a tensor cannot
be saved for backward, changed in place or made to require grad, as in torch. While any thread is in inference
mode, ``Tensor._make`` is swapped for a copy that marks what it makes there (``tensor.py``): outside it, making a
tensor costs nothing more.
"""

from __future__ import annotations

import functools
import inspect
import threading
import warnings

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "inference_mode", "is_grad_enabled",
           "is_inference_mode_enabled", "is_multithreading_enabled", "set_multithreading_enabled"]


class _State(threading.local):
    enabled = True      # class attributes are the defaults every new thread starts from
    inference = False
    inference_grad = False  # grad mode as enable_grad/no_grad set it inside inference mode (nothing records there)
    interpreters = ()   # the active function transforms of this thread, outermost first (autograd/function.py)
    top = -1            # the index of the one that sees the next op call (-1: none, eager)
    func_layers = 0     # how many torch.func transforms are running the user's function (func._forward.Layer)
    saved_hooks = ()    # the saved-tensor hook pairs (pack, unpack) of this thread, innermost last (function.py)
    hooks_disabled = None   # disable_saved_tensors_hooks's error message while it is active
    tasks = ()          # the backward walks this thread is running, innermost last (engine.current_task)


_state = _State()


def is_grad_enabled() -> bool:
    """True when ops record a graph (the default); inside inference mode, what ``enable_grad``/``no_grad`` set
    there (torch reports it, though nothing is recorded)."""
    return _state.enabled or _state.inference_grad


def is_inference_mode_enabled() -> bool:
    return _state.inference


INFERENCE_SAVED = (
    "Inference tensors cannot be saved for backward. Please do not use Tensors created in inference mode in "
    "computation tracked by autograd. To work around this, you can make a clone to get a normal tensor and use it "
    "in autograd, or use `torch.no_grad()` instead of `torch.inference_mode()`.")
INFERENCE_INPLACE = (
    "Inplace update to inference tensor outside InferenceMode is not allowed.You can make a clone to get a normal "
    "tensor before doing inplace update.See https://github.com/pytorch/rfcs/pull/17 for more details.")


class _InferenceVersion(list):
    """The version counter of every inference tensor (one shared object): it counts nothing. Inside inference
    mode a bump is ignored; outside, a bump (every in-place change makes one, after writing, as torch's does)
    raises torch's error."""

    __slots__ = ()

    def __setitem__(self, i, value):
        if not _state.inference:
            raise RuntimeError(INFERENCE_INPLACE)


INFERENCE_VERSION = _InferenceVersion([0])


def is_inference(input) -> bool:
    """True for a tensor made in inference mode (or a view of one): see ``Tensor.is_inference``."""
    from ..tensor import Tensor
    if not isinstance(input, Tensor):
        raise TypeError(f"is_inference(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    return input._vcl is INFERENCE_VERSION


_marking = [0, None]   # threads in inference mode now (nested entries counted); tensor.py's switch of Tensor._make


def _marking_on():
    with _marking_lock:
        _marking[0] += 1
        if _marking[0] == 1:
            _marking[1](True)


def _marking_off():
    with _marking_lock:
        _marking[0] -= 1
        if _marking[0] == 0:
            _marking[1](False)


_marking_lock = threading.Lock()


class _Mode:
    """Base of the grad-mode context managers; subclasses define ``_mode``."""

    _mode = True

    def __enter__(self):
        st = _state
        if st.inference:            # (inside inference mode nothing records: the mode is only reported)
            self._prev = (st.enabled, True, st.inference_grad)
            st.inference_grad = self._mode
        else:
            self._prev = (st.enabled, False)
            st.enabled = self._mode
        return self

    def __exit__(self, *exc):
        prev = self._prev
        if prev[1]:
            _state.enabled, _state.inference, _state.inference_grad = prev
        else:
            _state.enabled, _state.inference = prev
        return False

    def __call__(self, fn):
        """Use as a decorator: ``@no_grad()`` (or ``@no_grad``) wraps each call, generators included."""
        make = self.clone
        if isinstance(fn, type):
            warnings.warn("Decorating classes is deprecated and will be disabled in future versions. You should only "
                          "decorate functions or methods. To preserve the current behavior of class decoration, you "
                          "can directly decorate the `__init__` method and nothing else.", FutureWarning,
                          stacklevel=2)
            cls = fn
            fn = lambda *args, **kwargs: cls(*args, **kwargs)    # noqa: E731  (constructs under the mode, as torch)
        if inspect.isgeneratorfunction(fn):
            # the generator's own code runs under the mode; the caller's, between two yields, runs under its own
            # (values sent in, exceptions thrown in and close() reach the generator under the mode)
            @functools.wraps(fn)
            def gen_wrapper(*args, **kwargs):
                gen = fn(*args, **kwargs)
                try:
                    with make():
                        response = gen.send(None)
                    while True:
                        try:
                            request = yield response
                        except GeneratorExit:
                            with make():
                                gen.close()
                            raise
                        except BaseException as exc:
                            with make():
                                response = gen.throw(exc)
                        else:
                            with make():
                                response = gen.send(request)
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
    """``set_multithreading_enabled(mode)``: as a call, or as a context manager (restoring the old value); see
    ``is_multithreading_enabled``."""

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
        self.mode = mode       # (torch keeps the argument as given)
        _Mode.__enter__(self)  # like torch, calling it (without ``with``) sets the mode at once

    def __enter__(self):
        return self

    def __repr__(self):
        # (what a notebook shows for a bare ``torch.set_grad_enabled(True)`` line)
        return f"{type(self).__module__}.{type(self).__qualname__}(mode={self.mode})"

    __str__ = __repr__

    def __call__(self, fn):
        _Mode.__exit__(self)  # as a decorator, undo the immediate switch
        return super().__call__(fn)

    def clone(self):
        return set_grad_enabled(self._mode)


class inference_mode(_Mode):
    """Grad mode off, and every tensor made inside is an inference tensor (see the module's docstring);
    ``inference_mode(False)`` leaves inference mode and turns grad mode on, as torch's."""

    def __new__(cls, mode=True):
        self = super().__new__(cls)
        if callable(mode):  # used as a bare decorator: @inference_mode
            self._on = True
            return self(mode)
        return self

    def __init__(self, mode=True):
        if not callable(mode):
            self._on = bool(mode)

    def __enter__(self):
        st = _state
        self._prev = (st.enabled, st.inference, st.inference_grad)
        if self._on:
            _marking_on()
            st.enabled, st.inference, st.inference_grad = False, True, False
        else:
            st.enabled, st.inference, st.inference_grad = True, False, False
        return self

    def __exit__(self, *exc):
        _state.enabled, _state.inference, _state.inference_grad = self._prev
        if self._on:
            _marking_off()
        return False

    def clone(self):
        return inference_mode(self._on)
