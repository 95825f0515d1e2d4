"""Stage 1: a two-arm spiral, learned by ``nn.MLP(2, [64, 64, 2])`` with Adam.

500 points on two arms of 2.5 revolutions with angular noise 0.5 rad, split 350 / 150
with the class balance kept. Full-batch training, 900 epochs, the learning rate
annealed on a cosine from ``LR`` down to ``LR_MIN``. The train accuracy says how well
the network fits the points it saw; the test accuracy, how well that fit generalises.
"""

from __future__ import annotations

import os
import time
from typing import Any

import numpy as np

import duograd as dg
import duograd.nn as nn
import duograd.optim as optim
from duograd.nn import functional as F
from duograd.optim import lr_scheduler

from . import (accuracy, check_size, figure, make_spiral, plot_loss_curves, save,
               stratified_split, to_list, track)

SEED = 0
N_POINTS, N_TEST = 500, 150
REVOLUTIONS, NOISE = 2.5, 0.5
HIDDEN = [64, 64, 2]
LR, LR_MIN = 0.01, 1e-4
EPOCHS = {"full": 900, "quick": 900, "smoke": 5}
GRID = {"full": 300, "quick": 300, "smoke": 40}   # decision-boundary resolution per axis


def data(seed: int = SEED) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The stage's spiral, already split: ``(X_train, X_test, y_train, y_test)``.

    >>> Xtr, Xte, ytr, yte = data()
    >>> Xtr.shape, Xte.shape, int(yte.sum())
    ((350, 2), (150, 2), 75)
    """
    X, y = make_spiral(N_POINTS, REVOLUTIONS, NOISE, rng=seed)
    return stratified_split(X, y, test_size=N_TEST, seed=seed)


def run(out: str | os.PathLike, size: str = "full", progress: bool = True) -> dict[str, Any]:
    """Train the spiral classifier, draw its decision boundary, return the numbers.

    >>> import tempfile
    >>> m = run(tempfile.mkdtemp(), size="smoke", progress=False)
    >>> m["parameters"], m["n_train"], m["n_test"]
    (4482, 350, 150)
    """
    check_size(size)
    epochs = EPOCHS[size]
    Xtr, Xte, ytr, yte = data()
    model = nn.MLP(2, HIDDEN, rng=SEED)
    n_params = sum(p.size for p in model.parameters())
    opt = optim.Adam(model.parameters(), lr=LR)
    sched = lr_scheduler.CosineAnnealingLR(opt, T_max=epochs, eta_min=LR_MIN)
    xtr, xte = dg.tensor(Xtr), dg.tensor(Xte)

    curve = {"train_loss": [], "test_loss": [], "train_accuracy": [], "test_accuracy": []}
    t0 = time.perf_counter()
    for _ in track(range(epochs), "spiral epochs", progress):
        opt.zero_grad()
        logits = model(xtr)
        loss = F.cross_entropy(logits, ytr)
        loss.backward()
        opt.step()
        sched.step()
        with dg.no_grad():
            test_logits = model(xte)
            test_loss = F.cross_entropy(test_logits, yte)
        curve["train_loss"].append(loss.item())
        curve["test_loss"].append(test_loss.item())
        curve["train_accuracy"].append(accuracy(logits.data, ytr))
        curve["test_accuracy"].append(accuracy(test_logits.data, yte))
    train_seconds = time.perf_counter() - t0

    # Accuracy of the trained network (the curves above lag one step behind it).
    with dg.no_grad():
        train_acc = accuracy(model(xtr).data, ytr)
        test_acc = accuracy(model(xte).data, yte)
        train_loss = F.cross_entropy(model(xtr), ytr).item()
        test_loss = F.cross_entropy(model(xte), yte).item()

    fig_name = _draw(out, model, Xtr, Xte, ytr, yte, train_acc, test_acc, curve, GRID[size])
    return {
        "n_points": N_POINTS, "n_train": int(len(ytr)), "n_test": int(len(yte)),
        "revolutions": REVOLUTIONS, "angular_noise": NOISE, "seed": SEED,
        "architecture": [2] + HIDDEN, "parameters": int(n_params),
        "epochs": epochs, "optimizer": "Adam", "lr_start": LR, "lr_end": LR_MIN,
        "schedule": "CosineAnnealingLR", "batch": "full",
        "train_accuracy": train_acc, "test_accuracy": test_acc,
        "train_loss": train_loss, "test_loss": test_loss,
        "generalisation_gap": train_acc - test_acc,
        "train_seconds": train_seconds,
        "curves": {k: to_list(v, 6) for k, v in curve.items()},
        "figures": [fig_name],
    }


def _draw(out, model, Xtr, Xte, ytr, yte, train_acc, test_acc, curve, grid) -> str:
    fig, (ax, ax_loss) = figure(ncols=2, size=(11.5, 5.0))
    lim = 1.15
    xs = np.linspace(-lim, lim, grid)
    gx, gy = np.meshgrid(xs, xs)
    with dg.no_grad():
        logits = model(dg.tensor(np.stack([gx.ravel(), gy.ravel()], axis=1))).data
    # P(class 1) from the two logits: a softmax over two classes is a sigmoid of their difference.
    p1 = 1.0 / (1.0 + np.exp(-(logits[:, 1] - logits[:, 0])))
    ax.contourf(gx, gy, p1.reshape(gx.shape), levels=np.linspace(0, 1, 11), cmap="RdBu_r",
                alpha=0.45)
    ax.contour(gx, gy, p1.reshape(gx.shape), levels=[0.5], colors="k", linewidths=1.2)
    colours = np.array(["#1f4e99", "#b2182b"])
    ax.scatter(Xtr[:, 0], Xtr[:, 1], c=colours[ytr], s=14, edgecolors="white", linewidths=0.4)
    ax.scatter(Xte[:, 0], Xte[:, 1], c=colours[yte], s=34, marker="^", edgecolors="k",
               linewidths=0.6)
    ax.set_xlim(-lim, lim)
    ax.set_ylim(-lim, lim)
    ax.set_aspect("equal")
    ax.set_xlabel("$x_1$")
    ax.set_ylabel("$x_2$")
    ax.set_title(f"Decision boundary: train {train_acc:.1%}, test {test_acc:.1%}")
    # The key: colour is the class (points and shading alike), shape is the split.
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    key = [Patch(color=colours[0], label="class 0 (P(class 1) < 0.5: blue)"),
           Patch(color=colours[1], label="class 1 (P(class 1) > 0.5: red)"),
           Line2D([], [], ls="", marker="o", color="0.5", markeredgecolor="white",
                  label=f"train ({len(ytr)} points)"),
           Line2D([], [], ls="", marker="^", color="0.5", markeredgecolor="k",
                  label=f"test ({len(yte)} points)"),
           Line2D([], [], color="k", lw=1.2, label="decision boundary (P = 0.5)")]
    ax.legend(handles=key, loc="lower left", fontsize=7.5, framealpha=0.9)

    plot_loss_curves(ax_loss, curve, "Learning curves (Adam, cosine-annealed lr)")
    return save(fig, out, "spiral.png")
