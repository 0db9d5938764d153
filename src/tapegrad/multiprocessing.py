"""``tapegrad.multiprocessing``: Python's ``multiprocessing``, with ``torch.multiprocessing``'s additions
(``spawn``, the sharing strategies). Tensors travel between processes by pickling: a copy of their numbers, except
for tensors in shared memory (``share_memory_()``, ``Module.share_memory()``), which the receiving process maps
(``tapegrad/_shared.py``): every process then reads and writes the same parameters, as in Hogwild training."""

from __future__ import annotations

import multiprocessing as _mp
from multiprocessing import *  # noqa: F403

__all__ = [*_mp.__all__, "spawn", "start_processes", "get_sharing_strategy", "set_sharing_strategy",
           "get_all_sharing_strategies", "ProcessRaisedException", "ProcessExitedException"]

_strategy = ["file_descriptor"]


def get_all_sharing_strategies():
    return {"file_descriptor", "file_system"}


def get_sharing_strategy():
    return _strategy[0]


def set_sharing_strategy(new_strategy):
    if new_strategy not in get_all_sharing_strategies():
        raise AssertionError(f"invalid sharing strategy {new_strategy!r}")
    _strategy[0] = new_strategy


class ProcessRaisedException(Exception):
    """A spawned process raised: the message holds its traceback."""

    def __init__(self, msg, error_index, error_pid):
        super().__init__(msg)
        self.error_index, self.pid = error_index, error_pid


class ProcessExitedException(Exception):
    def __init__(self, msg, error_index, error_pid, exit_code, signal_name=None):
        super().__init__(msg)
        self.error_index, self.pid, self.exit_code, self.signal_name = error_index, error_pid, exit_code, signal_name


def _wrap(fn, i, args, queue):
    import traceback
    try:
        fn(i, *args)
    except KeyboardInterrupt:
        pass
    except Exception:
        queue.put(traceback.format_exc())
        raise SystemExit(1) from None


class ProcessContext:
    def __init__(self, processes, queues):
        self.processes, self.error_queues = processes, queues

    def pids(self):
        return [p.pid for p in self.processes]

    def join(self, timeout=None):
        """Wait for the processes; True when all have finished. A failed one is raised as torch does."""
        for i, p in enumerate(self.processes):
            p.join(timeout)
            if p.exitcode is None:
                return False
            if p.exitcode != 0:
                for q in self.processes:
                    if q.is_alive():
                        q.terminate()
                q = self.error_queues[i]
                if not q.empty():
                    raise ProcessRaisedException(f"\n\n-- Process {i} terminated with the following error:\n"
                                                 f"{q.get()}", i, p.pid)
                raise ProcessExitedException(f"process {i} terminated with exit code {p.exitcode}", i, p.pid,
                                             p.exitcode)
        return True


def start_processes(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """Run ``fn(i, *args)`` for i in range(nprocs), each in its own process (torch.multiprocessing's)."""
    ctx = _mp.get_context(start_method)
    queues, procs = [], []
    for i in range(nprocs):
        q = ctx.SimpleQueue()
        p = ctx.Process(target=_wrap, args=(fn, i, args, q), daemon=daemon)
        p.start()
        queues.append(q)
        procs.append(p)
    pc = ProcessContext(procs, queues)
    if not join:
        return pc
    while not pc.join():
        pass
    return None


def spawn(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    return start_processes(fn, args, nprocs, join, daemon, start_method)
