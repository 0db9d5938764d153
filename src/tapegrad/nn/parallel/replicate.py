"""``torch.nn.parallel.replicate`` as torch runs it without an accelerator: copying a module onto accelerators
raises torch's error on the CPU (DLRM imports it, and calls it only with more than one GPU)."""

from __future__ import annotations

__all__ = ["replicate"]


def replicate(network, devices, detach=False):
    """Copies ``network`` onto each of ``devices``: its CPU tensors cannot be broadcast (torch's error)."""
    raise AssertionError("Broadcast function not implemented for CPU tensors")
