"""torch.distributed.rpc for a job of one worker: ``init_rpc`` with world size 1, calls to that worker, RRefs it owns.

As ``tapegrad.distributed`` makes only the process group of one process, this makes only the RPC group of one worker
(``init_rpc(name, rank=0, world_size=1)``, rendezvous as torch reads it). A call to the worker (``rpc_sync``,
``rpc_async``, ``remote``, by name, rank or ``WorkerInfo``) runs the function at once in this thread; an error it
raises comes back as torch sends it: the same type, its message naming the type and the worker, then the
error and its traceback. Every RRef is an owner RRef. Beyond torch: the function, arguments and results are the
objects themselves (torch sends pickled copies, so it refuses local functions), and asking for more than one worker
raises at ``init_rpc`` (torch would wait for the others).

Training helpers test ``isinstance(out, torch.distributed.rpc.api.RRef)`` to unwrap a remote model's output; that
check works before any ``init_rpc``.
"""

from __future__ import annotations

import traceback

from ...futures import _Future

__all__ = ["init_rpc", "shutdown", "get_worker_info", "rpc_sync", "rpc_async", "remote", "RRef", "WorkerInfo",
           "BackendType", "TensorPipeRpcBackendOptions", "RpcBackendOptions", "is_available", "get_rpc_timeout"]

_NOT_INIT = "RPC has not been initialized. Call torch.distributed.rpc.init_rpc first."
_NO_AGENT = "Current RPC agent is not set! Did you initialize the RPC framework (e.g. by calling `rpc.init_rpc`)?"
_DEFAULT_TIMEOUT = 60.0


class BackendType:
    TENSORPIPE = "TENSORPIPE"


class RpcBackendOptions:
    def __init__(self, rpc_timeout=_DEFAULT_TIMEOUT, init_method="env://"):
        self.rpc_timeout, self.init_method = float(rpc_timeout), init_method


class TensorPipeRpcBackendOptions(RpcBackendOptions):
    def __init__(self, *, num_worker_threads=16, rpc_timeout=_DEFAULT_TIMEOUT, init_method="env://",
                 device_maps=None, devices=None, _transports=None, _channels=None):
        super().__init__(rpc_timeout, init_method)
        self.num_worker_threads = num_worker_threads
        self.device_maps, self.devices = dict(device_maps or {}), list(devices or [])


class WorkerInfo:
    """A worker's name and id (rank)."""

    def __init__(self, name: str, id: int):
        self.name, self.id = name, id

    def __eq__(self, other):
        return isinstance(other, WorkerInfo) and (self.name, self.id) == (other.name, other.id)

    def __hash__(self):
        return hash((self.name, self.id))

    def __repr__(self):
        return f"WorkerInfo(id={self.id}, name={self.name})"


class _Agent:
    """The one worker of the job, while ``init_rpc`` holds."""
    me = None            # WorkerInfo
    timeout = _DEFAULT_TIMEOUT
    next_id = 0


def is_available() -> bool:
    return True


def init_rpc(name, backend=None, rank=-1, world_size=None, rpc_backend_options=None):
    """Start the RPC group of one worker, called ``name`` (rank 0 of world size 1)."""
    from .. import _rendezvous
    if _Agent.me is not None:
        raise RuntimeError("RPC is already initialized")
    if not isinstance(name, str) or not name or not all(c.isalnum() or c in "-_:" for c in name):
        raise RuntimeError(f"Worker name must match ^[A-Za-z0-9-_:]*$ and not be empty, got {name!r}")
    options = rpc_backend_options or TensorPipeRpcBackendOptions()
    world_size, rank = _rendezvous(options.init_method, None, -1 if world_size is None else world_size, rank)
    if world_size != 1:
        raise RuntimeError(f"init_rpc: tapegrad runs in one process, so the only RPC group it can make has "
                           f"world_size 1 (got world_size={world_size})")
    if rank != 0:
        raise RuntimeError(f"init_rpc: rank {rank} is out of range for world_size 1 (the only rank is 0)")
    _Agent.me, _Agent.timeout, _Agent.next_id = WorkerInfo(name, 0), options.rpc_timeout, 0


def shutdown(graceful=True, timeout=0):
    _agent()
    _Agent.me = None


def _agent(message=_NOT_INIT) -> WorkerInfo:
    if _Agent.me is None:
        raise RuntimeError(message)
    return _Agent.me


def get_worker_info(worker_name=None) -> WorkerInfo:
    me = _agent()
    if worker_name is not None and worker_name != me.name:
        raise RuntimeError(f"name:{me.name},rank:{me.id} could not find destination name {worker_name}")
    return me


def get_rpc_timeout() -> float:
    _agent()
    return _Agent.timeout


def _destination(to) -> WorkerInfo:
    me = _agent()
    if isinstance(to, WorkerInfo):
        found = to == me
    elif isinstance(to, str):
        found = to == me.name
    elif isinstance(to, int):
        found = to == me.id
    else:
        raise TypeError(f"Cannot get WorkerInfo from name {to!r}")
    if not found:
        what = f"name {to}" if isinstance(to, str) else f"id {to.id if isinstance(to, WorkerInfo) else to}"
        raise RuntimeError(f"name:{me.name},rank:{me.id} could not find destination {what}")
    return me


def _run(to, func, args, kwargs):
    """``func(*args, **kwargs)`` on the worker; an error comes back as torch brings a remote one back."""
    me = _destination(to)
    try:
        return func(*(args or ()), **(kwargs or {}))
    except Exception as e:
        trace = "".join(traceback.format_exception(type(e), e, e.__traceback__))
        text = f"{type(e).__name__}: On {me}:\n{e!r}\n{trace}"
        try:
            remote_error = type(e)(text)
        except Exception:
            remote_error = RuntimeError(text)
        raise remote_error from None


def rpc_sync(to, func, args=None, kwargs=None, timeout=-1.0):
    """Run ``func`` on worker ``to`` and return its result."""
    return _run(to, func, args, kwargs)


def rpc_async(to, func, args=None, kwargs=None, timeout=-1.0) -> _Future:
    """Run ``func`` on worker ``to``; a Future holding its result (or its error)."""
    fut = _Future()
    try:
        fut.set_result(_run(to, func, args, kwargs))
    except Exception as e:
        fut.set_exception(e)
    return fut


def remote(to, func, args=None, kwargs=None, timeout=-1.0) -> RRef:
    """Run ``func`` on worker ``to``; an RRef to its result, owned by that worker."""
    return RRef(_run(to, func, args, kwargs))


class RRef:
    """A reference to a value a worker owns: here always this worker, so ``to_here`` is the value itself."""

    def __init__(self, value, type_hint=None):
        _agent(_NO_AGENT)
        self._value = value
        self._id = _Agent.next_id
        _Agent.next_id += 1

    def local_value(self):
        return self._value

    def to_here(self, timeout=-1.0):
        return self._value

    def is_owner(self) -> bool:
        return True

    def confirmed_by_owner(self) -> bool:
        return True

    def owner(self) -> WorkerInfo:
        return _agent()

    def owner_name(self) -> str:
        return _agent().name

    def rpc_sync(self, timeout=-1.0):
        """A proxy whose method calls run on the owner and return their results."""
        return _Proxy(self, lambda f, a, k: rpc_sync(self.owner(), f, a, k))

    def rpc_async(self, timeout=-1.0):
        """A proxy whose method calls return Futures of their results."""
        return _Proxy(self, lambda f, a, k: rpc_async(self.owner(), f, a, k))

    def remote(self, timeout=-1.0):
        """A proxy whose method calls return RRefs to their results."""
        return _Proxy(self, lambda f, a, k: remote(self.owner(), f, a, k))

    def __repr__(self):
        return f"OwnerRRef(GloballyUniqueId(created_on=0, local_id={self._id}))"


class _Proxy:
    def __init__(self, rref, call):
        self._rref, self._call = rref, call

    def __getattr__(self, name):
        method = getattr(self._rref.local_value(), name)
        return lambda *args, **kwargs: self._call(method, args, kwargs)
