"""Checkpoints: tapegrad's npz format (save_npz), atomic writes as torch users expect, clear errors for every
tampered manifest. PyTorch's own format is in test_serialization_torch.py, the bounds in
test_serialization_bounds.py."""

import io
import json
import os
import socket
import stat
import subprocess
import sys
import time
import zipfile
from collections import OrderedDict

import numpy as np
import pytest

import tapegrad
from tapegrad.serialization import CheckpointError, save_npz


def test_npz_round_trip_is_exact(tmp_path):
    obj = {
        "w": tapegrad.randn(3, 4),
        "d": tapegrad.tensor([1.5, -2.0], dtype=tapegrad.float64),
        "h": tapegrad.tensor([1.0, 2.0], dtype=tapegrad.float16),
        "i": tapegrad.arange(5, dtype=tapegrad.int32),
        "b": tapegrad.tensor([True, False]),
        "c": tapegrad.tensor([1 + 2j, -3j]),
        "scalar": tapegrad.tensor(3.25),
        "empty": tapegrad.zeros(0, 3),
        "t": tapegrad.randn(3, 2).t(),
        "nested": OrderedDict(a=[1, 2.5, "x", None, True], t=(tapegrad.ones(2), float("inf"))),
        "pairs": {1: "one", (2, 3): "two-three"},
        "step": 10,
        "lr": 0.1,
        "arr": np.arange(3, dtype=np.uint8),
        "flag": np.bool_(True),
        "np_num": np.float64(2.5),
        "dtype": tapegrad.int16,
    }
    path = tmp_path / "ckpt.npz"
    save_npz(obj, path)
    back = tapegrad.load(path)
    for k in ("w", "d", "h", "i", "b", "c", "scalar", "empty", "t"):
        assert back[k].dtype is obj[k].dtype and back[k].shape == obj[k].shape
        assert back[k].numpy().tobytes() == obj[k].numpy().tobytes()
    assert isinstance(back["nested"], OrderedDict) and back["nested"]["a"] == [1, 2.5, "x", None, True]
    assert isinstance(back["nested"]["t"], tuple) and back["nested"]["t"][1] == float("inf")
    assert back["pairs"] == {1: "one", (2, 3): "two-three"}
    assert back["step"] == 10 and back["lr"] == 0.1 and back["arr"].dtype == np.uint8
    assert back["flag"] is True and back["np_num"] == 2.5 and back["dtype"] is tapegrad.int16


def test_npz_is_readable_without_tapegrad(tmp_path):
    path = tmp_path / "c.npz"
    save_npz({"w": tapegrad.ones(2, 2)}, path)
    with np.load(path, allow_pickle=False) as z:
        assert z["0"].tolist() == [[1.0, 1.0], [1.0, 1.0]]
        assert b"tapegrad-checkpoint" in z["__tapegrad__"].tobytes()


def test_npz_files_of_the_previous_writer_keep_loading(tmp_path):
    # the format as tapegrad wrote it before (zipfile, forced zip64, np.lib.format.write_array)
    arrays = [np.arange(6, dtype=np.float32).reshape(2, 3), np.array([True, False])]
    manifest = {"format": "tapegrad-checkpoint", "version": 1, "n_arrays": 2,
                "object": {"__dict__": {"w": {"__tensor__": 0, "dtype": "float32", "requires_grad": True},
                                        "m": {"__tensor__": 1, "dtype": "bool"}}, "ordered": True}}
    path = tmp_path / "old.pt"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_STORED, allowZip64=True) as zf:
        for i, arr in enumerate(arrays):
            with zf.open(f"{i}.npy", "w", force_zip64=True) as f:
                np.lib.format.write_array(f, arr, allow_pickle=False)
        with zf.open("__tapegrad__.npy", "w") as f:
            np.lib.format.write_array(f, np.frombuffer(json.dumps(manifest).encode(), np.uint8))
    back = tapegrad.load(path)
    assert isinstance(back, OrderedDict) and back["w"].requires_grad and back["w"].is_leaf
    assert back["w"].tolist() == [[0, 1, 2], [3, 4, 5]] and back["m"].tolist() == [True, False]


def test_requires_grad_is_kept_and_file_objects_work():
    for save in (tapegrad.save, save_npz):
        buf = io.BytesIO()
        save([tapegrad.ones(2, requires_grad=True), tapegrad.nn.Parameter(tapegrad.zeros(1))], buf)
        buf.seek(0)
        t, p = tapegrad.load(buf)
        assert t.requires_grad and t.is_leaf and type(p) is tapegrad.nn.Parameter and p.requires_grad


def test_shared_tensors_load_shared_and_mmap_maps(tmp_path):
    x = tapegrad.arange(4.0)
    path = tmp_path / "s.npz"
    save_npz({"a": x, "b": x, "c": x.detach().requires_grad_()}, path)
    back = tapegrad.load(path)
    assert back["a"] is back["b"] and np.shares_memory(back["a"].numpy(), back["c"].detach().numpy())
    mapped = tapegrad.load(path, mmap=True)
    arr = mapped["a"].numpy()
    assert arr.tolist() == [0, 1, 2, 3] and not arr.flags.owndata
    arr[0] = 9        # private to this process (copy-on-write), as torch's default mmap
    assert tapegrad.load(path)["a"].tolist() == [0, 1, 2, 3]


def test_npz_refuses_what_it_cannot_hold_clearly():
    with pytest.raises(TypeError, match="save a model's state_dict"):
        save_npz(object(), io.BytesIO())
    deep = []
    for _ in range(150):
        deep = [deep]
    with pytest.raises(ValueError, match="nested deeper than 100"):
        save_npz(deep, io.BytesIO())


# --- every tampered manifest: one clear error naming the file --------------------------------------------
def _tampered(tmp_path, manifest, arrays=(np.zeros(2, np.float32),), raw=None):
    path = tmp_path / "tampered.pt"
    text = raw if raw is not None else json.dumps(manifest)
    entries = {str(i): a for i, a in enumerate(arrays)}
    with open(path, "wb") as f:
        np.savez(f, __tapegrad__=np.frombuffer(text.encode(), np.uint8), **entries)
    return path


def _manifest(obj, n=1, **extra):
    return {"format": "tapegrad-checkpoint", "version": 1, "n_arrays": n, "object": obj, **extra}


def _nested(depth):
    obj = []
    for _ in range(depth):
        obj = [obj]
    return obj


TAMPERED = {
    "evil dtype": (_manifest({"__tensor__": 0, "dtype": "evil"}), "unknown dtype 'evil'"),
    "manifest is a list": ([1, 2], "manifest is a JSON list"),
    "version is a string": (_manifest([], version="2"), "version is '2'"),
    "tuple of an int": (_manifest({"__tuple__": 5}), "__tuple__ entry holds int 5"),
    "float of a list": (_manifest({"__float__": [1]}), "__float__ entry holds \\[1\\]"),
    "dict of a list": (_manifest({"__dict__": [1]}), "__dict__ entry holds list"),
    "unhashable key": (_manifest({"__pairs__": [[[1, 2], 3]]}), "key of type list is unhashable"),
    "int tensor requires grad": (_manifest({"__tensor__": 0, "dtype": "int64", "requires_grad": True}),
                                 "only Tensors of floating point"),
    "nested 900 deep": (_manifest(_nested(900)), "nested deeper than 100 levels|nested too deeply"),
    "array count": (_manifest([], n=3), "lists 3 arrays, but the archive holds 1"),
    "array index": (_manifest({"__tensor__": 7, "dtype": "float32"}), "reference 7 is not one of the 1"),
    "bool index": (_manifest({"__ndarray__": True}), "reference True"),
    "dtype mismatch": (_manifest({"__tensor__": 0, "dtype": "float64"}), "tensor 0 has dtype float32, but the "
                                                                         "manifest says float64"),
    "unknown node": (_manifest({"__code__": "import os"}), "not a node this format writes"),
    "flag not bool": (_manifest({"__tensor__": 0, "dtype": "float32", "requires_grad": "yes"}),
                      "requires_grad' of a tensor is 'yes'"),
    "newer version": (_manifest([], version=99), "version 99 is newer"),
    "foreign format": ({"format": "other"}, "format 'other'"),
    "not json": (None, "not JSON"),
}


@pytest.mark.parametrize("case", sorted(TAMPERED))
def test_every_tampered_manifest_is_one_clear_error_naming_the_file(tmp_path, case):
    manifest, message = TAMPERED[case]
    path = _tampered(tmp_path, manifest, raw="{not json" if manifest is None else None)
    with pytest.raises(CheckpointError, match="tampered.pt") as info:
        tapegrad.load(path)
    assert info.type is CheckpointError
    assert __import__("re").search(message, str(info.value)), str(info.value)


def test_npy_header_declaring_more_than_its_entry_holds(tmp_path):
    path = tmp_path / "huge.pt"
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, {"descr": "<f4", "fortran_order": False, "shape": (2 ** 40,)})
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("0.npy", header.getvalue() + bytes(16))
        zf.writestr("__tapegrad__.npy", _npy_bytes(json.dumps(_manifest({"__tensor__": 0, "dtype": "float32"}))))
    with pytest.raises(CheckpointError, match=r"huge.pt.*shape \(1099511627776,\).*holds 16 bytes"):
        tapegrad.load(path)


def _npy_bytes(text):
    buf = io.BytesIO()
    np.lib.format.write_array(buf, np.frombuffer(text.encode(), np.uint8))
    return buf.getvalue()


def test_truncated_corrupted_and_foreign_files_name_the_file(tmp_path):
    for save in (tapegrad.save, save_npz):
        path = tmp_path / "ckpt.pt"
        save({"w": tapegrad.randn(50, 50)}, path)
        data = path.read_bytes()
        trunc = tmp_path / "trunc.pt"
        trunc.write_bytes(data[: len(data) // 2])
        with pytest.raises(CheckpointError, match="trunc.pt"):
            tapegrad.load(trunc)
        corrupt = tmp_path / "corrupt.pt"
        raw = bytearray(data)
        raw[len(raw) // 2] ^= 0xFF                          # one flipped bit in the tensor's bytes
        corrupt.write_bytes(bytes(raw))
        with pytest.raises(CheckpointError, match="corrupt.pt.*CRC"):
            tapegrad.load(corrupt)
    foreign = tmp_path / "foreign.npz"
    np.savez(foreign, a=np.ones(2))
    with pytest.raises(CheckpointError, match="foreign.npz.*neither a __tapegrad__"):
        tapegrad.load(foreign)
    text = tmp_path / "text.pt"
    text.write_text("hello")
    with pytest.raises(CheckpointError, match="text.pt.*not a checkpoint"):
        tapegrad.load(text)
    empty = tmp_path / "empty.pt"
    empty.write_bytes(b"")
    with pytest.raises(CheckpointError, match="empty.pt"):
        tapegrad.load(empty)


def test_npz_pickles_are_never_loaded(tmp_path):
    import pickle

    class Evil:
        def __reduce__(self):
            return (os.system, ("echo pwned > " + str(tmp_path / "pwned"),))

    path = tmp_path / "evil.pt"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("__tapegrad__.npy", pickle.dumps(Evil()))
    with pytest.raises(CheckpointError):
        tapegrad.load(path)
    assert not (tmp_path / "pwned").exists()


# --- saving as torch saves: atomically, modes, symlinks, leftovers ------------------------------------
def test_atomic_write_keeps_old_file_on_failure(tmp_path):
    path = tmp_path / "ckpt.pt"
    tapegrad.save({"v": tapegrad.ones(1)}, path)
    before = path.read_bytes()
    with pytest.raises(Exception, match="lambda"):
        tapegrad.save({"v": tapegrad.zeros(1), "bad": lambda: 0}, path)      # not picklable
    with pytest.raises(TypeError, match="cannot be saved"):
        save_npz({"v": tapegrad.zeros(1), "bad": object()}, path)
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["ckpt.pt"]     # no temporary file left behind


def test_a_new_file_follows_the_umask_and_an_existing_one_keeps_its_mode(tmp_path):
    old = os.umask(0o022)
    try:
        tapegrad.save([1], tmp_path / "a.pt")
        assert stat.S_IMODE(os.stat(tmp_path / "a.pt").st_mode) == 0o644
        os.umask(0o077)
        tapegrad.save([1], tmp_path / "b.pt")
        assert stat.S_IMODE(os.stat(tmp_path / "b.pt").st_mode) == 0o600
        os.chmod(tmp_path / "a.pt", 0o640)
        tapegrad.save([2], tmp_path / "a.pt")
        assert stat.S_IMODE(os.stat(tmp_path / "a.pt").st_mode) == 0o640 and tapegrad.load(tmp_path / "a.pt") == [2]
    finally:
        os.umask(old)


def test_saving_to_a_symlink_writes_through_to_its_target(tmp_path):
    (tmp_path / "runs").mkdir()
    target = tmp_path / "runs" / "epoch3.pt"
    tapegrad.save({"epoch": 2}, target)
    link = tmp_path / "latest.pt"
    link.symlink_to(os.path.join("runs", "epoch3.pt"))
    tapegrad.save({"epoch": 3}, link)
    assert link.is_symlink() and tapegrad.load(target) == {"epoch": 3} and tapegrad.load(link) == {"epoch": 3}
    assert sorted(p.name for p in (tmp_path / "runs").iterdir()) == ["epoch3.pt"]


@pytest.mark.skipif(os.name != "posix", reason="a killed process is recognised by its pid on POSIX")
def test_temp_files_of_a_killed_save_are_removed_by_the_next_save(tmp_path):
    path = tmp_path / "ckpt.pt"
    src = os.path.join(os.path.dirname(__file__), "..", "src")
    script = ("import os, tapegrad.serialization as s\n"
              f"s._write({str(path)!r}, lambda fh: (fh.write(b'x' * 100000), os.kill(os.getpid(), 9)))\n")
    for _ in range(3):       # each killed save removes the one killed before it
        proc = subprocess.run([sys.executable, "-c", script], env={**os.environ, "PYTHONPATH": src})
        assert proc.returncode == -9
        left = [p.name for p in tmp_path.iterdir()]
        assert len(left) == 1 and left[0].startswith(".ckpt.pt.tapegrad-tmp-"), left
    old_style = tmp_path / ".tmp-ckpt.pt-abcd1234"          # left by tapegrad's earlier writer
    old_style.write_bytes(b"x")
    os.utime(old_style, (time.time() - 7200, time.time() - 7200))
    live = tmp_path / f".ckpt.pt.tapegrad-tmp-{socket.gethostname()}-{os.getpid()}-00000000"
    live.write_bytes(b"x")       # a save in progress in a live process (this one) is left alone
    other = tmp_path / ".other.pt.tapegrad-tmp-x-1-00000000"
    other.write_bytes(b"x")      # another target's temp file is not ours to judge
    tapegrad.save({"ok": 1}, path)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["ckpt.pt", live.name, other.name])
    assert tapegrad.load(path) == {"ok": 1}


def test_bool_and_numpy_bool_values_save():
    for save in (tapegrad.save, save_npz):
        buf = io.BytesIO()
        save({"a": True, "b": np.bool_(False), "c": [np.bool_(True)]}, buf)
        buf.seek(0)
        loaded = tapegrad.load(buf, weights_only=save is save_npz)
        assert loaded == {"a": True, "b": False, "c": [True]}
