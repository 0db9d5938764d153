"""``tapegrad.distributed.rpc``: torch.distributed.rpc for a job of one worker (see ``api``)."""

from . import api
from .api import (BackendType, RpcBackendOptions, RRef, TensorPipeRpcBackendOptions, WorkerInfo, get_rpc_timeout,
                  get_worker_info, init_rpc, is_available, remote, rpc_async, rpc_sync, shutdown)

__all__ = ["init_rpc", "shutdown", "get_worker_info", "rpc_sync", "rpc_async", "remote", "RRef", "WorkerInfo",
           "BackendType", "TensorPipeRpcBackendOptions", "RpcBackendOptions", "is_available", "get_rpc_timeout",
           "api"]
