"""The int-list arguments of pooling and convolution (``kernel_size``, ``stride``, ``padding``, ``dilation``,
``output_size``) parsed as torch parses them: a 0-d integer tensor counts as an int (a TextCNN's
``F.max_pool1d(x, lengths.max())``), as do its elements in a list; a float, a bool or a float tensor is torch's
TypeError, in its words for the pooling ops."""

import numpy as np
import pytest

import tapegrad

CALLS = {
    "max_pool1d": lambda F, m, k: F.max_pool1d(m.tensor(np.arange(36.0).reshape(2, 3, 6)), k),
    "avg_pool1d": lambda F, m, k: F.avg_pool1d(m.tensor(np.arange(36.0).reshape(2, 3, 6)), k),
    "max_pool2d": lambda F, m, k: F.max_pool2d(m.tensor(np.arange(72.0).reshape(1, 2, 6, 6)), k),
    "avg_pool2d stride": lambda F, m, k: F.avg_pool2d(m.tensor(np.arange(72.0).reshape(1, 2, 6, 6)), 2, stride=k),
    "max_pool1d padding": lambda F, m, k: F.max_pool1d(m.tensor(np.arange(36.0).reshape(2, 3, 6)), 3, 3,
                                                        padding=k),
    "adaptive_max_pool1d": lambda F, m, k: F.adaptive_max_pool1d(m.tensor(np.arange(36.0).reshape(2, 3, 6)), k),
    "adaptive_avg_pool1d": lambda F, m, k: F.adaptive_avg_pool1d(m.tensor(np.arange(36.0).reshape(2, 3, 6)), k),
    "conv1d stride": lambda F, m, k: F.conv1d(m.tensor(np.arange(36.0).reshape(2, 3, 6)),
                                              m.tensor(np.ones((4, 3, 2))), stride=k),
}


def _run(lib, name, make_k):
    try:
        out = CALLS[name](lib.nn.functional, lib, make_k(lib))
        return "ok", out.detach().numpy()
    except TypeError as e:
        return "TypeError", str(e)


@pytest.mark.parametrize("name", list(CALLS))
@pytest.mark.parametrize("arg", ["0-d int tensor", "list of 0-d tensors", "1-d int tensor", "int"])
def test_integer_forms_are_taken(torch, name, arg):
    value = 1 if "padding" in name else 3
    make = {"0-d int tensor": lambda m: m.tensor(value), "list of 0-d tensors": lambda m: [m.tensor(value)],
            "1-d int tensor": lambda m: m.tensor([value]), "int": lambda m: value}[arg]
    if "adaptive" in name and arg in ("list of 0-d tensors", "1-d int tensor"):
        pytest.skip("torch's adaptive 1-d pools take only an int or a 0-d tensor there")
    (ts, tv), (gs, gv) = _run(torch, name, make), _run(tapegrad, name, make)
    assert ts == gs == "ok"
    np.testing.assert_allclose(gv, tv, rtol=1e-15, atol=0)


@pytest.mark.parametrize("name", [n for n in CALLS if not n.startswith("conv")])
@pytest.mark.parametrize("arg", ["float", "bool", "0-d float tensor", "list with a float"])
def test_non_integers_raise_torchs_type_error(torch, name, arg):
    make = {"float": lambda m: 3.0, "bool": lambda m: True, "0-d float tensor": lambda m: m.tensor(3.0),
            "list with a float": lambda m: [3.0]}[arg]
    (ts, tmsg), (gs, gmsg) = _run(torch, name, make), _run(tapegrad, name, make)
    assert ts == gs == "TypeError"
    if "stride" in name:     # (given by keyword: torch names no position, and words an optional list its own way)
        assert gmsg.startswith(f"{name.split()[0]}(): argument 'stride'") and "must be tuple of ints" in gmsg
    else:
        assert gmsg == tmsg


def test_conv_refuses_a_float_stride(torch):
    with pytest.raises(TypeError):
        torch.nn.functional.conv1d(torch.ones(1, 1, 4), torch.ones(1, 1, 2), stride=2.0)
    with pytest.raises(TypeError, match="conv1d\\(\\): argument 'stride' .*must be tuple of ints, not float"):
        tapegrad.nn.functional.conv1d(tapegrad.ones(1, 1, 4), tapegrad.ones(1, 1, 2), stride=2.0)


@pytest.mark.parametrize("size", ["0-d tensor", "float"])
def test_adaptive_2d_takes_a_python_int_only_as_torch(torch, size):
    """F.adaptive_avg_pool2d/adaptive_max_pool2d take ``len()`` of anything but a Python int (torch's
    Python-level wrapper), so a 0-d tensor or a float fails there with Python's TypeError."""
    msgs = []
    for m in (torch, tapegrad):
        k = m.tensor(3) if size == "0-d tensor" else 3.0
        for fn in (m.nn.functional.adaptive_avg_pool2d, m.nn.functional.adaptive_max_pool2d):
            with pytest.raises(TypeError) as e:
                fn(m.ones(1, 2, 6, 6), k)
            msgs.append(str(e.value))
    assert msgs[:2] == msgs[2:]


INTERP = [("nearest", 3, 3.0), ("nearest", 3, "0-d float"), ("nearest", 4, 2.0), ("trilinear", 5, 2.0),
          ("nearest-exact", 4, 3.0), ("bilinear", 4, 3.0), ("linear", 3, True), ("nearest", 4, [3.0, 2]),
          ("area", 3, 3.0), ("area", 4, 3.0), ("bicubic", 4, "0-d int"), ("nearest", 3, "1-d int"),
          ("nearest", 4, (3, True)), ("nearest", 3, "[0-d int]")]


@pytest.mark.parametrize("mode,nd,size", INTERP, ids=[f"{m}-{n}d-{s}" for m, n, s in INTERP])
def test_interpolate_size_types_as_torch(torch, mode, nd, size):
    """F.interpolate's ``size``: ints (a bool, a one-element integer tensor) are taken; a float, or a float
    tensor, reaches the upsampling kernel's parser and fails there with torch's message; a sequence with a
    float element fails in F.interpolate's own check."""
    got = []
    for m in (torch, tapegrad):
        s = {"0-d float": m.tensor(3.0), "0-d int": m.tensor(3), "1-d int": m.tensor([3]),
             "[0-d int]": [m.tensor(3)]}.get(size, size) if isinstance(size, str) else size
        try:
            got.append(tuple(m.nn.functional.interpolate(m.ones((1, 1) + (4,) * (nd - 2)), size=s,
                                                         mode=mode).shape))
        except TypeError as e:
            got.append(str(e).replace("torch.", "tapegrad."))
    assert got[1] == got[0]
