"""Stage 8: pictures of two computation graphs, drawn by ``duograd.viz.draw``.

One is a small scalar expression on ``Value`` (after its backward pass, so every box
shows its gradient); the other is the forward pass of one MLP layer on tensors,
``relu(x @ W + b)``, where each box is a whole array. ``draw`` uses Graphviz's ``dot``
when it is installed and a matplotlib layout otherwise; the stage records which one
drew each picture. The DOT source is written next to every PNG either way.
"""

from __future__ import annotations

import os
import shutil
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


def scalar_expression() -> Value:
    """A small neuron-like expression, ``tanh(a*b + c) * d``, after ``backward()``.

    >>> out = scalar_expression()
    >>> round(out.data, 6)
    -0.464826
    """
    a, b, c, d = Value(2.0), Value(-3.0), Value(6.8), Value(-0.7)
    out = (a * b + c).tanh() * d
    out.backward()
    return out


def layer_forward() -> dg.Tensor:
    """One MLP layer's forward pass on tensors: ``relu(x @ W + b)`` for 4 inputs of 3
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
        renderers.add(renderer)
        dot_source = (out / name).with_suffix(".dot").read_text(encoding="utf-8")
        result[key] = {"nodes": viz.count_nodes(root), "edges": dot_source.count("->"),
                       "png": name, "dot": Path(name).with_suffix(".dot").name,
                       "renderer": renderer}
    result["scalar"]["expression"] = "tanh(a*b + c) * d"
    result["tensor"]["expression"] = "relu(x @ W + b), x: (4, 3), W: (3, 2), b: (2,)"
    result["renderer"] = renderers.pop() if len(renderers) == 1 else "mixed"
    result["dot_installed"] = shutil.which("dot") is not None
    result["figures"] = [result["scalar"]["png"], result["tensor"]["png"]]
    return result
