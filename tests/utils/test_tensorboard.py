"""utils.tensorboard.SummaryWriter: the event files read back by TensorBoard's own reader, compared with what
torch's SummaryWriter writes for the same calls; the framing's CRC; the writer needs no TensorBoard package."""

import os
import subprocess
import sys

import numpy as np
import pytest

import tapegrad
from tapegrad.utils.tensorboard import SummaryWriter
from tapegrad.utils.tensorboard import _events


def test_crc32c_known_value():
    assert _events.crc32c(b"123456789") == 0xE3069283
    assert _events.crc32c(b"") == 0


def _write(T, writer_cls, d):
    w = writer_cls(str(d))
    for i in range(4):
        w.add_scalar("loss/train", 1.0 / (i + 1), i)
        w.add_scalars("acc", {"train": 0.5 + i * 0.1, "val": 0.4 + i * 0.1}, i)
    w.add_scalar("tensor_value", T.tensor(2.5), 9)
    w.add_histogram("weights", T.from_numpy(np.random.default_rng(0).standard_normal(1000)), 3)
    w.add_histogram("few", np.array([1.0, 2.0, 2.0, 3.0]), 1)
    w.add_image("img", T.from_numpy(np.random.default_rng(1).random((3, 8, 10)).astype(np.float32)), 0)
    w.add_image("gray_hw", T.from_numpy(np.random.default_rng(3).random((5, 6)).astype(np.float32)), 0,
                dataformats="HW")
    w.add_images("imgs", T.from_numpy(np.random.default_rng(2).random((5, 1, 4, 4)).astype(np.float32)), 0)
    w.add_text("note", "hello **world**", 1)
    w.close()


def _read(d):
    ea_mod = pytest.importorskip("tensorboard.backend.event_processing.event_accumulator")
    ea = ea_mod.EventAccumulator(str(d), size_guidance={"histograms": 0, "images": 0, "tensors": 0})
    ea.Reload()
    out = {"scalars": {t: [(e.step, e.value) for e in ea.Scalars(t)] for t in ea.Tags()["scalars"]}}
    out["hist"] = {t: [(h.step, h.histogram_value.min, h.histogram_value.max, h.histogram_value.num,
                        h.histogram_value.sum, h.histogram_value.sum_squares, list(h.histogram_value.bucket_limit),
                        list(h.histogram_value.bucket)) for h in ea.Histograms(t)] for t in ea.Tags()["histograms"]}
    out["images"] = {t: [(i.step, i.width, i.height) for i in ea.Images(t)] for t in ea.Tags()["images"]}
    out["text"] = {t: [list(x.tensor_proto.string_val) for x in ea.Tensors(t)] for t in ea.Tags()["tensors"]}
    for sub in ("acc_train", "acc_val"):
        if not os.path.isdir(os.path.join(str(d), sub)):
            continue
        e2 = ea_mod.EventAccumulator(os.path.join(str(d), sub))
        e2.Reload()
        out[sub] = [(e.step, e.value) for e in e2.Scalars("acc")]
    return out, ea


def test_written_events_read_back_as_torchs(torch, tmp_path):
    pytest.importorskip("tensorboard")
    from torch.utils.tensorboard import SummaryWriter as TorchWriter
    _write(torch, TorchWriter, tmp_path / "torch")
    _write(tapegrad, SummaryWriter, tmp_path / "tapegrad")
    theirs, _ = _read(tmp_path / "torch")
    ours, _ = _read(tmp_path / "tapegrad")
    assert ours == theirs


def test_first_event_is_torchs(torch, tmp_path):
    loader = pytest.importorskip("tensorboard.backend.event_processing.event_file_loader")
    from torch.utils.tensorboard import SummaryWriter as TorchWriter
    firsts = []
    for name, cls in (("torch", TorchWriter), ("tapegrad", SummaryWriter)):
        w = cls(str(tmp_path / name))
        w.close()
        (path,) = (tmp_path / name).iterdir()
        first = next(iter(loader.EventFileLoader(str(path)).Load()))
        first.wall_time = 0
        firsts.append(first)
    assert firsts[0] == firsts[1] and firsts[1].source_metadata.writer


def test_images_decode_to_the_pixels(tmp_path):
    pytest.importorskip("tensorboard")
    import zlib
    img = (np.arange(2 * 3 * 3).reshape(3, 2, 3) * 10).astype(np.uint8)        # CHW, uint8 kept as is
    with SummaryWriter(str(tmp_path)) as w:
        w.add_image("x", img, 0)
    _, ea = _read(tmp_path)
    png = ea.Images("x")[0].encoded_image_string
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    idat = png[png.index(b"IDAT") + 4:png.index(b"IEND") - 8]
    raw = zlib.decompress(idat)
    rows = np.frombuffer(raw, np.uint8).reshape(2, 1 + 3 * 3)
    assert (rows[:, 0] == 0).all()
    assert np.array_equal(rows[:, 1:].reshape(2, 3, 3), img.transpose(1, 2, 0))


def test_graph_of_a_model(tmp_path):
    pytest.importorskip("tensorboard")
    m = tapegrad.nn.Sequential(tapegrad.nn.Linear(3, 4), tapegrad.nn.ReLU(), tapegrad.nn.Linear(4, 1))
    with SummaryWriter(str(tmp_path)) as w:
        w.add_graph(m, tapegrad.ones(2, 3))
    _, ea = _read(tmp_path)
    g = ea.Graph()
    names = {n.name: (n.op, list(n.input)) for n in g.node}
    assert {"0/weight", "0/bias", "2/weight", "2/bias"} <= set(names)
    assert names["0/weight"][0] == "Parameter"
    addmm = [k for k, (op, _) in names.items() if op == "AddmmBackward0"]
    assert len(addmm) == 2 and any("2/weight" in str(names[k][1]) or "2/weight" in names[k][1] for k in names)


def test_purge_step_and_unsupported(tmp_path):
    with SummaryWriter(str(tmp_path), purge_step=5) as w:
        w.add_scalar("a", 1.0, 6)
        with pytest.raises(NotImplementedError, match="add_hparams"):
            w.add_hparams({"lr": 0.1}, {"loss": 1.0})
    assert w.get_logdir() == str(tmp_path)


def test_writer_needs_no_tensorboard_package(tmp_path):
    code = ("import sys; sys.modules['tensorboard'] = None; sys.modules['google.protobuf'] = None\n"
            "from tapegrad.utils.tensorboard import SummaryWriter\n"
            f"w = SummaryWriter({str(tmp_path)!r}); w.add_scalar('x', 1.0, 0); w.close()\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    subprocess.run([sys.executable, "-c", code], check=True, env=env)
    files = [f for f in os.listdir(tmp_path) if f.startswith("events.out.tfevents.")]
    assert len(files) == 1 and os.path.getsize(tmp_path / files[0]) > 0


def test_default_log_dir_is_runs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    w = SummaryWriter(comment="_exp")
    w.close()
    assert w.get_logdir().startswith("runs" + os.sep) and w.get_logdir().endswith("_exp")


def _embedding_files(mod, cls, root, capsys):
    """Every file add_embedding writes (sprites decoded to pixels), and what it printed."""
    from PIL import Image
    w = cls(str(root))
    g = np.random.default_rng(0)
    mat = g.standard_normal((10, 3)).astype(np.float32)
    imgs = g.random((10, 1, 4, 5)).astype(np.float32)
    w.add_embedding(mod.from_numpy(mat), metadata=list("abcdefghij"), label_img=mod.from_numpy(imgs))
    w.add_embedding(mod.arange(12).view(4, 3), metadata=[[1, "x"], [2, "y"], [3, "z"], [4, "w"]],
                    metadata_header=["n", "s"], tag="a/b%c", global_step=3)
    w.add_embedding(mod.from_numpy(mat[:5].astype(np.float64)),
                    label_img=mod.from_numpy((imgs[:5] * 255).astype(np.uint8).repeat(3, 1)))
    with pytest.raises(AssertionError, match="#labels should equal with #data points"):
        w.add_embedding(mod.from_numpy(mat), metadata=["a"], global_step=9)
    w.close()
    out = {}
    for dirpath, _, files in os.walk(root):
        for f in files:
            p = os.path.join(dirpath, f)
            if f.startswith("events"):
                continue
            key = os.path.relpath(p, root)
            out[key] = np.asarray(Image.open(p)).tobytes() if f.endswith(".png") else open(p).read()
    return out, capsys.readouterr().out


def test_add_embedding_writes_torchs_files(torch, tmp_path, capsys):
    pytest.importorskip("tensorboard")
    pytest.importorskip("PIL")
    from torch.utils.tensorboard import SummaryWriter as TorchWriter
    theirs = _embedding_files(torch, TorchWriter, tmp_path / "torch", capsys)
    ours = _embedding_files(tapegrad, SummaryWriter, tmp_path / "tapegrad", capsys)
    assert sorted(ours[0]) == sorted(theirs[0])
    assert ours == theirs
    assert "warning: Embedding dir exists" in ours[1]        # the third call reused step 0's folder
