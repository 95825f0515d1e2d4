"""Run every code block of docs/tutorial.md and check what it prints.

Each block is a ```python fence holding doctest-style examples (``>>>`` lines followed
by the output they must print). The blocks run in order in one shared namespace, one
pytest test per block; running a single block first runs the ones before it. A block
that imports torch is skipped, with conftest's install hint, only when torch is absent.
No block is ever passed over silently: a fence in another language, a block with no
examples, or a block that prints nothing checkable fails the structure test.
"""

from __future__ import annotations

import doctest
import io
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import TORCH_MISSING

TUTORIAL = Path(__file__).resolve().parents[2] / "docs" / "tutorial.md"
LANGUAGES = ("python", "pycon")


@dataclass
class Block:
    language: str
    lineno: int  # the line of the opening fence, 1-based
    source: str

    @property
    def needs_torch(self) -> bool:
        return re.search(r"^\s*(>>>|\.\.\.)\s*(import torch|from torch)\b", self.source, re.M) is not None


def read_blocks(text: str) -> list[Block]:
    blocks, current = [], None
    for lineno, line in enumerate(text.splitlines(), start=1):
        if line.lstrip().startswith("```"):
            if current is None:
                current = Block(line.strip()[3:].strip(), lineno, "")
            else:
                blocks.append(current)
                current = None
        elif current is not None:
            current.source += line + "\n"
    assert current is None, f"tutorial.md: the fence opened on line {current.lineno} is never closed"
    return blocks


BLOCKS = read_blocks(TUTORIAL.read_text(encoding="utf-8"))
PARSER = doctest.DocTestParser()


def _torch_missing() -> bool:
    try:
        import torch  # noqa: F401
    except ImportError:
        return True
    return False


# Shared by every block, in order: a later block may use what an earlier one defined.
_state = {"globs": {"__name__": "tutorial"}, "ran": 0, "reports": {}}


def _run(index: int) -> tuple[str, str]:
    """Run block `index` (after any earlier block not yet run); return (status, report)."""
    while _state["ran"] <= index:
        i = _state["ran"]
        block = BLOCKS[i]
        if block.needs_torch and _torch_missing():
            _state["reports"][i] = ("skipped", TORCH_MISSING)
        else:
            test = PARSER.get_doctest(block.source, _state["globs"], f"tutorial.md block {i}",
                                      str(TUTORIAL), block.lineno)
            out = io.StringIO()
            runner = doctest.DocTestRunner(verbose=False, optionflags=doctest.FAIL_FAST)
            result = runner.run(test, out=out.write, clear_globs=False)
            _state["globs"] = test.globs  # DocTest ran on a copy; carry its names forward
            _state["reports"][i] = ("failed" if result.failed else "passed", out.getvalue())
        _state["ran"] += 1
    return _state["reports"][index]


def test_tutorial_structure():
    assert len(BLOCKS) >= 10
    for i, block in enumerate(BLOCKS):
        where = f"tutorial.md line {block.lineno}"
        assert block.language in LANGUAGES, f"{where}: a ```{block.language} fence; every block must be ```python"
        examples = PARSER.get_examples(block.source)
        assert examples, f"{where}: no >>> examples, so nothing in it would run"
        assert any(ex.want for ex in examples), f"{where}: prints nothing for the test to check"
        stray = [line for line in block.source.splitlines()
                 if line.strip() and not line.startswith((">>>", "...")) and not any(
                     line.rstrip() in ex.want.splitlines() for ex in examples)]
        assert not stray, f"{where}: lines that are neither code nor expected output: {stray}"


@pytest.mark.parametrize("index", range(len(BLOCKS)), ids=[f"block{i:02d}-line{b.lineno}" for i, b in enumerate(BLOCKS)])
def test_tutorial_block(index):
    status, report = _run(index)
    if status == "skipped":
        pytest.skip(report)
    assert status == "passed", report
