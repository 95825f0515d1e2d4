"""Pictures of a computation graph: ``count_nodes``, ``to_dot``, ``draw``.

No walk of its own: a Tensor's graph is read with the engine's ``_toposort`` (the walk
the backward pass runs), a scalar graph with the scalar engine's ``topological_order``.
The scalar ``Value`` and ``Var`` list their inputs in ``_prev`` and label their operation
with the string ``_op`` (``''`` for a leaf); a ``Tensor`` points to its graph node
(``grad_fn``), which holds the input Tensors (none once a backward pass has released the
graph: then only the root is drawn) and the operation, a ``Primitive`` whose ``.name`` is
the label. Both walks are iterative, so a chain of any depth can be counted and drawn
without touching Python's recursion limit.

Nodes are numbered inputs first, the root last, in the walks' deterministic order, which
makes ``to_dot`` return the same text for the same graph every time.

``draw`` hands the DOT source to Graphviz's ``dot`` when it is on the PATH and
otherwise lays the graph out itself with matplotlib: longest-path layering (a
node's layer is one more than its deepest input's), waypoints for arrows that skip
layers, a few barycentre sweeps to untangle each layer, then labelled boxes joined
by arrows. Both run left to right, or top to bottom for a graph much deeper than
it is wide.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from typing import Any, Sequence

import numpy as np

from ._node import Node
from ._tensor import Tensor
from .autograd import _toposort
from .scalar.engine import topological_order

__all__ = ["count_nodes", "to_dot", "draw"]

# Fill colours: trainable leaves, constant leaves, computed nodes, the root.
_COLOURS = {"param": "#cfe2f3", "const": "#eeeeee", "op": "#ffffff", "root": "#fce5cd"}


# ---------------------------------------------------------------- the walker

def _walk(root: Any) -> tuple[list, list[tuple[int, int]]]:
    """Every node reachable from ``root`` (inputs first, ``root`` last) and every edge as
    ``(input index, consumer index)``, one per input slot: ``x * x`` gives two edges.

    There is no walk of its own here: a Tensor's graph is the engine's ``_toposort`` (the
    one the backward pass runs, reversed), with the constant inputs (which need no
    gradient, so the engine does not visit them) added before their first consumer; a
    scalar graph is the scalar engine's ``topological_order``."""
    if isinstance(root, Tensor):
        return _tensor_graph(root)
    if not hasattr(root, "_prev"):
        raise TypeError(f"viz: expected a Value, Var or Tensor, got {type(root).__name__}")
    nodes = topological_order(root)
    index = {id(n): i for i, n in enumerate(nodes)}
    return nodes, [(index[id(x)], i) for i, n in enumerate(nodes) for x in n._prev]


def _tensor_graph(root: Tensor) -> tuple[list, list[tuple[int, int]]]:
    n = root._node
    if type(n) is not Node or n.next is None:  # a leaf, a constant or a released graph
        return [root], []
    keys = _toposort([root])[::-1]  # inputs first, root last
    tensor_of: dict[Any, Tensor] = {n: root}
    for k in keys:
        if type(k) is Node:
            tensor_of.update((e, x) for e, x in zip(k.next, k.inputs) if e is not None)
        else:
            tensor_of[k] = k  # a leaf is its own key
    nodes: list = []
    index: dict[Any, int] = {}  # each key's box
    const: dict[int, int] = {}  # each constant's box (by id: a constant has no key)
    edges: list[tuple[int, int]] = []
    for k in keys:
        if type(k) is Node:
            for e, x in zip(k.next, k.inputs):
                if e is None and id(x) not in const:  # a constant: a box before its consumer
                    const[id(x)] = len(nodes)
                    nodes.append(x)
        index[k] = me = len(nodes)
        nodes.append(tensor_of[k])
        if type(k) is Node:
            edges.extend((const[id(x)] if e is None else index[e], me) for e, x in zip(k.next, k.inputs))
    return nodes, edges


def count_nodes(root: Any) -> int:
    """How many nodes are reachable from ``root`` (a Value, Var or Tensor), leaves
    included; a node used twice counts once. A Tensor's ``backward()`` releases the
    graph it ran through (unless ``retain_graph=True``), after which only the root is
    reachable: count, or draw, before the backward.

    >>> from duograd.scalar import Value
    >>> a, b = Value(2.0), Value(3.0)
    >>> count_nodes(a * b + a)     # a, b, a*b, (a*b)+a
    4
    """
    return len(_walk(root)[0])


# ---------------------------------------------------------------- labels

def _fmt(x: float) -> str:
    return f"{x:.4g}"


def _preview(a: np.ndarray) -> str:
    """A short, deterministic summary of an array's values."""
    if a.size == 0:
        return "[]"
    if a.size <= 4:
        return "[" + ", ".join(_fmt(v) for v in a.ravel().tolist()) + "]"
    return f"[{_fmt(float(a.min()))} .. {_fmt(float(a.max()))}] mean {_fmt(float(a.mean()))}"


def _kind(node: Any, is_root: bool) -> str:
    if is_root:
        return "root"
    if isinstance(node, Tensor):
        if type(node._node) is Node:
            return "op"
        return "param" if node.requires_grad else "const"
    return "op" if node._op else "param"


def _label(node: Any) -> str:
    """The lines of a node's box: the operation, then its value (scalars) or its
    shape and a summary of its values (tensors), then its gradient when it has one."""
    if isinstance(node, Tensor):
        n = node._node
        if type(n) is not Node:
            head = "leaf" if node.requires_grad else "const"
        else:
            head = n.op.name + (" (released)" if n.inputs is None else "")
        lines = [head, f"{node.shape} {node.dtype}", _preview(node._data)]
        if node.grad is not None:
            lines.append("grad " + _preview(node.grad._data))
        return "\n".join(lines)
    lines = [node._op or "leaf", "data " + _fmt(node.data)]  # a scalar Value or Var
    grad = getattr(node, "grad", None)  # Value has one, Var does not
    if isinstance(grad, float):
        lines.append("grad " + _fmt(grad))
    return "\n".join(lines)


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _render_dot(name: str, rankdir: str, node_style: str, boxes: Sequence[tuple[str, str]],
               arrows: Sequence[tuple[int, int, str]]) -> str:
    """DOT source: the one renderer of ``to_dot`` and ``Explanation.to_dot``. ``boxes`` are
    (label, extra attributes such as ``', color=red'``) numbered n0, n1, ... in order;
    ``arrows`` are (from, to, attributes, or "" for none).

    >>> print(_render_dot("g", "LR", "shape=box", [("a", ""), ('say "b"', ", color=red")], [(0, 1, "")]), end="")
    digraph g {
      rankdir=LR;
      node [shape=box];
      n0 [label="a"];
      n1 [label="say \\"b\\"", color=red];
      n0 -> n1;
    }
    """
    out = [f"digraph {name} {{", f"  rankdir={rankdir};", f"  node [{node_style}];"]
    out.extend(f"  n{i} [label={_quote(label)}{attrs}];" for i, (label, attrs) in enumerate(boxes))
    out.extend(f"  n{a} -> n{b}{f' [{attrs}]' if attrs else ''};" for a, b, attrs in arrows)
    out.append("}")
    return "\n".join(out) + "\n"


def to_dot(root: Any, rankdir: str = "auto") -> str:
    """DOT source (a ``digraph``) for the graph behind ``root``: one box per node with
    its operation and value (or shape and values), one arrow per input.

    ``rankdir`` is Graphviz's: "LR" (inputs on the left), "TB" (inputs on top), or
    "auto", which picks TB for a graph much deeper than it is wide (a network's loss)
    and LR otherwise, so neither kind becomes a thin strip.

    >>> from duograd.scalar import Value
    >>> src = to_dot(Value(2.0) * 3)
    >>> src.splitlines()[0], src.count("->")
    ('digraph duograd {', 2)
    """
    if rankdir not in ("auto", "LR", "TB", "RL", "BT"):
        raise ValueError(f"to_dot: rankdir must be 'auto', 'LR', 'TB', 'RL' or 'BT', got {rankdir!r}")
    nodes, edges = _walk(root)
    if rankdir == "auto":
        rankdir = _orientation(len(nodes), edges)
    last = len(nodes) - 1
    boxes = [(_label(node), f', fillcolor="{_COLOURS[_kind(node, i == last)]}"') for i, node in enumerate(nodes)]
    return _render_dot("duograd", rankdir, 'shape=box, style="rounded,filled", fontname="Helvetica", fontsize=10',
                      boxes, [(a, b, "") for a, b in edges])


def _orientation(n: int, edges: Sequence[tuple[int, int]]) -> str:
    """"TB" when the layering is more than 2.5 times deeper than its widest layer."""
    if n == 0:
        return "LR"
    layer = _layers(n, edges)
    depth = max(layer) + 1
    width = max(np.bincount(layer))
    return "TB" if depth > 2.5 * width else "LR"


# ---------------------------------------------------------------- drawing

def draw(root: Any, path: str | os.PathLike, engine: str = "auto") -> str:
    """Write a PNG of the graph behind ``root`` at ``path`` and its DOT source beside it
    (same path, suffix ``.dot``); return the PNG's path.

    ``engine="auto"`` uses Graphviz's ``dot`` when it is on the PATH (falling back if it
    fails) and the built-in matplotlib layout otherwise; ``"dot"`` or ``"matplotlib"``
    forces one.

    >>> import os, tempfile
    >>> from duograd.scalar import Value
    >>> a = Value(2.0)
    >>> png = draw(a * a + 1, os.path.join(tempfile.mkdtemp(), "g.png"), engine="matplotlib")
    >>> os.path.exists(png), os.path.exists(png[:-4] + ".dot")
    (True, True)
    """
    if engine not in ("auto", "dot", "matplotlib"):
        raise ValueError(f"draw: engine must be 'auto', 'dot' or 'matplotlib', got {engine!r}")
    return _write_png(to_dot(root), path, lambda png: _draw_matplotlib(root, png), engine)


def _write_png(source: str, path: str | os.PathLike, fallback: Any, engine: str = "auto") -> str:
    """Write ``source`` (DOT) beside ``path`` (suffix ``.dot``) and the PNG at ``path``: with
    Graphviz's ``dot`` (``engine`` "auto" or "dot") or ``fallback(png)`` (matplotlib); the
    one writer of ``draw`` and ``Explanation.draw``. Returns the PNG's path."""
    png = os.fspath(path)
    dot_path = os.path.splitext(png)[0] + ".dot"
    os.makedirs(os.path.dirname(os.path.abspath(png)), exist_ok=True)
    with open(dot_path, "w", encoding="utf-8") as f:
        f.write(source)

    dot_bin = shutil.which("dot")
    if engine == "dot" and dot_bin is None:
        raise RuntimeError("draw: engine='dot' needs Graphviz's `dot` on the PATH "
                           "(apt install graphviz / brew install graphviz)")
    if engine != "matplotlib" and dot_bin is not None:
        run = subprocess.run([dot_bin, "-Tpng", dot_path, "-o", png],
                             capture_output=True, text=True)
        if run.returncode == 0:
            return png
        if engine == "dot":
            raise RuntimeError(f"draw: `dot` failed ({run.returncode}): {run.stderr.strip()}")
    fallback(png)
    return png


def _layers(n: int, edges: Sequence[tuple[int, int]]) -> list[int]:
    """Longest-path layering: a computed node sits one column right of its deepest
    input. A leaf then moves right to just before its first consumer, so a bias does
    not start at the far left and cross the whole picture. Nodes arrive inputs-first
    (``_walk``'s order), so one pass in each direction suffices."""
    layer = [0] * n
    leaf = [True] * n
    for a, b in sorted(edges, key=lambda e: e[1]):
        layer[b] = max(layer[b], layer[a] + 1)
        leaf[b] = False
    first_use: dict[int, int] = {}
    for a, b in edges:
        first_use[a] = min(first_use.get(a, layer[b]), layer[b])
    for v in range(n):
        if leaf[v] and v in first_use:
            layer[v] = first_use[v] - 1
    return layer


def _order_columns(layer: list[int], edges: Sequence[tuple[int, int]]) -> list[list[int]]:
    """Vertices of each column, top to bottom, after barycentre sweeps that pull each
    vertex towards the mean row of its neighbours (fewer crossing arrows). Every edge
    must join neighbouring columns."""
    cols: list[list[int]] = [[] for _ in range(max(layer) + 1)]
    for v, c in enumerate(layer):
        cols[c].append(v)
    ins: dict[int, list[int]] = {}
    outs: dict[int, list[int]] = {}
    for a, b in edges:
        ins.setdefault(b, []).append(a)
        outs.setdefault(a, []).append(b)
    # Rows as fractions of their column's height, so columns of any size compare.
    pos = {v: r / len(col) for col in cols for r, v in enumerate(col)}

    def sweep(columns: range, neighbours: dict[int, list[int]]) -> None:
        for c in columns:
            def key(v: int) -> tuple[float, int]:
                ns = neighbours.get(v)
                return (sum(pos[u] for u in ns) / len(ns) if ns else pos[v], v)
            cols[c].sort(key=key)
            pos.update((v, r / len(cols[c])) for r, v in enumerate(cols[c]))

    for _ in range(3):
        sweep(range(1, len(cols)), ins)
        sweep(range(len(cols) - 2, -1, -1), outs)
    return cols


def _draw_matplotlib(root: Any, png: str) -> None:
    """The fallback renderer: a layered layout in matplotlib (Agg, no display)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure  # no pyplot: no display, no global state

    nodes, edges = _walk(root)
    n = len(nodes)
    labels = [_label(v) for v in nodes]
    layer = _layers(n, edges)
    # An edge that skips columns is routed through invisible waypoints, one per
    # column crossed, which take part in the ordering, so it bends around boxes
    # instead of running through them (the Sugiyama method, as dot does).
    routes: list[list[int]] = []
    segments: list[tuple[int, int]] = []
    for a, b in edges:
        route = [a]
        for c in range(layer[a] + 1, layer[b]):
            route.append(len(layer))
            layer.append(c)
        route.append(b)
        routes.append(route)
        segments.extend(zip(route, route[1:]))
    cols = _order_columns(layer, segments)
    across = _orientation(n, edges) == "LR"  # layers run left to right, else top to bottom

    # Sizes in inches, from the longest label line and the tallest label. A layer's
    # pitch is a box plus a gap along the flow; a slot's pitch is a box plus a gap
    # across it.
    char_w, line_h = 0.075, 0.16
    box_w = max(len(line) for t in labels for line in t.split("\n")) * char_w
    box_h = max(t.count("\n") + 1 for t in labels) * line_h
    layer_pitch = box_w + 0.7 if across else box_h + 0.55
    slot_pitch = box_h + 0.3 if across else box_w + 0.3
    along = len(cols) * layer_pitch + 0.4
    wide = max(len(c) for c in cols) * slot_pitch + 0.4
    width, height = (along, wide) if across else (wide, along)
    # Keep a huge graph to a sane image size: lower the resolution, not the layout.
    dpi = max(10, min(100, int(8000 / max(width, height))))

    fig = Figure(figsize=(width, height), dpi=dpi)
    FigureCanvasAgg(fig)
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, width)
    ax.set_ylim(0, height)
    ax.axis("off")

    xy: dict[int, tuple[float, float]] = {}
    for c, col in enumerate(cols):
        first = (wide - (len(col) - 1) * slot_pitch) / 2  # centre each layer across the flow
        for r, v in enumerate(col):
            t = 0.2 + (c + 0.5) * layer_pitch
            u = first + r * slot_pitch
            xy[v] = (t, wide - u) if across else (u, height - t)

    texts = {}
    for v in range(n):
        x, y = xy[v]
        colour = _COLOURS[_kind(nodes[v], v == n - 1)]
        texts[v] = ax.text(x, y, labels[v], ha="center", va="center", fontsize=8,
                           family="monospace", zorder=3,
                           bbox=dict(boxstyle="round,pad=0.3", fc=colour, ec="#444444", lw=0.8))
    # Arrows leave a box's downstream side and enter the next box's upstream side:
    # measure the boxes once they are laid out.
    fig.canvas.draw()
    to_data = ax.transData.inverted()
    half = {}
    for v, t in texts.items():
        (x0, y0), (x1, y1) = to_data.transform(t.get_bbox_patch().get_window_extent())
        half[v] = ((x1 - x0) / 2, 0.0) if across else (0.0, -(y1 - y0) / 2)

    def side(v: int, sign: int) -> tuple[float, float]:
        return (xy[v][0] + sign * half[v][0], xy[v][1] + sign * half[v][1])

    for route in routes:
        pts = [side(route[0], +1)] + [xy[v] for v in route[1:-1]]
        if len(pts) > 1:
            ax.plot(*zip(*pts), color="#555555", lw=0.8, zorder=2)
        ax.annotate("", xy=side(route[-1], -1), xytext=pts[-1], zorder=2,
                    arrowprops=dict(arrowstyle="-|>", color="#555555", lw=0.8,
                                    shrinkA=0, shrinkB=0, mutation_scale=8))
    fig.savefig(png, dpi=dpi, facecolor="white")
