"""Checkpoints: open format (npz), atomic writes, exact round trips, clear errors, never unpickled."""

import io
import os
import zipfile
from collections import OrderedDict

import numpy as np
import pytest

import tapegrad
from tapegrad.serialization import CheckpointError


def test_round_trip_is_exact(tmp_path):
    obj = {
        "w": tapegrad.randn(3, 4),
        "d": tapegrad.tensor([1.5, -2.0], dtype=tapegrad.float64),
        "h": tapegrad.tensor([1.0, 2.0], dtype=tapegrad.float16),
        "i": tapegrad.arange(5, dtype=tapegrad.int32),
        "b": tapegrad.tensor([True, False]),
        "scalar": tapegrad.tensor(3.25),
        "empty": tapegrad.zeros(0, 3),
        "nested": OrderedDict(a=[1, 2.5, "x", None, True], t=(tapegrad.ones(2), float("inf"))),
        "step": 10,
        "lr": 0.1,
        "arr": np.arange(3, dtype=np.uint8),
    }
    path = tmp_path / "ckpt.pt"
    tapegrad.save(obj, path)
    back = tapegrad.load(path)
    for k in ("w", "d", "h", "i", "b", "scalar", "empty"):
        assert back[k].dtype is obj[k].dtype and back[k].shape == obj[k].shape
        assert back[k].numpy().tobytes() == obj[k].numpy().tobytes()
    assert isinstance(back["nested"], OrderedDict) and back["nested"]["a"] == [1, 2.5, "x", None, True]
    assert isinstance(back["nested"]["t"], tuple) and back["nested"]["t"][1] == float("inf")
    assert back["step"] == 10 and back["lr"] == 0.1 and back["arr"].dtype == np.uint8


def test_readable_without_tapegrad(tmp_path):
    path = tmp_path / "c.npz"
    tapegrad.save({"w": tapegrad.ones(2, 2)}, path)
    with np.load(path, allow_pickle=False) as z:
        assert z["0"].tolist() == [[1.0, 1.0], [1.0, 1.0]]
        assert b"tapegrad-checkpoint" in z["__tapegrad__"].tobytes()


def test_requires_grad_is_kept_and_file_objects_work():
    buf = io.BytesIO()
    tapegrad.save([tapegrad.ones(2, requires_grad=True)], buf)
    buf.seek(0)
    (t,) = tapegrad.load(buf)
    assert t.requires_grad and t.is_leaf


def test_atomic_write_keeps_old_file_on_failure(tmp_path):
    path = tmp_path / "ckpt.pt"
    tapegrad.save({"v": tapegrad.ones(1)}, path)
    before = path.read_bytes()
    with pytest.raises(TypeError, match="cannot be saved"):
        tapegrad.save({"v": tapegrad.zeros(1), "bad": object()}, path)
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["ckpt.pt"]     # no temporary file left behind


def test_truncated_corrupted_and_foreign_files_name_the_file(tmp_path):
    path = tmp_path / "ckpt.pt"
    tapegrad.save({"w": tapegrad.randn(50, 50)}, path)
    data = path.read_bytes()
    trunc = tmp_path / "trunc.pt"
    trunc.write_bytes(data[: len(data) // 2])
    with pytest.raises(CheckpointError, match="trunc.pt"):
        tapegrad.load(trunc)
    corrupt = tmp_path / "corrupt.pt"
    raw = bytearray(data)
    i = raw.index(b"tapegrad-checkpoint")
    raw[i:i + 8] = b"xxxxxxxx"
    corrupt.write_bytes(bytes(raw))
    with pytest.raises(CheckpointError, match="corrupt.pt"):
        tapegrad.load(corrupt)
    foreign = tmp_path / "foreign.npz"
    np.savez(foreign, a=np.ones(2))
    with pytest.raises(CheckpointError, match="foreign.npz.*no __tapegrad__"):
        tapegrad.load(foreign)
    text = tmp_path / "text.pt"
    text.write_text("hello")
    with pytest.raises(CheckpointError, match="text.pt"):
        tapegrad.load(text)


def test_pickles_are_never_loaded(tmp_path):
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


def test_unsupported_objects_are_refused_clearly():
    with pytest.raises(TypeError, match="save a model's state_dict"):
        tapegrad.save(object(), io.BytesIO())
