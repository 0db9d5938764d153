"""``tapegrad.utils.tensorboard``: ``SummaryWriter``, writing TensorBoard's event files with no TensorBoard package
(see ``writer``)."""

from .writer import FileWriter, SummaryWriter

__all__ = ["SummaryWriter", "FileWriter"]
