"""The package metadata builds without warnings: ``license`` is an SPDX expression (a TOML table is deprecated by
setuptools 77 and printed a warning three times per install)."""

import os
import warnings

import pytest

PYPROJECT = os.path.join(os.path.dirname(__file__), "..", "pyproject.toml")


def test_license_is_an_spdx_expression_and_reads_without_warnings():
    tomllib = pytest.importorskip("tomllib")             # Python >= 3.11
    with open(PYPROJECT, "rb") as f:
        meta = tomllib.load(f)
    assert meta["project"]["license"] == "MIT"
    assert "setuptools>=77" in meta["build-system"]["requires"]   # the first setuptools that reads the string
    setuptools = pytest.importorskip("setuptools")
    if int(setuptools.__version__.split(".")[0]) < 77:
        pytest.skip(f"setuptools {setuptools.__version__} here; builds get >= 77 (build-system.requires)")
    from setuptools.config.pyprojecttoml import apply_configuration
    from setuptools.dist import Distribution
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        dist = apply_configuration(Distribution(), PYPROJECT)
    assert [str(w.message) for w in caught] == []
    assert dist.metadata.license_expression == "MIT"
