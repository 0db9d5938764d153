"""Interpreters: how the function transforms (forward-mode AD, vmap, compile's capture, autocast, the profiler)
see every op call. See docs/design.md, "Interpreters".

While no transform is active in any thread, ``Function.apply`` is the plain eager call; ``_count_active`` switches
it to the interpreted call (``function._apply_interpreted``) when the first one is entered anywhere and back when
the last one exits.
"""

from __future__ import annotations

import threading

from .grad_mode import _state


class Interpreter:
    """One active function transform (forward-mode AD, vmap, compile's capture): while it is active, every op
    call (``SomeFunction.apply``, built-in or user-defined) goes to its ``process(cls, args, kwargs)``.

    ``process`` runs the op itself with ``self.call_next(cls, args, kwargs)`` and does its own work around
    that (unwrapping its tensors before, wrapping or recording after). Transforms nest as in ``torch.func``:
    the one entered last sees an op first, and while it processes that op, every op it calls (``call_next``
    included, and the ops it uses for its own work, e.g. a tangent's formula) goes to the transforms entered
    before it, and finally to eager. So ``vmap(jvp(f))`` batches the tangent formulas too.

    ``with interp:`` activates it in this thread (``enter()``/``exit()`` without ``with``). With no transform
    active anywhere, ``Function.apply`` is the plain eager call: an eager op pays nothing for this mechanism.
    """

    level = None      # its position in this thread's stack while active

    def process(self, cls, args, kwargs):
        return self.call_next(cls, args, kwargs)

    @staticmethod
    def call_next(cls, args, kwargs):
        return cls.apply(*args, **kwargs)

    def enter(self):
        st = _state
        if st.top != len(st.interpreters) - 1:
            raise RuntimeError("a function transform cannot be entered while another one is processing an op")
        self.level = len(st.interpreters)
        st.interpreters = (*st.interpreters, self)
        st.top = self.level
        _count_active(1)
        return self

    def exit(self):
        st = _state
        if not st.interpreters or st.interpreters[-1] is not self:
            raise RuntimeError(f"{type(self).__name__}: transforms must be exited in the reverse order of entering")
        st.interpreters = st.interpreters[:-1]
        st.top = len(st.interpreters) - 1
        self.level = None
        _count_active(-1)

    def __enter__(self):
        return self.enter()

    def __exit__(self, *exc):
        self.exit()
        return False


def active_interpreters():
    """This thread's active transforms, outermost first."""
    return _state.interpreters


_active = [0]   # active transforms in all threads: Function.apply is the interpreted call while it is above 0
# The meta device's step (``_meta.apply_meta``), set while meta tensors exist (it counts as one active transform):
# the last one an op call passes before eager.
_meta_step = [None]
_active_lock = threading.Lock()
# (the function behind ``Function.apply``, its eager code, the interpreted call's code): set by function.py
_switch = None


def _count_active(delta):
    """Switch ``Function.apply`` between the eager and the interpreted call when the count of active transforms
    leaves or reaches 0. The switch swaps the code of the one function behind the classmethod rather than the
    class attribute: rebinding ``Function.apply`` would invalidate the attribute caches of every op class (a
    walk over some 360 subclasses: ~20 us per transform call, ~100 us with cold caches, twice per call)."""
    fn, eager, interpreted = _switch
    with _active_lock:
        _active[0] += delta
        fn.__code__ = interpreted if _active[0] > 0 else eager
