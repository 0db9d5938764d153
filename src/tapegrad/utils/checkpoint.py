"""``tapegrad.utils.checkpoint``: trade compute for memory — keep nothing of a region's intermediates, recompute
them in backward.

``checkpoint(fn, *args, use_reentrant=False)`` runs ``fn`` once, normally, except that every tensor its ops would
keep for backward is replaced by a small placeholder (a saved-tensor hook, ``autograd.graph``): the region's
graph is recorded, its activations are not kept. When backward first reads one of them, ``fn`` runs again on the
saved inputs (with the random state of the first run, so dropout draws the same mask), the tensors are
collected in the order they were saved, and the recomputation stops as soon as the last one needed is there.
Each recomputed tensor is handed out once and dropped: after backward nothing of the region is left. A second
backward (``retain_graph=True``) recomputes again. Checkpoints nest: an inner checkpoint's inputs are tensors its
outer one saved, so unpacking them recomputes the outer region first.

``use_reentrant=True`` is the older variant (the default when ``use_reentrant`` is not given, with torch's
warning): a ``Function`` whose forward runs ``fn`` under ``no_grad`` and whose backward reruns it under
``enable_grad`` and backpropagates through that copy (not with ``autograd.grad`` or ``backward(inputs=...)``).
"""

from __future__ import annotations

import contextlib
import uuid
import warnings
import weakref

from .. import _random
from ..autograd import engine
from ..autograd.function import Function, PackedSaved, _input_version_error
from ..autograd.graph import saved_tensors_hooks
from ..autograd.grad_mode import _state, enable_grad, no_grad
from ..tensor import Tensor

__all__ = ["checkpoint", "checkpoint_sequential", "CheckpointError", "CheckpointFunction", "noop_context_fn",
           "set_checkpoint_early_stop", "set_checkpoint_debug_enabled", "detach_variable",
           "check_backward_validity", "get_device_states", "set_device_states", "DefaultDeviceType"]


class CheckpointError(RuntimeError):
    """A checkpointed region recomputed differently from its first run (or a saved tensor was read twice)."""


_TIP = ("\nTip: To see a more detailed error message, either pass `debug=True` to\n"
        "`tapegrad.utils.checkpoint.checkpoint(...)` or wrap the code block\n"
        "with `with tapegrad.utils.checkpoint.set_checkpoint_debug_enabled(True):` to\n"
        "enable checkpoint-debug mode globally.\n")

_early_stop = [None]      # set_checkpoint_early_stop's setting (None: each checkpoint's own early_stop)
_debug = [None]           # set_checkpoint_debug_enabled's setting (None: each checkpoint's own debug)


def noop_context_fn():
    """The default ``context_fn``: no context around the forward or the recomputation."""
    return contextlib.nullcontext(), contextlib.nullcontext()


@contextlib.contextmanager
def set_checkpoint_early_stop(enable: bool):
    """Whether non-reentrant checkpoints made inside stop recomputing once every needed tensor is back (default
    True); it is the forward that must run inside."""
    prev, _early_stop[0] = _early_stop[0], enable
    try:
        yield
    finally:
        _early_stop[0] = prev


@contextlib.contextmanager
def set_checkpoint_debug_enabled(enabled):
    """Overrides every checkpoint's ``debug`` inside (None: each checkpoint's own)."""
    prev, _debug[0] = _debug[0], enabled
    try:
        yield
    finally:
        _debug[0] = prev


def detach_variable(inputs):
    """Each tensor of a tuple detached, keeping its ``requires_grad``; other values as they are."""
    if not isinstance(inputs, tuple):
        raise RuntimeError(f"Only tuple of tensors is supported. Got Unsupported input type: {type(inputs).__name__}")
    out = []
    for a in inputs:
        if isinstance(a, Tensor):
            d = a.detach()
            d.requires_grad = a.requires_grad
            a = d
        out.append(a)
    return tuple(out)


def check_backward_validity(inputs):
    if not any(isinstance(a, Tensor) and a.requires_grad for a in inputs):
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None", stacklevel=2)


class DefaultDeviceType:
    """The device type whose random state checkpoints save when no input is on an accelerator: the current
    accelerator's, or ``"cpu"`` where there is none (tapegrad's case) until ``set_device_type`` names another."""

    _default_device_type = None

    @staticmethod
    def set_device_type(device: str = "cuda") -> None:
        DefaultDeviceType._default_device_type = device

    @staticmethod
    def get_device_type() -> str:
        if not DefaultDeviceType._default_device_type:
            from .. import accelerator
            acc = accelerator.current_accelerator(True)
            DefaultDeviceType._default_device_type = acc.type if acc else "cpu"
        return DefaultDeviceType._default_device_type


def _device_module(device_type):
    import tapegrad
    if device_type == "meta":
        return tapegrad.device("meta")
    return getattr(tapegrad, device_type)


def get_device_states(*args):
    """The indices of the accelerators that the tensors among ``args`` (nested in lists, tuples, dicts) live on,
    and each one's random state. Tapegrad's tensors are on the CPU, whose state ``get_rng_state`` covers: the
    answer is ``([], [])`` as torch's for CPU tensors."""
    from ._pytree import tree_leaves
    ids = [a.get_device() for a in tree_leaves(args)
           if isinstance(a, Tensor) and a.device.type not in ("cpu", "meta")]
    if not ids:
        return [], []
    module = _device_module(next(a.device.type for a in tree_leaves(args)
                                 if isinstance(a, Tensor) and a.device.type not in ("cpu", "meta")))
    states = []
    for i in ids:
        with module.device(i):
            states.append(module.get_rng_state())
    return ids, states


def set_device_states(devices, states, *, device_type=None) -> None:
    """Give each device of ``devices`` its saved random state (``get_device_states``' answer); nothing to do for
    none, and nothing for ``"meta"``. Entering a CUDA device needs a GPU (torch's CPU-build error)."""
    if device_type is None:
        device_type = DefaultDeviceType.get_device_type()
    if device_type == "meta":
        return
    module = _device_module(device_type)
    for device, state in zip(devices, states):
        with module.device(device):
            module.set_rng_state(state)


# --- the random state: the recomputation draws what the first run drew --------------------------------------
def _rng_state():
    return _random.default_generator._snapshot()


@contextlib.contextmanager
def _rng_forked(state):
    """Run with the global generator at ``state``; the state it had is restored afterwards."""
    if state is None:
        yield
        return
    gen = _random.default_generator
    outer = gen._snapshot()
    gen._restore(state)
    try:
        yield
    finally:
        gen._restore(outer)


# --- use_reentrant=True --------------------------------------------------------------------------------------
class CheckpointFunction(Function):
    """The reentrant checkpoint: forward under ``no_grad``; backward reruns it and backpropagates through it."""

    _vmap_per_sample = True     # (tapegrad's own: once per sample under vmap, func/_vmap_function.py)

    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        check_backward_validity(args)
        ctx.run_function = run_function
        ctx.fwd_rng_state = _rng_state() if preserve_rng_state else None
        ctx.inputs, ctx.tensor_indices, tensors = [], [], []
        for i, a in enumerate(args):
            if isinstance(a, Tensor):
                tensors.append(a)
                ctx.tensor_indices.append(i)
                ctx.inputs.append(None)
            else:
                ctx.inputs.append(a)
        ctx.save_for_backward(*tensors)
        with no_grad():
            return run_function(*args)

    @staticmethod
    def backward(ctx, *grads):
        task = engine.current_task()
        if task is not None and task.needed is not None:
            raise RuntimeError(
                "When use_reentrant=True, tapegrad.utils.checkpoint is incompatible with .grad() or passing an "
                "`inputs` parameter to .backward(). To resolve this error, you can either set use_reentrant=False, "
                "or call .backward() without passing the `inputs` argument.")
        inputs = list(ctx.inputs)
        for i, t in zip(ctx.tensor_indices, ctx.saved_tensors):
            inputs[i] = t
        with _rng_forked(ctx.fwd_rng_state):
            detached = detach_variable(tuple(inputs))
            with enable_grad():
                outputs = ctx.run_function(*detached)
        if isinstance(outputs, Tensor):
            outputs = (outputs,)
        pairs = [(o, g) for o, g in zip(outputs, grads) if isinstance(o, Tensor) and o.requires_grad]
        if not pairs:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is not necessary")
        engine.backward([o for o, _ in pairs], [g for _, g in pairs])
        return (None, None) + tuple(a.grad if isinstance(a, Tensor) else None for a in detached)


# --- use_reentrant=False: recomputation through saved-tensor hooks ------------------------------------------
class _Holder:
    """What the graph keeps in place of a tensor saved inside a checkpoint: per backward pass (its task id),
    the recomputed tensor until it is handed out, then None."""

    __slots__ = ("handles", "__weakref__")

    def __init__(self):
        self.handles = {}


class _StopRecomputation(Exception):
    pass


def _metadata(t):
    return {"shape": t.shape, "dtype": t.dtype, "device": t.device}


_METADATA = {"default": _metadata, "none": lambda t: None}


class _SavedInput:
    """A checkpoint's tensor input, kept as a tensor saved for backward: through the hooks set when it is saved
    (an outer checkpoint's), otherwise as itself with its version checked on use."""

    __slots__ = ("_t", "_v", "_packed")

    def __init__(self, t):
        hooks = _state.saved_hooks
        if hooks:
            self._packed, self._t = PackedSaved(t, *hooks[-1], -1), None
        else:
            self._packed, self._t, self._v = None, t, t._vc[0]

    def get(self):
        if self._packed is not None:
            return self._packed.unpack(None)
        t = self._t
        if t._vc[0] != self._v:
            raise _input_version_error(t, self._v)
        return t


class _Frame:
    """One call of a non-reentrant checkpoint: how to rerun it, and what its first run saved."""

    def __init__(self, recompute_fn, early_stop, metadata_fn, unpack_error_cb):
        self.recompute_fn = recompute_fn
        self.early_stop = early_stop
        self.metadata_fn = metadata_fn
        self.unpack_error_cb = unpack_error_cb
        self.inputs = []
        self.weak_holders = []       # one per tensor saved by the first run, in order
        self.x_metadatas = []
        self.recomp_counter = {}     # task id -> tensors saved so far by that pass's recomputation
        self.is_recomputed = {}
        self.recomputed_meta = {}    # task id -> {position: metadata of the recomputed tensor}
        self.forward_completed = False
        self.ignore_saved_mismatch = False

    def save_inputs(self, args):
        self.inputs = [_SavedInput(a) if isinstance(a, Tensor) else a for a in args]

    def get_inputs(self):
        return [a.get() if isinstance(a, _SavedInput) else a for a in self.inputs]

    def check_recomputed(self, gid):
        if self.ignore_saved_mismatch:
            return
        n = self.recomp_counter.get(gid, 0)
        if n != len(self.weak_holders):
            raise CheckpointError(
                "tapegrad.utils.checkpoint: A different number of tensors was saved during the original forward "
                "and recomputation.\n"
                f"Number of tensors saved during forward: {len(self.weak_holders)}\n"
                f"Number of tensors saved during recomputation: {n}.\n{_TIP}")
        diff = ""
        meta = self.recomputed_meta.get(gid, {})
        for i, ref in enumerate(self.weak_holders):
            if ref() is None or i not in meta:
                continue
            if self.x_metadatas[i] != meta[i]:
                diff += f"tensor at position {i}:\nsaved metadata: {self.x_metadatas[i]}\n" \
                        f"recomputed metadata: {meta[i]}\n"
        if diff:
            raise CheckpointError("tapegrad.utils.checkpoint: Recomputed values for the following tensors have "
                                  f"different metadata than during the forward pass.\n{diff}.\n{_TIP}")


class _RecomputationHooks(saved_tensors_hooks):
    """While a checkpoint reruns its region: each tensor saved goes to the placeholder at its position."""

    def __init__(self, frame, gid):
        def pack(x):
            x = x.detach() if x.requires_grad else x
            i = frame.recomp_counter.get(gid, 0)
            frame.recomp_counter[gid] = i + 1
            if i >= len(frame.weak_holders):
                if not frame.forward_completed:     # a backward inside the region's first run, without early stop
                    frame.ignore_saved_mismatch = True
                    return x
                raise CheckpointError("tapegrad.utils.checkpoint: trying to save more tensors during "
                                      f"recomputation than during the original forward pass.\n{_TIP}")
            holder = frame.weak_holders[i]()
            if holder is not None:       # (None: that part of the graph was already freed by a backward)
                holder.handles[gid] = x
                if frame.metadata_fn is not None:
                    frame.recomputed_meta.setdefault(gid, {})[i] = frame.metadata_fn(x)
            if frame.early_stop and i + 1 == len(frame.weak_holders):
                raise _StopRecomputation
            return x

        super().__init__(pack, lambda x: x)


class _CheckpointHooks(saved_tensors_hooks):
    """While a checkpointed region first runs: each tensor saved becomes a placeholder; reading one in backward
    reruns the region (once per backward pass)."""

    def __init__(self, frame):
        def pack(x):
            holder = _Holder()
            frame.weak_holders.append(weakref.ref(holder))
            if frame.metadata_fn is not None:
                with no_grad():
                    frame.x_metadatas.append(frame.metadata_fn(x))
            return holder

        def unpack(holder):
            task = engine.current_task()
            gid = task.id if task is not None else uuid.uuid4().int    # (read outside backward: a pass of its own)
            if not frame.is_recomputed.get(gid):
                args = frame.get_inputs()
                try:
                    with _RecomputationHooks(frame, gid), enable_grad():
                        frame.recompute_fn(*args)
                except _StopRecomputation:
                    pass
                frame.is_recomputed[gid] = True
                frame.check_recomputed(gid)
            if gid not in holder.handles:
                raise CheckpointError("tapegrad.utils.checkpoint: a tensor saved in the forward was not recomputed "
                                      f"(the recomputation ran differently).\n{_TIP}")
            t = holder.handles[gid]
            if t is None:
                raise CheckpointError(
                    "tapegrad.utils.checkpoint: Unpack is being triggered for a tensor that was already unpacked "
                    "once. If you are calling ctx.saved_tensors in backward, make sure to do so only once. "
                    "Otherwise please open an issue with details on your use case.")
            holder.handles[gid] = None
            return t

        if frame.unpack_error_cb is not None:
            plain = unpack

            def unpack(holder):
                try:
                    return plain(holder)
                except CheckpointError as e:
                    frame.unpack_error_cb(e)
                    raise
        super().__init__(pack, unpack)


class _OpLog:
    """``debug=True``: the ops a run calls (their node names) with where each was called from."""

    def __init__(self):
        self.ops = []

    def __call__(self):
        from ..autograd.function import Interpreter
        log = self

        class _Logger(Interpreter):
            def process(self, cls, args, kwargs):
                import traceback
                frames = [f for f in traceback.extract_stack()[:-2] if "/tapegrad/" not in f.filename]
                log.ops.append((cls.__name__, [f"{f.filename}:{f.lineno}:{f.name}" for f in frames[-4:]]))
                return self.call_next(cls, args, kwargs)
        return _Logger()

    def text(self, label):
        out = []
        for i, (name, where) in enumerate(self.ops):
            out.append(f"{name}   ({i + 1} of {len(self.ops)} in {label})\n" + "\n".join(where) + "\n")
        return "\n".join(out)


def _debug_context():
    fwd, rec = _OpLog(), _OpLog()

    def context_fn():
        return fwd(), rec()

    def on_error(e):
        raise CheckpointError(
            "An error happened while unpacking tensors; dumping logs of latest computation because you passed "
            "`debug=True` to `tapegrad.utils.checkpoint.checkpoint()`.\n\n"
            "Operations executed during the original forward:\n\n" + "\n".join(n for n, _ in fwd.ops) +
            "\n\nOperations executed during recomputation:\n\n" + "\n".join(n for n, _ in rec.ops) +
            "\n\nStack traces of the operators that ran in the original forward:\n\n" + fwd.text("original") +
            "\nStack traces of the operators that ran during recomputation:\n\n" + rec.text("recompute") +
            "\n ERROR: Detected non-determinism while running activation checkpointing\n\n" + str(e)) from e
    return context_fn, on_error


def _run_in(context, fn, args, kwargs):
    """``fn(*args, **kwargs)`` inside ``context``; a context that swallows the function's error is refused."""
    failed = True
    with context:
        ret = fn(*args, **kwargs)
        failed = False
    if failed:
        raise RuntimeError("tapegrad.utils.checkpoint: the forward context provided by context_fn suppressed an "
                           "exception raised during the checkpointed forward. This is not supported because "
                           "checkpoint cannot return a value for a failed forward.")
    return ret


def _checkpoint_without_reentrant(function, preserve_rng_state, context_fn, determinism_check, debug, early_stop,
                                  args, kwargs):
    unpack_error_cb = None
    if _debug[0] if _debug[0] is not None else debug:
        if context_fn is not noop_context_fn:
            raise ValueError("debug=True is incompatible with non-default context_fn")
        context_fn, unpack_error_cb = _debug_context()
    if determinism_check not in _METADATA:
        raise ValueError(f"determinism_check should be one of {list(_METADATA)}, but got {determinism_check}")
    forward_context, recompute_context = context_fn()
    if not _state.enabled:       # nothing is recorded: nothing to recompute
        return function(*args, **kwargs)
    rng = _rng_state() if preserve_rng_state else None

    def recompute_fn(*inputs):
        with _rng_forked(rng), recompute_context:
            function(*inputs, **kwargs)

    frame = _Frame(recompute_fn, _early_stop[0] if _early_stop[0] is not None else early_stop,
                   _METADATA[determinism_check], unpack_error_cb)
    frame.save_inputs(args)
    with _CheckpointHooks(frame):
        ret = _run_in(forward_context, function, args, kwargs)
    frame.forward_completed = True
    return ret


def checkpoint(function, *args, use_reentrant=None, context_fn=noop_context_fn, determinism_check="default",
               debug=False, early_stop=True, **kwargs):
    """Run ``function(*args, **kwargs)`` without keeping its intermediate tensors for backward: backward runs it
    again to get them (``preserve_rng_state=True``: with the same random draws).

    >>> lin = tapegrad.nn.Linear(4, 4)
    >>> x = tapegrad.randn(2, 4, requires_grad=True)
    >>> y = checkpoint(lambda t: lin(t).relu().sum(), x, use_reentrant=False)
    >>> y.backward()          # reruns lin(x).relu() here, for relu's saved result
    >>> x.grad.shape
    tapegrad.Size([2, 4])

    ``use_reentrant`` should be given: False (recommended) is the variant described in the module's docstring;
    True (the default when not given, with torch's warning) reruns the function in a backward of its own.
    ``determinism_check="default"`` compares the shapes, dtypes and devices of the recomputed tensors with the
    first run's (``"none"``: no check); ``debug=True`` adds the ops of both runs to that error;
    ``context_fn()`` returns two context managers, for the first run and for the recomputation.
    """
    if use_reentrant is None:
        warnings.warn(
            "tapegrad.utils.checkpoint: the use_reentrant parameter should be passed explicitly. Starting in "
            "PyTorch 2.9, calling checkpoint without use_reentrant will raise an exception. use_reentrant=False is "
            "recommended, but if you need to preserve the current default behavior, you can pass "
            "use_reentrant=True. Refer to docs for more details on the differences between the two variants.",
            stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs and use_reentrant:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    if use_reentrant:
        if context_fn is not noop_context_fn or debug is not False:
            raise ValueError("Passing `context_fn` or `debug` is only supported when use_reentrant=False.")
        return CheckpointFunction.apply(function, preserve, *args)
    return _checkpoint_without_reentrant(function, preserve, context_fn, determinism_check, debug, early_stop,
                                         args, kwargs)


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    """Run ``functions`` (a list of modules or functions, or an ``nn.Sequential``) one after another on
    ``input``, checkpointing them in ``segments`` pieces; the last piece runs normally.

    >>> model = tapegrad.nn.Sequential(*[tapegrad.nn.Linear(8, 8) for _ in range(4)])
    >>> out = checkpoint_sequential(model, 2, tapegrad.randn(3, 8, requires_grad=True), use_reentrant=False)
    """
    if use_reentrant is None:
        warnings.warn(
            "tapegrad.utils.checkpoint.checkpoint_sequential: the use_reentrant parameter should be passed "
            "explicitly. In version 2.9 we will raise an exception if use_reentrant is not passed. "
            "use_reentrant=False is recommended, but if you need to preserve the current default behavior, you can "
            "pass use_reentrant=True. Refer to docs for more details on the differences between the two variants.",
            stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))

    def run(start, end):
        def forward(x):
            for j in range(start, end + 1):
                x = functions[j](x)
            return x
        return forward

    from ..nn import Sequential
    if isinstance(functions, Sequential):
        functions = list(functions.children())
    size = len(functions) // segments
    end = -1
    for start in range(0, size * (segments - 1), size):
        end = start + size - 1
        input = checkpoint(run(start, end), input, use_reentrant=use_reentrant, preserve_rng_state=preserve)
    return run(end + 1, len(functions) - 1)(input)
