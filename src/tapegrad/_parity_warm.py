"""Warm starts for ``tapegrad.parity.run(..., warm=True)``: each run is forked from a process that has already
imported its framework, instead of starting a fresh interpreter that imports it again.

Starting Python and importing torch costs about 2 s of CPU per run, more than many short scripts take to run; a
suite that runs a hundred scripts under both frameworks pays it two hundred times. A *server* (one per framework,
interpreter and environment, kept for the caller's next runs) installs the run's import hook (``_parity_alias``),
imports ``torch`` (real torch, or tapegrad standing in for it) and then waits for requests on its stdin. For each
run it forks: the child starts a session of its own (the runner kills that process group at the deadline, as it
does for a cold run), points its stdin at /dev/null and its stdout/stderr at the run's files, enters the caller's
directory and environment, and runs the same bootstrap code as a cold run (``parity._BOOT_RUN``), leaving through
the interpreter's normal exit (threads joined, ``atexit`` handlers run, streams flushed).

The server reports the child's exit status without reaping it (``waitid(..., WNOWAIT)``), and reaps it only when
the runner says so, after killing the run's process group: until then the child's pid, which is the group's id,
cannot be taken by another process. Popen's convention holds for the status (``-N`` for a run killed by signal N).

What differs from a cold start: the framework was imported before the script ran, so environment variables a
script sets before ``import torch`` do not reach that import, a module in the script's folder named like one the
framework imports is not picked up, and the start-up environment (``PYTHONHASHSEED``, the BLAS thread counts...)
is the server's: runs whose environments differ in more than ``_VOLATILE_ENV`` get servers of their own. Where
``os.fork`` is missing (Windows) or a server cannot start, ``run`` falls back to cold starts.
"""

from __future__ import annotations

import atexit
import json
import os
import select
import signal
import subprocess
import threading

from .parity import _BOOT_RUN, _SRC, _Child

# variables that change while the caller runs (pytest names the current test in one): not part of a server's key,
# since nothing reads them at start-up; the forked run still sees their current values
_VOLATILE_ENV = ("PYTEST_CURRENT_TEST",)

# The server: argv = [mode, tapegrad_src]; requests and replies are JSON lines on its stdin/stdout.
_SERVER = r'''
import json, os, runpy, sys, traceback
mode, src = sys.argv[1:3]
requests, replies = os.fdopen(os.dup(0), "r"), os.dup(1)
null = os.open(os.devnull, os.O_RDONLY)
os.dup2(null, 0)
os.close(null)
os.dup2(2, 1)                   # (stray output of the server goes to its stderr, not into the replies)
sys.path.pop(0)                 # the folder of `-c`; a run puts its script's folder first, as a cold run does
if src not in sys.path:
    sys.path.insert(0, src)


def reply(**message):
    os.write(replies, (json.dumps(message) + "\n").encode())


hook = runpy.run_path(os.path.join(src, "tapegrad", "_parity_alias.py"))
hook["install"](mode, src)
hook["propagate"](mode, src)
try:
    import torch                # the run's framework: tapegrad, standing in for torch, in the tapegrad run
    del torch
except BaseException as e:
    reply(error=f"{type(e).__name__}: {e}")
    sys.exit(1)
reply(ready=True)
while True:
    line = requests.readline()
    if not line:                # the runner has gone
        sys.exit(0)
    request = json.loads(line)
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        break
    reply(pid=pid)
    status = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)
    reply(exit=status.si_status if status.si_code == os.CLD_EXITED else -status.si_status)
    requests.readline()         # "reap": the runner has killed the run's process group
    os.waitpid(pid, 0)

# the forked run
requests.close()
os.close(replies)
os.setsid()
for fd, path, flags in ((0, os.devnull, os.O_RDONLY), (1, request["stdout"], os.O_WRONLY | os.O_TRUNC),
                        (2, request["stderr"], os.O_WRONLY | os.O_TRUNC)):
    opened = os.open(path, flags)
    os.dup2(opened, fd)
    os.close(opened)
os.chdir(request["cwd"])
os.environ.clear()
os.environ.update(request["env"])
result_file, script = request["result_file"], request["script"]
sys.argv = [script] + request["args"]
sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
del line, request, pid, requests, replies, reply, fd, path, flags, opened
''' + _BOOT_RUN


class ServerGone(Exception):
    """The server process ended (or wrote something unreadable)."""


class _Server:
    """One warm process: started at once, ready once it has imported the framework."""

    def __init__(self, python, mode, env):
        self.proc = subprocess.Popen([python, "-c", _SERVER, mode, _SRC], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env,
                                     start_new_session=True)
        self.buffer = b""
        if "ready" not in self.read(block=True):
            self.close()
            raise ServerGone("the warm server could not import its framework")

    def read(self, block):
        """The next reply (a dict), or None when none has come and ``block`` is false."""
        fd = self.proc.stdout.fileno()
        while b"\n" not in self.buffer:
            if not block and not select.select([fd], [], [], 0)[0]:
                return None
            chunk = os.read(fd, 4096)
            if not chunk:
                raise ServerGone("the warm server ended")
            self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        try:
            return json.loads(line)
        except ValueError as e:
            raise ServerGone(f"the warm server wrote {line!r}") from e

    def send(self, message):
        try:
            self.proc.stdin.write((json.dumps(message) + "\n").encode())
            self.proc.stdin.flush()
        except (OSError, ValueError) as e:
            raise ServerGone("the warm server ended") from e

    def close(self):
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        if self.proc.poll() is None:
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc.stdout.close()


_idle = {}                 # (python, mode, environment) -> servers waiting for a run
_lock = threading.Lock()


def _key(python, mode, env):
    return python, mode, tuple(sorted((k, v) for k, v in env.items() if k not in _VOLATILE_ENV))


def _acquire(python, mode, env):
    key = _key(python, mode, env)
    with _lock:
        servers = _idle.setdefault(key, [])
        while servers:
            server = servers.pop()
            if server.proc.poll() is None:
                return key, server
            server.close()
    return key, _Server(python, mode, env)


def _release(key, server):
    with _lock:
        _idle.setdefault(key, []).append(server)


@atexit.register
def _close_all():
    with _lock:
        servers = [s for group in _idle.values() for s in group]
        _idle.clear()
    for server in servers:
        server.close()


class _ForkedProcess:
    """The forked run as ``_Child`` sees a Popen: a pid and, once it has been reaped, a returncode."""

    def __init__(self, pid):
        self.pid, self.returncode = pid, None


class WarmChild(_Child):
    """One run forked by a warm server; the same interface as ``parity._Child`` (a cold run)."""

    def __init__(self, mode, script, args, python, env):
        if not hasattr(os, "fork"):
            raise ServerGone("no os.fork on this platform")
        self.key, self.server = _acquire(python, mode, env)
        self.mode, self.timed_out, self.status = mode, False, None
        self._files()
        try:
            self.server.send({"result_file": self.result_file, "script": script, "args": list(args),
                              "cwd": os.getcwd(), "env": env, "stdout": self.stdout.name,
                              "stderr": self.stderr.name})
            self.proc = _ForkedProcess(self.server.read(block=True)["pid"])
        except BaseException:
            self.server.close()
            self._remove_files()
            raise

    def exited(self):
        if self.status is None:
            try:
                message = self.server.read(block=False)
            except ServerGone:
                message = {"exit": -signal.SIGKILL}       # the server was killed: its run cannot be waited for
                self.server.close()
                self.server = None
            if message is not None:
                self.status = message["exit"]
        return self.status is not None

    def stop(self):
        if self.proc.returncode is not None:
            return
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        while not self.exited():
            select.select([self.server.proc.stdout], [], [], 1.0)
        if self.server is not None:
            try:
                self.server.send({"reap": True})
                _release(self.key, self.server)
            except ServerGone:
                self.server.close()
        self.proc.returncode = self.status
