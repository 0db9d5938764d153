"""Checkpoint loading is bounded (issue 19 s.1): the format is checked before anything is read, a zip bomb is
refused before it inflates, an entry referenced many times is one array, and a valid checkpoint loads in about
its own size of memory."""

import io
import json
import os
import struct
import subprocess
import sys
import time
import tracemalloc
import zipfile
import zlib

import numpy as np
import pytest

import tapegrad
from tapegrad.serialization import CheckpointError, save_npz

SRC = os.path.join(os.path.dirname(__file__), "..", "src")


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_dev_zero_is_refused_at_once():
    start = time.perf_counter()
    with pytest.raises(CheckpointError, match="/dev/zero: not a checkpoint"):
        tapegrad.load("/dev/zero")
    assert time.perf_counter() - start < 0.5


def _bomb(gib):
    """A raw deflate stream of ``gib`` GiB of zeros in about 1 MB per GiB (identical flushed blocks)."""
    block = bytes(64 << 20)
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    first = c.compress(block) + c.flush(zlib.Z_FULL_FLUSH)
    middle = c.compress(block) + c.flush(zlib.Z_FULL_FLUSH)
    n = gib * 16
    return first + middle * (n - 2) + c.compress(block) + c.flush(), n * len(block)


def _zip_with(path, entries):
    """A zip archive written by hand: entries ``(name, data, size_declared, crc, deflated[, offset])``; one with
    an offset has no data of its own and points at that offset (sizes are taken as given, never checked)."""
    out, central = bytearray(), bytearray()
    for name, data, size, crc, deflated, *at in entries:
        method = 8 if deflated else 0
        name_b = name.encode()
        offset = at[0] if at else len(out)
        csize = len(data) if not at else at[1]
        central += struct.pack("<4sHHHHHHIIIHHHHHII", b"PK\x01\x02", 20, 20, 0, method, 0, 0x21, crc, csize, size,
                               len(name_b), 0, 0, 0, 0, 0, offset) + name_b
        if not at:
            out += struct.pack("<4sHHHHHIIIHH", b"PK\x03\x04", 20, 0, method, 0, 0x21, crc, len(data), size,
                               len(name_b), 0) + name_b + data
    eocd = struct.pack("<4sHHHHIIH", b"PK\x05\x06", 0, 0, len(entries), len(entries), len(central), len(out), 0)
    path.write_bytes(bytes(out + central + eocd))
    return path


def _npy_header(shape, descr="<f4"):
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {"descr": descr, "fortran_order": False, "shape": shape})
    return buf.getvalue()


def _manifest_entry(obj, n):
    text = json.dumps({"format": "tapegrad-checkpoint", "version": 1, "n_arrays": n, "object": obj}).encode()
    data = _npy_header((len(text),), "|u1") + text
    return ("__tapegrad__.npy", data, len(data), zlib.crc32(data), False)


def test_a_zip_bomb_is_refused_before_it_inflates(tmp_path):
    stream, size = _bomb(2)
    assert len(stream) < 2.5e6 and size == 2 << 30                    # 2 MB deflated -> 2 GiB
    # tapegrad's own format: the array entry
    npz = _zip_with(tmp_path / "bomb.pt", [("0.npy", stream, size, 0, True),
                                            _manifest_entry({"__tensor__": 0, "dtype": "float32"}, 1)])
    # PyTorch's format: a storage record
    pkl = tapegrad.serialization._torch_format._pickle(tapegrad.zeros(4), 2, False)[0]
    pt = _zip_with(tmp_path / "bomb2.pt", [("archive/data.pkl", pkl, len(pkl), zlib.crc32(pkl), False),
                                           ("archive/data/0", stream, size, 0, True)])
    for path in (npz, pt):
        tracemalloc.start()
        start = time.perf_counter()
        with pytest.raises(CheckpointError, match="likely zip bomb"):
            tapegrad.load(path)
        elapsed = time.perf_counter() - start
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert elapsed < 0.5 and peak < 16e6, (elapsed, peak)


def test_an_entry_that_lies_about_its_size_stops_at_the_declared_size(tmp_path):
    raw = bytes(64 << 20)
    stream = zlib.compress(raw, 9)[2:-4]           # raw deflate of 64 MiB of zeros (~65 kB)
    declared = 4 << 20                               # within the ratio, but it expands to 16 times more
    path = _zip_with(tmp_path / "liar.pt", [("0.npy", stream, declared, 0, True),
                                            _manifest_entry({"__tensor__": 0, "dtype": "float32"}, 1)])
    tracemalloc.start()
    with pytest.raises(CheckpointError, match="liar.pt.*expands past its declared 4194304 bytes"):
        tapegrad.load(path)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 2 * declared + (16 << 20), peak


def test_a_re_compressed_checkpoint_loads(tmp_path):
    w = tapegrad.randn(100, 10)
    tapegrad.save({"w": w}, tmp_path / "plain.pt")
    with zipfile.ZipFile(tmp_path / "plain.pt") as src, \
            zipfile.ZipFile(tmp_path / "deflated.pt", "w", compression=zipfile.ZIP_DEFLATED) as dst:
        for name in src.namelist():
            dst.writestr(name, src.read(name))
    assert tapegrad.load(tmp_path / "deflated.pt")["w"].tolist() == w.tolist()
    with pytest.raises(CheckpointError, match="mmap=True cannot map.*compressed"):
        tapegrad.load(tmp_path / "deflated.pt", mmap=True)


def test_an_entry_referenced_300_times_is_one_array(tmp_path):
    arr = np.arange(2 << 20, dtype=np.float32)                        # 8 MB
    text = json.dumps({"format": "tapegrad-checkpoint", "version": 1, "n_arrays": 1,
                       "object": [{"__tensor__": 0, "dtype": "float32"}] * 300})
    path = tmp_path / "many.pt"
    with open(path, "wb") as f:
        np.savez(f, __tapegrad__=np.frombuffer(text.encode(), np.uint8), **{"0": arr})
    tracemalloc.start()
    back = tapegrad.load(path)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert len(back) == 300 and all(t is back[0] for t in back) and peak < 2 * arr.nbytes


def test_entries_that_overlap_are_refused(tmp_path):
    # an entry whose data holds another whole entry (the overlapping-file zip bomb): the two declare more data
    # than the file holds
    inner = _npy_header((1 << 18,)) + bytes(1 << 20)
    name = b"1.npy"
    local = struct.pack("<4sHHHHHIIIHH", b"PK\x03\x04", 20, 0, 0, 0, 0x21, zlib.crc32(inner), len(inner),
                        len(inner), len(name), 0) + name + inner
    path = _zip_with(tmp_path / "overlap.pt", [
        ("0.npy", local, len(local), zlib.crc32(local), False),
        ("1.npy", None, len(inner), zlib.crc32(inner), False, 30 + len("0.npy"), len(inner)),
        _manifest_entry([{"__ndarray__": 1}, {"__ndarray__": 0}], 2)])
    with pytest.raises(CheckpointError, match="overlap.pt.*entries overlap"):
        tapegrad.load(path)


_PEAK = """
import sys, time, tracemalloc
import tapegrad
path, mmap = sys.argv[1], sys.argv[2] == "1"
tapegrad.load(sys.argv[3])                      # warm: the imports load happens here, not below


def status(field):                              # Linux: resident memory now / at its peak, in kB
    try:
        return int(open("/proc/self/status").read().split(field + ":")[1].split()[0])
    except (OSError, IndexError):
        return 0


try:
    open("/proc/self/clear_refs", "w").write("5")      # reset the peak (VmHWM) to the current size
except OSError:
    pass
rss = status("VmRSS")
tracemalloc.start()
start = time.perf_counter()
obj = tapegrad.load(path, mmap=mmap)
elapsed = time.perf_counter() - start
peak = tracemalloc.get_traced_memory()[1]
print(peak, status("VmHWM") - rss, elapsed)
"""


@pytest.mark.parametrize("fmt", ["tapegrad.save", "torch.save", "save_npz", "mmap"])
def test_loading_50_mb_takes_about_50_mb(tmp_path, fmt, request):
    path = tmp_path / "big.pt"
    if fmt == "torch.save":
        torch = request.getfixturevalue("torch")
        torch.save({"w": torch.randn(3200, 4000), "b": torch.randn(4000)}, path)
    else:
        obj = {"w": tapegrad.randn(3200, 4000), "b": tapegrad.randn(4000)}
        (save_npz if fmt == "save_npz" else tapegrad.save)(obj, path)
    tapegrad.save({"w": tapegrad.ones(1)}, tmp_path / "small.pt")
    size = os.path.getsize(path)
    assert size > 50e6
    out = subprocess.run([sys.executable, "-c", _PEAK, str(path), "1" if fmt == "mmap" else "0",
                          str(tmp_path / "small.pt")], env={**os.environ, "PYTHONPATH": SRC},
                         capture_output=True, text=True, check=True).stdout.split()
    peak, rss_kb, elapsed = int(out[0]), int(out[1]), float(out[2])
    ratio = peak / size
    print(f"{fmt}: {size / 1e6:.0f} MB file, traced peak {ratio:.3f}x its size, peak RSS +{rss_kb / 1e3:.0f} MB, "
          f"{elapsed * 1e3:.0f} ms")
    if fmt == "mmap":
        assert ratio < 0.05
    else:
        assert ratio < 1.05
