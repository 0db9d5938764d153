"""torch's top-level switches and predicates that tapegrad answers as torch does on a CPU: determinism, matmul
precision, anomaly mode, warn-always, threads, the default device and tensor type, and the small predicates
(``is_complex``, ``is_nonzero``...). Most switches only record their state: NumPy on a CPU is deterministic,
computes float32 matmuls in full float32, and has one device."""

from __future__ import annotations

import warnings

from . import _dtype

__all__ = ["use_deterministic_algorithms", "are_deterministic_algorithms_enabled",
           "is_deterministic_algorithms_warn_only_enabled", "set_deterministic_debug_mode",
           "get_deterministic_debug_mode", "set_float32_matmul_precision", "get_float32_matmul_precision",
           "set_anomaly_enabled", "is_anomaly_enabled", "is_anomaly_check_nan_enabled", "set_warn_always",
           "is_warn_always_enabled", "set_flush_denormal", "get_num_interop_threads", "set_num_interop_threads",
           "init_num_threads", "get_default_device", "set_default_device", "set_default_tensor_type", "is_complex",
           "is_signed", "is_nonzero", "is_same_size", "is_storage", "is_distributed", "get_device",
           "detach", "detach_"]

_state = {"deterministic": False, "warn_only": False, "matmul_precision": "highest", "warn_always": False,
          "interop_threads": 1, "flush_denormal": False}


def use_deterministic_algorithms(mode, *, warn_only=False):
    """Record torch's determinism switch (every tapegrad kernel is deterministic already)."""
    _state["deterministic"], _state["warn_only"] = bool(mode), bool(warn_only)


def are_deterministic_algorithms_enabled() -> bool:
    return _state["deterministic"]


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    return _state["warn_only"]


def set_deterministic_debug_mode(debug_mode) -> None:
    """0/"default": off; 1/"warn": deterministic, warn only; 2/"error": deterministic."""
    if isinstance(debug_mode, str):
        names = {"default": 0, "warn": 1, "error": 2}
        if debug_mode not in names:
            raise RuntimeError("invalid value of debug_mode, expected one of `default`, `warn`, `error`, but got "
                               f"{debug_mode}")
        debug_mode = names[debug_mode]
    elif not isinstance(debug_mode, int) or isinstance(debug_mode, bool):
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode)}")
    if debug_mode not in (0, 1, 2):
        raise RuntimeError(f"invalid value of debug_mode, expected 0, 1, or 2, but got {debug_mode}")
    use_deterministic_algorithms(debug_mode != 0, warn_only=debug_mode == 1)


def get_deterministic_debug_mode() -> int:
    if not _state["deterministic"]:
        return 0
    return 1 if _state["warn_only"] else 2


def set_float32_matmul_precision(precision) -> None:
    """Record the precision ("highest", "high", "medium"); NumPy's float32 matmul is always "highest"."""
    if precision not in ("highest", "high", "medium"):
        warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the current"
                      "setFloat32MatmulPrecision call has no effect.", UserWarning, stacklevel=2)
        return
    _state["matmul_precision"] = precision


def get_float32_matmul_precision() -> str:
    return _state["matmul_precision"]


def set_anomaly_enabled(enabled, check_nan=True) -> None:
    from .autograd import anomaly
    anomaly._set(enabled, check_nan)


def is_anomaly_enabled() -> bool:
    from .autograd import anomaly
    return anomaly.is_anomaly_enabled()


def is_anomaly_check_nan_enabled() -> bool:
    from .autograd import anomaly
    return anomaly.is_anomaly_check_nan_enabled()


def set_warn_always(b) -> None:
    """Record torch's warn-always switch (tapegrad's warnings follow Python's filters)."""
    _state["warn_always"] = bool(b)


def is_warn_always_enabled() -> bool:
    return _state["warn_always"]


def set_flush_denormal(mode) -> bool:
    """torch returns True where the CPU supports flushing denormals (SSE3); NumPy gives no such switch: False,
    denormals are kept."""
    return False


def get_num_interop_threads() -> int:
    return _state["interop_threads"]


def set_num_interop_threads(n) -> None:
    """Record the number (tapegrad runs ops one at a time in the calling thread)."""
    if not isinstance(n, int) or n <= 0:
        raise RuntimeError("Expected positive number of threads")
    _state["interop_threads"] = n


def init_num_threads() -> None:
    """Nothing to initialise: NumPy's BLAS sets its thread pool up on import."""


def get_default_device():
    """The device factories create on when given none: the CPU, or the meta device (``set_default_device``,
    ``with tapegrad.device("meta"):``)."""
    from .tensor import _default_device, device
    return _default_device[-1] or device("cpu")


def set_default_device(device) -> None:
    """The CPU (or None, which resets to it) or the meta device, as tapegrad has no other device."""
    from .tensor import _default_changed, _default_device, _require_cpu
    from .tensor import device as _device
    d = None
    if device is not None:
        d = device if isinstance(device, _device) else _device(device)
        if d.type != "meta":
            _require_cpu(d)
            d = None
    _default_device[0] = d
    _default_changed()


def set_default_tensor_type(t) -> None:
    """Deprecated in torch 2.1 (its warning): sets the default dtype from a floating tensor type."""
    warnings.warn("torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please use "
                  "torch.set_default_dtype() and torch.set_default_device() as alternatives.", UserWarning,
                  stacklevel=2)
    from . import _legacy
    if isinstance(t, str):
        t = getattr(_legacy, t.rsplit(".", 1)[-1], None) if t.startswith("torch.") else None
        if t is None:
            raise TypeError("invalid type: the name must be one of torch's tensor types, e.g. 'torch.FloatTensor'")
    d = getattr(t, "dtype", None)
    if not isinstance(d, _dtype.dtype) or not d.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    _dtype.set_default_dtype(d)


def is_complex(input) -> bool:
    return input.is_complex()


def is_signed(input) -> bool:
    return input.is_signed()


def is_nonzero(input) -> bool:
    return input.is_nonzero()


def is_same_size(input, other) -> bool:
    return input.is_same_size(other)


def is_storage(obj) -> bool:
    from ._tensor_api import TypedStorage, UntypedStorage
    return isinstance(obj, (TypedStorage, UntypedStorage))


def is_distributed(input) -> bool:
    return False


def get_device(input) -> int:
    return -1


def detach(input):
    return input.detach()


def detach_(input):
    return input.detach_()
