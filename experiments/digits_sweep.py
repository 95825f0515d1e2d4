"""Optional stage: choose the digits models' hyper-parameters on a validation split.

Run it with ``python walkthrough.py --only digits_sweep`` (it is not part of the default
run, nor of ``--quick``: a few minutes on 2 cores). The 450 test digits are never looked
at: the 1,347 training digits of experiments/digits.py's split are split again, stratified,
into 1,077 for training and 270 for validation, and every setting is scored by its
validation accuracy, the mean over ``SEEDS`` (each seed draws the initial weights and the
minibatch order).

- MLP: learning rate x weight decay x hidden widths (``MLP_GRID``), each trained once per
  seed for ``max(MLP_EPOCHS)`` epochs with the validation accuracy read after each of
  ``MLP_EPOCHS``: the number of epochs is a dimension of the grid at no extra training.
- CNN: dropout x augmentation by one-pixel shifts (``CNN_GRID``), read after each of
  ``CNN_EPOCHS``.

The grid is coarse and there are 2 seeds per point: it finds a good region, it cannot
resolve differences of a few tenths of a percent (the validation split has 270 digits, so
one digit is 0.37%). The chosen setting is the one with the highest mean validation
accuracy; ties go to the earlier entry of the grid (the smaller, shorter, less regularised
one). walkthrough.py runs this stage before the digits stages, which read its choice from
measurements.json and train it on all 1,347 training digits.
"""

from __future__ import annotations

import itertools
import os
import time
from typing import Any

import numpy as np

import duograd.nn as nn

from . import check_size, parallel_map
from . import digits, digits_cnn

N_VAL = 270
SPLIT_SEED = 1  # the validation split's seed (the test split uses digits.SEED)
SEEDS = {"full": (0, 1), "quick": (0, 1), "smoke": (0,)}
MLP_GRID = {"lr": (1e-3, 3e-3, 1e-2), "weight_decay": (0.0, 1e-4),
            "hidden": ((64, 32, 10), (128, 64, 10))}
MLP_EPOCHS = {"full": (20, 40, 60, 100), "quick": (20, 40, 60, 100), "smoke": (1, 2)}
CNN_GRID = {"dropout": (0.0, 0.3), "augment": (False, True)}
CNN_EPOCHS = {"full": (20, 40, 60), "quick": (20, 40, 60), "smoke": (1,)}
SMOKE_GRID_POINTS = 2  # smoke: the first two points of each grid


def validation_split() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(X_fit, X_val, y_fit, y_val)``: digits.py's training digits split again; the test
    digits are not in either part.

    >>> Xf, Xv, yf, yv = validation_split()
    >>> Xf.shape, Xv.shape
    ((1077, 64), (270, 64))
    """
    from . import stratified_split

    Xtr, _, ytr, _ = digits.data()
    return stratified_split(Xtr, ytr, test_size=N_VAL, seed=SPLIT_SEED)


def _grid(grid: dict[str, tuple], size: str) -> list[dict[str, Any]]:
    points = [dict(zip(grid, values)) for values in itertools.product(*grid.values())]
    return points[:SMOKE_GRID_POINTS] if size == "smoke" else points


def _mlp_task(task: tuple[dict[str, Any], int, tuple[int, ...]]) -> list[float]:
    """Validation accuracy after each of ``epochs`` for one MLP setting and seed."""
    setting, seed, epochs = task
    Xf, Xv, yf, yv = validation_split()
    rng = np.random.default_rng(seed)
    model = nn.MLP(64, list(setting["hidden"]), rng=rng)
    run = digits_cnn.train(model, (Xf, Xv, yf, yv), rng, max(epochs), setting["lr"],
                           digits.BATCH, weight_decay=setting["weight_decay"], eval_at=epochs)
    return run["per_epoch"]


def _cnn_task(task: tuple[dict[str, Any], int, tuple[int, ...]]) -> list[float]:
    setting, seed, epochs = task
    Xf, Xv, yf, yv = validation_split()
    rng = np.random.default_rng(seed)
    model = digits_cnn.build_cnn(rng, dropout=setting["dropout"])
    run = digits_cnn.train(model, (Xf.reshape(-1, 1, 8, 8), Xv.reshape(-1, 1, 8, 8), yf, yv),
                           rng, max(epochs), digits_cnn.LR, digits_cnn.BATCH,
                           augment=setting["augment"], eval_at=epochs)
    return run["per_epoch"]


def sweep(kind: str, size: str = "full", progress: bool = False) -> dict[str, Any]:
    """Every grid point of ``kind`` ("mlp" or "cnn") at every epoch count: the validation
    accuracy per seed, its mean, and the chosen setting.

    >>> r = sweep("mlp", "smoke")
    >>> len(r["rows"]), sorted(r["chosen"])
    (4, ['epochs', 'hidden', 'lr', 'weight_decay'])
    """
    check_size(size)
    grid, epochs, fn = ((MLP_GRID, MLP_EPOCHS[size], _mlp_task) if kind == "mlp"
                        else (CNN_GRID, CNN_EPOCHS[size], _cnn_task))
    points, seeds = _grid(grid, size), SEEDS[size]
    tasks = [(p, s, epochs) for p in points for s in seeds]
    accs = parallel_map(fn, tasks, desc=f"digits sweep ({kind})", progress=progress)
    rows = []
    for i, p in enumerate(points):
        per_seed = np.array(accs[i * len(seeds):(i + 1) * len(seeds)])  # (seeds, epochs)
        for j, e in enumerate(epochs):
            rows.append({**{k: (list(v) if isinstance(v, tuple) else v) for k, v in p.items()},
                         "epochs": e, "val_accuracy": [float(a) for a in per_seed[:, j]],
                         "val_accuracy_mean": float(per_seed[:, j].mean())})
    best = max(range(len(rows)), key=lambda k: (rows[k]["val_accuracy_mean"], -k))
    chosen = {k: v for k, v in rows[best].items() if not k.startswith("val_")}
    if kind == "cnn":
        chosen["lr"] = digits_cnn.LR
    return {"grid": {k: [list(v) if isinstance(v, tuple) else v for v in vals]
                     for k, vals in grid.items()},
            "epochs_read": list(epochs), "seeds": list(seeds), "rows": rows,
            "chosen": chosen, "chosen_val_accuracy": rows[best]["val_accuracy_mean"],
            "runs": len(tasks)}


def run(out: str | os.PathLike, size: str = "full", progress: bool = True) -> dict[str, Any]:
    """The MLP and CNN sweeps on the validation split, and what each chose.

    >>> import tempfile
    >>> m = run(tempfile.mkdtemp(), size="smoke", progress=False)
    >>> m["n_fit"], m["n_val"], m["test_digits_used"]
    (1077, 270, False)
    """
    check_size(size)
    t0 = time.perf_counter()
    mlp = sweep("mlp", size, progress)
    t1 = time.perf_counter()
    cnn = sweep("cnn", size, progress)
    t2 = time.perf_counter()
    Xf, Xv, _, _ = validation_split()
    return {"n_fit": int(len(Xf)), "n_val": int(len(Xv)), "split_seed": SPLIT_SEED,
            "test_digits_used": False, "selection": "highest mean validation accuracy over "
            "the seeds; ties go to the earlier grid point",
            "mlp": dict(mlp, seconds=t1 - t0), "cnn": dict(cnn, seconds=t2 - t1),
            "figures": []}
