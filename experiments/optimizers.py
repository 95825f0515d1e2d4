"""Stage 3: SGD, SGD with momentum and Adam on one full-batch problem.

The problem: ``nn.MLP(2, [32, 32, 2])`` on the spiral stage's 350 training points,
cross-entropy, full batch (no sampling noise), no schedule, ``EPOCHS`` epochs. The
model is built once from a fixed seed and its ``state_dict`` is restored before every
run, so every optimizer starts from the very same weights.

A comparison at one shared learning rate would be rigged in favour of whichever
optimizer that rate suits, so each optimizer gets its own sweep over a geometric grid
and is compared at its own best rate (the lowest final loss). The code asserts that the
best rate is inside its grid, not at an edge: an optimum at the edge means the grid did
not bracket it and the comparison would be unfair. (Smoke runs are too short for that
to mean anything, so there it is only recorded.)
"""

from __future__ import annotations

import math
import os
import time
from typing import Any, Callable

import numpy as np

import duograd as dg
import duograd.nn as nn
import duograd.optim as optim
from duograd.nn import functional as F

from . import check_size, figure, save, spiral, to_list, track

SEED = 1
HIDDEN = [32, 32, 2]
THRESHOLD = 0.1  # cross-entropy (nats) an optimizer must reach to count as "there"
EPOCHS = {"full": 400, "quick": 400, "smoke": 3}
MOMENTUM = 0.9


def _grid(lo_exp: float, hi_exp: float, per_decade: int = 2) -> list[float]:
    """Learning rates 10**lo_exp .. 10**hi_exp, ``per_decade`` per factor of ten."""
    n = round((hi_exp - lo_exp) * per_decade)
    return [float(f"{10 ** (lo_exp + k / per_decade):.3g}") for k in range(n + 1)]


# name -> (factory(params, lr), learning-rate grid)
OPTIMIZERS: dict[str, tuple[Callable[[list, float], optim.Optimizer], list[float]]] = {
    "SGD": (lambda ps, lr: optim.SGD(ps, lr=lr), _grid(-2, 1)),
    "SGD+momentum": (lambda ps, lr: optim.SGD(ps, lr=lr, momentum=MOMENTUM), _grid(-3, 0)),
    "Adam": (lambda ps, lr: optim.Adam(ps, lr=lr), _grid(-4, -0.5)),
}


def _train(model: nn.Module, init: dict, make: Callable, lr: float, x: dg.Tensor,
           y: np.ndarray, epochs: int) -> list[float]:
    """The loss before each of ``epochs`` steps, from the restored initial weights.
    A run that blows up stops there and reports infinity from then on."""
    model.load_state_dict(init)
    opt = make(model.parameters(), lr)
    losses: list[float] = []
    for _ in range(epochs):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        value = loss.item()
        if not math.isfinite(value):
            losses.extend([math.inf] * (epochs - len(losses)))
            break
        losses.append(value)
        loss.backward()
        opt.step()
    return losses


def _final(losses: list[float], model: nn.Module, x: dg.Tensor, y: np.ndarray) -> float:
    """The loss after the last step (``losses`` holds the losses before each step)."""
    if not math.isfinite(losses[-1]):
        return math.inf
    with dg.no_grad():
        value = F.cross_entropy(model(x), y).item()
    return value if math.isfinite(value) else math.inf


def run(out: str | os.PathLike, size: str = "full", progress: bool = True) -> dict[str, Any]:
    """Sweep each optimizer's learning rate, compare them at their best rates.

    >>> import tempfile
    >>> m = run(tempfile.mkdtemp(), size="smoke", progress=False)
    >>> sorted(m["optimizers"])
    ['Adam', 'SGD', 'SGD+momentum']
    """
    check_size(size)
    epochs = EPOCHS[size]
    Xtr, _, ytr, _ = spiral.data()
    x = dg.tensor(Xtr)
    model = nn.MLP(2, HIDDEN, rng=SEED)
    init = model.state_dict()

    runs = [(name, lr) for name, (_, grid) in OPTIMIZERS.items() for lr in grid]
    sweeps: dict[str, dict[float, tuple[float, list[float]]]] = {name: {} for name in OPTIMIZERS}
    t0 = time.perf_counter()
    for name, lr in track(runs, "optimizer sweeps", progress):
        losses = _train(model, init, OPTIMIZERS[name][0], lr, x, ytr, epochs)
        sweeps[name][lr] = (_final(losses, model, x, ytr), losses)
    seconds = time.perf_counter() - t0

    results: dict[str, Any] = {}
    for name, (_, grid) in OPTIMIZERS.items():
        finals = [sweeps[name][lr][0] for lr in grid]
        i_best = int(np.argmin(finals))
        bracketed = 0 < i_best < len(grid) - 1
        if size != "smoke":
            assert bracketed, (
                f"optimizers: {name}'s best learning rate {grid[i_best]} is at the edge of its "
                f"grid {grid}; widen the grid so that it brackets the optimum")
        best_lr = grid[i_best]
        losses = sweeps[name][best_lr][1]
        reached = next((k for k, v in enumerate(losses) if v <= THRESHOLD), None)
        results[name] = {
            "grid": grid,
            "final_losses": [_json_float(v) for v in finals],
            "best_lr": best_lr,
            "bracketed": bracketed,
            "final_loss": _json_float(finals[i_best]),
            # losses[k] is the loss after k steps, so k is the number of epochs it took.
            "epochs_to_threshold": reached,
            "curve": to_list(losses, 6),
        }

    ranking = sorted(results, key=lambda n: results[n]["final_loss"])
    best, second = ranking[0], ranking[1]
    ratio = results[second]["final_loss"] / results[best]["final_loss"]
    fig_name = _draw(out, results, epochs)
    return {
        "problem": "spiral training set (350 points), cross-entropy, full batch",
        "architecture": [2] + HIDDEN, "parameters": int(sum(p.size for p in model.parameters())),
        "seed": SEED, "epochs": epochs, "threshold": THRESHOLD, "momentum": MOMENTUM,
        "schedule": None, "runs": len(runs), "seconds": seconds,
        "optimizers": {n: {k: v for k, v in r.items() if k != "curve"} for n, r in results.items()},
        "curves": {n: r["curve"] for n, r in results.items()},
        "ranking": ranking, "winner": best, "runner_up": second,
        "final_loss_ratio": ratio,
        "figures": [fig_name],
    }


def _json_float(v: float) -> float | None:
    """JSON has no infinity: a diverged run's loss is recorded as null."""
    return float(v) if math.isfinite(v) else None


def _draw(out, results: dict, epochs: int) -> str:
    fig, (ax, ax_sweep) = figure(ncols=2, size=(11.5, 4.6))
    steps = np.arange(epochs)
    diverged = False
    for name, r in results.items():
        curve = np.asarray(r["curve"], dtype=float)
        ax.semilogy(steps, curve, label=f"{name} (lr {r['best_lr']:g})")
        finals = np.array([np.inf if v is None else v for v in r["final_losses"]])
        ok = np.isfinite(finals)
        line, = ax_sweep.loglog(np.asarray(r["grid"])[ok], finals[ok], "o-", label=name)
        ax_sweep.plot([r["best_lr"]], [r["final_loss"]], "*", ms=14, color=line.get_color(),
                      markeredgecolor="k")
        if (~ok).any():
            diverged = True
            ax_sweep.plot(np.asarray(r["grid"])[~ok], [max(finals[ok].max(), 1.0)] * int((~ok).sum()),
                          "x", color=line.get_color(), ms=9)
    ax.axhline(THRESHOLD, color="grey", ls="--", lw=1, label=f"threshold {THRESHOLD:g}")
    ax.set_xlabel("epoch (full-batch step)")
    ax.set_ylabel("training cross-entropy (log scale)")
    ax.set_title("Loss at each optimizer's best learning rate")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    ax_sweep.set_xlabel("learning rate (log scale)")
    ax_sweep.set_ylabel(f"loss after {epochs} epochs (log scale)")
    ax_sweep.set_title("Learning-rate sweeps")
    ax_sweep.grid(True, which="both", alpha=0.3)
    from matplotlib.lines import Line2D

    handles, _ = ax_sweep.get_legend_handles_labels()
    handles.append(Line2D([], [], ls="", marker="*", ms=11, color="0.6", markeredgecolor="k",
                          label="best learning rate"))
    if diverged:  # the marker is explained only where it is drawn
        handles.append(Line2D([], [], ls="", marker="x", ms=8, color="0.3", label="diverged"))
    ax_sweep.legend(handles=handles, fontsize=8)
    return save(fig, out, "optimizers.png")
