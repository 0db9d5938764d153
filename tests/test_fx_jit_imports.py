"""Import-time surfaces model libraries touch (timm): ``torch.fx.wrap`` as a decorator and by name,
``torch.jit.annotations``' typing names, and the data classes being ``Generic`` (``Sampler[List[int]]`` as a base
class). Compared with torch."""

import sys
import types
import typing

import pytest
import torch

import tapegrad


def _run_module(lib, src):
    mod = types.ModuleType("wrapmod")
    mod.__dict__["lib"] = lib
    exec(compile(src, "<wrapmod>", "exec"), mod.__dict__)
    return mod


@pytest.mark.parametrize("lib", [torch, tapegrad])
def test_fx_wrap_returns_its_argument(lib):
    mod = _run_module(lib, "@lib.fx.wrap\ndef f(x):\n    return x * 2\nname = lib.fx.wrap('f')\n")
    assert mod.f(3) == 6 and mod.name == "f"


@pytest.mark.parametrize("lib", [torch, tapegrad])
def test_fx_wrap_errors(lib):
    with pytest.raises(NotImplementedError, match="wrap must be called at the top level of a module"):
        lib.fx.wrap(len)
    with pytest.raises(RuntimeError, match="Unsupported type for global function"):
        _run_module(lib, "lib.fx.wrap(3)\n")


def test_jit_annotations_names():
    import tapegrad.jit.annotations as ta
    import torch.jit.annotations as tt
    for name in ("Any", "Dict", "List", "Optional", "Tuple", "Union"):
        assert getattr(ta, name) is getattr(tt, name) is getattr(typing, name)
    assert ta.Module is tapegrad.nn.Module and "tapegrad.jit.annotations" in sys.modules


@pytest.mark.parametrize("lib", [torch, tapegrad])
def test_data_classes_are_generic(lib):
    d = lib.utils.data

    class Batches(d.Sampler[list[int]]):
        def __iter__(self):
            return iter([[0, 1], [2]])

    class Items(d.Dataset[int]):
        def __getitem__(self, i):
            return i

    assert list(Batches()) == [[0, 1], [2]] and Items()[4] == 4
    for cls in (d.Dataset, d.IterableDataset, d.Subset, d.ConcatDataset, d.Sampler, d.DataLoader,
                d.distributed.DistributedSampler):
        assert typing.Generic in cls.__mro__ and len(cls.__parameters__) == 1, cls
