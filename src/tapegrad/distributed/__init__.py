"""``tapegrad.distributed``: torch.distributed for a job of one process (world size 1).

tapegrad runs in one process, so the only process group it can make is the one a script makes when it is launched
alone: ``init_process_group("gloo", world_size=1, rank=0)`` (or ``RANK=0 WORLD_SIZE=1`` with ``env://``), as
single-GPU runs of DDP scripts, MoCo, Barlow Twins and torchrun with ``--nproc_per_node=1`` do. In that group every
collective is what it is with one member: ``all_reduce`` leaves the tensor as it is (the sum, mean, max... of one
value), ``all_gather`` copies the tensor into the one slot of the list, ``broadcast`` from rank 0 does nothing, and
``DistributedDataParallel`` is its wrapped module. The checks torch's gloo backend makes (list lengths, sizes, ranks)
raise its errors. Beyond torch: asking for more than one process raises at ``init_process_group`` (torch would wait
for the others), and ``send``/``recv`` explain that there is no other process (torch's gloo fails or waits).

Before ``init_process_group`` every call answers as torch's does outside a process group: ``is_initialized()`` is
False, and ``get_rank()``, the collectives and ``DistributedDataParallel`` raise "Default process group has not been
initialized".
"""

from __future__ import annotations

import copy
import os
from urllib.parse import parse_qs, urlparse

__all__ = ["is_available", "is_initialized", "is_torchelastic_launched", "is_gloo_available", "is_nccl_available",
           "is_mpi_available", "is_ucc_available", "is_xccl_available", "init_process_group",
           "destroy_process_group", "new_group", "get_rank", "get_world_size", "get_backend", "get_global_rank",
           "get_group_rank", "get_process_group_ranks", "barrier", "monitored_barrier", "all_reduce", "all_gather",
           "all_gather_into_tensor", "reduce_scatter_tensor", "reduce_scatter", "all_to_all", "all_to_all_single",
           "broadcast", "reduce", "gather", "scatter", "all_gather_object", "broadcast_object_list",
           "gather_object", "scatter_object_list", "send", "recv", "isend", "irecv", "ReduceOp", "Backend",
           "ProcessGroup", "Work", "group", "GroupMember"]

_NOT_INIT = "Default process group has not been initialized, please make sure to call init_process_group."


class ReduceOp:
    """The reductions of ``all_reduce``/``reduce`` (with one process, each leaves the value as it is)."""
    SUM, PRODUCT, MIN, MAX, BAND, BOR, BXOR, AVG, PREMUL_SUM = (
        "sum", "product", "min", "max", "band", "bor", "bxor", "avg", "premul_sum")


_OPS = frozenset(v for k, v in vars(ReduceOp).items() if k.isupper())


class Backend(str):
    """A backend's name, lower-cased (``Backend("GLOO") == "gloo"``)."""
    GLOO, NCCL, MPI, UCC, XCCL, UNDEFINED = "gloo", "nccl", "mpi", "ucc", "xccl", "undefined"

    def __new__(cls, name: str):
        if not isinstance(name, str):
            raise ValueError(f"Backend constructor parameter must be string-ish, but got: {type(name)}")
        return str.__new__(cls, name.lower())


class ProcessGroup:
    """A group of processes: here always the one process of the job (rank 0 of size 1)."""

    def __init__(self, backend):
        self._backend = backend

    def rank(self) -> int:
        return 0

    def size(self) -> int:
        return 1

    def name(self) -> str:
        return self._backend


class Work:
    """What an ``async_op=True`` collective returns: with one process it has already completed."""

    def __init__(self, result=()):
        self._result = list(result)

    def wait(self, timeout=None) -> bool:
        return True

    def is_completed(self) -> bool:
        return True

    def is_success(self) -> bool:
        return True

    def result(self):
        return self._result

    def exception(self):
        return None


class _World:
    """``group.WORLD`` / ``GroupMember.WORLD``: the default group once made, None before."""
    WORLD = None
    NON_GROUP_MEMBER = -100


group = GroupMember = _World
_backend = None        # the backend name ``get_backend`` answers (torch's "undefined" when none was named)


def is_available() -> bool:
    return True


def is_initialized() -> bool:
    return _World.WORLD is not None


def is_torchelastic_launched() -> bool:
    return os.environ.get("TORCHELASTIC_RUN_ID") is not None


def is_gloo_available() -> bool:
    return True


def is_nccl_available() -> bool:
    return False


is_mpi_available = is_ucc_available = is_xccl_available = is_nccl_available


def _rendezvous(init_method, store, world_size, rank):
    """The (world_size, rank) the job was launched with, read as torch reads them; torch's errors where missing."""
    if store is not None:
        if world_size <= 0 or rank < 0:
            raise ValueError("world_size must be positive if using store" if world_size <= 0
                             else "rank must be non-negative if using store")
        return world_size, rank
    url = urlparse(init_method or "env://")
    scheme = url.scheme
    query = {k: v[-1] for k, v in parse_qs(url.query).items()}
    if scheme == "env":
        def env(name, given=-1):
            if given >= 0:
                return given
            if name not in os.environ:
                raise ValueError(f"Error initializing torch.distributed using env:// rendezvous: environment "
                                 f"variable {name} expected, but not set")
            return os.environ[name]
        rank = int(env("RANK", rank))
        world_size = int(env("WORLD_SIZE", world_size))
        env("MASTER_ADDR")
        env("MASTER_PORT")
        return world_size, rank
    if scheme in ("tcp", "file"):
        rank = int(query.get("rank", rank))
        world_size = int(query.get("world_size", world_size))
        for name, value in (("rank", rank), ("world size", world_size)):
            if value < 0:
                raise ValueError(f"Error initializing torch.distributed using {scheme}:// rendezvous: {name} "
                                 f"parameter missing")
        return world_size, rank
    raise RuntimeError(f"No rendezvous handler for {scheme}://")


def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1, store=None,
                       group_name="", pg_options=None, device_id=None):
    """Make the default process group of a job of one process (``world_size`` 1, ``rank`` 0)."""
    global _backend
    if _World.WORLD is not None:
        raise ValueError("trying to initialize the default process group twice!")
    name = "undefined" if backend is None else Backend(backend)
    if name in ("nccl", "mpi", "ucc", "xccl"):
        extra = (". MPI is only included if you build PyTorch from source on a host that has MPI installed."
                 if name == "mpi" else "")
        raise RuntimeError(f"Distributed package doesn't have {name.upper()} built in{extra}")
    if name not in ("undefined", "gloo", "cpu:gloo") and not name.startswith("cpu:gloo"):
        raise AssertionError(f"Unknown backend type {name}")
    world_size, rank = _rendezvous(init_method, store, world_size, rank)
    if world_size != 1:
        raise RuntimeError(f"init_process_group: tapegrad runs in one process, so the only process group it can make "
                           f"has world_size 1 (got world_size={world_size}); run the script with one process "
                           f"(torchrun --nproc_per_node=1, or WORLD_SIZE=1)")
    if rank != 0:
        raise RuntimeError(f"init_process_group: rank {rank} is out of range for world_size 1 (the only rank is 0)")
    _backend = name
    _World.WORLD = ProcessGroup(name)


def _world(group=None):
    if _World.WORLD is None:
        raise ValueError(_NOT_INIT)
    return _World.WORLD if group is None else group


def destroy_process_group(group=None):
    """Forget the default group (``group`` None or the world); torch's error when there is none."""
    global _backend
    if _World.WORLD is None:
        raise AssertionError("Process group cannot be None")
    if group is None or group is _World.WORLD:
        _World.WORLD, _backend = None, None


def new_group(ranks=None, timeout=None, backend=None, pg_options=None, use_local_synchronization=False,
              group_desc=None, device_id=None):
    """A group of some of the job's ranks: with one process, ``ranks`` can only name rank 0."""
    _world()
    for r in ranks or ():
        if r != 0:
            raise ValueError(f"Rank {r} is out of range. Valid ranks are 0 to 0 (world_size=1)")
    return ProcessGroup(_backend if backend is None else Backend(backend))


def get_rank(group=None) -> int:
    _world(group)
    return 0


def get_world_size(group=None) -> int:
    _world(group)
    return 1


def get_backend(group=None) -> str:
    _world(group)
    return _backend


def get_global_rank(group, group_rank: int) -> int:
    _world()
    if group_rank != 0:
        raise ValueError(f"Group {group} does not contain rank {group_rank}")
    return 0


def get_group_rank(group, global_rank: int) -> int:
    _world()
    if global_rank != 0:
        raise ValueError(f"Group {group} does not contain global rank {global_rank}")
    return 0


def get_process_group_ranks(group):
    _world()
    return [0]


def _done(async_op, result=()):
    return Work(result) if async_op else None


def _tensor(t, name="tensor"):
    from ..tensor import Tensor
    if not isinstance(t, Tensor):
        raise TypeError(f"Invalid function argument. Expected parameter `{name}` of type torch.Tensor\n"
                        f"             but got {type(t)} instead.")
    return t


def _tensor_list(ts, name):
    from ..tensor import Tensor
    if not isinstance(ts, (list, tuple)) or not all(isinstance(t, Tensor) for t in ts):
        raise TypeError(f"Invalid function argument. Expected parameter `{name}` of type List[torch.Tensor]\n"
                        f"             but got {type(ts)} with elements of type "
                        f"{[type(t) for t in ts] if isinstance(ts, (list, tuple)) else ''} instead.")
    return ts


def _root(kind, root):
    if root != 0:
        raise RuntimeError(f"ProcessGroupGloo::{kind}: invalid root rank: {root}")


def _copy_into(kind, outs, src):
    """Copy ``src`` into the one output a gather with one process has; gloo's checks of the list and the size."""
    if len(outs) != 1:
        raise RuntimeError(f"ProcessGroupGloo::{kind}: invalid output tensor list at index 0 (expected length 1, "
                           f"got {len(outs)})")
    _same_size(kind, outs[0], src)
    _write(outs[0], src)


def _same_size(kind, out, src):
    if tuple(out.shape) != tuple(src.shape):
        raise RuntimeError(f"ProcessGroupGloo::{kind}: invalid tensor size at index 0 (expected "
                           f"({', '.join(map(str, src.shape))}), got ({', '.join(map(str, out.shape))}))")


def _write(out, src):
    """``out``'s data becomes ``src``'s, as a collective writes it (outside autograd, as torch's do)."""
    from ..autograd.grad_mode import no_grad
    if out is not src:
        with no_grad():
            out.copy_(src.detach())


def _op(op):
    if op not in _OPS:
        raise TypeError(f"all_reduce(): incompatible reduce op {op!r}; use torch.distributed.ReduceOp")


def barrier(group=None, async_op=False, device_ids=None):
    _world(group)
    return _done(async_op)


def monitored_barrier(group=None, timeout=None, wait_all_ranks=False):
    _world(group)


def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    """With one process every reduction of ``tensor`` is ``tensor`` itself: it is left as it is."""
    _tensor(tensor)
    _world(group)
    _op(op)
    return _done(async_op, [tensor])


def reduce(tensor, dst=None, op=ReduceOp.SUM, group=None, async_op=False, group_dst=None):
    _tensor(tensor)
    _world(group)
    _op(op)
    _root("reduce", dst if dst is not None else group_dst or 0)
    return _done(async_op, [tensor])


def broadcast(tensor, src=None, group=None, async_op=False, group_src=None):
    _tensor(tensor)
    _world(group)
    _root("broadcast", src if src is not None else group_src or 0)
    return _done(async_op, [tensor])


def all_gather(tensor_list, tensor, group=None, async_op=False):
    _tensor_list(tensor_list, "tensor_list")
    _tensor(tensor)
    _world(group)
    _copy_into("allgather", tensor_list, tensor)
    return _done(async_op, tensor_list)


def _whole_copy(kind, out, inp, names, group, async_op, op=None):
    """A collective whose one rank's result is its input, reshaped into ``out`` (sizes checked as gloo does)."""
    _tensor(out, names[0])
    _tensor(inp, names[1])
    _world(group)
    if op is not None:
        _op(op)
    if out.numel() != inp.numel():
        _same_size(kind, out, inp)
    _write(out, inp.reshape(out.shape))
    return _done(async_op, [out])


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    return _whole_copy("allgather", output_tensor, input_tensor, ("output_tensor", "input_tensor"), group,
                       async_op)


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    return _whole_copy("reduce_scatter", output, input, ("output", "input"), group, async_op, op)


def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=None, async_op=False):
    _tensor(output, "output")
    _tensor_list(input_list, "input_list")
    _world(group)
    _op(op)
    if len(input_list) != 1:
        raise RuntimeError(f"ProcessGroupGloo::reduce_scatter: invalid input tensor list at index 0 (expected "
                           f"length 1, got {len(input_list)})")
    _same_size("reduce_scatter", output, input_list[0])
    _write(output, input_list[0])
    return _done(async_op, [output])


def all_to_all_single(output, input, output_split_sizes=None, input_split_sizes=None, group=None, async_op=False):
    _tensor(output, "output")
    _tensor(input, "input")
    _world(group)
    _same_size("alltoall", output, input)
    _write(output, input)
    return _done(async_op, [output])


def all_to_all(output_tensor_list, input_tensor_list, group=None, async_op=False):
    _tensor_list(output_tensor_list, "output_tensor_list")
    _tensor_list(input_tensor_list, "input_tensor_list")
    _world(group)
    if len(input_tensor_list) != 1:
        raise RuntimeError(f"ProcessGroupGloo::alltoall: invalid input tensor list at index 0 (expected length 1, "
                           f"got {len(input_tensor_list)})")
    _copy_into("alltoall", output_tensor_list, input_tensor_list[0])
    return _done(async_op, output_tensor_list)


def gather(tensor, gather_list=None, dst=None, group=None, async_op=False, group_dst=None):
    _tensor(tensor)
    _world(group)
    _root("gather", dst if dst is not None else group_dst or 0)
    if gather_list is None:
        raise ValueError("Argument ``gather_list`` must be specified on destination rank.")
    _copy_into("gather", _tensor_list(gather_list, "gather_list"), tensor)
    return _done(async_op, gather_list)


def scatter(tensor, scatter_list=None, src=None, group=None, async_op=False, group_src=None):
    _tensor(tensor)
    _world(group)
    _root("scatter", src if src is not None else group_src or 0)
    if scatter_list is None:
        raise ValueError("Argument ``scatter_list`` must be specified on source rank.")
    _tensor_list(scatter_list, "scatter_list")
    if len(scatter_list) != 1:
        raise RuntimeError(f"ProcessGroupGloo::scatter: incorrect input list size {len(scatter_list)}. Input list "
                           f"size should be 1, same as size of the process group.")
    _same_size("scatter", tensor, scatter_list[0])
    _write(tensor, scatter_list[0])
    return _done(async_op, [tensor])


def all_gather_object(object_list, obj, group=None):
    """``object_list[0]`` becomes a copy of ``obj`` (torch sends it pickled, so every rank gets its own copy)."""
    _world(group)
    object_list[0] = copy.deepcopy(obj)


def broadcast_object_list(object_list, src=None, group=None, device=None, group_src=None):
    _world(group)
    _root("broadcast", src if src is not None else group_src or 0)


def gather_object(obj, object_gather_list=None, dst=None, group=None, group_dst=None):
    _world(group)
    _root("gather", dst if dst is not None else group_dst or 0)
    if object_gather_list is None:
        raise ValueError("Argument ``gather_list`` must be specified on destination rank.")
    object_gather_list[0] = copy.deepcopy(obj)


def scatter_object_list(scatter_object_output_list, scatter_object_input_list=None, src=None, group=None,
                        group_src=None):
    _world(group)
    _root("scatter", src if src is not None else group_src or 0)
    if not isinstance(scatter_object_output_list, list) or len(scatter_object_output_list) < 1:
        raise ValueError("Expected argument scatter_object_output_list to be a list of size at least 1.")
    scatter_object_output_list[0] = copy.deepcopy(scatter_object_input_list[0])


def _no_peer(name):
    def call(tensor, *args, **kwargs):
        _tensor(tensor)
        _world(kwargs.get("group"))
        raise RuntimeError(f"{name}: a job of one process has no other rank to exchange tensors with (tapegrad runs "
                           f"in one process, world_size 1)")
    call.__name__ = name
    return call


send, recv, isend, irecv = (_no_peer(n) for n in ("send", "recv", "isend", "irecv"))


def __getattr__(name):
    if name == "rpc":          # (torch.distributed.rpc without an import of it, as torch has it after `import torch`)
        import importlib
        return importlib.import_module(f"{__name__}.rpc")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
