"""The examples in nn's layer docstrings run as written (doctest)."""

import doctest
import importlib
import pkgutil
import warnings

import pytest

import tapegrad
import tapegrad.nn.modules as modules

NAMES = [info.name for info in pkgutil.iter_modules(modules.__path__)]


@pytest.mark.parametrize("name", NAMES)
def test_layer_docstring_examples_run(name):
    module = importlib.import_module(f"tapegrad.nn.modules.{name}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")        # (TransformerEncoder's nested-tensor notice, as torch's)
        res = doctest.testmod(module, extraglobs={"tapegrad": tapegrad}, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert res.failed == 0
    assert res.attempted > 0, f"tapegrad.nn.modules.{name} has no docstring example"
