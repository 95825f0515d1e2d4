"""``dg.explain``: one backward pass, node by node, as a table and a picture.

``explain(loss)`` runs the one ``autograd.backpropagate`` (keeping the graph) with itself
as a listener (``duograd._context``) on top of the stack: ``on_node`` gives each node's
complete cotangent (summed over every use), ``on_edge`` each rule's result before and
after the broadcasting adjoint. The listener is opaque: while it walks, the listeners
below it see nothing, so ``explain`` never writes a ``.grad``, fires no hook and lands
in no recording. For every node it records what the backward did there, above all which
axes the broadcasting adjoint summed for each input (the bias of a layer: axis 0 of the
batch).

``check=True`` also tests each node's VJP rules against central finite differences of
the node's own forward (and, to catch a rule detached from the graph, the rule's own
derivative against finite differences of the rule), along random directions, in
float64. A node is flagged only when every direction disagrees by more than the
finite differences' own error estimate (the change between steps h and 2h, plus
round-off) and a relative 1e-4: a kink of relu that one difference straddles does not
flag it, while a wrong rule disagrees in every direction.

``where`` (file:line) is known for nodes made under ``dg.detect_anomaly()`` or
``duograd.anomaly.record_locations()``; elsewhere it is None (finding it costs a walk
of the Python stack per operation, which duograd does not pay by default).

>>> import duograd as dg
>>> x = dg.tensor(np.ones((350, 3)))
>>> W = dg.tensor(np.ones((3, 16)), requires_grad=True)
>>> b = dg.tensor(np.zeros(16), requires_grad=True)
>>> ex = dg.explain((x @ W + b).sum())
>>> [(r["op"], r["summed_axes"]) for r in ex.rows[:2]]
[('sum', ((),)), ('add', ((), (0,)))]
>>> b.grad is None
True
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from . import _context, autograd
from ._node import Node
from .anomaly import where_of
from .autograd import _fit, enable_grad, no_grad
from ._tensor import Tensor, _wrap
from .viz import _quote, _render_dot, _write_png

COLUMNS = 100
RTOL = 1e-4          # relative disagreement allowed on top of the FD error estimate
DIRECTIONS = 3       # random directions per check; a node is flagged if all disagree


def summed_axes(rule_shape: tuple[int, ...], input_shape: tuple[int, ...]) -> tuple[int, ...]:
    """The axes of a cotangent of ``rule_shape`` that the adjoint of broadcasting
    ``input_shape`` to it sums over: the leading axes broadcasting added and those where
    the input has size 1.

    >>> summed_axes((350, 16), (16,)), summed_axes((3, 4), (3, 1)), summed_axes((2, 2), (2, 2))
    ((0,), (1,), ())
    """
    lead = len(rule_shape) - len(input_shape)
    return tuple(range(lead)) + tuple(lead + i for i, n in enumerate(input_shape)
                                      if n == 1 and rule_shape[lead + i] != 1)


def _shape(s: Sequence[int]) -> str:
    return "(" + ",".join(str(n) for n in s) + ("," if len(s) == 1 else "") + ")"


def _base(a: np.ndarray) -> np.ndarray:
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a


def _kw_arrays(kw: dict | None) -> list[np.ndarray]:
    out: list[np.ndarray] = []
    stack = list(kw.values()) if kw else []
    while stack:
        v = stack.pop()
        if isinstance(v, np.ndarray):
            out.append(v)
        elif isinstance(v, (tuple, list)):
            stack.extend(v)
    return out


class Explanation:
    """What ``explain`` returns: ``.rows`` (dicts, in backward order), ``str()`` (a table
    in 100 columns), ``.to_dot()``, ``.draw(path)``, ``.total_saved_bytes``, ``.flagged``
    (the rows ``check=True`` found wrong)."""

    def __init__(self, rows: list[dict[str, Any]], edges: list[tuple[int, int, str]],
                 checked: bool) -> None:
        self.rows = rows
        self.edges = edges  # (row of the consumer, row of the input, label)
        self.checked = checked

    @property
    def total_saved_bytes(self) -> int:
        return int(sum(r["saved_bytes"] for r in self.rows))

    @property
    def flagged(self) -> list[dict[str, Any]]:
        return [r for r in self.rows if r.get("flagged")]

    def __repr__(self) -> str:
        return f"<Explanation of {len(self.rows)} nodes, {self.total_saved_bytes} bytes saved>"

    def __str__(self) -> str:
        head = ["#", "op", "shape", "inputs", "summed axes", "|grad|", "saved", "where"]
        if self.checked:
            head.insert(7, "fd error")
        lines = []
        for k, r in enumerate(self.rows):
            ins = " ".join(_shape(s) for s in r["input_shapes"]) or "-"
            axes = " ".join("-" if a is None else ("·" if not a else _shape(a)) for a in r["summed_axes"]) or "-"
            cells = [str(k), r["op"], _shape(r["shape"]), ins, axes, f"{r['grad_norm']:.3g}",
                     _bytes(r["saved_bytes"])]
            if self.checked:
                e = r.get("fd_error")
                cells.append("-" if e is None else f"{e:.1e}" + (" !!" if r.get("flagged") else ""))
            w = r["where"]
            cells.append("-" if w is None else w.rsplit("/", 1)[-1])
            lines.append(cells)
        widths = [max(len(h), *(len(c[i]) for c in lines)) if lines else len(h)
                  for i, h in enumerate(head)]
        # Fit 100 columns: the variable-width columns give way, the last one first.
        for i in (len(head) - 1, 3, 4):
            over = sum(widths) + 2 * (len(widths) - 1) - COLUMNS
            if over > 0:
                widths[i] = max(len(head[i]), widths[i] - over)

        def fmt(cells: list[str]) -> str:
            parts = [c if len(c) <= w else c[: w - 1] + "…" for c, w in zip(cells, widths)]
            return "  ".join(p.ljust(w) for p, w in zip(parts, widths)).rstrip()

        out = [fmt(head), fmt(["-" * w for w in widths])] + [fmt(c) for c in lines]
        out.append(f"total saved: {_bytes(self.total_saved_bytes)} in {len(self.rows)} nodes"
                   + (f"; flagged by the check: {len(self.flagged)}" if self.checked else ""))
        return "\n".join(out)

    def to_dot(self) -> str:
        """DOT source: one box per node (op, shape, |grad|, saved bytes, where), one edge per
        input labelled with the shapes and, where the adjoint summed, the axes."""
        boxes = []
        for r in self.rows:
            label = [f"{r['op']} {_shape(r['shape'])}", f"|grad| {r['grad_norm']:.3g}"]
            if r["saved_bytes"]:
                label.append(f"saved {_bytes(r['saved_bytes'])}")
            if r.get("fd_error") is not None:
                label.append(f"fd error {r['fd_error']:.1e}")
            if r["where"]:
                label.append(r["where"].rsplit("/", 1)[-1])
            boxes.append(("\n".join(label), ", color=red, penwidth=2" if r.get("flagged") else ""))
        arrows = [(producer, consumer, f"label={_quote(label)}"
                   + (", color=blue, fontcolor=blue, penwidth=2" if "sum over" in label else ""))
                  for consumer, producer, label in self.edges]
        return _render_dot("explain", "BT", 'shape=box, fontname="Helvetica"', boxes, arrows)

    def draw(self, path: str) -> str:
        """Write the picture (PNG, via Graphviz's dot when installed, else matplotlib) at
        ``path`` and the DOT source beside it; returns the PNG's path."""
        return _write_png(self.to_dot(), path, self._draw_matplotlib)

    def _draw_matplotlib(self, png: str) -> None:
        """Without Graphviz: the rows top to bottom in backward order, each edge an arc on
        the right from a consumer to its input, labelled (summing edges in blue)."""
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        n = len(self.rows)
        fig = Figure(figsize=(10, 0.45 * n + 1))
        FigureCanvasAgg(fig)
        ax = fig.add_axes((0, 0, 1, 1))
        ax.set_xlim(0, 10)
        ax.set_ylim(-n, 1)
        ax.axis("off")
        for k, r in enumerate(self.rows):
            text = f"{k}  {r['op']} {_shape(r['shape'])}   |grad| {r['grad_norm']:.3g}"
            ax.text(0.2, -k, text, va="center", family="monospace", fontsize=8,
                    bbox=dict(fc="#ffdddd" if r.get("flagged") else "#eef3ff", ec="#444444"))
        for j, (c, p, label) in enumerate(self.edges):
            blue = "sum over" in label
            x = 5.0 + 0.15 * (j % 8)
            ax.annotate("", xy=(x, -p), xytext=(x, -c), arrowprops=dict(
                arrowstyle="-|>", color="blue" if blue else "#999999",
                connectionstyle="arc3,rad=0.3"))
            if blue:
                ax.text(x + 0.3, -(c + p) / 2, label, color="blue", fontsize=7, va="center")
        fig.savefig(png, dpi=100, facecolor="white")


def _bytes(n: int) -> str:
    if n < 1024:
        return f"{n} B"
    if n < 2**20:
        return f"{n / 1024:.1f} KiB"
    return f"{n / 2**20:.1f} MiB"


def explain(output: Tensor, inputs: Tensor | Sequence[Tensor] | None = None,
            check: bool = False) -> Explanation:
    """An account of one backward pass from ``output`` (a single-element Tensor), node by
    node in the order the backward visits them, without changing any ``.grad``.

    Each row: ``op`` ("leaf" for an input), ``shape``, ``input_shapes``, ``summed_axes``
    (per input: the axes of the rule's result that the broadcasting adjoint summed;
    None for an input that gets no gradient), ``grad_norm`` (the L2 norm of the node's
    cotangent), ``saved_bytes`` (the arrays the node keeps alive for its rules: its
    inputs' buffers and array parameters, each buffer counted once, at its first row;
    leaves are yours and not counted), ``where`` (file:line that made the node, when
    locations were recorded: see ``duograd.anomaly``), and with ``check=True``
    ``fd_error`` and ``flagged``. ``inputs`` limits the walk to the paths that reach them.

    >>> import duograd as dg
    >>> x = dg.tensor([1.0, 2.0], requires_grad=True)
    >>> ex = dg.explain((x * x).sum(), check=True)
    >>> [r["op"] for r in ex.rows], [r["flagged"] for r in ex.rows]
    (['sum', 'mul', 'leaf'], [False, False, False])
    """
    if not isinstance(output, Tensor):
        raise TypeError(f"explain: expected a Tensor, got {type(output).__name__}")
    if output.numel() != 1:
        raise ValueError(f"explain: the output must have a single element; it has shape {output.shape}")
    if not output.requires_grad:
        raise RuntimeError(f"explain: the output (shape {output.shape}) does not require grad "
                           "and has no graph")
    targets = None if inputs is None else (inputs,) if isinstance(inputs, Tensor) else tuple(inputs)
    walk = _Walk()
    # Leaves are the caller's: their buffers are not counted as saved. The graph is the
    # engine's walk (the one the pass below runs).
    walk.leaf_buffers = {id(_base(k._data)) for k in autograd._toposort([output]) if type(k) is not Node}
    with _context.listening(walk):
        autograd.backpropagate([output], [autograd.ones_like_p(output)], retain_graph=True,
                               targets=targets, allow_unused=False)
    rng = np.random.default_rng(0)
    rows, edges = walk.rows, []
    for node, k in walk.row_of.items():
        row = rows[k]
        rule_shapes = row.pop("_rule_shapes")
        axes = row["summed_axes"] = tuple(row["summed_axes"])
        is_node = type(node) is Node
        if check:
            row["fd_error"], row["flagged"] = None, False
            if is_node and node.op.checkable:
                row["fd_error"], row["flagged"] = check_node(node, walk.cotangents[k], rng)
        for i, (e, x) in enumerate(zip(node.next, node.inputs) if is_node else ()):
            key = e
            if e is not None and key in walk.row_of:
                ax = axes[i]
                label = _shape(x.shape)
                if ax:
                    label = (f"{_shape(rule_shapes[i])} → {_shape(x.shape)}: sum over "
                             f"axis{'es' if len(ax) > 1 else ''} {', '.join(map(str, ax))}")
                edges.append((k, walk.row_of[key], label))
    return Explanation(rows, edges, check)


class _Walk:
    """The listener of ``explain``'s backward pass: one row per node, in the order the
    pass visits them."""

    opaque = True  # hooks, anomaly mode and recordings below do not see explain's walk

    def __init__(self) -> None:
        self.rows: list[dict[str, Any]] = []
        self.row_of: dict[Any, int] = {}
        self.cotangents: list[Tensor] = []
        self.counted: set[int] = set()
        self.leaf_buffers: set[int] = set()
        self.depth = 0

    def on_pass(self, begin: bool) -> None:
        self.depth += 1 if begin else -1

    def on_node(self, node: Any, g: Tensor) -> Tensor:
        if self.depth != 1:  # a pass inside a rule (a checkpointed block's recomputation)
            return g
        is_node = type(node) is Node
        inputs_, kw, op = (node.inputs, node.kw, node.op) if is_node else (None, None, None)
        saved = 0
        if inputs_:
            for a in [x._data for x in inputs_] + _kw_arrays(kw):
                b = _base(a)
                if id(b) not in self.counted and id(b) not in self.leaf_buffers:
                    self.counted.add(id(b))
                    saved += b.nbytes
        n = len(inputs_) if inputs_ else 0
        self.row_of[node] = len(self.rows)
        self.cotangents.append(g)
        self.rows.append({
            "op": "leaf" if op is None else op.name, "shape": g.shape,
            "input_shapes": tuple(x.shape for x in inputs_) if inputs_ else (),
            "summed_axes": [None] * n, "grad_norm": _norm(g._data),
            "saved_bytes": saved, "where": where_of(node), "_rule_shapes": [None] * n})
        return g

    def on_edge(self, node: Node, i: int, x: Tensor, raw: Tensor, gx: Tensor) -> None:
        if self.depth != 1:
            return
        row = self.rows[-1]
        if node.op.broadcast:  # the adjoint as an op of its own
            ax, rs = summed_axes(row["shape"], x.shape), row["shape"]
        else:
            rs = raw.shape
            ax = summed_axes(raw.shape, x.shape) if raw.shape != x.shape else ()
        row["summed_axes"][i] = ax
        row["_rule_shapes"][i] = rs


def _norm(a: np.ndarray) -> float:
    return float(np.sqrt(np.sum(np.square(a, dtype=np.float64))))


# ---------------------------------------------------------------- the finite-difference check

def _f64(a: np.ndarray) -> np.ndarray:
    return a.astype(np.float64) if a.dtype.kind == "f" else a


def _vjp(op: Any, i: int, g: np.ndarray, xs: list[np.ndarray], kw: dict) -> np.ndarray:
    """Input ``i``'s cotangent by the rule, on float64 copies, fitted to the input's shape."""
    with no_grad():
        ts = [_wrap(a) for a in xs]
        out = _wrap(op.forward(*xs, **kw))
        return _fit(op, i, op.vjp_rule(i)(_wrap(g), out, *ts, **kw), ts[i])._data


def _direction_check(phi: Any, x: np.ndarray, analytic: np.ndarray | None, rng: Any) -> tuple[float, bool]:
    """Compare ``<analytic, v>`` with central differences of ``phi`` at ``x`` along random
    ``v``; returns (the smallest relative error over the directions, whether every
    direction disagrees beyond the differences' own error)."""
    n = max(x.size, 1)
    h = 1e-6 * (1.0 + float(np.sqrt(np.mean(np.square(x)))) if x.size else 1.0)
    norm_a = 0.0 if analytic is None else float(np.linalg.norm(analytic))
    errors, bad = [], []
    for _ in range(DIRECTIONS):
        v = rng.standard_normal(x.shape)
        an = 0.0 if analytic is None else float(np.sum(analytic * v))
        vals = {s: phi(x + s * h * v) for s in (1, -1, 2, -2)}
        fd1 = (vals[1][0] - vals[-1][0]) / (2 * h)
        fd2 = (vals[2][0] - vals[-2][0]) / (4 * h)
        mag = max(vals[1][1], vals[-1][1], vals[2][1], vals[-2][1])
        roundoff = 1e-13 * mag / h
        scale = max(abs(an), abs(fd1), norm_a * float(np.linalg.norm(v)) / math.sqrt(n), 1e-300)
        err = abs(an - fd1)
        errors.append(err / scale)
        bad.append(err > RTOL * scale + 3 * abs(fd1 - fd2) + roundoff)
    return min(errors), all(bad)


def check_node(node: Node, g: Tensor, rng: Any) -> tuple[float, bool]:
    """The node's VJP rules against central finite differences: first order (each input's
    cotangent against the derivative of ``<g, forward>``) and the rules' own derivatives
    (against differences of the rule), which catches a rule that is right in value but
    detached from the graph. Returns (the largest relative error, whether flagged)."""
    op, kw = node.op, node.kw or {}
    xs = [_f64(x._data) for x in node.inputs]
    g64 = _f64(g._data)
    diff = [i for i, e in enumerate(node.next) if e is not None]
    worst, flagged = 0.0, False

    def at(i: int, a: np.ndarray) -> list[np.ndarray]:
        ys = list(xs)
        ys[i] = a
        return ys

    try:
        for i in diff:
            def phi(a: np.ndarray, i: int = i) -> tuple[float, float]:
                with np.errstate(all="ignore"):
                    y = op.forward(*at(i, a), **kw)
                    return float(np.sum(g64 * y)), float(np.sum(np.abs(g64 * y)))
            err, bad = _direction_check(phi, xs[i], _vjp(op, i, g64, xs, kw), rng)
            worst, flagged = max(worst, err), flagged or bad
            # The rule as a function of (g, inputs): its derivative, recorded, against FD.
            w = rng.standard_normal(xs[i].shape)
            with enable_grad():
                gl = _wrap(g64.copy(), True)
                tl = [_wrap(a.copy(), k in diff) for k, a in enumerate(xs)]
                out = op(*tl, **kw)
                ri = _fit(op, i, op.vjp_rule(i)(gl, out, *tl, **kw), tl[i])
                s = (ri * _wrap(w)).sum()
                wrt = [gl] + [tl[k] for k in diff]
                ds = autograd.grad(s, wrt, allow_unused=True) if s.requires_grad else [None] * len(wrt)
            for d, var in zip(ds, [None] + diff):
                base = g64 if var is None else xs[var]

                def psi(a: np.ndarray, var: int | None = var) -> tuple[float, float]:
                    with np.errstate(all="ignore"):
                        r = _vjp(op, i, a, xs, kw) if var is None else _vjp(op, i, g64, at(var, a), kw)
                        return float(np.sum(r * w)), float(np.sum(np.abs(r * w)))
                err, bad = _direction_check(psi, base, None if d is None else d._data, rng)
                worst, flagged = max(worst, err), flagged or bad
    except Exception:  # a rule that raises (a wrong shape, say) is wrong
        return math.inf, True
    return worst, flagged
