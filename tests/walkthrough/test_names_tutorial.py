"""Run every code block of docs/names-tutorial.md in order, in one namespace, and check
what it prints (the same rules as test_tutorial.py, whose parser this reuses)."""

from __future__ import annotations

import doctest
import io
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from test_tutorial import LANGUAGES, PARSER, read_blocks  # noqa: E402

pytest.importorskip("names")
CHAPTER = ROOT / "docs" / "names-tutorial.md"
BLOCKS = read_blocks(CHAPTER.read_text(encoding="utf-8"))
_state = {"globs": {"__name__": "names_tutorial"}, "ran": 0, "reports": {}}


def _run(index: int) -> tuple[str, str]:
    while _state["ran"] <= index:
        i = _state["ran"]
        block = BLOCKS[i]
        test = PARSER.get_doctest(block.source, _state["globs"], f"names-tutorial.md block {i}",
                                  str(CHAPTER), block.lineno)
        out = io.StringIO()
        runner = doctest.DocTestRunner(verbose=False, optionflags=doctest.FAIL_FAST)
        result = runner.run(test, out=out.write, clear_globs=False)
        _state["globs"] = test.globs
        _state["reports"][i] = ("failed" if result.failed else "passed", out.getvalue())
        _state["ran"] += 1
    return _state["reports"][index]


def test_chapter_structure():
    assert len(BLOCKS) >= 5
    for block in BLOCKS:
        assert block.language in LANGUAGES, f"line {block.lineno}: ```{block.language}"
        examples = PARSER.get_examples(block.source)
        assert examples and any(ex.want for ex in examples), f"line {block.lineno}: nothing checked"


@pytest.mark.parametrize("index", range(len(BLOCKS)),
                         ids=[f"block{i:02d}-line{b.lineno}" for i, b in enumerate(BLOCKS)])
def test_chapter_block(index):
    status, report = _run(index)
    assert status == "passed", report
