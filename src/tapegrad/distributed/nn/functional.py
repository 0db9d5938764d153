"""``torch.distributed.nn.functional``: collectives that return new tensors and carry gradients through.

In a job of one process (the only group tapegrad makes, see ``tapegrad.distributed``) each of them returns a copy of
its input, so the gradient flows back unchanged: the sum, mean, max... of one rank's gradient is that gradient.
They check the group, the reduce op and the root rank as the in-place collectives do, and raise torch's
"Default process group has not been initialized" before ``init_process_group``.
"""

from __future__ import annotations

from .. import ReduceOp, _op, _root, _tensor, _tensor_list, _world


def _copy(tensor):
    from ...tensor import contiguous_format
    return tensor.clone(memory_format=contiguous_format)


def all_reduce(tensor, op=ReduceOp.SUM, group=None):
    """The reduction of ``tensor`` over the group, as a new tensor (with one process: a copy)."""
    _tensor(tensor)
    _world(group)
    _op(op)
    return _copy(tensor)


def reduce(tensor, dst, op=ReduceOp.SUM, group=None):
    _tensor(tensor)
    _world(group)
    _op(op)
    _root("reduce", dst)
    return _copy(tensor)


def broadcast(tensor, src, group=None):
    _tensor(tensor)
    _world(group)
    _root("broadcast", src)
    return _copy(tensor)


def all_gather(tensor, group=None):
    """Every rank's ``tensor``, as a tuple (with one process: a tuple of one copy)."""
    _tensor(tensor)
    _world(group)
    return (_copy(tensor),)


def gather(tensor, dst=0, group=None):
    _tensor(tensor)
    _world(group)
    _root("gather", dst)
    return (_copy(tensor),)


def scatter(tensors, src=0, group=None):
    """This rank's tensor of ``tensors`` (one per rank: with one process, ``tensors`` holds one)."""
    _tensor_list(list(tensors), "scatter_list")
    _world(group)
    _root("scatter", src)
    if len(tensors) != 1:
        raise RuntimeError(f"ProcessGroupGloo::scatter: Incorrect input list size {len(tensors)}. "
                           f"Input list size should be 1, same as size of the process group.")
    return _copy(tensors[0])
