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
