"""Coverage of torch 2.13's public names (tests/coverage_names.py prints the table): >= 90% of torch's functions
(backend-only names excluded by the stated rules) and >= 90% of Tensor methods. The missing names are printed."""

import pytest

pytest.importorskip("torch")

import coverage_names as C  # noqa: E402

TARGET = 0.90


@pytest.fixture(scope="module")
def cov():
    return C.coverage()


@pytest.mark.parametrize("part", ["functions", "methods"])
def test_coverage_target(cov, part):
    c = cov[part]
    ratio = c["present"] / c["counted"]
    print(f"{part}: {c['present']}/{c['counted']} = {ratio:.1%}; missing: {' '.join(c['missing'])}")
    assert ratio >= TARGET, f"{part}: {ratio:.1%} < {TARGET:.0%}; missing: {' '.join(c['missing'])}"


def test_every_exclusion_has_a_rule_and_only_backend_names(cov):
    """The exclusions are the stated rules, and none of them hides a name tapegrad has (except the predicates
    that exist on both sides for every backend, which the rules keep counted)."""
    import tapegrad
    for part, where in (("functions", tapegrad), ("methods", tapegrad.Tensor)):
        for name, rule in cov[part]["excluded"].items():
            assert rule in C.EXCLUSION_RULES
    assert C.excluded("abs") is None and C.excluded("is_sparse") is None
    assert C.excluded("cudnn_convolution") == "vendor kernels" and C.excluded("q_scale") == "quantized"


def test_table_prints(capsys):
    C.main()
    out = capsys.readouterr().out
    assert "functions" in out and "methods" in out and "exclusion rules" in out
