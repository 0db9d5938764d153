"""``torch.nn.parallel.scatter_gather`` as torch runs it without an accelerator: ``scatter`` and ``gather`` move
tensors between accelerators, and raise torch's errors on the CPU (DLRM imports them, and calls them only with
more than one GPU)."""

from __future__ import annotations

from ...tensor import Tensor

__all__ = ["scatter", "scatter_kwargs", "gather"]


def _devices_error(target_gpus):
    for d in target_gpus:
        if str(d).split(":")[0] == "cpu":
            raise ValueError(f"Expected a non cpu device, but got: {d}")
    raise RuntimeError("Cannot access accelerator device when none is available.")


def scatter(inputs, target_gpus, dim=0):
    """Splits ``inputs`` over the accelerators ``target_gpus``: there are none (torch's error)."""
    _devices_error(target_gpus)


def scatter_kwargs(inputs, kwargs, target_gpus, dim=0):
    """``scatter`` of the positional and keyword inputs: there are no accelerators (torch's error)."""
    _devices_error(target_gpus)


def gather(outputs, target_device, dim=0):
    """Concatenates accelerator ``outputs`` on ``target_device``: CPU tensors are refused, as torch's."""
    first = outputs[0] if isinstance(outputs, (list, tuple)) and outputs else outputs
    if isinstance(first, Tensor):
        raise AssertionError("Gather function not implemented for CPU tensors")
    raise RuntimeError("Cannot access accelerator device when none is available.")
