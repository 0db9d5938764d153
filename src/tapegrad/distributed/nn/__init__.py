"""``tapegrad.distributed.nn``: the differentiable collectives of ``torch.distributed.nn`` (see ``functional``)."""

from .functional import all_gather, all_reduce, broadcast, gather, reduce, scatter

__all__ = ["all_gather", "all_reduce", "broadcast", "gather", "reduce", "scatter"]
