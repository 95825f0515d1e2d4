"""Stage 8: pictures of two computation graphs, drawn by ``duograd.viz.draw``.

One is a small scalar expression on ``Value`` (after its backward pass, so every box
shows its gradient); the other is the forward pass of one MLP layer on tensors,
``relu(x @ W.T + b)``, where each box is a whole array. ``draw`` uses Graphviz's ``dot``
when it is installed and a matplotlib layout otherwise; the stage records which one
drew each picture. The DOT source is written next to every PNG either way.

The scalar graph's leaves are labelled with their names in the expression (``a``, ``b``,
``c``, ``d``), so the picture can be matched to ``tanh(a*b + c) * d``: the names are
written into the DOT source, which ``dot`` then renders. (The matplotlib fallback draws
from the graph itself and shows the leaves' values only.)
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import numpy as np

import duograd as dg
import duograd.nn as nn
from duograd import viz
from duograd.scalar import Value

from . import check_size

SEED = 0


def _draw(root: Any, path: Path) -> str:
    """Draw with dot when it is installed (falling back if it fails); return the renderer."""
    if shutil.which("dot") is not None:
        try:
            viz.draw(root, path, engine="dot")
            return "dot"
        except RuntimeError:
            pass
    viz.draw(root, path, engine="matplotlib")
    return "matplotlib"


LEAVES = {"a": 2.0, "b": -3.0, "c": 6.8, "d": -0.7}  # distinct values: a box is found by its value


def scalar_expression() -> Value:
    """A small neuron-like expression, ``tanh(a*b + c) * d``, after ``backward()``.

    >>> out = scalar_expression()
    >>> round(out.data, 6)
    -0.464826
    """
    a, b, c, d = (Value(LEAVES[k]) for k in "abcd")
    out = (a * b + c).tanh() * d
    out.backward()
    return out


def name_leaves(dot_source: str, names: dict[str, float]) -> tuple[str, list[str]]:
    r"""``dot_source`` with each leaf box whose value is ``names[k]`` headed ``k`` instead
    of ``leaf``; returns the new source and the names placed.

    >>> src = r'n0 [label="leaf\ndata 2\ngrad 1"];'
    >>> print(name_leaves(src, {"a": 2.0}))
    ('n0 [label="a (leaf)\\ndata 2\\ngrad 1"];', ['a'])
    """
    placed = []
    for name, value in names.items():
        old = f'label="leaf\\ndata {value:.4g}\\n'
        if dot_source.count(old) == 1:
            dot_source = dot_source.replace(old, f'label="{name} (leaf)\\ndata {value:.4g}\\n')
            placed.append(name)
    return dot_source, placed


def layer_forward() -> dg.Tensor:
    """One MLP layer's forward pass on tensors: ``relu(x @ W.T + b)`` for 4 inputs of 3
    features through ``nn.Linear(3, 2)``.

    >>> layer_forward().shape
    (4, 2)
    """
    layer = nn.Linear(3, 2, rng=SEED)
    x = dg.tensor(np.random.default_rng(SEED).standard_normal((4, 3)))
    return layer(x).relu()


def run(out: str | os.PathLike, size: str = "full", progress: bool = True) -> dict[str, Any]:
    """Draw both graphs into ``out`` and record their sizes and the renderer.

    >>> import tempfile
    >>> m = run(tempfile.mkdtemp(), size="smoke", progress=False)
    >>> m["renderer"] in ("dot", "matplotlib"), m["scalar"]["nodes"] > 0
    (True, True)
    """
    check_size(size)
    out = Path(out)
    result: dict[str, Any] = {}
    renderers = set()
    for key, root, name in (("scalar", scalar_expression(), "graph_scalar.png"),
                            ("tensor", layer_forward(), "graph_tensor_layer.png")):
        renderer = _draw(root, out / name)
        dot_path = (out / name).with_suffix(".dot")
        dot_source = dot_path.read_text(encoding="utf-8")
        if key == "scalar":
            dot_source, placed = name_leaves(dot_source, LEAVES)
            dot_path.write_text(dot_source, encoding="utf-8")
            if renderer == "dot":  # draw again from the source with the names
                subprocess.run([shutil.which("dot") or "dot", "-Tpng", str(dot_path), "-o",
                                str(out / name)], check=True, capture_output=True)
        renderers.add(renderer)
        result[key] = {"nodes": viz.count_nodes(root), "edges": dot_source.count("->"),
                       "png": name, "dot": Path(name).with_suffix(".dot").name,
                       "renderer": renderer}
    result["scalar"]["expression"] = "tanh(a*b + c) * d"
    result["scalar"]["leaves"] = dict(LEAVES)
    result["scalar"]["leaf_names_drawn"] = renderers == {"dot"} and placed == list(LEAVES)
    result["tensor"]["expression"] = "relu(x @ W.T + b), x: (4, 3), W: (2, 3), b: (2,)"
    result["renderer"] = renderers.pop() if len(renderers) == 1 else "mixed"
    result["dot_installed"] = shutil.which("dot") is not None
    result["figures"] = [result["scalar"]["png"], result["tensor"]["png"]]
    return result
