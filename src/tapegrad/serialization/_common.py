"""What every checkpoint reader shares: the error classes and a bounded view of the file being read."""

from __future__ import annotations

import os
import pickle

__all__ = ["CheckpointError", "WeightsOnlyError", "Corrupt", "Source", "Bounded", "Memory"]


class CheckpointError(RuntimeError):
    """A file that is not a readable checkpoint (truncated, corrupted, tampered with or foreign); names the file."""

    __module__ = "tapegrad.serialization"


class UnpicklingError(CheckpointError, pickle.UnpicklingError):
    """A ``weights_only`` load refused a pickle (a global, call or build outside the allowed set).

    Both a ``CheckpointError`` and, as torch raises it, a ``pickle.UnpicklingError``; named as torch's class, so
    that a script's failing whole-model ``torch.load`` reports the same exception in both (``WeightsOnlyError``
    is tapegrad's name for it).
    """

    __module__ = "tapegrad.serialization"


WeightsOnlyError = UnpicklingError


class Corrupt(ValueError):
    """A defect found deep inside a reader, which knows no file name; ``load`` re-raises it as a CheckpointError
    naming the file."""


class Source:
    """The file ``load`` reads: a path it opens (and closes) or a seekable binary file object, with its size.

    Every read is bounded by the size: a declared length past the end of the file is an error before anything
    is allocated.
    """

    def __init__(self, f):
        if isinstance(f, (str, os.PathLike)):
            self.path = os.fspath(f)
            self.name = self.path
            self.fh = open(self.path, "rb")      # noqa: SIM115 - closed by close()
            self.owned = True
            self.start = 0
            try:
                self.size = os.fstat(self.fh.fileno()).st_size
            except OSError:
                self.size = 0
        else:
            self.path = None
            self.name = str(getattr(f, "name", "<file object>"))
            self.fh = f
            self.owned = False
            seekable = getattr(f, "seekable", None)
            if not hasattr(f, "read") or (seekable is not None and not seekable()):
                raise CheckpointError(
                    f"{self.name}: load needs a seekable binary file (a path, an open file or io.BytesIO); "
                    "read the data into io.BytesIO first and load from that")
            self.start = f.tell()
            self.size = f.seek(0, os.SEEK_END)
            f.seek(self.start)

    def error(self, message):
        return CheckpointError(f"{self.name}: {message}")

    def head(self, n):
        """The first ``n`` bytes (fewer for a shorter file; a device such as /dev/zero gives ``n``)."""
        self.fh.seek(self.start)
        data = self.fh.read(n)
        self.fh.seek(self.start)
        return data

    def read_at(self, offset, n):
        """Exactly ``n`` bytes at ``offset``, or a CheckpointError saying the file is too short."""
        if offset < 0 or n < 0 or offset + n > self.size:
            raise self.error(f"truncated or corrupted: {n} bytes wanted at offset {offset}, but the file has "
                             f"{self.size} bytes")
        self.fh.seek(offset)
        data = self.fh.read(n)
        if len(data) != n:
            raise self.error(f"truncated: {n} bytes wanted at offset {offset}, {len(data)} read")
        return data

    def readinto_at(self, offset, view):
        """Fill the writable byte memoryview ``view`` from ``offset`` (no intermediate copy where the file allows)."""
        n = len(view)
        if offset < 0 or offset + n > self.size:
            raise self.error(f"truncated or corrupted: {n} bytes wanted at offset {offset}, but the file has "
                             f"{self.size} bytes")
        self.fh.seek(offset)
        readinto = getattr(self.fh, "readinto", None)
        pos = 0
        while pos < n:
            chunk = view[pos:pos + (64 << 20)]
            if readinto is not None:
                got = readinto(chunk)
            else:
                data = self.fh.read(len(chunk))
                got = len(data)
                chunk[:got] = data
            if not got:
                raise self.error(f"truncated: {n} bytes wanted at offset {offset}, {pos} read")
            pos += got

    def close(self):
        if self.owned:
            self.fh.close()


class Bounded:
    """A forward reader over ``source`` from ``offset`` to ``end``: what an unpickler reads from.

    ``read(n)`` past ``end`` raises instead of allocating ``n`` bytes; ``readline`` stops at ``limit`` bytes.
    """

    def __init__(self, source, offset, end, what):
        self.source, self.pos, self.end, self.what = source, offset, end, what

    def read(self, n):
        if n > self.end - self.pos:
            raise self.source.error(f"truncated or corrupted {self.what}: {n} bytes wanted at offset {self.pos}, "
                                    f"{max(self.end - self.pos, 0)} left")
        data = self.source.read_at(self.pos, n)
        self.pos += n
        return data

    def readinto(self, view):
        n = len(view)
        if n > self.end - self.pos:
            raise self.source.error(f"truncated {self.what}: {n} bytes wanted at offset {self.pos}, "
                                    f"{max(self.end - self.pos, 0)} left")
        self.source.readinto_at(self.pos, view)
        self.pos += n
        return n

    def readline(self, limit=4096):
        self.source.fh.seek(self.pos)
        line = self.source.fh.readline(min(limit, max(self.end - self.pos, 0)))
        if not line.endswith(b"\n"):
            raise self.source.error(f"corrupted {self.what}: a name at offset {self.pos} is not terminated")
        self.pos += len(line)
        return line


class Memory:
    """The same reader interface over bytes already in memory (a zip record such as ``data.pkl``)."""

    def __init__(self, data, source, what):
        self.data, self.pos, self.source, self.what = memoryview(data), 0, source, what

    def read(self, n):
        if n > len(self.data) - self.pos:
            raise self.source.error(f"truncated or corrupted {self.what}: {n} bytes wanted at offset {self.pos}, "
                                    f"{len(self.data) - self.pos} left")
        out = self.data[self.pos:self.pos + n].tobytes()
        self.pos += n
        return out

    def readline(self, limit=4096):
        rest = self.data[self.pos:self.pos + limit].tobytes()
        i = rest.find(b"\n")
        if i < 0:
            raise self.source.error(f"corrupted {self.what}: a name at offset {self.pos} is not terminated")
        self.pos += i + 1
        return rest[:i + 1]
