"""Stage 3: SGD, SGD with momentum and Adam on one full-batch problem.

The problem: ``nn.MLP(2, [32, 32, 2])`` on the spiral stage's 350 training points,
cross-entropy, full batch (no sampling noise), no schedule, ``EPOCHS`` epochs. Every run
of one seed starts from the same weights (``nn.MLP(..., rng=seed)``); the whole
comparison is repeated from each of ``SEEDS``, which change the initial weights (full
batch: there is no minibatch order to shuffle).

A comparison at one shared learning rate would be rigged in favour of whichever
optimizer that rate suits, so each optimizer gets its own sweep over a geometric grid
and is compared at its own best rate (the lowest final loss), for every seed. The code
asserts that, for every seed, the best rate is bracketed: the rates on both sides of it
in the grid end worse. An optimum at the edge means the grid did not bracket it and the
comparison would be unfair. (Smoke runs are too short for that to mean anything, so
there it is only recorded.)
"""

from __future__ import annotations

import functools
import math
import os
import time
from typing import Any, Callable

import numpy as np

import duograd as dg
import duograd.nn as nn
import duograd.optim as optim
from duograd.nn import functional as F

from . import band, check_size, figure, mean_sd, over_seeds, save, spiral, to_list

SEED = 1                      # the first seed (the old single run's)
SEEDS = {"full": (1, 2, 3, 4, 5), "quick": (1, 2), "smoke": (1, 2)}
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
    "SGD+momentum": (lambda ps, lr: optim.SGD(ps, lr=lr, momentum=MOMENTUM), _grid(-3, 0.5)),
    "Adam": (lambda ps, lr: optim.Adam(ps, lr=lr), _grid(-4, -0.5)),
}
# --quick sweeps a narrower grid around the rates the full sweep finds best (still asserted
# to bracket every seed's best rate), to stay within its time budget.
QUICK_GRIDS = {"SGD": _grid(-0.5, 1), "SGD+momentum": _grid(-1.5, 0.5), "Adam": _grid(-2.5, -1)}


def grids(size: str) -> dict[str, list[float]]:
    """Each optimizer's learning-rate grid at ``size``.

    >>> grids("quick")["Adam"]
    [0.00316, 0.01, 0.0316, 0.1]
    """
    return {name: QUICK_GRIDS[name] if size == "quick" else grid
            for name, (_, grid) in OPTIMIZERS.items()}


def train_step(model: nn.Module, opt: optim.Optimizer, x: dg.Tensor, y: np.ndarray) -> float:
    """One full-batch step; returns the loss before the update (infinity, and no update,
    when the loss is not finite).

    >>> model = nn.MLP(2, HIDDEN, rng=SEED)
    >>> x, y = problem()
    >>> round(train_step(model, optim.SGD(model.parameters(), lr=0.1), x, y), 4)
    0.7237
    """
    opt.zero_grad()
    loss = F.cross_entropy(model(x), y)
    value = loss.item()
    if not math.isfinite(value):
        return math.inf
    loss.backward()
    opt.step()
    return value


@functools.lru_cache(maxsize=1)
def problem() -> tuple[dg.Tensor, np.ndarray]:
    """The fixed problem every run trains on: the spiral stage's seed-0 training set.

    >>> x, y = problem()
    >>> x.shape, int(y.sum())
    ((350, 2), 175)
    """
    Xtr, _, ytr, _ = spiral.data(spiral.SEED)
    return dg.tensor(Xtr), ytr


def train_run(job: tuple[int, str, float], epochs: int) -> tuple[list[float], float]:
    """``job = (seed, optimizer name, learning rate)``: the losses before each of ``epochs``
    steps from the initial weights of ``seed``, and the loss after the last step. A run
    that blows up stops there and reports infinity from then on.

    >>> losses, final = train_run((SEED, "Adam", 0.01), epochs=2)
    >>> len(losses), final < losses[0]
    (2, True)
    """
    seed, name, lr = job
    x, y = problem()
    model = nn.MLP(2, HIDDEN, rng=seed)
    opt = OPTIMIZERS[name][0](model.parameters(), lr)
    losses: list[float] = []
    for _ in range(epochs):
        value = train_step(model, opt, x, y)
        if not math.isfinite(value):
            losses.extend([math.inf] * (epochs - len(losses)))
            return losses, math.inf
        losses.append(value)
    with dg.no_grad():
        final = F.cross_entropy(model(x), y).item()
    return losses, (final if math.isfinite(final) else math.inf)


def best_of_sweep(grid: list[float], finals: list[float]) -> dict[str, Any]:
    """The best rate of one sweep (lowest final loss) and whether the grid brackets it:
    a worse final loss at the rate on either side of it.

    >>> best_of_sweep([0.1, 1.0, 10.0], [0.5, 0.2, math.inf])
    {'best_lr': 1.0, 'index': 1, 'bracketed': True, 'bracket': [0.1, 10.0], 'bracket_losses': [0.5, None]}
    """
    i = int(np.argmin(finals))
    inside = 0 < i < len(grid) - 1
    bracketed = bool(inside and finals[i - 1] > finals[i] and finals[i + 1] > finals[i])
    return {"best_lr": grid[i], "index": i, "bracketed": bracketed,
            "bracket": [grid[i - 1] if i > 0 else None, grid[i + 1] if i + 1 < len(grid) else None],
            "bracket_losses": [_json_float(finals[i - 1]) if i > 0 else None,
                               _json_float(finals[i + 1]) if i + 1 < len(grid) else None]}


def run(out: str | os.PathLike, size: str = "full", progress: bool = True) -> dict[str, Any]:
    """Sweep each optimizer's learning rate from every seed, compare them at their best rates.

    >>> import tempfile
    >>> m = run(tempfile.mkdtemp(), size="smoke", progress=False)
    >>> sorted(m["optimizers"]), m["seeds"]
    (['Adam', 'SGD', 'SGD+momentum'], [1, 2])
    """
    check_size(size)
    epochs, seeds = EPOCHS[size], SEEDS[size]
    sweep = grids(size)
    jobs = [(seed, name, lr) for seed in seeds for name, grid in sweep.items() for lr in grid]
    t0 = time.perf_counter()
    outcomes = over_seeds(functools.partial(train_run, epochs=epochs), jobs,
                          desc="optimizer sweeps", progress=progress)
    seconds = time.perf_counter() - t0
    runs = dict(zip(jobs, outcomes))

    results: dict[str, Any] = {}
    curves: dict[str, list[list[float]]] = {}
    for name, grid in sweep.items():
        r: dict[str, Any] = {"grid": grid, "best_lr": [], "bracketed": [], "bracket": [],
                             "bracket_losses": [], "final_losses": [], "final_loss": [],
                             "epochs_to_threshold": []}
        curves[name] = []
        for seed in seeds:
            finals = [runs[(seed, name, lr)][1] for lr in grid]
            best = best_of_sweep(grid, finals)
            if size != "smoke":
                assert best["bracketed"], (
                    f"optimizers: {name}'s best learning rate {best['best_lr']} (seed {seed}) is not "
                    f"bracketed by worse rates in its grid {grid}; widen the grid")
            losses = runs[(seed, name, best["best_lr"])][0]
            # losses[k] is the loss after k steps, so k is the number of epochs it took.
            reached = next((k for k, v in enumerate(losses) if v <= THRESHOLD), None)
            for key in ("best_lr", "bracketed", "bracket", "bracket_losses"):
                r[key].append(best[key])
            r["final_losses"].append([_json_float(v) for v in finals])
            r["final_loss"].append(_json_float(finals[best["index"]]))
            r["epochs_to_threshold"].append(reached)
            curves[name].append(losses)
        r["final_loss_mean"], r["final_loss_sd"] = mean_sd(r["final_loss"])
        r["final_loss_log10_mean"] = float(np.mean(np.log10(r["final_loss"])))
        r["reached_threshold"] = sum(e is not None for e in r["epochs_to_threshold"])
        results[name] = r

    # Ranked by the geometric mean of the final loss over seeds (losses span decades).
    ranking = sorted(results, key=lambda n: results[n]["final_loss_log10_mean"])
    best, second = ranking[0], ranking[1]
    ratios = [a / b for a, b in zip(results[second]["final_loss"], results[best]["final_loss"])]
    per_seed_rank = [sorted(results, key=lambda n, i=i: results[n]["final_loss"][i])
                     for i in range(len(seeds))]
    fig_name = _draw(out, results, curves, epochs)
    ratio_mean, ratio_sd = mean_sd(ratios)
    return {
        "problem": "spiral training set (350 points), cross-entropy, full batch",
        "architecture": [2] + HIDDEN, "parameters": int(sum(p.numel() for p in nn.MLP(2, HIDDEN, rng=SEED).parameters())),
        "seed": SEED, "seeds": list(seeds),
        "what_a_seed_changes": "the initial weights (full batch: no minibatch order to shuffle; "
                               "the data is the spiral stage's seed-0 training set throughout)",
        "epochs": epochs, "threshold": THRESHOLD, "momentum": MOMENTUM,
        "schedule": None, "runs": len(jobs), "seconds": seconds,
        "optimizers": results,
        "curves": {n: to_list(10 ** np.mean(np.log10(c), axis=0), 6) for n, c in curves.items()},
        "curves_log10_sd": {n: to_list(mean_sd(np.log10(c))[1], 3) for n, c in curves.items()},
        "ranking": ranking, "winner": best, "runner_up": second,
        "per_seed": {"winner": [r[0] for r in per_seed_rank],
                     "runner_up": [r[1] for r in per_seed_rank],
                     "final_loss_ratio": ratios},
        "final_loss_ratio": ratio_mean, "final_loss_ratio_sd": ratio_sd,
        "final_loss_ratio_range": [min(ratios), max(ratios)],
        "figures": [fig_name],
    }


def _json_float(v: float) -> float | None:
    """JSON has no infinity: a diverged run's loss is recorded as null."""
    return float(v) if math.isfinite(v) else None


STAR_SPREAD = 1.12  # the sideways factor between neighbouring seeds' stars in the figure


def _draw(out, results: dict, curves: dict[str, list[list[float]]], epochs: int) -> str:
    fig, (ax, ax_sweep) = figure(ncols=2, size=(11.5, 4.6))
    steps = np.arange(epochs)
    diverged = False
    n_seeds = max(len(c) for c in curves.values())
    for name, r in results.items():
        lrs = ", ".join(f"{v:g}" for v in sorted(set(r["best_lr"])))
        band(ax, steps, np.asarray(curves[name], dtype=float), f"{name} (best lr {lrs})", log=True)
        grid = np.asarray(r["grid"])
        finals = np.array([[np.inf if v is None else v for v in row] for row in r["final_losses"]])
        ok = np.isfinite(finals).all(axis=0)  # rates at which no seed diverged
        line = band(ax_sweep, grid[ok], finals[:, ok], name, log=True, marker="o", ms=4)
        # One star per seed, each moved sideways by its own factor (STAR_SPREAD per seed,
        # centred on the true rate), so seeds that share a best rate stay visible.
        k = len(r["best_lr"])
        xs = [v * STAR_SPREAD ** (i - (k - 1) / 2) for i, v in enumerate(r["best_lr"])]
        ax_sweep.plot(xs, [np.inf if v is None else v for v in r["final_loss"]], "*",
                      ms=11, color=line.get_color(), markeredgecolor="k", alpha=0.9, ls="")
        if (~ok).any():
            diverged = True
            top = max(float(np.max(finals[np.isfinite(finals)])), 1.0)
            ax_sweep.plot(grid[~ok], [top] * int((~ok).sum()), "x", color=line.get_color(), ms=9)
    ax.axhline(THRESHOLD, color="grey", ls="--", lw=1, label=f"threshold {THRESHOLD:g}")
    ax.set_yscale("log")
    ax.set_xlabel("epoch (full-batch step)")
    ax.set_ylabel("training cross-entropy (log scale)")
    ax.set_title(f"Loss at each optimizer's best rate ({n_seeds} seeds)", fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    ax_sweep.set_xscale("log")
    ax_sweep.set_yscale("log")
    ax_sweep.set_xlabel("learning rate (log scale)")
    ax_sweep.set_ylabel(f"loss after {epochs} epochs (log scale)")
    ax_sweep.set_title("Learning-rate sweeps (band: geometric mean ×/÷ sd over seeds)", fontsize=10)
    ax_sweep.grid(True, which="both", alpha=0.3)
    from matplotlib.lines import Line2D

    handles, _ = ax_sweep.get_legend_handles_labels()
    handles.append(Line2D([], [], ls="", marker="*", ms=11, color="0.6", markeredgecolor="k",
                          label="best learning rate (one star per seed)"))
    if diverged:  # the marker is explained only where it is drawn
        handles.append(Line2D([], [], ls="", marker="x", ms=8, color="0.3",
                              label="diverged (at least one seed)"))
    ax_sweep.legend(handles=handles, fontsize=8)
    return save(fig, out, "optimizers.png")
