"""The README's "Learn" section runs as written (doctest), and the set-up commands are documented."""

import doctest
import os
import re

README = os.path.join(os.path.dirname(__file__), "..", "README.md")


def _learn_section():
    text = open(README, encoding="utf-8").read()
    start = text.index("## Learn")
    end = text.index("\n## ", start + 3)
    blocks = re.findall(r"```pycon\n(.*?)```", text[start:end], re.S)
    return "\n".join(blocks)


def test_learn_section_runs_as_written():
    parser = doctest.DocTestParser()
    test = parser.get_doctest(_learn_section(), {}, "README Learn", README, 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.attempted > 40 and result.failed == 0


def test_setup_commands_are_documented():
    text = open(README, encoding="utf-8").read()
    assert "make demo" in text and "make test" in text


def _section(text, title):
    start = text.index(title)
    return text[start:text.index("\n## ", start + 3)]


def test_every_table_has_its_separator_row():
    # a block of `| ... |` lines without a `|---|` second row renders as a paragraph
    text = open(README, encoding="utf-8").read()
    blocks, block = [], []
    for line in text.splitlines() + [""]:
        if line.startswith("|"):
            block.append(line)
        elif block:
            blocks.append(block)
            block = []
    assert len(blocks) >= 3
    for block in blocks:
        assert len(block) >= 2 and re.fullmatch(r"\|(\s*:?-{3,}:?\s*\|)+", block[1]), block[0]
        assert all(line.count("|") == block[0].count("|") for line in block), block[0]


def test_speed_section_is_a_short_table_that_links_the_results():
    speed = _section(open(README, encoding="utf-8").read(), "## Speed")
    assert "(benchmarks/RESULTS.md)" in speed and "| W3 " in speed
    prose = [line for line in speed.splitlines()[1:] if line and not line.startswith("|")]
    assert len(prose) <= 10


def test_learn_section_says_which_lessons_it_follows():
    learn = _section(open(README, encoding="utf-8").read(), "## Learn")
    assert "Autograd 自动微分" in learn and "算子与自动微分" in learn and "自动记账和反向追责" in learn
