"""``tapegrad.utils.hooks``: ``RemovableHandle``, what every ``register_*_hook`` returns (torch.utils.hooks)."""

from ..nn.module import RemovableHandle

__all__ = ["RemovableHandle"]
