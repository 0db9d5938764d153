"""``tapegrad.distributed``: tapegrad runs in one process: ``is_available()`` is False and no process group can be
made. The questions helper code asks before using it answer as for a job that was never launched distributed:
``is_initialized()`` is False; ``get_rank()``, ``get_world_size()``, ``barrier()`` and the collectives raise torch's
"Default process group has not been initialized" error."""

from __future__ import annotations

__all__ = ["is_available", "is_initialized", "is_torchelastic_launched", "init_process_group",
           "destroy_process_group", "get_rank", "get_world_size", "barrier", "all_reduce", "all_gather",
           "broadcast", "reduce", "gather", "scatter", "ReduceOp", "get_backend"]

_NOT_INIT = "Default process group has not been initialized, please make sure to call init_process_group."


def is_available() -> bool:
    return False


def is_initialized() -> bool:
    return False


def is_torchelastic_launched() -> bool:
    return False


def init_process_group(*args, **kwargs):
    raise RuntimeError("torch.distributed.init_process_group: tapegrad runs in one process, with no distributed "
                       "backend (torch.distributed.is_available() is False)")


def _not_initialized(name):
    def call(*args, **kwargs):
        raise ValueError(_NOT_INIT)
    call.__name__ = name
    return call


def destroy_process_group(group=None):
    """There is no process group to destroy: torch's error for that."""
    raise AssertionError("Process group cannot be None")


get_rank = _not_initialized("get_rank")
get_world_size = _not_initialized("get_world_size")
get_backend = _not_initialized("get_backend")
barrier = _not_initialized("barrier")
all_reduce = _not_initialized("all_reduce")
all_gather = _not_initialized("all_gather")
broadcast = _not_initialized("broadcast")
reduce = _not_initialized("reduce")
gather = _not_initialized("gather")
scatter = _not_initialized("scatter")


class ReduceOp:
    SUM, PRODUCT, MIN, MAX, BAND, BOR, BXOR, AVG = "sum", "product", "min", "max", "band", "bor", "bxor", "avg"
