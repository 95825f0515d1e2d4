"""Stage 2: handwritten digits (scikit-learn's bundled 8x8 ``load_digits``).

scikit-learn supplies the pixels and the stratified 1,347 / 450 split, nothing else:
the model (``nn.MLP(64, [64, 32, 10])``), the cross-entropy, the gradients, Adam, the
minibatch loop and the confusion matrix are all duograd's or this file's own code.
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

from . import check_size, figure, plot_loss_curves, save, stratified_split, to_list, track

SEED = 0
N_TEST = 450
HIDDEN = [64, 32, 10]
LR = 1e-3
BATCH = 64
EPOCHS = {"full": 60, "quick": 60, "smoke": 2}


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
    pred = np.argmax(logits.data, axis=1)
    return loss, float(np.mean(pred == y)), pred


def run(out: str | os.PathLike, size: str = "full", progress: bool = True) -> dict[str, Any]:
    """Train the digit classifier; draw its learning curves and confusion matrix.

    >>> import tempfile
    >>> m = run(tempfile.mkdtemp(), size="smoke", progress=False)
    >>> m["parameters"], m["n_train"], m["n_test"], len(m["confusion_matrix"])
    (6570, 1347, 450, 10)
    """
    check_size(size)
    epochs = EPOCHS[size]
    Xtr, Xte, ytr, yte = data()
    rng = np.random.default_rng(SEED)
    model = nn.MLP(64, HIDDEN, rng=rng)
    n_params = sum(p.size for p in model.parameters())
    opt = optim.Adam(model.parameters(), lr=LR)
    xtr, xte = dg.tensor(Xtr), dg.tensor(Xte)

    curve = {"train_loss": [], "test_loss": [], "train_accuracy": [], "test_accuracy": []}
    steps = 0
    t0 = time.perf_counter()
    for _ in track(range(epochs), "digits epochs", progress):
        order = rng.permutation(len(ytr))
        for start in range(0, len(order), BATCH):
            idx = order[start:start + BATCH]
            opt.zero_grad()
            F.cross_entropy(model(dg.tensor(Xtr[idx])), ytr[idx]).backward()
            opt.step()
            steps += 1
        # Whole-split evaluation after every epoch (not a running average of the batches).
        tr_loss, tr_acc, _ = _evaluate(model, xtr, ytr)
        te_loss, te_acc, _ = _evaluate(model, xte, yte)
        for key, v in zip(curve, (tr_loss, te_loss, tr_acc, te_acc)):
            curve[key].append(v)
    train_seconds = time.perf_counter() - t0

    _, test_acc, pred = _evaluate(model, xte, yte)
    _, train_acc, _ = _evaluate(model, xtr, ytr)
    cm = confusion_matrix(yte, pred, 10)
    errors = cm - np.diag(np.diag(cm))
    worst = np.unravel_index(np.argmax(errors), errors.shape)
    per_class = np.diag(cm) / cm.sum(axis=1)

    figures = [_draw_curves(out, curve), _draw_confusion(out, cm, test_acc)]
    return {
        "n_samples": int(len(ytr) + len(yte)), "n_train": int(len(ytr)), "n_test": int(len(yte)),
        "seed": SEED, "architecture": [64] + HIDDEN, "parameters": int(n_params),
        "epochs": epochs, "batch_size": BATCH, "optimizer": "Adam", "lr": LR, "steps": steps,
        "test_accuracy": test_acc, "train_accuracy": train_acc,
        "test_errors": int(errors.sum()),
        "confusion_matrix": cm.tolist(),
        "per_class_accuracy": to_list(per_class, 6),
        "most_confused": {"true": int(worst[0]), "predicted": int(worst[1]),
                          "count": int(errors[worst])},
        "train_seconds": train_seconds,
        "curves": {k: to_list(v, 6) for k, v in curve.items()},
        "figures": figures,
    }


def _draw_curves(out, curve) -> str:
    fig, (ax_loss, ax_acc) = figure(ncols=2, size=(11.0, 4.3))
    plot_loss_curves(ax_loss, curve, "Digits: loss per epoch")
    epochs = np.arange(1, len(curve["train_loss"]) + 1)
    ax_acc.plot(epochs, 100 * np.asarray(curve["train_accuracy"]), label="train")
    ax_acc.plot(epochs, 100 * np.asarray(curve["test_accuracy"]), label="test")
    ax_acc.set_xlabel("epoch")
    ax_acc.set_ylabel("accuracy (%)")
    ax_acc.set_title("Digits: accuracy per epoch")
    ax_acc.grid(True, alpha=0.3)
    ax_acc.legend(loc="lower right")
    return save(fig, out, "digits_curves.png")


def _draw_confusion(out, cm: np.ndarray, test_acc: float) -> str:
    fig, ax = figure(size=(6.2, 5.4))
    im = ax.imshow(cm, cmap="Blues")
    fig.colorbar(im, ax=ax, label="test examples")
    for i in range(cm.shape[0]):
        for j in range(cm.shape[1]):
            if cm[i, j]:
                ax.text(j, i, str(cm[i, j]), ha="center", va="center", fontsize=8,
                        color="white" if cm[i, j] > cm.max() / 2 else "black")
    ax.set_xticks(range(10))
    ax.set_yticks(range(10))
    ax.set_xlabel("predicted digit")
    ax.set_ylabel("true digit")
    ax.set_title(f"Digits confusion matrix (test accuracy {test_acc:.2%})")
    return save(fig, out, "digits_confusion.png")
