"""Checkpoints: ``save(obj, f)`` / ``load(f)``, in PyTorch's own file format, safely.

``save`` writes what ``torch.save`` writes (a zip archive holding a pickle and one record per storage), so real
PyTorch loads it with ``torch.load(f, weights_only=True)``; ``load`` reads PyTorch's zip format, its legacy
format (before 1.6) and tapegrad's own npz format (``save_npz``, readable with ``np.load``).

Loading is ``weights_only`` by default, as in torch 2.6+: the pickle is read by a restricted unpickler
(``_unpickler``) that builds tensors, storages, dtypes, ``OrderedDict`` and plain containers, and refuses every
other global with torch's message (``add_safe_globals``/``safe_globals`` allow more; ``weights_only=False``
unpickles fully, which can run code: only for files you trust). Every size a file declares is checked against
what the file holds before memory is allocated, each storage is read once straight into the array that keeps
it, and a damaged, tampered or foreign file raises ``CheckpointError`` naming it (a refused pickle raises
``WeightsOnlyError``, which is also the ``pickle.UnpicklingError`` torch raises).

Saving to a path is atomic: the file is written to a temporary file beside its target (named
``.<name>.tapegrad-tmp-<host>-<pid>-<random>``, so that one left by a killed save is removed by the next save to
the same path), flushed to disk and renamed over the target; a symlink is written through to its target, a new
file's mode follows the umask and an existing file keeps its mode.
"""

from __future__ import annotations

import mmap as _mmap
import os
import pickle
import secrets
import socket
import stat
import time
import warnings

from . import _npz, _torch_format, _zip
from ._common import CheckpointError, Corrupt, Source, WeightsOnlyError
from ._torch_format import DEFAULT_PROTOCOL, MAGIC_NUMBER, PROTOCOL_VERSION
from ._unpickler import add_safe_globals, clear_safe_globals, get_safe_globals, safe_globals

__all__ = ["save", "load", "save_npz", "CheckpointError", "WeightsOnlyError", "add_safe_globals",
           "get_safe_globals", "clear_safe_globals", "safe_globals", "get_unsafe_globals_in_checkpoint",
           "DEFAULT_PROTOCOL", "MAGIC_NUMBER", "PROTOCOL_VERSION"]

_UNSAFE_MESSAGE = (
    "In PyTorch 2.6, we changed the default value of the `weights_only` argument in `torch.load` from `False` to "
    "`True`. Re-running `torch.load` with `weights_only` set to `False` will likely succeed, but it can result in "
    "arbitrary code execution. Do it only if you got the file from a trusted source.")
_DOCS_MESSAGE = ("\n\nCheck the documentation of torch.load to learn more about types accepted by default with "
                 "weights_only https://pytorch.org/docs/stable/generated/torch.load.html.")


# --- saving ------------------------------------------------------------------------------------------------
def save(obj, f, pickle_module=pickle, pickle_protocol=DEFAULT_PROTOCOL, _use_new_zipfile_serialization=True,
         _disable_byteorder_record=False) -> None:
    """Save ``obj`` to ``f`` (a path or a binary file object) as ``torch.save`` does; atomically for paths.

    Tensors, state dicts, optimizer states and any picklable object (a whole ``nn.Module`` too: loading that
    needs ``weights_only=False``, as in torch). Views and tensors sharing memory keep sharing it when loaded.

    >>> tapegrad.save({"w": tapegrad.ones(2), "step": 3}, "ckpt.pt")
    >>> tapegrad.load("ckpt.pt")["step"]
    3
    """
    if pickle_module is not None and pickle_module is not pickle:
        raise ValueError("tapegrad.save pickles with Python's own pickle module (it names tensors as torch does); "
                         f"pickle_module={getattr(pickle_module, '__name__', pickle_module)!r} is not supported")
    _check_target(f)
    path = os.fspath(f) if isinstance(f, (str, os.PathLike)) else None
    archive = _torch_format.archive_name(path)

    def write(fh):
        _torch_format.write(fh, obj, archive, pickle_protocol, legacy=not _use_new_zipfile_serialization,
                            byteorder=not _disable_byteorder_record)
    _write(f, write)


def save_npz(obj, f) -> None:
    """Save tensors, arrays and (nested) containers of them in tapegrad's npz format (no pickle at all).

    The file is a NumPy ``.npz``: ``np.load(f)`` reads its arrays without tapegrad; ``tapegrad.load`` reads it
    back exactly. Arrays (NumPy ones too) round-trip as they are; views are saved as their own arrays.
    """
    _check_target(f)
    _write(f, lambda fh: _npz.write(fh, obj))


def _check_target(f):
    if not isinstance(f, (str, os.PathLike)) and not hasattr(f, "write"):
        raise AttributeError("expected 'f' to be string, path, or a file-like object with a 'write' attribute")


_TMP = ".tapegrad-tmp-"
_HOST = socket.gethostname().replace(os.sep, "_")


def _write(f, write):
    if not isinstance(f, (str, os.PathLike)):
        write(f)
        if hasattr(f, "flush"):
            f.flush()
        return
    path = os.fspath(f)
    target = os.path.realpath(path) if os.path.islink(path) else path     # write through a symlink
    directory = os.path.dirname(os.path.abspath(target))
    base = os.path.basename(target)
    _remove_stale_temps(directory, base)
    while True:
        tmp = os.path.join(directory, f".{base}{_TMP}{_HOST}-{os.getpid()}-{secrets.token_hex(4)}")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
            break                                  # (0o666 less the umask: a new file's mode follows the umask)
        except FileExistsError:
            continue
    try:
        with os.fdopen(fd, "wb") as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        try:
            os.chmod(tmp, stat.S_IMODE(os.stat(target).st_mode))      # an existing file keeps its mode
        except FileNotFoundError:
            pass
        os.replace(tmp, target)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    try:  # make the rename itself durable
        dfd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)
    except OSError:
        pass


def _remove_stale_temps(directory, base):
    """Delete the temporary files that killed saves to ``base`` left in ``directory``.

    Ours name their host and process: one whose process is gone is removed. Those of earlier tapegrad versions
    (``.tmp-<name>-XXXXXXXX``) carry no process, so they are removed once an hour old.
    """
    ours, old = f".{base}{_TMP}{_HOST}-", f".tmp-{base}-"
    try:
        entries = [e for e in os.scandir(directory) if e.name.startswith((ours, old))]
    except OSError:
        return
    for entry in entries:
        try:
            if entry.name.startswith(ours):
                pid = int(entry.name[len(ours):].split("-")[0])
                if pid == os.getpid() or os.name != "posix" or _alive(pid):
                    continue
            elif len(entry.name) != len(old) + 8 or time.time() - entry.stat().st_mtime < 3600:
                continue
            os.unlink(entry.path)
        except (OSError, ValueError):
            continue


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


# --- loading -----------------------------------------------------------------------------------------------
def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None, **pickle_load_args):
    """Load what ``save``, ``torch.save`` (zip or legacy format) or ``save_npz`` wrote.

    ``weights_only`` (the default, as in torch 2.6+) loads tensors, dtypes, ``OrderedDict`` and plain containers
    only, and never runs code from the file; ``weights_only=False`` unpickles anything (only for trusted files).
    ``map_location`` is accepted as torch's (every storage loads on the CPU). ``mmap=True`` maps the storages of
    a path instead of reading them (no copy; writes to the tensors stay private).

    A truncated, corrupted, tampered or foreign file raises ``CheckpointError`` naming it.
    """
    if weights_only is None:
        weights_only = pickle_module is None
    if weights_only and pickle_module is not None:
        raise RuntimeError("Can not safely load weights when explicit pickle_module is specified")
    encoding = pickle_load_args.pop("encoding", "utf-8")
    if pickle_load_args:
        if weights_only:
            warnings.warn("pickle_load_args only works if `weights_only=False`.", stacklevel=2)
        else:
            raise TypeError(f"load() got unexpected keyword arguments {sorted(pickle_load_args)} (tapegrad's "
                            "unpickler takes encoding=)")
    _torch_format._restorer(map_location)            # a bad map_location fails before the file is opened
    if mmap and not isinstance(f, (str, os.PathLike)):
        raise ValueError("f must be a file path in order to use the mmap argument")
    source = Source(f)
    try:
        return _load(source, map_location, weights_only, mmap, encoding)
    except WeightsOnlyError:
        raise
    except pickle.UnpicklingError as e:
        raise WeightsOnlyError(f"{source.name}: {_weights_only_message(str(e))}") from None
    except CheckpointError:
        raise
    except Corrupt as e:
        raise source.error(f"corrupted checkpoint: {e}") from None
    except Exception as e:        # anything else a malformed file provokes: one error class, naming the file
        if weights_only or isinstance(e, (MemoryError, RecursionError)):
            raise source.error(f"corrupted checkpoint: its contents are malformed ({type(e).__name__}: "
                               f"{e})") from None
        raise source.error(f"unpickling with weights_only=False failed ({type(e).__name__}: {e})") from e
    finally:
        source.close()


def _load(source, map_location, weights_only, mmap, encoding):
    head = source.head(512)
    if _zip.is_zip(head):
        zr = _zip.ZipReader(source)
        mm = _mmap.mmap(source.fh.fileno(), 0, access=_mmap.ACCESS_COPY) if mmap else None
        if _npz.MANIFEST in zr:
            return _npz.read(zr, mm)
        prefix = zr.names[0].split("/", 1)[0] + "/" if zr.names and "/" in zr.names[0] else None
        if prefix is None or prefix + "data.pkl" not in zr:
            if prefix is not None and prefix + "constants.pkl" in zr:
                raise source.error("a TorchScript archive (torch.jit.save): tapegrad cannot run TorchScript; load "
                                   "it in PyTorch and save its state_dict() with torch.save")
            raise source.error(f"not a checkpoint: a zip archive with neither a {_npz.MANIFEST[:-4]} entry "
                               "(tapegrad) nor a data.pkl record (PyTorch); an npz written by numpy can be read "
                               "with numpy.load")
        return _torch_format.load_zip(zr, prefix, map_location, weights_only, encoding, mm)
    if _torch_format.is_legacy(head):
        if mmap:
            raise source.error("mmap can only be used with files saved with `torch.save(_use_new_zipfile_"
                               "serialization=True), please torch.save your checkpoint with this option in order "
                               "to use mmap.")
        return _torch_format.load_legacy(source, map_location, weights_only, encoding)
    if head[257:262] == b"ustar":
        raise source.error("a legacy .tar checkpoint (PyTorch before 0.4): tapegrad does not read it; load it in "
                           "PyTorch and save it again with torch.save")
    raise source.error(f"not a checkpoint: it is neither a zip archive (torch.save since PyTorch 1.6, tapegrad.save) "
                       f"nor a legacy torch.save pickle (its first bytes are {head[:8]!r})")


def get_unsafe_globals_in_checkpoint(f) -> list:
    """The globals a PyTorch zip checkpoint names that ``weights_only`` loading would refuse (read statically)."""
    import _compat_pickle
    import pickletools

    from ._torch_names import allowed
    from ._unpickler import user_allowed
    source = Source(f)
    try:
        if not _zip.is_zip(source.head(4)):
            raise ValueError("Expected input to be a checkpoint returned by torch.save")
        zr = _zip.ZipReader(source)
        prefix = zr.names[0].split("/", 1)[0] + "/" if zr.names and "/" in zr.names[0] else ""
        if prefix + "constants.pkl" in zr:
            raise ValueError("Expected input to be a checkpoint returned by torch.save but got a torchscript "
                             "checkpoint")
        found = set()
        try:
            for op, arg, _ in pickletools.genops(zr.read(prefix + "data.pkl").tobytes()):
                if op.name == "GLOBAL":
                    module, name = arg.split(" ", 1)
                    if (module, name) in _compat_pickle.NAME_MAPPING:
                        module, name = _compat_pickle.NAME_MAPPING[(module, name)]
                    module = _compat_pickle.IMPORT_MAPPING.get(module, module)
                    found.add(f"{module}.{name}")
        except ValueError as e:
            raise source.error(f"corrupted pickle ({e})") from None
        return sorted(found - set(allowed()) - set(user_allowed()))
    finally:
        source.close()


def _weights_only_message(message):
    """torch's wording for a refused ``weights_only`` load."""
    if "was not an allowed global by default" in message:
        return ("Weights only load failed. This file can still be loaded, to do so you have two options, "
                "\033[1mdo those steps only if you trust the source of the checkpoint\033[0m. "
                f"\n\t(1) {_UNSAFE_MESSAGE}\n\t(2) Alternatively, to load with `weights_only=True` please check "
                "the recommended steps in the following error message.\n\tWeightsUnpickler error: " + message
                + _DOCS_MESSAGE)
    if " must be " in message and " to load" in message:
        return f"Weights only load failed. {message}\n {_UNSAFE_MESSAGE}\n"
    out = f"Weights only load failed. {_UNSAFE_MESSAGE}\n"
    if "is blocked" not in message:
        out += ("Please file an issue with the following so that we can make `weights_only=True` compatible with "
                "your use case: WeightsUnpickler error: ")
    return out + "\n\n" + message + _DOCS_MESSAGE
