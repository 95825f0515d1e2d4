"""Stage: inside a gradient. ``dg.explain``, ``dg.detect_anomaly``, hooks and checkpointing.

1. The ``explain`` table of the spiral MLP's loss (locations recorded, so ``where``
   shows this file's lines) and its picture, the biases' summing edges in blue.
2. Ten planted wrong VJP rules, each a user-defined Primitive inside the MLP loss:
   how many ``check=True`` flags exactly (the planted row and nothing else).
3. Ten planted NaN/inf sources: how many ``detect_anomaly`` locates at the right
   operation, pass and line; one message kept verbatim (the masked-``where`` trap).
4. Vanishing gradients seen through hooks: the gradient norm at each layer's output of
   a 20-layer sigmoid MLP against a relu one.
5. Costs: anomaly mode per operation (on against off), and ``dg.checkpoint`` on a
   32-layer tanh MLP of width 512, batch 256, in segments of ceil(sqrt(32)) = 6 layers:
   peak memory of forward + backward (tracemalloc, as benchmarks/run.py measures it) and
   time, against the plain step, with the gradients compared bit for bit.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any, Callable

import numpy as np

import duograd as dg
from duograd import nn
from duograd.nn import functional as F

from . import check_size, figure, make_spiral, median_time, planted, save
from .planted import NAN_SOURCES, PLANTED, line_of, nan_source

SEED = 0


# ---------------------------------------------------------------- 1. the explain table

def spiral_loss(bad: Any = None, where: str = "none") -> dg.Tensor:
    """The spiral MLP's loss (2 -> 16 -> 16 -> 2, 350 points), optionally with a planted
    primitive ``bad`` at ``where``; built with locations recorded.

    >>> float(spiral_loss()) > 0
    True
    """
    X, y = make_spiral(350, rng=SEED)
    model = nn.MLP(2, [16, 16, 2], rng=SEED)
    l1, l2, l3 = model.layers
    x = dg.tensor(X)
    with dg.anomaly.record_locations():
        h = (x @ l1.weight.T + l1.bias).relu()
        if where == "square":
            h = bad(h, l2.weight.T).tanh()
        elif where == "pair":
            h = bad(h @ l2.weight.T, l2.bias * 0.5 + 1.0).tanh()
        elif where == "unary":
            h = bad(h @ l2.weight.T + l2.bias)
        else:
            h = (h @ l2.weight.T + l2.bias).relu()
        return F.cross_entropy(h @ l3.weight.T + l3.bias, y)


def locate_nans() -> dict[str, Any]:
    """Run every NaN source under anomaly mode; count those located right.

    >>> locate_nans()["located"]
    10
    """
    rows, located, message = [], 0, ""
    for case, (op, pass_, marker) in NAN_SOURCES.items():
        got: Any = None
        with np.errstate(all="ignore"), dg.detect_anomaly():
            try:
                nan_source(case).backward()
            except dg.AnomalyError as e:
                got = e
        want_where = f"{os.path.basename(planted.__file__)}:{line_of(marker)}"
        ok = got is not None and (got.op, got.pass_) == (op, pass_) and \
            (got.where or "").endswith(want_where)
        located += ok
        rows.append({"case": case, "op": None if got is None else got.op,
                     "pass": None if got is None else got.pass_,
                     "where": None if got is None else os.path.basename(got.where or "?"),
                     "located": bool(ok)})
        if case.startswith("masked"):
            message = str(got).replace(str(Path(__file__).parent) + os.sep, "")
    return {"located": located, "total": len(NAN_SOURCES), "rows": rows,
            "masked_where_message": message}


# ---------------------------------------------------------------- 4. vanishing gradients

def layer_gradient_norms(activation: str, depth: int = 20, width: int = 32,
                         batch: int = 64) -> list[float]:
    """The gradient norm at each hidden layer's output (hooks), input side first.

    >>> len(layer_gradient_norms("relu", depth=3, width=4, batch=2))
    3
    """
    rng = np.random.default_rng(SEED)
    h = dg.tensor(rng.standard_normal((batch, width)))
    norms: list[float] = [0.0] * depth
    handles = []
    for k in range(depth):
        W = dg.tensor(rng.standard_normal((width, width)) * np.sqrt(1.0 / width), requires_grad=True)
        h = h @ W
        h = h.sigmoid() if activation == "sigmoid" else h.relu()

        def keep(g: dg.Tensor, k: int = k) -> None:
            norms[k] = float(np.linalg.norm(g.detach().numpy()))
        handles.append(h.register_hook(keep))
    (h * h).sum().backward()
    for hd in handles:
        hd.remove()
    return norms


# ---------------------------------------------------------------- 5. costs

def anomaly_overhead(n_ops: int, repeats: int) -> dict[str, Any]:
    """Seconds per op of a chain of tiny ops, anomaly mode off and on.

    >>> anomaly_overhead(10, 1)["ratio_on_off"] > 0
    True
    """
    x0 = dg.tensor(np.full((4, 4), 0.3), requires_grad=True)

    def chain() -> None:
        y = x0
        for k in range(n_ops):
            y = (y * 0.9).tanh() if k % 2 else y + 0.1
        y.sum().backward()

    def on() -> None:
        with dg.detect_anomaly():
            chain()

    off_t, on_t = [], []
    for _ in range(repeats):  # interleaved, so a drifting machine slows both alike
        off_t.append(median_time(chain, 1))
        on_t.append(median_time(on, 1))
    per = 1.5 * n_ops + 1  # primitive calls per op step, roughly: report per chain op
    off, onv = float(np.median(off_t)), float(np.median(on_t))
    return {"ops": n_ops, "off_us_per_op": off / per * 1e6, "on_us_per_op": onv / per * 1e6,
            "ratio_on_off": onv / off, "target_on": "<= 2x"}


def _deep_mlp(depth: int, width: int, batch: int) -> tuple[list, dg.Tensor]:
    rng = np.random.default_rng(SEED)
    params = [(dg.tensor(rng.standard_normal((width, width)) / np.sqrt(width), requires_grad=True),
               dg.tensor(np.zeros(width), requires_grad=True)) for _ in range(depth)]
    return params, dg.tensor(rng.standard_normal((batch, width)))


def _run_layers(layers: list) -> Callable[[dg.Tensor], dg.Tensor]:
    def run(h: dg.Tensor) -> dg.Tensor:
        for W, b in layers:
            h = (h @ W + b).tanh()
        return h
    return run


def checkpoint_tradeoff(depth: int, width: int, batch: int, repeats: int) -> dict[str, Any]:
    """Plain against checkpointed forward + backward of the deep tanh MLP.

    >>> r = checkpoint_tradeoff(4, 8, 4, 1)
    >>> r["segment"], r["bit_identical"]
    (2, True)
    """
    from benchmarks.run import _peak_bytes

    params, x = _deep_mlp(depth, width, batch)
    flat = [t for p in params for t in p]
    seg = math.ceil(math.sqrt(depth))

    def step(ckpt: bool) -> list[dg.Tensor]:
        h = x
        for k in range(0, depth, seg):
            block = _run_layers(params[k:k + seg])
            h = dg.checkpoint(block, h) if ckpt else block(h)
        return list(dg.grad((h * h).mean(), flat))

    g_plain, g_ck = step(False), step(True)
    identical = all(np.array_equal(a.detach().numpy(), b.detach().numpy())
                    for a, b in zip(g_plain, g_ck))
    grad_bytes = sum(t._data.nbytes for t in flat)
    peak_plain, peak_ck = _peak_bytes(lambda: step(False)), _peak_bytes(lambda: step(True))
    tp, tc = [], []
    for _ in range(repeats):
        tp.append(median_time(lambda: step(False), 1, warmup=0))
        tc.append(median_time(lambda: step(True), 1, warmup=0))
    t_plain, t_ck = float(np.median(tp)), float(np.median(tc))
    act_plain, act_ck = peak_plain - grad_bytes, peak_ck - grad_bytes
    # The sqrt(n)-segments model: plain keeps every layer's activations (n of them); with
    # segments of s layers, the n/s segment inputs are kept and one segment's s layers are
    # recomputed at a time, so n/s + s layers' worth. Per-layer bytes from the plain run.
    kept = math.ceil(depth / seg) + seg
    predicted_ck = grad_bytes + act_plain * kept / depth
    return {
        "depth": depth, "width": width, "batch": batch, "segment": seg,
        "peak_mib_plain": peak_plain / 2**20, "peak_mib_checkpoint": peak_ck / 2**20,
        "gradient_mib": grad_bytes / 2**20,
        "memory_ratio": peak_plain / peak_ck,
        "memory_ratio_without_gradients": act_plain / act_ck if act_ck > 0 else None,
        "seconds_plain": t_plain, "seconds_checkpoint": t_ck, "time_ratio": t_ck / t_plain,
        "predicted_peak_mib_checkpoint": predicted_ck / 2**20,
        "predicted_memory_ratio": peak_plain / predicted_ck,
        "predicted_layers_kept": kept,
        "bit_identical": bool(identical), "targets": {"memory": ">= 3x lower", "time": "<= 1.4x"},
    }


# ---------------------------------------------------------------- the stage

def _draw_explain(ex: Any, png: Path) -> None:
    """dg.explain's picture, laid out for a page: each node's label on one line and the
    ranks packed close, so a 24-node chain reads as a picture about as wide as it is
    tall (explain's own drawing stacks four-line boxes: a tall, narrow sliver). Without
    Graphviz, explain's own matplotlib drawing."""
    import re
    import shutil
    import subprocess

    dot = ex.to_dot()
    dot = re.sub(r'label="([^"]*)"', lambda m: 'label="' + m.group(1).replace("\\n", "  |  ") + '"',
                 dot)
    dot = dot.replace("rankdir=BT;", "rankdir=BT; ranksep=0.18; nodesep=0.3; dpi=96;", 1)
    dot = dot.replace('node [shape=box, fontname="Helvetica"]',
                      'node [shape=box, fontname="Helvetica", fontsize=11, height=0.3]', 1)
    png.with_suffix(".dot").write_text(dot, encoding="utf-8")
    exe = shutil.which("dot")
    if exe is None or subprocess.run([exe, "-Tpng", str(png.with_suffix(".dot")), "-o", str(png)],
                                     capture_output=True).returncode != 0:
        ex.draw(str(png))


def run(out: str | os.PathLike, size: str = "full", progress: bool = True) -> dict[str, Any]:
    """Every measurement of the stage and its figures.

    >>> import tempfile
    >>> m = run(tempfile.mkdtemp(), size="smoke", progress=False)
    >>> m["planted_rules"]["located"], m["nan_sources"]["located"]
    (10, 10)
    """
    check_size(size)
    out = Path(out)
    result: dict[str, Any] = {}

    loss = spiral_loss()
    ex = dg.explain(loss)
    table = str(ex).replace(str(Path(__file__).parent) + os.sep, "")
    bias_rows = [{"row": k, "op": r["op"], "shape": list(r["shape"]),
                  "input_shapes": [list(s) for s in r["input_shapes"]],
                  "summed_axes": [None if a is None else list(a) for a in r["summed_axes"]],
                  "where": os.path.basename(r["where"] or "")}
                 for k, r in enumerate(ex.rows) if r["op"] == "add" and any(r["summed_axes"])]
    _draw_explain(ex, out / "inside_explain.png")
    cells = [line.split("  ") for line in table.splitlines()[2:-1]]
    result["explain"] = {"table": table, "rows": len(ex.rows), "bias_rows": bias_rows,
                         "cells": [[c.strip() for c in row if c.strip()] for row in cells],
                         "total_saved_bytes": ex.total_saved_bytes,
                         "edge_example": next((lbl for _, _, lbl in ex.edges
                                               if "sum over" in lbl and "→ (16,)" in lbl), None)}

    planted_rows, located, false_flags = [], 0, 0
    for what, (bad, where) in PLANTED.items():
        exb = dg.explain(spiral_loss(bad, where), check=True)
        names = [r["op"] for r in exb.flagged]
        ok = names == [bad.name]
        located += ok
        false_flags += sum(n != bad.name for n in names)
        row = next((r for r in exb.rows if r["op"] == bad.name), {})
        planted_rows.append({"bug": what, "op": bad.name, "flagged": names,
                             "fd_error": row.get("fd_error"), "located": bool(ok)})
    clean = dg.explain(spiral_loss(), check=True)
    result["planted_rules"] = {
        "located": located, "total": len(PLANTED), "other_rows_flagged": false_flags,
        "clean_loss_flagged": len(clean.flagged),
        "clean_worst_fd_error": max(r["fd_error"] for r in clean.rows if r["fd_error"] is not None),
        "rows": planted_rows}
    example_bad, example_where = PLANTED["mean for sum in a bias"]
    result["planted_rules"]["example_table"] = str(
        dg.explain(spiral_loss(example_bad, example_where), check=True)).replace(
        str(Path(__file__).parent) + os.sep, "")

    result["nan_sources"] = locate_nans()

    depth = 20 if size != "smoke" else 6
    result["vanishing"] = {"depth": depth, "sigmoid": layer_gradient_norms("sigmoid", depth),
                           "relu": layer_gradient_norms("relu", depth)}
    fig, ax = figure(size=(6.5, 4.2))
    layers = np.arange(1, depth + 1)
    ax.semilogy(layers, result["vanishing"]["sigmoid"], "o-", label="sigmoid")
    ax.semilogy(layers, result["vanishing"]["relu"], "s-", label="relu")
    ax.set_xlabel("hidden layer (1 = nearest the input)")
    ax.set_ylabel("gradient norm at the layer's output (log scale)")
    ax.set_title(f"Gradient norms through hooks, {depth}-layer MLP, width 32")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    vanishing_png = save(fig, out, "inside_vanishing.png")

    repeats = {"full": 7, "quick": 3, "smoke": 1}[size]
    result["anomaly_cost"] = anomaly_overhead(100 if size != "smoke" else 10, repeats)
    # Two configurations: a wide one whose peak is dominated by its gradients (64 MiB of
    # weights' gradients, which checkpointing cannot drop), and a deep one with a large batch
    # whose peak is dominated by activations, where checkpointing is meant to help.
    ck_repeats = {"full": 3, "quick": 1, "smoke": 1}[size]
    dims = (32, 512, 256) if size != "smoke" else (8, 16, 8)
    result["checkpoint"] = checkpoint_tradeoff(*dims, repeats=ck_repeats)
    dims = (64, 64, 1024) if size != "smoke" else (16, 8, 32)
    result["checkpoint_activations"] = checkpoint_tradeoff(*dims, repeats=ck_repeats)

    fig, axes = figure(ncols=2, size=(10.5, 4.2))
    for ax, key, what in ((axes[0], "checkpoint", "gradient-dominated"),
                          (axes[1], "checkpoint_activations", "activation-dominated")):
        c = result[key]
        ax.bar([0, 1], [c["peak_mib_plain"], c["peak_mib_checkpoint"]],
               color=["#888888", "#4477aa"], label="measured peak (tracemalloc)")
        ax.bar([0, 1], [c["gradient_mib"]] * 2, color="none", edgecolor="black", hatch="//",
               label="of which the gradients")
        ax.plot([0.7, 1.3], [c["predicted_peak_mib_checkpoint"]] * 2, color="#cc3311", lw=2,
                ls="--", label="sqrt(n)-segments prediction")
        for k, (mib, sec) in enumerate(((c["peak_mib_plain"], c["seconds_plain"]),
                                        (c["peak_mib_checkpoint"], c["seconds_checkpoint"]))):
            ax.text(k, mib, f"{mib:.0f} MiB\n{sec * 1e3:.0f} ms", ha="center", va="bottom",
                    fontsize=9)
        ax.set_xticks([0, 1], ["plain", f"checkpoint\n(segments of {c['segment']})"])
        ax.set_ylabel("peak memory of forward + backward (MiB)")
        ax.set_title(f"{what}: {c['depth']} tanh layers,\nwidth {c['width']}, batch {c['batch']}: "
                     f"{c['memory_ratio']:.2f}x less memory", fontsize=10)
        ax.margins(y=0.25)
        ax.legend(loc="upper right", fontsize=8)
    ckpt_png = save(fig, out, "inside_checkpoint.png")
    result["figures"] = ["inside_explain.png", vanishing_png, ckpt_png]
    return result
