"""Stage 2: handwritten digits (scikit-learn's bundled 8x8 ``load_digits``).

scikit-learn supplies the pixels and the stratified 1,347 / 450 split, nothing else:
the model (``nn.MLP(64, [64, 32, 10])``), the cross-entropy, the gradients, Adam, the
minibatch loop and the confusion matrix are all duograd's or this file's own code.

The network is trained from each of ``SEEDS``: a seed sets the initial weights and the
minibatch order; the split stays the same, so every seed is scored on the same 450 test
digits. Accuracies are mean +- sd over seeds.

The hyper-parameters (learning rate, epochs, weight decay, hidden widths) are the ones the
validation sweep chose (``walkthrough.py --only digits_sweep``, experiments/digits_sweep.py,
which never looks at the test digits) when its section is in the output folder's
measurements.json; otherwise the defaults below, and the result says which.
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

from . import band, check_size, compiled, compiling, figure, mean_sd, over_seeds, save, stratified_split, to_list

SEED = 0                      # the split's seed (fixed), and the first training seed
SEEDS = {"full": (0, 1, 2, 3, 4), "quick": (0, 1), "smoke": (0, 1)}
N_TEST = 450
HIDDEN = [64, 32, 10]
LR = 1e-3
BATCH = 64
EPOCHS = {"full": 60, "quick": 60, "smoke": 2}
WEIGHT_DECAY = 0.0
# The reference write-up's single run of MLP(64, [64, 32, 10]) on these digits, and this
# project's goal for the mean over seeds.
REFERENCE_ACCURACY = 0.9756
TARGET_ACCURACY = 0.975
DEFAULT_SETTING = {"lr": LR, "epochs": EPOCHS["full"], "weight_decay": WEIGHT_DECAY,
                   "hidden": HIDDEN}


def chosen(out: str | os.PathLike | None, model: str) -> tuple[dict[str, Any], str]:
    """The setting the validation sweep chose for ``model`` ("mlp" or "cnn"), read from
    ``out/measurements.json``, and where it came from; the defaults when there is no sweep.

    >>> import tempfile
    >>> chosen(tempfile.mkdtemp(), "mlp")[1]
    'defaults (no validation sweep in this folder)'
    """
    import json
    from pathlib import Path

    path = None if out is None else Path(out) / "measurements.json"
    data: dict[str, Any] = {}
    if path is not None and path.is_file() and path.stat().st_size:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    sweep = data.get("digits_sweep")
    if isinstance(sweep, dict) and isinstance(sweep.get(model, {}).get("chosen"), dict):
        run = ((data.get("meta") or {}).get("stages") or {}).get("digits_sweep", {}).get("run")
        return dict(sweep[model]["chosen"]), f"validation sweep (run {run})"
    if model == "mlp":
        return dict(DEFAULT_SETTING), "defaults (no validation sweep in this folder)"
    from .digits_cnn import DEFAULT_SETTING as CNN_DEFAULT
    return dict(CNN_DEFAULT), "defaults (no validation sweep in this folder)"


def data(seed: int = SEED) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(X_train, X_test, y_train, y_test)``: pixels scaled from 0..16 to 0..1.

    >>> Xtr, Xte, ytr, yte = data()
    >>> Xtr.shape, Xte.shape, float(Xtr.max())
    ((1347, 64), (450, 64), 1.0)
    """
    from sklearn.datasets import load_digits

    digits = load_digits()
    X = digits.data.astype(np.float64) / 16.0
    return stratified_split(X, digits.target, test_size=N_TEST, seed=seed)


def confusion_matrix(y_true: np.ndarray, y_pred: np.ndarray, n_classes: int) -> np.ndarray:
    """Counts ``C[i, j]`` of examples of true class ``i`` predicted as class ``j``.

    >>> confusion_matrix(np.array([0, 1, 1]), np.array([0, 1, 0]), 2)
    array([[1, 0],
           [1, 1]])
    """
    cm = np.zeros((n_classes, n_classes), dtype=np.int64)
    np.add.at(cm, (y_true, y_pred), 1)
    return cm


def _evaluate(model: nn.Module, X: dg.Tensor, y: np.ndarray) -> tuple[float, float, np.ndarray]:
    with dg.no_grad():
        logits = model(X)
        loss = F.cross_entropy(logits, y).item()
    pred = np.argmax(logits.detach().numpy(), axis=1)
    return loss, float(np.mean(pred == y)), pred


def train_step(model: nn.Module, opt: optim.Optimizer, x: dg.Tensor, y: np.ndarray) -> dg.Tensor:
    """One minibatch step: forward, cross-entropy, backward, update; returns the loss.

    >>> model = nn.MLP(64, HIDDEN, rng=0)
    >>> Xtr, _, ytr, _ = data()
    >>> loss = train_step(model, optim.Adam(model.parameters(), lr=LR), dg.tensor(Xtr[:8]), ytr[:8])
    >>> loss.shape
    ()
    """
    opt.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    return loss


def train_one(seed: int, epochs: int, setting: dict[str, Any] | None = None) -> dict[str, Any]:
    """Train one network from ``seed`` (its initial weights and its minibatch order) on the
    fixed split; the curves, the final accuracies and the test predictions.

    >>> r = train_one(0, epochs=1)
    >>> r["steps"], len(r["test_pred"])
    (22, 450)
    """
    setting = setting or DEFAULT_SETTING
    Xtr, Xte, ytr, yte = data()          # the split is the same for every seed
    rng = np.random.default_rng(seed)
    model = nn.MLP(64, list(setting["hidden"]), rng=rng)
    opt = optim.Adam(model.parameters(), lr=setting["lr"], weight_decay=setting["weight_decay"])
    xtr, xte = dg.tensor(Xtr), dg.tensor(Xte)
    curve = {"train_loss": [], "test_loss": [], "train_accuracy": [], "test_accuracy": []}
    steps = 0
    step = compiled(lambda x, y: train_step(model, opt, x, y))  # dg.compile unless --no-compile
    t0 = time.perf_counter()
    for _ in range(epochs):
        order = rng.permutation(len(ytr))
        for start in range(0, len(order), BATCH):
            idx = order[start:start + BATCH]
            step(dg.tensor(Xtr[idx]), ytr[idx])
            steps += 1
        # Whole-split evaluation after every epoch (not a running average of the batches).
        tr_loss, tr_acc, _ = _evaluate(model, xtr, ytr)
        te_loss, te_acc, _ = _evaluate(model, xte, yte)
        for key, v in zip(curve, (tr_loss, te_loss, tr_acc, te_acc)):
            curve[key].append(v)
    seconds = time.perf_counter() - t0
    _, test_acc, pred = _evaluate(model, xte, yte)
    _, train_acc, _ = _evaluate(model, xtr, ytr)
    return {"train_accuracy": train_acc, "test_accuracy": test_acc, "test_pred": pred,
            "steps": steps, "curves": curve, "train_seconds": seconds,
            "parameters": int(sum(p.numel() for p in model.parameters()))}


def run(out: str | os.PathLike, size: str = "full", progress: bool = True) -> dict[str, Any]:
    """Train the digit classifier from every seed; draw the learning curves (bands over
    seeds) and the confusion matrix (summed over seeds).

    >>> import tempfile
    >>> m = run(tempfile.mkdtemp(), size="smoke", progress=False)
    >>> m["parameters"], m["n_train"], m["n_test"], len(m["confusion_matrix"])
    (6570, 1347, 450, 10)
    """
    check_size(size)
    setting, source = chosen(out, "mlp") if size != "smoke" else (dict(DEFAULT_SETTING),
                                                                   "defaults (smoke run)")
    epochs, seeds = (int(setting["epochs"]) if size != "smoke" else EPOCHS["smoke"]), SEEDS[size]
    Xtr, Xte, ytr, yte = data()
    t0 = time.perf_counter()
    runs = over_seeds(functools.partial(train_one, epochs=epochs, setting=setting), seeds,
                      desc="digits seeds", progress=progress)
    wall = time.perf_counter() - t0

    # Every seed's test predictions counted together: n_test * len(seeds) in all, so the
    # matrix's diagonal over its total is the mean test accuracy over seeds.
    cm = sum(confusion_matrix(yte, r["test_pred"], 10) for r in runs)
    errors = cm - np.diag(np.diag(cm))
    worst = np.unravel_index(np.argmax(errors), errors.shape)
    per_class = np.diag(cm) / cm.sum(axis=1)
    per_seed = {k: [r[k] for r in runs] for k in ("train_accuracy", "test_accuracy")}
    per_seed["test_errors"] = [int(np.sum(r["test_pred"] != yte)) for r in runs]
    stacked = {k: np.array([r["curves"][k] for r in runs]) for k in runs[0]["curves"]}
    summary: dict[str, Any] = {}
    for k, v in per_seed.items():
        summary[k], summary[k + "_sd"] = mean_sd(v)

    figures = [_draw_curves(out, stacked), _draw_confusion(out, cm, summary["test_accuracy"],
                                                           len(seeds))]
    return {
        "n_samples": int(len(ytr) + len(yte)), "n_train": int(len(ytr)), "n_test": int(len(yte)),
        "seed": SEED, "seeds": list(seeds),
        "what_a_seed_changes": "the initial weights and the minibatch order; the split is fixed",
        "architecture": [64] + list(setting["hidden"]), "parameters": runs[0]["parameters"],
        "epochs": epochs, "batch_size": BATCH, "optimizer": "Adam", "lr": setting["lr"],
        "weight_decay": setting["weight_decay"], "setting_source": source,
        "reference_test_accuracy": REFERENCE_ACCURACY, "target_test_accuracy": TARGET_ACCURACY,
        "steps": runs[0]["steps"],
        **summary,   # train/test accuracy and test errors: mean over seeds, and sd
        "per_seed": per_seed,
        "test_pred_seed0": [int(v) for v in runs[0]["test_pred"]],
        "confusion_matrix": cm.tolist(),
        "confusion_matrix_seeds": len(seeds),
        "per_class_accuracy": to_list(per_class, 6),
        "most_confused": {"true": int(worst[0]), "predicted": int(worst[1]),
                          "count": int(errors[worst])},
        "train_seconds": wall,
        "curves": {k: to_list(v.mean(axis=0), 6) for k, v in stacked.items()},
        "curves_sd": {k: to_list(mean_sd(v)[1], 3) for k, v in stacked.items()},
        "compiled": compiling(), "figures": figures,
    }


def _draw_curves(out, stacked: dict[str, np.ndarray]) -> str:
    """Loss (log scale: geometric mean x/ its sd) and accuracy (mean +- sd), bands over seeds."""
    fig, (ax_loss, ax_acc) = figure(ncols=2, size=(11.0, 4.3))
    n_seeds, n_epochs = stacked["train_loss"].shape
    epochs = np.arange(1, n_epochs + 1)
    band(ax_loss, epochs, stacked["train_loss"], "train loss", log=True)
    band(ax_loss, epochs, stacked["test_loss"], "test loss", log=True)
    ax_loss.set_yscale("log")
    ax_loss.set_xlabel("epoch")
    ax_loss.set_ylabel("cross-entropy (log scale)")
    ax_loss.set_title(f"Digits: loss per epoch ({n_seeds} seeds)")
    ax_loss.grid(True, which="both", alpha=0.3)
    ax_loss.legend()
    band(ax_acc, epochs, stacked["train_accuracy"], "train", scale=100.0)
    band(ax_acc, epochs, stacked["test_accuracy"], "test", scale=100.0)
    ax_acc.set_xlabel("epoch")
    ax_acc.set_ylabel("accuracy (%)")
    ax_acc.set_title(f"Digits: accuracy per epoch (mean ± sd, {n_seeds} seeds)")
    ax_acc.grid(True, alpha=0.3)
    ax_acc.legend(loc="lower right")
    return save(fig, out, "digits_curves.png")


def _draw_confusion(out, cm: np.ndarray, test_acc: float, n_seeds: int) -> str:
    fig, ax = figure(size=(6.2, 5.4))
    im = ax.imshow(cm, cmap="Blues")
    fig.colorbar(im, ax=ax, label=f"test predictions ({n_seeds} seeds together)")
    for i in range(cm.shape[0]):
        for j in range(cm.shape[1]):
            if cm[i, j]:
                ax.text(j, i, str(cm[i, j]), ha="center", va="center", fontsize=8,
                        color="white" if cm[i, j] > cm.max() / 2 else "black")
    ax.set_xticks(range(10))
    ax.set_yticks(range(10))
    ax.set_xlabel("predicted digit")
    ax.set_ylabel("true digit")
    ax.set_title(f"Digits confusion matrix, {n_seeds} seeds summed\n(mean test accuracy "
                 f"{test_acc:.2%})", fontsize=10)
    return save(fig, out, "digits_confusion.png")
