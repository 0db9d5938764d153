"""``tapegrad.jit.annotations``: the typing names TorchScript code imports from ``torch.jit.annotations``
(``from torch.jit.annotations import List, Tuple``), which are Python's own ``typing`` names, as in torch."""

from typing import Any, Dict, List, Optional, Tuple, Union  # noqa: F401   (re-exported, as torch does)

from ..futures import Future  # noqa: F401
from ..nn.module import Module  # noqa: F401

__all__ = ["Any", "Dict", "List", "Optional", "Tuple", "Union", "Future", "Module"]
