"""The errors of ``tapegrad.compile``, under torch's names (``torch._dynamo.exc``): every one a ``RuntimeError``."""

from __future__ import annotations

__all__ = ["TorchDynamoException", "Unsupported", "InvalidBackend", "RecompileError", "BackendCompilerFailed"]


class TorchDynamoException(RuntimeError):
    """The base of the compiler's errors."""


class Unsupported(TorchDynamoException):
    """A graph break where ``fullgraph=True`` asked for none."""


class InvalidBackend(TorchDynamoException):
    """``compile(backend=...)`` names no backend."""

    def __init__(self, name):
        super().__init__(f"Invalid backend: {name!r}, see `torch._dynamo.list_backends()` for available backends.")


class RecompileError(TorchDynamoException):
    """A call needs a new capture where the stance ``"fail_on_recompile"`` (or ``config.error_on_recompile``)
    forbids one."""


class BackendCompilerFailed(TorchDynamoException):
    """(torch's name for a backend's failure; tapegrad's replay has no separate backend to fail)"""
