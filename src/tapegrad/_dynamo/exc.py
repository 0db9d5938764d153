"""``tapegrad._dynamo.exc``: the compiler's errors under torch's names (``tapegrad.compiler.exc``)."""

from __future__ import annotations

from ..compiler.exc import (BackendCompilerFailed, InvalidBackend, RecompileError, TorchDynamoException,
                            Unsupported)

__all__ = ["TorchDynamoException", "Unsupported", "InvalidBackend", "RecompileError", "BackendCompilerFailed"]
