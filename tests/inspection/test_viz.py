"""duograd.viz: node counts against hand counts, DOT structure, and both renderers.

Every expected count below is worked out by hand from the expression, never read
back from the library.
"""

from __future__ import annotations

import re
import shutil
import subprocess

import numpy as np
import pytest

import duograd as dg
from duograd import viz
from duograd.scalar import Value
from duograd.scalar.higher import Var

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
NODE_LINE = re.compile(r'^\s*n(\d+) \[label="((?:[^"\\]|\\.)*)"')
EDGE_LINE = re.compile(r"^\s*n(\d+) -> n(\d+);$")


def _mlp_layer():
    """relu(x @ W + b): x (constant), W, b, matmul, add, relu = 6 nodes, 5 edges."""
    rng = np.random.default_rng(0)
    x = dg.tensor(rng.normal(size=(5, 3)))
    W = dg.tensor(rng.normal(size=(3, 4)), requires_grad=True)
    b = dg.tensor(np.zeros(4), requires_grad=True)
    return (x @ W + b).relu()


def _parse(src: str) -> tuple[dict[int, str], list[tuple[int, int]]]:
    nodes, edges = {}, []
    for line in src.splitlines():
        if m := NODE_LINE.match(line):
            nodes[int(m.group(1))] = m.group(2)
        elif m := EDGE_LINE.match(line):
            edges.append((int(m.group(1)), int(m.group(2))))
    return nodes, edges


# ---------------------------------------------------------------- count_nodes

def test_count_value_a_times_b_plus_a():
    a, b = Value(2.0), Value(3.0)
    assert viz.count_nodes(a * b + a) == 4  # a, b, a*b, +


def test_count_value_constant_is_a_node():
    a = Value(2.0)
    assert viz.count_nodes(a * 3 + 1) == 5  # a, 3, *, 1, +
    assert viz.count_nodes(a) == 1


def test_count_value_shared_subexpression():
    x = Value(0.5)
    s = x.sin()
    assert viz.count_nodes(s * s) == 3  # x, sin, * (s used twice, counted once)


def test_count_var_and_its_gradient_graph():
    from duograd.scalar.higher import grad
    x, y = Var(0.7), Var(-1.3)
    f = x * y + x.sin()
    assert viz.count_nodes(f) == 5  # x, y, *, sin, +
    (fx,) = grad(f, [x])
    # The gradient is itself a graph with history, reaching back to x: more than a leaf.
    assert viz.count_nodes(fx) > 1


def test_count_tensor_mlp_layer():
    assert viz.count_nodes(_mlp_layer()) == 6


def test_count_tensor_two_layer_loss():
    rng = np.random.default_rng(1)
    x = dg.tensor(rng.normal(size=(4, 2)))
    W1, b1 = dg.randn(2, 3, rng=2, requires_grad=True), dg.zeros(3, requires_grad=True)
    W2, b2 = dg.randn(3, 1, rng=3, requires_grad=True), dg.zeros(1, requires_grad=True)
    loss = ((x @ W1 + b1).tanh() @ W2 + b2).sum()
    # x W1 matmul b1 add tanh | W2 matmul b2 add | sum  -> 5 leaves + 6 ops
    assert viz.count_nodes(loss) == 11


def test_count_chain_of_100000():
    v = Value(0.1)
    node = v
    for _ in range(100_000):
        node = -node  # one new node per step and no constants
    assert viz.count_nodes(node) == 100_001


def test_count_tensor_chain_of_100000():
    x = dg.tensor([0.5], requires_grad=True)
    node = x
    for _ in range(100_000):
        node = node.tanh()
    assert viz.count_nodes(node) == 100_001


def test_released_tensor_graph_is_marked():
    y = _mlp_layer().sum()
    y.backward(retain_graph=True)
    assert viz.count_nodes(y) == 7  # still whole
    y.backward()                    # this one releases it
    assert viz.count_nodes(y) == 1
    nodes, edges = _parse(viz.to_dot(y))
    assert list(nodes.values())[0].startswith("sum (released)") and edges == []


def test_count_rejects_other_objects():
    with pytest.raises(TypeError, match="Value, Var or Tensor"):
        viz.count_nodes(3.0)


# ---------------------------------------------------------------- to_dot

def test_to_dot_structure_value():
    a, b = Value(2.0), Value(3.0)
    f = a * b + a
    f.backward()
    src = viz.to_dot(f)
    assert src.lstrip().startswith("digraph")
    nodes, edges = _parse(src)
    assert len(nodes) == 4
    assert len(edges) == 4  # a->*, b->*, *->+, a->+
    labels = sorted(nodes.values())
    assert any(lbl.startswith("*\\n") and "data 6" in lbl for lbl in labels)
    assert any(lbl.startswith("+\\n") and "data 8" in lbl for lbl in labels)
    # a's gradient is b + 1 = 4, b's is a = 2: shown on the leaves.
    assert sum("grad 4" in lbl for lbl in labels) == 1
    assert sum("grad 2" in lbl for lbl in labels) == 1
    # Every edge joins declared nodes.
    assert all(i in nodes and j in nodes for i, j in edges)


def test_to_dot_one_edge_per_input_slot():
    x = Var(1.5)
    nodes, edges = _parse(viz.to_dot(x * x))
    assert len(nodes) == 2 and len(edges) == 2


def test_to_dot_structure_tensor():
    nodes, edges = _parse(viz.to_dot(_mlp_layer()))
    assert len(nodes) == 6 and len(edges) == 5
    by_op = {lbl.split("\\n")[0]: lbl for lbl in nodes.values()}
    assert {"matmul", "add", "relu"} <= set(by_op)
    assert "(5, 4)" in by_op["relu"] and "(5, 4)" in by_op["matmul"]


def test_to_dot_is_deterministic():
    assert viz.to_dot(_mlp_layer()) == viz.to_dot(_mlp_layer())


def test_to_dot_escapes_quotes():
    from duograd.autograd import Primitive
    odd = Primitive('say "hi"\\', forward=lambda x: x, vjp=(lambda g, out, x: g,))
    src = viz.to_dot(odd(dg.tensor([1.0], requires_grad=True)))
    nodes, edges = _parse(src)
    assert len(nodes) == 2 and len(edges) == 1


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz `dot` binary not installed")
def test_to_dot_parses_with_graphviz():
    graphviz = pytest.importorskip("graphviz", reason="graphviz python package not installed")
    src = viz.to_dot(_mlp_layer())
    svg = graphviz.Source(src).pipe(format="svg").decode()
    assert svg.count('class="node"') == 6
    assert svg.count('class="edge"') == 5


# ---------------------------------------------------------------- draw

def _check_png(path: str) -> None:
    from matplotlib.image import imread
    with open(path, "rb") as f:
        head = f.read(8)
        f.seek(0, 2)
        size = f.tell()
    assert head == PNG_MAGIC
    assert size > 1000
    img = imread(path)
    assert img.ndim == 3 and img.shape[0] >= 50 and img.shape[1] >= 50
    assert img.std() > 0  # something was drawn on the white background


@pytest.mark.parametrize("make", [lambda: Value(2.0) * Value(3.0) + 1.0,
                                  lambda: (Var(0.3).sin() * Var(2.0)).exp(),
                                  _mlp_layer], ids=["Value", "Var", "Tensor"])
def test_draw_matplotlib_fallback(tmp_path, make):
    root = make()
    png = viz.draw(root, tmp_path / "graph.png", engine="matplotlib")
    assert png == str(tmp_path / "graph.png")
    _check_png(png)
    dot_file = tmp_path / "graph.dot"
    assert dot_file.read_text() == viz.to_dot(root)


def _deep_chain():
    node = Value(1.0)
    for _ in range(7):
        node = node.exp() if node.data < 5 else node.log()
    return node  # 8 nodes, one per layer


def test_to_dot_orientation():
    a, b = Value(2.0), Value(3.0)
    assert "rankdir=LR;" in viz.to_dot(a * b + a)        # 3 layers, 2 wide
    assert "rankdir=TB;" in viz.to_dot(_deep_chain())    # 8 layers, 1 wide
    assert "rankdir=LR;" in viz.to_dot(_deep_chain(), rankdir="LR")


def test_draw_matplotlib_layout_follows_the_graph(tmp_path):
    from matplotlib.image import imread
    a, b = Value(2.0), Value(3.0)
    h, w = imread(viz.draw(a * b + a, tmp_path / "wide.png", engine="matplotlib")).shape[:2]
    assert w > h  # left to right: three columns of boxes
    h, w = imread(viz.draw(_deep_chain(), tmp_path / "deep.png", engine="matplotlib")).shape[:2]
    assert h > 2 * w  # top to bottom: eight rows of one box


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz `dot` binary not installed")
def test_draw_with_dot(tmp_path):
    root = _mlp_layer()
    png = viz.draw(root, tmp_path / "g.png", engine="dot")
    _check_png(png)
    assert (tmp_path / "g.dot").read_text() == viz.to_dot(root)
    # The PNG is exactly what dot makes of the DOT file written beside it.
    again = subprocess.run(["dot", "-Tpng", str(tmp_path / "g.dot")], capture_output=True, check=True)
    assert again.stdout == (tmp_path / "g.png").read_bytes()


def test_draw_auto_without_dot_uses_matplotlib(tmp_path, monkeypatch):
    monkeypatch.setattr(viz.shutil, "which", lambda name: None)
    png = viz.draw(_mlp_layer(), tmp_path / "auto.png")
    _check_png(png)
    assert (tmp_path / "auto.dot").exists()
    with pytest.raises(RuntimeError, match="dot"):
        viz.draw(_mlp_layer(), tmp_path / "forced.png", engine="dot")


def test_draw_rejects_unknown_engine(tmp_path):
    with pytest.raises(ValueError, match="engine"):
        viz.draw(Value(1.0), tmp_path / "x.png", engine="svg")
