"""Stage 1: a two-arm spiral, learned by ``nn.MLP(2, [64, 64, 2])`` with Adam, over seeds,
beside the data's own ceiling.

500 points on two arms of 2.5 revolutions, split 350 / 150 with the class balance kept.
Full-batch training, 900 epochs, the learning rate annealed on a cosine from ``LR`` down
to ``LR_MIN``. Every configuration is trained from ``len(SEEDS)`` seeds; a seed draws the
data sample, its split and the initial weights, so the spread over seeds is the spread a
reader re-running the experiment from scratch would see. Numbers are mean +- sd.

The ceiling is the Bayes-optimal accuracy of the generating distribution
(:mod:`experiments.bayes`, from the generator's exact densities). Two headline
configurations: the seed's own (angular noise ``NOISE`` = 0.5 rad), and an "overlapping"
one whose noise is chosen, by :func:`overlap_noise` and before anything is trained, as
the noise whose ceiling is ``OVERLAP_CEILING``. A noise sweep (``SWEEP`` plus those two)
shows where the network starts to memorise and how close test accuracy gets to the
ceiling. ``--quick`` trains 2 seeds and a shorter sweep (``SWEEP["quick"]``, one seed each).
"""

from __future__ import annotations

import functools
import os
import time
from typing import Any

import numpy as np

import duograd as dg
import duograd.nn as nn
import duograd.optim as optim
from duograd.nn import functional as F
from duograd.optim import lr_scheduler

from . import (accuracy, check_size, compiled, compiling, figure, make_spiral, mean_sd, over_seeds, save,
               stratified_split, to_list)
from .bayes import bayes_accuracy, bayes_accuracy_closed_form, noise_for_ceiling, posterior

SEED = 0                      # the seed of the boundary pictures (and of the old single run)
SEEDS = {"full": (0, 1, 2, 3, 4), "quick": (0, 1), "smoke": (0, 1)}
SWEEP_SEEDS = {"full": 5, "quick": 1, "smoke": 1}   # seeds per sweep level (the first ones)
N_POINTS, N_TEST = 500, 150
REVOLUTIONS, NOISE = 2.5, 0.5
OVERLAP_CEILING = 0.90        # the overlapping configuration's Bayes ceiling, fixed in advance
# Angular noise levels (rad) of the sweep, besides the two headline ones; --quick runs fewer.
SWEEP = {"full": (0.1, 0.3, 0.5, 0.7, 0.9, 1.2, 1.5), "quick": (0.3, 0.7, 1.2),
         "smoke": (0.1, 0.3, 0.5, 0.7, 0.9, 1.2, 1.5)}
HIDDEN = [64, 64, 2]
LR, LR_MIN = 0.01, 1e-4
EPOCHS = {"full": 900, "quick": 900, "smoke": 5}
GRID = {"full": 300, "quick": 300, "smoke": 40}   # decision-boundary resolution per axis
GAP_NOTED = 0.05              # a train - test gap this large counts as memorising
NEAR_CEILING = 0.02           # test accuracy within this of the ceiling counts as "at it"


def data(seed: int = SEED, noise: float = NOISE
         ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The stage's spiral for ``seed``, already split: ``(X_train, X_test, y_train, y_test)``.

    >>> Xtr, Xte, ytr, yte = data()
    >>> Xtr.shape, Xte.shape, int(yte.sum())
    ((350, 2), (150, 2), 75)
    """
    X, y = make_spiral(N_POINTS, REVOLUTIONS, noise, rng=seed)
    return stratified_split(X, y, test_size=N_TEST, seed=seed)


def overlap_noise() -> float:
    """The overlapping configuration's angular noise: the noise whose Bayes ceiling is
    ``OVERLAP_CEILING``, rounded to 3 decimals. It depends on the generator alone, never
    on a trained network.

    >>> overlap_noise()
    0.955
    """
    return round(noise_for_ceiling(OVERLAP_CEILING), 3)


def train_step(model: nn.Module, opt: optim.Optimizer, x: dg.Tensor, y: np.ndarray
               ) -> tuple[dg.Tensor, dg.Tensor]:
    """One full-batch step: forward, cross-entropy, backward, update. Returns the logits
    and the loss, both from before the update.

    >>> model = nn.MLP(2, HIDDEN, rng=0)
    >>> opt = optim.Adam(model.parameters(), lr=LR)
    >>> Xtr, _, ytr, _ = data()
    >>> _, loss = train_step(model, opt, dg.tensor(Xtr), ytr)
    >>> round(loss.item(), 4)
    0.6932
    """
    opt.zero_grad()
    logits = model(x)
    loss = F.cross_entropy(logits, y)
    loss.backward()
    opt.step()
    return logits, loss


def train_one(seed: int, noise: float, epochs: int, curves: bool = True,
              keep_state: bool = False) -> dict[str, Any]:
    """Train one network on the spiral of ``seed`` at angular noise ``noise``.

    Returns the final train/test accuracy and loss, the training time, the per-epoch
    curves when ``curves`` (the test split is then evaluated after every step), and the
    trained weights when ``keep_state``.

    >>> r = train_one(0, 0.5, epochs=3)
    >>> sorted(r), len(r["curves"]["test_loss"])
    (['curves', 'test_accuracy', 'test_loss', 'train_accuracy', 'train_loss', 'train_seconds'], 3)
    """
    Xtr, Xte, ytr, yte = data(seed, noise)
    model = nn.MLP(2, HIDDEN, rng=seed)
    opt = optim.Adam(model.parameters(), lr=LR)
    sched = lr_scheduler.CosineAnnealingLR(opt, T_max=epochs, eta_min=LR_MIN)
    xtr, xte = dg.tensor(Xtr), dg.tensor(Xte)
    curve: dict[str, list[float]] = {"train_loss": [], "test_loss": [], "train_accuracy": [],
                                     "test_accuracy": []}
    step = compiled(lambda x, y: train_step(model, opt, x, y))  # dg.compile unless --no-compile
    t0 = time.perf_counter()
    for _ in range(epochs):
        logits, loss = step(xtr, ytr)
        sched.step()
        if curves:
            with dg.no_grad():
                test_logits = model(xte)
                test_loss = F.cross_entropy(test_logits, yte)
            curve["train_loss"].append(loss.item())
            curve["test_loss"].append(test_loss.item())
            curve["train_accuracy"].append(accuracy(logits.detach().numpy(), ytr))
            curve["test_accuracy"].append(accuracy(test_logits.detach().numpy(), yte))
    seconds = time.perf_counter() - t0
    # Accuracy of the trained network (the curves above lag one step behind it).
    with dg.no_grad():
        tr_logits, te_logits = model(xtr), model(xte)
        result: dict[str, Any] = {
            "train_accuracy": accuracy(tr_logits.detach().numpy(), ytr),
            "test_accuracy": accuracy(te_logits.detach().numpy(), yte),
            "train_loss": F.cross_entropy(tr_logits, ytr).item(),
            "test_loss": F.cross_entropy(te_logits, yte).item(),
            "train_seconds": seconds}
    if curves:
        result["curves"] = curve
    if keep_state:
        result["state"] = model.state_dict()
    return result


def _task(job: tuple[int, float, bool, bool], epochs: int) -> dict[str, Any]:
    seed, noise, curves, keep_state = job
    return train_one(seed, noise, epochs, curves=curves, keep_state=keep_state)


def _summary(runs: list[dict[str, Any]], noise: float) -> dict[str, Any]:
    """Mean +- sd over seeds of one configuration, its per-seed values and its ceiling."""
    out: dict[str, Any] = {"angular_noise": noise, "bayes_accuracy": bayes_accuracy(REVOLUTIONS, noise)}
    per_seed = {k: [r[k] for r in runs] for k in ("train_accuracy", "test_accuracy",
                                                  "train_loss", "test_loss")}
    per_seed["generalisation_gap"] = [a - b for a, b in zip(per_seed["train_accuracy"],
                                                            per_seed["test_accuracy"])]
    per_seed["shortfall_to_ceiling"] = [out["bayes_accuracy"] - a for a in per_seed["test_accuracy"]]
    for k, v in per_seed.items():
        out[k], out[k + "_sd"] = mean_sd(v)
    out["per_seed"] = per_seed
    out["train_seconds"] = [r["train_seconds"] for r in runs]
    if all("curves" in r for r in runs):
        stacked = {k: np.array([r["curves"][k] for r in runs]) for k in runs[0]["curves"]}
        out["curves"] = {k: to_list(v.mean(axis=0), 5) for k, v in stacked.items()}
        out["curves_sd"] = {k: to_list(mean_sd(v)[1], 3) for k, v in stacked.items()}
    return out


def run(out: str | os.PathLike, size: str = "full", progress: bool = True) -> dict[str, Any]:
    """Pick the overlapping noise from its ceiling, train every (noise, seed) pair, draw
    the decision boundaries and the noise sweep, return the numbers.

    >>> import tempfile
    >>> m = run(tempfile.mkdtemp(), size="smoke", progress=False)
    >>> m["parameters"], m["n_train"], m["n_test"], m["overlapping"]["angular_noise"]
    (4482, 350, 150, 0.955)
    """
    check_size(size)
    epochs, seeds = EPOCHS[size], SEEDS[size]
    # Chosen from the generator alone, before any network is trained or tested.
    sigma_overlap = overlap_noise()
    headline = (NOISE, sigma_overlap)
    levels = sorted(set(SWEEP[size]) | set(headline))
    sweep_seeds = seeds[:SWEEP_SEEDS[size]]
    jobs = []
    for noise in headline:  # the long runs (curves every epoch) first, for the pool
        jobs += [(s, noise, True, s == SEED) for s in seeds]
    for noise in levels:
        jobs += [(s, noise, False, False) for s in sweep_seeds if noise not in headline]
    t0 = time.perf_counter()
    results = over_seeds(functools.partial(_task, epochs=epochs), jobs, desc="spiral runs",
                         progress=progress)
    wall = time.perf_counter() - t0
    by_job = {(j[0], j[1]): r for j, r in zip(jobs, results)}

    main = _summary([by_job[(s, NOISE)] for s in seeds], NOISE)
    overlap = _summary([by_job[(s, sigma_overlap)] for s in seeds], sigma_overlap)
    overlap.update(target_ceiling=OVERLAP_CEILING,
                   chosen_by="solving the exact Bayes ceiling for the noise that gives it, "
                             "rounded to 3 decimals, before any network is trained")
    sweep_rows = [_summary([by_job[(s, n)] for s in (seeds if n in headline else sweep_seeds)], n)
                  for n in levels]
    sweep = {"noise": levels, "seeds_per_level": [len(r["per_seed"]["test_accuracy"])
                                                  for r in sweep_rows]}
    for k in ("bayes_accuracy", "train_accuracy", "test_accuracy", "generalisation_gap",
              "shortfall_to_ceiling"):
        sweep[k] = [r[k] for r in sweep_rows]
        if k != "bayes_accuracy":
            sweep[k + "_sd"] = [r[k + "_sd"] for r in sweep_rows]
    sweep["per_seed"] = {k: [r["per_seed"][k] for r in sweep_rows]
                         for k in ("train_accuracy", "test_accuracy")}
    sweep.update(_regimes(sweep))

    model_main, model_overlap = (_rebuild(by_job[(SEED, n)]["state"]) for n in headline)
    figures = [_draw(out, (model_main, model_overlap), headline, (main, overlap), GRID[size]),
               _draw_sweep(out, sweep, headline)]
    n_params = sum(p.numel() for p in model_main.parameters())
    Xtr, Xte, ytr, yte = data()
    summary = {k: v for k, v in main.items() if k not in ("angular_noise",)}
    return {
        "n_points": N_POINTS, "n_train": int(len(ytr)), "n_test": int(len(yte)),
        "revolutions": REVOLUTIONS, "angular_noise": NOISE, "seed": SEED, "seeds": list(seeds),
        "architecture": [2] + HIDDEN, "parameters": int(n_params),
        "epochs": epochs, "optimizer": "Adam", "lr_start": LR, "lr_end": LR_MIN,
        "schedule": "CosineAnnealingLR", "batch": "full",
        "what_a_seed_changes": "the data sample, its train/test split and the initial weights",
        **summary,   # the seed's configuration: train/test accuracy and loss, mean and sd
        "bayes_accuracy_closed_form": bayes_accuracy_closed_form(NOISE),
        "overlapping": overlap,
        "noise_sweep": sweep,
        "runs": len(jobs), "train_seconds": wall,
        "compiled": compiling(), "figures": figures,
    }


def _regimes(sweep: dict[str, Any]) -> dict[str, Any]:
    """Where the sweep crosses the lines the report talks about (None: never)."""
    levels = sweep["noise"]
    gap = next((n for n, g in zip(levels, sweep["generalisation_gap"]) if g >= GAP_NOTED), None)
    near = [n for n, s in zip(levels, sweep["shortfall_to_ceiling"]) if s <= NEAR_CEILING]
    return {"gap_noted": GAP_NOTED, "near_ceiling": NEAR_CEILING,
            "memorising_from_noise": gap, "near_ceiling_noises": near}


def _rebuild(state: dict[str, np.ndarray]) -> nn.Module:
    model = nn.MLP(2, HIDDEN, rng=SEED)
    model.load_state_dict(state)
    return model


def _boundary(ax, model, noise: float, stats: dict[str, Any], grid: int, title: str) -> None:
    lim = 1.15
    xs = np.linspace(-lim, lim, grid)
    gx, gy = np.meshgrid(xs, xs)
    pts = np.stack([gx.ravel(), gy.ravel()], axis=1)
    with dg.no_grad():
        logits = model(dg.tensor(pts)).detach().numpy()
    # P(class 1) from the two logits: a softmax over two classes is a sigmoid of their difference.
    p1 = (1.0 / (1.0 + np.exp(-(logits[:, 1] - logits[:, 0])))).reshape(gx.shape)
    ax.contourf(gx, gy, p1, levels=np.linspace(0, 1, 11), cmap="RdBu_r", alpha=0.45)
    ax.contour(gx, gy, p1, levels=[0.5], colors="k", linewidths=1.2)
    # The Bayes boundary, inside the disc the data lives in.
    pb = posterior(pts, REVOLUTIONS, noise).reshape(gx.shape)
    pb[np.hypot(gx, gy) > 1.0] = np.nan
    ax.contour(gx, gy, pb, levels=[0.5], colors="#1a9850", linewidths=1.0, linestyles="--")
    Xtr, Xte, ytr, yte = data(SEED, noise)
    colours = np.array(["#1f4e99", "#b2182b"])
    ax.scatter(Xtr[:, 0], Xtr[:, 1], c=colours[ytr], s=12, edgecolors="white", linewidths=0.4)
    ax.scatter(Xte[:, 0], Xte[:, 1], c=colours[yte], s=28, marker="^", edgecolors="k",
               linewidths=0.6)
    ax.set_xlim(-lim, lim)
    ax.set_ylim(-lim, lim)
    ax.set_aspect("equal")
    ax.set_xlabel("$x_1$")
    ax.set_ylabel("$x_2$")
    ax.set_title(f"{title}: noise {noise:g} rad, Bayes ceiling {stats['bayes_accuracy']:.1%}\n"
                 f"seed {SEED} shown; over {len(stats['per_seed']['test_accuracy'])} seeds: "
                 f"train {stats['train_accuracy']:.1%} ± {stats['train_accuracy_sd']:.1%}, "
                 f"test {stats['test_accuracy']:.1%} ± {stats['test_accuracy_sd']:.1%}",
                 fontsize=9.5)


def _draw(out, models, noises, stats, grid) -> str:
    fig, axes = figure(ncols=2, nrows=2, size=(11.5, 10.5))
    titles = ("Standard configuration", "Overlapping configuration")
    for ax, model, noise, st, title in zip(axes[0], models, noises, stats, titles):
        _boundary(ax, model, noise, st, grid, title)
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    colours = ("#1f4e99", "#b2182b")
    key = [Patch(color=colours[0], label="class 0 (P(class 1) < 0.5: blue)"),
           Patch(color=colours[1], label="class 1 (P(class 1) > 0.5: red)"),
           Line2D([], [], ls="", marker="o", color="0.5", markeredgecolor="white",
                  label="train points"),
           Line2D([], [], ls="", marker="^", color="0.5", markeredgecolor="k", label="test points"),
           Line2D([], [], color="k", lw=1.2, label="network's boundary (P = 0.5)"),
           Line2D([], [], color="#1a9850", lw=1.0, ls="--", label="Bayes boundary")]
    # The key sits above the panels, where it covers no point and no boundary.
    fig.legend(handles=key, loc="outside upper center", ncol=3, fontsize=8, frameon=False)
    for ax, noise, st, title in zip(axes[1], noises, stats, titles):
        epochs = np.arange(1, len(st["curves"]["train_loss"]) + 1)
        for k, label in (("train_loss", "train loss"), ("test_loss", "test loss")):
            _curve_band(ax, epochs, st, k, label)
        ax.set_yscale("log")
        ax.set_xlabel("epoch")
        ax.set_ylabel("cross-entropy (log scale)")
        ax.set_title(f"{title} (noise {noise:g}): mean ± sd over "
                     f"{len(st['per_seed']['test_accuracy'])} seeds", fontsize=9.5)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    return save(fig, out, "spiral.png")


def _curve_band(ax, x, stats, key, label) -> None:
    mid = np.asarray(stats["curves"][key])
    sd = np.asarray(stats["curves_sd"][key])
    line, = ax.plot(x, mid, label=label)
    ax.fill_between(x, np.maximum(mid - sd, mid * 0.05), mid + sd, color=line.get_color(),
                    alpha=0.22, lw=0)


def _level_band(ax, levels, sweep, key, label, marker) -> None:
    """Mean +- sd over seeds at each noise level, in percent."""
    mid, sd = 100 * np.asarray(sweep[key]), 100 * np.asarray(sweep[key + "_sd"])
    line, = ax.plot(levels, mid, marker=marker, ms=4, label=label)
    ax.fill_between(levels, mid - sd, mid + sd, color=line.get_color(), alpha=0.22, lw=0)


def _draw_sweep(out, sweep: dict[str, Any], headline: tuple[float, float]) -> str:
    fig, (ax, ax_gap) = figure(ncols=2, size=(11.5, 4.6))
    levels = np.asarray(sweep["noise"])
    fine = np.linspace(0.02, levels.max() * 1.03, 200)
    ax.plot(fine, [100 * bayes_accuracy_closed_form(s) for s in fine], color="k", lw=1.2,
            label="Bayes ceiling (exact)")
    for k, label in (("train_accuracy", "train accuracy"), ("test_accuracy", "test accuracy")):
        _level_band(ax, levels, sweep, k, label, marker="o")
    for n, name in zip(headline, ("seed's config", "overlapping")):
        ax.axvline(n, color="0.6", ls=":", lw=1)
        ax.annotate(name, (n, 52), rotation=90, fontsize=7.5, color="0.35", ha="right",
                    va="bottom")
    ax.set_xlabel("angular noise σ (rad)")
    ax.set_ylabel("accuracy (%)")
    ax.set_ylim(50, 101)
    n_seeds = sorted(set(sweep["seeds_per_level"]))
    seeds = (f"{n_seeds[0]} seeds" if len(n_seeds) == 1 else
             f"{'/'.join(map(str, n_seeds))} seeds per level")
    ax.set_title(f"Accuracy against the data's ceiling (mean ± sd, {seeds})", fontsize=10)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8, loc="lower left")
    _level_band(ax_gap, levels, sweep, "generalisation_gap", "train − test (memorising)",
                marker="o")
    _level_band(ax_gap, levels, sweep, "shortfall_to_ceiling", "ceiling − test (left on the table)",
                marker="s")
    ax_gap.axhline(0, color="k", lw=0.8)
    ax_gap.set_xlabel("angular noise σ (rad)")
    ax_gap.set_ylabel("percentage points")
    ax_gap.set_title("Generalisation gap and distance to the ceiling", fontsize=10)
    ax_gap.grid(True, alpha=0.3)
    ax_gap.legend(fontsize=8, loc="upper left")
    return save(fig, out, "spiral_noise.png")
