"""``autocast``: casting the inputs of chosen ops while a region runs (see ``tapegrad.amp``).

The casting is a function transform like the others (``autograd.function.Interpreter``): while a CPU autocast
region is enabled, every op call comes to ``_Autocast.process``, which casts the op's floating-point Tensor
arguments (float64 ones excepted, as torch's) to the region's dtype for the lower-precision ops, or to float32 for
the float32 ops, and runs the op. Outside a region nothing of this runs.
"""

from __future__ import annotations

import functools
import threading
import warnings

from .. import _dtype
from ..autograd import function as _f
from ..ops import _util
from ..tensor import Tensor

__all__ = ["autocast", "is_autocast_enabled", "get_autocast_dtype", "set_autocast_enabled", "set_autocast_dtype",
           "is_autocast_available", "is_autocast_cache_enabled", "set_autocast_cache_enabled",
           "clear_autocast_cache", "custom_fwd", "custom_bwd"]

_DEVICES = ("cpu", "cuda", "xpu", "mps", "hpu", "xla", "mtia", "ipu", "meta", "privateuseone")


class _PerThread(threading.local):
    """Autocast's switches, per thread as torch's: ``_state[device]`` is [enabled, dtype] (torch's defaults: CPU
    bfloat16, the accelerators float16), ``cache`` the cache flag, ``active`` this thread's CPU transform while
    CPU autocast is on."""

    def __init__(self):
        self.devices = {d: [False, _dtype.bfloat16 if d == "cpu" else _dtype.float16] for d in _DEVICES}
        self.cache = True
        self.active = None

    def __getitem__(self, device):
        return self.devices[device]


_state = _PerThread()
_hooked = [0]               # threads with CPU autocast on: while above 0, the composite listed ops are hooked
_hook_lock = threading.Lock()
_CPU_DTYPES = (_dtype.bfloat16, _dtype.float16)


def _device(device_type):
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    d = device_type.split(":")[0]
    if d not in _state.devices:
        raise RuntimeError(f"Expected one of cpu, cuda, xpu, mps, ... device type at start of device string: "
                           f"{device_type}")
    return d


def is_autocast_available(device_type: str) -> bool:
    """Whether autocast can run on ``device_type``: the CPU only (there is no accelerator)."""
    return _device(device_type) == "cpu"


def is_autocast_enabled(device_type: str | None = None) -> bool:
    """Whether an autocast region is enabled for ``device_type`` (without one: CUDA's, as torch's)."""
    return _state[_device(device_type or "cuda")][0]


def get_autocast_dtype(device_type: str):
    return _state[_device(device_type)][1]


def set_autocast_enabled(device_type, enabled=None):
    """``set_autocast_enabled("cpu", True)`` (or torch's older one-argument form, CUDA's flag)."""
    if enabled is None:
        device_type, enabled = "cuda", device_type
    d = _device(device_type)
    _state[d][0] = bool(enabled)
    _sync()


def set_autocast_dtype(device_type, dtype):
    _state[_device(device_type)][1] = dtype


def is_autocast_cache_enabled() -> bool:
    return _state.cache


def set_autocast_cache_enabled(enabled: bool) -> None:
    _state.cache = bool(enabled)


def clear_autocast_cache() -> None:
    """(tapegrad keeps no cache of cast weights: each cast is one recorded op.)"""


# torch's deprecated per-device spellings
def is_autocast_cpu_enabled() -> bool:
    return _state["cpu"][0]


def get_autocast_cpu_dtype():
    return _state["cpu"][1]


def get_autocast_gpu_dtype():
    return _state["cuda"][1]


def set_autocast_cpu_enabled(enabled):
    set_autocast_enabled("cpu", enabled)


def set_autocast_cpu_dtype(dtype):
    _state["cpu"][1] = dtype


class autocast:
    """``with torch.autocast(device_type, dtype=None, enabled=True, cache_enabled=None):`` (or as a decorator):
    the region's ops run in mixed precision (see ``tapegrad.amp``). Regions nest; ``enabled=False`` turns it off
    inside an enabled one."""

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        self.device = _device(device_type)
        self.fast_dtype = _state[self.device][1] if dtype is None else dtype
        self._enabled = bool(enabled)
        self._cache_enabled = cache_enabled
        if self.device != "cpu" and self._enabled:
            if self.device == "cuda":
                warnings.warn("CUDA is not available or torch_xla is imported. Disabling autocast.", stacklevel=2)
            else:
                warnings.warn(f"User provided device_type of '{self.device}', but {self.device.upper()} is not "
                              "available. Disabling", stacklevel=2)
            self._enabled = False
        if self.device == "cpu" and self._enabled and self.fast_dtype not in _CPU_DTYPES:
            warnings.warn("In CPU autocast, but the target dtype is not supported. Disabling autocast.\nCPU "
                          "Autocast only supports dtype of torch.bfloat16, torch.float16 currently.", stacklevel=2)
            self._enabled = False

    def __enter__(self):
        st = _state[self.device]
        self._prev = (st[0], st[1], _state.cache)
        st[0], st[1] = self._enabled, self.fast_dtype
        if self._cache_enabled is not None:
            _state.cache = bool(self._cache_enabled)
        _sync()
        return self

    def __exit__(self, *exc):
        st = _state[self.device]
        st[0], st[1], _state.cache = self._prev
        _sync()
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapped(*args, **kwargs):
            with autocast(self.device, self.fast_dtype, self._enabled, self._cache_enabled):
                return fn(*args, **kwargs)
        return wrapped


# --- the op lists (PyTorch's CPU autocast lists, as far as tapegrad has the ops) -------------------------------
_lists = None


def _op_lists():
    global _lists
    if _lists is None:
        from importlib import import_module

        def m(name):                  # (by module path: a package may export a function of the same name)
            return import_module(f"tapegrad.ops.{name}")
        fft, convolution, activations = m("fft"), m("conv.convolution"), m("elementwise.activations")
        contractions, decompositions, eig = m("linalg.contractions"), m("linalg.decompositions"), m("linalg.eig")
        householder, norms = m("linalg.householder"), m("linalg.norms")
        products, solvers, sums = m("linalg.products"), m("linalg.solvers"), m("reduce.sums")
        attention, linear, losses, margin = (m("nn_ops.attention"), m("nn_ops.linear"), m("nn_ops.losses"),
                                             m("nn_ops.margin"))
        lower = {products.Matmul, products.Dot, products.Mv, products.Mm, products.Bmm, products.VecMat,
                 products.Addmm, products.Baddbmm, products.Addbmm, linear._Addmm, linear._MmT,
                 convolution.Convolution, activations.Prelu, attention.ScaledDotProductFlashAttentionForCpu}
        fp32 = {losses.NllLoss, losses.NllLoss2d, losses.MseLoss, losses.SmoothL1Loss, losses.HuberLoss,
                losses.BinaryCrossEntropy, losses.BinaryCrossEntropyWithLogits, losses.CtcLoss,
                margin.SoftMarginLoss, margin.MultiMarginLoss, margin.MultilabelMarginLoss, norms.Cdist,
                contractions.Trace, decompositions.LinalgCholeskyEx, decompositions.Cholesky,
                decompositions.LinalgQr, decompositions.LinalgEigh, decompositions.LinalgSvd,
                decompositions.LinalgLstsq, eig.LinalgEig, householder.Geqrf,
                solvers.LinalgInvEx, solvers.LinalgSolveEx, solvers.CholeskySolve, solvers.CholeskyInverse,
                fft.FftC2C, fft.FftR2C, fft.FftC2R, sums.Prod, sums.ProdDim}
        _lists = (frozenset(lower), frozenset(fp32))
    return _lists


class _Autocast(_f.Interpreter):
    """The CPU autocast transform: casts the inputs of the listed ops, leaves every other op alone. It also
    casts for the listed ops that are not one primitive (``ops._util.autocast_listed``)."""

    @staticmethod
    def cast(args, kwargs, kind):
        st = _state["cpu"]
        if not st[0]:
            return args, kwargs
        target = st[1] if kind == "lower" else _dtype.float32

        def one(a):
            return a.to(target) if (isinstance(a, Tensor) and a.dtype.is_floating_point
                                    and a.dtype is not _dtype.float64 and a.dtype is not target) else a
        return tuple(one(a) for a in args), {k: one(v) for k, v in kwargs.items()}

    def process(self, cls, args, kwargs):
        if _state["cpu"][0]:
            lower, fp32 = _op_lists()
            kind = "lower" if cls in lower else "fp32" if cls in fp32 else None
            if kind is not None:
                args, _ = self.cast(args, {}, kind)
        return self.call_next(cls, args, kwargs)


def _sync():
    """Enter this thread's CPU transform when its CPU autocast turns on, leave it when it turns off. The hook of the
    composite listed ops (``ops._util.AUTOCAST``) is set while any thread has it on; its ``cast`` reads the calling
    thread's switches."""
    on, active = _state["cpu"][0], _state.active
    if on and active is None:
        _state.active = _Autocast().enter()
        with _hook_lock:
            _hooked[0] += 1
            _util.AUTOCAST[0] = _Autocast
    elif not on and active is not None:
        with _hook_lock:
            _hooked[0] -= 1
            if not _hooked[0]:
                _util.AUTOCAST[0] = None
        _state.active = None
        active.exit()


def custom_fwd(fwd=None, *, device_type, cast_inputs=None):
    """Decorator for a custom ``Function.forward``: with ``cast_inputs``, inside an enabled autocast region the
    floating-point Tensor arguments are cast to it and forward runs with autocast off (torch.amp.custom_fwd)."""
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)
    d = _device(device_type)

    @functools.wraps(fwd)
    def forward(*args, **kwargs):
        if cast_inputs is None or not _state[d][0]:
            return fwd(*args, **kwargs)
        cast = tuple(a.to(cast_inputs) if isinstance(a, Tensor) and a.dtype.is_floating_point else a for a in args)
        with autocast(d, enabled=False):
            return fwd(*cast, **kwargs)
    return forward


def custom_bwd(bwd=None, *, device_type):
    """Decorator for a custom ``Function.backward`` (torch.amp.custom_bwd): backward runs as it is."""
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)
    _device(device_type)
    return bwd
