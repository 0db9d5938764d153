"""PyTorch programs of the usual shapes (tests/programs/, see its README) run through the parity runner: real torch
and tapegrad must both finish and print the same numbers."""

from pathlib import Path

import pytest

from tapegrad import parity

PROGRAMS = sorted((Path(__file__).parent / "programs").glob("*.py"))


@pytest.mark.parametrize("script", PROGRAMS, ids=[p.stem for p in PROGRAMS])
def test_program_agrees_with_torch(torch, script):
    r = parity.run(str(script), timeout=300, warm=True)     # forked from warm servers: no torch import per run
    assert r.agree, r.report()
    assert r.numbers_compared >= 10
