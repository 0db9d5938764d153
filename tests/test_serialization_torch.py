"""PyTorch's own checkpoint files, both ways: tapegrad.save writes what torch.load(weights_only=True) reads,
tapegrad.load reads torch.save's zip and legacy formats with torch 2.6+'s weights_only semantics (checked
against the installed torch), and a malicious pickle never runs."""

import io
import os
import pickle
import re
import struct
import sys
import zipfile
from collections import OrderedDict

import numpy as np
import pytest

import tapegrad
from tapegrad.serialization import CheckpointError, WeightsOnlyError

DTYPES = ["float32", "float64", "float16", "int8", "uint8", "int16", "int32", "int64", "bool", "complex64",
          "complex128"]


def _sample(m, dtype):
    base = m.arange(-3, 9).reshape(3, 4)
    return base.to(getattr(m, dtype)) if dtype != "bool" else base > 2


def _same(ours, theirs):
    got = ours.detach().numpy()
    want = theirs.detach().numpy()
    assert got.dtype == want.dtype and got.shape == want.shape and np.array_equal(got, want, equal_nan=True)
    assert ours.stride() == theirs.stride() or got.size == 0     # (NumPy gives empty arrays zero strides)


# --- tapegrad.save -> torch.load --------------------------------------------------------------------------
def test_torch_reads_every_dtype_view_and_container_tapegrad_saves(torch, tmp_path):
    x = tapegrad.arange(12.0).reshape(3, 4)
    obj = {f"t_{d}": _sample(tapegrad, d) for d in DTYPES}
    obj.update(view=x[1:, 2:], transposed=x.t(), base=x, scalar=tapegrad.tensor(2.5), empty=tapegrad.zeros(0, 3),
               expanded=tapegrad.ones(3).expand(2, 3), grad=tapegrad.ones(2, requires_grad=True),
               param=tapegrad.nn.Parameter(tapegrad.randn(2, 2)), bf16=tapegrad.ones(2, dtype=tapegrad.bfloat16),
               nested=OrderedDict(a=[1, 2.5, "x", None, True, b"raw"], t=(tapegrad.ones(2), {3, 4}),
                                  z=complex(1, 2)),
               size=tapegrad.Size([2, 3]), dtype=tapegrad.float16, device=tapegrad.device("cpu"), ints={1: "one"})
    path = tmp_path / "ours.pt"
    tapegrad.save(obj, path)
    theirs = torch.load(path, weights_only=True)
    for k in [f"t_{d}" for d in DTYPES] + ["view", "transposed", "scalar", "empty", "expanded", "grad"]:
        _same(obj[k], theirs[k])
    assert theirs["view"].storage_offset() == 6 and theirs["transposed"].stride() == (1, 4)
    assert theirs["base"].untyped_storage().data_ptr() == theirs["view"].untyped_storage().data_ptr()
    assert theirs["grad"].requires_grad and type(theirs["param"]) is torch.nn.Parameter
    assert theirs["param"].requires_grad and np.array_equal(theirs["param"].detach().numpy(), obj["param"].detach().numpy())
    assert theirs["bf16"].dtype == torch.float32           # bfloat16 is stored as float32 in tapegrad
    assert theirs["nested"] == OrderedDict(a=[1, 2.5, "x", None, True, b"raw"], t=theirs["nested"]["t"],
                                           z=complex(1, 2))
    assert theirs["nested"]["t"][1] == {3, 4} and isinstance(theirs["nested"], OrderedDict)
    assert theirs["size"] == torch.Size([2, 3]) and theirs["dtype"] is torch.float16
    assert theirs["device"] == torch.device("cpu") and theirs["ints"] == {1: "one"}


def test_torch_loads_a_tapegrad_state_dict_and_optimizer_state(torch, tmp_path):
    tapegrad.manual_seed(0)
    ours = tapegrad.nn.Sequential(tapegrad.nn.Linear(4, 5), tapegrad.nn.BatchNorm1d(5), tapegrad.nn.Linear(5, 2))
    opt = tapegrad.optim.Adam(ours.parameters(), lr=0.01)
    ours(tapegrad.randn(8, 4)).sum().backward()
    opt.step()
    ours.eval()
    tapegrad.save({"model": ours.state_dict(), "optimizer": opt.state_dict()}, tmp_path / "ckpt.pt")
    ckpt = torch.load(tmp_path / "ckpt.pt", weights_only=True)
    theirs = torch.nn.Sequential(torch.nn.Linear(4, 5), torch.nn.BatchNorm1d(5), torch.nn.Linear(5, 2)).eval()
    theirs.load_state_dict(ckpt["model"])
    assert ckpt["model"]._metadata == ours.state_dict()._metadata
    topt = torch.optim.Adam(theirs.parameters(), lr=0.01)
    topt.load_state_dict(ckpt["optimizer"])
    assert float(topt.state_dict()["state"][0]["step"]) == 1.0
    x = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    np.testing.assert_allclose(theirs(torch.tensor(x)).detach().numpy(), ours(tapegrad.tensor(x)).detach().numpy(),
                               rtol=1e-6, atol=1e-6)


def test_shared_storage_is_kept_shared_both_ways(torch, tmp_path):
    x = tapegrad.arange(6.0)
    tapegrad.save({"a": x, "b": x, "v": x[2:]}, tmp_path / "ours.pt")
    theirs = torch.load(tmp_path / "ours.pt", weights_only=True)
    assert theirs["a"] is theirs["b"]
    theirs["a"][3] = 100
    assert theirs["v"][1] == 100                               # one storage, as torch.save would write it
    back = tapegrad.load(tmp_path / "ours.pt")
    assert back["a"] is back["b"] and np.shares_memory(back["a"].numpy(), back["v"].numpy())
    y = torch.arange(6.0)
    torch.save({"a": y, "b": y, "v": y[2:], "t": y.view(2, 3).t()}, tmp_path / "theirs.pt")
    back = tapegrad.load(tmp_path / "theirs.pt")
    assert back["a"] is back["b"] and back["t"].stride() == (1, 3)
    back["a"][3] = 100.0
    assert back["v"].tolist() == [2, 100, 4, 5] and back["t"].tolist()[0] == [0, 100]


def test_tapegrad_legacy_format_is_read_by_torch_and_back(torch, tmp_path):
    obj = {"w": tapegrad.randn(3, 2), "v": tapegrad.arange(4), "step": 7}
    tapegrad.save(obj, tmp_path / "legacy.pt", _use_new_zipfile_serialization=False)
    theirs = torch.load(tmp_path / "legacy.pt", weights_only=True)
    _same(obj["w"], theirs["w"])
    _same(obj["v"], theirs["v"])
    back = tapegrad.load(tmp_path / "legacy.pt")
    assert back["step"] == 7 and back["w"].tolist() == obj["w"].tolist()


# --- torch.save -> tapegrad.load ---------------------------------------------------------------------------
@pytest.mark.parametrize("legacy", [False, True], ids=["zip", "legacy"])
def test_tapegrad_reads_every_dtype_torch_saves(torch, tmp_path, legacy):
    x = torch.arange(12.0).reshape(3, 4)
    obj = {f"t_{d}": _sample(torch, d) for d in DTYPES}
    obj.update(view=x[1:, 2:], transposed=x.t(), base=x, scalar=torch.tensor(2.5), empty=torch.zeros(0, 3),
               expanded=torch.ones(3).expand(2, 3), grad=torch.ones(2, requires_grad=True),
               param=torch.nn.Parameter(torch.randn(2, 2)), nested=[(1, "a"), {"k": None}, {5, 6}, b"xy"],
               size=torch.Size([4]), dtype=torch.int16, device=torch.device("cpu"))
    path = tmp_path / "theirs.pt"
    torch.save(obj, path, _use_new_zipfile_serialization=not legacy)
    ours = tapegrad.load(path)
    for k in [f"t_{d}" for d in DTYPES] + ["view", "transposed", "scalar", "empty", "expanded", "grad"]:
        _same(ours[k], obj[k])
        assert ours[k].requires_grad == obj[k].requires_grad
    assert np.shares_memory(ours["base"].numpy(), ours["view"].numpy())
    assert type(ours["param"]) is tapegrad.nn.Parameter and ours["param"].requires_grad
    assert ours["nested"] == [(1, "a"), {"k": None}, {5, 6}, b"xy"]
    assert ours["size"] == tapegrad.Size([4]) and ours["dtype"] is tapegrad.int16
    assert ours["device"] == tapegrad.device("cpu")


def test_pretrained_torch_weights_load_into_a_tapegrad_model(torch, tmp_path):
    torch.manual_seed(0)
    theirs = torch.nn.Sequential(torch.nn.Conv2d(1, 4, 3), torch.nn.BatchNorm2d(4), torch.nn.ReLU(),
                                 torch.nn.Flatten(), torch.nn.Linear(4 * 6 * 6, 3))
    theirs(torch.randn(5, 1, 8, 8))              # running statistics that differ from the defaults
    theirs.eval()
    torch.save(theirs.state_dict(), tmp_path / "pretrained.pth")
    ours = tapegrad.nn.Sequential(tapegrad.nn.Conv2d(1, 4, 3), tapegrad.nn.BatchNorm2d(4), tapegrad.nn.ReLU(),
                                  tapegrad.nn.Flatten(), tapegrad.nn.Linear(4 * 6 * 6, 3)).eval()
    state = tapegrad.load(tmp_path / "pretrained.pth", map_location=torch.device("cpu"))
    assert isinstance(state, OrderedDict) and state._metadata == theirs.state_dict()._metadata
    ours.load_state_dict(state)
    x = np.random.default_rng(2).standard_normal((2, 1, 8, 8)).astype(np.float32)
    np.testing.assert_allclose(ours(tapegrad.tensor(x)).detach().numpy(), theirs(torch.tensor(x)).detach().numpy(),
                               rtol=1e-5, atol=1e-6)


def test_bfloat16_is_converted_as_tapegrad_stores_it_and_unsigned_types_load_as_theirs(torch, tmp_path):
    bf = torch.tensor([1.0, -2.5, 3.140625, float("inf")], dtype=torch.bfloat16)
    obj = {"bf": bf, "bf_view": bf[1:], "u16": torch.tensor([0, 65535], dtype=torch.uint16),
           "u32": torch.tensor([2 ** 32 - 1], dtype=torch.uint32)}
    torch.save(obj, tmp_path / "t.pt")
    ours = tapegrad.load(tmp_path / "t.pt")
    assert ours["bf"].dtype is tapegrad.float32 and ours["bf"].tolist() == bf.float().tolist()
    assert np.shares_memory(ours["bf"].numpy(), ours["bf_view"].numpy())     # one conversion per storage
    assert ours["u16"].dtype is tapegrad.uint16 and ours["u16"].tolist() == [0, 65535]
    assert ours["u32"].dtype is tapegrad.uint32 and ours["u32"].tolist() == [2 ** 32 - 1]
    torch.save({"f8": torch.zeros(2, dtype=torch.float8_e4m3fn)}, tmp_path / "f8.pt")
    with pytest.raises(CheckpointError, match=r"f8.pt.*torch.float8_e4m3fn, which tapegrad cannot hold"):
        tapegrad.load(tmp_path / "f8.pt")


def test_a_big_endian_file_is_byteswapped(torch, tmp_path):
    torch.save(torch.tensor([1.5, -2.0, 3.25]), tmp_path / "le.pt")
    with zipfile.ZipFile(tmp_path / "le.pt") as src, zipfile.ZipFile(tmp_path / "be.pt", "w") as dst:
        for name in src.namelist():
            data = src.read(name)
            if name.endswith("byteorder"):
                data = b"big"
            elif "/data/" in name:
                data = np.frombuffer(data, "<f4").astype(">f4").tobytes()
            dst.writestr(name, data)
    assert tapegrad.load(tmp_path / "be.pt").tolist() == [1.5, -2.0, 3.25]


def test_a_torch_module_saved_whole_loads_as_tapegrad_modules(torch, tmp_path):
    torch.manual_seed(0)
    theirs = torch.nn.Sequential(torch.nn.Linear(4, 5), torch.nn.ReLU(), torch.nn.BatchNorm1d(5),
                                 torch.nn.Linear(5, 2))
    theirs(torch.randn(8, 4))
    theirs.eval()
    torch.save(theirs, tmp_path / "whole.pt")
    with pytest.raises(WeightsOnlyError, match="GLOBAL torch.nn.modules.container.Sequential"):
        tapegrad.load(tmp_path / "whole.pt")                 # as torch: a whole module needs weights_only=False
    ours = tapegrad.load(tmp_path / "whole.pt", weights_only=False)
    assert type(ours) is tapegrad.nn.Sequential and type(ours[0]) is tapegrad.nn.Linear
    x = np.random.default_rng(1).standard_normal((3, 4)).astype(np.float32)
    np.testing.assert_allclose(ours(tapegrad.tensor(x)).detach().numpy(), theirs(torch.tensor(x)).detach().numpy(),
                               rtol=1e-6, atol=1e-6)


def _whole_model(m):
    m.manual_seed(0)
    enc = m.nn.TransformerEncoder(m.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0), 2, enable_nested_tensor=False)
    return m.nn.ModuleDict({"enc": enc, "lstm": m.nn.LSTM(8, 4, 2), "head": m.nn.Sequential(m.nn.Linear(4, 3),
                                                                                            m.nn.Tanh())})


def _whole_globals(m):
    nn = m.nn
    return [nn.ModuleDict, nn.TransformerEncoder, nn.TransformerEncoderLayer, nn.MultiheadAttention,
            nn.modules.linear.NonDynamicallyQuantizableLinear, nn.Linear, nn.LayerNorm, nn.Dropout, nn.ModuleList,
            nn.LSTM, nn.Sequential, nn.Tanh, nn.functional.relu]


def _whole_out(m, model, x):
    model.eval()
    return model["head"](model["lstm"](model["enc"](m.tensor(x)))[0]).detach().numpy()


def test_a_tapegrad_module_saved_whole_is_torch_s_module_in_torch(torch, tmp_path):
    # the pickle names torch's classes and functions (torch.nn.modules.linear.Linear, torch.nn.functional.relu):
    # torch loads the file as its own modules, and each framework's safe_globals of its own classes allow it
    ours = _whole_model(tapegrad)
    tapegrad.save(ours, tmp_path / "tg.pt")
    torch.save(_whole_model(torch), tmp_path / "torch.pt")
    x = np.random.default_rng(1).standard_normal((5, 2, 8)).astype(np.float32)
    for path in (tmp_path / "tg.pt", tmp_path / "torch.pt"):
        name, message = str(pytest.raises(WeightsOnlyError, tapegrad.load, path).value).split(": ", 1)
        assert message == _torch_error(torch, path)
        assert "GLOBAL torch.nn.modules.container.ModuleDict" in message
    theirs = torch.load(tmp_path / "tg.pt", weights_only=False)
    assert type(theirs["enc"].layers[1].linear2) is torch.nn.Linear
    assert theirs["enc"].layers[0].activation is torch.nn.functional.relu
    np.testing.assert_allclose(_whole_out(torch, theirs, x), _whole_out(tapegrad, ours, x), rtol=1e-5, atol=1e-6)
    with torch.serialization.safe_globals(_whole_globals(torch)):
        assert type(torch.load(tmp_path / "tg.pt")["lstm"]) is torch.nn.LSTM
    with tapegrad.serialization.safe_globals(_whole_globals(tapegrad)):
        back = tapegrad.load(tmp_path / "tg.pt")
        from_torch = tapegrad.load(tmp_path / "torch.pt")
    assert type(back["lstm"]) is tapegrad.nn.LSTM and "_flat_weights" not in vars(back["lstm"])
    assert back["enc"].layers[0].activation is tapegrad.nn.functional.relu
    np.testing.assert_array_equal(_whole_out(tapegrad, back, x), _whole_out(tapegrad, ours, x))
    np.testing.assert_allclose(_whole_out(tapegrad, from_torch, x),
                               _whole_out(torch, torch.load(tmp_path / "torch.pt", weights_only=False), x),
                               rtol=1e-5, atol=1e-6)


def _torch_object(torch, full):
    import importlib
    module, _, name = full.rpartition(".")
    parts = module.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for part in parts[i:] + [name]:
            obj = getattr(obj, part, None)
        return obj


def test_tapegrad_s_classes_and_functions_are_pickled_under_torch_s_names(torch):
    from tapegrad.serialization._torch_names import torch_spellings
    import tapegrad.nn.functional as F
    namespaces = [tapegrad.nn, F, tapegrad.nn.init, tapegrad.optim, tapegrad.optim.lr_scheduler]
    checked = 0
    for ns in namespaces:
        for name, obj in vars(ns).items():
            if name.startswith("_") or not callable(obj) or \
                    not str(getattr(obj, "__module__", "")).startswith("tapegrad"):
                continue
            spelled = torch_spellings(obj)
            assert spelled, name
            theirs = _torch_object(torch, spelled[0])
            assert theirs is not None, spelled
            assert not isinstance(obj, type) or theirs.__name__ == obj.__name__, spelled
            checked += 1
    assert checked > 300
    assert torch_spellings(F.relu)[0] == "torch.nn.functional.relu" and torch_spellings(np.add) == []
    assert torch_spellings(tapegrad.nn.Module) == ["torch.nn.modules.module.Module"]


# --- weights_only: torch's rules, torch's messages ---------------------------------------------------------
class Config:
    def __init__(self, lr):
        self.lr = lr


def _torch_error(torch, path):
    with pytest.raises(pickle.UnpicklingError) as info:
        torch.load(path)
    return str(info.value)


def test_a_refused_global_gives_torch_s_message_naming_the_file(torch, tmp_path):
    path = tmp_path / "cfg.pt"
    tapegrad.save({"cfg": Config(0.1), "w": tapegrad.ones(1)}, path)
    with pytest.raises(WeightsOnlyError) as info:
        tapegrad.load(path)
    assert isinstance(info.value, pickle.UnpicklingError) and isinstance(info.value, CheckpointError)
    with pytest.raises(pickle.UnpicklingError) as theirs:
        torch.load(path)
    # the class's name is torch's, so a failing whole-model load fails the same way in both (parity's check)
    assert type(info.value).__name__ == type(theirs.value).__name__ == "UnpicklingError"
    name, message = str(info.value).split(": ", 1)
    assert name == str(path) and message == _torch_error(torch, path)
    with tapegrad.serialization.safe_globals([Config]), torch.serialization.safe_globals([Config]):
        assert tapegrad.load(path)["cfg"].lr == 0.1 and torch.load(path)["cfg"].lr == 0.1
    assert tapegrad.serialization.get_safe_globals() == []
    tapegrad.serialization.add_safe_globals([(Config, f"{__name__}.Config")])
    try:
        assert tapegrad.load(path)["cfg"].lr == 0.1
        assert tapegrad.serialization.get_safe_globals() == [(Config, f"{__name__}.Config")]
    finally:
        tapegrad.serialization.clear_safe_globals()
    assert tapegrad.load(path, weights_only=False)["cfg"].lr == 0.1
    unsafe = [f"{__name__}.Config"]
    assert tapegrad.serialization.get_unsafe_globals_in_checkpoint(path) == unsafe
    assert torch.serialization.get_unsafe_globals_in_checkpoint(path) == unsafe


def test_numpy_values_need_allowlisting_as_in_torch(torch, tmp_path):
    path = tmp_path / "np.pt"
    tapegrad.save({"best": np.float64(0.5), "flag": np.bool_(True)}, path)
    name, message = str(pytest.raises(WeightsOnlyError, tapegrad.load, path).value).split(": ", 1)
    assert message == _torch_error(torch, path)
    assert tapegrad.load(path, weights_only=False) == {"best": 0.5, "flag": True}


def test_load_arguments_as_torch(torch, tmp_path):
    path = tmp_path / "a.pt"
    tapegrad.save({"w": tapegrad.ones(2)}, path)
    for loc in ("cpu", tapegrad.device("cpu"), {"cuda:0": "cpu"}, lambda storage, location: storage,
                lambda storage, location: storage.cpu(), lambda storage, location: None):
        assert tapegrad.load(path, map_location=loc)["w"].tolist() == [1, 1]
    with pytest.raises(RuntimeError, match="CPU only"):
        tapegrad.load(path, map_location="cuda:0")
    with pytest.raises(RuntimeError, match="Can not safely load weights when explicit pickle_module"):
        tapegrad.load(path, pickle_module=pickle, weights_only=True)
    assert tapegrad.load(path, pickle_module=pickle)["w"].tolist() == [1, 1]      # implies weights_only=False
    with pytest.raises(ValueError, match="f must be a file path in order to use the mmap argument"):
        tapegrad.load(io.BytesIO(path.read_bytes()), mmap=True)
    with pytest.raises(AttributeError, match="expected 'f' to be string, path, or a file-like object"):
        tapegrad.save({}, 42)
    tapegrad.save({"v": tapegrad.ones(1)}, tmp_path / "legacy.pt", _use_new_zipfile_serialization=False)
    with pytest.raises(RuntimeError, match="mmap can only be used with files saved with"):
        tapegrad.load(tmp_path / "legacy.pt", mmap=True)


def test_mmap_maps_torch_s_storages_without_copying(torch, tmp_path):
    w = torch.randn(64, 64)
    torch.save({"w": w, "row": w[3]}, tmp_path / "m.pt")
    ours = tapegrad.load(tmp_path / "m.pt", mmap=True)
    arr = ours["w"].numpy()
    assert np.array_equal(arr, w.numpy()) and np.shares_memory(arr, ours["row"].numpy())
    root = arr
    while isinstance(root.base, np.ndarray):
        root = root.base
    assert isinstance(root.base, memoryview) and type(root.base.obj).__name__ == "mmap"
    theirs = torch.load(tmp_path / "m.pt", mmap=True)         # and torch maps what tapegrad writes
    tapegrad.save({"w": ours["w"]}, tmp_path / "back.pt")
    assert torch.equal(torch.load(tmp_path / "back.pt", mmap=True)["w"], theirs["w"])


# --- hostile files: nothing runs, one clear error naming the file ------------------------------------------
def _archive(path, pkl, records=None, prefix="archive/"):
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr(prefix + "data.pkl", pkl)
        for key, data in (records or {}).items():
            zf.writestr(prefix + "data/" + key, data)
        zf.writestr(prefix + "version", b"3\n")
    return path


def _payload(tmp_path):
    marker = tmp_path / "pwned"
    return marker, f"open({str(marker)!r}, 'w').close()"


class _System:
    def __init__(self, cmd):
        self.cmd = cmd

    def __reduce__(self):
        return (os.system, (self.cmd,))


class _Eval:
    def __init__(self, code):
        self.code = code

    def __reduce__(self):
        return (eval, (self.code,))


@pytest.mark.parametrize("protocol", [2, 4])
@pytest.mark.parametrize("kind", ["system", "eval"])
def test_a_malicious_pickle_never_runs(tmp_path, kind, protocol):
    marker, code = _payload(tmp_path)
    evil = _System(f"touch {marker}") if kind == "system" else _Eval(code)
    path = _archive(tmp_path / "evil.pt", pickle.dumps({"w": evil}, protocol=protocol))
    expected = "posix.system whose module posix is blocked" if kind == "system" and os.name == "posix" else \
        "GLOBAL eval was not an allowed global" if kind == "eval" else "blocked"
    with pytest.raises(WeightsOnlyError, match=re.escape(expected)) as info:
        tapegrad.load(path)
    assert str(path) in str(info.value)
    assert not marker.exists()


def test_a_malicious_legacy_pickle_never_runs(tmp_path):
    marker, code = _payload(tmp_path)
    path = tmp_path / "legacy.pt"
    with open(path, "wb") as f:
        for part in (0x1950A86A20F9469CFC6C, 1001, {"little_endian": True}, {"w": _Eval(code)}, []):
            pickle.dump(part, f, protocol=2)
    with pytest.raises(WeightsOnlyError, match="(?s)legacy.pt.*GLOBAL eval"):
        tapegrad.load(path)
    assert not marker.exists()


def test_only_allowed_objects_are_called_or_built(tmp_path):
    cases = {   # opcodes by hand: what the stack machine must refuse even when every name is allowed
        "reduce of an instance": b"\x80\x02ccollections\nOrderedDict\n)R)R.",
        "build of a list": b"\x80\x02]}b.",
        "append to a dict": b"\x80\x02}Na.",
        "setitem on a list": b"\x80\x02]NNs.",
        "inst opcode": b"(ios\nsystem\nS'true'\np0\n.",
        "persistent id of a module": b"\x80\x02(X\x06\x00\x00\x00moduletQ.",
    }
    for case, pkl in cases.items():
        path = _archive(tmp_path / "x.pt", pkl)
        with pytest.raises(CheckpointError, match="x.pt") as info:
            tapegrad.load(path)
        assert isinstance(info.value, pickle.UnpicklingError), case


def _patched(torch, tmp_path, name, tensor, edit):
    torch.save(tensor, tmp_path / "src.pt")
    with zipfile.ZipFile(tmp_path / "src.pt") as src, zipfile.ZipFile(tmp_path / name, "w") as dst:
        for info in src.infolist():
            data = src.read(info.filename)
            data = edit(info.filename, data)
            if data is not None:
                dst.writestr(info.filename, data)
    return tmp_path / name


def _numel_to(value):
    """Edit data.pkl: the storage's element count (a BININT1 right after 'cpu') becomes ``value``."""
    def edit(name, data):
        if not name.endswith("data.pkl"):
            return data
        i = data.index(b"cpu") + 3
        i = data.index(b"K", i)
        long = b"\x8a" + bytes([8]) + value.to_bytes(8, "little")
        return data[:i] + long + data[i + 2:]
    return edit


def test_hostile_torch_archives_are_one_clear_error(torch, tmp_path):
    t = torch.arange(4.0)
    huge = _patched(torch, tmp_path, "huge.pt", t, _numel_to(2 ** 40))
    with pytest.raises(CheckpointError, match=r"huge.pt.*declares 4398046511104 bytes, but its record .* holds 16"):
        tapegrad.load(huge)
    missing = _patched(torch, tmp_path, "missing.pt", t, lambda n, d: None if n.endswith("data/0") else d)
    with pytest.raises(CheckpointError, match="missing.pt.*data/0 is missing"):
        tapegrad.load(missing)
    oob = _patched(torch, tmp_path, "oob.pt", t,
                   lambda n, d: d.replace(b"K\x04\x85", b"K\x09\x85") if n.endswith("data.pkl") else d)
    with pytest.raises(CheckpointError, match="oob.pt.*size \\[9\\].*storage holds 4 elements"):
        tapegrad.load(oob)
    cut = _patched(torch, tmp_path, "cut.pt", t, lambda n, d: d[: len(d) // 2] if n.endswith("data.pkl") else d)
    with pytest.raises(CheckpointError, match="cut.pt.*truncated"):
        tapegrad.load(cut)
    int_grad = _patched(torch, tmp_path, "intgrad.pt", torch.arange(3),
                        lambda n, d: d.replace(b"\x89", b"\x88", 1) if n.endswith("data.pkl") else d)
    with pytest.raises(CheckpointError, match="intgrad.pt.*int64 is marked requires_grad"):
        tapegrad.load(int_grad)
    script = tmp_path / "script.pt"
    with zipfile.ZipFile(script, "w") as zf:
        zf.writestr("archive/constants.pkl", b"")
        zf.writestr("archive/code/__torch__.py", b"")
    with pytest.raises(CheckpointError, match="script.pt.*TorchScript"):
        tapegrad.load(script)


def test_a_deeply_nested_pickle_loads_without_recursion(tmp_path):
    depth = 100_000
    path = _archive(tmp_path / "deep.pt", b"\x80\x02" + b"]" * depth + b"a" * (depth - 1) + b".")
    obj, n = tapegrad.load(path), 0
    while obj:
        obj, n = obj[0], n + 1
    assert n == depth - 1


def test_a_pickle_s_declared_lengths_are_bounded_by_the_file(tmp_path):
    for pkl in (b"\x80\x02X\xff\xff\xff\x7f", b"\x80\x02\x8e" + struct.pack("<Q", 2 ** 62),
                b"\x80\x02\x8b\xff\xff\xff\x7f"):
        path = _archive(tmp_path / "len.pt", pkl)
        with pytest.raises(CheckpointError, match="len.pt.*truncated or corrupted pickle"):
            tapegrad.load(path)


def test_legacy_storages_beyond_the_file_are_refused(torch, tmp_path):
    torch.save(torch.arange(4.0), tmp_path / "leg.pt", _use_new_zipfile_serialization=False)
    data = (tmp_path / "leg.pt").read_bytes()
    i = data.index(b"cpu") + 3
    i = data.index(b"K", i)
    (tmp_path / "big.pt").write_bytes(data[:i] + b"J" + struct.pack("<i", 2 ** 31 - 1) + data[i + 2:])
    with pytest.raises(CheckpointError, match="big.pt.*storages declare 8589934588 bytes"):
        tapegrad.load(tmp_path / "big.pt")


def test_zip_archives_that_are_not_checkpoints(tmp_path):
    path = tmp_path / "other.zip"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("readme.txt", "hi")
    with pytest.raises(CheckpointError, match="other.zip.*neither"):
        tapegrad.load(path)
    assert sys.modules["tapegrad.serialization"].load is tapegrad.load


def test_attributes_saved_on_tensors_load_as_torch_loads_them(torch, tmp_path):
    """A tensor's and a Parameter's own attributes (``t.tag``, ``p._no_weight_decay``) come back, as with
    torch.load; a name of the tensor's own fields or methods set by a file is dropped with a warning."""
    p = torch.nn.Parameter(torch.ones(2))
    p._no_weight_decay = True
    t = torch.ones(3)
    t.tag = "hello"
    bad = torch.ones(1)
    bad.__dict__.update({"_array": 5, "add": 1, "fine": 2})
    path = tmp_path / "attrs.pt"
    torch.save({"p": p, "t": t}, path)
    want = torch.load(path, weights_only=True)
    got = tapegrad.load(path)
    assert got["p"].__dict__ == want["p"].__dict__ == {"_no_weight_decay": True}
    assert got["t"].__dict__ == want["t"].__dict__ == {"tag": "hello"}
    torch.save(bad, path)
    with pytest.warns(UserWarning, match=r"sets '_array', 'add' on a tensor.*dropped"):
        b = tapegrad.load(path)
    assert b.__dict__ == {"fine": 2} and b.tolist() == [1.0]
