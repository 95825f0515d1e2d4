"""Stage 4: the same training step on the scalar engine and on the tensor engine.

Workload: an MLP(2, [16, 16, 1]) (337 parameters), 200 spiral points with labels
+-1, the mean hinge loss, full-batch gradient descent. The scalar model is
``duograd.scalar.nn.MLP`` and the tensor model ``duograd.nn.MLP`` with the scalar
model's weights copied in, so both engines compute the very same numbers; the stage
asserts that they do (loss and every gradient to 1e-10, at every timed step).

The graphs are counted by walking them (``duograd.viz.count_nodes``), not estimated:
the scalar engine records one node per arithmetic operation on one number, the tensor
engine one per operation on a whole array. The speedup is set beside the ratio of the
node counts.

Timings follow ``timeit``'s convention: Python's cyclic garbage collector is paused
while a step runs (it is collected between steps). The scalar engine allocates some
hundred thousand objects per step, and with the collector running it repeatedly
rescans them; that cost is real but belongs to CPython's memory management rather than
to the algorithm, so one extra scalar step is timed with the collector on and reported
beside the main figure.
"""

from __future__ import annotations

import contextlib
import gc
import os
import time
from typing import Any, Iterator

import numpy as np

import duograd as dg
import duograd.nn as nn
import duograd.optim as optim
from duograd import viz
from duograd.nn import functional as F
from duograd.scalar import nn as snn

from . import check_size, figure, make_spiral, quartiles, save, to_list, track

SEED = 0
SIZES = [16, 16, 1]
LR = 0.05
TOLERANCE = 1e-10
# points, scalar steps timed, tensor steps timed
CONFIG = {"full": (200, 5, 50), "quick": (200, 2, 20), "smoke": (20, 1, 3)}


def copy_weights(scalar_model: snn.MLP, tensor_model: nn.MLP) -> None:
    """Give ``tensor_model`` the weights of ``scalar_model`` (same layer sizes).

    Neuron ``j`` of a scalar layer holds row ``j`` of the tensor layer's
    ``weight`` (shape (out_features, in_features), torch's layout) and entry ``j`` of its ``bias``.

    >>> s, t = snn.MLP(2, [3, 1], rng=0), nn.MLP(2, [3, 1], rng=1)
    >>> copy_weights(s, t)
    >>> float(t.layers[0].weight.data[2, 1]) == s.layers[0].neurons[2].w[1].data
    True
    """
    tensor_model.load_state_dict(dict(zip(tensor_model.state_dict(),
                                          _scalar_arrays(scalar_model, "data"))))


def _scalar_arrays(model: snn.MLP, attr: str) -> list[np.ndarray]:
    """The scalar model's ``.data`` or ``.grad`` values in the tensor model's parameter
    order and shapes: per layer, an (nout, nin) weight, then an (nout,) bias."""
    out = []
    for layer in model.layers:
        out.append(np.array([[getattr(w, attr) for w in n.w] for n in layer.neurons]))
        out.append(np.array([getattr(n.b, attr) for n in layer.neurons]))
    return out


def _scalar_loss(model: snn.MLP, X: np.ndarray, y: np.ndarray):
    total = 0.0
    for xi, yi in zip(X.tolist(), y.tolist()):
        total = total + (1 - yi * model(xi)).relu()
    return total / len(y)


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """Collect garbage, then pause the cyclic collector for the block (as timeit does)."""
    was_on = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()


def run(out: str | os.PathLike, size: str = "full", progress: bool = True) -> dict[str, Any]:
    """Time both engines on the identical workload and count their graphs.

    >>> import tempfile
    >>> m = run(tempfile.mkdtemp(), size="smoke", progress=False)
    >>> m["parameters"], m["grad_max_abs_diff"] <= 1e-10
    (337, True)
    """
    check_size(size)
    n_points, k_scalar, k_tensor = CONFIG[size]
    X, labels = make_spiral(n_points, rng=SEED)
    y = np.where(labels == 1, 1.0, -1.0)

    smodel = snn.MLP(2, SIZES, rng=SEED)
    tmodel = nn.MLP(2, SIZES, rng=SEED)
    copy_weights(smodel, tmodel)
    sparams, tparams = smodel.parameters(), list(tmodel.parameters())
    n_params = len(sparams)
    assert n_params == sum(p.numel() for p in tparams)
    topt = optim.SGD(tparams, lr=LR)
    xt = dg.tensor(X)

    def tensor_forward():
        return F.hinge_loss(tmodel(xt), y)

    scalar_times, scalar_fwd, scalar_bwd = [], [], []
    loss_diff = grad_diff = 0.0
    nodes = {}
    sloss = None
    for step in track(range(k_scalar + 1), "scalar vs tensor steps", progress):
        # Scalar engine: one full-batch step, forward, backward and update timed. The
        # last step runs with the garbage collector on, for comparison.
        collector_on = step == k_scalar
        del sloss  # free the previous step's graph before timing the next one
        with contextlib.nullcontext() if collector_on else _collector_paused():
            t0 = time.perf_counter()
            smodel.zero_grad()
            sloss = _scalar_loss(smodel, X, y)
            t1 = time.perf_counter()
            sloss.backward()
            t2 = time.perf_counter()
            grads_s = _scalar_arrays(smodel, "grad")
            t3 = time.perf_counter()
            for p in sparams:
                p.data -= LR * p.grad
            t4 = time.perf_counter()
        if collector_on:
            scalar_gc_on = (t4 - t3) + (t2 - t0)
        else:
            scalar_fwd.append(t1 - t0)
            scalar_bwd.append(t2 - t1)
            scalar_times.append((t4 - t3) + (t2 - t0))

        # Tensor engine at the same weights (they have tracked the scalar ones so far).
        topt.zero_grad()
        tloss = tensor_forward()
        if step == 0:
            nodes = {"scalar": viz.count_nodes(sloss), "tensor": viz.count_nodes(tloss)}
        tloss.backward()
        loss_diff = max(loss_diff, abs(sloss.data - tloss.item()))
        grad_diff = max(grad_diff, max(float(np.max(np.abs(gs - p.grad.numpy())))
                                       for gs, p in zip(grads_s, tparams)))
        topt.step()
        assert loss_diff <= TOLERANCE and grad_diff <= TOLERANCE, (
            f"scalar_vs_tensor: the engines disagree at step {step}: loss differs by "
            f"{loss_diff:.3g}, a gradient by {grad_diff:.3g} (tolerance {TOLERANCE:g})")
    weight_diff = max(float(np.max(np.abs(ws - p.detach().numpy())))
                      for ws, p in zip(_scalar_arrays(smodel, "data"), tparams))

    def tensor_step():
        topt.zero_grad()
        tensor_forward().backward()
        topt.step()

    tensor_times = []
    tensor_step()  # warm-up
    with _collector_paused():
        for _ in range(k_tensor):
            t0 = time.perf_counter()
            tensor_step()
            tensor_times.append(time.perf_counter() - t0)

    t_scalar, t_tensor = float(np.median(scalar_times)), float(np.median(tensor_times))
    speedup = t_scalar / t_tensor
    node_ratio = nodes["scalar"] / nodes["tensor"]
    fig_name = _draw(out, t_scalar, t_tensor, nodes, speedup, node_ratio)
    return {
        "architecture": [2] + SIZES, "parameters": n_params, "n_points": n_points,
        "loss": "hinge (mean of relu(1 - y * score)), labels +-1", "lr": LR, "seed": SEED,
        "scalar_steps_timed": k_scalar, "tensor_steps_timed": k_tensor,
        "scalar_step_seconds": t_scalar, "tensor_step_seconds": t_tensor,
        "scalar_step_quartiles": [quartiles(scalar_times)["p25"], quartiles(scalar_times)["p75"]],
        "tensor_step_quartiles": [quartiles(tensor_times)["p25"], quartiles(tensor_times)["p75"]],
        "scalar_forward_seconds": float(np.median(scalar_fwd)),
        "scalar_backward_seconds": float(np.median(scalar_bwd)),
        "scalar_step_times": to_list(scalar_times, 6),
        "scalar_step_seconds_gc_on": scalar_gc_on,
        "timing": "median wall time per step, garbage collector paused (as timeit does)",
        "speedup": speedup,
        "scalar_nodes": nodes["scalar"], "tensor_nodes": nodes["tensor"],
        "node_ratio": node_ratio,
        "speedup_over_node_ratio": speedup / node_ratio,
        "scalar_seconds_per_node": t_scalar / nodes["scalar"],
        "tensor_seconds_per_node": t_tensor / nodes["tensor"],
        "loss_max_abs_diff": loss_diff, "grad_max_abs_diff": grad_diff,
        "weights_max_abs_diff_after_steps": weight_diff,
        "tolerance": TOLERANCE,
        "figures": [fig_name],
    }


def _draw(out, t_scalar, t_tensor, nodes, speedup, node_ratio) -> str:
    fig, (ax_t, ax_n) = figure(ncols=2, size=(10.0, 4.2))
    names = ["scalar engine\n(Value)", "tensor engine\n(Tensor)"]
    colours = ["#d95f02", "#1b9e77"]
    for ax, values, label, fmt in (
            (ax_t, [t_scalar * 1e3, t_tensor * 1e3], "time per training step (ms, log scale)",
             "{:.3g} ms"),
            (ax_n, [nodes["scalar"], nodes["tensor"]], "graph nodes per step (log scale)",
             "{:,}")):
        bars = ax.bar(names, values, color=colours)
        ax.set_yscale("log")
        ax.set_ylabel(label)
        ax.set_ylim(min(values) / 3, max(values) * 6)
        for b, v in zip(bars, values):
            ax.annotate(fmt.format(v), (b.get_x() + b.get_width() / 2, v), ha="center",
                        va="bottom", xytext=(0, 3), textcoords="offset points")
        ax.grid(True, axis="y", which="both", alpha=0.3)
    ax_t.set_title(f"Same step, {speedup:,.0f}x faster on tensors")
    ax_n.set_title(f"{node_ratio:,.0f}x fewer nodes to walk")
    return save(fig, out, "scalar_vs_tensor.png")
