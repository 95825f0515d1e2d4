"""The digits hyper-parameter sweep chooses on a validation split and never sees the test
digits; the digits stages train what it chose, and say where their setting came from."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import walkthrough  # noqa: E402
from experiments import digits, digits_sweep  # noqa: E402


def _rows(X: np.ndarray) -> set[bytes]:
    return {row.tobytes() for row in X}


def test_validation_split_is_carved_from_the_training_digits_only():
    Xtr, Xte, ytr, _ = digits.data()
    Xf, Xv, yf, yv = digits_sweep.validation_split()
    assert len(Xf) + len(Xv) == len(Xtr)
    # every fit and validation digit is a training digit (as a multiset of rows and labels)
    together = sorted(zip(map(bytes, np.concatenate([Xf, Xv])), np.concatenate([yf, yv])))
    assert together == sorted(zip(map(bytes, Xtr), ytr))
    # and no test image is used for fitting or choosing unless it also occurs in training
    duplicates = _rows(Xte) & _rows(Xtr)
    assert not (_rows(Xf) | _rows(Xv)) & (_rows(Xte) - duplicates)


def test_the_digits_stages_read_the_sweeps_choice(tmp_path):
    assert digits.chosen(tmp_path, "mlp")[1].startswith("defaults")
    setting = {"lr": 0.01, "weight_decay": 1e-4, "hidden": [128, 64, 10], "epochs": 100}
    data = {"digits_sweep": {"mlp": {"chosen": setting}, "cnn": {"chosen": {
                "dropout": 0.3, "augment": False, "epochs": 60, "lr": 0.003}}},
            "meta": {"stages": {"digits_sweep": {"run": "r7"}}}}
    (tmp_path / "measurements.json").write_text(json.dumps(data), encoding="utf-8")
    got, source = digits.chosen(tmp_path, "mlp")
    assert got == setting and source == "validation sweep (run r7)"
    assert digits.chosen(tmp_path, "cnn")[0]["epochs"] == 60


def test_the_sweep_runs_only_when_named():
    assert "digits_sweep" not in walkthrough.parse_stages(None, quick=False)
    assert "digits_sweep" not in walkthrough.parse_stages(None, quick=True)
    # named with the digits stages, it runs first, so they train its choice
    assert walkthrough.parse_stages(["digits,digits_sweep"], quick=False) == ["digits_sweep", "digits"]


def test_sweep_picks_the_best_mean_validation_accuracy():
    r = digits_sweep.sweep("mlp", "smoke")
    best = max(row["val_accuracy_mean"] for row in r["rows"])
    assert r["chosen_val_accuracy"] == best
    assert all(0.0 <= a <= 1.0 for row in r["rows"] for a in row["val_accuracy"])
