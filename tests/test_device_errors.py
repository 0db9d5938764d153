"""A tensor or module put on an accelerator raises what a CPU-only torch build raises there (scripts written for a
GPU meet it on a machine without one: ``model.cuda()``, ``x.to("cuda")``, ``torch.zeros(2, device="cuda")``)."""

import pytest

import tapegrad


def _cases(lib):
    x, m = lib.zeros(2), lib.nn.Linear(2, 2)
    return {
        "tensor.cuda": lambda: x.cuda(), "tensor.cuda(dev)": lambda: x.cuda("cuda:0"),
        "to cuda": lambda: x.to("cuda"), "to cuda:1": lambda: x.to("cuda:1"),
        "to device dtype": lambda: x.to(lib.device("cuda"), lib.float64),
        "zeros": lambda: lib.zeros(2, device="cuda"), "tensor": lambda: lib.tensor([1.0], device="cuda"),
        "randn": lambda: lib.randn(2, device="cuda"), "zeros_like": lambda: lib.zeros_like(x, device="cuda"),
        "new_zeros": lambda: x.new_zeros(2, device="cuda"),
        "module.cuda": lambda: m.cuda(), "module.to": lambda: m.to("cuda"),
        "xpu": lambda: x.xpu(), "to xpu": lambda: x.to("xpu"), "module.xpu": lambda: m.xpu(),
        "mtia": lambda: x.mtia(), "module.mtia": lambda: m.mtia(),
        "to mps": lambda: x.to("mps"), "module to mps": lambda: m.to("mps"),
        "ipu": lambda: x.ipu(), "module.ipu": lambda: m.ipu(),
        # a device index goes through the accelerator API first; another device type is refused
        "tensor.cuda(0)": lambda: x.cuda(0), "tensor.cuda(device=1)": lambda: x.cuda(device=1),
        "tensor.cuda(0, True)": lambda: x.cuda(0, True), "tensor.cuda(-1)": lambda: x.cuda(-1),
        "tensor.cuda('cpu')": lambda: x.cuda("cpu"), "tensor.xpu(0)": lambda: x.xpu(0),
        "module.cuda(0)": lambda: m.cuda(0), "module.cuda('cpu')": lambda: m.cuda("cpu"),
        "module.cuda(-1)": lambda: m.cuda(-1), "module.cuda(device=0)": lambda: m.cuda(device=0),
        # nothing to move: no error
        "empty module.cuda": lambda: lib.nn.ReLU().cuda(), "empty module.cuda(0)": lambda: lib.nn.Sequential().cuda(0),
    }


def _raised(f):
    try:
        f()
    except Exception as e:          # noqa: BLE001 - the exception is what is compared
        return type(e).__name__, str(e)
    return None


def test_accelerator_placement_raises_torchs_cpu_build_error(torch):
    ours, theirs = _cases(tapegrad), _cases(torch)
    for name in ours:
        assert _raised(ours[name]) == _raised(theirs[name]), name


def test_other_devices_still_say_cpu_only():
    with pytest.raises(RuntimeError, match="CPU only"):
        tapegrad.Generator(device="cuda")
    with pytest.raises(RuntimeError, match="CPU only"):
        tapegrad.zeros(2).to("hpu")
    assert tapegrad.zeros(2).to("cpu").device.type == "cpu"
