"""Run an example program of ``examples/`` as it is written and as its torch twin.

An example names its library in a few import lines and nowhere else (``import duograd as
torch``, or a plain ``import torch``). ``run_example`` swaps those lines for the other
library's and runs the source, so a test can compare the two runs: the same program
with only the import changed.

>>> IMPORT
('\\nimport duograd as torch\\n', '\\nimport torch\\n')
"""

from __future__ import annotations

import os
from typing import Sequence

EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "examples")

# (the duograd spelling, the torch spelling) of the one line that names the library
IMPORT = ("\nimport duograd as torch\n", "\nimport torch\n")


def run_example(name: str, lib: str, *, lines: Sequence[tuple[str, str]] = (IMPORT,),
                module: str | None = None) -> dict:
    """Run ``examples/<name>.py`` with ``lib`` ("duograd" or "torch"); return its globals.

    ``lines``: the (duograd, torch) pairs of lines that name the library; the file holds
    one side of every pair exactly once, and the other library gets the other side.
    ``module``: the ``__name__`` it runs under (default: ``<name>_<lib>``, so a
    ``if __name__ == "__main__"`` block does not run).
    """
    path = os.path.join(EXAMPLES, f"{name}.py")
    with open(path) as f:
        source = f.read()
    side = 0 if all(source.count(ours) == 1 for ours, _ in lines) else 1
    assert all(source.count(pair[side]) == 1 for pair in lines), \
        f"{name}.py names its library in exactly these lines: {[p[side] for p in lines]}"
    want = 0 if lib == "duograd" else 1
    if want != side:
        for pair in lines:
            source = source.replace(pair[side], pair[want])
    ns: dict = {"__name__": module or f"{name}_{lib}", "__file__": path}
    exec(compile(source, path, "exec"), ns)
    return ns
