"""Neural-network primitives (softmax, losses, convolution, pooling, normalisation) used by nn.functional.

The op-library issue fills this module; ``tapegrad.nn.functional`` re-exports its public functions.
"""

from __future__ import annotations

__all__ = []
