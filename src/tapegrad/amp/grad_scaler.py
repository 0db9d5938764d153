"""``GradScaler``: loss scaling for mixed-precision training, as ``torch.amp.GradScaler``.

``scaler.scale(loss).backward()`` makes every gradient ``scale`` times larger (so float16 gradients do not
underflow); ``scaler.step(opt)`` divides them back (``unscale_``), skips the step if any is inf or NaN, and
``scaler.update()`` halves the scale after a skipped step or doubles it after ``growth_interval`` good ones.
"""

from __future__ import annotations

import warnings

import numpy as np

from .. import _dtype
from ..autograd.grad_mode import no_grad
from ..tensor import Tensor

__all__ = ["GradScaler"]

_READY, _UNSCALED, _STEPPED = 0, 1, 2


class GradScaler:
    """``GradScaler(device="cuda", init_scale=2.**16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000,
    enabled=True)``. Enabled on the CPU (``GradScaler("cpu")``); for another device it disables itself with
    torch's warning (there is no GPU), and every method then passes through."""

    def __init__(self, device="cuda", init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True):
        self._device = device
        self._enabled = enabled
        if enabled and device != "cpu":
            warnings.warn(f"torch.{device}.amp.GradScaler is enabled, but {device.upper()} is not available.  "
                          "Disabling.", stacklevel=2)
            self._enabled = False
        if self._enabled:
            if growth_factor <= 1.0:
                raise AssertionError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise AssertionError("The backoff factor must be < 1.0.")
        self._scale = float(init_scale)
        self._growth_factor, self._backoff_factor = float(growth_factor), float(backoff_factor)
        self._growth_interval = int(growth_interval)
        self._growth_tracker = 0
        self._per_optimizer = {}

    # --- scaling ---------------------------------------------------------------------------------------------
    def scale(self, outputs):
        """``outputs`` (a Tensor, or a list/tuple of them, nested) times the scale."""
        if not self._enabled:
            return outputs
        if isinstance(outputs, Tensor):
            return outputs * Tensor._make(np.array(self._scale, np.float32))
        if isinstance(outputs, (list, tuple)):
            return type(outputs)(self.scale(o) for o in outputs)
        raise ValueError("outputs must be a Tensor or an iterable of Tensors")

    def _state(self, optimizer):
        return self._per_optimizer.setdefault(id(optimizer), {"stage": _READY, "found_inf": False})

    def unscale_(self, optimizer):
        """Divide ``optimizer``'s gradients by the scale, in place, and note whether any is inf or NaN."""
        if not self._enabled:
            return
        st = self._state(optimizer)
        if st["stage"] == _UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since the last update().")
        if st["stage"] == _STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        inv = np.float32(np.float64(1.0) / np.float64(self._scale))
        found = False
        with no_grad():
            for group in optimizer.param_groups:
                for p in group["params"]:
                    g = p.grad
                    if g is None:
                        continue
                    if g.dtype is _dtype.float16:
                        raise ValueError("Attempting to unscale FP16 gradients.")
                    g.mul_(float(inv))
                    if not found and not np.isfinite(g._array).all():
                        found = True
        st["found_inf"] = found
        st["stage"] = _UNSCALED

    def step(self, optimizer, *args, **kwargs):
        """Unscale (unless ``unscale_`` was called), then ``optimizer.step(*args, **kwargs)`` unless a gradient is
        inf or NaN (then the step is skipped and None returned)."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        st = self._state(optimizer)
        if st["stage"] == _STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if st["stage"] == _READY:
            self.unscale_(optimizer)
        ret = None if st["found_inf"] else optimizer.step(*args, **kwargs)
        st["stage"] = _STEPPED
        return ret

    def update(self, new_scale=None):
        """Set the next scale: ``new_scale`` if given, else backed off after a skipped step, grown after
        ``growth_interval`` steps in a row without one."""
        if not self._enabled:
            return
        if new_scale is not None:
            if isinstance(new_scale, Tensor):
                if new_scale.numel() != 1:
                    raise AssertionError("new_scale should be a single-element tensor.")
                new_scale = new_scale.item()
            elif not isinstance(new_scale, float):
                raise AssertionError("new_scale should be a float or a 1-element torch.cuda.FloatTensor or "
                                     "torch.FloatTensor with requires_grad=False.")
            self._scale = float(new_scale)
        else:
            if not self._per_optimizer:
                raise AssertionError("No inf checks were recorded prior to update.")
            if any(st["found_inf"] for st in self._per_optimizer.values()):
                self._scale = float(np.float32(self._scale * self._backoff_factor))
                self._growth_tracker = 0
            else:
                self._growth_tracker += 1
                if self._growth_tracker == self._growth_interval:
                    self._scale = float(np.float32(self._scale * self._growth_factor))
                    self._growth_tracker = 0
        self._per_optimizer = {}

    # --- settings and state ----------------------------------------------------------------------------------
    def is_enabled(self) -> bool:
        return self._enabled

    def get_scale(self) -> float:
        return self._scale if self._enabled else 1.0

    def get_growth_factor(self) -> float:
        return self._growth_factor

    def set_growth_factor(self, new_factor: float) -> None:
        self._growth_factor = float(new_factor)

    def get_backoff_factor(self) -> float:
        return self._backoff_factor

    def set_backoff_factor(self, new_factor: float) -> None:
        self._backoff_factor = float(new_factor)

    def get_growth_interval(self) -> int:
        return self._growth_interval

    def set_growth_interval(self, new_interval: int) -> None:
        self._growth_interval = int(new_interval)

    def state_dict(self) -> dict:
        if not self._enabled:
            return {}
        return {"scale": self._scale, "growth_factor": self._growth_factor, "backoff_factor": self._backoff_factor,
                "growth_interval": self._growth_interval, "_growth_tracker": self._growth_tracker}

    def load_state_dict(self, state_dict: dict) -> None:
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved from a disabled "
                               "instance of GradScaler.")
        self._scale = float(state_dict["scale"])
        self._growth_factor = float(state_dict["growth_factor"])
        self._backoff_factor = float(state_dict["backoff_factor"])
        self._growth_interval = int(state_dict["growth_interval"])
        self._growth_tracker = int(state_dict["_growth_tracker"])
