"""``torch.nn.parallel.parallel_apply`` as torch runs it without an accelerator: running modules on their devices
in threads raises torch's error on the CPU (DLRM imports it, and calls it only with more than one GPU)."""

from __future__ import annotations

__all__ = ["parallel_apply"]


def parallel_apply(modules, inputs, kwargs_tup=None, devices=None):
    """Applies ``modules[i]`` to ``inputs[i]`` on accelerator ``devices[i]``: there is none (torch's error)."""
    if len(modules) != len(inputs):
        raise AssertionError(f"The number of modules {len(modules)} is not equal to the number of inputs "
                             f"{len(inputs)}")
    raise RuntimeError("Cannot access accelerator device when none is available.")
